/* See LICENSE file for copyright and license details. */
/*
 * run.c runs one agent's slice.  It checks out the agent's private clone,
 * runs each unit as /bin/sh -c CMD inside it (posix_spawn, never fork;
 * one process group per unit; output to a file of the unit's own, so no
 * pipe can fill up), and appends the unit's record to
 * LOGDIR/agent-ID.jsonl.part with a single write(2) as soon as it ends.
 * Only a slice that ran to its end is renamed to agent-ID.jsonl: a log
 * under the final name is always complete, and a crash loses at most the
 * unit in flight.  When a unit ends, whatever it left running in its
 * process group is killed.  A watchdog, forked once per slice into a
 * process group of its own, does the same for the running unit and
 * removes the clone if this process is killed outright (SIGKILL), which
 * no signal handler can catch.
 */
#define _GNU_SOURCE	/* posix_spawn_file_actions_addchdir_np, sigabbrev_np */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "corral.h"

/* How much of a unit's output is read to find its last line. */
#define TAIL_MAX	4096
/* The longest last line quoted in a FAIL note, in bytes. */
#define QUOTE_MAX	200
/* The longest note a unit may leave in CORRAL_NOTE, in bytes. */
#define NOTE_MAX	4096

extern char **environ;

/* What the signal handler shares with the loop. */
static volatile sig_atomic_t caught;	/* first forwarded signal */
static volatile sig_atomic_t unit_pgid;	/* the running unit's group */
static int xfsz_ignored_on_entry;

/* How one unit ended, as the record will say. */
struct outcome {
	int ok;
	const char *status;
	int exit_code;		/* -1: null */
	const char *signal;	/* NULL, or points into signame */
	char signame[32];
	long long ms;
	struct corral_buf note;
};

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
/* Signals                                                              */

/*
 * Forward the first signal to the running unit's process group and make
 * any later one a SIGKILL, for a unit that ignores the first.  A signal
 * that comes before the group exists is forwarded by the loop.
 */
static void
on_signal(int sig)
{
	int saved = errno;
	pid_t pgid = (pid_t)unit_pgid;

	if (pgid > 0)
		kill(-pgid, caught ? SIGKILL : sig);
	if (!caught)
		caught = sig;
	errno = saved;
}

int
corral_run_signals(struct corral_err *err)
{
	static const int forward[] = { SIGHUP, SIGINT, SIGTERM };
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(forward) / sizeof(forward[0]); i++)
		sigaddset(&sa.sa_mask, forward[i]);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	for (i = 0; i < sizeof(forward) / sizeof(forward[0]); i++) {
		if (sigaction(forward[i], NULL, &old) < 0)
			return corral_err_set(err, errno, "cannot set signals");
		if (old.sa_handler != SIG_IGN &&
		    sigaction(forward[i], &sa, NULL) < 0)
			return corral_err_set(err, errno, "cannot set signals");
	}
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGXFSZ, &sa, &old) < 0)
		return corral_err_set(err, errno, "cannot set signals");
	xfsz_ignored_on_entry = old.sa_handler == SIG_IGN;
	sa.sa_handler = SIG_DFL;
	if (sigaction(SIGCHLD, &sa, NULL) < 0)
		return corral_err_set(err, errno, "cannot set signals");
	return 0;
}

int
corral_run_caught(void)
{
	return caught;
}

static const char *
signal_name(int sig, char out[32])
{
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(out, 32, "SIG%s", abbrev);
	else
		snprintf(out, 32, "SIG%d", sig);
	return out;
}

/* ------------------------------------------------------------------ */
/* The watchdog                                                         */

/*
 * The watchdog's whole life: out of the agent's process group (so a
 * signal to that group spares it) and deaf to the usual stop signals,
 * it learns each unit's process group from fd.  When fd reaches EOF
 * without the agent having said it is done, the agent died: kill the
 * unit's group and remove the clone.
 */
