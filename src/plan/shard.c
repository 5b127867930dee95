/* See LICENSE file for copyright and license details. */
/*
 * shard.c cuts a population into the shards of a CI matrix or a job
 * array, and says which shard this host is.  The cut is a pure function
 * of the population (as a set: the order a host discovered it in does
 * not matter) and the shard count: each unit goes by the SHA-256 of its
 * name, dealt round in that order, or, only when every host is given the
 * same history file, by its durations (longest processing time first),
 * the history's digest then entering the plan's fingerprint.  A host's
 * own local history never changes which shard a unit is in.
 *
 * The manifest a shard writes when its run is over names every log it
 * vouches for: its place, its agent, its runs and its seal.  A merge of
 * the shards takes exactly those logs, checked again here
 * (corral_shard_log_read), and nothing else it finds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "base/json.h"
#include "plan/plan.h"
#include "record/record.h"

static int
nomem(struct corral_err *err)
{
	return corral_err_set(err, ENOMEM, "sharding");
}

/* ------------------------------------------------------------------ */
/* which shard: K/N, or what the engine that started the job says      */

/*
 * An engine's variables: the index (base 0 or 1) and the total, or, for
 * Slurm, the array's first index (and its last, to refuse a step).
 */
struct engine {
	const char *name;
	const char *index, *total, *min, *max;
	int base;
};

