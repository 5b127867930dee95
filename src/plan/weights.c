/* See LICENSE file for copyright and license details. */
/*
 * weights.c learns how long each unit takes from history.jsonl, where the
 * merge keeps every run's records: an exponentially weighted average of
 * "duration_ms" per unit, oldest run first, so that a unit that got
 * slower counts as slower soon.  A unit with no history is estimated (the
 * median of the known units), and the caller is told how many were, so a
 * plan never hides a guess.  When nothing at all is known, file sizes are
 * the only hint left.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/base.h"
#include "record/record.h"
#include "plan/plan.h"

static int
alloc_weights(struct corral_weights *wt, size_t n)
{
	memset(wt, 0, sizeof(*wt));
	wt->n = n;
	wt->w = calloc(n + 1, sizeof(*wt->w));
	wt->known = calloc(n + 1, 1);
	return wt->w && wt->known ? 0 : -1;
}

static int
ll_cmp(const void *x, const void *y)
{
	long long a = *(const long long *)x, b = *(const long long *)y;

	return a < b ? -1 : a > b;
}

/* The lower median of the known weights; every unknown unit gets it. */
static int
estimate_rest(struct corral_weights *wt)
{
	long long *known;
	size_t i, k = 0;

	if (!(known = calloc(wt->nknown + 1, sizeof(*known))))
		return -1;
	for (i = 0; i < wt->n; i++)
		if (wt->known[i])
			known[k++] = wt->w[i];
	qsort(known, k, sizeof(*known), ll_cmp);
	wt->median = known[(k - 1) / 2];
	free(known);
	for (i = 0; i < wt->n; i++)
		if (!wt->known[i])
			wt->w[i] = wt->median;
	return 0;
}

/* Fold one history line into avg[]; unreadable lines are counted. */
static int
learn_line(struct corral_weights *wt, const struct corral_set *ix,
    double *avg, const char *line, size_t len)
{
	struct corral_json_record jr;
	const long *vp;

	if (len == 0 || (len >= 10 && !memcmp(line, "{\"corral\":", 10)))
		return 0;
	if (corral_json_record_parse(line, len, &jr, NULL) < 0) {
		wt->unreadable++;
		return 0;
	}
	if (jr.duration_ms >= 0 && (vp = corral_set_get(ix, jr.unit))) {
		if (!wt->known[*vp])
			avg[*vp] = (double)jr.duration_ms;
		else
			avg[*vp] = CORRAL_EWMA_ALPHA * (double)jr.duration_ms +
			    (1 - CORRAL_EWMA_ALPHA) * avg[*vp];
		wt->nknown += !wt->known[*vp];
		wt->known[*vp] = 1;
	}
	corral_json_record_release(&jr);
	return 0;
}

static int
read_history(struct corral_weights *wt, const struct corral_set *ix,
    double *avg, FILE *fp, const char *path, struct corral_err *err)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	errno = 0;
	while ((len = getline(&line, &cap, fp)) != -1) {
		/* A torn last line (no '\n') is a killed merge's: skip it. */
		if (len == 0 || line[len - 1] != '\n')
			continue;
		learn_line(wt, ix, avg, line, corral_line_chomp(line,
		    (size_t)len));
		errno = 0;
	}
	free(line);
	if (ferror(fp))
		return corral_err_set(err, errno, "cannot read '%s'", path);
	return 0;
}

/* units->v[i] -> i, for looking units up by name. */
static struct corral_set *
index_units(const struct corral_strv *units)
{
	struct corral_set *ix;
	size_t i;

	if (!(ix = corral_set_new()))
		return NULL;
	for (i = 0; i < units->n; i++)
		if (corral_set_put(ix, units->v[i], (long)i, NULL) < 0) {
			corral_set_free(ix);
			return NULL;
		}
	return ix;
}

int
corral_weights_history(struct corral_weights *wt,
    const struct corral_strv *units, const char *history,
    struct corral_err *err)
{
	struct corral_set *ix = NULL;
	struct corral_err e;
	double *avg = NULL;
	FILE *fp = NULL;
	size_t i;
	int rc = -1;

	if (alloc_weights(wt, units->n) < 0)
		return corral_err_set(err, ENOMEM, "reading '%s'", history);
	if (!(fp = corral_fopen_input(history, &e)))
		return e.errnum == ENOENT ? 0 : corral_err_set(err, e.errnum,
		    "%s", e.msg);
	if (!(ix = index_units(units)) ||
	    !(avg = calloc(units->n + 1, sizeof(*avg)))) {
		corral_err_set(err, ENOMEM, "reading '%s'", history);
		goto out;
	}
	if (read_history(wt, ix, avg, fp, history, err) < 0)
		goto out;
	for (i = 0; i < units->n; i++)
		if (wt->known[i])
			wt->w[i] = (long long)(avg[i] + 0.5);
	if (wt->nknown > 0) {
		wt->kind = CORRAL_WEIGHTS_MS;
		if (estimate_rest(wt) < 0) {
			corral_err_set(err, ENOMEM, "reading '%s'", history);
			goto out;
		}
	}
	rc = 0;
out:
	fclose(fp);
	corral_set_free(ix);
	free(avg);
	return rc;
}

int
corral_weights_sizes(struct corral_weights *wt,
    const struct corral_strv *units, const char *dir,
    struct corral_err *err)
{
	struct corral_buf path = CORRAL_BUF_INIT;
	struct stat st;
	size_t i;

	if (alloc_weights(wt, units->n) < 0)
		return corral_err_set(err, ENOMEM, "weighing units");
	wt->kind = CORRAL_WEIGHTS_BYTES;
	for (i = 0; i < units->n; i++) {
		corral_buf_reset(&path);
		if ((dir && corral_buf_addf(&path, "%s/", dir) < 0) ||
		    corral_buf_addstr(&path, units->v[i]) < 0) {
			corral_buf_release(&path);
			return corral_err_set(err, ENOMEM, "weighing units");
		}
		if (stat(path.data, &st) == 0 && S_ISREG(st.st_mode))
			wt->w[i] = (long long)st.st_size;
	}
	corral_buf_release(&path);
	return 0;
}

void
corral_weights_release(struct corral_weights *wt)
{
	free(wt->w);
	free(wt->known);
	memset(wt, 0, sizeof(*wt));
}
