/* See LICENSE file for copyright and license details. */
/*
 * agent.h: what one agent does -- the run of its slice in its private
 * clone (checkout/), what a unit inherits, and the live state
 * corral-status reads.
 */
#ifndef CORRAL_AGENT_H
#define CORRAL_AGENT_H

#include <regex.h>
#include "base/base.h"
#include "cache/cache.h"

/* ------------------------------------------------------------------ */
/* env.c: what a unit inherits                                          */

/*
 * Whether the environment entry e (NAME=VALUE) reaches a unit: never
 * when NAME is __corral_* (corral's internals); with keep (may be NULL:
 * every CORRAL_* stays), a CORRAL_* one only when keep names it (those
 * the user's own environment held; the rest are the run's settings).
 */
int corral_env_for_unit(const char *e, const struct corral_strv *keep);
/*
 * MAKEFLAGS as make writes it (its flags, then the word "--" and the
 * variables of its command line, one word each, a space or a backslash
 * in a value escaped by a backslash) less every assignment to a
 * CORRAL_* or __corral_* variable, appended to out; without any other
 * variable, without the "--".  0, or -1 on ENOMEM.
 */
int corral_makeflags_clean(const char *flags, struct corral_buf *out);
/*
 * A unit's environment, appended to env: each entry of from (NULL-ended)
 * that corral_env_for_unit lets through and that extra (NAME=VALUE,
 * NULL-ended, may be NULL) does not set, MAKEFLAGS through
 * corral_makeflags_clean when keep is given, then extra.  0, or -1 on
 * ENOMEM (env holds a part; the caller releases it either way).
 */
int corral_env_unit(struct corral_strv *env, char *const *from,
    const struct corral_strv *keep, const char *const *extra);

/* ------------------------------------------------------------------ */
/* live.c: what a running agent shows (status file, ticks, progress)   */

/* A run's progress, tallied from STATEDIR/ticks (or one agent's own). */
struct corral_tally {
	size_t total;		/* units of the agents that have started */
	size_t planned;		/* units the run will run ("T N"), or 0 */
	size_t done, pass, fail, flaky, timeout, skip;
	long long weight;	/* their expected work (ms, or 1 a unit) */
	long long wdone;	/* the expected work of the finished units */
	long long start_ms;	/* when the first agent started (Epoch ms) */
	long long msdone;	/* the time the timed units took, in all */
	size_t timed;		/* finished units that ran (not not-run) */
	size_t agents, agents_done;	/* "S" lines, "E" lines */
};

/*
 * Prints one progress line of len bytes (less than PIPE_BUF), which the
 * caller should write whole, with one write(2), so that lines of agents
 * sharing a terminal or a pipe never mix.
 */
typedef void corral_progress_fn(void *arg, const char *line, size_t len);

/* The run's total: what it planned, or more once more agents started. */
size_t corral_tally_total(const struct corral_tally *t);
/*
 * Compile pattern, an extended regular expression, for note_pattern
 * (note.c).  0, or -1 with err set naming it and what is wrong.
 */
int corral_note_pattern_compile(regex_t *re, const char *pattern,
    struct corral_err *err);
/*
 * The ms until the run's units are done, or -1 while nothing tells (no
 * unit ended, none in flight with an estimate).  left[0..n) is what each
 * unit in flight still needs by its own estimate (-1: none; it then gets
 * the run's mean less ran[i], the ms it has run); the units not yet
 * started take the run's mean each.  The work is spread over the agents
 * running now (n when n > 0, else those of the ticks), and the ETA is
 * never less than the longest unit in flight still needs.
 */
long long corral_tally_eta(const struct corral_tally *t,
    const long long *left, const long long *ran, size_t n);
/* The tally of STATEDIR/ticks into t (zero when there is none).  0 or -1. */
int corral_live_tally(const char *statedir, struct corral_tally *t,
    struct corral_err *err);

enum corral_agent_state {
	CORRAL_AGENT_STARTING,	/* no unit started yet */
	CORRAL_AGENT_RUNNING,	/* on a unit */
	CORRAL_AGENT_DONE,	/* its slice ran to the end */
	CORRAL_AGENT_GONE	/* its process is gone, the slice unfinished */
};

