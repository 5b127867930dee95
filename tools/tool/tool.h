/* See LICENSE file for copyright and license details. */
/*
 * tool.h: what only the programs of tools/ do, and libcorral never does:
 * exit.  A message and an exit status (die.c), what a program says about
 * itself (usage.c), allocation, a list of units and standard output that
 * exit on failure (xalloc.c), and a CORRAL_OUT's lock held or exit
 * (xlock.c).  tools/tool/ builds libcorral-tool.a, which every program
 * links before libcorral; a program includes "corral.h", then this.
 */
#ifndef CORRAL_TOOL_H
#define CORRAL_TOOL_H

#include "base/base.h"

/* ------------------------------------------------------------------ */
/* die.c: a message, then exit                                         */

/*
 * corral_warn, then exit status; corral_die_err prints a library error as
 * corral_warn_err does, then exits.
 */
void corral_die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
void corral_die_err(int status, const struct corral_err *err)
	__attribute__((noreturn));

/* ------------------------------------------------------------------ */
/* xalloc.c: allocation that exits on failure                          */

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/*
 * Flush standard output, or exit 2 with "cannot write standard output:
 * ..." when it took no write.
 */
void xflush_stdout(void);
/*
 * The text a tool built in b, rc the or-ed results of building it: exit
 * 2 with "out of memory" when rc < 0, else write b to standard output
 * (xflush_stdout says whether it took it) and release b.
 */
void xprint_buf(struct corral_buf *b, int rc);
/* corral_units_load, exiting 2 with its message on an error. */
void xunits_load(const char *file, int sep, struct corral_strv *units,
    int warn);

/* ------------------------------------------------------------------ */
/* usage.c: what a program says about itself                           */

struct corral_usage {
	/* "corral-x [-h] FILE"; a second form on a line of its own */
	const char *synopsis;
	/* "-o DIR\twhat it does", one line per option; NULL for none */
	const char *options;
	/* for --help: more text after the options, or NULL */
	void (*more)(FILE *fp);
};

/*
 * Print u and exit status.  CORRAL_EXIT_OK: the synopsis, "-h, --help",
 * "--version" and u's option lines on stdout (exit 2 if stdout takes no
 * write); otherwise the synopsis alone on stderr.  Never returns.
 */
void corral_usage(const struct corral_usage *u, int status)
	__attribute__((noreturn));
/* Print "PROGRAM VERSION" on stdout and exit 0.  Never returns. */
void corral_usage_version(const struct corral_usage *u)
	__attribute__((noreturn));
/*
 * --help or --version among the options, as GNU programs take them: an
 * argument anywhere before "--" that is not the value of an option ("-C
 * DIR" in u's option lines takes one, "-j, --junit FILE" too, also as
 * "-CDIR" and "--junit=FILE").  Print u or "PROGRAM VERSION" on stdout
 * and exit 0; without either, return.  Every program calls it (or
 * corral_usage_check_command) first, before its option loop.
 */
void corral_usage_check(const struct corral_usage *u, int argc,
    char *argv[]);
/*
 * The same for a program whose first operand starts a command with
 * arguments of its own (getopt's "+"): the options end there.
 */
void corral_usage_check_command(const struct corral_usage *u, int argc,
    char *argv[]);
/*
 * The option loop of a program whose only option is -h (after
 * corral_usage_check): returns optind; another option, or more than
 * most operands, is a usage error.
 */
int corral_usage_only_h(const struct corral_usage *u, int argc,
    char *argv[], int most);

/* ------------------------------------------------------------------ */
/* xlock.c: a CORRAL_OUT's lock, or exit                               */

/*
 * Hold DIR's lock (inherited, or taken with flags), waiting as
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

#endif /* CORRAL_TOOL_H */
