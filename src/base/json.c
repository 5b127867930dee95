/* See LICENSE file for copyright and license details. */
/*
 * json.c is the one module that speaks cJSON.  It checks that one log line
 * is exactly one record: a single JSON object with a string "unit" and a
 * boolean "ok", and nothing before or after it on the line (RELIABILITY
 * 2.1: a torn or glued line must be rejected, never half-accepted).  It
 * never re-serialises; callers pass the line through byte for byte.  Its
 * second half reads the formats of the repair half (findings, attempt
 * results, bundle manifests, journals) into plain structs.
 */
#define _GNU_SOURCE	/* memmem */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "corral.h"

/* v's string, or NULL when v is absent or not a string. */
static const char *
str_of(const cJSON *v)
{
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* v's value as a non-negative integer, or -1. */
static long long
int_of(const cJSON *v)
{
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) ||
	    v->valuedouble > 9e15)
		return -1;
	return (long long)v->valuedouble;
}

/* The string value of key in obj, or NULL when absent or not a string. */
static const char *
get_str(const cJSON *obj, const char *key)
{
	return str_of(cJSON_GetObjectItemCaseSensitive(obj, key));
}

/* The non-negative integer value of key in obj, or -1. */
static long long
get_int(const cJSON *obj, const char *key)
{
	return int_of(cJSON_GetObjectItemCaseSensitive(obj, key));
}

/*
 * Parse line[0..len) with line[len] == '\0'.  Passing len + 1 puts the NUL
 * inside the buffer, and requiring it to end the value rejects "{..}{..}"
 * and "{..} garbage" (plain cJSON_ParseWithLength accepts both).
 */
static cJSON *
parse_line(const char *line, size_t len, struct corral_err *err)
{
	const char *end = NULL;
	cJSON *doc;

	if (memchr(line, '\0', len)) {
		corral_err_set(err, 0, "NUL byte at byte %zu",
		    (size_t)((const char *)memchr(line, '\0', len) - line) + 1);
		return NULL;
	}
	doc = cJSON_ParseWithLengthOpts(line, len + 1, &end, 1);
	if (!doc) {
		if (!end || end < line || end > line + len)
			end = line + len;
		corral_err_set(err, 0, "invalid JSON at byte %zu",
		    (size_t)(end - line) + 1);
	}
	return doc;
}

/*
 * The members a record is read for, in one pass over its object: looking
 * each up by name would walk the object once per field, which is most of
 * a merge's time on a large log.  As cJSON_GetObjectItemCaseSensitive
 * would, a repeated key yields its first value.
 */
enum {
	F_UNIT, F_OK, F_STATUS, F_RUN, F_AT, F_NOTE, F_OUTPUT, F_INPUTS,
	F_AGENT_ID, F_SIGNAL, F_DURATION_MS, F_EXIT, F_ATTEMPT, NFIELDS
};

static const char *const field_name[NFIELDS] = {
	"unit", "ok", "status", "run", "at", "note", "output", "inputs",
	"agent_id", "signal", "duration_ms", "exit", "attempt"
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
 * (free text, "note" and "output", may hold one).  -1 with err naming
 * it ("\"unit\" holds a NUL byte: \"c\\u0000zz\""), else 0.
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
		    f != F_NOTE && f != F_OUTPUT) {
			return nul_refused(m->string, line, i, e, err);
		}
		i = e - 1;
	}
	return 0;
}

int
corral_json_record_parse(const char *line, size_t len,
    struct corral_json_record *r, struct corral_err *err)
{
	const cJSON *v[NFIELDS] = { 0 }, *m;
	int seen[2] = { 0, 0 }, f;
	cJSON *doc;

