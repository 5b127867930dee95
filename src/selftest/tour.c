/* See LICENSE file for copyright and license details. */
/*
 * tour.c runs a real fan-out the way a user's project does -- a Makefile
 * that includes corral.mk, then make -jN corral-run -- in a throwaway
 * project, and reads back what it left.  corral-demo and corral-doctor
 * both use it, and neither takes the merge's word for the result: the
 * counts here come from the rows of the result files and the agents'
 * logs, unit by unit.  Each check's note says how many checks its clone
 * held, so a clone that saw another agent's units shows up too.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "record/record.h"
#include "selftest/selftest.h"

static const char check_sh[] =
    "#!/bin/sh\n"
    "# One check of a corral tour.  The unit U passes when checks/U says\n"
    "# \"pass\".  The note counts the checks this agent's clone holds:\n"
    "# those of its own units, and nobody else's.\n"
    "n=$(ls checks | wc -l | tr -d ' ')\n"
    "read want < \"checks/$CORRAL_UNIT\" || want=missing\n"
    "if [ \"$want\" = pass ]; then\n"
    "\techo \"PASS: ran $CORRAL_UNIT; its clone holds $n checks\" "
    "> \"$CORRAL_NOTE\"\n"
    "\texit 0\n"
    "fi\n"
    "echo \"FAIL: ran $CORRAL_UNIT, which fails on purpose; its clone "
    "holds $n checks\" > \"$CORRAL_NOTE\"\n"
    "exit 1\n";

static int
write_file(const char *dir, const char *name, const struct corral_buf *b,
    struct corral_err *err)
{
	struct corral_buf path = CORRAL_BUF_INIT;
	int rc;

	if (corral_buf_addf(&path, "%s/%s", dir, name) < 0)
		return corral_err_set(err, errno, "writing the tour project");
	rc = corral_atomic_file(path.data, b->data ? b->data : "", b->len, 0,
	    err);
	corral_buf_release(&path);
	return rc < 0 ? -1 : 0;
}

static int
write_project(const struct corral_tour *t, struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT, name = CORRAL_BUF_INIT;
	size_t i;
	int rc = -1;

	for (i = 0; i < t->units->n; i++) {
		corral_buf_reset(&b);
		corral_buf_reset(&name);
		if (corral_buf_addf(&name, "checks/%s", t->units->v[i]) < 0 ||
		    corral_buf_addstr(&b, corral_strv_has(t->failing, t->units->v[i]) ?
		    "fail\n" : "pass\n") < 0)
			goto nomem;
		if (write_file(t->dir, name.data, &b, err) < 0)
			goto out;
	}
	corral_buf_reset(&b);
	if (corral_buf_addstr(&b, check_sh) < 0)
		goto nomem;
	if (write_file(t->dir, "check.sh", &b, err) < 0)
		goto out;
	corral_buf_reset(&b);
	rc = corral_buf_addstr(&b, "# A corral tour: each unit is a check "
	    "under checks/, run by check.sh\n# in its agent's private "
	    "clone.\nCORRAL_UNITS     =");
	for (i = 0; i < t->units->n; i++)
		rc |= corral_buf_addf(&b, " %s", t->units->v[i]);
	rc |= corral_buf_addf(&b, "\nCORRAL_CMD       = sh check.sh\n"
	    "CORRAL_PARTS     = check.sh\n"
	    "CORRAL_PARTS_CMD = echo \"checks/$$CORRAL_UNIT\"\n"
	    "include %s\n", t->mk);
	if (rc < 0)
		goto nomem;
	rc = write_file(t->dir, "Makefile", &b, err);
	goto out;
nomem:
	rc = corral_err_set(err, errno, "writing the tour project");
out:
	corral_buf_release(&b);
	corral_buf_release(&name);
	return rc;
}

static int
run_make(const struct corral_tour *t, struct corral_tour_result *r,
    struct corral_err *err)
{
	char jobs[32], agents[48];
	struct corral_buf bin = CORRAL_BUF_INIT;
	const char *argv[] = { t->make, "-C", t->dir, "--no-print-directory",
	    jobs, "corral-run", agents, NULL, NULL };
	struct corral_spawn s = { argv, NULL, NULL, NULL, NULL };
	int rc;

	snprintf(jobs, sizeof(jobs), "-j%d", t->agents);
	snprintf(agents, sizeof(agents), "CORRAL_AGENTS=%d", t->agents);
	if (corral_buf_addf(&bin, "CORRAL_BIN=%s", t->bindir) < 0)
		return corral_err_set(err, errno, "running make");
	argv[7] = bin.data;
	s.out = r->makeout;
	rc = corral_spawn_run(&s, &r->wstatus, err);
	corral_buf_release(&bin);
	return rc;
}

/* The number after "holds " in a note, or -1. */
static long
holds(const char *note)
{
	const char *p = note ? strstr(note, "holds ") : NULL;
	char *end;
	long n;

	if (!p)
		return -1;
	n = strtol(p + 6, &end, 10);
	return end == p + 6 ? -1 : n;
}

