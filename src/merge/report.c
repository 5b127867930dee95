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
#include <unistd.h>

#include "base/base.h"
#include "record/record.h"
#include "merge/merge-private.h"

/* How much of a failed unit's output a report quotes, at most. */
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
 * attribute: & < > " ' escaped, tab and newlines as character references,
 * invalid UTF-8 and characters XML 1.0 forbids as U+FFFD.  0, or -1
 * (ENOMEM).
 */
static int
add_xml(struct corral_buf *b, const char *s, size_t n)
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
		case '\t': rc = corral_buf_addstr(b, "&#9;"); break;
		case '\n': rc = corral_buf_addstr(b, "&#10;"); break;
		case '\r': rc = corral_buf_addstr(b, "&#13;"); break;
		default: rc = add_cp(b, c); break;
		}
	}
	return rc;
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

static int
add_row(void *ctx, const struct corral_json_record *r, int success)
{
	struct corral_report *rep = ctx;
	struct corral_report_row *row;

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
	row->unit = strdup(r->unit);
	row->status = dup_or(r->status, success ? "pass" : "fail");
	row->note = dup_or(r->note, "");
	row->output = r->output ? strdup(r->output) : NULL;
	rep->n++;
	if (!row->unit || !row->status || !row->note ||
	    (r->output && !row->output))
		return -1;
	return 0;
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
	struct merge_results m = { dir, add_row, rep, &rep->unreadable };

	memset(rep, 0, sizeof(*rep));
	rep->dir = dir;
	if (merge_results_read(&m, "successes.jsonl", 1, err) < 0 ||
	    merge_results_read(&m, "failures.jsonl", 0, err) < 0)
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
	}
	free(rep->rows);
	corral_strv_release(&rep->unreadable);
	memset(rep, 0, sizeof(*rep));
}

/*
 * The last OUTPUT_TAIL bytes of a unit's output, from a line start when
 * there is one, into b.  The path is tried as recorded, then under dir.
 */
static void
read_tail(const struct corral_report *rep, const char *output,
    struct corral_buf *b)
{
	struct corral_buf alt = CORRAL_BUF_INIT;
	char text[OUTPUT_TAIL];
	struct stat st;
	off_t off = 0;
	ssize_t n;
	char *nl;
	int fd;

	corral_buf_reset(b);
	if (!output)
		return;
	fd = open(output, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && output[0] != '/' && corral_buf_addf(&alt, "%s/%s",
	    rep->dir, output) == 0)
		fd = open(alt.data, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	corral_buf_release(&alt);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if (st.st_size > (off_t)sizeof(text))
			off = st.st_size - (off_t)sizeof(text);
		if ((n = pread(fd, text, sizeof(text), off)) > 0) {
			nl = off ? memchr(text, '\n', (size_t)n) : NULL;
			nl = nl ? nl + 1 : text;
			(void)corral_buf_add(b, nl, (size_t)(n - (nl - text)));
		}
	}
	close(fd);
}

/* ------------------------------------------------------------------ */
/* JUnit XML                                                            */

/* The unit's directory, dotted ("tests/unit/a.sh" -> "tests.unit"). */
static int
add_classname(struct corral_buf *b, const char *unit)
{
	struct corral_buf cls = CORRAL_BUF_INIT;
	const char *slash = strrchr(unit, '/');
	size_t i;
	int rc;

	if (!slash || slash == unit)
		return corral_buf_addstr(b, "corral");
	rc = corral_buf_add(&cls, unit, (size_t)(slash - unit));
	for (i = 0; rc == 0 && i < cls.len; i++)
		if (cls.data[i] == '/')
			cls.data[i] = '.';
	if (rc == 0)
		rc = add_xml(b, cls.data, cls.len);
	corral_buf_release(&cls);
	return rc;
}

static int
add_seconds(struct corral_buf *b, long long ms)
{
	if (ms < 0)
		ms = 0;
	return corral_buf_addf(b, "%lld.%03lld", ms / 1000, ms % 1000);
}

