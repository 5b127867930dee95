/* See LICENSE file for copyright and license details. */
/*
 * html.c writes a run's timeline as one HTML page that needs nothing
 * else: inline CSS and SVG, no script, nothing fetched.  It holds the
 * counts, a timeline with one row per agent (grouped by host) and one bar
 * per attempt, coloured by status, whose SVG <title> the browser shows on
 * hover (a unit the cache answered is a mark of its own, a moment wide:
 * it did not run now, and the time its stored pass once took is only
 * said); the failures first, with their notes and the tail of their
 * output; the slowest and the flaky units; and the plan's balance, the
 * makespan against its lower bound max(total / agents, longest unit).
 * For a large run, bars narrower than a pixel that follow one another on
 * a row merge into one, and long tables fold (<details>).  Every name and
 * note is escaped, and invalid UTF-8 becomes U+FFFD.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report-private.h"

#define PLOT_W	1000	/* px of the time axis */
#define LABEL_W	130	/* px of the row labels */
#define ROW_H	18
#define BAR_H	14
#define AXIS_H	22
#define SHOWN	50	/* rows of a table before the rest fold */
#define TAILS	200	/* failures whose output tail is quoted */
#define SLOWEST	20
#define CACHED_W	4	/* px of a cached unit's mark: it took no time */

static const char style[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}"
	"h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}"
	"table{border-collapse:collapse}td,th{padding:2px 8px;"
	"text-align:left;vertical-align:top;border-bottom:1px solid #ddd}"
	"td.n{text-align:right;font-variant-numeric:tabular-nums}"
	"pre{background:#f6f6f6;padding:6px;max-height:24em;overflow:auto;"
	"white-space:pre-wrap}"
	".counts span{margin-right:1.2em}"
	"svg text{font:11px sans-serif;fill:#333}"
	".pause{stroke:#555;stroke-dasharray:3 3}"
	".timeline{overflow-x:auto}"
	".meter{display:inline-block;height:.7em;background:#3a9d5d}"
	"rect.bar,rect.bars{stroke:#fff;stroke-width:.5}"
	"rect.cached{stroke:#3a9d5d;stroke-width:1}"
	".pass{fill:#3a9d5d;background:#3a9d5d}"
	".flaky{fill:#e6c229;background:#e6c229}"
	".skip{fill:#9aa0a6;background:#9aa0a6}"
	".fail{fill:#d64545;background:#d64545}"
	".crash{fill:#8b1a1a;background:#8b1a1a}"
	".timeout{fill:#e08a1e;background:#e08a1e}"
	".error{fill:#8e44ad;background:#8e44ad}"
	".not-run{fill:#c8c8c8;background:#c8c8c8}"
	".other{fill:#777;background:#777}"
	".checkout{fill:#7aa7d9;background:#7aa7d9}"
	".merge{fill:#444;background:#444}"
	".cached{fill:#d5ecdc;background:#d5ecdc}"
	".key i{display:inline-block;width:.9em;height:.9em;"
	"margin:0 .3em 0 1em;vertical-align:-.1em}"
	".grid{stroke:#e4e4e4}.host{font-weight:bold}";

/* The CSS class of a status: one of the known ones, else "other". */
static const char *
status_class(const char *status)
{
	static const char *const known[] = { "pass", "flaky", "skip",
	    "fail", "crash", "timeout", "error", "not-run" };
	size_t i;

	for (i = 0; status && i < sizeof(known) / sizeof(*known); i++)
		if (!strcmp(status, known[i]))
			return known[i];
	return "other";
}

/* How bad a status is, for the colour of merged bars. */
static int
badness(const char *status)
{
	const char *c = status_class(status);

	return !strcmp(c, "pass") || !strcmp(c, "skip") ? 0 :
	    !strcmp(c, "flaky") ? 1 : 2;
}

static int
text(struct corral_buf *b, const char *s)
{
	return report_xml(b, s ? s : "", s ? strlen(s) : 0, 0);
}

