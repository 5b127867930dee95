/* See LICENSE file for copyright and license details. */
/*
 * io.c writes files so that Make and readers never see half of one: the
 * atomic-replace recipe of RELIABILITY 4.2 (temporary beside the target,
 * fsync, rename, fsync the directory), plus whole-file reads and mkdir -p.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"

int
corral_write_all(int fd, const void *p, size_t n)
{
	const char *s = p;
	ssize_t w;

	while (n > 0) {
		w = write(fd, s, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (w == 0) {
			errno = EIO;
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * The descriptor a path names, as bash's redirections read it:
 * /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N.
 * -1 for any other path.
 */
static int
fd_named(const char *path)
{
	static const char *const std[] = { "/dev/stdin", "/dev/stdout",
	    "/dev/stderr" };
	const char *n = NULL;
	char *end;
	long v;
	int i;

	for (i = 0; i < 3; i++)
		if (!strcmp(path, std[i]))
			return i;
	if (!strncmp(path, "/dev/fd/", 8))
		n = path + 8;
	else if (!strncmp(path, "/proc/self/fd/", 14))
		n = path + 14;
	if (!n || *n < '0' || *n > '9')
		return -1;
	errno = 0;
	v = strtol(n, &end, 10);
	return *end || errno || v > INT_MAX ? -1 : (int)v;
}

/* "a FIFO" and so on, for messages about a file that is not regular. */
static const char *
kind_of(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISLNK(mode))
		return "a symbolic link";
	return "not a regular file";
}

/* The refusal, in err (errnum 0) and in errno for a caller without err. */
static int
not_regular(const char *path, mode_t mode, struct corral_err *err)
{
	corral_err_set(err, 0, "'%s' is %s, not a regular file", path,
	    kind_of(mode));
	errno = S_ISLNK(mode) ? ELOOP : S_ISDIR(mode) ? EISDIR : EINVAL;
	return -1;
}

/*
 * Why open failed, in err: what is there when it is not a regular file
 * (a link O_NOFOLLOW refused, a directory, a FIFO with no reader), else
 * errno's own word.
 */
static int
open_failed(int dirfd, const char *path, struct corral_err *err)
{
	struct stat st;
	int e = errno;

	if (e != ENOENT && fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISREG(st.st_mode))
		return not_regular(path, st.st_mode, err);
	return corral_err_set(err, e, "cannot open '%s'", path);
}

/*
 * fd, opened O_NONBLOCK, made blocking again when it is a regular file;
 * else closed, and -1 with err set ("cannot VERB 'path'" on an error).
 */
static int
regular_only(int fd, const char *path, const char *verb,
    struct corral_err *err)
{
	struct stat st;
	int fl;

	if (fstat(fd, &st) < 0 || (fl = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		corral_err_set(err, errno, "cannot %s '%s'", verb, path);
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return not_regular(path, st.st_mode, err);
	}
	return fd;
}

int
corral_open_state_at(int dirfd, const char *path, int flags, mode_t mode,
    struct corral_err *err)
{
	int fd;

