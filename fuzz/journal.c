/* See LICENSE file for copyright and license details. */
/*
 * journal.c fuzzes the reader of a repair's journal.json
 * (corral_json_journal), what a recovery after a crash trusts to undo
 * an apply.
 */
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct corral_journal_data d;
	struct corral_err err;
	char *text = fuzz_text(data, size);

	if (corral_json_journal(text, size, &d, &err) == 0)
		corral_journal_data_release(&d);
	free(text);
	return 0;
}
