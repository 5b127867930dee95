/* See LICENSE file for copyright and license details. */
/*
 * results.c reads the result files record by record, for the scoreboard
 * and the reports, which count the lines that are not records alike, and
 * what summary.json names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/report-private.h"

/* The line rd is at, as a record, to m->row; else named in m->unreadable. */
static int
result_line(const struct report_results *m, struct corral_reader *rd,
    const char *name, int success, struct corral_buf *scratch)
{
	struct corral_json_record r;
	struct corral_buf why = CORRAL_BUF_INIT;
	struct corral_err lerr;
	int rc;

	if (corral_line_blank(rd->line, rd->len))
		return 0;
	if ((m->scanned ? corral_record_scan(rd->line, rd->len, &r, scratch,
	    NULL, NULL, &lerr) : corral_json_record_parse(rd->line, rd->len,
	    &r, &lerr)) == 0) {
		rc = m->row(m->ctx, &r, success);
		corral_json_record_release(&r);
		return rc;
	}
	rc = corral_buf_addf(&why, "%s line %zu: %s", name, rd->lineno,
	    lerr.msg);
	if (rc == 0)
		rc = corral_strv_add(m->unreadable, why.data);
	corral_buf_release(&why);
	return rc;
}

int
report_results_read(const struct report_results *m, const char *name,
    int success, struct corral_err *err)
{
	struct corral_buf path = CORRAL_BUF_INIT, scratch = CORRAL_BUF_INIT;
	struct corral_err lerr;
	struct corral_reader rd;
	int rc;

	if (corral_buf_addf(&path, "%s/%s", m->dir, name) < 0)
		return corral_err_set(err, ENOMEM, "reading '%s'", m->dir);
	if (corral_reader_open(&rd, path.data, &lerr) < 0) {
		rc = lerr.errnum == ENOENT ? 0 : corral_err_set(err,
		    lerr.errnum, "%s", lerr.msg);
		corral_buf_release(&path);
		return rc;
	}
	while ((rc = corral_reader_next(&rd, err)) == 1)
		if (result_line(m, &rd, name, success, &scratch) < 0) {
			rc = corral_err_set(err, ENOMEM, "reading '%s'",
			    path.data);
			break;
		}
	corral_reader_close(&rd);
	corral_buf_release(&path);
	corral_buf_release(&scratch);
	return rc < 0 ? -1 : 1;
}

char *
report_summary_str(const char *dir, const char *key)
{
	struct corral_buf path = CORRAL_BUF_INIT, text = CORRAL_BUF_INIT;
	struct corral_json_obj o;
	const char *v;
	char *dup = NULL;

	if (corral_buf_addf(&path, "%s/summary.json", dir) == 0 &&
	    corral_read_file(path.data, &text, NULL) == 0 && text.len &&
	    corral_json_obj_parse(text.data, text.len, &o, NULL) == 0) {
		if ((v = corral_json_obj_str(&o, key)))
			dup = strdup(v);
		corral_json_obj_release(&o);
	}
	corral_buf_release(&path);
	corral_buf_release(&text);
	return dup;
}
