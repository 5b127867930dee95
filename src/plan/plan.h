/* See LICENSE file for copyright and license details. */
/*
 * plan.h: cutting a population into slices -- round-robin and weighted
 * splits, durations learned from history, the plan corral-split writes,
 * and the briefs of corral-plan.
 */
#ifndef CORRAL_PLAN_H
#define CORRAL_PLAN_H

#include "base/base.h"

/* ------------------------------------------------------------------ */
/* split.c: cutting a population into disjoint, balanced slices        */

/*
 * How many slices a population is cut into when nobody says: a function
 * of the population alone, never of how many run at once (make's -j), so
 * that a run at another -j keeps the plan and re-runs nothing.  Up to
 * CORRAL_SPLIT_FEW units, one slice each, so that make's own queue
 * balances them as a shared queue would; beyond, slices of about
 * CORRAL_SPLIT_UNITS units, never fewer than CORRAL_SPLIT_FEW, so that a
 * slice's fixed cost (a clone, an agent) is shared by many units while
 * make still has many more slices than jobs to balance.  0 for 0 units.
 */
#define CORRAL_SPLIT_FEW 64
#define CORRAL_SPLIT_UNITS 32
size_t corral_split_auto(size_t nunits);

/*
 * How many slices a plan that knows no duration cuts when nslices are
 * to run at once (a CORRAL_AGENTS the user set): nslices while none holds
 * more than CORRAL_SPLIT_BLIND units, else as many as
 * corral_split_auto's, and never fewer than nslices.  Round-robin over a
 * few slices puts long units together as often as not, and nothing
 * tells where they are; many slices let make's queue balance them as a
 * shared queue would.  The plan is kept until the population or the
 * count changes, so a second run re-runs nothing; cut again with
 * history, it has nslices slices, weighted.
 */
#define CORRAL_SPLIT_BLIND 2
size_t corral_split_blind(size_t nunits, long nslices);

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

/*
 * Number the n slices heaviest first by load[k], the weight of slice k
 * (equal ones keep their order), in place: the order make starts them
 * in.  -1 with err on ENOMEM, the slices as they were.
 */
int corral_split_order(struct corral_strv *slices, size_t n,
    const long long *load, struct corral_err *err);
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

/* ------------------------------------------------------------------ */
/* plan.c: a plan as corral-split makes it                             */

struct corral_plan {
	const struct corral_strv *units;
	struct corral_strv *slices;	/* n, of pointers into units->v */
	size_t n;
	struct corral_weights wt;	/* of units->v; kind NONE: unknown */
	long long *loads;		/* the weight of each slice */
	const char *strategy;		/* what was done: "roundrobin" or
					   "weighted" */
	struct corral_set *ix;		/* unit -> its index in units->v */
	int finer;			/* CORRAL_PLAN_FINER was given */
	long asked;			/* the slices asked for, when a plan
					   without history cut more; else 0 */
};

/* ------------------------------------------------------------------ */
/* strategy.c: the split strategies, by name                           */

/*
 * A way to cut: cut fills p->slices, p->n and p->strategy from p->units
 * and p->wt (learned from history, kind NONE when there is none; a cut
 * may weigh the files srcdir/UNIT instead, srcdir NULL for the current
 * directory).  0, or -1 with err set (I/O, ENOMEM).
 */
struct corral_strategy {
	const char *name;
	const char *what;	/* one line, for --help */
	int (*cut)(struct corral_plan *p, const char *srcdir, long nslices,
	    struct corral_err *err);
};

/*
 * Every strategy, ended by a NULL name; the first is the default of the
 * programs (round-robin, the original's).  The names are defined here
 * and nowhere else: corral-split -L prints them for corral.mk.
 */
extern const struct corral_strategy corral_strategies[];

/*
 * The strategy called name, or NULL with err set to "OPT 'NAME' is not a
 * strategy (a, b or c)" (or ENOMEM).
 */
const struct corral_strategy *corral_strategy_find(const char *name,
    const char *opt, struct corral_err *err);
/* Append the names as "a, b or c" to b: 0, or -1 (ENOMEM). */
int corral_strategy_names(struct corral_buf *b);

/* ------------------------------------------------------------------ */
/* plan.c: making a plan by a strategy                                 */

