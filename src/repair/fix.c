/* See LICENSE file for copyright and license details. */
/*
 * fix.c is corral-fix's engine.  A finder names findings; each finding
 * worth trying (ranked by corroboration and confidence, one attempt per
 * identity, "corroborated" only and confidence >= 0.6 unless told
 * otherwise) is tried in a fresh clone of the root of its own, by a
 * worker process, up to -j at once.  A worker re-runs the finder before
 * and after the patch: the target must be gone and nothing new may
 * appear, or the attempt is rolled back with its clone.  One writer then
 * merges the verified fixes in ranked order, whatever order the workers
 * finished in, holding back any fix that touches a path an earlier one
 * changes differently (deletions included); checks the merged set
 * together in one more clone; and only then, unless this is a dry run
 * (the default), applies it to the root under a journal, re-runs the
 * finder on the result and rolls everything back if the result is not
 * what was verified.  A finder that cannot look stops everything.
 */
#define _XOPEN_SOURCE 700	/* realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "base/json.h"
#include "checkout/checkout.h"
#include "repair/repair.h"
#include "repair/repair-private.h"

#define MARKER_FINDER	"corral-marker-find"
#define MARKER_PATCHER	"corral-marker-patch"
/* How many identities a message lists before "...". */
#define LIST_MAX	3

void
corral_fix_opts_init(struct corral_fix_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->dry_run = 1;		/* MUTATION: dry-run default */
	o->any_trust = 0;	/* MUTATION: corroboration default */
	o->min_confidence = 0.6;
	o->jobs = 1;
	o->timeout = 300;
}

struct worker;

struct ctx {
	const struct corral_fix_opts *o;
	struct corral_fix_report *r;
	char *root;			/* realpath of o->root */
	char *work;			/* scratch, marked as a clone */
	int work_lock;			/* its lock, held while it exists */
	char *staged;			/* WORK/staged: accepted fixes' blobs */
	char *cache;			/* CORRAL_CACHE=STORE for finders, or NULL */
	struct corral_buf finder;
	struct corral_buf patcher;
	struct corral_strv exclude;	/* never cloned */
	struct corral_strv skip;	/* never in a snapshot */
	struct corral_set *found;	/* what the first look saw */
	long timeout_ms;
	struct corral_changes accepted;	/* every accepted fix's files */
	struct worker *workers;		/* -j slots */
};

/* One attempt, in a worker. */
struct try {
	struct ctx *c;
	struct corral_fix_result *res;
	size_t n;			/* 1-based */
	char *dir, *clone, *blobs;
	struct corral_findings before, after;
	struct corral_snap s0, s1;
	struct corral_changes changes;
	const char *status;
	struct corral_buf detail;
	int could_not_look;
};

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */

static char *
pathf(const char *fmt, const char *a, const char *b)
{
	struct corral_buf p = CORRAL_BUF_INIT;

	if (corral_buf_addf(&p, fmt, a, b) < 0) {
		corral_buf_release(&p);
		return NULL;
	}
	return p.data;
}

static char *
attempt_dir(const struct ctx *c, size_t n)
{
	struct corral_buf p = CORRAL_BUF_INIT;

	if (corral_buf_addf(&p, "%s/a-%zu", c->work, n) < 0) {
		corral_buf_release(&p);
		return NULL;
	}
	return p.data;
}

int
corral_fix_default_cmd(const char *name, struct corral_buf *b)
{
	const char *const beside[] = { "", "/" CORRAL_HELPER_DIR };
	struct corral_buf path = CORRAL_BUF_INIT;
	char self[PATH_MAX], *slash;
	ssize_t n;
	size_t i;
	int rc = 1;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')))
			*slash = '\0';
	}
	for (i = 0; n > 0 && rc > 0 && i < 2; i++) {
		corral_buf_reset(&path);
		if (corral_buf_addf(&path, "%s%s/%s", self, beside[i], name) < 0)
			rc = -1;
		else if (access(path.data, X_OK) == 0)
			rc = corral_cmd_quote(b, path.data);
	}
	corral_buf_release(&path);
	return rc > 0 ? corral_buf_addstr(b, name) : rc;
}

/* Append up to LIST_MAX of the names in sv, comma-separated. */
static int
add_list(struct corral_buf *b, const struct corral_strv *sv)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < sv->n && i < LIST_MAX; i++)
		rc |= corral_buf_addf(b, "%s%s", i ? ", " : "", sv->v[i]);
	if (sv->n > LIST_MAX)
		rc |= corral_buf_addstr(b, ", ...");
	return rc;
}

static int
has_identity(const struct corral_findings *f, const char *id)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].identity, id))
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Looking: running the finder                                          */

/*
 * Run the finder on dir, with its output in WORK/TAG.out and .err, and
 * the session's CORRAL_CACHE in its environment.
 * Returns 0 with the findings appended to out, 1 when the finder could
 * not look (err says why), -1 on an operational error.
 */
static int
look(struct ctx *c, const char *dir, const char *tag,
    struct corral_findings *out, struct corral_err *err)
{
	struct corral_buf text = CORRAL_BUF_INIT, why = CORRAL_BUF_INIT;
	const char *env[] = { c->cache, NULL };
	struct corral_cmd cmd = { 0 };
	struct corral_cmd_status st;
	struct corral_err e;
	char *outf = pathf("%s/%s.out", c->work, tag);
	char *errf = pathf("%s/%s.err", c->work, tag);
	int rc = -1;

