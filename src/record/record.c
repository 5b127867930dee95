/* See LICENSE file for copyright and license details. */
/*
 * record.c writes one result record as one JSON line, and reads one back
 * (corral_json_record_parse, below, with the history's commit lines).
 * Keys come in a fixed order with the original's five first, so two equal
 * records are equal bytes and a merge can pass lines through untouched.
 * "stray" is written only when a unit left processes running, "reads"
 * only when the agent learned which files of the tree the unit opened,
 * "tries" only after a retry (the attempts before this one: the merge
 * keeps a unit's last line only), "checkout" only on the first unit an
 * agent finishes (how long its clone took, for a run's timeline), "host"
 * when the agent was told where it ran (the merge's own not-run records
 * know no host).
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
#define _GNU_SOURCE	/* memmem */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "base/json.h"
#include "record/record.h"

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

static int
add_strs(struct corral_buf *b, const char *key, const struct corral_strv *sv)
{
	size_t i;

	if (add_key(b, key) < 0 || corral_buf_addch(b, '[') < 0)
		return -1;
	for (i = 0; i < sv->n; i++)
		if ((i && corral_buf_addch(b, ',') < 0) ||
		    corral_buf_addjson(b, sv->v[i], strlen(sv->v[i])) < 0)
			return -1;
	return corral_buf_addch(b, ']');
}

/* "tests": what the unit's TAP said. */
static int
add_tests(struct corral_buf *b, const struct corral_tap *t)
{
	int rc = add_key(b, "tests");

	rc |= corral_buf_addf(b, "{\"total\":%zu,\"passed\":%zu,"
	    "\"failed\":%zu,\"skipped\":%zu", t->tests, t->tests -
	    t->failed - t->skipped, t->failed, t->skipped);
	rc |= add_int(b, "planned", t->plan);
	rc |= add_strs(b, "failed_names", &t->failures);
	return rc | corral_buf_addch(b, '}');
}

/* "key":{"at":..,"duration_ms":..[,"status":..,"exit":..]} */
static int
add_span(struct corral_buf *b, const char *key,
    const struct corral_record_try *t, int attempt)
{
	if ((key && add_key(b, key) < 0) || corral_buf_addch(b, '{') < 0 ||
	    add_str(b, "at", t->at) < 0 ||
	    add_int(b, "duration_ms", t->duration_ms) < 0 ||
	    (attempt && (add_str(b, "status", t->status) < 0 ||
	    add_int(b, "exit", t->exit_code) < 0)))
		return -1;
	return corral_buf_addch(b, '}');
}

static int
add_tries(struct corral_buf *b, const struct corral_record *r)
{
	size_t i;

	if (add_key(b, "tries") < 0 || corral_buf_addch(b, '[') < 0)
		return -1;
	for (i = 0; i < r->ntries; i++)
		if ((i && corral_buf_addch(b, ',') < 0) ||
		    add_span(b, NULL, &r->tries[i], 1) < 0)
			return -1;
	return corral_buf_addch(b, ']');
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
	    (r->stray > 0 && add_int(b, "stray", r->stray) < 0) ||
	    (r->reads && add_strs(b, "reads", r->reads) < 0) ||
	    (r->tap && corral_tap_found(r->tap) && add_tests(b, r->tap) < 0) ||
	    (r->ntries && add_tries(b, r) < 0) ||
	    (r->host && add_str(b, "host", r->host) < 0))
		return -1;
	if (r->checkout_at) {
		struct corral_record_try c = { r->checkout_at, r->checkout_ms,
		    NULL, -1 };

		if (add_span(b, "checkout", &c, 0) < 0)
			return -1;
	}
	if (r->cached && (add_key(b, "cached") < 0 ||
	    corral_buf_addch(b, '{') < 0 ||
	    add_str(b, "run", r->cached->run) < 0 ||
	    add_str(b, "host", r->cached->host) < 0 ||
	    add_str(b, "at", r->cached->at) < 0 ||
	    add_str(b, "key", r->cached->key) < 0 ||
	    corral_buf_addch(b, '}') < 0))
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
	if (corral_sha256_peek(&k->seal.sha, c->sha256, err) < 0)
		return -1;
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

