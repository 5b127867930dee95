/* See LICENSE file for copyright and license details. */
/*
 * The population as the engine lists it: CORRAL_OUT, when it lies inside
 * CORRAL_SRC, is never a unit.
 */
#include <string.h>

#include "engine/engine.h"

/* Whether line names outrel or something under it, with or without "./". */
static int
under_out(const char *line, size_t n, const char *outrel, size_t plen)
{
	if (n >= 2 && line[0] == '.' && line[1] == '/')
		line += 2, n -= 2;
	return n >= plen && !memcmp(line, outrel, plen) &&
	    (n == plen || line[plen] == '/');
}

int
corral_units_filter(const char *in, size_t n, const char *outrel,
    struct corral_buf *out)
{
	size_t plen = strlen(outrel), len;
	const char *nl;
	int rc = corral_buf_addstr(out, "");

	while (rc == 0 && n) {
		nl = memchr(in, '\n', n);
		len = nl ? (size_t)(nl - in) : n;
		if (len && in[len - 1] == '\r')
			len--;
		if (!plen || !under_out(in, len, outrel, plen))
			rc = corral_buf_add(out, in, len) |
			    corral_buf_addch(out, '\n');
		len = nl ? (size_t)(nl - in) + 1 : n;
		in += len;
		n -= len;
	}
	return rc;
}
