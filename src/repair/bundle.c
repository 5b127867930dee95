/* See LICENSE file for copyright and license details. */
/*
 * bundle.c carries verified repairs from the copy of a system that
 * verified them to another copy.  A bundle is a directory: manifest.json
 * (what each fix writes or deletes, with the SHA-256 each file had when
 * the fix was made, labelled by area) and files/SHA256, one blob per
 * distinct content.  Applying checks everything before writing anything:
 * each path is relative and stays in the root without passing a symlink,
 * each blob matches its name, and each file is what the fix was made
 * against (or is already what it makes); it is a dry run unless asked,
 * and all or nothing unless asked per fix.  A bundle is not a trust
 * boundary: it is checked for consistency, not judged.
 */
#define _XOPEN_SOURCE 700	/* mkdtemp and friends */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "base/json.h"
#include "repair/repair.h"
#include "repair/repair-private.h"

#define MANIFEST	"manifest.json"
#define FILES		"files"

/* The areas of c's paths, sorted and distinct, into sv. */
static int
areas_of(const struct corral_changes *c, struct corral_strv *sv)
{
	const char *slash;
	size_t i;
	int rc = 0;

	for (i = 0; i < c->n && rc == 0; i++) {
		slash = strchr(c->v[i].path, '/');
		rc = slash ? corral_strv_addn(sv, c->v[i].path,
		    (size_t)(slash - c->v[i].path)) :
		    corral_strv_add(sv, "(root)");
	}
	corral_strv_sort_unique(sv);
	return rc;
}

int
corral_bundle_area(const struct corral_changes *c, struct corral_buf *b)
{
	struct corral_strv sv = CORRAL_STRV_INIT;
	size_t i;
	int rc = areas_of(c, &sv);

	if (rc == 0 && !sv.n)
		rc = corral_buf_addstr(b, "(nothing)");
	for (i = 0; i < sv.n && rc == 0; i++)
		rc = corral_buf_addf(b, "%s%s", i ? "+" : "", sv.v[i]);
	corral_strv_release(&sv);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Writing                                                              */

static int
indent(struct corral_buf *b, int n)
{
	return corral_buf_addf(b, "\n%*s", n, "");
}

static int
format_fix(struct corral_buf *b, const struct corral_fix_entry *f, size_t n,
    const char *area)
{
	int rc = corral_buf_addch(b, '{');

	rc |= indent(b, 6) | corral_buf_addstr(b, "\"area\": ");
	rc |= corral_buf_addjson(b, area, strlen(area));
	rc |= corral_buf_addch(b, ',') | indent(b, 6);
	rc |= corral_buf_addstr(b, "\"confidence\": ");
	rc |= f->confidence >= 0 ? corral_json_number(b, f->confidence) :
	    corral_buf_addstr(b, "null");
	rc |= corral_buf_addch(b, ',') | indent(b, 6);
	rc |= corral_buf_addstr(b, "\"files\": ");
	rc |= corral_json_files(b, &f->files, 2, 3);
	rc |= corral_buf_addch(b, ',') | indent(b, 6);
	rc |= corral_buf_addstr(b, "\"identity\": ");
	rc |= corral_buf_addjson(b, f->identity, strlen(f->identity));
	rc |= corral_buf_addch(b, ',') | indent(b, 6);
	rc |= corral_buf_addf(b, "\"n\": %zu,", n) | indent(b, 6);
	rc |= corral_buf_addstr(b, "\"repairs\": ");
	rc |= corral_buf_addjson(b, f->repairs, strlen(f->repairs));
	rc |= corral_buf_addch(b, ',') | indent(b, 6);
	rc |= corral_buf_addstr(b, "\"trust\": ");
	rc |= corral_buf_addjson(b, f->trust, strlen(f->trust));
	return rc | indent(b, 4) | corral_buf_addch(b, '}');
}

/* manifest.json: keys sorted at every level, indented by 2. */
static int
format_manifest(struct corral_buf *b, const char *note,
    const struct corral_fix_entry *fixes, size_t n)
{
	struct corral_strv areas = CORRAL_STRV_INIT;
	struct corral_buf area = CORRAL_BUF_INIT;
	size_t i;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		corral_buf_reset(&area);
		if ((rc = corral_bundle_area(&fixes[i].files, &area)) == 0)
			rc = corral_strv_add(&areas, area.data);
	}
	corral_strv_sort_unique(&areas);
	rc |= corral_buf_addstr(b, "{\n  \"areas\": [");
	for (i = 0; i < areas.n; i++)
		rc |= corral_buf_addstr(b, i ? ",\n    " : "\n    ") |
		    corral_buf_addjson(b, areas.v[i], strlen(areas.v[i]));
	rc |= corral_buf_addstr(b, areas.n ? "\n  ],\n" : "],\n");
	rc |= corral_buf_addf(b, "  \"bundle_version\": %d,\n  \"fixes\": [",
	    CORRAL_BUNDLE_VERSION);
	for (i = 0; i < n && rc == 0; i++) {
		corral_buf_reset(&area);
		rc |= corral_bundle_area(&fixes[i].files, &area);
		rc |= corral_buf_addstr(b, i ? ",\n    " : "\n    ");
		rc |= format_fix(b, &fixes[i], i + 1, area.data);
	}
	rc |= corral_buf_addstr(b, n ? "\n  ],\n  \"note\": " :
	    "],\n  \"note\": ");
	rc |= corral_buf_addjson(b, note, strlen(note));
	rc |= corral_buf_addstr(b, "\n}\n");
	corral_strv_release(&areas);
	corral_buf_release(&area);
	return rc;
}

