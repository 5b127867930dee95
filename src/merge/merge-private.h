/* See LICENSE file for copyright and license details. */
/*
 * merge-private.h: what the modules of the merge share, and nothing outside
 * src/merge/ reads.  One struct merge is the state of one corral_merge_run;
 * merge.c drives it through the others, in the order of the data flow:
 *
 *   logs.c        the agents' logs: listed and ordered, seals checked, each
 *                 line checked, the winning attempt of a unit, lines routed
 *   population.c  the expected units: unfinished agents, refused logs, the
 *                 not-run records of units no log holds
 *   commit.c      the result files: written to temporaries, then put in
 *                 place together (the commit record, rolled forward)
 *   summary.c     summary.json
 *   history.c     history.jsonl: the records of runs not yet committed
 */
#ifndef CORRAL_MERGE_PRIVATE_H
#define CORRAL_MERGE_PRIVATE_H

#include <dirent.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "base/base.h"
#include "record/record.h"
#include "merge/merge.h"

#define MERGE_NONE UINT32_MAX		/* no agent: a not-run record */
#define MERGE_OUT_CHUNK (256 * 1024)	/* bytes buffered before a write */
#define MERGE_SYNC_CHUNK (8 << 20)	/* bytes written before a writeback */

/*
 * Where a merge's messages go: report(arg, message), or nowhere when
 * report is NULL.  A run (struct merge) and a merge of shards (shards.c)
 * each hold one.
 */
struct merge_voice {
	corral_merge_report_fn *report;
	void *arg;
};

/* One agent's finished log. */
struct agent {
	char *id;
	char *path;
	uint32_t layer;	/* index in logdirs */
	size_t first;	/* its records are recs[first .. first + n) */
	size_t n;
	int redo;	/* a line replaced an earlier one: copy again */
	int refused;	/* its seal does not hold: none of it is merged */
	int checked;	/* st is what the seal check read */
	struct stat st;
};

/*
 * One record line: where it is and what the merge needs to know of it.
 * 16 bytes; with the unit's 12-byte slot in m->units (at three quarters
 * full at most), this is the memory per unit.  Its agent is the one whose
 * recs[first .. first + n) hold it (merge_rec_agent).
 */
struct rec {
	uint32_t off_lo;	/* its line's byte offset in its log: */
	unsigned off_hi : 24;	/* off_hi << 32 | off_lo (merge_rec_off) */
	unsigned ok : 1;
	unsigned dropped : 1;	/* a later line of the same log replaced it */
	unsigned has_run : 1;	/* the record named its run */
	unsigned flaky : 1;	/* written as a flaky record */
	unsigned cached : 1;	/* a pass the cache held, not run again */
	uint32_t status;	/* index in statuses */
	uint32_t run;		/* index in runs */
};

/*
 * A value of m->units: a record's index, or MERGE_EXPECTED | L for the
 * expected unit on line L (from 0) of the units file that no log has
 * reported yet.
 */
#define MERGE_EXPECTED	(UINT32_C(1) << 31)
#define MERGE_CKPT	32	/* units lines between two remembered offsets */
#define MERGE_WINDOW	4096	/* bytes of the units file read at once */

/*
 * The units file of -u, kept open and read again by line number: a
 * name is settled against it, never kept.  A stream that is not a
 * regular file is first copied to an unlinked temporary.
 */
struct units_file {
	FILE *fp;
	const char *path;	/* for messages: as -u named it */
	struct stat st;		/* what was read first */
	off_t *ckpt;		/* ckpt[k]: where line k * MERGE_CKPT starts */
	size_t nckpt;
	char *win;		/* win[0..wn): the bytes from wo on */
	size_t wcap, wn;
	off_t wo;
	int weof;		/* the window reaches the end of the file */
};

/*
 * With several layers: the attempt of a unit that wins, found by a first
 * read of every log before anything is written.
 */
struct win {
	off_t off;		/* its line's byte offset in its log */
	uint32_t agent;
	long inputs;		/* index in inputs, or -1 */
	long long at;		/* ms since the epoch, or -1 */
	unsigned char ok;
	unsigned char flaky;	/* the merge writes it as a flaky record */
	unsigned char self;	/* its agent recorded it as flaky already */
};

/* A result file being written: a buffered temporary, renamed on commit. */
struct out {
	struct corral_atomic a;
	struct corral_buf b;
	off_t size;	/* bytes added so far */
	off_t synced;	/* bytes the kernel was asked to write back */
	int open;
};