/* What one agent's status file says; -1 for numbers it does not. */
struct corral_agent_status {
	char *agent;
	char *run;
	char *unit;		/* RUNNING: the unit it is on */
	char *output;		/* RUNNING: where its output goes, or NULL */
	long long pid, units, i, attempt;
	long long since_ms;	/* when the unit (or the state) began */
	long long expect_ms;	/* the unit's usual duration, or -1 */
	enum corral_agent_state state;
};

/*
 * Every STATEDIR/agent-ID.status, in no particular order, in a malloc'd
 * array; free with corral_live_free.  0, or -1 with err set.
 */
int corral_live_read(const char *statedir, struct corral_agent_status **listp,
    size_t *np, struct corral_err *err);
void corral_live_free(struct corral_agent_status *list, size_t n);

/* ------------------------------------------------------------------ */
/* sandbox.c: a unit inside bubblewrap (CORRAL_SANDBOX=bwrap)          */

/* How many of the holder's namespaces a unit joins (sandbox.c). */
#define CORRAL_SANDBOX_NS	6

/*
 * A run's sandbox: args are the user's own bwrap options
 * (CORRAL_SANDBOX_ARGS), one argument each, added after corral's own;
 * hide, the directories a unit must not see (corral_run_start adds
 * CORRAL_OUT, or LOGDIR outside one, and STATEDIR).  Once open: ns, the
 * holder's namespaces (-1 for a user namespace a unit is in already), the
 * clone and the directory of notes, both absolute.  _init first,
 * _release last (it frees and closes all of it).
 */
struct corral_sandbox {
	struct corral_strv args;
	struct corral_strv hide;
	int ns[CORRAL_SANDBOX_NS];
	char *clone;
	char *noteroot;
};

void corral_sandbox_init(struct corral_sandbox *sb);
void corral_sandbox_release(struct corral_sandbox *sb);
/* "none" (or empty) sets *on to 0, "bwrap" to 1; else -1 with err. */
int corral_sandbox_parse(const char *name, int *on, struct corral_err *err);
/*
 * Add dir, made absolute, to what units must not see; one that does not
 * exist is skipped.  0, or -1 with errno.
 */
int corral_sandbox_hide(struct corral_sandbox *sb, const char *dir);
/*
 * Run a sandbox as units get it (the user's options included) on a
 * command that writes in its bound directory.  0 when that worked; -1
 * with err saying, in one line, that there is no bwrap on PATH or what
 * bwrap said when it failed (namespaces refused, a bad option).
 */
int corral_sandbox_probe(const struct corral_sandbox *sb,
    struct corral_err *err);
/*
 * Make the slice's sandbox: one bwrap (corral's options, the user's, the
 * clone writable, the directory noteroot where units' notes are made
 * bound for them), whose namespaces sb keeps once it is set up, then
 * ended.  0, or -1 with err.
 */
int corral_sandbox_open(struct corral_sandbox *sb, const char *clone,
    const char *noteroot, struct corral_err *err);
/* What a unit's way in needs: the open sandbox, its note (or NULL). */
struct corral_sandbox_unit {
	const struct corral_sandbox *sb;
	const char *note;
};
/*
 * corral_proc's enter for a unit (arg a struct corral_sandbox_unit):
 * joins the holder's namespaces, makes the unit's own (mount, PID, IPC)
 * and mounts (/tmp, /dev/shm, /proc, the hidden directories, the note
 * bound in), drops every capability; the leader waits for the PID
 * namespace's init, in a session of its own, which waits for the one
 * process that returns (0) and execs.  An error number otherwise.
 */
int corral_sandbox_enter(const void *arg, int errfd);
/*
 * Create path empty, to be bound over the hidden LOGDIR: the one
 * file there a unit may write.  0, or the errno.  corral_sandbox_note_done
 * removes it again when the unit left it empty, as without the sandbox.
 */
