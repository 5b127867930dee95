/* See LICENSE file for copyright and license details. */
/*
 * syncfs.c: one syncfs(2) for many files, on its own for _GNU_SOURCE
 * (which would give the rest of base/ GNU's strerror_r).
 */
#define _GNU_SOURCE	/* syncfs */

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/base.h"

int
corral_sync_fs(const char *path, struct corral_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return corral_err_set(err, errno, "cannot open '%s'", path);
	if (syncfs(fd) < 0)
		rc = corral_err_set(err, errno, "cannot sync '%s'", path);
	close(fd);
	return rc;
}
