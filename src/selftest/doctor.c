/* See LICENSE file for copyright and license details. */
/*
 * doctor.c holds the checks of corral-doctor.  Each one does real work
 * with the installed programs -- never the library linked into the
 * doctor -- in a scratch directory, and says in one line what it saw or
 * what is wrong.  A check that needs a program this install does not
 * have (corral-fix, before it is built) is skipped and says so; nothing
 * is ever reported as passing that did not run.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "selftest/selftest.h"

#define MARKER "DEADCANARY"
#define ARGS_MAX 16

/* Append the formatted text to b; return verdict, or -1 on ENOMEM. */
static int __attribute__((format(printf, 3, 4)))
say(struct corral_buf *b, int verdict, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = corral_buf_vaddf(b, fmt, ap) < 0 ? -1 : verdict;
	va_end(ap);
	return rc;
}

/* Say what is wrong (CORRAL_CHECK_FAIL) or what was seen (CORRAL_CHECK_OK). */
#define fail(b, ...) say((b), CORRAL_CHECK_FAIL, __VA_ARGS__)
#define pass(b, ...) say((b), CORRAL_CHECK_OK, __VA_ARGS__)

static int
is_exec(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(path, X_OK) == 0;
}

/*
 * path = d->bindir/name, or, for a helper an install keeps apart, when
 * that is not there, d->bindir/CORRAL_HELPER_DIR/name.  0, 1 when it is
 * the helper's place, or -1.
 */
static int
prog(const struct corral_doctor *d, const char *name, struct corral_buf *path)
{
	corral_buf_reset(path);
	if (corral_buf_addf(path, "%s/%s", d->bindir, name) < 0)
		return -1;
	if (strncmp(name, "corral-", 7) || !corral_command_helper(name + 7) ||
	    is_exec(path->data))
		return 0;
	corral_buf_reset(path);
	return corral_buf_addf(path, "%s/" CORRAL_HELPER_DIR "/%s",
	    d->bindir, name) < 0 ? -1 : 1;
}

/* Write text to d->scratch/rel, making its directory.  0, or -1. */
static int
put(const struct corral_doctor *d, const char *rel, const char *text,
    struct corral_err *err)
{
	return corral_atomic_file_at(d->scratch, rel, text, err);
}

/* The bytes of d->scratch/rel into b (reset first).  0 or -1. */
static int
get(const struct corral_doctor *d, const char *rel, struct corral_buf *b)
{
	struct corral_buf path = CORRAL_BUF_INIT;
	struct corral_err err;
	int rc;

	corral_buf_reset(b);
	rc = corral_buf_addf(&path, "%s/%s", d->scratch, rel);
	if (rc == 0)
		rc = corral_read_file(path.data, b, &err);
	corral_buf_release(&path);
	return rc;
}

/*
 * Run argv in d->scratch, stdout into capture (or, with capture NULL,
 * stdout and stderr into d->scratch/last.out).  Returns its exit status,
 * or -1 after saying in detail that it could not run or was killed (or
 * on ENOMEM).
 */
static int
run(const struct corral_doctor *d, const char *const *argv,
    struct corral_buf *capture, struct corral_buf *detail)
{
	struct corral_buf out = CORRAL_BUF_INIT;
	struct corral_spawn s = { argv, NULL, NULL, NULL, capture };
	struct corral_err err;
	int wstatus, rc;

	s.dir = d->scratch;
	if (!capture && corral_buf_addf(&out, "%s/last.out", d->scratch) < 0)
		return -1;
	s.out = out.data;
	if (capture)
		corral_buf_reset(capture);
	rc = corral_spawn_run(&s, &wstatus, &err);
	corral_buf_release(&out);
	if (rc < 0) {
		fail(detail, "%s%s%s", err.msg, err.errnum ? ": " : "",
		    err.errnum ? strerror(err.errnum) : "");
		return -1;
	}
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	fail(detail, "'%s' died of ", argv[0]);
	corral_proc_describe(detail, wstatus, 0);
	return -1;
}

/*
 * Run the program NAME of the install with the arguments that follow,
 * up to a NULL; see run.
 */