	if (!outf || !errf) {
		corral_err_set(err, ENOMEM, "look");
		goto out;
	}
	cmd.cmd = c->finder.data;
	cmd.env = c->cache ? env : NULL;
	cmd.dir = dir;
	cmd.out = outf;
	cmd.errout = errf;
	cmd.timeout_ms = c->timeout_ms;
	if (corral_cmd_run(&cmd, &st, &e) < 0) {
		rc = st.started ? -1 : 1;
		corral_err_set(err, e.errnum, "%s%s", rc > 0 ?
		    "could not look: " : "", e.msg);
		goto out;
	}
	if (!st.exited || st.exit_code != 0) {
		corral_cmd_describe(&why, &st, c->timeout_ms, errf);
		corral_err_set(err, 0, "could not look: the finder %s%s",
		    st.timed_out ? "" : "ended with ", why.data ? why.data : "");
		rc = 1;
	} else if (corral_read_file(outf, &text, err) < 0) {
		rc = -1;
	} else if (corral_json_findings(text.data ? text.data : "", text.len,
	    "finder output", out, &e) < 0) {
		corral_err_set(err, e.errnum, "could not look: %s", e.msg);
		rc = 1;
	} else {
		rc = 0;
	}
out:
	corral_buf_release(&text);
	corral_buf_release(&why);
	free(outf);
	free(errf);
	return rc;
}

/* Clone root to dest (WORK/...): the whole tree, but never the excluded. */
static int
clone_root(struct ctx *c, const char *dest, struct corral_err *err)
{
	struct corral_strv parts = CORRAL_STRV_INIT;
	struct corral_err e;
	int rc;

	if (corral_strv_add(&parts, ".") < 0)
		return corral_err_set(err, ENOMEM, "clone");
	rc = corral_checkout(c->root, &parts, &c->exclude, NULL, dest, NULL, &e);
	corral_strv_release(&parts);
	if (rc < 0)
		corral_err_set(err, e.errnum, "cannot clone '%s': %s",
		    c->o->root, e.msg);
	return rc;
}

/* Clone the root as WORK/NAME, look at it, remove the clone. */
static int
look_at_root(struct ctx *c, const char *name, struct corral_findings *out,
    struct corral_err *err)
{
	char *dest = corral_path_join(c->work, name);
	int rc;

	if (!dest)
		return corral_err_set(err, ENOMEM, "look");
	rc = clone_root(c, dest, err);
	if (rc == 0)
		rc = look(c, dest, name, out, err) != 0 ? -1 : 0;
	if (corral_clone_remove(dest, rc == 0 ? err : NULL) < 0)
		rc = -1;
	free(dest);
	return rc;
}

/*
 * Whether after is what a set of fixes for targets may leave: no target
 * left, nothing that was not found at first.  0 when it is, 1 when not
 * (why in b), -1 on ENOMEM.
 */
static int
judge(struct ctx *c, const struct corral_findings *after,
    const struct corral_strv *targets, struct corral_buf *b)
{
	struct corral_strv kept = CORRAL_STRV_INIT, new = CORRAL_STRV_INIT;
	size_t i;
	int rc = 0;

	for (i = 0; i < targets->n && rc == 0; i++)
		if (has_identity(after, targets->v[i]))
			rc = corral_strv_add(&kept, targets->v[i]);
	for (i = 0; i < after->n && rc == 0; i++)
		if (!corral_set_get(c->found, after->v[i].identity))
			rc = corral_strv_add(&new, after->v[i].identity);
	if (rc == 0 && kept.n) {
		rc |= corral_buf_addf(b, "%zu target(s) remain: ", kept.n);
		rc |= add_list(b, &kept);
	}
	if (rc == 0 && new.n) {
		rc |= corral_buf_addf(b, "%s%zu new finding(s): ",
		    kept.n ? "; " : "", new.n);
		rc |= add_list(b, &new);
	}
	if (rc == 0)
		rc = kept.n || new.n;
	corral_strv_release(&kept);
	corral_strv_release(&new);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Setting up and what to attempt                                       */

static int
make_work(struct ctx *c, struct corral_err *err)
{
	const char *base = corral_fix_work_base(c->o->workroot);

	/* What a killed run left here goes first. */
	corral_fix_work_sweep(base);
	if (corral_fix_work_make(base, &c->work, &c->work_lock, err) < 0)
		return -1;
	if (!(c->staged = corral_path_join(c->work, "staged")))
		return corral_err_set(err, ENOMEM, "setup");
	/* One store for the session: a candidate re-runs what it changed. */
	return corral_fix_work_cache(c->work, &c->cache, err);
}

static int
ctx_init(struct ctx *c, const struct corral_fix_opts *o,
    struct corral_fix_report *r, struct corral_err *err)
{
	memset(c, 0, sizeof(*c));
	c->work_lock = -1;
	c->o = o;
	c->r = r;
	c->timeout_ms = o->timeout * 1000;
	if (!(c->root = realpath(o->root, NULL)))
		return corral_err_set(err, errno, "cannot open '%s'", o->root);
	if (corral_journal_check(c->root, err) < 0)
		return -1;
	if (!(c->found = corral_set_new()) ||
	    (o->finder ? corral_buf_addstr(&c->finder, o->finder) :
	    corral_fix_default_cmd(MARKER_FINDER, &c->finder)) < 0 ||
	    (o->patcher ? corral_buf_addstr(&c->patcher, o->patcher) :
	    corral_fix_default_cmd(MARKER_PATCHER, &c->patcher)) < 0 ||
	    corral_strv_add(&c->exclude, ".git") < 0 ||
	    corral_strv_add(&c->exclude, CORRAL_JOURNAL_DIR) < 0 ||
	    corral_strv_add(&c->skip, CORRAL_CLONE_MARK) < 0 ||
	    corral_strv_add(&c->skip, CORRAL_JOURNAL_DIR) < 0)
		return corral_err_set(err, ENOMEM, "setup");
	return make_work(c, err);
}

/* Remove the clone at path (may be NULL) and free the path. */
static void
clone_drop(char *path)
{
	if (path)
		corral_clone_remove(path, NULL);
	free(path);
}

static void
ctx_release(struct ctx *c)
{
	clone_drop(c->work);
	if (c->work_lock >= 0)
		close(c->work_lock);	/* after: nobody sweeps it meanwhile */
	free(c->staged);
	free(c->cache);
	free(c->root);
	corral_buf_release(&c->finder);
	corral_buf_release(&c->patcher);
	corral_strv_release(&c->exclude);
	corral_strv_release(&c->skip);
	corral_set_free(c->found);
	corral_changes_release(&c->accepted);
	free(c->workers);
}

/* The first look, at a clone of root: what is there to fix. */
static int
first_look(struct ctx *c, struct corral_err *err)
{
	struct corral_findings seen = CORRAL_FINDINGS_INIT;
	struct corral_fix_report *r = c->r;
	size_t i;
	int rc;

	if (look_at_root(c, "first", &seen, err) < 0) {
		corral_findings_release(&seen);
		return -1;
	}
	for (i = 0, rc = 0; i < seen.n && rc >= 0; i++)
		if ((rc = corral_set_put(c->found, seen.v[i].identity, 0,
		    NULL)) == 1)
			rc = corral_strv_add(&r->found, seen.v[i].identity);
	if (rc < 0) {
		corral_findings_release(&seen);
		return corral_err_set(err, ENOMEM, "look");
	}
	if (c->o->findings) {
		corral_findings_release(&seen);
		return 0;
	}
	r->findings = seen;
	return 0;
}

/* Findings given in a file, instead of the first look's. */
static int
given_findings(struct ctx *c, struct corral_err *err)
{
	struct corral_buf text = CORRAL_BUF_INIT;
	const char *f = c->o->findings;
	struct corral_err e;
	int rc;

	if (!f)
		return 0;
	if (!strcmp(f, "-"))
		rc = corral_read_file("/dev/stdin", &text, err);
	else
		rc = corral_read_file(f, &text, err);
	if (rc == 0 && corral_json_findings(text.data ? text.data : "",
	    text.len, strcmp(f, "-") ? f : "standard input",
	    &c->r->findings, &e) < 0)
		rc = corral_err_set(err, e.errnum, "%s", e.msg);
	corral_buf_release(&text);
	return rc;
}

/* A finding and its input position, for a stable ranking. */
struct ranked {
	const struct corral_finding *f;
	size_t pos;
};

/* Higher corroboration first, then higher confidence, then input order. */
static int
cmp_rank(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->f->corroboration != y->f->corroboration)
		return x->f->corroboration > y->f->corroboration ? -1 : 1;
	if (x->f->confidence != y->f->confidence)
		return x->f->confidence > y->f->confidence ? -1 : 1;
	return x->pos < y->pos ? -1 : 1;
}

