/* See LICENSE file for copyright and license details. */
/*
 * fixreport.c prints what corral-fix did: one line per attempt,
 * conflict, skipped finding and applied fix, the combined check, the
 * counts and the message; or the same as one JSON document that keeps
 * the original's keys (considered, attempted, verified, rolled_back,
 * applied, conflicts, dry_run, message) among its own.  The output is
 * deterministic: the report is in ranked order, whatever order the
 * attempts finished in.
 */
#include <string.h>

#include "base/base.h"
#include "repair/repair.h"

static int
text_line(struct corral_buf *b, const char *label, const char *id,
    const char *detail)
{
	return corral_buf_addf(b, "%-12s %s%s%s\n", label, id,
	    detail ? " -- " : "", detail ? detail : "");
}

static int
text_combined(const struct corral_fix_report *r, struct corral_buf *b)
{
	if (r->combined < 0)
		return 0;
	if (r->combined == 1)
		return corral_buf_addf(b, "%-12s held: %s\n", "together",
		    r->combined_detail);
	if (r->restored)
		return corral_buf_addf(b, "%-12s ROLLED BACK: %s; %zu file(s) "
		    "were written to the root, then restored from the journal: "
		    "it is byte for byte as it was\n", "together",
		    r->combined_detail, r->restored);
	return corral_buf_addf(b, "%-12s ROLLED BACK: %s; %s\n", "together",
	    r->combined_detail, r->dry_run ? "--apply would apply nothing" :
	    "nothing was applied, the root is as it was");
}

int
corral_fix_report_text(const struct corral_fix_report *r,
    struct corral_buf *b)
{
	const struct corral_fix_result *res;
	size_t i;
	int rc = 0;

	for (i = 0; i < r->nresults; i++) {
		res = &r->results[i];
		rc |= text_line(b, res->status, res->finding->identity,
		    res->detail);
	}
	for (i = 0; i < r->nresults; i++) {
		res = &r->results[i];
		if (res->conflict)
			rc |= corral_buf_addf(b, "%-12s %s -- '%s' is changed "
			    "differently by %s\n", "held back",
			    res->finding->identity, res->conflict,
			    res->conflict_with);
	}
	for (i = 0; i < r->nskipped; i++)
		rc |= text_line(b, "skipped", r->skipped[i].finding->identity,
		    r->skipped[i].reason);
	rc |= text_combined(r, b);
	for (i = 0; i < r->nresults; i++)
		if (r->results[i].applied)
			rc |= text_line(b, "applied",
			    r->results[i].finding->identity, NULL);
	if (r->bundle)
		rc |= text_line(b, "bundle", r->bundle, NULL);
	if (r->bundle_withheld)
		rc |= text_line(b, "bundle", "not written", "the fixes do not "
		    "hold together");
	rc |= corral_buf_addf(b, "considered %zu, attempted %zu, verified %zu, "
	    "rolled back %zu, applied %zu, conflicts %zu, remaining %zu\n",
	    r->findings.n, r->nresults, r->verified, r->rolled_back,
	    r->applied, r->conflicts, r->remaining.n);
	return rc | corral_buf_addf(b, "%s\n", r->message);
}

static int
json_str(struct corral_buf *b, const char *key, const char *s)
{
	int rc = corral_buf_addf(b, "\"%s\":", key);

	if (!s)
		return rc | corral_buf_addstr(b, "null");
	return rc | corral_buf_addjson(b, s, strlen(s));
}

static int
json_strv(struct corral_buf *b, const char *key, const struct corral_strv *sv)
{
	int rc = corral_buf_addf(b, "\"%s\":", key);

	return rc | corral_strv_json(b, sv);
}

/* "key":[identities of results whose status is status (or applied)] */
static int
json_ids(struct corral_buf *b, const char *key,
    const struct corral_fix_report *r, const char *status)
{
	size_t i, n = 0;
	int rc = corral_buf_addf(b, "\"%s\":[", key);

	for (i = 0; i < r->nresults; i++) {
		if (status ? strcmp(r->results[i].status, status) :
		    !r->results[i].applied)
			continue;
		rc |= n++ ? corral_buf_addch(b, ',') : 0;
		rc |= corral_buf_addjson(b, r->results[i].finding->identity,
		    strlen(r->results[i].finding->identity));
	}
	return rc | corral_buf_addch(b, ']');
}

