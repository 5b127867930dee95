/* See LICENSE file for copyright and license details. */
/*
 * merge.c is the single writer of the shared result files.  It reads every
 * agent-ID.jsonl of a log directory, checks each line on its own, and
 * routes it, byte for byte, to successes.jsonl or failures.jsonl, counting
 * every unit exactly once.  Its invariant: the result files are replaced
 * atomically, under a lock, and only when the whole input is valid, so
 * they always hold a complete merge, old or new, never a mix of lines.
 * Before any of it, every log's seal is checked (record.c): a log changed
 * after its seal, or, when seals are required, one without a seal, is
 * refused whole, named, and its expected units count as not run.
 *
 * Memory follows the number of records, not the log bytes: lines are
 * streamed, each checked and copied to a temporary as it comes, and per
 * record only its line number and a few small facts are kept.  A log in
 * which a unit comes back (a retry: the last line wins) is cut back and
 * copied again from those facts, without parsing.
 *
 * This file holds the run itself, in order: lock, finish an interrupted
 * commit, read the logs, write the missing, commit, append to history.
 * Each step is a module of its own (merge-private.h lists them).
 */
#define _DEFAULT_SOURCE	/* flock(2) */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "merge/merge-private.h"

/* ------------------------------------------------------------------ */
/* messages                                                            */

void
merge_vsay(const struct merge_voice *v, const char *fmt, va_list ap)
{
	struct corral_buf msg = CORRAL_BUF_INIT;

	if (corral_buf_vaddf(&msg, fmt, ap) == 0 && v->report)
		v->report(v->arg, msg.data);
	corral_buf_release(&msg);
}

/* A warning: said, and the merge goes on as if nothing happened. */
void
merge_say(struct merge *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	merge_vsay(&m->voice, fmt, ap);
	va_end(ap);
}

/* Bad input: said, and nothing will be written. */
void
merge_bad(struct merge *m, const char *fmt, ...)
{
	va_list ap;

	m->st->bad++;
	va_start(ap, fmt);
	merge_vsay(&m->voice, fmt, ap);
	va_end(ap);
}

int
merge_nomem(struct corral_err *err)
{
	return corral_err_set(err, ENOMEM, "out of memory");
}

/* ------------------------------------------------------------------ */
/* paths                                                               */

/* path without trailing slashes ("/" stays), malloc'd. */
static char *
trim_slashes(const char *path)
{
	size_t n = strlen(path);
	char *s;

	while (n > 1 && path[n - 1] == '/')
		n--;
	if (!(s = malloc(n + 1)))
		return NULL;
	memcpy(s, path, n);
	s[n] = '\0';
	return s;
}

/* The directory that holds dir: ".corral/logs" -> ".corral". */
static char *
parent_of(const char *dir)
{
	const char *base = corral_path_base(dir);

	if (!strcmp(base, ".") || !strcmp(base, "..") || !strcmp(dir, "/"))
		return corral_path_join(dir, "..");
	return corral_path_dir(dir);
}

/* dir/name, or just name when dir is ".", malloc'd. */
char *
merge_join(const char *dir, const char *name)
{
	return strcmp(dir, ".") ? corral_path_join(dir, name) : strdup(name);
}

/* For qsort of strings, bytewise: statuses and runs. */
int
merge_bytes_cmp(const void *x, const void *y)
{
	const char *const *a = x, *const *b = y;

	return strcmp(*a, *b);
}

/* ------------------------------------------------------------------ */
/* the merge                                                           */

/* Take outdir/.merge.lock, waiting for a merge that holds it. */
static int
lock_outdir(struct merge *m, struct corral_err *err)
{
	char *path;
	int rc = 0;

	if (corral_mkdir_p(m->outdir, 0777, err) < 0)
		return -1;
	if (!(path = merge_join(m->outdir, ".merge.lock")))
		return merge_nomem(err);
	/* Never through a link, nor on a FIFO (io.c). */
	m->lockfd = corral_open_state(path, O_RDWR | O_CREAT, 0666, err);
	if (m->lockfd < 0) {
		rc = -1;
		goto out;
	}
	while ((rc = flock(m->lockfd, LOCK_EX)) < 0 && errno == EINTR)
		;
	if (rc < 0)
		corral_err_set(err, errno, "cannot lock '%s'", path);
out:
	free(path);
	return rc;
}

static int
setup(struct merge *m, struct corral_err *err)
{
	size_t l;

	m->lockfd = m->reread_fd = -1;
	m->status_last = m->run_last = m->inputs_last = -1;
	m->units = corral_fpset_new();
	m->dups = corral_fpset_new();
	m->status_ix = corral_set_new();
	m->run_ix = corral_set_new();
	m->inputs_ix = corral_set_new();
	m->nlayers = m->o->nlogdirs;
	m->logdirs = calloc(m->nlayers, sizeof(*m->logdirs));
	m->dirs = calloc(m->nlayers, sizeof(*m->dirs));
	if (!m->units || !m->dups || !m->status_ix || !m->run_ix || !m->inputs_ix ||
	    !m->logdirs || !m->dirs)
		return merge_nomem(err);
	for (l = 0; l < m->nlayers; l++)
		if (!(m->logdirs[l] = trim_slashes(m->o->logdirs[l])))
			return merge_nomem(err);
	m->logdir = m->logdirs[0];
	if (m->o->outdir)
		m->outdir = trim_slashes(m->o->outdir);
	else
		m->outdir = parent_of(m->logdir);
	if (!m->outdir)
		return merge_nomem(err);
	for (l = 0; l < m->nlayers; l++)
		if (!(m->dirs[l] = opendir(m->logdirs[l])))
			return corral_err_set(err, errno, "cannot open '%s'",
			    m->logdirs[l]);
	return 0;
}

