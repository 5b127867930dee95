/* See LICENSE file for copyright and license details. */
/*
 * record.h: the result records, one JSON object per line -- written by an
 * agent, read by the merge, the reports, the scoreboard and the weights --
 * the history's commit lines, the seal that ends an agent's log, and the
 * scanner that reads a record line without building a tree (the merge's).
 */
#ifndef CORRAL_RECORD_H
#define CORRAL_RECORD_H

#include "base/base.h"

/* ------------------------------------------------------------------ */
/* tap.c: the TAP a unit prints                                        */

/* How many failed tests a record names, at most. */
#define CORRAL_TAP_NAMES	100

enum { CORRAL_TAP_PASS, CORRAL_TAP_FAIL, CORRAL_TAP_SKIP };

/* One test of the stream (kept when the reader was made with keep). */
struct corral_tap_test {
	char *name;		/* its description, "" when none */
	char *reason;		/* of its SKIP or TODO directive, or NULL */
	int status;		/* CORRAL_TAP_*; TODO counts as SKIP */
	long long ms;		/* bats --timing's "in Nms", or -1 */
	struct corral_buf text;	/* the lines after it, up to the next test */
};

/*
 * A TAP stream being read.  passed = tests - failed - skipped.  Lines
 * count only from column 0: "ok"/"not ok" lines are tests, the first
 * "1..N" the plan; the rest is text.
 */
struct corral_tap {
	size_t tests, failed, skipped;
	long long plan;			/* N of "1..N", or -1: not TAP */
	int bailed;			/* a "Bail out!" line was read */
	struct corral_buf bail;		/* the first such line, or "" */
	struct corral_buf first_fail;	/* the first "not ok" line, or "" */
	struct corral_strv failures;	/* the first CORRAL_TAP_NAMES names */
	struct corral_tap_test *v;	/* every test, when keep */
	size_t n;
	int keep;
	int junit;			/* read from the unit's JUnit XML */
	int err;			/* ENOMEM once memory ran out */
	struct corral_buf line;		/* the line being read */
};

/* Start reading; keep: also fill v.  Release with corral_tap_release. */
void corral_tap_init(struct corral_tap *t, int keep);
/*
 * Read p[0..n), any bytes, cut anywhere; _end reads a last line without
 * '\n'.  0, or -1 (ENOMEM: what was read stays, the rest is dropped).
 */
int corral_tap_add(struct corral_tap *t, const char *p, size_t n);
int corral_tap_end(struct corral_tap *t);
/* Whether the stream was TAP: a plan was read. */
int corral_tap_found(const struct corral_tap *t);
void corral_tap_release(struct corral_tap *t);
/*
 * Count one test not read from TAP (a JUnit testcase): name, a
 * CORRAL_TAP_* status, ms (-1: not known) and why (a failure's message,
 * or a skip's reason; may be NULL; a kept failed test's text), one more
 * planned.  0, or -1 (ENOMEM).
 */
int corral_tap_test(struct corral_tap *t, const char *name, int status,
    long long ms, const char *why);

/* ------------------------------------------------------------------ */
/* xunit.c: the JUnit XML a unit writes                                */

/* The largest JUnit file read, in bytes. */
#define CORRAL_JUNIT_MAX	(64LL << 20)

/*
 * Read the JUnit XML data[0..n) (pytest --junitxml, ctest, gotestsum,
 * Maven: a <testsuites> or <testsuite> root, <testcase> elements at any
 * depth, each failed by a <failure> or <error> child, skipped by a
 * <skipped>) into t, made with corral_tap_init: every testcase through
 * corral_tap_test, named "classname.name" (or name), its "time" (seconds)
 * as ms; t->junit set.  No entity is expanded, no DTD or network read.
 * 0, or -1 with err set: "invalid XML at line N", "no <testsuite> or
 * <testsuites> root", ENOMEM.
 */
int corral_junit_read(struct corral_tap *t, const char *data, size_t n,
    struct corral_err *err);

/* ------------------------------------------------------------------ */
/* record.c: one result record, one JSON object per line               */

/*
 * An earlier attempt of a unit, or an agent's checkout, as a record tells
 * of it: at is when it ended (ISO 8601 UTC), duration_ms how long it took;
 * status and exit_code (-1: null) only for an attempt.
 */
struct corral_record_try {
	const char *at;
	long long duration_ms;
	const char *status;
	long long exit_code;
};

/* The pass a cached record reuses: where and when it ran, its key. */
struct corral_record_cached {
	const char *run, *host, *at, *key;
};

/*
 * A record keeps the original five fields first (agent_id, unit, ok, note,
 * at), then what users of test runners expect.  NULL strings, exit < 0 and
 * attempt < 0 are written as JSON null.  Key order is fixed, so equal
 * records are equal bytes.
 */
