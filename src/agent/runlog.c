/* See LICENSE file for copyright and license details. */
/*
 * runlog.c keeps an agent's log where no unit can write it.  The records
 * go to a file no path leads to (O_TMPFILE in the log directory, or, where
 * the file system refuses that, a file unlinked the moment it is made),
 * and only when the slice has ended is the log sealed (record.c) and put
 * in place: linked under a temporary name, fsynced, renamed over
 * agent-ID.jsonl, and the directory fsynced.  A unit that finds the log
 * directory by path finds only finished logs, whose seals the merge
 * checks, and the checkpoint.
 *
 * The checkpoint, agent-ID.jsonl.part, is a copy that the agent only ever
 * appends to and never reads back while it runs: every record, and after
 * each unit's last one a seal of all the records so far.  It is there for
 * the merge to name an agent that did not finish, and for the next agent
 * of the slice to resume after the units it vouches for.  That agent
 * trusts the checkpoint only up to its last good seal before the first
 * line that breaks the chain: a line anybody else added is not in the
 * agent's digest, so the next seal after it no longer matches.
 */
#define _GNU_SOURCE	/* O_TMPFILE, AT_EMPTY_PATH */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "record/record.h"
#include "agent/agent-private.h"

void
corral_runlog_init(struct corral_runlog *l)
{
	memset(l, 0, sizeof(*l));
	l->fd = -1;
	l->ckfd = -1;
}

/*
 * Where O_TMPFILE is unknown (EISDIR, from kernels before 3.11) or the
 * file system lacks it (EOPNOTSUPP), a file made under a random name and
 * unlinked at once.  Such a file cannot be linked again, so commit copies
 * it.
 */
static int
open_unlinked(struct corral_runlog *l, struct corral_err *err)
{
	struct corral_atomic a;

	if (corral_atomic_open(&a, l->log, err) < 0)
		return -1;
	if (unlink(a.tmp) < 0) {
		corral_err_set(err, errno, "cannot remove '%s'", a.tmp);
		corral_atomic_abort(&a);
		return -1;
	}
	l->fd = a.fd;
	l->unlinked = 1;
	free(a.path);
	free(a.tmp);
	return 0;
}

int
corral_runlog_open(struct corral_runlog *l, struct corral_err *err)
{
	if (corral_seal_init(&l->seal, err) < 0)
		return -1;
	l->fd = open(l->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
	if (l->fd >= 0)
		return 0;
	if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)
		return open_unlinked(l, err);
	return corral_err_set(err, errno, "cannot open a log in '%s'", l->dir);
}

/* ------------------------------------------------------------------ */
/* The checkpoint                                                       */

static int
write_part(struct corral_runlog *l, const char *p, size_t n,
    struct corral_err *err)
{
	if (corral_write_all(l->ckfd, p, n) < 0)
		return corral_err_set(err, errno, "cannot write '%s'", l->part);
	return 0;
}

/*
 * A fresh checkpoint holding what was resumed, sealed: written beside the
 * old one and renamed over it, so that an agent killed now leaves the old
 * one or the new one.
 */
static int
new_part(struct corral_runlog *l, const struct corral_buf *taken,
    struct corral_err *err)
{
	struct corral_buf tmp = CORRAL_BUF_INIT, seal = CORRAL_BUF_INIT;
	int rc = -1;

	if (corral_buf_addf(&tmp, "%s.tmp", l->part) < 0) {
		corral_err_set(err, ENOMEM, "cannot start");
		goto out;
	}
	/* Made afresh: whatever a unit left at that name is not opened. */
	if (unlink(tmp.data) < 0 && errno != ENOENT) {
		corral_err_set(err, errno, "cannot remove '%s'", tmp.data);
		goto out;
	}
	l->ckfd = corral_open_state(tmp.data, O_WRONLY | O_CREAT | O_EXCL |
	    O_APPEND, 0666, err);
	if (l->ckfd < 0)
		goto out;
	if (taken->len && (corral_seal_format(&l->seal, &seal, err) < 0 ||
	    write_part(l, taken->data, taken->len, err) < 0 ||
	    write_part(l, seal.data, seal.len, err) < 0))
		goto out;
	if (rename(tmp.data, l->part) < 0) {
		corral_err_set(err, errno, "cannot rename '%s' to '%s'",
		    tmp.data, l->part);
		goto out;
	}
	rc = 0;
out:
	corral_buf_release(&tmp);
	corral_buf_release(&seal);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Resuming                                                             */

static int
same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * Whether the checkpoint's records are the first units of this slice, in
 * order, by this agent, on these inputs: the count of units they end, or
 * -1 when one is not (it is then not resumed at all), -2 on ENOMEM.
 * cb, when not NULL, learns each unit's last record.
 */
static long
match_units(const struct corral_buf *taken, const struct corral_strv *units,
    const char *agent, const char *inputs, corral_runlog_unit_fn *cb,
    void *arg)
{
	struct corral_json_record jr, last;
	const char *p = taken->data, *end = p + taken->len, *nl;
	char *line = NULL;
	size_t i = 0, n;
	int have = 0, ok = 1;

	memset(&last, 0, sizeof(last));
	for (; ok && p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = (size_t)(nl - p);
		free(line);
		if (!(line = strndup(p, n)))
			return -2;
		if (corral_json_record_parse(line, n, &jr, NULL) < 0)
			break;
		if (have && strcmp(jr.unit, last.unit)) {
			if (cb)
				cb(arg, i, &last);
			i++;
			corral_json_record_release(&last);
			have = 0;
		}
		ok = i < units->n && !strcmp(jr.unit, units->v[i]) &&
		    same(jr.agent_id, agent) && same(jr.inputs, inputs);
		if (have)
			corral_json_record_release(&last);
		last = jr;
		have = 1;
	}
	free(line);
	if (!ok || p < end) {
		if (have)
			corral_json_record_release(&last);
		return -1;
	}
	if (have) {
		if (cb)
			cb(arg, i, &last);
		i++;
		corral_json_record_release(&last);
	}
	return (long)i;
}

/* Read the old checkpoint's records that its seals vouch for into taken. */
static int
read_part(struct corral_runlog *l, struct corral_buf *taken,
    struct corral_seal_check *c, struct corral_err *err)
{
	struct stat st;
	int fd, rc = 0;

