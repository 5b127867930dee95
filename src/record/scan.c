/* See LICENSE file for copyright and license details. */
/*
 * scan.c reads a log line as a record without building a tree: a strict
 * JSON scanner, one pass over the bytes, checks that the line is exactly
 * one object and copies out the members the merge and the scoreboard read
 * (unit, ok, status, run, at, inputs, note, output; duration_ms and the
 * counts of "tests" when they are plain integers; whether "cached" is an
 * object).  It knows a subset of what cJSON reads: no \u escape, no escape
 * in a key or in a member it copies, nesting to SCAN_DEPTH, numbers of up
 * to SCAN_NUMBER bytes, only JSON's four whitespace bytes.
 * A line outside that subset, or wrong in any way, goes to
 * corral_json_record_parse instead.  Its invariant: a line the scanner
 * takes is one cJSON takes, with the same members, so that every verdict
 * and every message is still record.c's (fuzz/scan.c holds it to that).
 */
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "record/record.h"

#define SCAN_DEPTH	32	/* cJSON: 1000 */
#define SCAN_NUMBER	32	/* cJSON: 63 bytes */

enum {
	F_UNIT, F_OK, F_STATUS, F_RUN, F_AT, F_INPUTS, F_CACHED, F_NOTE,
	F_OUTPUT, F_DURATION, F_TESTS, NF
};
enum { T_STRING, T_TRUE, T_FALSE, T_OBJECT, T_NUMBER, T_OTHER };
/* The members of "tests" read, as record.c's read_tests reads them. */
enum { TF_TOTAL, TF_FAILED, TF_SKIPPED, NTF };

static const char *const fname[NF] = {
	"unit", "ok", "status", "run", "at", "inputs", "cached", "note",
	"output", "duration_ms", "tests"
};
static const char *const tname[NTF] = { "total", "failed", "skipped" };

/* The largest integer of digits alone read exactly: cj_int's 9e15 is
   above it, and a double holds it. */
#define PLAIN_DIGITS	15

/* What the scan found of the top-level members it reads. */
struct found {
	corral_record_hint_fn *hint;
	void *ctx;
	size_t at[NF], len[NF];	/* a string's bytes, quotes left out */
	int n[NF];		/* members so named */
	int str[NF];		/* the first is a string */
	int ok;
	int cached;		/* the first "cached" is an object */
	int tests;		/* the first "tests" is an object */
	long long duration;	/* the first "duration_ms", or -1 */
	int tn[NTF];		/* members of the first "tests" so named */
	long long tv[NTF];	/* the first of each, or -1 */
};

static int
is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The index of the first byte at or after s[i] that is not is(). */
static size_t
skip(const char *s, size_t i, size_t n, int (*is)(char))
{
	while (i < n && is(s[i]))
		i++;
	return i;
}

static size_t
skip_ws(const char *s, size_t i, size_t n)
{
	return skip(s, i, n, is_ws);
}

static size_t
digits(const char *s, size_t i, size_t n)
{
	return skip(s, i, n, is_digit);
}

#define ONES	UINT64_C(0x0101010101010101)
#define HIGHS	UINT64_C(0x8080808080808080)

/* Whether any byte of w is zero (exact when none is: bit-twiddling). */
static uint64_t
zero_byte(uint64_t w)
{
	return (w - ONES) & ~w & HIGHS;
}

/*
 * The index of the first byte at or after s[i] that may end or escape a
 * string ('"', '\\' or a control byte), eight bytes at a time; no further
 * than n.  Only a word that holds one is looked at byte by byte.
 */
static size_t
plain_end(const char *s, size_t i, size_t n)
{
	uint64_t w;

	for (; n - i >= 8; i += 8) {
		memcpy(&w, s + i, 8);
		if (zero_byte(w ^ (ONES * '"')) | zero_byte(w ^ (ONES * '\\')) |
		    ((w - ONES * 0x20) & ~w & HIGHS))
			break;
	}
	while (i < n && s[i] != '"' && s[i] != '\\' &&
	    (unsigned char)s[i] >= 0x20)
		i++;
	return i;
}

