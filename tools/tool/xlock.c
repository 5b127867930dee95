/* See LICENSE file for copyright and license details. */
/*
 * xlock.c holds a CORRAL_OUT's lock for a program, or ends it: it takes
 * the lock through corral_lock_inherit and corral_lock_take (base/lock.c),
 * says once that it waits for the run holding it, and exits 2 when
 * CORRAL_WAIT says not to wait, the wait runs out, or the lock cannot be
 * had.
 */
#include <stdlib.h>

#include "tool.h"

/* CORRAL_WAIT, or wait, as ms: negative for ever, 0 not at all. */
static long long
wait_of(const char *wait)
{
	struct corral_err err;
	long long ms;

	if (!wait)
		wait = getenv("CORRAL_WAIT");
	if (!wait || !*wait)
		return -1;
	if (corral_seconds_parse(wait, &ms, "CORRAL_WAIT", &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	return ms;
}

void
xlock(struct corral_lock *l, const char *dir, int flags, const char *wait,
    const char *name)
{
	struct corral_err err;
	long long ms;
	pid_t pid;
	int rc;

	if (corral_lock_inherit(l, dir))
		return;
	ms = wait_of(wait);
	if ((rc = corral_lock_take(l, dir, flags, 0, &pid, &err)) == 1) {
		if (ms == 0)
			corral_die(CORRAL_EXIT_ERR, "the run of pid %ld holds "
			    "%s; not waiting (CORRAL_WAIT=0)", (long)pid, name);
		corral_warn("waiting for the run holding %s (pid %ld)", name,
		    (long)pid);
		rc = corral_lock_take(l, dir, flags, ms, &pid, &err);
	}
	if (rc == 1)
		corral_die(CORRAL_EXIT_ERR, "gave up waiting for the run "
		    "holding %s (pid %ld) after %s s", name, (long)pid, wait ?
		    wait : getenv("CORRAL_WAIT"));
	if (rc < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
}

void
xlock_under(struct corral_lock *l, const char *path, int flags)
{
	struct corral_buf name = CORRAL_BUF_INIT;
	char *out = corral_lock_find(path);

	corral_lock_init(l);
	if (!out)
		return;
	if (corral_buf_addf(&name, "CORRAL_OUT '%s'", out) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	xlock(l, out, flags, NULL, name.data);
	corral_buf_release(&name);
	free(out);
}