/* Remove a bundle being built: its blobs, files, manifest.json, itself. */
static void
remove_partial(const char *tmp, const struct corral_fix_entry *fixes,
    size_t n)
{
	char *files = corral_path_join(tmp, FILES), *p;
	size_t i, j;

	for (i = 0; files && i < n; i++)
		for (j = 0; j < fixes[i].files.n; j++)
			if (*fixes[i].files.v[j].sha256 &&
			    (p = corral_path_join(files, fixes[i].files.v[j].sha256))) {
				unlink(p);
				free(p);
			}
	if (files)
		rmdir(files);
	if ((p = corral_path_join(tmp, MANIFEST))) {
		unlink(p);
		free(p);
	}
	rmdir(tmp);
	free(files);
}

static int
fill(const char *tmp, const char *note, const struct corral_fix_entry *fixes,
    size_t n, const char *blobdir, struct corral_err *err)
{
	struct corral_buf text = CORRAL_BUF_INIT;
	char *files = corral_path_join(tmp, FILES), *manifest = corral_path_join(tmp, MANIFEST), *from;
	struct corral_err e;
	size_t i, j;
	int rc = 0;

	if (!files || !manifest)
		rc = corral_err_set(err, ENOMEM, "bundle");
	else if (mkdir(files, 0777) < 0)
		rc = corral_err_set(err, errno, "cannot create '%s'", files);
	for (i = 0; i < n && rc == 0; i++)
		for (j = 0; j < fixes[i].files.n && rc == 0; j++) {
			if (!*fixes[i].files.v[j].sha256)
				continue;
			if (!(from = corral_path_join(blobdir, fixes[i].files.v[j].sha256)))
				return corral_err_set(err, ENOMEM, "bundle");
			if ((rc = corral_blob_check(blobdir,
			    fixes[i].files.v[j].sha256, &e)) < 0)
				corral_err_set(err, e.errnum, "'%s': %s", from,
				    e.msg);
			else
				rc = corral_blob_put(files, from,
				    fixes[i].files.v[j].sha256, err);
			free(from);
		}
	if (rc == 0 && format_manifest(&text, note, fixes, n) < 0)
		rc = corral_err_set(err, ENOMEM, "bundle");
	if (rc == 0 && corral_atomic_file(manifest, text.data, text.len, 0,
	    err) < 0)
		rc = -1;
	corral_buf_release(&text);
	free(files);
	free(manifest);
	return rc;
}

int
corral_bundle_write(const char *dir, const char *note,
    const struct corral_fix_entry *fixes, size_t n, const char *blobdir,
    struct corral_err *err)
{
	struct stat st;
	char *tmp;
	int rc;

