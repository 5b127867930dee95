/* See LICENSE file for copyright and license details. */
/*
 * The progress total a run starts with: the units of the slices make will
 * find out of date, found as make finds them, by mtimes.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <string.h>

#include "engine/engine.h"

/* path's mtime into *t: 1, or 0 when there is no such file. */
static int
mtime(const char *path, struct timespec *t)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return 0;
	*t = st.st_mtim;
	return 1;
}

static int
newer(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec ||
	    (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

int
corral_slice_current(size_t k, const char *config)
{
	struct timespec pass, t;
	char path[64];

	snprintf(path, sizeof(path), "slices/%zu.pass", k);
	if (!mtime(path, &pass))
		return 0;
	snprintf(path, sizeof(path), "slices/%zu.manifest", k);
	if (!mtime(path, &t) || newer(&t, &pass))
		return 0;
	snprintf(path, sizeof(path), "slices/%zu.units", k);
	if (mtime(path, &t) && newer(&t, &pass))
		return 0;
	return !mtime(config, &t) || !newer(&t, &pass);
}

/* The lines of path (0 when it cannot be read). */
static long long
lines_of(const char *path)
{
	FILE *fp = fopen(path, "r");
	long long n = 0;
	int c, last = '\n';

	if (!fp)
		return 0;
	while ((c = getc(fp)) != EOF)
		if ((last = c) == '\n')
			n++;
	fclose(fp);
	return n + (last != '\n');
}

long long
corral_live_total(size_t nslices, const char *config, int all)
{
	char path[64];
	long long n = 0;
	size_t k;

	for (k = 0; k < nslices; k++) {
		if (!all && corral_slice_current(k, config))
			continue;
		snprintf(path, sizeof(path), "slices/%zu.units", k);
		n += lines_of(path);
	}
	return n;
}
