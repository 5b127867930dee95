/* See LICENSE file for copyright and license details. */
/*
 * units.c reads a population: one unit per line, or NUL-separated.  A unit
 * is an identity, so a second copy is dropped (and handed back so the tool
 * can say so).  A line ends as corral_line_chomp says (LF, or CR LF); any
 * other byte but the separator is part of a unit, except a NUL in a line,
 * which no unit may hold: it is refused, naming the unit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

/* "'NAME' line N: unit 'c\0zz' holds a NUL byte", the NULs shown as \0. */
static int
nul_error(const char *name, size_t lineno, const char *unit, size_t len,
    struct corral_err *err)
{
	struct corral_buf shown = CORRAL_BUF_INIT;
	size_t i;
	int rc = 0;

	for (i = 0; i < len && rc == 0; i++)
		rc = unit[i] ? corral_buf_addch(&shown, unit[i]) :
		    corral_buf_addstr(&shown, "\\0");
	if (rc < 0)
		corral_err_set(err, errno, "reading '%s'", name);
	else
		corral_err_set(err, 0, "'%s' line %zu: unit '%s' holds a NUL "
		    "byte", name, lineno, shown.data);
	corral_buf_release(&shown);
	return -1;
}

int
corral_units_read(FILE *fp, int sep, const char *name,
    struct corral_strv *units, struct corral_strv *dups,
    struct corral_err *err)
{
	struct corral_set *seen;
	char *line = NULL;
	size_t cap = 0, lineno = 0, n;
	ssize_t len;
	int rc = -1, put;

	if (!(seen = corral_set_new()))
		return corral_err_set(err, errno, "reading '%s'", name);
	errno = 0;
	while ((len = getdelim(&line, &cap, sep, fp)) != -1) {
		lineno++;
		n = (size_t)len;
		if (sep == '\n')
			n = corral_line_chomp(line, n);
		else if (n > 0 && line[n - 1] == '\0')
			n--;
		if (n == 0)
			continue;
		if (sep != '\0' && memchr(line, '\0', n)) {
			nul_error(name, lineno, line, n, err);
			goto out;
		}
		if ((put = corral_set_putn(seen, line, n, 0, NULL)) < 0)
			goto nomem;
		if (put == 0) {
			if (dups && corral_strv_addn(dups, line, n) < 0)
				goto nomem;
			continue;
		}
		if (corral_strv_addn(units, line, n) < 0)
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