/* ------------------------------------------------------------------ */
/* Reading a record line                                               */

/*
 * A log line is exactly one record: a single JSON object with a string
 * "unit" and a boolean "ok", and nothing before or after it on the line.
 * Nothing here re-serialises but corral_json_record_flaky; callers pass
 * the line through byte for byte.
 */

/*
 * The members a record is read for, in one pass over its object: looking
 * each up by name would walk the object once per field, which is most of
 * a merge's time on a large log.  As cJSON_GetObjectItemCaseSensitive
 * would, a repeated key yields its first value.
 */
enum {
	FLD_UNIT, FLD_OK, FLD_STATUS, FLD_RUN, FLD_AT, FLD_NOTE, FLD_OUTPUT,
	FLD_INPUTS, FLD_AGENT_ID, FLD_SIGNAL, FLD_DURATION_MS, FLD_EXIT,
	FLD_ATTEMPT, FLD_READS, FLD_TESTS, FLD_HOST, FLD_CACHED, NFIELDS
};

static const char *const field_name[NFIELDS] = {
	"unit", "ok", "status", "run", "at", "note", "output", "inputs",
	"agent_id", "signal", "duration_ms", "exit", "attempt", "reads",
	"tests", "host", "cached"
};

static int
field_of(const char *key)
{
	int i;

	for (i = 0; key && i < NFIELDS; i++)
		if (key[0] == field_name[i][0] && !strcmp(key, field_name[i]))
			return i;
	return -1;
}

/* 0 when the one member named key has the wanted type, else -1 + err. */
static int
check_member(const cJSON *v, int n, const char *key, int want_bool,
    struct corral_err *err)
{
	const char *type = want_bool ? "a boolean" : "a string";

	if (!v)
		return corral_err_set(err, 0, "\"%s\" is missing", key);
	if (n > 1)
		return corral_err_set(err, 0, "\"%s\" appears more than once",
		    key);
	if (want_bool ? !cJSON_IsBool(v) : !cJSON_IsString(v))
		return corral_err_set(err, 0, "\"%s\" is not %s", key, type);
	return 0;
}

/*
 * Where the JSON string opening at s[i] ends (the index after its closing
 * quote); *nul is set when it holds the escape of a NUL, "\u0000".
 */
static size_t
string_end(const char *s, size_t len, size_t i, int *nul)
{
	for (i++; i < len && s[i] != '"'; i++) {
		if (s[i] != '\\')
			continue;
		if (len - i > 5 && !memcmp(s + i + 1, "u0000", 5))
			*nul = 1;
		i++;
	}
	return i + 1;
}

/* The refusal of a NUL in the string line[i..e), a key or key's value. */
static int
nul_refused(const char *key, const char *line, size_t i, size_t e,
    struct corral_err *err)
{
	int n = (int)(e - i);

	if (!key)
		return corral_err_set(err, 0, "the key %.*s holds a NUL byte",
		    n, line + i);
	return corral_err_set(err, 0, "\"%s\" holds a NUL byte: %.*s", key, n,
	    line + i);
}

/*
 * cJSON ends a string at an escaped NUL, so "c\u0000zz" would read as
 * "c": such a name is refused instead of folded into another.  Scans the
 * valid JSON line[0..len) of the object doc for a top-level key holding a
 * NUL, or a value holding one under a member the merge reads as a name
 * (free text, "note", "output" and the test names, may hold one).  -1
 * with err naming it ("\"unit\" holds a NUL byte: \"c\\u0000zz\""), else 0.
 */
static int
check_nuls(const cJSON *doc, const char *line, size_t len,
    struct corral_err *err)
{
	const char *bs = memchr(line, '\\', len);
	const cJSON *m = NULL;
	size_t i, e;
	int depth = 0, want_key = 0, nul, f;

