/* See LICENSE file for copyright and license details. */
/*
 * spawn.c runs one program and waits for it: make for the demo and the
 * doctor, a parts command for a plan.  The child gets /dev/null as stdin
 * and its output in a file or a pipe we drain before waiting, so it never
 * blocks on a full pipe.  A program that cannot be started is an error
 * with its reason, told apart from a program that ran and failed: the
 * child reports a failed exec through a close-on-exec pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"

/* In the child: set up and exec; on failure send errno and exit. */
static void
child(const struct corral_spawn *s, int outfd, int errfd)
{
	const char *const *e, *eq;
	char *name;
	int fd, saved;

	for (e = s->env; e && *e; e++) {
		if (!(eq = strchr(*e, '=')))
			continue;
		if (!(name = strndup(*e, (size_t)(eq - *e))) ||
		    setenv(name, eq + 1, 1) < 0)
			goto fail;
		free(name);
	}
	if (s->dir && chdir(s->dir) < 0)
		goto fail;
	if ((fd = open("/dev/null", O_RDONLY)) < 0 || dup2(fd, 0) < 0)
		goto fail;
	if (s->out && ((fd = open(s->out, O_WRONLY | O_CREAT | O_TRUNC,
	    0666)) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0))
		goto fail;
	if (outfd >= 0 && dup2(outfd, 1) < 0)
		goto fail;
	execvp(s->argv[0], (char *const *)s->argv);
fail:
	saved = errno;
	(void)!write(errfd, &saved, sizeof(saved));
	_exit(127);
}

/* Read fd to its end into b (NULL: discard).  0, or -1 with errno. */
static int
drain(int fd, struct corral_buf *b)
{
	char chunk[4096];
	ssize_t n;

	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (b && corral_buf_add(b, chunk, (size_t)n) < 0))
			return -1;
	}
	return 0;
}

static int
wait_for(pid_t pid, int *wstatus)
{
	while (waitpid(pid, wstatus, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

int
corral_spawn_run(const struct corral_spawn *s, int *wstatus,
    struct corral_err *err)
{
	int out[2] = { -1, -1 }, ep[2], childerr = 0, rc = 0, saved;
	pid_t pid;
	ssize_t n;

	if (pipe(ep) < 0 || fcntl(ep[1], F_SETFD, FD_CLOEXEC) < 0)
		return corral_err_set(err, errno, "cannot run '%s'", s->argv[0]);
	if (s->capture && pipe(out) < 0) {
		saved = errno;
		close(ep[0]);
		close(ep[1]);
		return corral_err_set(err, saved, "cannot run '%s'", s->argv[0]);
	}
	if ((pid = fork()) == 0) {
		close(ep[0]);
		if (out[0] >= 0)
			close(out[0]);
		child(s, out[1], ep[1]);
	}
	saved = errno;
	close(ep[1]);
	if (out[1] >= 0)
		close(out[1]);
	if (pid < 0)
		rc = corral_err_set(err, saved, "cannot run '%s'", s->argv[0]);
	if (rc == 0 && out[0] >= 0 && drain(out[0], s->capture) < 0)
		rc = corral_err_set(err, errno, "reading from '%s'", s->argv[0]);
	if (out[0] >= 0)
		close(out[0]);
	while ((n = read(ep[0], &childerr, sizeof(childerr))) < 0 &&
	    errno == EINTR)
		;
	close(ep[0]);
	if (pid > 0 && wait_for(pid, wstatus) < 0 && rc == 0)
		rc = corral_err_set(err, errno, "waiting for '%s'", s->argv[0]);
	if (rc == 0 && n == (ssize_t)sizeof(childerr))
		rc = corral_err_set(err, childerr, "cannot run '%s'",
		    s->argv[0]);
	return rc;
}

int
corral_wstatus_describe(struct corral_buf *b, int wstatus)
{
	const char *name;

	if (WIFEXITED(wstatus))
		return corral_buf_addf(b, "exit %d", WEXITSTATUS(wstatus));
	if (!WIFSIGNALED(wstatus))
		return corral_buf_addf(b, "wait status %d", wstatus);
	switch (WTERMSIG(wstatus)) {
	case SIGHUP: name = "SIGHUP"; break;
	case SIGINT: name = "SIGINT"; break;
	case SIGKILL: name = "SIGKILL"; break;
	case SIGSEGV: name = "SIGSEGV"; break;
	case SIGTERM: name = "SIGTERM"; break;
	case SIGABRT: name = "SIGABRT"; break;
	default: name = NULL;
	}
	if (name)
		return corral_buf_addf(b, "signal %d (%s)", WTERMSIG(wstatus),
		    name);
	return corral_buf_addf(b, "signal %d", WTERMSIG(wstatus));
}