/* "850 ms", "3.2s", "1m05s". */
static int
add_ms(struct corral_buf *b, long long ms)
{
	char d[32];

	if (ms < 0)
		return corral_buf_addstr(b, "?");
	if (ms < 1000)
		return corral_buf_addf(b, "%lld ms", ms);
	corral_duration_format(ms, d);
	return corral_buf_addstr(b, d);
}

/* ------------------------------------------------------------------ */
/* The counts                                                           */

static size_t
count_status(const struct corral_timeline *t, const char *status)
{
	size_t i, n = 0;

	for (i = 0; i < t->nunits; i++)
		n += !strcmp(status_class(t->units[i].status), status);
	return n;
}

/* The attempts, as summary.json counts them: a cached unit's among them. */
static size_t
count_attempts(const struct corral_timeline *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->n; i++)
		n += t->spans[i].kind == CORRAL_SPAN_ATTEMPT;
	return n;
}

static size_t
count_cached(const struct corral_timeline *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->nunits; i++)
		n += t->units[i].cached != 0;
	return n;
}

static int
add_counts(const struct corral_timeline *t, struct corral_buf *b)
{
	static const char *const shown[] = { "pass", "flaky", "skip", "fail",
	    "crash", "timeout", "error", "not-run", "other" };
	size_t i, n;
	int rc;

	rc = corral_buf_addf(b, "<p class=\"counts\"><span><b>%zu</b> "
	    "unit%s</span>", t->nunits, t->nunits == 1 ? "" : "s");
	for (i = 0; i < sizeof(shown) / sizeof(*shown); i++)
		if ((n = count_status(t, shown[i])))
			rc |= corral_buf_addf(b, "<span><i class=\"%s\" "
			    "style=\"display:inline-block;width:.8em;"
			    "height:.8em\"></i> %zu %s</span>", shown[i], n,
			    shown[i]);
	if ((n = count_cached(t)))
		rc |= corral_buf_addf(b, "<span><i class=\"cached\" "
		    "style=\"display:inline-block;width:.8em;height:.8em\">"
		    "</i> %zu cached, not run again</span>", n);
	rc |= corral_buf_addf(b, "<span>%zu attempts</span><span>%zu "
	    "agent%s</span>", count_attempts(t), t->nlanes,
	    t->nlanes == 1 ? "" : "s");
	if (t->nhosts)
		rc |= corral_buf_addf(b, "<span>%zu host%s</span>", t->nhosts,
		    t->nhosts == 1 ? "" : "s");
	rc |= corral_buf_addstr(b, "<span>");
	rc |= add_ms(b, t->end_ms);
	rc |= corral_buf_addstr(b, " in all</span>");
	if (t->ngaps) {
		rc |= corral_buf_addf(b, "<span>%zu pause%s between runs left "
		    "out (", t->ngaps, t->ngaps == 1 ? "" : "s");
		rc |= add_ms(b, t->idle_ms);
		rc |= corral_buf_addstr(b, ")</span>");
	}
	return rc | corral_buf_addstr(b, "</p>\n");
}

/* ------------------------------------------------------------------ */
/* The timeline                                                         */

/* Where the timeline draws. */
struct plot {
	const struct corral_timeline *t;
	double scale;		/* px per ms */
	size_t *row;		/* each lane's row; host headings take one */
	size_t rows;		/* lanes, host headings, the merge */
};

static double
px(const struct plot *p, long long ms)
{
	return LABEL_W + (double)ms * p->scale;
}

static int
same_host(const struct corral_lane *a, const struct corral_lane *b)
{
	return !a->host == !b->host && (!a->host ||
	    !strcmp(a->host, b->host));
}

static int
plan_rows(struct plot *p, const struct corral_timeline *t)
{
	size_t i;

	p->t = t;
	p->scale = t->end_ms > 0 ? (double)PLOT_W / (double)t->end_ms : 1;
	if (!(p->row = calloc(t->nlanes ? t->nlanes : 1, sizeof(*p->row))))
		return -1;
	p->rows = 0;
	for (i = 0; i < t->nlanes; i++) {
		if (t->lanes[i].host && (i == 0 ||
		    !same_host(&t->lanes[i], &t->lanes[i - 1])))
			p->rows++;
		p->row[i] = p->rows++;
	}
	p->rows++;	/* the merge */
	return 0;
}

