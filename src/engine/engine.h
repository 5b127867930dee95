/* See LICENSE file for copyright and license details. */
/*
 * engine.h: the steps of corral.mk's slice graph, and the one table of
 * its settings.
 *
 * corral.mk checks each CORRAL_* setting and hands them all over once,
 * in the environment of the target the user asked for (one variable a
 * setting, __corral_set_NAME); corral-engine run reads them through the
 * table below, fills in the defaults, makes paths absolute, and writes
 * them to CORRAL_OUT/settings.json before the engine's make starts.
 * Every later step reads that file.  What the settings change is said
 * by the table too: the programs a row is an option of (so no option
 * list is written by hand), and the file of CORRAL_OUT whose content
 * it joins (so that make's up-to-date logic re-does what depends on it).
 */
#ifndef CORRAL_ENGINE_H
#define CORRAL_ENGINE_H

#include <time.h>

#include "base/base.h"

/* Every setting, in the table's order. */
enum corral_setting_id {
	CS_SRC, CS_OUT, CS_UNITS, CS_UNITS_FILE, CS_DISCOVER, CS_CMD,
	CS_SHELL, CS_PARTS, CS_PARTS_CMD, CS_PARTS_CHECK, CS_PARTS_EXCLUDE, CS_AGENTS,
	CS_SPLIT, CS_TIMEOUT, CS_SLICE_TIMEOUT, CS_RUN_TIMEOUT, CS_GRACE,
	CS_RETRIES, CS_NO_RETRY, CS_SKIP_CODES, CS_ERROR_CODES, CS_VERDICT,
	CS_TMP, CS_NOTE_PATTERN, CS_UNIT_JUNIT, CS_FAIL_ON_FLAKY, CS_HALT, CS_OUTPUT_MAX,
	CS_LIMIT_CPU, CS_LIMIT_MEM, CS_LIMIT_FSIZE, CS_SANDBOX,
	CS_SANDBOX_ARGS, CS_QUIET, CS_SLOWEST, CS_TAIL, CS_JUNIT, CS_JUNIT_SUITE,
	CS_TRACE, CS_HTML, CS_WAIT, CS_ONLY, CS_SHARD_KNOB, CS_SHARD_TOTAL, CS_HISTORY,
	CS_HOST, CS_SHARDS, CS_LAUNCH, CS_WORK, CS_BIN, CS_V,
	CS_CACHE, CS_CACHE_ENV, CS_CACHE_KEY, CS_CACHE_VERIFY,
	/* what corral.mk or the run itself decides, not a CORRAL_* knob */
	CS_SHARD,	/* "K N" (CORRAL_SHARD as corral-shard -e read it) */
	CS_SHARD_TOP,	/* .corral, locked and left out, for a shard there */
	CS_OUTREL,	/* CORRAL_OUT relative to CORRAL_SRC, or "" */
	CS_RUN,		/* the run id */
	CS_DEADLINE,	/* the run's end, Epoch seconds, or "" */
	CS_GUARD,	/* the pid of the make the run hangs on */
	CS_GUARD_NODE,	/* the node it runs on */
	CS_KEEP_ENV,	/* the user's CORRAL_* names units get */
	CS_MAKE,	/* make, to run the engine and its layers */
	CS_ENGINE_MK,	/* mk/engine.mk */
	CS_MAKEFLAGS, CS_MFLAGS, CS_MAKELEVEL,	/* as units get them */
	CS_SILENT,	/* "1": make -s */
	CS_COUNT
};

