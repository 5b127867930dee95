/* See LICENSE file for copyright and license details. */
/*
 * tap.c reads the TAP a unit prints (bats --tap, prove's kin) as it
 * arrives, in chunks of any size: it counts the tests, keeps the first
 * "not ok" line and the names of the first failed tests for the record,
 * and, when asked, every test with the lines after it for a report.  Any
 * bytes are input: lines are cut to TAP_LINE_MAX, a test's text to
 * TAP_TEXT_MAX, and a line that is not TAP is text, never an error.  Only
 * lines starting in column 0 count (a subtest or a YAML block is
 * indented), and the output is TAP only once a plan ("1..N") was read.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"
#include "record/record.h"

/* The longest line read; the rest of a longer one is dropped. */
#define TAP_LINE_MAX	4096
/* Text kept after one test, at most. */
#define TAP_TEXT_MAX	65536

void
corral_tap_init(struct corral_tap *t, int keep)
{
	memset(t, 0, sizeof(*t));
	t->plan = -1;
	t->keep = keep;
}

void
corral_tap_release(struct corral_tap *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].name);
		free(t->v[i].reason);
		corral_buf_release(&t->v[i].text);
	}
	free(t->v);
	corral_buf_release(&t->first_fail);
	corral_buf_release(&t->bail);
	corral_strv_release(&t->failures);
	corral_buf_release(&t->line);
	memset(t, 0, sizeof(*t));
	t->plan = -1;
}

int
corral_tap_found(const struct corral_tap *t)
{
	return t->plan >= 0;
}

/* s[0..n) starts with word, followed by the end, a blank or a '#'. */
static int
starts_word(const char *s, size_t n, const char *word)
{
	size_t k = strlen(word);

	return n >= k && !memcmp(s, word, k) && (n == k || s[k] == ' ' ||
	    s[k] == '\t' || s[k] == '#');
}

/* "1..N", maybe with a comment after it: N, or -1. */
static long long
plan_of(const char *s, size_t n)
{
	long long v = 0;
	size_t i;

	if (n < 4 || memcmp(s, "1..", 3) || !isdigit((unsigned char)s[3]))
		return -1;
	for (i = 3; i < n && isdigit((unsigned char)s[i]); i++)
		if ((v = v * 10 + (s[i] - '0')) > 1000000000LL)
			return -1;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i == n || s[i] == '#' ? v : -1;
}

/* The directive after an unescaped '#': 's' SKIP, 't' TODO, or 0. */
static int
directive(const char *s, size_t n, size_t *reason)
{
	size_t i = 0;
	int d;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (n - i < 4)
		return 0;
	if (!strncasecmp(s + i, "skip", 4))
		d = 's';
	else if (!strncasecmp(s + i, "todo", 4))
		d = 't';
	else
		return 0;
	i += 4;
	/* SKIPPED and SKIP: count; SKIPPY does not. */
	while (i < n && isalpha((unsigned char)s[i]) &&
	    (toupper((unsigned char)s[i]) == 'P' ||
	    toupper((unsigned char)s[i]) == 'E' ||
	    toupper((unsigned char)s[i]) == 'D'))
		i++;
	if (i < n && isalnum((unsigned char)s[i]))
		return 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ':'))
		i++;
	*reason = i;
	return d;
}

/*
 * bats --timing ends a description with " in Nms": N, and *len cut
 * before it; else -1 (*len as it was).
 */
static long long
timing_of(const char *s, size_t *len)
{
	size_t n = *len, d, i;
	long long v = 0;

	if (n < 7 || s[n - 1] != 's' || s[n - 2] != 'm')
		return -1;
	for (d = n - 2; d > 0 && isdigit((unsigned char)s[d - 1]); d--)
		;
	if (d == n - 2 || n - 2 - d > 12 || d < 4 ||
	    memcmp(s + d - 4, " in ", 4))
		return -1;
	for (i = d; i < n - 2; i++)
		v = v * 10 + (s[i] - '0');
	*len = d - 4;
	return v;
}

/* The test line s[0..n), its "ok" or "not ok" at s[0..word). */
struct test_line {
	const char *desc;	/* description, escapes still in */
	size_t ndesc;
	int dir;		/* directive() */
	const char *reason;
	size_t nreason;
};

static void
split_test(const char *s, size_t n, size_t word, struct test_line *tl)
{
	size_t i = word, hash;

	memset(tl, 0, sizeof(*tl));
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	while (i < n && isdigit((unsigned char)s[i]))
		i++;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < n && s[i] == '-')
		i++;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	for (hash = i; hash < n && s[hash] != '#'; hash++)
		if (s[hash] == '\\' && hash + 1 < n)
			hash++;
	tl->desc = s + i;
	tl->ndesc = hash - i;
	while (tl->ndesc && (tl->desc[tl->ndesc - 1] == ' ' ||
	    tl->desc[tl->ndesc - 1] == '\t'))
		tl->ndesc--;
	if (hash < n) {
		size_t r = 0;

		tl->dir = directive(s + hash + 1, n - hash - 1, &r);
		tl->reason = s + hash + 1 + r;
		tl->nreason = tl->dir ? n - hash - 1 - r : 0;
	}
}

/* desc[0..n) with TAP's "\#" and "\\" undone, malloc'd; NULL: ENOMEM. */
static char *
unescape(const char *desc, size_t n)
{
	char *s = malloc(n + 1), *o = s;
	size_t i;

	if (!s)
		return NULL;
	for (i = 0; i < n; i++) {
		if (desc[i] == '\\' && i + 1 < n && (desc[i + 1] == '#' ||
		    desc[i + 1] == '\\'))
			i++;
		*o++ = desc[i] ? desc[i] : '?';
	}
	*o = '\0';
	return s;
}

