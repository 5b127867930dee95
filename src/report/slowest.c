/* See LICENSE file for copyright and license details. */
/*
 * slowest.c finds the slowest units of a run in its merged results (as
 * pytest --durations and nextest's SLOW do): the records of both result
 * files that belong to the run summary.json names -- the units that ran
 * this time, not those a slice kept from an earlier run nor those the
 * cache answered (their duration is the stored pass's) -- longest first.
 * Lines that are not records are left to the scoreboard to report.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report-private.h"

static const char *const result_files[] = {
	"successes.jsonl", "failures.jsonl"
};

/* Put (unit, ms) among the n slowest kept in s, longest first. */
static int
keep(struct corral_slowest *s, size_t n, const char *unit, long long ms)
{
	size_t i;
	char *name;

	if (s->n == n && ms <= s->ms[n - 1])
		return 0;
	if (!(name = strdup(unit)))
		return -1;
	if (s->n == n)
		free(s->unit[--s->n]);
	for (i = s->n; i > 0 && s->ms[i - 1] < ms; i--) {
		s->unit[i] = s->unit[i - 1];
		s->ms[i] = s->ms[i - 1];
	}
	s->unit[i] = name;
	s->ms[i] = ms;
	s->n++;
	return 0;
}

static int
read_results(const char *path, const char *run, size_t n,
    struct corral_slowest *s, struct corral_err *err)
{
	struct corral_buf scratch = CORRAL_BUF_INIT;
	struct corral_json_record r;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *fp;
	int rc = 0;

	if (!(fp = corral_fopen_input(path, err)))
		return err->errnum == ENOENT ? 0 : -1;
	while (rc == 0 && (len = getline(&line, &cap, fp)) != -1) {
		len = (ssize_t)corral_line_chomp(line, (size_t)len);
		if (corral_record_scan(line, (size_t)len, &r, &scratch, NULL,
		    NULL, NULL) < 0)
			continue;
		if (r.duration_ms >= 0 && !r.cached && (!run || (r.run &&
		    !strcmp(r.run, run))))
			rc = keep(s, n, r.unit, r.duration_ms);
		corral_json_record_release(&r);
	}
	if (rc < 0)
		corral_err_set(err, ENOMEM, "cannot read '%s'", path);
	else if (ferror(fp))
		rc = corral_err_set(err, errno, "cannot read '%s'", path);
	free(line);
	fclose(fp);
	corral_buf_release(&scratch);
	return rc;
}

int
corral_slowest_read(const char *dir, size_t n, struct corral_slowest *s,
    struct corral_err *err)
{
	struct corral_buf path = CORRAL_BUF_INIT;
	char *run;
	size_t i;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	if (n == 0)
		return 0;
	s->unit = calloc(n, sizeof(*s->unit));
	s->ms = calloc(n, sizeof(*s->ms));
	if (!s->unit || !s->ms)
		return corral_err_set(err, ENOMEM, "cannot read '%s'", dir);
	run = report_summary_str(dir, "run");
	for (i = 0; i < 2 && rc == 0; i++) {
		corral_buf_reset(&path);
		if (corral_buf_addf(&path, "%s/%s", dir, result_files[i]) < 0)
			rc = corral_err_set(err, ENOMEM, "cannot read '%s'",
			    dir);
		else
			rc = read_results(path.data, run, n, s, err);
	}
	free(run);
	corral_buf_release(&path);
	return rc;
}

void
corral_slowest_release(struct corral_slowest *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->unit[i]);
	free(s->unit);
	free(s->ms);
	memset(s, 0, sizeof(*s));
}
