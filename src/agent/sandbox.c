/* See LICENSE file for copyright and license details. */
/*
 * sandbox.c puts a unit inside a sandbox when the run asks for it: the
 * whole file system read-only, the unit's clone writable and its working
 * directory, a private /tmp and /dev/shm, a /dev and a /proc of its own,
 * CORRAL_OUT (and any other directory of the agent's) under an empty
 * tmpfs, no network but a loopback, System V IPC, a host name and a
 * cgroup root away from the machine's, and a PID namespace of its own
 * that dies with the unit's shell, so nothing the unit starts outlives
 * it.  As root too: no capability (so no mount, umount or remount undoes
 * any of that), a user namespace (and so keyrings) of the slice's where
 * the kernel allows one, and no controlling terminal (a session of its
 * own), so no keystroke pushed into the user's.
 *
 * bubblewrap (bwrap(1)) makes the sandbox once a slice, not once a unit:
 * a bwrap per unit cost about 4 ms of exec, namespaces and some 50
 * mounts each time (doc/measurements.md).  At the slice's start a bwrap
 * with corral's options and the user's (the holder) sets up the mount,
 * user, network, UTS and cgroup namespaces and stops; the agent keeps
 * them open.  Each unit is then forked straight into them (no exec in
 * between) and takes what must be its own alone: new mount, PID and IPC
 * namespaces, a fresh tmpfs on /tmp, /dev/shm and each hidden directory
 * (so nothing one unit leaves there reaches the next), a fresh /proc,
 * its note bound in, every capability dropped.  Everything else about a
 * unit stays as it is: the same limits, output pipe and environment, the
 * forked leader of the unit's group waiting for the PID namespace's init,
 * in a session of its own, whose child is the unit's shell.  Here: the
 * holder, a unit's way in, the probe of corral-run-slice -n (that bwrap
 * works), and the few places where the sandbox in between changes what
 * the agent sees.
 */
#define _GNU_SOURCE	/* NSIG, setns, unshare, CLONE_NEW* */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "agent/agent.h"

/* The program, looked up on PATH, the same for the probe and the units. */
#define BWRAP		"bwrap"
/* The most processes of one group signalled one by one. */
#define MEMBERS_MAX	4096
/* How many times a group is looked at for members forked meanwhile. */
#define PASSES_MAX	8
/*
 * Where the holder binds the agent's directory of notes: under its /tmp,
 * which each unit covers with its own before its command runs.
 */
#define STAGE		"/tmp/.corral-notes"
/* What the holder's command says once bwrap has set everything up. */
#define READY		"ready\n"
/* The most the holder may say before it is ready (bwrap's complaint). */
#define SAID_MAX	4096

/*
 * The holder's namespaces a unit joins, in the order it joins them: the
 * user namespace that owns the others first (bwrap, unprivileged, makes
 * one where the user is root, for /dev/pts), the one bwrap's init is in
 * (there the user is himself again) last, once the unit's mounts are
 * made.  Each user namespace only when it is not the one before.
 */
enum { NS_OWNER, NS_MNT, NS_NET, NS_UTS, NS_CGROUP, NS_USER };
static const struct {
	const char *name;
	int type;
} joined[CORRAL_SANDBOX_NS] = {
	{ "user", CLONE_NEWUSER }, { "mnt", CLONE_NEWNS },
	{ "net", CLONE_NEWNET }, { "uts", CLONE_NEWUTS },
	{ "cgroup", CLONE_NEWCGROUP }, { "user", CLONE_NEWUSER },
};

void
corral_sandbox_init(struct corral_sandbox *sb)
{
	size_t i;

	memset(sb, 0, sizeof(*sb));
	for (i = 0; i < CORRAL_SANDBOX_NS; i++)
		sb->ns[i] = -1;
}