	if (lstat(dir, &st) == 0)
		return corral_err_set(err, 0, "'%s' exists; a bundle is never "
		    "written over anything", dir);
	if (!(tmp = malloc(strlen(dir) + sizeof(".tmp.XXXXXX"))))
		return corral_err_set(err, ENOMEM, "bundle");
	sprintf(tmp, "%s.tmp.XXXXXX", dir);
	if (!mkdtemp(tmp)) {
		rc = corral_err_set(err, errno, "cannot create '%s'", tmp);
		free(tmp);
		return rc;
	}
	chmod(tmp, 0777 & ~corral_umask());
	rc = fill(tmp, note, fixes, n, blobdir, err);
	if (rc == 0 && rename(tmp, dir) < 0)
		rc = corral_err_set(err, errno, "cannot rename '%s' to '%s'",
		    tmp, dir);
	if (rc == 0)
		rc = corral_fsync_parent(dir, err);
	else
		remove_partial(tmp, fixes, n);
	free(tmp);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Reading and describing                                               */

/* The checks a manifest must pass beyond its shape, for fix f. */
static int
check_fix(const struct corral_fix_entry *f, struct corral_err *err)
{
	struct corral_buf area = CORRAL_BUF_INIT;
	size_t i, j;
	int rc = 0;

	for (i = 0; i < f->files.n && rc == 0; i++) {
		rc = corral_path_check(f->files.v[i].path, err);
		for (j = 0; j < i && rc == 0; j++)
			if (!strcmp(f->files.v[i].path, f->files.v[j].path))
				rc = corral_err_set(err, 0, "path '%s' appears "
				    "twice", f->files.v[i].path);
	}
	if (rc == 0 && corral_bundle_area(&f->files, &area) < 0)
		rc = corral_err_set(err, ENOMEM, "bundle");
	else if (rc == 0 && strcmp(area.data, f->area))
		rc = corral_err_set(err, 0, "area '%s' is not the area of its "
		    "files, '%s'", f->area, area.data);
	corral_buf_release(&area);
	return rc;
}

int
corral_bundle_read(const char *dir, struct corral_manifest *m,
    struct corral_err *err)
{
	struct corral_buf text = CORRAL_BUF_INIT;
	char *path = corral_path_join(dir, MANIFEST);
	struct corral_err e;
	size_t i;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	if (!path)
		return corral_err_set(err, ENOMEM, "bundle");
	if (corral_read_file(path, &text, err) < 0)
		goto out;
	if (corral_json_manifest(text.data, text.len, m, &e) < 0) {
		corral_err_set(err, e.errnum, "'%s': %s", path, e.msg);
		goto out;
	}
	if (m->version != CORRAL_BUNDLE_VERSION) {
		corral_err_set(err, 0, "'%s': bundle_version %ld, this corral "
		    "reads %d; refusing to guess", dir, m->version,
		    CORRAL_BUNDLE_VERSION);
		goto out;
	}
	for (i = 0, rc = 0; i < m->nfixes && rc == 0; i++)
		if ((rc = check_fix(&m->fixes[i], &e)) < 0)
			corral_err_set(err, 0, "'%s': fix %zu: %s", dir, i + 1,
			    e.msg);
out:
	if (rc < 0)
		corral_manifest_release(m);
	corral_buf_release(&text);
	free(path);
	return rc;
}

int
corral_bundle_describe(const struct corral_manifest *m, struct corral_buf *b)
{
	struct corral_strv areas = CORRAL_STRV_INIT;
	const struct corral_change *c;
	size_t i, j;
	int rc = 0;

	for (i = 0; i < m->nfixes && rc == 0; i++)
		rc = corral_strv_add(&areas, m->fixes[i].area);
	corral_strv_sort_unique(&areas);
	rc |= corral_buf_addf(b, "%zu fix(es) across %zu area(s): ",
	    m->nfixes, areas.n);
	for (i = 0; i < areas.n; i++)
		rc |= corral_buf_addf(b, "%s%s", i ? ", " : "", areas.v[i]);
	rc |= corral_buf_addf(b, "%s\n", areas.n ? "" : "none");
	if (m->note && *m->note)
		rc |= corral_buf_addf(b, "note: %s\n", m->note);
	for (i = 0; i < m->nfixes; i++) {
		rc |= corral_buf_addf(b, "  [%s] %s -- repairs %s (%s)\n",
		    m->fixes[i].area, m->fixes[i].identity,
		    m->fixes[i].repairs, m->fixes[i].trust);
		for (j = 0; j < m->fixes[i].files.n; j++) {
			c = &m->fixes[i].files.v[j];
			rc |= corral_buf_addf(b, "      %-6s %s\n",
			    c->action == CORRAL_ACTION_WRITE ? "write" :
			    "delete", c->path);
		}
	}
	corral_strv_release(&areas);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Applying                                                             */

void
corral_bundle_opts_init(struct corral_bundle_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->dry_run = 1;		/* the safety default, as for corral-fix */
}

/* What a path holds once the fixes planned so far are applied. */
struct overlay {
	struct corral_changes planned;	/* path -> sha256 ("" absent) */
};

struct plan {
	const struct corral_bundle_opts *o;
	struct corral_bundle_report *r;
	char *files;			/* BUNDLE/files */
	struct overlay ov;
	struct corral_buf why;		/* the current fix's problems */
};

/* The planned state of path, or NULL when no planned fix touches it. */
static const char *
planned(const struct plan *p, const char *path)
{
	size_t i;

	for (i = p->ov.planned.n; i-- > 0; )
		if (!strcmp(p->ov.planned.v[i].path, path))
			return p->ov.planned.v[i].sha256;
	return NULL;
}

static int
problem(struct plan *p, const char *fmt, const char *a, const char *b)
{
	if (p->why.len && corral_buf_addstr(&p->why, "; ") < 0)
		return -1;
	return corral_buf_addf(&p->why, fmt, a, b);
}

int
corral_bundle_requested(const struct corral_fix_entry *f,
    const struct corral_strv *requested, struct corral_buf *why)
{
	struct corral_strv areas = CORRAL_STRV_INIT;
	size_t i, j;
	int rc = requested ? areas_of(&f->files, &areas) : 0, yes = 1;

	for (i = 0; rc == 0 && requested && i < areas.n && yes; i++) {
		for (j = 0; j < requested->n; j++)
			if (!strcmp(areas.v[i], requested->v[j]))
				break;
		if (j < requested->n)
			continue;
		yes = 0;
		rc = corral_buf_addf(why, "area '%s' not requested", areas.v[i]);
		if (rc == 0 && areas.n > 1)
			rc = corral_buf_addf(why, " (the fix touches %s; it "
			    "applies only when all its areas are requested)",
			    f->area);
	}
	corral_strv_release(&areas);
	return rc < 0 ? -1 : yes;
}

/*
 * Judge one file of a fix against the root as planned so far: 1 ready,
 * 2 already as the fix makes it, 0 a problem (added to p->why), -1
 * ENOMEM.
 */
static int
judge_file(struct plan *p, const struct corral_change *c)
{
	char now[CORRAL_SHA256_HEX];
	const char *cur, *target = c->sha256;
	struct corral_err e;

	if (c->action == CORRAL_ACTION_WRITE &&
	    corral_blob_check(p->files, c->sha256, &e) < 0)
		return problem(p, "'%s': %s", c->path, e.msg) < 0 ? -1 : 0;
	if (!(cur = planned(p, c->path))) {
		if (corral_path_state(p->o->root, c->path, now, &e) < 0)
			return problem(p, "%s%s", e.msg, "") < 0 ? -1 : 0;
		cur = now;
	}
	if (!strcmp(cur, target))
		return 2;
	if (!strcmp(cur, c->before))
		return 1;
	if (!*c->before)
		return problem(p, "'%s' did not exist when this bundle was "
		    "made, and exists now%s", c->path, "") < 0 ? -1 : 0;
	if (!*cur)
		return problem(p, "'%s' has been deleted since this bundle "
		    "was made%s", c->path, "") < 0 ? -1 : 0;
	return problem(p, "'%s' has changed since this bundle was made%s",
	    c->path, "") < 0 ? -1 : 0;
}

/* Decide fix f's state; a fix to apply has its targets planned. */
static int
plan_fix(struct plan *p, const struct corral_fix_entry *f,
    struct corral_bundle_outcome *out)
{
	size_t i, ready = 0;
	int rc;

	out->fix = f;
	corral_buf_reset(&p->why);
	if ((rc = corral_bundle_requested(f, p->o->areas, &p->why)) <= 0) {
		out->state = CORRAL_BUNDLE_SKIPPED;
		return rc < 0 || !(out->reason = strdup(p->why.data)) ? -1 : 0;
	}
	corral_buf_reset(&p->why);
	rc = 0;
	for (i = 0; i < f->files.n && rc >= 0; i++)
		if ((rc = judge_file(p, &f->files.v[i])) == 1)
			ready++;
	if (rc < 0)
		return -1;
	if (p->why.len) {
		out->state = CORRAL_BUNDLE_REFUSED;
		return (out->reason = strdup(p->why.data)) ? 0 : -1;
	}
	out->state = ready ? CORRAL_BUNDLE_APPLIED : CORRAL_BUNDLE_ALREADY;
	for (i = 0; ready && i < f->files.n; i++)
		if (corral_changes_add(&p->ov.planned, f->files.v[i].path,
		    CORRAL_ACTION_WRITE, f->files.v[i].sha256, NULL) < 0)
			return -1;
	return 0;
}

/* All or nothing: one refusal holds back every fix that would apply. */
static int
hold_back(struct corral_bundle_report *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		if (r->outcomes[i].state != CORRAL_BUNDLE_APPLIED)
			continue;
		r->outcomes[i].state = CORRAL_BUNDLE_HELD;
		if (!(r->outcomes[i].reason = strdup("held back: another fix "
		    "was refused, and the bundle applies all or nothing "
		    "(-p applies fix by fix)")))
			return -1;
	}
	return 0;
}

/* The changes the fixes to apply make, once per path, in order. */
static int
changes_to_make(struct plan *p, struct corral_changes *out)
{
	const struct corral_change *c;
	char now[CORRAL_SHA256_HEX];
	size_t i, j, k;

	for (i = 0; i < p->r->n; i++) {
		if (p->r->outcomes[i].state != CORRAL_BUNDLE_APPLIED)
			continue;
		for (j = 0; j < p->r->outcomes[i].fix->files.n; j++) {
			c = &p->r->outcomes[i].fix->files.v[j];
			for (k = 0; k < out->n; k++)
				if (!strcmp(out->v[k].path, c->path))
					break;
			if (k < out->n || corral_path_state(p->o->root,
			    c->path, now, NULL) < 0 || !strcmp(now, c->sha256))
				continue;
			if (corral_changes_add(out, c->path, c->action,
			    c->sha256, c->before) < 0)
				return -1;
		}
	}
	return 0;
}

/* Write the planned changes under a journal.  0, or -1 with err set. */
static int
write_planned(struct plan *p, struct corral_journal *j,
    struct corral_err *err)
{
	struct corral_changes c = CORRAL_CHANGES_INIT;
	size_t i;
	int rc = 0;

