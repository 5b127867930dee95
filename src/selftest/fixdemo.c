/* See LICENSE file for copyright and license details. */
/*
 * fixdemo.c is corral-fix -d: the original's tour of the repair half,
 * run for real in a temporary directory with the real finder and patcher
 * processes.  A planted defect is found; a dry run leaves it alone; an
 * apply repairs it and the finder agrees; a repair that would break
 * something else is rolled back with the system unchanged; the verified
 * repairs leave as a bundle that another copy applies by area, and that
 * refuses a file somebody has since edited.  Every line that states a
 * result is checked, and the number of false ones is returned.
 */
#define _XOPEN_SOURCE 700	/* mkdtemp */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "checkout/checkout.h"
#include "selftest/selftest.h"

struct demo {
	corral_fix_demo_fn *out;
	void *arg;
	char *tmp;		/* everything happens under it */
	int failures;
	struct corral_buf line;
	struct corral_err *err;
};

static void
say(struct demo *d, const char *text)
{
	d->out(d->arg, text);
}

/* "  LABEL           VALUE"; a false claim prints bad and counts. */
static void
claim(struct demo *d, const char *label, int ok, const char *good,
    const char *bad)
{
	struct corral_buf b = CORRAL_BUF_INIT;

	corral_buf_addf(&b, "  %-16s%s", label, ok ? good : bad);
	say(d, b.data ? b.data : "");
	corral_buf_release(&b);
	d->failures += !ok;
}

static int
put(struct demo *d, const char *rel, const char *text)
{
	return corral_atomic_file_at(d->tmp, rel, text, d->err);
}

/* 1 when the file at rel holds exactly text. */
static int
holds(struct demo *d, const char *rel, const char *text)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	char *p = corral_path_join(d->tmp, rel);
	int yes;

	yes = p && corral_read_file(p, &b, NULL) == 0 &&
	    b.len == strlen(text) && (!b.len || !memcmp(b.data, text, b.len));
	corral_buf_release(&b);
	free(p);
	return yes;
}

static int
fix(struct demo *d, const char *root, int dry_run, const char *patcher,
    const char *bundle, struct corral_fix_report *r)
{
	struct corral_fix_opts o;
	char *rootp = corral_path_join(d->tmp, root), *bundlep = bundle ?
	    corral_path_join(d->tmp, bundle) : NULL;
	int rc;

	corral_fix_opts_init(&o);
	o.root = rootp;
	o.dry_run = dry_run;
	o.patcher = patcher;
	o.bundle = bundlep;
	o.note = "corral fix --demo";
	o.workroot = d->tmp;
	rc = rootp && (!bundle || bundlep) ? corral_fix_run(&o, r, d->err) :
	    corral_err_set(d->err, ENOMEM, "demo");
	free(rootp);
	free(bundlep);
	if (rc < 0)
		corral_fix_report_release(r);
	r->root = NULL;
	r->bundle = NULL;
	return rc;
}

static int
part_one(struct demo *d)
{
	static const char broken[] = "# DEADCANARY: this test cannot fail\n";
	struct corral_fix_report r;
	size_t i;

	if (put(d, "system/good.py", "def test_good():\n    assert 2 + 2 "
	    "== 4\n") < 0 || put(d, "system/broken.py", broken) < 0)
		return -1;
	say(d, "a system with one planted defect and one healthy file:");
	if (fix(d, "system", 1, NULL, NULL, &r) < 0)
		return -1;
	corral_buf_reset(&d->line);
	corral_buf_addf(&d->line, "%zu defect(s): ", r.found.n);
	for (i = 0; i < r.found.n; i++)
		corral_buf_addf(&d->line, "%s%s", i ? ", " : "", r.found.v[i]);
	claim(d, "found", r.found.n == 1, d->line.data, d->line.data);
	claim(d, "dry run", r.verified == 1, r.message, r.message);
	claim(d, "the real file", holds(d, "system/broken.py", broken),
	    "UNTOUCHED, as it must be during a dry run",
	    "WAS MODIFIED -- that is a bug in the engine");
	corral_fix_report_release(&r);
	if (fix(d, "system", 0, NULL, NULL, &r) < 0)
		return -1;
	claim(d, "applied", r.applied == 1, r.message, r.message);
	corral_buf_reset(&d->line);
	corral_buf_addf(&d->line, "%zu defect(s) remain", r.remaining.n);
	claim(d, "re-measured", r.remaining.n == 0 && !holds(d,
	    "system/broken.py", broken), d->line.data, d->line.data);
	corral_fix_report_release(&r);
	return 0;
}

