/* See LICENSE file for copyright and license details. */
/*
 * timeline.c reads where a run's time went from its merged results alone
 * (successes.jsonl, failures.jsonl and merge.json), so that a run merged
 * by hand or from the shards of several hosts shows the same as one run
 * by corral.mk.  A record ends at its "at" and took its "duration_ms";
 * its "tries" are the attempts before it (the merge keeps a unit's last
 * line only), its "checkout" the agent's clone, its "host" the machine.
 * A "cached" record ran nothing now: its span is the moment of its "at",
 * its duration_ms (the stored pass's) kept apart.
 * Every time is made relative to the first span's start, so that no span
 * lies outside [0, end_ms].  A result of several layers (a run and its
 * corral-rerun-failed) also shows the attempts a later layer replaced:
 * the merge keeps their lines in replaced.jsonl.  Nothing else is drawn:
 * an attempt of an earlier invocation that a slice run again since has
 * superseded (history.jsonl holds it) is no attempt of this result, and
 * neither is a shard the last merge left out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/report-private.h"

struct reading {
	struct corral_timeline *t;
	struct corral_set *lane_ix;	/* "HOST\0AGENT" -> lane */
	struct corral_buf key;
	long long last_at;		/* of the latest record, or -1 */
	const char *last_run;		/* its run */
	size_t cap_spans, cap_units, cap_lanes;
};

static const char *
keep_str(struct corral_timeline *t, const char *s)
{
	if (!s)
		return NULL;
	if (corral_strv_add(&t->strings, s) < 0)
		return NULL;
	return t->strings.v[t->strings.n - 1];
}

static int
grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *p;

	if (n < *cap)
		return 0;
	if (!(p = realloc(*v, (*cap ? *cap * 2 : 64) * size)))
		return -1;
	*v = p;
	*cap = *cap ? *cap * 2 : 64;
	return 0;
}

/* The lane of agent on host, made when new; -1 on ENOMEM. */
static long
lane_of(struct reading *rd, const char *host, const char *agent)
{
	struct corral_timeline *t = rd->t;
	struct corral_lane *l;
	long *ix;

	corral_buf_reset(&rd->key);
	if (corral_buf_addstr(&rd->key, host ? host : "") < 0 ||
	    corral_buf_add(&rd->key, "", 1) < 0 ||
	    corral_buf_addstr(&rd->key, agent) < 0)
		return -1;
	if ((ix = corral_set_getn(rd->lane_ix, rd->key.data, rd->key.len)))
		return *ix;
	if (grow((void **)&t->lanes, &rd->cap_lanes, t->nlanes,
	    sizeof(*t->lanes)) < 0)
		return -1;
	l = &t->lanes[t->nlanes];
	memset(l, 0, sizeof(*l));
	if ((host && !(l->host = keep_str(t, host))) ||
	    !(l->agent = keep_str(t, agent)) ||
	    corral_set_putn(rd->lane_ix, rd->key.data, rd->key.len,
	    (long)t->nlanes, NULL) < 0)
		return -1;
	return (long)t->nlanes++;
}

/* A span that ended at (ms since the Epoch) after ms; -1 on ENOMEM. */
static int
add_span(struct reading *rd, const struct corral_span *proto, long long at,
    long long ms)
{
	struct corral_timeline *t = rd->t;
	struct corral_span *s;

	if (grow((void **)&t->spans, &rd->cap_spans, t->n, sizeof(*s)) < 0)
		return -1;
	s = &t->spans[t->n++];
	*s = *proto;
	s->dur_ms = ms > 0 ? ms : 0;
	s->start_ms = at - s->dur_ms;
	return 0;
}

static int
add_unit(struct reading *rd, const struct corral_json_record *r, int ok)
{
	struct corral_timeline *t = rd->t;
	struct corral_timeline_unit *u;

	if (grow((void **)&t->units, &rd->cap_units, t->nunits,
	    sizeof(*u)) < 0)
		return -1;
	u = &t->units[t->nunits++];
	memset(u, 0, sizeof(*u));
	u->ok = ok;
	u->cached = r->cached;
	u->dur_ms = r->duration_ms;
	u->attempt = r->attempt;
	u->unit = strdup(r->unit);
	u->status = strdup(r->status ? r->status : ok ? "pass" : "fail");
	u->note = strdup(r->note ? r->note : "");
	u->output = r->output ? strdup(r->output) : NULL;
	if (report_output_where(r->agent_id, r->output, &u->where) < 0)
		return -1;
	return u->unit && u->status && u->note && (!r->output || u->output) ?
	    0 : -1;
}

