/* See LICENSE file for copyright and license details. */
/*
 * corral-report writes a run's merged results (DIR/successes.jsonl and
 * DIR/failures.jsonl, which stay the source of truth) as JUnit XML for CI
 * systems (-j FILE) and as TAP for prove and its kin (-t, on standard
 * output).  The XML's suite is named by -n, and each testcase quotes at
 * most -o bytes of its unit's output.  It also writes the run's timeline
 * as a trace for Perfetto (-T FILE) and as one HTML page that needs
 * nothing else (-H FILE).  The files (and their directories) are made as
 * needed and replaced atomically.  Exit 0 when it reported,
 * failures or not; 2 when DIR holds no results, a line is not a record,
 * or a write failed.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral.h"
#include "tool/tool.h"

static const struct corral_usage use = {
	"corral-report [-ht] [-H FILE] [-j FILE] [-n NAME] [-o MAX] [-T FILE] "
	"DIR",
	"-H, --html FILE\twrite the run as one self-contained HTML page to "
	"FILE\n"
	"-j, --junit FILE\twrite JUnit XML to FILE\n"
	"-n NAME\tthe JUnit suite's name (default: corral)\n"
	"-o MAX\tquote at most MAX bytes of each output (0: all; 1M)\n"
	"-T, --trace FILE\twrite the run's timeline as a Chrome trace "
	"(Perfetto) to FILE\n"
	"-t, --tap\twrite TAP version 13 on standard output",
	NULL
};

/* Write b to file (made with its directory), or to stdout for "-". */
static void
write_out(const char *file, const struct corral_buf *b)
{
	struct corral_err err;
	const char *slash = strrchr(file, '/');
	char *dir;

	if (!strcmp(file, "-")) {
		fwrite(b->data, 1, b->len, stdout);
		return;
	}
	if (slash && slash != file) {
		dir = xstrdup(file);
		dir[slash - file] = '\0';
		if (corral_mkdir_p(dir, 0777, &err) < 0)
			corral_die_err(CORRAL_EXIT_ERR, &err);
		free(dir);
	}
	if (corral_atomic_file(file, b->data, b->len,
	    CORRAL_ATOMIC_KEEP_SAME | CORRAL_ATOMIC_IN_PLACE, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
}

/* What the reports are made with. */
struct opts {
	const char *junit, *suite;
	long long output_max;
	int tap;
	const char *trace, *html;
};

/* The timeline of dir's results, as a trace (-T) and a page (-H). */
static void
run_timeline(const char *dir, const struct opts *o)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_timeline t;
	struct corral_err err;

	if (corral_timeline_read(&t, dir, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	t.name = o->suite;
	if (o->trace && corral_trace_format(&t, &b) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (o->trace)
		write_out(o->trace, &b);
	corral_buf_reset(&b);
	if (o->html && corral_html_format(&t, &b) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (o->html)
		write_out(o->html, &b);
	corral_timeline_release(&t);
	corral_buf_release(&b);
}

static int
run_report(const char *dir, const struct opts *o)
{
	struct corral_buf why = CORRAL_BUF_INIT, b = CORRAL_BUF_INIT;
	struct corral_report rep;
	struct corral_err err;
	size_t i;
	int rc;

	if ((rc = corral_score_why(dir, &why)) != 0) {
		if (rc < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
		corral_die(CORRAL_EXIT_ERR, "COULD NOT TELL: %s", why.data);
	}
	if (corral_report_read(&rep, dir, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	for (i = 0; i < rep.unreadable.n; i++)
		corral_warn("%s", rep.unreadable.v[i]);
	rep.suite = o->suite;
	rep.output_max = o->output_max;
	if (o->junit && (corral_report_junit(&rep, &b) < 0))
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (o->junit)
		write_out(o->junit, &b);
	corral_buf_reset(&b);
	if (o->tap && corral_report_tap(&rep, &b) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (o->tap)
		write_out("-", &b);
	if (o->trace || o->html)
		run_timeline(dir, o);
	rc = rep.unreadable.n ? CORRAL_EXIT_ERR : CORRAL_EXIT_OK;
	corral_report_release(&rep);
	corral_buf_release(&b);
	corral_buf_release(&why);
	return rc;
}

static int
is_stdout(const char *file)
{
	return file && !strcmp(file, "-");
}

/* More than one report for standard output. */
static int
stdout_twice(const struct opts *o)
{
	return is_stdout(o->junit) + o->tap + is_stdout(o->trace) +
	    is_stdout(o->html) > 1;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "html", required_argument, NULL, 'H' },
		{ "junit", required_argument, NULL, 'j' },
		{ "tap", no_argument, NULL, 't' },
		{ "trace", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { NULL, NULL, CORRAL_REPORT_OUTPUT_MAX, 0, NULL, NULL };
	struct corral_err err;
	int c, status;

	corral_setprogname(argv[0]);
	corral_usage_check(&use, argc, argv);
	while ((c = getopt_long(argc, argv, "hH:j:n:o:tT:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': corral_usage(&use, CORRAL_EXIT_OK); break;
		case 'H': o.html = optarg; break;
		case 'j': o.junit = optarg; break;
		case 'n': o.suite = optarg; break;
		case 'o':
			if (corral_size_parse(optarg, &o.output_max, "-o",
			    &err) < 0)
				corral_die_err(CORRAL_EXIT_ERR, &err);
			break;
		case 't': o.tap = 1; break;
		case 'T': o.trace = optarg; break;
		default: corral_usage(&use, CORRAL_EXIT_ERR);
		}
	}
	if (argc - optind != 1 || (!o.junit && !o.tap && !o.trace &&
	    !o.html))
		corral_usage(&use, CORRAL_EXIT_ERR);
	if (o.tap && o.junit && !strcmp(o.junit, "-"))
		corral_die(CORRAL_EXIT_ERR, "-j - and -t may not both write "
		    "to standard output");
	if (stdout_twice(&o))
		corral_die(CORRAL_EXIT_ERR, "only one of -H -, -j -, -t and "
		    "-T - may write to standard output");
	status = run_report(argv[optind], &o);
	xflush_stdout();
	return status;
}