	if (!bs || !memmem(bs, len - (size_t)(bs - line), "\\u0000", 6))
		return 0;
	for (i = 0; i < len; i++) {
		if (line[i] == '{' || line[i] == '[')
			want_key = ++depth == 1;
		else if (line[i] == '}' || line[i] == ']')
			depth--;
		else if (line[i] == ',' && depth == 1)
			want_key = 1;
		if (line[i] != '"')
			continue;
		nul = 0;
		e = string_end(line, len, i, &nul);
		if (depth == 1 && want_key) {
			m = m ? m->next : doc->child;
			want_key = 0;
			if (nul)
				return nul_refused(NULL, line, i, e, err);
		} else if (nul && m && (f = field_of(m->string)) >= 0 &&
		    f != FLD_NOTE && f != FLD_OUTPUT && f != FLD_TESTS) {
			return nul_refused(m->string, line, i, e, err);
		}
		i = e - 1;
	}
	return 0;
}

/* The counts of "tests", when it is an object with a number "total". */
static void
read_tests(struct corral_json_record *r, const cJSON *t)
{
	const cJSON *names;

	r->tests = r->tests_failed = r->tests_skipped = -1;
	if (!cJSON_IsObject(t) || (r->tests = cj_get_int(t, "total")) < 0)
		return;
	r->tests_failed = cj_get_int(t, "failed");
	r->tests_skipped = cj_get_int(t, "skipped");
	names = cJSON_GetObjectItemCaseSensitive(t, "failed_names");
	r->failed_names = cJSON_IsArray(names) ? names : NULL;
}

const char *
corral_json_record_failed_name(const struct corral_json_record *r, size_t i)
{
	const cJSON *v;

	if (!r->failed_names)
		return NULL;
	for (v = ((const cJSON *)r->failed_names)->child; v && i; v = v->next)
		i--;
	return v ? cj_str(v) ? cj_str(v) : "" : NULL;
}

int
corral_json_record_parse(const char *line, size_t len,
    struct corral_json_record *r, struct corral_err *err)
{
	const cJSON *v[NFIELDS] = { 0 }, *m;
	int seen[2] = { 0, 0 }, f;
	cJSON *doc;

	memset(r, 0, sizeof(*r));
	if (!(doc = cj_object_line(line, len, err)))
		return -1;
	cJSON_ArrayForEach(m, doc) {
		if ((f = field_of(m->string)) < 0)
			continue;
		if (f <= FLD_OK)
			seen[f]++;
		if (!v[f])
			v[f] = m;
	}
	if (check_member(v[FLD_UNIT], seen[FLD_UNIT], "unit", 0, err) < 0 ||
	    check_member(v[FLD_OK], seen[FLD_OK], "ok", 1, err) < 0)
		goto fail;
	if (check_nuls(doc, line, len, err) < 0)
		goto fail;
	r->unit = v[FLD_UNIT]->valuestring;
	if (!*r->unit) {
		corral_err_set(err, 0, "\"unit\" is empty");
		goto fail;
	}
	r->ok = cJSON_IsTrue(v[FLD_OK]);
	r->status = cj_str(v[FLD_STATUS]);
	r->run = cj_str(v[FLD_RUN]);
	r->at = cj_str(v[FLD_AT]);
	r->note = cj_str(v[FLD_NOTE]);
	r->output = cj_str(v[FLD_OUTPUT]);
	r->inputs = cj_str(v[FLD_INPUTS]);
	r->agent_id = cj_str(v[FLD_AGENT_ID]);
	r->signal = cj_str(v[FLD_SIGNAL]);
	r->host = cj_str(v[FLD_HOST]);
	r->duration_ms = cj_int(v[FLD_DURATION_MS]);
	r->exit_code = cj_int(v[FLD_EXIT]);
	r->attempt = cj_int(v[FLD_ATTEMPT]);
	r->reads = cJSON_IsArray(v[FLD_READS]) ? v[FLD_READS] : NULL;
	r->cached = cJSON_IsObject(v[FLD_CACHED]);
	read_tests(r, v[FLD_TESTS]);
	r->doc = doc;
	return 0;
fail:
	cJSON_Delete(doc);
	memset(r, 0, sizeof(*r));
	return -1;
}

int
corral_json_record_reads(const struct corral_json_record *r,
    struct corral_strv *reads)
{
	const cJSON *e;

	if (!r->reads)
		return 0;
	cJSON_ArrayForEach(e, (const cJSON *)r->reads)
		if (cJSON_IsString(e) && *e->valuestring &&
		    corral_strv_add(reads, e->valuestring) < 0)
			return -1;
	return 1;
}