static int __attribute__((sentinel))
run_prog(const struct corral_doctor *d, struct corral_buf *capture,
    struct corral_buf *detail, const char *name, ...)
{
	struct corral_buf path = CORRAL_BUF_INIT;
	const char *argv[ARGS_MAX + 2];
	va_list ap;
	int n = 1, st = -1;

	va_start(ap, name);
	while (n <= ARGS_MAX && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	if (prog(d, name, &path) >= 0) {
		argv[0] = path.data;
		st = run(d, argv, capture, detail);
	}
	corral_buf_release(&path);
	return st;
}

/*
 * ": LINE" appended to detail, LINE being the first line of the file at
 * path that is not progress (indented) or a rule of '=': in make's
 * output, the cause rather than the "Error 2" lines that follow it.
 */
static int
say_cause(const char *path, struct corral_buf *detail)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_err err;
	char *line, *nl;
	int rc = 0;

	if (corral_read_file(path, &b, &err) < 0 || !b.len)
		goto out;
	for (line = b.data; line && *line; line = nl ? nl + 1 : NULL) {
		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		if (*line && *line != ' ' && *line != '=') {
			rc = corral_buf_addf(detail, ": %s", line);
			break;
		}
	}
out:
	corral_buf_release(&b);
	return rc;
}

/* The cause the last run printed, appended to detail. */
static int
say_output(const struct corral_doctor *d, struct corral_buf *detail)
{
	struct corral_buf path = CORRAL_BUF_INIT;
	int rc;

	if ((rc = corral_buf_addf(&path, "%s/last.out", d->scratch)) == 0)
		rc = say_cause(path.data, detail);
	corral_buf_release(&path);
	return rc;
}

/* ---- the programs are here and of one version ---------------------- */

/*
 * What is wrong with one program, said in problems ("; " between two).
 * Returns 1 when it is fine (or, when not required, absent), 0 when not,
 * -1 on ENOMEM.
 */
static int
program_ok(const char *path, const char *name, int required,
    struct corral_buf *problems)
{
	struct corral_buf v = CORRAL_BUF_INIT;
	struct corral_err err;
	const char *sep = problems->len ? "; " : "";
	int found, rc = 0;

	if (!is_exec(path)) {
		if (!required)
			return 1;
		return fail(problems, "%s%s is missing", sep, name);
	}
	if ((found = corral_version_read(path, &v, &err)) < 0)
		rc = fail(problems, "%s%s", sep, err.msg);
	else if (!found && required)
		rc = fail(problems, "%s%s carries no corral version", sep, name);
	else if (found && strcmp(v.data, CORRAL_VERSION))
		rc = fail(problems, "%s%s is corral %s, not %s", sep, name,
		    v.data, CORRAL_VERSION);
	else
		rc = 1;
	corral_buf_release(&v);
	return rc;
}

/*
 * Every corral-* beside us that is no command of the table (corral-fix,
 * before the table lists it; a user's own helper) must be of our version
 * if it carries one.  Adds the programs of ours to *n.  1, 0 or -1.
 */
static int
others_ok(const struct corral_doctor *d, struct corral_buf *problems,
    size_t *n)
{
	struct corral_buf path = CORRAL_BUF_INIT, v = CORRAL_BUF_INIT;
	struct corral_err err;
	struct dirent *de;
	int rc = 1, one;
	DIR *dir;

	if (!(dir = opendir(d->bindir)))
		return fail(problems, "cannot open '%s': %s", d->bindir,
		    strerror(errno));
	while (rc >= 0 && (de = readdir(dir))) {
		if (strncmp(de->d_name, "corral-", 7) ||
		    corral_command_find(de->d_name + 7))
			continue;
		if (prog(d, de->d_name, &path) < 0 ||
		    (one = program_ok(path.data, de->d_name, 0, problems)) < 0) {
			rc = -1;
			break;
		}
		corral_buf_reset(&v);
		*n += one && corral_version_read(path.data, &v, &err) == 1;
		rc = one ? rc : 0;
	}
	closedir(dir);
	corral_buf_release(&path);
	corral_buf_release(&v);
	return rc;
}

