/* See LICENSE file for copyright and license details. */
/*
 * fuzz.h holds what the libFuzzer harnesses share: the entry point's
 * prototype, the input as a NUL-terminated string (the library's parsers
 * want a NUL after the bytes), and a private scratch directory for the
 * readers that take a path.  Included by the harnesses only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* data[0..size) and a NUL, malloc'd; aborts on ENOMEM (a harness bug). */
static inline char *
fuzz_text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* A directory of this process's own, made once; aborts when it cannot. */
static inline const char *
fuzz_dir(void)
{
	static char dir[4096];
	const char *tmp = getenv("TMPDIR");

	if (dir[0])
		return dir;
	snprintf(dir, sizeof(dir), "%s/corral-fuzz.XXXXXX",
	    tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	return dir;
}

/* Write data[0..size) to path, replacing it; aborts when it cannot. */
static inline void
fuzz_put(const char *path, const void *data, size_t size)
{
	FILE *fp = fopen(path, "w");

	if (!fp || fwrite(data, 1, size, fp) != size || fclose(fp) != 0)
		abort();
}
