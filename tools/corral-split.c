/* See LICENSE file for copyright and license details. */
/*
 * corral-split cuts a population into N disjoint, balanced slices.  It
 * reads units (one per line, or NUL-separated with -0) from FILE or stdin
 * and writes DIR/K.units for K = 0 .. n-1, each atomically and only when
 * its content changed, so Make sees an unchanged slice as up to date.
 * The files of slices left from a larger earlier plan (their units and
 * estimates, and what corral.mk made of them beside them: DIR/K.units,
 * .est, .parts, .manifest, .pass) are removed, and with -l the logs their
 * agents wrote, LOGDIR/agent-K.*: the one place stale slices go.  Without
 * -o, or with -j, the plan is printed as JSON: {"0":[units...],"1":[...]}.
 *
 * -s picks the strategy: round-robin (the original's, and the default),
 * weighted (longest processing time first over durations learned from the
 * history file of -H; file sizes under -C when there is none), or auto
 * (weighted when the history knows a unit, else round-robin); -L prints
 * their names, strategy.c's table, for corral.mk.  A weighted
 * plan says on stderr how many units were estimated; with -o, DIR/plan.json
 * describes the plan and DIR/K.est the expected milliseconds of each unit.
 *
 * -n auto cuts as many slices as the population calls for
 * (corral_split_auto), never as many as run at once.  With -F, -n N
 * says how many run at once (corral.mk passes it): auto without history
 * cuts finer when a slice would hold more than two units
 * (corral_split_blind), and the line on stderr says so.  The slice files
 * are made again whenever they are missing, so they are never fsynced.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

static void more(FILE *fp);

static const struct corral_usage use = {
	"corral-split [-0Fhjq] [-C DIR] [-H HISTORY] [-l LOGDIR] [-o DIR] "
	"[-s STRATEGY] -n N|auto [FILE]\n"
	"corral-split -L",
	"-0\tunits are NUL-separated\n"
	"-C DIR\tthe tree the units are paths in (weighted)\n"
	"-F\tN is how many run at once: auto without history cuts finer\n"
	"-H HISTORY\ta history of durations (weighted)\n"
	"-j\tprint the plan as JSON also with -o\n"
	"-L\tprint the names of the strategies, one per line, and exit\n"
	"-l LOGDIR\twith -o, remove the logs of stale slices in LOGDIR\n"
	"-n N|auto\tthe number of slices, or as the population calls for\n"
	"-o DIR\twrite the slice files in DIR\n"
	"-q\tno line saying what the plan rests on (warnings stay)\n"
	"-s STRATEGY\thow to cut (below; default: the first)",
	more
};

/* --help: the strategies, from their table. */
static void
more(FILE *fp)
{
	const struct corral_strategy *s;

	fputs("strategies:\n", fp);
	for (s = corral_strategies; s->name; s++)
		fprintf(fp, "  %-14s %s\n", s->name, s->what);
}

/* -L: the names alone, for corral.mk's check of CORRAL_SPLIT. */
static void
list_strategies(void)
{
	const struct corral_strategy *s;

	for (s = corral_strategies; s->name; s++)
		puts(s->name);
	xflush_stdout();
	exit(CORRAL_EXIT_OK);
}

/* Append one line of a slice file about unit to b: 0, or -1 (ENOMEM). */
typedef int line_fn(struct corral_buf *b, const struct corral_plan *p,
    const char *unit, int sep);

/* A line of DIR/K.units: the unit, ended by sep. */
static int
unit_line(struct corral_buf *b, const struct corral_plan *p,
    const char *unit, int sep)
{
	(void)p;
	return corral_buf_addstr(b, unit) < 0 ? -1 : corral_buf_addch(b, sep);
}

/* A line of DIR/K.est: the unit's expected milliseconds. */
static int
estimate_line(struct corral_buf *b, const struct corral_plan *p,
    const char *unit, int sep)
{
	(void)sep;
	return corral_buf_addf(b, "%lld\n", corral_plan_weight(p, unit));
}

