/* See LICENSE file for copyright and license details. */
/*
 * store.c keeps entries under their key in a directory: r/AB/KEY.json a
 * result, m/AB/D.json the inputs a unit's key was computed from (D the
 * digest of the unit's name), why/D.json (in the local store, one
 * directory) what its last lookup that missed, or hit and was sampled,
 * found.
 * Each is written to a temporary beside its name and renamed, so that
 * writers on one host or on a shared file system never tear one; a reader
 * trusts only an entry that parses and records the very key and unit it
 * asked for.  A store that cannot be written turns itself off ("broken")
 * and says why once: a run never fails for its cache.  A store named by
 * an http:// or https:// URL holds the same files, by GET, PUT and DELETE
 * (cache/http.c); a server that cannot be reached, or that answers
 * anything but the file or 404, breaks it the same way.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "base/json.h"
#include "cache/cache.h"
#include "cache/http.h"

void
corral_cache_entry_release(struct corral_cache_entry *e)
{
	free(e->key);
	free(e->unit);
	free(e->status);
	free(e->note);
	free(e->run);
	free(e->host);
	free(e->at);
	free(e->tail);
	memset(e, 0, sizeof(*e));
}

static void
set_broken(struct corral_cache_store *s, const char *what, int errnum)
{
	if (s->broken)
		return;
	s->broken = 1;
	snprintf(s->why, sizeof(s->why), "%s: %s", what, strerror(errnum));
}

/* Broken, with the message a request or a write left, after what. */
static void
set_broken_by(struct corral_cache_store *s, const char *what,
    const struct corral_err *err)
{
	if (s->broken)
		return;
	s->broken = 1;
	if (what)
		snprintf(s->why, sizeof(s->why), "%s: %.*s", what,
		    (int)(sizeof(s->why) - strlen(what) - 3), err->msg);
	else
		snprintf(s->why, sizeof(s->why), "%.*s",
		    (int)sizeof(s->why) - 1, err->msg);
}

