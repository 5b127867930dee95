/* See LICENSE file for copyright and license details. */
/*
 * proc.c starts every child corral runs -- make for the demo and the
 * doctor, a parts command, a finder or a patcher, an agent's unit -- and
 * says how it ended.  A child is started by posix_spawn (never fork: no
 * copy of the parent, and a failed exec is an error number, not a child
 * that exits 127), or by vfork when the child must do something first
 * that posix_spawn cannot: set limits, tell a watchdog its pid, or mount
 * in a namespace of its own; by fork only for one that must enter a
 * sandbox before its exec.  Its input is /dev/null or a file, its
 * output goes to files or descriptors (never a pipe nobody drains), its
 * environment is ours with some NAME=VALUE replaced or added.  How a
 * child ended is said one way everywhere: "exit 3", "signal 9
 * (SIGKILL)", and for a shell, the crash behind its exit 128 + N.  A
 * process that must outlive nothing it started (the agent, corral-fix)
 * becomes a child subreaper here and kills what its children detached.
 */
#define _GNU_SOURCE	/* posix_spawn_file_actions_addchdir_np, sigabbrev_np,
			   execvpe, pipe2, vfork, NSIG */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef KEYCTL_JOIN_SESSION_KEYRING
#define KEYCTL_JOIN_SESSION_KEYRING 1	/* <linux/keyctl.h> */
#endif

#include "base/base.h"

/* How many strays are killed (and then reaped) at a time. */
#define STRAY_BATCH	64
/* The most children a reaper may have when it starts. */
#define INHERITED_MAX	1024
/* The most children looked at in one pass. */
#define CHILDREN_MAX	(INHERITED_MAX + STRAY_BATCH)
/* The longest last line quoted, in bytes. */
#define QUOTE_MAX	200
/* How much of an output is read to find its last line. */
#define TAIL_MAX	4096
/* How a child's output files are opened. */
#define OUT_FLAGS	(O_WRONLY | O_CREAT | O_TRUNC)

extern char **environ;

/* ------------------------------------------------------------------ */
/* The environment                                                      */

/* 1 when the NAME= of var is set by one of extra. */
static int
overridden(const char *var, const char *const *extra)
{
	size_t n;

	for (; extra && *extra; extra++) {
		n = strcspn(*extra, "=");
		if (!strncmp(var, *extra, n) && var[n] == '=')
			return 1;
	}
	return 0;
}

