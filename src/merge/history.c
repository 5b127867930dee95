/* See LICENSE file for copyright and license details. */
/*
 * history.c appends to history.jsonl the records of every run the result
 * files hold that history has not committed, each run followed by its
 * commit line ({"corral":"history","run":...,"records":N}).  History is
 * append-only and never wiped: after the last commit line, records of an
 * append a killed merge left are kept and not appended twice, a torn last
 * line that is not a record is cut, and other unreadable lines are moved
 * to a file of their own beside it.
 */
#define _GNU_SOURCE	/* copy_file_range */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "merge/merge-private.h"

struct history {
	int fd;
	char *path;
	struct corral_set *committed;
	struct corral_set *present;	/* "RUN\0UNIT", see note_present */
	size_t *have;			/* per run of m->runs: of them */
	struct corral_buf b;
	struct corral_buf key;
	off_t keep;	/* the end of the last commit line */
	size_t nbad;	/* complete lines after it that are not records */
	size_t torn;	/* bytes of a torn last line that is not one */
	int need_nl;	/* the last line is one, without its '\n' */
};

/* Pass one: the runs history has committed, and where the last one ends. */
static int
history_commits(struct history *h, struct corral_err *err)
{
	off_t off = 0;
	struct corral_reader rd;
	int rc, c;

	if (corral_reader_open(&rd, h->path, err) < 0)
		return -1;
	while ((rc = corral_reader_next(&rd, err)) > 0) {
		off += (off_t)rd.raw;
		if (rd.torn)
			continue;
		if ((c = corral_json_commit_parse(rd.line, rd.len,
		    &h->key)) < 0 || (c == 1 && corral_set_put(h->committed,
		    h->key.data, 0, NULL) < 0)) {
			rc = merge_nomem(err);
			break;
		}
		if (c == 1)
			h->keep = off;
	}
	corral_reader_close(&rd);
	return rc;
}

/*
 * Note that history holds, uncommitted, jr of one of this merge's runs, so
 * that completing its run appends every unit once: records a merge killed
 * half-way through its append left, or records of a history filtered or
 * written by hand.  0, or -1 on ENOMEM.
 */
static int
note_present(struct merge *m, struct history *h,
    const struct corral_json_record *jr)
{
	const char *run = jr->run ? jr->run : "none";
	long *vp;
	int put;

	if (!(vp = corral_set_get(m->run_ix, run)))
		return 0;
	corral_buf_reset(&h->key);
	if (corral_buf_add(&h->key, run, strlen(run) + 1) < 0 ||
	    corral_buf_addstr(&h->key, jr->unit) < 0 ||
	    (put = corral_set_putn(h->present, h->key.data, h->key.len, 0,
	    NULL)) < 0)
		return -1;
	h->have[*vp] += (size_t)put;
	return 0;
}

/*
 * One line after the last commit line: 1 when it is readable (blank, a
 * record, noted, or a commit line, noted), 0 when not, -1 on ENOMEM.
 */
static int
tail_line(struct merge *m, struct history *h, const struct corral_reader *rd)
{
	struct corral_json_record jr;
	int c;

	if (corral_line_blank(rd->line, rd->len))
		return 1;
	if ((c = corral_json_commit_parse(rd->line, rd->len, &h->key)) != 0)
		return c < 0 || corral_set_put(h->committed, h->key.data, 0,
		    NULL) < 0 ? -1 : 1;
	if (corral_json_record_parse(rd->line, rd->len, &jr, NULL) < 0)
		return 0;
	c = note_present(m, h, &jr);
	corral_json_record_release(&jr);
	return c < 0 ? -1 : 1;
}

