/* See LICENSE file for copyright and license details. */
/*
 * agent-private.h: what run.c shares with runlog.c and live.c, and
 * nothing outside src/agent/ reads: an agent's log, and its live state.
 */
#ifndef CORRAL_AGENT_PRIVATE_H
#define CORRAL_AGENT_PRIVATE_H

#include "agent/agent.h"
#include "record/record.h"

/* ------------------------------------------------------------------ */
/* runlog.c: an agent's log, out of its units' reach                   */

/*
 * One agent's log.  The caller sets the first four (the strings stay its
 * own) after corral_runlog_init, and calls corral_runlog_release last.
 */
struct corral_runlog {
	const char *dir;	/* the log directory, without trailing '/' */
	const char *log;	/* DIR/agent-ID.jsonl: the finished log */
	const char *part;	/* DIR/agent-ID.jsonl.part: the checkpoint */
	const char *agent;
	int no_checkpoint;	/* none is read or written (a process
				   that only copies hits has nothing to
				   resume) */
	int defer_sync;		/* commit fsyncs neither the log nor dir:
				   the caller syncs the file system once
				   for many logs (corral_sync_fs), before
				   it makes anything that vouches for
				   them */
	size_t resumed;		/* units whose records the checkpoint held */
	char *note;		/* one line on what resuming found, or NULL */

	/* Private to runlog.c. */
	int fd;			/* the log, which no path leads to */
	int unlinked;		/* an unlinked file (no O_TMPFILE): copied */
	int ckfd;		/* the checkpoint, appended to */
	struct corral_seal seal;
	struct corral_buf ck;
};

void corral_runlog_init(struct corral_runlog *l);
/*
 * Open the log: O_TMPFILE in dir, else a file unlinked as soon as it is
 * made.  No name leads to it until corral_runlog_commit.  0, or -1 with
 * err set.
 */
int corral_runlog_open(struct corral_runlog *l, struct corral_err *err);

/* Called with each resumed unit's number (from 0) and its last record. */
typedef void corral_runlog_unit_fn(void *arg, size_t i,
    const struct corral_json_record *last);

/*
 * Take over what the checkpoint of a killed agent of this slice holds:
 * the records its last good seal vouches for (none past a line that
 * breaks the chain), when they are the first units of units, in order,
 * by this agent, with these inputs; else none.  They go into the new
 * log, cb learns each of those units, l->resumed counts them and l->note
 * says what was found.  The checkpoint is then replaced by one holding
 * just them.  0, or -1 with err set.
 */
int corral_runlog_resume(struct corral_runlog *l, const struct corral_strv *units,
    const char *inputs, corral_runlog_unit_fn *cb, void *arg,
    struct corral_err *err);

/*
 * Append one record line (with its '\n') to the log and the checkpoint;
 * when final (the unit's last record), the checkpoint gets a seal after
 * it.  0, or -1 with err set.
 */
int corral_runlog_write(struct corral_runlog *l, const struct corral_buf *line,
    int final, struct corral_err *err);

/*
 * Seal the log, fsync it, link it under a temporary name (copy it, for
 * an unlinked file), rename that over DIR/agent-ID.jsonl, remove the
 * checkpoint and fsync the directory.  0, or -1 with err set.
 */
int corral_runlog_commit(struct corral_runlog *l, struct corral_err *err);
void corral_runlog_release(struct corral_runlog *l);

/* ------------------------------------------------------------------ */
/* live.c: an agent's own live state                                   */

/* One agent's live state; only run.c writes it. */
struct corral_live {
	int statusfd;		/* STATEDIR/agent-ID.status, or -1 */
	int tickfd;		/* STATEDIR/ticks, or -1 */
	const char *statedir;	/* the caller's, or NULL */
	off_t tickoff;		/* how far the ticks have been read */
	corral_progress_fn *print;	/* NULL: no progress lines */
	void *print_arg;
	int tty;		/* redraw one line ("\r\033[K...") */
	long long drawn_ms;
	int hit;		/* drawing a cached unit: no time of its own */
	struct corral_tally t;
	struct corral_buf b;
};

void corral_live_init(struct corral_live *l);
/*
 * Start showing an agent of units units and weight expected work: with a
 * statedir (created if needed; NULL for none), truncate its status file,
 * append its first line, and add its share to STATEDIR/ticks.  0, or -1
 * with err set.  Later calls never fail: what they write is advisory.
 */
int corral_live_open(struct corral_live *l, const char *statedir,
    const char *agent, const char *run, size_t units, long long weight,
    struct corral_err *err);
/*
 * Unit i (from 1), attempt attempt, expected to take expect_ms (-1: ?),
 * its output going to the file output (NULL: not said).
 */
void corral_live_start(struct corral_live *l, const char *unit, size_t i,
    int attempt, long long expect_ms, const char *output);
/*
 * An attempt ended with status after ms; final when it is the unit's last.
 * A final one is ticked with weight; then the progress line goes to
 * l->print: one line per attempt, or on a terminal the redrawn tally (at
 * most ten times a second, and once more when the run is done).
 */
/*
 * A unit the cache answered, as corral_live_end's last attempt: ticked
 * with ms (its stored pass's), its progress line saying "cached" where
 * the time of a unit that ran goes.
 */
void corral_live_hit(struct corral_live *l, const char *unit,
    const char *status, long long ms, long long weight);
void corral_live_end(struct corral_live *l, const char *unit,
    const char *status, long long ms, int attempt, int final,
    long long weight);
/*
 * The units of the run that have failed so far (fail, crash, error,
 * timeout, not-run): from STATEDIR/ticks, which every agent of the run
 * appends to, else this agent's own.
 */
size_t corral_live_failures(struct corral_live *l);
/*
 * Interrupted: end a progress line left without its newline on a
 * terminal, once for the whole run (the first agent to create
 * STATEDIR/interrupted does it).
 */
void corral_live_interrupted(struct corral_live *l);
/* Close; finished: the slice ran to its end (the status file says so). */
void corral_live_close(struct corral_live *l, int finished);
#endif /* CORRAL_AGENT_PRIVATE_H */