	memset(r, 0, sizeof(*r));
	if (!(doc = parse_line(line, len, err)))
		return -1;
	if (!cJSON_IsObject(doc)) {
		corral_err_set(err, 0, "not a JSON object");
		goto fail;
	}
	cJSON_ArrayForEach(m, doc) {
		if ((f = field_of(m->string)) < 0)
			continue;
		if (f <= F_OK)
			seen[f]++;
		if (!v[f])
			v[f] = m;
	}
	if (check_member(v[F_UNIT], seen[F_UNIT], "unit", 0, err) < 0 ||
	    check_member(v[F_OK], seen[F_OK], "ok", 1, err) < 0)
		goto fail;
	if (check_nuls(doc, line, len, err) < 0)
		goto fail;
	r->unit = v[F_UNIT]->valuestring;
	if (!*r->unit) {
		corral_err_set(err, 0, "\"unit\" is empty");
		goto fail;
	}
	r->ok = cJSON_IsTrue(v[F_OK]);
	r->status = str_of(v[F_STATUS]);
	r->run = str_of(v[F_RUN]);
	r->at = str_of(v[F_AT]);
	r->note = str_of(v[F_NOTE]);
	r->output = str_of(v[F_OUTPUT]);
	r->inputs = str_of(v[F_INPUTS]);
	r->agent_id = str_of(v[F_AGENT_ID]);
	r->signal = str_of(v[F_SIGNAL]);
	r->duration_ms = int_of(v[F_DURATION_MS]);
	r->exit_code = int_of(v[F_EXIT]);
	r->attempt = int_of(v[F_ATTEMPT]);
	r->doc = doc;
	return 0;
fail:
	cJSON_Delete(doc);
	memset(r, 0, sizeof(*r));
	return -1;
}

void
corral_json_record_release(struct corral_json_record *r)
{
	cJSON_Delete(r->doc);
	memset(r, 0, sizeof(*r));
}

int
corral_json_obj_parse(const char *line, size_t len, struct corral_json_obj *o,
    struct corral_err *err)
{
	cJSON *doc;

	o->doc = NULL;
	if (!(doc = parse_line(line, len, err)))
		return -1;
	if (!cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		return corral_err_set(err, 0, "not a JSON object");
	}
	o->doc = doc;
	return 0;
}

const char *
corral_json_obj_str(const struct corral_json_obj *o, const char *key)
{
	return get_str(o->doc, key);
}

long long
corral_json_obj_int(const struct corral_json_obj *o, const char *key)
{
	return get_int(o->doc, key);
}

