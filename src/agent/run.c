/* See LICENSE file for copyright and license details. */
/*
 * run.c runs one agent's slice.  It checks out the agent's private clone,
 * runs each unit as /bin/sh -c CMD inside it (posix_spawn, or vfork when
 * limits must be set in the child; never fork; one process group per
 * unit; output through a pipe that the agent drains into a file of the
 * unit's own, capped if asked, while one ppoll loop watches the unit's
 * deadline), and appends the unit's record to its log as soon as it
 * ends.  The log is a file no path leads to until the slice has ended
 * (runlog.c), so no unit can write it; a checkpoint beside it,
 * agent-ID.jsonl.part, lets the next agent of a killed slice resume after
 * the units it finished.  Only a slice that ran to its end gets its
 * sealed log at agent-ID.jsonl: a log under the final name is always
 * complete, and a crash loses at most the unit in flight.  The agent is a
 * child subreaper, so whatever a unit starts stays in reach when it
 * detaches (setsid, a double fork, daemon(3)): when a unit ends, every
 * process it left running is killed and reaped, and the record counts
 * them.  A unit whose own path cannot be checked out fails alone, and a
 * clone a unit removed or replaced is checked out again before the next
 * unit.  A watchdog, forked once per slice into a process group of its
 * own, kills the running unit's group and removes the clone if this
 * process is killed outright (SIGKILL), which no signal handler can
 * catch.  When the run has a guard (the make that
 * started it), the agent watches it too: a guard killed outright leaves
 * no agent or unit running on behalf of a run nobody waits for.
 *
 * The job is in four files that share run-private.h: here, getting
 * ready (paths, the clone, the units' environment and limits) and
 * finishing; slice.c, the slice's loop (attempts, retries, notes,
 * records, resuming); supervise.c, a unit's supervision (signals, the
 * watchdog, the guard, its deadline, the processes it left); capture.c,
 * its output, capped.
 */
#define _GNU_SOURCE	/* realpath, mkdtemp */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "checkout/checkout.h"
#include "agent/agent.h"
#include "agent/agent-private.h"
#include "agent/run-private.h"

extern char **environ;

int
corral_agent_check(const char *agent, struct corral_err *err)
{
	static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789._-";

	if (*agent == '\0' || *agent == '.' ||
	    agent[strspn(agent, ok)] != '\0')
		return corral_err_set(err, 0, "agent id '%s' must be "
		    "[A-Za-z0-9._-] and not start with '.'", agent);
	return 0;
}

void
corral_run_id(char out[32])
{
	struct tm tm;
	time_t now = time(NULL);
	char stamp[20];

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(out, 32, "%s-%ld", stamp, (long)getpid());
}
/* ------------------------------------------------------------------ */
/* Getting ready                                                        */

void
corral_run_init(struct corral_run *r)
{
	memset(r, 0, sizeof(*r));
}

/* r->st, made by corral_run_start and freed by corral_run_release. */
static int
state_new(struct corral_run *r, struct corral_err *err)
{
	struct corral_run_state *st;

	if (!(st = calloc(1, sizeof(*st))))
		return corral_err_set(err, ENOMEM, "cannot start");
	corral_runlog_init(&st->rl);
	st->watchfd = -1;
	st->guardfd = -1;
	st->emptyfd = -1;
	corral_live_init(&st->live);
	r->st = st;
	return 0;
}

/* a followed by b, malloc'd; NULL on ENOMEM. */
static char *
concat(const char *a, const char *b)
{
	struct corral_buf buf = CORRAL_BUF_INIT;

	if (corral_buf_addstr(&buf, a) < 0 || corral_buf_addstr(&buf, b) < 0) {
		corral_buf_release(&buf);
		return NULL;
	}
	return buf.data;
}

/*
 * LOGDIR/agent-ID, LOGDIR/agent-ID.jsonl and its .part, from LOGDIR as
 * given less its trailing slashes.
 */
