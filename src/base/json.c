/* See LICENSE file for copyright and license details. */
/*
 * json.c holds what every reader of JSON shares over cJSON: parsing a
 * line or a text as exactly one value (RELIABILITY 2.1: a torn or glued
 * line must be rejected, never half-accepted), typed members, and small
 * objects that are not records (a live agent's status).  Each format's
 * reader sits beside its writer (record.c, journal.c, bundle.c, fix.c,
 * findings.c, snap.c) and uses these through base/json.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/json.h"

/* v's string, or NULL when v is absent or not a string. */
const char *
cj_str(const cJSON *v)
{
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* v's value as a non-negative integer, or -1. */
long long
cj_int(const cJSON *v)
{
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) ||
	    v->valuedouble > 9e15)
		return -1;
	return (long long)v->valuedouble;
}

/* The string value of key in obj, or NULL when absent or not a string. */
const char *
cj_get_str(const cJSON *obj, const char *key)
{
	return cj_str(cJSON_GetObjectItemCaseSensitive(obj, key));
}

/* The non-negative integer value of key in obj, or -1. */
long long
cj_get_int(const cJSON *obj, const char *key)
{
	return cj_int(cJSON_GetObjectItemCaseSensitive(obj, key));
}

/*
 * Parse line[0..len) with line[len] == '\0'.  Passing len + 1 puts the NUL
 * inside the buffer, and requiring it to end the value rejects "{..}{..}"
 * and "{..} garbage" (plain cJSON_ParseWithLength accepts both).
 */
cJSON *
cj_parse_line(const char *line, size_t len, struct corral_err *err)
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

/* A copy of text[0..len) with a NUL after it, for cj_parse_line. */
cJSON *
cj_parse_text(const char *text, size_t len, struct corral_err *err)
{
	char *copy = malloc(len + 1);
	cJSON *doc;

	if (!copy) {
		corral_err_set(err, ENOMEM, "parse");
		return NULL;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	doc = cj_parse_line(copy, len, err);
	free(copy);
	return doc;
}

/* doc when it is an object, else NULL with err set (doc deleted). */
static cJSON *
object_only(cJSON *doc, struct corral_err *err)
{
	if (!doc || cJSON_IsObject(doc))
		return doc;
	cJSON_Delete(doc);
	corral_err_set(err, 0, "not a JSON object");
	return NULL;
}

cJSON *
cj_object_line(const char *line, size_t len, struct corral_err *err)
{
	return object_only(cj_parse_line(line, len, err), err);
}

cJSON *
cj_object_text(const char *text, size_t len, struct corral_err *err)
{
	return object_only(cj_parse_text(text, len, err), err);
}

/* The member key of obj; -1 + err when absent (and required) or typed
 * wrongly.  *out is NULL when absent and not required. */
int
cj_member(const cJSON *obj, const char *key, int (*is)(const cJSON *),
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

int
cj_is_string(const cJSON *v)
{
	return cJSON_IsString(v);
}

int
cj_is_number(const cJSON *v)
{
	return cJSON_IsNumber(v);
}

int
cj_is_array(const cJSON *v)
{
	return cJSON_IsArray(v);
}

int
cj_is_bool(const cJSON *v)
{
	return cJSON_IsBool(v);
}

/* A copy of the string member key, or of dflt when it is absent. */
int
cj_str_member(const cJSON *obj, const char *key, const char *dflt,
    char **out, struct corral_err *err)
{
	const cJSON *v;

	*out = NULL;
	if (cj_member(obj, key, cj_is_string, "a string", !dflt, &v, err) < 0)
		return -1;
	if (!(*out = strdup(v ? v->valuestring : dflt)))
		return corral_err_set(err, ENOMEM, "parse");
	return 0;
}

int
cj_whole(double d, long min, long *out)
{
	if (!(d >= (double)min && d <= 1e15 && (double)(long long)d == d))
		return -1;
	*out = (long)d;
	return 0;
}

int
corral_json_obj_parse(const char *line, size_t len, struct corral_json_obj *o,
    struct corral_err *err)
{
	cJSON *doc;

	o->doc = NULL;
	if (!(doc = cj_object_line(line, len, err)))
		return -1;
	o->doc = doc;
	return 0;
}

const char *
corral_json_obj_str(const struct corral_json_obj *o, const char *key)
{
	return cj_get_str(o->doc, key);
}

long long
corral_json_obj_int(const struct corral_json_obj *o, const char *key)
{
	return cj_get_int(o->doc, key);
}

void
corral_json_obj_release(struct corral_json_obj *o)
{
	cJSON_Delete(o->doc);
	o->doc = NULL;
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
