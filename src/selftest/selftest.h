/* See LICENSE file for copyright and license details. */
/*
 * selftest.h: corral checking itself -- where an install's pieces are,
 * the tour through corral.mk, the doctor's checks and the repair half's
 * demo.  A library of its own (libcorral-selftest.a), linked only by the
 * programs that use it.
 */
#ifndef CORRAL_SELFTEST_H
#define CORRAL_SELFTEST_H

#include "base/base.h"
#include "repair/repair.h"

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
 * 1 when the command name ("marker-find") is a test helper, which an
 * install keeps in CORRAL_HELPER_DIR rather than in its bindir, else 0.
 */
int corral_command_helper(const char *name);

/*
 * The directory of the running program, absolute and with symlinks
 * resolved: /proc/self/exe, else argv0 (a path, or a name looked up in
 * PATH).  A malloc'd string the caller frees, or NULL with err set.
 */
char *corral_self_dir(const char *argv0, struct corral_err *err);

/*
 * Find the program name: dir/name when it exists (dir may be NULL), else
 * dir/CORRAL_HELPER_DIR/name (an install's helpers), else the first PATH
 * entry holding it.  Returns 0 with the path appended to path, or -1
 * (errno ENOENT when there is none, ENOMEM).
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
 * The start of a program that runs the install it is part of: its
 * directory (corral_self_dir), with the environment isolated to it
 * (corral_env_isolate).  malloc'd, or NULL with err set.
 */
char *corral_self_isolated(const char *argv0, struct corral_err *err);

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
 * corral_mk_find with its failure as one error: "corral.mk not found;
 * looked for A, B, C" (or ENOMEM).  0, or -1 with err set.
 */
int corral_mk_locate(const char *bindir, struct corral_buf *path,
    struct corral_err *err);

/*
 * The version the file at path carries, from its CORRAL_VERSION_TAG.
 * Returns 1 with it appended to version, 0 when the file carries none,
 * -1 with err set (unreadable, ENOMEM).  Two different versions in one
 * file read as none.
 */
int corral_version_read(const char *path, struct corral_buf *version,
    struct corral_err *err);

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

/* ------------------------------------------------------------------ *//* ------------------------------------------------------------------ */
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
#endif /* CORRAL_SELFTEST_H */
