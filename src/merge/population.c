/* See LICENSE file for copyright and license details. */
/*
 * population.c audits the population against the logs: the expected
 * units of -u, the agents that left only a .part, the units of refused
 * logs, and a not-run record in failures.jsonl for every expected unit no
 * log holds, whose note says why when it can (an unfinished agent, a
 * refused log).  Its invariant: every expected unit is counted once,
 * merged or missing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "merge/merge-private.h"

/* ------------------------------------------------------------------ */
/* expected and unfinished units                                       */

/*
 * The caller's groups of absent units come first in m->why (notes 0 ..
 * nabsent - 1), so the not-run records can say why, and not_run knows
 * not to name them one by one.
 */
static int
credit_absent(struct merge *m)
{
	const struct corral_merge_absent *a;
	size_t g, i;
	long *vp;

	for (g = 0; g < m->o->nabsent; g++) {
		a = &m->o->absent[g];
		if (corral_strv_add(&m->why, a->why) < 0)
			return -1;
		for (i = 0; i < a->units->n; i++)
			if ((vp = merge_expected(m, a->units->v[i])) &&
			    *vp == -1)
				*vp = -2 - (long)g;
	}
	return 0;
}

int
merge_read_units(struct merge *m, struct corral_err *err)
{
	struct corral_strv dups = CORRAL_STRV_INIT;
	struct stat st;
	size_t i;
	FILE *fp;
	int rc = -1;

	if (!(fp = corral_fopen_input(m->o->units, err)))
		return -1;
	if (fstat(fileno(fp), &st) < 0) {
		corral_err_set(err, errno, "cannot read '%s'", m->o->units);
		goto out;
	}
	m->units_mtime = st.st_mtime;
	if (corral_units_read(fp, '\n', m->o->units, &m->expected, &dups,
	    err) < 0)
		goto out;
	for (i = 0; i < dups.n; i++)
		merge_say(m, "unit '%s' is listed more than once in '%s'; "
		    "counted once", dups.v[i], m->o->units);
	if (m->expected.n >= MERGE_EXPECTED || !(m->exp_state =
	    malloc((m->expected.n + 1) * sizeof(*m->exp_state)))) {
		merge_nomem(err);
		goto out;
	}
	for (i = 0; i < m->expected.n; i++) {
		m->exp_state[i] = -1;
		if (corral_fpset_add(m->units, merge_fp(m, m->expected.v[i],
		    strlen(m->expected.v[i])), MERGE_EXPECTED | (uint32_t)i) <
		    0) {
			merge_nomem(err);
			goto out;
		}
	}
	if (credit_absent(m) < 0) {
		merge_nomem(err);
		goto out;
	}
	rc = 0;
out:
	corral_strv_release(&dups);
	fclose(fp);
	return rc;
}

/*
 * Credit the expected units an unfinished agent's .part (or a refused
 * log) holds (its complete, valid lines) to it: their value becomes
 * -2 - k for the k-th note in m->why, so the not-run note can name it.
 */
static void
credit_part(struct merge *m, const char *path, long k)
{
	struct corral_json_record jr;
	struct reader rd;
	long *vp;

	if (merge_reader_open(&rd, path, NULL) < 0)
		return;
	while (merge_reader_next(&rd, NULL) > 0) {
		if (rd.torn || corral_json_record_parse(rd.line, rd.len, &jr,
		    NULL) < 0)
			continue;
		if ((vp = merge_expected(m, jr.unit)) && *vp == -1)
			*vp = -2 - k;
		corral_json_record_release(&jr);
	}
	merge_reader_close(&rd);
}

int
merge_check_parts(struct merge *m)
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
		credit_part(m, path, (long)m->why.n - 1);
	}
	rc = 0;
out:
	free(path);
	corral_buf_release(&name);
	return rc;
}

/*
 * The units of refused logs, for the not-run notes (the logs themselves
 * are not trusted, so this only names where a unit's record went).
 */
int
merge_credit_refused(struct merge *m)
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
		if (rc == 0 && (rc = corral_strv_add(&m->why, note.data)) == 0)
			credit_part(m, m->agents[i].path, (long)m->why.n - 1);
	}
	corral_buf_release(&note);
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
 * Write the not-run record of unit u.  v is its value in m->units: -1
 * when no agent reported it, -2 - k when m->why.v[k] says why not.
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

/* Every expected unit that no log holds gets a not-run record. */
int
merge_write_missing(struct merge *m, struct corral_err *err)
{
	char mtime[21];
	const char *at;
	size_t i;

	iso_time(m->units_mtime, mtime);
	at = m->at.data ? m->at.data : mtime;
	for (i = 0; i < m->expected.n; i++) {
		if (m->exp_state[i] >= 0)
			continue;
		m->st->missing++;
		if (not_run(m, m->expected.v[i], m->exp_state[i], at, err) < 0)
			return -1;
	}
	return 0;
}