struct corral_record {
	const char *agent_id;
	const char *unit;
	int ok;			/* JSON boolean */
	const char *note;	/* "VERDICT: detail" */
	const char *at;		/* ISO 8601 UTC */
	const char *status;	/* pass fail crash error timeout flaky not-run */
	int exit_code;		/* < 0: null (killed, or never ran) */
	const char *signal;	/* "SIGSEGV", or NULL */
	long long duration_ms;
	int attempt;		/* 1 for the first run; 0 for not-run */
	const char *run;	/* the run id */
	const char *output;	/* path of the captured output, or NULL */
	const char *inputs;	/* digest of what the unit depended on */
	long stray;		/* processes it left, killed; 0: no such key */
	const struct corral_strv *reads;	/* the files of the tree it
					   opened, learned; NULL: no such key */
	const struct corral_tap *tap;	/* its tests, or NULL: no "tests" */
	const struct corral_record_try *tries;	/* the attempts before
					   this one, oldest first */
	size_t ntries;			/* 0: no "tries" key */
	const char *checkout_at;	/* the agent's checkout, told by the
					   first unit it finishes; NULL: none */
	long long checkout_ms;
	const char *host;	/* where it ran; NULL: no such key */
	const struct corral_record_cached *cached;	/* the stored pass
					   this one reuses; NULL: no key */
};

/*
 * Append r to b as one JSON line ending in '\n'.  When r->tap found TAP,
 * "tests" is {"total":N,"passed":P,"failed":F,"skipped":S,"planned":N or
 * null,"failed_names":[the first CORRAL_TAP_NAMES]}.  0, or -1 (ENOMEM; b may
 * hold part of the line and should be reset).
 */
int corral_record_format(struct corral_buf *b, const struct corral_record *r);

/* ------------------------------------------------------------------ */
/* record.c: the seal that ends an agent's log                         */

/*
 * A log's seal in the making: the record lines so far and their SHA-256.
 * The seal line is {"corral_seal":{"records":N,"sha256":"HEX"}}: N record
 * lines before it, HEX the digest of their bytes ('\n' included; other
 * seal lines are not records and are left out).  _init: 0, or -1 with err
 * set; _add one record line (with its '\n'); _format appends the seal
 * line (with '\n') that matches the records so far to b; both 0, or -1
 * with err set.  _release always, also after a failed _init.
 */
struct corral_seal {
	struct corral_sha256 sha;
	size_t records;
};

int corral_seal_init(struct corral_seal *s, struct corral_err *err);
int corral_seal_add(struct corral_seal *s, const char *line, size_t n,
    struct corral_err *err);
int corral_seal_format(const struct corral_seal *s, struct corral_buf *b,
    struct corral_err *err);
void corral_seal_release(struct corral_seal *s);
/* 1 when line[0..len) starts as a seal line does (a reader skips it). */
int corral_seal_is(const char *line, size_t len);

/* What corral_seal_check_fd found in a log. */
struct corral_seal_check {
	size_t lines;		/* lines read (up to broken, when set) */
	size_t seals;		/* good seals */
	size_t seal_line;	/* line number of the last good seal; 0: none */
	size_t records;		/* record lines before that seal */
	off_t end;		/* bytes up to and with that seal */
	size_t broken;		/* first line that starts as a seal and is
				   not the one the lines before it call for
				   (reading stops there); 0: none */
	int sealed;		/* the last line is a good seal, none broke */
	char sha256[CORRAL_SHA256_HEX];	/* the last good seal's digest,
					   "" when none */
};

/*
 * Check the seals of the log open on fd (read with pread from offset 0;
 * path is for messages).  A finished log is intact when c->sealed and
 * !c->broken.  When keep is not NULL, the record lines that the last good
 * seal covers are appended to it, seals left out.  0, or -1 with err set
 * (read error, ENOMEM, libcrypto); c is filled either way.
 */
int corral_seal_check_fd(int fd, const char *path, struct corral_seal_check *c,
    struct corral_buf *keep, struct corral_err *err);

/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* record.c: reading a record line                                    */

/*
 * One record line, parsed.  unit is never NULL or empty; status, run and
 * at are NULL when absent or not strings.  The strings belong to the
 * parsed document: release with corral_json_record_release.
 */
