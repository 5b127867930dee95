/* See LICENSE file for copyright and license details. */
/*
 * line.c holds the one rule every reader of lines follows (units files,
 * discover output, parts, logs, results, history): a line ends at its LF,
 * or at the end of the file, and one CR just before that end is part of
 * the ending.  Any other CR -- alone inside a line, or the first of two at
 * its end -- is part of the line, and so of a unit's name.  And a stream
 * read in pieces (a unit's output, its TAP) is cut into lines of at most
 * so many bytes in one way.
 */
#include <stddef.h>
#include <string.h>

#include "base/base.h"

size_t
corral_line_chomp(char *line, size_t len)
{
	if (len > 0 && line[len - 1] == '\n')
		line[--len] = '\0';
	if (len > 0 && line[len - 1] == '\r')
		line[--len] = '\0';
	return len;
}

int
corral_line_blank(const char *s, size_t n)
{
	for (; n > 0; s++, n--)
		if (*s != ' ' && *s != '\t' && *s != '\r')
			return 0;
	return 1;
}

int
corral_line_take(struct corral_buf *cur, size_t max, const char **p,
    size_t *n, int *whole)
{
	const char *nl = memchr(*p, '\n', *n);
	size_t part = nl ? (size_t)(nl - *p) : *n;
	size_t room = cur->len < max ? max - cur->len : 0;
	int rc = corral_buf_add(cur, *p, part < room ? part : room);

	*whole = nl != NULL;
	*p += part + (nl != NULL);
	*n -= part + (nl != NULL);
	return rc;
}
