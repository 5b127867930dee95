/* See LICENSE file for copyright and license details. */
/*
 * install.c knows where an install's pieces are: the commands the umbrella
 * offers, the directory of the running program, the helpers beside it or
 * on PATH, the corral.mk that belongs to them, and the version each
 * program carries.  Every lookup is relative to the running program, so
 * an install works wherever it is unpacked, and a checkout works unbuilt
 * into any prefix.
 */
#define _XOPEN_SOURCE 700	/* realpath */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "selftest/selftest.h"

extern char **environ;

const struct corral_command corral_commands[] = {
	{ "bundle", "write, describe or apply a bundle of verified repairs" },
	{ "checkout", "make a private copy of just the parts a slice needs" },
	{ "demo", "a live tour: 12 checks in 12 slices, 4 agents at a time, through corral.mk" },
	{ "doctor", "verify that this install really works" },
	{ "engine", "each step of corral.mk's slice graph, and its settings" },
	{ "find-combine", "several finders as one; agreement is corroboration" },
	{ "find-cppcheck", "cppcheck's findings as corral findings" },
	{ "find-gcc", "gcc's warnings and analyzer as corral findings" },
	{ "find-shellcheck", "shellcheck's findings as corral findings" },
	{ "find-suite", "a corral.mk suite's failing units as findings" },
	{ "fix", "apply repairs another tool found, verified, dry run first" },
	{ "lock", "run a command holding a CORRAL_OUT's lock, one run at a time" },
	{ "marker-find", "find DEADCANARY markers (an example finder)" },
	{ "marker-patch", "repair a DEADCANARY marker (an example patcher)" },
	{ "merge", "fold the agents' logs into the shared results, once" },
	{ "mk-path", "print the corral.mk that belongs to these programs" },
	{ "parts", "check that parts exist, print the parts learned" },
	{ "patch-shellcheck", "apply shellcheck's own repair for a finding" },
	{ "plan", "one brief per agent, as JSON, for a subagent fan-out" },
	{ "report", "a run's merged results as JUnit XML or TAP" },
	{ "run", "make corral-run, exit 0 passed, 1 units failed, 2 could not run" },
	{ "run-slice", "run one agent's slice in a private clone, log it" },
	{ "scoreboard", "tally a run's merged results by verdict" },
	{ "shard", "this host's shard of the units, the same cut on every host" },
	{ "split", "cut a population into disjoint, balanced slices" },
	{ "status", "which agents are running, on what, for how long" },
	{ "cache", "count, prune, check and explain a result cache" },
	{ NULL, NULL }
};

/* The commands an install keeps in CORRAL_HELPER_DIR: the test helpers. */
static const char *const helpers[] = { "marker-find", "marker-patch", NULL };

int
corral_command_helper(const char *name)
{
	const char *const *h;

	for (h = helpers; *h; h++)
		if (!strcmp(*h, name))
			return 1;
	return 0;
}

