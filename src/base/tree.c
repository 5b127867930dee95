/* See LICENSE file for copyright and license details. */
/*
 * tree.c removes a tree of files: a clone, a unit's TMPDIR, a scratch
 * directory, the shards' copies.  It never follows a symbolic link (each
 * directory is opened with O_NOFOLLOW relative to its parent), and gives a
 * directory a unit made unreadable its owner's rwx back before it goes in.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"

DIR *
corral_dir_open(int dirfd, const char *name, int *fd, struct corral_err *err)
{
	DIR *d;

	*fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (*fd >= 0 && (d = fdopendir(*fd)))
		return d;
	corral_err_set(err, errno, "cannot open '%s'", name);
	if (*fd >= 0)
		close(*fd);
	return NULL;
}

int
corral_remove_at(int dirfd, const char *name, struct corral_err *err)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd, rc = 0;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 :
		    corral_err_set(err, errno, "cannot stat '%s'", name);
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
			return corral_err_set(err, errno, "cannot remove '%s'",
			    name);
		return 0;
	}
	if ((st.st_mode & 0700) != 0700)
		fchmodat(dirfd, name, (st.st_mode & 07777) | 0700, 0);
	if (!(d = corral_dir_open(dirfd, name, &fd, err)))
		return -1;
	while (rc == 0 && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = corral_remove_at(fd, de->d_name, err);
	closedir(d);
	if (rc == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) < 0 &&
	    errno != ENOENT)
		rc = corral_err_set(err, errno, "cannot remove '%s'", name);
	return rc;
}

int
corral_remove_tree(const char *path, struct corral_err *err)
{
	return corral_remove_at(AT_FDCWD, path, err);
}
