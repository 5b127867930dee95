/* See LICENSE file for copyright and license details. */
/*
 * supervise.c starts one unit and watches it to its end: the signals the
 * agent forwards to the unit's process group, the watchdog that outlives
 * an agent killed outright, the guard whose end stops the run, the
 * unit's deadline (SIGTERM, then SIGKILL after the grace period), and,
 * the agent being a child subreaper, every process the unit left
 * running, killed and reaped before the unit itself is reaped.
 */
#define _GNU_SOURCE	/* ppoll */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "checkout/checkout.h"
#include "agent/agent.h"
#include "agent/run-private.h"

/* How often a guard is looked at where the kernel has no pidfd, in ms. */
#define GUARD_POLL_MS	250


/* What the signal handler shares with the loop. */
static volatile sig_atomic_t caught;	/* first forwarded signal */
static volatile sig_atomic_t unit_pgid;	/* the running unit's group */
static int xfsz_ignored_on_entry;

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

/* Only to interrupt ppoll(2) when a unit ends. */
static void
on_child(int sig)
{
	(void)sig;
}

int
corral_run_signals(struct corral_err *err)
{
	static const int forward[] = { SIGHUP, SIGINT, SIGTERM };
	struct sigaction sa, old;
	sigset_t chld;
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
	sa.sa_handler = on_child;
	sa.sa_flags = SA_NOCLDSTOP;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigaction(SIGCHLD, &sa, NULL) < 0 ||
	    sigprocmask(SIG_BLOCK, &chld, NULL) < 0)
		return corral_err_set(err, errno, "cannot set signals");
	return 0;
}

int
corral_run_caught(void)
{
	return caught;
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
	corral_child_exit(0);
}

int
corral_run_watchdog_start(struct corral_run *r, struct corral_err *err)
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
	r->st->watchfd = sv[0];
	r->st->watchdog = pid;
	return 0;
}

/* Tell the watchdog the running group (0: none; -1: the slice is done). */
static void
watchdog_tell(struct corral_run *r, int32_t msg)
{
	if (r->st->watchfd >= 0)
		(void)send(r->st->watchfd, &msg, sizeof(msg), MSG_NOSIGNAL);
}

void
corral_run_watchdog_stop(struct corral_run *r)
{
	watchdog_tell(r, -1);
	if (r->st->watchfd >= 0)
		close(r->st->watchfd);
	r->st->watchfd = -1;
	if (r->st->watchdog > 0)
		(void)corral_proc_reap(r->st->watchdog, NULL);
	r->st->watchdog = 0;
}

/* ------------------------------------------------------------------ */
/* The guard                                                            */

/*
 * A pidfd of the guard, polled with the unit's output: it becomes
 * readable the moment the guard ends, and, unlike a pid, cannot come to
 * name another process.  Kernels before 5.3 have none; there the guard is
 * looked at every GUARD_POLL_MS, a zombie counting as gone as it does for
 * the pidfd, which is readable once the guard exits, reaped or not.  A
 * guard already gone stops the agent before its first unit.
 */
void
corral_run_guard_open(struct corral_run *r)
{
	long fd;

	r->st->guardfd = -1;
	if (r->guard <= 0)
		return;
	fd = syscall(SYS_pidfd_open, r->guard, 0);
	if (fd >= 0) {
		r->st->guardfd = (int)fd;
		(void)fcntl(r->st->guardfd, F_SETFD, FD_CLOEXEC);
	}
}

/* Whether the guard has ended; the first time, the run stops as on TERM. */
int
corral_run_guard_check(struct corral_run *r)
{
	struct pollfd pfd;
	int gone;

	if (r->guard <= 0)
		return 0;
	if (r->guard_gone)
		return 1;
	if (r->st->guardfd >= 0) {
		pfd.fd = r->st->guardfd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		gone = poll(&pfd, 1, 0) > 0;
	} else {
		gone = !corral_pid_alive(r->guard);
	}
	if (gone) {
		r->guard_gone = 1;
		if (!caught)
			caught = SIGTERM;
	}
	return gone;
}

