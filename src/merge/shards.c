/* See LICENSE file for copyright and license details. */
/*
 * shards.c merges the directories of the shards of one population, run
 * on many hosts, into one result.  It cuts the population it is given
 * itself, as every host did, and checks each shard's manifest against
 * it: the same population, the same number of shards, the same plan,
 * each shard once.  A shard from elsewhere is refused by name, and
 * nothing is written.  Then exactly the logs each manifest vouches for
 * (each layer of re-runs too) are copied byte for byte, a chunk at a
 * time, seals and all, into OUTDIR/shards/, each copy checked against the
 * manifest's entry, any other log a shard directory holds refused by
 * name; and they are merged as one run's: every unit exactly once across
 * the hosts, a unit in two shards a duplicate, the units of a missing
 * shard (or of a refused log) not-run, with a note that names the shard.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	struct corral_set *bin_ix;	/* unit -> its shard, from 0 */
	struct given *taking;		/* the shard whose log is checked */
	struct corral_strv refused_logs;
	long *layers;			/* the layers taken, in order */
	size_t nlayers;
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
	if (!(s->bin_ix = corral_set_new()))
		return merge_nomem(err);
	for (i = 0; i < s->units.n; i++)
		if (corral_strv_add(&s->share[s->bin[i]], s->units.v[i]) < 0 ||
		    corral_set_put(s->bin_ix, s->units.v[i], (long)s->bin[i],
		    NULL) < 0)
			return merge_nomem(err);
	return 0;
}

/* ------------------------------------------------------------------ */
/* the logs, taken                                                     */

/*
 * A shard's manifest says which logs are its: each of them is copied a
 * chunk at a time into OUTDIR/shards/ (where it keeps its place, logs/
 * or rerun/N/logs/), and the copy is checked against the manifest's
 * entry -- its seal, its agent, its runs, and that each of its units is
 * this shard's -- before it is put in place.  What the merge reads is
 * that copy, which nobody else writes: a shard running again while it is
 * merged changes nothing the merge has taken.  A log the manifest does
 * not name, or one that is not what it says, is refused by name.
 */

/* Refuse path of shard g: said, and counted among the refused logs. */
static int
refuse_log(struct shards *s, const struct given *g, const char *path,
    const char *why)
{
	say(s, "'%s' (shard %ld/%ld) %s; refused", path, g->k, g->n, why);
	return corral_strv_add(&s->refused_logs, path) < 0 ? -1 : 0;
}

/* The unit check of a log of shard s->taking. */
static int
own_unit(void *arg, const char *unit, struct corral_err *err)
{
	struct shards *s = arg;
	long *vp = corral_set_get(s->bin_ix, unit);

	if (vp && *vp != s->taking->k - 1)
		return corral_err_set(err, 0, "unit '%s' is shard %ld/%ld's, "
		    "not this shard's", unit, *vp + 1, s->n);
	return 0;
}

/* Copy fd (path) to the temporary a, a chunk at a time. */
static int
stream(int fd, const char *path, struct corral_atomic *a,
    struct corral_err *err)
{
	char *chunk = malloc(65536);
	ssize_t n;
	int rc = 0;

	if (!chunk)
		return merge_nomem(err);
	while ((n = read(fd, chunk, 65536)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = corral_err_set(err, errno, "cannot read '%s'", path);
			break;
		}
		if ((rc = corral_atomic_write(a, chunk, (size_t)n, err)) < 0)
			break;
	}
	free(chunk);
	return rc;
}

/* Whether the copy's runs are the entry's. */
static int
same_runs(const struct corral_strv *a, const struct corral_strv *b)
{
	size_t i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (!corral_strv_has(b, a->v[i]))
			return 0;
	return 1;
}

/*
 * Check the copy open on fd against the entry e.  NULL when it is what e
 * says, else why not (why->errnum ENOMEM: out of memory).
 */
static const char *
check_copy(struct shards *s, int fd, const struct corral_shard_log *e,
    struct corral_err *why)
{
	struct corral_shard_log got;
	const char *bad = NULL;

	memset(&got, 0, sizeof(got));
	got.agent = e->agent;
	if (corral_shard_log_read(fd, "", &got, own_unit, s, why) < 0)
		bad = why->msg + (strncmp(why->msg, "'' ", 3) ? 0 : 3);
	else if (got.records != e->records || strcmp(got.sha256, e->sha256))
		bad = "is not the log its manifest vouches for (its seal "
		    "differs)";
	else if (!same_runs(&got.runs, &e->runs))
		bad = "names other runs than its manifest says";
	got.agent = NULL;
	corral_shard_log_release(&got);
	return bad;
}

