/* See LICENSE file for copyright and license details. */
/*
 * manifest.c fuzzes the readers of a fix bundle: its manifest.json
 * (corral_json_manifest) and an attempt's result.json
 * (corral_json_attempt), which share the "files" array.
 */
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct corral_changes files = CORRAL_CHANGES_INIT;
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_manifest m;
	struct corral_err err;
	char *text = fuzz_text(data, size), *status, *detail;
	size_t i;
	int look;

	if (corral_json_manifest(text, size, &m, &err) == 0) {
		for (i = 0; i < m.nfixes; i++)
			if (corral_json_files(&b, &m.fixes[i].files, 2, 1) < 0)
				abort();
		corral_manifest_release(&m);
	}
	if (corral_json_attempt(text, size, &status, &detail, &look, &files,
	    &err) == 0) {
		free(status);
		free(detail);
	}
	corral_changes_release(&files);
	corral_buf_release(&b);
	free(text);
	return 0;
}
