/* See LICENSE file for copyright and license details. */
/*
 * findings.c reads what a finder prints, one finding per JSON line, for
 * corral-fix and the patchers.  A finding's line is kept as it was
 * printed, which is what a patcher is given.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/json.h"
#include "repair/repair.h"

static int
finding_fields(const cJSON *doc, struct corral_finding *f,
    struct corral_err *err)
{
	const cJSON *v;

	if (cj_str_member(doc, "identity", NULL, &f->identity, err) < 0 ||
	    cj_str_member(doc, "location", "", &f->location, err) < 0 ||
	    cj_str_member(doc, "trust", "single-method", &f->trust, err) < 0)
		return -1;
	if (!*f->identity)
		return corral_err_set(err, 0, "\"identity\" is empty");
	f->corroboration = 1;
	if (cj_member(doc, "corroboration", cj_is_number, "a number", 0, &v,
	    err) < 0)
		return -1;
	if (v && cj_whole(v->valuedouble, 0, &f->corroboration) < 0)
		return corral_err_set(err, 0, "\"corroboration\" is not a "
		    "whole number >= 0");
	f->confidence = 0;
	if (cj_member(doc, "max_confidence", cj_is_number, "a number", 0, &v,
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

	if (!(doc = cj_object_text(line, len, err)))
		return -1;
	if (finding_fields(doc, &f, err) == 0 &&
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
