/* See LICENSE file for copyright and license details. */
/*
 * run-private.h: what the four files of running a slice share (run.c,
 * slice.c, supervise.c, capture.c), and nothing else reads: a run's own
 * state, a unit's output being captured, a unit being waited for.
 */
#ifndef CORRAL_RUN_PRIVATE_H
#define CORRAL_RUN_PRIVATE_H

#include <sys/types.h>
#include <regex.h>

#include "agent/agent.h"
#include "agent/agent-private.h"
#include "record/record.h"

/* How much of a unit's output is read from its pipe at once. */
#define IOBUF_SIZE	65536

/* What a run keeps for itself: struct corral_run's st. */
struct corral_run_state {
	char *outdir;		/* LOGDIR/agent-ID, as formed from LOGDIR */
	char *noteroot;		/* the same directory, absolute */
	int made_outdir;	/* this run created it */
	char *logsdir;		/* LOGDIR less its trailing slashes */
	char *log;		/* LOGDIR/agent-ID.jsonl */
	char *part;		/* LOGDIR/agent-ID.jsonl.part, the checkpoint */
	struct corral_runlog rl;	/* the log itself */
	int watchfd;		/* to the watchdog */
	int guardfd;		/* a pidfd of guard, or -1 */
	pid_t watchdog;
	struct corral_strv env;	/* the units' environment */
	char *unit_tmp;		/* an attempt's TMPDIR, or NULL */
	char *unit_tmp_root;	/* the agent's 0700 directory holding it */
	struct corral_strv binds;	/* a private /tmp: pairs FROM, TO for
				   corral_proc's binds, NULL-ended (none
				   without one) */
	struct corral_strv marks;	/* the mount points they need made in
				   unit_tmp at each attempt */
	struct corral_strv cloned;	/* the parts checked out */
	dev_t clone_dev;	/* the clone as checked out, to tell when a */
	ino_t clone_ino;	/* unit removed or replaced it */
	struct corral_reaper reaper;	/* orphans of units come here; the
				   children it had before any unit ran */
	size_t envunit;		/* env.v[envunit..+2]: UNIT, NOTE, ATTEMPT */
	struct corral_buf line;	/* the record being written */
	long long slice_end;	/* monotonic ms when time is up, or 0 */
	int slice_why;		/* 'T': the slice's limit; 'd': the run's */
	int halted;		/* r->halt units of the run failed */
	int nlimits;		/* setrlimit(2) calls each unit gets */
	struct corral_proc_limit limits[3];
	char *iobuf;		/* for the units' output */
	struct corral_live live;
	char *direct_word;	/* the last program found on PATH for */
	char *direct_path;	/* a unit without a shell, and where */
	int emptyfd;		/* the first N.out left empty, or -1 */
	char checkout_at[CORRAL_TIME_ISO_SIZE];	/* when the clone was
				   ready; "" once a final record told it */
	long long checkout_ms;	/* how long it took */
};

/*
 * The last non-blank line of one stream, as it arrives; a longer line is
 * cut to LAST_LINE_MAX bytes.
 */
struct last_line {
	struct corral_buf cur;		/* the line being read */
	struct corral_buf last;		/* the last whole non-blank one */
};

/*
 * A unit's output arrives through two pipes, standard output and error,
 * and goes to its N.out file in the order it is read; the file is made
 * with the first byte, since most units print nothing and a file
 * creation costs as much as a small unit (slice.c links the N.out of
 * one that printed nothing to an empty one).  Past max bytes, the first
 * max/2 stay where they are and the latest max - max/2 are kept in a
 * window after them, which is moved back whenever it has grown to twice
 * that; at the end the window's last part goes after a marker saying how
 * much was left out.  Disk use stays below twice max, memory at one
 * chunk.
 */
/*
 * The lines of a unit's output that name its failure, by kind (note.c):
 * the first of each, the last traceback's exception.
 */
