/* See LICENSE file for copyright and license details. */
/*
 * merge.h: the merged results -- the single writer of the shared result
 * files, their tally by verdict (the scoreboard), and JUnit XML and TAP.
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
	size_t successes;	/* lines written to successes.jsonl */
	size_t failures;	/* lines written to failures.jsonl */
	size_t missing;		/* expected units no log holds (not-run) */
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
 * "flaky" record, which the merge writes itself.  The result files
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
/* score.c: a run's merged results, tallied by verdict                 */

/* The tally of DIR/successes.jsonl and DIR/failures.jsonl. */
struct corral_score {
	size_t units, successes, failures;
	size_t tap_units;		/* units whose records count tests */
	long long tests, tests_failed, tests_skipped;	/* over those */
	struct corral_strv verdicts;	/* distinct, first seen first */
	struct corral_set *counts;	/* verdict -> rows */
	struct corral_strv found;	/* the result files that exist */
	struct corral_strv unreadable;	/* "FILE line N: why" */
	struct corral_strv failed_unit;	/* the rows of failures.jsonl */
	struct corral_strv failed_note;
	struct corral_strv failed_output;
};

/*
 * Why dir cannot be scored, as a sentence appended to why: it does not
 * exist, is not a directory, or holds neither result file.  Returns 1 with
 * the sentence, 0 when dir can be read, -1 on ENOMEM.
 */
int corral_score_why(const char *dir, struct corral_buf *why);

/*
 * Tally the result files of dir; a line that is not a record goes to
 * unreadable, never into the counts.  Membership of a file, not the
 * row's "ok", says success.  0, or -1 with err set (I/O, ENOMEM).  Release
 * s with corral_score_release either way.
 */
int corral_score_read(const char *dir, struct corral_score *s,
    struct corral_err *err);
long corral_score_count(const struct corral_score *s, const char *verdict);
/*
 * The verdicts, most rows first, ties in first-seen order, in a malloc'd
 * NULL-terminated array of pointers into s (free the array only).  -1 on
 * ENOMEM.
 */
int corral_score_order(const struct corral_score *s, const char ***orderp);
void corral_score_release(struct corral_score *s);

/* ------------------------------------------------------------------ */
/* slowest.c: the slowest units of the last run                         */

/* unit[i] took ms[i], the longest first; n of them. */
struct corral_slowest {
	char **unit;
	long long *ms;
	size_t n;
};

/*
 * The n slowest units of the run summary.json in dir names (every record,
 * when it names none), from dir's result files; a missing file has none,
 * lines that are not records are skipped.  0, or -1 with err set (I/O,
 * ENOMEM).  Release s with corral_slowest_release either way.
 */
int corral_slowest_read(const char *dir, size_t n, struct corral_slowest *s,
    struct corral_err *err);
void corral_slowest_release(struct corral_slowest *s);

/* ------------------------------------------------------------------ */
/* report.c: merged results as JUnit XML and TAP                       */

/* How much of a unit's output <system-out> holds, unless told. */
#define CORRAL_REPORT_OUTPUT_MAX	(1024 * 1024)

/* One unit of the merged results. */
struct corral_report_row {
	char *unit;
	char *status;		/* as recorded; pass or fail when absent */
	char *note;		/* "" when absent */
	char *output;		/* NULL when absent */
	char *host;		/* the host that ran it; NULL when absent */
	long long duration_ms;	/* -1 when absent */
	long long end_ms;	/* its "at", ms since the Epoch; -1: absent */
	long long attempt;
	long long tests, tests_failed, tests_skipped;	/* -1: no TAP */
	struct corral_strv failed_names;
	int ok;			/* it is in successes.jsonl */
};

struct corral_report {
	const char *dir;		/* the results' directory */
	struct corral_report_row *rows;	/* sorted by unit, bytewise */
	size_t n;
	struct corral_strv unreadable;	/* "FILE line N: why" */
	/* Set by the caller after reading, before writing JUnit: */
	const char *suite;		/* the suite's name; NULL: "corral" */
	long long output_max;		/* bytes of output quoted; 0: all */
};

/*
 * Read dir's successes.jsonl and failures.jsonl (a missing one is empty);
 * lines that are not records go to unreadable.  0, or -1 with err set.
 * Release rep with corral_report_release either way.
 */
int corral_report_read(struct corral_report *rep, const char *dir,
    struct corral_err *err);
void corral_report_release(struct corral_report *rep);
/*
 * Append the JUnit XML or the TAP version 13 to b.  JUnit: a <testsuites>
 * root named rep->suite; a <testsuite> of that name per host (the
 * record's "host", else this one's) with one <testcase> per unit (name,
 * classname, file), and one <testsuite> per unit whose TAP output is
 * whole, with a <testcase> per test.  <failure> for a failure, <error>
 * for a crash, a timeout or an error, <skipped/> for a skip and
 * <flakyFailure> for a flake, each with the note as message; every
 * testcase has <system-out> (the last rep->output_max bytes of the
 * output), every suite its counts, the wall time of its units, a
 * timestamp (UTC) and hostname.  TAP: one test per unit, a YAML block for
 * each one that failed or was flaky.  0, or -1 (ENOMEM).
 */
int corral_report_junit(const struct corral_report *rep, struct corral_buf *b);
int corral_report_tap(const struct corral_report *rep, struct corral_buf *b);

#endif /* CORRAL_MERGE_H */