static const struct engine engines[] = {
	{ "GitLab", "CI_NODE_INDEX", "CI_NODE_TOTAL", NULL, NULL, 1 },
	{ "CircleCI", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", NULL, NULL, 0 },
	{ "Buildkite", "BUILDKITE_PARALLEL_JOB",
	    "BUILDKITE_PARALLEL_JOB_COUNT", NULL, NULL, 0 },
	{ "a Slurm job array", "SLURM_ARRAY_TASK_ID",
	    "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN",
	    "SLURM_ARRAY_TASK_MAX", 0 },
	{ "Bazel", "TEST_SHARD_INDEX", "TEST_TOTAL_SHARDS", NULL, NULL, 0 },
	{ "a Kubernetes Indexed Job", "JOB_COMPLETION_INDEX",
	    "CORRAL_SHARD_TOTAL", NULL, NULL, 0 }
};

static int
bad_spec(const char *spec, struct corral_err *err)
{
	return corral_err_set(err, 0, "CORRAL_SHARD is '%s'; it must be K/N "
	    "with 1 <= K <= N, or auto", spec);
}

/* A whole number of at most 9 digits, or -1. */
static long
number(const char *s)
{
	long long v;

	if (!s || corral_strtonum(s, 0, 999999999, &v, "n", NULL) < 0)
		return -1;
	return (long)v;
}

static int
parse_kn(const char *spec, struct corral_shard *sh, struct corral_err *err)
{
	const char *slash = strchr(spec, '/');
	char k[16];

	if (!slash || slash == spec || (size_t)(slash - spec) >= sizeof(k))
		return bad_spec(spec, err);
	memcpy(k, spec, (size_t)(slash - spec));
	k[slash - spec] = '\0';
	sh->k = number(k);
	sh->n = number(slash + 1);
	if (sh->k < 1 || sh->n < 1 || sh->k > sh->n)
		return bad_spec(spec, err);
	return 0;
}

/* The shard an engine's variables name; e's index variable is set. */
static int
from_engine(const struct engine *e, corral_env_fn *env,
    struct corral_shard *sh, struct corral_err *err)
{
	long ix = number(env(e->index)), n = number(env(e->total)), min = 0;

	if (e->min && (min = number(env(e->min))) < 0)
		return corral_err_set(err, 0, "CORRAL_SHARD is auto and %s "
		    "is set, but %s is not a number", e->index, e->min);
	if (e->max && number(env(e->max)) >= 0 &&
	    number(env(e->max)) - min + 1 != n)
		return corral_err_set(err, 0, "CORRAL_SHARD is auto, but the "
		    "job array %s-%s with %s tasks has gaps (a step?)",
		    env(e->min), env(e->max), env(e->total) ? env(e->total) :
		    "?");
	if (n < 1)
		return corral_err_set(err, 0, "CORRAL_SHARD is auto and %s "
		    "is set (%s), but %s is %s%s%s", e->index, e->name,
		    e->total, env(e->total) ? "'" : "not set",
		    env(e->total) ? env(e->total) : "",
		    env(e->total) ? "'" : "");
	sh->n = n;
	sh->k = ix < 0 ? -1 : ix - (e->min ? min : e->base) + 1;
	if (sh->k < 1 || sh->k > n)
		return corral_err_set(err, 0, "CORRAL_SHARD is auto, but %s "
		    "is '%s' of %s %ld (%s)", e->index, env(e->index),
		    e->total, n, e->name);
	sh->engine = e->name;
	if (!strcmp(e->index, "TEST_SHARD_INDEX"))
		sh->status_file = env("TEST_SHARD_STATUS_FILE");
	return 0;
}

int
corral_shard_parse(const char *spec, corral_env_fn *env,
    struct corral_shard *sh, struct corral_err *err)
{
	size_t i;
	const char *v;

	memset(sh, 0, sizeof(*sh));
	if (strcmp(spec, "auto"))
		return parse_kn(spec, sh, err);
	for (i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		if ((v = env(engines[i].index)) && *v)
			return from_engine(&engines[i], env, sh, err);
	return corral_err_set(err, 0, "CORRAL_SHARD is auto, but no engine "
	    "says which shard this is (none of CI_NODE_INDEX, "
	    "CIRCLE_NODE_INDEX, BUILDKITE_PARALLEL_JOB, SLURM_ARRAY_TASK_ID, "
	    "TEST_SHARD_INDEX, JOB_COMPLETION_INDEX is set)");
}

/* ------------------------------------------------------------------ */
/* the cut                                                             */

/* For qsort: by the digests of the names, then by the names. */
static const char *const *sort_hex;
static const struct corral_strv *sort_units;

static int
digest_cmp(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	int c = strcmp(sort_hex[a], sort_hex[b]);

	return c ? c : strcmp(sort_units->v[a], sort_units->v[b]);
}

/* bin[i] = the shard (0-based) of unit i: dealt in digest order. */
static int
deal(const struct corral_strv *units, long n, size_t *bin,
    struct corral_err *err)
{
	char (*hex)[CORRAL_SHA256_HEX] = calloc(units->n + 1, sizeof(*hex));
	const char **hp = calloc(units->n + 1, sizeof(*hp));
	size_t *order = calloc(units->n + 1, sizeof(*order)), i;
	int rc = -1;

	if (!hex || !hp || !order) {
		nomem(err);
		goto out;
	}
	for (i = 0; i < units->n; i++) {
		if (corral_sha256_buf(units->v[i], strlen(units->v[i]), hex[i],
		    err) < 0)
			goto out;
		hp[i] = hex[i];
		order[i] = i;
	}
	sort_hex = hp;
	sort_units = units;
	qsort(order, units->n, sizeof(*order), digest_cmp);
	for (i = 0; i < units->n; i++)
		bin[order[i]] = i % (size_t)n;
	rc = 0;
out:
	free(hex);
	free(hp);
	free(order);
	return rc;
}

/* bin[i] = the shard of unit i: longest processing time first over w. */
static int
pack(const struct corral_strv *units, const long long *w, long n,
    size_t *bin, struct corral_err *err)
{
	struct corral_strv *slices;
	struct corral_set *ix;
	size_t k, j, m;
	int rc = -1;

	if (!(ix = corral_set_new()))
		return nomem(err);
	for (j = 0; j < units->n; j++)
		if (corral_set_put(ix, units->v[j], (long)j, NULL) < 0) {
			corral_set_free(ix);
			return nomem(err);
		}
	if (corral_split_weighted(units, w, n, &slices, &m, NULL, err) == 0) {
		for (k = 0; k < m; k++)
			for (j = 0; j < slices[k].n; j++)
				bin[*corral_set_get(ix, slices[k].v[j])] = k;
		corral_split_free(slices, m);
		rc = 0;
	}
	corral_set_free(ix);
	return rc;
}

int
corral_shard_cut(const struct corral_strv *units, const long long *w,
    long n, size_t *bin, struct corral_err *err)
{
	if (n < 1)
		return corral_err_set(err, EINVAL, "%ld shards", n);
	return w ? pack(units, w, n, bin, err) : deal(units, n, bin, err);
}

int
corral_shard_assign(const struct corral_strv *units, const char *history,
    long n, size_t *bin, char plan[CORRAL_SHA256_HEX],
    struct corral_err *err)
{
	struct corral_weights wt;
	int rc;

	memset(&wt, 0, sizeof(wt));
	if (corral_shard_fingerprint(history, plan, err) < 0 || (history &&
	    corral_weights_history(&wt, units, history, err) < 0)) {
		corral_weights_release(&wt);
		return -1;
	}
	rc = corral_shard_cut(units, wt.kind == CORRAL_WEIGHTS_MS ? wt.w :
	    NULL, n, bin, err);
	corral_weights_release(&wt);
	return rc;
}

/* ------------------------------------------------------------------ */
/* what every host must agree on                                       */

int
corral_shard_population(const struct corral_strv *units,
    char hex[CORRAL_SHA256_HEX], struct corral_err *err)
{
	struct corral_strv sorted = CORRAL_STRV_INIT;
	struct corral_sha256 sha;
	size_t i;
	int rc = -1;

	for (i = 0; i < units->n; i++)
		if (corral_strv_add(&sorted, units->v[i]) < 0) {
			nomem(err);
			goto out;
		}
	corral_strv_sort_unique(&sorted);
	if (corral_sha256_init(&sha, err) < 0)
		goto out;
	for (i = 0, rc = 0; i < sorted.n && rc == 0; i++)
		rc = corral_sha256_add(&sha, sorted.v[i],
		    strlen(sorted.v[i]) + 1, err);
	if (rc == 0)
		rc = corral_sha256_peek(&sha, hex, err);
	corral_sha256_release(&sha);
out:
	corral_strv_release(&sorted);
	return rc;
}

int
corral_shard_fingerprint(const char *history, char hex[CORRAL_SHA256_HEX],
    struct corral_err *err)
{
	char hist[CORRAL_SHA256_HEX] = "none";
	struct corral_buf b = CORRAL_BUF_INIT;
	int fd, rc;

	if (history) {
		if ((fd = corral_open_input(history, err)) < 0)
			return -1;
		rc = corral_sha256_fd(fd, history, hist, err);
		close(fd);
		if (rc < 0)
			return -1;
	}
	if (corral_buf_addf(&b, "corral shard plan 1\n%s %s\n", history ?
	    "history" : "digest", hist) < 0)
		return nomem(err);
	rc = corral_sha256_buf(b.data, b.len, hex, err);
	corral_buf_release(&b);
	return rc;
}

/* ------------------------------------------------------------------ */
/* the logs a manifest vouches for                                     */

/* A layer number: 1 to 999999999, no leading 0, up to end; else -1. */
static long
layer_number(const char *p, const char *end)
{
	long v = 0;

	if (p == end || *p == '0' || end - p > 9)
		return -1;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p - '0');
	}
	return v;
}

