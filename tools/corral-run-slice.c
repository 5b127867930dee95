/* See LICENSE file for copyright and license details. */
/*
 * corral-run-slice runs one agent.  It checks out a private clone of the
 * parts its units need, runs every unit of SLICE there with /bin/sh -c
 * CMD, and leaves one record per unit in LOGDIR/agent-AGENT.jsonl, a name
 * that appears only when the whole slice ran (until then the records
 * grow in agent-AGENT.jsonl.part).  A failing unit is a result: the exit
 * status is 0 when every unit passed, 1 when the slice ran and some unit
 * failed, and 2 only when it could not be run or logged.  The clone is removed at the end, unless kept.  On
 * SIGHUP, SIGINT or SIGTERM the running unit gets the signal, the clone
 * is removed, the .part stays, and the agent dies of the same signal.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"

static void
usage(FILE *fp, int status)
{
	fprintf(fp, "usage: corral-run-slice [-0hk] [-C SRC] [-i INPUTS] "
	    "[-p PART] [-P PARTSFILE] [-r RUN] [-w WORKROOT] [-x EXCLUDE] "
	    "-c CMD -l LOGDIR AGENT SLICE\n");
	exit(status);
}

static void
xadd(struct corral_strv *sv, const char *s)
{
	if (corral_strv_add(sv, s) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
}

/* Append the entries of file to list; duplicates are named if warn. */
static void
read_list(const char *file, int sep, struct corral_strv *list, int warn)
{
	struct corral_strv dups = CORRAL_STRV_INIT;
	struct corral_err err;
	FILE *fp;
	size_t i;

	if (!(fp = fopen(file, "r")))
		corral_die(CORRAL_EXIT_ERR, "cannot open '%s':", file);
	if (corral_units_read(fp, sep, file, list, &dups, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	for (i = 0; warn && i < dups.n; i++)
		corral_warn("unit '%s' is listed more than once; "
		    "counted once", dups.v[i]);
	fclose(fp);
	corral_strv_release(&dups);
}

/* Die of sig, as the caller expects of an interrupted program. */
static void
die_of(int sig)
{
	sigset_t set;

	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	exit(128 + sig);
}

static int
run_slice(struct corral_run *r, const struct corral_strv *units)
{
	struct corral_strv missing = CORRAL_STRV_INIT;
	struct corral_err err;
	int status = CORRAL_EXIT_ERR, rc;
	size_t i;

	if (corral_run_signals(&err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	rc = corral_run_start(r, &missing, &err);
	for (i = 0; i < missing.n; i++)
		corral_warn("part '%s' not found in '%s'", missing.v[i],
		    r->src);
	if (rc == 0 && corral_run_units(r, units, &err) == 0 &&
	    corral_run_commit(r, &err) == 0)
		status = r->failed ? CORRAL_EXIT_NO : CORRAL_EXIT_OK;
	else if (!corral_run_caught())
		corral_warn_err(&err);
	if (r->keep && r->clone)
		corral_warn("keeping the clone '%s'", r->clone);
	if (corral_run_release(r, &err) < 0)
		corral_warn_err(&err);
	corral_strv_release(&missing);
	if (corral_run_caught())
		die_of(corral_run_caught());
	return status;
}

static const char *
env_or(const char *name, const char *fallback)
{
	const char *v = getenv(name);

	return v && *v ? v : fallback;
}

int
main(int argc, char *argv[])
{
	struct corral_strv units = CORRAL_STRV_INIT, parts = CORRAL_STRV_INIT;
	struct corral_strv exclude = CORRAL_STRV_INIT, files = CORRAL_STRV_INIT;
	struct corral_err err;
	struct corral_run r;
	const char *cmd = NULL, *logdir = NULL, *run = NULL, *src = ".";
	const char *workroot = NULL, *keep, *inputs = NULL;
	char runid[32];
	int c, sep = '\n', status;
	size_t i;

	corral_setprogname(argv[0]);
	corral_run_init(&r);
	while ((c = getopt(argc, argv, "0C:c:hi:kl:p:P:r:w:x:")) != -1) {
		switch (c) {
		case '0': sep = '\0'; break;
		case 'C': src = optarg; break;
		case 'c': cmd = optarg; break;
		case 'h': usage(stdout, CORRAL_EXIT_OK); break;
		case 'i': inputs = optarg; break;
		case 'k': r.keep = 1; break;
		case 'l': logdir = optarg; break;
		case 'p': xadd(&parts, optarg); break;
		case 'P': xadd(&files, optarg); break;
		case 'r': run = optarg; break;
		case 'w': workroot = optarg; break;
		case 'x': xadd(&exclude, optarg); break;
		default: usage(stderr, CORRAL_EXIT_ERR);
		}
	}
	if (!cmd || !logdir || argc - optind != 2)
		usage(stderr, CORRAL_EXIT_ERR);
	if (corral_agent_check(argv[optind], &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	for (i = 0; i < files.n; i++)
		read_list(files.v[i], '\n', &parts, 0);
	read_list(argv[optind + 1], sep, &units, 1);
	if (!run)
		corral_run_id(runid);
	keep = getenv("CORRAL_KEEP");

	r.agent = argv[optind];
	r.cmd = cmd;
	r.logdir = logdir;
	r.run = run ? run : env_or("CORRAL_RUN", runid);
	r.src = src;
	r.parts = &parts;
	r.exclude = &exclude;
	r.workroot = workroot ? workroot : env_or("TMPDIR", "/tmp");
	r.inputs = inputs && *inputs ? inputs : NULL;
	r.keep |= keep && !strcmp(keep, "1");
	status = run_slice(&r, &units);

	corral_strv_release(&units);
	corral_strv_release(&parts);
	corral_strv_release(&exclude);
	corral_strv_release(&files);
	return status;
}