static void
watchdog(int fd, const char *clone, int keep)
{
	int32_t msg, pgid = 0;
	int done = 0, null;
	ssize_t n;

	setpgid(0, 0);
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	if ((null = open("/dev/null", O_RDWR)) >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	for (;;) {
		n = recv(fd, &msg, sizeof(msg), MSG_WAITALL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(msg))
			break;
		if (msg < 0)
			done = 1;
		else
			pgid = msg;
	}
	if (!done && pgid > 0)
		kill(-pgid, SIGKILL);
	if (!done && !keep)
		corral_clone_remove(clone, NULL);
	_exit(0);
}

static int
watchdog_start(struct corral_run *r, struct corral_err *err)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return corral_err_set(err, errno, "cannot start the watchdog");
	if ((pid = fork()) < 0) {
		close(sv[0]);
		close(sv[1]);
		return corral_err_set(err, errno, "cannot start the watchdog");
	}
	if (pid == 0) {
		close(sv[0]);
		watchdog(sv[1], r->clone, r->keep);
	}
	close(sv[1]);
	r->watchfd = sv[0];
	r->watchdog = pid;
	return 0;
}

/* Tell the watchdog the running group (0: none; -1: the slice is done). */
static void
watchdog_tell(struct corral_run *r, int32_t msg)
{
	if (r->watchfd >= 0)
		(void)send(r->watchfd, &msg, sizeof(msg), MSG_NOSIGNAL);
}

static void
watchdog_stop(struct corral_run *r)
{
	watchdog_tell(r, -1);
	if (r->watchfd >= 0)
		close(r->watchfd);
	r->watchfd = -1;
	if (r->watchdog > 0)
		while (waitpid(r->watchdog, NULL, 0) < 0 && errno == EINTR)
			;
	r->watchdog = 0;
}

/* ------------------------------------------------------------------ */
/* Getting ready                                                        */

void
corral_run_init(struct corral_run *r)
{
	memset(r, 0, sizeof(*r));
	r->logfd = -1;
	r->watchfd = -1;
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
	r->outdir = dir.data;
	if (!(r->log = concat(r->outdir, ".jsonl")) ||
	    !(r->part = concat(r->outdir, ".jsonl.part")))
		return corral_err_set(err, ENOMEM, "cannot start");
	return 0;
}

/* "N.out" and "N.note": what an earlier run of this agent left. */
static int
is_output(const char *name)
{
	size_t n = strspn(name, "0123456789");

	return n > 0 && (!strcmp(name + n, ".out") ||
	    !strcmp(name + n, ".note"));
}

static int
clear_outputs(const char *dir, struct corral_err *err)
{
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (!(d = opendir(dir)))
		return corral_err_set(err, errno, "cannot open '%s'", dir);
	while (rc == 0 && (de = readdir(d)))
		if (is_output(de->d_name) &&
		    unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT)
			rc = corral_err_set(err, errno, "cannot remove '%s/%s'",
			    dir, de->d_name);
	closedir(d);
	return rc;
}

static int
unlink_old(const char *path, struct corral_err *err)
{
	if (unlink(path) < 0 && errno != ENOENT)
		return corral_err_set(err, errno, "cannot remove '%s'", path);
	return 0;
}

/* Create the output directory and clear what an earlier run left. */
static int
prepare_logdir(struct corral_run *r, struct corral_err *err)
{
	if (make_paths(r, err) < 0 ||
	    corral_mkdir_p(r->outdir, 0777, err) < 0 ||
	    unlink_old(r->log, err) < 0 || unlink_old(r->part, err) < 0 ||
	    clear_outputs(r->outdir, err) < 0)
		return -1;
	if (!(r->noteroot = realpath(r->outdir, NULL)))
		return corral_err_set(err, errno, "cannot open '%s'",
		    r->outdir);
	return 0;
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
	char *root;
	int rc;

	if (corral_mkdir_p(r->workroot, 0777, err) < 0)
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
	if (corral_checkout(r->src, r->parts, r->exclude, t.data, missing,
	    err) < 0) {
		rmdir(t.data);
		corral_buf_release(&t);
		return -1;
	}
	r->clone = t.data;
	return 0;
}

