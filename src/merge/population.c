/* See LICENSE file for copyright and license details. */
/*
 * population.c audits the population against the logs: the expected
 * units of -u, the agents that left only a .part, the units of refused
 * logs, and a not-run record in failures.jsonl for every expected unit no
 * log holds, whose note says why when it can (an unfinished agent, a
 * refused log).  Its invariant: every expected unit is counted once,
 * merged or missing.  The names stay in the units file: an expected unit
 * is one slot in the record index (MERGE_EXPECTED | its line), settled
 * by reading its line again, and the missing are written from a last
 * read of the file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "merge/merge-private.h"

/* The longest note a launcher's note file gives (engine.h: its line). */
#define LAUNCH_WHY_MAX	256

/* ------------------------------------------------------------------ */
/* the units file, read again by line                                  */

/*
 * A units stream that is not a regular file (a pipe by /dev/fd/N) cannot
 * be read again: copy it to an unlinked temporary in the outdir, and read
 * that instead.  0, or -1 with err set.
 */
static int
spool(struct merge *m, struct corral_err *err)
{
	struct units_file *u = &m->uf;
	char chunk[65536], *tmp;
	size_t n;
	FILE *fp;
	int fd;

	if (!(tmp = merge_join(m->outdir, ".units.XXXXXX")))
		return merge_nomem(err);
	if ((fd = mkstemp(tmp)) < 0) {
		corral_err_set(err, errno, "cannot copy '%s' to '%s'", u->path,
		    tmp);
		free(tmp);
		return -1;
	}
	unlink(tmp);
	free(tmp);
	while ((n = fread(chunk, 1, sizeof(chunk), u->fp)) > 0)
		if (corral_write_all(fd, chunk, n) < 0) {
			close(fd);
			return corral_err_set(err, errno, "cannot copy '%s'",
			    u->path);
		}
	if (ferror(u->fp) || !(fp = fdopen(fd, "r"))) {
		corral_err_set(err, errno, "cannot read '%s'", u->path);
		close(fd);
		return -1;
	}
	fclose(u->fp);
	u->fp = fp;
	rewind(fp);
	return fstat(fileno(fp), &u->st) < 0 ?
	    corral_err_set(err, errno, "cannot read '%s'", u->path) : 0;
}

static int
open_units(struct merge *m, struct corral_err *err)
{
	struct units_file *u = &m->uf;

	u->path = m->o->units;
	if (!(u->fp = corral_fopen_input(u->path, err)))
		return -1;
	if (fstat(fileno(u->fp), &u->st) < 0)
		return corral_err_set(err, errno, "cannot read '%s'", u->path);
	m->units_mtime = u->st.st_mtime;
	if (!S_ISREG(u->st.st_mode) && spool(m, err) < 0)
		return -1;
	if (!(u->win = malloc(MERGE_WINDOW)))
		return merge_nomem(err);
	u->wcap = MERGE_WINDOW;
	u->wo = -1;
	return 0;
}

void
merge_units_close(struct merge *m)
{
	if (m->uf.fp)
		fclose(m->uf.fp);
	free(m->uf.ckpt);
	free(m->uf.win);
}

/* Read the window from byte off on.  0, or -1 with err set. */
static int
refill(struct units_file *u, off_t off, struct corral_err *err)
{
	ssize_t r;

	u->wo = off;
	u->wn = 0;
	u->weof = 0;
	while (u->wn < u->wcap) {
		r = pread(fileno(u->fp), u->win + u->wn, u->wcap - u->wn,
		    off + (off_t)u->wn);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return corral_err_set(err, errno, "cannot read '%s'",
			    u->path);
		if (r == 0) {
			u->weof = 1;
			break;
		}
		u->wn += (size_t)r;
	}
	return 0;
}

int
merge_units_line(struct merge *m, uint32_t line, const char **p, size_t *n,
    struct corral_err *err)
{
	struct units_file *u = &m->uf;
	off_t pos = u->ckpt[line / MERGE_CKPT];
	size_t skip = line % MERGE_CKPT, at;
	char *nl, *big;