void
corral_sandbox_release(struct corral_sandbox *sb)
{
	size_t i;

	for (i = 0; i < CORRAL_SANDBOX_NS; i++)
		if (sb->ns[i] >= 0)
			close(sb->ns[i]);
	free(sb->clone);
	free(sb->noteroot);
	corral_strv_release(&sb->args);
	corral_strv_release(&sb->hide);
	corral_sandbox_init(sb);
}

int
corral_sandbox_parse(const char *name, int *on, struct corral_err *err)
{
	if (!strcmp(name, "none") || !*name)
		*on = 0;
	else if (!strcmp(name, "bwrap"))
		*on = 1;
	else
		return corral_err_set(err, 0, "sandbox '%s' is not 'none' or "
		    "'bwrap'", name);
	return 0;
}

/* ------------------------------------------------------------------ */
/* The command line                                                    */

static int
add(struct corral_strv *v, const char *a, const char *b, const char *c)
{
	if (corral_strv_add(v, a) < 0 || (b && corral_strv_add(v, b) < 0) ||
	    (c && corral_strv_add(v, c) < 0))
		return -1;
	return 0;
}

/*
 * What every sandbox is, the probe's included.  The order matters: bwrap
 * mounts in it, so the tmpfs over each hidden directory comes before the
 * clone is bound back in (a clone under CORRAL_OUT/work then shows alone
 * in an empty CORRAL_OUT).
 */
static int
add_isolation(struct corral_strv *v, const struct corral_sandbox *sb)
{
	size_t i;

	if (add(v, BWRAP, "--die-with-parent", "--new-session") < 0 ||
	    add(v, "--unshare-pid", "--unshare-net", "--unshare-ipc") < 0 ||
	    add(v, "--unshare-uts", "--unshare-user-try", NULL) < 0 ||
	    add(v, "--unshare-cgroup-try", "--cap-drop", "ALL") < 0 ||
	    add(v, "--ro-bind", "/", "/") < 0 ||
	    add(v, "--dev", "/dev", NULL) < 0 ||
	    add(v, "--proc", "/proc", NULL) < 0 ||
	    add(v, "--tmpfs", "/tmp", NULL) < 0 ||
	    add(v, "--setenv", "TMPDIR", "/tmp") < 0)
		return -1;
	for (i = 0; i < sb->hide.n; i++)
		if (add(v, "--tmpfs", sb->hide.v[i], NULL) < 0)
			return -1;
	return 0;
}

/*
 * Each hidden directory read-only again once the clone and the note are
 * bound in it (mounts of their own, which stay writable): a unit writes
 * nothing there, not even to a tmpfs of its own.
 */
static int
add_sealed(struct corral_strv *v, const struct corral_sandbox *sb)
{
	size_t i;

	for (i = 0; i < sb->hide.n; i++)
		if (add(v, "--remount-ro", sb->hide.v[i], NULL) < 0)
			return -1;
	return 0;
}

/* The user's own options, last before the command: theirs win. */
static int
add_user(struct corral_strv *v, const struct corral_sandbox *sb)
{
	size_t i;

	for (i = 0; i < sb->args.n; i++)
		if (corral_strv_add(v, sb->args.v[i]) < 0)
			return -1;
	return 0;
}

/* Whether dir is hidden already, as or under a hidden directory. */
static int
hidden(const struct corral_sandbox *sb, const char *dir)
{
	size_t i, n;

	for (i = 0; i < sb->hide.n; i++) {
		n = strlen(sb->hide.v[i]);
		if (!strncmp(dir, sb->hide.v[i], n) &&
		    (dir[n] == '\0' || dir[n] == '/'))
			return 1;
	}
	return 0;
}