static int
is_run_var(const char *entry)
{
	static const char *const names[] = { "CORRAL_AGENT=",
	    "CORRAL_ATTEMPT=", "CORRAL_NOTE=", "CORRAL_RUN=",
	    "CORRAL_UNIT=", "CORRAL_WORKDIR=" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(entry, names[i], strlen(names[i])))
			return 1;
	return 0;
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

/*
 * The caller's environment without any CORRAL_* variable of ours, then
 * ours; CORRAL_UNIT and CORRAL_NOTE come last and change with each unit.
 */
static int
make_env(struct corral_run *r, struct corral_err *err)
{
	char **e;

	for (e = environ; *e; e++)
		if (!is_run_var(*e) && corral_strv_add(&r->env, *e) < 0)
			goto nomem;
	if (add_var(&r->env, "CORRAL_AGENT", r->agent) < 0 ||
	    add_var(&r->env, "CORRAL_ATTEMPT", "1") < 0 ||
	    add_var(&r->env, "CORRAL_RUN", r->run) < 0 ||
	    add_var(&r->env, "CORRAL_WORKDIR", r->clone) < 0)
		goto nomem;
	r->envunit = r->env.n;
	if (add_var(&r->env, "CORRAL_UNIT", "") < 0 ||
	    add_var(&r->env, "CORRAL_NOTE", "") < 0)
		goto nomem;
	return 0;
nomem:
	return corral_err_set(err, ENOMEM, "cannot start");
}

int
corral_run_start(struct corral_run *r, struct corral_strv *missing,
    struct corral_err *err)
{
	if (prepare_logdir(r, err) < 0 || make_clone(r, missing, err) < 0 ||
	    watchdog_start(r, err) < 0 || make_env(r, err) < 0)
		return -1;
	r->logfd = open(r->part, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND |
	    O_CLOEXEC, 0666);
	if (r->logfd < 0)
		return corral_err_set(err, errno, "cannot open '%s'", r->part);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Running a unit                                                       */

static int
spawn_setup(posix_spawn_file_actions_t *fa, posix_spawnattr_t *at,
    int outfd, const char *dir)
{
	short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK;
	sigset_t none, dfl;
	int e;

	sigemptyset(&none);
	sigemptyset(&dfl);
	if (!xfsz_ignored_on_entry) {
		sigaddset(&dfl, SIGXFSZ);
		flags |= POSIX_SPAWN_SETSIGDEF;
	}
	if ((e = posix_spawn_file_actions_addopen(fa, 0, "/dev/null",
	    O_RDONLY, 0)) || (e = posix_spawn_file_actions_adddup2(fa, outfd,
	    1)) || (e = posix_spawn_file_actions_adddup2(fa, outfd, 2)) ||
	    (e = posix_spawn_file_actions_addchdir_np(fa, dir)) ||
	    (e = posix_spawnattr_setpgroup(at, 0)) ||
	    (e = posix_spawnattr_setsigmask(at, &none)) ||
	    (e = posix_spawnattr_setsigdefault(at, &dfl)))
		return e;
	return posix_spawnattr_setflags(at, flags);
}

/*
 * Start /bin/sh -c CMD for one unit.  0 with *pid set, or the error
 * number of what kept it from starting (as posix_spawn returns it).
 */
static int
spawn_unit(struct corral_run *r, int outfd, pid_t *pid)
{
	char *argv[] = { "sh", "-c", NULL, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int e;

	argv[2] = (char *)r->cmd;
	if ((e = posix_spawn_file_actions_init(&fa)))
		return e;
	if ((e = posix_spawnattr_init(&at))) {
		posix_spawn_file_actions_destroy(&fa);
		return e;
	}
	if (!(e = spawn_setup(&fa, &at, outfd, r->clone)))
		e = posix_spawn(pid, "/bin/sh", &fa, &at, argv, r->env.v);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return e;
}

/*
 * Wait for the unit, then kill what is left of its process group before
 * reaping it: until then the group's id cannot be reused, so the kill
 * reaches only the unit's own leftovers.
 */
static int
wait_unit(struct corral_run *r, pid_t pid, int *status)
{
	siginfo_t si;

	unit_pgid = pid;
	watchdog_tell(r, pid);
	if (caught)
		kill(-pid, caught);
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0)
		if (errno != EINTR)
			return -1;
	unit_pgid = 0;
	kill(-pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -1;
	watchdog_tell(r, 0);
	return 0;
}

/*
 * Append text[0..n) to b, cut to at most max bytes on a UTF-8 character
 * boundary (with "..." when cut), NUL bytes shown as '?'.
 */
static int
add_quote(struct corral_buf *b, const char *text, size_t n, size_t max)
{
	size_t i, cut = n;
	int rc = 0;

	if (n > max) {
		cut = max;
		while (cut > 0 && ((unsigned char)text[cut] & 0xc0) == 0x80)
			cut--;
	}
	for (i = 0; i < cut && rc == 0; i++)
		rc = corral_buf_addch(b, text[i] ? text[i] : '?');
	if (rc == 0 && cut < n)
		rc = corral_buf_addstr(b, "...");
	return rc;
}

static int
is_blank(int c)
{
	return c != '\0' && isspace((unsigned char)c);
}

/*
 * Append ": LAST" to b, LAST being the last non-blank line of the output
 * file open at fd, trimmed.  Only the last TAIL_MAX bytes are read,
 * however large the output.
 */
static int
add_last_line(struct corral_buf *b, int fd)
{
	char tail[TAIL_MAX];
	struct stat st;
	size_t start, end;
	off_t off = 0;
	ssize_t n;

	if (fstat(fd, &st) < 0 || st.st_size == 0)
		return 0;
	if (st.st_size > (off_t)sizeof(tail))
		off = st.st_size - (off_t)sizeof(tail);
	if ((n = pread(fd, tail, sizeof(tail), off)) <= 0)
		return 0;
	for (end = (size_t)n; end > 0 && is_blank(tail[end - 1]); end--)
		;
	for (start = end; start > 0 && tail[start - 1] != '\n'; start--)
		;
	while (start < end && is_blank(tail[start]))
		start++;
	if (start == end)
		return 0;
	if (corral_buf_addstr(b, ": ") < 0)
		return -1;
	return add_quote(b, tail + start, end - start, QUOTE_MAX);
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
	return add_quote(b, text, end, NOTE_MAX) < 0 ? -1 : 1;
}

/* Fill o from how the unit ended; spawn_err != 0: it never started. */
static int
describe(struct outcome *o, int spawn_err, int status, int outfd)
{
	int sig;

	o->ok = 0;
	o->exit_code = -1;
	o->signal = NULL;
	if (spawn_err) {
		o->status = "error";
		return corral_buf_addf(&o->note, "ERROR: cannot start: %s",
		    strerror(spawn_err));
	}
	if (WIFSIGNALED(status)) {
		sig = WTERMSIG(status);
		o->status = "crash";
		o->signal = signal_name(sig, o->signame);
		return corral_buf_addf(&o->note, "CRASH: signal %d (%s)", sig,
		    o->signal);
	}
	o->exit_code = WEXITSTATUS(status);
	if (o->exit_code == 0) {
		o->ok = 1;
		o->status = "pass";
		return corral_buf_addstr(&o->note, "PASS: exit 0");
	}
	o->status = "fail";
	if (corral_buf_addf(&o->note, "FAIL: exit %d", o->exit_code) < 0)
		return -1;
	return add_last_line(&o->note, outfd);
}

static int
append_record(struct corral_run *r, const char *unit, const char *output,
    const struct outcome *o, struct corral_err *err)
{
	struct corral_record rec;
	char at[CORRAL_TIME_ISO_SIZE];

	corral_time_iso(at);
	rec.agent_id = r->agent;
	rec.unit = unit;
	rec.ok = o->ok;
	rec.note = o->note.data;
	rec.at = at;
	rec.status = o->status;
	rec.exit_code = o->exit_code;
	rec.signal = o->signal;
	rec.duration_ms = o->ms;
	rec.attempt = 1;
	rec.run = r->run;
	rec.output = output;
	rec.inputs = r->inputs;
	if (!o->ok)
		r->failed++;
	corral_buf_reset(&r->line);
	if (corral_record_format(&r->line, &rec) < 0)
		return corral_err_set(err, ENOMEM, "cannot write '%s'",
		    r->part);
	if (corral_write_all(r->logfd, r->line.data, r->line.len) < 0)
		return corral_err_set(err, errno, "cannot write '%s'", r->part);
	return 0;
}

/* Run the unit, wait for it, and say how it ended in o. */
static int
execute(struct corral_run *r, int outfd, const char *notepath,
    struct outcome *o, struct corral_err *err)
{
	struct corral_buf own = CORRAL_BUF_INIT;
	long long t0 = corral_time_ms();
	int e, status = 0, rc = 0;
	pid_t pid;

	if (!(e = spawn_unit(r, outfd, &pid)) && wait_unit(r, pid,
	    &status) < 0)
		return corral_err_set(err, errno, "cannot wait for a unit");
	o->ms = corral_time_ms() - t0;
	if (caught)
		return 0;
	if (describe(o, e, status, outfd) < 0 ||
	    (rc = read_note(notepath, &own)) < 0)
		rc = corral_err_set(err, ENOMEM, "cannot run a unit");
	else if (rc == 1) {
		corral_buf_release(&o->note);
		o->note = own;
		return 0;
	}
	corral_buf_release(&own);
	return rc < 0 ? -1 : 0;
}

/* Unit number n (from 1) of the slice. */
static int
run_unit(struct corral_run *r, const char *unit, size_t n,
    struct corral_err *err)
{
	struct corral_buf out = CORRAL_BUF_INIT, note = CORRAL_BUF_INIT;
	struct outcome o;
	int fd = -1, rc = -1;

	memset(&o, 0, sizeof(o));
	if (corral_buf_addf(&out, "%s/%zu.out", r->outdir, n) < 0 ||
	    corral_buf_addf(&note, "%s/%zu.note", r->noteroot, n) < 0 ||
	    set_var(&r->env, r->envunit, "CORRAL_UNIT", unit) < 0 ||
	    set_var(&r->env, r->envunit + 1, "CORRAL_NOTE", note.data) < 0) {
		corral_err_set(err, ENOMEM, "cannot run a unit");
		goto out;
	}
	fd = open(out.data, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		corral_err_set(err, errno, "cannot create '%s'", out.data);
		goto out;
	}
	if (execute(r, fd, note.data, &o, err) < 0)
		goto out;
	rc = caught ? 0 : append_record(r, unit, out.data, &o, err);
out:
	if (fd >= 0)
		close(fd);
	corral_buf_release(&o.note);
	corral_buf_release(&out);
	corral_buf_release(&note);
	return rc;
}

int
corral_run_units(struct corral_run *r, const struct corral_strv *units,
    struct corral_err *err)
{
	char name[32];
	size_t i;

	for (i = 0; i < units->n && !caught; i++)
		if (run_unit(r, units->v[i], i + 1, err) < 0)
			return -1;
	if (caught)
		return corral_err_set(err, 0, "stopped by %s",
		    signal_name(caught, name));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Finishing                                                            */

int
corral_run_commit(struct corral_run *r, struct corral_err *err)
{
	char name[32];
	int fd = r->logfd;

	if (caught)
		return corral_err_set(err, 0, "stopped by %s",
		    signal_name(caught, name));
	r->logfd = -1;
	if (fsync(fd) < 0) {
		close(fd);
		return corral_err_set(err, errno, "cannot write '%s'", r->part);
	}
	if (close(fd) < 0)
		return corral_err_set(err, errno, "cannot write '%s'", r->part);
	if (rename(r->part, r->log) < 0)
		return corral_err_set(err, errno, "cannot rename '%s' to '%s'",
		    r->part, r->log);
	return corral_fsync_parent(r->log, err);
}

int
corral_run_release(struct corral_run *r, struct corral_err *err)
{
	int rc = 0;

	if (r->logfd >= 0)
		close(r->logfd);
	if (r->clone && !r->keep && corral_clone_remove(r->clone, err) < 0)
		rc = -1;
	watchdog_stop(r);
	free(r->clone);
	free(r->outdir);
	free(r->noteroot);
	free(r->log);
	free(r->part);
	corral_strv_release(&r->env);
	corral_buf_release(&r->line);
	corral_run_init(r);
	return rc;
}