static int
json_results(struct corral_buf *b, const struct corral_fix_report *r)
{
	const struct corral_fix_result *res;
	size_t i;
	int rc = corral_buf_addstr(b, "\"results\":[");

	for (i = 0; i < r->nresults; i++) {
		res = &r->results[i];
		rc |= corral_buf_addstr(b, i ? ",{" : "{");
		rc |= json_str(b, "identity", res->finding->identity);
		rc |= corral_buf_addch(b, ',');
		rc |= json_str(b, "status", res->status);
		rc |= corral_buf_addch(b, ',');
		rc |= json_str(b, "detail", res->detail);
		rc |= corral_buf_addf(b, ",\"applied\":%s,\"files\":",
		    res->applied ? "true" : "false");
		rc |= corral_json_files(b, &res->files, 0, 0);
		rc |= corral_buf_addch(b, '}');
	}
	return rc | corral_buf_addch(b, ']');
}

static int
json_conflicts(struct corral_buf *b, const struct corral_fix_report *r)
{
	const struct corral_fix_result *res;
	size_t i, n = 0;
	int rc = corral_buf_addstr(b, "\"conflicts\":[");

	for (i = 0; i < r->nresults; i++) {
		res = &r->results[i];
		if (!res->conflict)
			continue;
		rc |= corral_buf_addstr(b, n++ ? ",{" : "{");
		rc |= json_str(b, "identity", res->finding->identity);
		rc |= corral_buf_addch(b, ',');
		rc |= json_str(b, "path", res->conflict);
		rc |= corral_buf_addch(b, ',');
		rc |= json_str(b, "with", res->conflict_with);
		rc |= corral_buf_addch(b, '}');
	}
	return rc | corral_buf_addch(b, ']');
}

static int
json_skipped(struct corral_buf *b, const struct corral_fix_report *r)
{
	size_t i;
	int rc = corral_buf_addstr(b, "\"skipped\":[");

	for (i = 0; i < r->nskipped; i++) {
		rc |= corral_buf_addstr(b, i ? ",{" : "{");
		rc |= json_str(b, "identity", r->skipped[i].finding->identity);
		rc |= corral_buf_addch(b, ',');
		rc |= json_str(b, "reason", r->skipped[i].reason);
		rc |= corral_buf_addch(b, '}');
	}
	return rc | corral_buf_addch(b, ']');
}

int
corral_fix_report_json(const struct corral_fix_report *r,
    struct corral_buf *b)
{
	int rc;

	rc = corral_buf_addch(b, '{');
	rc |= json_str(b, "root", r->root);
	rc |= corral_buf_addf(b, ",\"dry_run\":%s,\"considered\":%zu,"
	    "\"attempted\":%zu,", r->dry_run ? "true" : "false",
	    r->findings.n, r->nresults);
	rc |= json_results(b, r);
	rc |= corral_buf_addch(b, ',');
	rc |= json_ids(b, "verified", r, "verified");
	rc |= corral_buf_addch(b, ',');
	rc |= json_ids(b, "rolled_back", r, "rolled-back");
	rc |= corral_buf_addch(b, ',');
	rc |= json_ids(b, "applied", r, NULL);
	rc |= corral_buf_addch(b, ',');
	rc |= json_conflicts(b, r);
	rc |= corral_buf_addch(b, ',');
	rc |= json_skipped(b, r);
	rc |= corral_buf_addf(b, ",\"combined\":{\"checked\":%s,\"ok\":%s,",
	    r->combined >= 0 ? "true" : "false",
	    r->combined == 1 ? "true" : "false");
	rc |= json_str(b, "detail", r->combined_detail);
	rc |= corral_buf_addf(b, "},\"restored\":%zu,", r->restored);
	rc |= json_strv(b, "found", &r->found);
	rc |= corral_buf_addch(b, ',');
	rc |= json_strv(b, "remaining", &r->remaining);
	rc |= corral_buf_addch(b, ',');
	rc |= json_str(b, "bundle", r->bundle);
	rc |= corral_buf_addch(b, ',');
	rc |= json_str(b, "message", r->message);
	return rc | corral_buf_addstr(b, "}\n");
}
