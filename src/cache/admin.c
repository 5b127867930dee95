/* See LICENSE file for copyright and license details. */
/*
 * admin.c is corral-cache's library: a store's entries counted, pruned
 * oldest first to a size, checked (an entry that does not parse, or
 * whose recorded key is not its own name, goes), and a unit's last
 * lookup explained part by part against the key its stored result had.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "base/json.h"
#include "cache/cache.h"
#include "record/record.h"

/* One file of a walk: its path, its name less ".json", its stat. */
typedef int walk_fn(void *ctx, const char *path, const char *name,
    const struct stat *st);

/* Each NAME.json file in the directory path; none when it is missing,
   or, in a fan-out directory (fanned), when it cannot be read. */
static int
walk_files(const char *path, int fanned, walk_fn *fn, void *ctx,
    struct corral_err *err)
{
	struct corral_buf f = CORRAL_BUF_INIT;
	struct dirent *b;
	struct stat st;
	DIR *d;
	size_t len;
	int rc = 0;

	if (!(d = opendir(path)))
		return fanned || errno == ENOENT ? 0 : corral_err_set(err,
		    errno, "cannot open '%s'", path);
	while (rc == 0 && (b = readdir(d))) {
		len = strlen(b->d_name);
		if (b->d_name[0] == '.' || len < 6 ||
		    strcmp(b->d_name + len - 5, ".json"))
			continue;
		corral_buf_reset(&f);
		if (corral_buf_addf(&f, "%s/%s", path, b->d_name) < 0)
			rc = corral_err_set(err, ENOMEM, "'%s'", path);
		else if (lstat(f.data, &st) == 0 && S_ISREG(st.st_mode)) {
			b->d_name[len - 5] = '\0';
			rc = fn(ctx, f.data, b->d_name, &st);
		}
	}
	closedir(d);
	corral_buf_release(&f);
	return rc;
}

/* Each KIND/AB/NAME.json under dir, or KIND/NAME.json for a kind not
   fanned out (none when KIND is missing). */
static int
walk(const char *dir, const char *kind, walk_fn *fn, void *ctx,
    struct corral_err *err)
{
	struct corral_buf p = CORRAL_BUF_INIT, f = CORRAL_BUF_INIT;
	struct dirent *a;
	DIR *top;
	int rc = 0;

	if (corral_buf_addf(&p, "%s/%s", dir, kind) < 0)
		return corral_err_set(err, ENOMEM, "'%s'", dir);
	if (!corral_cache_kind_fanned(kind)) {
		rc = walk_files(p.data, 0, fn, ctx, err);
		corral_buf_release(&p);
		return rc;
	}
	if (!(top = opendir(p.data))) {
		rc = errno == ENOENT ? 0 : corral_err_set(err, errno,
		    "cannot open '%s'", p.data);
		corral_buf_release(&p);
		return rc;
	}
	while (rc == 0 && (a = readdir(top))) {
		if (a->d_name[0] == '.')
			continue;
		corral_buf_reset(&f);
		if (corral_buf_addf(&f, "%s/%s", p.data, a->d_name) < 0)
			rc = corral_err_set(err, ENOMEM, "'%s'", dir);
		else
			rc = walk_files(f.data, 1, fn, ctx, err);
	}
	closedir(top);
	corral_buf_release(&p);
	corral_buf_release(&f);
	return rc;
}

static int
count_entry(void *ctx, const char *path, const char *name,
    const struct stat *st)
{
	struct corral_cache_stats *s = ctx;

	(void)path;
	(void)name;
	s->entries++;
	s->bytes += st->st_size;
	return 0;
}

static int
count_manifest(void *ctx, const char *path, const char *name,
    const struct stat *st)
{
	(void)path;
	(void)name;
	(void)st;
	((struct corral_cache_stats *)ctx)->manifests++;
	return 0;
}

int
corral_cache_stats(const char *dir, struct corral_cache_stats *st,
    struct corral_err *err)
{
	memset(st, 0, sizeof(*st));
	return walk(dir, "r", count_entry, st, err) < 0 ||
	    walk(dir, "m", count_manifest, st, err) < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* prune                                                                */

struct aged {
	char *path;
	long long mtime, size;
};

struct ages {
	struct aged *v;
	size_t n;
	long long bytes;
};

static int
add_aged(void *ctx, const char *path, const char *name,
    const struct stat *st)
{
	struct ages *a = ctx;
	struct aged *v;

	(void)name;
	if (!(v = realloc(a->v, (a->n + 1) * sizeof(*v))) ||
	    !(v[a->n].path = strdup(path))) {
		if (v)
			a->v = v;
		return -1;
	}
	a->v = v;
	v[a->n].mtime = (long long)st->st_mtime;
	v[a->n].size = st->st_size;
	a->bytes += st->st_size;
	a->n++;
	return 0;
}

static int
oldest_first(const void *x, const void *y)
{
	const struct aged *a = x, *b = y;

	return a->mtime < b->mtime ? -1 : a->mtime > b->mtime;
}

int
corral_cache_prune(const char *dir, long long max, long long *removed,
    struct corral_err *err)
{
	struct ages a = { NULL, 0, 0 };
	size_t i;
	int rc;

