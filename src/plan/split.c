/* See LICENSE file for copyright and license details. */
/*
 * split.c cuts a population into disjoint, balanced slices.  Round-robin
 * is the original's layout, kept exactly: unit i goes to slice i mod n,
 * n never exceeds the number of units, and no slice is empty.  The
 * weighted plan balances known durations instead (longest processing
 * time first), and depends on nothing but the units and their weights,
 * so that every host computes the same plan.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "plan/plan.h"

size_t
corral_split_auto(size_t nunits)
{
	size_t per = (nunits + CORRAL_SPLIT_UNITS - 1) / CORRAL_SPLIT_UNITS;

	if (nunits <= CORRAL_SPLIT_FEW)
		return nunits;
	return per > CORRAL_SPLIT_FEW ? per : CORRAL_SPLIT_FEW;
}

size_t
corral_split_blind(size_t nunits, long nslices)
{
	size_t n = nslices < 1 ? 1 : (size_t)nslices, few;

	if (nunits <= n * CORRAL_SPLIT_BLIND)
		return n;
	few = corral_split_auto(nunits);
	return few > n ? few : n;
}

/* The number of slices for nunits units when nslices are asked for. */
static size_t
slice_count(size_t nunits, long nslices)
{
	size_t n = nslices < 1 ? 1 : (size_t)nslices;

	return n > nunits ? nunits : n;
}

int
corral_split_roundrobin(const struct corral_strv *units, long nslices,
    struct corral_strv **slicesp, size_t *np, struct corral_err *err)
{
	struct corral_strv *slices;
	size_t n, i, k, per;

	*slicesp = NULL;
	*np = 0;
	if (units->n == 0)
		return 0;
	n = slice_count(units->n, nslices);
	if (!(slices = calloc(n, sizeof(*slices))))
		return corral_err_set(err, errno, "splitting");
	per = units->n / n + 1;
	for (k = 0; k < n; k++) {
		slices[k].cap = per + 1;
		if (!(slices[k].v = calloc(slices[k].cap, sizeof(char *)))) {
			corral_split_free(slices, n);
			return corral_err_set(err, errno, "splitting");
		}
	}
	for (i = 0; i < units->n; i++) {
		k = i % n;
		slices[k].v[slices[k].n++] = units->v[i];
	}
	*slicesp = slices;
	*np = n;
	return 0;
}

/* For qsort_r-less C99: the weights the comparators read. */
static const long long *sort_w;
static const struct corral_strv *sort_units;
static const long long *sort_load;

/* Heaviest first, then by name, bytewise. */
static int
unit_cmp(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;

	if (sort_w[a] != sort_w[b])
		return sort_w[a] > sort_w[b] ? -1 : 1;
	return strcmp(sort_units->v[a], sort_units->v[b]);
}

