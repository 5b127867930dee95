/* See LICENSE file for copyright and license details. */
/*
 * corral-engine is each step of corral.mk's slice graph: mk/engine.mk
 * declares the targets, their prerequisites and stamps, and each recipe
 * is one call of a step here, in CORRAL_OUT.  "run GOAL" starts it all,
 * from corral.mk's recipe: it reads the settings corral.mk handed over
 * (engine.h), takes CORRAL_OUT's lock, writes settings.json and the
 * files the graph depends on, runs the engine's make for GOAL, and exits
 * with the answer that make's goal left in exit-status.  Every other
 * step reads settings.json.  It speaks as "corral", the voice of
 * corral.mk.  Exit status: the run's (0 passed, 2 otherwise) for run; a
 * step fails (2) only when the graph must stop.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

static void more(FILE *fp);

static const struct corral_usage use = {
	"corral-engine run GOAL\n"
	"corral-engine STEP [ARG...]\n"
	"corral-engine settings [-k]",
	"-k\twith settings, only the names of those that join a unit's "
	"cache key",
	more
};

static void
more(FILE *fp)
{
	fputs("\nSteps (run in CORRAL_OUT by mk/engine.mk): units, plan, "
	    "parts, inputs [-c],\nlive N, slice STEM, merge [-w], answer, layer "
	    "failed|only, merge-shards.\n'settings' lists every setting "
	    "with its default.\n", fp);
}

static const char *const exit_status = "exit-status";

/* ------------------------------------------------------------------ */
/* what every step shares                                              */

static struct corral_settings S;

static const char *
set(enum corral_setting_id id)
{
	return corral_setting(&S, id);
}

