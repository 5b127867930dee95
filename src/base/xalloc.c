/* See LICENSE file for copyright and license details. */
/*
 * xalloc.c holds the helpers that exit instead of returning an error:
 * allocation (git's x* family), reading a list of units, flushing
 * standard output, and a strtonum for option values.  Only
 * tools/ may call the x* functions; the library reports and never exits.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	return p;
}

void *
xcalloc(size_t nmemb, size_t n)
{
	void *p = calloc(nmemb ? nmemb : 1, n ? n : 1);

	if (!p)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	return p;
}

char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	return p;
}

void
xunits_load(const char *file, int sep, struct corral_strv *units, int warn)
{
	struct corral_err err;

	if (corral_units_load(file, sep, units, warn, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
}

void
xprint_buf(struct corral_buf *b, int rc)
{
	if (rc < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (b->len)
		fwrite(b->data, 1, b->len, stdout);
	corral_buf_release(b);
}

void
xflush_stdout(void)
{
	if (fflush(stdout) == EOF || ferror(stdout))
		corral_die(CORRAL_EXIT_ERR, "cannot write standard output:");
}

int
corral_strtonum(const char *s, long long min, long long max,
    long long *out, const char *what, struct corral_err *err)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (!*s || *end || end == s)
		return corral_err_set(err, 0, "%s '%s' is not a number",
		    what, s);
	if (errno == ERANGE || v < min || v > max)
		return corral_err_set(err, 0,
		    "%s '%s' is out of range (%lld to %lld)", what, s, min, max);
	*out = v;
	return 0;
}
