/* See LICENSE file for copyright and license details. */
/*
 * corral-run-slice runs one agent.  It checks out a private clone of the
 * parts its units need, runs every unit of SLICE there with /bin/sh -c
 * CMD (-s: another shell), and leaves one record per attempt in
 * LOGDIR/agent-AGENT.jsonl, a
 * sealed log that appears only when the whole slice ran (until then the
 * records grow in a file no unit can reach, and in the checkpoint
 * agent-AGENT.jsonl.part, from which a later agent of the slice resumes).  A failing unit is a result: the exit
 * status is 0 when every unit passed, 1 when the slice ran and some unit
 * failed, and 2 only when it could not be run or logged.  Units can be
 * timed out, limited and retried; the clone is removed at the end, unless
 * kept.  On SIGHUP, SIGINT or SIGTERM the running unit gets the signal,
 * the clone is removed, the .part stays, and the agent dies of the same
 * signal.  With -G PID the end of process PID (the run's make) counts as
 * a SIGTERM.  With -D STAMP, STAMP is removed first and made again only
 * when every unit passed: the make target that says the slice is done.
 * With -q it only answers from the stores: each slice, of the AGENT
 * SLICE pairs given, whose every unit they answer is written as it
 * would have been, log and stamp, with no clone; the others are left
 * for an agent of their own; the ones answered are printed, a line each.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

/* What the options say beyond struct corral_run. */
struct opts {
	struct corral_strv parts, exclude, files;
	struct corral_strv patterns;	/* -I */
	struct corral_strv keep_env;	/* -E, its words */
	int keep_given;			/* -E was given */
	const char *estimates, *stamp;
	const char *history;	/* -A */
	const char *work;	/* -j, as given */
	char *workroot;		/* -j, expanded, and the run's */
	unsigned char no_retry[256];
	unsigned char skip[256];
	unsigned char hard[256];
	regex_t note_pattern;
	int sep;
	int sandbox;		/* -X bwrap */
	int check;		/* -n: check the sandbox, run nothing */
	int quiet_missing;	/* -M */
	int answer;		/* -q */
	struct corral_run_cache cache;	/* -O, -u, -J, -j, -V, -b, -Y */
	int cache_on;
	struct corral_learned learned;	/* -A: every unit's, for the keys */
	int have_learned;
};

