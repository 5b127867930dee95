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
 */
#define _GNU_SOURCE	/* pipe2, ppoll */

#include <ctype.h>
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "record/record.h"
#include "agent/agent.h"
#include "agent/agent-private.h"

/* What a run keeps for itself: struct corral_run's st. */
struct corral_run_state {
	char *outdir;		/* LOGDIR/agent-ID, as formed from LOGDIR */
	char *noteroot;		/* the same directory, absolute */
	char *logsdir;		/* LOGDIR less its trailing slashes */
	char *log;		/* LOGDIR/agent-ID.jsonl */
	char *part;		/* LOGDIR/agent-ID.jsonl.part, the checkpoint */
	struct corral_runlog rl;	/* the log itself */
	int watchfd;		/* to the watchdog */
	int guardfd;		/* a pidfd of guard, or -1 */
	pid_t watchdog;
	struct corral_strv env;	/* the units' environment */
	struct corral_strv cloned;	/* the parts checked out */
	dev_t clone_dev;	/* the clone as checked out, to tell when a */
	ino_t clone_ino;	/* unit removed or replaced it */
	int reaper;		/* orphans of units come to this process */
	pid_t *inherited;	/* children it had before any unit ran */
	size_t ninherited;
	size_t envunit;		/* env.v[envunit..+2]: UNIT, NOTE, ATTEMPT */
	struct corral_buf line;	/* the record being written */
	long long slice_end;	/* monotonic ms when time is up, or 0 */
	int slice_why;		/* 'T': the slice's limit; 'd': the run's */
	int nlimits;		/* setrlimit(2) calls each unit gets */
	struct corral_proc_limit limits[3];
	char *iobuf;		/* for the units' output */
	struct corral_live live;
};

/* The longest note a unit may leave in CORRAL_NOTE, in bytes. */
#define NOTE_MAX	4096
/* How much of a unit's output is read from its pipe at once. */
#define IOBUF_SIZE	65536
/* How often a guard is looked at where the kernel has no pidfd, in ms. */
#define GUARD_POLL_MS	250
/* How many children are killed (and then reaped) at a time. */
#define STRAY_BATCH	64
/* The most children the agent may have before any unit runs. */
#define INHERITED_MAX	1024
/* The most children looked at in one pass. */
#define CHILDREN_MAX	(INHERITED_MAX + STRAY_BATCH)

/* What the signal handler shares with the loop. */
static volatile sig_atomic_t caught;	/* first forwarded signal */
static volatile sig_atomic_t unit_pgid;	/* the running unit's group */
static int xfsz_ignored_on_entry;

/* How one attempt of a unit ended, as the record will say. */
struct outcome {
	struct corral_buf out;	/* the output file's path */
	int why;		/* of a timeout: 't', 'T' or 'd' (struct waiting) */
	int ok;
	const char *status;
	int exit_code;		/* -1: null */
	const char *signal;	/* NULL, or points into signame */
	char signame[32];
	long long ms;
	struct corral_buf note;
	long strays;		/* processes left running, killed after it */
	int renewed;		/* it removed or replaced its clone */
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

static void
watchdog_stop(struct corral_run *r)
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
static void
guard_open(struct corral_run *r)
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
static int
guard_check(struct corral_run *r)
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
	char path[64], stat[512], *p;
	struct dirent *de;
	long ppid, n = 0;
	ssize_t len;
	DIR *d;
	int fd;