int
corral_sandbox_hide(struct corral_sandbox *sb, const char *dir)
{
	char *abs = realpath(dir, NULL);
	int rc = 0;

	if (!abs)
		return errno == ENOENT ? 0 : -1;
	if (strcmp(abs, "/") && !hidden(sb, abs))
		rc = corral_strv_add(&sb->hide, abs);
	free(abs);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Whether it works                                                    */

/* ": " and the first line of out, at most a quotable length. */
static int
add_first_line(struct corral_buf *b, const struct corral_buf *out)
{
	size_t n;

	if (!out->data || !out->len)
		return 0;
	n = strcspn(out->data, "\n");
	return corral_buf_addstr(b, ": ") | corral_add_excerpt(b, out->data,
	    n, 200);
}

/* Say in err how bwrap failed: its status, the first line it printed. */
static int
say_failed(int wstatus, const char *outfile, struct corral_err *err)
{
	struct corral_buf said = CORRAL_BUF_INIT, why = CORRAL_BUF_INIT;
	struct corral_err rerr;
	int rc;

	(void)corral_read_file(outfile, &said, &rerr);
	if (corral_proc_describe(&why, wstatus, 0) < 0 ||
	    add_first_line(&why, &said) < 0)
		rc = corral_err_set(err, ENOMEM, "cannot check the sandbox");
	else
		rc = corral_err_set(err, 0, "sandbox 'bwrap' asked for, but it "
		    "does not work here (%s)", why.data);
	corral_buf_release(&said);
	corral_buf_release(&why);
	return rc;
}

/* Say in err why bwrap did not start: not on PATH, or what (errnum). */
static int
cannot_start(int errnum, const char *what, struct corral_err *err)
{
	if (errnum == ENOENT)
		return corral_err_set(err, 0, "sandbox 'bwrap' asked for, but "
		    "there is no '%s' on PATH", BWRAP);
	return corral_err_set(err, errnum, "sandbox 'bwrap' asked for, but "
	    "%s", what);
}

/* Run argv, its output in outfile; 0 when it exited 0, else -1 with err. */
static int
probe_run(const struct corral_strv *argv, const char *outfile,
    struct corral_err *err)
{
	struct corral_spawn s = { NULL, NULL, NULL, NULL, NULL };
	struct corral_err serr;
	int wstatus;

	s.argv = (const char *const *)argv->v;
	s.out = outfile;
	if (corral_spawn_run(&s, &wstatus, &serr) < 0)
		return cannot_start(serr.errnum, serr.msg, err);
	if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)
		return 0;
	return say_failed(wstatus, outfile, err);
}

int
corral_sandbox_probe(const struct corral_sandbox *sb, struct corral_err *err)
{
	struct corral_strv argv = CORRAL_STRV_INIT;
	struct corral_buf dir = CORRAL_BUF_INIT, out = CORRAL_BUF_INIT;
	const char *root = getenv("TMPDIR");
	int rc;

	if (corral_buf_addf(&dir, "%s/corral-probe.XXXXXX", root && *root ?
	    root : "/tmp") < 0)
		return corral_err_set(err, ENOMEM, "cannot check the sandbox");
	if (!mkdtemp(dir.data)) {
		rc = corral_err_set(err, errno, "cannot create '%s'", dir.data);
		corral_buf_release(&dir);
		return rc;
	}
	if (add_isolation(&argv, sb) < 0 ||
	    add(&argv, "--bind", dir.data, dir.data) < 0 ||
	    add_user(&argv, sb) < 0 ||
	    add(&argv, "--chdir", dir.data, "--") < 0 ||
	    add(&argv, "/bin/sh", "-c", ": > probe") < 0 ||
	    corral_buf_addf(&out, "%s/out", dir.data) < 0)
		rc = corral_err_set(err, ENOMEM, "cannot check the sandbox");
	else
		rc = probe_run(&argv, out.data, err);
	(void)corral_remove_tree(dir.data, NULL);
	corral_buf_release(&out);
	corral_buf_release(&dir);
	corral_strv_release(&argv);
	return rc;
}

/* ------------------------------------------------------------------ */
/* What the sandbox in between changes                                 */

int
corral_sandbox_note(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0666);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

void
corral_sandbox_note_done(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
		(void)unlink(path);
}

