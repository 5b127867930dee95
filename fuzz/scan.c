/* See LICENSE file for copyright and license details. */
/*
 * scan.c fuzzes the merge's record scanner against cJSON: a line the
 * scanner takes (merge_scan_takes) must be one corral_json_record_parse
 * takes, with the same unit, ok, status, run, at and inputs; and
 * merge_scan_record, scanner or not, must give record.c's verdict and
 * message for every line.
 */
#include "fuzz.h"
#include "merge/merge-private.h"

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
	struct corral_buf scratch = CORRAL_BUF_INIT;
	struct corral_json_record want, got;
	struct corral_err werr, gerr;
	char *line = fuzz_text(data, size);
	int wrc, grc;

	wrc = corral_json_record_parse(line, size, &want, &werr);
	if (merge_scan_takes(line, size, &got, &scratch)) {
		if (wrc < 0 || got.ok != want.ok)
			abort();
		same(got.unit, want.unit);
		same(got.status, want.status);
		same(got.run, want.run);
		same(got.at, want.at);
		same(got.inputs, want.inputs);
	}
	corral_json_record_release(&got);
	grc = merge_scan_record(line, size, &got, &scratch, &gerr);
	if (grc != wrc || (wrc < 0 && strcmp(gerr.msg, werr.msg)))
		abort();
	if (grc == 0)
		same(got.unit, want.unit);
	corral_json_record_release(&got);
	corral_json_record_release(&want);
	corral_buf_release(&scratch);
	free(line);
	return 0;
}