struct corral_json_record {
	const char *unit;
	int ok;
	const char *status;
	const char *run;
	const char *at;
	const char *note;	/* NULL when absent or not a string */
	const char *output;
	const char *inputs;
	const char *agent_id;	/* NULL when absent or not a string */
	const char *signal;
	const char *host;	/* NULL when absent or not a string */
	long long duration_ms;	/* -1 when absent or not a number */
	long long exit_code;	/* -1 when absent or not a number */
	long long attempt;	/* -1 when absent or not a number */
	const void *reads;	/* the "reads" array, or NULL: see below */
	int cached;		/* it has a "cached" object: a reused pass */
	long long tests;	/* "tests": total, -1 when absent */
	long long tests_failed, tests_skipped;	/* -1 when absent */
	const void *failed_names;	/* the JSON array, or NULL */
	void *doc;
};

/*
 * Parse line[0..len), which must be followed by a NUL at line[len], as
 * one record: a JSON object and nothing else, with one string "unit" and
 * one boolean "ok".  Returns 0, or -1 with a message such as "invalid
 * JSON at byte 41" (bytes of the line, counted from 1) or "\"ok\" is not a
 * boolean" in err (r is then empty and needs no release).
 */
int corral_json_record_parse(const char *line, size_t len,
    struct corral_json_record *r, struct corral_err *err);
void corral_json_record_release(struct corral_json_record *r);
/*
 * Append the strings of r's "reads" array (the files the unit was seen
 * to open; empty strings and other values skipped) to reads.  1 when r
 * has such an array, 0 when not, -1 on ENOMEM.
 */
int corral_json_record_reads(const struct corral_json_record *r,
    struct corral_strv *reads);
/* The i-th of r's failed test names, or NULL past the last (or none). */
const char *corral_json_record_failed_name(const struct corral_json_record *r,
    size_t i);

/*
 * The earlier attempts r tells of ("tries": [{"at", "duration_ms",
 * "status", "exit"}], oldest first), in a malloc'd array *v of *n (free
 * the array only; its strings belong to r), entries without an "at"
 * skipped; 0 with *v NULL when r has none, -1 on ENOMEM.
 */
int corral_json_record_tries(const struct corral_json_record *r,
    struct corral_record_try **v, size_t *n);
/*
 * The agent's checkout r tells of ("checkout": {"at", "duration_ms"}) in
 * *c (status NULL): 1, or 0 when r has none.
 */
int corral_json_record_checkout(const struct corral_json_record *r,
    struct corral_record_try *c);
/* The top-level string member key of r ("host"), or NULL. */
const char *corral_json_record_str(const struct corral_json_record *r,
    const char *key);
/*
 * The string member key ("run", "host", "at", "key") of r's "cached"
 * object, the stored pass a cached record reuses, or NULL.
 */
const char *corral_json_record_cached(const struct corral_json_record *r,
    const char *key);

/*
 * The record line[0..len) (NUL at line[len]) with "status" made "flaky" and
 * the note saying so, re-serialised (a record the merge itself writes),
 * appended to out without a newline.  0, or -1 (bad line, ENOMEM).
 */
int corral_json_record_flaky(const char *line, size_t len,
    struct corral_buf *out);

/*
 * Whether line[0..len) (NUL at line[len]) is a history commit line,
 * {"corral":"history","run":"R","records":N}.  Returns 1 and puts R in
 * run, 0 when it is not one, -1 on ENOMEM.
 */
int corral_json_commit_parse(const char *line, size_t len,
    struct corral_buf *run);

/* ------------------------------------------------------------------ */
/* scan.c: a log line read as a record without building a tree         */

/*
 * Told a record's unit (its bytes in the line) as soon as the scanner has
 * read it, before the rest of the line: the merge fetches the unit's slot
 * meanwhile.  The line may still turn out not to be one the scanner takes.
 */
typedef void corral_record_hint_fn(void *ctx, const char *unit, size_t len);
/*
 * corral_json_record_parse of line[0..len) (line[len] == '\0'), the same
 * verdict and message, but of the record's members only unit, ok, status,
 * run, at, inputs, note, output, duration_ms, cached and the counts of
 * tests are read when the scanner takes the line: then the strings are
 * copies in scratch, good until its next use, and r->doc is NULL (so
 * no reads, failed names, or members of "cached").
 * hint (may be NULL) is called as said above.  Release r with
 * corral_json_record_release either way.
 */
int corral_record_scan(const char *line, size_t len,
    struct corral_json_record *r, struct corral_buf *scratch,
    corral_record_hint_fn *hint, void *ctx, struct corral_err *err);
/*
 * The scanner alone: 1 with r filled (as above) when it takes the line, 0
 * when it leaves it to corral_json_record_parse (for fuzz/scan.c).
 */
int corral_record_scan_takes(const char *line, size_t len,
    struct corral_json_record *r, struct corral_buf *scratch,
    corral_record_hint_fn *hint, void *ctx);

/* ------------------------------------------------------------------ */
#endif /* CORRAL_RECORD_H */