void
corral_json_obj_release(struct corral_json_obj *o)
{
	cJSON_Delete(o->doc);
	o->doc = NULL;
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
	if (!(doc = parse_line(line, len, NULL)))
		return 0;
	mark = get_str(doc, "corral");
	rid = get_str(doc, "run");
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

	if (!(doc = parse_line(line, len, NULL)))
		return -1;
	old = get_str(doc, "note");
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

/* ------------------------------------------------------------------ */
/* Findings, fix results, bundle manifests and journals                */

/*
 * The parsers below read the formats of corral-fix and corral-bundle:
 * each checks the shape of its document (which keys, of which types)
 * and hands back plain C structs, so that only this file knows cJSON.
 */

/* A copy of text[0..len) with a NUL after it, for parse_line. */
static cJSON *
parse_text(const char *text, size_t len, struct corral_err *err)
{
	char *copy = malloc(len + 1);
	cJSON *doc;

	if (!copy) {
		corral_err_set(err, ENOMEM, "parse");
		return NULL;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	doc = parse_line(copy, len, err);
	free(copy);
	return doc;
}

/* The member key of obj; -1 + err when absent (and required) or typed
 * wrongly.  *out is NULL when absent and not required. */
static int
member(const cJSON *obj, const char *key, int (*is)(const cJSON *),
    const char *what, int required, const cJSON **out,
    struct corral_err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	*out = NULL;
	if (!v || cJSON_IsNull(v)) {
		if (required)
			return corral_err_set(err, 0, "\"%s\" is missing", key);
		return 0;
	}
	if (!is(v))
		return corral_err_set(err, 0, "\"%s\" is not %s", key, what);
	*out = v;
	return 0;
}

static int
is_string(const cJSON *v)
{
	return cJSON_IsString(v);
}

static int
is_number(const cJSON *v)
{
	return cJSON_IsNumber(v);
}

static int
is_array(const cJSON *v)
{
	return cJSON_IsArray(v);
}

static int
is_bool(const cJSON *v)
{
	return cJSON_IsBool(v);
}

/* A copy of the string member key, or of dflt when it is absent. */
static int
str_member(const cJSON *obj, const char *key, const char *dflt, char **out,
    struct corral_err *err)
{
	const cJSON *v;

	*out = NULL;
	if (member(obj, key, is_string, "a string", !dflt, &v, err) < 0)
		return -1;
	if (!(*out = strdup(v ? v->valuestring : dflt)))
		return corral_err_set(err, ENOMEM, "parse");
	return 0;
}

static int
whole_number(double d, long min, long *out)
{
	if (!(d >= (double)min && d <= 1e15 && (double)(long long)d == d))
		return -1;
	*out = (long)d;
	return 0;
}

static int
finding_fields(const cJSON *doc, struct corral_finding *f,
    struct corral_err *err)
{
	const cJSON *v;

	if (str_member(doc, "identity", NULL, &f->identity, err) < 0 ||
	    str_member(doc, "location", "", &f->location, err) < 0 ||
	    str_member(doc, "trust", "single-method", &f->trust, err) < 0)
		return -1;
	if (!*f->identity)
		return corral_err_set(err, 0, "\"identity\" is empty");
	f->corroboration = 1;
	if (member(doc, "corroboration", is_number, "a number", 0, &v,
	    err) < 0)
		return -1;
	if (v && whole_number(v->valuedouble, 0, &f->corroboration) < 0)
		return corral_err_set(err, 0, "\"corroboration\" is not a "
		    "whole number >= 0");
	f->confidence = 0;
	if (member(doc, "max_confidence", is_number, "a number", 0, &v,
	    err) < 0)
		return -1;
	if (v && !(v->valuedouble >= 0 && v->valuedouble <= 1))
		return corral_err_set(err, 0, "\"max_confidence\" is not in "
		    "0..1");
	if (v)
		f->confidence = v->valuedouble;
	return 0;
}

static void
finding_release(struct corral_finding *f)
{
	free(f->identity);
	free(f->location);
	free(f->trust);
	free(f->json);
	memset(f, 0, sizeof(*f));
}

static int
add_finding(struct corral_findings *out, const char *line, size_t len,
    struct corral_err *err)
{
	struct corral_finding f = { 0 }, *v;
	cJSON *doc;
	size_t cap;

	if (!(doc = parse_text(line, len, err)))
		return -1;
	if (!cJSON_IsObject(doc))
		corral_err_set(err, 0, "not a JSON object");
	else if (finding_fields(doc, &f, err) == 0 &&
	    !(f.json = malloc(len + 1)))
		corral_err_set(err, ENOMEM, "parse");
	else if (f.json && out->n == out->cap) {
		cap = out->cap ? out->cap * 2 : 16;
		if ((v = realloc(out->v, cap * sizeof(*v)))) {
			out->v = v;
			out->cap = cap;
		}
	}
	cJSON_Delete(doc);
	if (!f.json || out->n == out->cap) {
		if (f.json)
			corral_err_set(err, ENOMEM, "parse");
		finding_release(&f);
		return -1;
	}
	memcpy(f.json, line, len);
	f.json[len] = '\0';
	out->v[out->n++] = f;
	return 0;
}

int
corral_json_findings(const char *text, size_t len, const char *name,
    struct corral_findings *out, struct corral_err *err)
{
	struct corral_err e;
	const char *line = text, *nl;
	size_t n, lineno = 0;

	while (line < text + len) {
		lineno++;
		nl = memchr(line, '\n', (size_t)(text + len - line));
		n = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
		while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' ' ||
		    line[n - 1] == '\t'))
			n--;
		if (n > 0 && add_finding(out, line, n, &e) < 0)
			return corral_err_set(err, e.errnum, "'%s' line %zu: %s",
			    name, lineno, e.msg);
		line = nl ? nl + 1 : text + len;
	}
	return 0;
}

void
corral_findings_release(struct corral_findings *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		finding_release(&f->v[i]);
	free(f->v);
	memset(f, 0, sizeof(*f));
}

/* A digest member: absent or null -> "", else 64 lowercase hex digits. */
static int
digest_member(const cJSON *obj, const char *key, char out[CORRAL_SHA256_HEX],
    struct corral_err *err)
{
	const cJSON *v;