/* Why f is not attempted (a malloc'd sentence), or NULL to attempt it. */
static char *
why_not(struct ctx *c, const struct corral_finding *f,
    struct corral_set *queued, int *nomem)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	int rc = 0;

	if (!c->o->any_trust && strcmp(f->trust, "corroborated"))
		rc = corral_buf_addf(&b, "trust is '%s', and only "
		    "'corroborated' is attempted (-T attempts any)", f->trust);
	else if (f->confidence < c->o->min_confidence) {
		rc |= corral_buf_addstr(&b, "confidence ");
		rc |= corral_json_number(&b, f->confidence);
		rc |= corral_buf_addstr(&b, " is below ");
		rc |= corral_json_number(&b, c->o->min_confidence);
	} else if (corral_set_get(queued, f->identity))
		rc = corral_buf_addstr(&b, "its identity is attempted "
		    "already, at a higher rank");
	*nomem = rc < 0;
	return b.data;
}

/* Rank the findings and split them into attempts and skips. */
static int
plan(struct ctx *c, struct corral_err *err)
{
	struct corral_fix_report *r = c->r;
	struct corral_set *queued = corral_set_new();
	struct ranked *order = calloc(r->findings.n + 1, sizeof(*order));
	size_t i, n = r->findings.n;
	int nomem = !queued || !order;
	char *why;

	r->results = calloc(n + 1, sizeof(*r->results));
	r->skipped = calloc(n + 1, sizeof(*r->skipped));
	nomem |= !r->results || !r->skipped;
	for (i = 0; !nomem && i < n; i++) {
		order[i].f = &r->findings.v[i];
		order[i].pos = i;
	}
	if (!nomem && n)
		qsort(order, n, sizeof(*order), cmp_rank);
	for (i = 0; !nomem && i < n; i++) {
		if ((why = why_not(c, order[i].f, queued, &nomem))) {
			r->skipped[r->nskipped].finding = order[i].f;
			r->skipped[r->nskipped++].reason = why;
		} else if (!nomem) {
			nomem = corral_set_put(queued, order[i].f->identity, 0,
			    NULL) < 0;
			r->results[r->nresults++].finding = order[i].f;
		}
	}
	corral_set_free(queued);
	free(order);
	return nomem ? corral_err_set(err, ENOMEM, "plan") : 0;
}

/* ------------------------------------------------------------------ */
/* One attempt, in a worker process                                     */

static int
verdict(struct try *t, const char *status, const char *fmt, const char *a)
{
	t->status = status;
	corral_buf_reset(&t->detail);
	if (corral_buf_addf(&t->detail, fmt, a) < 0)
		return -1;
	return 1;
}

/* Steps return 0 to go on, 1 when the verdict is in, -1 on error. */