int
corral_sandbox_status(int wstatus)
{
	int code;

	if (!WIFEXITED(wstatus))
		return wstatus;
	code = WEXITSTATUS(wstatus);
	if (code > 128 && code - 128 < NSIG)
		return code - 128;	/* as wait(2) says "killed by N" */
	return wstatus;
}

/* Whether pid is in set[0..n). */
static int
has(const pid_t *set, size_t n, pid_t pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (set[i] == pid)
			return 1;
	return 0;
}

/*
 * The init under leader pgid, its one child: it leads the session and
 * group the unit's shell runs in (bwrap's init with --new-session does the
 * same, which the holder's end relies on).  Its pid, or 0.
 */
static pid_t
sandbox_init(pid_t pgid)
{
	long ppid, pgrp;
	pid_t pid, init = 0;
	DIR *d;

	if (!(d = opendir("/proc")))
		return 0;
	while (corral_proc_next(d, &pid, &ppid, &pgrp))
		if (ppid == pgid && pgrp == pid)
			init = pid;
	closedir(d);
	return init;
}

/*
 * Signal the members of pgid but its leader, and of the group of the
 * init, not in done; how many.
 */
static long
signal_pass(pid_t pgid, pid_t init, int sig, pid_t *done, size_t *ndone)
{
	long ppid, pgrp, n = 0;
	pid_t pid;
	DIR *d;

	if (!(d = opendir("/proc")))
		return -1;
	while (*ndone < MEMBERS_MAX && corral_proc_next(d, &pid, &ppid, &pgrp))
		if ((pgrp == pgid || (init > 0 && pgrp == init)) &&
		    pid != pgid && !has(done, *ndone, pid) &&
		    kill(pid, sig) == 0) {
			done[(*ndone)++] = pid;
			n++;
		}
	closedir(d);
	return n;
}

int
corral_sandbox_kill(pid_t pgid, int sig)
{
	pid_t *done, init = sandbox_init(pgid);
	size_t ndone = 0;
	int pass;
	long n;

	if (!(done = malloc(MEMBERS_MAX * sizeof(*done))))
		return -1;
	for (pass = 0; pass < PASSES_MAX; pass++)
		if ((n = signal_pass(pgid, init, sig, done, &ndone)) <= 0)
			break;
	free(done);
	return n < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* The holder                                                          */

/*
 * Read what the holder says on fd until it is ready or gone: 1 when it
 * said READY, 0 when it ended first (said then holds its complaint).
 */
static int
holder_ready(int fd, struct corral_buf *said)
{
	char buf[512];
	ssize_t n;

	while (said->len < SAID_MAX) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		if (corral_buf_add(said, buf, (size_t)n) < 0)
			return 0;
		if (said->len >= strlen(READY) && !memcmp(said->data +
		    said->len - strlen(READY), READY, strlen(READY)))
			return 1;
	}
	return 0;
}

/* Whether the namespaces fd and path (or fd2, with path NULL) are one. */
static int
same_ns(int fd, const char *path, int fd2)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && (path ? stat(path, &b) : fstat(fd2,
	    &b)) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

/* Forget ns[i]: it is the user namespace the unit is in by then. */
static void
drop_ns(struct corral_sandbox *sb, int i)
{
	close(sb->ns[i]);
	sb->ns[i] = -1;
}

