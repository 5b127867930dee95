/* See LICENSE file for copyright and license details. */
/*
 * commit.c puts the result files in place.  Each is written to a buffered
 * temporary beside its target; then a commit record names the prepared
 * temporaries, they are renamed, and the record is removed.  A merge
 * killed between the two is finished by the next one (roll_forward), so
 * successes.jsonl, failures.jsonl, summary.json and replaced.jsonl are
 * never left half old and half new.
 */
#define _GNU_SOURCE	/* sync_file_range */
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "merge/merge-private.h"

#define COMMIT_NAME ".merge.commit"	/* see rename_all */

/* ------------------------------------------------------------------ */
/* the result files, written to temporaries                            */

int
merge_out_open(struct out *o, const char *dir, const char *name,
    struct corral_err *err)
{
	char *path = merge_join(dir, name);
	int rc;

	memset(o, 0, sizeof(*o));
	if (!path)
		return merge_nomem(err);
	rc = corral_atomic_open(&o->a, path, err);
	free(path);
	o->open = rc == 0;
	return rc;
}

/*
 * Write out what is buffered.  Every MERGE_SYNC_CHUNK bytes the kernel is
 * asked to start writing them to disk (no waiting), so that the fsync of
 * the commit finds little left to do: the disk works while the logs are
 * read.  An error there is the fsync's to report.
 */
static int
out_flush(struct out *o, struct corral_err *err)
{
	if (o->b.len && corral_atomic_write(&o->a, o->b.data, o->b.len,
	    err) < 0)
		return -1;
	corral_buf_reset(&o->b);
	if (o->size - o->synced >= MERGE_SYNC_CHUNK) {
		(void)sync_file_range(o->a.fd, o->synced, o->size - o->synced,
		    SYNC_FILE_RANGE_WRITE);
		o->synced = o->size;
	}
	return 0;
}

/* Append p[0..n) and, when nl, a newline. */
int
merge_out_add(struct out *o, const char *p, size_t n, int nl,
    struct corral_err *err)
{
	if (corral_buf_add(&o->b, p, n) < 0 ||
	    (nl && corral_buf_addch(&o->b, '\n') < 0))
		return merge_nomem(err);
	o->size += (off_t)(n + (nl != 0));
	return o->b.len >= MERGE_OUT_CHUNK ? out_flush(o, err) : 0;
}

/*
 * Flush, fsync and close the temporary.  When the target already holds the
 * same bytes the temporary goes and o->open becomes 0: nothing to rename.
 */
static int
out_prepare(struct out *o, struct corral_err *err)
{
	int rc;

	if (out_flush(o, err) < 0)
		return -1;
	corral_buf_release(&o->b);
	rc = corral_atomic_prepare(&o->a, CORRAL_ATOMIC_KEEP_SAME, err);
	o->open = rc == 1;
	return rc < 0 ? -1 : 0;
}

/* Cut the temporary back to its first size bytes. */
int
merge_out_truncate(struct out *o, off_t size, struct corral_err *err)
{
	if (out_flush(o, err) < 0)
		return -1;
	if (ftruncate(o->a.fd, size) < 0 ||
	    lseek(o->a.fd, size, SEEK_SET) < 0)
		return corral_err_set(err, errno, "cannot write '%s'",
		    o->a.tmp);
	o->size = size;
	if (o->synced > size)
		o->synced = size;
	return 0;
}

/* Leave a prepared temporary where it is, for the next merge to finish. */
static void
out_leave(struct out *o)
{
	if (!o->open)
		return;
	free(o->a.tmp);
	o->a.tmp = NULL;
	corral_atomic_abort(&o->a);
	o->open = 0;
}

void
merge_out_abort(struct out *o)
{
	if (o->open)
		corral_atomic_abort(&o->a);
	o->open = 0;
	corral_buf_release(&o->b);
}

/* ------------------------------------------------------------------ */
/* the commit                                                          */

/* Remove the temporaries of a merge that was killed (we hold the lock). */
void
merge_clean_stale(struct merge *m)
{
	static const char *const pre[] = { ".successes.jsonl.tmp.",
	    ".failures.jsonl.tmp.", ".summary.json.tmp.",
	    ".replaced.jsonl.tmp.",
	    ".history.jsonl.tmp.", "." COMMIT_NAME ".tmp.",
	    ".merge.json.tmp.", NULL };	/* corral-merge's note of its time */
	const char *const *p;
	struct dirent *de;
	char *path;
	DIR *d;

	if (!(d = opendir(m->outdir)))
		return;
	while ((de = readdir(d))) {
		for (p = pre; *p; p++)
			if (!strncmp(de->d_name, *p, strlen(*p)))
				break;
		if (!*p || !(path = merge_join(m->outdir, de->d_name)))
			continue;
		unlink(path);
		free(path);
	}
	closedir(d);
}