/* Pass two, over what follows the last commit line. */
static int
history_tail(struct merge *m, struct history *h, struct corral_err *err)
{
	struct corral_reader rd;
	int rc, c;

	if (corral_reader_open(&rd, h->path, err) < 0)
		return -1;
	if (corral_reader_seek(&rd, h->keep, err) < 0) {
		corral_reader_close(&rd);
		return -1;
	}
	while ((rc = corral_reader_next(&rd, err)) > 0) {
		if ((c = tail_line(m, h, &rd)) < 0) {
			rc = merge_nomem(err);
			break;
		}
		if (rd.torn && c)
			h->need_nl = 1;
		else if (rd.torn)
			h->torn = rd.raw;
		else if (!c)
			h->nbad++;
	}
	corral_reader_close(&rd);
	return rc;
}

/* The ending the line rd had: "\n", "\r\n", or none (torn). */
static const char *
ending_of(const struct corral_reader *rd)
{
	return rd->raw - rd->len == 2 ? "\r\n" : rd->raw > rd->len ? "\n" :
	    "";
}

/* h->path ".unreadable-" and the time, made unique among its siblings. */
static char *
aside_name(const struct history *h)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct stat st;
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	int k;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	for (k = 1; k < 1000; k++) {
		corral_buf_reset(&b);
		if (corral_buf_addf(&b, "%s.unreadable-%s", h->path,
		    stamp) < 0 || (k > 1 && corral_buf_addf(&b, "-%d", k) < 0))
			break;
		if (lstat(b.data, &st) < 0 && errno == ENOENT)
			return b.data;
	}
	corral_buf_release(&b);
	return NULL;
}

/* Copy the first n bytes of rd to a. */
static int
copy_head(struct corral_reader *rd, off_t n, struct corral_atomic *a,
    struct corral_err *err)
{
	char *chunk;
	size_t want;
	ssize_t r = 0;
	int rc = 0;

	if (!(chunk = malloc(MERGE_OUT_CHUNK)))
		return merge_nomem(err);
	for (; rc == 0 && n > 0; n -= (off_t)r) {
		want = n < MERGE_OUT_CHUNK ? (size_t)n : MERGE_OUT_CHUNK;
		if ((r = corral_reader_read(rd, chunk, want, err)) <= 0)
			rc = r < 0 ? -1 : corral_err_set(err, 0,
			    "cannot read '%s'", rd->path);
		else
			rc = corral_atomic_write(a, chunk, (size_t)r, err);
	}
	free(chunk);
	return rc;
}

/*
 * Split what follows the last commit line: readable lines stay, the
 * unreadable ones go to aside, a torn last line that is not a record
 * goes.  a receives the history to keep.
 */
static int
rewrite_tail(struct merge *m, struct history *h, struct corral_atomic *a,
    struct corral_buf *aside, struct corral_err *err)
{
	struct corral_buf *to;
	struct corral_reader rd;
	int rc, c;

	if (corral_reader_open(&rd, h->path, err) < 0)
		return -1;
	if ((rc = copy_head(&rd, h->keep, a, err)) < 0)
		goto out;
	while ((rc = corral_reader_next(&rd, err)) > 0) {
		if ((c = tail_line(m, h, &rd)) < 0) {
			rc = merge_nomem(err);
			break;
		}
		if (rd.torn && !c)
			continue;
		to = c ? &h->b : aside;
		if (corral_buf_add(to, rd.line, rd.len) < 0 ||
		    corral_buf_addstr(to, rd.torn ? "\n" : ending_of(&rd)) < 0) {
			rc = merge_nomem(err);
			break;
		}
		if (h->b.len < MERGE_OUT_CHUNK)
			continue;
		if ((rc = corral_atomic_write(a, h->b.data, h->b.len, err)) < 0)
			break;
		corral_buf_reset(&h->b);
	}
	if (rc == 0 && h->b.len)
		rc = corral_atomic_write(a, h->b.data, h->b.len, err);
	corral_buf_reset(&h->b);
out:
	corral_reader_close(&rd);
	return rc;
}

/*
 * History is never wiped: its unreadable lines after the last commit line
 * are moved to a file of their own, named in a warning, and the rest is
 * kept (written beside the old history, renamed over it).
 */
