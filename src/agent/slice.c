/* See LICENSE file for copyright and license details. */
/*
 * slice.c is the slice's loop: after the units a checkpoint vouches for,
 * each unit runs once and again up to its retries, each attempt with its
 * own N.out and CORRAL_NOTE, and its record goes to the log as soon as
 * it is final; units the slice's time or a refused part keeps from
 * running get a record too.  How an attempt ended becomes its status
 * and its note here.
 */
#define _GNU_SOURCE	/* pipe2 */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "record/record.h"
#include "agent/agent.h"
#include "agent/agent-private.h"
#include "agent/run-private.h"

/* The longest note a unit may leave in CORRAL_NOTE, in bytes. */
#define NOTE_MAX	4096


/* ------------------------------------------------------------------ */
/* Outputs of an earlier run                                            */

/*
 * "N.out", "N.note", "N.xml", "N.A.out"... with N > keep: what an earlier
 * run left, less what the units resumed from it point to.
 */
static int
is_output(const char *name, size_t keep)
{
	size_t n = strspn(name, "0123456789"), a;

	if (n > 0 && strtoull(name, NULL, 10) <= keep)
		return 0;
	if (n > 0 && name[n] == '.' &&
	    (a = strspn(name + n + 1, "0123456789")) > 0)
		n += 1 + a;
	return n > 0 && (!strcmp(name + n, ".out") ||
	    !strcmp(name + n, ".note") || !strcmp(name + n, ".xml"));
}