int
corral_proc_env(struct corral_strv *env, const char *const *extra)
{
	char **e;

	for (e = environ; *e; e++)
		if (!overridden(*e, extra) && corral_strv_add(env, *e) < 0)
			return -1;
	for (; extra && *extra; extra++)
		if (corral_strv_add(env, *extra) < 0)
			return -1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Starting by posix_spawn                                              */

/* stdin, stdout and stderr as p asks, in this order. */
static int
spawn_stdio(posix_spawn_file_actions_t *fa, const struct corral_proc *p)
{
	int e;

	if ((e = posix_spawn_file_actions_addopen(fa, 0, p->in ? p->in :
	    "/dev/null", O_RDONLY, 0)))
		return e;
	if (p->out)
		e = posix_spawn_file_actions_addopen(fa, 1, p->out, OUT_FLAGS,
		    0666);
	else if (p->outfd >= 0)
		e = posix_spawn_file_actions_adddup2(fa, p->outfd, 1);
	if (e)
		return e;
	if (p->err_is_out)
		return posix_spawn_file_actions_adddup2(fa, 1, 2);
	if (p->err)
		return posix_spawn_file_actions_addopen(fa, 2, p->err,
		    OUT_FLAGS, 0666);
	if (p->errfd >= 0)
		return posix_spawn_file_actions_adddup2(fa, p->errfd, 2);
	return 0;
}

/* Every signal unblocked; p->sigdfl back to its default; the group. */
static int
spawn_attrs(posix_spawnattr_t *at, const struct corral_proc *p)
{
	short flags = POSIX_SPAWN_SETSIGMASK;
	sigset_t none, dfl;
	int e;

	sigemptyset(&none);
	sigemptyset(&dfl);
	if (p->sigdfl) {
		sigaddset(&dfl, p->sigdfl);
		flags |= POSIX_SPAWN_SETSIGDEF;
	}
	if (p->group)
		flags |= POSIX_SPAWN_SETPGROUP;
	if ((e = posix_spawnattr_setpgroup(at, 0)) ||
	    (e = posix_spawnattr_setsigmask(at, &none)) ||
	    (e = posix_spawnattr_setsigdefault(at, &dfl)))
		return e;
	return posix_spawnattr_setflags(at, flags);
}

static int
start_spawn(const struct corral_proc *p, char *const *envp, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int e;

	if ((e = posix_spawn_file_actions_init(&fa)))
		return e;
	if ((e = posix_spawnattr_init(&at))) {
		posix_spawn_file_actions_destroy(&fa);
		return e;
	}
	if (!(e = spawn_stdio(&fa, p)) && !(e = spawn_attrs(&at, p)) &&
	    !(e = p->dir ? posix_spawn_file_actions_addchdir_np(&fa, p->dir) :
	    0))
		e = (strchr(p->path, '/') ? posix_spawn : posix_spawnp)(pid,
		    p->path, &fa, &at, p->argv, envp);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return e;
}

/* ------------------------------------------------------------------ */
/* Starting by vfork, for limits                                        */

/* What a child started by vfork needs; err is all it writes. */
struct vchild {
	const struct corral_proc *p;
	char *const *envp;
	volatile int err;	/* set by the child when it cannot exec */
};

/* Descriptor fd of the child from file, else from the descriptor from. */
static int
child_fd(int fd, const char *file, int flags, int from)
{
	int f;

	if (file) {
		if ((f = open(file, flags, 0666)) < 0)
			return -1;
		if (f != fd && (dup2(f, fd) < 0 || close(f) < 0))
			return -1;
		return 0;
	}
	if (from < 0)
		return 0;
	/* dup2 onto itself keeps close-on-exec: clear it either way. */
	if (dup2(from, fd) < 0)
		return -1;
	return fcntl(fd, F_SETFD, 0);
}

/*
 * The child has its own copy of the parent's signal table: every handler
 * goes back to the default so that no signal runs one here, in memory
 * the parent shares until the exec.
 */
static void
child_signals(int sigdfl)
{
	struct sigaction dfl, old;
	int sig;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++)
		if (sig == sigdfl || (sigaction(sig, NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN && old.sa_handler != SIG_DFL))
			sigaction(sig, &dfl, NULL);
}

/*
 * A mount namespace of the child's own, no mount of it propagating back,
 * with binds (pairs FROM, TO) made in it.  0, or -1 with errno.  unshare
 * and mount are system calls: safe in a vfork child.
 */
static int
child_binds(char *const *binds)
{
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	for (; binds[0] && binds[1]; binds += 2)
		if (mount(binds[0], binds[1], NULL, MS_BIND | MS_REC, NULL) < 0)
			return -1;
	return 0;
}

/*
 * What the child sets up before it execs: its group, the watchdog's word,
 * the keyring, its descriptors, directory and limits.  Async-signal-safe
 * (vfork's child runs it).  0, or -1 with errno.
 */
static int
child_setup(const struct corral_proc *p)
{
	struct rlimit rl;
	int32_t self;
	int k;

	child_signals(p->sigdfl);
	if (p->group && setpgid(0, 0) < 0)
		return -1;
	self = (int32_t)getpid();
	if (p->tellfd >= 0)
		(void)send(p->tellfd, &self, sizeof(self), MSG_NOSIGNAL);
	if (p->keyring)
		(void)syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL);
	if ((p->binds && child_binds(p->binds) < 0) ||
	    child_fd(0, p->in ? p->in : "/dev/null", O_RDONLY, -1) < 0 ||
	    child_fd(1, p->out, OUT_FLAGS, p->outfd) < 0 ||
	    child_fd(2, p->err_is_out ? NULL : p->err, OUT_FLAGS,
	    p->err_is_out ? 1 : p->errfd) < 0 ||
	    (p->dir && chdir(p->dir) < 0))
		return -1;
	for (k = 0; k < p->nlimits; k++) {
		rl.rlim_cur = (rlim_t)p->limits[k].soft;
		rl.rlim_max = (rlim_t)p->limits[k].hard;
		if (setrlimit(p->limits[k].res, &rl) < 0)
			return -1;
	}
	return 0;
}

/* The exec itself, every signal unblocked; it returns only on failure. */
static void
child_execve(const struct corral_proc *p, char *const *envp)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (strchr(p->path, '/'))
		execve(p->path, p->argv, envp);
	else
		execvpe(p->path, p->argv, envp);
}