	memset(c, 0, sizeof(*c));
	fd = open(l->part, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		rc = corral_seal_check_fd(fd, l->part, c, taken, err);
	close(fd);
	return rc;
}

/* The one line the tool shows about what was resumed, or none. */
static int
resume_note(struct corral_runlog *l, const struct corral_seal_check *c,
    long done, size_t total)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	int rc = 0;

	if (done > 0)
		rc = corral_buf_addf(&b, "resuming after %ld of %zu units from "
		    "'%s'", done, total, l->part);
	else if (done < 0)
		rc = corral_buf_addf(&b, "'%s' is not of this slice, its agent "
		    "or its inputs; running every unit", l->part);
	if (rc == 0 && c->broken)
		rc = corral_buf_addf(&b, "%s'%s' line %zu: the seal does not "
		    "match lines %zu to %zu, so one of them is not this "
		    "agent's; ignored from line %zu", b.len ? "; " : "",
		    l->part, c->broken, c->seal_line + 1, c->broken - 1,
		    c->seal_line + 1);
	if (rc < 0) {
		corral_buf_release(&b);
		return -1;
	}
	l->note = b.data;
	return 0;
}

/* Carry the resumed records over into the new log and its seal. */
static int
carry(struct corral_runlog *l, const struct corral_buf *taken,
    struct corral_err *err)
{
	const char *p = taken->data, *end, *nl;

	if (!taken->len)	/* data may be NULL: no pointer sums on it */
		return 0;
	for (end = p + taken->len; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (corral_seal_add(&l->seal, p, (size_t)(nl - p) + 1,
		    err) < 0)
			return -1;
	}
	if (corral_write_all(l->fd, taken->data, taken->len) < 0)
		return corral_err_set(err, errno, "cannot write '%s'", l->log);
	return 0;
}

int
corral_runlog_resume(struct corral_runlog *l, const struct corral_strv *units,
    const char *inputs, corral_runlog_unit_fn *cb, void *arg,
    struct corral_err *err)
{
	struct corral_buf taken = CORRAL_BUF_INIT;
	struct corral_seal_check c;
	long done = 0;
	int rc = -1;