	*removed = 0;
	rc = walk(dir, "r", add_aged, &a, err);
	if (rc == 0 && a.n)
		qsort(a.v, a.n, sizeof(*a.v), oldest_first);
	for (i = 0; rc == 0 && i < a.n && a.bytes > max; i++) {
		if (unlink(a.v[i].path) < 0 && errno != ENOENT) {
			rc = corral_err_set(err, errno, "cannot remove '%s'",
			    a.v[i].path);
			break;
		}
		a.bytes -= a.v[i].size;
		(*removed)++;
	}
	for (i = 0; i < a.n; i++)
		free(a.v[i].path);
	free(a.v);
	return rc;
}

/* ------------------------------------------------------------------ */
/* verify                                                               */

struct checked {
	long long removed;
	struct corral_strv *hits;
};

/* The document at path, or NULL when it is not one JSON object. */
static cJSON *
doc_at(const char *path)
{
	struct corral_buf text = CORRAL_BUF_INIT;
	struct corral_err err;
	cJSON *doc = NULL;

	if (corral_read_file(path, &text, &err) == 0)
		doc = cj_object_text(text.data ? text.data : "", text.len, &err);
	corral_buf_release(&text);
	return doc;
}

static int
check_entry(void *ctx, const char *path, const char *name,
    const struct stat *st)
{
	struct checked *c = ctx;
	cJSON *doc = doc_at(path);
	const char *key = doc ? cj_get_str(doc, "key") : NULL;

	(void)st;
	if (!key || strcmp(key, name)) {
		if (unlink(path) == 0)
			c->removed++;
	}
	cJSON_Delete(doc);
	return 0;
}

static int
hit_of(void *ctx, const char *path, const char *name, const struct stat *st)
{
	struct checked *c = ctx;
	cJSON *doc = doc_at(path);
	const char *unit = doc ? cj_get_str(doc, "unit") : NULL;
	int rc = 0;

	(void)name;
	(void)st;
	if (unit && corral_cache_why_is_hit(doc))
		rc = corral_strv_add(c->hits, unit);
	cJSON_Delete(doc);
	return rc;
}

/* ------------------------------------------------------------------ */
/* the hits of the last run                                             */

typedef int hit_fn(void *ctx, const char *unit, const char *key);

/*
 * A hit taken writes nothing to the local store (OUT/cache): its record
 * in OUT/successes.jsonl, marked cached, names the key it hit.  fn gets
 * the unit and key of each such record of the CORRAL_OUT that dir is the
 * local store of; none when dir's last component is not "cache" or no
 * results are beside it.  A line that is not a record is the merge's to
 * judge, and passed over here.
 */
static int
each_recorded_hit(const char *dir, hit_fn *fn, void *ctx,
    struct corral_err *err)
{
	struct corral_json_record r;
	struct corral_reader rd;
	struct corral_err lerr;
	char *d = strdup(dir), *out = NULL, *path = NULL;
	const char *key;
	int rc = 0, more;

	if (!d)
		return corral_err_set(err, ENOMEM, "'%s'", dir);
	corral_path_trim_slashes(d);
	if (strcmp(corral_path_base(d), "cache"))
		goto done;
	if (!(out = corral_path_dir(d)) ||
	    !(path = corral_path_join(out, "successes.jsonl"))) {
		rc = corral_err_set(err, ENOMEM, "'%s'", dir);
		goto done;
	}
	if (corral_reader_open(&rd, path, &lerr) < 0) {
		if (lerr.errnum != ENOENT)
			rc = corral_err_set(err, lerr.errnum, "%s", lerr.msg);
		goto done;
	}
	while (rc == 0 && (more = corral_reader_next(&rd, err)) == 1) {
		if (corral_json_record_parse(rd.line, rd.len, &r, NULL) < 0)
			continue;
		if (r.cached && (key = corral_json_record_cached(&r, "key")) &&
		    fn(ctx, r.unit, key) < 0)
			rc = corral_err_set(err, ENOMEM, "reading '%s'", path);
		corral_json_record_release(&r);
	}
	if (rc == 0 && more < 0)
		rc = -1;
	corral_reader_close(&rd);
done:
	free(d);
	free(out);
	free(path);
	return rc;
}

static int
add_hit(void *ctx, const char *unit, const char *key)
{
	(void)key;
	return corral_strv_add(ctx, unit) < 0 ? -1 : 0;
}

int
corral_cache_verify(const char *dir, long long *removed,
    struct corral_strv *hits, struct corral_err *err)
{
	struct checked c = { 0, hits };
	int rc;

