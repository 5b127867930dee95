/* See LICENSE file for copyright and license details. */
/*
 * repair.h: the repair half -- snapshots and changes, running finders and
 * patchers, checked writes under a root, the journal that undoes them,
 * findings, corral-fix and its reports, and bundles.
 */
#ifndef CORRAL_REPAIR_H
#define CORRAL_REPAIR_H

#include "base/base.h"

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
 * and the process that runs it is a child subreaper (corral_reaper_start)
 * that then kills and reaps whatever the command detached from its
 * group, so nothing it started outlives it.
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
	int wstatus;		/* as waitpid(2) gave it */
};

/*
 * Run c and wait for it.  Returns 0 with st filled (whatever the command
 * did), or -1 with err set when it could not be started or waited for.
 */
int corral_cmd_run(const struct corral_cmd *c, struct corral_cmd_status *st,
    struct corral_err *err);
/*
 * Append how it ended to b ("exit 3", "signal 9 (SIGKILL)", "timed out
 * after 30 s", as corral_proc_describe says it for a shell) and, when
 * errfile (may be NULL) has a non-blank line, ": LAST" for the last one
 * (cut to 200 bytes).  0, or -1 on ENOMEM.
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
 * removes the file.  Each change is checked at the moment it is made:
 * a write's bytes go to the temporary corral_apply_tmp(path) and are
 * fsynced, then path is read (corral_path_state) and must hold the
 * change's before ("" = absent), and the temporary is renamed over it
 * right away; a delete is read, compared and unlinked.  A file that no
 * longer holds before stops the apply there, untouched ("'x' changed
 * while it was being replaced: ...").  A write that lands between that
 * last read and the rename (no other file is touched in between) is
 * still lost: no rename can tell.  0, or -1 with err set; changes made
 * before the failure stay (a journal undoes them).
 */
int corral_apply_changes(const char *root, const struct corral_changes *c,
    const char *blobdir, struct corral_err *err);

/*
 * The temporary through which a write of path (relative) goes: ".NAME"
 * CORRAL_APPLY_TMP beside it, always the same, so that a journal knows
 * it (malloc'd; NULL on ENOMEM).
 */
#define CORRAL_APPLY_TMP ".corral-fix.tmp"
char *corral_apply_tmp(const char *path);

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
 * every path: its digest, mode and mtime, or its absence, and the digest
 * the apply writes; the directories the apply creates; the mtimes of the
 * directories it touches).  Rolling back restores all of it and removes
 * the temporaries the apply writes through (corral_apply_tmp, one fixed
 * name per path), so the root is as it was, mtimes included.
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
 * Save how root/path is now, before it changes, and after, the digest
 * the apply writes there ("": it deletes the file).  Call for every
 * path, then seal.  0, or -1 with err set (the path goes through a
 * symlink, is not a regular file, its temporary's name,
 * corral_apply_tmp, is taken, I/O).
 */
int corral_journal_save(struct corral_journal *j, const char *path,
    const char *after, struct corral_err *err);
/* Write the journal durably; only then may the root change.  0 or -1. */
int corral_journal_seal(struct corral_journal *j, struct corral_err *err);
/*
 * Undo every change to the saved paths, remove the apply's temporaries
 * and the directories it created, put back directory mtimes, remove the
 * journal and free j.  A saved path is put back only when it holds what
 * the apply wrote there: one that holds neither that nor what it held
 * before was changed by someone else meanwhile, and is left as it is,
 * its path added to kept (may be NULL).  0, or -1 with err set (the
 * journal then stays for a recovery).
 */
int corral_journal_rollback(struct corral_journal *j, struct corral_strv *kept,
    struct corral_err *err);
/*
 * The apply failed with err: roll back (corral_journal_rollback) and free
 * j, and say in err what became of the root: "ERR; rolled back: nothing
 * was applied", then ", and what changed meanwhile is left as it is:
 * 'a', 'b'" for the files kept, or "ERR; rolling back failed too: ...;
 * the journal stays: run 'corral-fix -R ROOT'".  Always -1.
 */