/* The first of 1, 2, 5, 10, 20, 50, ... ms that cuts end in at most 8. */
static long long
tick_step(long long end)
{
	static const long long nice[] = { 1, 2, 5 };
	long long mag;
	int i;

	for (mag = 1;; mag *= 10)
		for (i = 0; i < 3; i++)
			if (end / (nice[i] * mag) <= 8)
				return nice[i] * mag;
}

/* A time axis with round ticks. */
static int
add_axis(const struct plot *p, struct corral_buf *b, double height)
{
	long long step = tick_step(p->t->end_ms), ms;
	int rc = 0;

	size_t i;

	for (ms = 0; ms <= p->t->end_ms && rc == 0; ms += step) {
		rc |= corral_buf_addf(b, "<line class=\"grid\" x1=\"%.1f\" "
		    "y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"/><text x=\"%.1f\" "
		    "y=\"14\">", px(p, ms), AXIS_H - 4, px(p, ms), height,
		    px(p, ms) + 2);
		rc |= add_ms(b, ms);
		rc |= corral_buf_addstr(b, "</text>\n");
	}
	/* where a pause between runs is left out: a dashed line */
	for (i = 0; i < p->t->ngaps && rc == 0; i++)
		rc |= corral_buf_addf(b, "<line class=\"pause\" x1=\"%.1f\" "
		    "y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"><title>a pause between "
		    "runs, left out</title></line>\n", px(p, p->t->gaps[i]),
		    AXIS_H - 4, px(p, p->t->gaps[i]), height);
	return rc;
}

static double
row_y(size_t row)
{
	return AXIS_H + (double)row * ROW_H;
}

static int
add_labels(const struct plot *p, struct corral_buf *b)
{
	const struct corral_timeline *t = p->t;
	size_t i;
	int rc = 0;

	for (i = 0; i < t->nlanes && rc == 0; i++) {
		if (t->lanes[i].host && (i == 0 ||
		    !same_host(&t->lanes[i], &t->lanes[i - 1]))) {
			rc |= corral_buf_addf(b, "<text class=\"host\" x=\"2\" "
			    "y=\"%.0f\">", row_y(p->row[i] - 1) + 13);
			rc |= text(b, t->lanes[i].host);
			rc |= corral_buf_addstr(b, "</text>\n");
		}
		rc |= corral_buf_addf(b, "<text x=\"%d\" y=\"%.0f\">agent ",
		    t->lanes[i].host ? 12 : 2, row_y(p->row[i]) + 13);
		rc |= text(b, t->lanes[i].agent);
		rc |= corral_buf_addstr(b, "</text>\n");
	}
	return rc | corral_buf_addf(b, "<text x=\"2\" y=\"%.0f\">merge"
	    "</text>\n", row_y(p->rows - 1) + 13);
}

/*
 * A cached unit's title, after its name: "cached: pass (exit 0), not run
 * again; it took 1.2s in run R".
 */
static int
add_cached_title(const struct corral_span *s, struct corral_buf *b)
{
	int rc = corral_buf_addstr(b, "cached: ");

	rc |= text(b, s->status);
	if (s->exit_code >= 0)
		rc |= corral_buf_addf(b, " (exit %lld)", s->exit_code);
	rc |= corral_buf_addstr(b, ", not run again; it took ");
	rc |= add_ms(b, s->cached_ms);
	if (s->cached_run) {
		rc |= corral_buf_addstr(b, " in run ");
		rc |= text(b, s->cached_run);
	}
	return rc | corral_buf_addstr(b, "</title></rect>\n");
}

/* One bar: a span of its own, with its title. */
static int
add_bar(const struct plot *p, const struct corral_span *s,
    struct corral_buf *b)
{
	double x = px(p, s->start_ms), w = (double)s->dur_ms * p->scale;
	size_t row = s->kind == CORRAL_SPAN_MERGE ? p->rows - 1 :
	    p->row[s->lane];
	int rc;