struct merge {
	const struct corral_merge_opts *o;
	struct corral_merge_stats *st;
	struct merge_voice voice;
	char *logdir;			/* logdirs[0], for the default outdir */
	char **logdirs;
	DIR **dirs;			/* opened before the lock */
	size_t nlayers;
	char *outdir;
	struct agent *agents;
	size_t nagents;
	struct corral_strv parts;	/* "LAYER/ID" with a .part */
	struct corral_strv launches;	/* "LAYER/ID" with a .launch */
	struct corral_strv why;		/* the not-run notes */
	struct units_file uf;		/* -u */
	size_t nexpected;		/* its distinct units */
	struct corral_fpset *notes;	/* line + 1 -> k: why.v[k] */
	struct win *wins;		/* NULL with one layer */
	size_t nwins;
	struct corral_set *win_ix;	/* unit -> index in wins */
	struct corral_set *inputs_ix;
	struct corral_strv inputs;
	struct corral_buf flaky;	/* a flaky record being written */
	/*
	 * unit -> a record's index, or MERGE_EXPECTED | L for an expected
	 * unit no log reported yet.  Keyed by fingerprint, settled by name:
	 * an expected unit's is read again from the units file
	 * (merge_units_line), a record's from its log (same_unit).
	 */
	struct corral_fpset *units;
	struct corral_fpset *dups;	/* rec + 1 -> last agent named */
	int hinted;			/* hint_fp is the scanned unit's */
	uint64_t hint_fp;
	int reread_fd;			/* the log of reread_agent, or -1 */
	uint32_t reread_agent;
	struct corral_buf reread;	/* the line read again */
	struct corral_buf scratch;	/* the strings of a scanned record */
	struct rec *recs;
	size_t nrecs;
	size_t caprecs;
	long status_last, run_last, inputs_last;	/* intern's memos */
	struct corral_set *status_ix;
	struct corral_strv statuses;
	struct corral_set *run_ix;
	struct corral_strv runs;
	struct corral_buf at;		/* the latest "at" seen */
	time_t units_mtime;
	struct out succ, fail, sum;
	struct out rep;			/* replaced.jsonl: what a later layer
					   replaced (see layer_lost) */
	int lockfd;
};

/* ------------------------------------------------------------------ */
/* merge.c: messages, paths, and the run itself                        */

