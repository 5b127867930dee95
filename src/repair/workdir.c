/* See LICENSE file for copyright and license details. */
/*
 * workdir.c makes corral-fix's scratch directory, BASE/corral-fix.XXXXXX,
 * and removes the ones a killed corral-fix left behind.  The directory
 * holds a file 'lock', flocked by its run from before it is marked as a
 * clone until it is removed: the lock belongs to the open file
 * description, so the workers forked from the run hold it too, and it
 * goes with the last of them, kill -9 included.  A directory whose lock
 * can be taken at once is nobody's any more, and the next run (or -R)
 * removes it; one that is not marked yet is left alone, since its run may
 * be just between making it and marking it.  WORK/cache is the store of
 * results the session's finders share (CORRAL_CACHE), gone with WORK.
 */
#define _GNU_SOURCE	/* flock, O_CLOEXEC, mkdtemp */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "cache/http.h"
#include "checkout/checkout.h"
#include "repair/repair.h"

#define WORK_PREFIX	"corral-fix."
#define WORK_LOCK	"lock"
#define WORK_CACHE	"cache"
#define CACHE_VAR	"CORRAL_CACHE"

const char *
corral_fix_work_base(const char *workroot)
{
	const char *base = workroot;

	if (!base && (!(base = getenv("TMPDIR")) || !*base))
		base = "/tmp";
	return base;
}

/* Create dir/name (empty) and return it open, or -1. */
static int
create_in(const char *dir, const char *name)
{
	char *path = corral_path_join(dir, name);
	int fd;

	if (!path)
		return -1;
	fd = corral_open_state(path, O_RDWR | O_CREAT | O_EXCL, 0644, NULL);
	free(path);
	return fd;
}

int
corral_fix_work_make(const char *base, char **work, int *lockfd,
    struct corral_err *err)
{
	int fd;

	*lockfd = -1;
	if (!(*work = corral_path_join(base, WORK_PREFIX "XXXXXX")))
		return corral_err_set(err, ENOMEM, "setup");
	if (!mkdtemp(*work)) {
		corral_err_set(err, errno, "cannot create '%s'", *work);
		free(*work);
		*work = NULL;
		return -1;
	}
	if ((*lockfd = create_in(*work, WORK_LOCK)) < 0 ||
	    flock(*lockfd, LOCK_EX) < 0)
		return corral_err_set(err, errno, "cannot lock '%s'", *work);
	/* Marked as a clone: removed by corral_clone_remove, never cloned. */
	if ((fd = create_in(*work, CORRAL_CLONE_MARK)) < 0)
		return corral_err_set(err, errno, "cannot create '%s'", *work);
	close(fd);
	return 0;
}

/* 1 when dir/name is a directory of ours left by a run that is gone. */
static int
stale(int dirfd, const char *name, int *lockfd)
{
	/* name is WORK_PREFIX and 6 more, but gcc -O1 sees only a d_name */
	char rel[sizeof(((struct dirent *)0)->d_name) + 32];
	struct stat st;

	*lockfd = -1;
	if (strncmp(name, WORK_PREFIX, strlen(WORK_PREFIX)) ||
	    strlen(name) != strlen(WORK_PREFIX) + 6 ||
	    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return 0;
	snprintf(rel, sizeof(rel), "%s/%s", name, WORK_LOCK);
	if ((*lockfd = corral_open_state_at(dirfd, rel, O_RDONLY, 0,
	    NULL)) < 0)
		return 0;
	snprintf(rel, sizeof(rel), "%s/%s", name, CORRAL_CLONE_MARK);
	return flock(*lockfd, LOCK_EX | LOCK_NB) == 0 &&
	    fstatat(dirfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

size_t
corral_fix_work_sweep(const char *base)
{
	struct dirent *de;
	size_t n = 0;
	char *path;
	int fd;
	DIR *d;

	if (!(d = opendir(base)))
		return 0;
	while ((de = readdir(d))) {
		if (stale(dirfd(d), de->d_name, &fd) &&
		    (path = corral_path_join(base, de->d_name))) {
			n += corral_clone_remove(path, NULL) == 0;
			free(path);
		}
		if (fd >= 0)
			close(fd);
	}
	closedir(d);
	return n;
}

int
corral_fix_work_cache(const char *work, char **assign, struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	const char *v = getenv(CACHE_VAR);
	char cwd[PATH_MAX];
	int rc;

	*assign = NULL;
	if (v && (!*v || *v == '/' || corral_http_is_url(v)))
		return 0;	/* inherited as it is */
	/* Each finder runs in a clone: a relative store would be inside it. */
	if (v && !getcwd(cwd, sizeof(cwd)))
		return corral_err_set(err, errno, "cannot resolve %s '%s'",
		    CACHE_VAR, v);
	rc = v ? corral_buf_addf(&b, CACHE_VAR "=%s/%s", cwd, v) :
	    corral_buf_addf(&b, CACHE_VAR "=%s/" WORK_CACHE, work);
	if (rc < 0) {
		corral_buf_release(&b);
		return corral_err_set(err, ENOMEM, "setup");
	}
	*assign = b.data;
	return 0;
}