	out[0] = '\0';
	if (member(obj, key, is_string, "a string", 0, &v, err) < 0)
		return -1;
	if (!v)
		return 0;
	if (!corral_sha256_valid(v->valuestring))
		return corral_err_set(err, 0, "\"%s\" '%s' is not a SHA-256 "
		    "digest", key, v->valuestring);
	memcpy(out, v->valuestring, CORRAL_SHA256_HEX);
	return 0;
}

static int
file_entry(const cJSON *f, struct corral_changes *c, struct corral_err *err)
{
	char sha[CORRAL_SHA256_HEX], before[CORRAL_SHA256_HEX];
	const cJSON *path, *action;
	struct corral_err e;
	int act;

	if (!cJSON_IsObject(f))
		return corral_err_set(err, 0, "a file entry is not an object");
	if (member(f, "path", is_string, "a string", 1, &path, err) < 0 ||
	    member(f, "action", is_string, "a string", 1, &action, err) < 0)
		return -1;
	if (!strcmp(action->valuestring, "write"))
		act = CORRAL_ACTION_WRITE;
	else if (!strcmp(action->valuestring, "delete"))
		act = CORRAL_ACTION_DELETE;
	else
		return corral_err_set(err, 0, "'%s': action '%s' is neither "
		    "write nor delete", path->valuestring,
		    action->valuestring);
	if (digest_member(f, "sha256", sha, &e) < 0 ||
	    digest_member(f, "expected_before", before, &e) < 0)
		return corral_err_set(err, 0, "'%s': %s", path->valuestring,
		    e.msg);
	if ((act == CORRAL_ACTION_WRITE) != (sha[0] != '\0'))
		return corral_err_set(err, 0, "'%s': a %s %s \"sha256\"",
		    path->valuestring, action->valuestring,
		    sha[0] ? "has no" : "needs a");
	if (corral_changes_add(c, path->valuestring, act, sha, before) < 0)
		return corral_err_set(err, ENOMEM, "parse");
	return 0;
}

static int
files_array(const cJSON *obj, struct corral_changes *c,
    struct corral_err *err)
{
	const cJSON *files, *f;

	if (member(obj, "files", is_array, "an array", 1, &files, err) < 0)
		return -1;
	cJSON_ArrayForEach(f, files)
		if (file_entry(f, c, err) < 0)
			return -1;
	return 0;
}

void
corral_fix_entry_release(struct corral_fix_entry *e)
{
	free(e->identity);
	free(e->repairs);
	free(e->trust);
	free(e->area);
	corral_changes_release(&e->files);
	memset(e, 0, sizeof(*e));
}

static int
fix_entry(const cJSON *fx, struct corral_fix_entry *e, struct corral_err *err)
{
	const cJSON *v;

	if (!cJSON_IsObject(fx))
		return corral_err_set(err, 0, "not an object");
	if (str_member(fx, "identity", NULL, &e->identity, err) < 0 ||
	    str_member(fx, "repairs", "", &e->repairs, err) < 0 ||
	    str_member(fx, "trust", "", &e->trust, err) < 0 ||
	    str_member(fx, "area", NULL, &e->area, err) < 0)
		return -1;
	if (member(fx, "n", is_number, "a number", 0, &v, err) < 0)
		return -1;
	if (v && whole_number(v->valuedouble, 1, &e->n) < 0)
		return corral_err_set(err, 0, "\"n\" is not a whole number");
	e->confidence = -1;
	if (member(fx, "confidence", is_number, "a number", 0, &v, err) < 0)
		return -1;
	if (v)
		e->confidence = v->valuedouble;
	return files_array(fx, &e->files, err);
}

static int
manifest_fixes(const cJSON *fixes, struct corral_manifest *m,
    struct corral_err *err)
{
	struct corral_err e;
	const cJSON *fx;
	size_t n = (size_t)cJSON_GetArraySize(fixes);

	if (n && !(m->fixes = calloc(n, sizeof(*m->fixes))))
		return corral_err_set(err, ENOMEM, "parse");
	cJSON_ArrayForEach(fx, fixes) {
		m->fixes[m->nfixes].n = (long)m->nfixes + 1;
		if (fix_entry(fx, &m->fixes[m->nfixes++], &e) < 0)
			return corral_err_set(err, e.errnum, "fix %zu: %s",
			    m->nfixes, e.msg);
	}
	return 0;
}

