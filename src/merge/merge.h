/* See LICENSE file for copyright and license details. */
/*
 * merge.h: the merged results -- the single writer of the shared result
 * files (successes.jsonl, failures.jsonl, summary.json, history.jsonl),
 * and the shards of many hosts merged into one result.  What reads a
 * finished result (the scoreboard, the reports) is report/.
 */
#ifndef CORRAL_MERGE_H
#define CORRAL_MERGE_H

#include "base/base.h"

/* ------------------------------------------------------------------ */
/* merge.c: the single writer of the shared result files               */

/*
 * What corral_merge_run reads and where it writes.  logdirs[0 .. nlogdirs)
 * hold the agent-ID.jsonl logs: the main layer first, then the layers of
 * later re-runs; outdir (NULL: the parent of logdirs[0]) receives
 * successes.jsonl, failures.jsonl, summary.json and history.jsonl.
 * units (may be NULL) names the expected population, one unit per line;
 * run (may be NULL) is the run id of the not-run records the merge writes.
 */
struct corral_merge_opts {
	const char *const *logdirs;
	size_t nlogdirs;
	const char *outdir;
	const char *units;
	const char *run;
	int sealed;		/* every log must end in a seal (-s) */
	const char *shard;	/* "K/N": summary.json names the shard, or
				   NULL */
	const char *shards;	/* "1/3 3/3": a merge of shards names the
				   ones it holds, or NULL */
	const struct corral_merge_absent *absent;	/* nabsent groups of
					   expected units known to be
					   missing, and why */
	size_t nabsent;
};

/*
 * Expected units that no log can hold, and why ("shard 2/3 is missing"):
 * their not-run records say so, and the merge names none of them one by
 * one (the caller says it once).
 */
struct corral_merge_absent {
	const char *why;
	const struct corral_strv *units;
};

/*
 * What a merge found.  The counts are those of summary.json.  written is 1
 * when the three result files were replaced; it is 0 when the input was
 * bad (bad > 0) or a unit was in two agents' logs (duplicates > 0), and
 * then no file was touched.  Release with corral_merge_stats_release.
 */
struct corral_merge_stats {
	size_t units;		/* the population: expected, else merged */
	size_t merged;		/* distinct units found in the logs */
	size_t attempts;	/* record lines read: every attempt counts */
	size_t flaky;		/* units written with status "flaky" */
	size_t skipped;		/* units written with status "skip" */
	size_t cached;		/* units whose record reuses a stored pass */
	size_t successes;	/* lines written to successes.jsonl */
	size_t failures;	/* lines written to failures.jsonl */
	size_t missing;		/* expected units no log holds (not-run) */
	size_t not_run;		/* not-run records: the missing, and those
				   an agent wrote (a halted run) */
	size_t duplicates;	/* units in more than one agent's log */
	size_t unexpected;	/* units in the logs that were not expected */
	size_t agents;		/* agent logs read */
	size_t bad;		/* bad lines and other input problems */
	struct corral_strv unfinished;	/* IDs of agents with only a .part */
	struct corral_strv refused;	/* logs whose seal does not hold */
	char *run;		/* run id given to not-run records */
	int written;
};

/*
 * Called once for every problem and warning, in the order found, with a
 * one-line message ("'logs/agent-3.jsonl' line 7: invalid JSON at byte
 * 41") that the tool prints.  The message is freed after the call.
 */
typedef void corral_merge_report_fn(void *arg, const char *msg);

/*
 * Merge the logs of o->logdirs into o->outdir, under an exclusive flock on
 * outdir/.merge.lock held throughout.  Every agent-ID.jsonl is read in
 * layer, then agent order (decimal IDs numerically and first, others
 * bytewise), each line validated (corral_json_record_parse) and routed
 * byte for byte by "ok"; a unit twice in one log keeps its last line, a
 * unit in two logs of one layer is a duplicate, and a unit in several
 * layers keeps its latest attempt (greatest "at"; the later layer on a
 * tie).  A pass that wins over a failure with the same "inputs" becomes a
 * "flaky" record, which the merge writes itself.  The lines of the
 * attempts a later layer replaced go, byte for byte, to replaced.jsonl
 * (empty with one layer), for the run's page and trace.  The result files
 * are replaced atomically (CORRAL_ATOMIC_KEEP_SAME), and only when the
 * whole input was valid; then the records of every run not yet committed
 * to history.jsonl are appended to it.  The output is a pure function of
 * the inputs: no clock is read.
 * Returns 0 when the merge ran to its end (see st->written for whether
 * files were replaced), or -1 with err set on an operational failure
 * (I/O, ENOMEM), after which the old result files are intact unless
 * st->written is 1 (then only history.jsonl may be incomplete, and the
 * next merge repairs it).  st is filled either way; the caller releases it.
 */
int corral_merge_run(const struct corral_merge_opts *o,
    struct corral_merge_stats *st, corral_merge_report_fn *report,
    void *arg, struct corral_err *err);
void corral_merge_stats_release(struct corral_merge_stats *st);

/* ------------------------------------------------------------------ */
/* shards.c: the shards of one population, merged                      */

/*
 * dirs[0 .. ndirs) are shard directories (each a CORRAL_OUT of a shard:
 * shard.json, logs/, rerun/N/logs/); units is the whole population;
 * history (may be NULL) the CORRAL_HISTORY every shard was cut by;
 * outdir receives the result, and the shards' logs under outdir/shards/.
 */
struct corral_shards_opts {
	const char *const *dirs;
	size_t ndirs;
	const char *units;
	const char *history;
	const char *outdir;
	const char *run;	/* as corral_merge_opts's */
};

/*
 * Cut the population into the shards' N as every host did, check every
 * directory's manifest (the same population, N and plan; each shard
 * once; a directory named shard-K-of-N without one is that shard
 * unfinished), copy the logs each manifest vouches for (and their
 * agents' output files) into outdir/shards/, a chunk at a time, each copy
 * checked against its entry (seal, agent, runs, every unit that shard's),
 * and merge them there (corral_merge_run, seals required), the units of
 * each missing shard not-run with a note naming it; *missing is their
 * number.  Any other log of a shard directory, and a listed log that is
 * missing or not what its entry says, is refused: said through report
 * ("'DIR/logs/agent-0.s2.jsonl' (shard 3/3) ...; refused") and added to
 * st->refused.  Each refusal and each missing shard is said through
 * report.  Returns as
 * corral_merge_run does, or -1 with err set when a directory is refused
 * (another population, N or plan, a shard twice, no manifest and no
 * shard's name): then nothing is written.  Release st either way.
 */
int corral_merge_shards(const struct corral_shards_opts *o,
    struct corral_merge_stats *st, size_t *missing,
    corral_merge_report_fn *report, void *arg, struct corral_err *err);

#endif /* CORRAL_MERGE_H */