static void
span_of(const cJSON *o, struct corral_record_try *t)
{
	t->at = cj_get_str(o, "at");
	t->duration_ms = cj_get_int(o, "duration_ms");
	t->status = cj_get_str(o, "status");
	t->exit_code = cj_get_int(o, "exit");
}

int
corral_json_record_tries(const struct corral_json_record *r,
    struct corral_record_try **v, size_t *n)
{
	const cJSON *a = r->doc ? cJSON_GetObjectItemCaseSensitive(r->doc,
	    "tries") : NULL, *e;
	int k = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;

	*v = NULL;
	*n = 0;
	if (k <= 0)
		return 0;
	if (!(*v = calloc((size_t)k, sizeof(**v))))
		return -1;
	cJSON_ArrayForEach(e, a) {
		span_of(e, &(*v)[*n]);
		if ((*v)[*n].at)
			++*n;
	}
	return 0;
}

int
corral_json_record_checkout(const struct corral_json_record *r,
    struct corral_record_try *c)
{
	const cJSON *o = r->doc ? cJSON_GetObjectItemCaseSensitive(r->doc,
	    "checkout") : NULL;

	if (!cJSON_IsObject(o))
		return 0;
	span_of(o, c);
	c->status = NULL;
	c->exit_code = -1;
	return c->at != NULL;
}

const char *
corral_json_record_str(const struct corral_json_record *r, const char *key)
{
	return r->doc ? cj_get_str(r->doc, key) : NULL;
}

const char *
corral_json_record_cached(const struct corral_json_record *r, const char *key)
{
	const cJSON *o = r->doc ? cJSON_GetObjectItemCaseSensitive(r->doc,
	    "cached") : NULL;

	return cJSON_IsObject(o) ? cj_get_str(o, key) : NULL;
}

void
corral_json_record_release(struct corral_json_record *r)
{
	cJSON_Delete(r->doc);
	memset(r, 0, sizeof(*r));
}

int
corral_json_commit_parse(const char *line, size_t len,
    struct corral_buf *run)
{
	const char *mark, *rid;
	cJSON *doc;
	int rc = 0;

	if (len < 10 || memcmp(line, "{\"corral\":", 10))
		return 0;
	if (!(doc = cj_parse_line(line, len, NULL)))
		return 0;
	mark = cj_get_str(doc, "corral");
	rid = cj_get_str(doc, "run");
	if (mark && !strcmp(mark, "history") && rid &&
	    cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(doc, "records"))) {
		corral_buf_reset(run);
		rc = corral_buf_addstr(run, rid) < 0 ? -1 : 1;
	}
	cJSON_Delete(doc);
	return rc;
}

/* Replace the string member key of obj, in place, keeping key order. */
static int
set_str(cJSON *obj, const char *key, const char *val)
{
	cJSON *v = cJSON_CreateString(val);

	if (!v)
		return -1;
	if (cJSON_GetObjectItemCaseSensitive(obj, key))
		return cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v) ?
		    0 : (cJSON_Delete(v), -1);
	return cJSON_AddItemToObject(obj, key, v) ? 0 : (cJSON_Delete(v), -1);
}

int
corral_json_record_flaky(const char *line, size_t len, struct corral_buf *out)
{
	struct corral_buf note = CORRAL_BUF_INIT;
	const char *old;
	cJSON *doc;
	char *text = NULL;
	int rc = -1;

	if (!(doc = cj_parse_line(line, len, NULL)))
		return -1;
	old = cj_get_str(doc, "note");
	if (corral_buf_addstr(&note, "FLAKY: passed after failing on the "
	    "same inputs") < 0 || (old && (corral_buf_addstr(&note, " (") < 0 ||
	    corral_buf_addstr(&note, old) < 0 || corral_buf_addch(&note,
	    ')') < 0)))
		goto out;
	if (set_str(doc, "status", "flaky") < 0 ||
	    set_str(doc, "note", note.data) < 0 ||
	    !(text = cJSON_PrintUnformatted(doc)))
		goto out;
	rc = corral_buf_addstr(out, text);
out:
	cJSON_free(text);
	cJSON_Delete(doc);
	corral_buf_release(&note);
	return rc;
}
