/* See LICENSE file for copyright and license details. */
/*
 * fpset.c is an open-addressing table of 64-bit fingerprints, each with a
 * 32-bit value: 12 bytes a slot and no key kept, so that the merge's index
 * of units (expected or recorded) costs 16 to 24 bytes a unit however long
 * the names are.  A fingerprint is not a key: two keys may share one, so
 * the table holds several values under one fingerprint and the caller,
 * walking them with corral_fpset_next, settles which (if any) is its key
 * by what the value points at.  Correctness never rests on the hash, only the speed does.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

struct corral_fpset {
	uint64_t *fps;		/* 0: an empty slot */
	uint32_t *vals;
	size_t cap;		/* a power of two */
	size_t n;
};

/* A multiply-and-fold step over one word of the key. */
static uint64_t
mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 32);
}

/*
 * Eight bytes at a time (the last word padded with zeros, and the length
 * folded in, so that "a" and "a\0" differ), then murmur3's finaliser to
 * spread the low bits, which pick the slot.
 */
uint64_t
corral_fingerprint(const char *key, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ len, w;
	size_t i;

	for (i = 0; len - i >= 8; i += 8) {
		memcpy(&w, key + i, 8);
		h = mix(h, w);
	}
	if (i < len) {
		w = 0;
		memcpy(&w, key + i, len - i);
		h = mix(h, w);
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h ? h : 1;
}

static int
alloc_slots(struct corral_fpset *s, size_t cap)
{
	if (!(s->fps = calloc(cap, sizeof(*s->fps))))
		return -1;
	if (!(s->vals = malloc(cap * sizeof(*s->vals)))) {
		free(s->fps);
		return -1;
	}
	s->cap = cap;
	return 0;
}

struct corral_fpset *
corral_fpset_new(void)
{
	struct corral_fpset *s;

	if (!(s = calloc(1, sizeof(*s))))
		return NULL;
	if (alloc_slots(s, 64) < 0) {
		free(s);
		return NULL;
	}
	return s;
}

void
corral_fpset_free(struct corral_fpset *s)
{
	if (!s)
		return;
	free(s->fps);
	free(s->vals);
	free(s);
}

/* The first empty slot on fp's probe path. */
static size_t
empty_slot(const struct corral_fpset *s, uint64_t fp)
{
	size_t i = (size_t)fp & (s->cap - 1);

	while (s->fps[i])
		i = (i + 1) & (s->cap - 1);
	return i;
}

static int
grow(struct corral_fpset *s)
{
	struct corral_fpset big;
	size_t i, j;

	if (alloc_slots(&big, s->cap * 2) < 0)
		return -1;
	for (i = 0; i < s->cap; i++) {
		if (!s->fps[i])
			continue;
		j = empty_slot(&big, s->fps[i]);
		big.fps[j] = s->fps[i];
		big.vals[j] = s->vals[i];
	}
	free(s->fps);
	free(s->vals);
	s->fps = big.fps;
	s->vals = big.vals;
	s->cap = big.cap;
	return 0;
}

int
corral_fpset_add(struct corral_fpset *s, uint64_t fp, uint32_t value)
{
	size_t i;

	if ((s->n + 1) * 4 > s->cap * 3 && grow(s) < 0)
		return -1;
	i = empty_slot(s, fp);
	s->fps[i] = fp;
	s->vals[i] = value;
	s->n++;
	return 0;
}

uint32_t *
corral_fpset_next(const struct corral_fpset *s, uint64_t fp, size_t *pos)
{
	size_t i = ((size_t)fp + *pos) & (s->cap - 1);

	for (; s->fps[i]; i = (i + 1) & (s->cap - 1)) {
		++*pos;
		if (s->fps[i] == fp)
			return &s->vals[i];
	}
	return NULL;
}

void
corral_fpset_prefetch(const struct corral_fpset *s, uint64_t fp)
{
#if defined(__GNUC__)
	__builtin_prefetch(&s->fps[(size_t)fp & (s->cap - 1)]);
#else
	(void)s;
	(void)fp;
#endif
}

uint32_t *
corral_fpset_each(const struct corral_fpset *s, size_t *pos)
{
	for (; *pos < s->cap; ++*pos)
		if (s->fps[*pos])
			return &s->vals[(*pos)++];
	return NULL;
}

size_t
corral_fpset_size(const struct corral_fpset *s)
{
	return s->n;
}
