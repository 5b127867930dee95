/* See LICENSE file for copyright and license details. */
/*
 * reader.c reads a file one line at a time, with a large buffer: the
 * agents' logs, the .part files, history and the result files.  A line
 * is returned without its ending, and whether it had one (torn) and how
 * many bytes it took (raw) are kept, so that a caller can copy the file
 * back exactly or cut it at a line.  The result files are also read here
 * record by record, for the scoreboard and the reports, which count the
 * lines that are not records alike.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge/merge-private.h"

#define IN_CHUNK (256 * 1024)

int
merge_reader_open(struct reader *rd, const char *path, struct corral_err *err)
{
	memset(rd, 0, sizeof(*rd));
	rd->path = path;
	if (!(rd->fp = corral_fopen_input(path, err)))
		return -1;
	if ((rd->vbuf = malloc(IN_CHUNK)))
		setvbuf(rd->fp, rd->vbuf, _IOFBF, IN_CHUNK);
	if (fstat(fileno(rd->fp), &rd->st) < 0) {
		corral_err_set(err, errno, "cannot read '%s'", path);
		merge_reader_close(rd);
		return -1;
	}
	return 0;
}

void
merge_reader_close(struct reader *rd)
{
	if (rd->fp)
		fclose(rd->fp);
	free(rd->vbuf);
	free(rd->line);
	rd->fp = NULL;
	rd->vbuf = rd->line = NULL;
}

/*
 * The next line, without its ending (corral_line_chomp: '\n' or "\r\n"),
 * NUL terminated.  1: a line; 0: end of file; -1: read error (err set).
 */
int
merge_reader_next(struct reader *rd, struct corral_err *err)
{
	ssize_t n;

	errno = 0;
	if ((n = getline(&rd->line, &rd->cap, rd->fp)) < 0) {
		if (!ferror(rd->fp) && errno != ENOMEM)
			return 0;
		return corral_err_set(err, errno ? errno : EIO,
		    "cannot read '%s'", rd->path);
	}
	rd->lineno++;
	rd->raw = (size_t)n;
	rd->off = rd->end;
	rd->end += (off_t)n;
	rd->torn = rd->line[n - 1] != '\n';
	rd->len = corral_line_chomp(rd->line, (size_t)n);
	return 1;
}

int
merge_reader_rewind(struct reader *rd, struct corral_err *err)
{
	if (fseek(rd->fp, 0, SEEK_SET) < 0)
		return corral_err_set(err, errno, "cannot read '%s'",
		    rd->path);
	rd->lineno = 0;
	rd->end = 0;
	return 0;
}

/* 1 when the file is not the one first opened (size or mtime moved). */
int
merge_reader_changed(struct reader *rd)
{
	struct stat now;

	if (fstat(fileno(rd->fp), &now) < 0)
		return 1;
	return now.st_size != rd->st.st_size ||
	    now.st_mtim.tv_sec != rd->st.st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != rd->st.st_mtim.tv_nsec;
}

/* The line rd is at, as a record, to m->row; else named in m->unreadable. */
static int
result_line(const struct merge_results *m, struct reader *rd,
    const char *name, int success)
{
	struct corral_json_record r;
	struct corral_buf why = CORRAL_BUF_INIT;
	struct corral_err lerr;
	int rc;

	if (corral_line_blank(rd->line, rd->len))
		return 0;
	if (corral_json_record_parse(rd->line, rd->len, &r, &lerr) == 0) {
		rc = m->row(m->ctx, &r, success);
		corral_json_record_release(&r);
		return rc;
	}
	rc = corral_buf_addf(&why, "%s line %zu: %s", name, rd->lineno,
	    lerr.msg);
	if (rc == 0)
		rc = corral_strv_add(m->unreadable, why.data);
	corral_buf_release(&why);
	return rc;
}

int
merge_results_read(const struct merge_results *m, const char *name,
    int success, struct corral_err *err)
{
	struct corral_buf path = CORRAL_BUF_INIT;
	struct corral_err lerr;
	struct reader rd;
	int rc;

	if (corral_buf_addf(&path, "%s/%s", m->dir, name) < 0)
		return corral_err_set(err, ENOMEM, "reading '%s'", m->dir);
	if (merge_reader_open(&rd, path.data, &lerr) < 0) {
		rc = lerr.errnum == ENOENT ? 0 : corral_err_set(err,
		    lerr.errnum, "%s", lerr.msg);
		corral_buf_release(&path);
		return rc;
	}
	while ((rc = merge_reader_next(&rd, err)) == 1)
		if (result_line(m, &rd, name, success) < 0) {
			rc = corral_err_set(err, ENOMEM, "reading '%s'",
			    path.data);
			break;
		}
	merge_reader_close(&rd);
	corral_buf_release(&path);
	return rc < 0 ? -1 : 1;
}
