/* See LICENSE file for copyright and license details. */
/*
 * briefs.c writes the briefs of a subagent fan-out, the original's
 * plan_prompts: one per slice of a plan cut by a strategy of strategy.c,
 * each naming the agent, its units, the parts its clone needs (sorted,
 * each once), the one log it may write, and a task text made from a
 * template.  The slices are the ones corral-split cuts from the same
 * units, strategy and history, so the agents' logs fold with one
 * corral-merge, and no two briefs share a log path or a unit.  The parts
 * are parts.c's, each checked to stay in the tree: an agent given a brief
 * has nothing else to check them.  Apart from running the parts command,
 * nothing is touched.
 */
#include <errno.h>
#include <string.h>

#include "base/base.h"
#include "plan/plan.h"

/* The parts of one slice, each checked. */
static int
slice_parts(const struct corral_briefs_opts *o, const struct corral_strv *slice,
    struct corral_strv *parts, struct corral_err *err)
{
	size_t i;

	if (corral_parts_of(&o->parts, slice, parts, err) < 0)
		return -1;
	for (i = 0; i < parts->n; i++)
		if (corral_path_lexical("part", parts->v[i], 0, err) < 0)
			return -1;
	return 0;
}

static int
add_words(struct corral_buf *b, const struct corral_strv *sv)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < sv->n; i++)
		rc |= corral_buf_addf(b, "%s%s", i ? " " : "", sv->v[i]);
	return rc;
}

/* The template with its placeholders filled in. */
static int
fill(struct corral_buf *b, const char *t, size_t agent,
    const struct corral_strv *units, const struct corral_strv *parts,
    const char *log)
{
	static const char *const names[] = {
		"{agent}", "{units}", "{parts}", "{log}", "{n}", NULL
	};
	size_t i, n;
	int rc = 0;

	while (*t && rc == 0) {
		n = strcspn(t, "{");
		rc |= corral_buf_add(b, t, n);
		if (!*(t += n))
			break;
		for (i = 0; names[i]; i++)
			if (!strncmp(t, names[i], strlen(names[i])))
				break;
		switch (i) {
		case 0: rc |= corral_buf_addf(b, "%zu", agent); break;
		case 1: rc |= add_words(b, units); break;
		case 2: rc |= add_words(b, parts); break;
		case 3: rc |= corral_buf_addstr(b, log); break;
		case 4: rc |= corral_buf_addf(b, "%zu", units->n); break;
		default: rc |= corral_buf_addch(b, '{'); t++; continue;
		}
		t += strlen(names[i]);
	}
	return rc;
}

static int
brief(const struct corral_briefs_opts *o, size_t k,
    const struct corral_strv *slice, struct corral_buf *out,
    struct corral_err *err)
{
	struct corral_strv parts = CORRAL_STRV_INIT;
	struct corral_buf log = CORRAL_BUF_INIT, task = CORRAL_BUF_INIT;
	size_t n = strlen(o->logdir);
	int rc = -1;

	while (n > 1 && o->logdir[n - 1] == '/')
		n--;
	if (slice_parts(o, slice, &parts, err) < 0)
		goto out;
	if (corral_buf_addf(&log, "%.*s%sagent-%zu.jsonl", (int)n, o->logdir,
	    o->logdir[n - 1] == '/' ? "" : "/", k) < 0 ||
	    fill(&task, o->template, k, slice, &parts, log.data) < 0)
		goto nomem;
	rc = corral_buf_addf(out, "%s{\"agent_id\":\"%zu\",\"units\":",
	    k ? ",\n" : "", k);
	rc |= corral_strv_json(out, slice);
	rc |= corral_buf_addstr(out, ",\"clone_parts\":");
	rc |= corral_strv_json(out, &parts);
	rc |= corral_buf_addstr(out, ",\"log_path\":");
	rc |= corral_buf_addjson(out, log.data, log.len);
	rc |= corral_buf_addstr(out, ",\"task\":");
	rc |= corral_buf_addjson(out, task.data ? task.data : "", task.len);
	rc |= corral_buf_addch(out, '}');
	if (rc == 0)
		goto out;
nomem:
	rc = corral_err_set(err, errno, "planning");
out:
	corral_strv_release(&parts);
	corral_buf_release(&log);
	corral_buf_release(&task);
	return rc;
}

int
corral_briefs_write(const struct corral_briefs_opts *o,
    const struct corral_strv *units, struct corral_buf *out,
    struct corral_err *err)
{
	struct corral_plan p;
	size_t k;
	int rc;

	rc = corral_plan_make(&p, units, o->strategy, o->history,
	    o->parts.srcdir, o->nslices, 0, err);
	if (rc == 0 && corral_buf_addstr(out, p.n ? "[\n" : "[") < 0)
		rc = corral_err_set(err, errno, "planning");
	for (k = 0; k < p.n && rc == 0; k++)
		rc = brief(o, k, &p.slices[k], out, err);
	if (rc == 0 && corral_buf_addstr(out, p.n ? "\n]\n" : "]\n") < 0)
		rc = corral_err_set(err, errno, "planning");
	corral_plan_release(&p);
	return rc;
}
