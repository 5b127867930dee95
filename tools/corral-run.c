/* See LICENSE file for copyright and license details. */
/*
 * corral-run is "make corral-run" with an exit status a CI can read: it
 * runs make with the arguments given and corral-run as the goal, then
 * exits 0 when make did (every unit passed, the result complete), 1 when
 * make failed and the result it wrote says units failed or are missing,
 * and 2 when make failed without writing a result (a usage error, the
 * lock refused, a bad setting, make itself).  It learns where the result
 * goes from corral.mk, which writes its CORRAL_OUT into the file named by
 * the make variable __corral_where (given in the environment, which
 * corral.mk keeps from the recipes).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

/* A file's mtime may lag the clock read before make by a clock tick. */
#define MTIME_SLACK_MS	50

static const struct corral_usage use = {
	"corral-run [MAKE-ARG...]",
	NULL,
	NULL
};

/* The CORRAL_OUT corral.mk wrote to where, or NULL (err set). */
static char *
outdir_of(const char *where, struct corral_err *err)
{
	struct corral_buf text = CORRAL_BUF_INIT;
	char *dir = NULL;

	if (corral_read_file(where, &text, err) == 0) {
		while (text.len && text.data[text.len - 1] == '\n')
			text.data[--text.len] = '\0';
		if (!text.len)
			corral_err_set(err, 0, "make read no corral.mk");
		else if (!(dir = strdup(text.data)))
			corral_err_set(err, ENOMEM, "cannot read '%s'", where);
	}
	corral_buf_release(&text);
	return dir;
}

/* Run make; its wait status, or exit 2 when it cannot be started. */
static int
run_make(int argc, char *argv[], const char *where)
{
	const char *make = getenv("MAKE");
	const char **args = calloc((size_t)argc + 2, sizeof(*args));
	const char *env[] = { NULL, NULL };
	struct corral_spawn s;
	struct corral_buf set = CORRAL_BUF_INIT;
	struct corral_err err;
	int i, wstatus = 0;

	if (!args || corral_buf_addf(&set, "__corral_where=%s", where) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	args[0] = make && *make ? make : "make";
	for (i = 1; i < argc; i++)
		args[i] = argv[i];
	args[argc] = "corral-run";
	env[0] = set.data;
	memset(&s, 0, sizeof(s));
	s.argv = args;
	s.env = env;
	/* as system(3) does: Ctrl-C is make's to act on, then ours to tell */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	if (corral_spawn_run(&s, &wstatus, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	free(args);
	corral_buf_release(&set);
	return wstatus;
}

int
main(int argc, char *argv[])
{
	struct corral_buf where = CORRAL_BUF_INIT;
	const char *tmp = getenv("TMPDIR");
	struct corral_err err;
	long long start = corral_time_epoch_ms() - MTIME_SLACK_MS;
	char *dir = NULL;
	int fd, wstatus, verdict = -1;

	corral_setprogname(argv[0]);
	/* every argument is make's: only a first one can be ours */
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		corral_usage(&use, CORRAL_EXIT_OK);
	if (argc > 1 && !strcmp(argv[1], "--version"))
		corral_usage_version(&use);
	if (corral_buf_addf(&where, "%s/corral-run.XXXXXX", tmp && *tmp ?
	    tmp : "/tmp") < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if ((fd = mkstemp(where.data)) < 0)
		corral_die(CORRAL_EXIT_ERR, "cannot make '%s':", where.data);
	close(fd);
	wstatus = run_make(argc, argv, where.data);
	if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)
		verdict = 0;
	else if ((dir = outdir_of(where.data, &err)))
		verdict = corral_summary_verdict(dir, start, &err);
	(void)unlink(where.data);
	corral_buf_release(&where);
	free(dir);
	if (verdict < 0) {
		corral_warn_err(&err);
		corral_warn("make corral-run could not run; no verdict");
		return CORRAL_EXIT_ERR;
	}
	return verdict ? CORRAL_EXIT_NO : CORRAL_EXIT_OK;
}