/*
 * Call fn for each record line of path; a line that is not a record
 * counts in r->bad.  A file that does not exist has no line.
 */
typedef void line_fn(struct corral_tour_result *r,
    const struct corral_json_record *rec, void *arg);

static int
each_record(const char *path, struct corral_tour_result *r, line_fn *fn,
    void *arg, struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_json_record rec;
	struct corral_err lerr;
	char *line, *nl;

	if (access(path, F_OK) < 0 && errno == ENOENT)
		return 0;
	if (corral_read_file(path, &b, err) < 0) {
		corral_buf_release(&b);
		return -1;
	}
	for (line = b.data; line && *line; line = nl + 1) {
		if (!(nl = strchr(line, '\n')))
			nl = line + strlen(line) - 1;
		else
			*nl = '\0';
		if (!*line || corral_seal_is(line, strlen(line)))
			continue;
		if (corral_json_record_parse(line, strlen(line), &rec,
		    &lerr) < 0) {
			r->bad++;
			continue;
		}
		fn(r, &rec, arg);
		corral_json_record_release(&rec);
	}
	corral_buf_release(&b);
	return 0;
}

struct tally {
	struct corral_set *counts;	/* population unit -> rows */
	int failed;			/* reading failures.jsonl */
	size_t rows;			/* rows of the log being read */
	long held;			/* what its notes say, -2 when they differ */
	int nomem;
};

static void
count_row(struct corral_tour_result *r, const struct corral_json_record *rec,
    void *arg)
{
	struct tally *t = arg;
	long *vp = corral_set_get(t->counts, rec->unit);

	if (vp)
		++*vp;
	else
		r->stray++;
	if (!t->failed)
		r->passed++;
	else if (r->failed++, corral_strv_add(&r->failed_units, rec->unit) < 0)
		t->nomem = 1;
}

static void
log_row(struct corral_tour_result *r, const struct corral_json_record *rec,
    void *arg)
{
	struct tally *t = arg;
	long n = holds(rec->note);

	(void)r;
	t->rows++;
	if (t->rows == 1)
		t->held = n;
	else if (t->held != n)
		t->held = -2;
}

/* Count the logs, and the rows whose clone held just its agent's checks. */
static int
read_logs(struct corral_tour_result *r, struct corral_err *err)
{
	struct corral_buf dir = CORRAL_BUF_INIT, path = CORRAL_BUF_INIT;
	struct tally t = { 0 };
	struct dirent *de;
	size_t n;
	DIR *d;
	int rc = 0;

	if (corral_buf_addf(&dir, "%s/logs", r->out) < 0)
		return corral_err_set(err, errno, "reading the logs");
	if (!(d = opendir(dir.data))) {
		rc = errno == ENOENT ? 0 : corral_err_set(err, errno,
		    "cannot open '%s'", dir.data);
		goto out;
	}
	while (rc == 0 && (de = readdir(d))) {
		n = strlen(de->d_name);
		if (strncmp(de->d_name, "agent-", 6))
			continue;
		if (n > 11 && !strcmp(de->d_name + n - 11, ".jsonl.part"))
			r->unfinished++;
		if (n <= 6 || strcmp(de->d_name + n - 6, ".jsonl"))
			continue;
		r->logs++;
		corral_buf_reset(&path);
		t.rows = 0;
		if (corral_buf_addf(&path, "%s/%s", dir.data, de->d_name) < 0)
			rc = corral_err_set(err, errno, "reading the logs");
		else if ((rc = each_record(path.data, r, log_row, &t, err)) == 0
		    && t.held >= 0 && (size_t)t.held == t.rows)
			r->isolated += t.rows;
	}
	closedir(d);
out:
	corral_buf_release(&dir);
	corral_buf_release(&path);
	return rc;
}

