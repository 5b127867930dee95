/* See LICENSE file for copyright and license details. */
/*
 * capture.c writes what a unit prints, read from its pipe, to its N.out
 * file, keeping the head and the tail of an output larger than the cap
 * (struct capture, in run-private.h).
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "base/base.h"
#include "agent/agent.h"
#include "agent/agent-private.h"
#include "agent/run-private.h"

/* ------------------------------------------------------------------ */
/* Capturing a unit's output                                            */

static int
pwrite_all(int fd, const char *p, size_t n, off_t off)
{
	ssize_t w;

	while (n > 0) {
		w = pwrite(fd, p, n, off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

/* Move n bytes of c->fd from src to dst, which may overlap. */
static int
move_bytes(struct capture *c, off_t src, off_t dst, long long n)
{
	long long done = 0, k;
	off_t from, to;
	ssize_t got;

	while (done < n) {
		k = n - done < IOBUF_SIZE ? n - done : IOBUF_SIZE;
		/* Forward when moving down, from the end when moving up. */
		from = dst < src ? src + done : src + (n - done - k);
		to = dst < src ? dst + done : dst + (n - done - k);
		if ((got = pread(c->fd, c->buf, (size_t)k, from)) != k ||
		    pwrite_all(c->fd, c->buf, (size_t)k, to) < 0)
			return -1;
		done += k;
	}
	return 0;
}

static int
capture_over(struct capture *c, const char *p, size_t n)
{
	long long k, src;

	if (!c->over) {
		k = c->head > c->size ? c->head - c->size : 0;
		if (k && pwrite_all(c->fd, p, (size_t)k, c->size) < 0)
			return -1;
		c->size += k;
		p += k;
		n -= (size_t)k;
		c->over = 1;
		c->win = c->size - c->head;
	}
	if ((long long)n >= c->tail) {
		c->win = c->tail;
		return pwrite_all(c->fd, p + n - c->tail, (size_t)c->tail,
		    c->head);
	}
	if (pwrite_all(c->fd, p, n, c->head + c->win) < 0)
		return -1;
	c->win += (long long)n;
	if (c->win < 2 * c->tail)
		return 0;
	src = c->head + c->win - c->tail;
	c->win = c->tail;
	return move_bytes(c, src, c->head, c->tail);
}

void
corral_run_capture_add(struct capture *c, const char *p, size_t n)
{
	int rc;

	c->total += (long long)n;
	if (c->err)
		return;	/* the output is lost; the pipe must still drain */
	if (!c->over && (!c->max || c->size + (long long)n <= c->max)) {
		rc = pwrite_all(c->fd, p, n, c->size);
		c->size += (long long)n;
	} else {
		rc = capture_over(c, p, n);
	}
	if (rc < 0)
		c->err = errno ? errno : EIO;
}

/* Put the kept tail after the marker, and cut the file there. */
void
corral_run_capture_finish(struct capture *c)
{
	char mark[96];
	long long keep = c->tail;
	int n;

	if (!c->over || c->err)
		return;
	n = snprintf(mark, sizeof(mark), "\n[corral: %lld bytes of output "
	    "left out]\n", c->total - c->head - keep);
	if (move_bytes(c, c->head + c->win - keep, c->head + n, keep) < 0 ||
	    pwrite_all(c->fd, mark, (size_t)n, c->head) < 0 ||
	    ftruncate(c->fd, c->head + n + keep) < 0)
		c->err = errno ? errno : EIO;
}
