/* See LICENSE file for copyright and license details. */
/*
 * json.c is the one module that speaks cJSON.  It checks that one log line
 * is exactly one record: a single JSON object with a string "unit" and a
 * boolean "ok", and nothing before or after it on the line (RELIABILITY
 * 2.1: a torn or glued line must be rejected, never half-accepted).  It
 * never re-serialises; callers pass the line through byte for byte.
 */
#include <string.h>

#include <cjson/cJSON.h>

#include "corral.h"

/* The string value of key in obj, or NULL when absent or not a string. */
static const char *
get_str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The non-negative integer value of key in obj, or -1. */
static long long
get_int(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) ||
	    v->valuedouble > 9e15)
		return -1;
	return (long long)v->valuedouble;
}

/* How many members of obj are named key (JSON allows repeats). */
static int
count_key(const cJSON *obj, const char *key)
{
	const cJSON *m;
	int n = 0;

	cJSON_ArrayForEach(m, obj)
		if (m->string && !strcmp(m->string, key))
			n++;
	return n;
}

/* 0 when obj holds exactly one key of the wanted type, else -1 + err. */
static int
check_key(const cJSON *obj, const char *key, int want_bool,
    struct corral_err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	const char *type = want_bool ? "a boolean" : "a string";

	if (!v)
		return corral_err_set(err, 0, "\"%s\" is missing", key);
	if (count_key(obj, key) > 1)
		return corral_err_set(err, 0, "\"%s\" appears more than once",
		    key);
	if (want_bool ? !cJSON_IsBool(v) : !cJSON_IsString(v))
		return corral_err_set(err, 0, "\"%s\" is not %s", key, type);
	return 0;
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

int
corral_json_record_parse(const char *line, size_t len,
    struct corral_json_record *r, struct corral_err *err)
{
	cJSON *doc;

	memset(r, 0, sizeof(*r));
	if (!(doc = parse_line(line, len, err)))
		return -1;
	if (!cJSON_IsObject(doc)) {
		corral_err_set(err, 0, "not a JSON object");
		goto fail;
	}
	if (check_key(doc, "unit", 0, err) < 0 ||
	    check_key(doc, "ok", 1, err) < 0)
		goto fail;
	r->unit = get_str(doc, "unit");
	if (!*r->unit) {
		corral_err_set(err, 0, "\"unit\" is empty");
		goto fail;
	}
	r->ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "ok"));
	r->status = get_str(doc, "status");
	r->run = get_str(doc, "run");
	r->at = get_str(doc, "at");
	r->note = get_str(doc, "note");
	r->output = get_str(doc, "output");
	r->inputs = get_str(doc, "inputs");
	r->agent_id = get_str(doc, "agent_id");
	r->signal = get_str(doc, "signal");
	r->duration_ms = get_int(doc, "duration_ms");
	r->exit_code = get_int(doc, "exit");
	r->attempt = get_int(doc, "attempt");
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
