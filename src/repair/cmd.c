/* See LICENSE file for copyright and license details. */
/*
 * cmd.c runs a finder or a patcher: /bin/sh -c 'CMD "$@"' CMD DIR, with
 * DIR as its working directory, its output in files (no pipe can fill
 * up), in a process group of its own.  When it ends, or when its time is
 * up, the whole group is killed, and so is every process it detached
 * from that group (setsid, a double fork, daemon(3)): the process that
 * runs it is a child subreaper (proc.c, as the agent is for its units),
 * so those come back to it as orphans.  Nothing it started outlives it,
 * and a hung finder cannot hang corral-fix.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "repair/repair.h"

static int
spawn(const struct corral_cmd *c, pid_t *pid, struct corral_err *err)
{
	struct corral_proc p = CORRAL_PROC_INIT;
	struct corral_strv env = CORRAL_STRV_INIT;
	struct corral_buf script = CORRAL_BUF_INIT;
	char *argv[] = { "sh", "-c", NULL, NULL, NULL, NULL };
	int e = ENOMEM;

	if (corral_proc_env(&env, c->env) == 0 &&
	    corral_buf_addf(&script, "%s \"$@\"", c->cmd) == 0) {
		argv[2] = script.data;
		argv[3] = (char *)c->cmd;
		argv[4] = (char *)c->dir;
		p.path = "/bin/sh";
		p.argv = argv;
		p.envp = env.v;
		p.dir = c->dir;
		p.in = c->in;
		p.out = c->out;
		p.err = c->errout;
		p.group = 1;
		e = corral_proc_start(&p, pid);
	}
	corral_strv_release(&env);
	corral_buf_release(&script);
	if (e)
		return corral_err_set(err, e, "cannot run '%s'", c->cmd);
	return 0;
}

int
corral_cmd_run(const struct corral_cmd *c, struct corral_cmd_status *st,
    struct corral_err *err)
{
	long long deadline = c->timeout_ms > 0 ?
	    corral_time_ms() + c->timeout_ms : 0;
	struct corral_reaper rp;
	pid_t pid;
	int r;

	memset(st, 0, sizeof(*st));
	if (corral_reaper_start(&rp, err) < 0)
		return -1;
	if (spawn(c, &pid, err) < 0) {
		corral_reaper_release(&rp);
		return -1;
	}
	st->started = 1;
	if ((r = corral_proc_await(pid, deadline)) < 0)
		corral_err_set(err, errno, "cannot wait for '%s'", c->cmd);
	st->timed_out = r == 0;
	/* Not reaped yet, so the group id cannot have been reused. */
	kill(-pid, SIGKILL);
	(void)corral_reaper_kill(&rp, &pid, 1, pid, 1);
	corral_reaper_release(&rp);
	if (corral_proc_reap(pid, &st->wstatus) < 0)
		return corral_err_set(err, errno, "cannot wait for '%s'",
		    c->cmd);
	if (r < 0)
		return -1;
	st->exited = WIFEXITED(st->wstatus);
	st->exit_code = st->exited ? WEXITSTATUS(st->wstatus) : 0;
	return 0;
}

int
corral_cmd_describe(struct corral_buf *b, const struct corral_cmd_status *st,
    long timeout_ms, const char *errfile)
{
	int fd, rc;

	if (st->timed_out)
		rc = corral_buf_addf(b, "timed out after %ld s",
		    timeout_ms / 1000);
	else
		rc = corral_proc_describe(b, st->wstatus, 1);
	if (rc < 0 || !errfile ||
	    (fd = open(errfile, O_RDONLY | O_CLOEXEC)) < 0)
		return rc;
	rc = corral_proc_add_last_line(b, fd);
	close(fd);
	return rc;
}

int
corral_cmd_quote(struct corral_buf *b, const char *s)
{
	if (corral_buf_addch(b, '\'') < 0)
		return -1;
	for (; *s; s++)
		if ((*s == '\'' ? corral_buf_addstr(b, "'\\''") :
		    corral_buf_addch(b, *s)) < 0)
			return -1;
	return corral_buf_addch(b, '\'');
}