static int
add_testcase(const struct corral_report *rep,
    const struct corral_report_row *r, struct corral_buf *b,
    struct corral_buf *tail)
{
	const char *elem = r->ok ? "flakyFailure" : "failure";
	int rc = 0, flaky = !strcmp(r->status, "flaky");

	rc |= corral_buf_addstr(b, "    <testcase name=\"");
	rc |= add_xml(b, r->unit, strlen(r->unit));
	rc |= corral_buf_addstr(b, "\" classname=\"");
	rc |= add_classname(b, r->unit);
	rc |= corral_buf_addstr(b, "\" file=\"");
	rc |= add_xml(b, r->unit, strlen(r->unit));
	rc |= corral_buf_addstr(b, "\" time=\"");
	rc |= add_seconds(b, r->duration_ms);
	if (r->ok && !flaky)
		return rc | corral_buf_addstr(b, "\"/>\n");
	rc |= corral_buf_addf(b, "\">\n      <%s message=\"", elem);
	rc |= add_xml(b, r->note, strlen(r->note));
	rc |= corral_buf_addstr(b, "\" type=\"");
	rc |= add_xml(b, r->status, strlen(r->status));
	rc |= corral_buf_addstr(b, "\">");
	read_tail(rep, r->ok ? NULL : r->output, tail);
	rc |= add_xml(b, tail->len ? tail->data : r->note,
	    tail->len ? tail->len : strlen(r->note));
	rc |= corral_buf_addf(b, "</%s>\n    </testcase>\n", elem);
	return rc;
}

int
corral_report_junit(const struct corral_report *rep, struct corral_buf *b)
{
	struct corral_buf tail = CORRAL_BUF_INIT, head = CORRAL_BUF_INIT;
	long long ms = 0;
	size_t i, failures = 0;
	int rc = 0;

	for (i = 0; i < rep->n; i++) {
		failures += !rep->rows[i].ok;
		ms += rep->rows[i].duration_ms > 0 ?
		    rep->rows[i].duration_ms : 0;
	}
	rc |= corral_buf_addf(&head, "name=\"corral\" tests=\"%zu\" "
	    "failures=\"%zu\" errors=\"0\" skipped=\"0\" time=\"", rep->n,
	    failures);
	rc |= add_seconds(&head, ms);
	rc |= corral_buf_addstr(b, "<?xml version=\"1.0\" "
	    "encoding=\"UTF-8\"?>\n");
	rc |= corral_buf_addf(b, "<testsuites %s\">\n", head.data);
	rc |= corral_buf_addf(b, "  <testsuite %s\">\n", head.data);
	for (i = 0; i < rep->n && rc == 0; i++)
		rc |= add_testcase(rep, &rep->rows[i], b, &tail);
	rc |= corral_buf_addstr(b, "  </testsuite>\n</testsuites>\n");
	corral_buf_release(&tail);
	corral_buf_release(&head);
	return rc < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* TAP                                                                  */

static int
add_tap_row(const struct corral_report *rep, const struct corral_report_row *r,
    size_t num, struct corral_buf *b, struct corral_buf *tail)
{
	int rc = 0, flaky = !strcmp(r->status, "flaky");

	rc |= corral_buf_addf(b, "%sok %zu - ", r->ok ? "" : "not ", num);
	rc |= add_tap_text(b, r->unit);
	rc |= corral_buf_addch(b, '\n');
	if (r->ok && !flaky)
		return rc;
	rc |= corral_buf_addstr(b, "  ---\n  status: ");
	rc |= add_yaml(b, r->status, strlen(r->status));
	rc |= corral_buf_addstr(b, "\n  message: ");
	rc |= add_yaml(b, r->note, strlen(r->note));
	if (r->output) {
		rc |= corral_buf_addstr(b, "\n  output: ");
		rc |= add_yaml(b, r->output, strlen(r->output));
	}
	read_tail(rep, r->ok ? NULL : r->output, tail);
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
