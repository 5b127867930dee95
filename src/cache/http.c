/* See LICENSE file for copyright and license details. */
/*
 * http.c: a store's files by GET and PUT over one kept connection.
 *
 * One easy handle serves every request of a process, so a run that looks
 * up hundreds of units opens one connection, not hundreds.  Each request
 * is bounded (a connect timeout, a whole-request timeout, a body limit),
 * because a store that hangs or floods must cost a run a warning, never
 * the run.
 */
#include <curl/curl.h>
#include <errno.h>
#include <string.h>

#include "cache/http.h"

/* A store on this host or its network answers in well under these. */
enum { CONNECT_TIMEOUT_MS = 3000, REQUEST_TIMEOUT_MS = 20000 };

static CURL *handle;
static int global_ready;

static CURL *
http_handle(struct corral_err *err)
{
	if (!global_ready) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			corral_err_set(err, 0, "libcurl: cannot start");
			return NULL;
		}
		global_ready = 1;
	}
	if (!handle && !(handle = curl_easy_init()))
		corral_err_set(err, 0, "libcurl: cannot start a request");
	return handle;
}

void
corral_http_close(void)
{
	if (handle)
		curl_easy_cleanup(handle);
	handle = NULL;
	if (global_ready)
		curl_global_cleanup();
	global_ready = 0;
}

/* base and rel joined by exactly one slash. */
static int
http_url(struct corral_buf *url, const char *base, const char *rel)
{
	size_t n = strlen(base);

	while (n > 0 && base[n - 1] == '/')
		n--;
	while (*rel == '/')
		rel++;
	return corral_buf_add(url, base, n) || corral_buf_addch(url, '/') ||
	    corral_buf_addstr(url, rel) ? -1 : 0;
}

struct body_in {
	struct corral_buf *out;
	int over;
};

static size_t
body_take(char *p, size_t size, size_t n, void *ctx)
{
	struct body_in *in = ctx;
	size_t len = size * n;

	if (in->out->len + len > CORRAL_HTTP_MAX_BODY) {
		in->over = 1;
		return 0;
	}
	return corral_buf_add(in->out, p, len) ? 0 : len;
}

struct body_out {
	const char *p;
	size_t left;
};

static size_t
body_give(char *p, size_t size, size_t n, void *ctx)
{
	struct body_out *o = ctx;
	size_t len = size * n < o->left ? size * n : o->left;

	memcpy(p, o->p, len);
	o->p += len;
	o->left -= len;
	return len;
}

static size_t
body_drop(char *p, size_t size, size_t n, void *ctx)
{
	(void)p;
	(void)ctx;
	return size * n;
}

/*
 * One request: method on base/rel, its answer's status in *code.  0, or
 * -1 with err set when no answer came.
 */
static int
http_request(const char *method, const char *base, const char *rel,
    struct body_in *in, struct body_out *out, long *code,
    struct corral_err *err)
{
	struct corral_buf url = CORRAL_BUF_INIT;
	char why[CURL_ERROR_SIZE] = "";
	CURL *h;
	CURLcode rc;

	if (!(h = http_handle(err)))
		return -1;
	if (http_url(&url, base, rel)) {
		corral_buf_release(&url);
		return corral_err_set(err, ENOMEM, "%s", base);
	}
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, url.data);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, why);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)CONNECT_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)REQUEST_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, in ? body_take : body_drop);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, in);
	if (out) {
		curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(h, CURLOPT_READFUNCTION, body_give);
		curl_easy_setopt(h, CURLOPT_READDATA, out);
		curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE,
		    (curl_off_t)out->left);
	} else if (strcmp(method, "GET") != 0) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	}
	rc = curl_easy_perform(h);
	if (rc != CURLE_OK) {
		if (in && in->over)
			corral_err_set(err, 0, "GET %s: the answer is over %u "
			    "bytes", url.data, CORRAL_HTTP_MAX_BODY);
		else
			corral_err_set(err, 0, "%s %s: %s", method, url.data,
			    *why ? why : curl_easy_strerror(rc));
		corral_buf_release(&url);
		return -1;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, code);
	if (*code < 200 || *code > 299)
		corral_err_set(err, 0, "%s %s: HTTP %ld", method, url.data,
		    *code);
	corral_buf_release(&url);
	return 0;
}

int
corral_http_get(const char *base, const char *rel, struct corral_buf *out,
    struct corral_err *err)
{
	struct body_in in = { out, 0 };
	long code = 0;

	corral_buf_reset(out);
	if (http_request("GET", base, rel, &in, NULL, &code, err))
		return -1;
	if (code == 404 || code == 410)
		return 0;
	return code == 200 ? 1 : -1;
}

int
corral_http_put(const char *base, const char *rel, const void *p, size_t n,
    struct corral_err *err)
{
	struct body_out out = { p, n };
	long code = 0;

	if (http_request("PUT", base, rel, NULL, &out, &code, err))
		return -1;
	return code >= 200 && code <= 299 ? 0 : -1;
}

int
corral_http_delete(const char *base, const char *rel, struct corral_err *err)
{
	long code = 0;

	if (http_request("DELETE", base, rel, NULL, NULL, &code, err))
		return -1;
	return (code >= 200 && code <= 299) || code == 404 ? 0 : -1;
}
