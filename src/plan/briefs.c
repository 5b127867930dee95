/* See LICENSE file for copyright and license details. */
/*
 * briefs.c writes the briefs of a subagent fan-out, the original's
 * plan_prompts: one per slice of corral_split_roundrobin, each naming the
 * agent, its units, the parts its clone needs (sorted, each once), the
 * one log it may write, and a task text made from a template.  The
 * slices are the ones corral-split and corral.mk cut, so the agents'
 * logs fold with one corral-merge, and no two briefs share a log path or
 * a unit.  Apart from running the parts command, nothing is touched.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "base/base.h"
#include "plan/plan.h"

static int
add_part(struct corral_strv *parts, const char *part, size_t n,
    struct corral_err *err)
{
	size_t before = parts->n;

	if (corral_strv_addn(parts, part, n) < 0)
		return corral_err_set(err, errno, "planning");
	if (corral_path_lexical("part", parts->v[before], 0, err) < 0)
		return -1;
	return 0;
}

/* Append the parts cmd prints for unit to parts. */
static int
unit_parts(const char *cmd, const char *unit, struct corral_strv *parts,
    struct corral_err *err)
{
	struct corral_buf out = CORRAL_BUF_INIT, env = CORRAL_BUF_INIT;
	struct corral_buf how = CORRAL_BUF_INIT;
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL }, *envv[2];
	struct corral_spawn s = { argv, NULL, envv, NULL, &out };
	char *line, *nl;
	size_t n;
	int wstatus, rc = -1;

	if (corral_buf_addf(&env, "CORRAL_UNIT=%s", unit) < 0) {
		corral_err_set(err, errno, "planning");
		goto out;
	}
	envv[0] = env.data;
	envv[1] = NULL;
	if (corral_spawn_run(&s, &wstatus, err) < 0)
		goto out;
	if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
		corral_proc_describe(&how, wstatus, 1);
		corral_err_set(err, 0, "the parts command failed for unit "
		    "'%s' (%s)", unit, how.data ? how.data : "?");
		goto out;
	}
	for (line = out.data, rc = 0; line && *line && rc == 0; line = nl) {
		nl = strchr(line, '\n');
		nl = nl ? nl + 1 : line + strlen(line);
		if ((n = corral_line_chomp(line, (size_t)(nl - line))) > 0)
			rc = add_part(parts, line, n, err);
	}
out:
	corral_buf_release(&out);
	corral_buf_release(&env);
	corral_buf_release(&how);
	return rc;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The parts of one slice: the fixed ones and each unit's, sorted. */
static int
slice_parts(const struct corral_briefs_opts *o, const struct corral_strv *slice,
    struct corral_strv *parts, struct corral_err *err)
{
	size_t i, j;

	for (i = 0; o->parts && i < o->parts->n; i++)
		if (add_part(parts, o->parts->v[i], strlen(o->parts->v[i]),
		    err) < 0)
			return -1;
	for (i = 0; o->parts_cmd && i < slice->n; i++)
		if (unit_parts(o->parts_cmd, slice->v[i], parts, err) < 0)
			return -1;
	if (parts->n < 2)
		return 0;
	qsort(parts->v, parts->n, sizeof(*parts->v), cmp_str);
	for (i = j = 1; i < parts->n; i++) {
		if (!strcmp(parts->v[i], parts->v[j - 1]))
			free(parts->v[i]);
		else
			parts->v[j++] = parts->v[i];
	}
	parts->n = j;
	parts->v[j] = NULL;
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
add_array(struct corral_buf *b, const struct corral_strv *sv)
{
	size_t i;
	int rc = corral_buf_addch(b, '[');

	for (i = 0; i < sv->n; i++) {
		if (i)
			rc |= corral_buf_addch(b, ',');
		rc |= corral_buf_addjson(b, sv->v[i], strlen(sv->v[i]));
	}
	return rc | corral_buf_addch(b, ']');
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
	rc |= add_array(out, slice);
	rc |= corral_buf_addstr(out, ",\"clone_parts\":");
	rc |= add_array(out, &parts);
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
	struct corral_strv *slices;
	size_t n, k;
	int rc = 0;

	if (corral_split_roundrobin(units, o->nslices, &slices, &n, err) < 0)
		return -1;
	if (corral_buf_addstr(out, n ? "[\n" : "[") < 0)
		rc = corral_err_set(err, errno, "planning");
	for (k = 0; k < n && rc == 0; k++)
		rc = brief(o, k, &slices[k], out, err);
	if (rc == 0 && corral_buf_addstr(out, n ? "\n]\n" : "]\n") < 0)
		rc = corral_err_set(err, errno, "planning");
	corral_split_free(slices, n);
	return rc;
}
