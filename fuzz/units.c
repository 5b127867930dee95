/* See LICENSE file for copyright and license details. */
/*
 * units.c fuzzes the reader of units files (and of -p parts files, the
 * same reader): the first byte picks the separator, '\n' or NUL, and the
 * rest is the file.  Every unit read is non-empty, holds no separator,
 * and appears once.
 */
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct corral_strv units = CORRAL_STRV_INIT, dups = CORRAL_STRV_INIT;
	struct corral_err err;
	int sep;
	size_t i;
	FILE *fp;

	if (size < 1)
		return 0;
	sep = data[0] & 1 ? '\0' : '\n';
	if (!(fp = fmemopen((void *)(data + 1), size - 1, "r")))
		return 0;	/* glibc refuses an empty buffer */
	if (corral_units_read(fp, sep, "fuzz", &units, &dups, &err) == 0)
		for (i = 0; i < units.n; i++)
			if (!*units.v[i] || (sep && strchr(units.v[i], sep)))
				abort();
	fclose(fp);
	corral_strv_release(&units);
	corral_strv_release(&dups);
	return 0;
}