	for (;;) {
		if (pos < u->wo || pos >= u->wo + (off_t)u->wn) {
			if (u->weof && pos >= u->wo && pos == u->wo +
			    (off_t)u->wn)
				return 0;	/* past the end */
			if (refill(u, pos, err) < 0)
				return -1;
			continue;
		}
		at = (size_t)(pos - u->wo);
		nl = memchr(u->win + at, '\n', u->wn - at);
		if (!nl && !u->weof) {
			if (at == 0) {	/* a line longer than the window */
				if (!(big = realloc(u->win, u->wcap * 2)))
					return merge_nomem(err);
				u->win = big;
				u->wcap *= 2;
			}
			if (refill(u, pos, err) < 0)
				return -1;
			continue;
		}
		if (skip == 0) {
			*p = u->win + at;
			*n = nl ? (size_t)(nl - *p) + 1 : u->wn - at;
			if (*n > 0 && (*p)[*n - 1] == '\n')
				--*n;
			if (*n > 0 && (*p)[*n - 1] == '\r')
				--*n;
			return 1;
		}
		if (!nl)
			return 0;
		skip--;
		pos = u->wo + (off_t)(nl + 1 - u->win);
	}
}

/* 1 when line of the units file is unit[0..len), 0 if not, -1 (err). */
static int
is_line(struct merge *m, uint32_t line, const char *unit, size_t len,
    struct corral_err *err)
{
	const char *p;
	size_t n;
	int rc;

	if ((rc = merge_units_line(m, line, &p, &n, err)) <= 0)
		return rc;
	return n == len && !memcmp(p, unit, len);
}

int
merge_expected(struct merge *m, const char *unit, size_t len,
    uint32_t *line, struct corral_err *err)
{
	size_t pos = 0;
	uint64_t fp = merge_fp(m, unit, len);
	uint32_t *vp;
	int rc;

	while ((vp = corral_fpset_next(m->units, fp, &pos))) {
		if (!(*vp & MERGE_EXPECTED))
			continue;
		if ((rc = is_line(m, *vp & ~MERGE_EXPECTED, unit, len, err)))
			return rc < 0 ? -1 : (*line = *vp & ~MERGE_EXPECTED, 1);
	}
	return 0;
}

/*
 * Note that note k says why the expected unit unit[0..len) was not run,
 * unless a log reported it or an earlier note already says.  0, or -1
 * with err set.
 */
static int
credit(struct merge *m, const char *unit, size_t len, long k,
    struct corral_err *err)
{
	uint32_t line;
	size_t pos = 0;
	int rc;

	if ((rc = merge_expected(m, unit, len, &line, err)) <= 0)
		return rc;
	if (corral_fpset_next(m->notes, (uint64_t)line + 1, &pos))
		return 0;
	if (corral_fpset_add(m->notes, (uint64_t)line + 1, (uint32_t)k) < 0)
		return merge_nomem(err);
	return 0;
}

/*
 * The caller's groups of absent units come first in m->why (notes 0 ..
 * nabsent - 1), so the not-run records can say why, and not_run knows
 * not to name them one by one.
 */
static int
credit_absent(struct merge *m, struct corral_err *err)
{
	const struct corral_merge_absent *a;
	size_t g, i;

	for (g = 0; g < m->o->nabsent; g++) {
		a = &m->o->absent[g];
		if (corral_strv_add(&m->why, a->why) < 0)
			return merge_nomem(err);
		for (i = 0; i < a->units->n; i++)
			if (credit(m, a->units->v[i], strlen(a->units->v[i]),
			    (long)g, err) < 0)
				return -1;
	}
	return 0;
}

/*
 * Line L of the units file, unit[0..len): its slot in m->units, or, when
 * an earlier line holds the same unit, a copy in dups.  0, or -1 (err).
 */
static int
add_unit(struct merge *m, uint32_t line, const char *unit, size_t len,
    struct corral_strv *dups, struct corral_err *err)
{
	uint32_t was;
	int rc;

	if ((rc = merge_expected(m, unit, len, &was, err)) < 0)
		return -1;
	if (rc == 1)
		return corral_strv_addn(dups, unit, len) < 0 ?
		    merge_nomem(err) : 0;
	if (corral_fpset_add(m->units, merge_fp(m, unit, len),
	    MERGE_EXPECTED | line) < 0)
		return merge_nomem(err);
	m->nexpected++;
	return 0;
}