static int
history_aside(struct merge *m, struct history *h, struct corral_err *err)
{
	struct corral_buf aside = CORRAL_BUF_INIT;
	struct corral_atomic a;
	char *name = NULL;
	int rc = -1;

	if (corral_atomic_open(&a, h->path, err) < 0)
		return -1;
	if (rewrite_tail(m, h, &a, &aside, err) < 0)
		goto fail;
	if (!(name = aside_name(h))) {
		corral_err_set(err, errno, "cannot name a file beside '%s'",
		    h->path);
		goto fail;
	}
	if (corral_atomic_file(name, aside.data, aside.len, 0, err) < 0)
		goto fail;
	if (corral_atomic_commit(&a, 0, err) < 0)
		goto out;
	merge_say(m, "'%s': moved %zu unreadable line%s to '%s'", h->path,
	    h->nbad, h->nbad == 1 ? "" : "s", name);
	if (h->torn)
		merge_say(m, "'%s': dropped a torn last line of %zu bytes",
		    h->path, h->torn);
	close(h->fd);
	h->fd = corral_open_state(h->path, O_RDWR | O_APPEND, 0, err);
	if (h->fd >= 0)
		rc = 0;
	goto out;
fail:
	corral_atomic_abort(&a);
out:
	corral_buf_release(&aside);
	free(name);
	return rc;
}

/*
 * Read history: the runs it has committed, and what follows the last
 * commit line -- records of an append a killed merge left unfinished, or
 * of a history written without commit lines: kept, and noted so that no
 * unit of a run is appended twice.  Only a torn last line that is not a
 * record is cut; other unreadable lines are moved aside.
 */
static int
history_scan(struct merge *m, struct history *h, struct corral_err *err)
{
	struct stat st;

	if (history_commits(h, err) < 0)
		return -1;
	if (fstat(h->fd, &st) < 0)
		return corral_err_set(err, errno, "cannot read '%s'", h->path);
	if (st.st_size <= h->keep)
		return 0;
	if (history_tail(m, h, err) < 0)
		return -1;
	if (h->nbad)
		return history_aside(m, h, err);
	if (h->torn) {
		merge_say(m, "'%s': dropped a torn last line of %zu bytes",
		    h->path, h->torn);
		if (ftruncate(h->fd, st.st_size - (off_t)h->torn) < 0)
			return corral_err_set(err, errno, "cannot truncate "
			    "'%s'", h->path);
	}
	if (h->need_nl && corral_buf_addch(&h->b, '\n') < 0)
		return merge_nomem(err);
	return 0;
}

static int
history_flush(struct history *h, struct corral_err *err)
{
	if (h->b.len && corral_write_all(h->fd, h->b.data, h->b.len) < 0)
		return corral_err_set(err, errno, "cannot write '%s'",
		    h->path);
	corral_buf_reset(&h->b);
	return 0;
}

/*
 * How many kept records with this ok belong to run; *all is set when
 * every one of them does.
 */
static size_t
count_run(const struct merge *m, int ok, uint32_t run, int *all)
{
	size_t i, n = 0;

	*all = 1;
	for (i = 0; i < m->nrecs; i++) {
		if (m->recs[i].dropped || m->recs[i].ok != ok)
			continue;
		if (m->recs[i].run == run)
			n++;
		else
			*all = 0;
	}
	return n;
}

/*
 * Append what rd has left in the kernel, without a copy through this
 * process: copy_file_range, which refuses an O_APPEND descriptor, to one
 * of history's own opened at its end (the merge lock keeps other writers
 * out).  0 when all is copied or nothing could be (the caller copies what
 * is left), -1 with err set.
 */
static int
history_splice(struct history *h, struct corral_reader *rd,
    struct corral_err *err)
{
	struct stat st;
	ssize_t r;
	off_t at;
	int fd;

