/* See LICENSE file for copyright and license details. */
/*
 * record.c writes one result record as one JSON line.  Keys come in a fixed
 * order with the original's five first, so two equal records are equal
 * bytes and a merge can pass lines through untouched.  "stray" is written
 * only when a unit left processes running.
 */
#include <stdio.h>
#include <string.h>

#include "corral.h"

/* "key": after the '{' or a ',' -- whichever the record needs next. */
static int
add_key(struct corral_buf *b, const char *key)
{
	if (b->len && b->data[b->len - 1] != '{' &&
	    corral_buf_addch(b, ',') < 0)
		return -1;
	return corral_buf_addf(b, "\"%s\":", key);
}

static int
add_str(struct corral_buf *b, const char *key, const char *val)
{
	if (add_key(b, key) < 0)
		return -1;
	if (!val)
		return corral_buf_addstr(b, "null");
	return corral_buf_addjson(b, val, strlen(val));
}

static int
add_int(struct corral_buf *b, const char *key, long long val)
{
	if (add_key(b, key) < 0)
		return -1;
	if (val < 0)
		return corral_buf_addstr(b, "null");
	return corral_buf_addf(b, "%lld", val);
}

int
corral_record_format(struct corral_buf *b, const struct corral_record *r)
{
	if (corral_buf_addch(b, '{') < 0 ||
	    add_str(b, "agent_id", r->agent_id) < 0 ||
	    add_str(b, "unit", r->unit) < 0 ||
	    add_key(b, "ok") < 0 ||
	    corral_buf_addstr(b, r->ok ? "true" : "false") < 0 ||
	    add_str(b, "note", r->note) < 0 ||
	    add_str(b, "at", r->at) < 0 ||
	    add_str(b, "status", r->status) < 0 ||
	    add_int(b, "exit", r->exit_code) < 0 ||
	    add_str(b, "signal", r->signal) < 0 ||
	    add_int(b, "duration_ms", r->duration_ms) < 0 ||
	    add_int(b, "attempt", r->attempt) < 0 ||
	    add_str(b, "run", r->run) < 0 ||
	    add_str(b, "output", r->output) < 0 ||
	    add_str(b, "inputs", r->inputs) < 0 ||
	    (r->stray > 0 && add_int(b, "stray", r->stray) < 0))
		return -1;
	return corral_buf_addstr(b, "}\n");
}