/* The message fmt, formatted, said through v (ENOMEM: not said). */
void merge_vsay(const struct merge_voice *v, const char *fmt, va_list ap);
/* A warning, through m's voice: the merge goes on. */
void merge_say(struct merge *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Bad input, counted in st->bad: nothing will be written. */
void merge_bad(struct merge *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Set err to ENOMEM; returns -1. */
int merge_nomem(struct corral_err *err);
/* dir/name, or just name when dir is ".", malloc'd; NULL on ENOMEM. */
char *merge_join(const char *dir, const char *name);
/* For qsort of strings, bytewise: statuses and runs. */
int merge_bytes_cmp(const void *x, const void *y);

/* ------------------------------------------------------------------ */
/* logs.c: the agents' logs                                            */

/*
 * Sort the entries of every layer's directory into m->agents (layer,
 * then agent order), m->parts ("LAYER/ID" with a .part, sorted) and
 * m->launches (the same with a .launch).  0, or
 * -1 with err set.
 */
int merge_list_logs(struct merge *m, struct corral_err *err);
/* 1 when layer holds a finished log of agent id (after list_logs). */
int merge_has_log(struct merge *m, uint32_t layer, const char *id);
/*
 * Check the seal of agent ai's log; a log whose seal does not hold (or,
 * with o->sealed, that has none) is refused, said and named in
 * st->refused.  0, or -1 with err set.
 */
int merge_check_seal(struct merge *m, uint32_t ai, struct corral_err *err);
/*
 * With more than one layer, read every log once to find each unit's
 * winning attempt, before anything is written.  0, or -1 with err set.
 */
int merge_find_winners(struct merge *m, struct corral_err *err);
/*
 * Read agent ai's log: check every line, keep one record per unit and
 * copy the kept lines to m->succ and m->fail while the input is good.
 * 0, or -1 with err set (I/O, ENOMEM); bad input is counted, not failed.
 */
int merge_log(struct merge *m, uint32_t ai, struct corral_err *err);
/*
 * Append a record whose line starts at byte off of the log being read
 * (0 for a not-run record), with its status and run (NULL: "none"); its
 * index in m->recs, or -1 on ENOMEM.
 */
long merge_push_rec(struct merge *m, off_t off, int ok, const char *status,
    const char *run);
/* Where record r's line starts in its log. */
off_t merge_rec_off(const struct rec *r);
/* The agent whose log holds record k (not a not-run record). */
uint32_t merge_rec_agent(const struct merge *m, size_t k);
/* The fingerprint of a unit's name in m->units. */
uint64_t merge_fp(const struct merge *m, const char *unit, size_t len);
/*
 * The line (from 0) of the expected unit named unit[0..len) that no log
 * reported yet: 1 with *line set, 0 when there is none, -1 with err set.
 */
int merge_expected(struct merge *m, const char *unit, size_t len,
    uint32_t *line, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* population.c: expected, unfinished and missing units                */

/*
 * Read o->units into m->units, one slot a distinct unit, its name left in
 * the file.  0, or -1 with err set.
 */
int merge_read_units(struct merge *m, struct corral_err *err);
/*
 * Line (from 0) of the units file, chomped, into *p (good until the next
 * call) and *n: 1, 0 when the file has no such line (it changed), -1 with
 * err set.
 */
int merge_units_line(struct merge *m, uint32_t line, const char **p,
    size_t *n, struct corral_err *err);
/* Close the units file.  */
void merge_units_close(struct merge *m);
/*
 * Say which .part files are ignored or unfinished, name the latter in
 * st->unfinished, and credit their expected units to them.  0, or -1 with
 * err set.
 */
int merge_check_parts(struct merge *m, struct corral_err *err);
/*
 * Credit the expected units of each agent-ID.launch (the note of an agent
 * its launcher did not start or lost; ignored beside a finished log of
 * that agent) to its first line, before the .part files are: the
 * launcher's failure says more than "did not finish".  0, or -1 with err
 * set.
 */
int merge_credit_launches(struct merge *m, struct corral_err *err);
/*
 * Credit the expected units of refused logs to them.  0, or -1 with err
 * set.
 */
int merge_credit_refused(struct merge *m, struct corral_err *err);
/* st->run: o->run, else the greatest run named.  -1 on ENOMEM. */
int merge_pick_run(struct merge *m);
/*
 * A not-run record in m->fail for every expected unit no log holds.  0, or
 * -1 with err set.
 */
int merge_write_missing(struct merge *m, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* commit.c: the result files, put in place together                   */

/* Open the temporary of dir/name in o.  0, or -1 with err set. */
int merge_out_open(struct out *o, const char *dir, const char *name,
    struct corral_err *err);
/* Append p[0..n) and, when nl, a newline.  0, or -1 with err set. */
int merge_out_add(struct out *o, const char *p, size_t n, int nl,
    struct corral_err *err);
/* Cut the temporary back to its first size bytes.  0, or -1 (err). */
int merge_out_truncate(struct out *o, off_t size, struct corral_err *err);
/* Remove the temporary, if any, and free the buffer. */
void merge_out_abort(struct out *o);
/*
 * Finish the commit of a merge that was killed half-way through it (we
 * hold the lock).  0, or -1 with err set.
 */
int merge_roll_forward(struct merge *m, struct corral_err *err);
/* Remove the temporaries of a merge that was killed (we hold the lock). */
void merge_clean_stale(struct merge *m);
/*
 * Write summary.json's temporary, then put the three result files in
 * place together; st->written becomes 1.  0, or -1 with err set.
 */
int merge_commit(struct merge *m, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* summary.c: summary.json                                             */

/* Fill st's successes, failures, flaky and units from the kept records. */
void merge_count_results(struct merge *m);
/* Append summary.json's text to b.  0, or -1 on ENOMEM. */
int merge_format_summary(struct merge *m, struct corral_buf *b);

/* ------------------------------------------------------------------ */
/* history.c: history.jsonl                                            */

/*
 * Append to outdir/history.jsonl the records of every run of the result
 * files it has not committed, each run followed by its commit line; a
 * torn tail is cut and unreadable lines after the last commit line are
 * moved aside first.  0, or -1 with err set.
 */
int merge_append_history(struct merge *m, struct corral_err *err);

#endif /* CORRAL_MERGE_PRIVATE_H */