static int
check_programs(const struct corral_doctor *d, struct corral_buf *detail)
{
	const struct corral_command *c;
	struct corral_buf path = CORRAL_BUF_INIT, name = CORRAL_BUF_INIT;
	size_t n = 0;
	int ok = 1, one, apart = 0;

	/* corral itself, then corral-NAME for every command of the table */
	for (c = corral_commands - 1, one = 0; one >= 0 &&
	    (c < corral_commands || c->name); c++) {
		corral_buf_reset(&name);
		if (corral_buf_addf(&name, "corral%s%s",
		    c < corral_commands ? "" : "-",
		    c < corral_commands ? "" : c->name) < 0 ||
		    (apart = prog(d, name.data, &path)) < 0)
			one = -1;
		else if ((one = program_ok(path.data, name.data, 1, detail)) > 0)
			n += !apart;	/* the helpers are counted apart */
		ok &= one > 0;
	}
	if (one >= 0 && (one = others_ok(d, detail, &n)) == 0)
		ok = 0;
	corral_buf_release(&path);
	corral_buf_release(&name);
	if (one < 0)
		return -1;
	if (!ok)
		return fail(detail, " (in %s)", d->bindir);
	return pass(detail, "%zu programs in %s, all corral %s", n,
	    d->bindir, CORRAL_VERSION);
}

/* ---- GNU Make ------------------------------------------------------- */

static int
check_make(const struct corral_doctor *d, struct corral_buf *detail)
{
	const char *argv[] = { d->make, "--version", NULL };
	struct corral_buf out = CORRAL_BUF_INIT;
	int major = 0, minor = 0, st, rc;
	char *nl;

	if ((st = run(d, argv, &out, detail)) < 0) {
		rc = CORRAL_CHECK_FAIL;
		goto out;
	}
	if ((nl = out.data ? strchr(out.data, '\n') : NULL))
		*nl = '\0';
	if (st != 0 || !out.data ||
	    sscanf(out.data, "GNU Make %d.%d", &major, &minor) != 2)
		rc = fail(detail, "'%s' is not GNU Make: %s", d->make,
		    out.data ? out.data : "it printed nothing");
	else if (major < 4)
		rc = fail(detail, "GNU Make %d.%d is too old; corral.mk needs "
		    "4.0 or later", major, minor);
	else
		rc = pass(detail, "%s; corral.mk needs 4.0 or later",
		    out.data);
out:
	corral_buf_release(&out);
	return rc;
}

/* ---- corral.mk is found and included -------------------------------- */

/* The programs corral.mk runs, from what the probe printed. */
static int
mk_programs(const struct corral_doctor *d, const char *bin,
    struct corral_buf *detail)
{
	struct corral_buf path = CORRAL_BUF_INIT;
	int rc;

	if (!*bin)
		return pass(detail, "'%s' is included; it finds no programs "
		    "beside it and will run those on PATH", d->mk);
	if (corral_buf_addf(&path, "%s/corral-run-slice", bin) < 0)
		return -1;
	rc = program_ok(path.data, path.data, 1, detail);
	corral_buf_release(&path);
	if (rc < 0)
		return -1;
	if (rc == 0)
		return fail(detail, ", so a project that includes '%s' cannot "
		    "run", d->mk);
	return pass(detail, "'%s' is included; it runs the corral %s "
	    "programs in %s", d->mk, CORRAL_VERSION, bin);
}

static int
check_mk(const struct corral_doctor *d, struct corral_buf *detail)
{
	static const char probe[] = "corral-doctor-probe:1:";
	const char *argv[] = { d->make, "-s", "-C", "mk", "probe", NULL };
	struct corral_buf text = CORRAL_BUF_INIT, out = CORRAL_BUF_INIT;
	struct corral_err err;
	char *line, *nl;
	int st, rc = -1;

	if (!d->mk)
		return fail(detail, "corral.mk not found; looked for %s",
		    d->mk_tried);
	if (corral_buf_addf(&text, "CORRAL_UNITS = probe\nCORRAL_CMD = true\n"
	    "include %s\nprobe:\n\t@echo 'corral-doctor-probe:"
	    "$(__corral_included):$(if $(CORRAL_BIN),$(abspath "
	    "$(CORRAL_BIN)))'\n", d->mk) < 0)
		goto out;
	if (put(d, "mk/Makefile", text.data, &err) < 0) {
		rc = fail(detail, "%s", err.msg);
		goto out;
	}
	if ((st = run(d, argv, NULL, detail)) < 0) {
		rc = CORRAL_CHECK_FAIL;
		goto out;
	}
	if (get(d, "last.out", &out) < 0)
		goto out;
	line = out.data ? strstr(out.data, probe) : NULL;
	if (st != 0 || !line) {
		rc = fail(detail, "a Makefile that includes '%s' failed (exit "
		    "%d)", d->mk, st);
		if (rc == CORRAL_CHECK_FAIL && say_output(d, detail) < 0)
			rc = -1;
		goto out;
	}
	line += strlen(probe);
	if ((nl = strchr(line, '\n')))
		*nl = '\0';
	rc = mk_programs(d, line, detail);
out:
	corral_buf_release(&text);
	corral_buf_release(&out);
	return rc;
}

