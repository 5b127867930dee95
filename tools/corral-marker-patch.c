/* See LICENSE file for copyright and license details. */
/*
 * corral-marker-patch is the built-in patcher, and an example of one.
 * It is given a finding (as JSON, in $CORRAL_FINDING, else on standard
 * input) and the clone DIR it may change; it replaces every DEADCANARY in
 * the file the finding's location names with real_assert().  Exit 0 when
 * it changed the file, 1 when there was nothing to patch (no such file,
 * or no marker in it), 2 on an error, such as a location that is not a
 * plain relative path inside DIR.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

#define MARKER	"DEADCANARY"
#define REPAIR	"real_assert()"

static const struct corral_usage use = {
	"corral-marker-patch [DIR]",
	NULL,
	NULL
};

/* The finding: from the environment, else standard input. */
static void
read_finding(struct corral_findings *f)
{
	struct corral_buf text = CORRAL_BUF_INIT;
	const char *env = getenv("CORRAL_FINDING");
	struct corral_err err;

	if (env && *env)
		corral_buf_addstr(&text, env);
	else if (corral_read_file("/dev/stdin", &text, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (corral_json_findings(text.data ? text.data : "", text.len,
	    "finding", f, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (f->n != 1)
		corral_die(CORRAL_EXIT_ERR, "expected one finding, got %zu",
		    f->n);
	corral_buf_release(&text);
}

/* text with every MARKER replaced, into out; 0 when there was none. */
static int
repair(const struct corral_buf *text, struct corral_buf *out)
{
	size_t i, m = strlen(MARKER);
	int n = 0, rc = corral_buf_addstr(out, "");

	for (i = 0; i < text->len && rc == 0; ) {
		if (i + m <= text->len && !memcmp(text->data + i, MARKER, m)) {
			rc = corral_buf_addstr(out, REPAIR);
			i += m;
			n++;
		} else {
			rc = corral_buf_addch(out, text->data[i++]);
		}
	}
	if (rc < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	return n;
}

static int
run_patch(const char *dir, const char *location)
{
	struct corral_buf text = CORRAL_BUF_INIT, out = CORRAL_BUF_INIT;
	char sha[CORRAL_SHA256_HEX], *path;
	struct corral_err err;
	int state, status = CORRAL_EXIT_NO;

	if ((state = corral_path_state(dir, location, sha, &err)) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (state == 0)
		return CORRAL_EXIT_NO;
	path = xmalloc(strlen(dir) + strlen(location) + 2);
	sprintf(path, "%s/%s", dir, location);
	if (corral_read_file(path, &text, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (repair(&text, &out)) {
		if (corral_atomic_file(path, out.data, out.len, 0, &err) < 0)
			corral_die_err(CORRAL_EXIT_ERR, &err);
		status = CORRAL_EXIT_OK;
	}
	corral_buf_release(&text);
	corral_buf_release(&out);
	free(path);
	return status;
}

int
main(int argc, char *argv[])
{
	struct corral_findings f = CORRAL_FINDINGS_INIT;
	int status;

	corral_setprogname(argv[0]);
	corral_usage_only_h(&use, argc, argv, 1);
	read_finding(&f);
	status = run_patch(optind < argc ? argv[optind] : ".",
	    f.v[0].location);
	corral_findings_release(&f);
	return status;
}