static const struct corral_usage use = {
	"corral-run-slice [-0bFhkMQUvW] [-A HISTORY] [-a ARG] [-B CODES] [-C SRC] [-D STAMP] [-d "
	"DEADLINE] [-E NAMES] [-e ESTIMATES] [-f PATTERN] [-G PID] [-g GRACE] [-H COUNT] [-I PATTERN] [-i INPUTS] [-J JUNIT] [-j WORK] [-K CODES] [-L "
	"LIMIT] [-m HOST] [-N CODES] [-O STORE] [-o MAX] [-p PART] [-P PARTSFILE] [-R "
	"RETRIES] [-r RUN] [-S STATEDIR] [-s SHELL] [-T SECS] [-t SECS] [-u STORE] [-V PERCENT] [-w "
	"WORKROOT] [-X SANDBOX] [-x EXCLUDE] [-Y SETTINGS] [-y NAMES] [-Z MEMO] [-z CMD] -c CMD -l LOGDIR AGENT SLICE\n"
	"corral-run-slice -q [options but -D, -e, -P] -c CMD -l LOGDIR AGENT SLICE [AGENT SLICE]...\n"
	"corral-run-slice -n -X SANDBOX [-a ARG]",
	"-0\tSLICE is NUL-separated\n"
	"-A HISTORY\tlearn what units read: those HISTORY knows nothing of\n"
	"-a ARG\tan argument added to the sandbox's options (repeatable)\n"
	"-B CODES\texit codes that mean a hard error, comma-separated\n"
	"-b\ttake no cached result (make -B), store them all the same\n"
	"-C SRC\tthe tree to check out from\n"
	"-c CMD\tthe command run for every unit (required)\n"
	"-D STAMP\tmade when every unit passed, removed until then\n"
	"-d DEADLINE\tthe run ends by then, in seconds since the Epoch\n"
	"-E NAMES\tof the CORRAL_* variables, units get only NAMES\n"
	"-e ESTIMATES\tthe expected milliseconds of each unit\n"
	"-F\tthe exit status alone decides: TAP a unit prints cannot fail it\n"
	"-f PATTERN\ta failure's note quotes the first line matching PATTERN\n"
	"-G PID\tstop when process PID is gone\n"
	"-g GRACE\tseconds between SIGTERM and SIGKILL\n"
	"-H COUNT\tstart no unit once COUNT units of the run failed\n"
	"-I PATTERN\twhat matches PATTERN is never cloned, as .gitignore reads it (repeatable)\n"
	"-i INPUTS\ta digest recorded as inputs\n"
	"-J JUNIT\tthe JUnit XML each unit writes, in its clone: its tests\n"
	"-j WORK\tthe clone under WORK/RUN, $NAME expanded here; other runs' go\n"
	"-K CODES\texit codes that mean skip, comma-separated\n"
	"-k\tkeep the clone and print its path\n"
	"-L LIMIT\ta limit on each process of a unit\n"
	"-l LOGDIR\twhere the log and outputs go (required)\n"
	"-M\tparts that do not exist are not named (the caller names them)\n"
	"-m HOST\tthe host named in every record (default: the Slurm node, else this host)\n"
	"-N CODES\texit codes never retried, comma-separated\n"
	"-n\tonly check that the sandbox works: exit 0, or 2 saying why\n"
	"-O STORE\tthe local result cache: a unit whose key it holds does not run\n"
	"-o MAX\tkeep at most MAX bytes of a unit's output\n"
	"-P PARTSFILE\ta file of paths to check out (repeatable)\n"
	"-p PART\ta path to check out (repeatable)\n"
	"-q\tanswer from the stores only: a slice S.units whose every unit they\n"
	"\tanswer is written (S.parts cloned, S.est its estimates, S.pass its\n"
	"\tstamp), and printed; the others are left for their agents\n"
	"-Q\teach unit's own TMPDIR is its /tmp too (a mount namespace)\n"
	"-R RETRIES\ttry a failed unit again up to RETRIES times\n"
	"-r RUN\tthe run id\n"
	"-S STATEDIR\tkeep live state there for corral-status\n"
	"-s SHELL\tthe shell that runs CMD (default /bin/sh)\n"
	"-T SECS\tthe whole slice may take SECS\n"
	"-t SECS\teach attempt of a unit may take SECS\n"
	"-U\tunits share the caller's TMPDIR (not one of their own each)\n"
	"-u STORE\ta shared result cache (CORRAL_CACHE), after the local one\n"
	"-V PERCENT\tof the cached results, run this percent again to verify them\n"
	"-v\ta progress line as each unit finishes\n"
	"-W\ta unit that fails is tried again in the whole tree\n"
	"-w WORKROOT\twhere the clone goes\n"
	"-X SANDBOX\tnone, or bwrap: each unit inside bubblewrap\n"
	"-x EXCLUDE\ta path under SRC left out (repeatable)\n"
	"-Y SETTINGS\tlines 'NAME value': the settings that join each unit's key\n"
	"-y NAMES\tthe environment variables that join each unit's key\n"
	"-Z MEMO\tthe memo of content digests by stat the keys read (not written)\n"
	"-z CMD\ta command whose output joins each unit's key",
	NULL
};

