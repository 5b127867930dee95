/* See LICENSE file for copyright and license details. */
/*
 * junit.c writes a run's merged results, as report.c read them, as JUnit
 * XML that strict consumers accept: the schema's attributes (counts that
 * are those of the result elements, a suite's wall time, timestamp and
 * hostname), a <system-out> in every testcase, <error> apart from
 * <failure>, and a testsuite of its own for each unit whose output was
 * TAP, with a testcase per test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "record/record.h"
#include "report/report-private.h"

static int
add_xml(struct corral_buf *b, const char *s, size_t n)
{
	return report_xml(b, s, n, 0);
}

/* ------------------------------------------------------------------ */
/* JUnit XML                                                            */

/* What one <testcase> says. */
struct tcase {
	const char *name, *classname, *file;
	long long ms;
	int kind;		/* 0 pass, 'f' failure, 'e' error, 's' skipped,
				   'F' flakyFailure */
	const char *message, *type;
	const char *body;	/* the result element's text */
	size_t nbody;
	const char *out;	/* <system-out> */
	size_t nout;
};

/* A <testsuite>'s counts and its <testcase> elements. */
struct suite {
	size_t tests, failures, errors, skipped;
	struct corral_buf cases;
};

/* A row's result element: a skip, a flake, a failure or an error. */
static int
kind_of(const struct corral_report_row *r)
{
	if (!strcmp(r->status, "skip"))
		return 's';
	if (!strcmp(r->status, "flaky"))
		return 'F';
	if (r->ok)
		return 0;
	return strcmp(r->status, "fail") ? 'e' : 'f';
}

/* The unit's directory, dotted ("tests/unit/a.sh" -> "tests.unit"). */
static int
classname_of(struct corral_buf *cls, const char *unit)
{
	const char *slash = strrchr(unit, '/');
	size_t i;

	corral_buf_reset(cls);
	if (!slash || slash == unit)
		return corral_buf_addstr(cls, "corral");
	if (corral_buf_add(cls, unit, (size_t)(slash - unit)) < 0)
		return -1;
	for (i = 0; i < cls->len; i++)
		if (cls->data[i] == '/')
			cls->data[i] = '.';
	return 0;
}

static int
add_seconds(struct corral_buf *b, long long ms)
{
	if (ms < 0)
		ms = 0;
	return corral_buf_addf(b, "%lld.%03lld", ms / 1000, ms % 1000);
}

static int
add_attr(struct corral_buf *b, const char *name, const char *val)
{
	return corral_buf_addf(b, " %s=\"", name) |
	    add_xml(b, val, strlen(val)) | corral_buf_addch(b, '"');
}

static int
add_testcase(struct suite *su, const struct tcase *t)
{
	static const char *const elem[] = { "failure", "error", "skipped",
	    "flakyFailure" };
	struct corral_buf *b = &su->cases;
	const char *e = t->kind == 'f' ? elem[0] : t->kind == 'e' ? elem[1] :
	    t->kind == 's' ? elem[2] : elem[3];
	int rc = corral_buf_addstr(b, "    <testcase");

	su->tests++;
	su->failures += t->kind == 'f';
	su->errors += t->kind == 'e';
	su->skipped += t->kind == 's';
	rc |= add_attr(b, "name", t->name);
	rc |= add_attr(b, "classname", t->classname);
	rc |= add_attr(b, "file", t->file);
	rc |= corral_buf_addstr(b, " time=\"") | add_seconds(b, t->ms);
	rc |= corral_buf_addstr(b, "\">\n");
	if (t->kind) {
		rc |= corral_buf_addf(b, "      <%s", e);
		rc |= add_attr(b, "message", t->message);
		if (t->kind != 's')
			rc |= add_attr(b, "type", t->type);
		if (t->kind == 's')
			rc |= corral_buf_addstr(b, "/>\n");
		else
			rc |= corral_buf_addch(b, '>') | report_xml(b, t->body,
			    t->nbody, 1) | corral_buf_addf(b, "</%s>\n", e);
	}
	rc |= corral_buf_addstr(b, "      <system-out>");
	rc |= report_xml(b, t->out, t->nout, 1);
	return rc | corral_buf_addstr(b, "</system-out>\n    </testcase>\n");
}

/* What a JUnit report is made with. */
struct junit {
	const struct corral_report *rep;
	struct corral_buf out, cls;	/* scratch */
	const char *host;		/* this host's name */
	size_t tests, failures, errors, skipped;
	struct corral_buf *dest;	/* where end_suite writes */
};

