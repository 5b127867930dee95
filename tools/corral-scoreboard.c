/* See LICENSE file for copyright and license details. */
/*
 * corral-scoreboard reads a run's merged results (DIR/successes.jsonl and
 * DIR/failures.jsonl) back into a tally by verdict, the word before the
 * first colon of each note.  It exits 0 when it scored the run, failures
 * or not, and 2 with "COULD NOT TELL" when it could not: no such
 * directory, no result file, no scoreable row, or a line it could not
 * read.  "Found nothing" and "could not look" never read alike.  -f lists
 * the failed units with their notes and outputs, -u prints just their
 * names, one per line (what a re-run of the failures needs), and -j the
 * tally as JSON; -s N ends the text with the N slowest units of the run,
 * and -t N shows, under -f, the last N lines of a failed unit's output;
 * -U FILE writes what -u would print to FILE (written whole) beside any
 * other output, so that one reading of the results gives both.
 * Units that printed TAP add a line counting their tests.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral.h"
#include "tool/tool.h"

static const struct corral_usage use = {
	"corral-scoreboard [-fhju] [-s N] [-t N] [-U FILE] DIR",
	"-f\tadd the failed units, with notes and outputs\n"
	"-j, --json\tprint the tally as JSON\n"
	"-s N\tadd the N slowest units of the last run\n"
	"-t N\twith -f, show the last N lines of each failed unit's output\n"
	"-u\tprint only the names of the failed units\n"
	"-U FILE\twrite the names of the failed units to FILE too",
	NULL
};

static void
print_json(const char *dir, const struct corral_score *s, const char *why)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	const char **order = NULL;
	size_t i;
	int rc = 0;

	if (!why && corral_score_order(s, &order) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	rc |= corral_buf_addstr(&b, "{\"dir\":");
	rc |= corral_buf_addjson(&b, dir, strlen(dir));
	rc |= corral_buf_addf(&b, ",\"units\":%zu,\"successes\":%zu,"
	    "\"failures\":%zu,\"cached\":%zu,\"by_verdict\":{", s->units,
	    s->successes, s->failures, s->cached);
	for (i = 0; order && order[i]; i++) {
		rc |= corral_buf_addstr(&b, i ? "," : "");
		rc |= corral_buf_addjson(&b, order[i], strlen(order[i]));
		rc |= corral_buf_addf(&b, ":%ld", corral_score_count(s,
		    order[i]));
	}
	rc |= corral_buf_addstr(&b, "},\"tests\":");
	if (s->tap_units)
		rc |= corral_buf_addf(&b, "{\"units\":%zu,\"total\":%lld,"
		    "\"failed\":%lld,\"skipped\":%lld}", s->tap_units,
		    s->tests, s->tests_failed, s->tests_skipped);
	else
		rc |= corral_buf_addstr(&b, "null");
	rc |= corral_buf_addstr(&b, ",\"found\":");
	rc |= corral_strv_json(&b, &s->found);
	rc |= corral_buf_addstr(&b, ",\"unreadable\":");
	rc |= corral_strv_json(&b, &s->unreadable);
	rc |= corral_buf_addstr(&b, ",\"failed\":[");
	for (i = 0; i < s->failed_unit.n; i++) {
		rc |= corral_buf_addstr(&b, i ? ",{\"unit\":" : "{\"unit\":");
		rc |= corral_buf_addjson(&b, s->failed_unit.v[i],
		    strlen(s->failed_unit.v[i]));
		rc |= corral_buf_addstr(&b, ",\"note\":");
		rc |= corral_buf_addjson(&b, s->failed_note.v[i],
		    strlen(s->failed_note.v[i]));
		rc |= corral_buf_addstr(&b, ",\"output\":");
		rc |= corral_buf_addjson(&b, s->failed_output.v[i],
		    strlen(s->failed_output.v[i]));
		rc |= corral_buf_addch(&b, '}');
	}
	rc |= corral_buf_addstr(&b, "],\"could_not_tell\":");
	if (why)
		rc |= corral_buf_addjson(&b, why, strlen(why));
	else
		rc |= corral_buf_addstr(&b, "null");
	rc |= corral_buf_addstr(&b, "}\n");
	xprint_buf(&b, rc);
	free(order);
}

/* Notes listed at most, and units named under a note shared by many. */
#define NOTES_SHOWN	20
#define NAMES_SHOWN	3

/* -t N: the lines of a failed unit's output shown under it. */
static long long tail_lines;