	if (changes_to_make(p, &c) < 0)
		rc = corral_err_set(err, ENOMEM, "apply");
	if (rc == 0 && !c.n)	/* nothing to write: leave the root alone */
		return corral_journal_rollback(j, NULL, err);
	for (i = 0; i < c.n && rc == 0; i++)
		rc = corral_journal_save(j, c.v[i].path, c.v[i].sha256, err);
	if (rc == 0 && (rc = corral_journal_seal(j, err)) == 0)
		rc = corral_apply_changes(p->o->root, &c, p->files, err);
	corral_changes_release(&c);
	if (rc == 0)
		return corral_journal_commit(j, err);
	return corral_journal_abandon(j, err);
}

static int
count(struct corral_bundle_report *r)
{
	struct corral_buf m = CORRAL_BUF_INIT;
	size_t i;
	int rc;

	for (i = 0; i < r->n; i++)
		switch (r->outcomes[i].state) {
		case CORRAL_BUNDLE_APPLIED: r->applied++; break;
		case CORRAL_BUNDLE_ALREADY: r->already++; break;
		case CORRAL_BUNDLE_REFUSED: r->refused++; break;
		case CORRAL_BUNDLE_SKIPPED: r->skipped++; break;
		default: r->held++; break;
		}
	if (r->dry_run)
		rc = corral_buf_addf(&m, "DRY RUN: %zu fix(es) would apply, "
		    "%zu refused, %zu not requested", r->applied, r->refused,
		    r->skipped);
	else
		rc = corral_buf_addf(&m, "Applied %zu fix(es); %zu refused, "
		    "%zu not requested", r->applied, r->refused, r->skipped);
	if (r->already)
		rc |= corral_buf_addf(&m, ", %zu already applied", r->already);
	if (r->held)
		rc |= corral_buf_addf(&m, ", %zu held back", r->held);
	r->message = m.data;
	return rc;
}

static int
plan_all(struct plan *p, struct corral_err *err)
{
	struct corral_bundle_report *r = p->r;
	size_t i;

	r->outcomes = calloc(r->manifest.nfixes + 1, sizeof(*r->outcomes));
	if (!r->outcomes)
		return corral_err_set(err, ENOMEM, "apply");
	for (i = 0; i < r->manifest.nfixes; i++, r->n++)
		if (plan_fix(p, &r->manifest.fixes[i], &r->outcomes[i]) < 0)
			return corral_err_set(err, ENOMEM, "apply");
	for (i = 0; i < r->n; i++)
		if (r->outcomes[i].state == CORRAL_BUNDLE_REFUSED &&
		    !p->o->per_fix)
			return hold_back(r) < 0 ?
			    corral_err_set(err, ENOMEM, "apply") : 0;
	return 0;
}

int
corral_bundle_apply(const struct corral_bundle_opts *o,
    struct corral_bundle_report *r, struct corral_err *err)
{
	struct plan p = { 0 };
	struct corral_journal *j = NULL;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	r->dry_run = o->dry_run;
	p.o = o;
	p.r = r;
	if (corral_bundle_read(o->bundle, &r->manifest, err) < 0)
		return -1;
	if (!(p.files = corral_path_join(o->bundle, FILES))) {
		corral_err_set(err, ENOMEM, "apply");
		goto out;
	}
	if (o->dry_run ? corral_journal_check(o->root, err) < 0 :
	    corral_journal_begin(&j, o->root, err) < 0)
		goto out;
	if (plan_all(&p, err) < 0) {
		if (j)
			corral_journal_rollback(j, NULL, NULL);
		goto out;
	}
	if (j && write_planned(&p, j, err) < 0)
		goto out;
	rc = count(r) < 0 ? corral_err_set(err, ENOMEM, "apply") : 0;
out:
	corral_changes_release(&p.ov.planned);
	corral_buf_release(&p.why);
	free(p.files);
	return rc;
}

void
corral_bundle_report_release(struct corral_bundle_report *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free(r->outcomes[i].reason);
	free(r->outcomes);
	corral_manifest_release(&r->manifest);
	free(r->message);
	memset(r, 0, sizeof(*r));
}

static const char *
state_label(const struct corral_bundle_report *r, int state)
{
	switch (state) {
	case CORRAL_BUNDLE_APPLIED: return r->dry_run ? "would apply" :
	    "applied";
	case CORRAL_BUNDLE_ALREADY: return "already";
	case CORRAL_BUNDLE_REFUSED: return "refused";
	case CORRAL_BUNDLE_SKIPPED: return "skipped";
	default: return "held back";
	}
}

int
corral_bundle_report_text(const struct corral_bundle_report *r,
    struct corral_buf *b)
{
	const struct corral_bundle_outcome *o;
	size_t i;
	int rc = 0;