/* The output of a cached unit, its first line saying so, as Bazel's. */
static int
mark_cached(struct corral_buf *out)
{
	struct corral_buf b = CORRAL_BUF_INIT;

	if (corral_buf_addstr(&b, "[corral: (cached) PASSED: it passed before "
	    "on the same inputs and did not run again]\n") < 0 ||
	    (out->len && corral_buf_add(&b, out->data, out->len) < 0)) {
		corral_buf_release(&b);
		return -1;
	}
	corral_buf_release(out);
	*out = b;
	return 0;
}

/* A row as one <testcase>; classname NULL: its directory, dotted. */
static int
add_unit_case(struct junit *j, struct suite *su,
    const struct corral_report_row *r, const char *classname)
{
	struct tcase t;
	const char *nl;
	size_t keep;

	report_read_tail(j->rep, r->where, j->rep->output_max, &j->out);
	if (!classname && classname_of(&j->cls, r->unit) < 0)
		return -1;
	memset(&t, 0, sizeof(t));
	t.name = t.file = r->unit;
	t.classname = classname ? classname : j->cls.data;
	t.ms = r->duration_ms;
	t.kind = kind_of(r);
	t.message = r->note;
	t.type = r->status;
	if (r->cached && mark_cached(&j->out) < 0)
		return -1;
	t.out = j->out.data ? j->out.data : "";
	t.nout = j->out.len;
	/* The failure quotes the end of the output; all of it is below. */
	keep = t.nout > REPORT_TAIL ? REPORT_TAIL : t.nout;
	t.body = t.out + t.nout - keep;
	t.nbody = keep;
	if (keep < t.nout && (nl = memchr(t.body, '\n', keep))) {
		t.nbody -= (size_t)(nl + 1 - t.body);
		t.body = nl + 1;
	}
	if (!t.nbody) {
		t.body = r->note;
		t.nbody = strlen(r->note);
	}
	return add_testcase(su, &t);
}

static const char *
host_of(const struct junit *j, const struct corral_report_row *r)
{
	return r->host && *r->host ? r->host : j->host;
}

/*
 * The wall time of the rows whose flag in pick is set (all when pick is
 * NULL), the union of their [end - duration, end]: a run's, not the sum
 * of its units'.  *start gets the earliest start, or -1.
 */
static int
interval_cmp(const void *x, const void *y)
{
	const long long *a = x, *b = y;

	return a[0] < b[0] ? -1 : a[0] > b[0];
}

static long long
wall_ms(const struct corral_report *rep, const unsigned char *pick, int want,
    long long *start)
{
	long long (*iv)[2], total = 0, from = -1, to = -1;
	size_t i, n = 0;

	*start = -1;
	if (!(iv = calloc(rep->n + 1, sizeof(*iv))))
		return 0;
	for (i = 0; i < rep->n; i++) {
		const struct corral_report_row *r = &rep->rows[i];

		if ((pick && pick[i] != want) || r->end_ms < 0)
			continue;
		iv[n][1] = r->end_ms;
		iv[n][0] = r->end_ms - (r->duration_ms > 0 ? r->duration_ms : 0);
		n++;
	}
	if (n)
		qsort(iv, n, sizeof(*iv), interval_cmp);
	for (i = 0; i < n; i++) {
		if (from < 0 || iv[i][0] > to) {
			total += to - from;
			from = iv[i][0];
			to = iv[i][1];
		} else if (iv[i][1] > to) {
			to = iv[i][1];
		}
	}
	total += to - from;
	*start = n ? iv[0][0] : -1;
	free(iv);
	return total;
}

/* timestamp="2026-12-01T11:14:47": ISO 8601 in UTC, as the schema wants. */
static int
add_timestamp(struct corral_buf *b, long long ms)
{
	char out[32];
	time_t t;
	struct tm tm;

	if (ms < 0)
		return 0;
	t = (time_t)(ms / 1000);
	if (!gmtime_r(&t, &tm) || !strftime(out, sizeof(out),
	    "%Y-%m-%dT%H:%M:%S", &tm))
		return 0;
	return corral_buf_addf(b, " timestamp=\"%s\"", out);
}

