/* See LICENSE file for copyright and license details. */
/*
 * record.c writes one result record as one JSON line.  Keys come in a fixed
 * order with the original's five first, so two equal records are equal
 * bytes and a merge can pass lines through untouched.  "stray" is written
 * only when a unit left processes running.
 *
 * It also seals an agent's log.  A seal is one line,
 * {"corral_seal":{"records":N,"sha256":"HEX"}}, where N counts the record
 * lines before it and HEX is the SHA-256 of their bytes, newlines
 * included, other seal lines left out.  A finished log ends with one; the
 * checkpoint of an unfinished slice (its .part) has one after every unit,
 * so each seal also vouches for the ones before it.  A seal is written in
 * exactly one form, so checking one is comparing bytes: any other line
 * that starts like a seal breaks the chain.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* ------------------------------------------------------------------ */
/* seals                                                                */

static const char seal_head[] = "{\"corral_seal\":";

int
corral_seal_is(const char *line, size_t len)
{
	return len >= sizeof(seal_head) - 1 &&
	    !memcmp(line, seal_head, sizeof(seal_head) - 1);
}

int
corral_seal_init(struct corral_seal *s, struct corral_err *err)
{
	s->records = 0;
	return corral_sha256_init(&s->sha, err);
}

int
corral_seal_add(struct corral_seal *s, const char *line, size_t n,
    struct corral_err *err)
{
	if (corral_sha256_add(&s->sha, line, n, err) < 0)
		return -1;
	s->records++;
	return 0;
}

int
corral_seal_format(const struct corral_seal *s, struct corral_buf *b,
    struct corral_err *err)
{
	char hex[CORRAL_SHA256_HEX];

	if (corral_sha256_peek(&s->sha, hex, err) < 0)
		return -1;
	if (corral_buf_addf(b, "%s{\"records\":%zu,\"sha256\":\"%s\"}}\n",
	    seal_head, s->records, hex) < 0)
		return corral_err_set(err, ENOMEM, "cannot seal the log");
	return 0;
}

void
corral_seal_release(struct corral_seal *s)
{
	corral_sha256_release(&s->sha);
}

/* A log being checked, one line at a time. */
struct checking {
	struct corral_seal seal;	/* of the record lines so far */
	struct corral_seal_check *c;
	struct corral_buf line;		/* the line being read, with '\n' */
	struct corral_buf want;		/* the seal that would match */
	struct corral_buf *keep;	/* gets the record lines, or NULL */
	size_t kept;			/* keep->len at the last good seal */
	off_t off;			/* bytes up to the line */
};

/* One whole line, '\n' included.  0, or -1 with err set. */
static int
check_line(struct checking *k, struct corral_err *err)
{
	struct corral_seal_check *c = k->c;
	const char *p = k->line.data;
	size_t n = k->line.len;

	c->lines++;
	c->sealed = 0;
	k->off += (off_t)n;
	if (!corral_seal_is(p, n)) {
		if (corral_seal_add(&k->seal, p, n, err) < 0)
			return -1;
		if (k->keep && corral_buf_add(k->keep, p, n) < 0)
			return corral_err_set(err, ENOMEM, "cannot check a seal");
		return 0;
	}
	corral_buf_reset(&k->want);
	if (corral_seal_format(&k->seal, &k->want, err) < 0)
		return -1;
	if (n != k->want.len || memcmp(p, k->want.data, n)) {
		c->broken = c->lines;
		return 0;
	}
	c->sealed = 1;
	c->seals++;
	c->seal_line = c->lines;
	c->records = k->seal.records;
	c->end = k->off;
	if (k->keep)
		k->kept = k->keep->len;
	return 0;
}

/* Split chunk[0..n) into lines, checking each whole one. */
static int
check_chunk(struct checking *k, const char *chunk, size_t n,
    struct corral_err *err)
{
	const char *nl;
	size_t part;

	while (n && !k->c->broken) {
		nl = memchr(chunk, '\n', n);
		part = nl ? (size_t)(nl - chunk) + 1 : n;
		if (corral_buf_add(&k->line, chunk, part) < 0)
			return corral_err_set(err, ENOMEM, "cannot check a seal");
		chunk += part;
		n -= part;
		if (!nl)
			break;
		if (check_line(k, err) < 0)
			return -1;
		corral_buf_reset(&k->line);
	}
	return 0;
}

int
corral_seal_check_fd(int fd, const char *path, struct corral_seal_check *c,
    struct corral_buf *keep, struct corral_err *err)
{
	struct checking k;
	char chunk[65536];
	ssize_t n;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	memset(&k, 0, sizeof(k));
	k.c = c;
	k.keep = keep;
	k.kept = keep ? keep->len : 0;
	if (corral_seal_init(&k.seal, err) < 0)
		goto out;
	while (!c->broken) {
		n = pread(fd, chunk, sizeof(chunk), k.off + (off_t)k.line.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			corral_err_set(err, errno, "cannot read '%s'", path);
			goto out;
		}
		if (n == 0)
			break;
		if (check_chunk(&k, chunk, (size_t)n, err) < 0)
			goto out;
	}
	if (!c->broken && k.line.len) {		/* a torn last line */
		c->lines++;
		c->sealed = 0;
	}
	rc = 0;
out:
	if (keep)
		keep->len = k.kept;
	corral_seal_release(&k.seal);
	corral_buf_release(&k.line);
	corral_buf_release(&k.want);
	return rc;
}