/* A digest of every file under rel, for "unchanged". */
static int
digest(struct demo *d, const char *rel, char out[CORRAL_SHA256_HEX])
{
	struct corral_snap s = CORRAL_SNAP_INIT;
	struct corral_buf b = CORRAL_BUF_INIT;
	char *p = corral_path_join(d->tmp, rel);
	size_t i;
	int rc = p ? corral_snap_take(&s, p, NULL, d->err) : -1;

	for (i = 0; rc == 0 && i < s.n; i++)
		rc = corral_buf_addf(&b, "%s %s\n", s.v[i].path,
		    s.v[i].sha256);
	if (rc == 0)
		rc = corral_sha256_buf(b.data ? b.data : "", b.len, out,
		    d->err);
	corral_snap_release(&s);
	corral_buf_release(&b);
	free(p);
	return rc;
}

static int
part_two(struct demo *d)
{
	char before[CORRAL_SHA256_HEX], after[CORRAL_SHA256_HEX];
	struct corral_buf cmd = CORRAL_BUF_INIT;
	struct corral_fix_report r;
	char *script = corral_path_join(d->tmp, "regress.sh");
	int rc = -1;

	if (!script || put(d, "regress.sh", "printf 'real_check()\\n' > "
	    "\"$1/broken2.py\"\nprintf '# DEADCANARY: hollow\\n' > "
	    "\"$1/worse.py\"\n") < 0 || put(d, "system/broken2.py",
	    "# DEADCANARY: cannot fail either\n") < 0 ||
	    corral_buf_addstr(&cmd, "sh ") < 0 ||
	    corral_cmd_quote(&cmd, script) < 0 || digest(d, "system",
	    before) < 0 || fix(d, "system", 0, cmd.data, NULL, &r) < 0)
		goto out;
	say(d, "");
	say(d, "and a repair that would BREAK something else:");
	corral_buf_reset(&d->line);
	corral_buf_addf(&d->line, "%zu rolled back, %zu applied",
	    r.rolled_back, r.applied);
	claim(d, "verdict", r.rolled_back == 1 && r.applied == 0,
	    d->line.data, d->line.data);
	corral_fix_report_release(&r);
	if ((rc = digest(d, "system", after)) == 0)
		claim(d, "the system", !strcmp(before, after),
		    "unchanged -- the bad repair never landed",
		    "GOT THE BAD FIX");
out:
	free(script);
	corral_buf_release(&cmd);
	return rc;
}

static int
describe(struct demo *d)
{
	struct corral_buf text = CORRAL_BUF_INIT;
	struct corral_manifest m;
	char *bundle = corral_path_join(d->tmp, "bundle"), *line, *nl;
	int rc = -1;

	if (bundle && corral_bundle_read(bundle, &m, d->err) == 0) {
		rc = corral_bundle_describe(&m, &text);
		corral_manifest_release(&m);
	}
	say(d, "");
	say(d, "the repairs, labelled so they can be routed:");
	for (line = text.data; rc == 0 && line && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		*nl = '\0';
		corral_buf_reset(&d->line);
		corral_buf_addf(&d->line, "  %s", line);
		say(d, d->line.data);
	}
	corral_buf_release(&text);
	free(bundle);
	return rc;
}

/* What a bundle apply did, for the claims. */
struct outcome {
	size_t applied, refused, already;
	char *message;
};

static int
apply(struct demo *d, const char *area, struct outcome *out)
{
	struct corral_strv areas = CORRAL_STRV_INIT;
	struct corral_bundle_opts o;
	struct corral_bundle_report r;
	int rc;

	memset(&r, 0, sizeof(r));
	corral_bundle_opts_init(&o);
	o.bundle = corral_path_join(d->tmp, "bundle");
	o.root = corral_path_join(d->tmp, "target");
	o.areas = &areas;
	o.dry_run = 0;
	rc = corral_strv_add(&areas, area) < 0 || !o.bundle || !o.root ?
	    corral_err_set(d->err, ENOMEM, "demo") :
	    corral_bundle_apply(&o, &r, d->err);
	free(out->message);
	out->message = NULL;
	if (rc == 0) {
		out->applied = r.applied;
		out->refused = r.refused;
		out->already = r.already;
		if (!(out->message = strdup(r.message)))
			rc = corral_err_set(d->err, ENOMEM, "demo");
	}
	corral_bundle_report_release(&r);
	free((char *)o.bundle);
	free((char *)o.root);
	corral_strv_release(&areas);
	return rc;
}

