/* See LICENSE file for copyright and license details. */
/*
 * tap.c fuzzes the TAP reader of a unit's output (corral_tap_*): any
 * bytes, cut into chunks at places the input picks, must read the same as
 * the whole in one piece, with counts that hold together.
 */
#include "fuzz.h"

/* Read data[1..size) in chunks of 1 + data[0] % 17 bytes (0: whole). */
static void
read_in(struct corral_tap *t, const uint8_t *data, size_t size, int keep)
{
	size_t step = size && data[0] % 17 ? 1 + data[0] % 17 : size, i, k;

	corral_tap_init(t, keep);
	for (i = 1; i < size; i += k) {
		k = size - i < step ? size - i : step;
		if (corral_tap_add(t, (const char *)data + i, k) < 0)
			abort();
	}
	if (corral_tap_end(t) < 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct corral_tap whole, cut;
	size_t i;

	read_in(&cut, data, size, 1);
	read_in(&whole, data, size, 0);
	if (cut.tests != whole.tests || cut.failed != whole.failed ||
	    cut.skipped != whole.skipped || cut.plan != whole.plan ||
	    cut.failures.n != whole.failures.n ||
	    cut.first_fail.len != whole.first_fail.len ||
	    (cut.first_fail.len && memcmp(cut.first_fail.data,
	    whole.first_fail.data, cut.first_fail.len)))
		abort();
	if (cut.failed + cut.skipped > cut.tests || cut.n != cut.tests ||
	    cut.failures.n > cut.failed || cut.failures.n > CORRAL_TAP_NAMES ||
	    (cut.failed > 0) != (cut.first_fail.len > 0))
		abort();
	for (i = 0; i < cut.failures.n; i++)
		if (strcmp(cut.failures.v[i], whole.failures.v[i]))
			abort();
	for (i = 0; i < cut.n; i++)
		if (!cut.v[i].name || (cut.v[i].status == CORRAL_TAP_SKIP) !=
		    (cut.v[i].reason != NULL))
			abort();
	corral_tap_release(&cut);
	corral_tap_release(&whole);
	return 0;
}
