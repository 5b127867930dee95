/* See LICENSE file for copyright and license details. */
/*
 * capture.c writes what a unit prints, read from its pipes, to its N.out
 * file, made when the first byte comes, keeping the head and the tail of an output larger than the cap
 * (struct capture, in run-private.h).  On the way it reads the streams for
 * what the note quotes: standard output as TAP, and the last line of each
 * (all of it, not only what the cap keeps).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "agent/run-private.h"
#include "record/record.h"

/* The longest last line kept, and how much of it a note quotes. */
#define LAST_LINE_MAX	1024
#define QUOTE_MAX	200

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
	if (c->err || !n)
		return;	/* the output is lost; the pipe must still drain */
	if (c->fd < 0 && (c->fd = corral_open_state(c->path, O_RDWR |
	    O_CREAT | O_TRUNC, 0666, NULL)) < 0) {
		c->err = errno ? errno : EINVAL;
		c->create_err = 1;
		return;
	}
	if (!c->over && (!c->max || c->size + (long long)n <= c->max)) {
		rc = pwrite_all(c->fd, p, n, c->size);
		c->size += (long long)n;
	} else {
		rc = capture_over(c, p, n);
	}
	if (rc < 0)
		c->err = errno ? errno : EIO;
}

static int
blank(const char *s, size_t n)
{
	for (; n > 0; s++, n--)
		if (*s && *s != ' ' && *s != '\t' && *s != '\r' && *s != '\f' &&
		    *s != '\v')
			return 0;
	return 1;
}

/* Put the kept tail after the marker, and cut the file there. */
void
corral_run_capture_finish(struct capture *c)
{
	char mark[96];
	long long keep = c->tail;
	int n;

	int i;

	(void)corral_tap_end(&c->tap);
	for (i = 0; i < 2; i++)	/* a last line without its '\n' */
		if (c->last[i].cur.len && !blank(c->last[i].cur.data,
		    c->last[i].cur.len))
			corral_note_lines_see(&c->notes, &c->last[i].cur);
	if (!c->over || c->err)
		return;
	n = snprintf(mark, sizeof(mark), "\n[corral: %lld bytes of output "
	    "left out]\n", c->total - c->head - keep);
	if (move_bytes(c, c->head + c->win - keep, c->head + n, keep) < 0 ||
	    pwrite_all(c->fd, mark, (size_t)n, c->head) < 0 ||
	    ftruncate(c->fd, c->head + n + keep) < 0)
		c->err = errno ? errno : EIO;
}

/* ------------------------------------------------------------------ */
/* What the note quotes                                                 */

void
corral_run_capture_init(struct capture *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	corral_tap_init(&c->tap, 0);
}

void
corral_run_capture_release(struct capture *c)
{
	int i;

	corral_tap_release(&c->tap);
	corral_note_lines_release(&c->notes);
	free(c->junit);
	free(c->junit_copy);
	corral_buf_release(&c->junit_bad);
	for (i = 0; i < 2; i++) {
		corral_buf_release(&c->last[i].cur);
		corral_buf_release(&c->last[i].last);
	}
}


/* The line in l->cur is whole: the last one, unless blank. */
static void
line_done(struct last_line *l, struct corral_note_lines *notes)
{
	struct corral_buf t;

	if (!l->cur.len || blank(l->cur.data, l->cur.len)) {
		corral_buf_reset(&l->cur);
		return;
	}
	corral_note_lines_see(notes, &l->cur);
	t = l->last;
	l->last = l->cur;
	l->cur = t;
	corral_buf_reset(&l->cur);
}

/* Memory running out loses the line, never the output. */
static void
last_line_add(struct last_line *l, struct corral_note_lines *notes,
    const char *p, size_t n)
{
	int whole;

	while (n) {
		(void)corral_line_take(&l->cur, LAST_LINE_MAX, &p, &n, &whole);
		if (whole)
			line_done(l, notes);
	}
}