/* Open init's namespaces, and the user namespace that owns its mounts. */
static int
hold_namespaces(struct corral_sandbox *sb, pid_t init)
{
	char path[64];
	size_t i;

	for (i = NS_MNT; i < CORRAL_SANDBOX_NS; i++) {
		snprintf(path, sizeof(path), "/proc/%ld/ns/%s", (long)init,
		    joined[i].name);
		if ((sb->ns[i] = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return -1;
	}
	/* EPERM: the owner is an ancestor of ours, that is ours. */
	if ((sb->ns[NS_OWNER] = ioctl(sb->ns[NS_MNT], NS_GET_USERNS)) < 0 &&
	    errno != EPERM)
		return -1;
	if (sb->ns[NS_OWNER] >= 0 && same_ns(sb->ns[NS_OWNER],
	    "/proc/self/ns/user", -1))
		drop_ns(sb, NS_OWNER);
	if (sb->ns[NS_OWNER] >= 0 ? same_ns(sb->ns[NS_USER], NULL,
	    sb->ns[NS_OWNER]) : same_ns(sb->ns[NS_USER],
	    "/proc/self/ns/user", -1))
		drop_ns(sb, NS_USER);
	return 0;
}

/* The holder's command line: the sandbox, the clone and notes bound. */
static int
holder_argv(const struct corral_sandbox *sb, struct corral_strv *argv)
{
	if (add_isolation(argv, sb) < 0 ||
	    add(argv, "--bind", sb->clone, sb->clone) < 0 ||
	    add(argv, "--bind", sb->noteroot, STAGE) < 0 ||
	    add_sealed(argv, sb) < 0 || add_user(argv, sb) < 0 ||
	    add(argv, "--", "/bin/sh", "-c") < 0 ||
	    add(argv, "echo ready; exec sleep 86400", NULL, NULL) < 0)
		return -1;
	return 0;
}

static pid_t sandbox_init(pid_t pgid);

/*
 * Start the holder on its pipe (fd[1] its output), wait for it to be
 * ready, keep its namespaces, then end it.  0, or -1 with err.
 */
static int
hold(struct corral_sandbox *sb, const struct corral_strv *argv, int fd[2],
    struct corral_err *err)
{
	struct corral_proc p = CORRAL_PROC_INIT;
	struct corral_buf said = CORRAL_BUF_INIT, why = CORRAL_BUF_INIT;
	pid_t pid, init = 0;
	int e, ready, wstatus = 0, rc = 0;

	p.path = argv->v[0];
	p.argv = argv->v;
	p.outfd = p.errfd = fd[1];
	p.group = 1;
	e = corral_proc_start(&p, &pid);
	close(fd[1]);
	if (e) {
		close(fd[0]);
		return cannot_start(e, "it cannot start", err);
	}
	ready = holder_ready(fd[0], &said);
	if (ready && ((init = sandbox_init(pid)) <= 0 ||
	    hold_namespaces(sb, init) < 0))
		rc = corral_err_set(err, errno, "cannot open the sandbox's "
		    "namespaces");
	if (init > 0)
		(void)kill(init, SIGKILL);	/* its PID namespace with it */
	else
		(void)kill(-pid, SIGKILL);
	close(fd[0]);
	(void)corral_proc_reap(pid, &wstatus);
	if (!ready && corral_proc_describe(&why, wstatus, 0) == 0 &&
	    add_first_line(&why, &said) == 0)
		rc = corral_err_set(err, 0, "sandbox 'bwrap' asked for, but it "
		    "does not work here (%s)", why.data);
	else if (!ready)
		rc = corral_err_set(err, ENOMEM, "cannot start the sandbox");
	corral_buf_release(&said);
	corral_buf_release(&why);
	return rc;
}

int
corral_sandbox_open(struct corral_sandbox *sb, const char *clone,
    const char *noteroot, struct corral_err *err)
{
	struct corral_strv argv = CORRAL_STRV_INIT;
	int fd[2], rc;

	if (!(sb->clone = realpath(clone, NULL)) ||
	    !(sb->noteroot = realpath(noteroot, NULL)))
		return corral_err_set(err, errno, "cannot open '%s'",
		    sb->clone ? noteroot : clone);
	if (holder_argv(sb, &argv) < 0)
		rc = corral_err_set(err, ENOMEM, "cannot start the sandbox");
	else if (pipe2(fd, O_CLOEXEC) < 0)
		rc = corral_err_set(err, errno, "cannot start the sandbox");
	else
		rc = hold(sb, &argv, fd, err);
	corral_strv_release(&argv);
	return rc;
}

/* ------------------------------------------------------------------ */
/* A unit's way in                                                     */
/*
 * All of it runs in a forked child of the agent, before the exec: it may
 * allocate and fail, and says why by an error number.
 */

/* Whether path is dir or under it. */
static int
under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* Whether the unit's own tmpfs mounts cover path (and so must rebind). */
static int
covered(const struct corral_sandbox *sb, const char *path)
{
	size_t i;

	if (under(path, "/tmp"))
		return 1;
	for (i = 0; i < sb->hide.n; i++)
		if (under(path, sb->hide.v[i]))
			return 1;
	return 0;
}

/* mkdir -p of path's directories; of path too when last. */
static int
make_dirs(const char *path, int last)
{
	char buf[PATH_MAX], *p;

	if (strlen(path) >= sizeof(buf))
		return ENAMETOOLONG;
	strcpy(buf, path);
	for (p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0755) < 0 && errno != EEXIST)
				return errno;
			*p = '/';
		}
	if (last && mkdir(buf, 0755) < 0 && errno != EEXIST)
		return errno;
	return 0;
}