static void
xadd(struct corral_strv *sv, const char *s)
{
	if (corral_strv_add(sv, s) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
}

/*
 * The expected milliseconds of each unit, one number a line, in the
 * order of SLICE; NULL (with a warning) when they do not fit it.
 */
static long long *
read_estimates(const char *file, size_t nunits)
{
	struct corral_err err;
	long long *ms = xcalloc(nunits + 1, sizeof(*ms));
	char *line = NULL;
	size_t cap = 0, i = 0;
	ssize_t len;
	FILE *fp;
	int ok = 1;

	if (!(fp = corral_fopen_input(file, &err)))
		corral_die_err(CORRAL_EXIT_ERR, &err);
	while (ok && (len = getline(&line, &cap, fp)) != -1) {
		corral_line_chomp(line, (size_t)len);
		ok = i < nunits && corral_strtonum(line, 0, LLONG_MAX, &ms[i++],
		    "estimate", &err) == 0;
	}
	if (!ok || i != nunits || ferror(fp)) {
		corral_warn("'%s' does not give one estimate per unit; "
		    "ignored", file);
		free(ms);
		ms = NULL;
	}
	free(line);
	fclose(fp);
	return ms;
}

/* The units of the slice that history (l) has learned nothing of. */
static void
unlearned(const struct corral_learned *l, const struct corral_strv *units,
    struct corral_strv *learn)
{
	size_t i;

	for (i = 0; i < units->n; i++)
		if (!corral_learned_of(l, units->v[i]))
			xadd(learn, units->v[i]);
}

/* The value of option opt, by corral_seconds_parse or corral_size_parse. */
static long long
value(int opt, const char *arg, int (*parse)(const char *, long long *,
    const char *, struct corral_err *))
{
	struct corral_err err;
	char what[3] = { '-', (char)opt, '\0' };
	long long v;

	if (parse(arg, &v, what, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	return v;
}

static long long
number(const char *arg, long long max, const char *what)
{
	struct corral_err err;
	long long v;

	if (corral_strtonum(arg, 0, max, &v, what, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	return v;
}

static void
parse_limit(struct corral_limits *l, const char *arg)
{
	struct corral_err err;

	if (corral_limit_parse(l, arg, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
}

static void
parse_codes(unsigned char *codes, const char *arg, const char *what)
{
	struct corral_err err;

	if (corral_codes_parse(codes, arg, what, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
}

static void
parse_sandbox(int *on, const char *arg)
{
	struct corral_err err;

	if (corral_sandbox_parse(arg, on, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
}

/* -n: whether the sandbox works, said in one line when it does not. */
static int
check_sandbox(const struct corral_sandbox *sb, int on)
{
	struct corral_err err;

	if (!on)
		corral_usage(&use, CORRAL_EXIT_ERR);
	if (corral_sandbox_probe(sb, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	return CORRAL_EXIT_OK;
}

/* Die of sig, as the caller expects of an interrupted program. */
static void
die_of(int sig)
{
	sigset_t set;

	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	exit(128 + sig);
}

/* An empty file at path, made now: its mtime says when the slice ended. */
static void
make_stamp(const char *path)
{
	struct corral_err err;
	int fd = corral_open_state(path, O_WRONLY | O_CREAT | O_TRUNC, 0666,
	    &err);

	if (fd < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (close(fd) < 0)
		corral_die(CORRAL_EXIT_ERR, "cannot write '%s':", path);
}

/* run_slice's status for a slice -q left unanswered. */
#define UNANSWERED	3

static int
run_slice(struct corral_run *r, const struct corral_strv *units,
    int quiet_missing)
{
	struct corral_strv missing = CORRAL_STRV_INIT;
	struct corral_err err;
	int status = CORRAL_EXIT_ERR, rc;
	size_t i;

	if (corral_run_signals(&err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	rc = corral_run_start(r, &missing, &err);
	/* what a slice left unanswered says, its own agent will */
	for (i = 0; !quiet_missing && !r->answer_only && i < missing.n; i++)
		corral_warn("part '%s' not found in '%s'", missing.v[i],
		    r->src);
	for (i = 0; rc == 0 && !r->answer_only && i < r->refused.n; i++)
		corral_warn("unit '%s' not run: %s", r->refused.v[i],
		    r->refusal.v[i]);
	if (rc == 0)
		rc = corral_run_units(r, units, &err);
	if (r->resume_note && !r->answer_only)
		corral_warn("%s", r->resume_note);
	if (rc == 0 && r->unanswered)
		status = UNANSWERED;	/* nothing of it was written */
	else if (rc == 0 && corral_run_commit(r, &err) == 0)
		status = r->failed ? CORRAL_EXIT_NO : CORRAL_EXIT_OK;
	else if (!corral_run_caught())
		corral_warn_err(&err);
	if (r->guard_gone)
		corral_warn("process %ld, which the run hangs on, is gone; "
		    "stopped", (long)r->guard);
	if (r->keep && r->clone)
		corral_warn("keeping the clone '%s'", r->clone);
	if (corral_run_release(r, &err) < 0)
		corral_warn_err(&err);
	corral_strv_release(&missing);
	if (corral_run_caught())
		die_of(corral_run_caught());
	return status;
}

/* A progress line, with one write(2): agents sharing stderr never mix. */
static void
print_progress(void *arg, const char *line, size_t len)
{
	(void)arg;
	(void)!write(2, line, len);
}

static const char *
env_or(const char *name, const char *fallback)
{
	const char *v = getenv(name);

	return v && *v ? v : fallback;
}

/* Whether the engine started this agent under CORRAL_LAUNCH. */
static int
launched(void)
{
	const char *v = getenv("__corral_launched");

	return v && !strcmp(v, "1");
}

/*
 * Whether a launcher started this agent on another node than the make's
 * (__corral_guard_node): the guard's pid means nothing here then.
 */
static int
elsewhere(void)
{
	const char *node = getenv("__corral_guard_node");
	char here[HOST_NAME_MAX + 1];

	if (!launched() || !node || !*node ||
	    gethostname(here, sizeof(here) - 1) < 0)
		return 0;
	here[sizeof(here) - 1] = '\0';
	return strcmp(node, here) != 0;
}

/*
 * The host a record names when -m gives none: inside a Slurm step the
 * node (SLURMD_NODENAME), since nodes may share a host name; else this
 * host's name; NULL when it has none.
 */
static const char *
default_host(char *buf, size_t size)
{
	const char *node = getenv("SLURMD_NODENAME");

	if (node && *node)
		return node;
	if (gethostname(buf, size - 1) < 0)
		return NULL;
	buf[size - 1] = '\0';
	return buf;
}

/*
 * -j WORK: the run's directory of clones in WORK, expanded here (on the
 * node the launcher chose), into *root; what earlier runs of the same
 * CORRAL_OUT left in WORK goes first (a failure to remove it is said,
 * and the slice runs).
 */
static const char *
node_work(const char *work, const char *run, char **root)
{
	struct corral_err err;
	char name[64], *dir;

	if (corral_work_expand(work, &dir, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	/* Everything else in it goes: never a directory of the user's. */
	if (strncmp(corral_path_base(dir), "corral-", 7))
		corral_die(CORRAL_EXIT_ERR, "work directory '%s' is '%s' here; "
		    "its name must start with 'corral-' (every other run's "
		    "entry in it is removed)", work, dir);
	corral_work_run_name(run, name, sizeof(name));
	if (corral_work_sweep(dir, name, &err) < 0)
		corral_warn_err(&err);
	if (!(*root = corral_path_join(dir, name)))
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	free(dir);
	return *root;
}

/* -E NAMES: the words of NAMES, split at white space. */
static void
keep_names(struct opts *o, const char *names)
{
	size_t n;

	o->keep_given = 1;
	for (; *names; names += n) {
		names += strspn(names, " \t\n");
		if ((n = strcspn(names, " \t\n")) &&
		    corral_strv_addn(&o->keep_env, names, n) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
	}
}

static char *cache_warned;

/* The result cache: the key's shared parts and the stores. */
static void
cache_setup(struct corral_run *r, struct opts *o)
{
	struct corral_run_cache *c = &o->cache;

	c->key.shell = r->shell;
	c->key.cmd = r->cmd;
	c->learned = o->have_learned ? &o->learned : NULL;
	c->warn = print_progress;
	if (r->statedir && !(cache_warned = corral_path_join(r->statedir,
	    "cache-warned")))
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	c->warned = cache_warned;
	r->cache = c;
}

static void
parse_options(int argc, char *argv[], struct corral_run *r, struct opts *o)
{
	struct corral_err err;
	int c;

	while ((c = getopt(argc, argv,
	    "0A:a:B:bC:c:D:d:E:e:Ff:G:g:H:hI:i:J:j:K:kL:l:m:MN:nO:o:p:P:QqR:r:S:s:T:t:Uu:V:vWw:X:x:Y:y:Z:z:")) != -1) {
		switch (c) {
		case '0': o->sep = '\0'; break;
		case 'A': o->history = optarg; break;
		case 'a': xadd(&r->sandbox->args, optarg); break;
		case 'C': r->src = optarg; break;
		case 'c': r->cmd = optarg; break;
		case 'D': o->stamp = optarg; break;
		case 'd': r->deadline_ms = value(c, optarg, corral_seconds_parse); break;
		case 'E': keep_names(o, optarg); break;
		case 'e': o->estimates = optarg; break;
		case 'G': r->guard = (pid_t)number(optarg, INT_MAX, "-G"); break;
		case 'g': r->grace_ms = value(c, optarg, corral_seconds_parse); break;
		case 'H': r->halt = (size_t)number(optarg, INT_MAX, "-H"); break;
		case 'h': corral_usage(&use, CORRAL_EXIT_OK); break;
		case 'I': xadd(&o->patterns, optarg); break;
		case 'i': r->inputs = *optarg ? optarg : NULL; break;
		case 'J': r->unit_junit = *optarg ? optarg : NULL; break;
		case 'j': o->work = optarg; break;
		case 'K':
			parse_codes(o->skip, optarg, "-K");
			r->skip = o->skip;
			break;
		case 'B':
			parse_codes(o->hard, optarg, "-B");
			r->hard = o->hard;
			break;
		case 'b': o->cache.no_hits = 1; break;
		case 'O': o->cache.store[0].dir = optarg; o->cache_on = 1; break;
		case 'u': o->cache.store[1].dir = *optarg ? optarg : NULL;
			o->cache_on |= *optarg != '\0';
			break;
		case 'V': o->cache.verify = (int)number(optarg, 100, "-V"); break;
		case 'Y': o->cache.key.settings = optarg; break;
		case 'y': o->cache.key.env = optarg; break;
		case 'Z': o->cache.key.digests = *optarg ? optarg : NULL; break;
		case 'z': o->cache.key.key_cmd = optarg; break;
		case 'F': r->exit_only = 1; break;
		case 'U': r->tmp_shared = 1; break;
		case 'Q': r->tmp_private = 1; break;
		case 'q': o->answer = 1; break;
		case 'f':
			if (r->note_pattern)
				corral_usage(&use, CORRAL_EXIT_ERR);
			if (corral_note_pattern_compile(&o->note_pattern,
			    optarg, &err) < 0)
				corral_die_err(CORRAL_EXIT_ERR, &err);
			r->note_pattern = &o->note_pattern;
			break;
		case 'k': r->keep = 1; break;
		case 'L': parse_limit(&r->limits, optarg); break;
		case 'l': r->logdir = optarg; break;
		case 'M': o->quiet_missing = 1; break;
		case 'm': r->host = *optarg ? optarg : NULL; break;
		case 'N': parse_codes(o->no_retry, optarg, "-N"); break;
		case 'n': o->check = 1; break;
		case 'o': r->output_max = value(c, optarg, corral_size_parse); break;
		case 'p': xadd(&o->parts, optarg); break;
		case 'P': xadd(&o->files, optarg); break;
		case 'R': r->retries = (int)number(optarg, 1000, "-R"); break;
		case 'r': r->run = optarg; break;
		case 'S': r->statedir = optarg; break;
		case 's': r->shell = optarg; break;
		case 'T': r->slice_ms = value(c, optarg, corral_seconds_parse); break;
		case 't': r->timeout_ms = value(c, optarg, corral_seconds_parse); break;
		case 'v': r->progress = print_progress; break;
		case 'W': r->whole_check = 1; break;
		case 'w': r->workroot = optarg; break;
		case 'X': parse_sandbox(&o->sandbox, optarg); break;
		case 'x': xadd(&o->exclude, optarg); break;
		default: corral_usage(&use, CORRAL_EXIT_ERR);
		}
	}
}

/* What one slice is: its agent and its files. */
struct slice {
	const char *agent, *units, *estimates, *stamp;
	const char *parts;	/* a file of parts beside -P's, or NULL */
};

/* p with ext for its ".units" (SLICE S.units gives S.ext), malloc'd. */
static char *
beside(const char *p, const char *ext)
{
	size_t n = strlen(p);
	char *s;

	if (n > 6 && !strcmp(p + n - 6, ".units"))
		n -= 6;
	if (!(s = malloc(n + strlen(ext) + 1)))
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	memcpy(s, p, n);
	strcpy(s + n, ext);
	return s;
}

static int
exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/*
 * Whether agent has a checkpoint in logdir: its slice is left to an
 * agent of its own, which resumes it (-q never throws one away).
 */
static int
has_checkpoint(const char *logdir, const char *agent)
{
	char *p;
	int has;

	if (!(p = malloc(strlen(logdir) + strlen(agent) + 20)))
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	sprintf(p, "%s/agent-%s.jsonl.part", logdir, agent);
	has = exists(p);
	free(p);
	return has;
}

/*
 * One slice, by an agent with the settings of tmpl: run_slice's status
 * (UNANSWERED under -q for one the stores did not answer whole).
 */
static int
one_slice(const struct corral_run *tmpl, struct opts *o,
    const struct slice *sl)
{
	struct corral_strv units = CORRAL_STRV_INIT, parts = CORRAL_STRV_INIT;
	struct corral_strv learn = CORRAL_STRV_INIT;
	struct corral_run r = *tmpl;
	struct corral_err err;
	long long *expect = NULL;
	int status;
	size_t i;

	if (corral_agent_check(sl->agent, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (o->answer && (!r.cache || has_checkpoint(r.logdir, sl->agent)))
		return UNANSWERED;
	/* "lib/" is the whole of lib; with -A, corral-plan's "DIR/" lists. */
	for (i = 0; i < o->parts.n; i++)
		xadd(&parts, o->parts.v[i]);
	for (i = 0; i < o->files.n; i++)
		xunits_load(o->files.v[i], '\n', &parts, 0);
	if (sl->parts)
		xunits_load(sl->parts, '\n', &parts, 0);
	for (i = 0; !o->history && i < parts.n; i++)
		corral_path_trim_slashes(parts.v[i]);
	xunits_load(sl->units, o->sep, &units, 1);
	if (sl->estimates)
		expect = read_estimates(sl->estimates, units.n);
	if (o->have_learned)
		unlearned(&o->learned, &units, &learn);
	r.agent = sl->agent;
	r.parts = &parts;
	r.units = &units;
	r.expect = expect;
	r.learn = o->history ? &learn : NULL;
	if (sl->stamp && unlink(sl->stamp) < 0 && errno != ENOENT)
		corral_die(CORRAL_EXIT_ERR, "cannot remove '%s':", sl->stamp);
	status = run_slice(&r, &units, o->quiet_missing);
	/* -q's stamps wait for the logs' directory to be synced */
	if (sl->stamp && status == CORRAL_EXIT_OK && !o->answer)
		make_stamp(sl->stamp);
	free(expect);
	corral_strv_release(&units);
	corral_strv_release(&parts);
	corral_strv_release(&learn);
	return status;
}

/*
 * -q: each AGENT SLICE pair of argv answered from the stores, or left;
 * the logs are synced at once (syncfs), and then the answered slices get
 * their stamps and are printed.  Each slice's status is said by its log,
 * as an agent's is: 0, or 2 when one could not be written.
 */
static int
answer_slices(const struct corral_run *tmpl, struct opts *o, int argc,
    char *argv[])
{
	struct corral_strv stamps = CORRAL_STRV_INIT, done = CORRAL_STRV_INIT;
	struct corral_err err;
	struct slice sl;
	char *parts, *est, *stamp;
	int i, st, status = CORRAL_EXIT_OK;
	size_t j;

	for (i = 0; i + 1 < argc; i += 2) {
		parts = beside(argv[i + 1], ".parts");
		est = beside(argv[i + 1], ".est");
		stamp = beside(argv[i + 1], ".pass");
		sl = (struct slice){ argv[i], argv[i + 1],
		    exists(est) ? est : NULL, stamp,
		    exists(parts) ? parts : NULL };
		st = one_slice(tmpl, o, &sl);
		if (st == CORRAL_EXIT_OK) {
			xadd(&stamps, stamp);
			xadd(&done, argv[i + 1]);
		} else if (st != UNANSWERED && st != CORRAL_EXIT_NO)
			status = CORRAL_EXIT_ERR;
		free(parts);
		free(est);
		free(stamp);
	}
	if (done.n && corral_sync_fs(tmpl->logdir, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	for (j = 0; j < done.n; j++) {
		make_stamp(stamps.v[j]);
		printf("%s\n", done.v[j]);
	}
	if (fflush(stdout) == EOF || ferror(stdout))
		corral_die(CORRAL_EXIT_ERR, "cannot write the slices answered:");
	corral_strv_release(&stamps);
	corral_strv_release(&done);
	return status;
}

int
main(int argc, char *argv[])
{
	struct opts o;
	struct corral_err err;
	struct corral_run r;
	struct corral_sandbox sandbox;
	struct corral_lock lock;
	struct slice sl;
	const char *keep;
	char runid[32], host[HOST_NAME_MAX + 1] = "";
	int status, n;
	size_t i;

	corral_setprogname(argv[0]);
	corral_usage_check(&use, argc, argv);
	corral_run_init(&r);
	corral_sandbox_init(&sandbox);
	r.sandbox = &sandbox;
	memset(&o, 0, sizeof(o));
	o.sep = '\n';
	r.src = ".";
	r.grace_ms = 5000;
	parse_options(argc, argv, &r, &o);
	if (o.check)
		return check_sandbox(&sandbox, o.sandbox);
	/* a unit that runs needs the sandbox; -q runs none */
	if (!o.sandbox || o.answer)
		r.sandbox = NULL;
	n = argc - optind;
	if (!r.cmd || !r.logdir || (o.answer ? n < 2 || n % 2 || o.files.n ||
	    o.stamp || o.estimates : n != 2))
		corral_usage(&use, CORRAL_EXIT_ERR);
	for (i = 0; i < o.parts.n; i++)
		corral_path_trim_slashes(o.parts.v[i]);
	if (o.history) {
		if (corral_learned_read(&o.learned, o.history, &err) < 0)
			corral_die_err(CORRAL_EXIT_ERR, &err);
		o.have_learned = 1;
	}
	corral_run_id(runid);
	keep = getenv("CORRAL_KEEP");

	r.run = r.run ? r.run : env_or("CORRAL_RUN", runid);
	if (!r.host)
		r.host = default_host(host, sizeof(host));
	r.exclude = &o.exclude;
	r.patterns = &o.patterns;
	if (o.work && r.workroot)
		corral_usage(&use, CORRAL_EXIT_ERR);
	r.workroot = o.work ? node_work(o.work, r.run, &o.workroot) :
	    r.workroot ? r.workroot : env_or("TMPDIR", "/tmp");
	/* -q makes no clone, and so keeps none */
	r.keep |= !o.answer && keep && !strcmp(keep, "1");
	r.answer_only = o.answer;
	r.no_retry = o.no_retry;
	r.keep_env = o.keep_given ? &o.keep_env : NULL;
	r.progress_tty = r.progress && isatty(2);
	if (o.cache_on)
		cache_setup(&r, &o);
	/*
	 * -q says nothing and shows nothing: a slice it answers shows in its
	 * results, and what one it leaves has to say (an entry not trusted,
	 * a store that cannot be used), that slice's agent says.
	 */
	if (o.answer) {
		r.progress = NULL;
		r.statedir = NULL;
		o.cache.warn = NULL;
	}
	/*
	 * An agent writing into a CORRAL_OUT holds its lock for as long as
	 * it lives (agents started by hand share it), and no unit gets it.
	 * Under CORRAL_LAUNCH (srun) the lock's descriptor does not travel
	 * with the agent: the run that started the launcher holds the lock
	 * for it, and the guard (-G) stops it when that run is gone -- on
	 * the make's node; on another, the launcher stops it.
	 */
	if (elsewhere())
		r.guard = 0;
	corral_lock_init(&lock);
	if (!launched())
		xlock_under(&lock, r.logdir, CORRAL_LOCK_SHARED);
	corral_lock_keep(&lock);
	if (o.answer)
		status = answer_slices(&r, &o, n, argv + optind);
	else {
		sl = (struct slice){ argv[optind], argv[optind + 1],
		    o.estimates, o.stamp, NULL };
		status = one_slice(&r, &o, &sl);
	}
	corral_lock_release(&lock);

	if (o.cache_on)
		corral_cached_release(&o.cache);
	corral_strv_release(&o.parts);
	corral_strv_release(&o.exclude);
	corral_strv_release(&o.patterns);
	corral_strv_release(&o.files);
	if (o.have_learned)
		corral_learned_release(&o.learned);
	free(cache_warned);
	corral_strv_release(&o.keep_env);
	free(o.workroot);
	corral_sandbox_release(&sandbox);
	return status;
}