/* ---- corral-split --------------------------------------------------- */

/*
 * Read slice k of split/slices into seen.  Returns its size; -2 when it
 * is missing or repeats a unit (said in detail); -1 on ENOMEM.
 */
static long
read_slice(const struct corral_doctor *d, int k, struct corral_set *seen,
    struct corral_buf *detail)
{
	struct corral_buf rel = CORRAL_BUF_INIT, b = CORRAL_BUF_INIT;
	char *line, *nl;
	long n = -1;
	int put_rc;

	if (corral_buf_addf(&rel, "split/slices/%d.units", k) < 0)
		goto out;
	if (get(d, rel.data, &b) < 0) {
		n = fail(detail, "slice %d is missing", k) < 0 ? -1 : -2;
		goto out;
	}
	for (line = b.data, n = 0; line && (nl = strchr(line, '\n'));
	    line = nl + 1) {
		*nl = '\0';
		if ((put_rc = corral_set_put(seen, line, k, NULL)) <= 0) {
			n = put_rc < 0 ? -1 : fail(detail, "unit '%s' is in two "
			    "slices", line) < 0 ? -1 : -2;
			goto out;
		}
		n++;
	}
out:
	corral_buf_release(&rel);
	corral_buf_release(&b);
	return n;
}

static int
slice_exists(const struct corral_doctor *d, int k)
{
	struct corral_buf path = CORRAL_BUF_INIT;
	int rc;

	rc = corral_buf_addf(&path, "%s/split/slices/%d.units", d->scratch,
	    k) == 0 && access(path.data, F_OK) == 0;
	corral_buf_release(&path);
	return rc;
}

static int
check_split(const struct corral_doctor *d, struct corral_buf *detail)
{
	struct corral_set *seen;
	struct corral_err err;
	long size[3];
	int k, st, rc = CORRAL_CHECK_OK;

	if (put(d, "split/units", "u0\nu1\nu2\nu3\nu4\nu5\nu6\nu7\nu8\nu9\n",
	    &err) < 0)
		return fail(detail, "%s", err.msg);
	if ((st = run_prog(d, NULL, detail, "corral-split", "-n", "3", "-o",
	    "split/slices", "split/units", NULL)) != 0) {
		if (st < 0)
			return CORRAL_CHECK_FAIL;
		if ((rc = fail(detail, "corral-split -n 3 exited %d", st)) ==
		    CORRAL_CHECK_FAIL && say_output(d, detail) < 0)
			rc = -1;
		return rc;
	}
	if (!(seen = corral_set_new()))
		return -1;
	for (k = 0; k < 3 && rc == CORRAL_CHECK_OK; k++)
		if ((size[k] = read_slice(d, k, seen, detail)) < 0)
			rc = size[k] == -1 ? -1 : CORRAL_CHECK_FAIL;
	if (rc == CORRAL_CHECK_OK && corral_set_size(seen) != 10)
		rc = fail(detail, "10 units came back as %zu",
		    corral_set_size(seen));
	else if (rc == CORRAL_CHECK_OK && slice_exists(d, 3))
		rc = fail(detail, "corral-split -n 3 made a fourth slice");
	else if (rc == CORRAL_CHECK_OK)
		rc = pass(detail, "10 units -> 3 disjoint slices of %ld, %ld "
		    "and %ld; none lost, none twice", size[0], size[1],
		    size[2]);
	corral_set_free(seen);
	return rc;
}

