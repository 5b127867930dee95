/* See LICENSE file for copyright and license details. */
/*
 * parts.c fuzzes a parts file as corral-checkout -m reads it: lines
 * (corral_units_read) that name parts of a small fixed tree, checked and
 * listed by corral_checkout_manifest.  The tree holds a file, a
 * directory, and symlinks that stay inside it or lead out, so the checks
 * on absolute paths, ".." and links all run.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

/* dir/src, made once. */
static const char *
tree(void)
{
	static char src[4200];
	char p[4300];

	if (src[0])
		return src;
	snprintf(src, sizeof(src), "%s/src", fuzz_dir());
	snprintf(p, sizeof(p), "%s/d", src);
	if (corral_mkdir_p(p, 0777, NULL) < 0)
		abort();
	snprintf(p, sizeof(p), "%s/a", src);
	fuzz_put(p, "a\n", 2);
	snprintf(p, sizeof(p), "%s/d/b", src);
	fuzz_put(p, "b\n", 2);
	snprintf(p, sizeof(p), "%s/in", src);
	if (symlink("d/b", p) < 0)
		abort();
	snprintf(p, sizeof(p), "%s/d/out", src);
	if (symlink("../../x", p) < 0)
		abort();
	snprintf(p, sizeof(p), "%s/abs", src);
	if (symlink("/etc", p) < 0)
		abort();
	return src;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct corral_strv parts = CORRAL_STRV_INIT;
	struct corral_strv missing = CORRAL_STRV_INIT;
	struct corral_buf out = CORRAL_BUF_INIT;
	struct corral_memo *memo = corral_memo_open(NULL);
	struct corral_err err;
	const char *src = tree();
	FILE *fp;

	if (!memo)
		abort();
	if (size < 1 || !(fp = fmemopen((void *)data, size, "r"))) {
		corral_memo_free(memo);
		return 0;
	}
	if (corral_units_read(fp, '\n', "fuzz", &parts, NULL, &err) == 0)
		(void)corral_checkout_manifest(src, &parts, NULL, NULL, memo, &out,
		    &missing, &err);
	fclose(fp);
	corral_memo_free(memo);
	corral_buf_release(&out);
	corral_strv_release(&parts);
	corral_strv_release(&missing);
	return 0;
}
