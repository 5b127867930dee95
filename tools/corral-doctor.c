/* See LICENSE file for copyright and license details. */
/*
 * corral-doctor checks that this install really works, from wherever it
 * is run: its programs are all there and of one version, GNU Make is new
 * enough, its corral.mk is found and can be included, corral-split cuts
 * disjoint slices, a real fan-out through make -j3 corral-run isolates
 * its agents and merges once, and the scoreboard reads it back; with
 * corral fix installed, a planted defect is repaired and a bundle refused
 * on a moved target.  Each check prints one line, "ok:", "FAIL:" or
 * "skip:" with what it saw; the checks are in doctor.c.  Exit 0 when no
 * check failed, 1 when one did, 2 when the doctor could not run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

static const struct corral_usage use = {
	"corral-doctor [-h]",
	NULL,
	NULL
};

static const char *
plural(size_t n, const char *word, const char *words)
{
	return n == 1 ? word : words;
}

static int
run_checks(const struct corral_doctor *d)
{
	static const char *const state[] = { "FAIL:", "ok:", "skip:" };
	const struct corral_doctor_check *c;
	struct corral_buf detail = CORRAL_BUF_INIT;
	size_t ran = 0, failed = 0, skipped = 0;
	int v;

	for (c = corral_doctor_checks; c->name; c++) {
		corral_buf_reset(&detail);
		if ((v = c->fn(d, &detail)) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
		printf("  %-5s %s -- %s\n", state[v], c->name,
		    detail.data ? detail.data : "");
		fflush(stdout);
		ran += v != CORRAL_CHECK_SKIP;
		failed += v == CORRAL_CHECK_FAIL;
		skipped += v == CORRAL_CHECK_SKIP;
	}
	printf("corral doctor: %s (%zu %s, %zu %s", failed ? "FAIL" : "PASS",
	    ran, plural(ran, "check", "checks"), failed,
	    plural(failed, "failure", "failures"));
	if (skipped)
		printf(", %zu skipped", skipped);
	printf(")\n");
	corral_buf_release(&detail);
	return failed ? CORRAL_EXIT_NO : CORRAL_EXIT_OK;
}

int
main(int argc, char *argv[])
{
	struct corral_buf mk = CORRAL_BUF_INIT, tried = CORRAL_BUF_INIT;
	struct corral_doctor d = { 0 };
	struct corral_err err;
	char *bindir, *tmp;
	int status;

	corral_setprogname(argv[0]);
	corral_usage_only_h(&use, argc, argv, 0);
	if (!(bindir = corral_self_isolated(argv[0], &err)))
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (!(tmp = corral_tour_tmpdir("corral_doctor_", &err)))
		corral_die_err(CORRAL_EXIT_ERR, &err);
	d.bindir = bindir;
	d.mk = corral_mk_find(bindir, &mk, &tried) == 0 ? mk.data : NULL;
	d.mk_tried = tried.data;
	d.scratch = tmp;
	d.make = "make";
	status = run_checks(&d);
	if (corral_remove_tree(tmp, &err) < 0) {
		corral_warn_err(&err);
		status = CORRAL_EXIT_ERR;
	}
	free(tmp);
	free(bindir);
	corral_buf_release(&mk);
	corral_buf_release(&tried);
	xflush_stdout();
	return status;
}