	/* O_NONBLOCK: a FIFO planted there must not make the open wait. */
	fd = openat(dirfd, path, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC, mode);
	if (fd < 0)
		return open_failed(dirfd, path, err);
	return regular_only(fd, path, "open", err);
}

int
corral_open_state(const char *path, int flags, mode_t mode,
    struct corral_err *err)
{
	return corral_open_state_at(AT_FDCWD, path, flags, mode, err);
}

int
corral_dir_beneath(int dirfd, const char *rel, const char **last)
{
	const char *p = rel, *slash;
	char comp[NAME_MAX + 1];
	size_t n;
	int fd = dirfd, next;

	while ((slash = strchr(p, '/'))) {
		n = (size_t)(slash - p);
		if (!n || n >= sizeof(comp)) {
			if (fd != dirfd)
				close(fd);
			errno = EINVAL;
			return -1;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (fd != dirfd) {
			int e = errno;

			close(fd);
			errno = e;
		}
		if ((fd = next) < 0)
			return -1;
		p = slash + 1;
	}
	*last = p;
	return fd;
}

int
corral_open_beneath(int dirfd, const char *rel, int flags)
{
	const char *last;
	int fd, e, next;

	if ((fd = corral_dir_beneath(dirfd, rel, &last)) < 0)
		return -1;
	next = openat(fd, last, flags | O_NOFOLLOW | O_CLOEXEC);
	e = errno;
	if (fd != dirfd)
		close(fd);
	errno = e;
	return next;
}

FILE *
corral_fopen_state(const char *path, int flags, const char *how,
    struct corral_err *err)
{
	FILE *fp;
	int fd;

	if ((fd = corral_open_state(path, flags, 0666, err)) < 0)
		return NULL;
	if (!(fp = fdopen(fd, how))) {
		corral_err_set(err, errno, "cannot open '%s'", path);
		close(fd);
	}
	return fp;
}

int
corral_state_check(const char *path, struct corral_err *err)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 :
		    corral_err_set(err, errno, "cannot stat '%s'", path);
	return S_ISREG(st.st_mode) ? 0 : not_regular(path, st.st_mode, err);
}

int
corral_open_input(const char *path, struct corral_err *err)
{
	struct stat st;
	int fd;

	/* A stream the caller handed over by name: read it as it is. */
	if (fd_named(path) >= 0) {
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return corral_err_set(err, errno, "cannot open '%s'",
			    path);
		return fd;
	}
	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENXIO && stat(path, &st) == 0)
			return not_regular(path, st.st_mode, err);
		return corral_err_set(err, errno, "cannot open '%s'", path);
	}
	return regular_only(fd, path, "read", err);
}

FILE *
corral_fopen_input(const char *path, struct corral_err *err)
{
	FILE *fp;
	int fd;

	if ((fd = corral_open_input(path, err)) < 0)
		return NULL;
	if (!(fp = fdopen(fd, "r"))) {
		corral_err_set(err, errno, "cannot read '%s'", path);
		close(fd);
	}
	return fp;
}

int
corral_fd_chunks(int fd, int (*eat)(void *ctx, const char *p, size_t n),
    void *ctx)
{
	char chunk[65536];
	ssize_t r;

	for (;;) {
		r = read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -1 : 0;
		if (eat(ctx, chunk, (size_t)r) < 0)
			return -1;
	}
}

int
corral_buf_eat(void *b, const char *p, size_t n)
{
	return b ? corral_buf_add(b, p, n) : 0;
}

int
corral_read_file(const char *path, struct corral_buf *b,
    struct corral_err *err)
{
	int fd, rc;

	if ((fd = corral_open_input(path, err)) < 0)
		return -1;
	if ((rc = corral_fd_chunks(fd, corral_buf_eat, b)) < 0)
		corral_err_set(err, errno, "cannot read '%s'", path);
	close(fd);
	return rc;
}

int
corral_read_regular(const char *path, struct corral_buf *b,
    struct corral_err *err)
{
	struct stat st;
	size_t want, got = 0;
	ssize_t n;
	char *p = NULL;
	int fd, rc = -1;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer; it changes
	   nothing for the read(2) of a regular file */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENXIO && stat(path, &st) == 0)
			return not_regular(path, st.st_mode, err);
		return corral_err_set(err, errno, "cannot open '%s'", path);
	}
	if (fstat(fd, &st) < 0) {
		corral_err_set(err, errno, "cannot read '%s'", path);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return not_regular(path, st.st_mode, err);
	}
	/* one byte more than fstat said: a read that gets the size is at
	   the end, with no read of 0 to tell it */
	want = st.st_size > 0 && st.st_size < (1 << 20) ?
	    (size_t)st.st_size + 1 : 65536;
	if (!(p = malloc(want))) {
		corral_err_set(err, ENOMEM, "cannot read '%s'", path);
		goto out;
	}
	for (;;) {
		if ((n = read(fd, p, want)) < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			corral_err_set(err, errno, "cannot read '%s'", path);
			goto out;
		}
		if (n == 0)
			break;
		if (corral_buf_add(b, p, (size_t)n) < 0) {
			corral_err_set(err, ENOMEM, "cannot read '%s'", path);
			goto out;
		}
		got += (size_t)n;
		if ((size_t)n < want && got == (size_t)st.st_size)
			break;
	}
	rc = 0;
out:
	free(p);
	close(fd);
	return rc;
}

int
corral_read_state(const char *path, struct corral_buf *b,
    struct corral_err *err)
{
	int fd, rc;

