/* See LICENSE file for copyright and license details. */
/*
 * parts.c computes what a slice's clone holds, for corral.mk's engine
 * (through corral-plan -c) and for the briefs alike: the parts every
 * agent clones, each unit that names an entry of the tree, what the
 * parts command prints for each unit, and (CORRAL_PARTS = auto) what
 * history learned each unit reads, sorted bytewise, each once; a learned
 * directory listed is "DIR/" (corral_path_is_listing), and only it ends
 * in '/'.  Apart
 * from running the parts command, nothing is touched.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "base/base.h"
#include "plan/plan.h"

/*
 * Add part[0..n); one that is not learned loses the '/'s that end it, so
 * that only a listing learned reads as one ("lib/" is the whole of lib).
 */
static int
add_part(struct corral_strv *parts, const char *part, size_t n,
    int learned, struct corral_err *err)
{
	if (corral_strv_addn(parts, part, n) < 0)
		return corral_err_set(err, errno, "planning");
	if (!learned)
		corral_path_trim_slashes(parts->v[parts->n - 1]);
	return 0;
}

/* Append the parts cmd prints for unit to parts, cmd run in dir. */
static int
unit_parts(const char *cmd, const char *dir, const char *unit,
    struct corral_strv *parts, struct corral_err *err)
{
	struct corral_buf out = CORRAL_BUF_INIT, env = CORRAL_BUF_INIT;
	struct corral_buf how = CORRAL_BUF_INIT;
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL }, *envv[2];
	struct corral_spawn s = { argv, dir, envv, NULL, &out };
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
			rc = add_part(parts, line, n, 0, err);
	}
out:
	corral_buf_release(&out);
	corral_buf_release(&env);
	corral_buf_release(&how);
	return rc;
}

/* Whether unit names an entry of dir (a dangling symlink too). */
static int
names_entry(const char *dir, const char *unit)
{
	struct stat st;
	char *path;
	int rc;

	if (!*unit || !(path = corral_path_join(dir, unit)))
		return 0;
	rc = lstat(path, &st) == 0;
	free(path);
	return rc;
}

/*
 * What was learned for unit (one that no longer exists too, so that the
 * manifest says it is gone); "." when nothing is learned yet.
 */
static int
learned_parts(const struct corral_parts_opts *o, const char *unit,
    struct corral_strv *parts, struct corral_err *err)
{
	const struct corral_strv *set = corral_learned_of(o->learned, unit);
	size_t i;

	if (!set)
		return add_part(parts, ".", 1, 1, err);
	for (i = 0; i < set->n; i++)
		if (add_part(parts, set->v[i], strlen(set->v[i]), 1, err) < 0)
			return -1;
	return 0;
}

int
corral_parts_of(const struct corral_parts_opts *o,
    const struct corral_strv *units, struct corral_strv *parts,
    struct corral_err *err)
{
	size_t i;

	for (i = 0; o->parts && i < o->parts->n; i++)
		if (add_part(parts, o->parts->v[i], strlen(o->parts->v[i]),
		    0, err) < 0)
			return -1;
	for (i = 0; o->srcdir && i < units->n; i++)
		if (names_entry(o->srcdir, units->v[i]) &&
		    add_part(parts, units->v[i], strlen(units->v[i]), 0,
		    err) < 0)
			return -1;
	for (i = 0; o->parts_cmd && i < units->n; i++)
		if (unit_parts(o->parts_cmd, o->srcdir, units->v[i], parts,
		    err) < 0)
			return -1;
	for (i = 0; o->learned && i < units->n; i++)
		if (learned_parts(o, units->v[i], parts, err) < 0)
			return -1;
	corral_strv_sort_unique(parts);
	return 0;
}
