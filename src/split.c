/* See LICENSE file for copyright and license details. */
/*
 * split.c cuts a population into disjoint, balanced slices.  Round-robin
 * is the original's layout, kept exactly: unit i goes to slice i mod n,
 * n never exceeds the number of units, and no slice is empty.
 */
#include <errno.h>
#include <stdlib.h>

#include "corral.h"

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
	n = nslices < 1 ? 1 : (size_t)nslices;
	if (n > units->n)
		n = units->n;
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
