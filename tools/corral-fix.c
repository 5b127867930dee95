/* See LICENSE file for copyright and license details. */
/*
 * corral-fix applies repairs so that a wrong one cannot land.  A finder
 * names findings in ROOT; a patcher tries each in a clone of its own; the
 * finder re-run must show the target gone and nothing new; verified fixes
 * are merged by one writer, checked together, and written only with -a,
 * under a journal that -R rolls back after a crash.  The default is a dry
 * run over corroborated findings only.  Exit 0 when the finder finds
 * nothing in ROOT as the run leaves it, 1 when findings remain, 2 when
 * it could not look or could not work.  -d runs the guided tour.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

static const struct corral_usage use = {
	"corral-fix [-aJnT] [-b BUNDLE] [-c CONFIDENCE] [-F "
	"FINDINGS] [-f FINDER] [-j JOBS] [-m NOTE] [-p PATCHER] "
	"[-t SECONDS] [-w WORKDIR] ROOT\n"
	"corral-fix -R ROOT\n"
	"corral-fix -d",
	"-a, --apply\twrite the verified fixes to ROOT\n"
	"-b, --bundle BUNDLE\twrite the verified fixes as a bundle\n"
	"-c, --min-confidence C\tattempt findings of at least confidence C\n"
	"-d, --demo\tthe guided tour of the repair half\n"
	"-F, --findings FILE\ttake the findings from FILE\n"
	"-f, --finder CMD\tthe finder command\n"
	"-J, --json\tprint the report as JSON\n"
	"-j, --jobs JOBS\tattempts run at once, 1 to 1024\n"
	"-m, --note NOTE\tthe bundle's note\n"
	"-n, --dry-run\tverify only, write nothing (the default)\n"
	"-p, --patcher CMD\tthe patcher command\n"
	"-R, --recover\troll back an apply a crash interrupted\n"
	"-T, --any-trust\tattempt findings of any trust\n"
	"-t, --timeout SECONDS\tthe limit of each finder or patcher run\n"
	"-w, --workdir DIR\twhere the clones go",
	NULL
};

static const struct option longopts[] = {
	{ "apply", no_argument, NULL, 'a' },
	{ "bundle", required_argument, NULL, 'b' },
	{ "min-confidence", required_argument, NULL, 'c' },
	{ "demo", no_argument, NULL, 'd' },
	{ "findings", required_argument, NULL, 'F' },
	{ "finder", required_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ "json", no_argument, NULL, 'J' },
	{ "jobs", required_argument, NULL, 'j' },
	{ "note", required_argument, NULL, 'm' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "patcher", required_argument, NULL, 'p' },
	{ "recover", no_argument, NULL, 'R' },
	{ "any-trust", no_argument, NULL, 'T' },
	{ "timeout", required_argument, NULL, 't' },
	{ "workdir", required_argument, NULL, 'w' },
	{ NULL, 0, NULL, 0 }
};

static double
confidence(const char *s)
{
	char *end;
	double d = strtod(s, &end);

	if (!*s || *end || !(d >= 0 && d <= 1))
		corral_die(CORRAL_EXIT_ERR, "confidence '%s' is not a number "
		    "in 0..1", s);
	return d;
}

static long
number(const char *s, long long min, long long max, const char *what)
{
	struct corral_err err;
	long long n;

	if (corral_strtonum(s, min, max, &n, what, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	return (long)n;
}

static void
print_line(void *arg, const char *line)
{
	(void)arg;
	corral_showf(stdout, "%s\n", line);
}

static int
run_demo(void)
{
	struct corral_err err;
	int failures = corral_fix_demo(print_line, NULL, &err);

	if (failures < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	xflush_stdout();
	return failures ? CORRAL_EXIT_NO : CORRAL_EXIT_OK;
}

static int
run_recover(const char *root)
{
	struct corral_strv kept = CORRAL_STRV_INIT;
	struct corral_err err;
	int rc = corral_journal_recover(root, &kept, &err);
	const char *base;
	size_t n;

	if (rc < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	corral_showf(stdout, rc == 1 ? "rolled back the interrupted apply in "
	    "'%s'\n" : rc == 2 ? "nothing to roll back in '%s': the "
	    "interrupted apply had written nothing, or had committed; its "
	    "journal is removed\n" : "no interrupted apply in '%s'\n", root);
	for (n = 0; n < kept.n; n++)
		corral_showf(stdout, "left '%s' as it is: it changed after the "
		    "apply wrote it\n", kept.v[n]);
	corral_strv_release(&kept);
	base = corral_fix_work_base(NULL);
	if ((n = corral_fix_work_sweep(base)))
		corral_showf(stdout, "removed %zu work director%s a killed "
		    "corral-fix left "
		    "in '%s'\n", n, n == 1 ? "y" : "ies", base);
	xflush_stdout();
	return CORRAL_EXIT_OK;
}

static int
run_fix(const struct corral_fix_opts *o, int json)
{
	struct corral_buf out = CORRAL_BUF_INIT;
	struct corral_fix_report r;
	struct corral_err err;
	int status;

	if (corral_fix_run(o, &r, &err) < 0) {
		corral_fix_report_release(&r);
		corral_die_err(CORRAL_EXIT_ERR, &err);
	}
	if ((json ? corral_fix_report_json(&r, &out) :
	    corral_fix_report_text(&r, &out)) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (json)
		fwrite(out.data, 1, out.len, stdout);
	else
		corral_show(stdout, out.data, out.len);
	xflush_stdout();
	status = r.remaining.n ? CORRAL_EXIT_NO : CORRAL_EXIT_OK;
	corral_buf_release(&out);
	corral_fix_report_release(&r);
	return status;
}

int
main(int argc, char *argv[])
{
	struct corral_fix_opts o;
	int c, apply = 0, demo = 0, dry = 0, json = 0, recover = 0, nopt = 0;

	corral_setprogname(argv[0]);
	corral_usage_check(&use, argc, argv);
	corral_fix_opts_init(&o);
	while ((c = getopt_long(argc, argv, "ab:c:dF:f:hJj:m:np:RTt:w:",
	    longopts, NULL)) != -1) {
		nopt++;
		switch (c) {
		case 'a': apply = 1; break;
		case 'b': o.bundle = optarg; break;
		case 'c': o.min_confidence = confidence(optarg); break;
		case 'd': demo = 1; break;
		case 'F': o.findings = optarg; break;
		case 'f': o.finder = optarg; break;
		case 'h': corral_usage(&use, CORRAL_EXIT_OK); break;
		case 'J': json = 1; break;
		case 'j': o.jobs = number(optarg, 1, 1024, "jobs"); break;
		case 'm': o.note = optarg; break;
		case 'n': dry = 1; break;
		case 'p': o.patcher = optarg; break;
		case 'R': recover = 1; break;
		case 'T': o.any_trust = 1; break;
		case 't': o.timeout = number(optarg, 0, 86400, "timeout"); break;
		case 'w': o.workroot = optarg; break;
		default: corral_usage(&use, CORRAL_EXIT_ERR);
		}
	}
	if (apply && dry)
		corral_die(CORRAL_EXIT_ERR, "-a and -n may not be specified "
		    "together");
	if (demo && (nopt > 1 || optind != argc))
		corral_usage(&use, CORRAL_EXIT_ERR);
	if (demo)
		return run_demo();
	if (argc - optind != 1 || (recover && nopt > 1))
		corral_usage(&use, CORRAL_EXIT_ERR);
	if (recover)
		return run_recover(argv[optind]);
	if (apply)
		o.dry_run = 0;
	if (dry)
		o.dry_run = 1;
	o.root = argv[optind];
	return run_fix(&o, json);
}
