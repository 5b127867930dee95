/* See LICENSE file for copyright and license details. */
/*
 * merge.c fuzzes corral_merge_run end to end.  The input is cut at lines
 * "%%" into sections: the units file (none when empty), the history.jsonl
 * found in OUTDIR (none when empty), then the agent logs, four to a
 * layer (logs/agent-K.jsonl, then rerun/agent-K.jsonl).  Every line the
 * merge writes to successes.jsonl and failures.jsonl must be a record.
 */
#include <sys/stat.h>

#include "fuzz.h"

#define SECTIONS	10
#define PER_LAYER	4

static void
quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

/* dir/name, in a static buffer. */
static const char *
at(const char *dir, const char *name)
{
	static char p[4400];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

/* Every line of path, if it exists, parses as a record. */
static void
check_records(const char *path)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_json_record r;
	struct corral_err err;
	char *line, *nl;

	if (corral_read_file(path, &b, &err) < 0 || !b.len)
		goto out;
	for (line = b.data; (nl = memchr(line, '\n', b.len -
	    (size_t)(line - b.data))); line = nl + 1) {
		*nl = '\0';
		if (corral_json_record_parse(line, (size_t)(nl - line), &r,
		    &err) < 0)
			abort();
		corral_json_record_release(&r);
	}
out:
	corral_buf_release(&b);
}

/* The next "\n%%\n" in p[0..n), or NULL. */
static const uint8_t *
next_sep(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 4 <= n; i++)
		if (!memcmp(p + i, "\n%%\n", 4))
			return p + i;
	return NULL;
}

/* Lay the sections out under root; o says where they went. */
static void
lay_out(const char *root, const uint8_t *data, size_t size,
    struct corral_merge_opts *o, char units[4400])
{
	const uint8_t *p = data, *end = data + size, *q;
	char name[64];
	int k;

	for (k = 0; k < SECTIONS && p <= end; k++, p = q + 4) {
		q = k == SECTIONS - 1 ? NULL : next_sep(p, (size_t)(end - p));
		if (!q)
			q = end;
		if (k == 0 && q > p) {
			snprintf(units, 4400, "%s", at(root, "units"));
			fuzz_put(units, p, (size_t)(q - p));
			o->units = units;
		} else if (k == 1 && q > p) {
			fuzz_put(at(root, "out/history.jsonl"), p,
			    (size_t)(q - p));
		} else if (k >= 2) {
			snprintf(name, sizeof(name), "%s/agent-%d.jsonl",
			    k - 2 < PER_LAYER ? "logs" : "rerun",
			    (k - 2) % PER_LAYER);
			fuzz_put(at(root, name), p, (size_t)(q - p));
		}
		if (q == end)
			break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct corral_merge_opts o;
	struct corral_merge_stats st;
	struct corral_err err;
	char root[4200], out[4400], logs[4400], rerun[4400], units[4400];
	const char *dirs[2];

	snprintf(root, sizeof(root), "%s/m", fuzz_dir());
	if (corral_remove_tree(root, &err) < 0)
		abort();
	snprintf(out, sizeof(out), "%s", at(root, "out"));
	snprintf(logs, sizeof(logs), "%s", at(root, "logs"));
	snprintf(rerun, sizeof(rerun), "%s", at(root, "rerun"));
	if (corral_mkdir_p(out, 0777, &err) < 0 ||
	    corral_mkdir_p(logs, 0777, &err) < 0 ||
	    corral_mkdir_p(rerun, 0777, &err) < 0)
		abort();
	memset(&o, 0, sizeof(o));
	memset(&st, 0, sizeof(st));
	lay_out(root, data, size, &o, units);
	dirs[0] = logs;
	dirs[1] = rerun;
	o.logdirs = dirs;
	o.nlogdirs = 2;
	o.outdir = out;
	o.run = "fuzz";
	if (corral_merge_run(&o, &st, quiet, NULL, &err) == 0 &&
	    st.written) {
		check_records(at(out, "successes.jsonl"));
		check_records(at(out, "failures.jsonl"));
	}
	corral_merge_stats_release(&st);
	return 0;
}
