/* See LICENSE file for copyright and license details. */
/*
 * json.h: the cJSON helpers of base/json.c, for the modules of libcorral
 * that read a JSON format (each beside its writer).  Internal: corral.h
 * does not include it, so tools never see cJSON.
 */
#ifndef CORRAL_BASE_JSON_H
#define CORRAL_BASE_JSON_H

#include <cjson/cJSON.h>

#include "base/base.h"

/* v's string, or NULL when v is absent or not a string. */
const char *cj_str(const cJSON *v);
/* v's value as a non-negative integer, or -1. */
long long cj_int(const cJSON *v);
/* The string value of key in obj, or NULL when absent or not a string. */
const char *cj_get_str(const cJSON *obj, const char *key);
/* The non-negative integer value of key in obj, or -1. */
long long cj_get_int(const cJSON *obj, const char *key);

/*
 * Parse line[0..len), which must be followed by a NUL at line[len], as
 * exactly one JSON value: "{..}{..}" and "{..} garbage" are refused, and
 * so is a NUL byte inside.  The document (cJSON_Delete it), or NULL with
 * err (may be NULL) saying "invalid JSON at byte 41", counted from 1.
 */
cJSON *cj_parse_line(const char *line, size_t len, struct corral_err *err);
/* cj_parse_line of a copy of text[0..len), which needs no NUL after it. */
cJSON *cj_parse_text(const char *text, size_t len, struct corral_err *err);
/*
 * cj_parse_line and cj_parse_text of what must be a JSON object: any
 * other value is NULL with err saying "not a JSON object".
 */
cJSON *cj_object_line(const char *line, size_t len, struct corral_err *err);
cJSON *cj_object_text(const char *text, size_t len, struct corral_err *err);

/* Type tests to hand to cj_member. */
int cj_is_string(const cJSON *v);
int cj_is_number(const cJSON *v);
int cj_is_array(const cJSON *v);
int cj_is_bool(const cJSON *v);
/*
 * Point *out at the member key of obj.  A member that is absent or null is
 * refused when required ("\"key\" is missing"), else *out is NULL; one for
 * which is() is false is refused ("\"key\" is not WHAT").  0, or -1 with
 * err set.
 */
int cj_member(const cJSON *obj, const char *key, int (*is)(const cJSON *),
    const char *what, int required, const cJSON **out,
    struct corral_err *err);
/*
 * A malloc'd copy of the string member key in *out, or of dflt when it is
 * absent (dflt NULL: it is required).  0, or -1 with err set.
 */
int cj_str_member(const cJSON *obj, const char *key, const char *dflt,
    char **out, struct corral_err *err);
/* 0 with *out = d when d is a whole number in [min, 1e15], else -1. */
int cj_whole(double d, long min, long *out);

#endif /* CORRAL_BASE_JSON_H */
