/* See LICENSE file for copyright and license details. */
/*
 * xalloc.c holds the helpers that exit instead of returning an error:
 * allocation (git's x* family), reading a list of units, flushing
 * standard output.  They are the programs' (tools/tool/): the library
 * reports and never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

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