/*
 * The child's side of vfork: it shares the parent's memory until the
 * exec, so it makes only async-signal-safe calls and writes nothing but
 * c->err.
 */
static void __attribute__((noreturn))
child_exec(struct vchild *c)
{
	if (child_setup(c->p) == 0)
		child_execve(c->p, c->envp);
	c->err = errno;
	_exit(127);
}

static pid_t
vfork_child(struct vchild *c)
{
	pid_t pid = vfork();

	if (pid == 0)
		child_exec(c);
	return pid;
}

/*
 * vfork (CLONE_VM, no copy of the parent) with every signal blocked until
 * the child has reset the handlers.
 */
static int
start_vfork(const struct corral_proc *p, char *const *envp, pid_t *pid)
{
	struct vchild c;
	sigset_t all, old;
	int e;

	memset(&c, 0, sizeof(c));
	c.p = p;
	c.envp = envp;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	*pid = vfork_child(&c);
	e = *pid < 0 ? errno : 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (e)
		return e;
	if (c.err) {
		(void)corral_proc_reap(*pid, NULL);
		return c.err;
	}
	return 0;
}

/*
 * The child's side of fork, for a child that runs p->enter before its
 * exec (which may fork and wait rather than return, so no vfork): any
 * error number that keeps it from the exec goes up errfd, which the exec
 * closes.
 */
static void __attribute__((noreturn))
child_enter(const struct corral_proc *p, char *const *envp, int errfd)
{
	int e;

	if (child_setup(p) < 0)
		e = errno;
	else if (!(e = p->enter(p->enter_arg, errfd))) {
		child_execve(p, envp);
		e = errno;
	}
	(void)!write(errfd, &e, sizeof(e));
	corral_child_exit(127);
}

/*
 * fork, every signal blocked until the child has reset the handlers; the
 * child's error number, if any, read from a pipe that its exec closes.
 */
static int
start_fork(const struct corral_proc *p, char *const *envp, pid_t *pid)
{
	sigset_t all, old;
	int fd[2], e = 0;
	ssize_t n;

	if (pipe2(fd, O_CLOEXEC) < 0)
		return errno;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	*pid = fork();
	if (*pid == 0) {
		close(fd[0]);
		child_enter(p, envp, fd[1]);
	}
	e = *pid < 0 ? errno : 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(fd[1]);
	while (!e && (n = read(fd[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(fd[0]);
	if (e && *pid > 0)
		(void)corral_proc_reap(*pid, NULL);
	return e;
}

int
corral_proc_start(const struct corral_proc *p, pid_t *pid)
{
	char *const *envp = p->envp ? p->envp : environ;

	if (p->enter)
		return start_fork(p, envp, pid);
	if (p->nlimits || p->tellfd >= 0 || p->keyring || p->binds)
		return start_vfork(p, envp, pid);
	return start_spawn(p, envp, pid);
}

/* ------------------------------------------------------------------ */
/* Waiting                                                              */

/* 1 when pid has ended (not reaped), 0 when not (with !hang), -1. */
static int
peek(pid_t pid, int hang)
{
	siginfo_t si;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT |
		    (hang ? 0 : WNOHANG)) == 0)
			return si.si_pid == pid;
		if (errno != EINTR)
			return -1;
	}
}

int
corral_proc_ended(pid_t pid)
{
	return peek(pid, 0);
}

int
corral_proc_await(pid_t pid, long long deadline)
{
	struct timespec nap = { 0, 1000000 };
	int r;

	if (!deadline)
		return peek(pid, 1);
	while ((r = peek(pid, 0)) == 0 && corral_time_ms() < deadline) {
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 32000000)
			nap.tv_nsec *= 2;
	}
	return r;
}