/* The path of a shard's agent file of suffix (".jsonl", ".launch"). */
static int
agent_path(const char *log, const char *suffix, long *layer, char **agent,
    struct corral_err *err)
{
	const char *p = log, *slash, *id;
	size_t n, sn = strlen(suffix);

	*layer = 0;
	if (agent)
		*agent = NULL;
	if (!strncmp(p, "rerun/", 6)) {
		slash = strchr(p + 6, '/');
		if (!slash || (*layer = layer_number(p + 6, slash)) < 0)
			goto bad;
		p = slash + 1;
	}
	if (strncmp(p, "logs/agent-", 11))
		goto bad;
	id = p + 11;
	n = strlen(id);
	if (n <= sn || strcmp(id + n - sn, suffix) || memchr(id, '/', n - sn))
		goto bad;
	if (agent && !(*agent = strndup(id, n - sn)))
		return nomem(err);
	return 0;
bad:
	return corral_err_set(err, 0, "\"%s\" is not logs/agent-ID%s or "
	    "rerun/N/logs/agent-ID%s", log, suffix, suffix);
}

int
corral_shard_log_path(const char *log, long *layer, char **agent,
    struct corral_err *err)
{
	return agent_path(log, ".jsonl", layer, agent, err);
}

int
corral_shard_note_path(const char *note, long *layer, char **agent,
    struct corral_err *err)
{
	return agent_path(note, ".launch", layer, agent, err);
}

void
corral_shard_log_release(struct corral_shard_log *lg)
{
	free(lg->log);
	free(lg->agent);
	corral_strv_release(&lg->runs);
	memset(lg, 0, sizeof(*lg));
}

/* A log's records, read a line at a time. */
struct log_read {
	struct corral_shard_log *lg;
	const char *path;
	corral_shard_unit_fn *cb;
	void *arg;
	struct corral_set *runs;
	struct corral_buf line;
	size_t lineno;
	off_t left;		/* bytes up to the end of the last seal */
	struct corral_err *err;
};

