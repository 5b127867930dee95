/* See LICENSE file for copyright and license details. */
/*
 * shards.c merges the directories of the shards of one population, run
 * on many hosts, into one result.  It cuts the population it is given
 * itself, as every host did, and checks each shard's manifest against
 * it: the same population, the same number of shards, the same plan,
 * each shard once.  A shard from elsewhere is refused by name, and
 * nothing is written.  Then every shard's logs (each layer of re-runs
 * too) are copied byte for byte, seals and all, into OUTDIR/shards/, and
 * merged as one run's: every unit exactly once across the hosts, a unit
 * in two shards a duplicate, the units of a missing shard not-run, with
 * a note that names the shard.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/agent.h"
#include "plan/plan.h"
#include "merge/merge-private.h"

/* One shard directory given, and what its manifest says. */
struct given {
	const char *dir;
	struct corral_shard_manifest m;
	int has;		/* the manifest was read */
	long k, n;		/* from the manifest, else from the name */
};

struct shards {
	const struct corral_shards_opts *o;
	struct merge_voice voice;
	struct corral_strv units;
	size_t *bin;
	char population[CORRAL_SHA256_HEX];
	char plan[CORRAL_SHA256_HEX];
	struct given *g;
	long n;
	struct given **of;		/* [k - 1]: shard k's finished dir */
	struct corral_strv *share;	/* [k - 1]: shard k's units */
	struct corral_strv logdirs;
	struct corral_strv why;
	size_t refused;
};