	if (s->cached)
		w = CACHED_W;
	rc = corral_buf_addf(b, "<rect class=\"%s %s\" x=\"%.2f\" y=\"%.0f\" "
	    "width=\"%.2f\" height=\"%d\"", s->kind == CORRAL_SPAN_ATTEMPT ?
	    "bar" : "span", s->cached ? "cached" : s->kind ==
	    CORRAL_SPAN_ATTEMPT ? status_class(s->status) : s->kind ==
	    CORRAL_SPAN_CHECKOUT ? "checkout" : "merge", x, row_y(row) + 2,
	    w < 1 ? 1 : w, BAR_H);
	if (s->kind == CORRAL_SPAN_ATTEMPT) {
		rc |= corral_buf_addstr(b, " data-unit=\"");
		rc |= text(b, s->unit);
		rc |= corral_buf_addch(b, '"');
	}
	rc |= corral_buf_addstr(b, "><title>");
	rc |= text(b, s->unit ? s->unit : s->kind == CORRAL_SPAN_CHECKOUT ?
	    "checkout" : "merge");
	rc |= corral_buf_addstr(b, "\n");
	if (s->cached)
		return rc | add_cached_title(s, b);
	rc |= add_ms(b, s->dur_ms);
	if (s->kind == CORRAL_SPAN_ATTEMPT) {
		rc |= corral_buf_addstr(b, ", ");
		rc |= text(b, s->status);
		if (s->exit_code >= 0)
			rc |= corral_buf_addf(b, " (exit %lld)", s->exit_code);
		rc |= corral_buf_addf(b, ", attempt %lld", s->attempt);
	}
	return rc | corral_buf_addstr(b, "</title></rect>\n");
}

/* Bars merged: n attempts of one lane, from first to last (inclusive). */
struct group {
	const struct corral_span *first, *last;
	size_t n, failed;
	int worst;
	long long end;
};

static int
add_group(const struct plot *p, const struct group *g, struct corral_buf *b)
{
	static const char *const cls[] = { "pass", "flaky", "fail" };
	double x = px(p, g->first->start_ms), w = px(p, g->end) - x;
	int cached = g->first->cached, rc;

	if (g->n == 1)
		return add_bar(p, g->first, b);
	if (w < (cached ? CACHED_W : 1))
		w = cached ? CACHED_W : 1;
	rc = corral_buf_addf(b, "<rect class=\"bars %s\" x=\"%.2f\" "
	    "y=\"%.0f\" width=\"%.2f\" height=\"%d\"><title>", cached ?
	    "cached" : cls[g->worst], x, row_y(p->row[g->first->lane]) + 2, w,
	    BAR_H);
	if (cached)
		rc |= corral_buf_addf(b, "%zu cached, not run again", g->n);
	else {
		rc |= corral_buf_addf(b, "%zu attempts, %zu failed, ", g->n,
		    g->failed);
		rc |= add_ms(b, g->end - g->first->start_ms);
	}
	rc |= corral_buf_addstr(b, "\n");
	rc |= text(b, g->first->unit);
	rc |= corral_buf_addstr(b, " ... ");
	rc |= text(b, g->last->unit);
	return rc | corral_buf_addstr(b, "</title></rect>\n");
}

/*
 * Whether s, on its lane after g, joins g: both below a pixel, and close;
 * cached units join only one another.
 */
static int
joins(const struct plot *p, const struct group *g, const struct corral_span *s)
{
	return g->n && s->cached == g->first->cached &&
	    (double)s->dur_ms * p->scale < 1 &&
	    (double)(g->last->dur_ms) * p->scale < 1 &&
	    (double)(s->start_ms - g->end) * p->scale < 1;
}