/* Remember where line s->lineno - 1 starts, when it is a checkpoint. */
static int
checkpoint(struct units_file *u, const struct corral_units_stream *s)
{
	off_t *v;

	if ((s->lineno - 1) % MERGE_CKPT)
		return 0;
	if (u->nckpt % 1024 == 0) {
		if (!(v = realloc(u->ckpt, (u->nckpt + 1024) * sizeof(*v))))
			return -1;
		u->ckpt = v;
	}
	u->ckpt[u->nckpt++] = s->off;
	return 0;
}

int
merge_read_units(struct merge *m, struct corral_err *err)
{
	struct corral_strv dups = CORRAL_STRV_INIT;
	struct corral_units_stream s;
	size_t i;
	int rc;

	if (open_units(m, err) < 0)
		return -1;
	if (!(m->notes = corral_fpset_new()))
		return merge_nomem(err);
	corral_units_stream_init(&s, m->uf.fp, '\n', m->uf.path);
	while ((rc = corral_units_next(&s, err)) > 0) {
		if (s.lineno > MERGE_EXPECTED) {
			rc = corral_err_set(err, 0, "'%s': too many lines",
			    m->uf.path);
			break;
		}
		if (checkpoint(&m->uf, &s) < 0) {
			rc = merge_nomem(err);
			break;
		}
		if (s.len && (rc = add_unit(m, (uint32_t)(s.lineno - 1),
		    s.line, s.len, &dups, err)) < 0)
			break;
	}
	corral_units_stream_release(&s);
	for (i = 0; rc == 0 && i < dups.n; i++)
		merge_say(m, "unit '%s' is listed more than once in '%s'; "
		    "counted once", dups.v[i], m->o->units);
	corral_strv_release(&dups);
	if (rc == 0)
		rc = credit_absent(m, err);
	return rc < 0 ? -1 : 0;
}

/*
 * When the units file is not what was first read, the merge is bad
 * input: the names settled against it may not be the names it held.
 */
static void
check_units(struct merge *m)
{
	struct stat st;
	const struct stat *a = &m->uf.st;

	if (!m->uf.fp)
		return;
	if (fstat(fileno(m->uf.fp), &st) < 0 || st.st_ino != a->st_ino ||
	    st.st_dev != a->st_dev || st.st_size != a->st_size ||
	    st.st_mtim.tv_sec != a->st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != a->st_mtim.tv_nsec)
		merge_bad(m, "'%s' changed while it was being merged",
		    m->uf.path);
}

/*
 * Credit the expected units an unfinished agent's .part (or a refused
 * log) holds (its complete, valid lines) to note k of m->why, so the
 * not-run note can name it.  0, or -1 with err set.
 */
static int
credit_part(struct merge *m, const char *path, long k, struct corral_err *err)
{
	struct corral_json_record jr;
	struct corral_reader rd;
	int rc = 0;

	if (!m->o->units || corral_reader_open(&rd, path, NULL) < 0)
		return 0;
	while (rc == 0 && corral_reader_next(&rd, NULL) > 0) {
		if (rd.torn || corral_json_record_parse(rd.line, rd.len, &jr,
		    NULL) < 0)
			continue;
		rc = credit(m, jr.unit, strlen(jr.unit), k, err);
		corral_json_record_release(&jr);
	}
	corral_reader_close(&rd);
	return rc;
}

int
merge_check_parts(struct merge *m, struct corral_err *err)
{
	struct corral_strv *unf = &m->st->unfinished;
	struct corral_buf name = CORRAL_BUF_INIT;
	char *path = NULL, *id;
	uint32_t layer;
	size_t i;
	int rc = -1;

	for (i = 0; i < m->parts.n; i++) {
		corral_buf_reset(&name);
		free(path);
		path = NULL;
		layer = (uint32_t)strtoul(m->parts.v[i], &id, 10);
		id++;	/* past the '/' */
		if (corral_buf_addf(&name, "agent-%s.jsonl.part", id) < 0 ||
		    !(path = merge_join(m->logdirs[layer], name.data)))
			goto out;
		if (merge_has_log(m, layer, id)) {
			merge_say(m, "'%s': ignored, agent '%s' has a finished "
			    "log", path, id);
			continue;
		}
		merge_say(m, "'%s': agent '%s' did not finish", path, id);
		corral_buf_reset(&name);
		if (corral_strv_add(unf, id) < 0 ||
		    corral_buf_addf(&name, "agent '%s' did not finish", id) < 0 ||
		    corral_strv_add(&m->why, name.data) < 0)
			goto out;
		if (credit_part(m, path, (long)m->why.n - 1, err) < 0) {
			rc = -2;
			goto out;
		}
	}
	rc = 0;
out:
	if (rc == -1)
		merge_nomem(err);
	free(path);
	corral_buf_release(&name);
	return rc < 0 ? -1 : 0;
}