static size_t
entries(const char *path)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	if (!(d = opendir(path)))
		return 0;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
read_results(const struct corral_tour *t, struct corral_tour_result *r,
    struct corral_err *err)
{
	struct corral_buf path = CORRAL_BUF_INIT;
	struct tally ta = { 0 };
	size_t i;
	long *vp;
	int rc = -1;

	if (!(ta.counts = corral_set_new()))
		return corral_err_set(err, errno, "reading the results");
	for (i = 0; i < t->units->n; i++)
		if (corral_set_put(ta.counts, t->units->v[i], 0, NULL) < 0)
			goto nomem;
	if (corral_buf_addf(&path, "%s/successes.jsonl", r->out) < 0)
		goto nomem;
	if (each_record(path.data, r, count_row, &ta, err) < 0)
		goto out;
	corral_buf_reset(&path);
	ta.failed = 1;
	if (corral_buf_addf(&path, "%s/failures.jsonl", r->out) < 0)
		goto nomem;
	if (each_record(path.data, r, count_row, &ta, err) < 0)
		goto out;
	if (ta.nomem)
		goto nomem;
	if (r->failed_units.n)
		qsort(r->failed_units.v, r->failed_units.n, sizeof(char *),
		    cmp_str);
	for (i = 0; i < t->units->n; i++) {
		vp = corral_set_get(ta.counts, t->units->v[i]);
		r->once += *vp == 1;
		r->twice += *vp > 1;
	}
	corral_buf_reset(&path);
	if (corral_buf_addf(&path, "%s/work", r->out) < 0)
		goto nomem;
	r->leftovers = entries(path.data);
	rc = read_logs(r, err);
	goto out;
nomem:
	corral_err_set(err, errno, "reading the results");
out:
	corral_set_free(ta.counts);
	corral_buf_release(&path);
	return rc;
}

int
corral_tour_run(const struct corral_tour *t, struct corral_tour_result *r,
    struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT;

	memset(r, 0, sizeof(*r));
	if (corral_buf_addf(&b, "%s/checks", t->dir) < 0 ||
	    !(r->out = malloc(strlen(t->dir) + sizeof("/.corral"))) ||
	    !(r->makeout = malloc(strlen(t->dir) + sizeof("/make.out")))) {
		corral_buf_release(&b);
		return corral_err_set(err, errno, "running the tour");
	}
	sprintf(r->out, "%s/.corral", t->dir);
	sprintf(r->makeout, "%s/make.out", t->dir);
	if (corral_mkdir_p(b.data, 0777, err) < 0) {
		corral_buf_release(&b);
		return -1;
	}
	corral_buf_release(&b);
	if (write_project(t, err) < 0 || run_make(t, r, err) < 0)
		return -1;
	return read_results(t, r, err);
}

void
corral_tour_release(struct corral_tour_result *r)
{
	corral_strv_release(&r->failed_units);
	free(r->out);
	free(r->makeout);
	r->out = r->makeout = NULL;
}

char *
corral_tour_tmpdir(const char *prefix, struct corral_err *err)
{
	const char *tmp = getenv("TMPDIR");
	char *path;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (!(path = malloc(strlen(tmp) + strlen(prefix) + 8))) {
		corral_err_set(err, errno, "making a temporary directory");
		return NULL;
	}
	sprintf(path, "%s/%sXXXXXX", tmp, prefix);
	if (!mkdtemp(path)) {
		corral_err_set(err, errno, "cannot make a temporary directory "
		    "in '%s'", tmp);
		free(path);
		return NULL;
	}
	return path;
}