static void
xset(enum corral_setting_id id, const char *v)
{
	if (corral_setting_set(&S, id, v) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
}

static void
load(void)
{
	struct corral_err err;

	if (corral_settings_read(&S, CORRAL_SETTINGS_FILE, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
}

static void
xadd(struct corral_strv *sv, const char *s)
{
	if (corral_strv_add(sv, s) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
}

static void
xaddf(struct corral_strv *sv, const char *fmt, const char *s)
{
	struct corral_buf b = CORRAL_BUF_INIT;

	if (corral_buf_addf(&b, fmt, s) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	xadd(sv, b.data);
	corral_buf_release(&b);
}

/* OUT/rel, for what names a file in a message or to a program. */
static void
xout(struct corral_strv *sv, const char *rel)
{
	struct corral_buf b = CORRAL_BUF_INIT;

	if (corral_buf_addf(&b, "%s/%s", set(CS_OUT), rel) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	xadd(sv, b.data);
	corral_buf_release(&b);
}

/* A corral program: CORRAL_BIN's, else found on PATH. */
static void
xprog(struct corral_strv *sv, const char *name)
{
	if (corral_setting_on(&S, CS_BIN)) {
		struct corral_buf b = CORRAL_BUF_INIT;

		if (corral_buf_addf(&b, "%s/%s", set(CS_BIN), name) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
		xadd(sv, b.data);
		corral_buf_release(&b);
	} else
		xadd(sv, name);
}

static void
xsettings_argv(enum corral_prog prog, struct corral_strv *argv)
{
	if (corral_settings_argv(&S, prog, argv) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
}

/* Whether the make running this step is silent (-s) or shows commands. */
static int
tell(void)
{
	return !corral_setting_on(&S, CS_SILENT) &&
	    strcmp(set(CS_V), "1") != 0;
}

/*
 * The step line "  WHAT    WHO"; on a terminal the agents' status line
 * (stderr, redrawn in place) is cleared first.
 */
static void
step(const char *what, const char *who)
{
	if (!tell())
		return;
	if (isatty(1) && isatty(2))
		fputs("\r\033[K", stdout);
	printf("  %-7s ", what);
	corral_showf(stdout, "%s\n", who);
	fflush(stdout);
}

/* text as the content of path, rewritten only when it changed. */
static void
put(const char *path, const char *text, size_t n)
{
	struct corral_err err;

	if (corral_atomic_file(path, text ? text : "", n,
	    CORRAL_ATOMIC_KEEP_SAME | CORRAL_ATOMIC_NO_SYNC, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
}

static void
put_status(const char *path, int st)
{
	char text[16];

	snprintf(text, sizeof(text), "%d\n", st);
	put(path, text, strlen(text));
}

/* The first line of path as a number, or dflt. */
static int
read_status(const char *path, int dflt)
{
	FILE *fp = fopen(path, "r");
	int st = dflt;

	if (fp) {
		if (fscanf(fp, "%d", &st) != 1)
			st = dflt;
		fclose(fp);
	}
	return st;
}

static void
remove_tree(const char *path)
{
	struct corral_err err;

	if (corral_remove_tree(path, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
}

static int
exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* The lock passed down, held by this step but not by what it starts. */
static void
lock_inheritable(int on)
{
	const char *s = getenv("__corral_lock");
	int fd;

	if (s && *s && (fd = atoi(s)) >= 0)
		(void)fcntl(fd, F_SETFD, on ? 0 : FD_CLOEXEC);
}

struct spawn {
	const char *out;	/* stdout to this file, or NULL */
	int null_err;		/* stderr to /dev/null */
	int unlocked;		/* without the run's lock */
	const char *dir;
	char *const *envp;
};

/* V=1: every command shown, as make shows its recipes, quoted for sh. */
static void
show_command(const struct corral_strv *argv)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	const char *p;
	size_t i;
	int rc = 0;

	if (strcmp(set(CS_V), "1"))
		return;
	for (i = 0; rc == 0 && i < argv->n; i++) {
		p = argv->v[i];
		rc = corral_buf_addstr(&b, i ? " " : "");
		if (*p && !p[strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijkl"
		    "mnopqrstuvwxyz0123456789_./=:,@%+-")]) {
			rc |= corral_buf_addstr(&b, p);
			continue;
		}
		rc |= corral_buf_addch(&b, '\'');
		for (; rc == 0 && *p; p++)
			rc = *p == '\'' ? corral_buf_addstr(&b, "'\\''") :
			    corral_buf_addch(&b, *p);
		rc |= corral_buf_addch(&b, '\'');
	}
	if (rc == 0)
		corral_showf(stdout, "%s\n", b.data);
	fflush(stdout);
	corral_buf_release(&b);
}

/*
 * Start argv, its stderr errfd (-1: as how says): 0 with *pid set, or
 * the status of a command that cannot run (127, 126), said.
 */
static int
start(const struct corral_strv *argv, const struct spawn *how, int errfd,
    pid_t *pid)
{
	struct corral_proc p = CORRAL_PROC_INIT;
	int e;

	show_command(argv);
	p.path = argv->v[0];
	p.argv = argv->v;
	p.envp = how ? how->envp : NULL;
	p.in = NULL;
	p.dir = how ? how->dir : NULL;
	p.out = how ? how->out : NULL;
	p.err = how && how->null_err ? "/dev/null" : NULL;
	p.errfd = errfd;
	if (how && how->unlocked)
		lock_inheritable(0);
	e = corral_proc_start(&p, pid);
	if (how && how->unlocked)
		lock_inheritable(1);
	if (e) {
		errno = e;
		corral_warn("cannot run '%s':", argv->v[0]);
		return e == ENOENT ? 127 : 126;
	}
	return 0;
}

/* Wait for child pid: its exit status, 128+N for signal N. */
static int
reap(pid_t pid)
{
	int ws;

	while (corral_proc_reap(pid, &ws) < 0)
		if (errno != EINTR)
			corral_die(CORRAL_EXIT_ERR, "wait:");
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* Run argv and wait: its exit status, 128+N for signal N. */
static int
spawn(const struct corral_strv *argv, const struct spawn *how)
{
	pid_t pid;
	int st;

	return (st = start(argv, how, -1, &pid)) ? st : reap(pid);
}

/* The run's make is gone: its guard pid does not live. */
static int
guard_gone(void)
{
	long long pid = atoll(set(CS_GUARD));

	return pid > 0 && !corral_pid_alive((pid_t)pid);
}

static int
auto_parts(void)
{
	struct corral_strv w = CORRAL_STRV_INIT;
	int on;

	if (corral_words(set(CS_PARTS), &w) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	on = corral_strv_has(&w, "auto");
	corral_strv_release(&w);
	return on;
}

/* The -x options of what is never cloned: CORRAL_OUT, and .git for auto. */
static void
excludes(struct corral_strv *argv, int opts)
{
	if (corral_setting_on(&S, CS_OUTREL)) {
		if (opts)
			xadd(argv, "-x");
		xadd(argv, set(CS_OUTREL));
	}
	if (auto_parts()) {
		if (opts)
			xadd(argv, "-x");
		xadd(argv, ".git");
	}
}

static void
cat(const char *path)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_err err;

	if (corral_read_file(path, &b, &err) == 0 && b.len)
		fwrite(b.data, 1, b.len, stdout);
	corral_buf_release(&b);
	fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* units: the population (and a shard's part of it)                   */

static void
listing_failed(int st)
{
	corral_die(CORRAL_EXIT_ERR, "listing the units failed (status %d)",
	    st);
}

/* What CORRAL_DISCOVER prints, in CORRAL_SRC, without the lock. */
static void
discover(struct corral_buf *raw)
{
	struct corral_strv argv = CORRAL_STRV_INIT;
	struct spawn how = { "units.raw", 0, 1, NULL, NULL };
	struct corral_err err;
	int st;

	how.dir = set(CS_SRC);
	xadd(&argv, "/bin/sh");
	xadd(&argv, "-c");
	xadd(&argv, set(CS_DISCOVER));
	if ((st = spawn(&argv, &how)) != 0) {
		unlink("units.raw");
		listing_failed(st);
	}
	if (corral_read_file("units.raw", raw, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	unlink("units.raw");
	corral_strv_release(&argv);
}

static void
listing(struct corral_buf *raw)
{
	struct corral_strv words = CORRAL_STRV_INIT;
	struct corral_err err;
	size_t i;

	if (corral_setting_on(&S, CS_DISCOVER))
		discover(raw);
	else if (corral_setting_on(&S, CS_UNITS_FILE)) {
		if (corral_read_file(set(CS_UNITS_FILE), raw, &err) < 0)
			corral_die_err(CORRAL_EXIT_ERR, &err);
	} else {
		if (corral_words(set(CS_UNITS), &words) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
		for (i = 0; i < words.n; i++)
			if (corral_buf_addf(raw, "%s\n", words.v[i]) < 0)
				corral_die(CORRAL_EXIT_ERR, "out of memory:");
		corral_strv_release(&words);
	}
}

/* The shard's cut options of corral-shard: -H, -k, -n. */
static void
shard_opts(struct corral_strv *argv)
{
	const char *kn = set(CS_SHARD), *slash = strchr(kn, '/');
	struct corral_buf k = CORRAL_BUF_INIT;

	if (corral_setting_on(&S, CS_HISTORY)) {
		xadd(argv, "-H");
		xadd(argv, set(CS_HISTORY));
	}
	if (!slash || corral_buf_add(&k, kn, (size_t)(slash - kn)) < 0)
		corral_die(CORRAL_EXIT_ERR, "shard '%s' is not K/N", kn);
	xadd(argv, "-k");
	xadd(argv, k.data);
	xadd(argv, "-n");
	xadd(argv, slash + 1);
	corral_buf_release(&k);
}

static int
step_units(void)
{
	struct corral_buf raw = CORRAL_BUF_INIT, units = CORRAL_BUF_INIT;
	struct corral_strv argv = CORRAL_STRV_INIT;
	struct spawn how = { "units.tmp", 0, 0, NULL, NULL };
	struct corral_err err;
	int st;

	listing(&raw);
	if (corral_units_filter(raw.data ? raw.data : "", raw.len,
	    set(CS_OUTREL), &units) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (!corral_setting_on(&S, CS_SHARD)) {
		put("units", units.data, units.len);
		goto out;
	}
	put("population", units.data, units.len);
	xprog(&argv, "corral-shard");
	shard_opts(&argv);
	xadd(&argv, "population");
	if ((st = spawn(&argv, &how)) != 0) {
		unlink("units.tmp");
		return CORRAL_EXIT_ERR;
	}
	corral_buf_reset(&units);
	if (corral_read_file("units.tmp", &units, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	unlink("units.tmp");
	put("units", units.data, units.len);
out:
	corral_buf_release(&raw);
	corral_buf_release(&units);
	corral_strv_release(&argv);
	return CORRAL_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* plan and parts                                                      */

/*
 * corral-split's command into dir (the units file is the caller's).  The
 * plan weighs CORRAL_OUT's own history; while there is none (a fresh
 * clone, a new CI job), CORRAL_HISTORY's, the durations the user gave.
 */
static void
split_argv(struct corral_strv *argv, const char *dir)
{
	char own[PATH_MAX];
	const char *given = set(CS_HISTORY);

	xprog(argv, "corral-split");
	xsettings_argv(CP_SPLIT, argv);
	/* CORRAL_AGENTS is how many run at once: cut finer blind */
	xadd(argv, "-F");
	xadd(argv, "-H");
	snprintf(own, sizeof(own), "%s/history.jsonl", set(CS_OUT));
	xadd(argv, !exists(own) && *given && exists(given) ? given : own);
	xadd(argv, "-C");
	xadd(argv, set(CS_SRC));
	xadd(argv, "-o");
	xout(argv, dir);
}

static size_t
count_slices(const char *dir)
{
	char path[PATH_MAX];
	size_t k;

	for (k = 0;; k++) {
		snprintf(path, sizeof(path), "%s/%zu.units", dir, k);
		if (!exists(path))
			return k;
	}
}

/*
 * A new plan starts the slices afresh: corral-split removes the files
 * and logs of slices that no longer exist, and re-run layers go, which
 * answered the old plan.  plan.mk goes first and comes back last: a plan
 * killed half-way has no plan.mk and is made again whole.
 */
static int
step_plan(void)
{
	struct corral_strv argv = CORRAL_STRV_INIT;
	struct corral_buf plan = CORRAL_BUF_INIT, who = CORRAL_BUF_INIT;
	size_t k, n;
	int st;

	if (corral_buf_addf(&who, "%s/plan.mk", set(CS_OUT)) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	step("PLAN", who.data);
	if (unlink("plan.mk") < 0 && errno != ENOENT)
		corral_die(CORRAL_EXIT_ERR, "cannot remove 'plan.mk':");
	split_argv(&argv, "slices");
	if (corral_setting_on(&S, CS_SILENT))
		xadd(&argv, "-q");
	xadd(&argv, "-l");
	xout(&argv, "logs");
	xout(&argv, "units");
	if ((st = spawn(&argv, NULL)) != 0)
		return st;
	remove_tree("rerun");
	n = count_slices("slices");
	if (corral_buf_addstr(&plan, "__corral_slices :=") < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	for (k = 0; k < n; k++)
		if (corral_buf_addf(&plan, " %zu", k) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (corral_buf_addch(&plan, '\n') < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	put("plan.mk", plan.data, plan.len);
	corral_strv_release(&argv);
	corral_buf_release(&plan);
	corral_buf_release(&who);
	return CORRAL_EXIT_OK;
}

/*
 * Every slice's parts in dir, by one corral-plan -c, each K.parts
 * rewritten only when it changed.  The parts command is the user's, so
 * it runs without the lock.
 */
static int
make_parts(const char *dir)
{
	struct corral_strv argv = CORRAL_STRV_INIT;
	struct spawn how = { NULL, 0, 1, NULL, NULL };
	int st;

	xprog(&argv, "corral-plan");
	xadd(&argv, "-c");
	xadd(&argv, "-C");
	xadd(&argv, set(CS_SRC));
	xsettings_argv(CP_PLAN, &argv);
	if (auto_parts()) {
		xadd(&argv, "-H");
		xout(&argv, "history.jsonl");
	}
	xadd(&argv, "-o");
	xout(&argv, dir);
	st = spawn(&argv, &how);
	corral_strv_release(&argv);
	return st;
}

static int
step_parts(void)
{
	int st = make_parts("slices");

	if (st == 0)
		put("parts", "", 0);
	return st ? CORRAL_EXIT_ERR : CORRAL_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* inputs and live                                                     */

/* The memo of the files' digests, in CORRAL_OUT, the manifests' cache. */
#define MEMO_FILE "digests"

/* The memo written back; a memo that cannot be is only slower next time. */
static void
memo_done(struct corral_memo *memo)
{
	if (corral_memo_save(memo) < 0)
		corral_warn("cannot save '%s' (the files' digests):",
		    MEMO_FILE);
	corral_memo_free(memo);
}

/* The manifests of dir, their digest added to sha; "none" when refused. */
static void
manifests(const char *dir, struct corral_sha256 *sha)
{
	struct corral_strv ex = CORRAL_STRV_INIT, pat = CORRAL_STRV_INIT;
	struct corral_memo *memo;
	struct corral_err err;
	char path[PATH_MAX];
	size_t k;
	int rc;

	excludes(&ex, 0);
	if (corral_words(set(CS_PARTS_EXCLUDE), &pat) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (!(memo = corral_memo_open(MEMO_FILE)))
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	rc = corral_manifests_write(set(CS_SRC), dir, &ex, &pat, memo, sha,
	    &err);
	memo_done(memo);
	if (rc == 0)
		goto out;
	corral_warn_err(&err);
	for (k = 0; snprintf(path, sizeof(path), "%s/%zu.units", dir, k),
	    exists(path); k++) {
		snprintf(path, sizeof(path), "%s/%zu.manifest", dir, k);
		unlink(path);
	}
	if (sha && corral_sha256_add(sha, "none\n", 5, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
out:
	corral_strv_release(&ex);
	corral_strv_release(&pat);
}

/* The old manifests, for auto's keep of a learned slice's stamp. */
struct old_manifest {
	struct corral_buf text;
	struct timespec mtime;
	int there;
};

static struct old_manifest *
read_old(size_t n)
{
	struct old_manifest *old = xcalloc(n + 1, sizeof(*old));
	struct corral_err err;
	struct stat st;
	char path[64];
	size_t k;

	for (k = 0; k < n; k++) {
		snprintf(path, sizeof(path), "slices/%zu.manifest", k);
		if (stat(path, &st) < 0 || corral_read_file(path,
		    &old[k].text, &err) < 0)
			continue;
		old[k].mtime = st.st_mtim;
		old[k].there = 1;
	}
	return old;
}

static void
keep_learned(struct old_manifest *old, size_t n)
{
	struct corral_err err;
	char path[64];
	size_t k;

	for (k = 0; k < n; k++) {
		snprintf(path, sizeof(path), "slices/%zu.manifest", k);
		if (old[k].there && corral_manifest_keep(path,
		    old[k].text.data ? old[k].text.data : "", old[k].text.len,
		    &old[k].mtime, &err) < 0)
			corral_warn_err(&err);
		corral_buf_release(&old[k].text);
	}
	free(old);
}

/*
 * The digest of everything the units depend on (slice-config and every
 * manifest), recorded with each result so that a failure followed by a
 * pass on the same inputs reads as flaky; and, once for the run, each
 * part a parts command printed that does not exist.
 */
static int step_cached(void);

static int
step_inputs(int ask)
{
	struct corral_strv missing = CORRAL_STRV_INIT;
	struct corral_buf cfg = CORRAL_BUF_INIT;
	struct old_manifest *old = NULL;
	struct corral_sha256 sha;
	struct corral_err err;
	char hex[CORRAL_SHA256_HEX];
	size_t n = count_slices("slices"), i;

	if (auto_parts())
		old = read_old(n);
	if (corral_sha256_init(&sha, &err) < 0 ||
	    corral_read_state("slice-config", &cfg, &err) < 0 ||
	    corral_sha256_add(&sha, cfg.data ? cfg.data : "", cfg.len,
	    &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	manifests("slices", &sha);
	if (corral_sha256_peek(&sha, hex, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	corral_sha256_release(&sha);
	hex[16] = '\n';
	put("inputs", hex, 17);
	if (old)
		keep_learned(old, n);
	if (corral_manifests_missing("slices", &missing) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	for (i = 0; i < missing.n; i++)
		corral_warn("part '%s' not found in '%s'; not cloned",
		    missing.v[i], set(CS_SRC));
	corral_strv_release(&missing);
	corral_buf_release(&cfg);
	return ask ? step_cached() : CORRAL_EXIT_OK;
}

/* Whether make runs with -B (its flags are MAKEFLAGS' first word). */
static int
make_always(void)
{
	const char *f = getenv("MAKEFLAGS");
	size_t n;

	if (!f)
		return 0;
	n = strcspn(f, " ");
	return *f != '-' && memchr(f, 'B', n) != NULL;
}

/*
 * What agents show while they run starts afresh with every run, and the
 * clones agents of a killed run left go: this make holds the lock, and
 * an agent still alive would hold it too.  The ticks start with the
 * number of units the run will run ("T N").
 */
static int
step_live(const char *slices)
{
	struct corral_err err;
	char line[32];
	long long n;

	n = atoll(slices);
	remove_tree("live");
	remove_tree("work");
	if (mkdir("live", 0777) < 0)
		corral_die(CORRAL_EXIT_ERR, "cannot make 'live':");
	snprintf(line, sizeof(line), "T %lld\n", corral_live_total(
	    (size_t)(n < 0 ? 0 : n), "slice-config", make_always()));
	if (corral_atomic_file("live/ticks", line, strlen(line),
	    CORRAL_ATOMIC_NO_SYNC, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	return CORRAL_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* slice: one agent                                                    */

/* The agent's name: the slice's, and the shard's after it. */
static void
agent_name(struct corral_buf *b, const char *stem)
{
	const char *kn = set(CS_SHARD);

	if (corral_buf_addstr(b, corral_path_base(stem)) < 0 ||
	    (*kn && corral_buf_addf(b, ".s%.*s", (int)strcspn(kn, "/"),
	    kn) < 0))
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
}

static void
read_inputs(char out[32])
{
	FILE *fp = fopen("inputs", "r");

	out[0] = '\0';
	if (fp) {
		if (!fgets(out, 32, fp))
			out[0] = '\0';
		out[strcspn(out, "\n")] = '\0';
		fclose(fp);
	}
}

/* The logs directory of the slice stem's layer: logs, rerun/N/logs. */
static void
slice_logs(struct corral_buf *b, const char *stem)
{
	char *dir = corral_path_dir(stem), *top;

	if (!dir || !(top = corral_path_dir(dir)) ||
	    corral_buf_addf(b, "%s%slogs", strcmp(top, ".") ? top : "",
	    strcmp(top, ".") ? "/" : "") < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	free(dir);
	free(top);
}

/*
 * The result cache: the local store in CORRAL_OUT, the settings of the
 * key, and no hit under make -B.
 */
static void
cache_argv(struct corral_strv *argv)
{
	struct corral_buf keyed = CORRAL_BUF_INIT;

	if (corral_settings_keyed(&S, &keyed) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	xadd(argv, "-O");
	xout(argv, "cache");
	xadd(argv, "-Z");
	xout(argv, MEMO_FILE);
	xadd(argv, "-Y");
	xadd(argv, keyed.data);
	if (make_always())
		xadd(argv, "-b");
	corral_buf_release(&keyed);
}

/*
 * Where the agent makes its clone: CORRAL_OUT/work, or, with CORRAL_WORK,
 * this CORRAL_OUT's directory there (corral-TAG, TAG a digest of its
 * path, so that runs of two CORRAL_OUTs on one node never sweep each
 * other's clones), which corral-run-slice -j expands on its node.
 */
static void
work_argv(struct corral_strv *argv)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_err err;
	char hex[CORRAL_SHA256_HEX];

	if (!corral_setting_on(&S, CS_WORK)) {
		xadd(argv, "-w");
		xout(argv, "work");
		return;
	}
	if (corral_sha256_buf(set(CS_OUT), strlen(set(CS_OUT)), hex,
	    &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (corral_buf_addf(&b, "%s/corral-%.16s", set(CS_WORK), hex) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	xadd(argv, "-j");
	xadd(argv, b.data);
	corral_buf_release(&b);
}

/*
 * The options every agent of the layer of the slice stem (slices/K,
 * rerun/N/slices/K) is given, but those of its own slice's files.
 */
static void
agent_argv(struct corral_strv *argv, const char *stem)
{
	struct corral_buf f = CORRAL_BUF_INIT;
	char inputs[32];
	int layer = !strncmp(stem, "rerun/", 6);

	xsettings_argv(CP_SLICE, argv);
	if (!corral_setting_on(&S, CS_SILENT) && strcmp(set(CS_QUIET), "1"))
		xadd(argv, "-v");
	xadd(argv, "-E");
	xadd(argv, set(CS_KEEP_ENV));
	xadd(argv, "-S");
	xout(argv, "live");
	xadd(argv, "-C");
	xadd(argv, set(CS_SRC));
	excludes(argv, 1);
	if (auto_parts()) {
		xadd(argv, "-A");
		xout(argv, "history.jsonl");
	}
	if (!layer)
		xadd(argv, "-M");
	cache_argv(argv);
	read_inputs(inputs);
	xadd(argv, "-i");
	xadd(argv, inputs);
	xadd(argv, "-l");
	slice_logs(&f, stem);
	xout(argv, f.data);
	corral_buf_release(&f);
}

/* xout of stem with ext. */
static void
xstem(struct corral_strv *argv, const char *stem, const char *ext)
{
	struct corral_buf f = CORRAL_BUF_INIT;

	if (corral_buf_addf(&f, "%s%s", stem, ext) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	xout(argv, f.data);
	corral_buf_release(&f);
}

/* corral-run-slice's command for the slice stem (slices/K, rerun/N/slices/K). */
static void
slice_argv(struct corral_strv *argv, const char *stem, const char *agent)
{
	struct corral_buf f = CORRAL_BUF_INIT;

	if (corral_words(set(CS_LAUNCH), argv) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	xprog(argv, "corral-run-slice");
	agent_argv(argv, stem);
	if (corral_buf_addf(&f, "%s.est", stem) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (exists(f.data)) {
		xadd(argv, "-e");
		xout(argv, f.data);
	}
	corral_buf_release(&f);
	xadd(argv, "-P");
	xstem(argv, stem, ".parts");
	work_argv(argv);
	xadd(argv, "-D");
	xstem(argv, stem, ".pass");
	xadd(argv, agent);
	xstem(argv, stem, ".units");
}

/* make's own variables as corral.mk's recipe had them, for the units. */
static void
slice_env(struct corral_strv *env)
{
	struct corral_strv extra = CORRAL_STRV_INIT;

	xaddf(&extra, "MAKEFLAGS=%s", set(CS_MAKEFLAGS));
	xaddf(&extra, "MFLAGS=%s", set(CS_MFLAGS));
	xaddf(&extra, "MAKELEVEL=%s", set(CS_MAKELEVEL));
	if (corral_setting_on(&S, CS_LAUNCH)) {
		/* An agent a launcher starts on another node has no guard. */
		xadd(&extra, "__corral_launched=1");
		xaddf(&extra, "__corral_guard_node=%s", set(CS_GUARD_NODE));
	}
	if (corral_proc_env(env, (const char *const *)extra.v) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	corral_strv_release(&extra);
}

/* A signal that would end the slice step while a launcher runs. */
static volatile sig_atomic_t launch_caught;

static void
launch_catch(int sig)
{
	launch_caught = sig;
}

/* How long a launcher passed a signal has to end before this step does. */
#define LAUNCH_GRACE_MS	10000

/*
 * The launcher's stderr, from fd, passed to ours as it comes and to said,
 * until the launcher pid has ended and nothing more is there.  A signal
 * caught is passed on to the launcher, which has LAUNCH_GRACE_MS to end:
 * its agent never writes to a pipe nobody reads.
 */
static void
launch_tee(int fd, pid_t pid, struct corral_launch_said *said)
{
	struct pollfd pf;
	char chunk[4096];
	long long until = 0;
	int ended = 0;
	ssize_t n;

	pf.fd = fd;
	pf.events = POLLIN;
	for (;;) {
		if (launch_caught && !until) {
			kill(pid, launch_caught);
			until = corral_time_ms() + LAUNCH_GRACE_MS;
		}
		if (until && corral_time_ms() > until)
			return;
		if ((n = poll(&pf, 1, ended ? 0 : 200)) < 0 && errno != EINTR)
			return;
		if (n == 0 && ended)
			return;
		if (n == 0)
			ended = corral_proc_ended(pid) != 0;
		if (n <= 0)
			continue;
		if ((n = read(fd, chunk, sizeof(chunk))) < 0 && errno == EINTR)
			continue;
		if (n <= 0) {	/* its end: wait for the launcher's */
			pf.fd = -1;
			continue;
		}
		(void)corral_write_all(2, chunk, (size_t)n);
		if (corral_launch_said_feed(said, chunk, (size_t)n) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
	}
}

/*
 * spawn of the agent under CORRAL_LAUNCH: the launcher's stderr through
 * launch_tee.  A signal that came meanwhile ends this step, as it would
 * have, once the launcher is gone.
 */
static int
spawn_launched(const struct corral_strv *argv, const struct spawn *how,
    struct corral_launch_said *said)
{
	static const int sigs[] = { SIGHUP, SIGINT, SIGTERM };
	struct sigaction sa, old[3];
	pid_t pid;
	int fds[2], st, i;

	if (pipe(fds) < 0 || fcntl(fds[0], F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(fds[1], F_SETFD, FD_CLOEXEC) < 0)
		corral_die(CORRAL_EXIT_ERR, "cannot make a pipe:");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = launch_catch;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++)	/* one ignored stays ignored */
		if (sigaction(sigs[i], NULL, &old[i]) == 0 &&
		    old[i].sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	st = start(argv, how, fds[1], &pid);
	close(fds[1]);
	if (st == 0) {
		launch_tee(fds[0], pid, said);
		st = launch_caught ? 128 + launch_caught : reap(pid);
	}
	close(fds[0]);
	for (i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	if (launch_caught)
		raise(launch_caught);
	return st;
}

/*
 * The agent left no sealed log in logs after its launcher ended with
 * status st: the launcher did not start it, or lost it.  Its units are
 * not-run, the note file says why (what the launcher said last, or its
 * status), and so does this step, once.
 */
static void
launch_lost(const char *logs, const char *stem, const char *agent, int st,
    struct corral_launch_said *said)
{
	struct corral_buf why = CORRAL_BUF_INIT, units = CORRAL_BUF_INIT;
	const char *line = corral_launch_said_line(said);
	struct corral_err err;

	if ((line ? corral_buf_addf(&why, "launcher: %s", line) :
	    corral_buf_addf(&why, "launcher exited with status %d", st)) < 0 ||
	    corral_buf_addf(&units, "%s.units", stem) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (corral_launch_note_write(logs, agent, why.data, units.data,
	    &err) < 0)
		corral_warn_err(&err);
	corral_warn("agent %s was not started (or lost) by the launcher "
	    "(status %d)%s%s; its units count as not run", agent, st,
	    line ? ": " : "", line ? line : "");
	corral_buf_release(&why);
	corral_buf_release(&units);
}

/* Whether logs holds the sealed log of agent, as a regular file. */
static int
sealed_log(const char *logs, const char *agent)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct stat st;
	int has;

	if (corral_buf_addf(&b, "%s/agent-%s.jsonl", logs, agent) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	has = lstat(b.data, &st) == 0 && S_ISREG(st.st_mode);
	corral_buf_release(&b);
	return has;
}

/*
 * Before an agent starts: its layer's logs directory is there (so that
 * the merge finds one even when no agent ever starts), and neither its
 * last log (its agent would remove it first: one a launcher did not
 * start must not stand for it) nor a note of a launch before.
 */
static void
slice_clear(const char *logs, const char *agent)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_err err;
	const char *const ext[] = { "jsonl", "launch" };
	size_t i;

	if (corral_mkdir_p(logs, 0777, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	for (i = 0; i < 2; i++) {
		corral_buf_reset(&b);
		if (corral_buf_addf(&b, "%s/agent-%s.%s", logs, agent,
		    ext[i]) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
		if (unlink(b.data) < 0 && errno != ENOENT)
			corral_die(CORRAL_EXIT_ERR, "cannot remove '%s':",
			    b.data);
	}
	corral_buf_release(&b);
}

/*
 * One slice, one agent.  The stamp exists only when every unit passed,
 * so a slice that failed or died runs again next time; whatever
 * happened, the step succeeds, and the merge that follows tells the
 * truth about it -- unless the make that started the run is gone: then
 * its agents stop, and this step fails so that nothing more starts.
 */
static int
step_slice(const char *stem)
{
	struct corral_strv argv = CORRAL_STRV_INIT, env = CORRAL_STRV_INIT;
	struct corral_buf agent = CORRAL_BUF_INIT, logs = CORRAL_BUF_INIT;
	struct spawn how = { NULL, 0, 0, NULL, NULL };
	struct corral_launch_said said;
	int st, launched = corral_setting_on(&S, CS_LAUNCH);

	agent_name(&agent, stem);
	if (tell()) {
		if (isatty(1) && isatty(2))
			fputs("\r\033[K", stdout);
		printf("  %-7s %s\n", "SLICE", stem);
		fflush(stdout);
	}
	if (corral_setting_on(&S, CS_SHARD) && unlink("shard.json") < 0 &&
	    errno != ENOENT)
		corral_die(CORRAL_EXIT_ERR, "cannot remove 'shard.json':");
	slice_argv(&argv, stem, agent.data);
	slice_env(&env);
	slice_logs(&logs, stem);
	slice_clear(logs.data, agent.data);
	how.envp = env.v;
	corral_launch_said_init(&said, set(CS_LAUNCH));
	st = launched ? spawn_launched(&argv, &how, &said) :
	    spawn(&argv, &how);
	if (st > 1 && guard_gone()) {
		corral_warn("make (pid %s) is gone; agent %s stopped",
		    set(CS_GUARD), agent.data);
		st = CORRAL_EXIT_ERR;
	} else if (launched && !sealed_log(logs.data, agent.data)) {
		launch_lost(logs.data, stem, agent.data, st, &said);
		st = CORRAL_EXIT_OK;
	} else {
		if (st > 1)
			corral_warn("agent %s stopped (status %d); its units "
			    "count as not run", agent.data, st);
		st = CORRAL_EXIT_OK;
	}
	corral_launch_said_release(&said);
	corral_strv_release(&argv);
	corral_strv_release(&env);
	corral_buf_release(&agent);
	corral_buf_release(&logs);
	return st;
}

/* ------------------------------------------------------------------ */
/* cached: the slices the stores answer, before make reads the graph    */

/* The K of a line ".../slices/K.units" that corral-run-slice -q printed. */
static long
answered_slice(const char *line)
{
	const char *p = strrchr(line, '/');
	char *end;
	long k;

	if (!p || p[1] < '0' || p[1] > '9')
		return -1;
	k = strtol(p + 1, &end, 10);
	return strcmp(end, ".units") ? -1 : k;
}

/*
 * The job slots make was given: N of -jN in MAKEFLAGS (its words before
 * "--", the variables), 1 without -j, LONG_MAX for a -j with no limit.
 */
static long
make_jobs(void)
{
	struct corral_strv w = CORRAL_STRV_INIT;
	long n = 1;
	size_t i;

	if (corral_words(set(CS_MAKEFLAGS), &w) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	for (i = 0; i < w.n && strcmp(w.v[i], "--"); i++)
		if (!strncmp(w.v[i], "-j", 2))
			n = w.v[i][2] ? atol(w.v[i] + 2) : LONG_MAX;
	corral_strv_release(&w);
	return n < 1 ? 1 : n;
}

/* Slices a -q process is given at the least: fewer are not worth one. */
#define CACHED_SLICES_A_PROCESS 16
/* The most -q processes a pass starts. */
#define CACHED_PROCESSES_MAX 8

/*
 * How many corral-run-slice -q share stale slices: one a job slot of
 * make's and a CPU, each with CACHED_SLICES_A_PROCESS at the least, and
 * CACHED_PROCESSES_MAX at the most.  The
 * pass runs alone in the run's first pass (nothing else of the graph is
 * read yet), and a lookup is file system calls, which the CPUs serve
 * side by side.
 */
static size_t
cached_processes(size_t stale)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), n = make_jobs();

	if (n > (cpus > 0 ? cpus : 1))
		n = cpus > 0 ? cpus : 1;
	if (n > CACHED_PROCESSES_MAX)
		n = CACHED_PROCESSES_MAX;
	if ((size_t)n > stale / CACHED_SLICES_A_PROCESS)
		n = (long)(stale / CACHED_SLICES_A_PROCESS);
	return n < 1 ? 1 : (size_t)n;
}

/* The answered slices one -q printed into out, appended to answered. */
static size_t
read_answered(const char *out, struct corral_buf *answered)
{
	struct corral_buf got = CORRAL_BUF_INIT;
	struct corral_err err;
	char *line, *next;
	size_t n = 0;
	long a;

	if (corral_read_file(out, &got, &err) < 0)
		corral_warn_err(&err);
	unlink(out);
	for (line = got.data; line && *line; line = next) {
		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		if ((a = answered_slice(line)) < 0)
			continue;
		if (tell())
			printf("  %-7s slices/%ld\n", "CACHED", a);
		if (corral_buf_addf(answered, " %ld", a) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
		n++;
	}
	corral_buf_release(&got);
	return n;
}

/*
 * inputs -c, in a run's first pass (cached.mk, included by the engine's
 * make, is made by it, before make reads the graph): every slice it would
 * find out of date is first asked of the stores, all at once, by
 * corral-run-slice -q, one a job slot (cached_processes; no agent's
 * start, no clone a slice); each slice
 * whose every unit hits (none of them sampled to verify) gets its log and
 * stamp as its agent would have written them.  cached.mk, a run's one
 * included makefile, holds the plan (plan.mk's slice list) and names the
 * slices answered and the run; it is rewritten only when that changed:
 * make then starts over, finds the stamps of the slices answered up to
 * date, and starts agents for the others alone.  -q says nothing: what
 * a slice it left has to say, its agent says.  Nothing is asked under
 * make -B, which takes no hit.  A -q that fails leaves its slices to
 * their agents, which say why.
 */
static int
step_cached(void)
{
	struct corral_strv argv = CORRAL_STRV_INIT, env = CORRAL_STRV_INIT;
	struct corral_strv pick = CORRAL_STRV_INIT, one = CORRAL_STRV_INIT;
	struct corral_buf agent = CORRAL_BUF_INIT, stem = CORRAL_BUF_INIT;
	struct corral_buf logs = CORRAL_BUF_INIT, mk = CORRAL_BUF_INIT;
	struct corral_buf answered = CORRAL_BUF_INIT;
	struct spawn how = { NULL, 0, 0, NULL, NULL };
	char out[CACHED_PROCESSES_MAX][32];
	pid_t pid[CACHED_PROCESSES_MAX];
	struct corral_err err;
	size_t k, n = count_slices("slices"), stale = 0, procs, p, i;
	int st = 0, s;

	if (make_always())
		goto out;
	xprog(&argv, "corral-run-slice");
	xadd(&argv, "-q");
	agent_argv(&argv, "slices/0");
	slice_logs(&logs, "slices/0");
	for (k = 0; k < n; k++) {
		if (corral_slice_current(k, "slice-config"))
			continue;
		corral_buf_reset(&stem);
		corral_buf_reset(&agent);
		if (corral_buf_addf(&stem, "slices/%zu", k) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
		agent_name(&agent, stem.data);
		slice_clear(logs.data, agent.data);
		xadd(&pick, agent.data);
		xstem(&pick, stem.data, ".units");
		stale++;
	}
	if (stale == 0)
		goto out;
	if (corral_setting_on(&S, CS_SHARD) && unlink("shard.json") < 0 &&
	    errno != ENOENT)
		corral_die(CORRAL_EXIT_ERR, "cannot remove 'shard.json':");
	slice_env(&env);
	how.envp = env.v;
	procs = cached_processes(stale);
	/* slice i to process i mod procs; each prints what it answered */
	for (p = 0; p < procs; p++) {
		corral_strv_release(&one);
		for (i = 0; i < argv.n; i++)
			xadd(&one, argv.v[i]);
		for (i = 2 * p; i + 1 < pick.n; i += 2 * procs) {
			xadd(&one, pick.v[i]);
			xadd(&one, pick.v[i + 1]);
		}
		snprintf(out[p], sizeof(out[p]), "cached.%zu.tmp", p);
		how.out = out[p];
		if ((s = start(&one, &how, -1, &pid[p])) != 0) {
			pid[p] = -1;
			st = st > s ? st : s;
		}
	}
	for (p = 0; p < procs; p++)
		if (pid[p] > 0 && (s = reap(pid[p])) > st)
			st = s;
	if (st > 1 && guard_gone()) {
		corral_warn("make (pid %s) is gone; the cached slices stopped",
		    set(CS_GUARD));
		for (p = 0; p < procs; p++)
			unlink(out[p]);
		st = CORRAL_EXIT_ERR;
		goto done;
	}
	if (corral_buf_addf(&answered, "# the slices the stores answered "
	    "before run %s read the graph\n__corral_answered :=",
	    set(CS_RUN)) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	stale = 0;
	for (p = 0; p < procs; p++)
		stale += read_answered(out[p], &answered);
	if (corral_buf_addch(&answered, '\n') < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (!stale)
		corral_buf_reset(&answered);
out:
	/*
	 * The run's one included makefile: the plan, and what was answered.
	 * make starts over when it changed (a new plan, a slice answered);
	 * two makefiles made in one pass under -j can leave make's notice
	 * of the first one's change behind.
	 */
	if (corral_read_state("plan.mk", &mk, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (answered.len && corral_buf_add(&mk, answered.data,
	    answered.len) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	put("cached.mk", mk.data, mk.len);
	st = CORRAL_EXIT_OK;
done:
	corral_buf_release(&answered);
	corral_strv_release(&argv);
	corral_strv_release(&pick);
	corral_strv_release(&one);
	corral_strv_release(&env);
	corral_buf_release(&agent);
	corral_buf_release(&stem);
	corral_buf_release(&logs);
	corral_buf_release(&mk);
	return st;
}

/* ------------------------------------------------------------------ */
/* merge                                                               */

/* The logs directories of the main layer and every re-run layer, in order. */
static void
layer_logs(struct corral_strv *argv)
{
	char path[64];
	int n;

	xout(argv, "logs");
	for (n = 1;; n++) {
		snprintf(path, sizeof(path), "rerun/%d", n);
		if (!exists(path))
			break;
		snprintf(path, sizeof(path), "rerun/%d/logs", n);
		xout(argv, path);
	}
}

/* corral-merge under the guard: only while the run's make lives. */
static int
merge(const struct corral_strv *argv)
{
	if (guard_gone()) {
		corral_warn("process %s, which the run hangs on, is gone; "
		    "'%s' not run", set(CS_GUARD), argv->v[0]);
		return CORRAL_EXIT_ERR;
	}
	return spawn(argv, NULL);
}

/* The merge of the main layer and every re-run layer, latest winning. */
static int
merge_layers(void)
{
	struct corral_strv argv = CORRAL_STRV_INIT;
	int st;

	xprog(&argv, "corral-merge");
	xadd(&argv, "-s");
	xsettings_argv(CP_MERGE, &argv);
	xadd(&argv, "-u");
	xout(&argv, "units");
	xadd(&argv, "-r");
	xadd(&argv, set(CS_RUN));
	xadd(&argv, "-o");
	xadd(&argv, set(CS_OUT));
	layer_logs(&argv);
	st = merge(&argv);
	corral_strv_release(&argv);
	return st;
}

static long long
lines_in(const char *path)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_err err;
	long long n = 0;
	size_t i;

	if (corral_read_file(path, &b, &err) == 0)
		for (i = 0; i < b.len; i++)
			n += b.data[i] == '\n';
	corral_buf_release(&b);
	return n;
}

static int
nonempty(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_size > 0;
}

/*
 * After a merge: the failed and not-run units (what a re-run takes), the
 * one-screen summary kept in board, the reports wanted, and a shard's
 * manifest.  st: the merge's status, and what is returned, 2 when a
 * report or the manifest failed.
 */
static int
summary(int st)
{
	struct corral_strv argv = CORRAL_STRV_INIT;
	struct spawn how = { "failed.units.tmp", 1, 0, NULL, NULL };
	FILE *fp;

	/* one reading of the results: the board, and the failed units */
	if (nonempty("units")) {
		how.out = "board.tmp";
		how.null_err = 0;
		xprog(&argv, "corral-scoreboard");
		xadd(&argv, "-f");
		xsettings_argv(CP_SCORE, &argv);
		xadd(&argv, "-U");
		xadd(&argv, "failed.units.tmp");
		xadd(&argv, set(CS_OUT));
		spawn(&argv, &how);
	} else {
		xprog(&argv, "corral-scoreboard");
		xadd(&argv, "-u");
		xadd(&argv, set(CS_OUT));
		spawn(&argv, &how);
		if ((fp = fopen("board.tmp", "w"))) {
			fprintf(fp, "corral: shard %s holds none of the %lld "
			    "units: there are more shards than units\n",
			    set(CS_SHARD), lines_in("population"));
			fclose(fp);
		}
	}
	corral_strv_release(&argv);
	if (rename("failed.units.tmp", "failed.units") < 0)
		corral_warn("cannot rename 'failed.units.tmp':");
	if (rename("board.tmp", "board") < 0)
		corral_warn("cannot rename 'board.tmp':");
	if (corral_setting_on(&S, CS_JUNIT) || corral_setting_on(&S,
	    CS_TRACE) || corral_setting_on(&S, CS_HTML)) {
		xprog(&argv, "corral-report");
		xsettings_argv(CP_REPORT, &argv);
		xadd(&argv, set(CS_OUT));
		if (spawn(&argv, NULL) != 0)
			st = CORRAL_EXIT_ERR;
		corral_strv_release(&argv);
	}
	if (corral_setting_on(&S, CS_SHARD)) {
		how.out = "/dev/null";
		xprog(&argv, "corral-shard");
		shard_opts(&argv);
		xadd(&argv, "-m");
		xout(&argv, "shard.json");
		xadd(&argv, "-r");
		xadd(&argv, set(CS_RUN));
		if (corral_setting_on(&S, CS_HOST)) {
			xadd(&argv, "-s");
			xadd(&argv, set(CS_HOST));
		}
		xadd(&argv, "population");
		if (spawn(&argv, &how) != 0)
			st = CORRAL_EXIT_ERR;
		corral_strv_release(&argv);
	}
	return st;
}

/* An empty population is said in one line, and is no result. */
static void
no_units(void)
{
	if (corral_setting_on(&S, CS_DISCOVER))
		corral_warn("no units: CORRAL_DISCOVER printed nothing");
	else if (corral_setting_on(&S, CS_UNITS_FILE))
		corral_warn("no units: CORRAL_UNITS_FILE '%s' is empty",
		    set(CS_UNITS_FILE));
	else
		corral_warn("no units: CORRAL_UNITS is empty");
}

/*
 * The merge of a whole run: made when a slice ran or what it reads
 * changed, else make finds merged up to date (the last merge found
 * every unit passed) and shows its board again.  An empty shard of a
 * population is a result (a matrix wider than the suite).
 */
static int
step_merge_run(void)
{
	int st;

	if (unlink("merged") < 0 && errno != ENOENT)
		corral_die(CORRAL_EXIT_ERR, "cannot remove 'merged':");
	if (!nonempty("units") && (!corral_setting_on(&S, CS_SHARD) ||
	    !nonempty("population"))) {
		st = CORRAL_EXIT_ERR;
		no_units();
	} else {
		if (corral_setting_on(&S, CS_SHARD) && !nonempty("units"))
			(void)mkdir("logs", 0777);
		step("MERGE", set(CS_OUT));
		remove_tree("rerun");
		st = summary(merge_layers());
		if (st == 0)
			put("merged", "", 0);
	}
	put_status("merge-status", st);
	return CORRAL_EXIT_OK;
}

static int
step_answer(void)
{
	cat("board");
	put_status(exit_status, read_status("merge-status", CORRAL_EXIT_ERR));
	return CORRAL_EXIT_OK;
}

static int
step_merge(void)
{
	int st = CORRAL_EXIT_ERR;

	step("MERGE", set(CS_OUT));
	if (!exists("units"))
		corral_warn("nothing to merge in '%s'; run corral-run first",
		    set(CS_OUT));
	else {
		st = summary(merge_layers());
		cat("board");
	}
	put_status(exit_status, st);
	return CORRAL_EXIT_OK;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every CORRAL_SRC/.corral/shard-*-of-*, sorted. */
static void
default_shards(struct corral_strv *dirs)
{
	struct corral_buf top = CORRAL_BUF_INIT;
	struct dirent *e;
	size_t from = dirs->n;
	DIR *d;

	if (corral_buf_addf(&top, "%s/.corral", set(CS_SRC)) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if ((d = opendir(top.data))) {
		while ((e = readdir(d)))
			if (fnmatch("shard-*-of-*", e->d_name, 0) == 0) {
				struct corral_buf p = CORRAL_BUF_INIT;

				if (corral_buf_addf(&p, "%s/%s", top.data,
				    e->d_name) < 0)
					corral_die(CORRAL_EXIT_ERR,
					    "out of memory:");
				xadd(dirs, p.data);
				corral_buf_release(&p);
			}
		closedir(d);
	}
	if (dirs->n > from)
		qsort(dirs->v + from, dirs->n - from, sizeof(char *),
		    by_name);
	corral_buf_release(&top);
}

static int
step_merge_shards(void)
{
	struct corral_strv argv = CORRAL_STRV_INIT, dirs = CORRAL_STRV_INIT;
	struct corral_buf who = CORRAL_BUF_INIT;
	size_t i;
	int st = CORRAL_EXIT_ERR;

	if (corral_buf_addf(&who, "%s (shards)", set(CS_OUT)) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	step("MERGE", who.data);
	if (corral_setting_on(&S, CS_SHARDS)) {
		if (corral_words(set(CS_SHARDS), &dirs) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
	} else
		default_shards(&dirs);
	if (!dirs.n)
		corral_warn("no shard directories to merge: set "
		    "CORRAL_SHARDS, or run CORRAL_SHARD=K/N into "
		    ".corral/shard-K-of-N");
	else {
		xprog(&argv, "corral-merge");
		xadd(&argv, "-S");
		xsettings_argv(CP_MERGE, &argv);
		if (corral_setting_on(&S, CS_HISTORY)) {
			xadd(&argv, "-H");
			xadd(&argv, set(CS_HISTORY));
		}
		xadd(&argv, "-u");
		xout(&argv, "units");
		xadd(&argv, "-r");
		xadd(&argv, set(CS_RUN));
		xadd(&argv, "-o");
		xadd(&argv, set(CS_OUT));
		for (i = 0; i < dirs.n; i++)
			xadd(&argv, dirs.v[i]);
		st = summary(merge(&argv));
		cat("board");
	}
	put_status(exit_status, st);
	corral_strv_release(&argv);
	corral_strv_release(&dirs);
	corral_buf_release(&who);
	return CORRAL_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* layers                                                              */

/*
 * The units of list run as layer n: split across fresh agents, run by
 * an inner make (sharing the jobserver), and merged over all.  The main
 * slices holding one of them lose their stamps, so that the next
 * corral-run runs them again and its main layer alone is the result.
 */
static int
layer_run(const char *list)
{
	struct corral_strv argv = CORRAL_STRV_INIT, units = CORRAL_STRV_INIT;
	struct corral_strv env = CORRAL_STRV_INIT, extra = CORRAL_STRV_INIT;
	struct corral_buf dir = CORRAL_BUF_INIT;
	struct spawn how = { NULL, 0, 0, NULL, NULL };
	struct corral_err err;
	char line[64];
	FILE *fp;
	int n, st = CORRAL_EXIT_ERR;

	for (n = 1; snprintf(line, sizeof(line), "rerun/%d", n),
	    exists(line); n++)
		;
	if (corral_buf_addf(&dir, "rerun/%d/slices", n) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	split_argv(&argv, dir.data);
	xout(&argv, list);
	if (spawn(&argv, NULL) != 0 || make_parts(dir.data) != 0)
		goto out;
	manifests(dir.data, NULL);
	xunits_load(list, '\n', &units, 0);
	if (tell()) {
		printf("  %-7s %zu unit(s) as layer %d\n", "RERUN", units.n,
		    n);
		fflush(stdout);
	}
	if (corral_unstamp(&units, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if ((fp = fopen("live/ticks", "a"))) {
		fprintf(fp, "T %zu\n", units.n);
		fclose(fp);
	}
	corral_strv_release(&argv);
	xadd(&argv, set(CS_MAKE));
	xadd(&argv, "-f");
	xadd(&argv, set(CS_ENGINE_MK));
	xadd(&argv, "__corral-layer");
	xaddf(&extra, "CORRAL_LAYER=rerun/%s", line + strlen("rerun/"));
	if (corral_proc_env(&env, (const char *const *)extra.v) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	how.envp = env.v;
	if (spawn(&argv, &how) == 0) {
		st = summary(merge_layers());
		cat("board");
	}
out:
	corral_strv_release(&argv);
	corral_strv_release(&units);
	corral_strv_release(&env);
	corral_strv_release(&extra);
	corral_buf_release(&dir);
	return st;
}

static int
step_layer(const char *which)
{
	struct corral_strv units = CORRAL_STRV_INIT;
	struct corral_buf only = CORRAL_BUF_INIT;
	int st = CORRAL_EXIT_ERR;

	if (!strcmp(which, "failed")) {
		if (!exists("failed.units"))
			corral_warn("nothing to re-run in '%s'; run "
			    "corral-run first", set(CS_OUT));
		else if (!nonempty("failed.units")) {
			st = CORRAL_EXIT_OK;
			printf("corral: nothing to re-run: every unit passed\n");
		} else
			st = layer_run("failed.units");
	} else if (!strcmp(which, "only")) {
		xunits_load("units", '\n', &units, 0);
		if (corral_units_matching(&units, set(CS_ONLY), &only) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
		put("only.units", only.data, only.len);
		if (!only.len)
			corral_warn("no unit matches CORRAL_ONLY '%s'",
			    set(CS_ONLY));
		else
			st = layer_run("only.units");
	} else
		corral_usage(&use, CORRAL_EXIT_ERR);
	put_status(exit_status, st);
	corral_strv_release(&units);
	corral_buf_release(&only);
	return CORRAL_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* run: from corral.mk's recipe to the engine's make and back          */

/* The run id, sortable by time: 20261202T010203123Z. */
static void
run_id(char out[32])
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(out, 32, "%Y%m%dT%H%M%S", &tm);
	snprintf(out + n, 32 - n, "%03ldZ", ts.tv_nsec / 1000000);
}

/* CORRAL_OUT (or the shard's .corral) relative to CORRAL_SRC, or "". */
static const char *
outrel(void)
{
	const char *src = set(CS_SRC), *excl = corral_setting_on(&S,
	    CS_SHARD_TOP) ? set(CS_SHARD_TOP) : set(CS_OUT);
	size_t n = strlen(src);

	if (n == 1)
		n = 0;	/* "/" */
	return !strncmp(excl, src, n) && excl[n] == '/' && excl[n + 1] ?
	    excl + n + 1 : "";
}

static void
from_env(enum corral_setting_id id, const char *name)
{
	const char *v = getenv(name);

	xset(id, v ? v : "");
}

/* What the run decides beside the knobs. */
static void
run_settings(void)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	char id[32], host[HOST_NAME_MAX + 1] = "";
	const char *shard = getenv("__corral_shard");
	struct corral_err err;
	long long t;

	if (shard && *shard) {
		if (corral_buf_addstr(&b, shard) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
		if (strchr(b.data, ' '))
			*strchr(b.data, ' ') = '/';
		xset(CS_SHARD, b.data);
	}
	from_env(CS_SHARD_TOP, "__corral_shard_top");
	xset(CS_OUTREL, outrel());
	run_id(id);
	xset(CS_RUN, getenv("CORRAL_RUN") && *getenv("CORRAL_RUN") ?
	    getenv("CORRAL_RUN") : id);
	if (corral_setting_on(&S, CS_RUN_TIMEOUT)) {
		if (corral_seconds_parse(set(CS_RUN_TIMEOUT), &t,
		    "CORRAL_RUN_TIMEOUT", &err) < 0)
			corral_die_err(CORRAL_EXIT_ERR, &err);
		corral_buf_reset(&b);
		t += corral_time_epoch_ms();
		if (corral_buf_addf(&b, "%lld.%03lld", t / 1000, t % 1000) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
		xset(CS_DEADLINE, b.data);
	}
	corral_buf_reset(&b);
	if (corral_buf_addf(&b, "%ld", (long)getppid()) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	xset(CS_GUARD, b.data);
	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = '\0';
	xset(CS_GUARD_NODE, host);
	from_env(CS_KEEP_ENV, "__corral_keep_env");
	from_env(CS_MAKE, "__corral_make");
	if (!corral_setting_on(&S, CS_MAKE))
		xset(CS_MAKE, "make");
	from_env(CS_ENGINE_MK, "__corral_engine_mk");
	from_env(CS_MAKEFLAGS, "MAKEFLAGS");
	from_env(CS_MFLAGS, "MFLAGS");
	from_env(CS_MAKELEVEL, "MAKELEVEL");
	from_env(CS_SILENT, "__corral_silent");
	/* V=1 as well as CORRAL_V=1, as corral.mk read them. */
	if (getenv("__corral_v") && !strcmp(getenv("__corral_v"), "1"))
		xset(CS_V, "1");
	if (!corral_setting_on(&S, CS_JUNIT_SUITE))
		xset(CS_JUNIT_SUITE, corral_path_base(set(CS_SRC)));
	corral_buf_release(&b);
}

/* The files the graph depends on, each rewritten only when it changed. */
static void
write_settings(void)
{
	static const char *const joined[] = { "slice-config", "parts-config",
	    "merge-config" };
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_err err;
	size_t i;

	if (corral_settings_json(&S, &b) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (corral_atomic_file(CORRAL_SETTINGS_FILE, b.data, b.len,
	    CORRAL_ATOMIC_NO_SYNC, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	for (i = 0; i < sizeof(joined) / sizeof(joined[0]); i++) {
		corral_buf_reset(&b);
		if (corral_settings_joined(&S, joined[i], &b) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
		put(joined[i], b.data, b.len);
	}
	/* The slice count: CORRAL_AGENTS, else auto; never make's -j. */
	corral_buf_reset(&b);
	if (corral_buf_addf(&b, "%s\n", set(CS_AGENTS)) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	put("agents", b.data, b.len);
	corral_buf_release(&b);
}

/* A part of CORRAL_PARTS that does not exist stops the run, named once. */
static int
check_parts(void)
{
	struct corral_strv argv = CORRAL_STRV_INIT, words = CORRAL_STRV_INIT;
	size_t i, n;
	int st = 0;

	if (corral_words(set(CS_PARTS), &words) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	xprog(&argv, "corral-parts");
	xadd(&argv, "-k");
	xadd(&argv, "-C");
	xadd(&argv, set(CS_SRC));
	n = argv.n;
	for (i = 0; i < words.n; i++)
		if (strcmp(words.v[i], "auto"))
			xadd(&argv, words.v[i]);
	if (argv.n > n)
		st = spawn(&argv, NULL);
	corral_strv_release(&argv);
	corral_strv_release(&words);
	return st;
}

/* The sandbox works, or the run stops before any unit (exit 2). */
static int
check_sandbox(void)
{
	struct corral_strv argv = CORRAL_STRV_INIT, words = CORRAL_STRV_INIT;
	size_t i;
	int st;

	if (strcmp(set(CS_SANDBOX), "bwrap"))
		return 0;
	xprog(&argv, "corral-run-slice");
	xadd(&argv, "-n");
	xadd(&argv, "-X");
	xadd(&argv, "bwrap");
	if (corral_words(set(CS_SANDBOX_ARGS), &words) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	for (i = 0; i < words.n; i++) {
		xadd(&argv, "-a");
		xadd(&argv, words.v[i]);
	}
	st = spawn(&argv, NULL);
	corral_strv_release(&argv);
	corral_strv_release(&words);
	return st;
}

static volatile sig_atomic_t child_pid, caught;

static void
forward(int sig)
{
	caught = sig;
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

/* The engine's make for goal, in CORRAL_OUT; its status. */
static int
run_make(const char *goal)
{
	struct corral_strv argv = CORRAL_STRV_INIT;
	struct corral_proc p = CORRAL_PROC_INIT;
	struct sigaction sa;
	pid_t pid;
	int e, ws, sigs[] = { SIGHUP, SIGINT, SIGTERM };
	size_t i;

	xadd(&argv, set(CS_MAKE));
	xadd(&argv, "--no-print-directory");
	xadd(&argv, "-f");
	xadd(&argv, set(CS_ENGINE_MK));
	xadd(&argv, goal);
	p.path = argv.v[0];
	p.argv = argv.v;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, NULL);
	if ((e = corral_proc_start(&p, &pid))) {
		errno = e;
		corral_die(CORRAL_EXIT_ERR, "cannot run '%s':", argv.v[0]);
	}
	child_pid = pid;
	while (corral_proc_reap(pid, &ws) < 0)
		if (errno != EINTR)
			corral_die(CORRAL_EXIT_ERR, "wait:");
	child_pid = 0;
	corral_strv_release(&argv);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* The signal caught while the engine's make ran ends this process too. */
static void
reraise(void)
{
	if (!caught)
		return;
	fflush(stdout);
	signal(caught, SIG_DFL);
	raise(caught);
}

static const char *
signame(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" :
	    sig == SIGHUP ? "SIGHUP" : "a signal";
}

/* ", N WHAT" when n is not 0. */
static void
add_count(struct corral_buf *b, size_t n, const char *what)
{
	if (n && corral_buf_addf(b, ", %zu %s", n, what) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
}

/*
 * A run interrupted (Ctrl-C, SIGTERM, SIGHUP): what had finished, in one
 * line, from this run's progress ticks (live/ticks, written since
 * since_ms; older ones are another run's).  Nothing is merged: the result
 * files stay as the last merge wrote them.
 */
static void
interrupted(long long since_ms)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_tally t;
	struct corral_err err;
	struct stat st;
	size_t total;

	if (isatty(2))
		fputs("\r\033[K", stderr);
	if (stat("live/ticks", &st) < 0 || (long long)st.st_mtim.tv_sec *
	    1000 + st.st_mtim.tv_nsec / 1000000 < since_ms ||
	    corral_live_tally("live", &t, &err) < 0 || !t.done) {
		corral_warn("interrupted (%s) before any unit finished; the "
		    "results are as the last run left them", signame(caught));
		return;
	}
	total = corral_tally_total(&t);
	if (corral_buf_addf(&b, "%zu passed, %zu failed", t.pass, t.fail) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	add_count(&b, t.timeout, "timed out");
	add_count(&b, t.flaky, "flaky");
	add_count(&b, t.skip, "skipped");
	corral_warn("interrupted (%s): %zu of %zu units finished (%s), %zu "
	    "not run; nothing merged: the results are as the last run left "
	    "them", signame(caught), t.done, total, b.data,
	    total > t.done ? total - t.done : 0);
	corral_buf_release(&b);
}

static const char *
wait_setting(void)
{
	return corral_setting_on(&S, CS_WAIT) ? set(CS_WAIT) : NULL;
}

/*
 * corral-clean: CORRAL_OUT removed only when corral made it (the lock
 * refuses one without the mark), renamed away first, under the lock, so
 * that a run waiting for the lock finds either the whole old CORRAL_OUT
 * or none.
 */
static int
clean(void)
{
	struct corral_buf away = CORRAL_BUF_INIT;
	struct corral_lock l;

	if (!exists(set(CS_OUT)))
		return CORRAL_EXIT_OK;
	corral_lock_init(&l);
	xlock(&l, set(CS_OUT), CORRAL_LOCK_CREATE, wait_setting(),
	    "CORRAL_OUT");
	if (corral_buf_addf(&away, "%s.clean.%ld", set(CS_OUT),
	    (long)getpid()) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (rename(set(CS_OUT), away.data) < 0)
		corral_die(CORRAL_EXIT_ERR, "cannot rename '%s':",
		    set(CS_OUT));
	remove_tree(away.data);
	corral_lock_release(&l);
	corral_buf_release(&away);
	return CORRAL_EXIT_OK;
}

/*
 * corral-list ("list") and make -q corral-run ("question"): the graph
 * brought up to date, as a run would, in a scratch copy of CORRAL_OUT
 * under TMPDIR, by the engine's make for __corral-list (which runs no
 * slice); then what make would find out of date.  CORRAL_OUT is only
 * read, without the lock.  list prints the units that would run, with
 * why; question exits 0 when neither a slice nor the merge would run.
 */
static int
would(const char *goal)
{
	struct corral_buf dir = CORRAL_BUF_INIT, out = CORRAL_BUF_INIT;
	struct corral_buf last = CORRAL_BUF_INIT;
	struct corral_strv units = CORRAL_STRV_INIT;
	const char *tmp = getenv("TMPDIR");
	struct corral_err err;
	int st, question = !strcmp(goal, "question"), said = tell();
	size_t n;

	if (corral_buf_addf(&dir, "%s/corral-list.XXXXXX", tmp && *tmp ?
	    tmp : "/tmp") < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (!mkdtemp(dir.data))
		corral_die(CORRAL_EXIT_ERR, "cannot make '%s':", dir.data);
	if (corral_engine_scratch(set(CS_OUT), dir.data, &err) < 0) {
		remove_tree(dir.data);
		corral_die_err(CORRAL_EXIT_ERR, &err);
	}
	xset(CS_OUT, dir.data);
	xset(CS_SILENT, "1");
	if (chdir(dir.data) < 0)
		corral_die(CORRAL_EXIT_ERR, "cannot enter '%s':", dir.data);
	if (exists("units") && (corral_read_file("units", &last, &err) < 0 ||
	    corral_atomic_file("last.units", last.data ? last.data : "",
	    last.len, CORRAL_ATOMIC_NO_SYNC, &err) < 0))
		corral_die_err(CORRAL_EXIT_ERR, &err);
	write_settings();
	if ((st = check_parts()) == 0 && (st = run_make("__corral-list")) == 0 &&
	    !caught) {
		n = count_slices("slices");
		if (corral_setting_on(&S, CS_ONLY)) {
			xunits_load("units", '\n', &units, 0);
			if (corral_would_only(&units, set(CS_ONLY), &out) < 0)
				corral_die(CORRAL_EXIT_ERR, "out of memory:");
		} else if (corral_would_run(exists("last.units") ?
		    "last.units" : "", n, make_always(), &out, &err) < 0)
			corral_die_err(CORRAL_EXIT_ERR, &err);
		if (question)
			st = out.len || corral_setting_on(&S, CS_ONLY) ||
			    !corral_merged_stands(n) ? CORRAL_EXIT_NO :
			    CORRAL_EXIT_OK;
		else if (out.len)
			fwrite(out.data, 1, out.len, stdout);
		else if (!corral_setting_on(&S, CS_ONLY) && said)
			corral_warn("nothing would run: every unit is up "
			    "to date and passed");
	} else
		st = CORRAL_EXIT_ERR;
	remove_tree(dir.data);
	reraise();
	corral_buf_release(&dir);
	corral_buf_release(&out);
	corral_buf_release(&last);
	corral_strv_release(&units);
	return st;
}

static int
is_run_goal(const char *goal)
{
	return !strcmp(goal, "__corral-run") || !strcmp(goal,
	    "__corral-only") || !strcmp(goal, "__corral-rerun-failed");
}

static int
cmd_run(const char *goal)
{
	struct corral_lock top, l;
	struct corral_err err;
	char cwd[PATH_MAX];
	long long since_ms = corral_time_epoch_ms();
	int st;

	if (!getcwd(cwd, sizeof(cwd)))
		corral_die(CORRAL_EXIT_ERR, "getcwd:");
	if (corral_settings_from_env(&S, cwd, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (!corral_setting_on(&S, CS_OUT) || !corral_setting_on(&S, CS_SRC))
		corral_die(CORRAL_EXIT_ERR, "CORRAL_SRC or CORRAL_OUT is empty; "
		    "corral.mk runs 'corral-engine run' with them set");
	run_settings();
	if (!strcmp(goal, "clean"))
		return clean();
	if (!strcmp(goal, "list") || !strcmp(goal, "question"))
		return would(goal);
	if (is_run_goal(goal) && check_sandbox() != 0)
		return CORRAL_EXIT_ERR;
	if (corral_setting_on(&S, CS_SHARD_TOP)) {
		corral_lock_init(&top);
		xlock(&top, set(CS_SHARD_TOP), CORRAL_LOCK_CREATE,
		    wait_setting(), "CORRAL_OUT");
		corral_lock_release(&top);
	}
	corral_lock_init(&l);
	xlock(&l, set(CS_OUT), CORRAL_LOCK_CREATE, wait_setting(),
	    "CORRAL_OUT");
	if (chdir(set(CS_OUT)) < 0)
		corral_die(CORRAL_EXIT_ERR, "cannot enter '%s':", set(CS_OUT));
	if (unlink(exit_status) < 0 && errno != ENOENT)
		corral_die(CORRAL_EXIT_ERR, "cannot remove '%s':",
		    exit_status);
	if (corral_engine_clean_stale(&err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	write_settings();
	if (is_run_goal(goal) && check_parts() != 0)
		return CORRAL_EXIT_ERR;
	if (corral_lock_pass(&l, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	st = run_make(goal);
	if (caught && is_run_goal(goal))
		interrupted(since_ms);
	reraise();
	if (st != 0)
		return st;
	return read_status(exit_status, CORRAL_EXIT_OK);
}

/*
 * 'settings': every setting and its default, one a line, tab between:
 * the CORRAL_* knobs, then what the run decides (lower case).
 */
/* Every setting and its default; key: the names of those of the key. */
static int
cmd_settings(int key)
{
	const struct corral_setting *row;
	size_t i;

	for (i = 0; i < CS_COUNT; i++) {
		row = &corral_settings_table[i];
		if (!key)
			printf("%s\t%s\n", row->name, row->dflt);
		else if (row->key)
			printf("%s\n", row->name);
	}
	xflush_stdout();
	return CORRAL_EXIT_OK;
}

int
main(int argc, char *argv[])
{
	const char *cmd;
	int st;

	corral_setprogname("corral");
	corral_usage_check(&use, argc, argv);
	if (argc < 2 || !strcmp(argv[1], "-h"))
		corral_usage(&use, argc < 2 ? CORRAL_EXIT_ERR : CORRAL_EXIT_OK);
	cmd = argv[1];
	corral_settings_init(&S);
	if (!strcmp(cmd, "run") && argc == 3)
		st = cmd_run(argv[2]);
	else if (!strcmp(cmd, "settings") && (argc == 2 || (argc == 3 &&
	    !strcmp(argv[2], "-k"))))
		st = cmd_settings(argc == 3);
	else {
		load();
		if (!strcmp(cmd, "units") && argc == 2)
			st = step_units();
		else if (!strcmp(cmd, "plan") && argc == 2)
			st = step_plan();
		else if (!strcmp(cmd, "parts") && argc == 2)
			st = step_parts();
		else if (!strcmp(cmd, "inputs") && (argc == 2 || (argc == 3 &&
		    !strcmp(argv[2], "-c"))))
			st = step_inputs(argc == 3);
		else if (!strcmp(cmd, "live") && argc == 3)
			st = step_live(argv[2]);
		else if (!strcmp(cmd, "slice") && argc == 3)
			st = step_slice(argv[2]);
		else if (!strcmp(cmd, "merge") && argc == 3 &&
		    !strcmp(argv[2], "-w"))
			st = step_merge_run();
		else if (!strcmp(cmd, "merge") && argc == 2)
			st = step_merge();
		else if (!strcmp(cmd, "answer") && argc == 2)
			st = step_answer();
		else if (!strcmp(cmd, "layer") && argc == 3)
			st = step_layer(argv[2]);
		else if (!strcmp(cmd, "merge-shards") && argc == 2)
			st = step_merge_shards();
		else
			corral_usage(&use, CORRAL_EXIT_ERR);
	}
	corral_settings_release(&S);
	xflush_stdout();
	return st;
}