	if (!(d = opendir("/proc")))
		return -1;
	while ((size_t)n < max && (de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/stat", de->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		len = read(fd, stat, sizeof(stat) - 1);
		close(fd);
		stat[len > 0 ? len : 0] = '\0';
		/* "PID (COMM) STATE PPID ...", and COMM may hold ')'. */
		if ((p = strrchr(stat, ')')) &&
		    sscanf(p + 1, " %*c %ld", &ppid) == 1 && ppid == getpid())
			out[n++] = (pid_t)atol(de->d_name);
	}
	closedir(d);
	return n;
}

static long
list_children(const struct corral_run *r, pid_t *out, size_t max)
{
	return r->st->reaper == 'c' ? read_children(out, max) :
	    scan_children(out, max);
}

/* Whether pid is not a unit's leftover: the unit itself or the agent's. */
static int
is_agents(const struct corral_run *r, pid_t pid, pid_t unit)
{
	size_t i;

	if (pid == unit || pid == r->st->watchdog)
		return 1;
	for (i = 0; i < r->st->ninherited; i++)
		if (r->st->inherited[i] == pid)
			return 1;
	return 0;
}

/* Become a subreaper, and remember the children that are no unit's. */
static int
become_reaper(struct corral_run *r, struct corral_err *err)
{
	char path[64];
	pid_t kids[INHERITED_MAX];
	long n;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		return 0;	/* before Linux 3.4: the unit's group only */
	snprintf(path, sizeof(path), "/proc/self/task/%ld/children",
	    (long)getpid());
	r->st->reaper = access(path, R_OK) == 0 ? 'c' : 'p';
	if ((n = list_children(r, kids, INHERITED_MAX)) <= 0)
		return 0;
	if (!(r->st->inherited = malloc((size_t)n * sizeof(*kids))))
		return corral_err_set(err, ENOMEM, "cannot start");
	memcpy(r->st->inherited, kids, (size_t)n * sizeof(*kids));
	r->st->ninherited = (size_t)n;
	return 0;
}

/*
 * Kill and reap every process the unit left, over and over, since a
 * dying process's children come back as new orphans and a process can
 * fork until its SIGKILL lands.  Returns how many were still running and
 * died of this SIGKILL: not those of the unit's group when a timeout's
 * SIGKILL reached the group already (group_killed).
 */
static long
kill_strays(const struct corral_run *r, pid_t unit, int group_killed)
{
	pid_t kids[CHILDREN_MAX], strays[STRAY_BATCH];
	int sent[STRAY_BATCH], status;
	long n, i, k, killed = 0;

	for (;;) {
		if ((n = list_children(r, kids, CHILDREN_MAX)) <= 0)
			break;
		for (i = k = 0; i < n && k < STRAY_BATCH; i++)
			if (!is_agents(r, kids[i], unit))
				strays[k++] = kids[i];
		if (k == 0)
			break;
		for (i = 0; i < k; i++)
			sent[i] = corral_proc_ended(strays[i]) != 1 &&
			    kill(strays[i], SIGKILL) == 0 &&
			    !(group_killed && getpgid(strays[i]) == unit);
		for (i = 0; i < k; i++) {
			status = 0;
			(void)corral_proc_reap(strays[i], &status);
			killed += sent[i] && WIFSIGNALED(status) &&
			    WTERMSIG(status) == SIGKILL;
		}
	}
	return killed;
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

/*
 * "N.out", "N.note", "N.A.out", "N.A.note" with N > keep: what an earlier
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
	    !strcmp(name + n, ".note"));
}

static int
clear_outputs(const char *dir, size_t keep, struct corral_err *err)
{
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (!(d = opendir(dir)))
		return corral_err_set(err, errno, "cannot open '%s'", dir);
	while (rc == 0 && (de = readdir(d)))
		if (is_output(de->d_name, keep) &&
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

/*
 * Create the output directory and remove the old log; the checkpoint and
 * the outputs stay until corral_run_units knows what it resumes.
 */
static int
prepare_logdir(struct corral_run *r, struct corral_err *err)
{
	if (make_paths(r, err) < 0 ||
	    corral_mkdir_p(r->st->outdir, 0777, err) < 0 ||
	    unlink_old(r->st->log, err) < 0)
		return -1;
	if (!(r->st->noteroot = realpath(r->st->outdir, NULL)))
		return corral_err_set(err, errno, "cannot open '%s'",
		    r->st->outdir);
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
static const char *
refusal_of(const struct corral_run *r, const char *unit)
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
static int
clone_check(struct corral_run *r, struct corral_err *err)
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
	if (corral_clone_renew(r->src, &r->st->cloned, r->exclude, r->clone,
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
	if (corral_checkout(r->src, &r->st->cloned, r->exclude, t.data, missing,
	    err) < 0) {
		rmdir(t.data);
		corral_buf_release(&t);
		return -1;
	}
	r->clone = t.data;
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

/*
 * The caller's environment without any CORRAL_* variable of ours, then
 * ours; CORRAL_UNIT, CORRAL_NOTE and CORRAL_ATTEMPT come last and change
 * with each attempt.
 */
static int
make_env(struct corral_run *r, struct corral_err *err)
{
	struct corral_strv ours = CORRAL_STRV_INIT;
	int rc = -1;

	if (add_var(&ours, "CORRAL_AGENT", r->agent) == 0 &&
	    add_var(&ours, "CORRAL_RUN", r->run) == 0 &&
	    add_var(&ours, "CORRAL_WORKDIR", r->clone) == 0 &&
	    add_var(&ours, "CORRAL_UNIT", "") == 0 &&
	    add_var(&ours, "CORRAL_NOTE", "") == 0 &&
	    add_var(&ours, "CORRAL_ATTEMPT", "1") == 0)
		rc = corral_proc_env(&r->st->env, (const char *const *)ours.v);
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

int
corral_run_start(struct corral_run *r, struct corral_strv *missing,
    struct corral_err *err)
{
	if (!r->st && state_new(r, err) < 0)
		return -1;
	prepare_limits(r);
	guard_open(r);
	if (prepare_logdir(r, err) < 0 || become_reaper(r, err) < 0 ||
	    sort_parts(r, err) < 0 || make_clone(r, missing, err) < 0 ||
	    watchdog_start(r, err) < 0 || make_env(r, err) < 0)
		return -1;
	r->st->rl.dir = r->st->logsdir;
	r->st->rl.log = r->st->log;
	r->st->rl.part = r->st->part;
	r->st->rl.agent = r->agent;
	return corral_runlog_open(&r->st->rl, err);
}

/* ------------------------------------------------------------------ */
/* Running a unit                                                       */

/*
 * Start /bin/sh -c CMD for one unit in the clone, in a process group of
 * its own, its stdout and stderr on outfd, with the unit's limits.  0
 * with *pid set, or the error number of what kept it from starting.
 */
static int
spawn_unit(struct corral_run *r, int outfd, pid_t *pid)
{
	struct corral_proc p = CORRAL_PROC_INIT;
	char *argv[] = { "sh", "-c", NULL, NULL };

	argv[2] = (char *)r->cmd;
	p.path = "/bin/sh";
	p.argv = argv;
	p.envp = r->st->env.v;
	p.dir = r->clone;
	p.outfd = outfd;
	p.errfd = outfd;
	p.group = 1;
	p.sigdfl = xfsz_ignored_on_entry ? 0 : SIGXFSZ;
	p.limits = r->st->limits;
	p.nlimits = r->st->nlimits;
	return corral_proc_start(&p, pid);
}

/* ------------------------------------------------------------------ */
/* Capturing a unit's output                                            */

/*
 * A unit's output arrives through a pipe and goes to its N.out file.
 * Past max bytes, the first max/2 stay where they are and the latest
 * max - max/2 are kept in a window after them, which is moved back
 * whenever it has grown to twice that; at the end the window's last part
 * goes after a marker saying how much was left out.  Disk use stays
 * below twice max, memory at one chunk.
 */
struct capture {
	int fd;			/* the N.out file */
	long long max;		/* 0: keep everything */
	long long head, tail;	/* what is kept of a longer output */
	long long size;		/* bytes in the file, until it overflows */
	long long total;	/* bytes the unit wrote */
	long long win;		/* overflowing: window bytes after head */
	int over;
	int err;		/* errno of a failed write; 0 */
	char *buf;		/* IOBUF_SIZE bytes */
};

static int
pwrite_all(int fd, const char *p, size_t n, off_t off)
{
	ssize_t w;

	while (n > 0) {
		w = pwrite(fd, p, n, off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

/* Move n bytes of c->fd from src to dst, which may overlap. */
static int
move_bytes(struct capture *c, off_t src, off_t dst, long long n)
{
	long long done = 0, k;
	off_t from, to;
	ssize_t got;

	while (done < n) {
		k = n - done < IOBUF_SIZE ? n - done : IOBUF_SIZE;
		/* Forward when moving down, from the end when moving up. */
		from = dst < src ? src + done : src + (n - done - k);
		to = dst < src ? dst + done : dst + (n - done - k);
		if ((got = pread(c->fd, c->buf, (size_t)k, from)) != k ||
		    pwrite_all(c->fd, c->buf, (size_t)k, to) < 0)
			return -1;
		done += k;
	}
	return 0;
}

static int
capture_over(struct capture *c, const char *p, size_t n)
{
	long long k, src;

	if (!c->over) {
		k = c->head > c->size ? c->head - c->size : 0;
		if (k && pwrite_all(c->fd, p, (size_t)k, c->size) < 0)
			return -1;
		c->size += k;
		p += k;
		n -= (size_t)k;
		c->over = 1;
		c->win = c->size - c->head;
	}
	if ((long long)n >= c->tail) {
		c->win = c->tail;
		return pwrite_all(c->fd, p + n - c->tail, (size_t)c->tail,
		    c->head);
	}
	if (pwrite_all(c->fd, p, n, c->head + c->win) < 0)
		return -1;
	c->win += (long long)n;
	if (c->win < 2 * c->tail)
		return 0;
	src = c->head + c->win - c->tail;
	c->win = c->tail;
	return move_bytes(c, src, c->head, c->tail);
}

static void
capture_add(struct capture *c, const char *p, size_t n)
{
	int rc;

	c->total += (long long)n;
	if (c->err)
		return;	/* the output is lost; the pipe must still drain */
	if (!c->over && (!c->max || c->size + (long long)n <= c->max)) {
		rc = pwrite_all(c->fd, p, n, c->size);
		c->size += (long long)n;
	} else {
		rc = capture_over(c, p, n);
	}
	if (rc < 0)
		c->err = errno ? errno : EIO;
}

/* Put the kept tail after the marker, and cut the file there. */
static void
capture_finish(struct capture *c)
{
	char mark[96];
	long long keep = c->tail;
	int n;

	if (!c->over || c->err)
		return;
	n = snprintf(mark, sizeof(mark), "\n[corral: %lld bytes of output "
	    "left out]\n", c->total - c->head - keep);
	if (move_bytes(c, c->head + c->win - keep, c->head + n, keep) < 0 ||
	    pwrite_all(c->fd, mark, (size_t)n, c->head) < 0 ||
	    ftruncate(c->fd, c->head + n + keep) < 0)
		c->err = errno ? errno : EIO;
}

/* ------------------------------------------------------------------ */
/* Waiting for a unit                                                   */

/* How one attempt is waited for. */
struct waiting {
	pid_t pid;
	int pipefd;		/* the read end, or -1 after EOF */
	long long deadline;	/* monotonic ms; 0: none */
	int why;		/* 't': its timeout, 'T': the slice's, 'd': the run's */
	long long kill_at;	/* after SIGTERM, when SIGKILL follows */
	int sent;		/* 0, SIGTERM or SIGKILL */
	long strays;		/* processes left running, killed at its end */
};

/* Read what the pipe holds now into c; EOF closes it. */
static void
drain(struct waiting *w, struct capture *c)
{
	ssize_t n;

	while (w->pipefd >= 0) {
		n = read(w->pipefd, c->buf, IOBUF_SIZE);
		if (n > 0) {
			capture_add(c, c->buf, (size_t)n);
		} else if (n == 0) {
			close(w->pipefd);
			w->pipefd = -1;
		} else if (errno != EINTR) {
			break;
		}
	}
}

/*
 * Past the deadline: SIGTERM to the unit's whole group, then SIGKILL after
 * the grace period.  Returns when to look again (monotonic ms), or 0.
 */
static long long
escalate(struct waiting *w, long long grace, long long now)
{
	if (w->deadline && !w->sent && now >= w->deadline) {
		kill(-w->pid, SIGTERM);
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
	struct pollfd pfd[2];
	struct timespec ts, *tp = NULL;
	nfds_t n = 0;

	if (r->guard > 0 && r->st->guardfd < 0 && !r->guard_gone &&
	    (!wake || wake > now + GUARD_POLL_MS))
		wake = now + GUARD_POLL_MS;
	if (wake) {
		wake = wake > now ? wake - now : 0;
		ts.tv_sec = (time_t)(wake / 1000);
		ts.tv_nsec = (long)(wake % 1000) * 1000000;
		tp = &ts;
	}
	if (w->pipefd >= 0) {
		pfd[n].fd = w->pipefd;
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
	if (!guard_check(r) || w->sent)
		return;
	kill(-w->pid, SIGTERM);
	w->sent = SIGTERM;
	w->kill_at = now + r->grace_ms;
}

/*
 * The unit's main process is gone and its group killed: take what the
 * pipe still holds.  A process that left the group may keep the pipe
 * open; it gets a moment, not a wait.
 */
static void
drain_rest(struct waiting *w, struct capture *c)
{
	long long end = corral_time_ms() + 200, now;
	struct pollfd pfd;

	for (;;) {
		drain(w, c);
		now = corral_time_ms();
		if (w->pipefd < 0 || now >= end)
			break;
		pfd.fd = w->pipefd;
		pfd.events = POLLIN;
		(void)poll(&pfd, 1, (int)(end - now));
	}
	if (w->pipefd >= 0)
		close(w->pipefd);
	w->pipefd = -1;
}

/*
 * Wait for the unit, taking its output and enforcing its deadline, then
 * kill whatever it left running, in its process group or detached from
 * it, before reaping it: until then the group's id cannot be reused, so
 * the kill reaches only the unit's own leftovers.
 */
static int
wait_unit(struct corral_run *r, struct waiting *w, struct capture *c,
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
		wake = escalate(w, r->grace_ms, now);
		if (pause_for(r, w, &mask, wake, now) < 0)
			return -1;
		drain(w, c);
	}
	if (ended < 0)
		return -1;
	unit_pgid = 0;
	if (r->st->reaper)
		w->strays = kill_strays(r, w->pid, w->sent == SIGKILL);
	kill(-w->pid, SIGKILL);
	drain_rest(w, c);
	if (corral_proc_reap(w->pid, status) < 0)
		return -1;
	watchdog_tell(r, 0);
	return 0;
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

/* Fill o from how the unit ended; spawn_err != 0: it never started. */
static int
describe(struct corral_run *r, struct outcome *o, int spawn_err, int status,
    const struct waiting *w, int outfd)
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
		    corral_proc_add_last_line(&o->note, outfd);
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
	if (o->exit_code == 0) {
		o->ok = 1;
		o->status = "pass";
		return corral_buf_addstr(&o->note, "PASS: exit 0");
	}
	o->status = "fail";
	if ((rc = describe_limit(r, o, status)) != 0)
		return rc < 0 ? -1 : corral_proc_add_last_line(&o->note, outfd);
	if ((sig = corral_proc_shell_crash(o->exit_code))) {
		o->status = "crash";
		o->signal = corral_signal_name(sig, o->signame);
		return corral_buf_addstr(&o->note, "CRASH: ") |
		    corral_proc_describe(&o->note, status, 1);
	}
	if ((corral_buf_addstr(&o->note, "FAIL: ") |
	    corral_proc_describe(&o->note, status, 1)) < 0)
		return -1;
	return corral_proc_add_last_line(&o->note, outfd);
}

/* ------------------------------------------------------------------ */
/* Records                                                              */

/* final: the unit's last record, after which the checkpoint is sealed. */
static int
write_record(struct corral_run *r, const struct corral_record *rec,
    int final, struct corral_err *err)
{
	corral_buf_reset(&r->st->line);
	if (corral_record_format(&r->st->line, rec) < 0)
		return corral_err_set(err, ENOMEM, "cannot write '%s'",
		    r->st->part);
	return corral_runlog_write(&r->st->rl, &r->st->line, final, err);
}

static int
append_record(struct corral_run *r, const char *unit, int attempt,
    const struct outcome *o, int final, struct corral_err *err)
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
	rec.attempt = attempt;
	rec.run = r->run;
	rec.output = o->out.data;
	rec.inputs = r->inputs;
	rec.stray = o->strays;
	return write_record(r, &rec, final, err);
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
	rc = write_record(r, &rec, 1, err);
	corral_buf_release(&note);
	r->failed++;
	return rc;
}

/* ------------------------------------------------------------------ */
/* Attempts                                                             */

/* Whether the slice's (or the run's) time is up. */
static int
time_up(const struct corral_run *r)
{
	return r->st->slice_end && corral_time_ms() >= r->st->slice_end;
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
	int e, p[2], status = 0, rc = 0;

	memset(&w, 0, sizeof(w));
	set_deadline(r, &w, t0);
	if (pipe2(p, O_CLOEXEC) < 0)
		return corral_err_set(err, errno, "cannot run a unit");
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	w.pipefd = p[0];
	e = spawn_unit(r, p[1], &w.pid);
	close(p[1]);
	if (e)
		close(p[0]);
	else if (wait_unit(r, &w, c, &status) < 0) {
		rc = corral_err_set(err, errno, "cannot wait for a unit");
		if (w.pipefd >= 0)
			close(w.pipefd);
		return rc;
	}
	capture_finish(c);
	o->ms = corral_time_ms() - t0;
	if (caught)
		return 0;
	o->why = w.why;
	o->strays = w.strays;
	if (describe(r, o, e, status, &w, c->fd) < 0 ||
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

/* Attempt number attempt of unit n (from 1) of the slice. */
static int
run_attempt(struct corral_run *r, const char *unit, size_t n, int attempt,
    struct outcome *o, struct corral_err *err)
{
	struct corral_buf note = CORRAL_BUF_INIT;
	struct capture c;
	char num[24];
	int rc = -1;

	memset(&c, 0, sizeof(c));
	c.fd = -1;
	c.max = r->output_max;
	c.head = c.max / 2;
	c.tail = c.max - c.head;
	c.buf = r->st->iobuf;
	snprintf(num, sizeof(num), "%d", attempt);
	if (attempt_paths(r, n, attempt, &o->out, &note) < 0 ||
	    set_var(&r->st->env, r->st->envunit, "CORRAL_UNIT", unit) < 0 ||
	    set_var(&r->st->env, r->st->envunit + 1, "CORRAL_NOTE",
	    note.data) < 0 ||
	    set_var(&r->st->env, r->st->envunit + 2, "CORRAL_ATTEMPT",
	    num) < 0) {
		corral_err_set(err, ENOMEM, "cannot run a unit");
		goto out;
	}
	c.fd = open(o->out.data, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (c.fd < 0) {
		corral_err_set(err, errno, "cannot create '%s'", o->out.data);
		goto out;
	}
	if (execute(r, &c, note.data, o, err) < 0)
		goto out;
	if (c.err) {
		corral_err_set(err, c.err, "cannot write '%s'", o->out.data);
		goto out;
	}
	rc = 0;
out:
	if (c.fd >= 0)
		close(c.fd);
	corral_buf_release(&note);
	return rc;
}

/* Whether a failed attempt may be tried again. */
static int
retryable(const struct corral_run *r, const struct outcome *o, int attempt)
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

/* Unit number i (from 0) of the slice, with its retries. */
static int
run_unit(struct corral_run *r, const char *unit, size_t i,
    struct corral_err *err)
{
	struct corral_buf first = CORRAL_BUF_INIT;
	struct outcome o;
	int attempt, final, rc = 0;

	for (attempt = 1; rc == 0 && !caught; attempt++) {
		memset(&o, 0, sizeof(o));
		corral_live_start(&r->st->live, unit, i + 1, attempt,
		    r->expect ? r->expect[i] : -1);
		if ((rc = run_attempt(r, unit, i + 1, attempt, &o, err)) < 0 ||
		    caught || (rc = clone_check(r, err)) < 0)
			goto next;
		o.renewed = rc;
		rc = 0;
		final = !retryable(r, &o, attempt);
		if (o.ok && attempt > 1)
			rc = make_flaky(&o, &first, attempt);
		else if (!o.ok && attempt == 1)
			rc = corral_buf_addstr(&first, o.note.data);
		if (rc == 0)
			rc = add_aftermath(&o);
		if (rc < 0) {
			corral_err_set(err, ENOMEM, "cannot run a unit");
			goto next;
		}
		if ((rc = append_record(r, unit, attempt, &o, final, err)) < 0)
			goto next;
		r->failed += final && !o.ok;
		corral_live_end(&r->st->live, unit, o.status, o.ms, attempt, final,
		    weight_of(r, i));
		rc = final;
next:
		corral_buf_release(&o.note);
		corral_buf_release(&o.out);
	}
	corral_buf_release(&first);
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
	for (i = r->st->rl.resumed; i < units->n && !guard_check(r) &&
	    !caught && rc == 0; i++) {
		why = time_up(r) ? NULL : refusal_of(r, units->v[i]);
		if (!time_up(r) && !why) {
			rc = run_unit(r, units->v[i], i, err);
			continue;
		}
		if ((rc = append_unrun(r, units->v[i], why, err)) == 0)
			corral_live_end(&r->st->live, units->v[i], why ? "error" :
			    "not-run", 0, why ? 1 : 0, 1, weight_of(r, i));
	}
	if (rc < 0)
		return -1;
	if (caught)
		return corral_err_set(err, 0, "stopped by %s",
		    corral_signal_name(caught, name));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Finishing                                                            */

int
corral_run_commit(struct corral_run *r, struct corral_err *err)
{
	char name[32];

	if (caught)
		return corral_err_set(err, 0, "stopped by %s",
		    corral_signal_name(caught, name));
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
	if (st) {
		watchdog_stop(r);
		if (st->guardfd >= 0)
			close(st->guardfd);
		corral_live_close(&st->live, 0);
		free(st->iobuf);
		free(st->outdir);
		free(st->noteroot);
		free(st->logsdir);
		free(st->log);
		free(st->part);
		corral_strv_release(&st->env);
		corral_strv_release(&st->cloned);
		free(st->inherited);
		corral_buf_release(&st->line);
		free(st);
	}
	free(r->clone);
	corral_strv_release(&r->refused);
	corral_strv_release(&r->refusal);
	corral_run_init(r);
	return rc;
}