/* Heaviest slice first; equal ones keep their order. */
static int
slice_cmp(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;

	if (sort_load[a] != sort_load[b])
		return sort_load[a] > sort_load[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

/*
 * A min-heap of slice numbers by (load, units, number): among slices of
 * equal load the one holding fewest units comes first, so units of
 * weight 0 (files of no size, nothing known) are dealt round-robin
 * instead of piling into slice 0 and leaving the others empty.
 */
static int
lighter(const long long *load, const size_t *cnt, size_t a, size_t b)
{
	if (load[a] != load[b])
		return load[a] < load[b];
	if (cnt[a] != cnt[b])
		return cnt[a] < cnt[b];
	return a < b;
}

static void
sift_down(size_t *heap, size_t n, const long long *load, const size_t *cnt,
    size_t i)
{
	size_t c, t;

	for (; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && lighter(load, cnt, heap[c + 1], heap[c]))
			c++;
		if (!lighter(load, cnt, heap[c], heap[i]))
			break;
		t = heap[c];
		heap[c] = heap[i];
		heap[i] = t;
	}
}

/*
 * bin[i] = the slice of unit i, by LPT over n slices; load[k] its weight.
 * Weights are >= 0, so the lightest slice only grows: keep it at the top.
 */
static void
pack(const struct corral_strv *units, const long long *w, size_t *order,
    size_t *heap, size_t n, long long *load, size_t *cnt, size_t *bin)
{
	size_t i, k;

	for (i = 0; i < units->n; i++)
		order[i] = i;
	sort_w = w;
	sort_units = units;
	qsort(order, units->n, sizeof(*order), unit_cmp);
	for (k = 0; k < n; k++) {
		heap[k] = k;
		load[k] = 0;
		cnt[k] = 0;
	}
	for (i = 0; i < units->n; i++) {
		k = heap[0];
		bin[order[i]] = k;
		load[k] += w[order[i]] > 0 ? w[order[i]] : 0;
		cnt[k]++;
		sift_down(heap, n, load, cnt, 0);
	}
}

/* Fill slices from bin[], renumbered so that slice 0 is the heaviest. */
static int
fill(const struct corral_strv *units, const size_t *order, const size_t *bin,
    size_t n, const long long *load, size_t *rank, struct corral_strv *slices)
{
	size_t i, k, *byload = rank + n;

	for (k = 0; k < n; k++)
		byload[k] = k;
	sort_load = load;
	qsort(byload, n, sizeof(*byload), slice_cmp);
	for (k = 0; k < n; k++)
		rank[byload[k]] = k;
	for (i = 0; i < units->n; i++)
		slices[rank[bin[i]]].cap++;
	for (k = 0; k < n; k++)
		if (!(slices[k].v = calloc(slices[k].cap + 1, sizeof(char *))))
			return -1;
	/* In packing order: the longest unit of a slice runs first. */
	for (i = 0; i < units->n; i++) {
		k = rank[bin[order[i]]];
		slices[k].v[slices[k].n++] = units->v[order[i]];
	}
	return 0;
}

int
corral_split_weighted(const struct corral_strv *units, const long long *w,
    long nslices, struct corral_strv **slicesp, size_t *np,
    long long **loadsp, struct corral_err *err)
{
	struct corral_strv *slices = NULL;
	size_t n, k, *order, *heap, *bin, *rank, *cnt;
	long long *load, *sorted = NULL;
	int rc = -1;

	*slicesp = NULL;
	*np = 0;
	if (loadsp)
		*loadsp = NULL;
	if (units->n == 0)
		return 0;
	n = slice_count(units->n, nslices);
	order = calloc(units->n, sizeof(*order));
	bin = calloc(units->n, sizeof(*bin));
	heap = calloc(n, sizeof(*heap));
	rank = calloc(2 * n, sizeof(*rank));
	load = calloc(n, sizeof(*load));
	cnt = calloc(n, sizeof(*cnt));
	slices = calloc(n, sizeof(*slices));
	if (!order || !bin || !heap || !rank || !load || !cnt || !slices)
		goto out;
	pack(units, w, order, heap, n, load, cnt, bin);
	if (fill(units, order, bin, n, load, rank, slices) < 0 ||
	    (loadsp && !(sorted = calloc(n, sizeof(*sorted)))))
		goto out;
	for (k = 0; loadsp && k < n; k++)
		sorted[rank[k]] = load[k];
	*slicesp = slices;
	*np = n;
	if (loadsp)
		*loadsp = sorted;
	slices = NULL;
	rc = 0;
out:
	if (rc < 0)
		corral_err_set(err, ENOMEM, "splitting");
	corral_split_free(slices, n);
	free(order);
	free(bin);
	free(heap);
	free(rank);
	free(load);
	free(cnt);
	return rc;
}

int
corral_split_order(struct corral_strv *slices, size_t n,
    const long long *load, struct corral_err *err)
{
	struct corral_strv *was;
	size_t k, *byload;

	if (n < 2)	/* nothing to order, and slices may be NULL */
		return 0;
	was = malloc(n * sizeof(*was));
	byload = malloc(n * sizeof(*byload));
	if (!was || !byload) {
		free(was);
		free(byload);
		return corral_err_set(err, ENOMEM, "splitting");
	}
	for (k = 0; k < n; k++)
		byload[k] = k;
	sort_load = load;
	qsort(byload, n, sizeof(*byload), slice_cmp);
	memcpy(was, slices, n * sizeof(*was));
	for (k = 0; k < n; k++)
		slices[k] = was[byload[k]];
	free(was);
	free(byload);
	return 0;
}

void
corral_split_free(struct corral_strv *slices, size_t n)
{
	size_t k;

	if (!slices)
		return;
	for (k = 0; k < n; k++)
		free(slices[k].v);
	free(slices);
}
