/* See LICENSE file for copyright and license details. */
/*
 * strv.c is a NULL-terminated vector of owned strings: populations, slices,
 * parts.  It owns its strings; corral_strv_release frees them all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

int
corral_strv_addn(struct corral_strv *sv, const char *s, size_t n)
{
	char **v, *copy;
	size_t cap;

	if (sv->n + 1 >= sv->cap) {
		cap = sv->cap ? sv->cap * 2 : 16;
		if (!(v = realloc(sv->v, cap * sizeof(*v))))
			return -1;
		sv->v = v;
		sv->cap = cap;
	}
	if (!(copy = malloc(n + 1)))
		return -1;
	memcpy(copy, s, n);
	copy[n] = '\0';
	sv->v[sv->n++] = copy;
	sv->v[sv->n] = NULL;
	return 0;
}

int
corral_strv_add(struct corral_strv *sv, const char *s)
{
	return corral_strv_addn(sv, s, strlen(s));
}

void
corral_strv_release(struct corral_strv *sv)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
corral_strv_sort_unique(struct corral_strv *sv)
{
	size_t i, j;

	if (sv->n < 2)
		return;
	qsort(sv->v, sv->n, sizeof(*sv->v), cmp_str);
	for (i = j = 1; i < sv->n; i++) {
		if (!strcmp(sv->v[i], sv->v[j - 1]))
			free(sv->v[i]);
		else
			sv->v[j++] = sv->v[i];
	}
	sv->n = j;
	sv->v[j] = NULL;
}

int
corral_strv_has(const struct corral_strv *sv, const char *s)
{
	size_t i;

	for (i = 0; sv && i < sv->n; i++)
		if (!strcmp(sv->v[i], s))
			return 1;
	return 0;
}

int
corral_strv_json(struct corral_buf *b, const struct corral_strv *sv)
{
	size_t i;
	int rc = corral_buf_addch(b, '[');

	for (i = 0; i < sv->n; i++) {
		if (i)
			rc |= corral_buf_addch(b, ',');
		rc |= corral_buf_addjson(b, sv->v[i], strlen(sv->v[i]));
	}
	return rc | corral_buf_addch(b, ']');
}

int
corral_words(const char *text, struct corral_strv *words)
{
	static const char sep[] = " \t\n";
	size_t n;

	for (; *text; text += n) {
		text += strspn(text, sep);
		if ((n = strcspn(text, sep)) && corral_strv_addn(words, text,
		    n) < 0)
			return -1;
	}
	return 0;
}
