/* See LICENSE file for copyright and license details. */
/*
 * report.h: what reads a finished result -- the tally by verdict (the
 * scoreboard), the verdict of summary.json, the slowest units, JUnit XML
 * and TAP, and where a run's time went (the timeline, as a Chrome trace
 * and as one HTML page).  None of it writes the result files; merge/ does.
 */
#ifndef CORRAL_REPORT_H
#define CORRAL_REPORT_H

#include "base/base.h"

/* ------------------------------------------------------------------ */
/* score.c: a run's merged results, tallied by verdict                 */

/* The tally of DIR/successes.jsonl and DIR/failures.jsonl. */
struct corral_score {
	size_t units, successes, failures;
	size_t cached;			/* of the successes, reused */
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
/* The most a line of corral_output_tail holds, and the bytes it reads. */
#define CORRAL_TAIL_LINE_MAX	200
#define CORRAL_TAIL_READ_MAX	16384
/*
 * The last n lines of a unit's output file path (at most n, empty lines
 * kept, each cut at CORRAL_TAIL_LINE_MAX bytes), appended to lines, from
 * at most the last CORRAL_TAIL_READ_MAX bytes of the file: what the
 * summary shows of a failure.  0, or -1 with err set (cannot open or read
 * path, ENOMEM).
 */
int corral_output_tail(const char *path, size_t n, struct corral_strv *lines,
    struct corral_err *err);


/* ------------------------------------------------------------------ */
/* verdict.c: what a run's summary.json says, as an exit status        */

/*
 * The verdict of the result in dir, for an exit status: 0 when its
 * summary.json says every unit passed, each exactly once, 1 when units
 * failed or the result is incomplete (missing or duplicated units), -1
 * with err set when there is no summary.json written at since_ms (Epoch
 * ms) or later, or it cannot be read: no run of now wrote a result.
 */
int corral_summary_verdict(const char *dir, long long since_ms,
    struct corral_err *err);

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
 * when it names none; a cached one never: it did not run), from dir's
 * result files; a missing file has none,
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
	char *where;		/* where its agent wrote that output, under
				   the results' directory (report_output_where);
				   NULL: nowhere it may be read */
	char *host;		/* the host that ran it; NULL when absent */
	long long duration_ms;	/* -1 when absent */
	long long end_ms;	/* its "at", ms since the Epoch; -1: absent */
	long long attempt;
	long long tests, tests_failed, tests_skipped;	/* -1: no TAP */
	struct corral_strv failed_names;
	int ok;			/* it is in successes.jsonl */
	int cached;		/* a result the cache held, not run again */
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

/* ------------------------------------------------------------------ */
/* timeline.c: where a run's time went, from its merged results        */

enum corral_span_kind {
	CORRAL_SPAN_ATTEMPT,	/* one attempt of a unit */
	CORRAL_SPAN_CHECKOUT,	/* an agent's clone */
	CORRAL_SPAN_MERGE	/* the merge (merge.json) */
};

/* One span of the run; the times are ms from the timeline's t0. */
struct corral_span {
	enum corral_span_kind kind;
	const char *unit;	/* NULL but for an attempt */
	const char *agent;	/* "" when the record names none */
	const char *host;	/* NULL when the record names none */
	const char *status;	/* of an attempt; else NULL */
	long long start_ms;
	long long dur_ms;
	long long exit_code;	/* -1: null */
	long long attempt;	/* from 1; 0 but for an attempt */
	const char *run;	/* of an attempt, NULL when none is named */
	size_t lane;		/* index in lanes (not for the merge) */
	/*
	 * An attempt the cache answered: the unit did not run, so the span
	 * is a moment (dur_ms 0) at its record's "at"; cached_ms is what
	 * the stored pass took when it ran, cached_run that run (or NULL).
	 */
	int cached;
	long long cached_ms;
	const char *cached_run;
};