int
corral_json_manifest(const char *text, size_t len, struct corral_manifest *m,
    struct corral_err *err)
{
	const cJSON *v, *fixes;
	cJSON *doc;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	if (!(doc = parse_text(text, len, err)))
		return -1;
	if (!cJSON_IsObject(doc)) {
		corral_err_set(err, 0, "not a JSON object");
		goto out;
	}
	if (member(doc, "bundle_version", is_number, "a number", 1, &v,
	    err) < 0 || str_member(doc, "note", "", &m->note, err) < 0 ||
	    member(doc, "fixes", is_array, "an array", 1, &fixes, err) < 0)
		goto out;
	m->version = whole_number(v->valuedouble, 0, &m->version) < 0 ? -1 :
	    m->version;
	rc = manifest_fixes(fixes, m, err);
out:
	cJSON_Delete(doc);
	if (rc < 0)
		corral_manifest_release(m);
	return rc;
}

void
corral_manifest_release(struct corral_manifest *m)
{
	size_t i;

	for (i = 0; i < m->nfixes; i++)
		corral_fix_entry_release(&m->fixes[i]);
	free(m->fixes);
	free(m->note);
	memset(m, 0, sizeof(*m));
}

static int
add_indent(struct corral_buf *b, int indent, int depth)
{
	int i, rc = 0;

	if (!indent)
		return 0;
	rc = corral_buf_addch(b, '\n');
	for (i = 0; i < indent * depth && rc == 0; i++)
		rc = corral_buf_addch(b, ' ');
	return rc;
}

static int
add_digest(struct corral_buf *b, const char *sha)
{
	return *sha ? corral_buf_addf(b, "\"%s\"", sha) :
	    corral_buf_addstr(b, "null");
}

int
corral_json_files(struct corral_buf *b, const struct corral_changes *c,
    int indent, int depth)
{
	const char *sep = indent ? ": " : ":";
	const struct corral_change *ch;
	size_t i;
	int rc;

	if (!c->n)
		return corral_buf_addstr(b, "[]");
	rc = corral_buf_addch(b, '[');
	for (i = 0; i < c->n && rc == 0; i++) {
		ch = &c->v[i];
		rc |= i ? corral_buf_addch(b, ',') : 0;
		rc |= add_indent(b, indent, depth + 1);
		rc |= corral_buf_addch(b, '{');
		rc |= add_indent(b, indent, depth + 2);
		rc |= corral_buf_addf(b, "\"action\"%s\"%s\",", sep,
		    ch->action == CORRAL_ACTION_WRITE ? "write" : "delete");
		rc |= add_indent(b, indent, depth + 2);
		rc |= corral_buf_addf(b, "\"expected_before\"%s", sep);
		rc |= add_digest(b, ch->before);
		rc |= corral_buf_addch(b, ',');
		rc |= add_indent(b, indent, depth + 2);
		rc |= corral_buf_addf(b, "\"path\"%s", sep);
		rc |= corral_buf_addjson(b, ch->path, strlen(ch->path));
		rc |= corral_buf_addch(b, ',');
		rc |= add_indent(b, indent, depth + 2);
		rc |= corral_buf_addf(b, "\"sha256\"%s", sep);
		rc |= add_digest(b, ch->sha256);
		rc |= add_indent(b, indent, depth + 1);
		rc |= corral_buf_addch(b, '}');
	}
	rc |= add_indent(b, indent, depth);
	return rc | corral_buf_addch(b, ']');
}

int
corral_json_number(struct corral_buf *b, double d)
{
	char s[64];
	int prec;

	if (!isfinite(d))
		return corral_buf_addstr(b, "null");
	for (prec = 1; prec <= 17; prec++) {
		snprintf(s, sizeof(s), "%.*g", prec, d);
		if (strtod(s, NULL) == d)
			break;
	}
	return corral_buf_addstr(b, s);
}

int
corral_json_attempt(const char *text, size_t len, char **status,
    char **detail, int *could_not_look, struct corral_changes *files,
    struct corral_err *err)
{
	const cJSON *v;
	cJSON *doc;
	int rc = -1;