/*
 * The index after the string opening at s[i], or 0 when it is not one the
 * scanner takes; *esc is set when it holds an escape.
 */
static size_t
string_end(const char *s, size_t i, size_t n, int *esc)
{
	*esc = 0;
	for (i++; (i = plain_end(s, i, n)) < n; i++) {
		if (s[i] == '"')
			return i + 1;
		if (s[i] != '\\')
			return 0;
		if (++i >= n || !s[i] || !strchr("\"\\/bfnrt", s[i]))
			return 0;
		*esc = 1;
	}
	return 0;
}

/* The index after the JSON number at s[i], or 0. */
static size_t
number_end(const char *s, size_t i, size_t n)
{
	size_t b = i;

	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0')
		i++;
	else if (i < n && s[i] >= '1' && s[i] <= '9')
		i = digits(s, i, n);
	else
		return 0;
	if (i < n && s[i] == '.') {
		if (++i >= n || !is_digit(s[i]))
			return 0;
		i = digits(s, i, n);
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		if (++i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= n || !is_digit(s[i]))
			return 0;
		i = digits(s, i, n);
	}
	return i - b > SCAN_NUMBER ? 0 : i;
}

/* The index after the literal word at s[i], or 0. */
static size_t
word_end(const char *s, size_t i, size_t n, const char *word)
{
	size_t k = strlen(word);

	return n - i >= k && !memcmp(s + i, word, k) ? i + k : 0;
}

/* The field named key[0..len), or -1. */
static int
field_of(const char *key, size_t len)
{
	int f;

	switch (len) {
	case 2:
		f = key[0] == 'o' ? F_OK : key[0] == 'a' ? F_AT : -1;
		break;
	case 3:
		f = F_RUN;
		break;
	case 4:
		f = key[0] == 'u' ? F_UNIT : key[0] == 'n' ? F_NOTE : -1;
		break;
	case 5:
		f = F_TESTS;
		break;
	case 6:
		f = key[0] == 's' ? F_STATUS : key[0] == 'i' ? F_INPUTS :
		    key[0] == 'c' ? F_CACHED : key[0] == 'o' ? F_OUTPUT : -1;
		break;
	case 11:
		f = F_DURATION;
		break;
	default:
		return -1;
	}
	return f >= 0 && !memcmp(key, fname[f], len) ? f : -1;
}

/* The member of "tests" named key[0..len), or -1. */
static int
test_field_of(const char *key, size_t len)
{
	int f;

	for (f = 0; f < NTF; f++)
		if (strlen(tname[f]) == len && !memcmp(key, tname[f], len))
			return f;
	return -1;
}

/*
 * The number s[b..e) as cj_int reads it, into *v: digits alone, up to
 * PLAIN_DIGITS of them.  0, or -1 for any other number (a sign, a
 * fraction, an exponent, more digits), which the scanner leaves to
 * record.c rather than round as a double would.
 */