	for (i = 0; i < r->n; i++) {
		o = &r->outcomes[i];
		rc |= corral_buf_addf(b, "%-12s [%s] %s", state_label(r,
		    o->state), o->fix->area, o->fix->identity);
		if (o->state == CORRAL_BUNDLE_ALREADY)
			rc |= corral_buf_addstr(b, " -- already applied");
		else if (o->reason)
			rc |= corral_buf_addf(b, " -- %s", o->reason);
		rc |= corral_buf_addch(b, '\n');
	}
	return rc | corral_buf_addf(b, "%s\n", r->message);
}

/* "key":[{"identity":..,"area":..,"reason":..},...] for one state. */
static int
json_state(struct corral_buf *b, const struct corral_bundle_report *r,
    const char *key, int state)
{
	const struct corral_bundle_outcome *o;
	size_t i, n = 0;
	int rc = corral_buf_addf(b, "\"%s\":[", key);

	for (i = 0; i < r->n; i++) {
		o = &r->outcomes[i];
		if (o->state != state)
			continue;
		rc |= corral_buf_addstr(b, n++ ? ",{\"identity\":" :
		    "{\"identity\":");
		rc |= corral_buf_addjson(b, o->fix->identity,
		    strlen(o->fix->identity));
		rc |= corral_buf_addstr(b, ",\"area\":");
		rc |= corral_buf_addjson(b, o->fix->area, strlen(o->fix->area));
		if (o->reason) {
			rc |= corral_buf_addstr(b, ",\"reason\":");
			rc |= corral_buf_addjson(b, o->reason,
			    strlen(o->reason));
		}
		rc |= corral_buf_addch(b, '}');
	}
	return rc | corral_buf_addch(b, ']');
}

int
corral_bundle_report_json(const struct corral_bundle_report *r,
    struct corral_buf *b)
{
	int rc = corral_buf_addf(b, "{\"dry_run\":%s,",
	    r->dry_run ? "true" : "false");

