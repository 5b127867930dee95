/* See LICENSE file for copyright and license details. */
/*
 * scan.c fuzzes the merge's record scanner (record/scan.c) against
 * cJSON: a line the scanner takes (corral_record_scan_takes) must be one
 * corral_json_record_parse takes, with the same unit, ok, status, run,
 * at, inputs, note, output, duration_ms, cached and counts of tests; and
 * corral_record_scan, scanner or not, must give
 * record.c's verdict and message for every line.
 */
#include "fuzz.h"

/* The unit the scanner last told of. */
static void
hinted(void *ctx, const char *unit, size_t len)
{
	struct corral_buf *b = ctx;

	corral_buf_reset(b);
	if (corral_buf_add(b, unit, len) < 0)
		abort();
}

/* a and b are both NULL or the same string. */
static void
same(const char *a, const char *b)
{
	if (!a != !b || (a && strcmp(a, b)))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct corral_buf scratch = CORRAL_BUF_INIT, hint = CORRAL_BUF_INIT;
	struct corral_json_record want, got;
	struct corral_err werr, gerr;
	char *line = fuzz_text(data, size);
	int wrc, grc;

	wrc = corral_json_record_parse(line, size, &want, &werr);
	if (corral_record_scan_takes(line, size, &got, &scratch, hinted, &hint)) {
		if (wrc < 0 || got.ok != want.ok || got.cached != want.cached ||
		    got.duration_ms != want.duration_ms ||
		    got.tests != want.tests ||
		    got.tests_failed != want.tests_failed ||
		    got.tests_skipped != want.tests_skipped)
			abort();
		same(got.unit, hint.data);
		same(got.unit, want.unit);
		same(got.status, want.status);
		same(got.run, want.run);
		same(got.at, want.at);
		same(got.inputs, want.inputs);
		same(got.note, want.note);
		same(got.output, want.output);
	}
	corral_json_record_release(&got);
	grc = corral_record_scan(line, size, &got, &scratch, NULL, NULL, &gerr);
	if (grc != wrc || (wrc < 0 && strcmp(gerr.msg, werr.msg)))
		abort();
	if (grc == 0)
		same(got.unit, want.unit);
	corral_json_record_release(&got);
	corral_json_record_release(&want);
	corral_buf_release(&scratch);
	corral_buf_release(&hint);
	free(line);
	return 0;
}