/* ------------------------------------------------------------------ */
/* Strays                                                               */

/*
 * As a child subreaper the agent gets every orphan among its descendants:
 * a process a unit detached (setsid, a double fork out of its group,
 * daemon(3)) becomes the agent's child as soon as its parent ends.  So
 * once a unit's main process has ended, the agent's children other than
 * that process, the watchdog and those it had before any unit ran are
 * exactly what the unit left running.
 */

/* Become a subreaper, and remember the children that are no unit's. */
int
corral_run_become_reaper(struct corral_run *r, struct corral_err *err)
{
	return corral_reaper_start(&r->st->reaper, err);
}

/*
 * Kill and reap every process the unit left (corral_reaper_kill): not
 * the unit itself, the watchdog or what the agent had before any unit.
 * Returns how many were still running and died of this SIGKILL: not
 * those of the unit's group when a timeout's SIGKILL reached the group
 * already (group_killed), and none in the sandbox, where the one such
 * child is bwrap's own init, which the kernel already takes down with
 * whatever the unit left in its PID namespace.
 */
static long
kill_strays(const struct corral_run *r, pid_t unit, int group_killed)
{
	pid_t keep[2];
	long killed;

	keep[0] = unit;
	keep[1] = r->st->watchdog;
	killed = corral_reaper_kill(&r->st->reaper, keep, 2, unit,
	    group_killed);
	return r->sandbox ? 0 : killed;
}

/* ------------------------------------------------------------------ */
/* Running a unit                                                       */

/*
 * Where the program word of a unit without a shell is: word itself when
 * it holds a '/', else found on the units' PATH, once for all the units
 * that name it; NULL when it is not found (a shell then says so).
 */
static const char *
direct_path(struct corral_run *r, const char *word)
{
	struct corral_run_state *st = r->st;
	struct corral_buf path = CORRAL_BUF_INIT;

	if (strchr(word, '/'))
		return word;
	if (st->direct_word && !strcmp(st->direct_word, word))
		return st->direct_path;
	free(st->direct_word);
	free(st->direct_path);
	st->direct_path = NULL;
	if (!(st->direct_word = strdup(word)))
		return NULL;
	if (corral_run_which(word, st->env.v, &path) == 0)
		st->direct_path = path.data;
	else
		corral_buf_release(&path);
	return st->direct_path;
}

/*
 * The unit's way into the sandbox, in u, with its note file made for it
 * to bind.  0, or the error number.
 */
static int
sandboxed(struct corral_run *r, struct corral_sandbox_unit *u)
{
	const char *note = strchr(r->st->env.v[r->st->envunit + 1], '=') + 1;

	u->sb = r->sandbox;
	u->note = note;
	return corral_sandbox_note(note);
}

/*
 * Start one unit in the clone (inside the sandbox with one), in a process
 * group of its own, its stdout on outfd and stderr on errfd, with the
 * unit's limits: its own words when it needs no shell (direct.c), runs
 * in no sandbox, the shell is /bin/sh and they start; else SHELL -c CMD
 * (/bin/sh by default), which also says, as sh says it, why words did
 * not start.  0 with *pid set, or the error number of what kept it from
 * starting.
 */
