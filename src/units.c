/* See LICENSE file for copyright and license details. */
/*
 * units.c reads a population: one unit per line, or NUL-separated.  A unit
 * is an identity, so a second copy is dropped (and handed back so the tool
 * can say so).  Any byte but the separator may appear in a unit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral.h"

int
corral_units_read(FILE *fp, int sep, const char *name,
    struct corral_strv *units, struct corral_strv *dups,
    struct corral_err *err)
{
	struct corral_set *seen;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = -1, put;

	if (!(seen = corral_set_new()))
		return corral_err_set(err, errno, "reading '%s'", name);
	errno = 0;
	while ((len = getdelim(&line, &cap, sep, fp)) != -1) {
		if (len > 0 && line[len - 1] == (char)sep)
			line[--len] = '\0';
		if (len == 0)
			continue;
		if (sep != '\0' && memchr(line, '\0', (size_t)len)) {
			corral_err_set(err, 0, "'%s': unit %zu holds a NUL byte",
			    name, units->n + 1);
			goto out;
		}
		if ((put = corral_set_put(seen, line, 0, NULL)) < 0)
			goto nomem;
		if (put == 0) {
			if (dups && corral_strv_addn(dups, line, (size_t)len) < 0)
				goto nomem;
			continue;
		}
		if (corral_strv_addn(units, line, (size_t)len) < 0)
			goto nomem;
		errno = 0;
	}
	if (ferror(fp)) {
		corral_err_set(err, errno, "cannot read '%s'", name);
		goto out;
	}
	rc = 0;
	goto out;
nomem:
	corral_err_set(err, errno, "reading '%s'", name);
out:
	free(line);
	corral_set_free(seen);
	return rc;
}

int
corral_units_load(const char *file, int sep, struct corral_strv *units,
    int warn, struct corral_err *err)
{
	struct corral_strv dups = CORRAL_STRV_INIT;
	FILE *fp = stdin;
	size_t i;
	int rc;

	if (strcmp(file, "-") && !(fp = corral_fopen_input(file, err)))
		return -1;
	rc = corral_units_read(fp, sep, file, units, &dups, err);
	for (i = 0; rc == 0 && warn && i < dups.n; i++)
		corral_warn("unit '%s' is listed more than once; "
		    "counted once", dups.v[i]);
	if (fp != stdin)
		fclose(fp);
	corral_strv_release(&dups);
	return rc;
}