/* ---- a real fan-out --------------------------------------------------- */

/* What is wrong with the fan-out's result, said in detail; 1 if nothing. */
static int
fanout_ok(const struct corral_tour_result *r, struct corral_buf *detail)
{
	if (!WIFEXITED(r->wstatus) || WEXITSTATUS(r->wstatus) == 0)
		return fail(detail, "make -j3 corral-run ended with %s, not "
		    "the failure status a failed unit must give",
		    WIFEXITED(r->wstatus) ? "exit 0" : "a signal");
	/* no history: CORRAL_AGENTS=3 runs 3 at once over a slice a unit */
	if (r->logs != 7 || r->unfinished)
		return fail(detail, "expected 7 agent logs (a slice a unit), "
		    "found %zu (and %zu unfinished)", r->logs, r->unfinished);
	if (r->passed != 6 || r->failed != 1 ||
	    strcmp(r->failed_units.v[0], "u3"))
		return fail(detail, "expected 6 passed and u3 failed, found "
		    "%zu passed and %zu failed", r->passed, r->failed);
	if (r->once != 7 || r->twice || r->stray || r->bad)
		return fail(detail, "expected each of 7 units exactly once, "
		    "found %zu once, %zu more than once, %zu not expected, "
		    "%zu bad lines", r->once, r->twice, r->stray, r->bad);
	if (r->isolated != 7)
		return fail(detail, "only %zu of 7 checks saw a clone holding "
		    "just their agent's checks", r->isolated);
	if (r->leftovers)
		return fail(detail, "%zu clone(s) left behind", r->leftovers);
	return 1;
}

static int
check_fanout(const struct corral_doctor *d, struct corral_buf *detail)
{
	static const char *const names[] = {
		"u1", "u2", "u3", "u4", "u5", "u6", "u7", NULL
	};
	struct corral_strv units = CORRAL_STRV_INIT, failing = CORRAL_STRV_INIT;
	struct corral_buf dir = CORRAL_BUF_INIT;
	struct corral_tour t = { 0 };
	struct corral_tour_result r;
	struct corral_err err;
	size_t i;
	int rc = -1;

	if (!d->mk)
		return fail(detail, "corral.mk not found; looked for %s",
		    d->mk_tried);
	for (i = 0; names[i]; i++)
		if (corral_strv_add(&units, names[i]) < 0)
			goto out;
	if (corral_strv_add(&failing, "u3") < 0 ||
	    corral_buf_addf(&dir, "%s/fanout", d->scratch) < 0)
		goto out;
	t.dir = dir.data;
	t.mk = d->mk;
	t.bindir = d->bindir;
	t.make = d->make;
	t.units = &units;
	t.failing = &failing;
	t.agents = 3;
	if (corral_tour_run(&t, &r, &err) < 0)
		rc = fail(detail, "%s", err.msg);
	else if ((rc = fanout_ok(&r, detail)) == 1)
		rc = pass(detail, "7 units -> 7 slices, 3 agents at a time -> "
		    "7 logs -> 6 passed / "
		    "1 failed (u3), merged once, each unit exactly once, each "
		    "clone holding only its agent's checks");
	else if (rc == CORRAL_CHECK_FAIL &&
	    say_cause(r.makeout, detail) < 0)
		rc = -1;
	corral_tour_release(&r);
out:
	corral_strv_release(&units);
	corral_strv_release(&failing);
	corral_buf_release(&dir);
	return rc;
}

/* ---- the scoreboard of that run ------------------------------------- */

static int
check_scoreboard(const struct corral_doctor *d, struct corral_buf *detail)
{
	static const char want[] = "7 units  ->  6 successes, 1 failure";
	struct corral_buf out = CORRAL_BUF_INIT;
	int st, rc;

	if ((st = run_prog(d, &out, detail, "corral-scoreboard",
	    "fanout/.corral", NULL)) < 0)
		rc = CORRAL_CHECK_FAIL;
	else if (st != 0 || !out.data || !strstr(out.data, want))
		rc = fail(detail, "corral-scoreboard exited %d without "
		    "\"%s\"", st, want);
	else
		rc = pass(detail, "%s, tallied by verdict", want);
	corral_buf_release(&out);
	return rc;
}