static int
make_paths(struct corral_run *r, struct corral_err *err)
{
	struct corral_buf dir = CORRAL_BUF_INIT;
	size_t n = strlen(r->logdir);

	if (n == 0)
		return corral_err_set(err, 0, "the log directory name is empty");
	while (n > 1 && r->logdir[n - 1] == '/')
		n--;
	if (corral_buf_add(&dir, r->logdir, n) < 0 ||
	    corral_buf_addf(&dir, "%sagent-%s", r->logdir[n - 1] == '/' ?
	    "" : "/", r->agent) < 0) {
		corral_buf_release(&dir);
		return corral_err_set(err, ENOMEM, "cannot start");
	}
	r->st->outdir = dir.data;
	if (!(r->st->logsdir = strndup(r->logdir, n)) ||
	    !(r->st->log = concat(r->st->outdir, ".jsonl")) ||
	    !(r->st->part = concat(r->st->outdir, ".jsonl.part")))
		return corral_err_set(err, ENOMEM, "cannot start");
	return 0;
}

static int
unlink_old(const char *path, struct corral_err *err)
{
	if (unlink(path) < 0 && errno != ENOENT)
		return corral_err_set(err, errno, "cannot remove '%s'", path);
	return 0;
}

/*
 * Create the output directory and remove the old log; the checkpoint and
 * the outputs stay until corral_run_units knows what it resumes.
 */
static int
prepare_logdir(struct corral_run *r, struct corral_err *err)
{
	struct stat st;

	if (make_paths(r, err) < 0)
		return -1;
	/* a slice answered from the stores needs one only for a tail */
	if (r->answer_only)
		return corral_mkdir_p(r->st->logsdir, 0777, err) < 0 ? -1 :
		    unlink_old(r->st->log, err);
	r->st->made_outdir = stat(r->st->outdir, &st) < 0;
	if (corral_mkdir_p(r->st->outdir, 0777, err) < 0 ||
	    unlink_old(r->st->log, err) < 0)
		return -1;
	if (!(r->st->noteroot = realpath(r->st->outdir, NULL)))
		return corral_err_set(err, errno, "cannot open '%s'",
		    r->st->outdir);
	return 0;
}

/*
 * In the sandbox, CORRAL_OUT (LOGDIR itself when it is in none) and
 * STATEDIR are hidden from the units: no unit reads another's output or
 * writes a record.
 */
static int
hide_ours(struct corral_run *r, struct corral_err *err)
{
	char *out;
	int rc;

	if (!r->sandbox)
		return 0;
	out = corral_lock_find(r->logdir);
	rc = corral_sandbox_hide(r->sandbox, out ? out : r->logdir);
	free(out);
	if (rc == 0 && r->statedir)
		rc = corral_sandbox_hide(r->sandbox, r->statedir);
	if (rc < 0)
		return corral_err_set(err, errno, "cannot hide '%s' from the "
		    "sandbox", r->logdir);
	return 0;
}

/* Which directory the clone is, to tell when a unit replaced it. */
static int
remember_clone(struct corral_run *r, struct corral_err *err)
{
	struct stat st;

	if (lstat(r->clone, &st) < 0)
		return corral_err_set(err, errno, "cannot stat '%s'", r->clone);
	r->st->clone_dev = st.st_dev;
	r->st->clone_ino = st.st_ino;
	return 0;
}

static int
is_unit(const struct corral_run *r, const char *name)
{
	size_t i;

	for (i = 0; r->units && i < r->units->n; i++)
		if (!strcmp(r->units->v[i], name))
			return 1;
	return 0;
}

/* Note that unit's own part was refused, and why. */
static int
refuse_unit(struct corral_run *r, const char *unit,
    const struct corral_err *why)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	int rc;

	rc = corral_buf_addf(&b, "%s%s%s", why->msg,
	    why->errnum ? ": " : "", why->errnum ? strerror(why->errnum) : "");
	if (rc == 0 && (rc = corral_strv_add(&r->refused, unit)) == 0)
		rc = corral_strv_addn(&r->refusal, b.data, b.len);
	corral_buf_release(&b);
	return rc;
}