	rc |= json_state(b, r, "applied", CORRAL_BUNDLE_APPLIED);
	rc |= corral_buf_addch(b, ',');
	rc |= json_state(b, r, "already", CORRAL_BUNDLE_ALREADY);
	rc |= corral_buf_addch(b, ',');
	rc |= json_state(b, r, "refused", CORRAL_BUNDLE_REFUSED);
	rc |= corral_buf_addch(b, ',');
	rc |= json_state(b, r, "skipped", CORRAL_BUNDLE_SKIPPED);
	rc |= corral_buf_addch(b, ',');
	rc |= json_state(b, r, "held", CORRAL_BUNDLE_HELD);
	rc |= corral_buf_addstr(b, ",\"message\":");
	rc |= corral_buf_addjson(b, r->message, strlen(r->message));
	return rc | corral_buf_addstr(b, "}\n");
}

int
corral_bundle_copy(const char *from, const char *to,
    const struct corral_strv *areas, const char *note, size_t *nfixes,
    struct corral_err *err)
{
	struct corral_buf why = CORRAL_BUF_INIT;
	struct corral_manifest m;
	struct corral_fix_entry *keep;
	char *files;
	size_t i, n = 0;
	int rc = 0;

	if (corral_bundle_read(from, &m, err) < 0)
		return -1;
	keep = calloc(m.nfixes + 1, sizeof(*keep));
	files = corral_path_join(from, FILES);
	if (!keep || !files)
		rc = corral_err_set(err, ENOMEM, "bundle");
	for (i = 0; i < m.nfixes && rc == 0; i++) {
		if ((rc = corral_bundle_requested(&m.fixes[i], areas,
		    &why)) < 0)
			rc = corral_err_set(err, ENOMEM, "bundle");
		else if (rc == 1)
			keep[n++] = m.fixes[i];
		rc = rc < 0 ? -1 : 0;
	}
	if (rc == 0)
		rc = corral_bundle_write(to, note ? note : m.note, keep, n,
		    files, err);
	if (rc == 0 && nfixes)
		*nfixes = n;
	corral_buf_release(&why);
	free(keep);	/* the entries belong to m */
	free(files);
	corral_manifest_release(&m);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Reading manifest.json                                               */

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
	if (cj_str_member(fx, "identity", NULL, &e->identity, err) < 0 ||
	    cj_str_member(fx, "repairs", "", &e->repairs, err) < 0 ||
	    cj_str_member(fx, "trust", "", &e->trust, err) < 0 ||
	    cj_str_member(fx, "area", NULL, &e->area, err) < 0)
		return -1;
	if (cj_member(fx, "n", cj_is_number, "a number", 0, &v, err) < 0)
		return -1;
	if (v && cj_whole(v->valuedouble, 1, &e->n) < 0)
		return corral_err_set(err, 0, "\"n\" is not a whole number");
	e->confidence = -1;
	if (cj_member(fx, "confidence", cj_is_number, "a number", 0, &v,
	    err) < 0)
		return -1;
	if (v)
		e->confidence = v->valuedouble;
	return corral_json_files_parse(fx, &e->files, err);
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
	if (!(doc = cj_object_text(text, len, err)))
		return -1;
	if (cj_member(doc, "bundle_version", cj_is_number, "a number", 1, &v,
	    err) < 0 || cj_str_member(doc, "note", "", &m->note, err) < 0 ||
	    cj_member(doc, "fixes", cj_is_array, "an array", 1, &fixes,
	    err) < 0)
		goto out;
	m->version = cj_whole(v->valuedouble, 0, &m->version) < 0 ? -1 :
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
