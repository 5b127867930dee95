/* See LICENSE file for copyright and license details. */
/*
 * verdict.c reads a run's summary.json (which the merge wrote) for the
 * exit status of corral-run: every unit passed, each exactly once, or not;
 * a summary.json older than the run is no verdict of it.
 */
#include <errno.h>
#include <sys/stat.h>

#include "base/base.h"
#include "report/report.h"

int
corral_summary_verdict(const char *dir, long long since_ms,
    struct corral_err *err)
{
	struct corral_buf path = CORRAL_BUF_INIT, text = CORRAL_BUF_INIT;
	struct corral_json_obj o;
	struct stat st;
	long long units, successes;
	int rc = -1;

	if (corral_buf_addf(&path, "%s/summary.json", dir) < 0) {
		corral_err_set(err, ENOMEM, "cannot read '%s'", dir);
		goto out;
	}
	if (stat(path.data, &st) < 0 || (long long)st.st_mtim.tv_sec * 1000 +
	    st.st_mtim.tv_nsec / 1000000 < since_ms) {
		corral_err_set(err, 0, "no result was written to '%s'", dir);
		goto out;
	}
	if (corral_read_file(path.data, &text, err) < 0)
		goto out;
	if (corral_json_obj_parse(text.data, text.len, &o, err) < 0)
		goto out;
	units = corral_json_obj_int(&o, "units");
	successes = corral_json_obj_int(&o, "successes");
	rc = units >= 0 && successes == units &&
	    corral_json_obj_int(&o, "failures") == 0 &&
	    corral_json_obj_int(&o, "missing") == 0 &&
	    corral_json_obj_int(&o, "duplicates") == 0 ? 0 : 1;
	corral_json_obj_release(&o);
out:
	corral_buf_release(&path);
	corral_buf_release(&text);
	return rc;
}