	if ((fd = corral_open_state(h->path, O_WRONLY, 0, NULL)) < 0)
		return 0;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return 0;
	}
	at = st.st_size;
	while ((r = copy_file_range(rd->fd, NULL, fd, &at, MERGE_OUT_CHUNK *
	    16, 0)) > 0 || (r < 0 && errno == EINTR))
		;
	if (r < 0 && errno != EXDEV && errno != EINVAL && errno != ENOSYS &&
	    errno != EOPNOTSUPP && errno != EBADF)
		corral_err_set(err, errno, "cannot write '%s'", h->path);
	else
		r = 0;
	close(fd);
	return r < 0 ? -1 : 0;
}

/* Append the whole result file rd, which must be size bytes long. */
static int
history_whole(struct history *h, struct corral_reader *rd, off_t size,
    struct corral_err *err)
{
	char *chunk;
	ssize_t r;
	int rc = 0;

	if (rd->st.st_size != size)
		return corral_err_set(err, 0, "'%s' is not what this merge "
		    "wrote", rd->path);
	if (history_flush(h, err) < 0 || history_splice(h, rd, err) < 0)
		return -1;
	if (!(chunk = malloc(MERGE_OUT_CHUNK)))
		return merge_nomem(err);
	while (rc == 0 && (r = corral_reader_read(rd, chunk, MERGE_OUT_CHUNK,
	    err)) != 0)
		if (r < 0 || corral_write_all(h->fd, chunk, (size_t)r) < 0)
			rc = r < 0 ? -1 : corral_err_set(err, errno,
			    "cannot write '%s'", h->path);
	free(chunk);
	return rc;
}

/*
 * 1 when the record line[0..len) of run is one history holds already, 0
 * when not, -1 on ENOMEM (a line the merge wrote is a record).
 */
static int
is_present(struct history *h, const char *run, const char *line, size_t len)
{
	struct corral_json_record jr;
	int rc;

	if (corral_json_record_parse(line, len, &jr, NULL) < 0)
		return 0;
	corral_buf_reset(&h->key);
	if (corral_buf_add(&h->key, run, strlen(run) + 1) < 0 ||
	    corral_buf_addstr(&h->key, jr.unit) < 0)
		rc = -1;
	else
		rc = corral_set_getn(h->present, h->key.data, h->key.len) !=
		    NULL;
	corral_json_record_release(&jr);
	return rc;
}

/*
 * Append the lines of rd whose records (kept, this ok) belong to run and
 * that history does not hold yet, counting them in *n.
 */
static int
history_lines(struct merge *m, struct history *h, struct corral_reader *rd,
    int ok, uint32_t run, size_t *n, struct corral_err *err)
{
	size_t i;
	int rc = 0, have;

	for (i = 0; i < m->nrecs && rc == 0; i++) {
		struct rec *r = &m->recs[i];

		if (r->dropped || r->ok != ok)
			continue;
		if ((rc = corral_reader_next(rd, err)) == 0)
			return corral_err_set(err, 0, "'%s' is not what this "
			    "merge wrote", rd->path);
		if (rc < 0)
			return -1;
		rc = 0;
		if (r->run != run)
			continue;
		if ((have = h->have[run] ? is_present(h, m->runs.v[run],
		    rd->line, rd->len) : 0) < 0)
			return merge_nomem(err);
		if (have)
			continue;
		if (corral_buf_add(&h->b, rd->line, rd->len) < 0 ||
		    corral_buf_addch(&h->b, '\n') < 0)
			rc = merge_nomem(err);
		else if (h->b.len >= MERGE_OUT_CHUNK)
			rc = history_flush(h, err);
		(*n)++;
	}
	return rc;
}

/*
 * Append the records of run from result file o (the kept records with
 * ok == ok, in order) that history lacks, counting them in *n.  A file
 * that is all of one run history knows nothing of, the usual case, is
 * copied whole.
 */
static int
history_copy(struct merge *m, struct history *h, const struct out *o,
    const char *name, int ok, uint32_t run, size_t *n,
    struct corral_err *err)
{
	struct corral_reader rd;
	size_t k;
	char *path;
	int rc, all;