/* Close su as <testsuite name=...> into j->suites, counting its cases. */
static int
end_suite(struct junit *j, struct suite *su, const char *name,
    const char *host, long long ms, long long start)
{
	struct corral_buf *b = j->dest;
	int rc = corral_buf_addstr(b, "  <testsuite");

	rc |= add_attr(b, "name", name);
	rc |= corral_buf_addf(b, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
	    "skipped=\"%zu\" time=\"", su->tests, su->failures, su->errors,
	    su->skipped);
	rc |= add_seconds(b, ms) | corral_buf_addch(b, '"');
	rc |= add_timestamp(b, start);
	rc |= add_attr(b, "hostname", host);
	rc |= corral_buf_addstr(b, ">\n");
	rc |= corral_buf_add(b, su->cases.data ? su->cases.data : "",
	    su->cases.len);
	rc |= corral_buf_addstr(b, "  </testsuite>\n");
	j->tests += su->tests;
	j->failures += su->failures;
	j->errors += su->errors;
	j->skipped += su->skipped;
	corral_buf_release(&su->cases);
	memset(su, 0, sizeof(*su));
	return rc;
}

/* ------------------------------------------------------------------ */
/* JUnit: a unit's own tests                                            */

/*
 * The tests a unit's TAP output holds, read again from its output file
 * with their text; 1 when they are the ones its record counted (the file
 * is whole), else 0 and the unit is reported as one testcase.
 */
static int
eat_tap(void *tap, const char *p, size_t n)
{
	return corral_tap_add(tap, p, n);
}

static int
counted(const struct corral_report_row *r, const struct corral_tap *tap)
{
	return corral_tap_found(tap) && (long long)tap->tests == r->tests &&
	    (long long)tap->failed == r->tests_failed &&
	    (long long)tap->skipped == r->tests_skipped;
}

/*
 * The tests of the unit's own JUnit, from the copy its agent kept beside
 * its output (N.xml for N.out); 1 when they are those its record counted.
 */
static int
read_unit_junit(const struct corral_report *rep,
    const struct corral_report_row *r, struct corral_tap *tap)
{
	struct corral_buf where = CORRAL_BUF_INIT, b = CORRAL_BUF_INIT;
	struct corral_err err;
	size_t n = strlen(r->where);
	int fd = -1, rc = 0;

	if (n < 4 || strcmp(r->where + n - 4, ".out") ||
	    corral_buf_addf(&where, "%.*s.xml", (int)(n - 4), r->where) < 0 ||
	    (fd = report_open_output(rep, where.data)) < 0)
		goto out;
	corral_tap_release(tap);
	corral_tap_init(tap, 1);
	rc = corral_fd_chunks(fd, corral_buf_eat, &b) == 0 &&
	    corral_junit_read(tap, b.data ? b.data : "", b.len, &err) == 0 &&
	    counted(r, tap);
out:
	if (fd >= 0)
		close(fd);
	corral_buf_release(&where);
	corral_buf_release(&b);
	return rc;
}

static int
read_unit_tests(const struct corral_report *rep,
    const struct corral_report_row *r, struct corral_tap *tap)
{
	int fd, rc = 0;

	if (r->tests < 0 || !r->where)
		return 0;
	if ((fd = report_open_output(rep, r->where)) >= 0) {
		rc = corral_fd_chunks(fd, eat_tap, tap) == 0 &&
		    corral_tap_end(tap) == 0 && counted(r, tap);
		close(fd);
	}
	return rc || read_unit_junit(rep, r, tap);
}

/* Test number n (from 1) t of the unit r; a bare "ok 1" is "test 1". */
static int
add_test_case(struct suite *su, const struct corral_report_row *r,
    const struct corral_tap_test *t, size_t n)
{
	char number[32];
	struct tcase c;

	memset(&c, 0, sizeof(c));
	snprintf(number, sizeof(number), "test %zu", n);
	c.name = *t->name ? t->name : number;
	c.classname = c.file = r->unit;
	c.ms = t->ms;
	c.kind = t->status == CORRAL_TAP_FAIL ? 'f' :
	    t->status == CORRAL_TAP_SKIP ? 's' : 0;
	c.message = c.kind == 's' ? (t->reason ? t->reason : "") : c.name;
	c.type = "fail";
	c.body = c.out = t->text.data ? t->text.data : "";
	c.nbody = c.nout = t->text.len;
	return add_testcase(su, &c);
}

/*
 * The unit's own <testsuite>: a testcase per test, and one for the unit
 * itself when it failed in a way no failed test shows (a crash, a
 * timeout, an exit status with every test passing).
 */
