/* See LICENSE file for copyright and license details. */
/*
 * line.c holds the one rule every reader of lines follows (units files,
 * discover output, parts, logs, results, history): a line ends at its LF,
 * or at the end of the file, and one CR just before that end is part of
 * the ending.  Any other CR -- alone inside a line, or the first of two at
 * its end -- is part of the line, and so of a unit's name.
 */
#include <stddef.h>

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
