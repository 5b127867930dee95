/* ring.c -- the lengths of the last RING_SIZE notes. */
#include "notes.h"

void
ring_clear(struct ring *r)
{
	int i;

	for (i = 0; i < RING_SIZE; i++)
		r->len[i] = 0;
	r->next = 0;
	r->used = 0;
}

void
ring_push(struct ring *r, int v)
{
	r->len[r->next] = v;
	r->next = (r->next + 1) % RING_SIZE;
	if (r->used < RING_SIZE)
		r->used++;
}