/*
 * The parts to check out: every part that is not refused.  A refused
 * part that is a unit of the slice (corral.mk lists a unit that is a path
 * as a part) fails only that unit; any other refused part, which all
 * units may need, fails the slice.
 */
static int
sort_parts(struct corral_run *r, struct corral_err *err)
{
	struct corral_err why;
	const char *p;
	char *real;
	size_t i;
	int rc;

	if (!(real = realpath(r->src, NULL)))
		return corral_err_set(err, errno, "cannot open '%s'", r->src);
	free(real);
	for (i = 0; r->parts && i < r->parts->n; i++) {
		p = r->parts->v[i];
		if (corral_part_check(r->src, p, &why) == 0)
			rc = corral_strv_add(&r->st->cloned, p);
		else if (is_unit(r, p))
			rc = refuse_unit(r, p, &why);
		else
			return corral_err_set(err, why.errnum, "%s", why.msg);
		if (rc < 0)
			return corral_err_set(err, ENOMEM, "cannot start");
	}
	return 0;
}

/* Why unit was not checked out, or NULL when it was. */
const char *
corral_run_refusal_of(const struct corral_run *r, const char *unit)
{
	size_t i;

	for (i = 0; i < r->refused.n; i++)
		if (!strcmp(r->refused.v[i], unit))
			return r->refusal.v[i];
	return NULL;
}

/*
 * Before the next unit: when this one removed or replaced its clone
 * (rm -rf "$CORRAL_WORKDIR", mv), check it out again at the same path.
 * 1 when it did, 0 when the clone is the one checked out, -1 with err.
 */
int
corral_run_clone_check(struct corral_run *r, struct corral_err *err)
{
	struct stat st;
	char *mark;
	int intact;

	if (!(mark = corral_path_join(r->clone, CORRAL_CLONE_MARK)))
		return corral_err_set(err, ENOMEM, "cannot run a unit");
	intact = lstat(r->clone, &st) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_dev == r->st->clone_dev && st.st_ino == r->st->clone_ino &&
	    lstat(mark, &st) == 0 && S_ISREG(st.st_mode);
	free(mark);
	if (intact)
		return 0;
	if (corral_clone_renew(r->src, &r->st->cloned, r->exclude, r->patterns,
	    r->clone,
	    err) < 0 || remember_clone(r, err) < 0)
		return -1;
	return 1;
}

/*
 * Check out into a fresh directory WORKROOT/corral-ID.XXXXXX, made by
 * mkdtemp so that no two agents (nor two runs of one) share it, which
 * corral_checkout then replaces with the clone.
 */
static int
make_clone(struct corral_run *r, struct corral_strv *missing,
    struct corral_err *err)
{
	struct corral_buf t = CORRAL_BUF_INIT;
	long long t0 = corral_time_ms();
	char *root;
	int rc;

	/* Each clone in a block group of its own (corral_mkdir_top). */
	if (corral_mkdir_top(r->workroot, 0777, err) < 0)
		return -1;
	if (!(root = realpath(r->workroot, NULL)))
		return corral_err_set(err, errno, "cannot open '%s'",
		    r->workroot);
	rc = corral_buf_addf(&t, "%s/corral-%s.XXXXXX",
	    strcmp(root, "/") ? root : "", r->agent);
	free(root);
	if (rc < 0)
		return corral_err_set(err, ENOMEM, "cannot start");
	if (!mkdtemp(t.data)) {
		rc = corral_err_set(err, errno, "cannot create '%s'", t.data);
		corral_buf_release(&t);
		return rc;
	}
	if (corral_checkout(r->src, &r->st->cloned, r->exclude, r->patterns,
	    t.data, missing,
	    err) < 0) {
		rmdir(t.data);
		corral_buf_release(&t);
		return -1;
	}
	r->clone = t.data;
	r->st->checkout_ms = corral_time_ms() - t0;
	corral_time_iso(r->st->checkout_at);
	return remember_clone(r, err);
}