	if (!(k = count_run(m, ok, run, &all)))
		return 0;
	if (!(path = merge_join(m->outdir, name)))
		return merge_nomem(err);
	if ((rc = corral_reader_open(&rd, path, err)) == 0) {
		if (all && !h->have[run]) {
			rc = history_whole(h, &rd, o->size, err);
			*n += k;
		} else {
			rc = history_lines(m, h, &rd, ok, run, n, err);
		}
		corral_reader_close(&rd);
	}
	free(path);
	return rc;
}

/*
 * Append run's records, then the commit line that makes them count; its
 * "records" are all of the run's that history holds.
 */
static int
history_run(struct merge *m, struct history *h, uint32_t run,
    struct corral_err *err)
{
	const char *name = m->runs.v[run];
	size_t n = h->have[run];

	if (history_copy(m, h, &m->succ, "successes.jsonl", 1, run, &n,
	    err) < 0 ||
	    history_copy(m, h, &m->fail, "failures.jsonl", 0, run, &n,
	    err) < 0)
		return -1;
	if (corral_buf_addstr(&h->b, "{\"corral\":\"history\",\"run\":") < 0 ||
	    corral_buf_addjson(&h->b, name, strlen(name)) < 0 ||
	    corral_buf_addf(&h->b, ",\"records\":%zu}\n", n) < 0)
		return merge_nomem(err);
	return history_flush(h, err);
}

/* The runs of kept records that history lacks, sorted; NULL-terminated. */
static const char **
history_todo(struct merge *m, struct history *h)
{
	const char **todo;
	unsigned char *seen;
	size_t i, n = 0;

	todo = calloc(m->runs.n + 1, sizeof(*todo));
	seen = calloc(m->runs.n + 1, 1);
	if (!todo || !seen) {
		free(todo);
		free(seen);
		return NULL;
	}
	for (i = 0; i < m->nrecs; i++)
		if (!m->recs[i].dropped)
			seen[m->recs[i].run] = 1;
	for (i = 0; i < m->runs.n; i++)
		if (seen[i] && !corral_set_get(h->committed, m->runs.v[i]))
			todo[n++] = m->runs.v[i];
	qsort(todo, n, sizeof(*todo), merge_bytes_cmp);
	free(seen);
	return todo;
}

int
merge_append_history(struct merge *m, struct corral_err *err)
{
	struct history h;
	const char **todo = NULL, **t;
	int rc = -1;

	memset(&h, 0, sizeof(h));
	h.fd = -1;
	if (!(h.path = merge_join(m->outdir, "history.jsonl")) ||
	    !(h.committed = corral_set_new()) ||
	    !(h.present = corral_set_new()) ||
	    !(h.have = calloc(m->runs.n + 1, sizeof(*h.have)))) {
		merge_nomem(err);
		goto out;
	}
	h.fd = corral_open_state(h.path, O_RDWR | O_CREAT | O_APPEND, 0666,
	    err);
	if (h.fd < 0)
		goto out;
	if (history_scan(m, &h, err) < 0)
		goto out;
	if (!(todo = history_todo(m, &h))) {
		merge_nomem(err);
		goto out;
	}
	for (t = todo; *t; t++)
		if (history_run(m, &h, (uint32_t)*corral_set_get(m->run_ix, *t),
		    err) < 0)
			goto out;
	if (history_flush(&h, err) < 0)
		goto out;
	if (fsync(h.fd) < 0) {
		corral_err_set(err, errno, "cannot write '%s'", h.path);
		goto out;
	}
	rc = 0;
out:
	free(todo);
	if (h.fd >= 0)
		close(h.fd);
	corral_set_free(h.committed);
	corral_set_free(h.present);
	free(h.have);
	corral_buf_release(&h.b);
	corral_buf_release(&h.key);
	free(h.path);
	return rc;
}
