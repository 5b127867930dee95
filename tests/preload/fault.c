/* See LICENSE file for copyright and license details. */
/*
 * fault.c -- an LD_PRELOAD library for the tests: it stands for a crash
 * or for a person at a chosen moment of a program that writes into a
 * tree, with nothing in the program itself knowing (no test-only
 * setting is read by corral).  test_helper.bash builds it (fault_lib).
 *
 * An event is a call that changes something under $FAULT_ROOT (an
 * absolute, physical path): open with O_CREAT or O_TRUNC, write,
 * fsync, fchmod, chmod, rename, unlink, unlinkat, mkdir, rmdir,
 * utimensat, futimens, each on a path (or a descriptor) under it.
 *
 *   FAULT_COUNT=FILE      FILE holds the number of events so far
 *   FAULT_LOG=FILE        each event appends "N CALL PATH" to FILE
 *   FAULT_KILL_AT=N       SIGKILL just before the Nth event is made
 *   FAULT_EDIT_AFTER=PATH once a rename onto PATH has been made, write
 *   FAULT_EDIT_FILES=A:B  FAULT_EDIT_TEXT into each of A, B... in place
 *   FAULT_EDIT_TEXT=TEXT  (open, truncate, write), as an editor would
 *
 * The counts are per process; none of this acts outside $FAULT_ROOT.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static long events;
static int edited;

/* The path of the last event looked at, for FAULT_LOG. */
static char seen[PATH_MAX];

/* Whether path, relative to dirfd, names something under $FAULT_ROOT. */
static int
under_at(int dirfd, const char *path)
{
	const char *root = getenv("FAULT_ROOT");
	char *base = seen, link[64];
	size_t n;
	ssize_t len;

	if (!root || !*root || !path)
		return 0;
	if (path[0] == '/') {
		base[0] = '\0';
	} else if (dirfd == AT_FDCWD) {
		if (!getcwd(base, sizeof(seen) - 1))
			return 0;
		strcat(base, "/");
	} else {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
		if ((len = readlink(link, base, sizeof(seen) - 2)) < 0)
			return 0;
		base[len] = '/';
		base[len + 1] = '\0';
	}
	n = strlen(root);
	if (strlen(base) + strlen(path) >= sizeof(seen))
		return 0;
	strcat(base, path);
	return !strncmp(base, root, n) && (base[n] == '/' || !base[n]);
}

static int
under(const char *path)
{
	return under_at(AT_FDCWD, path);
}

static int
fd_under(int fd)
{
	char link[64], path[PATH_MAX];
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((len = readlink(link, path, sizeof(path) - 1)) <= 0)
		return 0;
	path[len] = '\0';
	return path[0] == '/' && under(path);
}

/* Write s to fd by the system call itself (no event, no recursion). */
static void
raw_write(int fd, const char *s)
{
	size_t n = strlen(s);
	long w;

	while (n > 0 && (w = syscall(SYS_write, fd, s, n)) > 0) {
		s += w;
		n -= (size_t)w;
	}
}

/* One event, call on seen, about to be made: count it, log it, and die
 * at FAULT_KILL_AT. */
static void
event(const char *call)
{
	const char *file = getenv("FAULT_COUNT"), *at = getenv("FAULT_KILL_AT");
	const char *log = getenv("FAULT_LOG");
	char num[32];
	int fd;

	events++;
	if (log && (fd = (int)syscall(SYS_openat, AT_FDCWD, log,
	    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666)) >= 0) {
		snprintf(num, sizeof(num), "%ld ", events);
		raw_write(fd, num);
		raw_write(fd, call);
		raw_write(fd, " ");
		raw_write(fd, seen);
		raw_write(fd, "\n");
		syscall(SYS_close, fd);
	}
	if (file && (fd = (int)syscall(SYS_openat, AT_FDCWD, file,
	    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) >= 0) {
		snprintf(num, sizeof(num), "%ld\n", events);
		raw_write(fd, num);
		syscall(SYS_close, fd);
	}
	if (at && atol(at) == events)
		raise(SIGKILL);
}

/* After a rename onto to: the edits of FAULT_EDIT_FILES, once. */
static void
maybe_edit(const char *to)
{
	const char *after = getenv("FAULT_EDIT_AFTER");
	const char *text = getenv("FAULT_EDIT_TEXT");
	char files[PATH_MAX * 4], *f, *save = NULL;
	char full[PATH_MAX];
	int fd;

	if (edited || !after || !text || !getenv("FAULT_EDIT_FILES"))
		return;
	if (to[0] != '/') {
		if (!getcwd(full, sizeof(full) - 1))
			return;
		strcat(full, "/");
	} else {
		full[0] = '\0';
	}
	if (strlen(full) + strlen(to) >= sizeof(full))
		return;
	strcat(full, to);
	if (strcmp(full, after))
		return;
	edited = 1;
	snprintf(files, sizeof(files), "%s", getenv("FAULT_EDIT_FILES"));
	for (f = strtok_r(files, ":", &save); f; f = strtok_r(NULL, ":", &save))
		if ((fd = (int)syscall(SYS_openat, AT_FDCWD, f,
		    O_WRONLY | O_TRUNC | O_CLOEXEC)) >= 0) {
			raw_write(fd, text);
			syscall(SYS_close, fd);
		}
}

#define NEXT(name) \
	static __typeof__(name) *next; \
	if (!next) \
		next = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

int
open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode = 0;
	NEXT(open);

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if ((flags & (O_CREAT | O_TRUNC)) && under(path))
		event("open");
	return next(path, flags, mode);
}

ssize_t
write(int fd, const void *p, size_t n)
{
	NEXT(write);

	if (fd > 2 && fd_under(fd))
		event("write");
	return next(fd, p, n);
}

int
fsync(int fd)
{
	NEXT(fsync);

	if (fd_under(fd))
		event("fsync");
	return next(fd);
}

int
fchmod(int fd, mode_t mode)
{
	NEXT(fchmod);

	if (fd_under(fd))
		event("fchmod");
	return next(fd, mode);
}

int
chmod(const char *path, mode_t mode)
{
	NEXT(chmod);

	if (under(path))
		event("chmod");
	return next(path, mode);
}

int
rename(const char *from, const char *to)
{
	int rc;
	NEXT(rename);

	if (under(to) || under(from))
		event("rename");
	if ((rc = next(from, to)) == 0)
		maybe_edit(to);
	return rc;
}

int
unlink(const char *path)
{
	NEXT(unlink);

	if (under(path))
		event("unlink");
	return next(path);
}

int
unlinkat(int dirfd, const char *path, int flags)
{
	NEXT(unlinkat);

	if (under_at(dirfd, path))
		event("unlinkat");
	return next(dirfd, path, flags);
}

int
mkdir(const char *path, mode_t mode)
{
	NEXT(mkdir);

	if (under(path))
		event("mkdir");
	return next(path, mode);
}

int
rmdir(const char *path)
{
	NEXT(rmdir);

	if (under(path))
		event("rmdir");
	return next(path);
}

int
utimensat(int dirfd, const char *path, const struct timespec t[2], int flags)
{
	const char *volatile p = path;	/* NULL is Linux's futimens */
	NEXT(utimensat);

	if (p ? under_at(dirfd, p) : fd_under(dirfd))
		event("utimensat");
	return next(dirfd, path, t, flags);
}

int
futimens(int fd, const struct timespec t[2])
{
	NEXT(futimens);

	if (fd_under(fd))
		event("futimens");
	return next(fd, t);
}
