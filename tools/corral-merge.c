/* See LICENSE file for copyright and license details. */
/*
 * corral-merge is the only writer of the shared result files.  It reads
 * every LOGDIR/agent-ID.jsonl and writes OUTDIR/successes.jsonl,
 * failures.jsonl and summary.json atomically, under a lock, each unit
 * exactly once, then appends new runs to OUTDIR/history.jsonl.  Bad input
 * or a unit in two logs leaves every file as it was.  A log changed after
 * its seal (with -s, also one without a seal) is refused: named, none of
 * its records merged, its expected units not run, and the exit status 2.
 * With -S the operands are shard directories, run on many hosts: each
 * one's manifest is checked against the population UNITS, cut again as
 * every host cut it, and their logs are merged as one run's; a missing
 * shard is named.  Exit 0: complete, all passed; 1: complete, some failed
 * (or, with -f, flaky); 2: incomplete, bad input, or an error.  When it
 * wrote the results it notes its start and length in OUTDIR/merge.json,
 * for corral-report's timeline.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

static const struct corral_usage use = {
	"corral-merge [-fqs] [-k SHARD] [-o OUTDIR] [-r RUN] [-u UNITS] "
	"LOGDIR...\n"
	"corral-merge -S [-fq] [-H HISTORY] [-r RUN] -o OUTDIR -u UNITS "
	"SHARDDIR...",
	"-f\ta flaky unit makes the answer no\n"
	"-H HISTORY\twith -S, the history every shard was cut by\n"
	"-k SHARD\tthe logs are shard SHARD (K/N), as the summary says\n"
	"-o OUTDIR\twrite the results there\n"
	"-q\tprint no summary line\n"
	"-r RUN\tthe run id of the merge's own records\n"
	"-S\tmerge shard directories, every unit of UNITS once\n"
	"-s\tevery log must end in a seal\n"
	"-u UNITS\tthe expected population, one unit a line",
	NULL
};

/* An option value, refused when empty. */
static const char *
value(int opt, const char *arg)
{
	if (!*arg)
		corral_die(CORRAL_EXIT_ERR, "-%c: the value is empty", opt);
	return arg;
}

static void
report(void *arg, const char *msg)
{
	(void)arg;
	corral_warn("%s", msg);
}

static const char *
plural(size_t n, const char *word, const char *words)
{
	return n == 1 ? word : words;
}

/*
 * "merged 200 units from 16 agents: 188 passed (2 flaky), 2 skipped,
 * 10 failed, 3 not run; 150 cached; 215 attempts" -- cached: the units
 * whose record reuses a stored result, not run again (Bazel's "Executed
 * 50 out of 200 tests").
 */
static void
print_summary(const struct corral_merge_stats *st, const char *shard)
{
	if (shard)
		corral_showf(stdout, "shard %s: ", shard);
	printf("merged %zu %s from %zu %s: %zu passed", st->merged,
	    plural(st->merged, "unit", "units"), st->agents,
	    plural(st->agents, "agent", "agents"),
	    st->successes - st->skipped);
	if (st->flaky)
		printf(" (%zu flaky)", st->flaky);
	if (st->skipped)
		printf(", %zu skipped", st->skipped);
	printf(", %zu failed", st->failures - st->not_run);
	if (st->not_run)
		printf(", %zu not run", st->not_run);
	if (st->cached)
		printf("; %zu cached", st->cached);
	if (st->attempts > st->merged)
		printf("; %zu attempts", st->attempts);
	if (st->refused.n)
		printf("; %zu %s refused", st->refused.n,
		    plural(st->refused.n, "log", "logs"));
	putchar('\n');
}

static int
status_of(const struct corral_merge_stats *st, int fail_on_flaky)
{
	if (!st->written || st->missing || st->unexpected ||
	    st->unfinished.n || st->refused.n)
		return CORRAL_EXIT_ERR;
	if (st->failures || (fail_on_flaky && st->flaky))
		return CORRAL_EXIT_NO;
	return CORRAL_EXIT_OK;
}

/*
 * When the merge ran and how long it took, in OUTDIR/merge.json for the
 * run's timeline (the library reads no clock).  A failure is said only.
 */
