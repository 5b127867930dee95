/* See LICENSE file for copyright and license details. */
/*
 * strategy.c is the table of the split strategies: each name with what it
 * does and the function that cuts a plan so.  Everything that names a
 * strategy reads it: corral-split and corral-plan parse -s by it, their
 * --help lists it, corral.mk checks CORRAL_SPLIT against corral-split -L,
 * which prints it.  A cut gets the plan with the weights learned from
 * history (kind NONE when there are none) and fills its slices and the
 * name of what it did.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "plan/plan.h"

static int
cut_roundrobin(struct corral_plan *p, const char *srcdir, long nslices,
    struct corral_err *err)
{
	(void)srcdir;
	p->strategy = "roundrobin";
	return corral_split_roundrobin(p->units, nslices, &p->slices, &p->n,
	    err);
}

/* Without any history, the files' sizes are the best guess there is. */
static int
cut_weighted(struct corral_plan *p, const char *srcdir, long nslices,
    struct corral_err *err)
{
	if (p->wt.kind == CORRAL_WEIGHTS_NONE) {
		corral_weights_release(&p->wt);
		if (corral_weights_sizes(&p->wt, p->units, srcdir, err) < 0)
			return -1;
	}
	p->strategy = "weighted";
	return corral_split_weighted(p->units, p->wt.w, nslices, &p->slices,
	    &p->n, NULL, err);
}

/*
 * Round-robin by count, numbered largest files first: slices are started
 * in their order, and the likely longest had better start first.  Units
 * that are not files, or files of one size, keep the round-robin order.
 */
static int
cut_roundrobin_by_size(struct corral_plan *p, const char *srcdir,
    long nslices, struct corral_err *err)
{
	struct corral_weights wt;
	long long *load;
	size_t k, i;
	int rc = 0;

	if (cut_roundrobin(p, srcdir, nslices, err) < 0)
		return -1;
	if (!(load = calloc(p->n + 1, sizeof(*load))))
		return corral_err_set(err, ENOMEM, "splitting");
	for (k = 0; k < p->n && rc == 0; k++) {
		if ((rc = corral_weights_sizes(&wt, &p->slices[k], srcdir,
		    err)) == 0)
			for (i = 0; i < wt.n; i++)
				load[k] += wt.w[i];
		corral_weights_release(&wt);
	}
	if (rc == 0)
		rc = corral_split_order(p->slices, p->n, load, err);
	free(load);
	return rc;
}

static int
cut_auto(struct corral_plan *p, const char *srcdir, long nslices,
    struct corral_err *err)
{
	long n = nslices;

	if (p->wt.kind == CORRAL_WEIGHTS_MS)
		return cut_weighted(p, srcdir, nslices, err);
	if (p->finer)
		n = (long)corral_split_blind(p->units->n, nslices);
	if (n > nslices && n > 1)
		p->asked = nslices;
	return cut_roundrobin_by_size(p, srcdir, n, err);
}

const struct corral_strategy corral_strategies[] = {
	{ "roundrobin", "unit i to slice i mod N, the original's (the default)",
	    cut_roundrobin },
	{ "weighted", "longest first over the durations of -H (file sizes "
	    "under -C without any)", cut_weighted },
	{ "auto", "weighted once the history knows a unit, else roundrobin "
	    "started largest file first (with -F, finer than N when a "
	    "slice would hold more than 2)", cut_auto },
	{ NULL, NULL, NULL }
};

int
corral_strategy_names(struct corral_buf *b)
{
	const struct corral_strategy *s;
	int rc = 0;

	for (s = corral_strategies; s->name; s++)
		rc |= corral_buf_addf(b, "%s%s", s == corral_strategies ? "" :
		    s[1].name ? ", " : " or ", s->name);
	return rc;
}

const struct corral_strategy *
corral_strategy_find(const char *name, const char *opt,
    struct corral_err *err)
{
	struct corral_buf names = CORRAL_BUF_INIT;
	const struct corral_strategy *s;

	for (s = corral_strategies; s->name; s++)
		if (!strcmp(s->name, name))
			return s;
	if (corral_strategy_names(&names) < 0)
		corral_err_set(err, errno, "naming the strategies");
	else
		corral_err_set(err, 0, "%s '%s' is not a strategy (%s)", opt,
		    name, names.data);
	corral_buf_release(&names);
	return NULL;
}