enum { NOTE_PATTERN, NOTE_PYTEST, NOTE_GOTEST, NOTE_COMPILER,
    NOTE_TRACEBACK, NOTE_MAKE, NOTE_KINDS };
struct corral_note_lines {
	struct corral_buf line[NOTE_KINDS];
	int in_traceback;		/* after "Traceback (most recent..." */
	const regex_t *pattern;		/* CORRAL_NOTE_PATTERN, or NULL */
};

struct capture {
	const char *path;	/* the N.out file, made with the first byte */
	int fd;			/* open on it, or -1 until then */
	int create_err;		/* err is of making it */
	long long max;		/* 0: keep everything */
	long long head, tail;	/* what is kept of a longer output */
	long long size;		/* bytes in the file, until it overflows */
	long long total;	/* bytes the unit wrote */
	long long win;		/* overflowing: window bytes after head */
	int over;
	int err;		/* errno of a failed write; 0 */
	char *buf;		/* IOBUF_SIZE bytes */
	struct corral_tap tap;	/* standard output, read as TAP */
	struct last_line last[2];	/* of standard output, and error */
	struct corral_note_lines notes;	/* of both */
	char *junit;		/* the unit's own JUnit file (absolute), or
				   NULL: CORRAL_UNIT_JUNIT unset */
	char *junit_copy;	/* where the agent keeps a copy: N.xml */
	struct corral_buf junit_bad;	/* why it could not be read, or "" */
};

/*
 * After the unit: its JUnit file (rel under clone, through no link) read
 * and parsed, its tests then in c->tap (in place of its TAP) and its
 * bytes copied to c->junit_copy; when it cannot be, c->junit_bad says why ("cannot open
 * 'x.xml': ...", "'x.xml': invalid XML at line 3").  0, or -1 on ENOMEM.
 */
int corral_run_capture_junit(struct capture *c, const char *clone,
    const char *rel);

/* How one attempt is waited for. */
struct waiting {
	pid_t pid;
	int pipefd[2];		/* read ends of stdout, stderr; -1 after EOF */
	long long deadline;	/* monotonic ms; 0: none */
	int why;		/* 't': its timeout, 'T': the slice's, 'd': the run's */
	long long kill_at;	/* after SIGTERM, when SIGKILL follows */
	int sent;		/* 0, SIGTERM or SIGKILL */
	long strays;		/* processes left running, killed at its end */
};

/* How one attempt of a unit ended, as the record will say. */
struct outcome {
	struct corral_buf out;	/* the output file's path */
	int why;		/* of a timeout: 't', 'T' or 'd' (struct waiting) */
	int ok;
	const char *status;
	int exit_code;		/* -1: null */
	const char *signal;	/* NULL, or points into signame */
	char signame[32];
	long long ms;
	struct corral_buf note;
	long strays;		/* processes left running, killed after it */
	int renewed;		/* it removed or replaced its clone */
	struct corral_strv reads;	/* the files of the tree it read */
	struct corral_strv opened;	/* of them, those it opened itself
					   (not in a directory it listed) */
	int has_reads;		/* they were watched, none was lost, and the
				   attempt passed */
	struct corral_tap tap;	/* its standard output, read as TAP */
};

/* ------------------------------------------------------------------ */
/* slice.c and cached.c: records and the result cache                  */

/* Write rec to the log; final: the unit's last, sealed after it. */
int corral_run_write_record(struct corral_run *r,
    const struct corral_record *rec, int final, struct corral_err *err);
/*
 * A slice starts: the hits it counts and the hits it keeps to verify
 * begin afresh, and so does the phase of its sampling (from the run id
 * and the agent, so that every process that looks the slice up in the
 * same run samples the same hits).
 */
void corral_cached_begin(struct corral_run *r);
/*
 * Look unit (number i from 0, of expected work weight) up in the cache:
 * 0 not found (run it), 1 a hit recorded, 2 a hit kept to verify after
 * the misses (r->cache->deferred), -1 with err set.
 */
int corral_cached_lookup(struct corral_run *r, const char *unit, size_t i,
    long long weight, struct corral_err *err);