static int
add_unit_suite(struct junit *j, const struct corral_report_row *r,
    const struct corral_tap *tap)
{
	struct suite su;
	size_t i;
	int rc = 0, kind = kind_of(r);

	memset(&su, 0, sizeof(su));
	for (i = 0; i < tap->n && rc == 0; i++)
		rc = add_test_case(&su, r, &tap->v[i], i + 1);
	if (rc == 0 && (kind == 'e' || (kind == 'f' && !tap->failed)))
		rc = add_unit_case(j, &su, r, r->unit);
	if (rc == 0)
		rc = end_suite(j, &su, r->unit, host_of(j, r), r->duration_ms,
		    r->end_ms < 0 ? -1 : r->end_ms - (r->duration_ms > 0 ?
		    r->duration_ms : 0));
	corral_buf_release(&su.cases);
	return rc;
}

/*
 * The suites of the units without tests of their own, one per host, in
 * the order hosts first appear: pick[i] is 1 for those rows.
 */
static int
add_host_suites(struct junit *j, unsigned char *pick, const char *name)
{
	const struct corral_report *rep = j->rep;
	struct suite su;
	long long ms, start;
	const char *host;
	size_t i, k, left = 0;
	int rc = 0;

	for (i = 0; i < rep->n; i++)
		left += pick[i] == 1;
	memset(&su, 0, sizeof(su));
	for (i = 0; i < rep->n && rc == 0; i++) {
		if (pick[i] != 1)
			continue;
		host = host_of(j, &rep->rows[i]);
		for (k = i; k < rep->n && rc == 0; k++)
			if (pick[k] == 1 && !strcmp(host_of(j, &rep->rows[k]),
			    host)) {
				rc = add_unit_case(j, &su, &rep->rows[k], NULL);
				pick[k] = 2;
			}
		ms = wall_ms(rep, pick, 2, &start);
		for (k = i; k < rep->n; k++)
			pick[k] = pick[k] == 2 ? 3 : pick[k];
		if (rc == 0)
			rc = end_suite(j, &su, name, host, ms, start);
	}
	if (rc == 0 && !left)	/* no units at all: one empty suite */
		rc = end_suite(j, &su, name, j->host, 0, -1);
	corral_buf_release(&su.cases);
	return rc;
}

int
corral_report_junit(const struct corral_report *rep, struct corral_buf *b)
{
	struct corral_buf suites = CORRAL_BUF_INIT, own = CORRAL_BUF_INIT;
	struct junit j;
	struct corral_tap tap;
	unsigned char *pick;
	const char *name = rep->suite ? rep->suite : "corral";
	char host[256] = "localhost";
	long long ms, start;
	size_t i, per_test = 0;
	int rc = 0;

	if (gethostname(host, sizeof(host)) < 0 || !*host)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	memset(&j, 0, sizeof(j));
	j.rep = rep;
	j.host = host;
	j.dest = &own;
	if (!(pick = calloc(rep->n + 1, 1)))
		return -1;
	for (i = 0; i < rep->n && rc == 0; i++) {
		corral_tap_init(&tap, 1);
		pick[i] = 1;
		if (read_unit_tests(rep, &rep->rows[i], &tap)) {
			pick[i] = 0;
			per_test++;
			rc = add_unit_suite(&j, &rep->rows[i], &tap);
		}
		corral_tap_release(&tap);
	}
	/* The units' own suites go after the suite of the rest. */
	j.dest = &suites;
	if (rc == 0 && (per_test < rep->n || !rep->n))
		rc = add_host_suites(&j, pick, name);
	ms = wall_ms(rep, NULL, 0, &start);
	rc |= corral_buf_addstr(b, "<?xml version=\"1.0\" "
	    "encoding=\"UTF-8\"?>\n<testsuites");
	rc |= add_attr(b, "name", name);
	rc |= corral_buf_addf(b, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
	    "skipped=\"%zu\" time=\"", j.tests, j.failures, j.errors,
	    j.skipped);
	rc |= add_seconds(b, ms) | corral_buf_addstr(b, "\">\n");
	rc |= corral_buf_add(b, suites.data ? suites.data : "", suites.len);
	rc |= corral_buf_add(b, own.data ? own.data : "", own.len);
	rc |= corral_buf_addstr(b, "</testsuites>\n");
	corral_buf_release(&suites);
	corral_buf_release(&own);
	corral_buf_release(&j.out);
	corral_buf_release(&j.cls);
	free(pick);
	return rc < 0 ? -1 : 0;
}
