/* See LICENSE file for copyright and license details. */
/*
 * corral-bundle carries verified repairs to another copy of a system.
 * "describe" prints what a bundle holds, by area; "apply" checks every
 * file of every requested fix against ROOT before writing anything, and
 * writes only with -a, all or nothing unless -p; "write" makes a new
 * bundle of some areas of another, checking every blob on the way.
 * corral-fix -b writes the first bundle from a dry run's verified fixes.
 * Exit 0 on success, 1 when apply refused a fix, 2 on a usage error, a
 * bundle that is unreadable, malformed or of an unknown version, or an
 * I/O error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

static const struct corral_usage use = {
	"corral-bundle apply [-aJnp] [-A AREA] BUNDLE ROOT\n"
	"corral-bundle describe BUNDLE\n"
	"corral-bundle write [-A AREA] [-m NOTE] FROM TO",
	"-A, --area AREA\tonly fixes in AREA (repeatable)\n"
	"-a, --apply\twrite the fixes to ROOT\n"
	"-J, --json\tprint the outcome as JSON\n"
	"-m, --note NOTE\tthe new bundle's note\n"
	"-n, --dry-run\tcheck only, write nothing (the default)\n"
	"-p, --per-fix\ta refused fix holds back only itself",
	NULL
};

static const struct option longopts[] = {
	{ "area", required_argument, NULL, 'A' },
	{ "apply", no_argument, NULL, 'a' },
	{ "help", no_argument, NULL, 'h' },
	{ "json", no_argument, NULL, 'J' },
	{ "note", required_argument, NULL, 'm' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "per-fix", no_argument, NULL, 'p' },
	{ NULL, 0, NULL, 0 }
};

/* b on stdout: JSON as it is, text as a person reads it (corral_show). */
static void
print(const struct corral_buf *b, int json)
{
	if (json)
		fwrite(b->data, 1, b->len, stdout);
	else
		corral_show(stdout, b->data, b->len);
	xflush_stdout();
}

static int
run_describe(const char *bundle)
{
	struct corral_buf out = CORRAL_BUF_INIT;
	struct corral_manifest m;
	struct corral_err err;

	if (corral_bundle_read(bundle, &m, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (corral_bundle_describe(&m, &out) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	print(&out, 0);
	corral_buf_release(&out);
	corral_manifest_release(&m);
	return CORRAL_EXIT_OK;
}

static int
run_apply(const struct corral_bundle_opts *o, int json)
{
	struct corral_buf out = CORRAL_BUF_INIT;
	struct corral_bundle_report r;
	struct corral_err err;
	int status;

	if (corral_bundle_apply(o, &r, &err) < 0) {
		corral_bundle_report_release(&r);
		corral_die_err(CORRAL_EXIT_ERR, &err);
	}
	if ((json ? corral_bundle_report_json(&r, &out) :
	    corral_bundle_report_text(&r, &out)) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	print(&out, json);
	status = r.refused ? CORRAL_EXIT_NO : CORRAL_EXIT_OK;
	corral_buf_release(&out);
	corral_bundle_report_release(&r);
	return status;
}

static int
run_write(const char *from, const char *to, const struct corral_strv *areas,
    const char *note)
{
	struct corral_buf out = CORRAL_BUF_INIT;
	struct corral_err err;
	size_t n;

	if (corral_bundle_copy(from, to, areas, note, &n, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (corral_buf_addf(&out, "wrote %zu fix(es) to '%s'\n", n, to) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	print(&out, 0);
	corral_buf_release(&out);
	return CORRAL_EXIT_OK;
}

/* Run subcommand cmd with its operands argv[optind..argc). */
static int
dispatch(const char *cmd, int argc, char *argv[], struct corral_bundle_opts *o,
    const char *note, int json)
{
	int ops = argc - optind;

	if (!strcmp(cmd, "apply") && ops == 2) {
		o->bundle = argv[optind];
		o->root = argv[optind + 1];
		return run_apply(o, json);
	}
	if (!strcmp(cmd, "describe") && ops == 1 && !o->areas && !note)
		return run_describe(argv[optind]);
	if (!strcmp(cmd, "write") && ops == 2)
		return run_write(argv[optind], argv[optind + 1], o->areas, note);
	corral_usage(&use, CORRAL_EXIT_ERR);
	return CORRAL_EXIT_ERR;
}

int
main(int argc, char *argv[])
{
	struct corral_strv areas = CORRAL_STRV_INIT;
	struct corral_bundle_opts o;
	const char *cmd, *note = NULL;
	int c, json = 0, apply = 0, dry = 0, status;

	corral_setprogname(argv[0]);
	corral_usage_check(&use, argc, argv);
	corral_bundle_opts_init(&o);
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		corral_usage(&use, CORRAL_EXIT_OK);
	if (argc < 2 || argv[1][0] == '-')
		corral_usage(&use, CORRAL_EXIT_ERR);
	cmd = argv[1];
	argv[1] = argv[0];	/* getopt names the program in its messages */
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, "A:ahJm:np", longopts,
	    NULL)) != -1) {
		switch (c) {
		case 'A':
			if (corral_strv_add(&areas, optarg) < 0)
				corral_die(CORRAL_EXIT_ERR, "out of memory:");
			o.areas = &areas;
			break;
		case 'a': apply = 1; break;
		case 'h': corral_usage(&use, CORRAL_EXIT_OK); break;
		case 'J': json = 1; break;
		case 'm': note = optarg; break;
		case 'n': dry = 1; break;
		case 'p': o.per_fix = 1; break;
		default: corral_usage(&use, CORRAL_EXIT_ERR);
		}
	}
	if (apply && dry)
		corral_die(CORRAL_EXIT_ERR, "-a and -n may not be specified "
		    "together");
	if (strcmp(cmd, "apply") && (apply || dry || json || o.per_fix))
		corral_usage(&use, CORRAL_EXIT_ERR);
	if (strcmp(cmd, "write") && note)
		corral_usage(&use, CORRAL_EXIT_ERR);
	if (apply)
		o.dry_run = 0;
	status = dispatch(cmd, argc, argv, &o, note, json);
	corral_strv_release(&areas);
	return status;
}
