/* See LICENSE file for copyright and license details. */
/*
 * lock.c keeps runs on one CORRAL_OUT from overlapping.  The lock is
 * CORRAL_OUT/.lock held with flock(2): it belongs to an open file
 * description, so every process that inherited the descriptor holds it
 * too (the engine's sub-make, its recipes, every agent), and it vanishes
 * when the last of them dies, kill -9 included: there is never a stale
 * lock to remove.  Whoever takes it fresh knows that nothing of an older
 * run is alive, since every agent holds it.
 *
 * A directory is corral's when it holds the mark .corral-out; the mark is
 * made here, under the lock, and nothing else writes it, so no make recipe
 * that fails can take it away.  corral-clean renames CORRAL_OUT away under
 * the lock: a waiter then holds a lock on an unlinked file, which is why
 * every taker checks, once it holds the lock, that the path still names
 * the file it locked, and starts again if not.
 *
 * Nothing in CORRAL_OUT is opened through a link: the lock, the mark and
 * every other file of corral's own are opened by corral_open_state
 * (io.c), and the taker refuses a directory that holds anything but
 * regular files and directories (a link, a FIFO planted where a file of
 * the run goes), since the engine's recipes write some with the shell.
 *
 * The holder writes its pid into the file so that a waiter can name it.
 * A holder passes the lock down to the programs it execs with the
 * descriptor and __corral_lock=FD in the environment; a child that finds
 * them (the descriptor on the same file, and a lock it can take on it
 * without blocking) holds the lock already and never opens the file anew,
 * which would wait on its own parent for ever.
 */
#define _GNU_SOURCE	/* flock */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"

#define LOCK_ENV	"__corral_lock"
/* How often a waiter with a deadline tries the lock again, in ms. */
#define WAIT_POLL_MS	50

void
corral_lock_init(struct corral_lock *l)
{
	l->fd = -1;
	l->inherited = 0;
}

void
corral_lock_release(struct corral_lock *l)
{
	if (l->fd >= 0 && !l->inherited)
		close(l->fd);
	corral_lock_init(l);
}

int
corral_pid_alive(pid_t pid)
{
	char path[64], buf[512], *paren;
	ssize_t n;
	int fd;

	if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH))
		return 0;
	/*
	 * A zombie still answers kill(2).  Its state is the field after the
	 * command name, which may itself hold ')' and spaces: read it after
	 * the last ')'.  Without /proc, kill(2)'s answer stands.
	 */
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno != ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	if (!(paren = strrchr(buf, ')')) || paren[1] != ' ')
		return 1;
	return paren[2] != 'Z' && paren[2] != 'X';
}

/* Whether dir/name exists (as anything). */
static int
exists_in(const char *dir, const char *name)
{
	char *path = corral_path_join(dir, name);
	struct stat st;
	int rc;

	rc = path && lstat(path, &st) == 0;
	free(path);
	return rc;
}

/* Whether dir/name is a directory of corral's own (it holds a mark). */
static int
ours_within(const char *dir, const char *name)
{
	char *sub = corral_path_join(dir, name);
	int rc = sub && exists_in(sub, CORRAL_MARK_FILE);

	free(sub);
	return rc;
}

/*
 * Whether dir holds something besides the lock, the mark and directories
 * of corral's own (the shards of a CI merge job, unpacked from their
 * artifacts into .corral): a directory without the mark that does is
 * somebody else's.  -1 with err set when dir cannot be read.
 */
static int
holds_others(const char *dir, struct corral_err *err)
{
	struct dirent *de;
	DIR *d;
	int others = 0;

	if (!(d = opendir(dir)))
		return errno == ENOENT ? 0 :
		    corral_err_set(err, errno, "cannot open '%s'", dir);
	while (!others && (de = readdir(d)))
		others = strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, CORRAL_LOCK_FILE) &&
		    strcmp(de->d_name, CORRAL_MARK_FILE) &&
		    !ours_within(dir, de->d_name);
	closedir(d);
	return others;
}

/* Refuse a directory that exists, has no mark and holds files. */
static int
check_ours(const char *dir, struct corral_err *err)
{
	int others;

	if (exists_in(dir, CORRAL_MARK_FILE))
		return 0;
	if ((others = holds_others(dir, err)) < 0)
		return -1;
	if (others)
		return corral_err_set(err, 0, "CORRAL_OUT '%s' exists and was "
		    "not made by corral; choose another", dir);
	return 0;
}

/* The pid written in the lock file, or 0 while there is none yet. */
static pid_t
read_holder(int fd)
{
	char buf[32];
	ssize_t n;
	long pid;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	pid = strtol(buf, NULL, 10);
	return pid > 0 && pid <= INT_MAX ? (pid_t)pid : 0;
}

