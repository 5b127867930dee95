/* See LICENSE file for copyright and license details. */
/*
 * cache.h: results that travel -- the key of a unit (a SHA-256 over what
 * its result can depend on, each part named so that a miss can say what
 * changed), and the stores that keep a pass or a skip under its key: the
 * local one in CORRAL_OUT (always) and CORRAL_CACHE, a directory shared
 * by clones, hosts and CI runs.
 */
#ifndef CORRAL_CACHE_H
#define CORRAL_CACHE_H

#include "base/base.h"
#include "plan/plan.h"

/* ------------------------------------------------------------------ */
/* key.c: the key of a unit                                             */

/*
 * A key's parts, in order: each a name ("unit", "setting CORRAL_CMD",
 * "env HOME", "tool /usr/bin/make", "key-command", "file lib/a.sh",
 * "list lib/", "tree lib", "absent lib/x") and a value (the digest of
 * what it names, or the setting's text).  hex is the SHA-256 over them.
 */
struct corral_cache_key {
	struct corral_strv names;
	struct corral_strv values;
	char hex[CORRAL_SHA256_HEX];
};

void corral_cache_key_init(struct corral_cache_key *k);
void corral_cache_key_release(struct corral_cache_key *k);

/*
 * What every unit of one agent's keys share, and how to read the tree.
 * The caller fills the first block; corral_cache_ctx_prepare computes the
 * shared parts once; _release frees what it made.
 */
struct corral_cache_ctx {
	const char *src;	/* the tree the inputs are paths of */
	const char *settings;	/* "NAME value" lines: the settings that
				   join the key (the settings table's) */
	const char *env;	/* CORRAL_CACHE_ENV: names, white space
				   between them; may be NULL */
	const char *key_cmd;	/* CORRAL_CACHE_KEY, run by /bin/sh -c; NULL */
	const char *shell;	/* the units' shell; NULL: /bin/sh */
	const char *cmd;	/* CORRAL_CMD, its programs in the key */
	const struct corral_strv *exclude;	/* absolute paths left out */
	const char *digests;	/* the memo of content digests by stat
				   (CORRAL_OUT/digests), read, never
				   written; NULL: every file is read */

	struct corral_cache_key base;	/* the shared parts */
	struct corral_set *memo;	/* input -> index in memo_v */
	struct corral_strv memo_n, memo_v;
	struct corral_memo *stats;	/* digests, opened by _prepare */
};

void corral_cache_ctx_init(struct corral_cache_ctx *c);
void corral_cache_ctx_release(struct corral_cache_ctx *c);
/*
 * Forget the inputs' parts computed so far (the memo of one agent's
 * keys), so that the next keys read the tree again: an agent that made
 * its clone after its lookups keys what it stores by the tree as cloned.
 */
void corral_cache_ctx_forget(struct corral_cache_ctx *c);
/*
 * The parts every unit shares: each setting line, each variable of env
 * (its value's digest, or "unset"), the content digest of the shell and
 * of each program CMD names as the first word of a simple command that
 * resolves on PATH, and the digest of key_cmd's output and status.  0,
 * or -1 with err set (ENOMEM, libcrypto).
 */
int corral_cache_ctx_prepare(struct corral_cache_ctx *c,
    struct corral_err *err);
/*
 * The content digest of the file at path: the one place a file is read
 * for a key (a memo of digests by stat can take its place).  0, or -1
 * with err set.
 */
int corral_cache_file_digest(struct corral_cache_ctx *c, const char *path,
    char hex[CORRAL_SHA256_HEX], struct corral_err *err);
/*
 * k = the key of unit over inputs (paths relative to c->src: a file by
 * its content, "DIR/" by the names in it, a directory without the slash,
 * "." included, by every name and file under it less c->exclude and
 * .git; one that is not there as absent).  Inputs are taken sorted and
 * once each.  0, or -1 with err set.
 */
int corral_cache_key_make(struct corral_cache_ctx *c, const char *unit,
    const struct corral_strv *inputs, struct corral_cache_key *k,
    struct corral_err *err);

/* ------------------------------------------------------------------ */
/* store.c: entries under their key                                     */

/*
 * A store: a directory of entries in fan-out directories, r/AB/KEY.json
 * (a result) and m/AB/UNITDIGEST.json (the inputs and parts of the key a
 * unit's last result was stored under, what a lookup computes its key
 * from).  Each written to a temporary beside it and renamed.  A store
 * that cannot be used (not a directory, full, read-only) is "broken":
 * every lookup then misses and nothing more is written; why says why.
 */
struct corral_cache_store {
	const char *dir;
	int broken;
	int empty;	/* held no entry at corral_cache_store_note_empty */
	char why[256];
};

/*
 * Note whether the directory store s holds no entry (neither r/ nor m/
 * is there).  Until this process puts one, a lookup in it is then a miss
 * without a file system call: a fresh CORRAL_OUT's local store would
 * otherwise cost two failed opens a unit of a fully cached run.  Only for
 * a store that no other process writes meanwhile (the local one: a run
 * holds its CORRAL_OUT, and its agents look up disjoint units).
 */
void corral_cache_store_note_empty(struct corral_cache_store *s);

/* What a result entry holds. */
struct corral_cache_entry {
	char *key, *unit, *status, *note, *run, *host, *at, *tail;
	long long exit_code, duration_ms;
};

