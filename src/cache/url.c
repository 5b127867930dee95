/* See LICENSE file for copyright and license details. */
/*
 * url.c tells a store's URL from its directory.  It is apart from http.c
 * so that a program that only reads the setting (corral-engine, which
 * runs once a slice) links no libcurl: loading it and the libraries it
 * needs cost more than the rest of such a program's start.
 */
#include <string.h>

#include "cache/http.h"

int
corral_http_is_url(const char *s)
{
	return strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0;
}