/* How a value is read (and what corral.mk's check of the kind says). */
enum corral_kind {
	CK_TEXT,	/* as written: a command, a pattern */
	CK_WORDS,	/* words, split at white space */
	CK_PATHS,	/* words, each a path made absolute */
	CK_WORD,	/* at most one word */
	CK_PATH,	/* at most one word, a path made absolute */
	CK_NODE_PATH,	/* a path, or one whose $NAME each node expands */
	CK_STORE,	/* a path made absolute, or an http(s):// URL; any
			   other SCHEME:// is refused, never taken for a path */
	CK_NUMBER,	/* a whole number */
	CK_PERCENT,	/* a whole number from 0 to 100 */
	CK_SECONDS,	/* seconds, a fraction allowed */
	CK_WHOLE_SECONDS,
	CK_BYTES,	/* with K, M or G */
	CK_CODES,	/* exit codes, commas or spaces: kept comma-separated */
	CK_BOOL,	/* 0 or 1 */
	CK_ENUM,	/* one of choices */
	CK_INTERNAL	/* set by corral.mk or the run, never checked */
};

/* The programs a setting is an option of. */
enum corral_prog {
	CP_NONE, CP_SLICE, CP_SPLIT, CP_PLAN, CP_MERGE, CP_SCORE, CP_REPORT
};

/* How a setting becomes an option. */
enum corral_pass {
	CA_VALUE,	/* -o VALUE, when not empty */
	CA_COUNT,	/* -o VALUE, when neither empty nor 0 */
	CA_EACH,	/* -o WORD for each word */
	CA_PREFIX,	/* -o ARG=VALUE (arg is the prefix), when not empty */
	CA_IF		/* -o alone when the value is arg */
};

struct corral_option {
	enum corral_prog prog;
	char opt;
	enum corral_pass how;
	const char *arg;
};

struct corral_setting {
	const char *name;	/* CORRAL_TIMEOUT */
	const char *dflt;	/* when unset or empty ("" none) */
	enum corral_kind kind;
	const char *choices;	/* CK_ENUM: "none bwrap" */
	/*
	 * The file of CORRAL_OUT that holds this setting among others, so
	 * that what depends on it is made again when it changes (NULL: no
	 * file; a change re-does nothing by itself).
	 */
	const char *joins;
	struct corral_option to[2];
	/*
	 * 1: it joins each unit's key in the result cache (cache/key.c),
	 * so that a result stored under another value is never a hit.
	 */
	int key;
};

extern const struct corral_setting corral_settings_table[CS_COUNT];

/* The values, one string a setting (never NULL once loaded). */
struct corral_settings {
	char *v[CS_COUNT];
};

#define CORRAL_SETTINGS_FILE "settings.json"
/* The prefix of the variables corral.mk hands the settings over in. */
#define CORRAL_SETTINGS_ENV "__corral_set_"

void corral_settings_init(struct corral_settings *s);
void corral_settings_release(struct corral_settings *s);
/* The value of id: "" when empty. */
const char *corral_setting(const struct corral_settings *s,
    enum corral_setting_id id);
/* Whether id is set (not empty). */
int corral_setting_on(const struct corral_settings *s,
    enum corral_setting_id id);
/* The row of name, or NULL. */
const struct corral_setting *corral_setting_find(const char *name);
/*
 * Fill s from the environment corral.mk handed over: each knob from
 * __corral_set_NAME, its default when empty or named in __corral_unset
 * (exit codes: only when unset; empty is none), checked by its kind
 * ("CORRAL_GRACE is 'x'; it must be a number of seconds"), paths made
 * absolute against cwd.  The internal rows are left empty for the
 * caller.  0, or -1 with err set.
 */
int corral_settings_from_env(struct corral_settings *s, const char *cwd,
    struct corral_err *err);
/* Check value by row's kind: 0, or -1 with err naming row and value. */
int corral_setting_check(const struct corral_setting *row, const char *value,
    struct corral_err *err);
/* Replace id's value with a copy of v.  0, or -1 (ENOMEM). */
int corral_setting_set(struct corral_settings *s, enum corral_setting_id id,
    const char *v);
/* s as one JSON object, every row by name, into b.  0, or -1 (ENOMEM). */
int corral_settings_json(const struct corral_settings *s,
    struct corral_buf *b);
/* s from file (a settings.json).  0, or -1 with err set. */
int corral_settings_read(struct corral_settings *s, const char *file,
    struct corral_err *err);