/*
 * The spans r tells of: earlier attempts (with tries), its own, the
 * checkout.
 */
static int
add_record_spans(struct reading *rd, const struct corral_json_record *r,
    int with_tries)
{
	struct corral_record_try *tries = NULL, c;
	struct corral_span p;
	size_t i, n = 0;
	long lane;
	int rc = 0;

	/* a unit that never ran (not-run) has no span, nor a lane of its own */
	if (r->attempt <= 0 && !corral_json_record_checkout(r, &c))
		return 0;
	memset(&p, 0, sizeof(p));
	p.host = keep_str(rd->t, corral_json_record_str(r, "host"));
	p.agent = r->agent_id ? r->agent_id : "";
	p.run = keep_str(rd->t, r->run);
	if ((lane = lane_of(rd, p.host, p.agent)) < 0 ||
	    !(p.agent = rd->t->lanes[lane].agent) || (r->run && !p.run) ||
	    (with_tries && corral_json_record_tries(r, &tries, &n) < 0))
		return -1;
	p.lane = (size_t)lane;
	p.kind = CORRAL_SPAN_ATTEMPT;
	p.unit = keep_str(rd->t, r->unit);
	for (i = 0; i < n && rc == 0 && p.unit; i++) {
		p.status = keep_str(rd->t, tries[i].status ? tries[i].status :
		    "fail");
		p.exit_code = tries[i].exit_code;
		p.attempt = (long long)i + 1;
		if (report_iso_ms(tries[i].at) >= 0)
			rc = add_span(rd, &p, report_iso_ms(tries[i].at),
			    tries[i].duration_ms);
	}
	free(tries);
	if (rc < 0 || !p.unit)
		return -1;
	p.status = keep_str(rd->t, r->status ? r->status :
	    r->ok ? "pass" : "fail");
	p.exit_code = r->exit_code;
	p.attempt = r->attempt;
	/* A hit did not run now: a moment, not its stored pass's time. */
	if ((p.cached = r->cached)) {
		p.cached_ms = r->duration_ms;
		p.cached_run = corral_json_record_cached(r, "run");
		if (p.cached_run && !(p.cached_run = keep_str(rd->t,
		    p.cached_run)))
			return -1;
	}
	if (r->attempt > 0 && report_iso_ms(r->at) >= 0 &&
	    (!p.status || add_span(rd, &p, report_iso_ms(r->at), p.cached ?
	    0 : r->duration_ms) < 0))
		return -1;
	if (!corral_json_record_checkout(r, &c) || report_iso_ms(c.at) < 0)
		return 0;
	p.cached = 0;
	p.cached_ms = 0;
	p.cached_run = NULL;
	p.kind = CORRAL_SPAN_CHECKOUT;
	p.unit = p.status = NULL;
	p.exit_code = -1;
	p.attempt = 0;
	return add_span(rd, &p, report_iso_ms(c.at), c.duration_ms);
}

/* One record of a result file: its unit and its spans. */
static int
add_record(void *ctx, const struct corral_json_record *r, int ok)
{
	struct reading *rd = ctx;
	long long at = report_iso_ms(r->at);

	if (r->run && at > rd->last_at) {
		rd->last_at = at;
		if (!(rd->last_run = keep_str(rd->t, r->run)))
			return -1;
	}
	return add_unit(ctx, r, ok) < 0 || add_record_spans(ctx, r, 1) < 0 ?
	    -1 : 0;
}

/*
 * A line of replaced.jsonl: an attempt a later layer replaced.  Each
 * attempt has a line of its own there, so its "tries" are not drawn again.
 */
static int
add_replaced(void *ctx, const struct corral_json_record *r, int ok)
{
	(void)ok;
	return add_record_spans(ctx, r, 0);
}

/*
 * summary.json's run and shard (or shards), when it names them: the run
 * is the one of the latest merge (else that of the record that ended
 * last).
 */
static int
read_summary(struct reading *rd)
{
	struct corral_timeline *t = rd->t;
	char *run = report_summary_str(t->dir, "run");
	char *shard = report_summary_str(t->dir, "shard");
	char *shards = report_summary_str(t->dir, "shards");
	int rc = 0;

	if (run && !(t->run = keep_str(t, run)))
		rc = -1;
	if (!run)
		t->run = rd->last_run;
	if (shard && !(t->shard = keep_str(t, shard)))
		rc = -1;
	if (shards && !(t->shards = keep_str(t, shards)))
		rc = -1;
	free(run);
	free(shard);
	free(shards);
	return rc;
}