int corral_sandbox_note(const char *path);
void corral_sandbox_note_done(const char *path);
/*
 * The sandbox exits 128 + N when the unit's shell is killed by signal N; the
 * wait status that says so, else wstatus.  Only for a unit the agent
 * signalled itself, where no shell's own exit 128 + N is in doubt.
 */
int corral_sandbox_status(int wstatus);
/*
 * Send sig to every process of group pgid but its leader (the process
 * that entered the sandbox), whose death takes the whole sandbox at once,
 * and of the group the PID namespace's init leads in its own session (the
 * unit's shell and what it starts): a unit's grace period after SIGTERM
 * stays its own.  0, or -1 when /proc cannot tell.
 */
int corral_sandbox_kill(pid_t pgid, int sig);

/* ------------------------------------------------------------------ */
/* run.c: running one slice (corral-run-slice)                         */

/*
 * An agent id becomes part of file names (LOGDIR/agent-ID.jsonl), so it
 * may hold only [A-Za-z0-9._-], must not be empty and must not start with
 * '.'.  0, or -1 with err naming the id.
 */
int corral_agent_check(const char *agent, struct corral_err *err);

/* A fresh run id, "20261129T103213Z-4242" (UTC time and pid), in out. */
void corral_run_id(char out[32]);

/*
 * CORRAL_WORK on this node: pattern with each $NAME and ${NAME} replaced
 * by that variable of the environment (a '$' before anything else stays
 * as it is), into *out (malloc'd, the caller frees).  -1 with err naming
 * the pattern when a variable it names is unset or empty, or when what
 * it becomes is not an absolute path.
 */
int corral_work_expand(const char *pattern, char **out,
    struct corral_err *err);
/*
 * run as a directory name, into out: every byte but [A-Za-z0-9_.-] (and
 * a leading '.') made '_'; "run" when run is empty.
 */
void corral_work_run_name(const char *run, char *out, size_t size);
/*
 * Remove every entry of dir but run (a run's directory of clones, named
 * by corral_work_run_name) and what another sweep of run is removing:
 * each is renamed ".gone.RUN.PID.N" first, so that two agents of run
 * never remove one tree.  Only for a dir whose runs are over but run's
 * (the caller's run holds the lock of the CORRAL_OUT dir belongs to).
 * The number of entries removed (0 when dir does not exist), or -1 with
 * err.
 */
int corral_work_sweep(const char *dir, const char *run,
    struct corral_err *err);

/*
 * Install the signal dispositions a slice needs: SIGHUP, SIGINT and
 * SIGTERM are caught (unless ignored on entry, as make and the shells
 * leave them) and forwarded to the running unit's process group, a second
 * one as SIGKILL; SIGXFSZ is ignored so a file size limit makes writes
 * fail with EFBIG instead of killing the agent; SIGCHLD is caught and
 * blocked, so that it wakes the wait for a unit only inside ppoll(2).
 * Units get the caller's dispositions and an empty mask back.  0, or -1
 * with err set.
 */
int corral_run_signals(struct corral_err *err);
/* The first forwarded signal caught so far, or 0. */
int corral_run_caught(void);

/*
 * The result cache of a run (cached.c): each unit's key is looked up in
 * the stores before it runs, and a hit is recorded without running it.
 * The caller fills it; corral_run_release releases what the run made.
 */
struct corral_run_cache {
	struct corral_cache_ctx key;	/* src, settings, env, key_cmd,
					   shell and cmd set by the caller */
	struct corral_cache_store store[2];	/* [0] the local one,
					   [1] CORRAL_CACHE (dir NULL: none) */
	int no_hits;		/* make -B: store results, take no hit */
	int verify;		/* percent of the hits run again (0..100) */
	const struct corral_learned *learned;	/* CORRAL_PARTS = auto:
					   each unit's inputs; else NULL */
	const char *warned;	/* a file made once a store's trouble was
				   said (STATEDIR/cache-warned), or NULL */
	corral_progress_fn *warn;	/* says it, or NULL */
	int said;		/* this agent said it */
	int off;		/* keys cannot be made: uncached */

