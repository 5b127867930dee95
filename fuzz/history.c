/* See LICENSE file for copyright and license details. */
/*
 * history.c fuzzes the reader of history.jsonl that plans weigh units
 * by (corral_weights_history), over a fixed population.  The input is
 * the file; weights must be whole and not negative.
 */
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "a", "b", "t/c.sh", "d" };
	struct corral_strv units = CORRAL_STRV_INIT;
	struct corral_weights wt;
	struct corral_err err;
	char path[4200];
	size_t i;

	memset(&wt, 0, sizeof(wt));
	snprintf(path, sizeof(path), "%s/history.jsonl", fuzz_dir());
	fuzz_put(path, data, size);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (corral_strv_add(&units, names[i]) < 0)
			abort();
	if (corral_weights_history(&wt, &units, path, &err) == 0 &&
	    wt.w)
		for (i = 0; i < units.n; i++)
			if (wt.w[i] < 0)
				abort();
	corral_weights_release(&wt);
	corral_strv_release(&units);
	return 0;
}
