/* See LICENSE file for copyright and license details. */
/*
 * learned.c reads back, from history.jsonl, the parts corral learned for
 * each unit: the "reads" of its latest record that has one (the files an
 * agent saw the unit open in a clone of the whole tree, and as "DIR/" the
 * directories it listed; a line of an older corral, which wrote a listed
 * directory's files instead, is read as it is).  A later
 * learning replaces an earlier one whole, so a unit that stopped reading
 * a file stops cloning it.  Only lines that hold "reads" are parsed.  A
 * read that is not a path inside the tree is dropped (and said, by the
 * tool): one line of history never stops a run; a record whose every
 * read is dropped is one that learned nothing.
 */
#define _GNU_SOURCE	/* memmem */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "record/record.h"
#include "plan/plan.h"

/* The slot of unit in l, made (empty) when it has none yet. */
static struct corral_strv *
slot_of(struct corral_learned *l, const char *unit)
{
	struct corral_strv *sets;
	long *vp;
	size_t cap;
	int put;

	if ((put = corral_set_put(l->ix, unit, (long)l->n, &vp)) < 0)
		return NULL;
	if (put == 0) {
		corral_strv_release(&l->sets[*vp]);
		return &l->sets[*vp];
	}
	if (l->n == l->cap) {
		cap = l->cap ? l->cap * 2 : 64;
		if (!(sets = realloc(l->sets, cap * sizeof(*sets))))
			return NULL;
		l->sets = sets;
		l->cap = cap;
	}
	memset(&l->sets[l->n], 0, sizeof(*l->sets));
	if (corral_strv_add(&l->units, unit) < 0)
		return NULL;
	return &l->sets[l->n++];
}

/* Forget what was dropped of unit's earlier lines: only its latest counts. */
static void
forget_dropped(struct corral_learned *l, const char *unit)
{
	size_t i, n = 0;

	for (i = 0; i < l->dropped.n; i++)
		if (strcmp(l->dropped_of.v[i], unit)) {
			l->dropped.v[n] = l->dropped.v[i];
			l->dropped_of.v[n++] = l->dropped_of.v[i];
		} else {
			free(l->dropped.v[i]);
			free(l->dropped_of.v[i]);
		}
	l->dropped.n = l->dropped_of.n = n;
}

/* Whether read is a path inside the tree, "DIR/" a listing of one. */
static int
inside(char *read, struct corral_err *e)
{
	size_t n = strlen(read);
	int rc, listing = corral_path_is_listing(read);

	/* "." is the whole tree, which a unit may keep; "./" its root listed. */
	if (!strcmp(read, ".") || !strcmp(read, "./"))
		return 1;
	if (listing)
		read[n - 1] = '\0';
	rc = corral_path_lexical("read", read, CORRAL_PATH_CANONICAL, e);
	if (listing)
		read[n - 1] = '/';
	/* The refusal names the read as history holds it. */
	if (rc < 0 && listing)
		corral_path_lexical("read", read, CORRAL_PATH_CANONICAL, e);
	return rc == 0;
}

/*
 * Drop from reads each one that is not a path inside the tree (absolute,
 * with "..", not canonical, holding a newline), saying so in l->dropped
 * (in place of what the unit's earlier lines dropped):
 * history may steer a plan, never stop a run, and a part that leaves the
 * tree would make the unit's whole slice refuse its clone.  1 when reads
 * still holds one, 0 when every one was dropped, -1 (ENOMEM).
 */
static int
keep_inside(struct corral_learned *l, const char *history, const char *unit,
    struct corral_strv *reads)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_err e;
	size_t i, n = 0, had = reads->n;

	forget_dropped(l, unit);
	for (i = 0; i < reads->n; i++) {
		if (inside(reads->v[i], &e)) {
			reads->v[n++] = reads->v[i];
			continue;
		}
		b.len = 0;
		if (corral_buf_addf(&b, "'%s': unit '%s': learned %s; dropped",
		    history, unit, e.msg) < 0 ||
		    corral_strv_add(&l->dropped, b.data) < 0 ||
		    corral_strv_add(&l->dropped_of, unit) < 0) {
			corral_buf_release(&b);
			return -1;
		}
		free(reads->v[i]);
	}
	reads->n = n;
	corral_buf_release(&b);
	return n > 0 || had == 0;
}

static int
learn_line(struct corral_learned *l, const char *history, const char *line,
    size_t len)
{
	struct corral_json_record jr;
	struct corral_strv reads = CORRAL_STRV_INIT, *slot;
	int rc = 0, has;

	if (!memmem(line, len, "\"reads\":", 8) ||
	    corral_json_record_parse(line, len, &jr, NULL) < 0)
		return 0;
	if ((has = corral_json_record_reads(&jr, &reads)) < 0 ||
	    (has && (has = keep_inside(l, history, jr.unit, &reads)) < 0))
		rc = -1;
	else if (has && !(slot = slot_of(l, jr.unit)))
		rc = -1;
	else if (has) {
		corral_strv_sort_unique(&reads);
		*slot = reads;
		reads.v = NULL;
		reads.n = reads.cap = 0;
	}
	corral_strv_release(&reads);
	corral_json_record_release(&jr);
	return rc;
}

int
corral_learned_read(struct corral_learned *l, const char *history,
    struct corral_err *err)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *fp;
	int rc = 0;

	memset(l, 0, sizeof(*l));
	if (!(l->ix = corral_set_new()))
		return corral_err_set(err, ENOMEM, "reading '%s'", history);
	if (!(fp = corral_fopen_state(history, O_RDONLY, "r", err)))
		return err->errnum == ENOENT ? 0 : -1;
	errno = 0;
	while (rc == 0 && (len = getline(&line, &cap, fp)) != -1) {
		/* A torn last line (no '\n') is a killed merge's: skip it. */
		if (len > 0 && line[len - 1] == '\n')
			rc = learn_line(l, history, line,
			    corral_line_chomp(line, (size_t)len));
		errno = 0;
	}
	if (rc < 0)
		corral_err_set(err, ENOMEM, "reading '%s'", history);
	else if (ferror(fp))
		rc = corral_err_set(err, errno, "cannot read '%s'", history);
	free(line);
	fclose(fp);
	return rc;
}

const struct corral_strv *
corral_learned_of(const struct corral_learned *l, const char *unit)
{
	const long *vp = l->ix ? corral_set_get(l->ix, unit) : NULL;

	return vp ? &l->sets[*vp] : NULL;
}

void
corral_learned_release(struct corral_learned *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		corral_strv_release(&l->sets[i]);
	free(l->sets);
	corral_strv_release(&l->units);
	corral_strv_release(&l->dropped);
	corral_strv_release(&l->dropped_of);
	corral_set_free(l->ix);
	memset(l, 0, sizeof(*l));
}