/*
 * The note file path, read whole: its first line (shown-safe, at most
 * LAUNCH_WHY_MAX bytes) becomes note k of m->why, and each later line is
 * a unit credited to it.  One that is not a regular file, or cannot be
 * read, is said and passed over.  0, or -1 with err set.
 */
static int
credit_launch(struct merge *m, const char *path, struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT, why = CORRAL_BUF_INIT;
	struct corral_err e;
	char *p, *end, *nl;
	size_t n;
	int rc = 0;

	if (corral_read_state(path, &b, &e) < 0) {
		if (e.errnum == ENOMEM)
			rc = merge_nomem(err);
		else
			merge_say(m, "%s%s%s; the launcher's note is ignored",
			    e.msg, e.errnum ? ": " : "",
			    e.errnum ? strerror(e.errnum) : "");
		goto out;
	}
	if (corral_buf_addch(&b, '\n') < 0)	/* the last line ends too */
		goto nomem;
	p = b.data;
	end = b.data + b.len;
	nl = memchr(p, '\n', (size_t)(end - p));
	n = corral_line_chomp(p, (size_t)(nl - p) + 1);
	if (corral_buf_add_shown(&why, p, n < LAUNCH_WHY_MAX ? n :
	    LAUNCH_WHY_MAX, 0) < 0 || corral_buf_addch(&why, '\0') < 0 ||
	    corral_strv_add(&m->why, why.data) < 0)
		goto nomem;
	for (p = nl + 1; rc == 0 && p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if ((n = corral_line_chomp(p, (size_t)(nl - p) + 1)) > 0)
			rc = credit(m, p, n, (long)m->why.n - 1, err);
	}
	goto out;
nomem:
	rc = merge_nomem(err);
out:
	corral_buf_release(&b);
	corral_buf_release(&why);
	return rc;
}

int
merge_credit_launches(struct merge *m, struct corral_err *err)
{
	struct corral_buf name = CORRAL_BUF_INIT;
	char *path, *id;
	uint32_t layer;
	size_t i;
	int rc = 0;

	/* the latest layer first: its note is the one that stands */
	for (i = m->launches.n; m->o->units && rc == 0 && i-- > 0;) {
		layer = (uint32_t)strtoul(m->launches.v[i], &id, 10);
		id++;	/* past the '/' */
		if (merge_has_log(m, layer, id))
			continue;
		corral_buf_reset(&name);
		if (corral_buf_addf(&name, "agent-%s.launch", id) < 0 ||
		    !(path = merge_join(m->logdirs[layer], name.data)))
			rc = merge_nomem(err);
		else {
			rc = credit_launch(m, path, err);
			free(path);
		}
	}
	corral_buf_release(&name);
	return rc;
}

/*
 * The units of refused logs, for the not-run notes (the logs themselves
 * are not trusted, so this only names where a unit's record went).
 */
int
merge_credit_refused(struct merge *m, struct corral_err *err)
{
	struct corral_buf note = CORRAL_BUF_INIT;
	size_t i;
	int rc = 0;

	for (i = 0; i < m->nagents && rc == 0; i++) {
		if (!m->agents[i].refused)
			continue;
		corral_buf_reset(&note);
		rc = corral_buf_addf(&note, "the log of agent '%s' is refused: "
		    "its seal does not hold", m->agents[i].id);
		if (rc == 0 && (rc = corral_strv_add(&m->why, note.data)) < 0)
			rc = merge_nomem(err);
		else if (rc == 0)
			rc = credit_part(m, m->agents[i].path,
			    (long)m->why.n - 1, err);
		else
			rc = merge_nomem(err);
	}
	corral_buf_release(&note);
	if (rc == 0)
		check_units(m);
	return rc;
}

/* ------------------------------------------------------------------ */
/* not-run records                                                     */

