/* See LICENSE file for copyright and license details. */
/*
 * cmd.c runs a finder or a patcher: /bin/sh -c 'CMD "$@"' CMD DIR, with
 * DIR as its working directory, its output in files (no pipe can fill
 * up), in a process group of its own.  When it ends, or when its time is
 * up, the whole group is killed, so nothing it started outlives it and a
 * hung finder cannot hang corral-fix.
 */
#define _GNU_SOURCE	/* posix_spawn_file_actions_addchdir_np */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "repair/repair.h"

/* The longest stderr line quoted in a message, in bytes. */
#define QUOTE_MAX	200

extern char **environ;

/* 1 when the NAME= of var is set by one of extra. */
static int
overridden(const char *var, const char *const *extra)
{
	size_t n;

	for (; extra && *extra; extra++) {
		n = strcspn(*extra, "=");
		if (!strncmp(var, *extra, n) && var[n] == '=')
			return 1;
	}
	return 0;
}

static int
make_env(struct corral_strv *env, const char *const *extra)
{
	char **e;

	for (e = environ; *e; e++)
		if (!overridden(*e, extra) && corral_strv_add(env, *e) < 0)
			return -1;
	for (; extra && *extra; extra++)
		if (corral_strv_add(env, *extra) < 0)
			return -1;
	return 0;
}

static int
setup(posix_spawn_file_actions_t *fa, posix_spawnattr_t *at,
    const struct corral_cmd *c)
{
	sigset_t none;
	int e;

	sigemptyset(&none);
	if ((e = posix_spawn_file_actions_addopen(fa, 0,
	    c->in ? c->in : "/dev/null", O_RDONLY, 0)) ||
	    (e = posix_spawn_file_actions_addopen(fa, 1, c->out,
	    O_WRONLY | O_CREAT | O_TRUNC, 0666)) ||
	    (e = posix_spawn_file_actions_addopen(fa, 2, c->errout,
	    O_WRONLY | O_CREAT | O_TRUNC, 0666)) ||
	    (e = posix_spawn_file_actions_addchdir_np(fa, c->dir)) ||
	    (e = posix_spawnattr_setpgroup(at, 0)) ||
	    (e = posix_spawnattr_setsigmask(at, &none)))
		return e;
	return posix_spawnattr_setflags(at, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGMASK);
}

static int
spawn(const struct corral_cmd *c, pid_t *pid, struct corral_err *err)
{
	struct corral_strv env = CORRAL_STRV_INIT;
	struct corral_buf script = CORRAL_BUF_INIT;
	char *argv[] = { "sh", "-c", NULL, NULL, NULL, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int e;

	if (make_env(&env, c->env) < 0 ||
	    corral_buf_addf(&script, "%s \"$@\"", c->cmd) < 0) {
		corral_strv_release(&env);
		corral_buf_release(&script);
		return corral_err_set(err, ENOMEM, "cannot run '%s'", c->cmd);
	}
	argv[2] = script.data;
	argv[3] = (char *)c->cmd;
	argv[4] = (char *)c->dir;
	if (!(e = posix_spawn_file_actions_init(&fa))) {
		if (!(e = posix_spawnattr_init(&at))) {
			if (!(e = setup(&fa, &at, c)))
				e = posix_spawn(pid, "/bin/sh", &fa, &at, argv,
				    env.v);
			posix_spawnattr_destroy(&at);
		}
		posix_spawn_file_actions_destroy(&fa);
	}
	corral_strv_release(&env);
	corral_buf_release(&script);
	if (e)
		return corral_err_set(err, e, "cannot run '%s'", c->cmd);
	return 0;
}

static long long
now_ms(void)
{
	return corral_time_ms();
}

/*
 * Wait for pid until it exits or deadline (ms, 0: none) passes.  Returns
 * 1 when it exited (not yet reaped), 0 on timeout, -1 on error.
 */
static int
await(pid_t pid, long long deadline)
{
	struct timespec nap = { 0, 1000000 };
	siginfo_t si;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT |
		    (deadline ? WNOHANG : 0)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (si.si_pid == pid)
			return 1;
		if (now_ms() >= deadline)
			return 0;
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 32000000)
			nap.tv_nsec *= 2;
	}
}

int
corral_cmd_run(const struct corral_cmd *c, struct corral_cmd_status *st,
    struct corral_err *err)
{
	long long deadline = c->timeout_ms > 0 ? now_ms() + c->timeout_ms : 0;
	pid_t pid;
	int status, r;

	memset(st, 0, sizeof(*st));
	if (spawn(c, &pid, err) < 0)
		return -1;
	st->started = 1;
	if ((r = await(pid, deadline)) < 0)
		corral_err_set(err, errno, "cannot wait for '%s'", c->cmd);
	st->timed_out = r == 0;
	/* Not reaped yet, so the group id cannot have been reused. */
	kill(-pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return corral_err_set(err, errno, "cannot wait for "
			    "'%s'", c->cmd);
	if (r < 0)
		return -1;
	if (WIFEXITED(status)) {
		st->exited = 1;
		st->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		st->signal = WTERMSIG(status);
	}
	return 0;
}

/* Append ": LAST" for the last non-blank line of file, if any. */
static int
add_last_line(struct corral_buf *b, const char *file)
{
	struct corral_buf text = CORRAL_BUF_INIT;
	size_t end, start, cut;
	int rc = 0;

	if (!file || corral_read_file(file, &text, NULL) < 0 || !text.len) {
		corral_buf_release(&text);
		return 0;
	}
	for (end = text.len; end > 0 && isspace((unsigned char)
	    text.data[end - 1]); end--)
		;
	for (start = end; start > 0 && text.data[start - 1] != '\n'; start--)
		;
	while (start < end && isspace((unsigned char)text.data[start]))
		start++;
	cut = end - start > QUOTE_MAX ? QUOTE_MAX : end - start;
	while (cut < end - start && cut > 0 &&
	    ((unsigned char)text.data[start + cut] & 0xc0) == 0x80)
		cut--;
	if (cut && (corral_buf_addstr(b, ": ") < 0 ||
	    corral_buf_add(b, text.data + start, cut) < 0 ||
	    (cut < end - start && corral_buf_addstr(b, "...") < 0)))
		rc = -1;
	corral_buf_release(&text);
	return rc;
}

int
corral_cmd_describe(struct corral_buf *b, const struct corral_cmd_status *st,
    long timeout_ms, const char *errfile)
{
	int rc;

	if (st->timed_out)
		rc = corral_buf_addf(b, "timed out after %ld s",
		    timeout_ms / 1000);
	else if (st->exited)
		rc = corral_buf_addf(b, "exit %d", st->exit_code);
	else
		rc = corral_buf_addf(b, "signal %d", st->signal);
	if (rc < 0)
		return -1;
	return add_last_line(b, errfile);
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