static void
teardown(struct merge *m)
{
	size_t i;

	merge_out_abort(&m->succ);
	merge_out_abort(&m->fail);
	merge_out_abort(&m->sum);
	merge_out_abort(&m->rep);
	if (m->lockfd >= 0)
		close(m->lockfd);
	for (i = 0; i < m->nlayers; i++) {
		if (m->dirs && m->dirs[i])
			closedir(m->dirs[i]);
		if (m->logdirs)
			free(m->logdirs[i]);
	}
	free(m->dirs);
	free(m->logdirs);
	free(m->wins);
	corral_set_free(m->win_ix);
	corral_set_free(m->inputs_ix);
	corral_strv_release(&m->inputs);
	corral_buf_release(&m->flaky);
	for (i = 0; i < m->nagents; i++) {
		free(m->agents[i].id);
		free(m->agents[i].path);
	}
	free(m->agents);
	corral_strv_release(&m->parts);
	corral_strv_release(&m->launches);
	corral_strv_release(&m->why);
	merge_units_close(m);
	corral_fpset_free(m->notes);
	corral_fpset_free(m->units);
	corral_fpset_free(m->dups);
	if (m->reread_fd >= 0)
		close(m->reread_fd);
	corral_buf_release(&m->reread);
	corral_buf_release(&m->scratch);
	free(m->recs);
	corral_set_free(m->status_ix);
	corral_strv_release(&m->statuses);
	corral_set_free(m->run_ix);
	corral_strv_release(&m->runs);
	corral_buf_release(&m->at);
	free(m->outdir);
}

/* Read and check every log, writing the kept lines to the temporaries. */
static int
read_logs(struct merge *m, struct corral_err *err)
{
	size_t i;

	if (merge_list_logs(m, err) < 0)
		return -1;
	if (m->o->units && merge_read_units(m, err) < 0)
		return -1;
	if (merge_out_open(&m->succ, m->outdir, "successes.jsonl", err) < 0 ||
	    merge_out_open(&m->fail, m->outdir, "failures.jsonl", err) < 0 ||
	    merge_out_open(&m->rep, m->outdir, "replaced.jsonl", err) < 0)
		return -1;
	if (m->nagents >= MERGE_NONE)
		return corral_err_set(err, 0, "'%s': too many agent logs",
		    m->logdir);
	for (i = 0; i < m->nagents; i++)
		if (merge_check_seal(m, (uint32_t)i, err) < 0)
			return -1;
	if (merge_find_winners(m, err) < 0)
		return -1;
	for (i = 0; i < m->nagents; i++) {
		m->agents[i].first = m->nrecs;	/* refused too: rec_agent */
		if (!m->agents[i].refused && merge_log(m, (uint32_t)i, err) < 0)
			return -1;
	}
	if (merge_credit_launches(m, err) < 0 || merge_check_parts(m, err) < 0 ||
	    merge_credit_refused(m, err) < 0)
		return -1;
	return 0;
}

int
corral_merge_run(const struct corral_merge_opts *o,
    struct corral_merge_stats *st, corral_merge_report_fn *report,
    void *arg, struct corral_err *err)
{
	struct merge m;
	int rc = -1;

	memset(&m, 0, sizeof(m));
	memset(st, 0, sizeof(*st));
	m.o = o;
	m.st = st;
	m.voice.report = report;
	m.voice.arg = arg;
	if (setup(&m, err) < 0 || lock_outdir(&m, err) < 0 ||
	    merge_roll_forward(&m, err) < 0)
		goto out;
	merge_clean_stale(&m);
	if (read_logs(&m, err) < 0)
		goto out;
	if (st->bad || st->duplicates) {
		rc = 0;
		goto out;
	}
	if (merge_pick_run(&m) < 0) {
		merge_nomem(err);
		goto out;
	}
	if (merge_write_missing(&m, err) < 0)
		goto out;
	/* The units file changed under the merge: nothing is written. */
	if (st->bad) {
		rc = 0;
		goto out;
	}
	if (merge_commit(&m, err) < 0 || merge_append_history(&m, err) < 0)
		goto out;
	rc = 0;
out:
	teardown(&m);
	return rc;
}

void
corral_merge_stats_release(struct corral_merge_stats *st)
{
	corral_strv_release(&st->unfinished);
	corral_strv_release(&st->refused);
	free(st->run);
	st->run = NULL;
}