static void
say(struct shards *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
say(struct shards *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	merge_vsay(&s->voice, fmt, ap);
	va_end(ap);
}

/* K and N from a directory named shard-K-of-N; 0 when it is not. */
static int
name_kn(const char *dir, long *k, long *n)
{
	const char *base = corral_path_base(dir);
	char tail;

	return sscanf(base, "shard-%ld-of-%ld%c", k, n, &tail) == 2 &&
	    *k >= 1 && *k <= *n;
}

/* Read the manifest of every dir given.  -1: none can say which it is. */
static int
read_manifests(struct shards *s, struct corral_err *err)
{
	struct corral_err why;
	struct given *g;
	char *path;
	size_t i;

	for (i = 0; i < s->o->ndirs; i++) {
		g = &s->g[i];
		g->dir = s->o->dirs[i];
		if (!(path = corral_path_join(g->dir, "shard.json")))
			return merge_nomem(err);
		g->has = corral_shard_manifest_read(path, &g->m, &why) == 0;
		free(path);
		if (g->has) {
			g->k = g->m.k;
			g->n = g->m.n;
		} else if (why.errnum != ENOENT || !name_kn(g->dir, &g->k,
		    &g->n))
			return corral_err_set(err, 0, "'%s' is not a shard "
			    "directory: %s", g->dir, why.msg);
	}
	return 0;
}

/* Refuse a shard of another population, number of shards or plan. */
static void
check_foreign(struct shards *s, struct given *g)
{
	if (g->n != s->n) {
		say(s, "'%s' is shard %ld/%ld, not one of %ld shards like "
		    "'%s'", g->dir, g->k, g->n, s->n, s->g[0].dir);
		s->refused++;
	} else if (g->has && (strcmp(g->m.population, s->population) ||
	    g->m.population_units != s->units.n)) {
		say(s, "'%s' (shard %ld/%ld) ran another population: %zu "
		    "units, digest %.12s, not the %zu units here (%.12s)",
		    g->dir, g->k, g->n, g->m.population_units,
		    g->m.population, s->units.n, s->population);
		s->refused++;
	} else if (g->has && strcmp(g->m.plan, s->plan)) {
		say(s, "'%s' (shard %ld/%ld) was cut by another plan "
		    "(%.12s, not %.12s): give every host the same "
		    "CORRAL_HISTORY", g->dir, g->k, g->n, g->m.plan, s->plan);
		s->refused++;
	}
}

/* Each shard once: the finished directory of each K, in s->of. */
static int
check_shards(struct shards *s, struct corral_err *err)
{
	struct given *g, *o;
	size_t i;

	s->n = s->g[0].n;
	if (!(s->of = calloc((size_t)s->n, sizeof(*s->of))))
		return merge_nomem(err);
	for (i = 0; i < s->o->ndirs; i++) {
		g = &s->g[i];
		check_foreign(s, g);
		if (g->n != s->n || !g->has)
			continue;
		if ((o = s->of[g->k - 1])) {
			say(s, "'%s' and '%s' are both shard %ld/%ld", o->dir,
			    g->dir, g->k, g->n);
			s->refused++;
		}
		s->of[g->k - 1] = g;
	}
	return 0;
}

/* Every unit's shard, and each shard's units. */
static int
cut(struct shards *s, struct corral_err *err)
{
	size_t i;

	if (corral_units_load(s->o->units, '\n', &s->units, 0, err) < 0 ||
	    corral_shard_population(&s->units, s->population, err) < 0)
		return -1;
	if (!(s->bin = calloc(s->units.n + 1, sizeof(*s->bin))) ||
	    !(s->share = calloc((size_t)s->n, sizeof(*s->share))))
		return merge_nomem(err);
	if (corral_shard_assign(&s->units, s->o->history, s->n, s->bin,
	    s->plan, err) < 0)
		return -1;
	for (i = 0; i < s->units.n; i++)
		if (corral_strv_add(&s->share[s->bin[i]], s->units.v[i]) < 0)
			return merge_nomem(err);
	return 0;
}

/* ------------------------------------------------------------------ */
/* the logs, copied                                                    */

/* Copy from/NAME to to/NAME for every agent's log and checkpoint. */
static int
copy_logs(const char *from, const char *to, struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct dirent *de;
	char *src, *dst;
	DIR *d;
	int rc = 0;

	if (!(d = opendir(from)))
		return errno == ENOENT ? 0 : corral_err_set(err, errno,
		    "cannot open '%s'", from);
	if (corral_mkdir_p(to, 0777, err) < 0) {
		closedir(d);
		return -1;
	}
	while (rc == 0 && (de = readdir(d))) {
		if (strncmp(de->d_name, "agent-", 6) ||
		    (!strstr(de->d_name, ".jsonl")))
			continue;
		src = corral_path_join(from, de->d_name);
		dst = corral_path_join(to, de->d_name);
		corral_buf_reset(&b);
		if (!src || !dst)
			rc = merge_nomem(err);
		else if ((rc = corral_read_file(src, &b, err)) == 0)
			rc = corral_atomic_file(dst, b.data ? b.data : "",
			    b.len, 0, err) < 0 ? -1 : 0;
		free(src);
		free(dst);
	}
	closedir(d);
	corral_buf_release(&b);
	return rc;
}

/* The layer directory l (0: logs, else rerun/l/logs) under top. */
static char *
layer_dir(const char *top, size_t l)
{
	struct corral_buf b = CORRAL_BUF_INIT;

	if ((l ? corral_buf_addf(&b, "%s/rerun/%zu/logs", top, l) :
	    corral_buf_addf(&b, "%s/logs", top)) < 0) {
		corral_buf_release(&b);
		return NULL;
	}
	return b.data;
}

static int
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * Copy layer l of every finished shard into OUTDIR/shards; 1 when some
 * shard has that layer, 0 when none does.
 */
static int
copy_layer(struct shards *s, const char *top, size_t l,
    struct corral_err *err)
{
	char *from, *to = layer_dir(top, l);
	long k;
	int found = 0, rc = 0;

	if (!to)
		return merge_nomem(err);
	for (k = 0; k < s->n && rc == 0; k++) {
		if (!s->of[k])
			continue;
		if (!(from = layer_dir(s->of[k]->dir, l))) {
			rc = merge_nomem(err);
			break;
		}
		if (is_dir(from)) {
			found = 1;
			rc = copy_logs(from, to, err);
		}
		free(from);
	}
	if (rc == 0 && (found || l == 0) && (rc = corral_mkdir_p(to, 0777,
	    err)) == 0)
		rc = corral_strv_add(&s->logdirs, to) < 0 ? merge_nomem(err) :
		    found;
	free(to);
	return rc;
}

static int
copy_shards(struct shards *s, struct corral_err *err)
{
	char *top = corral_path_join(s->o->outdir, "shards");
	size_t l;
	int rc;

	if (!top)
		return merge_nomem(err);
	rc = corral_remove_tree(top, err);
	for (l = 0; rc == 0; l++)
		if ((rc = copy_layer(s, top, l, err)) < 0 || (rc == 0 && l > 0))
			break;
		else
			rc = 0;
	free(top);
	return rc < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* the merge                                                           */

/* The missing shards: said once each, their units not-run with a note. */
static int
absent(struct shards *s, struct corral_merge_absent *a, size_t *na)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	long k;
	size_t i;

	*na = 0;
	for (k = 0; k < s->n; k++) {
		if (s->of[k])
			continue;
		corral_buf_reset(&b);
		if (corral_buf_addf(&b, "shard %ld/%ld is missing", k + 1,
		    s->n) < 0)
			goto nomem;
		for (i = 0; i < s->o->ndirs; i++)
			if (s->g[i].k == k + 1 && s->g[i].n == s->n &&
			    corral_buf_addf(&b, " ('%s' has no manifest: its "
			    "run did not finish)", s->g[i].dir) < 0)
				goto nomem;
		say(s, "%s: its %zu %s not-run", b.data, s->share[k].n,
		    s->share[k].n == 1 ? "unit is" : "units are");
		if (corral_strv_add(&s->why, b.data) < 0)
			goto nomem;
		a[*na].units = &s->share[k];
		(*na)++;
	}
	for (i = 0; i < *na; i++)
		a[i].why = s->why.v[i];
	corral_buf_release(&b);
	return 0;
nomem:
	corral_buf_release(&b);
	return -1;
}

static int
merge(struct shards *s, struct corral_merge_stats *st, size_t *missing,
    struct corral_err *err)
{
	struct corral_merge_opts mo;
	struct corral_merge_absent *a;
	int rc;

	if (!(a = calloc((size_t)s->n, sizeof(*a))))
		return merge_nomem(err);
	memset(&mo, 0, sizeof(mo));
	mo.logdirs = (const char *const *)s->logdirs.v;
	mo.nlogdirs = s->logdirs.n;
	mo.outdir = s->o->outdir;
	mo.units = s->o->units;
	mo.run = s->o->run;
	mo.sealed = 1;
	mo.absent = a;
	if (absent(s, a, &mo.nabsent) < 0) {
		free(a);
		return merge_nomem(err);
	}
	*missing = mo.nabsent;
	rc = corral_merge_run(&mo, st, s->voice.report, s->voice.arg,
	    err);
	free(a);
	return rc;
}

static void
release(struct shards *s)
{
	size_t i;
	long k;

	for (i = 0; s->g && i < s->o->ndirs; i++)
		corral_shard_manifest_release(&s->g[i].m);
	for (k = 0; s->share && k < s->n; k++)
		corral_strv_release(&s->share[k]);
	free(s->g);
	free(s->of);
	free(s->share);
	free(s->bin);
	corral_strv_release(&s->units);
	corral_strv_release(&s->logdirs);
	corral_strv_release(&s->why);
}

int
corral_merge_shards(const struct corral_shards_opts *o,
    struct corral_merge_stats *st, size_t *missing,
    corral_merge_report_fn *report, void *arg, struct corral_err *err)
{
	struct shards s;
	int rc = -1;

	memset(&s, 0, sizeof(s));
	memset(st, 0, sizeof(*st));
	s.o = o;
	s.voice.report = report;
	s.voice.arg = arg;
	*missing = 0;
	if (!o->ndirs)
		return corral_err_set(err, 0, "no shard directories to merge");
	if (!(s.g = calloc(o->ndirs, sizeof(*s.g))))
		return merge_nomem(err);
	if (read_manifests(&s, err) < 0 || (s.n = s.g[0].n, cut(&s, err)) < 0 ||
	    check_shards(&s, err) < 0)
		goto out;
	if (s.refused) {
		rc = corral_err_set(err, 0, "%zu shard %s refused; nothing "
		    "merged", s.refused, s.refused == 1 ? "directory" :
		    "directories");
		goto out;
	}
	if (copy_shards(&s, err) < 0)
		goto out;
	rc = merge(&s, st, missing, err);
out:
	release(&s);
	return rc;
}