static int
log_line(struct log_read *r, const char *p, size_t n)
{
	struct corral_json_record jr;
	struct corral_err why;
	const char *run;
	int put, rc = 0;

	r->lineno++;
	if (corral_seal_is(p, n))
		return 0;
	if (corral_json_record_parse(p, n, &jr, &why) < 0)
		return corral_err_set(r->err, 0, "'%s' line %zu: %s", r->path,
		    r->lineno, why.msg);
	run = jr.run ? jr.run : "none";
	if (!jr.agent_id || strcmp(jr.agent_id, r->lg->agent))
		rc = corral_err_set(r->err, 0, "'%s' line %zu: a record of "
		    "agent '%s', not '%s'", r->path, r->lineno,
		    jr.agent_id ? jr.agent_id : "(none)", r->lg->agent);
	else if ((put = corral_set_put(r->runs, run, 0, NULL)) < 0 ||
	    (put == 1 && corral_strv_add(&r->lg->runs, run) < 0))
		rc = nomem(r->err);
	else if (r->cb && r->cb(r->arg, jr.unit, &why) < 0)
		rc = corral_err_set(r->err, 0, "'%s' line %zu: %s", r->path,
		    r->lineno, why.msg);
	corral_json_record_release(&jr);
	return rc;
}

/* corral_fd_chunks' eater: whole lines to log_line, up to r->left. */
static int
log_chunk(void *ctx, const char *p, size_t n)
{
	struct log_read *r = ctx;
	const char *nl;
	size_t part;

	if ((off_t)n > r->left)
		n = (size_t)r->left;
	r->left -= (off_t)n;
	while (n) {
		nl = memchr(p, '\n', n);
		part = nl ? (size_t)(nl - p) : n;
		if (corral_buf_add(&r->line, p, part) < 0) {
			nomem(r->err);
			errno = ENOMEM;
			return -1;
		}
		p += part + (nl != NULL);
		n -= part + (nl != NULL);
		if (!nl)
			break;
		if (log_line(r, r->line.data, r->line.len) < 0) {
			errno = 0;
			return -1;
		}
		corral_buf_reset(&r->line);
	}
	return 0;
}

int
corral_shard_log_read(int fd, const char *path, struct corral_shard_log *lg,
    corral_shard_unit_fn *cb, void *arg, struct corral_err *err)
{
	struct corral_seal_check c;
	struct log_read r;
	int rc = -1;

	if (corral_seal_check_fd(fd, path, &c, NULL, err) < 0)
		return -1;
	if (c.broken || (c.seals && !c.sealed))
		return corral_err_set(err, 0, "'%s' changed after it was "
		    "sealed (line %zu)", path, c.broken ? c.broken :
		    c.seal_line + 1);
	if (!c.seals)
		return corral_err_set(err, 0, "'%s' has no seal", path);
	lg->records = c.records;
	memcpy(lg->sha256, c.sha256, sizeof(lg->sha256));
	memset(&r, 0, sizeof(r));
	r.lg = lg;
	r.path = path;
	r.cb = cb;
	r.arg = arg;
	r.left = c.end;
	r.err = err;
	if (!(r.runs = corral_set_new()))
		return nomem(err);
	if (lseek(fd, 0, SEEK_SET) < 0)
		corral_err_set(err, errno, "cannot read '%s'", path);
	else if (corral_fd_chunks(fd, log_chunk, &r) == 0)
		rc = 0;
	else if (errno)
		corral_err_set(err, errno, "cannot read '%s'", path);
	corral_set_free(r.runs);
	corral_buf_release(&r.line);
	return rc;
}

/* dir/rel, or NULL (ENOMEM). */
static char *
at(const char *dir, const char *rel)
{
	struct corral_buf b = CORRAL_BUF_INIT;

	if (corral_buf_addf(&b, "%s/%s", dir, rel) < 0) {
		corral_buf_release(&b);
		return NULL;
	}
	return b.data;
}

/* Vouch for the log at dir/rel, or say in skipped why not. */
static int
vouch(struct corral_shard_manifest *m, const char *dir, const char *rel,
    struct corral_strv *skipped, struct corral_err *err)
{
	struct corral_shard_log lg, *v;
	struct corral_err why;
	struct stat st;
	char *path = at(dir, rel);
	int fd = -1, rc = -1;

	memset(&lg, 0, sizeof(lg));
	if (!path || !(lg.log = strdup(rel)))
		goto nomem;
	if (corral_shard_log_path(rel, &lg.layer, &lg.agent, &why) < 0)
		goto skip;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		corral_err_set(&why, errno, "cannot open '%s'", path);
		goto skip;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		corral_err_set(&why, 0, "'%s' is not a regular file", path);
		goto skip;
	}
	if (corral_shard_log_read(fd, path, &lg, NULL, NULL, &why) < 0) {
		if (why.errnum == ENOMEM)
			goto nomem;
		goto skip;
	}
	if (!(v = realloc(m->logs, (m->nlogs + 1) * sizeof(*v))))
		goto nomem;
	m->logs = v;
	m->logs[m->nlogs++] = lg;
	memset(&lg, 0, sizeof(lg));
	rc = 0;
	goto out;