void corral_cache_entry_release(struct corral_cache_entry *e);
/*
 * Make the store's directory if it is missing.  0; -1 when it cannot be
 * used (broken set, why saying why).
 */
int corral_cache_store_open(struct corral_cache_store *s);
/*
 * The entry under key into e: 1 a hit; 0 a miss (none there); 2 a miss
 * whose entry does not parse, is not for unit or whose recorded key is
 * not key (why in err, a warning for the caller).
 */
int corral_cache_get(struct corral_cache_store *s, const char *key,
    const char *unit, struct corral_cache_entry *e, struct corral_err *err);
/* Store e under e->key.  0, or -1 (the store broken, why said). */
int corral_cache_put(struct corral_cache_store *s,
    const struct corral_cache_entry *e);
/*
 * corral_cache_put of e, read from the store from a moment ago: its very
 * file hard-linked when both are directories that allow it (no inode is
 * made), else written.  0, or -1 (to broken, why said).
 */
int corral_cache_put_from(struct corral_cache_store *to,
    const struct corral_cache_store *from, const struct corral_cache_entry *e);
/* Remove the entry under key, if any. */
void corral_cache_drop(struct corral_cache_store *s, const char *key);
/*
 * Before unit's result is stored under hex: remove the result its
 * manifest names, when that is another key.  For the local store, which
 * keeps a unit's last result only, so that it grows with the population,
 * not with every state a unit was ever in; a shared store keeps them all
 * (other branches, other hosts) and is pruned by size.
 */
void corral_cache_supersede(struct corral_cache_store *s, const char *unit,
    const char *hex);
/*
 * The manifest of unit: the inputs and the parts of the key its last
 * stored result had.  1 found (inputs and k filled), 0 none, 2 unreadable
 * (err says why).
 */
int corral_cache_manifest_get(struct corral_cache_store *s, const char *unit,
    struct corral_strv *inputs, struct corral_cache_key *k,
    struct corral_err *err);
int corral_cache_manifest_put(struct corral_cache_store *s, const char *unit,
    const struct corral_strv *inputs, const struct corral_cache_key *k);
/*
 * corral_cache_manifest_put, or, when from (may be NULL) holds that very
 * manifest (the caller read it: the same inputs and parts), its file
 * hard-linked as corral_cache_put_from does.
 */
int corral_cache_manifest_put_from(struct corral_cache_store *to,
    const struct corral_cache_store *from, const char *unit,
    const struct corral_strv *inputs, const struct corral_cache_key *k);
/*
 * Why a unit missed in the last run, or hit and was sampled to run again:
 * its key now (k) and the one its manifest had (old, may be NULL), at
 * why/UNITDIGEST.json under the store.  Best effort.  A hit taken has no
 * why file: its record says it (corral_cache_explain).
 */
void corral_cache_why_put(struct corral_cache_store *s, const char *unit,
    int hit, const struct corral_cache_key *k,
    const struct corral_cache_key *old);
/*
 * Why unit hit, in s, when the manifest of unit in from (s itself, or a
 * directory store the hit came from) holds the very key it hit (its parts
 * the key's): the why file is that manifest, hard-linked, costing no new
 * inode.  0, or -1: write it with corral_cache_why_put.
 */
int corral_cache_why_link(struct corral_cache_store *s,
    const struct corral_cache_store *from, const char *unit);
/* Whether a why document says a hit: "hit" true, or a manifest linked. */
struct cJSON;
int corral_cache_why_is_hit(const struct cJSON *doc);

/*
 * Whether entries of kind ("r", "m", "why") are fanned out in 256
 * directories by their name's first two digits.  A store's are, so that
 * no directory of a shared store grows without end; the local store's
 * why files are not: a fresh CORRAL_OUT's fully cached run would make
 * 256 directories for them, each a new inode (the dearest file system
 * call of such a run), and they are one a unit of one project.
 */
int corral_cache_kind_fanned(const char *kind);

/* The file of unit's kind ("m", "why") under dir, malloc'd; NULL: ENOMEM. */
char *corral_cache_unit_path(const char *dir, const char *kind,
    const char *unit);

/* ------------------------------------------------------------------ */
/* admin.c: corral-cache                                                */

/* Result entries and their bytes, manifests, entries that do not parse. */
struct corral_cache_stats {
	long long entries, bytes, manifests, bad;
};

int corral_cache_stats(const char *dir, struct corral_cache_stats *st,
    struct corral_err *err);
/*
 * Remove the oldest result entries (by mtime) until those left take at
 * most max bytes; *removed counts them.  0, or -1 with err set.
 */
int corral_cache_prune(const char *dir, long long max, long long *removed,
    struct corral_err *err);
/*
 * What made unit hit or miss in the last run, into out: a hit by its
 * record in the results beside the local store dir (OUT/successes.jsonl
 * for OUT/cache, marked cached with the key), else by its why file, one
 * line per part that differs from the key its stored result had.  0; 1
 * when the store knows nothing of unit; -1 with err set.
 */
int corral_cache_explain(const char *dir, const char *unit,
    struct corral_buf *out, struct corral_err *err);
/*
 * Check every result entry: one that does not parse or whose recorded
 * key is not its name is removed (*removed counts them); the units that
 * hit in the last run (their records marked cached beside the local
 * store, and the why files of the hits sampled) go to hits.  0, or -1
 * with err.
 */
int corral_cache_verify(const char *dir, long long *removed,
    struct corral_strv *hits, struct corral_err *err);

#endif /* CORRAL_CACHE_H */
