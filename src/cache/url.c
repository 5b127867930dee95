/* See LICENSE file for copyright and license details. */
/*
 * url.c: whether a CORRAL_CACHE names an HTTP store.  A file of its own,
 * apart from http.c, because the programs that only look at the setting
 * (corral-engine, started for every step of a run, and corral-fix) must
 * not link libcurl for it: the linker takes a whole object for one of its
 * symbols, and libcurl brings some thirty libraries that every start of
 * the program would load (about 3 ms of CPU each time).
 */
#include <string.h>

#include "cache/http.h"

int
corral_http_is_url(const char *s)
{
	return strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0;
}