skip:
	rc = corral_strv_add(skipped, why.msg) < 0 ? nomem(err) : 0;
	goto out;
nomem:
	rc = nomem(err);
out:
	if (fd >= 0)
		close(fd);
	corral_shard_log_release(&lg);
	free(path);
	return rc;
}

/* Whether the file name is one of kind (see corral_shard_dir_logs). */
static int
of_kind(const char *name, int kind)
{
	size_t n = strlen(name);

	if (strncmp(name, "agent-", 6))
		return 0;
	if (kind == CORRAL_SHARD_NOTES)
		return n > 13 && !strcmp(name + n - 7, ".launch");
	if (kind == CORRAL_SHARD_ALL)
		return strstr(name, ".jsonl") != NULL;
	return n >= 12 && !strcmp(name + n - 6, ".jsonl");
}

/* Every file of kind in dir/sub (a layer's logs) into names. */
static int
list_logs(const char *dir, const char *sub, int kind, struct corral_strv *names,
    struct corral_err *err)
{
	struct dirent *de;
	char *path = at(dir, sub);
	DIR *d;
	int rc = 0;

	if (!path)
		return nomem(err);
	if (!(d = opendir(path))) {
		rc = errno == ENOENT ? 0 : corral_err_set(err, errno,
		    "cannot open '%s'", path);
		free(path);
		return rc;
	}
	for (errno = 0; rc == 0 && (de = readdir(d)); errno = 0) {
		if (!of_kind(de->d_name, kind))
			continue;
		free(path);
		if (!(path = at(sub, de->d_name)) ||
		    corral_strv_add(names, path) < 0)
			rc = nomem(err);
	}
	if (rc == 0 && errno)
		rc = corral_err_set(err, errno, "cannot read '%s/%s'", dir, sub);
	closedir(d);
	free(path);
	return rc;
}

