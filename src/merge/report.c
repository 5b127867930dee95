/* See LICENSE file for copyright and license details. */
/*
 * report.c turns a run's merged results (successes.jsonl and
 * failures.jsonl, which stay the source of truth) into the formats CI
 * systems read: JUnit XML and TAP.  Unit names, notes and output are any
 * bytes; what it writes is always well-formed: invalid UTF-8 and the
 * characters XML 1.0 forbids become U+FFFD, markup is escaped, and TAP
 * descriptions and YAML strings are escaped the way prove reads them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "record/record.h"
#include "merge/merge.h"

/* How much of a failed unit's output its <failure> quotes, at most. */
#define OUTPUT_TAIL	4096
#define REPLACEMENT	0xFFFD

/*
 * The code point at s[0..n), strict UTF-8 (no overlongs, no surrogates,
 * nothing past U+10FFFF), in *cp; returns its length, or 1 with
 * *cp = U+FFFD for a byte that does not start a valid sequence.
 */
static size_t
utf8_next(const unsigned char *s, size_t n, unsigned long *cp)
{
	static const unsigned long min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t len, i;
	unsigned long c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	len = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 :
	    s[0] >= 0xC2 && s[0] <= 0xDF ? 2 : 0;
	*cp = REPLACEMENT;
	if (len == 0 || len > n || (s[0] >= 0xF5))
		return 1;
	c = s[0] & (0x7F >> len);
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 1;
		c = c << 6 | (s[i] & 0x3F);
	}
	if (c < min[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 1;
	*cp = c;
	return len;
}

static int
add_cp(struct corral_buf *b, unsigned long c)
{
	char u[4];
	size_t n;

	if (c < 0x80) {
		u[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xC0 | c >> 6);
		u[1] = (char)(0x80 | (c & 0x3F));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xE0 | c >> 12);
		u[1] = (char)(0x80 | (c >> 6 & 0x3F));
		u[2] = (char)(0x80 | (c & 0x3F));
		n = 3;
	} else {
		u[0] = (char)(0xF0 | c >> 18);
		u[1] = (char)(0x80 | (c >> 12 & 0x3F));
		u[2] = (char)(0x80 | (c >> 6 & 0x3F));
		u[3] = (char)(0x80 | (c & 0x3F));
		n = 4;
	}
	return corral_buf_add(b, u, n);
}

/* XML 1.0's Char production. */
static int
xml_char(unsigned long c)
{
	return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 &&
	    c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 &&
	    c <= 0x10FFFF);
}

/*
 * Append s[0..n) as XML character data that is also safe inside a quoted
 * attribute: & < > " ' escaped, tab and newlines as character references
 * (in an element's text, text != 0, only CR: a parser would turn it into
 * LF), invalid UTF-8 and characters XML 1.0 forbids as U+FFFD.  0, or -1
 * (ENOMEM).
 */
static int
add_xml_as(struct corral_buf *b, const char *s, size_t n, int text)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned long c;
	size_t i, k;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i += k) {
		k = utf8_next(p + i, n - i, &c);
		if (!xml_char(c))
			c = REPLACEMENT;
		switch (c) {
		case '&': rc = corral_buf_addstr(b, "&amp;"); break;
		case '<': rc = corral_buf_addstr(b, "&lt;"); break;
		case '>': rc = corral_buf_addstr(b, "&gt;"); break;
		case '"': rc = corral_buf_addstr(b, "&quot;"); break;
		case '\'': rc = corral_buf_addstr(b, "&apos;"); break;
		/* Kept as they are even inside attribute values. */
		case '\t': rc = text ? corral_buf_addch(b, '\t') :
		    corral_buf_addstr(b, "&#9;"); break;
		case '\n': rc = text ? corral_buf_addch(b, '\n') :
		    corral_buf_addstr(b, "&#10;"); break;
		case '\r': rc = corral_buf_addstr(b, "&#13;"); break;
		default: rc = add_cp(b, c); break;
		}
	}
	return rc;
}

static int
add_xml(struct corral_buf *b, const char *s, size_t n)
{
	return add_xml_as(b, s, n, 0);
}