/* Run the finder over the clone into fs, its output kept under when. */
static int
try_look(struct try *t, const char *when, struct corral_findings *fs,
    struct corral_err *err)
{
	char *tag;
	int rc;

	if (!(tag = corral_path_join(t->dir + strlen(t->c->work) + 1, when)))
		return corral_err_set(err, ENOMEM, "attempt");
	rc = look(t->c, t->clone, tag, fs, err);
	free(tag);
	if (rc == 1) {
		t->could_not_look = 1;
		return verdict(t, "could-not-look", "%s", err->msg);
	}
	return rc < 0 ? -1 : 0;
}

static int
try_clone_and_look(struct try *t, struct corral_err *err)
{
	int rc;

	if (mkdir(t->dir, 0700) < 0)
		return corral_err_set(err, errno, "cannot create '%s'", t->dir);
	if (clone_root(t->c, t->clone, err) < 0)
		return -1;
	if ((rc = try_look(t, "before", &t->before, err)) != 0)
		return rc;
	if (!has_identity(&t->before, t->res->finding->identity))
		return verdict(t, "stale", "%s", "the finder does not report "
		    "it in a fresh clone of the root");
	return 0;
}

static int
try_patch(struct try *t, struct corral_err *err)
{
	const struct corral_finding *f = t->res->finding;
	struct corral_buf env = CORRAL_BUF_INIT, why = CORRAL_BUF_INIT;
	struct corral_buf line = CORRAL_BUF_INIT;
	const char *envv[] = { NULL, NULL };
	struct corral_cmd cmd = { 0 };
	struct corral_cmd_status st;
	char *in = corral_path_join(t->dir, "finding.json");
	char *out = corral_path_join(t->dir, "patch.out");
	char *errf = corral_path_join(t->dir, "patch.err");
	int rc = -1;

	if (!in || !out || !errf || corral_buf_addf(&env,
	    "CORRAL_FINDING=%s", f->json) < 0) {
		corral_err_set(err, ENOMEM, "attempt");
		goto out;
	}
	if (corral_buf_addf(&line, "%s\n", f->json) < 0 ||
	    corral_atomic_file(in, line.data, line.len, 0, err) < 0)
		goto out;
	envv[0] = env.data;
	cmd.cmd = t->c->patcher.data;
	cmd.dir = t->clone;
	cmd.in = in;
	cmd.out = out;
	cmd.errout = errf;
	cmd.env = envv;
	cmd.timeout_ms = t->c->timeout_ms;
	if (corral_cmd_run(&cmd, &st, err) < 0)
		rc = st.started ? -1 : verdict(t, "patch-error", "%s",
		    err->msg);
	else if (st.exited && st.exit_code == 0)
		rc = 0;
	else if (st.exited && st.exit_code == 1)
		rc = verdict(t, "no-patch", "%s", "the patcher made no patch");
	else if (corral_cmd_describe(&why, &st, cmd.timeout_ms, errf) == 0)
		rc = verdict(t, "patch-error", "the patcher %s", why.data);
out:
	corral_buf_release(&env);
	corral_buf_release(&why);
	corral_buf_release(&line);
	free(in);
	free(out);
	free(errf);
	return rc;
}

static int
try_diff(struct try *t, struct corral_err *err)
{
	struct corral_err e;
	char *from;
	size_t i;
	int rc = 0;

	if (corral_snap_take(&t->s1, t->clone, &t->c->skip, err) < 0)
		return -1;
	if (corral_snap_diff(&t->s0, &t->s1, &t->changes, &e) < 0)
		return e.errnum ? corral_err_set(err, e.errnum, "%s", e.msg) :
		    verdict(t, "patch-error", "%s", e.msg);
	if (!t->changes.n)
		return verdict(t, "no-patch", "%s", "the patcher exited 0 but "
		    "changed nothing");
	for (i = 0; i < t->changes.n && rc == 0; i++) {
		if (t->changes.v[i].action != CORRAL_ACTION_WRITE)
			continue;
		if (!(from = corral_path_join(t->clone, t->changes.v[i].path)))
			return corral_err_set(err, ENOMEM, "attempt");
		rc = corral_blob_put(t->blobs, from, t->changes.v[i].sha256,
		    err);
		free(from);
	}
	return rc;
}

static int
try_verify(struct try *t, struct corral_err *err)
{
	struct corral_strv target = CORRAL_STRV_INIT;
	struct corral_buf why = CORRAL_BUF_INIT;
	size_t i, writes = 0;
	int rc;

	if ((rc = try_look(t, "after", &t->after, err)) != 0)
		return rc;
	if (has_identity(&t->after, t->res->finding->identity))
		return verdict(t, "rolled-back", "%s", "fix did not remove the "
		    "finding");
	for (i = 0; i < t->after.n; i++)
		if (!has_identity(&t->before, t->after.v[i].identity) &&
		    corral_strv_add(&target, t->after.v[i].identity) < 0)
			rc = -1;
	if (rc == 0 && target.n) {
		rc = corral_buf_addf(&why, "fix introduced %zu new "
		    "finding(s): ", target.n) | add_list(&why, &target);
		if (rc == 0)
			rc = verdict(t, "rolled-back", "%s", why.data);
	}
	corral_strv_release(&target);
	corral_buf_release(&why);
	if (rc != 0)
		return rc < 0 ? corral_err_set(err, ENOMEM, "attempt") : rc;
	for (i = 0; i < t->changes.n; i++)
		writes += t->changes.v[i].action == CORRAL_ACTION_WRITE;
	t->status = "verified";
	return corral_buf_addf(&t->detail, "%zu file(s) changed, %zu deleted",
	    writes, t->changes.n - writes) < 0 ? -1 : 1;
}

