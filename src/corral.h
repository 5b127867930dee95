/* See LICENSE file for copyright and license details. */
/*
 * corral.h is the one header of libcorral, the code shared by every corral
 * program.  The library reports and the tool decides: nothing declared here
 * prints or exits, except the x* helpers and the corral_warn/die family,
 * which only tools/ may call.  Functions that can fail return 0 or a
 * pointer on success and -1 or NULL on failure, filling a caller-supplied
 * struct corral_err with a one-line message.
 */
#ifndef CORRAL_H
#define CORRAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define CORRAL_VERSION "0.1.0"

/* Exit statuses, the contract of every program (README "Exit status"). */
enum {
	CORRAL_EXIT_OK = 0,	/* success */
	CORRAL_EXIT_NO = 1,	/* ran, and the answer is "no" (failures) */
	CORRAL_EXIT_ERR = 2	/* usage error, bad input, or I/O failure */
};

/* ------------------------------------------------------------------ */
/* err.c: messages, in one format: "progname: what went wrong"         */

/*
 * A library error: the message, and the errno that caused it (0 if none).
 * The tool prints it; a message ends without strerror, which the printer
 * appends when errnum is set.
 */
struct corral_err {
	char msg[1024];
	int errnum;
};

/* Set err (if not NULL) and return -1.  errnum 0 means "no errno". */
int corral_err_set(struct corral_err *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Set the program name printed before every message (argv[0]'s base). */
void corral_setprogname(const char *argv0);
const char *corral_progname(void);

/*
 * Print "progname: message" to stderr.  A format ending in ':' appends
 * " strerror(errno)".  corral_error returns -1; corral_die exits.
 */
void corral_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int corral_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void corral_die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
/* Print a library error as "progname: msg[: strerror]". */
void corral_warn_err(const struct corral_err *err);
/*
 * _exit(2) from a forked child (never a vfork one).  A coverage build
 * (-DCORRAL_COVERAGE) first writes the child's gcov counters, which
 * _exit would drop, so the work done in fix workers and the watchdog
 * counts.
 */
void corral_child_exit(int status) __attribute__((noreturn));
void corral_die_err(int status, const struct corral_err *err)
	__attribute__((noreturn));

/* ------------------------------------------------------------------ */
/* xalloc.c: allocation that exits on failure (tools only)             */

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/*
 * Parse a decimal integer in [min, max] the way OpenBSD strtonum does.
 * Returns 0 and sets *out, or -1 with a message in err naming `what`.
 */
int corral_strtonum(const char *s, long long min, long long max,
    long long *out, const char *what, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* parse.c: option values that are durations and sizes                 */

/*
 * Seconds, with up to three decimals ("2", "0.25"), as milliseconds in
 * *ms.  0, or -1 with a message naming `what` in err.
 */
int corral_seconds_parse(const char *s, long long *ms, const char *what,
    struct corral_err *err);
/*
 * A size in bytes, with an optional K, M or G suffix (powers of 1024).
 * 0, or -1 with a message naming `what` in err.
 */
int corral_size_parse(const char *s, long long *bytes, const char *what,
    struct corral_err *err);
/* ms as seconds for a message: "2s", "0.25s", "1.5s". */
void corral_seconds_format(long long ms, char out[32]);

/* Limits set on each unit with setrlimit(2) before it starts; 0: none. */
struct corral_limits {
	long long cpu;		/* RLIMIT_CPU, seconds (hard limit one more) */
	long long mem;		/* RLIMIT_AS, bytes */
	long long fsize;	/* RLIMIT_FSIZE, bytes */
};

/*
 * One limit as corral-run-slice's -L takes it: cpu=SECS, mem=SIZE or
 * fsize=SIZE, into l.  0, or -1 with a message in err.
 */
int corral_limit_parse(struct corral_limits *l, const char *arg,
    struct corral_err *err);
/*
 * Exit codes separated by commas ("23,66"): codes[c] = 1 for each.  0,
 * or -1 with a message naming `what` in err.
 */
int corral_codes_parse(unsigned char codes[256], const char *arg,
    const char *what, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* buf.c: a growable byte buffer (sds-like), always NUL-terminated     */

struct corral_buf {
	char *data;	/* NULL until the first append */
	size_t len;
	size_t cap;
};

#define CORRAL_BUF_INIT { NULL, 0, 0 }

/* Each returns 0, or -1 with errno ENOMEM (the buffer is then unchanged). */
int corral_buf_add(struct corral_buf *b, const void *p, size_t n);
int corral_buf_addstr(struct corral_buf *b, const char *s);
int corral_buf_addch(struct corral_buf *b, int c);
int corral_buf_addf(struct corral_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Append s (n bytes) as a JSON string literal, quotes included. */
int corral_buf_addjson(struct corral_buf *b, const char *s, size_t n);
void corral_buf_reset(struct corral_buf *b);		/* len = 0, keeps memory */
void corral_buf_release(struct corral_buf *b);		/* frees data */

/* ------------------------------------------------------------------ */
/* strv.c: a vector of NUL-terminated strings                          */

struct corral_strv {
	char **v;	/* v[n] is NULL */
	size_t n;
	size_t cap;
};

#define CORRAL_STRV_INIT { NULL, 0, 0 }

/* Append a copy of s (n bytes).  0, or -1 with errno ENOMEM. */
int corral_strv_addn(struct corral_strv *sv, const char *s, size_t n);
int corral_strv_add(struct corral_strv *sv, const char *s);
void corral_strv_release(struct corral_strv *sv);	/* frees every string */

/* ------------------------------------------------------------------ */
/* set.c: a hash set of strings mapping each to an integer             */

struct corral_set;

/* NULL with errno ENOMEM.  Free with corral_set_free. */
struct corral_set *corral_set_new(void);
void corral_set_free(struct corral_set *s);
/*
 * Insert key with value if absent.  Returns 1 if inserted, 0 if it was
 * already there (its value left alone), -1 on ENOMEM.  When vp is not NULL
 * it is pointed at the stored value (new or old), valid until the next
 * insertion.  The set keeps its own copy of key.
 */
int corral_set_put(struct corral_set *s, const char *key, long value,
    long **vp);
/* The stored value's address, or NULL when key is absent. */
long *corral_set_get(const struct corral_set *s, const char *key);
size_t corral_set_size(const struct corral_set *s);

/* ------------------------------------------------------------------ */
/* units.c: reading a population                                       */

/*
 * Read units from fp, one per line (sep '\n') or NUL-terminated (sep
 * '\0').  Empty entries are skipped.  A unit seen twice is kept once, at
 * its first position; each later copy is appended to dups (if not NULL)
 * so the caller can warn.  A missing final separator is accepted.
 * Returns 0, or -1 with err set (read error, ENOMEM).  name is used in
 * messages.
 */
int corral_units_read(FILE *fp, int sep, const char *name,
    struct corral_strv *units, struct corral_strv *dups,
    struct corral_err *err);

/*
 * corral_units_read on the file named file ("-" is standard input),
 * appending to units; with warn, each unit listed twice is named on
 * stderr.  0, or -1 with err set (naming file).
 */
int corral_units_load(const char *file, int sep, struct corral_strv *units,
    int warn, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* io.c: files, atomically                                             */

/*
 * "a/b" in fresh memory; a when b is empty, b when a is empty, so a
 * relative path joins a root without a stray slash.  NULL on ENOMEM.
 */
char *corral_path_join(const char *a, const char *b);

/* Write all n bytes, retrying on EINTR and short writes.  0 or -1/errno. */
int corral_write_all(int fd, const void *p, size_t n);
/*
 * Open a file to read where a regular file is expected: a FIFO, device,
 * directory or socket is refused ("'x' is a FIFO, not a regular file")
 * without blocking on it.  A path that names a descriptor the caller
 * handed over (/dev/stdin, /dev/fd/N, /proc/self/fd/N) is a stream the
 * user chose and is read as it is.  The descriptor (close it), or -1
 * with err set.  fopen_input is the same as a stdio stream (fclose it),
 * NULL with err set.
 */
int corral_open_input(const char *path, struct corral_err *err);
FILE *corral_fopen_input(const char *path, struct corral_err *err);
/* Read a whole file into b (appending), by open_input.  0, or -1/err. */
int corral_read_file(const char *path, struct corral_buf *b,
    struct corral_err *err);
/* mkdir -p.  0, or -1 with err set. */
int corral_mkdir_p(const char *path, mode_t mode, struct corral_err *err);
/* The process's umask (read without changing it for good). */
mode_t corral_umask(void);
/* fsync the directory that holds path.  0, or -1 with err set. */
int corral_fsync_parent(const char *path, struct corral_err *err);

/*
 * Atomic replacement of one file (RELIABILITY 4.2): data goes to a
 * temporary file beside the target, which commit fsyncs and renames over
 * it, then fsyncs the directory.  A crash leaves the old file or the new
 * one, never a mix; leftover temporaries are named .NAME.tmp.XXXXXX.
 */
struct corral_atomic {
	int fd;
	char *path;	/* the target */
	char *tmp;	/* the temporary beside it */
};

enum corral_atomic_flags {
	/* Keep the old file (and its mtime) when the content is the same. */
	CORRAL_ATOMIC_KEEP_SAME = 1 << 0,
	/*
	 * The user named this output: when it is a descriptor's name
	 * (/dev/stdout, /dev/fd/N), a character device or a FIFO, write
	 * it in place, with no temporary (tmp stays NULL) and no rename.
	 */
	CORRAL_ATOMIC_IN_PLACE = 1 << 1
};

/*
 * Open a temporary for path.  A path that exists and is not a regular
 * file (a symbolic link is followed) is never replaced: it is written in
 * place under CORRAL_ATOMIC_IN_PLACE (see there), otherwise refused
 * ("'x' is a FIFO, not a regular file").  0, or -1 with err set.
 */
int corral_atomic_open(struct corral_atomic *a, const char *path,
    struct corral_err *err);
int corral_atomic_write(struct corral_atomic *a, const void *p, size_t n,
    struct corral_err *err);
/*
 * fsync, close, rename into place and fsync the directory.  Returns 1 if
 * the target changed, 0 if it was kept (KEEP_SAME), -1 with err set; the
 * temporary is removed on failure.  The struct is released either way.
 */
int corral_atomic_commit(struct corral_atomic *a, int flags,
    struct corral_err *err);
/*
 * The two halves of a commit, for a caller that renames several files
 * together (merge.c).  prepare fsyncs and closes the temporary; it returns
 * 1 when it is ready to rename, 0 when KEEP_SAME found the target equal
 * (the temporary is then removed and the struct released), -1 with err
 * set (removed and released too).  rename puts a prepared temporary in
 * place without syncing the directory: 0, releasing the struct, or -1
 * with err set, leaving the temporary and the struct for abort.
 */
int corral_atomic_prepare(struct corral_atomic *a, int flags,
    struct corral_err *err);
int corral_atomic_rename(struct corral_atomic *a, struct corral_err *err);
/* Remove the temporary and release the struct; for error paths. */
void corral_atomic_abort(struct corral_atomic *a);
/* Write a whole file atomically: open + write + commit; flags for both. */
int corral_atomic_file(const char *path, const void *p, size_t n, int flags,
    struct corral_err *err);

/* ------------------------------------------------------------------ */
/* split.c: cutting a population into disjoint, balanced slices        */

/*
 * Round-robin split, exactly as the original: unit i goes to slice i mod
 * n, where n = max(1, min(nslices, nunits)); order is kept inside a slice.
 * On success *slicesp is an array of n vectors (each holding pointers into
 * units->v, not copies) and *np is n; 0 units give 0 slices and NULL.
 * Free the array (not the strings) with corral_split_free.  -1 on ENOMEM.
 */
int corral_split_roundrobin(const struct corral_strv *units, long nslices,
    struct corral_strv **slicesp, size_t *np, struct corral_err *err);

/*
 * Longest processing time first: units sorted by weight, heaviest first
 * (ties by name, bytewise), each put on the slice with the least weight
 * so far (ties: the lower slice).  Slices are then numbered heaviest
 * first (ties keep their order), so slice 0 is the longest.  w[i] is the
 * weight of units->v[i].  Same n, results and freeing as round-robin;
 * *loadsp (may be NULL) gets a malloc'd array of the n slice weights.
 * The plan depends only on the units and weights, so every host computes
 * the same one.  -1 on ENOMEM.
 */
int corral_split_weighted(const struct corral_strv *units,
    const long long *w, long nslices, struct corral_strv **slicesp,
    size_t *np, long long **loadsp, struct corral_err *err);
void corral_split_free(struct corral_strv *slices, size_t n);

/* What the weights of a population are measured in. */
enum corral_weights_kind {
	CORRAL_WEIGHTS_NONE,	/* nothing known: every weight is 0 */
	CORRAL_WEIGHTS_MS,	/* milliseconds learned from history */
	CORRAL_WEIGHTS_BYTES	/* file sizes, when there is no history */
};

/* The smoothing of the learned durations: new = a * x + (1 - a) * old. */
#define CORRAL_EWMA_ALPHA 0.3

/*
 * One weight per unit of a population (w[i] for units->v[i]).  known[i]
 * is 1 when the weight was learned rather than estimated.
 */
struct corral_weights {
	enum corral_weights_kind kind;
	long long *w;
	unsigned char *known;
	size_t n;
	size_t nknown;
	long long median;	/* the estimate of an unknown unit (MS) */
	size_t unreadable;	/* history lines that were not records */
};

/*
 * Learn durations from a history.jsonl: per unit of the population, the
 * exponentially weighted average (CORRAL_EWMA_ALPHA, oldest first) of
 * "duration_ms" over its records, rounded to whole ms; commit lines and
 * records without a duration (not-run) are skipped, other unreadable lines
 * counted.  Units without history get the median of the known ones.  A
 * missing file, or one without any unit of the population, gives kind
 * NONE.  0, or -1 with err set (I/O, ENOMEM).  Release wt either way.
 */
int corral_weights_history(struct corral_weights *wt,
    const struct corral_strv *units, const char *history,
    struct corral_err *err);
/*
 * Weigh each unit by the size of the file dir/unit (0 when it is not a
 * regular file): kind BYTES, every unit estimated.  dir may be NULL (the
 * current directory).  0, or -1 (ENOMEM).
 */
int corral_weights_sizes(struct corral_weights *wt,
    const struct corral_strv *units, const char *dir,
    struct corral_err *err);
void corral_weights_release(struct corral_weights *wt);

/* plan.c: a plan as corral-split makes it                            */

enum corral_strategy {
	CORRAL_SPLIT_ROUNDROBIN,	/* the original's */
	CORRAL_SPLIT_WEIGHTED,		/* longest processing time first */
	CORRAL_SPLIT_AUTO		/* weighted once history knows a unit */
};

struct corral_plan {
	const struct corral_strv *units;
	struct corral_strv *slices;	/* n, of pointers into units->v */
	size_t n;
	struct corral_weights wt;	/* of units->v; kind NONE: unknown */
	long long *loads;		/* the weight of each slice */
	const char *strategy;		/* what was done: "roundrobin" or
					   "weighted" */
	struct corral_set *ix;		/* unit -> its index in units->v */
};

/*
 * Cut units into nslices as strategy says, learning weights from the
 * history file (may be NULL); a weighted plan without any history weighs
 * the files srcdir/UNIT (srcdir may be NULL).  0, or -1 with err set (I/O,
 * ENOMEM).  Release p with corral_plan_release either way.
 */
int corral_plan_make(struct corral_plan *p, const struct corral_strv *units,
    enum corral_strategy strategy, const char *history, const char *srcdir,
    long nslices, struct corral_err *err);
/* The weight of a unit of the plan (0 for one it does not hold). */
long long corral_plan_weight(const struct corral_plan *p, const char *unit);
/*
 * Append the plan's description as one JSON line: strategy, units,
 * slices, weights ("none", "ms" or "bytes"), known, estimated, estimate,
 * total, longest, makespan, lower_bound (max(ceil(total / slices),
 * longest)) and loads.  0, or -1 (ENOMEM).
 */
int corral_plan_json(const struct corral_plan *p, struct corral_buf *b);
void corral_plan_release(struct corral_plan *p);

/* ------------------------------------------------------------------ */
/* briefs.c: one brief per agent, for a subagent fan-out               */

/*
 * What corral_briefs_write needs.  The slices are corral_split_roundrobin's
 * over units; logdir names where agent K writes LOGDIR/agent-K.jsonl;
 * parts are cloned by every agent; parts_cmd (may be NULL) is run with
 * /bin/sh -c for each unit, CORRAL_UNIT in its environment, and prints
 * that unit's parts, one per line; template is the task text, in which
 * {agent}, {units}, {parts}, {log} and {n} are replaced (units and parts
 * joined by single spaces, n the number of units) and every other
 * character is kept as written.
 */
struct corral_briefs_opts {
	long nslices;
	const char *logdir;
	const struct corral_strv *parts;
	const char *parts_cmd;
	const char *template;
};

/*
 * Append the briefs to out as one JSON array, one brief per line, each
 * with exactly agent_id, units, clone_parts (sorted bytewise, each once),
 * log_path and task, in agent order; no unit gives "[]".  Returns 0, or
 * -1 with err set: a part that is empty, absolute or leaves the tree
 * through "..", a parts command that could not run or did not exit 0,
 * ENOMEM.  out may then hold part of the text.
 */
int corral_briefs_write(const struct corral_briefs_opts *o,
    const struct corral_strv *units, struct corral_buf *out,
    struct corral_err *err);

/* ------------------------------------------------------------------ */
/* install.c: where an install's pieces are, and of which version      */

/* One command of the umbrella: corral NAME runs corral-NAME. */
struct corral_command {
	const char *name;
	const char *summary;	/* one line, for corral -h */
};

/* The commands corral -h lists, sorted by name, ending with { NULL }. */
extern const struct corral_command corral_commands[];
/* The entry for name, or NULL. */
const struct corral_command *corral_command_find(const char *name);

/*
 * Every program carries CORRAL_VERSION_TAG CORRAL_VERSION, NUL-ended, in
 * its read-only data (err.c), where corral-doctor and what(1) find it.
 */
#define CORRAL_VERSION_TAG "@(#)corral "
extern const char corral_version_tag[];

/*
 * The directory of the running program, absolute and with symlinks
 * resolved: /proc/self/exe, else argv0 (a path, or a name looked up in
 * PATH).  A malloc'd string the caller frees, or NULL with err set.
 */
char *corral_self_dir(const char *argv0, struct corral_err *err);

/*
 * Find the program name: dir/name when it exists (dir may be NULL), else
 * the first PATH entry holding it.  Returns 0 with the path appended to
 * path, or -1 (errno ENOENT when there is none, ENOMEM).
 */
int corral_program_find(const char *dir, const char *name,
    struct corral_buf *path);

/*
 * Make this process's environment that of a clean shell with the programs
 * of bindir first on PATH: every CORRAL_* variable and make's MAKEFLAGS,
 * MFLAGS, GNUMAKEFLAGS, MAKELEVEL, MAKEOVERRIDES and MAKEFILES are
 * removed, so a tour runs the same wherever it is started (from make, or
 * with CORRAL_AGENTS exported).  0, or -1 on ENOMEM.
 */
int corral_env_isolate(const char *bindir);

/*
 * Find corral.mk for the programs in bindir: ../share/corral/corral.mk
 * (an install), ../corral.mk (a checkout's bin/), ../../../corral.mk (a
 * checkout's build/FLAVOR/bin).  Returns 0 with the first that is a
 * regular file appended to path (resolved), or -1 (errno ENOENT, ENOMEM);
 * the places looked at are appended to tried (may be NULL), separated by
 * ", ".
 */
int corral_mk_find(const char *bindir, struct corral_buf *path,
    struct corral_buf *tried);

/*
 * The version the file at path carries, from its CORRAL_VERSION_TAG.
 * Returns 1 with it appended to version, 0 when the file carries none,
 * -1 with err set (unreadable, ENOMEM).  Two different versions in one
 * file read as none.
 */
int corral_version_read(const char *path, struct corral_buf *version,
    struct corral_err *err);

/* ------------------------------------------------------------------ */
/* spawn.c: running a program and waiting for it                       */

/*
 * A program to run: argv[0] is looked up on PATH (or is a path); dir is
 * its working directory (NULL: ours); env holds NAME=VALUE settings added
 * to our environment, NULL-ended, or is NULL; stdin is /dev/null; stdout
 * and stderr go to the file out (created or truncated), or stdout is read
 * into capture (stderr inherited), or both are inherited.
 */
struct corral_spawn {
	const char *const *argv;
	const char *dir;
	const char *const *env;
	const char *out;
	struct corral_buf *capture;
};

/*
 * Run s and wait for it.  Returns 0 with its wait status in *wstatus, or
 * -1 with err set when it could not be started ("cannot run 'make': No
 * such file or directory") or waited for.
 */
int corral_spawn_run(const struct corral_spawn *s, int *wstatus,
    struct corral_err *err);
/* Append "exit 3" or "signal 9 (SIGKILL)" for wstatus.  0, or -1 ENOMEM. */
int corral_wstatus_describe(struct corral_buf *b, int wstatus);

/*
 * Remove path and everything under it, never following a symlink; a
 * directory without owner rwx gets it first.  A path that does not exist
 * is fine.  0, or -1 with err set.
 */
int corral_remove_tree(const char *path, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* tour.c: a real fan-out through corral.mk, audited (demo, doctor)    */

/*
 * A throwaway project in dir (an empty directory): the unit U is the
 * check checks/U, which passes unless U is in failing; each agent clones
 * check.sh and the checks of its own units (CORRAL_PARTS_CMD), so a
 * check can count what its clone holds.  It is run with
 *   make -C DIR -jAGENTS corral-run CORRAL_AGENTS=AGENTS CORRAL_BIN=BINDIR
 * including mk, and the result files are then read back, row by row.
 * Unit names must be plain words ([A-Za-z0-9._-]).
 */
struct corral_tour {
	const char *dir;
	const char *mk;
	const char *bindir;
	const char *make;		/* the make program */
	const struct corral_strv *units;
	const struct corral_strv *failing;
	int agents;
};

/* What the run left, as counted from the files, not from summary.json. */
struct corral_tour_result {
	int wstatus;		/* how make ended */
	size_t logs;		/* OUT/logs/agent-*.jsonl */
	size_t unfinished;	/* OUT/logs/agent-*.jsonl.part */
	size_t passed;		/* rows of successes.jsonl */
	size_t failed;		/* rows of failures.jsonl */
	size_t once;		/* units of the population in exactly one row */
	size_t twice;		/* units in more than one row */
	size_t stray;		/* rows whose unit is not in the population */
	size_t bad;		/* lines that are not records */
	size_t isolated;	/* rows whose clone held only its agent's checks */
	size_t leftovers;	/* entries left in OUT/work (clones) */
	struct corral_strv failed_units;	/* sorted bytewise */
	char *out;		/* CORRAL_OUT, DIR/.corral */
	char *makeout;		/* the file holding make's output */
};

/*
 * Write the project, run make, read the results into r.  Returns 0 when
 * it could look (whatever make did; see r), or -1 with err set when the
 * project could not be written, make not started, or the results not
 * read.  Release r with corral_tour_release either way.
 */
int corral_tour_run(const struct corral_tour *t,
    struct corral_tour_result *r, struct corral_err *err);
void corral_tour_release(struct corral_tour_result *r);

/*
 * A fresh directory PREFIXXXXXXX under $TMPDIR (else /tmp), made with
 * mkdtemp.  A malloc'd path the caller frees (and removes, with
 * corral_remove_tree), or NULL with err set.
 */
char *corral_tour_tmpdir(const char *prefix, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* doctor.c: the checks of corral-doctor                               */

/*
 * Where the install under test is.  bindir holds the programs; mk is the
 * corral.mk found for them, or NULL (then mk_tried says where it was
 * looked for); scratch is a fresh directory a check may fill; make is the
 * make program.  The caller has run corral_env_isolate(bindir) first.
 */
struct corral_doctor {
	const char *bindir;
	const char *mk;
	const char *mk_tried;
	const char *scratch;
	const char *make;
};

enum corral_check {
	CORRAL_CHECK_FAIL,
	CORRAL_CHECK_OK,
	CORRAL_CHECK_SKIP
};

/*
 * One check: it does real work under d->scratch and appends one line of
 * detail (what it saw, or what is wrong) to detail.  Returns the verdict,
 * or -1 on ENOMEM.
 */
typedef int corral_check_fn(const struct corral_doctor *d,
    struct corral_buf *detail);

struct corral_doctor_check {
	const char *name;
	corral_check_fn *fn;
};

/* The checks, in the order they run, ending with { NULL, NULL }. */
extern const struct corral_doctor_check corral_doctor_checks[];

/* ------------------------------------------------------------------ */
/* record.c: one result record, one JSON object per line               */

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
};

/*
 * Append r to b as one JSON line ending in '\n'.  0, or -1 (ENOMEM; b may
 * hold part of the line and should be reset).
 */
int corral_record_format(struct corral_buf *b, const struct corral_record *r);

/* ------------------------------------------------------------------ */
/* record.c: the seal that ends an agent's log                         */

/* A SHA-256 (digest.c) in hex: 64 lowercase hex digits and a NUL. */
#define CORRAL_SHA256_HEX 65

/*
 * A SHA-256 fed piece by piece: _init (0, or -1 with err set), then _add
 * any number of times, _peek for the digest of what was added so far (the
 * digest can go on growing after it), and _release (always, also after a
 * failed _init; s->ctx NULL is fine).  _add and _peek: 0, or -1 with err
 * set if libcrypto failed.
 */
struct corral_sha256 {
	void *ctx;
};

int corral_sha256_init(struct corral_sha256 *s, struct corral_err *err);
int corral_sha256_add(struct corral_sha256 *s, const void *p, size_t n,
    struct corral_err *err);
int corral_sha256_peek(const struct corral_sha256 *s,
    char hex[CORRAL_SHA256_HEX], struct corral_err *err);
void corral_sha256_release(struct corral_sha256 *s);

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

struct corral_json_record;	/* json.c, below */

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
/* checkout.c: an agent's private clone of just the parts it needs     */

/*
 * A part is a relative path inside src.  It is refused (-1, err names the
 * part) when it is absolute, when ".." takes it out of src, or when a
 * symlink on the way (or the part itself, or a link inside a copied
 * directory) leads outside src.  Checks the part only; 0 when it is fine.
 * A part that does not exist is fine here (checkout warns about it).
 */
int corral_part_check(const char *src, const char *part,
    struct corral_err *err);

/*
 * Build dest as a fresh private copy of the given parts of src: regular
 * files are copied (copy_file_range or FICLONE where the kernel can, plain
 * read/write otherwise; never hard links), directories merged, modes and
 * mtimes kept, symlinks that stay inside src copied as (relative)
 * symlinks.  Every part is checked before anything is written.  The clone
 * is built beside dest under a temporary name and renamed into place, so
 * dest is either the whole clone or absent; an existing dest is replaced
 * only when it is a clone made by corral or an empty directory.  Paths in
 * exclude (relative to src, may be NULL) are never copied, nor is dest
 * itself when it lies inside src.  Each part that does not exist is
 * appended to missing (may be NULL) for the caller to warn about.
 * Returns 0, or -1 with err set and nothing left at dest or beside it.
 */
int corral_checkout(const char *src, const struct corral_strv *parts,
    const struct corral_strv *exclude, const char *dest,
    struct corral_strv *missing, struct corral_err *err);

/*
 * Remove a clone made by corral_checkout.  A path that does not exist is
 * fine (0); a path that is not such a clone is refused (-1, nothing
 * removed).  Symlinks inside are removed, never followed.
 */
int corral_clone_remove(const char *dest, struct corral_err *err);

/*
 * Check out dest again after something else removed or replaced it: remove
 * whatever is at dest now (a file, a symlink, never followed, or a
 * directory, clone or not, but not one on another file system), then
 * corral_checkout.  0, or -1 with err set.
 */
int corral_clone_renew(const char *src, const struct corral_strv *parts,
    const struct corral_strv *exclude, const char *dest,
    struct corral_err *err);

/*
 * The manifest of what corral_checkout would copy, without copying: one
 * line per entry ("TYPE MODE SIZE MTIME PATH", and " -> TARGET" for a
 * link; "- PART" for each missing part, which also goes to missing),
 * sorted by path, appended to out.  Any change to a part's files or metadata
 * changes it.  Parts are checked exactly as for a checkout.  0 or -1.
 */
int corral_checkout_manifest(const char *src, const struct corral_strv *parts,
    const struct corral_strv *exclude, struct corral_buf *out,
    struct corral_strv *missing, struct corral_err *err);

/* The file corral_checkout leaves at the top of every clone. */
#define CORRAL_CLONE_MARK ".corral-clone"

/* ------------------------------------------------------------------ */
/* time.c                                                              */

/*
 * Wall-clock time as ISO 8601 UTC with milliseconds,
 * "2026-11-29T10:32:13.042Z", into out.  Equal-length strings sort by time,
 * which is how the merge tells the latest attempt of a unit.
 */
#define CORRAL_TIME_ISO_SIZE 25
void corral_time_iso(char out[CORRAL_TIME_ISO_SIZE]);
/* Monotonic milliseconds, for durations. */
long long corral_time_ms(void);
/* Wall-clock milliseconds since the Epoch, for what other processes read. */
long long corral_time_epoch_ms(void);
/* ms for people: "3.2s", "1m05s", "2h03m"; "?" when ms < 0. */
void corral_duration_format(long long ms, char out[32]);

/* ------------------------------------------------------------------ */
/* lock.c: one run at a time on a CORRAL_OUT                           */

#define CORRAL_MARK_FILE ".corral-out"	/* corral made this directory */
#define CORRAL_LOCK_FILE ".lock"	/* flocked by the run holding it */

/* A held lock: the descriptor, and whether a parent passed it down. */
struct corral_lock {
	int fd;		/* -1 when not held */
	int inherited;
};

enum corral_lock_flags {
	CORRAL_LOCK_CREATE = 1 << 0,	/* make DIR and its mark if need be */
	CORRAL_LOCK_SHARED = 1 << 1	/* share it (agents started by hand) */
};

void corral_lock_init(struct corral_lock *l);
/* Close a lock taken here (an inherited one stays open); l is reset. */
void corral_lock_release(struct corral_lock *l);
/*
 * Take DIR/.lock, waiting up to wait_ms for its holder (0: not at all,
 * negative: for ever).  With CORRAL_LOCK_CREATE, DIR and its mark are
 * made; a DIR that holds files but no mark is refused.  0 held; 1 another
 * process holds it and the wait ran out (*holder its pid, 0 if unknown);
 * -1 with err set.
 */
int corral_lock_take(struct corral_lock *l, const char *dir, int flags,
    long long wait_ms, pid_t *holder, struct corral_err *err);
/*
 * 1 when the environment passes down a descriptor of DIR's lock that
 * holds it (l then names it), else 0.
 */
int corral_lock_inherit(struct corral_lock *l, const char *dir);
/* Let programs exec'd from here hold l too.  0, or -1 with err set. */
int corral_lock_pass(struct corral_lock *l, struct corral_err *err);
/*
 * Hold l in this process only: no program exec'd from here gets it, nor
 * a lock the environment passes down when l is not held.
 */
void corral_lock_keep(struct corral_lock *l);
/*
 * The nearest directory at or above path (which need not exist) that
 * holds a mark, as a malloc'd absolute path the caller frees; NULL when
 * there is none.
 */
char *corral_lock_find(const char *path);
/*
 * For tools: hold DIR's lock (inherited, or taken with flags), waiting as
 * wait says (seconds; NULL: $CORRAL_WAIT; empty: for ever; 0: refuse at
 * once), and saying once that it waits for the run holding name.  Exits 2
 * on refusal, timeout or error.
 */
void xlock(struct corral_lock *l, const char *dir, int flags,
    const char *wait, const char *name);
/*
 * For tools that write at or under path: xlock the CORRAL_OUT that holds
 * path (corral_lock_find), if there is one; else l stays unheld.
 */
void xlock_under(struct corral_lock *l, const char *path, int flags);
/* Whether process pid lives; a zombie, reaped or not, is gone. */
int corral_pid_alive(pid_t pid);

/* ------------------------------------------------------------------ */
/* live.c: what a running agent shows (status file, ticks, progress)   */

/* A run's progress, tallied from STATEDIR/ticks (or one agent's own). */
struct corral_tally {
	size_t total;		/* units of the agents that have started */
	size_t done, pass, fail, flaky, timeout;
	long long weight;	/* their expected work (ms, or 1 a unit) */
	long long wdone;	/* the expected work of the finished units */
	long long start_ms;	/* when the first agent started (Epoch ms) */
};

/*
 * Prints one progress line of len bytes (less than PIPE_BUF), which the
 * caller should write whole, with one write(2), so that lines of agents
 * sharing a terminal or a pipe never mix.
 */
typedef void corral_progress_fn(void *arg, const char *line, size_t len);

/* One agent's live state; only run.c writes it. */
struct corral_live {
	int statusfd;		/* STATEDIR/agent-ID.status, or -1 */
	int tickfd;		/* STATEDIR/ticks, or -1 */
	off_t tickoff;		/* how far the ticks have been read */
	corral_progress_fn *print;	/* NULL: no progress lines */
	void *print_arg;
	int tty;		/* redraw one line ("\r\033[K...") */
	long long drawn_ms;
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
/* Unit i (from 1), attempt attempt, expected to take expect_ms (-1: ?). */
void corral_live_start(struct corral_live *l, const char *unit, size_t i,
    int attempt, long long expect_ms);
/*
 * An attempt ended with status after ms; final when it is the unit's last.
 * A final one is ticked with weight; then the progress line goes to
 * l->print: one line per attempt, or on a terminal the redrawn tally (at
 * most ten times a second, and once more when the run is done).
 */
void corral_live_end(struct corral_live *l, const char *unit,
    const char *status, long long ms, int attempt, int final,
    long long weight);
/* Close; finished: the slice ran to its end (the status file says so). */
void corral_live_close(struct corral_live *l, int finished);
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
 * One agent's run of one slice.  The caller fills the first blocks, calls
 * corral_run_init first and corral_run_release last, whatever happened.
 */
struct corral_run {
	const char *agent;	/* checked with corral_agent_check */
	const char *cmd;	/* each unit runs /bin/sh -c CMD */
	const char *logdir;	/* gets agent-ID.jsonl and agent-ID/N.out */
	const char *run;	/* the run id written in every record */
	const char *src;	/* the tree the clone is checked out from */
	const struct corral_strv *parts;
	const struct corral_strv *exclude;	/* may be NULL */
	const char *workroot;	/* the clone is made under it */
	const char *inputs;	/* recorded in each record; may be NULL */
	const struct corral_strv *units;	/* the slice (may be NULL): a
					   refused part that is one of them
					   fails that unit alone */
	int keep;		/* leave the clone in place */

	/* Time, attempts, resources: 0 means none (no limit, no retry). */
	long long timeout_ms;	/* each attempt of a unit */
	long long grace_ms;	/* after a timeout, from SIGTERM to SIGKILL */
	long long slice_ms;	/* the whole slice */
	long long deadline_ms;	/* Epoch ms by which the whole run must end */
	int retries;		/* attempts after a failed one, at most */
	const unsigned char *no_retry;	/* [256]: exit codes never retried */
	long long output_max;	/* bytes of a unit's output kept (head+tail) */
	struct corral_limits limits;
	const long long *expect;	/* expected ms per unit, or NULL */
	const char *statedir;	/* live state for corral-status, or NULL */
	pid_t guard;		/* once it ends, stop as on SIGTERM; 0: none */
	corral_progress_fn *progress;	/* gets progress lines, or NULL */
	void *progress_arg;
	int progress_tty;	/* they go to a terminal: redraw one line */

	char *clone;		/* the clone's absolute path, once made */
	size_t failed;		/* units whose final record says ok false */
	int guard_gone;		/* the run stopped because guard ended */
	struct corral_strv refused;	/* units whose own part was refused */
	struct corral_strv refusal;	/* why, for each of them */

	/* Private to run.c. */
	char *outdir;		/* LOGDIR/agent-ID, as formed from LOGDIR */
	char *noteroot;		/* the same directory, absolute */
	char *logsdir;		/* LOGDIR less its trailing slashes */
	char *log;		/* LOGDIR/agent-ID.jsonl */
	char *part;		/* LOGDIR/agent-ID.jsonl.part, the checkpoint */
	struct corral_runlog rl;	/* the log itself */
	int watchfd;		/* to the watchdog */
	int guardfd;		/* a pidfd of guard, or -1 */
	pid_t watchdog;
	struct corral_strv env;	/* the units' environment */
	struct corral_strv cloned;	/* the parts checked out */
	dev_t clone_dev;	/* the clone as checked out, to tell when a */
	ino_t clone_ino;	/* unit removed or replaced it */
	int reaper;		/* orphans of units come to this process */
	pid_t *inherited;	/* children it had before any unit ran */
	size_t ninherited;
	size_t envunit;		/* env.v[envunit..+2]: UNIT, NOTE, ATTEMPT */
	struct corral_buf line;	/* the record being written */
	long long slice_end;	/* monotonic ms when time is up, or 0 */
	int slice_why;		/* 'T': the slice's limit; 'd': the run's */
	int nlimits;		/* setrlimit(2) calls each unit gets */
	int limit_res[3];
	long long limit_val[3][2];	/* soft, hard */
	char *iobuf;		/* for the units' output */
	struct corral_live live;
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
/* json.c: the one module that uses cJSON                              */

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
	long long duration_ms;	/* -1 when absent or not a number */
	long long exit_code;	/* -1 when absent or not a number */
	long long attempt;	/* -1 when absent or not a number */
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
 * Any one-line JSON object (line[len] must be NUL), for the small files
 * that are not records (a live agent's status).  0, or -1 with err set as
 * for a record; release o after a 0.
 */
struct corral_json_obj {
	void *doc;
};

int corral_json_obj_parse(const char *line, size_t len,
    struct corral_json_obj *o, struct corral_err *err);
/* The string member key, or NULL when absent or not a string. */
const char *corral_json_obj_str(const struct corral_json_obj *o,
    const char *key);
/* The member key as a non-negative integer, or -1. */
long long corral_json_obj_int(const struct corral_json_obj *o,
    const char *key);
void corral_json_obj_release(struct corral_json_obj *o);

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
/* score.c: a run's merged results, tallied by verdict                 */

/* A verdict is at most this many characters (code points). */
#define CORRAL_VERDICT_MAX 24
#define CORRAL_VERDICT_SIZE (CORRAL_VERDICT_MAX * 4 + 1)

/*
 * The verdict of a note, as the original defines it: the text before the
 * first colon, trimmed, when it is not empty, holds no white space and is
 * at most CORRAL_VERDICT_MAX characters; upper-cased (ASCII).  Returns 1
 * and fills out, or 0 (out empty) when the note has none; note may be NULL.
 */
int corral_verdict(const char *note, char out[CORRAL_VERDICT_SIZE]);

/* The tally of DIR/successes.jsonl and DIR/failures.jsonl. */
struct corral_score {
	size_t units, successes, failures;
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
/* digest.c: SHA-256, from OpenSSL's libcrypto (EVP)                   */

/* hex = SHA-256 of p[0..n).  0, or -1 with err set if libcrypto failed. */
int corral_sha256_buf(const void *p, size_t n, char hex[CORRAL_SHA256_HEX],
    struct corral_err *err);
/*
 * hex = SHA-256 of everything read from fd to its end; name is used in
 * messages.  0, or -1 with err set.  The caller closes fd.
 */
int corral_sha256_fd(int fd, const char *name, char hex[CORRAL_SHA256_HEX],
    struct corral_err *err);
/* 1 when s is exactly 64 lowercase hex digits, else 0. */
int corral_sha256_valid(const char *s);

/* ------------------------------------------------------------------ */
/* snap.c: what a tree holds, and what changed between two looks       */

/* One regular file or symlink of a tree. */
struct corral_snap_entry {
	char *path;		/* relative, '/'-separated */
	char *link;		/* a symlink's target; NULL for a file */
	char sha256[CORRAL_SHA256_HEX];	/* a file's digest; "" for a link */
};

struct corral_snap {
	struct corral_snap_entry *v;	/* sorted by path, bytewise */
	size_t n;
	size_t cap;
};

#define CORRAL_SNAP_INIT { NULL, 0, 0 }

/*
 * Record every regular file (with its SHA-256) and every symlink (with
 * its target) under dir, without following symlinks.  A directory named
 * .git at any depth, and the top-level names in skip (may be NULL), are
 * not entered; other file types are ignored.  0, or -1 with err set (s
 * may then hold part of the tree and must still be released).
 */
int corral_snap_take(struct corral_snap *s, const char *dir,
    const struct corral_strv *skip, struct corral_err *err);
void corral_snap_release(struct corral_snap *s);
/* The entry for path, or NULL. */
const struct corral_snap_entry *corral_snap_find(const struct corral_snap *s,
    const char *path);

/* What a fix does to one path. */
enum corral_action {
	CORRAL_ACTION_WRITE,	/* the file gets the bytes named by sha256 */
	CORRAL_ACTION_DELETE	/* the file is removed */
};

struct corral_change {
	char *path;		/* canonical relative path */
	int action;		/* enum corral_action */
	char sha256[CORRAL_SHA256_HEX];	/* write: the new bytes; else "" */
	char before[CORRAL_SHA256_HEX];	/* what it replaces; "" = absent */
};

struct corral_changes {
	struct corral_change *v;
	size_t n;
	size_t cap;
};

#define CORRAL_CHANGES_INIT { NULL, 0, 0 }

/* Append a change (copying path).  sha and before may be NULL for "". */
int corral_changes_add(struct corral_changes *c, const char *path,
    int action, const char *sha, const char *before);
void corral_changes_release(struct corral_changes *c);

/*
 * The changes that turn tree a into tree b, sorted by path: a write for
 * each regular file that is new or whose bytes differ (before = its
 * digest in a, or ""), a delete for each that is gone.  Only regular
 * files are carried: a symlink added, removed or retargeted, or a path
 * that is a file on one side and a link on the other, is refused (-1,
 * err names the path).  -1 with errno ENOMEM otherwise.
 */
int corral_snap_diff(const struct corral_snap *a, const struct corral_snap *b,
    struct corral_changes *out, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* cmd.c: running a finder or a patcher                                */

/*
 * A finder or patcher runs as /bin/sh -c 'CMD "$@"' CMD DIR, like a git
 * alias: DIR is its last argument and its working directory.  It runs in
 * a process group of its own, which is killed when it ends or times out,
 * so nothing it started outlives it.
 */
struct corral_cmd {
	const char *cmd;
	const char *dir;
	const char *in;		/* standard input from this file, or NULL */
	const char *out;	/* standard output to this file (truncated) */
	const char *errout;	/* standard error to this file (truncated) */
	const char *const *env;	/* NAME=VALUE added, NULL-ended; may be NULL */
	long timeout_ms;	/* 0: no limit */
};

/* How a command ended. */
struct corral_cmd_status {
	int started;		/* 0: it could not be started */
	int timed_out;
	int exited;		/* 1: exit_code is valid */
	int exit_code;
	int signal;		/* the signal that killed it, or 0 */
};

/*
 * Run c and wait for it.  Returns 0 with st filled (whatever the command
 * did), or -1 with err set when it could not be started or waited for.
 */
int corral_cmd_run(const struct corral_cmd *c, struct corral_cmd_status *st,
    struct corral_err *err);
/*
 * Append how it ended to b ("exit 3", "signal 9", "timed out after 30
 * s") and, when errfile (may be NULL) has a non-blank line, ": LAST"
 * for the last one (cut to 200 bytes).  0, or -1 on ENOMEM.
 */
int corral_cmd_describe(struct corral_buf *b,
    const struct corral_cmd_status *st, long timeout_ms, const char *errfile);
/*
 * sh-quote s into b ('...' with '\'' for quotes), so a path can be put
 * in a command.  0, or -1 on ENOMEM.
 */
int corral_cmd_quote(struct corral_buf *b, const char *s);

/* ------------------------------------------------------------------ */
/* apply.c: changing files under a root, never outside it              */

/*
 * 0 when path is a canonical relative path that may be written under a
 * root: not empty, not absolute, no empty, "." or ".." component, no
 * component named .git or CORRAL_JOURNAL_DIR, no newline.  Else -1 with
 * err saying why ("path '../x' leaves the root").
 */
int corral_path_check(const char *path, struct corral_err *err);

/*
 * What root/path holds now: 1 a regular file (its digest in sha), 0
 * nothing.  -1 with err set when a directory on the way is a symlink or
 * not a directory ("'a/b' goes through symlink 'a'"), when path itself is
 * a symlink or not a regular file, or on I/O errors.
 */
int corral_path_state(const char *root, const char *path,
    char sha[CORRAL_SHA256_HEX], struct corral_err *err);

/*
 * Make each change under root, in order: a write puts the bytes of
 * blobdir/SHA256 at path atomically (RELIABILITY 4.2; parents created; an
 * existing file keeps its mode, a new one gets 0666 & ~umask), a delete
 * removes the file.  Each path is checked with corral_path_state just
 * before it is changed.  0, or -1 with err set; changes made before the
 * failure stay (a journal undoes them).
 */
int corral_apply_changes(const char *root, const struct corral_changes *c,
    const char *blobdir, struct corral_err *err);

/*
 * Copy the file at from to blobdir/SHA256 (created) unless it is there,
 * checking that its bytes have that digest.  0, or -1 with err set.
 */
int corral_blob_put(const char *blobdir, const char *from,
    const char *sha256, struct corral_err *err);
/*
 * 0 when blobdir/SHA256 is a regular file whose bytes have that digest;
 * -1 with err set otherwise ("blob does not match its own hash", "the
 * bundle is missing its content blob").
 */
int corral_blob_check(const char *blobdir, const char *sha256,
    struct corral_err *err);

/* ------------------------------------------------------------------ */
/* journal.c: an apply that a crash cannot leave half done             */

/*
 * While corral-fix or corral-bundle writes into a root, ROOT/.corral-fix/
 * holds the journal: "lock" (flocked by the writer), "saved/SHA256" (the
 * original bytes of every file about to change) and "journal.json" (for
 * every path: its digest, mode and mtime, or its absence; the directories
 * the apply creates; the mtimes of the directories it touches).  Rolling
 * back restores all of it, so the root is as it was, mtimes included.
 * Clones and diffs never include the directory.
 */
#define CORRAL_JOURNAL_DIR ".corral-fix"

struct corral_journal;

/*
 * Take root's journal: create ROOT/.corral-fix and lock it.  Refused
 * (-1, err says what to do) when it exists: another apply holds it, or an
 * interrupted one left it for corral_journal_recover.  Free *jp with
 * commit or rollback.
 */
int corral_journal_begin(struct corral_journal **jp, const char *root,
    struct corral_err *err);
/*
 * Save how root/path is now, before it changes.  Call for every path,
 * then seal.  0, or -1 with err set (the path goes through a symlink, is
 * not a regular file, I/O).
 */
int corral_journal_save(struct corral_journal *j, const char *path,
    struct corral_err *err);
/* Write the journal durably; only then may the root change.  0 or -1. */
int corral_journal_seal(struct corral_journal *j, struct corral_err *err);
/*
 * Undo every change to the saved paths, remove the directories the
 * apply created, put back directory mtimes, remove the journal and free
 * j.  0, or -1 with err set (the journal then stays for a recovery).
 */
int corral_journal_rollback(struct corral_journal *j, struct corral_err *err);
/* Keep the changes: remove the journal and free j.  0 or -1. */
int corral_journal_commit(struct corral_journal *j, struct corral_err *err);
/*
 * 0 when root holds no journal; -1 with err naming it (and what to run)
 * when it does, so nothing reads or writes a root that is half applied.
 */
int corral_journal_check(const char *root, struct corral_err *err);
/*
 * After a crash: roll back what ROOT/.corral-fix records and remove it.
 * Returns 1 when there was a journal, 0 when there was none, -1 with err
 * set (refused while another process holds the lock; the journal stays).
 */
int corral_journal_recover(const char *root, struct corral_err *err);

/* The journal's records (json.c reads them; journal.c writes them). */
struct corral_saved {
	char *path;		/* relative to the root; "" for the root */
	int exists;		/* 0: the path did not exist */
	char sha256[CORRAL_SHA256_HEX];	/* a file's bytes, in saved/ */
	unsigned mode;		/* permission bits */
	long long sec;		/* mtime */
	long nsec;
};

struct corral_journal_data {
	struct corral_saved *files;	/* every path the apply touches */
	size_t nfiles, capfiles;
	struct corral_saved *dirs;	/* existing directories, their mtimes */
	size_t ndirs, capdirs;
	struct corral_strv created;	/* directories the apply creates */
};

void corral_journal_data_release(struct corral_journal_data *d);

/* ------------------------------------------------------------------ */
/* json.c: findings, fix results, bundle manifests, journals           */

/*
 * A finding, as a finder prints it: one JSON object per line with
 * "identity" (a non-empty string, required), "location" (string,
 * default ""), "corroboration" (integer >= 0, default 1),
 * "max_confidence" (number in 0..1, default 0) and "trust" (string,
 * default "single-method").  Other keys are kept in json, the line as it
 * was printed, which is what a patcher is given.
 */
struct corral_finding {
	char *identity;
	char *location;
	char *trust;
	long corroboration;
	double confidence;
	char *json;
};

struct corral_findings {
	struct corral_finding *v;
	size_t n;
	size_t cap;
};

#define CORRAL_FINDINGS_INIT { NULL, 0, 0 }

/*
 * Parse text[0..len) (NUL at text[len]) as JSON lines of findings, blank
 * lines skipped, appending to out.  name is used in messages: "'NAME'
 * line 3: invalid JSON at byte 7", "'NAME' line 2: \"identity\" is
 * missing".  0, or -1 with err set (out keeps what came before).
 */
int corral_json_findings(const char *text, size_t len, const char *name,
    struct corral_findings *out, struct corral_err *err);
void corral_findings_release(struct corral_findings *f);

/* One fix of a bundle manifest (also an attempt's result). */
struct corral_fix_entry {
	long n;			/* its number in the bundle, from 1 */
	char *identity;
	char *repairs;		/* the finding's location */
	char *trust;
	double confidence;
	char *area;
	struct corral_changes files;
};

struct corral_manifest {
	long version;		/* "bundle_version" */
	char *note;
	struct corral_fix_entry *fixes;
	size_t nfixes;
};

/*
 * Parse a manifest.json.  Shapes are checked (types of every key; an
 * action is "write" or "delete"; a write's "sha256" and every non-null
 * "expected_before" are strings); whether paths and digests are safe is
 * for the reader to check, fix by fix.  0, or -1 with err set ("invalid
 * JSON at byte 40", "fix 2: \"files\" is not an array").  The version is
 * not judged here.  Release with corral_manifest_release.
 */
int corral_json_manifest(const char *text, size_t len,
    struct corral_manifest *m, struct corral_err *err);
void corral_manifest_release(struct corral_manifest *m);
void corral_fix_entry_release(struct corral_fix_entry *e);

/*
 * Append e's "files" array to b as JSON ("path", "action", "sha256",
 * "expected_before"; keys sorted), one-line or indented by indent spaces
 * per level (indent 0: one line).  0, or -1 on ENOMEM.
 */
int corral_json_files(struct corral_buf *b, const struct corral_changes *c,
    int indent, int depth);
/* Append d as the shortest JSON number that reads back as d. */
int corral_json_number(struct corral_buf *b, double d);

/*
 * An attempt's result file, {"status":S,"detail":D,"could_not_look":B,
 * "files":[...]}.  status and detail are malloc'd for the caller.
 */
int corral_json_attempt(const char *text, size_t len, char **status,
    char **detail, int *could_not_look, struct corral_changes *files,
    struct corral_err *err);

/* A journal.json, into d (empty first).  0, or -1 with err set. */
int corral_json_journal(const char *text, size_t len,
    struct corral_journal_data *d, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* fix.c: corral-fix, repairs that must prove themselves               */

/* What corral_fix_run does; corral_fix_opts_init sets the defaults. */
struct corral_fix_opts {
	const char *root;
	const char *finder;	/* command; NULL: corral-marker-find */
	const char *patcher;	/* command; NULL: corral-marker-patch */
	const char *findings;	/* JSONL file ("-": stdin); NULL: the finder's */
	const char *workroot;	/* clones go under it; NULL: $TMPDIR, /tmp */
	const char *bundle;	/* write the verified fixes there; may be NULL */
	const char *note;	/* the bundle's note */
	int dry_run;		/* default 1: nothing is written to root */
	int any_trust;		/* default 0: only "corroborated" is attempted */
	double min_confidence;	/* default 0.6 */
	long jobs;		/* attempts at once; default 1 */
	long timeout;		/* seconds per finder or patcher run; 0: none */
};

void corral_fix_opts_init(struct corral_fix_opts *o);

/* What became of one attempted finding. */
struct corral_fix_result {
	const struct corral_finding *finding;
	char *status;		/* verified rolled-back no-patch patch-error stale */
	char *detail;
	struct corral_changes files;	/* a verified fix's changes */
	int applied;
	char *conflict;		/* the path it was held back on, or NULL */
	char *conflict_with;	/* the identity that holds that path */
};

/* A finding that was not attempted, and why. */
struct corral_fix_skip {
	const struct corral_finding *finding;
	char *reason;
};

struct corral_fix_report {
	const char *root;
	int dry_run;
	struct corral_findings findings;	/* considered, in input order */
	struct corral_fix_result *results;	/* attempted, in ranked order */
	size_t nresults;
	struct corral_fix_skip *skipped;
	size_t nskipped;
	struct corral_strv found;	/* what the finder saw in root first */
	struct corral_strv remaining;	/* what it sees in root at the end */
	int combined;		/* -1 not checked, 0 failed, 1 held */
	char *combined_detail;
	const char *bundle;	/* the bundle written, or NULL */
	int bundle_withheld;	/* asked for, but the combined check failed */
	size_t verified, rolled_back, applied, conflicts;
	char *message;
};

/*
 * Run corral-fix on o->root (see README "corral-fix"): find, rank,
 * filter, try each finding in a clone of its own (o->jobs at once),
 * verify, merge the verified fixes in ranked order, check them together,
 * and, unless dry run, apply them under a journal and re-measure.
 * Returns 0 with r filled (release it either way), or -1 with err set:
 * the finder could not look (err says so: "could not look: ..."), a
 * worker failed, root changed meanwhile, or an I/O error.  Nothing is
 * written to root on -1.
 */
int corral_fix_run(const struct corral_fix_opts *o,
    struct corral_fix_report *r, struct corral_err *err);
void corral_fix_report_release(struct corral_fix_report *r);
/*
 * fixreport.c: the report as text lines, or as one JSON document (see
 * README "corral-fix"), appended to b.  0, or -1 on ENOMEM.
 */
int corral_fix_report_text(const struct corral_fix_report *r,
    struct corral_buf *b);
int corral_fix_report_json(const struct corral_fix_report *r,
    struct corral_buf *b);
/*
 * The command that runs the program name: its path next to this
 * program's own binary (sh-quoted) when it is there, else name itself,
 * for PATH.  Appended to b.  0, or -1 on ENOMEM.
 */
int corral_fix_default_cmd(const char *name, struct corral_buf *b);

/* ------------------------------------------------------------------ */
/* fixdemo.c: corral-fix -d, the repair half's tour, run for real      */

/* Called with each line the demo prints (no newline). */
typedef void corral_fix_demo_fn(void *arg, const char *line);

/*
 * Run the tour in a temporary directory (removed afterwards), handing
 * each line to out.  Returns the number of lines that state a failure
 * (0 when every claim held), or -1 with err set when it could not run.
 */
int corral_fix_demo(corral_fix_demo_fn *out, void *arg,
    struct corral_err *err);

/* ------------------------------------------------------------------ */
/* bundle.c: verified repairs that travel                              */

/* The version of the manifests this code writes and reads. */
#define CORRAL_BUNDLE_VERSION 1

/*
 * The area of a set of paths: the first directory of each ("(root)" for
 * a file at the top), distinct, sorted bytewise and joined with '+';
 * "(nothing)" for no paths.  Appended to b.  0, or -1 on ENOMEM.
 */
int corral_bundle_area(const struct corral_changes *c, struct corral_buf *b);

/*
 * Write a bundle at dir, which must not exist: manifest.json (keys
 * sorted, indented by 2) and files/SHA256 for every distinct content,
 * copied from blobdir and checked against its name.  Fixes are numbered
 * from 1 in the order given; their area is computed from their files.
 * The bundle is built beside dir and renamed into place, so dir is
 * whole or absent.  0, or -1 with err set.
 */
int corral_bundle_write(const char *dir, const char *note,
    const struct corral_fix_entry *fixes, size_t n, const char *blobdir,
    struct corral_err *err);

/*
 * Read dir/manifest.json into m and check it: the version must be
 * CORRAL_BUNDLE_VERSION, every path must pass corral_path_check, no fix
 * may name a path twice, and each fix's area must be that of its files.
 * 0, or -1 with err set and m empty.
 */
int corral_bundle_read(const char *dir, struct corral_manifest *m,
    struct corral_err *err);

/*
 * Whether every area of f's files is in requested (NULL: all are): 1
 * yes, 0 no (why appended to b), -1 ENOMEM.
 */
int corral_bundle_requested(const struct corral_fix_entry *f,
    const struct corral_strv *requested, struct corral_buf *why);

/*
 * Write a new bundle at to from the fixes of the bundle at from whose
 * areas are all in areas (NULL: every fix), with note (NULL: from's
 * note).  Every blob is checked against its name on the way.  The
 * number of fixes written goes to *nfixes (may be NULL).  0, or -1 with
 * err set and nothing at to.
 */
int corral_bundle_copy(const char *from, const char *to,
    const struct corral_strv *areas, const char *note, size_t *nfixes,
    struct corral_err *err);

/* The manifest described as text lines (see README), appended to b. */
int corral_bundle_describe(const struct corral_manifest *m,
    struct corral_buf *b);

/* What corral_bundle_apply does. */
struct corral_bundle_opts {
	const char *bundle;
	const char *root;
	const struct corral_strv *areas;	/* NULL: every area */
	int dry_run;		/* default 1 */
	int per_fix;		/* 0: the bundle applies all or nothing */
};

void corral_bundle_opts_init(struct corral_bundle_opts *o);

enum corral_bundle_state {
	CORRAL_BUNDLE_APPLIED,	/* applied (in a dry run: would apply) */
	CORRAL_BUNDLE_ALREADY,	/* every file already as the fix makes it */
	CORRAL_BUNDLE_REFUSED,	/* cannot apply here; reason says why */
	CORRAL_BUNDLE_SKIPPED,	/* an area of it was not requested */
	CORRAL_BUNDLE_HELD	/* fine, but another fix was refused */
};

struct corral_bundle_outcome {
	const struct corral_fix_entry *fix;
	int state;
	char *reason;		/* NULL for applied and already */
};

struct corral_bundle_report {
	int dry_run;
	struct corral_manifest manifest;
	struct corral_bundle_outcome *outcomes;	/* one per fix, in order */
	size_t n;
	size_t applied, already, refused, skipped, held;
	char *message;
};

/*
 * Apply (or, in a dry run, check) a bundle to o->root.  Every file of
 * every selected fix is checked before anything is written: its
 * expected_before must be what root holds (a file that did not exist
 * must still not exist), the way to it must hold no symlink, and its
 * blob must match its name.  A fix whose files all already hold what it
 * writes is "already applied".  Unless o->per_fix, one refusal holds back
 * every fix.  Writes go through a journal (corral_journal_begin).
 * Returns 0 with r filled (release it either way), or -1 with err set
 * (unreadable or unknown bundle, I/O); nothing is written on -1.
 */
int corral_bundle_apply(const struct corral_bundle_opts *o,
    struct corral_bundle_report *r, struct corral_err *err);
void corral_bundle_report_release(struct corral_bundle_report *r);
int corral_bundle_report_text(const struct corral_bundle_report *r,
    struct corral_buf *b);
int corral_bundle_report_json(const struct corral_bundle_report *r,
    struct corral_buf *b);

/* ------------------------------------------------------------------ */
/* report.c: merged results as JUnit XML and TAP                       */

/*
 * Append s[0..n) as XML character data that is also safe inside a quoted
 * attribute: & < > " ' escaped, tab and newlines as character references,
 * invalid UTF-8 and characters XML 1.0 forbids as U+FFFD.  0, or -1
 * (ENOMEM).
 */
int corral_buf_addxml(struct corral_buf *b, const char *s, size_t n);

/* One unit of the merged results. */
struct corral_report_row {
	char *unit;
	char *status;		/* as recorded; pass or fail when absent */
	char *note;		/* "" when absent */
	char *output;		/* NULL when absent */
	long long duration_ms;	/* -1 when absent */
	long long attempt;
	int ok;			/* it is in successes.jsonl */
};

struct corral_report {
	const char *dir;		/* the results' directory */
	struct corral_report_row *rows;	/* sorted by unit, bytewise */
	size_t n;
	struct corral_strv unreadable;	/* "FILE line N: why" */
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
 * Append the JUnit XML (a <testsuites> root; one <testcase> per unit with
 * name, classname and file; <failure> for each failed unit and
 * <flakyFailure> for each flaky one, with the note as message and the
 * tail of the unit's output as text) or the TAP version 13 (one test per
 * unit, a YAML block for each one that failed or was flaky) to b.
 * 0, or -1 (ENOMEM).
 */
int corral_report_junit(const struct corral_report *rep, struct corral_buf *b);
int corral_report_tap(const struct corral_report *rep, struct corral_buf *b);

#endif /* CORRAL_H */