/* merge.json, when there is one: {"at": END, "duration_ms": MS}. */
static int
read_merge(struct reading *rd)
{
	struct corral_buf path = CORRAL_BUF_INIT, text = CORRAL_BUF_INIT;
	struct corral_json_obj o;
	struct corral_span p;
	long long at;
	int rc = 0;

	memset(&p, 0, sizeof(p));
	p.kind = CORRAL_SPAN_MERGE;
	p.agent = "";
	p.exit_code = -1;
	if (corral_buf_addf(&path, "%s/merge.json", rd->t->dir) == 0 &&
	    corral_read_file(path.data, &text, NULL) == 0 && text.len &&
	    corral_json_obj_parse(text.data, corral_line_chomp(text.data,
	    text.len), &o, NULL) == 0) {
		if ((at = report_iso_ms(corral_json_obj_str(&o, "at"))) >= 0)
			rc = add_span(rd, &p, at, corral_json_obj_int(&o,
			    "duration_ms"));
		corral_json_obj_release(&o);
	}
	corral_buf_release(&path);
	corral_buf_release(&text);
	return rc;
}

/* Agent ids compare as numbers when both are decimal, else bytewise. */
static int
agent_cmp(const char *a, const char *b)
{
	size_t na = strspn(a, "0123456789"), nb = strspn(b, "0123456789");

	if (na && nb && !a[na] && !b[nb] && na != nb)
		return na < nb ? -1 : 1;
	return strcmp(a, b);
}

static int
lane_cmp(const void *x, const void *y)
{
	const struct corral_lane *a = *(const struct corral_lane *const *)x;
	const struct corral_lane *b = *(const struct corral_lane *const *)y;
	int c;

	if (!a->host != !b->host)
		return a->host ? 1 : -1;
	if (a->host && (c = strcmp(a->host, b->host)))
		return c;
	return agent_cmp(a->agent, b->agent);
}

/* Lanes in their order, and the spans' lane indices with them. */
static int
sort_lanes(struct corral_timeline *t)
{
	struct corral_lane **by, *lanes;
	size_t *to, i;

	if (!t->nlanes)
		return 0;
	by = calloc(t->nlanes, sizeof(*by));
	to = calloc(t->nlanes, sizeof(*to));
	lanes = calloc(t->nlanes, sizeof(*lanes));
	if (!by || !to || !lanes) {
		free(by), free(to), free(lanes);
		return -1;
	}
	for (i = 0; i < t->nlanes; i++)
		by[i] = &t->lanes[i];
	qsort(by, t->nlanes, sizeof(*by), lane_cmp);
	for (i = 0; i < t->nlanes; i++) {
		lanes[i] = *by[i];
		to[by[i] - t->lanes] = i;
		t->nhosts += lanes[i].host && (i == 0 || !lanes[i - 1].host ||
		    strcmp(lanes[i].host, lanes[i - 1].host));
	}
	for (i = 0; i < t->n; i++)
		if (t->spans[i].kind != CORRAL_SPAN_MERGE)
			t->spans[i].lane = to[t->spans[i].lane];
	free(t->lanes);
	t->lanes = lanes;
	free(by);
	free(to);
	return 0;
}

static int
span_cmp(const void *x, const void *y)
{
	const struct corral_span *a = x, *b = y;

	if (a->start_ms != b->start_ms)
		return a->start_ms < b->start_ms ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind == CORRAL_SPAN_MERGE ? 1 : b->kind ==
		    CORRAL_SPAN_MERGE ? -1 : (int)a->kind - (int)b->kind;
	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	return a->unit && b->unit ? strcmp(a->unit, b->unit) : 0;
}

static int
unit_cmp(const void *x, const void *y)
{
	const struct corral_timeline_unit *a = x, *b = y;

	return strcmp(a->unit, b->unit);
}

/*
 * The spans, sorted by start, without the idle times between them: a
 * span that starts over CORRAL_TIMELINE_IDLE_MS after every earlier one
 * ended moves back to where they ended, and so does every later one.
 * 0, or -1 (ENOMEM).
 */
