/* See LICENSE file for copyright and license details. */
/*
 * buf.c is a growable, always NUL-terminated byte buffer, in the manner of
 * redis's sds.  It is how records are assembled before the single write(2)
 * that puts each one on disk whole.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

static int
grow(struct corral_buf *b, size_t extra)
{
	size_t want, cap;
	char *p;

	if (extra > (size_t)-1 - b->len - 1) {
		errno = ENOMEM;
		return -1;
	}
	want = b->len + extra + 1;
	if (want <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < want)
		cap = cap > (size_t)-1 / 2 ? want : cap * 2;
	if (!(p = realloc(b->data, cap)))
		return -1;
	b->data = p;
	b->cap = cap;
	return 0;
}

int
corral_buf_add(struct corral_buf *b, const void *p, size_t n)
{
	if (grow(b, n) < 0)
		return -1;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int
corral_buf_addstr(struct corral_buf *b, const char *s)
{
	return corral_buf_add(b, s, strlen(s));
}

int
corral_buf_addch(struct corral_buf *b, int c)
{
	char ch = (char)c;

	return corral_buf_add(b, &ch, 1);
}

int
corral_buf_vaddf(struct corral_buf *b, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0 || grow(b, (size_t)n) < 0)
		return -1;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int
corral_buf_addf(struct corral_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = corral_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return rc;
}

/* The short escape of c, or NULL when it needs \u00XX. */
static const char *
json_escape(unsigned char c)
{
	switch (c) {
	case '"':	return "\\\"";
	case '\\':	return "\\\\";
	case '\n':	return "\\n";
	case '\r':	return "\\r";
	case '\t':	return "\\t";
	case '\b':	return "\\b";
	case '\f':	return "\\f";
	default:	return NULL;
	}
}

/*
 * JSON string escaping.  Bytes >= 0x80 pass through untouched, so valid
 * UTF-8 stays readable and any other byte sequence round-trips exactly
 * through corral's own tools (cJSON copies such bytes as they are).
 */
int
corral_buf_addjson(struct corral_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const char *esc;
	unsigned char c;
	size_t i, run;
	int rc;

	if (corral_buf_addch(b, '"') < 0)
		return -1;
	for (i = 0; i < n; i += run ? run : 1) {
		for (run = 0; i + run < n; run++) {
			c = (unsigned char)s[i + run];
			if (c < 0x20 || c == '"' || c == '\\')
				break;
		}
		if (run) {
			if (corral_buf_add(b, s + i, run) < 0)
				return -1;
			continue;
		}
		c = (unsigned char)s[i];
		if ((esc = json_escape(c)))
			rc = corral_buf_addstr(b, esc);
		else
			rc = corral_buf_addf(b, "\\u00%c%c", hex[c >> 4],
			    hex[c & 15]);
		if (rc < 0)
			return -1;
	}
	return corral_buf_addch(b, '"');
}

void
corral_buf_reset(struct corral_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void
corral_buf_release(struct corral_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

/*
 * The length of the well-formed UTF-8 sequence that starts p (n bytes
 * left: shortest form, no surrogate, at most U+10FFFF), its code point
 * in *c; 0 when it is not one.
 */
static size_t
utf8_len(const unsigned char *p, size_t n, unsigned long *c)
{
	size_t len, i;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, *c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, *c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, *c = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		*c = *c << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && *c < 0x800) || (len == 4 && *c < 0x10000) ||
	    (*c >= 0xd800 && *c <= 0xdfff) || *c > 0x10ffff)
		return 0;
	return len;
}

/*
 * How many bytes at p (n left) stand as they are (0: none, the first is
 * shown as '?'), and in *skip how many bytes the '?' stands for.
 */
static size_t
shown_len(const unsigned char *p, size_t n, int flags, size_t *skip)
{
	unsigned long c;
	size_t len;

	*skip = 1;
	if ((p[0] >= 0x20 && p[0] < 0x7f) || ((p[0] == '\n' ||
	    p[0] == '\t') && (flags & CORRAL_SHOWN_LINES)))
		return 1;
	if (p[0] < 0x80 || !(len = utf8_len(p, n, &c)))
		return 0;
	if (c >= 0x80 && c < 0xa0) {	/* a C1 control: one '?' */
		*skip = len;
		return 0;
	}
	return len;
}

int
corral_buf_add_shown(struct corral_buf *b, const char *s, size_t n,
    int flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, len, skip, start = b->len;

	while (i < n) {
		len = shown_len(p + i, n - i, flags, &skip);
		if (len ? corral_buf_add(b, p + i, len) :
		    corral_buf_addch(b, '?')) {
			b->len = start;
			if (b->data)
				b->data[start] = '\0';
			return -1;
		}
		i += len ? len : skip;
	}
	return 0;
}