/* The attempts of lane l, in start order, merging what is below a pixel. */
static int
add_lane(const struct plot *p, size_t l, struct corral_buf *b)
{
	const struct corral_timeline *t = p->t;
	const struct corral_span *s;
	struct group g;
	size_t i;
	int rc = 0;

	memset(&g, 0, sizeof(g));
	for (i = 0; i < t->n && rc == 0; i++) {
		s = &t->spans[i];
		if (s->kind == CORRAL_SPAN_MERGE || s->lane != l)
			continue;
		if (s->kind == CORRAL_SPAN_CHECKOUT) {
			rc |= add_bar(p, s, b);
			continue;
		}
		if (!joins(p, &g, s)) {
			if (g.n)
				rc |= add_group(p, &g, b);
			memset(&g, 0, sizeof(g));
			g.first = s;
		}
		g.last = s;
		g.n++;
		g.failed += badness(s->status) == 2;
		g.worst = badness(s->status) > g.worst ? badness(s->status) :
		    g.worst;
		if (s->start_ms + s->dur_ms > g.end)
			g.end = s->start_ms + s->dur_ms;
	}
	return g.n ? rc | add_group(p, &g, b) : rc;
}

static int
add_key(struct corral_buf *b)
{
	static const char *const keys[] = { "pass", "flaky", "skip", "fail",
	    "crash", "timeout", "error", "cached", "checkout", "merge" };
	size_t i;
	int rc = corral_buf_addstr(b, "<p class=\"key\">");

	for (i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		rc |= corral_buf_addf(b, "<i class=\"%s\"></i>%s", keys[i],
		    keys[i]);
	return rc | corral_buf_addstr(b, "</p>\n");
}

static int
add_timeline(const struct corral_timeline *t, struct corral_buf *b)
{
	struct plot p;
	double height;
	size_t i;
	int rc;

	if (plan_rows(&p, t) < 0)
		return -1;
	height = row_y(p.rows) + 4;
	rc = corral_buf_addstr(b, "<h2 id=\"timeline\">Timeline</h2>\n");
	rc |= add_key(b);
	rc |= corral_buf_addf(b, "<div class=\"timeline\"><svg xmlns=\""
	    "http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
	    "role=\"img\">\n", LABEL_W + PLOT_W + 10, height);
	rc |= add_axis(&p, b, height);
	rc |= add_labels(&p, b);
	for (i = 0; i < t->nlanes && rc == 0; i++)
		rc |= add_lane(&p, i, b);
	for (i = 0; i < t->n && rc == 0; i++)
		if (t->spans[i].kind == CORRAL_SPAN_MERGE)
			rc |= add_bar(&p, &t->spans[i], b);
	rc |= corral_buf_addstr(b, "</svg></div>\n");
	free(p.row);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Tables                                                               */

/* Before row i of a table of n: fold what follows the first SHOWN. */
static int
fold(struct corral_buf *b, size_t i, size_t n, const char *head)
{
	if (i != SHOWN || n <= SHOWN)
		return 0;
	return corral_buf_addf(b, "</table>\n<details><summary>%zu more"
	    "</summary>\n<table>%s", n - SHOWN, head);
}

/* A section's heading, and its table's head (or "None." for no rows). */
static int
table_head(struct corral_buf *b, const char *id, const char *title, size_t n,
    const char *head)
{
	if (corral_buf_addf(b, "<h2 id=\"%s\">%s (%zu)</h2>\n", id, title,
	    n) < 0)
		return -1;
	return corral_buf_addstr(b, n ? "<table>" : "<p>None.</p>\n") |
	    (n ? corral_buf_addstr(b, head) : 0);
}

static int
end_table(struct corral_buf *b, size_t n)
{
	return corral_buf_addstr(b, n > SHOWN ? "</table></details>\n" :
	    "</table>\n");
}

static int
add_failure(const struct corral_timeline *t,
    const struct corral_timeline_unit *u, size_t k, struct corral_buf *tail,
    struct corral_buf *b)
{
	struct corral_report rep;
	int rc;

	memset(&rep, 0, sizeof(rep));
	rep.dir = t->dir;	/* where a relative output path is */
	rc = corral_buf_addf(b, "<tr><td><span class=\"meter %s\" "
	    "style=\"width:.7em\"></span> ", status_class(u->status));
	rc |= text(b, u->unit);
	rc |= corral_buf_addstr(b, "</td><td>");
	rc |= text(b, u->status);
	rc |= corral_buf_addf(b, "</td><td class=\"n\">%lld</td><td "
	    "class=\"n\">", u->attempt);
	rc |= add_ms(b, u->dur_ms);
	rc |= corral_buf_addstr(b, "</td><td>");
	rc |= text(b, u->note);
	corral_buf_reset(tail);
	if (k < TAILS)
		report_read_tail(&rep, u->where, REPORT_TAIL, tail);
	if (tail->len) {
		rc |= corral_buf_addstr(b, "<details><summary>output tail"
		    "</summary><pre>");
		rc |= report_xml(b, tail->data, tail->len, 1);
		rc |= corral_buf_addstr(b, "</pre></details>");
	}
	return rc | corral_buf_addstr(b, "</td></tr>\n");
}

static int
add_failures(const struct corral_timeline *t, struct corral_buf *b)
{
	static const char head[] = "<tr><th>unit</th><th>status</th>"
	    "<th>attempts</th><th>time</th><th>note</th></tr>\n";
	struct corral_buf tail = CORRAL_BUF_INIT;
	size_t i, k = 0, n = 0;
	int rc;

	for (i = 0; i < t->nunits; i++)
		n += !t->units[i].ok;
	if ((rc = table_head(b, "failures", "Failures", n, head)) || !n)
		return rc;
	for (i = 0; i < t->nunits && rc == 0; i++) {
		if (t->units[i].ok)
			continue;
		rc |= fold(b, k, n, head);
		rc |= add_failure(t, &t->units[i], k++, &tail, b);
	}
	corral_buf_release(&tail);
	return rc | end_table(b, n);
}

/*
 * The units of one class (flaky, skip) as a section id titled title:
 * each with its attempts and its note (a skip's reason).
 */
static int
add_class(const struct corral_timeline *t, struct corral_buf *b,
    const char *cls, const char *id, const char *title)
{
	static const char head[] = "<tr><th>unit</th><th>attempts</th>"
	    "<th>note</th></tr>\n";
	size_t i, k = 0, n = count_status(t, cls);
	int rc;

	if ((rc = table_head(b, id, title, n, head)) || !n)
		return rc;
	for (i = 0; i < t->nunits && rc == 0; i++) {
		if (strcmp(status_class(t->units[i].status), cls))
			continue;
		rc |= fold(b, k++, n, head);
		rc |= corral_buf_addstr(b, "<tr><td>");
		rc |= text(b, t->units[i].unit);
		rc |= corral_buf_addf(b, "</td><td class=\"n\">%lld</td><td>",
		    t->units[i].attempt);
		rc |= text(b, t->units[i].note);
		rc |= corral_buf_addstr(b, "</td></tr>\n");
	}
	return rc | end_table(b, n);
}

static int
by_duration(const void *x, const void *y)
{
	const struct corral_timeline_unit *a = *(const void *const *)x;
	const struct corral_timeline_unit *b = *(const void *const *)y;

	if (a->dur_ms != b->dur_ms)
		return a->dur_ms > b->dur_ms ? -1 : 1;
	return strcmp(a->unit, b->unit);
}

static int
add_slowest(const struct corral_timeline *t, struct corral_buf *b)
{
	const struct corral_timeline_unit **v;
	size_t i, k = 0, n;
	int rc;

	if (!(v = calloc(t->nunits ? t->nunits : 1, sizeof(*v))))
		return -1;
	/* a cached unit took no time now: its duration is its stored pass's */
	for (i = 0; i < t->nunits; i++)
		if (!t->units[i].cached)
			v[k++] = &t->units[i];
	qsort(v, k, sizeof(*v), by_duration);
	n = k < SLOWEST ? k : SLOWEST;
	rc = corral_buf_addf(b, "<h2 id=\"slowest\">Slowest units</h2>\n"
	    "<table><tr><th>unit</th><th>time</th><th></th></tr>\n");
	for (i = 0; i < n && rc == 0; i++) {
		rc |= corral_buf_addstr(b, "<tr><td>");
		rc |= text(b, v[i]->unit);
		rc |= corral_buf_addstr(b, "</td><td class=\"n\">");
		rc |= add_ms(b, v[i]->dur_ms);
		rc |= corral_buf_addf(b, "</td><td><span class=\"meter %s\" "
		    "style=\"width:%.0fpx\"></span></td></tr>\n",
		    status_class(v[i]->status), v[0]->dur_ms > 0 ? 300.0 *
		    (double)v[i]->dur_ms / (double)v[0]->dur_ms : 0);
	}
	free(v);
	return rc | corral_buf_addstr(b, "</table>\n");
}

/* ------------------------------------------------------------------ */
/* The plan's balance                                                   */

struct balance {
	long long first, last;	/* of the attempts */
	long long total;	/* their time */
	long long longest;	/* a unit's attempts, together */
	size_t lanes;		/* the agents they ran in */
	size_t n, of;		/* attempts measured, of all */
	int by_run;		/* they are t->run's */
};

/* 1 when s is an attempt of run (NULL: any run). */
static int
of_run(const struct corral_span *s, const char *run)
{
	return s->kind == CORRAL_SPAN_ATTEMPT && (!run || (s->run &&
	    !strcmp(s->run, run)));
}

/*
 * Which attempts the balance measures: a plan is cut for one invocation,
 * and the slices a later one ran again, or a re-run of a few units, are
 * no measure of it.  The attempts of the result's run (summary.json's)
 * when there are any, else those after the last pause left out (a merge
 * of shards: each host's run has an id of its own).
 */
static void
pick(const struct corral_timeline *t, struct balance *bal, long long *from)
{
	size_t i;

	*from = t->ngaps ? t->gaps[t->ngaps - 1] : 0;
	for (i = 0; i < t->n; i++) {
		bal->of += of_run(&t->spans[i], NULL);
		bal->by_run |= t->run && of_run(&t->spans[i], t->run);
	}
	if (bal->by_run)
		*from = 0;
}

static int
measure(const struct corral_timeline *t, struct balance *bal)
{
	struct corral_set *per = corral_set_new();
	const struct corral_span *s;
	unsigned char *seen = calloc(t->nlanes + 1, 1);
	long long from;
	long *v;
	size_t i;

	if (!per || !seen) {
		corral_set_free(per);
		free(seen);
		return -1;
	}
	memset(bal, 0, sizeof(*bal));
	bal->first = -1;
	pick(t, bal, &from);
	for (i = 0; i < t->n; i++) {
		s = &t->spans[i];
		if (!of_run(s, bal->by_run ? t->run : NULL) || s->start_ms < from)
			continue;
		bal->n++;
		/* a unit the cache answered took none of the plan's time */
		if (s->cached)
			continue;
		if (s->lane < t->nlanes && !seen[s->lane]) {
			seen[s->lane] = 1;
			bal->lanes++;
		}
		if (bal->first < 0 || s->start_ms < bal->first)
			bal->first = s->start_ms;
		if (s->start_ms + s->dur_ms > bal->last)
			bal->last = s->start_ms + s->dur_ms;
		bal->total += s->dur_ms;
		if (corral_set_put(per, s->unit, 0, &v) < 0) {
			corral_set_free(per);
			free(seen);
			return -1;
		}
		*v += (long)s->dur_ms;
		if (*v > bal->longest)
			bal->longest = *v;
	}
	corral_set_free(per);
	free(seen);
	if (bal->first < 0)
		bal->first = 0;
	return 0;
}

static int
add_busy(const struct corral_timeline *t, long long span, struct corral_buf *b)
{
	size_t i;
	int rc = corral_buf_addstr(b, "<details><summary>time busy, per "
	    "agent</summary><table>\n");

	for (i = 0; i < t->nlanes && rc == 0; i++) {
		rc |= corral_buf_addstr(b, "<tr><td>");
		if (t->lanes[i].host) {
			rc |= text(b, t->lanes[i].host);
			rc |= corral_buf_addstr(b, " ");
		}
		rc |= corral_buf_addstr(b, "agent ");
		rc |= text(b, t->lanes[i].agent);
		rc |= corral_buf_addstr(b, "</td><td class=\"n\">");
		rc |= add_ms(b, t->lanes[i].busy_ms);
		rc |= corral_buf_addf(b, "</td><td><span class=\"meter\" "
		    "style=\"width:%.0fpx\"></span></td></tr>\n", span > 0 ?
		    300.0 * (double)t->lanes[i].busy_ms / (double)span : 0);
	}
	return rc | corral_buf_addstr(b, "</table></details>\n");
}

static int
add_balance(const struct corral_timeline *t, struct corral_buf *b)
{
	struct balance bal;
	long long span, bound;
	int rc;

	if (measure(t, &bal) < 0)
		return -1;
	span = bal.last - bal.first;
	bound = bal.lanes ? bal.total / (long long)bal.lanes : 0;
	bound = bound > bal.longest ? bound : bal.longest;
	rc = corral_buf_addstr(b, "<h2 id=\"balance\">The plan's balance"
	    "</h2>\n");
	if (bal.n < bal.of && bal.by_run) {
		rc |= corral_buf_addstr(b, "<p>Of run ");
		rc |= text(b, t->run);
		rc |= corral_buf_addf(b, " alone: %zu of the %zu attempts.</p>\n",
		    bal.n, bal.of);
	} else if (bal.n < bal.of) {
		rc |= corral_buf_addf(b, "<p>Of the latest run alone, after the "
		    "last pause: %zu of the %zu attempts.</p>\n", bal.n,
		    bal.of);
	}
	rc |= corral_buf_addstr(b, "<table><tr><td>makespan (first "
	    "attempt's start to last attempt's end)</td><td class=\"n\">");
	rc |= add_ms(b, span);
	rc |= corral_buf_addf(b, "</td></tr>\n<tr><td>lower bound, max(total "
	    "/ %zu agents, longest unit)</td><td class=\"n\">", bal.lanes);
	rc |= add_ms(b, bound);
	rc |= corral_buf_addstr(b, "</td></tr>\n<tr><td>total time of the "
	    "attempts</td><td class=\"n\">");
	rc |= add_ms(b, bal.total);
	rc |= corral_buf_addstr(b, "</td></tr>\n<tr><td>longest unit (its "
	    "attempts together)</td><td class=\"n\">");
	rc |= add_ms(b, bal.longest);
	rc |= corral_buf_addf(b, "</td></tr>\n<tr><td>makespan over the "
	    "bound</td><td class=\"n\">%.2f</td></tr>\n</table>\n",
	    bound > 0 ? (double)span / (double)bound : 1.0);
	return rc | add_busy(t, span, b);
}

/* "NAME: corral run RUN, shard K/N" (or shards), each part when known. */
static int
add_title(const struct corral_timeline *t, struct corral_buf *b)
{
	int rc = 0;

	if (t->name) {
		rc |= text(b, t->name);
		rc |= corral_buf_addstr(b, ": ");
	}
	rc |= corral_buf_addstr(b, "corral run");
	if (t->run) {
		rc |= corral_buf_addch(b, ' ');
		rc |= text(b, t->run);
	}
	if (t->shard) {
		rc |= corral_buf_addstr(b, ", shard ");
		rc |= text(b, t->shard);
	} else if (t->shards) {
		rc |= corral_buf_addstr(b, ", shards ");
		rc |= text(b, t->shards);
	}
	return rc;
}

int
corral_html_format(const struct corral_timeline *t, struct corral_buf *b)
{
	int rc;

	rc = corral_buf_addstr(b, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\">\n<meta http-equiv=\""
	    "Content-Security-Policy\" content=\"default-src 'none'; "
	    "style-src 'unsafe-inline'\">\n<meta name=\"viewport\" content=\""
	    "width=device-width\">\n<title>");
	rc |= add_title(t, b);
	rc |= corral_buf_addf(b, ": %zu units</title>\n<style>%s</style>"
	    "</head>\n<body>\n<h1>", t->nunits, style);
	rc |= add_title(t, b);
	rc |= corral_buf_addstr(b, "</h1>\n");
	rc |= add_counts(t, b);
	rc |= add_timeline(t, b);
	rc |= add_failures(t, b);
	rc |= add_slowest(t, b);
	rc |= add_class(t, b, "flaky", "flaky", "Flaky units");
	rc |= add_class(t, b, "skip", "skipped", "Skipped units");
	rc |= add_balance(t, b);
	rc |= corral_buf_addstr(b, "</body></html>\n");
	return rc ? -1 : 0;
}
