/* See LICENSE file for copyright and license details. */
/*
 * summary.c writes summary.json: the counts of a merge and its records by
 * status, keys in a fixed order, so that equal merges are equal bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "merge/merge-private.h"

/* "by_status": {"fail": 1, "pass": 2}, keys sorted bytewise. */
static int
add_by_status(struct merge *m, struct corral_buf *b)
{
	size_t *count, i, n = m->statuses.n;
	const char **names;
	int rc = 0;

	count = calloc(n + 1, sizeof(*count));
	names = calloc(n + 1, sizeof(*names));
	if (!count || !names) {
		rc = -1;
		goto out;
	}
	for (i = 0; i < m->nrecs; i++)
		if (!m->recs[i].dropped)
			count[m->recs[i].status]++;
	if (n) {
		memcpy(names, m->statuses.v, n * sizeof(*names));
		qsort(names, n, sizeof(*names), merge_bytes_cmp);
	}
	rc |= corral_buf_addstr(b, "  \"by_status\": {");
	for (i = 0; i < n; i++) {
		long *ix = corral_set_get(m->status_ix, names[i]);

		if (!count[*ix])
			continue;
		rc |= corral_buf_addstr(b, b->data[b->len - 1] == '{' ? "" :
		    ", ");
		rc |= corral_buf_addjson(b, names[i], strlen(names[i]));
		rc |= corral_buf_addf(b, ": %zu", count[*ix]);
	}
	rc |= corral_buf_addstr(b, "}\n");
out:
	free(count);
	free(names);
	return rc;
}

int
merge_format_summary(struct merge *m, struct corral_buf *b)
{
	struct corral_merge_stats *st = m->st;
	size_t i;
	int rc = 0;

	rc |= corral_buf_addf(b, "{\n  \"units\": %zu,\n  \"merged\": %zu,\n"
	    "  \"attempts\": %zu,\n"
	    "  \"successes\": %zu,\n  \"failures\": %zu,\n"
	    "  \"cached\": %zu,\n"
	    "  \"missing\": %zu,\n  \"duplicates\": %zu,\n"
	    "  \"unexpected\": %zu,\n  \"agents\": %zu,\n"
	    "  \"unfinished\": [", st->units, st->merged, st->attempts,
	    st->successes, st->failures, st->cached, st->missing,
	    st->duplicates, st->unexpected, st->agents);
	for (i = 0; i < st->unfinished.n; i++) {
		rc |= corral_buf_addstr(b, i ? ", " : "");
		rc |= corral_buf_addjson(b, st->unfinished.v[i],
		    strlen(st->unfinished.v[i]));
	}
	rc |= corral_buf_addstr(b, "],\n  \"run\": ");
	rc |= corral_buf_addjson(b, st->run, strlen(st->run));
	rc |= corral_buf_addstr(b, ",\n");
	if (m->o->shard) {
		rc |= corral_buf_addstr(b, "  \"shard\": ");
		rc |= corral_buf_addjson(b, m->o->shard, strlen(m->o->shard));
		rc |= corral_buf_addstr(b, ",\n");
	}
	if (m->o->shards) {
		rc |= corral_buf_addstr(b, "  \"shards\": ");
		rc |= corral_buf_addjson(b, m->o->shards, strlen(m->o->shards));
		rc |= corral_buf_addstr(b, ",\n");
	}
	rc |= add_by_status(m, b);
	rc |= corral_buf_addstr(b, "}\n");
	return rc;
}

void
merge_count_results(struct merge *m)
{
	long *flaky = corral_set_get(m->status_ix, "flaky");
	long *skip = corral_set_get(m->status_ix, "skip");
	long *not_run = corral_set_get(m->status_ix, "not-run");
	size_t i;

	for (i = 0; i < m->nrecs; i++) {
		if (m->recs[i].dropped)
			continue;
		if (m->recs[i].ok)
			m->st->successes++;
		else
			m->st->failures++;
		if (flaky && m->recs[i].status == (uint32_t)*flaky)
			m->st->flaky++;
		if (skip && m->recs[i].status == (uint32_t)*skip)
			m->st->skipped++;
		if (not_run && m->recs[i].status == (uint32_t)*not_run)
			m->st->not_run++;
		m->st->cached += m->recs[i].cached;
	}
	m->st->units = m->o->units ? m->nexpected : m->st->merged;
}