	if (l->no_checkpoint)
		return 0;
	if (read_part(l, &taken, &c, err) < 0)
		goto out;
	/* Checked whole before cb hears of any unit. */
	if (taken.len && (done = match_units(&taken, units, l->agent, inputs,
	    NULL, NULL)) > 0)
		done = match_units(&taken, units, l->agent, inputs, cb, arg);
	if (done == -2) {
		corral_err_set(err, ENOMEM, "cannot start");
		goto out;
	}
	if (done < 0)
		corral_buf_reset(&taken);
	if (resume_note(l, &c, done, units->n) < 0) {
		corral_err_set(err, ENOMEM, "cannot start");
		goto out;
	}
	l->resumed = done > 0 ? (size_t)done : 0;
	if (carry(l, &taken, err) < 0 || new_part(l, &taken, err) < 0)
		goto out;
	rc = 0;
out:
	corral_buf_release(&taken);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Writing                                                              */

/* The lines held back for the unnamed log (no_checkpoint), written. */
static int
flush_held(struct corral_runlog *l, struct corral_err *err)
{
	if (!l->no_checkpoint || !l->ck.len)
		return 0;
	if (corral_write_all(l->fd, l->ck.data, l->ck.len) < 0)
		return corral_err_set(err, errno, "cannot write '%s'", l->log);
	corral_buf_reset(&l->ck);
	return 0;
}

int
corral_runlog_write(struct corral_runlog *l, const struct corral_buf *line,
    int final, struct corral_err *err)
{
	/*
	 * Without a checkpoint, nothing reads the unnamed log before its
	 * commit, and a kill loses it whole: its lines are held and written
	 * 64 KiB at a time, not one write(2) a unit.
	 */
	if (l->no_checkpoint) {
		if (corral_buf_add(&l->ck, line->data, line->len) < 0)
			return corral_err_set(err, ENOMEM, "cannot write "
			    "'%s'", l->log);
		if (corral_seal_add(&l->seal, line->data, line->len, err) < 0)
			return -1;
		return l->ck.len >= 65536 ? flush_held(l, err) : 0;
	}
	if (corral_write_all(l->fd, line->data, line->len) < 0)
		return corral_err_set(err, errno, "cannot write '%s'", l->log);
	if (corral_seal_add(&l->seal, line->data, line->len, err) < 0)
		return -1;
	corral_buf_reset(&l->ck);
	if (corral_buf_add(&l->ck, line->data, line->len) < 0 ||
	    (final && corral_seal_format(&l->seal, &l->ck, err) < 0))
		return corral_err_set(err, ENOMEM, "cannot write '%s'",
		    l->part);
	/* One write(2), so a kill leaves a unit's record and seal or not. */
	return write_part(l, l->ck.data, l->ck.len, err);
}

/* ------------------------------------------------------------------ */
/* Finishing                                                            */

/*
 * Give the unnamed file the name tmp: through /proc/self/fd, or, without
 * /proc, by AT_EMPTY_PATH (which asks for CAP_DAC_READ_SEARCH).
 */
static int
link_fd(int fd, const char *tmp)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	return linkat(fd, "", AT_FDCWD, tmp, AT_EMPTY_PATH);
}

/* Link the log under a temporary name beside its own and rename it in. */
static int
link_log(struct corral_runlog *l, struct corral_err *err)
{
	struct corral_buf tmp = CORRAL_BUF_INIT;
	int rc = -1;

	if (corral_buf_addf(&tmp, "%s/.agent-%s.jsonl.tmp.%ld", l->dir,
	    l->agent, (long)getpid()) < 0) {
		corral_err_set(err, ENOMEM, "cannot write '%s'", l->log);
		goto out;
	}
	(void)unlink(tmp.data);
	if (link_fd(l->fd, tmp.data) < 0) {
		corral_err_set(err, errno, "cannot link '%s'", tmp.data);
		goto out;
	}
	if (rename(tmp.data, l->log) < 0) {
		corral_err_set(err, errno, "cannot rename '%s' to '%s'",
		    tmp.data, l->log);
		(void)unlink(tmp.data);
		goto out;
	}
	rc = 0;
out:
	corral_buf_release(&tmp);
	return rc;
}

/* The unlinked fallback: copy the log into place, atomically. */
static int
copy_log(struct corral_runlog *l, struct corral_err *err)
{
	struct corral_atomic a;
	char chunk[65536];
	off_t off = 0;
	ssize_t n;

	if (corral_atomic_open(&a, l->log, err) < 0)
		return -1;
	while ((n = pread(l->fd, chunk, sizeof(chunk), off)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			corral_err_set(err, errno, "cannot read '%s'", l->log);
			corral_atomic_abort(&a);
			return -1;
		}
		if (corral_atomic_write(&a, chunk, (size_t)n, err) < 0) {
			corral_atomic_abort(&a);
			return -1;
		}
		off += n;
	}
	return corral_atomic_commit(&a, 0, err) < 0 ? -1 : 0;
}

int
corral_runlog_commit(struct corral_runlog *l, struct corral_err *err)
{
	if (flush_held(l, err) < 0)
		return -1;
	corral_buf_reset(&l->ck);
	if (corral_seal_format(&l->seal, &l->ck, err) < 0)
		return -1;
	if (corral_write_all(l->fd, l->ck.data, l->ck.len) < 0 ||
	    (!l->defer_sync && fsync(l->fd) < 0))
		return corral_err_set(err, errno, "cannot write '%s'", l->log);
	if ((l->unlinked ? copy_log(l, err) : link_log(l, err)) < 0)
		return -1;
	/* The finished log makes the checkpoint moot; the merge says so. */
	if (unlink(l->part) < 0 && errno != ENOENT)
		return corral_err_set(err, errno, "cannot remove '%s'",
		    l->part);
	return l->defer_sync ? 0 : corral_fsync_parent(l->log, err);
}

void
corral_runlog_release(struct corral_runlog *l)
{
	if (l->fd >= 0)
		close(l->fd);
	if (l->ckfd >= 0)
		close(l->ckfd);
	corral_seal_release(&l->seal);
	corral_buf_release(&l->ck);
	free(l->note);
	corral_runlog_init(l);
}