/* ---- the repair half, when corral fix is installed ----------------- */

static const char planted[] = "# " MARKER ": this test cannot fail\n";
static const char healthy[] = "print('healthy')\n";
static const char newer[] = "# somebody's newer work\n";

/* 1 when d->scratch/rel holds text (or, with text NULL, no marker). */
static int
holds(const struct corral_doctor *d, const char *rel, const char *text)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	int rc;

	if (get(d, rel, &b) < 0)
		rc = 0;
	else if (text)
		rc = b.data && !strcmp(b.data, text);
	else
		rc = !b.data || !strstr(b.data, MARKER);
	corral_buf_release(&b);
	return rc;
}

/* 1 when corral-fix is not beside us (said in detail), 0, or -1. */
static int
fix_missing(const struct corral_doctor *d, struct corral_buf *detail)
{
	struct corral_buf path = CORRAL_BUF_INIT;
	int missing;

	if (prog(d, "corral-fix", &path) < 0)
		return -1;
	missing = !is_exec(path.data);
	corral_buf_release(&path);
	if (missing && corral_buf_addstr(detail, "corral fix is not "
	    "installed") < 0)
		return -1;
	return missing;
}

/*
 * How many findings the finder prints for fix/; -1 when it failed (said
 * in detail), -2 on ENOMEM.
 */
static int
findings(const struct corral_doctor *d, struct corral_buf *detail)
{
	struct corral_buf out = CORRAL_BUF_INIT;
	char *p;
	int st, n = 0;

	st = run_prog(d, &out, detail, "corral-marker-find", "fix", NULL);
	for (p = out.data; st == 0 && p && (p = strchr(p, '\n')); p++)
		n++;
	corral_buf_release(&out);
	if (st > 0)
		return fail(detail, "corral-marker-find exited %d", st) < 0 ?
		    -2 : -1;
	return st < 0 ? -1 : n;
}

static int
check_fix(const struct corral_doctor *d, struct corral_buf *detail)
{
	struct corral_err err;
	int st, n;

	if ((st = fix_missing(d, detail)) != 0)
		return st < 0 ? -1 : CORRAL_CHECK_SKIP;
	if (put(d, "fix/bad.py", planted, &err) < 0 ||
	    put(d, "fix/good.py", healthy, &err) < 0)
		return fail(detail, "%s", err.msg);
	if ((n = findings(d, detail)) < 0)
		return n == -1 ? CORRAL_CHECK_FAIL : -1;
	if (n != 1)
		return fail(detail, "the finder saw %d defects, not the 1 "
		    "planted", n);
	if ((st = run_prog(d, NULL, detail, "corral-fix", "fix", NULL)) != 1 ||
	    !holds(d, "fix/bad.py", planted))
		return st < 0 ? CORRAL_CHECK_FAIL : fail(detail, "the dry run "
		    "did not hold (exit %d)", st);
	if ((st = run_prog(d, NULL, detail, "corral-fix", "-a", "fix",
	    NULL)) != 0 || !holds(d, "fix/bad.py", NULL) ||
	    !holds(d, "fix/good.py", healthy))
		return st < 0 ? CORRAL_CHECK_FAIL : fail(detail, "corral fix -a "
		    "did not repair just the defect (exit %d)", st);
	if ((n = findings(d, detail)) < 0)
		return n == -1 ? CORRAL_CHECK_FAIL : -1;
	if (n != 0)
		return fail(detail, "the finder still sees %d defects", n);
	return pass(detail, "1 planted defect: the dry run held, the real "
	    "run repaired it, the finder agrees");
}