int
corral_cache_store_open(struct corral_cache_store *s)
{
	struct corral_err err;
	struct stat st;

	if (s->broken)
		return -1;
	if (corral_http_is_url(s->dir))
		return 0;	/* the first request says whether it answers */
	if (corral_mkdir_p(s->dir, 0777, &err) < 0) {
		set_broken(s, "cannot make it", err.errnum ? err.errnum :
		    ENOTDIR);
		return -1;
	}
	if (stat(s->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		set_broken(s, "not a directory", ENOTDIR);
		return -1;
	}
	if (access(s->dir, W_OK) < 0) {
		set_broken(s, "cannot write in it", errno);
		return -1;
	}
	return 0;
}

int
corral_cache_kind_fanned(const char *kind)
{
	return strcmp(kind, "why") != 0;
}

void
corral_cache_store_note_empty(struct corral_cache_store *s)
{
	char *r, *m;
	struct stat st;

	if (s->broken || corral_http_is_url(s->dir))
		return;
	r = corral_path_join(s->dir, "r");
	m = corral_path_join(s->dir, "m");
	s->empty = r && m && stat(r, &st) < 0 && errno == ENOENT &&
	    stat(m, &st) < 0 && errno == ENOENT;
	free(r);
	free(m);
}

/* KIND/AB/NAME.json under the store (KIND/NAME.json when not fanned
   out), into b. */
static int
entry_rel(struct corral_buf *b, const char *kind, const char *name)
{
	if (!corral_cache_kind_fanned(kind))
		return corral_buf_addf(b, "%s/%s.json", kind, name);
	return corral_buf_addf(b, "%s/%.2s/%s.json", kind, name, name);
}

/* The digest of a unit's name: the name of its manifest and why files. */
static int
unit_name(const char *unit, char hex[CORRAL_SHA256_HEX])
{
	struct corral_err err;

	return corral_sha256_buf(unit, strlen(unit), hex, &err);
}

char *
corral_cache_unit_path(const char *dir, const char *kind, const char *unit)
{
	struct corral_buf rel = CORRAL_BUF_INIT;
	char name[CORRAL_SHA256_HEX], *path = NULL;

	if (unit_name(unit, name) == 0 && entry_rel(&rel, kind, name) == 0)
		path = corral_path_join(dir, rel.data);
	corral_buf_release(&rel);
	return path;
}

/* Write text at kind/name atomically; a failure breaks the store. */
static int
put_text(struct corral_cache_store *s, const char *kind, const char *name,
    const struct corral_buf *text)
{
	struct corral_buf rel = CORRAL_BUF_INIT;
	struct corral_err err;
	char *path;
	int rc;

	if (s->broken)
		return -1;
	if (corral_cache_kind_fanned(kind))
		s->empty = 0;
	if (corral_http_is_url(s->dir)) {
		if ((rc = entry_rel(&rel, kind, name)) == 0 &&
		    (rc = corral_http_put(s->dir, rel.data, text->data,
		    text->len, &err)) < 0)
			set_broken_by(s, NULL, &err);
		corral_buf_release(&rel);
		return rc;
	}
	if ((rc = entry_rel(&rel, kind, name)) < 0 ||
	    !(path = corral_path_join(s->dir, rel.data))) {
		corral_buf_release(&rel);
		return -1;
	}
	/*
	 * Not fsynced: a crash may leave an entry empty or torn, which no
	 * reader trusts (a miss); the rename alone keeps writers apart.
	 */
	if (corral_mkdir_parent(path, 0777, &err) < 0 ||
	    corral_atomic_file(path, text->data, text->len,
	    CORRAL_ATOMIC_NO_SYNC, &err) < 0) {
		set_broken_by(s, "cannot write in it", &err);
		rc = -1;
	}
	free(path);
	corral_buf_release(&rel);
	return rc;
}

/* The document at kind/name: NULL when there is none (*bad 0) or when
 * it does not parse (*bad 1, err saying why). */
static cJSON *
get_doc(struct corral_cache_store *s, const char *kind, const char *name,
    int *bad, struct corral_err *err)
{
	struct corral_buf rel = CORRAL_BUF_INIT, text = CORRAL_BUF_INIT;
	char *path = NULL;
	cJSON *doc = NULL;

	*bad = 0;
	if (s->broken || (s->empty && corral_cache_kind_fanned(kind)) ||
	    entry_rel(&rel, kind, name) < 0)
		goto out;
	if (corral_http_is_url(s->dir)) {
		switch (corral_http_get(s->dir, rel.data, &text, err)) {
		case 1: break;
		case 0: goto out;
		default: set_broken_by(s, NULL, err); goto out;
		}
	} else if (!(path = corral_path_join(s->dir, rel.data))) {
		goto out;
	} else if (corral_read_regular(path, &text, err) < 0) {
		*bad = err->errnum != ENOENT;
		goto out;
	}
	if (!(doc = cj_object_text(text.data ? text.data : "", text.len, err)))
		*bad = 1;
out:
	if (*bad) {
		/* err->msg is read into err->msg: a copy first */
		char why[sizeof(err->msg)];

		snprintf(why, sizeof(why), "%s", err->msg);
		corral_err_set(err, 0, "cache entry '%s/%s' is unreadable: %s",
		    s->dir, rel.data ? rel.data : "", why);
	}
	free(path);
	corral_buf_release(&rel);
	corral_buf_release(&text);
	return doc;
}

static int
add_member(struct corral_buf *b, const char *key, const char *v, int first)
{
	return corral_buf_addstr(b, first ? "{" : ",") |
	    corral_buf_addjson(b, key, strlen(key)) |
	    corral_buf_addch(b, ':') |
	    (v ? corral_buf_addjson(b, v, strlen(v)) :
	    corral_buf_addstr(b, "null"));
}

int
corral_cache_put(struct corral_cache_store *s,
    const struct corral_cache_entry *e)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	int rc;

	rc = add_member(&b, "corral_cache", "result", 1) |
	    add_member(&b, "key", e->key, 0) |
	    add_member(&b, "unit", e->unit, 0) |
	    add_member(&b, "status", e->status, 0) |
	    add_member(&b, "note", e->note, 0) |
	    add_member(&b, "run", e->run, 0) |
	    add_member(&b, "host", e->host, 0) |
	    add_member(&b, "at", e->at, 0) |
	    corral_buf_addf(&b, ",\"exit\":%lld,\"duration_ms\":%lld",
	    e->exit_code, e->duration_ms) |
	    add_member(&b, "tail", e->tail ? e->tail : "", 0) |
	    corral_buf_addstr(&b, "}\n");
	rc = rc < 0 ? -1 : put_text(s, "r", e->key, &b);
	corral_buf_release(&b);
	return rc;
}

