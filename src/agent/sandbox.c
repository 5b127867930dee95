/* See LICENSE file for copyright and license details. */
/*
 * sandbox.c puts a unit inside bubblewrap (bwrap(1)) when the run asks
 * for it: the whole file system read-only, the unit's clone writable and
 * its working directory, a private /tmp, a /dev and a /proc of its own,
 * CORRAL_OUT (and any other directory of the agent's) under an empty
 * tmpfs, no network but a loopback of its own, System V IPC, a host name
 * and a cgroup root of its own, and a PID namespace of its own that dies
 * with bwrap, so nothing the unit starts outlives it.  As root too: no
 * capability (so no mount, umount or remount undoes any of that), a user
 * namespace (and so keyrings) of its own where the kernel allows one, and
 * no controlling terminal (a session of its own), so no keystroke pushed
 * into the user's.  Everything else about a unit stays as it is: the
 * same limits, output pipe and environment, bwrap being the leader of
 * the unit's group and the unit's shell, in bwrap's new session, its
 * grandchild.  Here: the command line, a probe
 * that the sandbox works before any unit runs, and the few places where
 * bwrap in between changes what the agent sees.
 */
#define _GNU_SOURCE	/* NSIG */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

void
corral_sandbox_init(struct corral_sandbox *sb)
{
	memset(sb, 0, sizeof(*sb));
}

void
corral_sandbox_release(struct corral_sandbox *sb)
{
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

int
corral_sandbox_argv(const struct corral_sandbox *sb, const char *dir,
    const char *note, const char *shell, const char *cmd,
    struct corral_strv *argv)
{
	if (add_isolation(argv, sb) < 0 ||
	    add(argv, "--bind", dir, dir) < 0 ||
	    (note && add(argv, "--bind", note, note) < 0) ||
	    add_sealed(argv, sb) < 0 || add_user(argv, sb) < 0 ||
	    add(argv, "--chdir", dir, "--") < 0 ||
	    add(argv, shell, "-c", cmd) < 0)
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
	if (corral_spawn_run(&s, &wstatus, &serr) < 0) {
		if (serr.errnum == ENOENT)
			return corral_err_set(err, 0, "sandbox 'bwrap' asked "
			    "for, but there is no '%s' on PATH", BWRAP);
		return corral_err_set(err, serr.errnum, "sandbox 'bwrap' "
		    "asked for, but %s", serr.msg);
	}
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
/* What bwrap in between changes                                       */

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
 * bwrap's init, the leader's one child: with --new-session it leads the
 * session and group the unit's shell runs in.  Its pid, or 0.
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
 * Signal the members of pgid but its leader, and of the group of bwrap's
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