	if ((fd = corral_open_state(path, O_RDONLY, 0, err)) < 0)
		return -1;
	if ((rc = corral_fd_chunks(fd, corral_buf_eat, b)) < 0)
		corral_err_set(err, errno, "cannot read '%s'", path);
	close(fd);
	return rc;
}

/* Whether path is a directory now, made by us or by another. */
static int
mkdir_made(const char *path, mode_t mode)
{
	struct stat st;

	if (mkdir(path, mode) == 0)
		return 1;
	return errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * From the leaf up: a fan-out directory under a store or CORRAL_OUT is
 * made where its parents stand, and a walk from / would cost two system
 * calls a component, every time.  Any other failure walks from the top,
 * so that the message names the component that stopped it.
 */
int
corral_mkdir_p(const char *path, mode_t mode, struct corral_err *err)
{
	struct stat st;
	char *p, *s;

	if (!*path)
		return corral_err_set(err, ENOENT, "cannot create ''");
	if (mkdir_made(path, mode))
		return 0;
	if (errno == ENOENT) {
		/* a parent that fails has named its component already */
		if (corral_mkdir_parent(path, mode, err) < 0)
			return -1;
		if (mkdir_made(path, mode))
			return 0;
	}
	if (!(p = strdup(path)))
		return corral_err_set(err, errno, "cannot create '%s'", path);
	for (s = p + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		if (s[-1] != '/') {
			char c = *s;

			*s = '\0';
			if (mkdir(p, mode) < 0 && errno != EEXIST)
				goto fail;
			if (stat(p, &st) < 0)
				goto fail;
			if (!S_ISDIR(st.st_mode)) {
				errno = ENOTDIR;
				goto fail;
			}
			*s = c;
		}
		if (*s == '\0')
			break;
	}
	free(p);
	return 0;
fail:
	corral_err_set(err, errno, "cannot create '%s'", p);
	free(p);
	return -1;
}

/*
 * Why the T attribute: in a project's directory or in /tmp lie the
 * inodes of every file deleted nearby in the last minutes (the last
 * run's clones and outputs, a test suite's temporary files), and ext4
 * without a journal steps over each of them, one by one, to make a
 * file there: up to a millisecond a file, as much as a small unit.
 */
int
corral_mkdir_top(const char *path, mode_t mode, struct corral_err *err)
{
	int fd, flags;

	if (mkdir(path, mode) < 0 && (errno != ENOENT ||
	    corral_mkdir_parent(path, mode, err) < 0 || mkdir(path, mode) < 0))
		return corral_mkdir_p(path, mode, err);
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return 0;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 &&
	    !(flags & FS_TOPDIR_FL)) {
		flags |= FS_TOPDIR_FL;
		(void)ioctl(fd, FS_IOC_SETFLAGS, &flags);
	}
	close(fd);
	return 0;
}

int
corral_fsync_parent(const char *path, struct corral_err *err)
{
	char *dir;
	int fd, rc = 0;

	if (!(dir = corral_path_dir(path)))
		return corral_err_set(err, errno, "cannot sync '%s'", path);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    fsync(fd) < 0)
		rc = corral_err_set(err, errno, "cannot sync directory '%s'",
		    dir);
	if (fd >= 0)
		close(fd);
	free(dir);
	return rc;
}

mode_t
corral_umask(void)
{
	mode_t m = umask(022);

	umask(m);
	return m;
}

/*
 * The one rule for a target that exists and is not a regular file: it is
 * never replaced.  With CORRAL_ATOMIC_IN_PLACE, a named descriptor, a
 * character device or a FIFO is opened and written in place (a->tmp
 * stays NULL): 1.  Anything else that is there and not a regular file
 * is refused: -1, a symbolic link included, which is neither followed
 * nor replaced (a link planted where a file of corral's goes).  0 when the target is
 * missing or regular, to be replaced.
 */
static int
open_in_place(struct corral_atomic *a, const char *path, int flags,
    struct corral_err *err)
{
	struct stat st;
	int n = fd_named(path);

	if (n >= 0 && (flags & CORRAL_ATOMIC_IN_PLACE)) {
		/* dup, not open: /dev/stdout on a file keeps its offset. */
		if ((a->fd = fcntl(n, F_DUPFD_CLOEXEC, 3)) < 0)
			return corral_err_set(err, errno, "cannot write '%s'",
			    path);
		return 1;
	}
	if (lstat(path, &st) < 0 || S_ISREG(st.st_mode))
		return 0;
	if (!(flags & CORRAL_ATOMIC_IN_PLACE) ||
	    !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
		return not_regular(path, st.st_mode, err);
	if ((a->fd = open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY |
	    O_CLOEXEC)) < 0)
		return open_failed(AT_FDCWD, path, err);
	return 1;
}