/*
 * link(2) from at to, making to's directories only when they are not
 * there: a fan-out directory is made once, and its every parent would
 * cost a mkdir(2) a link.
 */
static int
link_made(const char *from, const char *to, struct corral_err *err)
{
	if (link(from, to) == 0)
		return 0;
	if (errno != ENOENT || corral_mkdir_parent(to, 0777, err) < 0)
		return -1;
	return link(from, to);
}

/*
 * Hard-link kind/name of from at its place in to: both directory stores,
 * most often on one file system.  A link makes no inode, and a creation
 * is what a cached run's writes cost most (ext4 without a journal scans
 * past every inode freed in the last minutes).  The entries are never
 * written in place (a temporary and a rename), so the two names keep
 * the same whole entry.  0, or -1: write it instead.
 */
static int
link_entry(struct corral_cache_store *to, const struct corral_cache_store *from,
    const char *kind, const char *name)
{
	struct corral_buf rel = CORRAL_BUF_INIT;
	struct corral_err err;
	char *src = NULL, *dst = NULL;
	int rc = -1;

	if (!from || to->broken || from->broken ||
	    corral_http_is_url(to->dir) || corral_http_is_url(from->dir))
		return -1;
	to->empty = 0;
	if (entry_rel(&rel, kind, name) == 0 &&
	    (src = corral_path_join(from->dir, rel.data)) &&
	    (dst = corral_path_join(to->dir, rel.data)) &&
	    link_made(src, dst, &err) == 0)
		rc = 0;
	free(src);
	free(dst);
	corral_buf_release(&rel);
	return rc;
}

int
corral_cache_put_from(struct corral_cache_store *to,
    const struct corral_cache_store *from, const struct corral_cache_entry *e)
{
	return link_entry(to, from, "r", e->key) == 0 ? 0 :
	    corral_cache_put(to, e);
}

void
corral_cache_drop(struct corral_cache_store *s, const char *key)
{
	struct corral_buf rel = CORRAL_BUF_INIT;
	char *path;

	if (corral_http_is_url(s->dir)) {
		struct corral_err err;

		if (entry_rel(&rel, "r", key) == 0 &&
		    corral_http_delete(s->dir, rel.data, &err) < 0)
			set_broken_by(s, NULL, &err);
	} else if (entry_rel(&rel, "r", key) == 0 &&
	    (path = corral_path_join(s->dir, rel.data))) {
		(void)unlink(path);
		free(path);
	}
	corral_buf_release(&rel);
}

static char *
dup_member(const cJSON *doc, const char *key)
{
	const char *v = cj_get_str(doc, key);

	return v ? strdup(v) : NULL;
}