static int
add_var(struct corral_strv *env, const char *name, const char *value)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	int rc;

	rc = corral_buf_addf(&b, "%s=%s", name, value);
	if (rc == 0)
		rc = corral_strv_addn(env, b.data, b.len);
	corral_buf_release(&b);
	return rc;
}

/* Replace env->v[i] with NAME=VALUE. */
static int
set_var(struct corral_strv *env, size_t i, const char *name,
    const char *value)
{
	struct corral_buf b = CORRAL_BUF_INIT;

	if (corral_buf_addf(&b, "%s=%s", name, value) < 0) {
		corral_buf_release(&b);
		return -1;
	}
	free(env->v[i]);
	env->v[i] = b.data;
	return 0;
}

int
corral_run_unit_env(struct corral_run *r, const char *unit,
    const char *note, int attempt)
{
	struct corral_strv *env = &r->st->env;
	size_t i = r->st->envunit;
	char num[24];

	snprintf(num, sizeof(num), "%d", attempt);
	return set_var(env, i, "CORRAL_UNIT", unit) |
	    set_var(env, i + 1, "CORRAL_NOTE", note) |
	    set_var(env, i + 2, "CORRAL_ATTEMPT", num);
}

/*
 * The agent's own directory for its units' TMPDIRs, made in the caller's
 * TMPDIR (outside the tree and CORRAL_OUT, wherever the clone is), mode
 * 0700: each attempt's TMPDIR is DIR/t, made and removed inside it, so
 * no other user can take the name in a shared /tmp.  0, or -1 with err.
 */
static int
make_unit_tmp(struct corral_run *r, struct corral_err *err)
{
	const char *base = getenv("TMPDIR");
	struct corral_buf p = CORRAL_BUF_INIT;

	if (corral_buf_addf(&p, "%s/corral-unit.XXXXXX", base && *base ? base :
	    "/tmp") < 0)
		return corral_err_set(err, ENOMEM, "cannot start");
	if (!mkdtemp(p.data)) {
		corral_err_set(err, errno, "cannot make '%s'", p.data);
		corral_buf_release(&p);
		return -1;
	}
	r->st->unit_tmp_root = p.data;
	if (!(r->st->unit_tmp = corral_path_join(p.data, "t")))
		return corral_err_set(err, ENOMEM, "cannot start");
	return 0;
}

/*
 * A private /tmp (r->tmp_private): the attempt's TMPDIR bound on /tmp in
 * a mount namespace of the unit's own.  What the unit must still reach
 * under the old /tmp -- its clone, the directory of its CORRAL_NOTE --
 * is bound first on a mount point of the same path inside that TMPDIR,
 * so that the recursive bind on /tmp brings it along.  0, or -1 with err.
 */
static int
tmp_bind(struct corral_run *r, const char *tmp, const char *path,
    struct corral_err *err)
{
	struct corral_run_state *st = r->st;
	struct corral_buf to = CORRAL_BUF_INIT;
	char *real = realpath(path, NULL);
	size_t n = strlen(tmp);
	int rc = 0;

	if (!real)
		return corral_err_set(err, errno, "cannot resolve '%s'", path);
	if (!strncmp(real, tmp, n) && real[n] == '/') {
		if (corral_buf_addf(&to, "%s%s", st->unit_tmp, real + n) < 0 ||
		    corral_strv_add(&st->binds, real) < 0 ||
		    corral_strv_add(&st->binds, to.data) < 0 ||
		    corral_strv_add(&st->marks, to.data) < 0)
			rc = corral_err_set(err, ENOMEM, "cannot start");
	}
	free(real);
	corral_buf_release(&to);
	return rc;
}