/* The last tail_lines lines of the output file path, each after "| ". */
static void
print_tail(const char *path)
{
	struct corral_strv lines = CORRAL_STRV_INIT;
	struct corral_err err;
	size_t i;

	if (tail_lines <= 0)
		return;
	if (corral_output_tail(path, (size_t)tail_lines, &lines, &err) < 0)
		corral_showf(stdout, "      (%s%s%s)\n", err.msg,
		    err.errnum ? ": " : "", err.errnum ? strerror(err.errnum) :
		    "");
	for (i = 0; i < lines.n; i++)
		corral_showf(stdout, "      | %s\n", lines.v[i]);
	corral_strv_release(&lines);
}

/*
 * The failed units grouped by note, in the order each note first came:
 * a note one unit has with that unit and its output, a note many share
 * once, with how many and the first few names; at most NOTES_SHOWN
 * notes, then how many more failures there are and where all of them are.
 */
static void
print_failed(const char *dir, const struct corral_score *s)
{
	size_t *first, *count, nnotes = 0, shown = 0, i, j, k;

	if (!s->failed_unit.n)
		return;
	if (!(first = calloc(s->failed_unit.n, sizeof(*first))) ||
	    !(count = calloc(s->failed_unit.n, sizeof(*count))))
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	for (i = 0; i < s->failed_unit.n; i++) {
		for (j = 0; j < nnotes && strcmp(s->failed_note.v[first[j]],
		    s->failed_note.v[i]); j++)
			;
		if (j == nnotes)
			first[nnotes++] = i;
		count[j]++;
	}
	corral_showf(stdout, "  failed units:\n");
	for (j = 0; j < nnotes && j < NOTES_SHOWN; j++) {
		i = first[j];
		shown += count[j];
		if (count[j] == 1) {
			corral_showf(stdout, "    %s  %s\n", s->failed_unit.v[i],
			    s->failed_note.v[i]);
			if (*s->failed_output.v[i]) {
				corral_showf(stdout, "      output: %s\n",
				    s->failed_output.v[i]);
				print_tail(s->failed_output.v[i]);
			}
			continue;
		}
		corral_showf(stdout, "    %zu units  %s\n      ", count[j],
		    s->failed_note.v[i]);
		for (k = i, i = 0; k < s->failed_unit.n && i < NAMES_SHOWN; k++)
			if (!strcmp(s->failed_note.v[k], s->failed_note.v[first[j]]))
				corral_showf(stdout, "%s%s", i++ ? ", " : "",
				    s->failed_unit.v[k]);
		if (count[j] > NAMES_SHOWN)
			corral_showf(stdout, " and %zu more", count[j] - NAMES_SHOWN);
		corral_showf(stdout, "\n");
	}
	if (shown < s->failed_unit.n)
		corral_showf(stdout, "    ... and %zu more failures with %zu other "
		    "notes: corral-scoreboard -u %s lists every failed unit\n",
		    s->failed_unit.n - shown, nnotes - NOTES_SHOWN, dir);
	free(first);
	free(count);
}