static void
iso_time(time_t t, char out[21])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The run id of not-run records: -r, else the greatest run named. */
int
merge_pick_run(struct merge *m)
{
	const char *best = NULL, *run;
	size_t i;

	for (i = 0; !m->o->run && i < m->nrecs; i++) {
		if (m->recs[i].dropped || !m->recs[i].has_run)
			continue;
		run = m->runs.v[m->recs[i].run];
		if (!best || strcmp(run, best) > 0)
			best = run;
	}
	if (m->o->run)
		best = m->o->run;
	return (m->st->run = strdup(best ? best : "none")) ? 0 : -1;
}

/*
 * Write the not-run record of unit u: v is -1 when nothing says why no
 * agent reported it, -2 - k when m->why.v[k] does.
 */
static int
not_run(struct merge *m, const char *u, long v, const char *at,
    struct corral_err *err)
{
	struct corral_buf note = CORRAL_BUF_INIT, line = CORRAL_BUF_INIT;
	struct corral_record r;
	int rc;

	if (v == -1)
		rc = corral_buf_addstr(&note, "NOT-RUN: no agent reported it");
	else
		rc = corral_buf_addf(&note, "NOT-RUN: %s", m->why.v[-2 - v]);
	memset(&r, 0, sizeof(r));
	r.unit = u;
	r.note = note.data;
	r.at = at;
	r.status = "not-run";
	r.exit_code = -1;
	r.run = m->st->run;
	if (rc < 0 || corral_record_format(&line, &r) < 0 ||
	    merge_push_rec(m, 0, 0, "not-run", m->st->run) < 0) {
		rc = merge_nomem(err);
		goto out;
	}
	if (v == -1 || -2 - v >= (long)m->o->nabsent)
		merge_say(m, "unit '%s' is missing: %s", u, note.data + 9);
	rc = merge_out_add(&m->fail, line.data, line.len, 0, err);
out:
	corral_buf_release(&note);
	corral_buf_release(&line);
	return rc;
}

/* For qsort of line numbers. */
static int
line_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * The lines of the expected units no log holds, in order: *linesp
 * (malloc'd), *np of them.  0, or -1 on ENOMEM.
 */
static int
missing_lines(struct merge *m, uint32_t **linesp, size_t *np)
{
	uint32_t *v, *lines = NULL;
	size_t pos = 0, n = 0, cap = 0;

	while ((v = corral_fpset_each(m->units, &pos))) {
		if (!(*v & MERGE_EXPECTED))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			if (!(lines = realloc(*linesp, cap * sizeof(*lines))))
				return -1;
			*linesp = lines;
		}
		(*linesp)[n++] = *v & ~MERGE_EXPECTED;
	}
	if (n)
		qsort(*linesp, n, sizeof(**linesp), line_cmp);
	*np = n;
	return 0;
}

/* Why line's unit was not run: -1 (nothing says), or -2 - k (note k). */
static long
why_not(const struct merge *m, uint32_t line)
{
	size_t pos = 0;
	uint32_t *k = corral_fpset_next(m->notes, (uint64_t)line + 1, &pos);

	return k ? -2 - (long)*k : -1;
}

/*
 * Every expected unit that no log holds gets a not-run record, in the
 * order of the units file, read once more from its start.
 */
int
merge_write_missing(struct merge *m, struct corral_err *err)
{
	struct corral_units_stream s;
	uint32_t *lines = NULL;
	size_t i = 0, n;
	char mtime[21];
	const char *at;
	int rc = 0;

	if (!m->o->units)
		return 0;
	if (missing_lines(m, &lines, &n) < 0)
		return merge_nomem(err);
	iso_time(m->units_mtime, mtime);
	at = m->at.data ? m->at.data : mtime;
	if (n && fseeko(m->uf.fp, 0, SEEK_SET) < 0)
		rc = corral_err_set(err, errno, "cannot read '%s'", m->uf.path);
	corral_units_stream_init(&s, m->uf.fp, '\n', m->uf.path);
	while (rc == 0 && i < n && (rc = corral_units_next(&s, err)) > 0) {
		rc = 0;
		if (s.lineno - 1 != lines[i])
			continue;
		m->st->missing++;
		rc = not_run(m, s.line, why_not(m, lines[i++]), at, err);
	}
	corral_units_stream_release(&s);
	free(lines);
	if (rc == 0 && i < n)
		merge_bad(m, "'%s' changed while it was being merged",
		    m->uf.path);
	if (rc == 0)
		check_units(m);
	return rc < 0 ? -1 : 0;
}
