/* See LICENSE file for copyright and license details. */
/*
 * corral-lock runs COMMAND holding the lock of the CORRAL_OUT DIR, as
 * flock(1) would, for corral.mk: it makes DIR and its mark if need be
 * (refusing a DIR that holds somebody else's files), waits for the run
 * that holds the lock and says so once, or with -w 0 refuses at once,
 * then execs COMMAND with the lock's descriptor open, so that COMMAND and
 * everything it starts hold the lock until the last of them ends.  A lock
 * passed down already is used as it is.  With -G, COMMAND runs only while
 * process PID lives (a zombie does not): the engine asks that before each
 * merge.  With -u it does the opposite: COMMAND runs without DIR's lock
 * that was passed down (the engine's CORRAL_DISCOVER and parts commands,
 * which might leave a daemon behind that would hold it for ever).  It
 * speaks as "corral", the voice of corral.mk's engine.  Exit
 * status: COMMAND's; 2 when the lock is refused or PID is gone; 126 or
 * 127 when COMMAND cannot be run.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

static const struct corral_usage use = {
	"corral-lock [-u] [-G PID] [-w SECONDS] DIR COMMAND [ARG...]",
	"-G PID\trun COMMAND while process PID lives\n"
	"-u\trun COMMAND without the lock passed down\n"
	"-w SECONDS\twait that long at most for the lock",
	NULL
};

static void
run(char *argv[])
{
	execvp(argv[0], argv);
	corral_die(errno == ENOENT ? 127 : 126, "cannot run '%s':", argv[0]);
}

/* Run argv without the lock of dir passed down: nothing it starts holds it. */
static void
run_unlocked(const char *dir, char *argv[])
{
	struct corral_lock l;

	corral_lock_inherit(&l, dir);
	corral_lock_keep(&l);
	run(argv);
}

int
main(int argc, char *argv[])
{
	struct corral_lock l;
	struct corral_err err;
	const char *wait = NULL;
	long long guard = 0;
	int c, unlock = 0;

	corral_setprogname("corral");
	corral_usage_check_command(&use, argc, argv);
	while ((c = getopt(argc, argv, "+G:huw:")) != -1) {
		switch (c) {
		case 'G':
			if (corral_strtonum(optarg, 1, INT_MAX, &guard, "-G",
			    &err) < 0)
				corral_die_err(CORRAL_EXIT_ERR, &err);
			break;
		case 'h': corral_usage(&use, CORRAL_EXIT_OK); break;
		case 'u': unlock = 1; break;
		case 'w': wait = optarg; break;
		default: corral_usage(&use, CORRAL_EXIT_ERR);
		}
	}
	if (argc - optind < 2 || !*argv[optind])
		corral_usage(&use, CORRAL_EXIT_ERR);
	if (unlock && (guard || wait))
		corral_die(CORRAL_EXIT_ERR, "-u takes no -G or -w: it waits "
		    "for nothing");
	if (unlock)
		run_unlocked(argv[optind], argv + optind + 1);
	xlock(&l, argv[optind], CORRAL_LOCK_CREATE, wait, "CORRAL_OUT");
	if (guard && !corral_pid_alive((pid_t)guard))
		corral_die(CORRAL_EXIT_ERR, "process %lld, which the run hangs "
		    "on, is gone; '%s' not run", guard, argv[optind + 1]);
	if (corral_lock_pass(&l, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	run(argv + optind + 1);
	return CORRAL_EXIT_ERR;
}