static int
hand_over(struct demo *d, struct outcome *o)
{
	static const char same[] = "# DEADCANARY: pkg test cannot fail\n";
	static const char top[] = "# DEADCANARY: root test cannot fail\n";
	static const char theirs[] = "# their newer work on root.py\n";

	if (apply(d, "pkg", o) < 0)
		return -1;
	say(d, "");
	say(d, "applying ONLY the `pkg` area to a different copy of the "
	    "system:");
	claim(d, "result", o->applied == 1 && o->refused == 0, o->message,
	    o->message);
	claim(d, "pkg/same.py", !holds(d, "target/pkg/same.py", same),
	    "repaired", "NOT REPAIRED");
	claim(d, "root.py", holds(d, "target/root.py", top),
	    "left alone, nobody asked for it", "CHANGED without being asked");
	if (apply(d, "pkg", o) < 0)
		return -1;
	claim(d, "again", o->already == 1 && o->applied == 0,
	    "already applied -- nothing written", o->message);
	if (put(d, "target/root.py", theirs) < 0 || apply(d, "(root)", o) < 0)
		return -1;
	say(d, "");
	say(d, "and the same bundle against a file somebody has since "
	    "edited:");
	claim(d, "result", o->refused == 1 && o->applied == 0, o->message,
	    o->message);
	claim(d, "their work", holds(d, "target/root.py", theirs),
	    "still there -- the bundle refused rather than overwrite it",
	    "OVERWRITTEN");
	return 0;
}

static int
part_three(struct demo *d)
{
	static const char same[] = "# DEADCANARY: pkg test cannot fail\n";
	static const char top[] = "# DEADCANARY: root test cannot fail\n";
	struct corral_fix_report r;
	struct outcome o = { 0, 0, 0, NULL };
	int rc;

	if (put(d, "elsewhere/pkg/same.py", same) < 0 ||
	    put(d, "elsewhere/root.py", top) < 0 ||
	    put(d, "target/pkg/same.py", same) < 0 ||
	    put(d, "target/root.py", top) < 0 ||
	    fix(d, "elsewhere", 1, NULL, "bundle", &r) < 0)
		return -1;
	corral_fix_report_release(&r);
	rc = describe(d) < 0 ? -1 : hand_over(d, &o);
	free(o.message);
	return rc;
}

static int
make_tmp(struct demo *d)
{
	const char *base = getenv("TMPDIR");
	char *mark;
	int fd;

	if (!base || !*base)
		base = "/tmp";
	if (!(d->tmp = malloc(strlen(base) + sizeof("/corral-fix-demo.XXXXXX"))))
		return corral_err_set(d->err, ENOMEM, "demo");
	sprintf(d->tmp, "%s/corral-fix-demo.XXXXXX", base);
	if (!mkdtemp(d->tmp)) {
		free(d->tmp);
		d->tmp = NULL;
		return corral_err_set(d->err, errno, "cannot create a "
		    "directory in '%s'", base);
	}
	/* Marked as a clone, so corral_clone_remove may remove it. */
	if (!(mark = corral_path_join(d->tmp, CORRAL_CLONE_MARK)) ||
	    (fd = corral_open_state(mark, O_WRONLY | O_CREAT | O_EXCL, 0644,
	    NULL)) < 0) {
		free(mark);
		return corral_err_set(d->err, errno, "cannot create '%s'",
		    d->tmp);
	}
	close(fd);
	free(mark);
	return 0;
}

int
corral_fix_demo(corral_fix_demo_fn *out, void *arg, struct corral_err *err)
{
	struct demo d = { out, arg, NULL, 0, CORRAL_BUF_INIT, err };
	int rc;

	if (make_tmp(&d) < 0)
		return -1;
	say(&d, "corral fix --demo -- the repair half, proven end to end");
	say(&d, "================================================================");
	rc = part_one(&d);
	if (rc == 0)
		rc = part_two(&d);
	if (rc == 0)
		rc = part_three(&d);
	if (corral_clone_remove(d.tmp, rc == 0 ? err : NULL) < 0)
		rc = -1;
	free(d.tmp);
	corral_buf_release(&d.line);
	return rc < 0 ? -1 : d.failures;
}
