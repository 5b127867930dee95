/* See LICENSE file for copyright and license details. */
/*
 * set.c is an open-addressing hash set of strings, each with a long value.
 * It is how the merge knows, in memory proportional to the population and
 * not to the log bytes, which units it has seen and where.  A key is its
 * whole length: two keys are one only when every byte is the same, so no
 * name is ever taken for its own prefix.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

struct slot {
	char *key;	/* NULL: empty; NUL-terminated after len bytes */
	size_t len;
	long value;
	uint64_t hash;
};

struct corral_set {
	struct slot *slots;
	size_t cap;	/* a power of two */
	size_t n;
};

/* FNV-1a, 64-bit: short, and good enough for unit names. */
static uint64_t
hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	while (n-- > 0) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ULL;
	}
	return h;
}

struct corral_set *
corral_set_new(void)
{
	struct corral_set *s;

	if (!(s = calloc(1, sizeof(*s))))
		return NULL;
	s->cap = 64;
	if (!(s->slots = calloc(s->cap, sizeof(*s->slots)))) {
		free(s);
		return NULL;
	}
	return s;
}

void
corral_set_free(struct corral_set *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->cap; i++)
		free(s->slots[i].key);
	free(s->slots);
	free(s);
}

static struct slot *
find(const struct corral_set *s, const char *key, size_t len, uint64_t h)
{
	size_t i = (size_t)h & (s->cap - 1);
	const struct slot *sl;

	while ((sl = &s->slots[i])->key) {
		if (sl->hash == h && sl->len == len &&
		    !memcmp(sl->key, key, len))
			return &s->slots[i];
		i = (i + 1) & (s->cap - 1);
	}
	return &s->slots[i];
}

static int
rehash(struct corral_set *s)
{
	struct corral_set big;
	struct slot *dst;
	size_t i;

	big.cap = s->cap * 2;
	big.n = s->n;
	if (!(big.slots = calloc(big.cap, sizeof(*big.slots))))
		return -1;
	for (i = 0; i < s->cap; i++) {
		if (!s->slots[i].key)
			continue;
		dst = find(&big, s->slots[i].key, s->slots[i].len,
		    s->slots[i].hash);
		*dst = s->slots[i];
	}
	free(s->slots);
	*s = big;
	return 0;
}

int
corral_set_putn(struct corral_set *s, const char *key, size_t len,
    long value, long **vp)
{
	uint64_t h = hash_bytes(key, len);
	struct slot *sl;

	if ((s->n + 1) * 4 > s->cap * 3 && rehash(s) < 0)
		return -1;
	sl = find(s, key, len, h);
	if (sl->key) {
		if (vp)
			*vp = &sl->value;
		return 0;
	}
	if (!(sl->key = malloc(len + 1)))
		return -1;
	memcpy(sl->key, key, len);
	sl->key[len] = '\0';
	sl->len = len;
	sl->hash = h;
	sl->value = value;
	s->n++;
	if (vp)
		*vp = &sl->value;
	return 1;
}

int
corral_set_put(struct corral_set *s, const char *key, long value, long **vp)
{
	return corral_set_putn(s, key, strlen(key), value, vp);
}

long *
corral_set_getn(const struct corral_set *s, const char *key, size_t len)
{
	struct slot *sl = find(s, key, len, hash_bytes(key, len));

	return sl->key ? &sl->value : NULL;
}

long *
corral_set_get(const struct corral_set *s, const char *key)
{
	return corral_set_getn(s, key, strlen(key));
}

size_t
corral_set_size(const struct corral_set *s)
{
	return s->n;
}