const struct corral_command *
corral_command_find(const char *name)
{
	const struct corral_command *c;

	for (c = corral_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

static int
is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int
corral_program_find(const char *dir, const char *name,
    struct corral_buf *path)
{
	struct corral_buf p = CORRAL_BUF_INIT;
	const char *env = getenv("PATH"), *end;
	size_t n;
	int rc;

	if (dir && corral_buf_addf(&p, "%s/%s", dir, name) == 0 &&
	    is_file(p.data))
		goto found;
	corral_buf_reset(&p);
	if (dir && corral_buf_addf(&p, "%s/" CORRAL_HELPER_DIR "/%s", dir,
	    name) == 0 && is_file(p.data))
		goto found;
	for (; env && *env; env = *end ? end + 1 : end) {
		end = strchr(env, ':');
		end = end ? end : env + strlen(env);
		n = (size_t)(end - env);
		corral_buf_reset(&p);
		if (corral_buf_addf(&p, "%.*s/%s", n ? (int)n : 1,
		    n ? env : ".", name) < 0)
			break;
		if (is_file(p.data))
			goto found;
	}
	corral_buf_release(&p);
	errno = ENOENT;
	return -1;
found:
	rc = corral_buf_addstr(path, p.data);
	corral_buf_release(&p);
	return rc;
}

char *
corral_self_dir(const char *argv0, struct corral_err *err)
{
	struct corral_buf found = CORRAL_BUF_INIT;
	char *exe = NULL, *dir;

	if (!(exe = realpath("/proc/self/exe", NULL)) && argv0) {
		if (strchr(argv0, '/'))
			exe = realpath(argv0, NULL);
		else if (corral_program_find(NULL, argv0, &found) == 0)
			exe = realpath(found.data, NULL);
	}
	corral_buf_release(&found);
	if (!exe) {
		corral_err_set(err, errno, "cannot tell where '%s' is",
		    argv0 ? argv0 : "this program");
		return NULL;
	}
	if (!(dir = corral_path_dir(exe)))
		corral_err_set(err, errno, "cannot tell where '%s' is", exe);
	free(exe);
	return dir;
}

/* 1 when bindir looks like a checkout's build/FLAVOR/bin. */
static int
is_build_bin(const char *bindir)
{
	char *flavor, *build;
	int rc = 0;

	if (strcmp(corral_path_base(bindir), "bin") ||
	    !(flavor = corral_path_dir(bindir)))
		return 0;
	if ((build = corral_path_dir(flavor)))
		rc = !strcmp(corral_path_base(build), "build");
	free(flavor);
	free(build);
	return rc;
}

int
corral_mk_find(const char *bindir, struct corral_buf *path,
    struct corral_buf *tried)
{
	static const char *const rel[] = {
		"../share/corral/corral.mk", "../corral.mk", "../../../corral.mk"
	};
	struct corral_buf p = CORRAL_BUF_INIT;
	char *real;
	size_t i, n = is_build_bin(bindir) ? 3 : 2;
	int rc = -1;

	for (i = 0; i < n; i++) {
		corral_buf_reset(&p);
		if (corral_buf_addf(&p, "%s/%s", bindir, rel[i]) < 0)
			goto out;
		if (tried && corral_buf_addf(tried, "%s'%s'", i ? ", " : "",
		    p.data) < 0)
			goto out;
		if (is_file(p.data) && (real = realpath(p.data, NULL))) {
			rc = corral_buf_addstr(path, real);
			free(real);
			goto out;
		}
	}
	errno = ENOENT;
out:
	corral_buf_release(&p);
	return rc;
}

/* The version after the tag at p (in data[0..len)), or 0 when none. */
static size_t
tag_version(const char *data, size_t len, size_t at)
{
	size_t start = at + strlen(CORRAL_VERSION_TAG), i;

	/* Ended by a NUL in a program, by a newline in a script. */
	for (i = start; i < len && data[i] && data[i] != '\n'; i++)
		if (!strchr("0123456789abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ.+-_~", data[i]))
			return 0;
	return i < len ? i - start : 0;
}

int
corral_version_read(const char *path, struct corral_buf *version,
    struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	const char *tag = CORRAL_VERSION_TAG, *v = NULL, *p;
	size_t taglen = strlen(tag), at, n, vlen = 0;
	int rc = 0;

	if (corral_read_file(path, &b, err) < 0)
		return -1;
	for (at = 0; b.len >= taglen && at <= b.len - taglen; at++) {
		if (!(p = memchr(b.data + at, '@', b.len - taglen - at + 1)))
			break;
		at = (size_t)(p - b.data);
		if (memcmp(p, tag, taglen) || !(n = tag_version(b.data, b.len,
		    at)))
			continue;
		if (v && (n != vlen || memcmp(v, p + taglen, n))) {
			v = NULL;	/* two versions: none */
			break;
		}
		v = p + taglen;
		vlen = n;
	}
	if (v && (rc = corral_buf_add(version, v, vlen)) == 0)
		rc = 1;
	else if (v)
		corral_err_set(err, errno, "reading '%s'", path);
	corral_buf_release(&b);
	return rc;
}

/* 1 when the environment entry e names a variable a tour must not see. */
static int
leaks(const char *e)
{
	static const char *const names[] = {
		"MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "MAKELEVEL",
		"MAKEOVERRIDES", "MAKEFILES", NULL
	};
	size_t n = strcspn(e, "="), i;

	if (!strncmp(e, "CORRAL_", 7))
		return 1;
	for (i = 0; names[i]; i++)
		if (strlen(names[i]) == n && !strncmp(e, names[i], n))
			return 1;
	return 0;
}

int
corral_env_isolate(const char *bindir)
{
	struct corral_strv drop = CORRAL_STRV_INIT;
	struct corral_buf path = CORRAL_BUF_INIT;
	const char *old = getenv("PATH");
	char **e;
	size_t i;
	int rc = -1;

	for (e = environ; *e; e++)
		if (leaks(*e) && corral_strv_addn(&drop, *e,
		    strcspn(*e, "=")) < 0)
			goto out;
	for (i = 0; i < drop.n; i++)
		unsetenv(drop.v[i]);
	if (corral_buf_addf(&path, "%s%s%s", bindir, old && *old ? ":" : "",
	    old ? old : "") < 0)
		goto out;
	rc = setenv("PATH", path.data, 1);
out:
	corral_strv_release(&drop);
	corral_buf_release(&path);
	return rc;
}

char *
corral_self_isolated(const char *argv0, struct corral_err *err)
{
	char *bindir = corral_self_dir(argv0, err);

	if (bindir && corral_env_isolate(bindir) < 0) {
		corral_err_set(err, errno, "out of memory");
		free(bindir);
		return NULL;
	}
	return bindir;
}

int
corral_mk_locate(const char *bindir, struct corral_buf *path,
    struct corral_err *err)
{
	struct corral_buf tried = CORRAL_BUF_INIT;
	int rc = corral_mk_find(bindir, path, &tried);

	if (rc < 0 && errno == ENOENT)
		corral_err_set(err, 0, "corral.mk not found; looked for %s",
		    tried.data ? tried.data : "nothing");
	else if (rc < 0)
		corral_err_set(err, errno, "out of memory");
	corral_buf_release(&tried);
	return rc;
}
