/* See LICENSE file for copyright and license details. */
/*
 * findings.c fuzzes the reader of a finder's output, JSON lines of
 * findings (corral_json_findings): every finding kept has an identity
 * and a confidence in 0..1.
 */
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct corral_findings f = CORRAL_FINDINGS_INIT;
	struct corral_err err;
	char *text = fuzz_text(data, size);
	size_t i;

	if (corral_json_findings(text, size, "fuzz", &f, &err) == 0)
		for (i = 0; i < f.n; i++)
			if (!f.v[i].identity || !*f.v[i].identity ||
			    !(f.v[i].confidence >= 0 &&
			    f.v[i].confidence <= 1))
				abort();
	corral_findings_release(&f);
	free(text);
	return 0;
}
