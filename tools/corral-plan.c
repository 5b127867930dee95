/* See LICENSE file for copyright and license details. */
/*
 * corral-plan prints the briefs of a subagent fan-out, as JSON: one per
 * agent, with its agent_id, its units, the clone_parts its private copy
 * needs (sorted, each once), the log_path it alone writes, and a task
 * made from a template.  The population comes from FILE or standard
 * input, one unit per line (NUL-separated with -0), and is cut exactly as
 * corral-split cuts it (-s STRATEGY and -H HISTORY as corral-split's,
 * round-robin by default), so the logs of the agents fold with one
 * corral-merge.  No unit gives "[]".  With -c it prints instead the
 * parts that the clone of FILE's units, as one slice, holds, one per
 * line, unchecked: corral.mk's engine makes each slice's parts file so,
 * and corral-checkout refuses what escapes; -H adds what the history
 * learned each unit reads (CORRAL_PARTS = auto), or "." for a unit it
 * has not learned yet, whose slice then learns in the whole tree.  With
 * -o DIR it does so for every slice of a plan in one process: DIR/K.parts
 * from DIR/K.units for K = 0, 1, ..., each rewritten only when it
 * changed, so that make sees unchanged parts as up to date.  Exit
 * 0, or 2 on a usage error, an unreadable FILE or HISTORY, a part that
 * leaves the tree, or a failing parts command.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

#define TEMPLATE "You are agent {agent}. Clone only these parts into a " \
	"private directory of your own: {parts}. Run these {n} units " \
	"there: {units}. Append one JSON record per unit (agent_id, unit, " \
	"ok, note, at) to {log}, and write nothing anywhere else; one " \
	"merge folds every agent's log afterwards."

static const struct corral_usage use = {
	"corral-plan [-0h] [-C DIR] [-H HISTORY] [-l LOGDIR] [-p PART] "
	"[-P PARTS_CMD] [-s STRATEGY] [-t TEMPLATE] -n N [FILE]\n"
	"corral-plan -c [-0] [-C DIR] [-H HISTORY] [-p PART] [-P PARTS_CMD] "
	"[FILE]\n"
	"corral-plan -c [-0] [-C DIR] [-H HISTORY] [-p PART] [-P PARTS_CMD] "
	"-o DIR",
	"-0\tunits are NUL-separated\n"
	"-C DIR\tthe tree: units that are paths in it, parts commands run there\n"
	"-c\tprint the parts of all the units, one per line, not briefs\n"
	"-H HISTORY\tthe durations -s cuts by; with -c, add the parts learned "
	"there ('.' for a unit not yet)\n"
	"-l LOGDIR\tthe directory of the logs in the briefs\n"
	"-n N\tthe number of agents (required for briefs)\n"
	"-o DIR\twith -c, write DIR/K.parts for every DIR/K.units\n"
	"-P PARTS_CMD\ta command that prints a unit's parts\n"
	"-p PART\ta part every agent clones (repeatable)\n"
	"-s STRATEGY\thow to cut, as corral-split's (corral-split -h lists them)\n"
	"-t TEMPLATE\tthe task text",
	NULL
};

/* The parts of all units, as one slice, each ended by sep. */
static void
print_parts(const struct corral_parts_opts *o, const struct corral_strv *units,
    int sep, struct corral_buf *out)
{
	struct corral_strv parts = CORRAL_STRV_INIT;
	struct corral_err err;
	size_t i;

	if (corral_parts_of(o, units, &parts, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	for (i = 0; i < parts.n; i++)
		if (corral_buf_addstr(out, parts.v[i]) < 0 ||
		    corral_buf_addch(out, sep) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
	corral_strv_release(&parts);
}

/*
 * dir/K.parts for every dir/K.units of a plan (K = 0, 1, ... up to the
 * first missing one): the parts of its units, each ended by sep.
 */
static void
write_parts(const struct corral_parts_opts *o, const char *dir, int sep)
{
	struct corral_buf path = CORRAL_BUF_INIT, body = CORRAL_BUF_INIT;
	struct corral_strv units = CORRAL_STRV_INIT;
	struct corral_err err;
	size_t k;

	for (k = 0;; k++) {
		corral_buf_reset(&path);
		if (corral_buf_addf(&path, "%s/%zu.units", dir, k) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
		if (access(path.data, F_OK) < 0)
			break;
		corral_strv_release(&units);
		xunits_load(path.data, sep, &units, 1);
		corral_buf_reset(&body);
		print_parts(o, &units, sep, &body);
		path.len -= strlen("units");
		path.data[path.len] = '\0';
		if (corral_buf_addstr(&path, "parts") < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
		if (corral_atomic_file(path.data, body.data ? body.data : "",
		    body.len, CORRAL_ATOMIC_KEEP_SAME | CORRAL_ATOMIC_NO_SYNC,
		    &err) < 0)
			corral_die_err(CORRAL_EXIT_ERR, &err);
	}
	corral_strv_release(&units);
	corral_buf_release(&path);
	corral_buf_release(&body);
}

int
main(int argc, char *argv[])
{
	struct corral_strv units = CORRAL_STRV_INIT, parts = CORRAL_STRV_INIT;
	struct corral_buf out = CORRAL_BUF_INIT;
	struct corral_briefs_opts o = { 0, corral_strategies, NULL, "logs",
	    { NULL, NULL, NULL, NULL }, TEMPLATE };
	struct corral_learned learned;
	struct corral_err err;
	const char *nstr = NULL, *dir = NULL;
	long long n;
	size_t i;
	int c, sep = '\n', only_parts = 0, briefs_opts = 0;

	corral_setprogname(argv[0]);
	corral_usage_check(&use, argc, argv);
	while ((c = getopt(argc, argv, "0cC:hH:l:n:o:p:P:s:t:")) != -1) {
		switch (c) {
		case '0': sep = '\0'; break;
		case 'c': only_parts = 1; break;
		case 'C': o.parts.srcdir = optarg; break;
		case 'h': corral_usage(&use, CORRAL_EXIT_OK); break;
		case 'H': o.history = optarg; break;
		case 'l': o.logdir = optarg, briefs_opts = 1; break;
		case 'n': nstr = optarg; break;
		case 'o': dir = optarg; break;
		case 'p':
			if (corral_strv_add(&parts, optarg) < 0)
				corral_die(CORRAL_EXIT_ERR, "out of memory:");
			break;
		case 'P': o.parts.parts_cmd = optarg; break;
		case 's':
			if (!(o.strategy = corral_strategy_find(optarg, "-s",
			    &err)))
				corral_die_err(CORRAL_EXIT_ERR, &err);
			briefs_opts = 1;
			break;
		case 't': o.template = optarg, briefs_opts = 1; break;
		default: corral_usage(&use, CORRAL_EXIT_ERR);
		}
	}
	if (argc - optind > 1 || (only_parts ? nstr || briefs_opts :
	    !nstr || dir) || (dir && optind < argc))
		corral_usage(&use, CORRAL_EXIT_ERR);
	if (!*o.logdir)
		corral_die(CORRAL_EXIT_ERR, "-l: the value is empty");
	if (nstr && corral_strtonum(nstr, LONG_MIN, LONG_MAX, &n, "-n",
	    &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	o.nslices = nstr ? (long)n : 0;
	o.parts.parts = &parts;
	memset(&learned, 0, sizeof(learned));
	if (only_parts && o.history && corral_learned_read(&learned,
	    o.history, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	for (i = 0; i < learned.dropped.n; i++)
		corral_warn("%s", learned.dropped.v[i]);
	o.parts.learned = only_parts && o.history ? &learned : NULL;

	if (!dir)
		xunits_load(optind < argc ? argv[optind] : "-", sep, &units, 1);
	if (dir)
		write_parts(&o.parts, dir, sep);
	else if (only_parts)
		print_parts(&o.parts, &units, sep, &out);
	else if (corral_briefs_write(&o, &units, &out, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (out.len)
		fwrite(out.data, 1, out.len, stdout);
	corral_buf_release(&out);
	corral_strv_release(&units);
	corral_strv_release(&parts);
	corral_learned_release(&learned);
	xflush_stdout();
	return CORRAL_EXIT_OK;
}
