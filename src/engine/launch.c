/* See LICENSE file for copyright and license details. */
/*
 * launch.c: what a launcher (CORRAL_LAUNCH, srun) said, for the units of
 * a slice whose agent left no sealed log.  The exit status of srun proves
 * nothing (a step lost to a dead node exits 0), so the slice step passes
 * the launcher's standard error through and keeps its last line of its
 * own: one that starts with the launcher's program name and ": ", with
 * "srun: ", or with "slurmstepd-", a line that says "error" before any
 * other.  When the log is missing, that line, shown-safe and bounded, and
 * the slice's units go into the note file LOGDIR/agent-ID.launch, which
 * the merge reads for the not-run notes of those units.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

void
corral_launch_said_init(struct corral_launch_said *s, const char *launch)
{
	struct corral_strv w = CORRAL_STRV_INIT;

	memset(s, 0, sizeof(*s));
	if (corral_words(launch, &w) == 0 && w.n > 0)
		snprintf(s->prog, sizeof(s->prog), "%s",
		    corral_path_base(w.v[0]));
	corral_strv_release(&w);
}

/* Whether line (NUL-terminated) is one the launcher says of its own. */
static int
own(const struct corral_launch_said *s, const char *line)
{
	size_t n = strlen(s->prog);

	return (n > 0 && !strncmp(line, s->prog, n) &&
	    !strncmp(line + n, ": ", 2)) || !strncmp(line, "srun: ", 6) ||
	    !strncmp(line, "slurmstepd-", 11);
}

/* The line in s->cur is whole: keep it when it is the launcher's. */
static int
take(struct corral_launch_said *s)
{
	struct corral_buf *to;
	size_t n;
	int rc = 0;

	if (corral_buf_addch(&s->cur, '\0') < 0)
		return -1;
	n = corral_line_chomp(s->cur.data, s->cur.len - 1);
	if (own(s, s->cur.data)) {
		to = strstr(s->cur.data, "error") ? &s->error : &s->other;
		corral_buf_reset(to);
		rc = corral_buf_add_shown(to, s->cur.data, n, 0);
	}
	corral_buf_reset(&s->cur);
	return rc;
}

int
corral_launch_said_feed(struct corral_launch_said *s, const char *p, size_t n)
{
	int whole, rc = 0;

	while (n > 0) {
		if (corral_line_take(&s->cur, CORRAL_LAUNCH_LINE_MAX, &p, &n,
		    &whole) < 0)
			rc = -1;
		if (whole && take(s) < 0)
			rc = -1;
	}
	return rc;
}

const char *
corral_launch_said_line(struct corral_launch_said *s)
{
	if (s->cur.len > 0)
		(void)take(s);	/* the last line, without its newline */
	if (s->error.len)
		return s->error.data;
	return s->other.len ? s->other.data : NULL;
}

void
corral_launch_said_release(struct corral_launch_said *s)
{
	corral_buf_release(&s->cur);
	corral_buf_release(&s->error);
	corral_buf_release(&s->other);
}

int
corral_launch_note_write(const char *logdir, const char *agent,
    const char *why, const char *units, struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT, path = CORRAL_BUF_INIT;
	int rc = -1;

	if (corral_buf_addf(&path, "%s/agent-%s.launch", logdir, agent) < 0 ||
	    corral_buf_add_shown(&b, why, strlen(why), 0) < 0 ||
	    corral_buf_addch(&b, '\n') < 0) {
		corral_err_set(err, ENOMEM, "out of memory");
		goto out;
	}
	if (corral_read_state(units, &b, err) == 0)
		rc = corral_atomic_file(path.data, b.data, b.len,
		    CORRAL_ATOMIC_NO_SYNC, err);
out:
	corral_buf_release(&b);
	corral_buf_release(&path);
	return rc;
}
