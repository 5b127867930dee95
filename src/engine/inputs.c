/* See LICENSE file for copyright and license details. */
/*
 * What the slices depend on: the manifest of each slice's parts, and
 * what the manifests say is missing.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkout/checkout.h"
#include "engine/engine.h"

/* dir/K.EXT into path. */
static int
slice_file(struct corral_buf *path, const char *dir, size_t k,
    const char *ext)
{
	corral_buf_reset(path);
	return corral_buf_addf(path, "%s/%zu.%s", dir, k, ext);
}

/*
 * Slice k's manifest from dir/k.parts, added to sha: 1 when there is no
 * slice k, 0 when there is, -1 with err set.
 */
static int
slice_manifest(const char *src, const char *dir, size_t k,
    const struct corral_strv *exclude, const struct corral_strv *patterns,
    struct corral_memo *memo, struct corral_sha256 *sha,
    struct corral_err *err)
{
	struct corral_strv parts = CORRAL_STRV_INIT;
	struct corral_buf path = CORRAL_BUF_INIT, out = CORRAL_BUF_INIT;
	struct corral_err refused;
	int rc = 0;

	if (slice_file(&path, dir, k, "parts") < 0)
		rc = corral_err_set(err, ENOMEM, "manifests");
	else if (access(path.data, F_OK) < 0)
		rc = 1;
	else if (corral_units_load(path.data, '\n', &parts, 0, err) < 0 ||
	    slice_file(&path, dir, k, "manifest") < 0)
		rc = -1;
	else if (corral_checkout_manifest(src, &parts, exclude, patterns, memo,
	    &out, NULL, &refused) < 0) {
		/* A refused part: no manifest, and the agent says why. */
		if (unlink(path.data) < 0 && errno != ENOENT)
			rc = corral_err_set(err, errno, "cannot remove '%s'",
			    path.data);
	} else if (corral_atomic_file(path.data, out.data ? out.data : "",
	    out.len, CORRAL_ATOMIC_KEEP_SAME | CORRAL_ATOMIC_NO_SYNC,
	    err) < 0 || (sha && corral_sha256_add(sha, out.data ?
	    out.data : "", out.len, err) < 0))
		rc = -1;
	corral_strv_release(&parts);
	corral_buf_release(&path);
	corral_buf_release(&out);
	return rc;
}

int
corral_manifests_write(const char *src, const char *dir,
    const struct corral_strv *exclude, const struct corral_strv *patterns,
    struct corral_memo *memo, struct corral_sha256 *sha,
    struct corral_err *err)
{
	size_t k;
	int rc;

	for (k = 0; (rc = slice_manifest(src, dir, k, exclude, patterns, memo,
	    sha, err)) == 0; k++)
		;
	return rc < 0 ? -1 : 0;
}

/* Whether text[0..n) holds line (without its LF) as a whole line. */
static int
has_line(const char *text, size_t n, const char *line, size_t len)
{
	const char *p = text, *end = text + n, *nl;

	for (; p < end; p = nl + 1) {
		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			nl = end;
		if ((size_t)(nl - p) == len && !memcmp(p, line, len))
			return 1;
	}
	return 0;
}

/* Whether text[0..n) has a line ending in " ." (a clone of the whole tree). */
static int
whole_tree(const char *text, size_t n)
{
	const char *p = text, *end = text + n, *nl;

	for (; p < end; p = nl + 1) {
		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			nl = end;
		if (nl - p >= 2 && nl[-1] == '.' && nl[-2] == ' ')
			return 1;
	}
	return 0;
}

int
corral_manifest_keep(const char *path, const char *old, size_t oldlen,
    const struct timespec *mtime, struct corral_err *err)
{
	struct corral_buf now = CORRAL_BUF_INIT;
	struct timespec times[2];
	const char *p, *end, *nl;
	int rc = 1;

	if (!whole_tree(old, oldlen))
		return 0;
	if (corral_read_file(path, &now, err) < 0)
		return errno == ENOENT ? 0 : -1;
	if (whole_tree(now.data ? now.data : "", now.len))
		rc = 0;
	p = now.data ? now.data : "";
	for (end = p + now.len; rc == 1 && p < end; p = nl + 1) {
		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			nl = end;
		if (nl > p && !has_line(old, oldlen, p, (size_t)(nl - p)))
			rc = 0;
	}
	corral_buf_release(&now);
	if (rc == 1) {
		times[0].tv_nsec = UTIME_OMIT;
		times[0].tv_sec = 0;
		times[1] = *mtime;
		if (utimensat(AT_FDCWD, path, times, 0) < 0)
			return corral_err_set(err, errno, "cannot set the "
			    "time of '%s'", path);
	}
	return rc;
}

int
corral_manifests_missing(const char *dir, struct corral_strv *missing)
{
	struct corral_buf path = CORRAL_BUF_INIT, text = CORRAL_BUF_INIT;
	struct corral_err err;
	const char *p, *end, *nl;
	size_t k;
	int rc = 0;

	for (k = 0; rc == 0; k++) {
		if (slice_file(&path, dir, k, "parts") < 0)
			return -1;
		if (access(path.data, F_OK) < 0)
			break;
		corral_buf_reset(&text);
		if (slice_file(&path, dir, k, "manifest") < 0)
			rc = -1;
		else if (corral_read_file(path.data, &text, &err) < 0)
			continue;
		p = text.data ? text.data : "";
		for (end = p + text.len; rc == 0 && p < end; p = nl + 1) {
			if (!(nl = memchr(p, '\n', (size_t)(end - p))))
				nl = end;
			if (nl - p > 2 && p[0] == '-' && p[1] == ' ')
				rc = corral_strv_addn(missing, p + 2,
				    (size_t)(nl - p - 2));
		}
	}
	corral_buf_release(&path);
	corral_buf_release(&text);
	if (rc == 0)
		corral_strv_sort_unique(missing);
	return rc;
}