static int
tmp_binds(struct corral_run *r, struct corral_err *err)
{
	struct corral_run_state *st = r->st;
	char *tmp = realpath("/tmp", NULL);
	int rc = -1;

	/* afresh each attempt: a whole-tree attempt has a clone of its own */
	corral_strv_release(&st->binds);
	corral_strv_release(&st->marks);
	if (!tmp)
		return corral_err_set(err, errno, "cannot resolve '/tmp'");
	if (tmp_bind(r, tmp, r->clone, err) == 0 &&
	    tmp_bind(r, tmp, st->noteroot, err) == 0) {
		if (corral_strv_add(&st->binds, st->unit_tmp) < 0 ||
		    corral_strv_add(&st->binds, "/tmp") < 0)
			corral_err_set(err, ENOMEM, "cannot start");
		else
			rc = 0;
	}
	free(tmp);
	return rc;
}

int
corral_run_tmp_make(struct corral_run *r, struct corral_err *err)
{
	const char *t = r->st->unit_tmp;
	size_t i;

	if (!t)
		return 0;
	/* what an earlier attempt left when its removal failed goes first */
	if (mkdir(t, 0700) < 0) {
		if (errno != EEXIST)
			goto fail;
		if (corral_remove_tree(t, err) < 0)
			return -1;
		if (mkdir(t, 0700) < 0)
			goto fail;
	}
	if (r->tmp_private && tmp_binds(r, err) < 0)
		return -1;
	for (i = 0; i < r->st->marks.n; i++)
		if (corral_mkdir_p(r->st->marks.v[i], 0700, err) < 0)
			return -1;
	return 0;
fail:
	return corral_err_set(err, errno, "cannot make the unit's TMPDIR '%s'",
	    t);
}

/*
 * Whether the kernel gives a unit a private /tmp here, tried once before
 * any unit runs: a shell that does nothing, started as a unit is.  A
 * refusal stops the agent, naming the knob: a unit that writes
 * /tmp/NAME must never meet another in the host's /tmp unawares.
 */
static int
tmp_probe(struct corral_run *r, struct corral_err *err)
{
	struct corral_proc p = CORRAL_PROC_INIT;
	char *argv[] = { "sh", "-c", ":", NULL };
	struct corral_err rerr;
	int e, wstatus = 0;
	pid_t pid;

	if (corral_run_tmp_make(r, err) < 0)
		return -1;
	p.path = "/bin/sh";
	p.argv = argv;
	p.dir = "/";
	p.binds = r->st->binds.v;
	if (!(e = corral_proc_start(&p, &pid)) &&
	    corral_proc_reap(pid, &wstatus) < 0)
		e = errno;
	(void)corral_remove_tree(r->st->unit_tmp, &rerr);
	if (e || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus))
		return corral_err_set(err, 0, "CORRAL_TMP = private asked for, "
		    "but the kernel refuses a unit a private /tmp here (%s; a "
		    "mount namespace needs CAP_SYS_ADMIN): CORRAL_TMP = dir "
		    "gives each unit a TMPDIR of its own", e ? strerror(e) :
		    "the probe failed");
	return 0;
}

/*
 * The caller's environment without PWD, any CORRAL_* variable of ours or
 * anything of corral's (env.c), then ours; CORRAL_UNIT, CORRAL_NOTE and CORRAL_ATTEMPT come last and change
 * with each attempt.
 */