static int
try_run(struct try *t, struct corral_err *err)
{
	int rc;

	if ((rc = try_clone_and_look(t, err)) != 0)
		return rc;
	if (corral_snap_take(&t->s0, t->clone, &t->c->skip, err) < 0)
		return -1;
	if ((rc = try_patch(t, err)) != 0 || (rc = try_diff(t, err)) != 0)
		return rc;
	return try_verify(t, err);
}

/* The verdict as the result file says it. */
static int
format_verdict(struct try *t, struct corral_buf *b)
{
	static const struct corral_changes none = CORRAL_CHANGES_INIT;
	int verified = !strcmp(t->status, "verified");
	int rc;

	rc = corral_buf_addstr(b, "{\"status\":");
	rc |= corral_buf_addjson(b, t->status, strlen(t->status));
	rc |= corral_buf_addstr(b, ",\"detail\":");
	rc |= corral_buf_addjson(b, t->detail.data ? t->detail.data : "",
	    t->detail.len);
	rc |= corral_buf_addf(b, ",\"could_not_look\":%s,\"files\":",
	    t->could_not_look ? "true" : "false");
	rc |= corral_json_files(b, verified ? &t->changes : &none, 0, 0);
	return rc | corral_buf_addstr(b, "}\n");
}

static void
try_release(struct try *t)
{
	clone_drop(t->clone);
	/* what was seen before the patch, then after it */
	corral_findings_release(&t->before);
	corral_snap_release(&t->s0);
	corral_findings_release(&t->after);
	corral_snap_release(&t->s1);
	corral_changes_release(&t->changes);
	corral_buf_release(&t->detail);
	free(t->dir);
	free(t->blobs);
}

/* Attempt result i and write WORK/a-N/result.json.  0 or -1. */
static int
attempt(struct ctx *c, size_t i)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct try t = { 0 };
	struct corral_err err;
	char *file = NULL;
	int rc;

	t.c = c;
	t.res = &c->r->results[i];
	t.n = i + 1;
	t.dir = attempt_dir(c, t.n);
	t.clone = t.dir ? corral_path_join(t.dir, "clone") : NULL;
	t.blobs = t.dir ? corral_path_join(t.dir, "files") : NULL;
	if (!t.dir || !t.clone || !t.blobs)
		rc = corral_err_set(&err, ENOMEM, "attempt");
	else
		rc = try_run(&t, &err);
	if (rc < 0)
		verdict(&t, "error", "%s", err.msg);
	file = t.dir ? corral_path_join(t.dir, "result.json") : NULL;
	rc = file && format_verdict(&t, &b) == 0 &&
	    corral_atomic_file(file, b.data, b.len, 0, &err) >= 0 ? 0 : -1;
	corral_buf_release(&b);
	free(file);
	try_release(&t);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Running the attempts, -j at a time                                   */

struct worker {
	pid_t pid;		/* 0: the slot is free */
	int fd;			/* read end; EOF when the worker is gone */
	size_t result;		/* the result it attempts */
};

/* Fork the worker for result i.  0, or -1 with err set. */
static int
start_worker(struct ctx *c, size_t i, struct worker *w,
    struct corral_err *err)
{
	int p[2];

	if (pipe(p) < 0)
		return corral_err_set(err, errno, "cannot start a worker");
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
	if ((w->pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return corral_err_set(err, errno, "cannot start a worker");
	}
	if (w->pid == 0) {
		close(p[0]);
		corral_child_exit(attempt(c, i) < 0 ? 1 : 0);
	}
	close(p[1]);
	w->fd = p[0];
	return 0;
}

static void
result_clear(struct corral_fix_result *res)
{
	free(res->status);
	free(res->detail);
	corral_changes_release(&res->files);
	res->status = res->detail = NULL;
}

/*
 * Read the result the worker for result i left, into res.  0, or -1 with
 * err set when there is none, or when it says the finder could not look
 * or the worker failed.
 */
static int
collect(struct ctx *c, size_t i, struct corral_fix_result *res,
    struct corral_err *err)
{
	struct corral_buf text = CORRAL_BUF_INIT;
	char *dir = attempt_dir(c, i + 1), *file;
	struct corral_err e;
	int cnl = 0, rc;