int
corral_cache_get(struct corral_cache_store *s, const char *key,
    const char *unit, struct corral_cache_entry *e, struct corral_err *err)
{
	const char *k, *u, *st;
	cJSON *doc;
	int bad;

	memset(e, 0, sizeof(*e));
	if (!(doc = get_doc(s, "r", key, &bad, err)))
		return bad ? 2 : 0;
	k = cj_get_str(doc, "key");
	u = cj_get_str(doc, "unit");
	st = cj_get_str(doc, "status");
	if (!k || strcmp(k, key) || !u || strcmp(u, unit) || !st ||
	    (strcmp(st, "pass") && strcmp(st, "skip")) ||
	    !cj_is_number(cJSON_GetObjectItemCaseSensitive(doc,
	    "duration_ms"))) {
		cJSON_Delete(doc);
		corral_err_set(err, 0, "cache entry for '%s' under %.12s "
		    "records another key, unit or result; not trusted", unit,
		    key);
		return 2;
	}
	e->key = strdup(k);
	e->unit = strdup(u);
	e->status = strdup(st);
	e->note = dup_member(doc, "note");
	e->run = dup_member(doc, "run");
	e->host = dup_member(doc, "host");
	e->at = dup_member(doc, "at");
	e->tail = dup_member(doc, "tail");
	e->exit_code = cj_get_int(doc, "exit");
	e->duration_ms = cj_get_int(doc, "duration_ms");
	cJSON_Delete(doc);
	if (!e->key || !e->unit || !e->status) {
		corral_cache_entry_release(e);
		return 0;
	}
	return 1;
}

/* [["name","value"],...] of k into b. */
static int
add_parts(struct corral_buf *b, const char *key,
    const struct corral_cache_key *k)
{
	size_t i;
	int rc = corral_buf_addf(b, ",\"%s\":[", key);

	for (i = 0; k && i < k->names.n; i++)
		rc |= corral_buf_addstr(b, i ? ",[" : "[") |
		    corral_buf_addjson(b, k->names.v[i],
		    strlen(k->names.v[i])) | corral_buf_addch(b, ',') |
		    corral_buf_addjson(b, k->values.v[i],
		    strlen(k->values.v[i])) | corral_buf_addch(b, ']');
	return rc | corral_buf_addch(b, ']');
}

static int
add_strv(struct corral_buf *b, const char *key, const struct corral_strv *v)
{
	size_t i;
	int rc = corral_buf_addf(b, ",\"%s\":[", key);

	for (i = 0; i < v->n; i++)
		rc |= corral_buf_addstr(b, i ? "," : "") |
		    corral_buf_addjson(b, v->v[i], strlen(v->v[i]));
	return rc | corral_buf_addch(b, ']');
}

int
corral_cache_manifest_put(struct corral_cache_store *s, const char *unit,
    const struct corral_strv *inputs, const struct corral_cache_key *k)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	char name[CORRAL_SHA256_HEX];
	int rc;

	rc = unit_name(unit, name) |
	    add_member(&b, "corral_cache", "manifest", 1) |
	    add_member(&b, "unit", unit, 0) | add_member(&b, "key", k->hex, 0) |
	    add_strv(&b, "inputs", inputs) | add_parts(&b, "parts", k) |
	    corral_buf_addstr(&b, "}\n");
	rc = rc < 0 ? -1 : put_text(s, "m", name, &b);
	corral_buf_release(&b);
	return rc;
}

int
corral_cache_manifest_put_from(struct corral_cache_store *to,
    const struct corral_cache_store *from, const char *unit,
    const struct corral_strv *inputs, const struct corral_cache_key *k)
{
	char name[CORRAL_SHA256_HEX];

	if (from && unit_name(unit, name) == 0 &&
	    link_entry(to, from, "m", name) == 0)
		return 0;
	return corral_cache_manifest_put(to, unit, inputs, k);
}

/* The parts array of doc's key into k. */
static int
read_parts(const cJSON *doc, const char *key, struct corral_cache_key *k)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(doc, key), *p;
	const char *n, *v;

	if (!cJSON_IsArray(a))
		return -1;
	cJSON_ArrayForEach(p, a) {
		n = cj_str(cJSON_GetArrayItem(p, 0));
		v = cj_str(cJSON_GetArrayItem(p, 1));
		if (!n || !v || corral_strv_add(&k->names, n) < 0 ||
		    corral_strv_add(&k->values, v) < 0)
			return -1;
	}
	return 0;
}