static int
make_env(struct corral_run *r, struct corral_err *err)
{
	struct corral_strv ours = CORRAL_STRV_INIT;
	const char *tmp;
	int rc = -1;

	/*
	 * PWD as a shell would set it, for a unit started without one
	 * (direct.c); one with a shell sets it again to the same.
	 */
	if (!r->tmp_shared && !r->sandbox && make_unit_tmp(r, err) < 0)
		return -1;
	/* in a sandbox or a private mount, the unit's own /tmp is /tmp */
	tmp = r->st->unit_tmp;
	if (r->sandbox || (tmp && r->tmp_private))
		tmp = "/tmp";
	if ((r->clone[0] != '/' || add_var(&ours, "PWD", r->clone) == 0) &&
	    (!tmp || (add_var(&ours, "TMPDIR", tmp) == 0 &&
	    add_var(&ours, "TMP", tmp) == 0 &&
	    add_var(&ours, "TEMP", tmp) == 0)) &&
	    add_var(&ours, "CORRAL_AGENT", r->agent) == 0 &&
	    add_var(&ours, "CORRAL_RUN", r->run) == 0 &&
	    add_var(&ours, "CORRAL_WORKDIR", r->clone) == 0 &&
	    add_var(&ours, "CORRAL_UNIT", "") == 0 &&
	    add_var(&ours, "CORRAL_NOTE", "") == 0 &&
	    add_var(&ours, "CORRAL_ATTEMPT", "1") == 0)
		rc = corral_env_unit(&r->st->env, environ, r->keep_env,
		    (const char *const *)ours.v);
	corral_strv_release(&ours);
	if (rc < 0)
		return corral_err_set(err, ENOMEM, "cannot start");
	r->st->envunit = r->st->env.n - 3;
	return 0;
}

/* One setrlimit(2) for a unit: value as soft limit, within the hard one. */
static void
add_limit(struct corral_run *r, int res, long long soft, long long hard)
{
	struct rlimit old;
	int k = r->st->nlimits++;

	if (getrlimit(res, &old) == 0 && old.rlim_max != RLIM_INFINITY &&
	    (rlim_t)hard > old.rlim_max)
		hard = (long long)old.rlim_max;
	r->st->limits[k].res = res;
	r->st->limits[k].soft = soft < hard ? soft : hard;
	r->st->limits[k].hard = hard;
}

static void
prepare_limits(struct corral_run *r)
{
	r->st->nlimits = 0;
	if (r->limits.cpu)
		add_limit(r, RLIMIT_CPU, r->limits.cpu, r->limits.cpu + 1);
	if (r->limits.mem)
		add_limit(r, RLIMIT_AS, r->limits.mem, r->limits.mem);
	if (r->limits.fsize)
		add_limit(r, RLIMIT_FSIZE, r->limits.fsize, r->limits.fsize);
}

/*
 * The slice's sandbox, before any unit: where it cannot work (no bwrap,
 * namespaces refused) the run stops, the output directory gone again if
 * it made it empty.
 */
static int
open_sandbox(struct corral_run *r, struct corral_err *err)
{
	if (!r->sandbox ||
	    corral_sandbox_open(r->sandbox, r->clone, r->st->noteroot, err) == 0)
		return 0;
	if (r->st->made_outdir)
		(void)rmdir(r->st->outdir);
	return -1;
}

/*
 * The parts missing from src, as the checkout would find them (a path
 * that does not exist, or runs through a file), without making a clone.
 */
static int
list_missing(struct corral_run *r, struct corral_strv *missing,
    struct corral_err *err)
{
	char *real, *rel, *from;
	struct stat st;
	size_t i;
	int rc = 0;

	if (!missing)
		return 0;
	if (!(real = realpath(r->src, NULL)))
		return corral_err_set(err, errno, "cannot open '%s'", r->src);
	for (i = 0; rc == 0 && i < r->st->cloned.n; i++) {
		rel = corral_path_normalise(r->st->cloned.v[i]);
		from = rel ? corral_path_join(real, rel) : NULL;
		if (!from)
			rc = corral_err_set(err, ENOMEM, "cannot start");
		else if (lstat(from, &st) < 0 && (errno == ENOENT ||
		    errno == ENOTDIR) &&
		    corral_strv_add(missing, r->st->cloned.v[i]) < 0)
			rc = corral_err_set(err, ENOMEM, "cannot start");
		free(rel);
		free(from);
	}
	free(real);
	return rc;
}