/* body at path, atomically, and only when it changed. */
static void
write_file(const char *path, const struct corral_buf *body)
{
	struct corral_err err;

	if (corral_atomic_file(path, body->data, body->len,
	    CORRAL_ATOMIC_KEEP_SAME | CORRAL_ATOMIC_NO_SYNC, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
}

/* DIR/K.EXT for every slice K of p, a line of each unit in order. */
static void
write_per_slice(const char *dir, const struct corral_plan *p,
    const char *ext, line_fn *line, int sep)
{
	struct corral_buf path = CORRAL_BUF_INIT, body = CORRAL_BUF_INIT;
	struct corral_err err;
	size_t k, i;

	if (corral_mkdir_p(dir, 0777, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	for (k = 0; k < p->n; k++) {
		corral_buf_reset(&path);
		corral_buf_reset(&body);
		if (corral_buf_addf(&path, "%s/%zu.%s", dir, k, ext) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
		for (i = 0; i < p->slices[k].n; i++)
			if (line(&body, p, p->slices[k].v[i], sep) < 0)
				corral_die(CORRAL_EXIT_ERR, "out of memory:");
		write_file(path.data, &body);
	}
	corral_buf_release(&path);
	corral_buf_release(&body);
}

/*
 * The files of slice K in the slice directory: its units and estimates,
 * and what corral.mk makes of them beside them.
 */
static const char *const slice_files[] = {
	".units", ".est", ".parts", ".manifest", ".pass", NULL
};

/* Whether name is one of names (NULL: none, or any that starts with '.'). */
static int
one_of(const char *name, const char *const *names)
{
	if (!names)
		return !*name || *name == '.';
	for (; *names; names++)
		if (!strcmp(name, *names))
			return 1;
	return 0;
}

/*
 * Remove every dir/PREFIX K SUFFIX, SUFFIX one of suffixes (NULL: none
 * or any ".*"), for K >= n (a slice of an earlier, larger plan), and with
 * drop_est every dir/K.est too; a directory (an agent's captured output)
 * goes with all it holds.  A dir that does not exist holds nothing to
 * remove.
 */
static void
remove_stale(const char *dir, const char *prefix,
    const char *const *suffixes, size_t n, int drop_est)
{
	struct corral_buf path = CORRAL_BUF_INIT;
	size_t plen = strlen(prefix);
	struct corral_err err;
	struct dirent *de;
	struct stat st;
	unsigned long k;
	char *end;
	DIR *d;

	if (!(d = opendir(dir))) {
		if (errno == ENOENT)
			return;
		corral_die(CORRAL_EXIT_ERR, "cannot open '%s':", dir);
	}
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, prefix, plen) ||
		    de->d_name[plen] < '0' || de->d_name[plen] > '9')
			continue;
		errno = 0;
		k = strtoul(de->d_name + plen, &end, 10);
		if (errno || !one_of(end, suffixes) ||
		    (k < n && !(drop_est && !strcmp(end, ".est"))))
			continue;
		corral_buf_reset(&path);
		if (corral_buf_addf(&path, "%s/%s", dir, de->d_name) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
		if (lstat(path.data, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (corral_remove_tree(path.data, &err) < 0)
				corral_die_err(CORRAL_EXIT_ERR, &err);
		} else if (unlink(path.data) < 0 && errno != ENOENT)
			corral_die(CORRAL_EXIT_ERR, "cannot remove '%s':",
			    path.data);
	}
	closedir(d);
	corral_buf_release(&path);
}

static void
print_plan(struct corral_strv *slices, size_t n)
{
	struct corral_buf out = CORRAL_BUF_INIT;
	size_t k;
	int rc = corral_buf_addch(&out, '{');

	for (k = 0; k < n && rc == 0; k++) {
		rc |= corral_buf_addf(&out, "%s\"%zu\":", k ? "," : "", k);
		rc |= corral_strv_json(&out, &slices[k]);
	}
	rc |= corral_buf_addstr(&out, "}\n");
	xprint_buf(&out, rc);
}

/* DIR/plan.json: what the plan is made of, for people and benchmarks. */
static void
write_plan_json(const char *dir, const struct corral_plan *p)
{
	struct corral_buf path = CORRAL_BUF_INIT, b = CORRAL_BUF_INIT;

	if (corral_plan_json(p, &b) < 0 ||
	    corral_buf_addf(&path, "%s/plan.json", dir) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	write_file(path.data, &b);
	corral_buf_release(&path);
	corral_buf_release(&b);
}

/* Say what a weighted plan rests on, and how much of it is a guess. */
static void
say_plan(const struct corral_plan *p, const char *history, int quiet)
{
	size_t guessed = p->units->n - p->wt.nknown;

	if (p->wt.unreadable)
		corral_warn("'%s': %zu line(s) are not records; skipped",
		    history, p->wt.unreadable);
	if (quiet)
		return;
	if (!strcmp(p->strategy, "roundrobin") && p->asked)
		corral_warn("round-robin plan: %zu units over %zu slices, not "
		    "%ld: no history of these units", p->units->n, p->n,
		    p->asked);
	else if (!strcmp(p->strategy, "roundrobin"))
		corral_warn("round-robin plan: %zu units over %zu slices; no "
		    "history of these units", p->units->n, p->n);
	else if (p->wt.kind == CORRAL_WEIGHTS_BYTES)
		corral_warn("weighted plan by file size (no history): %zu "
		    "units over %zu slices, all %zu estimated", p->units->n,
		    p->n, p->units->n);
	else if (!guessed)
		corral_warn("weighted plan from history: %zu units over %zu "
		    "slices, every unit's duration known", p->units->n, p->n);
	else
		corral_warn("weighted plan from history: %zu units over %zu "
		    "slices, %zu estimated as %lld ms (the median of %zu "
		    "known)", p->units->n, p->n, guessed, p->wt.median,
		    p->wt.nknown);
}

static const struct corral_strategy *
parse_strategy(const char *s)
{
	const struct corral_strategy *st;
	struct corral_err err;

	if (!(st = corral_strategy_find(s, "-s", &err)))
		corral_die_err(CORRAL_EXIT_ERR, &err);
	return st;
}

int
main(int argc, char *argv[])
{
	struct corral_plan p;
	struct corral_strv units = CORRAL_STRV_INIT;
	struct corral_err err;
	const struct corral_strategy *strategy = corral_strategies;
	const char *dir = NULL, *nstr = NULL, *history = NULL, *srcdir = NULL;
	const char *logdir = NULL;
	int c, sep = '\n', json = 0, chosen = 0, quiet = 0;
	unsigned flags = 0;
	long long nslices = 0;

	corral_setprogname(argv[0]);
	corral_usage_check(&use, argc, argv);
	while ((c = getopt(argc, argv, "0C:FhH:jLl:n:o:qs:")) != -1) {
		switch (c) {
		case '0': sep = '\0'; break;
		case 'C': srcdir = optarg; break;
		case 'F': flags |= CORRAL_PLAN_FINER; break;
		case 'h': corral_usage(&use, CORRAL_EXIT_OK); break;
		case 'H': history = optarg; break;
		case 'j': json = 1; break;
		case 'L': list_strategies(); break;
		case 'l': logdir = optarg; break;
		case 'n': nstr = optarg; break;
		case 'o': dir = optarg; break;
		case 'q': quiet = 1; break;
		case 's': strategy = parse_strategy(optarg), chosen = 1; break;
		default: corral_usage(&use, CORRAL_EXIT_ERR);
		}
	}
	if (!nstr || argc - optind > 1 || (logdir && !dir))
		corral_usage(&use, CORRAL_EXIT_ERR);
	if (strcmp(nstr, "auto") && corral_strtonum(nstr, LONG_MIN, LONG_MAX,
	    &nslices, "-n", &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);

	xunits_load(optind < argc ? argv[optind] : "-", sep, &units, 1);
	if (!strcmp(nstr, "auto"))
		nslices = (long long)corral_split_auto(units.n);
	if (corral_plan_make(&p, &units, strategy, history, srcdir,
	    (long)nslices, flags, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	/* the default, the original's round-robin, says nothing */
	if (strategy != corral_strategies && units.n)
		say_plan(&p, history, quiet);
	if (dir) {
		write_per_slice(dir, &p, "units", unit_line, sep);
		if (p.wt.kind == CORRAL_WEIGHTS_MS)
			write_per_slice(dir, &p, "est", estimate_line, sep);
		remove_stale(dir, "", slice_files, p.n,
		    p.wt.kind != CORRAL_WEIGHTS_MS);
		if (logdir)
			remove_stale(logdir, "agent-", NULL, p.n, 0);
		if (chosen)
			write_plan_json(dir, &p);
	}
	if (!dir || json)
		print_plan(p.slices, p.n);
	corral_plan_release(&p);
	corral_strv_release(&units);
	xflush_stdout();
	return CORRAL_EXIT_OK;
}