/* The holder's pid; it may not have written it yet, so look a few times. */
static pid_t
holder_of(int fd)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	pid_t pid;
	int i;

	for (i = 0; !(pid = read_holder(fd)) && i < 20; i++)
		nanosleep(&ts, NULL);
	return pid;
}

/*
 * flock with a wait: 0 held, 1 still busy when wait_ms ran out (0: do not
 * wait; negative: wait for ever), -1 with errno.
 */
static int
lock_fd(int fd, int op, long long wait_ms)
{
	struct timespec ts = { 0, WAIT_POLL_MS * 1000 * 1000 };
	long long end = corral_time_ms() + wait_ms;

	if (wait_ms < 0) {
		while (flock(fd, op) < 0)
			if (errno != EINTR)
				return -1;
		return 0;
	}
	for (;;) {
		if (flock(fd, op | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (corral_time_ms() >= end)
			return 1;
		nanosleep(&ts, NULL);
	}
}

/* Whether fd is still the file path names. */
static int
same_file(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && lstat(path, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Create dir/name holding text (which may be empty). */
static int
create_in(const char *dir, const char *name, const char *text,
    struct corral_err *err)
{
	size_t n = strlen(text);
	char *path;
	int fd, rc = 0;

	if (!(path = corral_path_join(dir, name)))
		return corral_err_set(err, ENOMEM, "lock");
	fd = corral_open_state(path, O_WRONLY | O_CREAT | O_TRUNC, 0666, err);
	if (fd < 0)
		rc = -1;
	else if (n && write(fd, text, n) != (ssize_t)n)
		rc = corral_err_set(err, errno, "cannot create '%s'", path);
	if (fd >= 0)
		close(fd);
	free(path);
	return rc;
}

/* How deep the check of what CORRAL_OUT holds looks (rerun/N/slices is 3). */
#define PLANT_DEPTH	8

static int planted_under(int dfd, const char *path, int depth,
    struct corral_err *err);

/*
 * Whether entry name of the directory dfd (named path) is something
 * planted: -1 with err set when it is not a regular file nor a
 * directory (io.c's wording), else whatever looking into it says.
 */
static int
planted_entry(int dfd, const char *path, const char *name, int depth,
    struct corral_err *err)
{
	struct stat st;
	char *sub;
	int fd, rc = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 :
		    corral_err_set(err, errno, "cannot stat '%s/%s'", path, name);
	if (!(sub = corral_path_join(path, name)))
		return corral_err_set(err, ENOMEM, "lock");
	if (S_ISDIR(st.st_mode) && depth < PLANT_DEPTH &&
	    !(depth == 0 && !strcmp(name, "work")) &&
	    !exists_in(sub, CORRAL_MARK_FILE)) {
		if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) < 0)
			rc = corral_err_set(err, errno, "cannot open '%s'", sub);
		else
			rc = planted_under(fd, sub, depth + 1, err);
	} else if (!S_ISDIR(st.st_mode)) {
		rc = corral_state_check(sub, err);
	}
	free(sub);
	return rc;
}

/* planted_entry of every entry of dfd (closed here). */
static int
planted_under(int dfd, const char *path, int depth, struct corral_err *err)
{
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (!(d = fdopendir(dfd))) {
		close(dfd);
		return corral_err_set(err, errno, "cannot open '%s'", path);
	}
	/* A regular file, as readdir says, needs no stat (thousands of logs). */
	while (rc == 0 && (de = readdir(d)))
		if (de->d_type != DT_REG && strcmp(de->d_name, ".") &&
		    strcmp(de->d_name, ".."))
			rc = planted_entry(dirfd(d), path, de->d_name, depth,
			    err);
	closedir(d);
	return rc;
}

/*
 * Refuse, by name, anything in dir that is not a regular file or a
 * directory: a symbolic link, a FIFO, a device, a socket.  Corral makes
 * none there, and the engine's recipes write some of its files with the
 * shell's '>', which would follow a link and wait on a FIFO; the
 * programs open theirs with corral_open_state.  The clones of a killed
 * run (work, removed whole) and directories of other runs (the shards,
 * with a mark of their own) are not looked into.
 */
static int
check_planted(const char *dir, struct corral_err *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? 0 :
		    corral_err_set(err, errno, "cannot open '%s'", dir);
	return planted_under(fd, dir, 0, err);
}

/*
 * Under the lock: make the mark if the directory is new (and then a
 * .gitignore of everything, as pytest's cache has, so that git status
 * stays clean), write our pid.
 */
static int
settle(int fd, const char *dir, int flags, struct corral_err *err)
{
	char pid[32];
	int n;

	if (check_ours(dir, err) < 0 || check_planted(dir, err) < 0)
		return -1;
	if ((flags & CORRAL_LOCK_CREATE) && !exists_in(dir, CORRAL_MARK_FILE) &&
	    (create_in(dir, CORRAL_MARK_FILE, "", err) < 0 ||
	    create_in(dir, ".gitignore", "*\n", err) < 0))
		return -1;
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (pwrite(fd, pid, (size_t)n, 0) != n || ftruncate(fd, n) < 0)
		return corral_err_set(err, errno, "cannot write the lock of "
		    "'%s'", dir);
	return 0;
}

/*
 * One try: open the lock file and lock it.  0 held, 1 busy (the wait ran
 * out), 2 the file went away meanwhile (try again), -1 err.
 */
static int
try_once(struct corral_lock *l, const char *dir, const char *path,
    int flags, long long wait_ms, pid_t *holder, struct corral_err *err)
{
	int op = (flags & CORRAL_LOCK_SHARED) ? LOCK_SH : LOCK_EX;
	int fd, rc;

	/* CORRAL_OUT's own files away from the project's (io.c). */
	if ((flags & CORRAL_LOCK_CREATE) && corral_mkdir_top(dir, 0777, err) < 0)
		return -1;
	if (check_ours(dir, err) < 0)
		return -1;
	/* Never through a link, nor on anything but a file (io.c). */
	fd = corral_open_state(path, O_RDWR | O_CREAT, 0666, err);
	if (fd < 0 && err->errnum == ENOENT && (flags & CORRAL_LOCK_CREATE))
		return 2;	/* removed between the mkdir and the open */
	if (fd < 0)
		return -1;
	if ((rc = lock_fd(fd, op, 0)) == 1) {
		*holder = holder_of(fd);
		rc = wait_ms ? lock_fd(fd, op, wait_ms) : 1;
	}
	if (rc == 0 && !same_file(fd, path))
		rc = 2;
	if (rc == 0 && settle(fd, dir, flags, err) < 0)
		rc = -1;
	else if (rc < 0)
		corral_err_set(err, errno, "cannot lock '%s'", path);
	if (rc != 0)
		close(fd);
	else
		l->fd = fd;
	return rc;
}

int
corral_lock_take(struct corral_lock *l, const char *dir, int flags,
    long long wait_ms, pid_t *holder, struct corral_err *err)
{
	char *path = corral_path_join(dir, CORRAL_LOCK_FILE);
	int rc;

	corral_lock_init(l);
	*holder = 0;
	if (!path)
		return corral_err_set(err, ENOMEM, "lock");
	while ((rc = try_once(l, dir, path, flags, wait_ms, holder, err)) == 2)
		;
	free(path);
	return rc;
}

/* The descriptor the environment passes down, or -1. */
static int
env_fd(void)
{
	const char *s = getenv(LOCK_ENV);
	char *end;
	long fd;

	if (!s || !*s)
		return -1;
	errno = 0;
	fd = strtol(s, &end, 10);
	return errno || *end || fd < 0 || fd > INT_MAX ? -1 : (int)fd;
}

int
corral_lock_inherit(struct corral_lock *l, const char *dir)
{
	int fd = env_fd(), ok;
	char *path;

	corral_lock_init(l);
	if (fd < 0 || !(path = corral_path_join(dir, CORRAL_LOCK_FILE)))
		return 0;
	/*
	 * Locking a description that holds the lock already changes nothing;
	 * one that another process holds the lock through would block.
	 */
	ok = same_file(fd, path) && flock(fd, LOCK_EX | LOCK_NB) == 0;
	free(path);
	if (ok) {
		l->fd = fd;
		l->inherited = 1;
	}
	return ok;
}

int
corral_lock_pass(struct corral_lock *l, struct corral_err *err)
{
	char fd[32];

	snprintf(fd, sizeof(fd), "%d", l->fd);
	if (fcntl(l->fd, F_SETFD, 0) < 0 || setenv(LOCK_ENV, fd, 1) < 0)
		return corral_err_set(err, errno, "cannot pass the lock on");
	return 0;
}

void
corral_lock_keep(struct corral_lock *l)
{
	struct stat st;
	int fd = l->fd >= 0 ? l->fd : env_fd();

	/* A lock passed down for another directory is not passed on either. */
	if (fd >= 0 && fstat(fd, &st) == 0)
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
}

char *
corral_lock_find(const char *path)
{
	char cwd[PATH_MAX], *p, *slash;
	size_t len;

	if (*path == '/')
		p = strdup(path);
	else if (getcwd(cwd, sizeof(cwd)))
		p = corral_path_join(cwd, path);
	else
		return NULL;
	while (p) {
		len = strlen(p);
		while (len > 1 && p[len - 1] == '/')
			p[--len] = '\0';
		if (exists_in(p, CORRAL_MARK_FILE))
			return p;
		if (!(slash = strrchr(p, '/')) || len <= 1)
			break;
		slash[slash == p] = '\0';
	}
	free(p);
	return NULL;
}
