/* See LICENSE file for copyright and license details. */
/*
 * record.c fuzzes the readers of one log line: a record
 * (corral_json_record_parse and its flaky rewrite, which must parse back),
 * a history commit line and the small JSON objects of live status files.
 */
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_json_record r;
	struct corral_json_obj o;
	struct corral_err err;
	char *line = fuzz_text(data, size);

	if (corral_json_record_parse(line, size, &r, &err) == 0) {
		if (!r.unit || !*r.unit)
			abort();
		corral_json_record_release(&r);
		if (corral_json_record_flaky(line, size, &b) == 0) {
			if (corral_json_record_parse(b.data, b.len, &r,
			    &err) < 0)
				abort();
			corral_json_record_release(&r);
		}
	}
	corral_buf_reset(&b);
	(void)corral_json_commit_parse(line, size, &b);
	if (corral_json_obj_parse(line, size, &o, &err) == 0) {
		(void)corral_json_obj_str(&o, "unit");
		(void)corral_json_obj_int(&o, "pid");
		corral_json_obj_release(&o);
	}
	corral_buf_release(&b);
	free(line);
	return 0;
}
