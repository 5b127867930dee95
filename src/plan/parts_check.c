/* See LICENSE file for copyright and license details. */
/*
 * parts_check.c tells whether a part a user named exists in the tree
 * and, when it does not, which existing path is nearest: each component
 * that is missing is replaced by the sibling fewest edits away (letters
 * added, dropped, changed or swapped), if one is close enough to be a
 * slip rather than another name.  A part is only ever looked up, never
 * followed out of the tree.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/base.h"
#include "plan/plan.h"

/* The longest name compared; longer ones are never a slip of each other. */
#define NAME_MAX_EDIT	64

static size_t
min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;

	return m < c ? m : c;
}

/*
 * Edits from a to b (optimal string alignment: insert, delete,
 * substitute, swap two neighbours), or SIZE_MAX for names too long.
 */
static size_t
edits(const char *a, const char *b)
{
	size_t d[NAME_MAX_EDIT + 1][NAME_MAX_EDIT + 1], i, j, n, m, cost;

	n = strlen(a);
	m = strlen(b);
	if (n > NAME_MAX_EDIT || m > NAME_MAX_EDIT)
		return (size_t)-1;
	for (i = 0; i <= n; i++)
		d[i][0] = i;
	for (j = 0; j <= m; j++)
		d[0][j] = j;
	for (i = 1; i <= n; i++)
		for (j = 1; j <= m; j++) {
			cost = a[i - 1] != b[j - 1];
			d[i][j] = min3(d[i - 1][j] + 1, d[i][j - 1] + 1,
			    d[i - 1][j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < d[i][j])
				d[i][j] = d[i - 2][j - 2] + 1;
		}
	return d[n][m];
}

/*
 * The entry of dir nearest to name, malloc'd, or NULL (none within a
 * third of name's length, at least one edit; ties go to the first in
 * byte order; or errno ENOMEM).
 */
static char *
nearest_sibling(const char *dir, const char *name)
{
	struct dirent *de;
	size_t best = strlen(name) / 3, d;
	char *pick = NULL, *p;
	DIR *dp;

	if (best < 1)
		best = 1;
	if (!(dp = opendir(dir)))
		return NULL;
	while ((de = readdir(dp))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] ||
		    !strcmp(de->d_name, "..")))
			continue;
		d = edits(name, de->d_name);
		if (d > best || (d == best && pick &&
		    strcmp(de->d_name, pick) > 0))
			continue;
		if (!(p = strdup(de->d_name)))
			break;
		free(pick);
		pick = p;
		best = d;
	}
	closedir(dp);
	return pick;
}

/* Walk rel (normalised) down from root, fixing each missing component. */
static int
walk(const char *root, char *rel, struct corral_buf *near)
{
	struct stat st;
	char *slash, *dir, *path, *fix = NULL;
	int rc = 0;

	slash = strchr(rel, '/');
	if (slash)
		*slash = '\0';
	dir = corral_path_join(root, near->data ? near->data : "");
	path = dir ? corral_path_join(dir, rel) : NULL;
	if (!path)
		rc = -1;
	else if (lstat(path, &st) == 0)
		rc = corral_buf_addf(near, "%s%s", near->len ? "/" : "", rel);
	else if ((fix = nearest_sibling(dir, rel)))
		rc = corral_buf_addf(near, "%s%s", near->len ? "/" : "", fix);
	else
		rc = errno == ENOMEM ? -1 : 1;
	free(fix);
	free(path);
	free(dir);
	if (rc == 0 && slash)
		rc = walk(root, slash + 1, near);
	return rc;
}

int
corral_part_nearest(const char *srcdir, const char *part, char **nearp,
    struct corral_err *err)
{
	struct corral_buf near = CORRAL_BUF_INIT;
	struct stat st;
	char *rel, *path;
	int rc;

	*nearp = NULL;
	/* One that leaves the tree is the checkout's to refuse. */
	if (!(rel = corral_path_normalise(part)))
		return errno == ENOMEM ? corral_err_set(err, errno, "part "
		    "'%s'", part) : 1;
	if (!(path = corral_path_join(srcdir, rel))) {
		free(rel);
		return corral_err_set(err, errno, "part '%s'", part);
	}
	rc = lstat(path, &st) == 0;
	free(path);
	if (rc || !*rel) {
		free(rel);
		return 1;
	}
	rc = walk(srcdir, rel, &near);
	free(rel);
	if (rc < 0) {
		corral_buf_release(&near);
		return corral_err_set(err, ENOMEM, "part '%s'", part);
	}
	if (rc == 0)
		*nearp = near.data;
	else
		corral_buf_release(&near);
	return 0;
}
