/* See LICENSE file for copyright and license details. */
/*
 * report-private.h: what the modules of the report share (results.c reads
 * the result files record by record for score.c, report.c and
 * timeline.c; report.c reads the results and writes TAP, junit.c writes
 * JUnit XML; timeline.c, trace.c and html.c, the timeline), and nothing
 * outside src/report/ reads.
 */
#ifndef CORRAL_REPORT_PRIVATE_H
#define CORRAL_REPORT_PRIVATE_H

#include "base/base.h"
#include "record/record.h"
#include "report/report.h"

/* How much of a failed unit's output its failure quotes, at most. */
#define REPORT_TAIL	4096

/*
 * Append s[0..n) as XML character data that is also safe inside a quoted
 * attribute: & < > " ' escaped, tab and newlines as character references
 * (in an element's text, text != 0, only CR: a parser would turn it into
 * LF), invalid UTF-8 and characters XML 1.0 forbids as U+FFFD.  0, or -1
 * (ENOMEM).
 */
int report_xml(struct corral_buf *b, const char *s, size_t n, int text);
/*
 * Where the agent agent (may be NULL: nowhere) wrote the output a record
 * names, as a path relative to a run's directory: the output's last
 * components when they are [rerun/N/]logs/agent-AGENT/FILE, malloc'd in
 * *where; else *where is NULL, and the output is never opened.  0, or -1
 * (ENOMEM).
 */
int report_output_where(const char *agent, const char *output, char **where);
/*
 * The unit's output file, where being report_output_where's: open for
 * reading under rep->dir (or rep->dir/shards/, where a merge of shards
 * put its agents' files), through no symbolic link, or -1 when there is
 * none or it is not a regular file.
 */
int report_open_output(const struct corral_report *rep, const char *where);
/*
 * The last max bytes (0: all) of a unit's output (at where, as above),
 * from a line start when cut, into b (reset first).  Nothing when it
 * cannot be read.
 */
void report_read_tail(const struct corral_report *rep, const char *where,
    long long max, struct corral_buf *b);

/* Append s[0..n) as valid UTF-8, a bad byte as U+FFFD.  0, or -1. */
int report_utf8(struct corral_buf *b, const char *s, size_t n);
/* "2026-12-01T11:14:47.364Z" as ms since the Epoch, or -1. */
long long report_iso_ms(const char *s);

/* ------------------------------------------------------------------ */
/* results.c: the result files read record by record                  */

/* What report_results_read does with a result file's lines. */
struct report_results {
	const char *dir;	/* where the result files are */
	/* each record, of successes.jsonl when success: 0, or -1 (ENOMEM) */
	int (*row)(void *ctx, const struct corral_json_record *r,
	    int success);
	void *ctx;
	/* gets "NAME line N: why" for each line that is not a record */
	struct corral_strv *unreadable;
	/* row reads only what corral_record_scan reads: the line is not
	   made a tree when the scanner takes it */
	int scanned;
};

/*
 * Read the result file m->dir/name record by record, blank lines
 * skipped.  1 when it was read, 0 when there is no such file, -1 with err
 * set (I/O; ENOMEM, also when row fails).
 */
int report_results_read(const struct report_results *m, const char *name,
    int success, struct corral_err *err);
/*
 * The string member key of dir/summary.json ("run", "shard"), malloc'd,
 * or NULL when there is none (or no memory).
 */
char *report_summary_str(const char *dir, const char *key);


#endif /* CORRAL_REPORT_PRIVATE_H */