/* Bind what fd is (in this mount namespace) on path.  0, or errno. */
static int
bind_fd(int fd, const char *path)
{
	char src[64];

	snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
	return mount(src, path, NULL, MS_BIND | MS_REC, NULL) < 0 ? errno : 0;
}

/* A fresh tmpfs on dir, one that exists. */
static int
fresh_tmpfs(const char *dir, const char *mode)
{
	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, mode) < 0)
		return errno;
	return 0;
}

/* Bind path read-only on itself, where it exists (as bwrap's --proc). */
static int
cover_ro(const char *path)
{
	unsigned long ro = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID |
	    MS_NODEV | MS_NOEXEC;

	if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0)
		return errno == ENOENT ? 0 : errno;
	return mount(NULL, path, NULL, ro, NULL) < 0 ? errno : 0;
}

/*
 * The unit's own /proc, as bwrap makes one: what writes to the kernel
 * read-only.
 */
static int
own_proc(void)
{
	static const char *const ro[] = { "/proc/sys", "/proc/sysrq-trigger",
	    "/proc/irq", "/proc/bus" };
	size_t i;
	int e;

	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    NULL) < 0)
		return errno;
	for (i = 0; i < sizeof(ro) / sizeof(ro[0]); i++)
		if ((e = cover_ro(ro[i])))
			return e;
	return 0;
}

