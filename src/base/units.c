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

void
corral_units_stream_init(struct corral_units_stream *s, FILE *fp, int sep,
    const char *name)
{
	memset(s, 0, sizeof(*s));
	s->fp = fp;
	s->sep = sep;
	s->name = name;
}

void
corral_units_stream_release(struct corral_units_stream *s)
{
	free(s->line);
	s->line = NULL;
	s->cap = 0;
}

int
corral_units_next(struct corral_units_stream *s, struct corral_err *err)
{
	ssize_t len;
	size_t n;

	errno = 0;
	if ((len = getdelim(&s->line, &s->cap, s->sep, s->fp)) == -1) {
		if (!ferror(s->fp))
			return 0;
		return corral_err_set(err, errno, "cannot read '%s'", s->name);
	}
	s->lineno++;
	s->off = s->next;
	s->next += len;
	n = (size_t)len;
	if (s->sep == '\n')
		n = corral_line_chomp(s->line, n);
	else if (n > 0 && s->line[n - 1] == '\0')
		n--;
	s->line[n] = '\0';
	s->len = n;
	if (n > 0 && s->sep != '\0' && memchr(s->line, '\0', n))
		return nul_error(s->name, s->lineno, s->line, n, err);
	return 1;
}

int
corral_units_read(FILE *fp, int sep, const char *name,
    struct corral_strv *units, struct corral_strv *dups,
    struct corral_err *err)
{
	struct corral_units_stream st;
	struct corral_set *seen;
	int rc, put;

	if (!(seen = corral_set_new()))
		return corral_err_set(err, errno, "reading '%s'", name);
	corral_units_stream_init(&st, fp, sep, name);
	while ((rc = corral_units_next(&st, err)) > 0) {
		if (st.len == 0)
			continue;
		if ((put = corral_set_putn(seen, st.line, st.len, 0, NULL)) < 0)
			break;
		if (put == 0) {
			if (dups && corral_strv_addn(dups, st.line, st.len) < 0)
				break;
			continue;
		}
		if (corral_strv_addn(units, st.line, st.len) < 0)
			break;
	}
	if (rc > 0)
		rc = corral_err_set(err, errno, "reading '%s'", name);
	corral_units_stream_release(&st);
	corral_set_free(seen);
	return rc < 0 ? -1 : 0;
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
