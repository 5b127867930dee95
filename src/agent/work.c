/* See LICENSE file for copyright and license details. */
/*
 * Where a node keeps the clones (CORRAL_WORK): the directory named by
 * a value expanded on the node itself ($SLURMD_NODENAME, $TMPDIR), one
 * directory in it for each run, and the clones earlier runs left there
 * removed.  A run holds its CORRAL_OUT's lock, so every run of another
 * id in that CORRAL_OUT's directory is over: what it left (a node lost,
 * an agent killed) is nobody's.  Two agents of one run on one node sweep
 * at once: each renames an old entry to a name of its own before it
 * removes it, so that no tree is removed by two.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"

#define GONE ".gone."

static int
name_char(int c, int first)
{
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (!first && c >= '0' && c <= '9');
}

/*
 * The variable named at p ($NAME or ${NAME}) into b; *len the bytes it
 * took, 0 when p is no reference (a '$' kept as it is).
 */
static int
expand_one(const char *pattern, const char *p, struct corral_buf *b,
    size_t *len, struct corral_err *err)
{
	int brace = p[1] == '{';
	const char *name = p + 1 + brace, *v;
	size_t n = 0;
	char *copy;

	while (name_char((unsigned char)name[n], n == 0))
		n++;
	*len = 0;
	if (n == 0 || (brace && name[n] != '}'))
		return 0;
	if (!(copy = strndup(name, n)))
		return corral_err_set(err, ENOMEM, "cannot expand '%s'",
		    pattern);
	v = getenv(copy);
	if (!v || !*v) {
		corral_err_set(err, 0, "work directory '%s': %s is not set "
		    "here", pattern, copy);
		free(copy);
		return -1;
	}
	free(copy);
	*len = 1 + brace + n + brace;
	return corral_buf_addstr(b, v) < 0 ? corral_err_set(err, ENOMEM,
	    "cannot expand '%s'", pattern) : 0;
}

int
corral_work_expand(const char *pattern, char **out, struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	const char *p;
	size_t took;

	*out = NULL;
	for (p = pattern; *p; p += took) {
		took = 0;
		if (*p == '$' && expand_one(pattern, p, &b, &took, err) < 0)
			goto fail;
		if (took == 0 && corral_buf_add(&b, p, took = 1) < 0)
			goto nomem;
	}
	if (!b.data || b.data[0] != '/') {
		corral_err_set(err, 0, "work directory '%s' is '%s' here; it "
		    "must be an absolute path", pattern, b.data ? b.data : "");
		goto fail;
	}
	*out = b.data;
	return 0;
nomem:
	corral_err_set(err, ENOMEM, "cannot expand '%s'", pattern);
fail:
	corral_buf_release(&b);
	return -1;
}

void
corral_work_run_name(const char *run, char *out, size_t size)
{
	size_t i;

	snprintf(out, size, "%s", *run ? run : "run");
	for (i = 0; out[i]; i++)
		if (!name_char((unsigned char)out[i], 0) && out[i] != '-' &&
		    (out[i] != '.' || i == 0))
			out[i] = '_';
}

/* Whether name is a sweeper's of this run: ".gone.RUN.*". */
static int
swept_now(const char *name, const char *run)
{
	size_t n = strlen(run);

	return !strncmp(name, GONE, sizeof(GONE) - 1) &&
	    !strncmp(name + sizeof(GONE) - 1, run, n) &&
	    name[sizeof(GONE) - 1 + n] == '.';
}

/* Rename name under dirfd to one of this sweep's own, then remove it. */
static int
sweep_one(int dirfd, const char *name, const char *run, unsigned k,
    struct corral_err *err)
{
	char mine[256];

	snprintf(mine, sizeof(mine), GONE "%s.%ld.%u", run, (long)getpid(),
	    k);
	if (renameat(dirfd, name, dirfd, mine) < 0)
		return errno == ENOENT ? 0 : corral_err_set(err, errno,
		    "cannot rename '%s'", name);
	return corral_remove_at(dirfd, mine, err) < 0 ? -1 : 1;
}

int
corral_work_sweep(const char *dir, const char *run, struct corral_err *err)
{
	struct dirent *e;
	DIR *d;
	unsigned k = 0;
	int rc = 0, n;

	if (!(d = opendir(dir)))
		return errno == ENOENT ? 0 : corral_err_set(err, errno,
		    "cannot open '%s'", dir);
	while (rc >= 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcmp(e->d_name, run) || swept_now(e->d_name, run))
			continue;
		if ((n = sweep_one(dirfd(d), e->d_name, run, k++, err)) < 0)
			rc = -1;
		else
			rc += n;
	}
	closedir(d);
	return rc;
}
