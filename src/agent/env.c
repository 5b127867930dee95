/* See LICENSE file for copyright and license details. */
/*
 * env.c: what a unit inherits.  A unit runs with the caller's environment
 * less what belongs to corral rather than to the user: every __corral_*
 * variable (the engine's internals, the lock's descriptor), and, when the
 * caller says which CORRAL_* variables were the user's own (corral.mk
 * does), every other CORRAL_* variable and every CORRAL_* or __corral_*
 * assignment in MAKEFLAGS (settings given on make's command line, which
 * make passes down to every make below it).  The rule is by name, not a
 * list of settings: a setting added to corral.mk tomorrow is a CORRAL_*
 * name that the user's environment did not hold, and never reaches a
 * unit either.  The agent then adds its own (CORRAL_UNIT...).
 */
#include <string.h>

#include "base/base.h"
#include "agent/agent.h"

/* Whether the n bytes at s start with prefix. */
static int
starts(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && !memcmp(s, prefix, k);
}

/* Whether keep (may be NULL) holds name[0..n). */
static int
kept(const struct corral_strv *keep, const char *name, size_t n)
{
	size_t i;

	for (i = 0; keep && i < keep->n; i++)
		if (strlen(keep->v[i]) == n && !memcmp(keep->v[i], name, n))
			return 1;
	return 0;
}

int
corral_env_for_unit(const char *e, const struct corral_strv *keep)
{
	size_t n = strcspn(e, "=");

	if (starts(e, n, "__corral_"))
		return 0;
	return !keep || !starts(e, n, "CORRAL_") || kept(keep, e, n);
}

/* The length of the word at s: up to a space no backslash escapes. */
static size_t
word_len(const char *s)
{
	size_t i = 0;

	while (s[i] && s[i] != ' ')
		i += s[i] == '\\' && s[i + 1] ? 2 : 1;
	return i;
}

int
corral_makeflags_clean(const char *flags, struct corral_buf *out)
{
	const char *s = flags, *dashes = NULL;
	size_t n, head;
	int any = 0;

	/* The flags run up to the word "--", the variables after it. */
	for (; *s; s += n) {
		while (*s == ' ')
			s++;
		n = word_len(s);
		if (n == 2 && !memcmp(s, "--", 2)) {
			dashes = s;
			break;
		}
	}
	head = dashes ? (size_t)(dashes - flags) : strlen(flags);
	while (dashes && head > 0 && flags[head - 1] == ' ')
		head--;
	if (corral_buf_add(out, flags, head) < 0)
		return -1;
	for (s = dashes ? dashes + 2 : "", n = 0; *s; s += n) {
		while (*s == ' ')
			s++;
		if (!(n = word_len(s)) || starts(s, n, "CORRAL_") ||
		    starts(s, n, "__corral_"))
			continue;
		if ((!any++ && corral_buf_addstr(out, " --") < 0) ||
		    corral_buf_addch(out, ' ') < 0 || corral_buf_add(out, s, n) < 0)
			return -1;
	}
	return 0;
}

int
corral_env_unit(struct corral_strv *env, char *const *from,
    const struct corral_strv *keep, const char *const *extra)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	const char *const *x;
	char *const *e;
	int rc = -1;
	size_t n;

	for (e = from; *e; e++) {
		n = strcspn(*e, "=");
		for (x = extra; x && *x; x++)
			if (!strncmp(*x, *e, n) && (*x)[n] == '=')
				break;
		if ((x && *x) || !corral_env_for_unit(*e, keep))
			continue;
		if (keep && n == 9 && !memcmp(*e, "MAKEFLAGS", 9) && (*e)[n]) {
			corral_buf_reset(&b);
			if (corral_buf_addstr(&b, "MAKEFLAGS=") < 0 ||
			    corral_makeflags_clean(*e + n + 1, &b) < 0 ||
			    corral_strv_addn(env, b.data, b.len) < 0)
				goto out;
		} else if (corral_strv_add(env, *e) < 0)
			goto out;
	}
	for (x = extra; x && *x; x++)
		if (corral_strv_add(env, *x) < 0)
			goto out;
	rc = 0;
out:
	corral_buf_release(&b);
	return rc;
}
