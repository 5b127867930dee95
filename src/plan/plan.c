/* See LICENSE file for copyright and license details. */
/*
 * plan.c makes a plan as corral-split writes it: the slices cut by a
 * strategy, and the weights they were cut by, from history or, for a
 * weighted plan without any, from file sizes.  The plan is a function of
 * the units, the history and the files alone, so every host that has the
 * same ones makes the same plan.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "plan/plan.h"

static int
nomem(struct corral_err *err)
{
	return corral_err_set(err, ENOMEM, "planning");
}

/* The weight of each slice, summed from the weights of its units. */
static int
add_loads(struct corral_plan *p, struct corral_err *err)
{
	size_t k, i;

	if (!(p->loads = calloc(p->n + 1, sizeof(*p->loads))))
		return nomem(err);
	for (k = 0; k < p->n && p->wt.kind != CORRAL_WEIGHTS_NONE; k++)
		for (i = 0; i < p->slices[k].n; i++)
			p->loads[k] += corral_plan_weight(p, p->slices[k].v[i]);
	return 0;
}

static int
index_units(struct corral_plan *p, struct corral_err *err)
{
	size_t i;

	if (!(p->ix = corral_set_new()))
		return nomem(err);
	for (i = 0; i < p->units->n; i++)
		if (corral_set_put(p->ix, p->units->v[i], (long)i, NULL) < 0)
			return nomem(err);
	return 0;
}

int
corral_plan_make(struct corral_plan *p, const struct corral_strv *units,
    const struct corral_strategy *strategy, const char *history,
    const char *srcdir, long nslices, unsigned flags,
    struct corral_err *err)
{
	memset(p, 0, sizeof(*p));
	p->units = units;
	p->finer = (flags & CORRAL_PLAN_FINER) != 0;
	if (index_units(p, err) < 0 || (history &&
	    corral_weights_history(&p->wt, units, history, err) < 0) ||
	    strategy->cut(p, srcdir, nslices, err) < 0)
		return -1;
	/* a plan without weights weighs every unit 0 */
	if (!p->wt.w && !(p->wt.w = calloc(units->n + 1, sizeof(*p->wt.w))))
		return nomem(err);
	return add_loads(p, err);
}

long long
corral_plan_weight(const struct corral_plan *p, const char *unit)
{
	const long *vp = corral_set_get(p->ix, unit);

	return vp ? p->wt.w[*vp] : 0;
}

int
corral_plan_json(const struct corral_plan *p, struct corral_buf *b)
{
	static const char *const kinds[] = { "none", "ms", "bytes" };
	long long total = 0, longest = 0, makespan = 0, bound;
	size_t i, k;
	int rc = 0;

	for (i = 0; i < p->units->n; i++) {
		total += p->wt.w[i];
		longest = p->wt.w[i] > longest ? p->wt.w[i] : longest;
	}
	for (k = 0; k < p->n; k++)
		makespan = p->loads[k] > makespan ? p->loads[k] : makespan;
	bound = p->n ? (total + (long long)p->n - 1) / (long long)p->n : 0;
	bound = longest > bound ? longest : bound;
	rc |= corral_buf_addf(b, "{\"strategy\":\"%s\",\"units\":%zu,"
	    "\"slices\":%zu,\"weights\":\"%s\",\"known\":%zu,"
	    "\"estimated\":%zu,\"estimate\":%lld,\"total\":%lld,"
	    "\"longest\":%lld,\"makespan\":%lld,\"lower_bound\":%lld,"
	    "\"loads\":[", p->strategy, p->units->n, p->n, kinds[p->wt.kind],
	    p->wt.nknown, p->wt.kind == CORRAL_WEIGHTS_NONE ? 0 :
	    p->units->n - p->wt.nknown, p->wt.median, total, longest,
	    makespan, bound);
	for (k = 0; k < p->n; k++)
		rc |= corral_buf_addf(b, "%s%lld", k ? "," : "", p->loads[k]);
	rc |= corral_buf_addstr(b, "]}\n");
	return rc < 0 ? -1 : 0;
}

void
corral_plan_release(struct corral_plan *p)
{
	corral_split_free(p->slices, p->n);
	corral_weights_release(&p->wt);
	corral_set_free(p->ix);
	free(p->loads);
	memset(p, 0, sizeof(*p));
}
