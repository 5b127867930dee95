/* See LICENSE file for copyright and license details. */
/*
 * report-private.h: what the report's writers share (report.c reads the
 * results and writes TAP, junit.c writes JUnit XML; timeline.c, trace.c
 * and html.c, the timeline), and nothing else reads.
 */
#ifndef CORRAL_REPORT_PRIVATE_H
#define CORRAL_REPORT_PRIVATE_H

#include "base/base.h"
#include "merge/merge.h"

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

#endif /* CORRAL_REPORT_PRIVATE_H */