int corral_journal_abandon(struct corral_journal *j, struct corral_err *err);
/* "'a', 'b', 'c' and N more": the paths in kept, appended to b.  0, -1. */
int corral_journal_kept(struct corral_buf *b, const struct corral_strv *kept);
/* Keep the changes: remove the journal and free j.  0 or -1. */
int corral_journal_commit(struct corral_journal *j, struct corral_err *err);
/*
 * 0 when root holds no journal; -1 with err naming it (and what to run)
 * when it does, so nothing reads or writes a root that is half applied.
 */
int corral_journal_check(const char *root, struct corral_err *err);
/*
 * After a crash: roll back what ROOT/.corral-fix records and remove it,
 * as corral_journal_rollback does (kept: the same, may be NULL).
 * Returns 1 when there was a journal, 2 when there was its directory but
 * no journal.json (the apply had not begun writing, or had committed and
 * was cut short removing it: nothing to roll back, the directory is
 * removed), 0 when there was none, -1 with err set (refused while
 * another process holds the lock; the journal stays).
 */
int corral_journal_recover(const char *root, struct corral_strv *kept,
    struct corral_err *err);

/*
 * Whether text[0..len) is a journal.json a recovery can trust (the reader
 * corral_journal_recover uses, which fuzz/journal.c drives).  0, or -1
 * with err set.
 */
int corral_journal_parse(const char *text, size_t len,
    struct corral_err *err);

/* ------------------------------------------------------------------ */
/* findings.c, bundle.c, fix.c, snap.c: the repair half's JSON formats   */

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

/*
 * An attempt's result file, {"status":S,"detail":D,"could_not_look":B,
 * "files":[...]}.  status and detail are malloc'd for the caller.
 */
int corral_json_attempt(const char *text, size_t len, char **status,
    char **detail, int *could_not_look, struct corral_changes *files,
    struct corral_err *err);

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
	size_t restored;	/* files written to root, then restored from
				   the journal: the re-measure disagreed */
	size_t verified, rolled_back, applied, conflicts;
	char *message;
};

/*
 * workdir.c: corral-fix's scratch directory.  corral_fix_work_base is
 * where it goes: workroot, else $TMPDIR, else /tmp (not to be freed).
 * corral_fix_work_make creates BASE/corral-fix.XXXXXX (*work, the
 * caller frees), locked by *lockfd (the caller closes it after removing
 * the directory) and marked as a clone.  0, or -1 with err set (*work
 * and *lockfd may be set all the same, to be released as on success).
 * corral_fix_work_sweep removes every such directory in base whose run is
 * gone (its lock free), killed or crashed, and returns how many it
 * removed; it never fails (what it cannot remove it leaves).
 * corral_fix_work_cache sets *assign (the caller frees) to the
 * CORRAL_CACHE=STORE that every finder of the session is run with, so
 * that a corral.mk suite it runs (corral-find-suite) re-runs only the
 * units whose key a candidate changed: WORK/cache, or the environment's
 * CORRAL_CACHE made absolute; NULL when the environment's is kept as it
 * is (absolute, a URL, or empty: no shared store).  0, or -1 with err.
 */
const char *corral_fix_work_base(const char *workroot);
int corral_fix_work_make(const char *base, char **work, int *lockfd,
    struct corral_err *err);
size_t corral_fix_work_sweep(const char *base);
int corral_fix_work_cache(const char *work, char **assign,
    struct corral_err *err);

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
 * program's own binary (sh-quoted) when it is there, else in
 * CORRAL_HELPER_DIR from there (an install's helpers), else name itself,
 * for PATH.  Appended to b.  0, or -1 on ENOMEM.
 */
int corral_fix_default_cmd(const char *name, struct corral_buf *b);
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

#endif /* CORRAL_REPAIR_H */