/* Copy the regular file from to to, streamed; a link is left alone. */
static int
copy_file(const char *from, const char *to, struct corral_err *err)
{
	struct corral_atomic a;
	struct stat st;
	int fd, rc;

	fd = open(from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	if ((rc = corral_atomic_open(&a, to, err)) == 0) {
		if ((rc = stream(fd, from, &a, err)) < 0)
			corral_atomic_abort(&a);
		else
			rc = corral_atomic_commit(&a, CORRAL_ATOMIC_NO_SYNC,
			    err) < 0 ? -1 : 0;
	}
	close(fd);
	return rc;
}

/*
 * The output files of the agent whose log is e (logs/agent-ID/ beside
 * logs/agent-ID.jsonl), copied beside its copy: where corral-report
 * looks for them.
 */
static int
take_outputs(struct shards *s, struct given *g,
    const struct corral_shard_log *e, const char *top, struct corral_err *err)
{
	struct dirent *de;
	char *rel = strndup(e->log, strlen(e->log) - 6);
	char *from = rel ? corral_path_join(g->dir, rel) : NULL;
	char *to = rel ? corral_path_join(top, rel) : NULL;
	char *f, *t;
	DIR *d = NULL;
	int rc = 0;

	(void)s;
	if (!rel || !from || !to)
		rc = merge_nomem(err);
	else if ((d = opendir(from)) && corral_mkdir_p(to, 0777, err) < 0)
		rc = -1;
	while (rc == 0 && d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		f = corral_path_join(from, de->d_name);
		t = corral_path_join(to, de->d_name);
		rc = !f || !t ? merge_nomem(err) : copy_file(f, t, err);
		free(f);
		free(t);
	}
	if (d)
		closedir(d);
	free(rel);
	free(from);
	free(to);
	return rc;
}

/*
 * Open src, a file a manifest lists, through no link, for its copy at
 * dst: the descriptor in *fd (-1 when none), and NULL, or why it cannot
 * be taken (taken, when dst is there already).
 */
static const char *
open_taken(const char *src, const char *dst, const char *taken, int *fd)
{
	struct stat st;

	*fd = open(src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0)
		return errno == ENOENT ? "is in its manifest but not there" :
		    "cannot be opened (a link, or not readable)";
	if (fstat(*fd, &st) < 0 || !S_ISREG(st.st_mode))
		return "is not a regular file";
	return lstat(dst, &st) == 0 ? taken : NULL;
}

/* Take the log e of shard g into OUTDIR/shards: 0, or -1 with err set. */
static int
take_log(struct shards *s, struct given *g, const struct corral_shard_log *e,
    const char *top, struct corral_err *err)
{
	struct corral_atomic a;
	struct corral_err why;
	char *src = corral_path_join(g->dir, e->log);
	char *dst = corral_path_join(top, e->log);
	const char *bad = NULL;
	int fd = -1, rfd = -1, rc = 0;

	a.fd = -1;
	if (!src || !dst) {
		rc = merge_nomem(err);
		goto out;
	}
	s->taking = g;
	if ((bad = open_taken(src, dst, "has the name of another shard's log",
	    &fd))) {
		rc = refuse_log(s, g, src, bad) < 0 ? merge_nomem(err) : 0;
		goto out;
	}
	if (corral_mkdir_parent(dst, 0777, err) < 0 ||
	    corral_atomic_open(&a, dst, err) < 0 ||
	    stream(fd, src, &a, err) < 0) {
		rc = -1;
		goto out;
	}
	if ((rfd = open(a.tmp, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = corral_err_set(err, errno, "cannot open '%s'", a.tmp);
		goto out;
	}
	if ((bad = check_copy(s, rfd, e, &why))) {
		if (why.errnum == ENOMEM) {
			rc = merge_nomem(err);
			goto out;
		}
		rc = refuse_log(s, g, src, bad) < 0 ? merge_nomem(err) : 0;
		goto out;
	}
	close(rfd);
	rfd = -1;
	rc = corral_atomic_commit(&a, CORRAL_ATOMIC_NO_SYNC, err) < 0 ? -1 : 0;
	a.fd = -1;
	if (rc == 0)
		rc = take_outputs(s, g, e, top, err);
out:
	if (a.fd >= 0)
		corral_atomic_abort(&a);
	if (rfd >= 0)
		close(rfd);
	if (fd >= 0)
		close(fd);
	free(src);
	free(dst);
	return rc;
}

/* Whether the manifest of g lists name, a file of kind. */
static int
listed(const struct given *g, int kind, const char *name)
{
	size_t j;

	if (kind == CORRAL_SHARD_NOTES) {
		for (j = 0; j < g->m.nnotes; j++)
			if (!strcmp(name, g->m.notes[j].path))
				return 1;
		return 0;
	}
	for (j = 0; j < g->m.nlogs; j++)
		if (!strcmp(name, g->m.logs[j].log))
			return 1;
	return 0;
}

/*
 * Refuse every file of kind of g's directory (CORRAL_SHARD_ALL: the logs
 * of logs/ and rerun/N/logs/, a checkpoint too; CORRAL_SHARD_NOTES: the
 * launchers' notes) that its manifest does not name.  A note is refused,
 * not ignored: one nobody vouches for was put there after the manifest
 * was written (or by hand), and saying so by name is what the merge does
 * for a log in its place; its units stay not-run either way, only
 * without the note's word on why.
 */
static int
refuse_strays(struct shards *s, struct given *g, int kind,
    struct corral_err *err)
{
	struct corral_strv names = CORRAL_STRV_INIT;
	char *path;
	size_t i;
	int rc;

	rc = corral_shard_dir_logs(g->dir, kind, &names, err);
	for (i = 0; rc == 0 && i < names.n; i++) {
		if (listed(g, kind, names.v[i]))
			continue;
		if (!(path = corral_path_join(g->dir, names.v[i])) ||
		    refuse_log(s, g, path, kind == CORRAL_SHARD_NOTES ?
		    "is not a note its manifest (shard.json) vouches for" :
		    "is not a log its manifest (shard.json) vouches for") < 0)
			rc = merge_nomem(err);
		free(path);
	}
	corral_strv_release(&names);
	return rc;
}

/* Add OUTDIR/shards' directory of layer l to the merge's, once, in order. */
static int
add_layer(struct shards *s, long l)
{
	size_t i, j;
	long *v;

	for (i = 0; i < s->nlayers && s->layers[i] < l; i++)
		;
	if (i < s->nlayers && s->layers[i] == l)
		return 0;
	if (!(v = realloc(s->layers, (s->nlayers + 1) * sizeof(*v))))
		return -1;
	s->layers = v;
	for (j = s->nlayers; j > i; j--)
		v[j] = v[j - 1];
	v[i] = l;
	s->nlayers++;
	return 0;
}

/*
 * A launcher's note (logs/agent-ID.launch: the launcher's line, then the
 * slice's units) is taken the same way: read through an open that
 * follows no link, its digest checked against the manifest's entry, each
 * unit it names checked to be this shard's, and put in place beside the
 * logs of its layer, where the merge credits it as in a single run.
 */

/* Check the units of note b (its lines after the first) are g's. */
static const char *
check_note_units(struct shards *s, const struct corral_buf *b,
    struct corral_buf *msg)
{
	struct corral_err why;
	const char *p = b->data, *end, *nl;
	char *unit;
	size_t line = 1, n;
	int rc;

	if (!b->len)
		return NULL;
	end = p + b->len;
	nl = memchr(p, '\n', (size_t)(end - p));
	for (p = nl ? nl + 1 : end; p < end; p = nl ? nl + 1 : end) {
		line++;
		nl = memchr(p, '\n', (size_t)(end - p));
		/* cut as the merge's credit cuts it: a CR before goes too */
		n = (size_t)((nl ? nl : end) - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (!(unit = strndup(p, n)))
			return "";
		rc = *unit ? own_unit(s, unit, &why) : 0;
		free(unit);
		if (rc < 0)
			return corral_buf_addf(msg, "line %zu: %s", line,
			    why.msg) < 0 ? "" : msg->data;
	}
	return NULL;
}

/* Take the note e of shard g into OUTDIR/shards: 0, or -1 with err set. */
static int
take_note(struct shards *s, struct given *g, const struct corral_shard_note *e,
    const char *top, struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT, msg = CORRAL_BUF_INIT;
	struct corral_err why;
	char *src = corral_path_join(g->dir, e->path);
	char *dst = corral_path_join(top, e->path);
	char hex[CORRAL_SHA256_HEX];
	const char *bad = NULL;
	int fd = -1, rc = 0;

	if (!src || !dst)
		goto nomem;
	s->taking = g;
	bad = open_taken(src, dst, "has the name of another shard's note", &fd);
	if (!bad && corral_shard_note_read(fd, src, &b, hex, &why) < 0) {
		if (why.errnum == ENOMEM)
			goto nomem;
		bad = "cannot be read";
	} else if (!bad && strcmp(hex, e->sha256))
		bad = "is not the note its manifest vouches for (its digest "
		    "differs)";
	else if (!bad && (bad = check_note_units(s, &b, &msg)) && !*bad)
		goto nomem;
	if (bad)
		rc = refuse_log(s, g, src, bad) < 0 ? merge_nomem(err) : 0;
	else if (corral_mkdir_parent(dst, 0777, err) < 0 ||
	    corral_atomic_file(dst, b.data ? b.data : "", b.len,
	    CORRAL_ATOMIC_NO_SYNC, err) < 0)
		rc = -1;
	goto out;
nomem:
	rc = merge_nomem(err);
out:
	if (fd >= 0)
		close(fd);
	corral_buf_release(&b);
	corral_buf_release(&msg);
	free(src);
	free(dst);
	return rc;
}

/* Take every note of g's manifest, each layer's directory added. */
static int
take_notes(struct shards *s, struct given *g, const char *top,
    struct corral_err *err)
{
	long layer;
	size_t i;
	int rc = refuse_strays(s, g, CORRAL_SHARD_NOTES, err);

	for (i = 0; rc == 0 && i < g->m.nnotes; i++) {
		if (corral_shard_note_path(g->m.notes[i].path, &layer, NULL,
		    err) < 0)
			return -1;
		rc = take_note(s, g, &g->m.notes[i], top, err);
		if (rc == 0 && add_layer(s, layer) < 0)
			rc = merge_nomem(err);
	}
	return rc;
}

static int
take_shards(struct shards *s, struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	char *top = corral_path_join(s->o->outdir, "shards");
	size_t i;
	long k;
	int rc;

	if (!top)
		return merge_nomem(err);
	rc = corral_remove_tree(top, err);
	if (rc == 0 && add_layer(s, 0) < 0)
		rc = merge_nomem(err);
	for (k = 0; rc == 0 && k < s->n; k++) {
		if (!s->of[k])
			continue;
		rc = refuse_strays(s, s->of[k], CORRAL_SHARD_ALL, err);
		for (i = 0; rc == 0 && i < s->of[k]->m.nlogs; i++) {
			rc = take_log(s, s->of[k], &s->of[k]->m.logs[i], top,
			    err);
			if (rc == 0 && add_layer(s, s->of[k]->m.logs[i].layer) < 0)
				rc = merge_nomem(err);
		}
		if (rc == 0)
			rc = take_notes(s, s->of[k], top, err);
	}
	for (i = 0; rc == 0 && i < s->nlayers; i++) {
		corral_buf_reset(&b);
		if ((s->layers[i] ? corral_buf_addf(&b, "%s/rerun/%ld/logs", top,
		    s->layers[i]) : corral_buf_addf(&b, "%s/logs", top)) < 0 ||
		    corral_strv_add(&s->logdirs, b.data) < 0)
			rc = merge_nomem(err);
		else
			rc = corral_mkdir_p(b.data, 0777, err);
	}
	corral_buf_release(&b);
	free(top);
	return rc;
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

/* "1/3 3/3": the shards the merge holds, for summary.json (the page). */
static int
held(const struct shards *s, struct corral_buf *b)
{
	long k;
	int rc = 0;

	for (k = 0; k < s->n; k++)
		if (s->of[k])
			rc |= corral_buf_addf(b, "%s%ld/%ld", b->len ? " " : "",
			    k + 1, s->n);
	return rc | corral_buf_addstr(b, "");
}

static int
merge(struct shards *s, struct corral_merge_stats *st, size_t *missing,
    struct corral_err *err)
{
	struct corral_buf shards = CORRAL_BUF_INIT;
	struct corral_merge_opts mo;
	struct corral_merge_absent *a;
	size_t i;
	int rc;

	if (held(s, &shards) < 0 || !(a = calloc((size_t)s->n, sizeof(*a)))) {
		corral_buf_release(&shards);
		return merge_nomem(err);
	}
	memset(&mo, 0, sizeof(mo));
	mo.logdirs = (const char *const *)s->logdirs.v;
	mo.nlogdirs = s->logdirs.n;
	mo.outdir = s->o->outdir;
	mo.units = s->o->units;
	mo.run = s->o->run;
	mo.shards = shards.data;
	mo.sealed = 1;
	mo.absent = a;
	if (absent(s, a, &mo.nabsent) < 0) {
		free(a);
		corral_buf_release(&shards);
		return merge_nomem(err);
	}
	*missing = mo.nabsent;
	rc = corral_merge_run(&mo, st, s->voice.report, s->voice.arg,
	    err);
	for (i = 0; i < s->refused_logs.n; i++)
		if (corral_strv_add(&st->refused, s->refused_logs.v[i]) < 0)
			rc = merge_nomem(err);
	free(a);
	corral_buf_release(&shards);
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
	corral_strv_release(&s->refused_logs);
	corral_set_free(s->bin_ix);
	free(s->layers);
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
	if (take_shards(&s, err) < 0)
		goto out;
	rc = merge(&s, st, missing, err);
out:
	release(&s);
	return rc;
}