static int
name_cmp(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Sort names->v[from..]: none may be there (v NULL). */
static void
sort_from(struct corral_strv *names, size_t from)
{
	if (names->n > from)
		qsort(names->v + from, names->n - from, sizeof(*names->v),
		    name_cmp);
}

/* The layers of dir's rerun/, as numbers, sorted. */
static int
list_layers(const char *dir, long **layers, size_t *n, struct corral_err *err)
{
	struct dirent *de;
	char *path = at(dir, "rerun");
	long l, *v;
	size_t i, j;
	DIR *d;
	int rc = 0;

	*layers = NULL;
	*n = 0;
	if (!path)
		return nomem(err);
	d = opendir(path);
	free(path);
	if (!d)
		return errno == ENOENT ? 0 : corral_err_set(err, errno,
		    "cannot open '%s/rerun'", dir);
	while (rc == 0 && (de = readdir(d))) {
		if ((l = layer_number(de->d_name, de->d_name +
		    strlen(de->d_name))) < 0)
			continue;
		if (!(v = realloc(*layers, (*n + 1) * sizeof(*v))))
			rc = nomem(err);
		else {
			*layers = v;
			for (i = *n; i > 0 && v[i - 1] > l; i--)
				;
			for (j = *n; j > i; j--)
				v[j] = v[j - 1];
			v[i] = l;
			(*n)++;
		}
	}
	closedir(d);
	return rc;
}

int
corral_shard_dir_logs(const char *dir, int kind, struct corral_strv *names,
    struct corral_err *err)
{
	struct corral_buf sub = CORRAL_BUF_INIT;
	long *layers = NULL;
	size_t nl = 0, i, from;
	int rc;

	if ((rc = list_logs(dir, "logs", kind, names, err)) == 0) {
		sort_from(names, 0);
		rc = list_layers(dir, &layers, &nl, err);
	}
	for (i = 0; rc == 0 && i < nl; i++) {
		corral_buf_reset(&sub);
		from = names->n;
		if (corral_buf_addf(&sub, "rerun/%ld/logs", layers[i]) < 0)
			rc = nomem(err);
		else if ((rc = list_logs(dir, sub.data, kind, names, err)) == 0)
			sort_from(names, from);
	}
	free(layers);
	corral_buf_release(&sub);
	return rc;
}

typedef int vouch_fn(struct corral_shard_manifest *m, const char *dir,
    const char *rel, struct corral_strv *skipped, struct corral_err *err);

/* Every file of kind in dir, each to one. */
static int
vouch_all(struct corral_shard_manifest *m, const char *dir, int kind,
    vouch_fn *one, struct corral_strv *skipped, struct corral_err *err)
{
	struct corral_strv names = CORRAL_STRV_INIT;
	size_t i;
	int rc;

	rc = corral_shard_dir_logs(dir, kind, &names, err);
	for (i = 0; rc == 0 && i < names.n; i++)
		rc = one(m, dir, names.v[i], skipped, err);
	corral_strv_release(&names);
	return rc;
}

int
corral_shard_manifest_logs(struct corral_shard_manifest *m,
    const char *dir, struct corral_strv *skipped, struct corral_err *err)
{
	return vouch_all(m, dir, CORRAL_SHARD_LOGS, vouch, skipped, err);
}

/* ------------------------------------------------------------------ */
/* the launchers' notes a manifest vouches for                         */

/* corral_fd_chunks' eater: into the buffer, up to CORRAL_SHARD_NOTE_MAX. */
static int
note_chunk(void *ctx, const char *p, size_t n)
{
	struct corral_buf *b = ctx;

	if (b->len + n > (size_t)CORRAL_SHARD_NOTE_MAX) {
		errno = EFBIG;
		return -1;
	}
	return corral_buf_eat(b, p, n);
}

int
corral_shard_note_read(int fd, const char *path, struct corral_buf *b,
    char hex[CORRAL_SHA256_HEX], struct corral_err *err)
{
	size_t from = b->len;

	if (corral_fd_chunks(fd, note_chunk, b) < 0)
		return errno == ENOMEM ? nomem(err) : corral_err_set(err,
		    errno, "cannot read '%s'", path);
	return corral_sha256_buf(b->data ? b->data + from : "", b->len - from,
	    hex, err);
}

/* Add the note dir/rel to m, or say in skipped why not. */
static int
vouch_note(struct corral_shard_manifest *m, const char *dir, const char *rel,
    struct corral_strv *skipped, struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_shard_note *v;
	struct corral_err why;
	struct stat st;
	char *path = at(dir, rel), hex[CORRAL_SHA256_HEX];
	long layer;
	int fd = -1, rc = 0;

	if (!path)
		return nomem(err);
	if (corral_shard_note_path(rel, &layer, NULL, &why) < 0)
		goto skip;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		corral_err_set(&why, errno, "cannot open '%s'", path);
	else if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		corral_err_set(&why, 0, "'%s' is not a regular file", path);
	else if (corral_shard_note_read(fd, path, &b, hex, &why) == 0)
		goto take;
	if (why.errnum == ENOMEM)
		goto nomem;
skip:
	rc = corral_strv_add(skipped, why.msg) < 0 ? nomem(err) : 0;
	goto out;
take:
	if (!(v = realloc(m->notes, (m->nnotes + 1) * sizeof(*v))))
		goto nomem;
	m->notes = v;
	memcpy(v[m->nnotes].sha256, hex, sizeof(hex));
	if (!(v[m->nnotes].path = strdup(rel)))
		goto nomem;
	m->nnotes++;
	goto out;
nomem:
	rc = nomem(err);
out:
	if (fd >= 0)
		close(fd);
	corral_buf_release(&b);
	free(path);
	return rc;
}

int
corral_shard_manifest_notes(struct corral_shard_manifest *m,
    const char *dir, struct corral_strv *skipped, struct corral_err *err)
{
	return vouch_all(m, dir, CORRAL_SHARD_NOTES, vouch_note, skipped, err);
}

/* ------------------------------------------------------------------ */
/* the shard manifest                                                  */

int
corral_shard_manifest_format(const struct corral_shard_manifest *m,
    struct corral_buf *b)
{
	const struct corral_shard_log *lg;
	size_t i;
	int rc = 0;

	rc |= corral_buf_addf(b, "{\"shard\":%ld,\"of\":%ld,"
	    "\"population_units\":%zu,\"population\":\"%s\",\"units\":%zu,"
	    "\"plan\":\"%s\",\"host\":", m->k, m->n, m->population_units,
	    m->population, m->units, m->plan);
	rc |= corral_buf_addjson(b, m->host, strlen(m->host));
	rc |= corral_buf_addstr(b, ",\"run\":");
	rc |= corral_buf_addjson(b, m->run, strlen(m->run));
	rc |= corral_buf_addstr(b, ",\"version\":");
	rc |= corral_buf_addjson(b, m->version, strlen(m->version));
	rc |= corral_buf_addstr(b, ",\"logs\":[");
	for (i = 0; i < m->nlogs; i++) {
		lg = &m->logs[i];
		rc |= corral_buf_addstr(b, i ? ",{\"log\":" : "{\"log\":");
		rc |= corral_buf_addjson(b, lg->log, strlen(lg->log));
		rc |= corral_buf_addstr(b, ",\"agent\":");
		rc |= corral_buf_addjson(b, lg->agent, strlen(lg->agent));
		rc |= corral_buf_addstr(b, ",\"runs\":");
		rc |= corral_strv_json(b, &lg->runs);
		rc |= corral_buf_addf(b, ",\"records\":%zu,\"sha256\":\"%s\"}",
		    lg->records, lg->sha256);
	}
	rc |= corral_buf_addstr(b, "]");
	for (i = 0; i < m->nnotes; i++) {
		rc |= corral_buf_addstr(b, i ? ",{\"path\":" :
		    ",\"notes\":[{\"path\":");
		rc |= corral_buf_addjson(b, m->notes[i].path,
		    strlen(m->notes[i].path));
		rc |= corral_buf_addf(b, ",\"sha256\":\"%s\"}",
		    m->notes[i].sha256);
	}
	rc |= corral_buf_addstr(b, m->nnotes ? "]}\n" : "}\n");
	return rc < 0 ? -1 : 0;
}

/* A member that must be a whole number >= min. */
static int
whole(const cJSON *doc, const char *key, long min, long *out,
    struct corral_err *err)
{
	const cJSON *v;

	if (cj_member(doc, key, cj_is_number, "a number", 1, &v, err) < 0)
		return -1;
	if (cj_whole(v->valuedouble, min, out) < 0)
		return corral_err_set(err, 0, "\"%s\" is not a whole number "
		    ">= %ld", key, min);
	return 0;
}

/* A member that must be a SHA-256 in hex, copied to hex. */
static int
digest(const cJSON *doc, const char *key, char hex[CORRAL_SHA256_HEX],
    struct corral_err *err)
{
	const cJSON *v;

	if (cj_member(doc, key, cj_is_string, "a string", 1, &v, err) < 0)
		return -1;
	if (!corral_sha256_valid(v->valuestring))
		return corral_err_set(err, 0, "\"%s\" is not a SHA-256", key);
	memcpy(hex, v->valuestring, CORRAL_SHA256_HEX);
	return 0;
}

/* One entry of "logs" into lg. */
static int
parse_log(const cJSON *e, struct corral_shard_log *lg, struct corral_err *err)
{
	const cJSON *runs, *r;
	char *agent = NULL;
	long records;
	int rc;

	if (!cJSON_IsObject(e))
		return corral_err_set(err, 0, "a log is not a JSON object");
	if (cj_str_member(e, "log", NULL, &lg->log, err) < 0 ||
	    corral_shard_log_path(lg->log, &lg->layer, &agent, err) < 0 ||
	    cj_str_member(e, "agent", NULL, &lg->agent, err) < 0 ||
	    cj_member(e, "runs", cj_is_array, "an array", 1, &runs, err) < 0 ||
	    whole(e, "records", 0, &records, err) < 0 ||
	    digest(e, "sha256", lg->sha256, err) < 0) {
		free(agent);
		return -1;
	}
	rc = strcmp(agent, lg->agent) ? corral_err_set(err, 0, "\"%s\" is "
	    "not the log of agent '%s'", lg->log, lg->agent) : 0;
	free(agent);
	lg->records = (size_t)records;
	cJSON_ArrayForEach(r, runs) {
		if (rc < 0)
			break;
		if (!cJSON_IsString(r))
			rc = corral_err_set(err, 0, "a run of \"%s\" is not a "
			    "string", lg->log);
		else if (corral_strv_add(&lg->runs, r->valuestring) < 0)
			rc = nomem(err);
	}
	return rc;
}

/* name, an entry of the array key, into seen: refused when it is there. */
static int
once(struct corral_set *seen, const char *name, const char *key,
    struct corral_err *err)
{
	int put = corral_set_put(seen, name, 0, NULL);

	if (put < 0)
		return nomem(err);
	return put ? 0 : corral_err_set(err, 0, "\"%s\" is in \"%s\" twice",
	    name, key);
}

/* "logs": every log the shard vouches for, each once. */
static int
parse_logs(const cJSON *doc, struct corral_shard_manifest *m,
    struct corral_err *err)
{
	const cJSON *logs, *e;
	struct corral_set *seen;
	size_t n;
	int rc = 0;

	if (cj_member(doc, "logs", cj_is_array, "an array", 1, &logs, err) < 0)
		return -1;
	if (!(n = (size_t)cJSON_GetArraySize(logs)))
		return 0;
	if (!(m->logs = calloc(n, sizeof(*m->logs))) ||
	    !(seen = corral_set_new()))
		return nomem(err);
	cJSON_ArrayForEach(e, logs) {
		if ((rc = parse_log(e, &m->logs[m->nlogs++], err)) < 0 ||
		    (rc = once(seen, m->logs[m->nlogs - 1].log, "logs",
		    err)) < 0)
			break;
	}
	corral_set_free(seen);
	return rc;
}

/* One entry of "notes" into nt. */
static int
parse_note(const cJSON *e, struct corral_shard_note *nt,
    struct corral_err *err)
{
	long layer;

	if (!cJSON_IsObject(e))
		return corral_err_set(err, 0, "a note is not a JSON object");
	if (cj_str_member(e, "path", NULL, &nt->path, err) < 0 ||
	    corral_shard_note_path(nt->path, &layer, NULL, err) < 0 ||
	    digest(e, "sha256", nt->sha256, err) < 0)
		return -1;
	return 0;
}

/* "notes", when there: every launcher's note the shard vouches for, once. */
static int
parse_notes(const cJSON *doc, struct corral_shard_manifest *m,
    struct corral_err *err)
{
	const cJSON *notes, *e;
	struct corral_set *seen;
	size_t n;
	int rc = 0;

	if (cj_member(doc, "notes", cj_is_array, "an array", 0, &notes,
	    err) < 0)
		return -1;
	if (!notes || !(n = (size_t)cJSON_GetArraySize(notes)))
		return 0;
	if (!(m->notes = calloc(n, sizeof(*m->notes))) ||
	    !(seen = corral_set_new()))
		return nomem(err);
	cJSON_ArrayForEach(e, notes) {
		if ((rc = parse_note(e, &m->notes[m->nnotes++], err)) < 0 ||
		    (rc = once(seen, m->notes[m->nnotes - 1].path, "notes",
		    err)) < 0)
			break;
	}
	corral_set_free(seen);
	return rc;
}

static int
parse_manifest(const cJSON *doc, struct corral_shard_manifest *m,
    struct corral_err *err)
{
	long pu, u;

	if (!cJSON_IsObject(doc))
		return corral_err_set(err, 0, "not a JSON object");
	if (whole(doc, "shard", 1, &m->k, err) < 0 ||
	    whole(doc, "of", 1, &m->n, err) < 0 ||
	    whole(doc, "population_units", 0, &pu, err) < 0 ||
	    whole(doc, "units", 0, &u, err) < 0 ||
	    digest(doc, "population", m->population, err) < 0 ||
	    digest(doc, "plan", m->plan, err) < 0 ||
	    cj_str_member(doc, "host", NULL, &m->host, err) < 0 ||
	    cj_str_member(doc, "run", NULL, &m->run, err) < 0 ||
	    cj_str_member(doc, "version", NULL, &m->version, err) < 0 ||
	    parse_logs(doc, m, err) < 0 || parse_notes(doc, m, err) < 0)
		return -1;
	if (m->k > m->n)
		return corral_err_set(err, 0, "shard %ld of %ld", m->k, m->n);
	m->population_units = (size_t)pu;
	m->units = (size_t)u;
	return 0;
}

int
corral_shard_manifest_read(const char *path, struct corral_shard_manifest *m,
    struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_err why;
	cJSON *doc = NULL;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	if (corral_read_file(path, &b, err) < 0)
		goto out;
	if (!(doc = cj_parse_text(b.data ? b.data : "", b.len, &why)) ||
	    parse_manifest(doc, m, &why) < 0) {
		corral_err_set(err, 0, "'%s': %s", path, why.msg);
		goto out;
	}
	rc = 0;
out:
	cJSON_Delete(doc);
	corral_buf_release(&b);
	return rc;
}

void
corral_shard_manifest_release(struct corral_shard_manifest *m)
{
	size_t i;

	free(m->host);
	free(m->run);
	free(m->version);
	for (i = 0; i < m->nlogs; i++)
		corral_shard_log_release(&m->logs[i]);
	free(m->logs);
	for (i = 0; i < m->nnotes; i++)
		free(m->notes[i].path);
	free(m->notes);
	memset(m, 0, sizeof(*m));
}