static int
clear_outputs(const char *dir, size_t keep, struct corral_err *err)
{
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (!(d = opendir(dir)))
		return errno == ENOENT ? 0 : corral_err_set(err, errno,
		    "cannot open '%s'", dir);
	while (rc == 0 && (de = readdir(d)))
		if (is_output(de->d_name, keep) &&
		    unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT)
			rc = corral_err_set(err, errno, "cannot remove '%s/%s'",
			    dir, de->d_name);
	closedir(d);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Describing how a unit ended                                          */

static int
is_blank(int c)
{
	return c != '\0' && isspace((unsigned char)c);
}

/*
 * The first line the unit wrote to its CORRAL_NOTE file, into b (reset
 * first).  1 if there is one, 0 if not (no file, not a regular file, or
 * a blank first line), -1 on ENOMEM.  O_NONBLOCK so a FIFO cannot hang
 * the agent; O_NOFOLLOW so a symlink cannot make it read other files.
 */
static int
read_note(const char *path, struct corral_buf *b)
{
	char text[NOTE_MAX + 1];
	struct stat st;
	size_t len = 0, end;
	ssize_t n = 1;
	int fd;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		while (len < sizeof(text) && !memchr(text, '\n', len) &&
		    (n = read(fd, text + len, sizeof(text) - len)) > 0)
			len += (size_t)n;
	close(fd);
	for (end = 0; end < len && text[end] != '\n'; end++)
		;
	while (end > 0 && is_blank(text[end - 1]))
		end--;
	if (end == 0)
		return 0;
	corral_buf_reset(b);
	return corral_add_excerpt(b, text, end, NOTE_MAX) < 0 ? -1 : 1;
}

/* "TIMEOUT: after 2s, ended by SIGTERM" and how the time ran out. */
static int
describe_timeout(struct corral_run *r, struct outcome *o,
    const struct waiting *w, int status)
{
	char limit[32], took[32], grace[32];
	int rc;

	o->status = "timeout";
	o->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	o->signal = corral_signal_name(w->sent, o->signame);
	corral_seconds_format(r->timeout_ms, limit);
	corral_seconds_format(r->slice_ms, took);
	if (w->why == 't')
		rc = corral_buf_addf(&o->note, "TIMEOUT: after %s", limit);
	else if (w->why == 'T')
		rc = corral_buf_addf(&o->note, "TIMEOUT: the slice's time "
		    "limit (%s) ran out", took);
	else
		rc = corral_buf_addstr(&o->note, "TIMEOUT: the run's deadline "
		    "passed");
	corral_duration_format(o->ms, took);
	if (w->why != 't')
		rc |= corral_buf_addf(&o->note, " after %s", took);
	rc |= corral_buf_addf(&o->note, ", ended by %s", o->signal);
	corral_seconds_format(r->grace_ms, grace);
	if (w->sent == SIGKILL)
		rc |= corral_buf_addf(&o->note, " (SIGTERM did not end it "
		    "within %s)", grace);
	return rc;
}

/*
 * A unit that a CPU time or file size limit stopped says so: the signal
 * ended it, or its shell reported it as 128 + the signal.
 */
static int
describe_limit(struct corral_run *r, struct outcome *o, int status)
{
	int sig = 0;

	if (WIFSIGNALED(status))
		sig = WTERMSIG(status);
	else if (WEXITSTATUS(status) > 128)
		sig = WEXITSTATUS(status) - 128;
	corral_buf_reset(&o->note);
	if (sig == SIGXCPU && r->limits.cpu)
		return corral_buf_addf(&o->note, "LIMIT: CPU time limit "
		    "(%llds) exceeded (SIGXCPU)", r->limits.cpu) < 0 ? -1 : 1;
	if (sig == SIGXFSZ && r->limits.fsize)
		return corral_buf_addf(&o->note, "LIMIT: file size limit "
		    "(%lld bytes) exceeded (SIGXFSZ)", r->limits.fsize) < 0 ?
		    -1 : 1;
	return 0;
}

/*
 * A unit that exited 0 as its TAP judges it, as prove does: 1 with o a
 * failure when the TAP says one (a "not ok", "Bail out!", fewer or more
 * tests than planned), 0 when it passes or printed no TAP, -1: ENOMEM.
 */
static int
describe_tap(struct outcome *o, const struct corral_tap *t)
{
	int rc;

	if (!corral_tap_found(t) || (!t->failed && !t->bailed &&
	    (long long)t->tests == t->plan))
		return 0;
	o->status = "fail";
	rc = corral_buf_addstr(&o->note, t->junit ? "FAIL: JUnit: " :
	    "FAIL: TAP: ");
	if (t->failed)
		rc |= corral_buf_add(&o->note, t->first_fail.data,
		    t->first_fail.len);
	else if (t->bailed)
		rc |= corral_buf_add(&o->note, t->bail.data, t->bail.len);
	else
		rc |= corral_buf_addf(&o->note, "planned %lld, ran %zu",
		    t->plan, t->tests);
	return rc < 0 ? -1 : 1;
}

/* Fill o from how the unit ended; spawn_err != 0: it never started. */
static int
describe(struct corral_run *r, struct outcome *o, int spawn_err, int status,
    const struct waiting *w, const struct capture *c)
{
	int sig, rc;

	o->ok = 0;
	o->exit_code = -1;
	o->signal = NULL;
	if (spawn_err) {
		o->status = "error";
		return corral_buf_addf(&o->note, "ERROR: cannot start: %s",
		    strerror(spawn_err));
	}
	if (w->sent)
		return describe_timeout(r, o, w, status) < 0 ? -1 :
		    corral_run_capture_detail(c, &o->note);
	if (WIFSIGNALED(status)) {
		sig = WTERMSIG(status);
		o->status = "crash";
		o->signal = corral_signal_name(sig, o->signame);
		if ((rc = describe_limit(r, o, status)) != 0)
			return rc < 0 ? -1 : 0;
		return corral_buf_addstr(&o->note, "CRASH: ") |
		    corral_proc_describe(&o->note, status, 1);
	}
	o->exit_code = WEXITSTATUS(status);
	if (o->exit_code == 0 && c->junit_bad.len) {
		/* asked for, its JUnit is missing or broken: nothing to judge */
		o->status = "error";
		return corral_buf_addf(&o->note, "ERROR: JUnit: %s",
		    c->junit_bad.data);
	}
	if (o->exit_code == 0 && !r->exit_only &&
	    (rc = describe_tap(o, &c->tap)) != 0)
		return rc < 0 ? -1 : 0;
	if (o->exit_code == 0) {
		o->ok = 1;
		o->status = "pass";
		return corral_buf_addstr(&o->note, "PASS: exit 0");
	}
	if (r->skip && r->skip[o->exit_code]) {
		/* automake's 77: the unit says it cannot run here. */
		o->ok = 1;
		o->status = "skip";
		return corral_buf_addf(&o->note, "SKIP: exit %d",
		    o->exit_code) | corral_run_capture_detail(c, &o->note);
	}
	if (r->hard && r->hard[o->exit_code]) {
		/* automake's 99: the unit could not even tell */
		o->status = "error";
		return corral_buf_addf(&o->note, "ERROR: exit %d",
		    o->exit_code) | corral_run_capture_detail(c, &o->note);
	}
	o->status = "fail";
	if ((rc = describe_limit(r, o, status)) != 0)
		return rc < 0 ? -1 : corral_run_capture_detail(c, &o->note);
	if ((sig = corral_proc_shell_crash(o->exit_code))) {
		o->status = "crash";
		o->signal = corral_signal_name(sig, o->signame);
		return corral_buf_addstr(&o->note, "CRASH: ") |
		    corral_proc_describe(&o->note, status, 1);
	}
	if ((corral_buf_addstr(&o->note, "FAIL: ") |
	    corral_proc_describe(&o->note, status, 1)) < 0)
		return -1;
	return corral_run_capture_detail(c, &o->note);
}

/* ------------------------------------------------------------------ */
/* Records                                                              */

/* final: the unit's last record, after which the checkpoint is sealed. */
int
corral_run_write_record(struct corral_run *r, const struct corral_record *rec,
    int final, struct corral_err *err)
{
	corral_buf_reset(&r->st->line);
	if (corral_record_format(&r->st->line, rec) < 0)
		return corral_err_set(err, ENOMEM, "cannot write '%s'",
		    r->st->part);
	return corral_runlog_write(&r->st->rl, &r->st->line, final, err);
}

/* The attempts of a unit before its last, for its last record. */
struct tries {
	struct corral_record_try *v;
	char (*at)[CORRAL_TIME_ISO_SIZE];
	size_t n;
};

/* Remember the attempt that ended at at as one before the last. */
static int
tries_add(struct tries *t, const char *at, const struct outcome *o)
{
	struct corral_record_try *v;
	char (*a)[CORRAL_TIME_ISO_SIZE];
	size_t i;

	if (!(v = realloc(t->v, (t->n + 1) * sizeof(*v))))
		return -1;
	t->v = v;
	if (!(a = realloc(t->at, (t->n + 1) * sizeof(*a))))
		return -1;
	t->at = a;
	memcpy(t->at[t->n], at, CORRAL_TIME_ISO_SIZE);
	t->v[t->n].duration_ms = o->ms;
	t->v[t->n].status = o->status;	/* a string literal */
	t->v[t->n].exit_code = o->exit_code;
	t->n++;
	for (i = 0; i < t->n; i++)	/* at may have moved */
		t->v[i].at = t->at[i];
	return 0;
}

/*
 * The record of an attempt; a final one tells of the attempts before it
 * (t), and the agent's first final one of its checkout (the merge keeps
 * only the final records).
 */
static int
append_record(struct corral_run *r, const char *unit, int attempt,
    const struct outcome *o, int final, struct tries *t,
    struct corral_err *err)
{
	struct corral_record rec;
	char at[CORRAL_TIME_ISO_SIZE];

	corral_time_iso(at);
	if (!final && tries_add(t, at, o) < 0)
		return corral_err_set(err, ENOMEM, "cannot run a unit");
	rec.tries = final ? t->v : NULL;
	rec.ntries = final ? t->n : 0;
	rec.checkout_at = final && r->st->checkout_at[0] ?
	    r->st->checkout_at : NULL;
	rec.checkout_ms = r->st->checkout_ms;
	rec.agent_id = r->agent;
	rec.unit = unit;
	rec.ok = o->ok;
	rec.note = o->note.data;
	rec.at = at;
	rec.status = o->status;
	rec.exit_code = o->exit_code;
	rec.signal = o->signal;
	rec.duration_ms = o->ms;
	rec.attempt = attempt;
	rec.run = r->run;
	rec.output = o->out.data;
	rec.inputs = r->inputs;
	rec.stray = o->strays;
	rec.tap = &o->tap;
	rec.reads = o->has_reads ? &o->reads : NULL;
	rec.host = r->host;
	rec.cached = NULL;
	if (corral_run_write_record(r, &rec, final, err) < 0)
		return -1;
	if (final)
		r->st->checkout_at[0] = '\0';
	return 0;
}

/*
 * The record of a unit that never ran: refused (why says why; status
 * "error", attempt 1), else left unrun by the slice's or the run's time.
 */
static int
append_unrun(struct corral_run *r, const char *unit, const char *why,
    struct corral_err *err)
{
	struct corral_buf note = CORRAL_BUF_INIT;
	struct corral_record rec;
	char at[CORRAL_TIME_ISO_SIZE], limit[32];
	int rc;

	corral_seconds_format(r->slice_ms, limit);
	if (why)
		rc = corral_buf_addf(&note, "ERROR: not checked out: %s", why);
	else if (r->st->halted)
		rc = corral_buf_addf(&note, "NOT-RUN: the run was halted once "
		    "%zu unit%s had failed", r->halt, r->halt == 1 ? "" : "s");
	else if (r->st->slice_why == 'T')
		rc = corral_buf_addf(&note, "NOT-RUN: the slice's time limit "
		    "(%s) ran out", limit);
	else
		rc = corral_buf_addstr(&note, "NOT-RUN: the run's deadline "
		    "passed");
	if (rc < 0)
		return corral_err_set(err, ENOMEM, "cannot write '%s'",
		    r->st->part);
	corral_time_iso(at);
	memset(&rec, 0, sizeof(rec));
	rec.agent_id = r->agent;
	rec.unit = unit;
	rec.note = note.data;
	rec.at = at;
	rec.status = why ? "error" : "not-run";
	rec.exit_code = -1;
	rec.attempt = why ? 1 : 0;
	rec.run = r->run;
	rec.inputs = r->inputs;
	rec.host = r->host;
	rc = corral_run_write_record(r, &rec, 1, err);
	corral_buf_release(&note);
	r->failed++;
	return rc;
}

/* ------------------------------------------------------------------ */
/* Attempts                                                             */

/*
 * Whether the slice's (or the run's) time is up, or the run halted: r->halt
 * units of it have failed (the agents' shared ticks say so), after which
 * no unit starts.
 */
static int
time_up(struct corral_run *r)
{
	if (!r->st->halted && r->halt &&
	    corral_live_failures(&r->st->live) >= r->halt)
		r->st->halted = 1;
	return r->st->halted || (r->st->slice_end &&
	    corral_time_ms() >= r->st->slice_end);
}

/* When this attempt must end, and why; 0 when it need not. */
static void
set_deadline(const struct corral_run *r, struct waiting *w, long long t0)
{
	w->deadline = r->timeout_ms ? t0 + r->timeout_ms : 0;
	w->why = 't';
	if (r->st->slice_end &&
	    (!w->deadline || r->st->slice_end < w->deadline)) {
		w->deadline = r->st->slice_end;
		w->why = r->st->slice_why;
	}
}

/* Run the attempt with its output on capture c; say how it ended in o. */
static int
execute(struct corral_run *r, struct capture *c, const char *notepath,
    struct outcome *o, struct corral_err *err)
{
	struct corral_buf own = CORRAL_BUF_INIT;
	struct waiting w;
	long long t0 = corral_time_ms();
	int e, p[2], q[2], status = 0, rc = 0;

	memset(&w, 0, sizeof(w));
	set_deadline(r, &w, t0);
	if (pipe2(p, O_CLOEXEC) < 0)
		return corral_err_set(err, errno, "cannot run a unit");
	if (pipe2(q, O_CLOEXEC) < 0) {
		rc = corral_err_set(err, errno, "cannot run a unit");
		close(p[0]);
		close(p[1]);
		return rc;
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	fcntl(q[0], F_SETFL, O_NONBLOCK);
	w.pipefd[0] = p[0];
	w.pipefd[1] = q[0];
	e = corral_run_spawn_unit(r, p[1], q[1], &w.pid);
	close(p[1]);
	close(q[1]);
	if (e) {
		close(p[0]);
		close(q[0]);
	} else if (corral_run_wait_unit(r, &w, c, &status) < 0) {
		rc = corral_err_set(err, errno, "cannot wait for a unit");
		if (w.pipefd[0] >= 0)
			close(w.pipefd[0]);
		if (w.pipefd[1] >= 0)
			close(w.pipefd[1]);
		return rc;
	}
	corral_run_capture_finish(c);
	o->ms = corral_time_ms() - t0;
	if (c->junit && !corral_run_caught() &&
	    corral_run_capture_junit(c, r->clone, c->junit +
	    strlen(r->clone) + 1) < 0)
		return corral_err_set(err, ENOMEM, "cannot run a unit");
	if (r->sandbox)
		corral_sandbox_note_done(notepath);
	if (corral_run_caught())
		return 0;
	o->why = w.why;
	o->strays = w.strays;
	if (describe(r, o, e, status, &w, c) < 0 ||
	    (rc = read_note(notepath, &own)) < 0)
		rc = corral_err_set(err, ENOMEM, "cannot run a unit");
	else if (rc == 1 && !w.sent) {
		corral_buf_release(&o->note);
		o->note = own;
		return 0;
	}
	corral_buf_release(&own);
	return rc < 0 ? -1 : 0;
}

/* N.out and N.note for the first attempt, N.A.out and N.A.note after. */
static int
attempt_paths(struct corral_run *r, size_t n, int attempt,
    struct corral_buf *out, struct corral_buf *note)
{
	char suffix[24] = "";

	if (attempt > 1)
		snprintf(suffix, sizeof(suffix), ".%d", attempt);
	return corral_buf_addf(out, "%s/%zu%s.out", r->st->outdir, n, suffix) |
	    corral_buf_addf(note, "%s/%zu%s.note", r->st->noteroot, n, suffix);
}

/*
 * The N.out of an attempt that printed nothing: a hard link to the first
 * such file of the slice while that is still empty, since a link makes
 * no inode and a creation costs as much as a small unit (ext4 without a
 * journal scans past every inode freed in the last minutes); else a new
 * empty file, which the later ones link to.  Linked through the agent's
 * own descriptor, it is that file, whatever its name has become.  0, or
 * the error number of making it.
 */
static int
empty_output(struct corral_run *r, const char *path)
{
	struct corral_run_state *st = r->st;
	char self[48];
	struct stat sb;
	int fd;

	if (st->emptyfd >= 0 && fstat(st->emptyfd, &sb) == 0 &&
	    S_ISREG(sb.st_mode) && sb.st_size == 0 && sb.st_nlink > 0) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", st->emptyfd);
		if (linkat(AT_FDCWD, self, AT_FDCWD, path,
		    AT_SYMLINK_FOLLOW) == 0)
			return 0;
	}
	fd = corral_open_state(path, O_WRONLY | O_CREAT | O_TRUNC, 0666,
	    NULL);
	if (fd < 0)
		return errno ? errno : EINVAL;
	if (st->emptyfd >= 0)
		close(st->emptyfd);
	st->emptyfd = fd;
	return 0;
}

/* err NULL: a failure to remove it is not the attempt's error. */
static int
unit_tmp_remove(struct corral_run *r, struct corral_err *err)
{
	struct corral_err ignored;

	if (!r->st->unit_tmp)
		return 0;
	return corral_remove_tree(r->st->unit_tmp, err ? err : &ignored) <
	    0 && err ? -1 : 0;
}

/*
 * CORRAL_UNIT_JUNIT with $CORRAL_UNIT (or ${CORRAL_UNIT}) replaced by the
 * unit, in b.  0, or -1 (ENOMEM).
 */
static int
junit_rel(const char *tmpl, const char *unit, struct corral_buf *b)
{
	static const char *const var[] = { "${CORRAL_UNIT}", "$CORRAL_UNIT" };
	size_t i, k;
	int rc = 0;

	while (*tmpl && rc == 0) {
		for (i = 0; i < 2; i++)
			if (!strncmp(tmpl, var[i], (k = strlen(var[i]))))
				break;
		if (i < 2) {
			rc = corral_buf_addstr(b, unit);
			tmpl += k;
		} else
			rc = corral_buf_addch(b, *tmpl++);
	}
	return rc;
}

/* rel of the clone removed, through no link the unit planted. */
static void
junit_unlink(const char *clone, const char *rel)
{
	const char *last;
	int dfd, fd;

	if ((dfd = open(clone, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	if ((fd = corral_dir_beneath(dfd, rel, &last)) >= 0) {
		(void)unlinkat(fd, last, 0);
		if (fd != dfd)
			close(fd);
	}
	close(dfd);
}

/*
 * Where the unit writes its own JUnit (r->unit_junit, in its clone), and
 * where the agent keeps a copy (N.xml beside N.out), in c; what an earlier
 * attempt left there removed.  A path that leaves the clone is the
 * attempt's JUnit error.  0, or -1 with err set (ENOMEM).
 */
static int
unit_junit(struct corral_run *r, const char *unit, struct capture *c,
    struct corral_err *err)
{
	struct corral_buf rel = CORRAL_BUF_INIT, b = CORRAL_BUF_INIT;
	struct corral_err why;
	size_t n = strlen(c->path);
	int rc = -1;

	if (!r->unit_junit || !*r->unit_junit)
		return 0;
	if (junit_rel(r->unit_junit, unit, &rel) < 0)
		goto out;
	if (corral_path_lexical("CORRAL_UNIT_JUNIT", rel.data ? rel.data : "",
	    0, &why) < 0) {
		rc = corral_buf_addstr(&c->junit_bad, why.msg);
		goto out;
	}
	if (corral_buf_addf(&b, "%s/%s", r->clone, rel.data) < 0 ||
	    !(c->junit = strdup(b.data)))
		goto out;
	corral_buf_reset(&b);
	if (corral_buf_addf(&b, "%.*s.xml", (int)(n - 4), c->path) < 0 ||
	    !(c->junit_copy = strdup(b.data)))
		goto out;
	junit_unlink(r->clone, rel.data);
	(void)unlink(c->junit_copy);
	rc = 0;
out:
	corral_buf_release(&rel);
	corral_buf_release(&b);
	return rc < 0 ? corral_err_set(err, ENOMEM, "cannot run a unit") : 0;
}

/* Attempt number attempt of unit n (from 1) of the slice. */
int
corral_run_attempt(struct corral_run *r, const char *unit, size_t n, int attempt,
    struct outcome *o, struct corral_err *err)
{
	struct corral_buf note = CORRAL_BUF_INIT;
	struct capture c;
	int rc = -1;

	corral_run_capture_init(&c);
	c.notes.pattern = r->note_pattern;
	c.max = r->output_max;
	c.head = c.max / 2;
	c.tail = c.max - c.head;
	c.buf = r->st->iobuf;
	if (attempt_paths(r, n, attempt, &o->out, &note) < 0 ||
	    corral_run_unit_env(r, unit, note.data, attempt) < 0) {
		corral_err_set(err, ENOMEM, "cannot run a unit");
		goto out;
	}
	c.path = o->out.data;
	if (unit_junit(r, unit, &c, err) < 0 ||
	    corral_run_tmp_make(r, err) < 0)
		goto out;
	rc = execute(r, &c, note.data, o, err);
	if (unit_tmp_remove(r, rc < 0 ? NULL : err) < 0 || rc < 0) {
		rc = -1;
		goto out;
	}
	rc = -1;
	o->tap = c.tap;
	corral_tap_init(&c.tap, 0);
	if (!c.err && c.fd < 0 && (c.err = empty_output(r, c.path)))
		c.create_err = 1;
	if (c.err) {
		corral_err_set(err, c.err, c.create_err ? "cannot create '%s'" :
		    "cannot write '%s'", o->out.data);
		goto out;
	}
	rc = 0;
out:
	if (c.fd >= 0)
		close(c.fd);
	corral_run_capture_release(&c);
	corral_buf_release(&note);
	return rc;
}

/* Whether a failed attempt may be tried again. */
static int
retryable(struct corral_run *r, const struct outcome *o, int attempt)
{
	if (o->ok || attempt > r->retries || time_up(r))
		return 0;
	if (!strcmp(o->status, "timeout") && o->why != 't')
		return 0;
	return !(r->no_retry && o->exit_code >= 0 && o->exit_code < 256 &&
	    r->no_retry[o->exit_code]);
}

/* A pass after a failure: flaky, with what the first failure said. */
static int
make_flaky(struct outcome *o, const struct corral_buf *first, int attempt)
{
	corral_buf_reset(&o->note);
	o->status = "flaky";
	return corral_buf_addf(&o->note, "FLAKY: passed on attempt %d; "
	    "attempt 1: %s", attempt, first->data ? first->data : "");
}

/* What the agent cleaned up after the attempt, at the end of its note. */
static int
add_aftermath(struct outcome *o)
{
	int rc = 0;

	if (o->strays)
		rc |= corral_buf_addf(&o->note, "; killed %ld process%s left "
		    "running", o->strays, o->strays == 1 ? "" : "es");
	if (o->renewed)
		rc |= corral_buf_addstr(&o->note, "; it removed or replaced "
		    "its clone, checked out again");
	return rc;
}

static long long
weight_of(const struct corral_run *r, size_t i)
{
	return r->expect ? (r->expect[i] > 0 ? r->expect[i] : 1) : 1;
}

/* What corral-status shows of attempt attempt of unit i (from 0). */
static void
live_start(struct corral_run *r, const char *unit, size_t i, int attempt)
{
	struct corral_buf out = CORRAL_BUF_INIT, note = CORRAL_BUF_INIT;

	corral_live_start(&r->st->live, unit, i + 1, attempt,
	    r->expect ? r->expect[i] : -1, attempt_paths(r, i + 1, attempt,
	    &out, &note) < 0 ? NULL : out.data);
	corral_buf_release(&out);
	corral_buf_release(&note);
}

/*
 * Unit number i (from 0) of the slice, with its retries; verify: the key
 * of the cached pass it verifies, or NULL.
 */
static int
run_unit(struct corral_run *r, const char *unit, size_t i,
    const char *verify, struct corral_err *err)
{
	struct corral_buf first = CORRAL_BUF_INIT;
	struct tries t = { NULL, NULL, 0 };
	struct outcome o;
	int attempt, final, rc = 0;

	if (corral_run_need_clone(r, err) < 0)
		return -1;
	for (attempt = 1; rc == 0 && !corral_run_caught(); attempt++) {
		memset(&o, 0, sizeof(o));
		live_start(r, unit, i, attempt);
		if ((rc = corral_learn_attempt(r, unit, i + 1, attempt, &o,
		    err)) < 0 ||
		    corral_run_caught() ||
		    (rc = corral_run_clone_check(r, err)) < 0)
			goto next;
		o.renewed = rc;
		rc = 0;
		final = !retryable(r, &o, attempt);
		if (o.ok && attempt > 1)
			rc = make_flaky(&o, &first, attempt);
		else if (!o.ok && attempt == 1)
			rc = corral_buf_addstr(&first, o.note.data);
		if (rc < 0) {
			corral_err_set(err, ENOMEM, "cannot run a unit");
			goto next;
		}
		if (final && (rc = corral_learn_after(r, unit, i + 1, &attempt,
		    &o, err)) < 0)
			goto next;
		if (rc == 0)
			rc = add_aftermath(&o);
		if (rc == 0 && final && verify)
			rc = corral_cached_verdict(r, verify, &o);
		if (rc < 0) {
			corral_err_set(err, ENOMEM, "cannot run a unit");
			goto next;
		}
		if ((rc = append_record(r, unit, attempt, &o, final, &t,
		    err)) < 0)
			goto next;
		r->failed += final && !o.ok;
		if (final)
			corral_cached_store(r, unit, &o);
		corral_live_end(&r->st->live, unit, o.status, o.ms, attempt, final,
		    weight_of(r, i));
		rc = final;
next:
		corral_buf_release(&o.note);
		corral_buf_release(&o.out);
		corral_tap_release(&o.tap);
		corral_strv_release(&o.reads);
		corral_strv_release(&o.opened);
	}
	corral_buf_release(&first);
	free(t.v);
	free(t.at);
	return rc < 0 ? -1 : 0;
}

/* When the slice's time is up: its own limit or the run's deadline. */
static void
set_slice_end(struct corral_run *r)
{
	long long now = corral_time_ms(), left;

	if (r->slice_ms) {
		r->st->slice_end = now + r->slice_ms;
		r->st->slice_why = 'T';
	}
	if (r->deadline_ms) {
		left = r->deadline_ms - corral_time_epoch_ms();
		left = left > 0 ? left : 0;
		if (!r->st->slice_end || now + left < r->st->slice_end) {
			r->st->slice_end = now + left;
			r->st->slice_why = 'd';
		}
		if (!r->st->slice_end)
			r->st->slice_end = 1;	/* already past, and not "none" */
	}
}

static int
open_live(struct corral_run *r, const struct corral_strv *units,
    struct corral_err *err)
{
	long long weight = 0;
	size_t i;

	for (i = 0; i < units->n; i++)
		weight += weight_of(r, i);
	r->st->live.print = r->progress;
	r->st->live.print_arg = r->progress_arg;
	r->st->live.tty = r->progress_tty;
	return corral_live_open(&r->st->live, r->statedir, r->agent, r->run,
	    units->n, weight, err);
}

/* A unit resumed from the checkpoint counts as if it had just run. */
static void
resumed_unit(void *arg, size_t i, const struct corral_json_record *last)
{
	struct corral_run *r = arg;

	r->failed += !last->ok;
	corral_live_end(&r->st->live, last->unit, last->status ? last->status :
	    last->ok ? "pass" : "fail", last->duration_ms > 0 ?
	    last->duration_ms : 0, last->attempt > 0 ? (int)last->attempt : 1,
	    1, weight_of(r, i));
}

/* The index of unit in units (it is one of them). */
static size_t
index_of(const struct corral_strv *units, const char *unit)
{
	size_t i;

	for (i = 0; i < units->n && strcmp(units->v[i], unit); i++)
		;
	return i;
}

/*
 * The hits kept to verify, after the misses: each runs as a miss would,
 * its note saying whether the cached pass held.
 */
static int
run_deferred(struct corral_run *r, const struct corral_strv *units,
    struct corral_err *err)
{
	const struct corral_strv *d;
	size_t j;
	int rc = 0;

	if (!r->cache)
		return 0;
	d = &r->cache->deferred;
	for (j = 0; rc == 0 && j < d->n && !corral_run_guard_check(r) &&
	    !corral_run_caught(); j++)
		rc = run_unit(r, d->v[j], index_of(units, d->v[j]),
		    r->cache->deferred_key.v[j], err);
	return rc;
}

int
corral_run_units(struct corral_run *r, const struct corral_strv *units,
    struct corral_err *err)
{
	const char *why;
	char name[32];
	size_t i;
	int rc = 0;

	if (!r->st->iobuf && !(r->st->iobuf = malloc(IOBUF_SIZE)))
		return corral_err_set(err, ENOMEM, "cannot start");
	if (open_live(r, units, err) < 0 ||
	    corral_runlog_resume(&r->st->rl, units, r->inputs, resumed_unit, r,
	    err) < 0 ||
	    clear_outputs(r->st->outdir, r->st->rl.resumed, err) < 0)
		return -1;
	r->resume_note = r->st->rl.note;
	set_slice_end(r);
	for (i = r->st->rl.resumed; i < units->n &&
	    !corral_run_guard_check(r) && !corral_run_caught() && rc == 0;
	    i++) {
		why = time_up(r) ? NULL : corral_run_refusal_of(r, units->v[i]);
		if (r->answer_only && (time_up(r) || why || !r->cache)) {
			r->unanswered = 1;
			break;
		}
		if (!time_up(r) && !why) {
			rc = corral_cached_lookup(r, units->v[i], i,
			    weight_of(r, i), err);
			if (r->answer_only && rc != 1) {
				r->unanswered = rc >= 0;
				rc = rc < 0 ? -1 : 0;
				break;
			}
			if (rc == 0)
				rc = run_unit(r, units->v[i], i, NULL, err);
			rc = rc < 0 ? -1 : 0;
			continue;
		}
		if ((rc = append_unrun(r, units->v[i], why, err)) == 0)
			corral_live_end(&r->st->live, units->v[i], why ? "error" :
			    "not-run", 0, why ? 1 : 0, 1, weight_of(r, i));
	}
	if (rc == 0 && !r->unanswered)
		rc = run_deferred(r, units, err);
	if (rc < 0)
		return -1;
	if (corral_run_caught()) {
		corral_live_interrupted(&r->st->live);
		return corral_err_set(err, 0, "stopped by %s",
		    corral_signal_name(corral_run_caught(), name));
	}
	return 0;
}
