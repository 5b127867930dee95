/* See LICENSE file for copyright and license details. */
/*
 * parse.c reads the option values that are not plain integers: durations
 * in seconds with up to three decimals, kept as whole milliseconds,
 * sizes with a K, M or G suffix, resource limits and lists of exit codes,
 * and plain integers in a range (corral_strtonum, as OpenBSD's).  It
 * refuses anything it does not fully understand rather than guess.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

/* The most either parser accepts: about 292 million years in ms. */
#define VALUE_MAX (LLONG_MAX / 1024)

int
corral_seconds_parse(const char *s, long long *ms, const char *what,
    struct corral_err *err)
{
	long long whole = 0, frac = 0;
	const char *p = s;
	int digits = 0, fdigits = 0;

	for (; *p >= '0' && *p <= '9' && whole <= VALUE_MAX / 10; p++,
	    digits++)
		whole = whole * 10 + (*p - '0');
	/* Past milliseconds, the digits of a fraction count for nothing. */
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, fdigits++)
			if (fdigits < 3)
				frac = frac * 10 + (*p - '0');
	if (*p || (digits == 0 && fdigits == 0) || whole > VALUE_MAX / 1000)
		return corral_err_set(err, 0, "%s '%s' is not a number of "
		    "seconds", what, s);
	for (; fdigits < 3; fdigits++)
		frac *= 10;
	*ms = whole * 1000 + frac;
	return 0;
}

int
corral_size_parse(const char *s, long long *bytes, const char *what,
    struct corral_err *err)
{
	static const char units[] = "KMG";
	const char *u;
	long long v = 0;
	const char *p = s;
	int shift = 0;

	for (; *p >= '0' && *p <= '9' && v <= VALUE_MAX / 10; p++)
		v = v * 10 + (*p - '0');
	if (p != s && *p && !p[1] && (u = strchr(units, *p)))
		shift = 10 * (int)(u - units + 1), p++;
	if (p == s || *p || v > (VALUE_MAX >> shift))
		return corral_err_set(err, 0, "%s '%s' is not a size in bytes "
		    "(a number, optionally with K, M or G)", what, s);
	*bytes = v << shift;
	return 0;
}

void
corral_seconds_format(long long ms, char out[32])
{
	int n;

	n = snprintf(out, 32, "%lld.%03lld", ms / 1000, ms % 1000);
	while (n > 0 && out[n - 1] == '0')
		out[--n] = '\0';
	if (n > 0 && out[n - 1] == '.')
		out[--n] = '\0';
	if (n < 31) {
		out[n] = 's';
		out[n + 1] = '\0';
	}
}

int
corral_limit_parse(struct corral_limits *l, const char *arg,
    struct corral_err *err)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : 0;

	if (n == 3 && !strncmp(arg, "cpu", 3))
		return corral_strtonum(eq + 1, 1, INT_MAX, &l->cpu, "-L cpu",
		    err);
	if (n == 3 && !strncmp(arg, "mem", 3))
		return corral_size_parse(eq + 1, &l->mem, "-L mem", err);
	if (n == 5 && !strncmp(arg, "fsize", 5))
		return corral_size_parse(eq + 1, &l->fsize, "-L fsize", err);
	return corral_err_set(err, 0, "-L '%s' is not cpu=SECS, mem=SIZE or "
	    "fsize=SIZE", arg);
}

int
corral_codes_parse(unsigned char codes[256], const char *arg,
    const char *what, struct corral_err *err)
{
	char num[32];
	const char *p = arg, *end;
	long long code;
	size_t n;

	do {
		end = strchr(p, ',');
		n = end ? (size_t)(end - p) : strlen(p);
		if (n >= sizeof(num))
			n = sizeof(num) - 1;
		memcpy(num, p, n);
		num[n] = '\0';
		if (corral_strtonum(num, 0, 255, &code, what, err) < 0)
			return -1;
		codes[code] = 1;
		p = end + 1;
	} while (end);
	return 0;
}

int
corral_strtonum(const char *s, long long min, long long max,
    long long *out, const char *what, struct corral_err *err)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (!*s || *end || end == s)
		return corral_err_set(err, 0, "%s '%s' is not a number",
		    what, s);
	if (errno == ERANGE || v < min || v > max)
		return corral_err_set(err, 0,
		    "%s '%s' is out of range (%lld to %lld)", what, s, min, max);
	*out = v;
	return 0;
}
