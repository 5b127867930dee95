/* See LICENSE file for copyright and license details. */
/*
 * Re-run layers: the units CORRAL_ONLY picks, and the main slices that
 * lose their stamps when some of their units run again in a layer.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"

int
corral_units_matching(const struct corral_strv *units, const char *patterns,
    struct corral_buf *out)
{
	struct corral_strv pats = CORRAL_STRV_INIT;
	size_t i, j;
	int rc = corral_words(patterns, &pats) | corral_buf_addstr(out, "");

	for (i = 0; rc == 0 && i < units->n; i++)
		for (j = 0; j < pats.n; j++)
			if (fnmatch(pats.v[j], units->v[i], 0) == 0) {
				rc = corral_buf_addf(out, "%s\n",
				    units->v[i]);
				break;
			}
	corral_strv_release(&pats);
	return rc;
}

/* Whether slice file path holds one of units. */
static int
holds_one(const char *path, const struct corral_set *units, int *holds,
    struct corral_err *err)
{
	struct corral_strv slice = CORRAL_STRV_INIT;
	size_t i;

	*holds = 0;
	if (corral_units_load(path, '\n', &slice, 0, err) < 0)
		return -1;
	for (i = 0; !*holds && i < slice.n; i++)
		*holds = corral_set_get(units, slice.v[i]) != NULL;
	corral_strv_release(&slice);
	return 0;
}

int
corral_unstamp(const struct corral_strv *units, struct corral_err *err)
{
	struct corral_set *set = corral_set_new();
	char path[64];
	size_t k;
	int holds, rc = set ? 0 : corral_err_set(err, ENOMEM, "unstamp");

	for (k = 0; rc == 0 && k < units->n; k++)
		if (corral_set_put(set, units->v[k], 0, NULL) < 0)
			rc = corral_err_set(err, ENOMEM, "unstamp");
	for (k = 0; rc == 0; k++) {
		snprintf(path, sizeof(path), "slices/%zu.units", k);
		if (access(path, F_OK) < 0)
			break;
		if (holds_one(path, set, &holds, err) < 0)
			rc = -1;
		snprintf(path, sizeof(path), "slices/%zu.pass", k);
		if (rc == 0 && holds && unlink(path) < 0 && errno != ENOENT)
			rc = corral_err_set(err, errno, "cannot remove '%s'",
			    path);
	}
	corral_set_free(set);
	return rc;
}