	int ready;		/* key.base computed */
	/* Each slice's own, from corral_run_start: */
	double phase;		/* of the sampling: from the run and agent */
	struct corral_strv deferred;	/* hits to verify, after the misses */
	struct corral_strv deferred_key;	/* their keys */
	size_t hits, stored;
};

/*
 * Free what c made (the caller's, which may use one c for the slices it
 * runs one after another: the key's shared parts are made once).
 */
void corral_cached_release(struct corral_run_cache *c);

/*
 * One agent's run of one slice.  The caller fills the first blocks, calls
 * corral_run_init first and corral_run_release last, whatever happened.
 */
struct corral_run {
	const char *agent;	/* checked with corral_agent_check */
	const char *cmd;	/* each unit runs SHELL -c CMD */
	const char *shell;	/* SHELL; NULL: /bin/sh (a name without '/'
				   is looked up on PATH) */
	const char *logdir;	/* gets agent-ID.jsonl and agent-ID/N.out */
	const char *run;	/* the run id written in every record */
	const char *src;	/* the tree the clone is checked out from */
	const struct corral_strv *parts;
	const struct corral_strv *exclude;	/* may be NULL */
	const struct corral_strv *patterns;	/* what is never cloned
					   (CORRAL_PARTS_EXCLUDE), or NULL */
	const char *workroot;	/* the clone is made under it */
	const char *inputs;	/* recorded in each record; may be NULL */
	const char *host;	/* recorded in each record; may be NULL */
	const struct corral_strv *units;	/* the slice (may be NULL): a
					   refused part that is one of them
					   fails that unit alone */
	int keep;		/* leave the clone in place */
	int whole_check;	/* a unit that fails is tried again in a clone
				   of the whole tree (less exclude and .git),
				   its record saying whether it passes there */
	const struct corral_strv *learn;	/* units whose reads are
					   learned (CORRAL_PARTS = auto), or
					   NULL: none, and no whole-tree retry */

	/* Time, attempts, resources: 0 means none (no limit, no retry). */
	long long timeout_ms;	/* each attempt of a unit */
	long long grace_ms;	/* after a timeout, from SIGTERM to SIGKILL */
	long long slice_ms;	/* the whole slice */
	long long deadline_ms;	/* Epoch ms by which the whole run must end */
	int retries;		/* attempts after a failed one, at most */
	size_t halt;		/* once this many units of the run failed
				   (STATEDIR's ticks), start no unit; 0:
				   never */
	const unsigned char *no_retry;	/* [256]: exit codes never retried */
	const unsigned char *skip;	/* [256]: exit codes that mean the unit
					   skipped itself ("skip", ok), or
					   NULL: none */
	const unsigned char *hard;	/* [256]: exit codes that mean a hard
					   error ("error", automake's 99), or
					   NULL: none */
	const regex_t *note_pattern;	/* a failure's note quotes the first
					   line that matches, or NULL */
	int tmp_shared;		/* units share the caller's TMPDIR; 0: each
				   attempt gets an empty one of its own as
				   TMPDIR, TMP and TEMP, in the caller's,
				   removed when it ends (the sandbox has its
				   own /tmp either way) */
	int tmp_private;	/* and that directory is the unit's /tmp, in
				   a mount namespace of its own (run.c) */
	const char *unit_junit;	/* the JUnit file each unit writes, relative
				   to the clone, $CORRAL_UNIT standing for
				   the unit: its tests are the record's;
				   NULL: none */
	int exit_only;		/* a unit that exits 0 passes whatever TAP
				   it printed; 0: its TAP's not ok lines,
				   Bail out! or a short plan fail it */
	long long output_max;	/* bytes of a unit's output kept (head+tail) */
	struct corral_limits limits;
	const long long *expect;	/* expected ms per unit, or NULL */
	const char *statedir;	/* live state for corral-status, or NULL */
	pid_t guard;		/* once it ends, stop as on SIGTERM; 0: none */
	corral_progress_fn *progress;	/* gets progress lines, or NULL */
	void *progress_arg;
	int progress_tty;	/* they go to a terminal: redraw one line */
	struct corral_sandbox *sandbox;	/* each unit inside it, or NULL */
	struct corral_run_cache *cache;	/* the result cache, or NULL */
	int answer_only;	/* the slice is written only when the stores
				   answer every unit with a hit none of which
				   is sampled: the first unit they do not
				   answer stops it unwritten (unanswered:
				   no log, no checkpoint, no outputs); a
				   log is not fsynced: the caller syncs the
				   file system once for many slices */
	const struct corral_strv *keep_env;	/* the CORRAL_* names of the
				   user's own environment: units get no
				   other (corral_env_unit); NULL: every
				   CORRAL_* the caller has */