/*
 * Keep the test; it takes name (freed on failure too); reason[0..nreason)
 * when reason is not NULL.
 */
static int
keep_test(struct corral_tap *t, int status, char *name, long long ms,
    const char *reason, size_t nreason)
{
	struct corral_tap_test *v;

	if (t->n % 64 == 0) {
		v = realloc(t->v, (t->n + 64) * sizeof(*v));
		if (!v) {
			free(name);
			return -1;
		}
		t->v = v;
	}
	v = &t->v[t->n++];
	memset(v, 0, sizeof(*v));
	v->status = status;
	v->name = name;
	v->ms = ms;
	if (reason && !(v->reason = unescape(reason, nreason)))
		return -1;
	return 0;
}

/*
 * Count one test; it takes name (freed on failure too).  line[0..n) is
 * what the first failure's note quotes.
 */
static int
count_test(struct corral_tap *t, int status, char *name, long long ms,
    const char *line, size_t n, const char *reason, size_t nreason)
{
	t->tests++;
	t->skipped += status == CORRAL_TAP_SKIP;
	t->failed += status == CORRAL_TAP_FAIL;
	if (status == CORRAL_TAP_FAIL && !t->first_fail.len &&
	    corral_add_excerpt(&t->first_fail, line, n, TAP_LINE_MAX) < 0)
		goto fail;
	if (status == CORRAL_TAP_FAIL && t->failures.n < CORRAL_TAP_NAMES &&
	    corral_strv_add(&t->failures, name) < 0)
		goto fail;
	if (t->keep)
		return keep_test(t, status, name, ms, reason, nreason);
	free(name);
	return 0;
fail:
	free(name);
	return -1;
}

int
corral_tap_test(struct corral_tap *t, const char *name, int status,
    long long ms, const char *why)
{
	struct corral_buf line = CORRAL_BUF_INIT;
	char *copy;
	int rc;

	if (!(copy = strdup(name)))
		return -1;
	if (t->plan < 0)
		t->plan = 0;
	t->plan++;
	/* the note quotes the first line of why */
	if (corral_buf_addstr(&line, name) < 0 || (why && *why &&
	    (corral_buf_addstr(&line, ": ") < 0 ||
	    corral_buf_add(&line, why, strcspn(why, "\r\n")) < 0))) {
		free(copy);
		corral_buf_release(&line);
		return -1;
	}
	rc = count_test(t, status, copy, ms, line.data, line.len,
	    status == CORRAL_TAP_SKIP ? why : NULL, why ? strlen(why) : 0);
	if (rc == 0 && t->keep && status == CORRAL_TAP_FAIL && why)
		rc = corral_buf_addstr(&t->v[t->n - 1].text, why);
	corral_buf_release(&line);
	return rc;
}

/* A test line; word is where "ok" ends, fail whether it said "not ok". */
static int
read_test(struct corral_tap *t, const char *s, size_t n, size_t word,
    int fail)
{
	struct test_line tl;
	size_t len;
	long long ms;
	char *name;
	int status;

	split_test(s, n, word, &tl);
	status = tl.dir ? CORRAL_TAP_SKIP : fail ? CORRAL_TAP_FAIL :
	    CORRAL_TAP_PASS;
	len = tl.ndesc;
	ms = timing_of(tl.desc, &len);
	if (!(name = unescape(tl.desc, len)))
		return -1;
	return count_test(t, status, name, ms, s, n, tl.dir ? tl.reason : NULL,
	    tl.nreason);
}

/* Any other line: the text of the test before it, when tests are kept. */
static int
read_text(struct corral_tap *t, const char *s, size_t n)
{
	struct corral_buf *text;

	if (!t->keep || !t->n)
		return 0;
	text = &t->v[t->n - 1].text;
	if (text->len + n + 1 > TAP_TEXT_MAX)
		return 0;
	return corral_buf_add(text, s, n) | corral_buf_addch(text, '\n');
}

/* One whole line, its '\n' gone. */
static int
read_line(struct corral_tap *t, const char *s, size_t n)
{
	long long plan;

	if (n && s[n - 1] == '\r')
		n--;
	if (starts_word(s, n, "ok"))
		return read_test(t, s, n, 2, 0);
	if (starts_word(s, n, "not ok"))
		return read_test(t, s, n, 6, 1);
	if (t->plan < 0 && (plan = plan_of(s, n)) >= 0) {
		t->plan = plan;
		return 0;
	}
	if (n >= 9 && !memcmp(s, "Bail out!", 9)) {
		if (!t->bailed && corral_add_excerpt(&t->bail, s, n,
		    TAP_LINE_MAX) < 0)
			return -1;
		t->bailed = 1;
	}
	return read_text(t, s, n);
}

int
corral_tap_add(struct corral_tap *t, const char *p, size_t n)
{
	int whole;

	while (n && !t->err) {
		if (corral_line_take(&t->line, TAP_LINE_MAX, &p, &n,
		    &whole) < 0)
			t->err = ENOMEM;
		if (!whole)
			continue;
		if (!t->err && read_line(t, t->line.data ? t->line.data : "",
		    t->line.len) < 0)
			t->err = ENOMEM;
		corral_buf_reset(&t->line);
	}
	return t->err ? -1 : 0;
}

int
corral_tap_end(struct corral_tap *t)
{
	if (!t->err && t->line.len && read_line(t, t->line.data,
	    t->line.len) < 0)
		t->err = ENOMEM;
	corral_buf_reset(&t->line);
	return t->err ? -1 : 0;
}