/*
 * Cut units into nslices as strategy says, learning weights from the
 * history file (may be NULL); a weighted plan without any history weighs
 * the files srcdir/UNIT (srcdir may be NULL).  With CORRAL_PLAN_FINER in
 * flags, nslices is how many run at once, and auto without history cuts
 * corral_split_blind's count.  0, or -1 with err set (I/O, ENOMEM).
 * Release p with corral_plan_release either way.
 */
#define CORRAL_PLAN_FINER 1
int corral_plan_make(struct corral_plan *p, const struct corral_strv *units,
    const struct corral_strategy *strategy, const char *history,
    const char *srcdir, long nslices, unsigned flags,
    struct corral_err *err);
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
/* parts.c: what a slice's clone holds                                 */

/*
 * parts (may be NULL) are cloned by every agent; with srcdir (may be
 * NULL), the tree, a unit that names an entry of it (lstat(2)) is one of
 * its own parts; parts_cmd (may be NULL) is run with /bin/sh -c for each
 * unit, in srcdir if given, CORRAL_UNIT in its environment, and prints
 * that unit's parts, one per line (empty lines skipped).
 */
struct corral_parts_opts {
	const struct corral_strv *parts;
	const char *parts_cmd;
	const char *srcdir;
	const struct corral_learned *learned;	/* CORRAL_PARTS = auto: what
					   history learned, or NULL */
};

/*
 * Append the parts of the slice units to parts (empty), sorted bytewise,
 * each once, unchecked: what escapes the tree is for whoever clones to
 * refuse.  With learned, each unit's learned parts too (one that is gone
 * as well); and when a unit has none learned yet, "." (the whole tree,
 * where the agent learns them).  0, or -1 with err set: a parts command that could not run or
 * did not exit 0, ENOMEM; parts then holds part of them (the caller
 * releases it either way).
 */
int corral_parts_of(const struct corral_parts_opts *o,
    const struct corral_strv *units, struct corral_strv *parts,
    struct corral_err *err);

/* ------------------------------------------------------------------ */
/* learned.c: the parts learned for each unit, from history            */

/* unit -> the files it was last seen to open (sorted, each once). */
struct corral_learned {
	struct corral_strv units;	/* in the order first learned */
	struct corral_strv *sets;	/* sets[i]: of units.v[i] */
	size_t n, cap;
	struct corral_set *ix;		/* unit -> i */
	struct corral_strv dropped;	/* one line per read dropped */
	struct corral_strv dropped_of;	/* dropped.v[i] is of this unit */
};

/*
 * Fill l from history (a missing file: nothing learned): for each unit,
 * the "reads" of its latest record that has one.  A read that is not a
 * path inside the tree (corral_path_lexical, canonical; "." is the whole
 * tree; "DIR/" and "./" are directories listed, corral_path_is_listing)
 * is dropped, and l->dropped gets a line naming history, the unit
 * and the read for the tool to warn with (of each unit's latest line with reads only); a
 * record left with no read counts as none.  0, or
 * -1 with err set (I/O, ENOMEM).  Release l with corral_learned_release
 * either way.
 */
int corral_learned_read(struct corral_learned *l, const char *history,
    struct corral_err *err);
/* The learned parts of unit (l's own), or NULL when none are. */
const struct corral_strv *corral_learned_of(const struct corral_learned *l,
    const char *unit);
void corral_learned_release(struct corral_learned *l);

/* ------------------------------------------------------------------ */
/* parts_check.c: whether a part exists, and the path nearest to it    */

/*
 * 1 when part names an entry of srcdir (lstat(2): a dangling link too),
 * or leaves it (the checkout refuses those); 0 when it does not exist,
 * with *nearp the nearest existing path (each missing component replaced
 * by its nearest sibling, a few edits away), malloc'd for the caller to
 * free, or NULL when none is close.  -1 with err set (ENOMEM).
 */
int corral_part_nearest(const char *srcdir, const char *part, char **nearp,
    struct corral_err *err);

/* ------------------------------------------------------------------ */
/* briefs.c: one brief per agent, for a subagent fan-out               */

/*
 * What corral_briefs_write needs.  The slices are corral_plan_make's over
 * units by strategy, with the weights of history (may be NULL) or, for a
 * weighted plan without any, the sizes of the files under parts.srcdir:
 * what corral-split cuts from the same.  logdir names where agent K
 * writes LOGDIR/agent-K.jsonl; parts says what each slice clones (parts.c); template is the task text,
 * in which {agent}, {units}, {parts}, {log} and {n} are replaced (units
 * and parts joined by single spaces, n the number of units) and every
 * other character is kept as written.
 */