/* The temporary a->tmp, open as a->fd: close-on-exec, 0666 & ~umask. */
static int
tmp_ready(struct corral_atomic *a, struct corral_err *err)
{
	/* mkstemp makes 0600; results are for everyone to read. */
	if (fcntl(a->fd, F_SETFD, FD_CLOEXEC) < 0 ||
	    fchmod(a->fd, 0666 & ~corral_umask()) < 0) {
		corral_err_set(err, errno, "cannot write '%s'", a->tmp);
		corral_atomic_abort(a);
		return -1;
	}
	return 0;
}

static int
atomic_open(struct corral_atomic *a, const char *path, int flags,
    struct corral_err *err)
{
	const char *base = strrchr(path, '/');
	size_t dirlen = base ? (size_t)(base - path) + 1 : 0;
	int rc;

	base = base ? base + 1 : path;
	a->fd = -1;
	a->tmp = NULL;
	if (!(a->path = strdup(path)))
		return corral_err_set(err, ENOMEM, "cannot write '%s'", path);
	if ((rc = open_in_place(a, path, flags, err)) != 0) {
		if (rc < 0)
			corral_atomic_abort(a);
		return rc < 0 ? -1 : 0;
	}
	a->tmp = malloc(strlen(path) + sizeof(".tmp.XXXXXX") + 1);
	if (!a->tmp) {
		corral_atomic_abort(a);
		return corral_err_set(err, ENOMEM, "cannot write '%s'", path);
	}
	memcpy(a->tmp, path, dirlen);
	sprintf(a->tmp + dirlen, ".%s.tmp.XXXXXX", base);
	if ((a->fd = mkstemp(a->tmp)) < 0) {
		corral_err_set(err, errno, "cannot create '%s'", a->tmp);
		free(a->tmp);
		a->tmp = NULL;
		corral_atomic_abort(a);
		return -1;
	}
	return tmp_ready(a, err);
}

int
corral_atomic_open(struct corral_atomic *a, const char *path,
    struct corral_err *err)
{
	return atomic_open(a, path, 0, err);
}

int
corral_atomic_open_as(struct corral_atomic *a, const char *path,
    const char *tmp, struct corral_err *err)
{
	a->fd = -1;
	a->path = strdup(path);
	a->tmp = strdup(tmp);
	if (!a->path || !a->tmp) {
		free(a->tmp);	/* not created: nothing to remove */
		a->tmp = NULL;
		corral_atomic_abort(a);
		return corral_err_set(err, ENOMEM, "cannot write '%s'", path);
	}
	a->fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (a->fd < 0) {
		if (errno == EEXIST)
			corral_err_set(err, 0, "'%s' is in the way: it is the "
			    "name of the temporary for '%s'", tmp, path);
		else
			corral_err_set(err, errno, "cannot create '%s'", tmp);
		free(a->tmp);	/* not ours to remove */
		a->tmp = NULL;
		corral_atomic_abort(a);
		return -1;
	}
	return tmp_ready(a, err);
}

int
corral_atomic_write(struct corral_atomic *a, const void *p, size_t n,
    struct corral_err *err)
{
	if (corral_write_all(a->fd, p, n) < 0)
		return corral_err_set(err, errno, "cannot write '%s'",
		    a->tmp ? a->tmp : a->path);
	return 0;
}

/* 1 when the file at path holds exactly the bytes of fd, else 0. */
static int
same_content(const char *path, int fd)
{
	char x[65536], y[65536];
	struct stat sa, sb;
	ssize_t rx, ry;
	int other, same = 0;

	if ((other = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW |
	    O_CLOEXEC)) < 0)
		return 0;
	if (fstat(other, &sa) < 0 || fstat(fd, &sb) < 0 ||
	    !S_ISREG(sa.st_mode) || sa.st_size != sb.st_size ||
	    lseek(fd, 0, SEEK_SET) < 0)
		goto out;
	for (;;) {
		rx = read(other, x, sizeof(x));
		ry = read(fd, y, sizeof(y));
		if (rx < 0 || ry < 0 || rx != ry || memcmp(x, y, (size_t)rx))
			goto out;
		if (rx == 0)
			break;
	}
	same = 1;