/* A YAML double-quoted scalar that TAP::Parser's YAMLish reader reads. */
static int
add_yaml(struct corral_buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned long c;
	size_t i, k;
	int rc = corral_buf_addch(b, '"');

	for (i = 0; i < n && rc == 0; i += k) {
		k = utf8_next(p + i, n - i, &c);
		if (c == '"' || c == '\\')
			rc = corral_buf_addf(b, "\\%c", (int)c);
		else if (c < 0x20 || c == 0x7F)
			rc = corral_buf_addf(b, "\\x%02lx", c);
		else
			rc = add_cp(b, c);
	}
	return rc | corral_buf_addch(b, '"');
}

/* A TAP description: one line, '#' and '\' escaped. */
static int
add_tap_text(struct corral_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i, k, n = strlen(s);
	unsigned long c;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i += k) {
		k = utf8_next(p + i, n - i, &c);
		if (c == '#' || c == '\\')
			rc = corral_buf_addf(b, "\\%c", (int)c);
		else if (c < 0x20 || c == 0x7F)
			rc = corral_buf_addch(b, ' ');
		else
			rc = add_cp(b, c);
	}
	return rc;
}

/* ------------------------------------------------------------------ */
/* Reading the results                                                  */

static char *
dup_or(const char *s, const char *fallback)
{
	return strdup(s ? s : fallback);
}

/* "2026-12-01T11:14:47.364Z" as ms since the Epoch, or -1. */
static long long
iso_ms(const char *s)
{
	int y, mo, d, h, mi, sec, ms = 0, n = 0;
	long long era, yoe, doy, days;

	if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi,
	    &sec, &n) != 6 || mo < 1 || mo > 12 || d < 1 || d > 31)
		return -1;
	if (s[n] == '.' && sscanf(s + n + 1, "%3d", &ms) != 1)
		return -1;
	/* Days from 1970-01-01 (H. Hinnant's days_from_civil). */
	y -= mo <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	days = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
	return ((days * 24 + h) * 60 + mi) * 60000LL + sec * 1000LL + ms;
}

static int
add_row(struct corral_report *rep, const struct corral_json_record *r,
    int success)
{
	struct corral_report_row *row;
	const char *name;
	size_t i;

	if (rep->n % 64 == 0) {
		row = realloc(rep->rows, (rep->n + 64) * sizeof(*row));
		if (!row)
			return -1;
		rep->rows = row;
	}
	row = &rep->rows[rep->n];
	memset(row, 0, sizeof(*row));
	row->ok = success;
	row->duration_ms = r->duration_ms;
	row->attempt = r->attempt;
	row->end_ms = iso_ms(r->at);
	row->tests = r->tests;
	row->tests_failed = r->tests_failed;
	row->tests_skipped = r->tests_skipped;
	row->unit = strdup(r->unit);
	row->status = dup_or(r->status, success ? "pass" : "fail");
	row->note = dup_or(r->note, "");
	row->output = r->output ? strdup(r->output) : NULL;
	row->host = r->host ? strdup(r->host) : NULL;
	rep->n++;
	if (!row->unit || !row->status || !row->note ||
	    (r->output && !row->output) || (r->host && !row->host))
		return -1;
	for (i = 0; (name = corral_json_record_failed_name(r, i)); i++)
		if (corral_strv_add(&row->failed_names, name) < 0)
			return -1;
	return 0;
}