/*
 * The lines "NAME VALUE" of every row whose joins is file, in table
 * order, into b.  0, or -1 (ENOMEM).
 */
int corral_settings_joined(const struct corral_settings *s, const char *file,
    struct corral_buf *b);
/*
 * Append to argv the options of program prog that the settings make,
 * in table order.  0, or -1 (ENOMEM).
 */
/*
 * "NAME value\n" for each setting that joins a unit's key, in the
 * table's order, appended to b.  0, or -1 on ENOMEM.
 */
int corral_settings_keyed(const struct corral_settings *s,
    struct corral_buf *b);
int corral_settings_argv(const struct corral_settings *s,
    enum corral_prog prog, struct corral_strv *argv);

/* ------------------------------------------------------------------ */
/* units.c: the population, as the step "units" writes it             */

/*
 * The names of what an engine step says as it goes: a voice prints
 * one line (a warning, or a step's progress line when tell is set).
 */
struct corral_voice {
	void (*say)(void *arg, const char *line);
	void *arg;
	int tell;	/* print step lines ("  SLICE   3") */
};

/*
 * Keep of the listing in (LF-ended lines, a CR before LF part of the
 * ending) only what is not outrel or under it (as "P", "./P", "P/...",
 * "./P/..."), appending the lines to out.  outrel "" keeps all.
 */
int corral_units_filter(const char *in, size_t n, const char *outrel,
    struct corral_buf *out);

/* ------------------------------------------------------------------ */
/* live.c: the progress total                                          */

/*
 * The number of units the slices of the plan will run: those of every
 * slice K (slices/K.units, in the current directory, K < nslices) whose
 * stamp slices/K.pass is missing or older than its units, its manifest
 * or config (as make compares mtimes), or every slice's with all.
 */
long long corral_live_total(size_t nslices, const char *config, int all);
/*
 * Whether slice K's stamp (slices/K.pass, in the current directory) is
 * up to date, as make will judge it: there, and newer than slices/K.units,
 * slices/K.manifest and config.
 */
int corral_slice_current(size_t k, const char *config);

/* ------------------------------------------------------------------ */
/* inputs.c: what the slices depend on                                 */

/*
 * Write dir/K.manifest from dir/K.parts (less exclude and what patterns
 * leave out, as corral_checkout_manifest) for K = 0.. up to the first
 * missing K.parts, each only when it changed (a slice whose parts are
 * refused loses its manifest), the files' content digests from memo
 * (corral_checkout_manifest), and add each manifest to sha (if not
 * NULL).  0, or -1
 * with err set (I/O; the manifests are then not all there).
 */
int corral_manifests_write(const char *src, const char *dir,
    const struct corral_strv *exclude, const struct corral_strv *patterns,
    struct corral_memo *memo, struct corral_sha256 *sha,
    struct corral_err *err);
/*
 * With CORRAL_PARTS auto, the run after a slice learned in the whole
 * tree need not run it again: when its new manifest (the learned parts)
 * lists nothing its old one (the whole tree's, a line ending " .") did
 * not, line for line, it takes the old one's mtime, and so keeps its
 * stamp.  old is the old manifest's content, mtime its time.  1 when
 * the time was kept, 0 when not, -1 with err set.
 */
int corral_manifest_keep(const char *path, const char *old, size_t oldlen,
    const struct timespec *mtime, struct corral_err *err);
/*
 * The parts the manifests in dir name as not found ("- PART" lines),
 * sorted, each once, appended to missing.  0, or -1 (ENOMEM).
 */
int corral_manifests_missing(const char *dir, struct corral_strv *missing);

/* ------------------------------------------------------------------ */
/* layer.c: re-run layers                                              */

/*
 * The units of units (one a line) matching one of the shell patterns
 * patterns (white-space separated, fnmatch(3) with no flags: '*' matches
 * '/'), appended to out as lines.  0, or -1 (ENOMEM).
 */
