/* See LICENSE file for copyright and license details. */
/*
 * journal.c fuzzes the reader of a repair's journal.json
 * (corral_journal_parse), what a recovery after a crash trusts to undo
 * an apply.
 */
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct corral_err err;
	char *text = fuzz_text(data, size);

	(void)corral_journal_parse(text, size, &err);
	free(text);
	return 0;
}