static int
read_results(struct corral_report *rep, const char *dir, const char *name,
    int success, struct corral_err *err)
{
	struct corral_json_record r;
	struct corral_buf path = CORRAL_BUF_INIT, why = CORRAL_BUF_INIT;
	struct corral_err lerr;
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;
	FILE *fp = NULL;
	int rc = -1;

	if (corral_buf_addf(&path, "%s/%s", dir, name) < 0)
		goto nomem;
	if (!(fp = corral_fopen_input(path.data, &lerr))) {
		rc = lerr.errnum == ENOENT ? 0 : corral_err_set(err,
		    lerr.errnum, "%s", lerr.msg);
		goto out;
	}
	while ((len = getline(&line, &cap, fp)) != -1) {
		lineno++;
		len = (ssize_t)corral_line_chomp(line, (size_t)len);
		if (corral_line_blank(line, (size_t)len))
			continue;
		if (corral_json_record_parse(line, (size_t)len, &r, &lerr) < 0) {
			corral_buf_reset(&why);
			if (corral_buf_addf(&why, "%s line %zu: %s", name,
			    lineno, lerr.msg) < 0 ||
			    corral_strv_add(&rep->unreadable, why.data) < 0)
				goto nomem;
			continue;
		}
		rc = add_row(rep, &r, success);
		corral_json_record_release(&r);
		if (rc < 0)
			goto nomem;
	}
	rc = ferror(fp) ? corral_err_set(err, errno, "cannot read '%s'",
	    path.data) : 0;
	goto out;
nomem:
	rc = corral_err_set(err, ENOMEM, "reading '%s'", dir);
out:
	if (fp)
		fclose(fp);
	free(line);
	corral_buf_release(&path);
	corral_buf_release(&why);
	return rc;
}

static int
row_cmp(const void *x, const void *y)
{
	const struct corral_report_row *a = x, *b = y;

	return strcmp(a->unit, b->unit);
}

int
corral_report_read(struct corral_report *rep, const char *dir,
    struct corral_err *err)
{
	memset(rep, 0, sizeof(*rep));
	rep->dir = dir;
	rep->output_max = CORRAL_REPORT_OUTPUT_MAX;
	if (read_results(rep, dir, "successes.jsonl", 1, err) < 0 ||
	    read_results(rep, dir, "failures.jsonl", 0, err) < 0)
		return -1;
	if (rep->n)
		qsort(rep->rows, rep->n, sizeof(*rep->rows), row_cmp);
	return 0;
}

void
corral_report_release(struct corral_report *rep)
{
	size_t i;

	for (i = 0; i < rep->n; i++) {
		free(rep->rows[i].unit);
		free(rep->rows[i].status);
		free(rep->rows[i].note);
		free(rep->rows[i].output);
		free(rep->rows[i].host);
		corral_strv_release(&rep->rows[i].failed_names);
	}
	free(rep->rows);
	corral_strv_release(&rep->unreadable);
	memset(rep, 0, sizeof(*rep));
}