int
corral_proc_reap(pid_t pid, int *wstatus)
{
	while (waitpid(pid, wstatus, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

int
corral_proc_stat(pid_t pid, long *ppid, long *pgrp)
{
	char path[64], stat[512], *p;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	len = read(fd, stat, sizeof(stat) - 1);
	close(fd);
	stat[len > 0 ? len : 0] = '\0';
	/* "PID (COMM) STATE PPID PGRP ...", and COMM may hold ')'. */
	if (!(p = strrchr(stat, ')')) ||
	    sscanf(p + 1, " %*c %ld %ld", ppid, pgrp) != 2)
		return -1;
	return 0;
}

int
corral_proc_next(DIR *d, pid_t *pid, long *ppid, long *pgrp)
{
	struct dirent *de;

	while ((de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]) &&
		    corral_proc_stat(*pid = (pid_t)atol(de->d_name), ppid,
		    pgrp) == 0)
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* A child subreaper and the strays it kills                             */

/*
 * Up to max children of this process, from the kernel's list of each of
 * its threads.  -1 when /proc cannot tell.
 */
static long
read_children(pid_t *out, size_t max)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	FILE *fp;
	long pid, n = 0;

	if (!(d = opendir("/proc/self/task")))
		return -1;
	while ((size_t)n < max && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%.20s/children",
		    de->d_name);
		if (!(fp = fopen(path, "re")))
			continue;
		while ((size_t)n < max && fscanf(fp, "%ld", &pid) == 1)
			out[n++] = (pid_t)pid;
		fclose(fp);
	}
	closedir(d);
	return n;
}

/* Up to max children, from the parent field of every process in /proc. */
static long
scan_children(pid_t *out, size_t max)
{
	long ppid, pgrp, n = 0;
	pid_t pid;
	DIR *d;

	if (!(d = opendir("/proc")))
		return -1;
	while ((size_t)n < max && corral_proc_next(d, &pid, &ppid, &pgrp))
		if (ppid == getpid())
			out[n++] = pid;
	closedir(d);
	return n;
}

static long
list_children(const struct corral_reaper *rp, pid_t *out, size_t max)
{
	return rp->how == 'c' ? read_children(out, max) :
	    scan_children(out, max);
}

int
corral_reaper_start(struct corral_reaper *rp, struct corral_err *err)
{
	char path[64];
	pid_t kids[INHERITED_MAX];
	long n;

	memset(rp, 0, sizeof(*rp));
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		return 0;	/* before Linux 3.4: the child's group only */
	snprintf(path, sizeof(path), "/proc/self/task/%ld/children",
	    (long)getpid());
	rp->how = access(path, R_OK) == 0 ? 'c' : 'p';
	if ((n = list_children(rp, kids, INHERITED_MAX)) <= 0)
		return 0;
	if (!(rp->inherited = malloc((size_t)n * sizeof(*kids)))) {
		rp->how = 0;
		return corral_err_set(err, ENOMEM, "cannot start");
	}
	memcpy(rp->inherited, kids, (size_t)n * sizeof(*kids));
	rp->ninherited = (size_t)n;
	return 0;
}

/* Whether pid is no stray: inherited, or one of keep. */
static int
kept(const struct corral_reaper *rp, pid_t pid, const pid_t *keep,
    size_t nkeep)
{
	size_t i;

	for (i = 0; i < nkeep; i++)
		if (keep[i] == pid)
			return 1;
	for (i = 0; i < rp->ninherited; i++)
		if (rp->inherited[i] == pid)
			return 1;
	return 0;
}

long
corral_reaper_kill(const struct corral_reaper *rp, const pid_t *keep,
    size_t nkeep, pid_t group, int group_killed)
{
	pid_t kids[CHILDREN_MAX], strays[STRAY_BATCH];
	int sent[STRAY_BATCH], status;
	long n, i, k, killed = 0;

	while (rp->how) {
		if ((n = list_children(rp, kids, CHILDREN_MAX)) <= 0)
			break;
		for (i = k = 0; i < n && k < STRAY_BATCH; i++)
			if (!kept(rp, kids[i], keep, nkeep))
				strays[k++] = kids[i];
		if (k == 0)
			break;
		for (i = 0; i < k; i++)
			sent[i] = corral_proc_ended(strays[i]) != 1 &&
			    kill(strays[i], SIGKILL) == 0 &&
			    !(group_killed && getpgid(strays[i]) == group);
		for (i = 0; i < k; i++) {
			status = 0;
			(void)corral_proc_reap(strays[i], &status);
			killed += sent[i] && WIFSIGNALED(status) &&
			    WTERMSIG(status) == SIGKILL;
		}
	}
	return killed;
}

void
corral_reaper_release(struct corral_reaper *rp)
{
	free(rp->inherited);
	memset(rp, 0, sizeof(*rp));
}

/* ------------------------------------------------------------------ */
/* Running a program to its end                                         */

/* Start s with its output as s asks; *rfd: the read end of a capture. */
static int
spawn_start(const struct corral_spawn *s, pid_t *pid, int *rfd)
{
	struct corral_proc p = CORRAL_PROC_INIT;
	struct corral_strv env = CORRAL_STRV_INIT;
	int fds[2] = { -1, -1 }, e = 0;

	if (corral_proc_env(&env, s->env) < 0)
		e = ENOMEM;
	else if (s->capture && pipe2(fds, O_CLOEXEC) < 0)
		e = errno;
	p.path = s->argv[0];
	p.argv = (char *const *)s->argv;
	p.envp = env.v;
	p.dir = s->dir;
	p.out = s->out;
	p.err_is_out = s->out != NULL;
	p.outfd = fds[1];
	if (!e)
		e = corral_proc_start(&p, pid);
	corral_strv_release(&env);
	if (fds[1] >= 0)
		close(fds[1]);
	if (e && fds[0] >= 0)
		close(fds[0]);
	*rfd = e ? -1 : fds[0];
	return e;
}

int
corral_spawn_run(const struct corral_spawn *s, int *wstatus,
    struct corral_err *err)
{
	int fd, e, rc = 0;
	pid_t pid;

	if ((e = spawn_start(s, &pid, &fd)))
		return corral_err_set(err, e, "cannot run '%s'", s->argv[0]);
	if (fd >= 0) {
		if (corral_fd_chunks(fd, corral_buf_eat, s->capture) < 0)
			rc = corral_err_set(err, errno, "reading from '%s'",
			    s->argv[0]);
		close(fd);
	}
	if (corral_proc_reap(pid, wstatus) < 0 && rc == 0)
		rc = corral_err_set(err, errno, "waiting for '%s'", s->argv[0]);
	return rc;
}

/* ------------------------------------------------------------------ */
/* How it ended                                                         */

const char *
corral_signal_name(int sig, char out[32])
{
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(out, 32, "SIG%s", abbrev);
	else
		snprintf(out, 32, "SIG%d", sig);
	return out;
}

int
corral_proc_shell_crash(int code)
{
	static const int crash[] = { SIGQUIT, SIGILL, SIGTRAP, SIGABRT,
	    SIGBUS, SIGFPE, SIGKILL, SIGSEGV, SIGSYS, SIGXCPU, SIGXFSZ };
	size_t i;

	for (i = 0; i < sizeof(crash) / sizeof(crash[0]); i++)
		if (code == 128 + crash[i])
			return crash[i];
	return 0;
}

int
corral_proc_describe(struct corral_buf *b, int wstatus, int shell)
{
	char name[32];
	int sig;

	if (WIFSIGNALED(wstatus))
		return corral_buf_addf(b, "signal %d (%s)", WTERMSIG(wstatus),
		    corral_signal_name(WTERMSIG(wstatus), name));
	if (!WIFEXITED(wstatus))
		return corral_buf_addf(b, "wait status %d", wstatus);
	if (shell && (sig = corral_proc_shell_crash(WEXITSTATUS(wstatus))))
		return corral_buf_addf(b, "signal %d (%s), reported by the "
		    "shell as exit %d", sig, corral_signal_name(sig, name),
		    WEXITSTATUS(wstatus));
	return corral_buf_addf(b, "exit %d", WEXITSTATUS(wstatus));
}

int
corral_add_excerpt(struct corral_buf *b, const char *text, size_t n,
    size_t max)
{
	size_t i, cut = n;
	int rc = 0;

	if (n > max) {
		cut = max;
		while (cut > 0 && ((unsigned char)text[cut] & 0xc0) == 0x80)
			cut--;
	}
	for (i = 0; i < cut && rc == 0; i++)
		rc = corral_buf_addch(b, text[i] == '\0' ? '?' :
		    text[i] == '\n' || text[i] == '\r' ? ' ' : text[i]);
	if (rc == 0 && cut < n)
		rc = corral_buf_addstr(b, "...");
	return rc;
}

static int
is_blank(int c)
{
	return c != '\0' && isspace((unsigned char)c);
}

int
corral_proc_add_last_line(struct corral_buf *b, int fd)
{
	char tail[TAIL_MAX];
	struct stat st;
	size_t start, end;
	off_t off = 0;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0)
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
	return corral_add_excerpt(b, tail + start, end - start, QUOTE_MAX);
}