void
corral_run_capture_stream(struct capture *c, int stream, const char *p,
    size_t n)
{
	/* Read first: p may be c->buf, which moving the window reuses. */
	last_line_add(&c->last[stream == 2], &c->notes, p, n);
	if (stream == 1)
		(void)corral_tap_add(&c->tap, p, n);
	corral_run_capture_add(c, p, n);
}

/* Append ": " and s[0..n) trimmed and cut; nothing when it is blank. */
static int
add_quote(struct corral_buf *b, const char *s, size_t n)
{
	while (n && blank(s, 1))
		s++, n--;
	while (n && blank(s + n - 1, 1))
		n--;
	if (!n)
		return 0;
	if (corral_buf_addstr(b, ": ") < 0)
		return -1;
	return corral_add_excerpt(b, s, n, QUOTE_MAX);
}

int
corral_run_capture_detail(const struct capture *c, struct corral_buf *b)
{
	const struct corral_buf *l;
	int i;

	if ((l = corral_note_lines_best(&c->notes, NOTE_PATTERN)))
		return add_quote(b, l->data, l->len);
	if (corral_tap_found(&c->tap) && c->tap.first_fail.len)
		return add_quote(b, c->tap.first_fail.data,
		    c->tap.first_fail.len);
	if ((l = corral_note_lines_best(&c->notes, NOTE_PYTEST)))
		return add_quote(b, l->data, l->len);
	for (i = 1; i >= 0; i--) {
		l = c->last[i].cur.len && !blank(c->last[i].cur.data,
		    c->last[i].cur.len) ? &c->last[i].cur : &c->last[i].last;
		if (l->len)
			return add_quote(b, l->data, l->len);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The unit's own JUnit                                                 */

/*
 * The file rel of the clone, read whole into b: 0, or -1 with err set.
 * No link is followed, not even as a directory of rel: a unit that
 * plants one (out -> /etc) makes the agent read nothing outside.
 */
static int
junit_bytes(const char *clone, const char *rel, struct corral_buf *b,
    struct corral_err *err)
{
	struct stat st;
	int dfd, fd, rc = -1;

	if ((dfd = open(clone, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return corral_err_set(err, errno, "cannot open '%s'", clone);
	fd = corral_open_beneath(dfd, rel, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		corral_err_set(err, errno, "cannot open '%s'", rel);
	close(dfd);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		corral_err_set(err, errno, "cannot read '%s'", rel);
	else if (!S_ISREG(st.st_mode))
		corral_err_set(err, 0, "'%s' is not a regular file", rel);
	else if (st.st_size > CORRAL_JUNIT_MAX)
		corral_err_set(err, 0, "'%s' is larger than %lld bytes", rel,
		    CORRAL_JUNIT_MAX);
	else if (corral_fd_chunks(fd, corral_buf_eat, b) < 0)
		corral_err_set(err, errno, "cannot read '%s'", rel);
	else
		rc = 0;
	close(fd);
	return rc;
}

int
corral_run_capture_junit(struct capture *c, const char *clone,
    const char *rel)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_err err, ignored;
	struct corral_tap t;
	int rc = 0;

	corral_tap_init(&t, 0);
	memset(&err, 0, sizeof(err));
	if (junit_bytes(clone, rel, &b, &err) < 0)
		rc = corral_buf_addf(&c->junit_bad, "%s%s%s", err.msg,
		    err.errnum ? ": " : "", err.errnum ?
		    strerror(err.errnum) : "");
	else if (corral_junit_read(&t, b.data ? b.data : "", b.len,
	    &err) < 0)
		rc = err.errnum == ENOMEM ? -1 :
		    corral_buf_addf(&c->junit_bad, "'%s': %s", rel, err.msg);
	else {
		corral_tap_release(&c->tap);
		c->tap = t;
		corral_tap_init(&t, 0);
		(void)corral_atomic_file(c->junit_copy, b.data ? b.data : "",
		    b.len, 0, &ignored);
	}
	corral_tap_release(&t);
	corral_buf_release(&b);
	return rc;
}
