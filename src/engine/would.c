/* See LICENSE file for copyright and license details. */
/*
 * What a corral-run would run now, asked without running it (corral-list,
 * make -q corral-run): CORRAL_OUT's state copied into a scratch directory,
 * times kept, where the engine's own graph brings the plan, the parts and
 * the manifests up to date as a run would; then each slice's stamp is
 * compared as make compares it.  CORRAL_OUT itself is only read.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "record/record.h"

/* from (a regular file) copied to to, its times kept. */
static int
copy_file(const char *from, const char *to, struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct timespec times[2];
	struct stat st;
	int fd = -1, rc = -1;

	if (corral_read_file(from, &b, err) < 0)
		goto out;
	if (stat(from, &st) < 0) {
		corral_err_set(err, errno, "cannot stat '%s'", from);
		goto out;
	}
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	if ((fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW,
	    0666)) < 0 || corral_write_all(fd, b.data ? b.data : "",
	    b.len) < 0 || futimens(fd, times) < 0) {
		corral_err_set(err, errno, "cannot copy '%s' to '%s'", from,
		    to);
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0 && close(fd) < 0 && rc == 0)
		rc = corral_err_set(err, errno, "cannot write '%s'", to);
	corral_buf_release(&b);
	return rc;
}

/* The regular files of from (locks aside) copied into to. */
static int
copy_dir(const char *from, const char *to, struct corral_err *err)
{
	struct corral_buf src = CORRAL_BUF_INIT, dst = CORRAL_BUF_INIT;
	struct dirent *e;
	struct stat st;
	DIR *d;
	int rc = 0;

	if (!(d = opendir(from)))
		return errno == ENOENT ? 0 : corral_err_set(err, errno,
		    "cannot open '%s'", from);
	while (rc == 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".lock") ||
		    !strcmp(e->d_name, ".merge.lock"))
			continue;
		corral_buf_reset(&src);
		corral_buf_reset(&dst);
		if (corral_buf_addf(&src, "%s/%s", from, e->d_name) < 0 ||
		    corral_buf_addf(&dst, "%s/%s", to, e->d_name) < 0)
			rc = corral_err_set(err, ENOMEM, "scratch");
		else if (lstat(src.data, &st) == 0 && S_ISREG(st.st_mode))
			rc = copy_file(src.data, dst.data, err);
	}
	closedir(d);
	corral_buf_release(&src);
	corral_buf_release(&dst);
	return rc;
}

int
corral_engine_scratch(const char *out, const char *dir,
    struct corral_err *err)
{
	struct corral_buf from = CORRAL_BUF_INIT, to = CORRAL_BUF_INIT;
	int rc = -1;

	if (corral_buf_addf(&from, "%s/slices", out) < 0 ||
	    corral_buf_addf(&to, "%s/slices", dir) < 0) {
		corral_err_set(err, ENOMEM, "scratch");
		goto out;
	}
	if (mkdir(to.data, 0777) < 0) {
		corral_err_set(err, errno, "cannot make '%s'", to.data);
		goto out;
	}
	rc = copy_dir(out, dir, err);
	if (rc == 0)
		rc = copy_dir(from.data, to.data, err);
out:
	corral_buf_release(&from);
	corral_buf_release(&to);
	return rc;
}

/* 1 when a is later than b. */
static int
later(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec &&
	    a->tv_nsec > b->tv_nsec);
}

/*
 * How make finds target against its prerequisites deps: 0 up to date,
 * 1 missing, 2 older than deps[0], 3 older than another (or one missing).
 */
static int
out_of_date(const char *target, const char *const *deps, size_t n)
{
	struct stat t, d;
	size_t i;

	if (stat(target, &t) < 0)
		return 1;
	for (i = 0; i < n; i++)
		if (stat(deps[i], &d) < 0 || later(&d.st_mtim, &t.st_mtim))
			return i == 0 ? 2 : 3;
	return 0;
}

/* Slice k of slices/: how its stamp stands (out_of_date). */
static int
slice_stands(size_t k)
{
	char units[64], manifest[64], pass[64];
	const char *deps[3];

	snprintf(units, sizeof(units), "slices/%zu.units", k);
	snprintf(manifest, sizeof(manifest), "slices/%zu.manifest", k);
	snprintf(pass, sizeof(pass), "slices/%zu.pass", k);
	deps[0] = units;
	deps[1] = manifest;
	deps[2] = "slice-config";
	return out_of_date(pass, deps, 3);
}

/* The last result's failed units, each with its status's index in why. */
static int
last_failures(struct corral_set *failed, struct corral_strv *why,
    struct corral_err *err)
{
	struct corral_json_record r;
	struct corral_reader rd;
	int got, rc = 0;

	if (access("failures.jsonl", F_OK) < 0)
		return 0;
	if (corral_reader_open(&rd, "failures.jsonl", err) < 0)
		return -1;
	while (rc == 0 && (got = corral_reader_next(&rd, err)) > 0) {
		if (corral_json_record_parse(rd.line, rd.len, &r, NULL) < 0)
			continue;
		if (!r.ok && (corral_strv_add(why, r.status ? r.status :
		    "fail") < 0 || corral_set_put(failed, r.unit,
		    (long)why->n - 1, NULL) < 0))
			rc = corral_err_set(err, ENOMEM, "failures");
		corral_json_record_release(&r);
	}
	corral_reader_close(&rd);
	return got < 0 ? -1 : rc;
}