static int
plain_int(const char *s, size_t b, size_t e, long long *v)
{
	size_t i;

	if (e - b > PLAIN_DIGITS)
		return -1;
	*v = 0;
	for (i = b; i < e; i++) {
		if (!is_digit(s[i]))
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

/* A value of type t at s[b..e) read as cj_int reads it, into *v. */
static int
int_of(const char *s, int t, size_t b, size_t e, long long *v)
{
	if (t != T_NUMBER) {
		*v = -1;
		return 0;
	}
	return plain_int(s, b, e, v);
}

/*
 * Note the value of top-level member f, of type t (a string at s[b..e),
 * quotes left out; a number at s[b..e)).  As record.c reads it: "unit" a
 * string, not empty, and "ok" a boolean, each once; of the others the
 * first counts, a string or nothing ("cached" and "tests": an object or
 * nothing; "duration_ms": a number or -1).  0, or -1 when the scanner
 * leaves the line to record.c.
 */
static int
note(const char *s, struct found *fd, int f, int t, size_t b, size_t e,
    int esc)
{
	if (f < 0 || fd->n[f]++)
		return 0;
	if (f == F_OK) {
		fd->ok = t == T_TRUE;
		return t == T_TRUE || t == T_FALSE ? 0 : -1;
	}
	if (f == F_CACHED || f == F_TESTS) {
		*(f == F_CACHED ? &fd->cached : &fd->tests) = t == T_OBJECT;
		return 0;
	}
	if (f == F_DURATION)
		return int_of(s, t, b, e, &fd->duration);
	if (t != T_STRING)
		return f == F_UNIT ? -1 : 0;
	if (esc || (f == F_UNIT && e == b))
		return -1;
	fd->str[f] = 1;
	fd->at[f] = b;
	fd->len[f] = e - b;
	if (f == F_UNIT && fd->hint)
		fd->hint(fd->ctx, s + b, e - b);
	return 0;
}

/* The index after the scalar at s[i], its type in *t, or 0. */
static size_t
scalar_end(const char *s, size_t i, size_t n, int *t, int *esc)
{
	*esc = 0;
	*t = T_OTHER;
	switch (s[i]) {
	case '"':
		*t = T_STRING;
		return string_end(s, i, n, esc);
	case 't':
		*t = T_TRUE;
		return word_end(s, i, n, "true");
	case 'f':
		*t = T_FALSE;
		return word_end(s, i, n, "false");
	case 'n':
		return word_end(s, i, n, "null");
	default:
		*t = T_NUMBER;
		return number_end(s, i, n);
	}
}

static char
closer(char open)
{
	return open == '{' ? '}' : ']';
}

/*
 * Note member tf of the first "tests" object, of type t at s[b..e), as
 * read_tests reads it: the first of each name counts, a number or -1.
 */
static int
note_test(const char *s, struct found *fd, int tf, int t, size_t b,
    size_t e)
{
	if (tf < 0 || fd->tn[tf]++)
		return 0;
	return int_of(s, t, b, e, &fd->tv[tf]);
}

/*
 * The index after the member or element at s[i] when it is a scalar, or
 * i itself when it opens a container (pushed on stack); 0 when the scanner
 * leaves the line to record.c.  *f is the field of a top-level member.
 */
static size_t
item(const char *s, size_t i, size_t n, char *stack, int *depth, int *f,
    struct found *fd)
{
	size_t e, vb;
	int t, esc, tf = -1;
	/* a member of the first top-level "tests", if it is an object */
	int in_tests = *depth == 2 && stack[1] == '{' && *f == F_TESTS &&
	    !fd->n[F_TESTS];

	if (stack[*depth - 1] == '{') {
		if (s[i] != '"' || !(e = string_end(s, i, n, &esc)))
			return 0;
		if (*depth == 1) {
			if (esc)
				return 0;
			*f = field_of(s + i + 1, e - i - 2);
		} else if (in_tests) {
			if (esc)
				return 0;
			tf = test_field_of(s + i + 1, e - i - 2);
		}
		i = skip_ws(s, e, n);
		if (i >= n || s[i] != ':')
			return 0;
		if ((i = skip_ws(s, i + 1, n)) >= n)
			return 0;
	}
	if (s[i] == '{' || s[i] == '[') {
		if (*depth == SCAN_DEPTH)
			return 0;
		(void)note_test(s, fd, tf, T_OTHER, 0, 0);
		stack[(*depth)++] = s[i];
		return i;
	}
	vb = i;
	if (!(i = scalar_end(s, i, n, &t, &esc)))
		return 0;
	if (t == T_STRING)	/* the quotes left out */
		vb++;
	if (*depth == 1 && note(s, fd, *f, t, vb, i - (t == T_STRING), esc) < 0)
		return 0;
	if (note_test(s, fd, tf, t, vb, i - (t == T_STRING)) < 0)
		return 0;
	return i;
}

/*
 * Scan s[0..n) as one JSON object.  1 with fd filled when the scanner
 * takes it, 0 when it leaves it to record.c.
 */
static int
scan(const char *s, size_t n, struct found *fd)
{
	char stack[SCAN_DEPTH];
	size_t i = skip_ws(s, 0, n), e;
	int depth = 0, f = -1, fresh = 1, was;

	if (i >= n || s[i] != '{')
		return 0;
	stack[depth++] = s[i++];
	for (;;) {
		if ((i = skip_ws(s, i, n)) >= n)
			return 0;
		if (!fresh || s[i] != closer(stack[depth - 1])) {
			was = depth;
			if (!(e = item(s, i, n, stack, &depth, &f, fd)))
				return 0;
			i = e + (depth > was);
			if (depth > was) {
				fresh = 1;
				continue;
			}
			i = skip_ws(s, i, n);
		}
		/* After a value, or at the end of an empty container. */
		while (i < n && s[i] == closer(stack[depth - 1])) {
			if (--depth == 0)
				return skip_ws(s, i + 1, n) == n;
			if (depth == 1 && note(s, fd, f, s[i] == '}' ?
			    T_OBJECT : T_OTHER, 0, 0, 0) < 0)
				return 0;
			i = skip_ws(s, i + 1, n);
		}
		if (i >= n || s[i] != ',')
			return 0;
		i++;
		fresh = 0;
	}
}

/* Copy the strings found into scratch and point r at them. */
static int
fill(const char *s, const struct found *fd, struct corral_json_record *r,
    struct corral_buf *scratch)
{
	const char **to[NF];
	size_t at[NF], f;

	memset(to, 0, sizeof(to));
	to[F_UNIT] = &r->unit;
	to[F_STATUS] = &r->status;
	to[F_RUN] = &r->run;
	to[F_AT] = &r->at;
	to[F_INPUTS] = &r->inputs;
	to[F_NOTE] = &r->note;
	to[F_OUTPUT] = &r->output;
	corral_buf_reset(scratch);
	for (f = 0; f < NF; f++) {
		at[f] = scratch->len;
		if (fd->str[f] && (corral_buf_add(scratch, s + fd->at[f],
		    fd->len[f]) < 0 || corral_buf_addch(scratch, '\0') < 0))
			return -1;
	}
	for (f = 0; f < NF; f++)
		if (fd->str[f])
			*to[f] = scratch->data + at[f];
	r->ok = fd->ok;
	r->cached = fd->cached;
	r->duration_ms = fd->duration;
	r->exit_code = r->attempt = -1;
	/* read_tests: no counts but with a number "total" */
	r->tests = r->tests_failed = r->tests_skipped = -1;
	if (fd->tests && fd->tn[TF_TOTAL] && fd->tv[TF_TOTAL] >= 0) {
		r->tests = fd->tv[TF_TOTAL];
		r->tests_failed = fd->tn[TF_FAILED] ? fd->tv[TF_FAILED] : -1;
		r->tests_skipped = fd->tn[TF_SKIPPED] ? fd->tv[TF_SKIPPED] :
		    -1;
	}
	return 0;
}

int
corral_record_scan_takes(const char *line, size_t len,
    struct corral_json_record *r, struct corral_buf *scratch,
    corral_record_hint_fn *hint, void *ctx)
{
	struct found fd;

	memset(r, 0, sizeof(*r));
	memset(&fd, 0, sizeof(fd));
	fd.duration = -1;
	fd.hint = hint;
	fd.ctx = ctx;
	return scan(line, len, &fd) && fd.n[F_UNIT] == 1 &&
	    fd.n[F_OK] == 1 && fill(line, &fd, r, scratch) == 0;
}

int
corral_record_scan(const char *line, size_t len,
    struct corral_json_record *r, struct corral_buf *scratch,
    corral_record_hint_fn *hint, void *ctx, struct corral_err *err)
{
	if (corral_record_scan_takes(line, len, r, scratch, hint, ctx))
		return 0;
	return corral_json_record_parse(line, len, r, err);
}