	file = dir ? corral_path_join(dir, "result.json") : NULL;
	if (!file)
		rc = corral_err_set(err, ENOMEM, "attempt");
	else if (corral_read_file(file, &text, &e) < 0)
		rc = corral_err_set(err, 0, "the worker for '%s' left no "
		    "result", c->r->results[i].finding->identity);
	else
		rc = corral_json_attempt(text.data, text.len, &res->status,
		    &res->detail, &cnl, &res->files, err);
	if (rc == 0 && (cnl || !strcmp(res->status, "error")))
		rc = corral_err_set(err, 0, "%s", res->detail);
	corral_buf_release(&text);
	free(dir);
	free(file);
	return rc;
}

/* Whether the worker for result i failed, so no more should start. */
static int
failed(struct ctx *c, size_t i)
{
	struct corral_fix_result tmp;
	int rc;

	memset(&tmp, 0, sizeof(tmp));
	rc = collect(c, i, &tmp, NULL);
	result_clear(&tmp);
	return rc < 0;
}

/* Wait for one worker to end; returns its slot, or -1 with err set. */
static int
reap(struct worker *w, size_t nw, struct corral_err *err)
{
	struct pollfd *pf = calloc(nw, sizeof(*pf));
	size_t i;
	int status, done = -1;

	if (!pf)
		return corral_err_set(err, ENOMEM, "workers");
	for (i = 0; i < nw; i++) {
		pf[i].fd = w[i].pid > 0 ? w[i].fd : -1;
		pf[i].events = POLLIN;
	}
	while (done < 0) {
		if (poll(pf, nw, -1) < 0 && errno != EINTR)
			break;
		for (i = 0; i < nw && done < 0; i++)
			if (pf[i].fd >= 0 && pf[i].revents)
				done = (int)i;
	}
	free(pf);
	if (done < 0)
		return corral_err_set(err, errno, "cannot wait for workers");
	close(w[done].fd);
	while (waitpid(w[done].pid, &status, 0) < 0 && errno == EINTR)
		;
	w[done].pid = 0;
	return done;
}

/*
 * Run every attempt, c->o->jobs at a time, then read the results in
 * ranked order, so the outcome does not depend on which worker ended
 * first.  A finder that could not look or a worker that failed stops new
 * attempts, and the first such failure in ranked order is returned (-1).
 */
static int
run_attempts(struct ctx *c, struct corral_err *err)
{
	size_t nw = c->o->jobs > 0 ? (size_t)c->o->jobs : 1, next = 0, i;
	size_t running = 0;
	struct worker *w;
	int slot, stop = 0, rc = 0;

	/* In c, so that a worker's copy of the array stays reachable. */
	if (!(w = c->workers = calloc(nw, sizeof(*w))))
		return corral_err_set(err, ENOMEM, "workers");
	while (running || (next < c->r->nresults && !stop)) {
		for (i = 0; i < nw && next < c->r->nresults && !stop; i++) {
			if (w[i].pid)
				continue;
			if (start_worker(c, next, &w[i], err) < 0) {
				stop = rc = -1;
				break;
			}
			w[i].result = next++;
			running++;
		}
		if (!running)
			break;
		if ((slot = reap(w, nw, err)) < 0) {
			rc = -1;
			break;
		}
		running--;
		if (failed(c, w[slot].result))
			stop = 1;
	}
	for (i = 0; rc == 0 && i < next; i++)
		rc = collect(c, i, &c->r->results[i], err);
	if (rc == 0 && next < c->r->nresults)
		rc = corral_err_set(err, 0, "attempts stopped early");
	return rc;
}

/* ------------------------------------------------------------------ */
/* The single writer: merge, check together, apply                      */

/* The change res makes to path, or NULL. */
static const struct corral_change *
change_at(const struct corral_fix_result *res, const char *path)
{
	size_t i;

	for (i = 0; i < res->files.n; i++)
		if (!strcmp(res->files.v[i].path, path))
			return &res->files.v[i];
	return NULL;
}

/*
 * The first path of res that an accepted fix changes differently (a
 * different content, or a delete against a write), or NULL.  *owner is
 * that fix.
 */
static const char *
conflict_of(struct ctx *c, const struct corral_fix_result *res,
    struct corral_set *owners, size_t *owner)
{
	const struct corral_change *mine, *theirs;
	size_t i;
	long *k;

	for (i = 0; i < res->files.n; i++) {
		mine = &res->files.v[i];
		if (!(k = corral_set_get(owners, mine->path)))
			continue;
		theirs = change_at(&c->r->results[*k], mine->path);
		if (theirs->action != mine->action ||
		    strcmp(theirs->sha256, mine->sha256)) {
			*owner = (size_t)*k;
			return mine->path;
		}
	}
	return NULL;
}

/* Accept res (number i): own its paths, stage its blobs. */
static int
accept(struct ctx *c, size_t i, struct corral_set *owners,
    struct corral_err *err)
{
	const struct corral_change *ch;
	char *blobs = NULL, *from;
	size_t j;
	int rc = 0;

	for (j = 0; j < c->r->results[i].files.n && rc == 0; j++) {
		ch = &c->r->results[i].files.v[j];
		if ((rc = corral_set_put(owners, ch->path, (long)i, NULL)) == 1)
			rc = corral_changes_add(&c->accepted, ch->path,
			    ch->action, ch->sha256, ch->before);
		if (rc < 0) {
			rc = corral_err_set(err, ENOMEM, "merge");
			break;
		}
		rc = 0;
		if (ch->action != CORRAL_ACTION_WRITE)
			continue;
		if (!blobs && !(blobs = attempt_dir(c, i + 1)))
			return corral_err_set(err, ENOMEM, "merge");
		if (!(from = pathf("%s/files/%s", blobs, ch->sha256)))
			rc = corral_err_set(err, ENOMEM, "merge");
		else
			rc = corral_blob_put(c->staged, from, ch->sha256, err);
		free(from);
	}
	free(blobs);
	return rc;
}

/* Merge the verified fixes in ranked order, holding back conflicts. */
static int
merge(struct ctx *c, struct corral_err *err)
{
	struct corral_fix_report *r = c->r;
	struct corral_set *owners = corral_set_new();
	struct corral_fix_result *res;
	const char *path;
	size_t i, owner = 0;
	int rc = owners ? 0 : corral_err_set(err, ENOMEM, "merge");

	for (i = 0; i < r->nresults && rc == 0; i++) {
		res = &r->results[i];
		if (strcmp(res->status, "verified"))
			continue;
		if ((path = conflict_of(c, res, owners, &owner))) {
			res->conflict = strdup(path);
			res->conflict_with = strdup(
			    r->results[owner].finding->identity);
			if (!res->conflict || !res->conflict_with)
				rc = corral_err_set(err, ENOMEM, "merge");
			r->conflicts++;
			continue;
		}
		rc = accept(c, i, owners, err);
		res->applied = 1;	/* for now: "accepted" */
	}
	corral_set_free(owners);
	return rc;
}

/* The identities of the accepted fixes. */
static int
targets(struct ctx *c, struct corral_strv *out)
{
	size_t i;

	for (i = 0; i < c->r->nresults; i++)
		if (c->r->results[i].applied && corral_strv_add(out,
		    c->r->results[i].finding->identity) < 0)
			return -1;
	return 0;
}

/*
 * Check that each accepted path under dir still holds what the fixes
 * were made against.  0, or -1 with err set.
 */
static int
check_before(struct ctx *c, const char *dir, struct corral_err *err)
{
	char sha[CORRAL_SHA256_HEX];
	const struct corral_change *ch;
	size_t i;

	for (i = 0; i < c->accepted.n; i++) {
		ch = &c->accepted.v[i];
		if (corral_path_state(dir, ch->path, sha, err) < 0)
			return -1;
		if (strcmp(sha, ch->before))
			return corral_err_set(err, 0, "'%s' changed in '%s' "
			    "while corral-fix ran; nothing was applied",
			    ch->path, c->o->root);
	}
	return 0;
}

/*
 * Look at dir, which holds the root with every accepted fix, and judge
 * it.  0 when it holds, 1 when it does not (why in b), -1 with err set
 * (including when the finder could not look).
 */
static int
look_combined(struct ctx *c, const char *dir, const char *tag,
    struct corral_buf *b, struct corral_strv *remaining,
    struct corral_err *err)
{
	struct corral_findings after = CORRAL_FINDINGS_INIT;
	struct corral_strv tg = CORRAL_STRV_INIT;
	size_t i;
	int rc;

