/* See LICENSE file for copyright and license details. */
/*
 * corral-plan prints the briefs of a subagent fan-out, as JSON: one per
 * agent, with its agent_id, its units, the clone_parts its private copy
 * needs (sorted, each once), the log_path it alone writes, and a task
 * made from a template.  The population comes from FILE or standard
 * input, one unit per line (NUL-separated with -0), and is cut exactly as
 * corral-split cuts it, so the logs of the agents fold with one
 * corral-merge.  No unit gives "[]".  Exit 0, or 2 on a usage error, an
 * unreadable FILE, a part that leaves the tree, or a failing parts
 * command.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"

#define TEMPLATE "You are agent {agent}. Clone only these parts into a " \
	"private directory of your own: {parts}. Run these {n} units " \
	"there: {units}. Append one JSON record per unit (agent_id, unit, " \
	"ok, note, at) to {log}, and write nothing anywhere else; one " \
	"merge folds every agent's log afterwards."

static const struct corral_usage use = {
	"corral-plan [-0h] [-l LOGDIR] [-p PART] [-P PARTS_CMD] "
	"[-t TEMPLATE] -n N [FILE]",
	"-0\tunits are NUL-separated\n"
	"-l LOGDIR\tthe directory of the logs in the briefs\n"
	"-n N\tthe number of agents (required)\n"
	"-P PARTS_CMD\ta command that prints a unit's parts\n"
	"-p PART\ta part every agent clones (repeatable)\n"
	"-t TEMPLATE\tthe task text",
	NULL
};

static void
read_units(const char *file, int sep, struct corral_strv *units)
{
	struct corral_err err;

	if (corral_units_load(file, sep, units, 1, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
}

int
main(int argc, char *argv[])
{
	struct corral_strv units = CORRAL_STRV_INIT, parts = CORRAL_STRV_INIT;
	struct corral_buf out = CORRAL_BUF_INIT;
	struct corral_briefs_opts o = { 0, "logs", NULL, NULL, TEMPLATE };
	struct corral_err err;
	const char *nstr = NULL;
	long long n;
	int c, sep = '\n';

	corral_setprogname(argv[0]);
	corral_usage_check(&use, argc, argv);
	while ((c = getopt(argc, argv, "0hl:n:p:P:t:")) != -1) {
		switch (c) {
		case '0': sep = '\0'; break;
		case 'h': corral_usage(&use, CORRAL_EXIT_OK); break;
		case 'l': o.logdir = optarg; break;
		case 'n': nstr = optarg; break;
		case 'p':
			if (corral_strv_add(&parts, optarg) < 0)
				corral_die(CORRAL_EXIT_ERR, "out of memory:");
			break;
		case 'P': o.parts_cmd = optarg; break;
		case 't': o.template = optarg; break;
		default: corral_usage(&use, CORRAL_EXIT_ERR);
		}
	}
	if (!nstr || argc - optind > 1)
		corral_usage(&use, CORRAL_EXIT_ERR);
	if (!*o.logdir)
		corral_die(CORRAL_EXIT_ERR, "-l: the value is empty");
	if (corral_strtonum(nstr, LONG_MIN, LONG_MAX, &n, "-n", &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	o.nslices = (long)n;
	o.parts = &parts;

	read_units(optind < argc ? argv[optind] : "-", sep, &units);
	if (corral_briefs_write(&o, &units, &out, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	fwrite(out.data, 1, out.len, stdout);
	corral_buf_release(&out);
	corral_strv_release(&units);
	corral_strv_release(&parts);
	if (fflush(stdout) == EOF || ferror(stdout))
		corral_die(CORRAL_EXIT_ERR, "cannot write standard output:");
	return CORRAL_EXIT_OK;
}
