/* See LICENSE file for copyright and license details. */
/*
 * note.c finds, among the lines a unit prints, the one that names its
 * failure, as the tools people run most print it: pytest's "FAILED
 * path::test - why", go test's "--- FAIL: TestX", a compiler's first
 * "error:", the exception a Python traceback ends with, make's "***",
 * and the user's own pattern (CORRAL_NOTE_PATTERN) before all of them.
 * The note quotes the best one found; with none, the last line of the
 * output, as before.
 */
#include <regex.h>
#include <string.h>

#include "base/base.h"
#include "agent/agent.h"
#include "agent/run-private.h"

/* s[0..n) starts with prefix. */
static int
starts(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && !memcmp(s, prefix, k);
}

/* s[0..n) holds word. */
static int
holds(const char *s, size_t n, const char *word)
{
	size_t k = strlen(word), i;

	for (i = 0; k <= n && i <= n - k; i++)
		if (s[i] == *word && !memcmp(s + i, word, k))
			return 1;
	return 0;
}

/* "make: *** ..." or "make[2]: *** ...". */
static int
make_error(const char *s, size_t n)
{
	size_t i = 4;

	if (!starts(s, n, "make"))
		return 0;
	if (i < n && s[i] == '[') {
		while (++i < n && s[i] >= '0' && s[i] <= '9')
			;
		if (i >= n || s[i++] != ']')
			return 0;
	}
	return starts(s + i, n - i, ": *** ");
}

/*
 * Which kind of failure line s[0..n) is, or -1 (first: pattern).  s[n]
 * is '\0' (a corral_buf's), so the pattern reads it in place.
 */
static int
kind_of(struct corral_note_lines *nl, const char *s, size_t n)
{
	if (nl->pattern && corral_note_match(nl->pattern, s))
		return NOTE_PATTERN;
	if ((starts(s, n, "FAILED ") || starts(s, n, "ERROR ")) &&
	    holds(s, n, "::"))
		return NOTE_PYTEST;
	if (starts(s, n, "--- FAIL: "))
		return NOTE_GOTEST;
	if (holds(s, n, ": error: ") || holds(s, n, ": fatal error: "))
		return NOTE_COMPILER;
	if (make_error(s, n))
		return NOTE_MAKE;
	return -1;
}

void
corral_note_lines_see(struct corral_note_lines *nl,
    const struct corral_buf *line)
{
	const char *s = line->data;
	size_t n = line->len;
	int k;

	if (starts(s, n, "Traceback (most recent call last):")) {
		nl->in_traceback = 1;
		return;
	}
	if (nl->in_traceback && n && s[0] != ' ' && s[0] != '\t') {
		/* the exception a traceback ends with; the last one counts */
		nl->in_traceback = 0;
		corral_buf_reset(&nl->line[NOTE_TRACEBACK]);
		(void)corral_buf_add(&nl->line[NOTE_TRACEBACK], s, n);
		return;
	}
	if ((k = kind_of(nl, s, n)) >= 0 && !nl->line[k].len)
		(void)corral_buf_add(&nl->line[k], s, n);
}

const struct corral_buf *
corral_note_lines_best(const struct corral_note_lines *nl, int kind)
{
	static const int order[] = { NOTE_PYTEST, NOTE_GOTEST, NOTE_COMPILER,
	    NOTE_TRACEBACK, NOTE_MAKE };
	size_t i;

	if (kind == NOTE_PATTERN)
		return nl->line[NOTE_PATTERN].len ? &nl->line[NOTE_PATTERN] :
		    NULL;
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (nl->line[order[i]].len)
			return &nl->line[order[i]];
	return NULL;
}

int
corral_note_pattern_compile(regex_t *re, const char *pattern,
    struct corral_err *err)
{
	char why[160];
	int rc;

	if ((rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB)) == 0)
		return 0;
	regerror(rc, re, why, sizeof(why));
	return corral_err_set(err, 0, "the note pattern '%s' is no extended "
	    "regular expression: %s", pattern, why);
}

int
corral_note_match(const regex_t *re, const char *line)
{
	return regexec(re, line, 0, NULL, 0) == 0;
}

void
corral_note_lines_release(struct corral_note_lines *nl)
{
	int k;

	for (k = 0; k < NOTE_KINDS; k++)
		corral_buf_release(&nl->line[k]);
}
