/* See LICENSE file for copyright and license details. */
/*
 * report.c reads a run's merged results (successes.jsonl and
 * failures.jsonl, which stay the source of truth) for the formats CI
 * systems read, and writes TAP; junit.c writes JUnit XML.  Unit names,
 * notes and output are any bytes; what they write is always well-formed:
 * invalid UTF-8 and the characters XML 1.0 forbids become U+FFFD, markup
 * is escaped, and TAP descriptions and YAML strings are escaped the way
 * prove reads them.
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
#include "report/report-private.h"

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

/* How one code point is written: 0, or -1 (ENOMEM). */
typedef int add_fn(struct corral_buf *b, unsigned long c);

/* s[0..n), code point by code point (utf8_next), each through add. */
static int
add_each(struct corral_buf *b, const char *s, size_t n, add_fn *add)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned long c;
	size_t i, k;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i += k) {
		k = utf8_next(p + i, n - i, &c);
		rc = add(b, c);
	}
	return rc;
}

/* XML 1.0's Char production. */
static int
xml_char(unsigned long c)
{
	return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 &&
	    c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 &&
	    c <= 0x10FFFF);
}

/* c for report_xml; text: in an element's text, not an attribute. */
static int
add_xml(struct corral_buf *b, unsigned long c, int text)
{
	if (!xml_char(c))
		c = REPLACEMENT;
	switch (c) {
	case '&': return corral_buf_addstr(b, "&amp;");
	case '<': return corral_buf_addstr(b, "&lt;");
	case '>': return corral_buf_addstr(b, "&gt;");
	case '"': return corral_buf_addstr(b, "&quot;");
	case '\'': return corral_buf_addstr(b, "&apos;");
	/* Kept as they are even inside attribute values. */
	case '\t': return text ? corral_buf_addch(b, '\t') :
	    corral_buf_addstr(b, "&#9;");
	case '\n': return text ? corral_buf_addch(b, '\n') :
	    corral_buf_addstr(b, "&#10;");
	case '\r': return corral_buf_addstr(b, "&#13;");
	default: return add_cp(b, c);
	}
}

static int
add_xml_text(struct corral_buf *b, unsigned long c)
{
	return add_xml(b, c, 1);
}

static int
add_xml_attr(struct corral_buf *b, unsigned long c)
{
	return add_xml(b, c, 0);
}

/* report_xml: report-private.h says what it escapes. */
int
report_xml(struct corral_buf *b, const char *s, size_t n, int text)
{
	return add_each(b, s, n, text ? add_xml_text : add_xml_attr);
}

/*
 * c after a backslash.  Two plain bytes, not addf("\\%c", c): Debian 12's
 * gcc 12.2 at -O2 compiled that call in add_yaml_cp to pass '\\' for '"'
 * too, and a byte that a format carries is one more thing to get wrong.
 */
static int
add_escaped(struct corral_buf *b, unsigned long c)
{
	int rc = corral_buf_addch(b, '\\');

	return rc ? rc : corral_buf_addch(b, (char)c);
}

/* c inside a YAML double-quoted scalar. */
static int
add_yaml_cp(struct corral_buf *b, unsigned long c)
{
	if (c == '"' || c == '\\')
		return add_escaped(b, c);
	if (c < 0x20 || c == 0x7F)
		return corral_buf_addf(b, "\\x%02lx", c);
	return add_cp(b, c);
}

/* A YAML double-quoted scalar that TAP::Parser's YAMLish reader reads. */
static int
add_yaml(struct corral_buf *b, const char *s, size_t n)
{
	int rc = corral_buf_addch(b, '"');

	if (rc == 0)
		rc = add_each(b, s, n, add_yaml_cp);
	return rc | corral_buf_addch(b, '"');
}

/* c in a TAP description: '#' and '\' escaped, a control a space. */
static int
add_tap_cp(struct corral_buf *b, unsigned long c)
{
	if (c == '#' || c == '\\')
		return add_escaped(b, c);
	if (c < 0x20 || c == 0x7F)
		return corral_buf_addch(b, ' ');
	return add_cp(b, c);
}

