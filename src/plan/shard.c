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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "base/json.h"
#include "plan/plan.h"

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
/* the shard manifest                                                  */

int
corral_shard_manifest_format(const struct corral_shard_manifest *m,
    struct corral_buf *b)
{
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
	rc |= corral_buf_addstr(b, "}\n");
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
	    cj_str_member(doc, "version", NULL, &m->version, err) < 0)
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
	free(m->host);
	free(m->run);
	free(m->version);
	memset(m, 0, sizeof(*m));
}