int corral_units_matching(const struct corral_strv *units,
    const char *patterns, struct corral_buf *out);
/*
 * Remove slices/K.pass of each main slice holding one of units (whole
 * lines compared).  0, or -1 with err set.
 */
int corral_unstamp(const struct corral_strv *units, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* would.c: what a run would run, asked without running it            */

/*
 * Copy the regular files of out and out/slices (its locks aside) into
 * dir, which exists, their times kept, so that the engine's graph can be
 * brought up to date in dir as a run would bring it in out, out only
 * read.  An absent out copies nothing.  0, or -1 with err set.
 */
int corral_engine_scratch(const char *out, const char *dir,
    struct corral_err *err);
/*
 * In the current directory (a scratch copy, its graph up to date): the
 * units of the nslices slices whose stamp make would remake (every one,
 * with always: make -B), appended to out as "REASON  UNIT" lines in the
 * order of the units file.  REASON: "new" (not in last_units, the
 * population of the last run; absent: none), the status of the last
 * result's failed record ("fail", "not-run"...), "forced" (always),
 * "changed" (an input or setting of its slice changed), "replan" (its
 * slice holds other units now) or "slice" (it passed, but its slice
 * runs again).  0, or -1 with err set.
 */
int corral_would_run(const char *last_units, size_t nslices, int always,
    struct corral_buf *out, struct corral_err *err);
/*
 * 1 when the stamp "merged" is up to date against units, merge-config
 * and the nslices stamps (a merge would not run), else 0.
 */
int corral_merged_stands(size_t nslices);
/*
 * With CORRAL_ONLY: the units of units matching patterns (as
 * corral_units_matching), each as an "only  UNIT" line of out.  0, or -1
 * (ENOMEM).
 */
int corral_would_only(const struct corral_strv *units, const char *patterns,
    struct corral_buf *out);

/* ------------------------------------------------------------------ */
/* stale.c: what a killed step left                                    */

/*
 * In the current directory (CORRAL_OUT) and its slices/, remove the
 * temporaries of the engine's own files that a step killed half-way left
 * (".inputs.tmp.XXXXXX", "board.tmp"...): regular files only, never
 * through a link, never the merge's.  0, or -1 with err set.
 */
int corral_engine_clean_stale(struct corral_err *err);

/* ------------------------------------------------------------------ */
/* launch.c: what a launcher said, for a slice whose agent left no log */

/* The longest line of a launcher's kept (the rest of a longer one: cut). */
#define CORRAL_LAUNCH_LINE_MAX	200

/*
 * A launcher's standard error, read as it comes: its last line of its
 * own ("PROG: ", PROG the basename of the first word of CORRAL_LAUNCH,
 * "srun: " or "slurmstepd-"), one that says "error" before any other,
 * shown-safe (corral_buf_add_shown) and bounded.  Start with _init
 * (launch: CORRAL_LAUNCH), feed it with _feed (0, or -1 on ENOMEM: a
 * line may be lost), ask _line at the end (NULL: none; good until
 * _release, which frees).
 */
struct corral_launch_said {
	char prog[64];
	struct corral_buf cur;		/* the line being read */
	struct corral_buf error;	/* the last one saying "error" */
	struct corral_buf other;	/* the last other one */
};

void corral_launch_said_init(struct corral_launch_said *s,
    const char *launch);
int corral_launch_said_feed(struct corral_launch_said *s, const char *p,
    size_t n);
const char *corral_launch_said_line(struct corral_launch_said *s);
void corral_launch_said_release(struct corral_launch_said *s);
/*
 * The note file logdir/agent-ID.launch of an agent the launcher did not
 * start or lost: why (one line, shown-safe) and then the slice's units,
 * a copy of the file units.  The merge gives those units, when no log
 * holds them, the note "NOT-RUN: WHY".  0, or -1 with err set.
 */
int corral_launch_note_write(const char *logdir, const char *agent,
    const char *why, const char *units, struct corral_err *err);

#endif /* CORRAL_ENGINE_H */