static void
note_merge(const struct corral_merge_opts *o, long long start, long long ms)
{
	struct corral_err err;
	char *dir = NULL, *slash;
	int rc;

	if (!o->outdir) {
		dir = xstrdup(o->logdirs[0]);
		for (slash = dir + strlen(dir); slash > dir + 1 &&
		    slash[-1] == '/'; slash--)
			slash[-1] = '\0';
		slash = strrchr(dir, '/');
		if (!slash)
			strcpy(dir, ".");
		else
			slash[slash == dir] = '\0';
	}
	rc = corral_timeline_note_merge(o->outdir ? o->outdir : dir, start,
	    ms, &err);
	if (rc < 0)
		corral_warn_err(&err);
	free(dir);
}

/* o, or with shards the shard directories of s (-S). */
static int
run_merge(const struct corral_merge_opts *o,
    const struct corral_shards_opts *s, int quiet, int fail_on_flaky)
{
	struct corral_merge_stats st;
	struct corral_err err;
	size_t missing = 0;
	long long start, t0;
	int rc, status;

	start = corral_time_epoch_ms();
	t0 = corral_time_ms();
	if (s)
		rc = corral_merge_shards(s, &st, &missing, report, NULL, &err);
	else
		rc = corral_merge_run(o, &st, report, NULL, &err);
	if (rc < 0)
		corral_warn_err(&err);
	else if (st.written)
		note_merge(o, start, corral_time_ms() - t0);
	status = rc < 0 || missing ? CORRAL_EXIT_ERR :
	    status_of(&st, fail_on_flaky);
	if (st.written && !quiet)
		print_summary(&st, o->shard);
	corral_merge_stats_release(&st);
	return status;
}

int
main(int argc, char *argv[])
{
	struct corral_merge_opts o;
	struct corral_shards_opts so;
	struct corral_lock lock;
	int c, quiet = 0, fail_on_flaky = 0, shards = 0, status;

	corral_setprogname(argv[0]);
	corral_usage_check(&use, argc, argv);
	/* A file size limit must be a write error (EFBIG), not a death. */
	signal(SIGXFSZ, SIG_IGN);
	memset(&o, 0, sizeof(o));
	memset(&so, 0, sizeof(so));
	while ((c = getopt(argc, argv, "fhH:k:o:qr:Ssu:")) != -1) {
		switch (c) {
		case 'f': fail_on_flaky = 1; break;
		case 'h': corral_usage(&use, CORRAL_EXIT_OK); break;
		case 'H': so.history = value(c, optarg); break;
		case 'k': o.shard = value(c, optarg); break;
		case 'o': o.outdir = value(c, optarg); break;
		case 'q': quiet = 1; break;
		case 'r': o.run = value(c, optarg); break;
		case 'S': shards = 1; break;
		case 's': o.sealed = 1; break;
		case 'u': o.units = value(c, optarg); break;
		default: corral_usage(&use, CORRAL_EXIT_ERR);
		}
	}
	if (argc - optind < 1)
		corral_usage(&use, CORRAL_EXIT_ERR);
	for (c = optind; c < argc; c++)
		if (!*argv[c])
			corral_usage(&use, CORRAL_EXIT_ERR);
	if (shards ? o.shard || o.sealed || !o.outdir || !o.units :
	    so.history != NULL)
		corral_usage(&use, CORRAL_EXIT_ERR);
	o.logdirs = (const char *const *)argv + optind;
	o.nlogdirs = (size_t)(argc - optind);
	so.dirs = o.logdirs;
	so.ndirs = o.nlogdirs;
	so.units = o.units;
	so.outdir = o.outdir;
	so.run = o.run;

	/* Into a CORRAL_OUT, only while no run writes it. */
	xlock_under(&lock, o.outdir ? o.outdir : o.logdirs[0], 0);
	status = run_merge(&o, shards ? &so : NULL, quiet, fail_on_flaky);
	corral_lock_release(&lock);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		corral_warn("cannot write standard output:");
		status = CORRAL_EXIT_ERR;
	}
	return status;
}
