/* See LICENSE file for copyright and license details. */
/*
 * history.c fuzzes the readers of history.jsonl that plans weigh units
 * by (corral_weights_history), over a fixed population, and that learn
 * parts from (corral_learned_read).  The input is the file; weights must
 * be whole and not negative, and every part learned "." or a path
 * inside the tree, "DIR/" a listing of one.
 */
#include "fuzz.h"

/* Whether part is one corral_learned_read may keep. */
static int
keepable(const char *part)
{
	char copy[4200];
	size_t n = strlen(part);

	if (!strcmp(part, ".") || !strcmp(part, "./"))
		return 1;
	if (n >= sizeof(copy))
		return 0;
	memcpy(copy, part, n + 1);
	if (corral_path_is_listing(copy))
		copy[n - 1] = '\0';
	return corral_path_lexical("read", copy, CORRAL_PATH_CANONICAL,
	    NULL) == 0;
}

static void
learned(const char *path)
{
	struct corral_learned l;
	struct corral_err err;
	size_t i, k;

	if (corral_learned_read(&l, path, &err) == 0)
		for (i = 0; i < l.n; i++)
			for (k = 0; k < l.sets[i].n; k++)
				if (!keepable(l.sets[i].v[k]))
					abort();
	corral_learned_release(&l);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "a", "b", "t/c.sh", "d" };
	struct corral_strv units = CORRAL_STRV_INIT;
	struct corral_weights wt;
	struct corral_err err;
	char path[4200];
	size_t i;

	memset(&wt, 0, sizeof(wt));
	snprintf(path, sizeof(path), "%s/history.jsonl", fuzz_dir());
	fuzz_put(path, data, size);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (corral_strv_add(&units, names[i]) < 0)
			abort();
	if (corral_weights_history(&wt, &units, path, &err) == 0 &&
	    wt.w)
		for (i = 0; i < units.n; i++)
			if (wt.w[i] < 0)
				abort();
	corral_weights_release(&wt);
	corral_strv_release(&units);
	learned(path);
	return 0;
}