	rc = walk(dir, "r", check_entry, &c, err) < 0 ||
	    walk(dir, "why", hit_of, &c, err) < 0 ||
	    each_recorded_hit(dir, add_hit, hits, err) < 0 ? -1 : 0;
	*removed = c.removed;
	if (rc == 0 && hits->n)
		corral_strv_sort_unique(hits);
	return rc;
}

/* ------------------------------------------------------------------ */
/* explain                                                              */

/* The value of the part named name in the parts array a, or NULL. */
static const char *
part_value(const cJSON *a, const char *name)
{
	const cJSON *p;
	const char *n;

	cJSON_ArrayForEach(p, a) {
		n = cj_str(cJSON_GetArrayItem(p, 0));
		if (n && !strcmp(n, name))
			return cj_str(cJSON_GetArrayItem(p, 1));
	}
	return NULL;
}

/* One line per part of now that differs in then, and per part gone. */
static int
diff_parts(const cJSON *now, const cJSON *then, struct corral_buf *out)
{
	const cJSON *p;
	const char *n, *v, *old;
	int rc = 0, any = 0;

	cJSON_ArrayForEach(p, now) {
		n = cj_str(cJSON_GetArrayItem(p, 0));
		v = cj_str(cJSON_GetArrayItem(p, 1));
		if (!n || !v || ((old = part_value(then, n)) && !strcmp(old, v)))
			continue;
		any = 1;
		rc |= corral_buf_addf(out, "  %s: %s\n", n, old ? "changed" :
		    "new (not in the stored key)");
	}
	cJSON_ArrayForEach(p, then) {
		n = cj_str(cJSON_GetArrayItem(p, 0));
		if (n && !part_value(now, n)) {
			any = 1;
			rc |= corral_buf_addf(out, "  %s: gone (only in the "
			    "stored key)\n", n);
		}
	}
	if (!any)
		rc |= corral_buf_addstr(out, "  every part is the same: the "
		    "stored result was removed, or the store was not reached\n");
	return rc;
}

/* What explain is after in the records: unit, and the key it hit. */
struct recorded {
	const char *unit;
	char *key;
};

static int
hit_key(void *ctx, const char *unit, const char *key)
{
	struct recorded *h = ctx;

	if (strcmp(unit, h->unit))
		return 0;
	free(h->key);
	return (h->key = strdup(key)) ? 0 : -1;
}

int
corral_cache_explain(const char *dir, const char *unit,
    struct corral_buf *out, struct corral_err *err)
{
	struct recorded hit = { unit, NULL };
	char *path;
	cJSON *doc, *now, *then;
	const char *key;
	int rc = 0;

	/* the run's record of a hit taken says it; a why file the rest */
	if (each_recorded_hit(dir, hit_key, &hit, err) < 0)
		return -1;
	if (hit.key) {
		rc = corral_buf_addf(out, "%s: a hit, key %.16s\n", unit,
		    hit.key);
		free(hit.key);
		return rc < 0 ? corral_err_set(err, ENOMEM, "explain") : 0;
	}
	if (!(path = corral_cache_unit_path(dir, "why", unit)))
		return corral_err_set(err, ENOMEM, "explain");
	doc = doc_at(path);
	key = doc ? cj_get_str(doc, "key") : NULL;
	free(path);
	if (!key) {
		cJSON_Delete(doc);
		return 1;
	}
	now = cJSON_GetObjectItemCaseSensitive(doc, "parts");
	then = cJSON_GetObjectItemCaseSensitive(doc, "stored");
	if (corral_cache_why_is_hit(doc))
		rc = corral_buf_addf(out, "%s: a hit, key %.16s\n", unit, key);
	else if (!cJSON_IsArray(then))
		rc = corral_buf_addf(out, "%s: a miss: no result of it was "
		    "stored\n", unit);
	else
		rc = corral_buf_addf(out, "%s: a miss, key %.16s; what "
		    "differs from the stored key:\n", unit, key) |
		    diff_parts(now, then, out);
	cJSON_Delete(doc);
	return rc < 0 ? corral_err_set(err, ENOMEM, "explain") : 0;
}
