/* See LICENSE file for copyright and license details. */
/*
 * settings.c fuzzes what the engine reads that others could have
 * written: settings.json in CORRAL_OUT (corral_settings_read), which must
 * be written again (corral_settings_json) and read back the same, and a
 * listing of units (corral_units_filter), from which CORRAL_OUT must be
 * gone whatever the bytes around it.
 */
#include "fuzz.h"

/* Whether line[0..n) names out or something under it. */
static int
names_out(const char *line, size_t n, const char *out)
{
	size_t k = strlen(out);

	if (n >= 2 && line[0] == '.' && line[1] == '/')
		line += 2, n -= 2;
	return n >= k && !memcmp(line, out, k) && (n == k || line[k] == '/');
}

static void
filter(const uint8_t *data, size_t size)
{
	struct corral_buf out = CORRAL_BUF_INIT;
	const char *p, *end, *nl;

	if (corral_units_filter((const char *)data, size, ".corral", &out) < 0)
		abort();
	p = out.data ? out.data : "";
	for (end = p + out.len; p < end; p = nl + 1) {
		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			abort();	/* every line kept ends in LF */
		if (names_out(p, (size_t)(nl - p), ".corral"))
			abort();
	}
	corral_buf_release(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct corral_settings s, again;
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_err err;
	char path[4200];
	size_t i;

	filter(data, size);
	snprintf(path, sizeof(path), "%s/settings.json", fuzz_dir());
	fuzz_put(path, data, size);
	corral_settings_init(&s);
	corral_settings_init(&again);
	if (corral_settings_read(&s, path, &err) == 0) {
		if (corral_settings_json(&s, &b) < 0)
			abort();
		fuzz_put(path, b.data, b.len);
		if (corral_settings_read(&again, path, &err) < 0)
			abort();
		for (i = 0; i < CS_COUNT; i++)
			if (strcmp(corral_setting(&s, (enum corral_setting_id)i),
			    corral_setting(&again, (enum corral_setting_id)i)))
				abort();
	}
	corral_settings_release(&s);
	corral_settings_release(&again);
	corral_buf_release(&b);
	return 0;
}