	*status = *detail = NULL;
	if (!(doc = parse_text(text, len, err)))
		return -1;
	if (cJSON_IsObject(doc) &&
	    str_member(doc, "status", NULL, status, err) == 0 &&
	    str_member(doc, "detail", "", detail, err) == 0 &&
	    member(doc, "could_not_look", is_bool, "a boolean", 1, &v,
	    err) == 0 && files_array(doc, files, err) == 0) {
		*could_not_look = cJSON_IsTrue(v);
		rc = 0;
	} else if (!cJSON_IsObject(doc)) {
		corral_err_set(err, 0, "not a JSON object");
	}
	cJSON_Delete(doc);
	if (rc < 0) {
		free(*status);
		free(*detail);
		*status = *detail = NULL;
	}
	return rc;
}

static int
saved_entry(const cJSON *o, struct corral_saved *s, struct corral_err *err)
{
	const cJSON *exists, *mode, *sec, *nsec, *sha;
	long m, ns, sc;

	if (!cJSON_IsObject(o))
		return corral_err_set(err, 0, "an entry is not an object");
	if (str_member(o, "path", NULL, &s->path, err) < 0 ||
	    member(o, "exists", is_bool, "a boolean", 1, &exists, err) < 0 ||
	    member(o, "mode", is_number, "a number", 1, &mode, err) < 0 ||
	    member(o, "sec", is_number, "a number", 1, &sec, err) < 0 ||
	    member(o, "nsec", is_number, "a number", 1, &nsec, err) < 0 ||
	    member(o, "sha256", is_string, "a string", 1, &sha, err) < 0)
		return -1;
	if (whole_number(mode->valuedouble, 0, &m) < 0 || m > 07777 ||
	    whole_number(sec->valuedouble, -1000000000000L, &sc) < 0 ||
	    whole_number(nsec->valuedouble, 0, &ns) < 0 || ns > 999999999)
		return corral_err_set(err, 0, "'%s': bad mode or mtime",
		    s->path);
	if (*sha->valuestring && !corral_sha256_valid(sha->valuestring))
		return corral_err_set(err, 0, "'%s': bad digest", s->path);
	s->exists = cJSON_IsTrue(exists);
	s->mode = (unsigned)m;
	s->sec = sc;
	s->nsec = ns;
	memcpy(s->sha256, sha->valuestring, strlen(sha->valuestring) + 1);
	return 0;
}

static int
saved_array(const cJSON *doc, const char *key, struct corral_saved **v,
    size_t *n, size_t *cap, struct corral_err *err)
{
	const cJSON *arr, *o;

	if (member(doc, key, is_array, "an array", 1, &arr, err) < 0)
		return -1;
	*cap = (size_t)cJSON_GetArraySize(arr);
	if (*cap && !(*v = calloc(*cap, sizeof(**v))))
		return corral_err_set(err, ENOMEM, "parse");
	cJSON_ArrayForEach(o, arr)
		if (saved_entry(o, &(*v)[(*n)++], err) < 0)
			return -1;
	return 0;
}

int
corral_json_journal(const char *text, size_t len,
    struct corral_journal_data *d, struct corral_err *err)
{
	const cJSON *created, *s;
	cJSON *doc;
	int rc = -1;

	memset(d, 0, sizeof(*d));
	if (!(doc = parse_text(text, len, err)))
		return -1;
	if (!cJSON_IsObject(doc)) {
		corral_err_set(err, 0, "not a JSON object");
		goto out;
	}
	if (saved_array(doc, "files", &d->files, &d->nfiles, &d->capfiles,
	    err) < 0 || saved_array(doc, "dirs", &d->dirs, &d->ndirs,
	    &d->capdirs, err) < 0 || member(doc, "created", is_array,
	    "an array", 1, &created, err) < 0)
		goto out;
	rc = 0;
	cJSON_ArrayForEach(s, created)
		if (rc == 0 && (!cJSON_IsString(s) ||
		    corral_strv_add(&d->created, s->valuestring) < 0))
			rc = corral_err_set(err, 0, "\"created\" holds a "
			    "non-string");
out:
	cJSON_Delete(doc);
	if (rc < 0)
		corral_journal_data_release(d);
	return rc;
}
