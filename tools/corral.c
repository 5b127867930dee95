/* See LICENSE file for copyright and license details. */
/*
 * corral is the umbrella command: "corral CMD ARG..." execs corral-CMD,
 * found beside this binary (symlinks resolved) and then on PATH, so its
 * exit status and signals are the helper's own.  If the exec fails, the
 * status is 127 when there is no such program and 126 otherwise, as in
 * the shell; a name that is no command and no program is a usage error.
 * With no argument it prints its usage on stderr and exits 2, as every
 * other tool does ("corral demo" is the demo).  The list -h prints is the table in
 * install.c; "corral help CMD" is "corral-CMD -h".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

static const char *argv0;

/* After the options of --help: the commands, one a line. */
static void
commands(FILE *fp)
{
	const struct corral_command *c;
	int w = 0;

	/* one column, as wide as the longest name */
	for (c = corral_commands; c->name; c++)
		if ((int)strlen(c->name) > w)
			w = (int)strlen(c->name);
	fprintf(fp, "\nCommands (\"corral help COMMAND\" for one's "
	    "usage):\n");
	for (c = corral_commands; c->name; c++)
		fprintf(fp, "   %-*s %s\n", w + 1, c->name, c->summary);
	fprintf(fp, "\nStart with \"corral demo\", then \"corral doctor\".\n");
}

static const struct corral_usage use = {
	"corral [-hV] [COMMAND [ARG...]]",
	"-V\tprint the version and exit",
	commands
};

/* Exec corral-NAME with args (args[0] is replaced); never returns. */
static void
run(const char *name, char **args)
{
	struct corral_buf prog = CORRAL_BUF_INIT, path = CORRAL_BUF_INIT;
	struct corral_err err;
	char *dir;

	if (!*name || strchr(name, '/') ||
	    corral_buf_addf(&prog, "corral-%s", name) < 0)
		corral_die(CORRAL_EXIT_ERR, "'%s' is not a corral command",
		    name);
	if (!(dir = corral_self_dir(argv0, &err)))
		corral_warn_err(&err);
	if (corral_program_find(dir, prog.data, &path) < 0) {
		if (errno != ENOENT)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
		if (!corral_command_find(name))
			corral_die(CORRAL_EXIT_ERR, "'%s' is not a corral "
			    "command", name);
		corral_die(127, "cannot run '%s': not found beside '%s' or "
		    "on PATH", prog.data, dir ? dir : corral_progname());
	}
	args[0] = path.data;
	execv(path.data, args);
	corral_die(errno == ENOENT ? 127 : 126, "cannot run '%s':", path.data);
}

int
main(int argc, char *argv[])
{
	static char dash_h[] = "-h";
	char *help[] = { NULL, dash_h, NULL };

	corral_setprogname(argv[0]);
	argv0 = argv[0];
	if (argc < 2)
		corral_usage(&use, CORRAL_EXIT_ERR);
	corral_usage_check_command(&use, argc, argv);
	if (!strcmp(argv[1], "-h") || (!strcmp(argv[1], "help") && argc == 2))
		corral_usage(&use, CORRAL_EXIT_OK);
	if (!strcmp(argv[1], "-V"))
		corral_usage_version(&use);
	if (!strcmp(argv[1], "help")) {
		if (argc > 3)
			corral_usage(&use, CORRAL_EXIT_ERR);
		run(argv[2], help);
	}
	if (argv[1][0] == '-')
		corral_usage(&use, CORRAL_EXIT_ERR);
	run(argv[1], argv + 1);
	return CORRAL_EXIT_ERR;
}