/* The note, from the holder's STAGE, bound at its own path. */
static int
bind_note(int fd, const char *note)
{
	int e, f;

	if ((e = make_dirs(note, 0)))
		return e;
	if ((f = open(note, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
		return errno;
	close(f);
	return bind_fd(fd, note);
}

/* note as the holder's STAGE has it, opened O_PATH; -1 if not ours. */
static int
open_note(const struct corral_sandbox *sb, const char *note)
{
	char path[PATH_MAX];
	size_t n = strlen(sb->noteroot);

	if (strncmp(note, sb->noteroot, n) || note[n] != '/')
		return -1;
	if ((size_t)snprintf(path, sizeof(path), "%s%s", STAGE, note + n) >=
	    sizeof(path))
		return -1;
	return open(path, O_PATH | O_CLOEXEC);
}

/*
 * Everything of the mount namespace that is the unit's own: nothing of
 * it reaches the holder's or another unit's, a fresh /proc (for the
 * PID namespace and for /proc/self/fd below), fresh tmpfs on /tmp,
 * /dev/shm and the hidden directories, the clone and the note bound back
 * in where those cover them, the hidden ones read-only again.
 */
static int
own_mounts(const struct corral_sandbox *sb, const char *note)
{
	int clonefd = -1, notefd = -1, e;
	struct stat st;
	size_t i;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return errno;
	if ((e = own_proc()))
		return e;
	if ((clonefd = open(sb->clone, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (note && (notefd = open_note(sb, note)) < 0))
		return errno ? errno : EINVAL;
	if ((e = fresh_tmpfs("/tmp", "mode=1777")) ||
	    (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
	    (e = fresh_tmpfs("/dev/shm", "mode=1777"))))
		return e;
	for (i = 0; i < sb->hide.n; i++)
		if (!under(sb->hide.v[i], "/tmp") &&
		    (e = fresh_tmpfs(sb->hide.v[i], "mode=0755")))
			return e;
	if (covered(sb, sb->clone) && ((e = make_dirs(sb->clone, 1)) ||
	    (e = bind_fd(clonefd, sb->clone))))
		return e;
	if (notefd >= 0 && (e = bind_note(notefd, note)))
		return e;
	for (i = 0; i < sb->hide.n; i++)
		if (!under(sb->hide.v[i], "/tmp") && mount(NULL,
		    sb->hide.v[i], NULL, MS_BIND | MS_REMOUNT | MS_RDONLY |
		    MS_NOSUID | MS_NODEV, NULL) < 0)
			return errno;
	close(clonefd);
	if (notefd >= 0)
		close(notefd);
	return 0;
}

/* Every capability gone, for good: the bounding set, and no new ones. */
static int
drop_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int cap;

	for (cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return errno;
	(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return errno;
	return 0;
}

/* The exit status that says how a child ended, as bwrap's init says it. */
static int
exit_code(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	return 128 + WTERMSIG(wstatus);
}

/* Wait for child, reaping what else comes (an init's orphans); exit. */
static void __attribute__((noreturn))
wait_exit(pid_t child)
{
	int wstatus;
	pid_t w;

	for (;;) {
		w = wait(&wstatus);
		if (w == child)
			corral_child_exit(exit_code(wstatus));
		if (w < 0 && errno != EINTR)
			corral_child_exit(127);
	}
}

/*
 * The init of the unit's PID namespace: dies with the leader (alive, the
 * read end of a pipe only the leader holds open), leads a session of its
 * own, makes the unit's mounts, drops every capability, then forks the
 * unit's shell (the one process that returns 0) and waits for it.
 */
static int
unit_init(const struct corral_sandbox_unit *u, int errfd, int alive)
{
	struct pollfd pf = { alive, POLLIN, 0 };
	pid_t sh;
	int e;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || poll(&pf, 1, 0) != 0)
		corral_child_exit(127);	/* the leader is gone already */
	close(alive);
	if (setsid() < 0)
		return errno;
	if ((e = own_mounts(u->sb, u->note)))
		return e;
	if (u->sb->ns[NS_USER] >= 0 && setns(u->sb->ns[NS_USER],
	    CLONE_NEWUSER) < 0)
		return errno;
	if (chdir(u->sb->clone) < 0)
		return errno;
	if ((e = drop_caps()))
		return e;
	if ((sh = fork()) < 0)
		return errno;
	if (sh == 0)
		return 0;
	(void)syscall(SYS_close_range, 0U, ~0U, 0U);
	(void)errfd;
	wait_exit(sh);
}

int
corral_sandbox_enter(const void *arg, int errfd)
{
	const struct corral_sandbox_unit *u = arg;
	sigset_t none;
	int alive[2];
	pid_t init;
	size_t i;

	for (i = NS_OWNER; i < NS_USER; i++)
		if (u->sb->ns[i] >= 0 && setns(u->sb->ns[i], joined[i].type) < 0)
			return errno;
	if (unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC) < 0 ||
	    pipe2(alive, O_CLOEXEC) < 0)
		return errno;
	if ((init = fork()) < 0)
		return errno;
	if (init == 0) {
		close(alive[1]);
		return unit_init(u, errfd, alive[0]);
	}
	/*
	 * The leader: nothing of the agent's but the pipe, the signals the
	 * fork blocked back (one the agent forwards ends it, and the unit's
	 * sandbox with it, as it ended bwrap), then wait.
	 */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (alive[1] > 0)
		(void)syscall(SYS_close_range, 0U, (unsigned)alive[1] - 1, 0U);
	(void)syscall(SYS_close_range, (unsigned)alive[1] + 1, ~0U, 0U);
	wait_exit(init);
}