/* A unit as the result files hold it: its last attempt. */
struct corral_timeline_unit {
	char *unit;
	char *status;		/* as recorded; pass or fail when absent */
	char *note;		/* "" when absent */
	char *output;		/* NULL when absent */
	char *where;		/* as corral_report_row's */
	long long dur_ms;	/* -1 when absent */
	long long attempt;
	int ok;			/* it is in successes.jsonl */
	int cached;		/* a result the cache held, not run again */
};

/* One agent of one host: a row of the timeline. */
struct corral_lane {
	const char *host;	/* NULL: no host named */
	const char *agent;
	long long busy_ms;	/* the time its attempts took */
};

struct corral_timeline {
	const char *dir;
	struct corral_span *spans;	/* by start, then lane */
	size_t n;
	struct corral_timeline_unit *units;	/* by unit, bytewise */
	size_t nunits;
	struct corral_lane *lanes;	/* by host, then agent (numerically) */
	size_t nlanes;
	size_t nhosts;		/* distinct hosts named; 0: none */
	long long t0;		/* ms since the Epoch of the first span */
	long long end_ms;	/* the end of the last span, from t0 */
	long long *gaps;	/* where the axis leaves out idle time (a
				   pause between invocations), from t0 */
	size_t ngaps;
	long long idle_ms;	/* the time left out there, in all */
	const char *run;	/* the run summary.json names (the latest
				   merge's), else the one of the record that
				   ended last; NULL: none names one */
	const char *shard;	/* "K/N" when summary.json names one */
	const char *shards;	/* "1/3 3/3": those a merge of shards holds,
				   when summary.json names them */
	const char *name;	/* the project, for the page's title; NULL:
				   none (the caller sets it) */
	struct corral_strv strings;	/* what the spans point into */
	struct corral_strv unreadable;	/* "FILE line N: why" */
};

/*
 * Read dir's successes.jsonl and failures.jsonl (a missing one is empty),
 * replaced.jsonl, merge.json and summary.json (if any) into t: a span per
 * attempt that a record tells of (its own, and the earlier ones of
 * "tries"; a cached record's is a moment, the unit not run), per attempt
 * a later layer replaced, per agent checkout, and the merge: the attempts
 * of the result summary.json counts, no other.  A time over CORRAL_TIMELINE_IDLE_MS when nothing ran (the
 * pause between a run and a later one that re-ran some of its units) is
 * left out of the axis: every later span moves back by it, and gaps says
 * where.  Lines that are not records go to unreadable; a record
 * without a readable "at" has no span.  0, or -1 with err set (I/O,
 * ENOMEM).  Release t with corral_timeline_release either way.
 */
#define CORRAL_TIMELINE_IDLE_MS	5000
int corral_timeline_read(struct corral_timeline *t, const char *dir,
    struct corral_err *err);
void corral_timeline_release(struct corral_timeline *t);
/*
 * Record in dir/merge.json that a merge started at start (ms since the
 * Epoch) and took ms; corral-merge calls it after a merge, so that the
 * timeline shows it (the merge itself reads no clock).  0, or -1 with err.
 */
int corral_timeline_note_merge(const char *dir, long long start,
    long long ms, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* trace.c, html.c: a timeline as a trace and as a page                */

/*
 * Append t in the Chrome Trace Event Format (Perfetto, chrome://tracing)
 * to b: one complete event per span, name the unit (or "checkout",
 * "merge"), ts and dur in microseconds from t->t0, pid the host (1 when
 * none is named; the merge one more than the hosts), tid the agent; a
 * cached unit's event lasts 0 and its args say cached.
 * 0, or -1 (ENOMEM).
 */
int corral_trace_format(const struct corral_timeline *t, struct corral_buf *b);
/*
 * Append t as one self-contained HTML page to b (inline CSS and SVG, no
 * script): the counts, a timeline with a row per lane (a cached unit a
 * mark of its own, not a bar of the time it once took), the failures with
 * their notes and the tail of their output, the slowest and the flaky
 * units, and the plan's balance (of what ran).  0, or -1 (ENOMEM).
 */
int corral_html_format(const struct corral_timeline *t, struct corral_buf *b);

#endif /* CORRAL_REPORT_H */