int
corral_run_spawn_unit(struct corral_run *r, int outfd, int errfd,
    pid_t *pid)
{
	struct corral_proc p = CORRAL_PROC_INIT;
	struct corral_strv words = CORRAL_STRV_INIT;
	struct corral_sandbox_unit u;
	char *argv[] = { "sh", "-c", NULL, NULL };
	const char *path;
	int e = 0;

	argv[2] = (char *)r->cmd;
	p.path = r->shell ? r->shell : "/bin/sh";
	argv[0] = (char *)p.path;
	p.argv = argv;
	if (r->sandbox && !(e = sandboxed(r, &u))) {
		p.enter = corral_sandbox_enter;
		p.enter_arg = &u;
	}
	p.envp = r->st->env.v;
	p.dir = r->clone;
	p.outfd = outfd;
	p.errfd = errfd;
	p.group = 1;
	p.keyring = r->sandbox != NULL;
	p.binds = r->tmp_private && r->st->binds.n ? r->st->binds.v : NULL;
	p.sigdfl = xfsz_ignored_on_entry ? 0 : SIGXFSZ;
	p.limits = r->st->limits;
	p.nlimits = r->st->nlimits;
	/*
	 * The unit names its group to the watchdog itself: were the agent
	 * killed between the start and its own word, nobody would stop it.
	 */
	p.tellfd = r->st->watchfd;
	/*
	 * Without a shell only instead of /bin/sh (another one may read the
	 * same words otherwise), outside a sandbox (which runs the shell),
	 * and where PWD is the clone's (make_env).
	 */
	if (!r->sandbox && !strcmp(argv[0], "/bin/sh") && r->clone[0] == '/' &&
	    corral_run_words(r->cmd, r->st->env.v, &words) == 0 &&
	    (path = direct_path(r, words.v[0]))) {
		p.path = path;
		p.argv = words.v;
		if (corral_proc_start(&p, pid) == 0)
			goto out;
		p.path = argv[0];
		p.argv = argv;
	}
	if (!e)
		e = corral_proc_start(&p, pid);
out:
	corral_strv_release(&words);
	return e;
}

/* ------------------------------------------------------------------ */
/* Waiting for a unit                                                   */

/* One read of a pipe into c; EOF closes it.  1 when there may be more. */
static int
drain_once(int *fd, int stream, struct capture *c)
{
	ssize_t n;

	if (*fd < 0)
		return 0;
	n = read(*fd, c->buf, IOBUF_SIZE);
	if (n > 0) {
		corral_run_capture_stream(c, stream, c->buf, (size_t)n);
		return 1;
	}
	if (n == 0) {
		close(*fd);
		*fd = -1;
	}
	return n < 0 && errno == EINTR;
}

/*
 * What both pipes hold now, a chunk of each in turn, so that a unit
 * flooding one of them cannot keep the other waiting.
 */
static void
drain(struct waiting *w, struct capture *c)
{
	int more;

	do {
		more = drain_once(&w->pipefd[0], 1, c);
		more |= drain_once(&w->pipefd[1], 2, c);
	} while (more);
}

/*
 * Past the deadline: SIGTERM to the unit's whole group, then SIGKILL after
 * the grace period.  Returns when to look again (monotonic ms), or 0.
 */
/*
 * SIGTERM to the unit's group; in the sandbox, to all of it but its
 * leader, whose death would end the sandbox at once, the grace period
 * with it.
 */
static void
term_unit(const struct corral_run *r, pid_t pgid)
{
	if (r->sandbox)
		(void)corral_sandbox_kill(pgid, SIGTERM);
	else
		kill(-pgid, SIGTERM);
}

static long long
escalate(const struct corral_run *r, struct waiting *w, long long now)
{
	long long grace = r->grace_ms;

	if (w->deadline && !w->sent && now >= w->deadline) {
		term_unit(r, w->pid);
		w->sent = SIGTERM;
		w->kill_at = now + grace;
	}
	if (w->sent == SIGTERM && now >= w->kill_at) {
		kill(-w->pid, SIGKILL);
		w->sent = SIGKILL;
	}
	if (!w->sent)
		return w->deadline;
	return w->sent == SIGTERM ? w->kill_at : 0;
}

/*
 * Sleep in ppoll until output, a child's exit (SIGCHLD), the guard's end
 * or wake.
 */