	char *clone;		/* the clone's absolute path, once made */
	size_t failed;		/* units whose final record says ok false */
	int guard_gone;		/* the run stopped because guard ended */
	struct corral_strv refused;	/* units whose own part was refused */
	struct corral_strv refusal;	/* why, for each of them */
	const char *resume_note;	/* what resuming a checkpoint found,
					   or NULL (until release) */
	int unanswered;		/* answer_only, and a unit was not answered */

	struct corral_run_state *st;	/* run.c's own, from corral_run_start */
};

void corral_run_init(struct corral_run *r);

/*
 * Get ready to run: create LOGDIR/agent-ID/, remove the agent's old log
 * (agent-ID.jsonl and .part) and old outputs (N.out, N.note, N.A.out,
 * N.A.note; nothing else), become a child subreaper (so that whatever a
 * unit leaves running comes back to this process when it detaches), check
 * out the clone into a fresh directory under workroot, start
 * the watchdog (a process forked once, in a process group of its own,
 * that kills the running unit's group and removes the clone if this
 * process dies without finishing), then open agent-ID.jsonl.part.  Each
 * part missing from src is appended to missing (may be NULL).  A refused
 * part that is one of r->units is left out of the clone and only that
 * unit fails (an "error" record); any other refused part is an error.  0,
 * or -1 with err set; nothing is left at the final log name either way.
 */
int corral_run_start(struct corral_run *r, struct corral_strv *missing,
    struct corral_err *err);

/*
 * Run each unit in order, in its own process group, with the clone as
 * working directory, stdin /dev/null and stdout and stderr through a pipe
 * into LOGDIR/agent-ID/N.out (N.A.out for attempt A > 1; capped at
 * output_max bytes, head and tail kept with a marker between), and append
 * its record to the .part with one write(2) when it ends; whatever the
 * unit left running, in its process group or detached from it, is then
 * killed and counted in the record ("stray"), and a clone the unit
 * removed or replaced is checked out again before the next one.  A unit
 * past its time gets SIGTERM, its whole group SIGKILL grace_ms later, and
 * the status "timeout".  A failed attempt is retried up to retries times
 * (not for the exit codes in no_retry), each attempt its own record; a
 * pass after a failure is "flaky".  Once the slice's or the run's time is
 * up, the units left get "not-run" records; a unit whose own part was
 * refused gets an "error" record.  A unit's failure is its record, not
 * an error.  Returns 0 when every unit ran; -1 with err set when the log
 * or an output could not be written, or when a forwarded signal stopped
 * the slice (corral_run_caught() tells which; the unit in flight then
 * gets no record).
 */
int corral_run_units(struct corral_run *r, const struct corral_strv *units,
    struct corral_err *err);

/*
 * Finish the log: fsync and close the .part, rename it to agent-ID.jsonl
 * and fsync the directory.  Refused once a signal was caught, so the
 * final name only ever holds a slice that ran to its end.  0, or -1 with
 * err set.
 */
int corral_run_commit(struct corral_run *r, struct corral_err *err);

/*
 * Remove the clone (unless keep), stop the watchdog, close and free
 * everything; the strings the caller set are its own.  An uncommitted
 * .part stays for the merge to report.  0, or -1 with err set when the
 * clone could not be removed (everything else is released anyway).
 */
int corral_run_release(struct corral_run *r, struct corral_err *err);

#endif /* CORRAL_AGENT_H */
