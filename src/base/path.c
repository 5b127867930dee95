/* See LICENSE file for copyright and license details. */
/*
 * path.c is every lexical job on a path, done once: joining two paths,
 * the directory and the last component of one, folding "." and "..",
 * and the check that a relative path stays inside its tree, with one
 * wording for every refusal.  Nothing here looks at the disk except
 * corral_mkdir_parent.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

char *
corral_path_join(const char *a, const char *b)
{
	char *p;

	if (!*b)
		return strdup(a);
	if (!*a)
		return strdup(b);
	if (!(p = malloc(strlen(a) + strlen(b) + 2)))
		return NULL;
	sprintf(p, "%s%s%s", a, a[strlen(a) - 1] == '/' ? "" : "/", b);
	return p;
}

char *
corral_path_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d;

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	if (!(d = malloc((size_t)(slash - path) + 1)))
		return NULL;
	memcpy(d, path, (size_t)(slash - path));
	d[slash - path] = '\0';
	return d;
}

const char *
corral_path_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

char *
corral_path_normalise(const char *path)
{
	char *out, *copy, *tok, *save = NULL;
	size_t len = 0;

	if (!(out = malloc(strlen(path) + 1)) || !(copy = strdup(path))) {
		free(out);
		return NULL;
	}
	out[0] = '\0';
	for (tok = strtok_r(copy, "/", &save); tok;
	    tok = strtok_r(NULL, "/", &save)) {
		if (!strcmp(tok, "."))
			continue;
		if (!strcmp(tok, "..")) {
			if (len == 0) {
				free(out);
				free(copy);
				errno = EINVAL;
				return NULL;
			}
			while (len > 0 && out[len - 1] != '/')
				len--;
			len = len > 0 ? len - 1 : 0;
			out[len] = '\0';
			continue;
		}
		len += (size_t)sprintf(out + len, "%s%s", len ? "/" : "", tok);
	}
	free(copy);
	return out;
}

int
corral_path_is_listing(const char *part)
{
	size_t n = strlen(part);

	return n > 1 && part[n - 1] == '/';
}

void
corral_path_trim_slashes(char *path)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
}

/* The refusal of component p (n bytes) of path, or 0 when it passes. */
static int
component_check(const char *what, const char *path, const char *p,
    size_t n, int flags, long *depth, struct corral_err *err)
{
	int dot = n == 1 && *p == '.', dotdot = n == 2 && !strncmp(p, "..", 2);

	if ((flags & CORRAL_PATH_CANONICAL) && (n == 0 || dot))
		return corral_err_set(err, 0, "%s '%s' is not canonical",
		    what, path);
	if (dotdot && (*depth == 0 || (flags & CORRAL_PATH_CANONICAL)))
		return corral_err_set(err, 0, "%s '%s' leaves the tree", what,
		    path);
	*depth += dotdot ? -1 : (n && !dot);
	return 0;
}

int
corral_path_lexical(const char *what, const char *path, int flags,
    struct corral_err *err)
{
	const char *p = path;
	long depth = 0;
	size_t n;

	if (!*path)
		return corral_err_set(err, 0, "%s '' is empty", what);
	if (*path == '/')
		return corral_err_set(err, 0, "%s '%s' is absolute", what,
		    path);
	if ((flags & CORRAL_PATH_CANONICAL) && strchr(path, '\n'))
		return corral_err_set(err, 0, "%s '%s' holds a newline", what,
		    path);
	for (;;) {
		n = strcspn(p, "/");
		if (component_check(what, path, p, n, flags, &depth, err) < 0)
			return -1;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

int
corral_mkdir_parent(const char *path, mode_t mode, struct corral_err *err)
{
	char *dir = corral_path_dir(path);
	int rc;

	if (!dir)
		return corral_err_set(err, errno, "cannot create '%s'", path);
	rc = corral_mkdir_p(dir, mode, err);
	free(dir);
	return rc;
}
