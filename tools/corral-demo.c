/* See LICENSE file for copyright and license details. */
/*
 * corral-demo is the live tour: in a temporary directory it writes a
 * project of 12 checks, check-00 .. check-11, where every multiple of 5
 * fails, includes corral.mk and runs make -j4 corral-run CORRAL_AGENTS=4:
 * 4 isolated agents at a time.  With no history the plan cuts one slice
 * (one agent, one log) per check, and make's queue runs them 4 at a
 * time (CORRAL_AGENTS says how many run at once; the slices may be
 * finer on a first run).  Then it reads the results back row by
 * row, prints the merged counts and removes the directory.  It says only
 * what it saw: when a claim of its text does not hold, it says which and
 * exits 1 (2 when it could not run at all).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

#define NUNITS	12
#define NAGENTS	4	/* at a time: -j and CORRAL_AGENTS */
#define NSLICES	12	/* a first run's plan: a slice per check */

static const struct corral_usage use = {
	"corral-demo [-h]",
	NULL,
	NULL
};

static void
xadd(struct corral_strv *sv, const char *s)
{
	if (corral_strv_add(sv, s) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
}

/* 1 when a and b hold the same strings in the same order. */
static int
same(const struct corral_strv *a, const struct corral_strv *b)
{
	size_t i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]))
			return 0;
	return 1;
}

/* Each claim the text makes that the run does not bear out, in problems. */
static void
audit(const struct corral_tour_result *r, const struct corral_strv *failing,
    struct corral_strv *problems)
{
	if (!WIFEXITED(r->wstatus) || WEXITSTATUS(r->wstatus) == 0)
		xadd(problems, "make corral-run did not report the failed "
		    "checks in its exit status");
	if (r->logs != NSLICES || r->unfinished)
		xadd(problems, "there are not exactly 12 finished agent logs, "
		    "one a slice");
	if (r->once != NUNITS || r->twice || r->stray || r->bad)
		xadd(problems, "not every check is in the results exactly "
		    "once");
	if (r->passed != NUNITS - failing->n || !same(&r->failed_units,
	    failing))
		xadd(problems, "the failures are not exactly check-00, "
		    "check-05 and check-10");
	if (r->isolated != NUNITS)
		xadd(problems, "a clone held checks of another agent");
	if (r->leftovers)
		xadd(problems, "a clone was left behind");
}

static void
report(const char *tmp, const char *mk, const struct corral_tour_result *r,
    int ok)
{
	const char *base = strrchr(tmp, '/') ? strrchr(tmp, '/') + 1 : tmp;

	printf("corral demo -- %d checks in %d slices, %d isolated agents at "
	    "a time\n", NUNITS, NSLICES, NAGENTS);
	printf("================================================"
	    "================\n");
	printf("  ran make -j%d corral-run in %s/, whose Makefile includes\n"
	    "  %s\n", NAGENTS, base, mk);
	printf("  slices: %zu   merged: %zu   successes: %zu   failures: %zu\n",
	    r->logs, r->once + r->twice + r->stray, r->passed, r->failed);
	if (!ok)
		return;
	printf("  no history yet: CORRAL_AGENTS=%d is how many agents run at "
	    "once, and the\n  first plan cuts a slice per check for make's "
	    "queue to balance\n", NAGENTS);
	printf("  each agent wrote its OWN log in %s/.corral/logs/"
	    "agent-*.jsonl\n", base);
	printf("  ONE merge folded them into successes.jsonl + failures.jsonl"
	    " -- no shared-folder\n  contention, every result present exactly"
	    " once; check-00, check-05 and\n  check-10 failed on purpose.\n");
	printf("\nFor a real subagent fan-out: corral plan gives each agent "
	    "the parts to clone,\nwhat to test, and a unique log path; start "
	    "the agents, then run corral merge once.\n");
}

/* Copy make's output to stderr, for a run that went wrong. */
static void
show_make(const char *path)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_err err;

	if (corral_read_file(path, &b, &err) == 0 && b.len) {
		fprintf(stderr, "%s: what make printed:\n", corral_progname());
		fwrite(b.data, 1, b.len, stderr);
	}
	corral_buf_release(&b);
}

static int
run_demo(const char *bindir, const char *mk, const char *tmp)
{
	struct corral_strv units = CORRAL_STRV_INIT, failing = CORRAL_STRV_INIT;
	struct corral_strv problems = CORRAL_STRV_INIT;
	struct corral_tour t = { tmp, mk, bindir, "make", &units, &failing,
	    NAGENTS };
	struct corral_tour_result r;
	struct corral_err err;
	char name[16];
	size_t i;
	int rc;

	for (i = 0; i < NUNITS; i++) {
		snprintf(name, sizeof(name), "check-%02zu", i);
		xadd(&units, name);
		if (i % 5 == 0)
			xadd(&failing, name);
	}
	if ((rc = corral_tour_run(&t, &r, &err)) < 0)
		corral_warn_err(&err);
	else
		audit(&r, &failing, &problems);
	if (rc == 0)
		report(tmp, mk, &r, problems.n == 0);
	if ((rc < 0 || problems.n) && r.makeout)
		show_make(r.makeout);
	if (corral_remove_tree(tmp, &err) < 0 || access(tmp, F_OK) == 0)
		xadd(&problems, "its temporary directory is still there");
	for (i = 0; i < problems.n; i++)
		corral_warn("the demo did not behave as described: %s",
		    problems.v[i]);
	rc = rc < 0 ? CORRAL_EXIT_ERR : problems.n ? CORRAL_EXIT_NO :
	    CORRAL_EXIT_OK;
	corral_tour_release(&r);
	corral_strv_release(&units);
	corral_strv_release(&failing);
	corral_strv_release(&problems);
	return rc;
}

int
main(int argc, char *argv[])
{
	struct corral_buf mk = CORRAL_BUF_INIT;
	struct corral_err err;
	char *bindir, *tmp;
	int status;

	corral_setprogname(argv[0]);
	corral_usage_only_h(&use, argc, argv, 0);
	if (!(bindir = corral_self_isolated(argv[0], &err)) ||
	    corral_mk_locate(bindir, &mk, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (!(tmp = corral_tour_tmpdir("corral_demo_", &err)))
		corral_die_err(CORRAL_EXIT_ERR, &err);
	status = run_demo(bindir, mk.data, tmp);
	free(tmp);
	free(bindir);
	corral_buf_release(&mk);
	xflush_stdout();
	return status;
}
