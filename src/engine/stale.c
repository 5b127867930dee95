/* See LICENSE file for copyright and license details. */
/*
 * What a step killed half-way leaves in CORRAL_OUT: the temporaries of
 * the engine's own files, removed by the next run, which holds the lock.
 * The merge's temporaries are the merge's to finish or remove (its
 * commit record may name them), so only the engine's names go here.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"

/* The files the engine writes, whole, through a temporary beside them. */
static const char *const own[] = {
	"settings.json", "agents", "slice-config", "parts-config",
	"merge-config", "units", "population", "plan.mk", "inputs",
	"exit-status", "merge-status", "merged", "parts", "only.units",
	"plan.json", "digests", NULL
};
/* The temporaries a step writes by name, and a slice file's extensions. */
static const char *const plain[] = {
	"board.tmp", "failed.units.tmp", "units.tmp", "units.raw", NULL
};
static const char *const slice_ext[] = {
	"units", "est", "parts", "manifest", NULL
};

static int
listed(const char *name, size_t n, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == n && !memcmp(*list, name, n))
			return 1;
	return 0;
}

/* Whether name is ".K.EXT" for a slice K and one of the extensions. */
static int
slice_file(const char *name, size_t n)
{
	size_t k = strspn(name, "0123456789");

	return k && name[k] == '.' && listed(name + k + 1, n - k - 1,
	    slice_ext);
}

/* Whether name is the temporary ".NAME.tmp.XXXXXX" of one of ours. */
static int
stale(const char *name)
{
	const char *tmp = strstr(name, ".tmp.");
	size_t n;

	if (listed(name, strlen(name), plain))
		return 1;
	if (name[0] != '.' || !tmp || strlen(tmp) != strlen(".tmp.XXXXXX"))
		return 0;
	n = (size_t)(tmp - name - 1);
	return listed(name + 1, n, own) || slice_file(name + 1, n);
}

static int
sweep(const char *dir, struct corral_err *err)
{
	struct dirent *e;
	struct stat st;
	int fd, rc = 0;
	DIR *d;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : corral_err_set(err, errno,
		    "cannot open '%s'", dir);
	if (!(d = fdopendir(fd))) {
		close(fd);
		return corral_err_set(err, errno, "cannot open '%s'", dir);
	}
	while (rc == 0 && (e = readdir(d)))
		if (stale(e->d_name) && fstatat(fd, e->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    unlinkat(fd, e->d_name, 0) < 0 && errno != ENOENT)
			rc = corral_err_set(err, errno, "cannot remove '%s/%s'",
			    dir, e->d_name);
	closedir(d);
	return rc;
}

int
corral_engine_clean_stale(struct corral_err *err)
{
	return sweep(".", err) < 0 || sweep("slices", err) < 0 ? -1 : 0;
}