	if ((rc = look(c, dir, tag, &after, err)) != 0)
		rc = -1;
	else if (targets(c, &tg) < 0 || (rc = judge(c, &after, &tg, b)) < 0)
		rc = corral_err_set(err, ENOMEM, "combined");
	for (i = 0; rc == 0 && remaining && i < after.n; i++)
		if (corral_strv_add(remaining, after.v[i].identity) < 0)
			rc = corral_err_set(err, ENOMEM, "combined");
	corral_strv_release(&tg);
	corral_findings_release(&after);
	return rc;
}

static size_t
naccepted(const struct corral_fix_report *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->nresults; i++)
		n += r->results[i].applied;
	return n;
}

/* Apply every accepted fix to one more clone, and look at it. */
static int
combined_check(struct ctx *c, struct corral_err *err)
{
	struct corral_fix_report *r = c->r;
	struct corral_buf why = CORRAL_BUF_INIT;
	char *dest;
	int rc;

	r->combined = -1;
	if (!c->accepted.n)
		return 0;
	if (!(dest = corral_path_join(c->work, "combined")))
		return corral_err_set(err, ENOMEM, "combined");
	rc = clone_root(c, dest, err);
	if (rc == 0 && (rc = check_before(c, dest, err)) == 0)
		rc = corral_apply_changes(dest, &c->accepted, c->staged, err);
	if (rc == 0)
		rc = look_combined(c, dest, "combined", &why, NULL, err);
	if (rc >= 0) {
		r->combined = rc == 0;
		if (rc == 0)
			corral_buf_addf(&why, "the %zu fix(es) together leave "
			    "no target and introduce nothing", naccepted(r));
		r->combined_detail = why.data;
		why.data = NULL;
		rc = 0;
	}
	corral_buf_release(&why);
	corral_clone_remove(dest, NULL);
	free(dest);
	return rc;
}

static int
write_bundle(struct ctx *c, struct corral_err *err)
{
	struct corral_fix_report *r = c->r;
	struct corral_fix_entry *e;
	size_t i, n = 0;
	int rc;

	if (!c->o->bundle)
		return 0;
	if (r->combined == 0) {
		r->bundle_withheld = 1;
		return 0;
	}
	if (!(e = calloc(r->nresults + 1, sizeof(*e))))
		return corral_err_set(err, ENOMEM, "bundle");
	for (i = 0; i < r->nresults; i++) {
		if (!r->results[i].applied)
			continue;
		e[n].identity = r->results[i].finding->identity;
		e[n].repairs = r->results[i].finding->location;
		e[n].trust = r->results[i].finding->trust;
		e[n].confidence = r->results[i].finding->confidence;
		e[n++].files = r->results[i].files;
	}
	if (corral_mkdir_p(c->staged, 0777, err) < 0)
		rc = -1;
	else
		rc = corral_bundle_write(c->o->bundle, c->o->note ?
		    c->o->note : "", e, n, c->staged, err);
	free(e);	/* the strings and files belong to the report */
	if (rc == 0)
		r->bundle = c->o->bundle;
	return rc;
}

/* Save, seal and write; then re-measure.  1 held, 0 not (why in b). */
static int
apply_journaled(struct ctx *c, struct corral_journal *j,
    struct corral_buf *b, struct corral_err *err)
{
	char *dest;
	size_t i;
	int rc;

	for (i = 0; i < c->accepted.n; i++)
		if (corral_journal_save(j, c->accepted.v[i].path,
		    c->accepted.v[i].sha256, err) < 0)
			return -1;
	if (corral_journal_seal(j, err) < 0 ||
	    corral_apply_changes(c->root, &c->accepted, c->staged, err) < 0)
		return -1;
	if (!(dest = corral_path_join(c->work, "remeasured")))
		return corral_err_set(err, ENOMEM, "apply");
	rc = clone_root(c, dest, err);
	if (rc == 0)
		rc = look_combined(c, dest, "remeasured", b, &c->r->remaining,
		    err);
	corral_clone_remove(dest, NULL);
	free(dest);
	return rc < 0 ? -1 : rc == 0;
}