static int
pause_for(struct corral_run *r, struct waiting *w, const sigset_t *mask,
    long long wake, long long now)
{
	struct pollfd pfd[3];
	struct timespec ts, *tp = NULL;
	nfds_t n = 0;
	int i;

	if (r->guard > 0 && r->st->guardfd < 0 && !r->guard_gone &&
	    (!wake || wake > now + GUARD_POLL_MS))
		wake = now + GUARD_POLL_MS;
	if (wake) {
		wake = wake > now ? wake - now : 0;
		ts.tv_sec = (time_t)(wake / 1000);
		ts.tv_nsec = (long)(wake % 1000) * 1000000;
		tp = &ts;
	}
	for (i = 0; i < 2; i++) {
		if (w->pipefd[i] < 0)
			continue;
		pfd[n].fd = w->pipefd[i];
		pfd[n].events = POLLIN;
		pfd[n++].revents = 0;
	}
	if (r->st->guardfd >= 0 && !r->guard_gone) {
		pfd[n].fd = r->st->guardfd;
		pfd[n].events = POLLIN;
		pfd[n++].revents = 0;
	}
	if (ppoll(pfd, n, tp, mask) < 0 && errno != EINTR)
		return -1;
	return 0;
}

/* The guard ended while a unit runs: TERM to its group, KILL after grace. */
static void
stop_for_guard(struct corral_run *r, struct waiting *w, long long now)
{
	if (!corral_run_guard_check(r) || w->sent)
		return;
	term_unit(r, w->pid);
	w->sent = SIGTERM;
	w->kill_at = now + r->grace_ms;
}

/*
 * The unit's main process is gone and its group killed: take what the
 * pipes still hold.  A process that left the group may keep them open;
 * it gets a moment, not a wait.
 */
static void
drain_rest(struct waiting *w, struct capture *c)
{
	long long end = corral_time_ms() + 200, now;
	struct pollfd pfd[2];
	nfds_t n;
	int i;

	for (;;) {
		drain(w, c);
		now = corral_time_ms();
		if ((w->pipefd[0] < 0 && w->pipefd[1] < 0) || now >= end)
			break;
		for (i = 0, n = 0; i < 2; i++)
			if (w->pipefd[i] >= 0) {
				pfd[n].fd = w->pipefd[i];
				pfd[n++].events = POLLIN;
			}
		(void)poll(pfd, n, (int)(end - now));
	}
	for (i = 0; i < 2; i++) {
		if (w->pipefd[i] >= 0)
			close(w->pipefd[i]);
		w->pipefd[i] = -1;
	}
}

/*
 * Wait for the unit, taking its output and enforcing its deadline, then
 * kill whatever it left running, in its process group or detached from
 * it, before reaping it: until then the group's id cannot be reused, so
 * the kill reaches only the unit's own leftovers.
 */
int
corral_run_wait_unit(struct corral_run *r, struct waiting *w, struct capture *c,
    int *status)
{
	long long now, wake;
	sigset_t mask;
	int ended;

	unit_pgid = w->pid;
	watchdog_tell(r, w->pid);
	if (caught)
		kill(-w->pid, caught);
	sigprocmask(SIG_SETMASK, NULL, &mask);
	sigdelset(&mask, SIGCHLD);
	while ((ended = corral_proc_ended(w->pid)) == 0) {
		now = corral_time_ms();
		stop_for_guard(r, w, now);
		wake = escalate(r, w, now);
		if (pause_for(r, w, &mask, wake, now) < 0)
			return -1;
		drain(w, c);
	}
	if (ended < 0)
		return -1;
	unit_pgid = 0;
	if (r->st->reaper.how)
		w->strays = kill_strays(r, w->pid, w->sent == SIGKILL);
	kill(-w->pid, SIGKILL);
	drain_rest(w, c);
	if (corral_proc_reap(w->pid, status) < 0)
		return -1;
	if (r->sandbox && w->sent)
		*status = corral_sandbox_status(*status);
	watchdog_tell(r, 0);
	return 0;
}