out:
	close(other);
	return same;
}

int
corral_atomic_commit(struct corral_atomic *a, int flags,
    struct corral_err *err)
{
	char *path;
	int rc;

	if ((rc = corral_atomic_prepare(a, flags, err)) <= 0)
		return rc;
	if (!a->tmp)	/* written in place: nothing to rename */
		return corral_atomic_rename(a, err) < 0 ? -1 : 1;
	if (!(path = strdup(a->path))) {
		corral_atomic_abort(a);
		return corral_err_set(err, ENOMEM, "cannot write '%s'",
		    a->tmp);
	}
	if (corral_atomic_rename(a, err) < 0) {
		corral_atomic_abort(a);
		rc = -1;
	} else if (!(flags & CORRAL_ATOMIC_NO_SYNC) &&
	    corral_fsync_parent(path, err) < 0) {
		rc = -1;
	}
	free(path);
	return rc;
}

int
corral_atomic_prepare(struct corral_atomic *a, int flags,
    struct corral_err *err)
{
	int fd = a->fd;

	if (!a->tmp) {	/* in place: a device or a FIFO, no temporary */
		a->fd = -1;
		if (close(fd) == 0)
			return 1;
		corral_err_set(err, errno, "cannot write '%s'", a->path);
		goto fail;
	}
	if (!(flags & CORRAL_ATOMIC_NO_SYNC) && fsync(fd) < 0) {
		corral_err_set(err, errno, "cannot write '%s'", a->tmp);
		goto fail;
	}
	if ((flags & CORRAL_ATOMIC_KEEP_SAME) && same_content(a->path, fd)) {
		corral_atomic_abort(a);
		return 0;
	}
	a->fd = -1;
	if (close(fd) < 0) {
		corral_err_set(err, errno, "cannot write '%s'", a->tmp);
		goto fail;
	}
	return 1;
fail:
	corral_atomic_abort(a);
	return -1;
}

int
corral_atomic_rename(struct corral_atomic *a, struct corral_err *err)
{
	if (a->tmp && rename(a->tmp, a->path) < 0)
		return corral_err_set(err, errno, "cannot rename '%s' to '%s'",
		    a->tmp, a->path);
	free(a->tmp);
	a->tmp = NULL;
	corral_atomic_abort(a);
	return 0;
}

void
corral_atomic_abort(struct corral_atomic *a)
{
	if (a->fd >= 0)
		close(a->fd);
	if (a->tmp)
		unlink(a->tmp);
	free(a->tmp);
	free(a->path);
	a->fd = -1;
	a->tmp = a->path = NULL;
}

/* Whether path is a regular file holding exactly p[0..n). */
static int
holds(const char *path, const void *p, size_t n)
{
	char buf[65536];
	const char *at = p;
	struct stat st;
	ssize_t r;
	int fd, same = 0;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW |
	    O_CLOEXEC)) < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size != n)
		goto out;
	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		if ((size_t)r > n || memcmp(buf, at, (size_t)r))
			goto out;
		at += r;
		n -= (size_t)r;
	}
	same = r == 0 && n == 0;
out:
	close(fd);
	return same;
}

int
corral_atomic_file(const char *path, const void *p, size_t n, int flags,
    struct corral_err *err)
{
	struct corral_atomic a;

	if ((flags & CORRAL_ATOMIC_KEEP_SAME) && holds(path, p, n))
		return 0;
	if (atomic_open(&a, path, flags, err) < 0)
		return -1;
	if (corral_atomic_write(&a, p, n, err) < 0) {
		corral_atomic_abort(&a);
		return -1;
	}
	return corral_atomic_commit(&a, flags, err);
}

int
corral_atomic_file_at(const char *dir, const char *rel, const char *text,
    struct corral_err *err)
{
	char *path = corral_path_join(dir, rel);
	int rc = -1;

	if (!path)
		return corral_err_set(err, errno, "cannot write '%s'", rel);
	if (corral_mkdir_parent(path, 0777, err) == 0 &&
	    corral_atomic_file(path, text, strlen(text), 0, err) >= 0)
		rc = 0;
	free(path);
	return rc;
}