/* Store the final outcome o of unit when it passed or skipped.  0. */
int corral_cached_store(struct corral_run *r, const char *unit,
    const struct outcome *o);
/*
 * The verified hit under key ended as o: its note says whether the pass
 * held; one that did not is dropped from the stores.  0, or -1 ENOMEM.
 */
int corral_cached_verdict(struct corral_run *r, const char *key,
    struct outcome *o);

/* ------------------------------------------------------------------ */
/* run.c: getting ready                                                */

/*
 * Before the next unit: when this one removed or replaced its clone,
 * check it out again at the same path.  1 when it did, 0 when the clone
 * is the one checked out, -1 with err.
 */
int corral_run_clone_check(struct corral_run *r, struct corral_err *err);
/*
 * Before a unit runs: the clone, its watchdog and the units' environment,
 * made now when corral_run_start left them for the first unit that runs
 * (a slice with a result cache).  0, or -1 with err.
 */
int corral_run_need_clone(struct corral_run *r, struct corral_err *err);
/* Why unit was not checked out, or NULL when it was. */
const char *corral_run_refusal_of(const struct corral_run *r,
    const char *unit);
/*
 * Set the units' CORRAL_UNIT, CORRAL_NOTE and CORRAL_ATTEMPT for an
 * attempt.  0, or -1 on ENOMEM.
 */
int corral_run_unit_env(struct corral_run *r, const char *unit,
    const char *note, int attempt);
/*
 * The attempt's own empty TMPDIR, with the mount points a private /tmp
 * binds on, made afresh (nothing without one).  0, or -1 with err set.
 */
