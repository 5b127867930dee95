/* See LICENSE file for copyright and license details. */
/*
 * reader.c reads a file one line at a time, with a large buffer: the
 * agents' logs, the .part files, history and the result files.  A line
 * is returned without its ending, and whether it had one (torn) and how
 * many bytes it took (raw) are kept, so that a caller can copy the file
 * back exactly or cut it at a line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"

#define IN_CHUNK (256 * 1024)

int
corral_reader_open(struct corral_reader *rd, const char *path,
    struct corral_err *err)
{
	memset(rd, 0, sizeof(*rd));
	rd->path = path;
	if ((rd->fd = corral_open_input(path, err)) < 0)
		return -1;
	if (fstat(rd->fd, &rd->st) < 0) {
		corral_err_set(err, errno, "cannot read '%s'", path);
		corral_reader_close(rd);
		return -1;
	}
	return 0;
}

void
corral_reader_close(struct corral_reader *rd)
{
	if (rd->fd >= 0)
		close(rd->fd);
	free(rd->buf);
	rd->fd = -1;
	rd->buf = rd->line = NULL;
}

/* Read more after buf[0..e), keeping room for a NUL.  Bytes read, or -1. */
static ssize_t
fill(struct corral_reader *rd, struct corral_err *err)
{
	size_t cap = rd->cap ? rd->cap : IN_CHUNK;
	ssize_t n;
	char *p;

	if (rd->e + 1 >= rd->cap) {
		if (rd->cap)
			cap *= 2;
		if (!(p = realloc(rd->buf, cap)))
			return corral_err_set(err, ENOMEM, "cannot read '%s'",
			    rd->path);
		rd->buf = p;
		rd->cap = cap;
	}
	while ((n = read(rd->fd, rd->buf + rd->e, rd->cap - 1 - rd->e)) < 0 &&
	    errno == EINTR)
		;
	if (n < 0)
		return corral_err_set(err, errno, "cannot read '%s'", rd->path);
	rd->e += (size_t)n;
	return n;
}

/*
 * The next line, without its ending (corral_line_chomp: '\n' or "\r\n"),
 * NUL terminated where its ending was, in the buffer: no line is copied
 * but one that a read cut, moved to the front.  1: a line; 0: end of
 * file; -1: read error (err set).
 */
int
corral_reader_next(struct corral_reader *rd, struct corral_err *err)
{
	char *nl;
	size_t n;
	ssize_t r;

	while (!(nl = rd->e > rd->b ? memchr(rd->buf + rd->b, '\n',
	    rd->e - rd->b) : NULL)) {
		if (rd->b) {
			memmove(rd->buf, rd->buf + rd->b, rd->e - rd->b);
			rd->e -= rd->b;
			rd->b = 0;
		}
		if ((r = fill(rd, err)) < 0)
			return -1;
		if (r == 0)
			break;
	}
	n = nl ? (size_t)(nl - (rd->buf + rd->b)) + 1 : rd->e - rd->b;
	if (n == 0)
		return 0;
	rd->line = rd->buf + rd->b;
	rd->b += n;
	rd->lineno++;
	rd->raw = n;
	rd->off = rd->end;
	rd->end += (off_t)n;
	rd->torn = !nl;
	if (!nl)
		rd->line[n] = '\0';
	rd->len = corral_line_chomp(rd->line, n);
	return 1;
}

int
corral_reader_seek(struct corral_reader *rd, off_t off,
    struct corral_err *err)
{
	if (lseek(rd->fd, off, SEEK_SET) < 0)
		return corral_err_set(err, errno, "cannot read '%s'",
		    rd->path);
	rd->b = rd->e = 0;
	rd->end = off;
	return 0;
}

int
corral_reader_rewind(struct corral_reader *rd, struct corral_err *err)
{
	if (corral_reader_seek(rd, 0, err) < 0)
		return -1;
	rd->lineno = 0;
	return 0;
}

ssize_t
corral_reader_read(struct corral_reader *rd, char *p, size_t n,
    struct corral_err *err)
{
	size_t k = rd->e - rd->b < n ? rd->e - rd->b : n;
	ssize_t r;

	if (k) {
		memcpy(p, rd->buf + rd->b, k);
		rd->b += k;
		rd->end += (off_t)k;
		return (ssize_t)k;
	}
	while ((r = read(rd->fd, p, n)) < 0 && errno == EINTR)
		;
	if (r < 0)
		return corral_err_set(err, errno, "cannot read '%s'", rd->path);
	rd->end += r;
	return r;
}

/* 1 when the file is not the one first opened (size or mtime moved). */
int
corral_reader_changed(struct corral_reader *rd)
{
	struct stat now;

	if (fstat(rd->fd, &now) < 0)
		return 1;
	return now.st_size != rd->st.st_size ||
	    now.st_mtim.tv_sec != rd->st.st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != rd->st.st_mtim.tv_nsec;
}