struct corral_briefs_opts {
	long nslices;
	const struct corral_strategy *strategy;
	const char *history;
	const char *logdir;
	struct corral_parts_opts parts;
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
/* shard.c: the shards of a matrix, the same on every host             */

/* An environment lookup: getenv, or a test's own. */
typedef const char *corral_env_fn(const char *name);

/* Shard k of n (1 <= k <= n), and who said so. */
struct corral_shard {
	long k, n;
	const char *engine;	/* "GitLab", ...; NULL for K/N */
	const char *status_file;	/* Bazel's TEST_SHARD_STATUS_FILE, to
					   touch; NULL when not set */
};

/*
 * Read CORRAL_SHARD's value spec: "K/N", or "auto": the first engine whose
 * index variable env() finds set names the shard (GitLab CI_NODE_INDEX
 * and CI_NODE_TOTAL, 1-based; CircleCI, Buildkite, Bazel and Kubernetes
 * JOB_COMPLETION_INDEX with CORRAL_SHARD_TOTAL, 0-based; a Slurm array's
 * SLURM_ARRAY_TASK_ID from SLURM_ARRAY_TASK_MIN, of SLURM_ARRAY_TASK_COUNT).
 * The strings of sh are static or env()'s.  0, or -1 with err saying what
 * is wrong in one line ("CORRAL_SHARD is '0/3'; it must be K/N ...", no
 * engine found, an index out of range).
 */
int corral_shard_parse(const char *spec, corral_env_fn *env,
    struct corral_shard *sh, struct corral_err *err);
/*
 * bin[i] = the shard (0 .. n - 1) of units->v[i]; units must hold each
 * unit once.  w NULL: the units are dealt round in the order of the
 * SHA-256 of their names; else by weight, longest processing time first
 * (w[i] is units->v[i]'s, and must be the same on every host: from a
 * history they share).  Either way a function of the set of units and n
 * alone.  0, or -1 with err set (ENOMEM, libcrypto).
 */
int corral_shard_cut(const struct corral_strv *units, const long long *w,
    long n, size_t *bin, struct corral_err *err);
/*
 * corral_shard_cut weighted by the durations of the history file (may be
 * NULL; one that knows none of the units deals them by digest), and the
 * fingerprint of that cut in plan.  0, or -1 with err set (the history
 * cannot be read, ENOMEM, libcrypto).
 */
int corral_shard_assign(const struct corral_strv *units, const char *history,
    long n, size_t *bin, char plan[CORRAL_SHA256_HEX],
    struct corral_err *err);
/* The SHA-256 of the set of units (sorted, each once).  0, or -1/err. */
int corral_shard_population(const struct corral_strv *units,
    char hex[CORRAL_SHA256_HEX], struct corral_err *err);
/*
 * The fingerprint of how shards are cut: the digest deal, or a weighted
 * cut by the history file (may be NULL), whose bytes it covers.  0, or -1
 * with err set (the history cannot be read, libcrypto).
 */
int corral_shard_fingerprint(const char *history,
    char hex[CORRAL_SHA256_HEX], struct corral_err *err);

/*
 * One log a shard's manifest vouches for: where it is in the shard's
 * directory, logs/agent-ID.jsonl or rerun/N/logs/agent-ID.jsonl (N from
 * 1, no leading 0), its agent ID, the runs its records name (first seen
 * first), and its seal: the records it covers and their digest.
 */
struct corral_shard_log {
	char *log;
	char *agent;
	long layer;			/* 0, or N */
	struct corral_strv runs;
	size_t records;
	char sha256[CORRAL_SHA256_HEX];
};

/*
 * A launcher's note a shard vouches for (see engine.h): its path in the
 * shard directory, logs/agent-ID.launch or rerun/N/logs/agent-ID.launch,
 * and the SHA-256 of its bytes.
 */
struct corral_shard_note {
	char *path;
	char sha256[CORRAL_SHA256_HEX];
};

/* A shard directory's manifest, shard.json: what ran, where, cut how. */
struct corral_shard_manifest {
	long k, n;
	size_t population_units;	/* the whole population */
	char population[CORRAL_SHA256_HEX];	/* its digest */
	size_t units;			/* this shard's share of it */
	char plan[CORRAL_SHA256_HEX];	/* corral_shard_fingerprint */
	char *host, *run, *version;	/* read: malloc'd; format: given */
	struct corral_shard_log *logs;	/* every log it vouches for, in */
	size_t nlogs;			/* layer, then name order; malloc'd */
	struct corral_shard_note *notes;	/* the same, of its notes */
	size_t nnotes;			/* ("notes", only when there are) */
};

/* Append m as one JSON line.  0, or -1 (ENOMEM). */
int corral_shard_manifest_format(const struct corral_shard_manifest *m,
    struct corral_buf *b);
/*
 * Whether log is the path of a shard's log (see struct corral_shard_log):
 * 0 with *layer and, when agent is not NULL, *agent (malloc'd) set, or -1
 * with err saying what is wrong.
 */
int corral_shard_log_path(const char *log, long *layer, char **agent,
    struct corral_err *err);
/* The same for the path of a launcher's note (agent-ID.launch). */
int corral_shard_note_path(const char *note, long *layer, char **agent,
    struct corral_err *err);
/*
 * Read the note open on fd (path for messages; at most
 * CORRAL_SHARD_NOTE_MAX bytes) into b (appending) and its SHA-256 into
 * hex.  0, or -1 with err naming path (ENOMEM: out of memory).
 */
#define CORRAL_SHARD_NOTE_MAX	(16L << 20)
int corral_shard_note_read(int fd, const char *path, struct corral_buf *b,
    char hex[CORRAL_SHA256_HEX], struct corral_err *err);
/*
 * The notes of the shard directory dir (as corral_shard_dir_logs finds
 * them), each read by corral_shard_note_read through an open that
 * follows no link, into m->notes.  A note that cannot be read (a link,
 * not a regular file) is left out, with one line saying why added to
 * skipped.  0, or -1 with err set.
 */
int corral_shard_manifest_notes(struct corral_shard_manifest *m,
    const char *dir, struct corral_strv *skipped, struct corral_err *err);
/*
 * Told each record's unit while a log is read; 0, or -1 with err set to
 * why the log is not the shard's (the read then stops).
 */
typedef int corral_shard_unit_fn(void *arg, const char *unit,
    struct corral_err *err);
/*
 * Read the log open on fd (path for messages; from offset 0, a line at a
 * time, never whole) into lg: it must end in a good seal, whose records
 * and digest go to lg, and every record must be one
 * (corral_json_record_parse) of agent lg->agent, whose run is added to
 * lg->runs, and whose unit cb (may be NULL) takes.  0, or -1 with err
 * naming path and the first thing wrong.
 */
int corral_shard_log_read(int fd, const char *path, struct corral_shard_log *lg,
    corral_shard_unit_fn *cb, void *arg, struct corral_err *err);
/*
 * The logs of the shard directory dir (logs/ and every rerun/N/logs/),
 * each read by corral_shard_log_read, into m->logs: what its manifest
 * vouches for.  A log that cannot be vouched for (a link, no seal, a
 * record not its agent's) is left out, with one line saying why added to
 * skipped.  0, or -1 with err set (ENOMEM, a directory that cannot be
 * read).
 */
int corral_shard_manifest_logs(struct corral_shard_manifest *m,
    const char *dir, struct corral_strv *skipped, struct corral_err *err);
/*
 * The logs of the shard directory dir, as paths relative to it: every
 * agent-*.jsonl of logs/, then of each rerun/N/logs/ (N in order), each
 * directory's sorted; with kind CORRAL_SHARD_ALL, every agent-* file
 * whose name holds ".jsonl" (checkpoints too); with CORRAL_SHARD_NOTES,
 * every agent-*.launch instead.  Appended to names: 0, or -1 with err set.
 */
enum { CORRAL_SHARD_LOGS, CORRAL_SHARD_ALL, CORRAL_SHARD_NOTES };
int corral_shard_dir_logs(const char *dir, int kind, struct corral_strv *names,
    struct corral_err *err);
void corral_shard_log_release(struct corral_shard_log *lg);
/*
 * Read the manifest at path into m.  0, or -1 with err naming path and
 * what is wrong ("'X/shard.json': \"of\" is missing").  Release m either
 * way.
 */
int corral_shard_manifest_read(const char *path,
    struct corral_shard_manifest *m, struct corral_err *err);
void corral_shard_manifest_release(struct corral_shard_manifest *m);

#endif /* CORRAL_PLAN_H */