/* The unit's output, open; the path is tried as recorded, then under dir. */
static int
open_output(const struct corral_report *rep, const char *output)
{
	struct corral_buf alt = CORRAL_BUF_INIT;
	struct stat st;
	int fd;

	if (!output)
		return -1;
	fd = open(output, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && output[0] != '/' && corral_buf_addf(&alt, "%s/%s",
	    rep->dir, output) == 0)
		fd = open(alt.data, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	corral_buf_release(&alt);
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * The last max bytes (0: all) of a unit's output, from a line start when
 * cut, into b.  Nothing when it cannot be read.
 */
static void
read_tail(const struct corral_report *rep, const char *output,
    long long max, struct corral_buf *b)
{
	struct stat st;
	off_t off = 0;
	ssize_t n;
	size_t want;
	char *text = NULL, *nl;
	int fd;

	corral_buf_reset(b);
	if ((fd = open_output(rep, output)) < 0)
		return;
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		if (max > 0 && st.st_size > (off_t)max)
			off = st.st_size - (off_t)max;
		want = (size_t)(st.st_size - off);
		if ((text = malloc(want)) &&
		    (n = pread(fd, text, want, off)) > 0) {
			nl = off ? memchr(text, '\n', (size_t)n) : NULL;
			nl = nl ? nl + 1 : text;
			(void)corral_buf_add(b, nl, (size_t)(n - (nl - text)));
		}
	}
	free(text);
	close(fd);
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
			rc |= corral_buf_addch(b, '>') | add_xml_as(b, t->body,
			    t->nbody, 1) | corral_buf_addf(b, "</%s>\n", e);
	}
	rc |= corral_buf_addstr(b, "      <system-out>");
	rc |= add_xml_as(b, t->out, t->nout, 1);
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

/* A row as one <testcase>; classname NULL: its directory, dotted. */
static int
add_unit_case(struct junit *j, struct suite *su,
    const struct corral_report_row *r, const char *classname)
{
	struct tcase t;
	const char *nl;
	size_t keep;

	read_tail(j->rep, r->output, j->rep->output_max, &j->out);
	if (!classname && classname_of(&j->cls, r->unit) < 0)
		return -1;
	memset(&t, 0, sizeof(t));
	t.name = t.file = r->unit;
	t.classname = classname ? classname : j->cls.data;
	t.ms = r->duration_ms;
	t.kind = kind_of(r);
	t.message = r->note;
	t.type = r->status;
	t.out = j->out.data ? j->out.data : "";
	t.nout = j->out.len;
	/* The failure quotes the end of the output; all of it is below. */
	keep = t.nout > OUTPUT_TAIL ? OUTPUT_TAIL : t.nout;
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
read_unit_tests(const struct corral_report *rep,
    const struct corral_report_row *r, struct corral_tap *tap)
{
	char chunk[65536];
	ssize_t n;
	int fd, rc;

	if (r->tests < 0 || (fd = open_output(rep, r->output)) < 0)
		return 0;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if (corral_tap_add(tap, chunk, (size_t)n) < 0)
			break;
	rc = n == 0 && corral_tap_end(tap) == 0 && corral_tap_found(tap) &&
	    (long long)tap->tests == r->tests &&
	    (long long)tap->failed == r->tests_failed &&
	    (long long)tap->skipped == r->tests_skipped;
	close(fd);
	return rc;
}

static int
add_test_case(struct suite *su, const struct corral_report_row *r,
    const struct corral_tap_test *t)
{
	struct tcase c;

	memset(&c, 0, sizeof(c));
	c.name = t->name;
	c.classname = c.file = r->unit;
	c.ms = t->ms;
	c.kind = t->status == CORRAL_TAP_FAIL ? 'f' :
	    t->status == CORRAL_TAP_SKIP ? 's' : 0;
	c.message = c.kind == 's' ? (t->reason ? t->reason : "") : t->name;
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
		rc = add_test_case(&su, r, &tap->v[i]);
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

/* ------------------------------------------------------------------ */
/* TAP                                                                  */

static int
add_tap_row(const struct corral_report *rep, const struct corral_report_row *r,
    size_t num, struct corral_buf *b, struct corral_buf *tail)
{
	int rc = 0, flaky = !strcmp(r->status, "flaky"),
	    skip = !strcmp(r->status, "skip");

	rc |= corral_buf_addf(b, "%sok %zu - ", r->ok || skip ? "" : "not ",
	    num);
	rc |= add_tap_text(b, r->unit);
	if (skip) {
		rc |= corral_buf_addstr(b, " # SKIP ");
		rc |= add_tap_text(b, r->note);
	}
	rc |= corral_buf_addch(b, '\n');
	if ((r->ok && !flaky) || skip)
		return rc;
	rc |= corral_buf_addstr(b, "  ---\n  status: ");
	rc |= add_yaml(b, r->status, strlen(r->status));
	rc |= corral_buf_addstr(b, "\n  message: ");
	rc |= add_yaml(b, r->note, strlen(r->note));
	if (r->output) {
		rc |= corral_buf_addstr(b, "\n  output: ");
		rc |= add_yaml(b, r->output, strlen(r->output));
	}
	read_tail(rep, r->ok ? NULL : r->output, OUTPUT_TAIL, tail);
	if (tail->len) {
		rc |= corral_buf_addstr(b, "\n  tail: ");
		rc |= add_yaml(b, tail->data, tail->len);
	}
	return rc | corral_buf_addstr(b, "\n  ...\n");
}

int
corral_report_tap(const struct corral_report *rep, struct corral_buf *b)
{
	struct corral_buf tail = CORRAL_BUF_INIT;
	size_t i;
	int rc = 0;

	rc |= corral_buf_addf(b, "TAP version 13\n1..%zu\n", rep->n);
	for (i = 0; i < rep->n && rc == 0; i++)
		rc |= add_tap_row(rep, &rep->rows[i], i + 1, b, &tail);
	corral_buf_release(&tail);
	return rc < 0 ? -1 : 0;
}