/* Why unit runs again, its slice standing as stood (out_of_date). */
static const char *
reason(const char *unit, int stood, const struct corral_set *last,
    const struct corral_set *failed, const struct corral_strv *why,
    int always)
{
	long *i;

	if (!corral_set_get(last, unit))
		return "new";
	if ((i = corral_set_get(failed, unit)))
		return why->v[*i];
	if (always)
		return "forced";
	/*
	 * A pass whose slice runs again for a slice-mate's failure, or for a
	 * new plan, with its inputs as they were: the cache answers for it.
	 */
	return stood == 3 ? "changed" : NULL;
}

/* The units of slice k that run, in run (a unit to its reason's text). */
static int
slice_runs(size_t k, int always, const struct corral_set *last,
    const struct corral_set *failed, const struct corral_strv *why,
    struct corral_strv *reasons, struct corral_set *run,
    struct corral_err *err)
{
	struct corral_strv units = CORRAL_STRV_INIT;
	char path[64];
	size_t i;
	int stood = slice_stands(k), rc = 0;

	if (!stood && !always)
		return 0;
	snprintf(path, sizeof(path), "slices/%zu.units", k);
	if (corral_units_load(path, '\n', &units, 0, err) < 0)
		return -1;
	for (i = 0; rc == 0 && i < units.n; i++) {
		const char *r = reason(units.v[i], stood, last, failed, why,
		    always);

		if (r && (corral_strv_add(reasons, r) < 0 ||
		    corral_set_put(run, units.v[i], (long)reasons->n - 1,
		    NULL) < 0))
			rc = corral_err_set(err, ENOMEM, "would run");
	}
	corral_strv_release(&units);
	return rc;
}

/* A unit a line, as a set; an absent file is an empty one. */
static int
units_set(const char *path, struct corral_set *set, struct corral_strv *v,
    struct corral_err *err)
{
	size_t i;

	if (access(path, F_OK) < 0)
		return 0;
	if (corral_units_load(path, '\n', v, 0, err) < 0)
		return -1;
	for (i = 0; i < v->n; i++)
		if (corral_set_put(set, v->v[i], 0, NULL) < 0)
			return corral_err_set(err, ENOMEM, "units");
	return 0;
}

/* out gets each unit of units that is in run, in units' order. */
static int
list_runs(const struct corral_strv *units, const struct corral_set *run,
    const struct corral_strv *reasons, struct corral_buf *out,
    struct corral_err *err)
{
	size_t i;
	long *r;

	for (i = 0; i < units->n; i++)
		if ((r = corral_set_get(run, units->v[i])) &&
		    corral_buf_addf(out, "%-7s  %s\n", reasons->v[*r],
		    units->v[i]) < 0)
			return corral_err_set(err, ENOMEM, "would run");
	return 0;
}

int
corral_would_run(const char *last_units, size_t nslices, int always,
    struct corral_buf *out, struct corral_err *err)
{
	struct corral_set *last = corral_set_new(), *failed = corral_set_new();
	struct corral_set *run = corral_set_new();
	struct corral_strv why = CORRAL_STRV_INIT, reasons = CORRAL_STRV_INIT;
	struct corral_strv units = CORRAL_STRV_INIT, lastv = CORRAL_STRV_INIT;
	size_t k;
	int rc = last && failed && run ? 0 :
	    corral_err_set(err, ENOMEM, "would run");

	if (rc == 0)
		rc = units_set(last_units, last, &lastv, err);
	if (rc == 0)
		rc = last_failures(failed, &why, err);
	if (rc == 0)
		rc = corral_units_load("units", '\n', &units, 0, err);
	for (k = 0; rc == 0 && k < nslices; k++)
		rc = slice_runs(k, always, last, failed, &why, &reasons, run,
		    err);
	if (rc == 0)
		rc = list_runs(&units, run, &reasons, out, err);
	corral_set_free(last);
	corral_set_free(failed);
	corral_set_free(run);
	corral_strv_release(&why);
	corral_strv_release(&reasons);
	corral_strv_release(&units);
	corral_strv_release(&lastv);
	return rc ? -1 : 0;
}

int
corral_merged_stands(size_t nslices)
{
	char pass[64];
	size_t k;
	const char *deps[] = { "units", "merge-config" };

	if (out_of_date("merged", deps, 2))
		return 0;
	for (k = 0; k < nslices; k++) {
		snprintf(pass, sizeof(pass), "slices/%zu.pass", k);
		deps[0] = pass;
		if (out_of_date("merged", deps, 1))
			return 0;
	}
	return 1;
}

int
corral_would_only(const struct corral_strv *units, const char *patterns,
    struct corral_buf *out)
{
	struct corral_buf only = CORRAL_BUF_INIT;
	const char *p, *nl;
	int rc = corral_units_matching(units, patterns, &only);

	for (p = only.data; rc == 0 && p && *p; p = nl + 1) {
		nl = strchr(p, '\n');
		rc = corral_buf_addf(out, "%-7s  %.*s\n", "only",
		    (int)(nl - p), p);
	}
	corral_buf_release(&only);
	return rc;
}
