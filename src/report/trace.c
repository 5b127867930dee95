/* See LICENSE file for copyright and license details. */
/*
 * trace.c writes a run's timeline in the Chrome Trace Event Format, which
 * Perfetto and chrome://tracing open: {"traceEvents": [...]}, one
 * complete event ("ph": "X") per attempt, checkout and merge (a cached
 * unit's lasting 0, its args saying cached: it did not run now), with
 * metadata events naming each process (a host, or the run when no host
 * is named; the merge is a process of its own) and each thread (an
 * agent).  Names are any bytes; the trace is always valid UTF-8 JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report-private.h"

/* A JSON string of s, valid UTF-8 whatever s holds. */
static int
add_name(struct corral_buf *b, const char *s)
{
	struct corral_buf u = CORRAL_BUF_INIT;
	int rc;

	rc = report_utf8(&u, s, strlen(s));
	if (rc == 0)
		rc = corral_buf_addjson(b, u.data ? u.data : "", u.len);
	corral_buf_release(&u);
	return rc;
}

/* The pid of each lane: its host's place among the hosts, from 1. */
static long *
lane_pids(const struct corral_timeline *t, long *npids)
{
	long *pid = calloc(t->nlanes ? t->nlanes : 1, sizeof(*pid));
	const struct corral_lane *l, *prev;
	size_t i;

	*npids = 0;
	for (i = 0; pid && i < t->nlanes; i++) {
		l = &t->lanes[i];
		prev = i ? &t->lanes[i - 1] : NULL;
		if (!prev || !l->host != !prev->host || (l->host &&
		    strcmp(l->host, prev->host)))
			++*npids;
		pid[i] = *npids;
	}
	return pid;
}

/* The tid of an agent: its id when decimal, else past them all. */
static long
lane_tid(const struct corral_timeline *t, size_t lane)
{
	const char *a = t->lanes[lane].agent;
	size_t n = strspn(a, "0123456789");

	if (n && n < 10 && !a[n])
		return strtol(a, NULL, 10);
	return 1000000000L + (long)lane;
}

/* "agent 3", "host h1", as one JSON string. */
static int
add_label(struct corral_buf *b, const char *what, const char *prefix,
    const char *name, long pid, long tid)
{
	struct corral_buf s = CORRAL_BUF_INIT;
	int rc;

	rc = corral_buf_addf(b, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%ld,"
	    "\"tid\":%ld,\"args\":{\"name\":", what, pid, tid);
	rc |= corral_buf_addstr(&s, prefix);
	rc |= report_utf8(&s, name, strlen(name));
	rc |= corral_buf_addjson(b, s.data ? s.data : "", s.len);
	rc |= corral_buf_addstr(b, "}},\n");
	corral_buf_release(&s);
	return rc;
}

static int
add_names(const struct corral_timeline *t, const long *pid, long merge_pid,
    struct corral_buf *b)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < t->nlanes && rc == 0; i++) {
		if (i == 0 || pid[i] != pid[i - 1])
			rc |= add_label(b, "process_name", t->lanes[i].host ?
			    "host " : "agents", t->lanes[i].host ?
			    t->lanes[i].host : "", pid[i], 0);
		rc |= add_label(b, "thread_name", "agent ",
		    t->lanes[i].agent, pid[i], lane_tid(t, i));
	}
	return rc | add_label(b, "process_name", "merge", "", merge_pid, 0);
}

/*
 * A cached unit's args: "cached": true, the run whose pass it reuses and
 * what that pass took then (its event lasts 0: it did not run now).
 */
static int
add_cached(const struct corral_span *s, struct corral_buf *b)
{
	int rc = corral_buf_addstr(b, ",\"cached\":true,\"cached_run\":");

	rc |= s->cached_run ? add_name(b, s->cached_run) :
	    corral_buf_addstr(b, "null");
	return rc | corral_buf_addf(b, ",\"cached_duration_ms\":%lld",
	    s->cached_ms);
}

static int
add_event(const struct corral_timeline *t, const struct corral_span *s,
    const long *pid, long merge_pid, struct corral_buf *b)
{
	static const char *const cat[] = { "unit", "checkout", "merge" };
	int rc;

	rc = corral_buf_addstr(b, "{\"ph\":\"X\",\"name\":");
	rc |= add_name(b, s->unit ? s->unit : cat[s->kind]);
	rc |= corral_buf_addf(b, ",\"cat\":\"%s\",\"ts\":%lld,\"dur\":%lld,"
	    "\"pid\":%ld,\"tid\":%ld", cat[s->kind], s->start_ms * 1000,
	    s->dur_ms * 1000, s->kind == CORRAL_SPAN_MERGE ? merge_pid :
	    pid[s->lane], s->kind == CORRAL_SPAN_MERGE ? 0 :
	    lane_tid(t, s->lane));
	if (s->kind == CORRAL_SPAN_ATTEMPT) {
		rc |= corral_buf_addstr(b, ",\"args\":{\"status\":");
		rc |= add_name(b, s->status);
		rc |= s->exit_code < 0 ? corral_buf_addstr(b, ",\"exit\":null") :
		    corral_buf_addf(b, ",\"exit\":%lld", s->exit_code);
		rc |= corral_buf_addf(b, ",\"attempt\":%lld", s->attempt);
		if (s->cached)
			rc |= add_cached(s, b);
		rc |= corral_buf_addch(b, '}');
	}
	return rc | corral_buf_addch(b, '}');
}

int
corral_trace_format(const struct corral_timeline *t, struct corral_buf *b)
{
	long npids, *pid = lane_pids(t, &npids);
	size_t i;
	int rc;

	if (!pid)
		return -1;
	rc = corral_buf_addstr(b, "{\"displayTimeUnit\":\"ms\","
	    "\"traceEvents\":[\n");
	rc |= add_names(t, pid, npids + 1, b);
	for (i = 0; i < t->n && rc == 0; i++) {
		rc |= add_event(t, &t->spans[i], pid, npids + 1, b);
		rc |= corral_buf_addstr(b, i + 1 < t->n ? ",\n" : "\n");
	}
	free(pid);
	return rc | corral_buf_addstr(b, "]}\n") ? -1 : 0;
}