static int
check_bundle(const struct corral_doctor *d, struct corral_buf *detail)
{
	struct corral_err err;
	int st;

	if ((st = fix_missing(d, detail)) != 0)
		return st < 0 ? -1 : CORRAL_CHECK_SKIP;
	if (put(d, "bundle/src/pkg/bad.py", planted, &err) < 0 ||
	    put(d, "bundle/dst/pkg/bad.py", planted, &err) < 0)
		return fail(detail, "%s", err.msg);
	if ((st = run_prog(d, NULL, detail, "corral-fix", "-b", "bundle/B",
	    "bundle/src", NULL)) != 1 ||
	    !holds(d, "bundle/src/pkg/bad.py", planted))
		return st < 0 ? CORRAL_CHECK_FAIL : fail(detail, "a dry run "
		    "with -b did not leave the source alone (exit %d)", st);
	if ((st = run_prog(d, NULL, detail, "corral-bundle", "apply", "-a",
	    "-A", "pkg", "bundle/B", "bundle/dst", NULL)) != 0 ||
	    !holds(d, "bundle/dst/pkg/bad.py", NULL))
		return st < 0 ? CORRAL_CHECK_FAIL : fail(detail, "the bundle's "
		    "pkg area did not repair a second copy (exit %d)", st);
	if (put(d, "bundle/dst/pkg/bad.py", newer, &err) < 0)
		return fail(detail, "%s", err.msg);
	if ((st = run_prog(d, NULL, detail, "corral-bundle", "apply", "-a",
	    "-A", "pkg", "bundle/B", "bundle/dst", NULL)) != 1 ||
	    !holds(d, "bundle/dst/pkg/bad.py", newer))
		return st < 0 ? CORRAL_CHECK_FAIL : fail(detail, "the bundle "
		    "was not refused on a changed target (exit %d)", st);
	return pass(detail, "labelled pkg, applied to a second copy, then "
	    "refused on a changed target");
}

/* ---- the sandbox ------------------------------------------------------ */

/* A unit that makes a file in its clone and tries one above it. */
static const char sandboxed[] = "echo made > made && "
    "! echo escaped > ../../src/f 2> /dev/null";

/*
 * Whether CORRAL_SANDBOX=bwrap works here: a real sandboxed unit.  A
 * sandbox that cannot start is a skip, saying why, since a run without
 * it does not need it; one that lets a unit write outside its clone fails.
 */
static int
check_sandbox(const struct corral_doctor *d, struct corral_buf *detail)
{
	struct corral_buf why = CORRAL_BUF_INIT;
	struct corral_err err;
	int st, rc;

	if (put(d, "sandbox/src/f", "x\n", &err) < 0 ||
	    put(d, "sandbox/slice", "u\n", &err) < 0)
		return fail(detail, "%s", err.msg);
	st = run_prog(d, NULL, detail, "corral-run-slice", "-X", "bwrap", "-C",
	    "sandbox/src", "-p", "f", "-w", "sandbox/work", "-l",
	    "sandbox/logs", "-c", sandboxed, "K", "sandbox/slice", NULL);
	if (st < 0)
		return CORRAL_CHECK_FAIL;
	if (st == CORRAL_EXIT_ERR) {
		rc = corral_buf_addstr(&why, "CORRAL_SANDBOX=bwrap would stop "
		    "a run") | say_output(d, &why);
		rc = rc < 0 || corral_buf_addstr(detail, why.data) < 0 ? -1 :
		    CORRAL_CHECK_SKIP;
		corral_buf_release(&why);
		return rc;
	}
	if (st != 0 || !holds(d, "sandbox/src/f", "x\n"))
		return fail(detail, "a sandboxed unit wrote outside its clone "
		    "(exit %d)", st);
	return pass(detail, "bwrap: a unit wrote its clone, and nothing "
	    "outside it");
}

const struct corral_doctor_check corral_doctor_checks[] = {
	{ "the programs are here, all of one version", check_programs },
	{ "GNU Make is new enough", check_make },
	{ "corral.mk is found, and a Makefile can include it", check_mk },
	{ "corral-split cuts disjoint, complete slices", check_split },
	{ "a real fan-out through make -j3 corral-run isolates each agent "
	    "and merges once", check_fanout },
	{ "the scoreboard reads that run back", check_scoreboard },
	{ "a planted defect is repaired, and a dry run does not touch it",
	    check_fix },
	{ "a verified repair is bundled, applied to another copy, and "
	    "refused on a moved target", check_bundle },
	{ "CORRAL_SANDBOX=bwrap keeps a unit in its clone", check_sandbox },
	{ NULL, NULL }
};