static void
print_text(const char *dir, const struct corral_score *s, const char *why,
    int failed)
{
	const char **order;
	size_t i;

	corral_showf(stdout, "corral scoreboard  %s\n", dir);
	corral_showf(stdout, "========================================================\n");
	if (s->unreadable.n) {
		corral_showf(stdout, "  %zu line(s) could not be read:\n", s->unreadable.n);
		for (i = 0; i < s->unreadable.n && i < 10; i++)
			corral_showf(stdout, "    %s\n", s->unreadable.v[i]);
	}
	if (why) {
		corral_showf(stdout, "  COULD NOT TELL: %s\n", why);
		return;
	}
	corral_showf(stdout, "  %zu unit%s  ->  %zu success%s, %zu failure%s\n", s->units,
	    s->units == 1 ? "" : "s", s->successes,
	    s->successes == 1 ? "" : "es", s->failures,
	    s->failures == 1 ? "" : "s");
	if (s->cached)
		corral_showf(stdout, "  %zu cached: passed before on the same "
		    "inputs, not run again\n", s->cached);
	if (s->tap_units)
		corral_showf(stdout, "  %lld tests in %zu unit%s  ->  %lld passed, %lld "
		    "failed, %lld skipped\n", s->tests, s->tap_units,
		    s->tap_units == 1 ? "" : "s", s->tests -
		    s->tests_failed - s->tests_skipped, s->tests_failed,
		    s->tests_skipped);
	corral_showf(stdout, "  by verdict:\n");
	if (corral_score_order(s, &order) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	for (i = 0; order[i]; i++)
		corral_showf(stdout, "    %-16s %ld\n", order[i], corral_score_count(s,
		    order[i]));
	free(order);
	if (failed)
		print_failed(dir, s);
}

/* -s N: the n slowest units of the run, longest first. */
static void
print_slowest(const char *dir, size_t n)
{
	struct corral_slowest s;
	struct corral_err err;
	char took[32];
	size_t i;

	if (corral_slowest_read(dir, n, &s, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (s.n)
		corral_showf(stdout, "  slowest units:\n");
	for (i = 0; i < s.n; i++) {
		corral_duration_format(s.ms[i], took);
		corral_showf(stdout, "    %8s  %s\n", took, s.unit[i]);
	}
	corral_slowest_release(&s);
}

/* -u: the failed units, one per line; the reason, if any, on stderr. */
static void
print_units(const char *dir, const struct corral_score *s, const char *why)
{
	size_t i;

	(void)dir;
	for (i = 0; i < s->unreadable.n; i++)
		corral_warn("%s", s->unreadable.v[i]);
	if (why) {
		corral_warn("COULD NOT TELL: %s", why);
		return;
	}
	for (i = 0; i < s->failed_unit.n; i++)
		printf("%s\n", s->failed_unit.v[i]);
}

/* The sentence when nothing can be scored: no rows in the files found. */
static int
why_empty(const char *dir, const struct corral_score *s,
    struct corral_buf *why)
{
	size_t i;
	int rc = corral_buf_addf(why, "%s holds ", dir);

	for (i = 0; i < s->found.n; i++)
		rc |= corral_buf_addf(why, "%s%s", i ? " and " : "",
		    s->found.v[i]);
	rc |= corral_buf_addstr(why, " but no scoreable rows, so there is "
	    "nothing to tally. That is not a clean run -- it is a run that "
	    "recorded nothing.");
	return rc;
}

/* -U: the failed units to path, one a line, none when nothing was told. */
static int
write_units(const char *path, const struct corral_score *s, int told)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_err err;
	size_t i;
	int rc = 0;

	for (i = 0; told && i < s->failed_unit.n; i++)
		rc |= corral_buf_addf(&b, "%s\n", s->failed_unit.v[i]);
	if (rc < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (corral_atomic_file(path, b.data ? b.data : "", b.len,
	    CORRAL_ATOMIC_NO_SYNC, &err) < 0) {
		corral_warn_err(&err);
		rc = -1;
	}
	corral_buf_release(&b);
	return rc;
}

static int
run_scoreboard(const char *dir, int mode, int failed, size_t slowest,
    const char *units_file)
{
	struct corral_score s = { 0 };
	struct corral_buf why = CORRAL_BUF_INIT;
	struct corral_err err;
	int unreadable, status;

	if ((unreadable = corral_score_why(dir, &why)) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (!unreadable && corral_score_read(dir, &s, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (!unreadable && s.units == 0 && why_empty(dir, &s, &why) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (mode == 'j')
		print_json(dir, &s, why.len ? why.data : NULL);
	else if (mode == 'u')
		print_units(dir, &s, why.len ? why.data : NULL);
	else
		print_text(dir, &s, why.len ? why.data : NULL, failed);
	if (!mode && !why.len && slowest)
		print_slowest(dir, slowest);
	status = why.len || s.unreadable.n ? CORRAL_EXIT_ERR : CORRAL_EXIT_OK;
	if (units_file && write_units(units_file, &s, !why.len) < 0)
		status = CORRAL_EXIT_ERR;
	corral_score_release(&s);
	corral_buf_release(&why);
	return status;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	struct corral_err err;
	long long slowest = 0;
	const char *units_file = NULL;
	int c, mode = 0, failed = 0, status;

	corral_setprogname(argv[0]);
	corral_usage_check(&use, argc, argv);
	while ((c = getopt_long(argc, argv, "fhjs:t:uU:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': failed = 1; break;
		case 'U': units_file = optarg; break;
		case 'h': corral_usage(&use, CORRAL_EXIT_OK); break;
		case 's':
			if (corral_strtonum(optarg, 0, 1000000, &slowest, "-s",
			    &err) < 0)
				corral_die_err(CORRAL_EXIT_ERR, &err);
			break;
		case 't':
			if (corral_strtonum(optarg, 0, 1000, &tail_lines, "-t",
			    &err) < 0)
				corral_die_err(CORRAL_EXIT_ERR, &err);
			break;
		case 'j':
		case 'u':
			if (mode && mode != c)
				corral_die(CORRAL_EXIT_ERR, "-j and -u may not be "
				    "given together");
			mode = c;
			break;
		default: corral_usage(&use, CORRAL_EXIT_ERR);
		}
	}
	if (argc - optind != 1)
		corral_usage(&use, CORRAL_EXIT_ERR);
	status = run_scoreboard(argv[optind], mode, failed, (size_t)slowest,
	    units_file);
	xflush_stdout();
	return status;
}
