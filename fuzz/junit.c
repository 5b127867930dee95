/* See LICENSE file for copyright and license details. */
/*
 * junit.c fuzzes the reader of a unit's own JUnit XML (corral_junit_read):
 * any bytes are refused or read, the same with the tests kept as without,
 * with counts that hold together, a note line without a line break, and
 * a record that carries them reads back with the same counts.
 */
#include "fuzz.h"

static int
read_in(struct corral_tap *t, const uint8_t *data, size_t size, int keep)
{
	struct corral_err err;

	corral_tap_init(t, keep);
	return corral_junit_read(t, (const char *)data, size, &err);
}

/* The record of a unit with t's tests, formatted and parsed back. */
static void
round_trip(const struct corral_tap *t)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_json_record jr;
	struct corral_record r;
	struct corral_err err;

	memset(&r, 0, sizeof(r));
	r.unit = "u";
	r.status = "pass";
	r.exit_code = 0;
	r.attempt = 1;
	r.tap = t;
	if (corral_record_format(&b, &r) < 0)
		abort();
	b.data[--b.len] = '\0';	/* the '\n' */
	if (corral_json_record_parse(b.data, b.len, &jr, &err) < 0 ||
	    jr.tests != (long long)t->tests ||
	    jr.tests_failed != (long long)t->failed ||
	    jr.tests_skipped != (long long)t->skipped)
		abort();
	corral_json_record_release(&jr);
	corral_buf_release(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct corral_tap kept, bare;
	int a, b;

	a = read_in(&kept, data, size, 1);
	b = read_in(&bare, data, size, 0);
	if (a != b)
		abort();
	if (a == 0) {
		if (kept.tests != bare.tests || kept.failed != bare.failed ||
		    kept.skipped != bare.skipped || kept.n != kept.tests ||
		    kept.plan != (long long)kept.tests || !kept.junit ||
		    kept.failed + kept.skipped > kept.tests ||
		    kept.failures.n > kept.failed ||
		    (kept.failed > 0) != (kept.first_fail.len > 0) ||
		    memchr(kept.first_fail.data ? kept.first_fail.data : "",
		    '\n', kept.first_fail.len))
			abort();
		round_trip(&bare);
	}
	corral_tap_release(&kept);
	corral_tap_release(&bare);
	return 0;
}