/*
 * The commit record: the base names of the prepared temporaries, one per
 * line.  Once it is on disk the new result set is decided; a merge killed
 * before it has renamed them all is finished by the next (merge_roll_forward),
 * so the result files are never left half old and half new.
 */
static const char *const targets[] = {
	"successes.jsonl", "failures.jsonl", "summary.json", "replaced.jsonl",
	NULL
};

/* The target of temporary base name tmp (".NAME.tmp.XXXXXX"), or NULL. */
static const char *
target_of(const char *tmp)
{
	const char *const *t;
	size_t n;

	for (t = targets; *t; t++) {
		n = strlen(*t);
		if (tmp[0] == '.' && !strncmp(tmp + 1, *t, n) &&
		    !strncmp(tmp + 1 + n, ".tmp.", 5) && !strchr(tmp, '/'))
			return *t;
	}
	return NULL;
}

/* Rename the temporary named in one line of the commit record. */
static int
finish_one(struct merge *m, const char *tmp, struct corral_err *err)
{
	const char *target = target_of(tmp);
	char *from = merge_join(m->outdir, tmp), *to = NULL;
	int rc = 0;

	if (!target)
		goto out;
	if (!from || !(to = merge_join(m->outdir, target))) {
		rc = merge_nomem(err);
		goto out;
	}
	if (rename(from, to) < 0 && errno != ENOENT)
		rc = corral_err_set(err, errno, "cannot rename '%s' to '%s'",
		    from, to);
out:
	free(from);
	free(to);
	return rc;
}

/* The renames are on disk: sync them, then drop the commit record. */
static int
end_commit(const char *path, struct corral_err *err)
{
	if (corral_fsync_parent(path, err) < 0)
		return -1;
	if (unlink(path) < 0)
		return corral_err_set(err, errno, "cannot remove '%s'", path);
	return 0;
}

/* Finish the commit of a merge that was killed half-way through it. */
int
merge_roll_forward(struct merge *m, struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_err e;
	char *path, *line, *nl;
	int rc = -1;

	if (!(path = merge_join(m->outdir, COMMIT_NAME)))
		return merge_nomem(err);
	if (corral_read_file(path, &b, &e) < 0) {
		rc = e.errnum == ENOENT ? 0 : corral_err_set(err, e.errnum,
		    "%s", e.msg);
		goto out;
	}
	merge_say(m, "'%s': finishing the commit of an interrupted merge",
	    path);
	for (line = b.data; line && (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		if (finish_one(m, line, err) < 0)
			goto out;
	}
	if (end_commit(path, err) < 0)
		goto out;
	rc = 0;
out:
	corral_buf_release(&b);
	free(path);
	return rc;
}

/* Write the commit record, rename every prepared temporary, sync. */
static int
rename_all(struct merge *m, struct corral_err *err)
{
	struct out *outs[] = { &m->succ, &m->fail, &m->sum, &m->rep, NULL },
	    **o;
	struct corral_buf rec = CORRAL_BUF_INIT;
	char *path;
	int rc = -1;

	if (!(path = merge_join(m->outdir, COMMIT_NAME)))
		return merge_nomem(err);
	for (o = outs; *o; o++)
		if ((*o)->open && (corral_buf_addstr(&rec,
		    corral_path_base((*o)->a.tmp)) < 0 || corral_buf_addch(&rec,
		    '\n') < 0)) {
			merge_nomem(err);
			goto out;
		}
	if (!rec.len) {
		rc = 0;
		goto out;
	}
	if (corral_atomic_file(path, rec.data, rec.len, 0, err) < 0)
		goto out;
	for (o = outs; *o; o++) {
		if ((*o)->open && corral_atomic_rename(&(*o)->a, err) < 0) {
			out_leave(&m->succ);	/* decided: the next merge */
			out_leave(&m->fail);	/* renames what is left */
			out_leave(&m->sum);
			out_leave(&m->rep);
			goto out;
		}
		(*o)->open = 0;
	}
	if (end_commit(path, err) < 0)
		goto out;
	rc = 0;
out:
	corral_buf_release(&rec);
	free(path);
	return rc;
}

/* Put the result files in place, together. */
int
merge_commit(struct merge *m, struct corral_err *err)
{
	struct corral_buf sum = CORRAL_BUF_INIT;
	int rc = -1;

	merge_count_results(m);
	if (merge_format_summary(m, &sum) < 0) {
		merge_nomem(err);
		goto out;
	}
	if (merge_out_open(&m->sum, m->outdir, "summary.json", err) < 0 ||
	    merge_out_add(&m->sum, sum.data, sum.len, 0, err) < 0 ||
	    out_prepare(&m->succ, err) < 0 || out_prepare(&m->fail, err) < 0 ||
	    out_prepare(&m->sum, err) < 0 || out_prepare(&m->rep, err) < 0 ||
	    rename_all(m, err) < 0)
		goto out;
	m->st->written = 1;
	rc = 0;
out:
	corral_buf_release(&sum);
	return rc;
}