/* A TAP description: one line, '#' and '\' escaped. */
static int
add_tap_text(struct corral_buf *b, const char *s)
{
	return add_each(b, s, strlen(s), add_tap_cp);
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
add_row(void *ctx, const struct corral_json_record *r, int success)
{
	struct corral_report *rep = ctx;
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
	row->cached = r->cached;
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
	if (report_output_where(r->agent_id, r->output, &row->where) < 0 ||
	    !row->unit || !row->status || !row->note ||
	    (r->output && !row->output) || (r->host && !row->host))
		return -1;
	for (i = 0; (name = corral_json_record_failed_name(r, i)); i++)
		if (corral_strv_add(&row->failed_names, name) < 0)
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
	struct report_results m = { dir, add_row, rep, &rep->unreadable, 0 };

	memset(rep, 0, sizeof(*rep));
	rep->dir = dir;
	rep->output_max = CORRAL_REPORT_OUTPUT_MAX;
	if (report_results_read(&m, "successes.jsonl", 1, err) < 0 ||
	    report_results_read(&m, "failures.jsonl", 0, err) < 0)
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
		free(rep->rows[i].where);
		free(rep->rows[i].host);
		corral_strv_release(&rep->rows[i].failed_names);
	}
	free(rep->rows);
	corral_strv_release(&rep->unreadable);
	memset(rep, 0, sizeof(*rep));
}

/* The n bytes at p are the component want. */
static int
is_comp(const char *p, size_t n, const char *want)
{
	return strlen(want) == n && !memcmp(p, want, n);
}

/* Cut path's last component off into [*c, *c + *n); 0 when none is left. */
static int
last_comp(const char *path, size_t *end, const char **c, size_t *n)
{
	size_t e = *end, b;

	if (!e)
		return 0;
	for (b = e; b > 0 && path[b - 1] != '/'; b--)
		;
	*c = path + b;
	*n = e - b;
	*end = b ? b - 1 : 0;
	return 1;
}

/* 1 when p[0..n) is a layer number: 1 to 999999999, no leading 0. */
static int
is_layer(const char *p, size_t n)
{
	size_t i;

	if (!n || n > 9 || p[0] == '0')
		return 0;
	for (i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return 0;
	return 1;
}

int
report_output_where(const char *agent, const char *output, char **where)
{
	const char *file, *dir, *logs, *num, *rerun, *start;
	size_t end, nf, nd, nl, nn, nr;

	*where = NULL;
	if (!agent || !output || !*agent || strchr(agent, '/'))
		return 0;
	end = strlen(output);
	if (!last_comp(output, &end, &file, &nf) || !nf ||
	    is_comp(file, nf, ".") || is_comp(file, nf, "..") ||
	    !last_comp(output, &end, &dir, &nd) || nd != 6 + strlen(agent) ||
	    memcmp(dir, "agent-", 6) || memcmp(dir + 6, agent, nd - 6) ||
	    !last_comp(output, &end, &logs, &nl) || !is_comp(logs, nl, "logs"))
		return 0;
	start = logs;
	if (last_comp(output, &end, &num, &nn) && is_layer(num, nn) &&
	    last_comp(output, &end, &rerun, &nr) && is_comp(rerun, nr, "rerun"))
		start = rerun;
	return (*where = strdup(start)) ? 0 : -1;
}

int
report_open_output(const struct corral_report *rep, const char *where)
{
	struct stat st;
	int dirfd, fd;

	if (!where || !rep->dir ||
	    (dirfd = open(rep->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	if ((fd = corral_open_beneath(dirfd, where, O_RDONLY |
	    O_NONBLOCK)) < 0) {
		int sh = openat(dirfd, "shards", O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);

		if (sh >= 0) {
			fd = corral_open_beneath(sh, where, O_RDONLY |
			    O_NONBLOCK);
			close(sh);
		}
	}
	close(dirfd);
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void
report_read_tail(const struct corral_report *rep, const char *where,
    long long max, struct corral_buf *b)
{
	struct stat st;
	off_t off = 0;
	ssize_t n;
	size_t want;
	char *text = NULL, *nl;
	int fd;

	corral_buf_reset(b);
	if ((fd = report_open_output(rep, where)) < 0)
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
	if (r->cached)
		rc |= corral_buf_addstr(b, " (cached)");
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
	report_read_tail(rep, r->ok ? NULL : r->where, REPORT_TAIL,
	    tail);
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

/* ------------------------------------------------------------------ */
/* For the other writers of the merge area (trace.c, html.c)           */

int
report_utf8(struct corral_buf *b, const char *s, size_t n)
{
	return add_each(b, s, n, add_cp);
}

long long
report_iso_ms(const char *s)
{
	return iso_ms(s);
}