int
corral_cache_manifest_get(struct corral_cache_store *s, const char *unit,
    struct corral_strv *inputs, struct corral_cache_key *k,
    struct corral_err *err)
{
	char name[CORRAL_SHA256_HEX];
	const cJSON *a, *p;
	const char *u;
	cJSON *doc;
	int bad, rc = 1;

	if (unit_name(unit, name) < 0 ||
	    !(doc = get_doc(s, "m", name, &bad, err)))
		return bad ? 2 : 0;
	u = cj_get_str(doc, "unit");
	a = cJSON_GetObjectItemCaseSensitive(doc, "inputs");
	if (!u || strcmp(u, unit) || !cJSON_IsArray(a) ||
	    read_parts(doc, "parts", k) < 0)
		rc = 2;
	cJSON_ArrayForEach(p, a)
		if (rc == 1 && (!cj_str(p) || corral_strv_add(inputs,
		    cj_str(p)) < 0))
			rc = 2;
	if (rc == 2)
		corral_err_set(err, 0, "cache manifest of '%s' in '%s' is "
		    "not one; not trusted", unit, s->dir);
	cJSON_Delete(doc);
	return rc;
}

void
corral_cache_why_put(struct corral_cache_store *s, const char *unit,
    int hit, const struct corral_cache_key *k,
    const struct corral_cache_key *old)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	char name[CORRAL_SHA256_HEX];
	int rc;

	rc = unit_name(unit, name) |
	    add_member(&b, "corral_cache", "why", 1) |
	    add_member(&b, "unit", unit, 0) |
	    add_member(&b, "key", k->hex, 0) |
	    corral_buf_addf(&b, ",\"hit\":%s", hit ? "true" : "false") |
	    add_parts(&b, "parts", k) |
	    (old ? add_parts(&b, "stored", old) : 0) |
	    corral_buf_addstr(&b, "}\n");
	if (rc == 0)
		(void)put_text(s, "why", name, &b);
	corral_buf_release(&b);
}

int
corral_cache_why_link(struct corral_cache_store *s,
    const struct corral_cache_store *from, const char *unit)
{
	struct corral_buf tmp = CORRAL_BUF_INIT;
	struct corral_err err;
	char *man = corral_cache_unit_path(from->dir, "m", unit);
	char *why = corral_cache_unit_path(s->dir, "why", unit);
	int rc = -1;

	if (s->broken || from->broken || corral_http_is_url(s->dir) ||
	    corral_http_is_url(from->dir) || !man || !why)
		goto out;
	/* none there yet (a fresh CORRAL_OUT): the link is the why */
	if (link_made(man, why, &err) == 0) {
		rc = 0;
		goto out;
	}
	/* a temporary link renamed over: the last lookup's why replaces
	   the one before, and no reader sees none between */
	if (errno == EEXIST && corral_buf_addf(&tmp, "%s.link.%ld", why,
	    (long)getpid()) == 0) {
		(void)unlink(tmp.data);
		if (link(man, tmp.data) == 0) {
			rc = rename(tmp.data, why) == 0 ? 0 : -1;
			if (rc < 0)
				(void)unlink(tmp.data);
		}
	}
out:
	free(man);
	free(why);
	corral_buf_release(&tmp);
	return rc;
}

int
corral_cache_why_is_hit(const cJSON *doc)
{
	const char *kind = cj_get_str(doc, "corral_cache");

	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "hit")) ||
	    (kind && !strcmp(kind, "manifest"));
}

void
corral_cache_supersede(struct corral_cache_store *s, const char *unit,
    const char *hex)
{
	char name[CORRAL_SHA256_HEX];
	struct corral_err err;
	const char *old;
	cJSON *doc;
	int bad;

	if (unit_name(unit, name) < 0 ||
	    !(doc = get_doc(s, "m", name, &bad, &err)))
		return;
	old = cj_get_str(doc, "key");
	if (old && strlen(old) == CORRAL_SHA256_HEX - 1 &&
	    !strchr(old, '/') && strcmp(old, hex) != 0)
		corral_cache_drop(s, old);
	cJSON_Delete(doc);
}