/* Apply the accepted fixes to root, all or nothing. */
static int
apply(struct ctx *c, struct corral_err *err)
{
	struct corral_buf why = CORRAL_BUF_INIT;
	struct corral_strv kept = CORRAL_STRV_INIT;
	struct corral_journal *j;
	sigset_t block, old;
	struct corral_err e;
	int rc;

	if (c->o->dry_run || c->r->combined != 1)
		return 0;
	if (corral_journal_begin(&j, c->root, err) < 0)
		return -1;
	/* Interrupts wait until the root is whole again, either way. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigprocmask(SIG_BLOCK, &block, &old);
	if ((rc = check_before(c, c->root, err)) < 0) {
		/* nothing written yet; err says "nothing was applied" */
		corral_journal_rollback(j, NULL, NULL);
		corral_strv_release(&c->r->remaining);
	} else if ((rc = apply_journaled(c, j, &why, err)) == 1) {
		rc = corral_journal_commit(j, err);
	} else if (rc < 0) {
		rc = corral_journal_abandon(j, err);
		corral_strv_release(&c->r->remaining);
	} else {
		c->r->combined = 0;
		if (corral_journal_rollback(j, &kept, &e) < 0)
			rc = corral_err_set(err, e.errnum, "%s; the journal stays: "
			    "run 'corral-fix -R %s'", e.msg, c->o->root);
		else	/* written, re-measured, restored */
			c->r->restored = c->accepted.n - kept.n;
		if (rc == 0 && kept.n && (corral_buf_addstr(&why, "; changed "
		    "meanwhile and left as it is: ") < 0 ||
		    corral_journal_kept(&why, &kept) < 0))
			rc = corral_err_set(err, ENOMEM, "apply");
		free(c->r->combined_detail);
		c->r->combined_detail = why.data;
		why.data = NULL;
		corral_strv_release(&c->r->remaining);
	}
	corral_strv_release(&kept);
	sigprocmask(SIG_SETMASK, &old, NULL);
	corral_buf_release(&why);
	return rc;
}

/* Counts, the applied flags as they ended, what remains, the message. */
static int
finish(struct ctx *c)
{
	struct corral_fix_report *r = c->r;
	struct corral_buf m = CORRAL_BUF_INIT;
	int wet = !r->dry_run && r->combined == 1;
	size_t i;
	int rc = 0;

	for (i = 0; i < r->nresults; i++) {
		r->verified += !strcmp(r->results[i].status, "verified");
		r->rolled_back += !strcmp(r->results[i].status, "rolled-back");
		r->results[i].applied &= wet;
		r->applied += r->results[i].applied;
	}
	for (i = 0; !wet && i < r->found.n && rc == 0; i++)
		rc = corral_strv_add(&r->remaining, r->found.v[i]);
	if (r->dry_run)
		rc |= corral_buf_addf(&m, "DRY RUN: %zu verified fix(es) "
		    "staged, not applied. Re-run with --apply to merge.",
		    r->verified);
	else
		rc |= corral_buf_addf(&m, "Applied %zu fix(es); %zu "
		    "conflict(s) held back.", r->applied, r->conflicts);
	r->message = m.data;
	return rc;
}

int
corral_fix_run(const struct corral_fix_opts *o, struct corral_fix_report *r,
    struct corral_err *err)
{
	struct ctx c;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	r->root = o->root;
	r->dry_run = o->dry_run;
	r->combined = -1;
	if (ctx_init(&c, o, r, err) < 0 || first_look(&c, err) < 0 ||
	    given_findings(&c, err) < 0 || plan(&c, err) < 0 ||
	    run_attempts(&c, err) < 0)
		goto out;
	if (merge(&c, err) < 0 ||
	    combined_check(&c, err) < 0 || write_bundle(&c, err) < 0 ||
	    apply(&c, err) < 0)
		goto out;
	rc = finish(&c) < 0 ? corral_err_set(err, ENOMEM, "report") : 0;
out:
	ctx_release(&c);
	return rc;
}

void
corral_fix_report_release(struct corral_fix_report *r)
{
	size_t i;

	for (i = 0; i < r->nresults; i++) {
		result_clear(&r->results[i]);
		free(r->results[i].conflict);
		free(r->results[i].conflict_with);
	}
	for (i = 0; i < r->nskipped; i++)
		free(r->skipped[i].reason);
	free(r->results);
	free(r->skipped);
	corral_findings_release(&r->findings);
	corral_strv_release(&r->found);
	corral_strv_release(&r->remaining);
	free(r->combined_detail);
	free(r->message);
	memset(r, 0, sizeof(*r));
}

/* Reading an attempt's result file, which attempt_write writes. */
int
corral_json_attempt(const char *text, size_t len, char **status,
    char **detail, int *could_not_look, struct corral_changes *files,
    struct corral_err *err)
{
	const cJSON *v;
	cJSON *doc;
	int rc = -1;

	*status = *detail = NULL;
	if (!(doc = cj_parse_text(text, len, err)))
		return -1;
	if (cJSON_IsObject(doc) &&
	    cj_str_member(doc, "status", NULL, status, err) == 0 &&
	    cj_str_member(doc, "detail", "", detail, err) == 0 &&
	    cj_member(doc, "could_not_look", cj_is_bool, "a boolean", 1, &v,
	    err) == 0 && corral_json_files_parse(doc, files, err) == 0) {
		*could_not_look = cJSON_IsTrue(v);
		rc = 0;
	} else if (!cJSON_IsObject(doc)) {
		corral_err_set(err, 0, "not a JSON object");
	}
	cJSON_Delete(doc);
	if (rc < 0) {
		free(*status);
		free(*detail);
		*status = *detail = NULL;
	}
	return rc;
}