/* The clone, the watchdog that removes it, the units' environment. */
static int
ready_clone(struct corral_run *r, struct corral_strv *missing,
    struct corral_err *err)
{
	if (make_clone(r, missing, err) < 0 ||
	    corral_run_watchdog_start(r, err) < 0 || make_env(r, err) < 0 ||
	    open_sandbox(r, err) < 0 ||
	    (r->tmp_private && r->st->unit_tmp && tmp_probe(r, err) < 0))
		return -1;
	/* every key stored from now on reads the tree as it was cloned */
	if (r->cache)
		corral_cache_ctx_forget(&r->cache->key);
	return 0;
}

int
corral_run_need_clone(struct corral_run *r, struct corral_err *err)
{
	return r->clone ? 0 : ready_clone(r, NULL, err);
}

int
corral_run_start(struct corral_run *r, struct corral_strv *missing,
    struct corral_err *err)
{
	if (!r->st && state_new(r, err) < 0)
		return -1;
	corral_cached_begin(r);
	prepare_limits(r);
	corral_run_guard_open(r);
	if (prepare_logdir(r, err) < 0 || hide_ours(r, err) < 0 ||
	    corral_run_become_reaper(r, err) < 0 || sort_parts(r, err) < 0)
		return -1;
	/*
	 * With a result cache, the clone waits for the first unit that
	 * runs: a slice whose every unit hits makes none (its keys read
	 * src, as they always did, not the clone).  A kept clone is made.
	 */
	if (r->cache && !r->keep ? list_missing(r, missing, err) < 0 :
	    ready_clone(r, missing, err) < 0)
		return -1;
	r->st->rl.dir = r->st->logsdir;
	r->st->rl.log = r->st->log;
	r->st->rl.part = r->st->part;
	r->st->rl.agent = r->agent;
	r->st->rl.defer_sync = r->answer_only;
	r->st->rl.no_checkpoint = r->answer_only;
	return corral_runlog_open(&r->st->rl, err);
}

/* ------------------------------------------------------------------ */
/* Finishing                                                            */

int
corral_run_commit(struct corral_run *r, struct corral_err *err)
{
	char name[32];

	if (corral_run_caught())
		return corral_err_set(err, 0, "stopped by %s",
		    corral_signal_name(corral_run_caught(), name));
	if (corral_runlog_commit(&r->st->rl, err) < 0)
		return -1;
	corral_live_close(&r->st->live, 1);
	return 0;
}

int
corral_run_release(struct corral_run *r, struct corral_err *err)
{
	struct corral_run_state *st = r->st;
	int rc = 0;

	if (st)
		corral_runlog_release(&st->rl);
	if (r->clone && !r->keep && corral_clone_remove(r->clone, err) < 0)
		rc = -1;
	if (st && st->unit_tmp_root && corral_remove_tree(st->unit_tmp_root,
	    rc < 0 ? &(struct corral_err){ 0 } : err) < 0)
		rc = -1;
	if (st) {
		corral_run_watchdog_stop(r);
		if (st->guardfd >= 0)
			close(st->guardfd);
		corral_live_close(&st->live, 0);
		if (st->emptyfd >= 0)
			close(st->emptyfd);
		free(st->iobuf);
		free(st->direct_word);
		free(st->direct_path);
		free(st->outdir);
		free(st->noteroot);
		free(st->logsdir);
		free(st->log);
		free(st->part);
		free(st->unit_tmp);
		free(st->unit_tmp_root);
		corral_strv_release(&st->binds);
		corral_strv_release(&st->marks);
		corral_strv_release(&st->env);
		corral_strv_release(&st->cloned);
		corral_reaper_release(&st->reaper);
		corral_buf_release(&st->line);
		free(st);
	}
	free(r->clone);
	corral_strv_release(&r->refused);
	corral_strv_release(&r->refusal);
	corral_run_init(r);
	return rc;
}