static int
close_gaps(struct corral_timeline *t)
{
	long long covered = 0, shift = 0, *g;
	struct corral_span *s;
	size_t i;

	for (i = 0; i < t->n; i++) {
		s = &t->spans[i];
		if (i && s->start_ms - shift > covered +
		    CORRAL_TIMELINE_IDLE_MS) {
			if (!(g = realloc(t->gaps, (t->ngaps + 1) *
			    sizeof(*g))))
				return -1;
			t->gaps = g;
			t->gaps[t->ngaps++] = covered;
			t->idle_ms += s->start_ms - shift - covered;
			shift = s->start_ms - covered;
		}
		s->start_ms -= shift;
		if (s->start_ms + s->dur_ms > covered)
			covered = s->start_ms + s->dur_ms;
	}
	return 0;
}

/* Times from the first start, idle times left out; each lane's busy time. */
static int
settle(struct corral_timeline *t)
{
	struct corral_span *s;
	size_t i;

	for (i = 0; i < t->n; i++)
		if (i == 0 || t->spans[i].start_ms < t->t0)
			t->t0 = t->spans[i].start_ms;
	for (i = 0; i < t->n; i++)
		t->spans[i].start_ms -= t->t0;
	if (t->n)
		qsort(t->spans, t->n, sizeof(*t->spans), span_cmp);
	if (close_gaps(t) < 0)
		return -1;
	for (i = 0; i < t->n; i++) {
		s = &t->spans[i];
		if (s->start_ms + s->dur_ms > t->end_ms)
			t->end_ms = s->start_ms + s->dur_ms;
		if (s->kind == CORRAL_SPAN_ATTEMPT)
			t->lanes[s->lane].busy_ms += s->dur_ms;
	}
	if (t->nunits)
		qsort(t->units, t->nunits, sizeof(*t->units), unit_cmp);
	return 0;
}

int
corral_timeline_read(struct corral_timeline *t, const char *dir,
    struct corral_err *err)
{
	struct report_results m;
	struct reading rd;
	int rc = -1;

	memset(t, 0, sizeof(*t));
	memset(&rd, 0, sizeof(rd));
	t->dir = dir;
	rd.t = t;
	rd.last_at = -1;
	if (!(rd.lane_ix = corral_set_new())) {
		corral_err_set(err, ENOMEM, "reading '%s'", dir);
		goto out;
	}
	m.dir = dir;
	m.row = add_record;
	m.ctx = &rd;
	m.unreadable = &t->unreadable;
	m.scanned = 0;
	if (report_results_read(&m, "successes.jsonl", 1, err) < 0 ||
	    report_results_read(&m, "failures.jsonl", 0, err) < 0)
		goto out;
	m.row = add_replaced;
	if (report_results_read(&m, "replaced.jsonl", 0, err) < 0)
		goto out;
	if (read_merge(&rd) < 0 || read_summary(&rd) < 0 || sort_lanes(t) < 0 ||
	    settle(t) < 0) {
		corral_err_set(err, ENOMEM, "reading '%s'", dir);
		goto out;
	}
	rc = 0;
out:
	corral_set_free(rd.lane_ix);
	corral_buf_release(&rd.key);
	return rc;
}

void
corral_timeline_release(struct corral_timeline *t)
{
	size_t i;

	for (i = 0; i < t->nunits; i++) {
		free(t->units[i].unit);
		free(t->units[i].status);
		free(t->units[i].note);
		free(t->units[i].output);
		free(t->units[i].where);
	}
	free(t->units);
	free(t->spans);
	free(t->lanes);
	free(t->gaps);
	corral_strv_release(&t->strings);
	corral_strv_release(&t->unreadable);
	memset(t, 0, sizeof(*t));
}

int
corral_timeline_note_merge(const char *dir, long long start, long long ms,
    struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	long long end = start + (ms > 0 ? ms : 0);
	time_t secs = (time_t)(end / 1000);
	char stamp[32];
	struct tm tm;
	int rc;

	if (!gmtime_r(&secs, &tm) ||
	    !strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm) ||
	    corral_buf_addf(&b, "{\"at\":\"%s.%03lldZ\",\"duration_ms\":"
	    "%lld}\n", stamp, end % 1000, ms > 0 ? ms : 0) < 0) {
		corral_buf_release(&b);
		return corral_err_set(err, ENOMEM, "cannot write '%s/merge.json'",
		    dir);
	}
	rc = corral_atomic_file_at(dir, "merge.json", b.data, err);
	corral_buf_release(&b);
	return rc;
}