int corral_run_tmp_make(struct corral_run *r, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* supervise.c: a unit's supervision                                   */

/* Open a pidfd of r->guard, when there is one and the kernel has them. */
void corral_run_guard_open(struct corral_run *r);
/* Whether the guard has ended; the first time, the run stops as on TERM. */
int corral_run_guard_check(struct corral_run *r);
/* Fork the watchdog.  0, or -1 with err set. */
int corral_run_watchdog_start(struct corral_run *r, struct corral_err *err);
/* Tell the watchdog the slice is done, and reap it. */
void corral_run_watchdog_stop(struct corral_run *r);
/*
 * Become a child subreaper (where Linux can) and remember the children
 * that are no unit's.  0, or -1 with err set (ENOMEM).
 */
int corral_run_become_reaper(struct corral_run *r, struct corral_err *err);
/*
 * Start one unit's CMD, its stdout on outfd and stderr on errfd: its
 * words themselves when it needs no shell and they can be started, else
 * SHELL -c CMD (/bin/sh).  0 with *pid set, or the error number of what
 * kept it from starting.
 */
int corral_run_spawn_unit(struct corral_run *r, int outfd, int errfd,
    pid_t *pid);

/* direct.c: a command that needs no shell */

/*
 * Append to argv (empty) the words of cmd, its "$NAME" of the agent's own
 * variables expanded from env (NAME=VALUE, NULL-ended), and return 0 when
 * cmd needs no shell (see direct.c); 1 when it does (argv then holds part
 * of the words), -1 on ENOMEM.  The caller releases argv either way.
 */
int corral_run_words(const char *cmd, char *const *env,
    struct corral_strv *argv);
/*
 * The executable regular file word names in a directory of env's PATH,
 * as path: 0 found, 1 not (also when env has no PATH, or one of its
 * entries before it is empty or relative), -1 on ENOMEM.
 */
int corral_run_which(const char *word, char *const *env,
    struct corral_buf *path);
/*
 * Wait for the unit w->pid, its output from w->pipefd[] into c, enforcing
 * w's deadline; then kill what it left running and reap it into
 * *status.  0, or -1 with errno.
 */
int corral_run_wait_unit(struct corral_run *r, struct waiting *w,
    struct capture *c, int *status);

/* ------------------------------------------------------------------ */
/* slice.c: an attempt                                                 */

/*
 * Attempt number attempt of unit n (from 1) of the slice, in r->clone,
 * its output in N.out (N.A.out after the first); how it ended goes to o.
 * 0, or -1 with err set (the unit's failure is o's, not an error).
 */
int corral_run_attempt(struct corral_run *r, const char *unit, size_t n,
    int attempt, struct outcome *o, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* learn.c: what a unit opens; a failed unit in the whole tree         */

struct corral_learn;

/*
 * Watch every directory of clone (inotify, a thread draining it) for
 * files opened.  0 with *lp set, or -1 with err set.
 */
int corral_learn_start(struct corral_learn **lp, const char *clone,
    struct corral_err *err);
/*
 * Stop watching and free l: append to reads (sorted, each once) what was
 * opened that exists in src, relative (a directory listed: its files),
 * and to opened (may be NULL) just the files opened.  1 when every open
 * was seen, 0 when some may not have been (out of watches, a queue
 * overflow), -1 with err set (ENOMEM; err may be NULL).
 */
int corral_learn_stop(struct corral_learn *l, const char *src,
    struct corral_strv *reads, struct corral_strv *opened,
    struct corral_err *err);
/*
 * corral_run_attempt, watched when unit is one to learn (r->learn) and
 * the clone is the whole tree: o->reads then holds what it opened.
 */
int corral_learn_attempt(struct corral_run *r, const char *unit, size_t n,
    int attempt, struct outcome *o, struct corral_err *err);
/*
 * After unit's final attempt *attempt failed, with r->whole_check or
 * r->learn and a clone that is not the whole tree: try it once more (as
 * attempt *attempt + 1) in a fresh clone of the whole tree less .git and
 * r->exclude, watched.  Passing there, o's note says so and names what
 * the slice's clone lacked; with r->learn, o becomes that passing
 * attempt (and *attempt its number), its reads learned anew ("." when it
 * opened nothing the clone lacked).  Failing there too, o's note says
 * that.  0, or -1 with err set.
 */
int corral_learn_after(struct corral_run *r, const char *unit, size_t n,
    int *attempt, struct outcome *o, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* capture.c: a unit's output                                          */

/* Ready c to read a unit's streams (fd, max and the rest set after). */
void corral_run_capture_init(struct capture *c);
/*
 * Add p[0..n) to c, making c->path with the first byte; an error to make
 * or write it is kept in c->err (c->create_err: to make it), the rest
 * dropped.
 */
void corral_run_capture_add(struct capture *c, const char *p, size_t n);
/*
 * p[0..n) of stream 1 (standard output) or 2 (standard error): added to
 * c, and read for its last line (and, for 1, as TAP).
 */
void corral_run_capture_stream(struct capture *c, int stream, const char *p,
    size_t n);
/* Put the kept tail after the marker, and cut the file there. */
void corral_run_capture_finish(struct capture *c);
/*
 * Append ": LINE" to b, LINE naming the failure: the first "not ok" line
 * when standard output was TAP, else the last non-blank line of standard
 * error, else that of standard output, trimmed and cut to 200 bytes;
 * nothing when there is none.  0, or -1 on ENOMEM.
 */
int corral_run_capture_detail(const struct capture *c, struct corral_buf *b);
void corral_run_capture_release(struct capture *c);

/* ------------------------------------------------------------------ */
/* note.c: the line that names a failure                                */

/* Read the whole line (no '\n') for a failure line. */
void corral_note_lines_see(struct corral_note_lines *nl,
    const struct corral_buf *line);
/*
 * The line found of kind NOTE_PATTERN, or (any other kind) the best of the
 * tools' own: pytest, go test, a compiler, a traceback, make; or NULL.
 */
const struct corral_buf *corral_note_lines_best(
    const struct corral_note_lines *nl, int kind);
void corral_note_lines_release(struct corral_note_lines *nl);
/* Whether the NUL-ended line matches re. */
int corral_note_match(const regex_t *re, const char *line);

#endif /* CORRAL_RUN_PRIVATE_H */
