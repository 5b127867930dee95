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
 */
#define _DEFAULT_SOURCE	/* flock(2) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "record/record.h"
#include "merge/merge.h"

#define NONE UINT32_MAX
#define IN_CHUNK (256 * 1024)
#define OUT_CHUNK (256 * 1024)
#define COMMIT_NAME ".merge.commit"	/* see rename_all */

/* One agent's finished log. */
struct agent {
	char *id;
	char *path;
	uint32_t layer;	/* index in logdirs */
	size_t first;	/* its records are recs[first .. first + n) */
	size_t n;
	int redo;	/* a line replaced an earlier one: copy again */
	int refused;	/* its seal does not hold: none of it is merged */
	int checked;	/* st is what the seal check read */
	struct stat st;
};

/*
 * One record line: where it is and what the merge needs to know of it.
 * 32 bytes; with the unit's slot in the set, this is the memory per unit.
 */
struct rec {
	size_t line;		/* line number in its log (from 1) */
	uint32_t agent;		/* index in agents; NONE: a not-run record */
	uint32_t dup_agent;	/* last agent reported as a duplicate */
	uint32_t status;	/* index in statuses */
	uint32_t run;		/* index in runs */
	unsigned char ok;
	unsigned char dropped;	/* a later line of the same log replaced it */
	unsigned char has_run;	/* the record named its run */
	unsigned char flaky;	/* written as a flaky record */
};

/*
 * With several layers: the attempt of a unit that wins, found by a first
 * read of every log before anything is written.
 */
struct win {
	size_t line;
	uint32_t agent;
	long inputs;		/* index in inputs, or -1 */
	long long at;		/* ms since the epoch, or -1 */
	unsigned char ok;
	unsigned char flaky;	/* the merge writes it as a flaky record */
	unsigned char self;	/* its agent recorded it as flaky already */
};

/* A result file being written: a buffered temporary, renamed on commit. */
struct out {
	struct corral_atomic a;
	struct corral_buf b;
	off_t size;	/* bytes added so far */
	int open;
};

/* A log being read one line at a time. */
struct reader {
	FILE *fp;
	const char *path;
	char *line;
	size_t cap;
	size_t len;
	size_t raw;	/* bytes read, '\n' and '\r' included */
	size_t lineno;
	int torn;	/* the line had no '\n' */
	struct stat st;
	char *vbuf;	/* stdio's buffer: bigger than its 4 KiB */
};

struct merge {
	const struct corral_merge_opts *o;
	struct corral_merge_stats *st;
	corral_merge_report_fn *report;
	void *arg;
	char *logdir;			/* logdirs[0], for the default outdir */
	char **logdirs;
	DIR **dirs;			/* opened before the lock */
	size_t nlayers;
	char *outdir;
	struct agent *agents;
	size_t nagents;
	struct corral_strv parts;	/* "LAYER/ID" with a .part */
	struct corral_strv why;		/* not-run notes, for -2 - k in units */
	struct corral_strv expected;
	struct win *wins;		/* NULL with one layer */
	size_t nwins;
	struct corral_set *win_ix;	/* unit -> index in wins */
	struct corral_set *inputs_ix;
	struct corral_strv inputs;
	struct corral_buf flaky;	/* a flaky record being written */
	struct corral_set *units;	/* unit -> rec, or < 0 (see not_run) */
	struct rec *recs;
	size_t nrecs;
	size_t caprecs;
	long status_last, run_last, inputs_last;	/* intern's memos */
	struct corral_set *status_ix;
	struct corral_strv statuses;
	struct corral_set *run_ix;
	struct corral_strv runs;
	struct corral_buf at;		/* the latest "at" seen */
	time_t units_mtime;
	struct out succ, fail, sum;
	int lockfd;
};

/* ------------------------------------------------------------------ */
/* messages                                                            */

static void
vsay(struct merge *m, const char *fmt, va_list ap)
{
	va_list aq;
	char *msg;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0 || !(msg = malloc((size_t)n + 1)))
		return;
	vsnprintf(msg, (size_t)n + 1, fmt, ap);
	if (m->report)
		m->report(m->arg, msg);
	free(msg);
}

/* A warning: said, and the merge goes on as if nothing happened. */
static void
say(struct merge *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(m, fmt, ap);
	va_end(ap);
}

/* Bad input: said, and nothing will be written. */
static void
bad(struct merge *m, const char *fmt, ...)
{
	va_list ap;

	m->st->bad++;
	va_start(ap, fmt);
	vsay(m, fmt, ap);
	va_end(ap);
}

static int
nomem(struct corral_err *err)
{
	return corral_err_set(err, ENOMEM, "out of memory");
}

/* ------------------------------------------------------------------ */
/* paths and agent order                                               */

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
	const char *slash = strrchr(dir, '/');
	const char *base = slash ? slash + 1 : dir;
	struct corral_buf b = CORRAL_BUF_INIT;

	if (!strcmp(base, ".") || !strcmp(base, "..") || !strcmp(dir, "/"))
		corral_buf_addf(&b, "%s%s..", dir,
		    dir[strlen(dir) - 1] == '/' ? "" : "/");
	else if (!slash)
		corral_buf_addstr(&b, ".");
	else if (slash == dir)
		corral_buf_addstr(&b, "/");
	else
		corral_buf_add(&b, dir, (size_t)(slash - dir));
	return b.data;
}

/* dir/name, or just name when dir is ".", malloc'd. */
static char *
join(const char *dir, const char *name)
{
	struct corral_buf b = CORRAL_BUF_INIT;

	if (!strcmp(dir, "."))
		return strdup(name);
	if (corral_buf_addf(&b, "%s%s%s", dir,
	    dir[strlen(dir) - 1] == '/' ? "" : "/", name) < 0) {
		corral_buf_release(&b);
		return NULL;
	}
	return b.data;
}

static int
is_decimal(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* Agent order: decimal IDs first and numerically, then the rest bytewise. */
static int
id_cmp(const char *a, const char *b)
{
	int da = is_decimal(a), db = is_decimal(b);
	size_t la, lb;

	if (da != db)
		return da ? -1 : 1;
	if (!da)
		return strcmp(a, b);
	while (a[0] == '0' && a[1])
		a++;
	while (b[0] == '0' && b[1])
		b++;
	la = strlen(a);
	lb = strlen(b);
	if (la != lb)
		return la < lb ? -1 : 1;
	return strcmp(a, b);
}

/* Agent order: by layer, then by ID. */
static int
agent_cmp(const void *x, const void *y)
{
	const struct agent *a = x, *b = y;
	int c;

	if (a->layer != b->layer)
		return a->layer < b->layer ? -1 : 1;
	c = id_cmp(a->id, b->id);
	/* "01" and "1" are the same number; keep them apart, stably. */
	return c ? c : strcmp(a->id, b->id);
}

static int
str_cmp(const void *x, const void *y)
{
	const char *const *a = x, *const *b = y;
	int c = id_cmp(*a, *b);

	return c ? c : strcmp(*a, *b);
}

/* For qsort of strings, bytewise: statuses and runs. */
static int
bytes_cmp(const void *x, const void *y)
{
	const char *const *a = x, *const *b = y;

	return strcmp(*a, *b);
}

/*
 * The ID in "agent-ID.jsonl" (suffix ".jsonl") or "agent-ID.jsonl.part"
 * (suffix ".jsonl.part"), as a malloc'd string, or NULL (errno 0) when
 * name is not of that form.
 */
static char *
agent_id(const char *name, const char *suffix)
{
	size_t n = strlen(name), ns = strlen(suffix);
	char *id;

	errno = 0;
	if (strncmp(name, "agent-", 6) || n < 6 + ns ||
	    strcmp(name + n - ns, suffix))
		return NULL;
	if (!(id = malloc(n - 6 - ns + 1)))
		return NULL;
	memcpy(id, name + 6, n - 6 - ns);
	id[n - 6 - ns] = '\0';
	return id;
}

static int
add_agent(struct merge *m, uint32_t layer, char *id, const char *name)
{
	struct agent *v;

	if (m->nagents % 16 == 0) {
		v = realloc(m->agents, (m->nagents + 16) * sizeof(*v));
		if (!v)
			return -1;
		m->agents = v;
	}
	v = &m->agents[m->nagents];
	memset(v, 0, sizeof(*v));
	v->id = id;
	v->layer = layer;
	if (!(v->path = join(m->logdirs[layer], name)))
		return -1;
	m->nagents++;
	return 0;
}

/* Sort one directory entry into agents, parts ("LAYER/ID"), or nothing. */
static int
list_entry(struct merge *m, uint32_t layer, const char *name)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	char *id;
	int rc;

	if ((id = agent_id(name, ".jsonl")))
		return add_agent(m, layer, id, name) < 0 ? (free(id), -1) : 0;
	if (errno)
		return -1;
	if ((id = agent_id(name, ".jsonl.part"))) {
		rc = corral_buf_addf(&b, "%u/%s", (unsigned)layer, id);
		if (rc == 0)
			rc = corral_strv_add(&m->parts, b.data);
		corral_buf_release(&b);
		free(id);
		return rc;
	}
	return errno ? -1 : 0;
}

static int
list_logs(struct merge *m, struct corral_err *err)
{
	struct dirent *de;
	size_t l;

	for (l = 0; l < m->nlayers; l++) {
		for (errno = 0; (de = readdir(m->dirs[l])); errno = 0)
			if (list_entry(m, (uint32_t)l, de->d_name) < 0)
				return nomem(err);
		if (errno)
			return corral_err_set(err, errno, "cannot read '%s'",
			    m->logdirs[l]);
	}
	if (m->nagents)
		qsort(m->agents, m->nagents, sizeof(*m->agents), agent_cmp);
	if (m->parts.n)
		qsort(m->parts.v, m->parts.n, sizeof(*m->parts.v), str_cmp);
	return 0;
}

/* ------------------------------------------------------------------ */
/* reading lines                                                       */

static void reader_close(struct reader *rd);

static int
reader_open(struct reader *rd, const char *path, struct corral_err *err)
{
	memset(rd, 0, sizeof(*rd));
	rd->path = path;
	if (!(rd->fp = corral_fopen_input(path, err)))
		return -1;
	if ((rd->vbuf = malloc(IN_CHUNK)))
		setvbuf(rd->fp, rd->vbuf, _IOFBF, IN_CHUNK);
	if (fstat(fileno(rd->fp), &rd->st) < 0) {
		corral_err_set(err, errno, "cannot read '%s'", path);
		reader_close(rd);
		return -1;
	}
	return 0;
}

static void
reader_close(struct reader *rd)
{
	if (rd->fp)
		fclose(rd->fp);
	free(rd->vbuf);
	free(rd->line);
	rd->fp = NULL;
	rd->vbuf = rd->line = NULL;
}

/*
 * The next line, without its ending (corral_line_chomp: '\n' or "\r\n"),
 * NUL terminated.  1: a line; 0: end of file; -1: read error (err set).
 */
static int
reader_next(struct reader *rd, struct corral_err *err)
{
	ssize_t n;

	errno = 0;
	if ((n = getline(&rd->line, &rd->cap, rd->fp)) < 0) {
		if (!ferror(rd->fp) && errno != ENOMEM)
			return 0;
		return corral_err_set(err, errno ? errno : EIO,
		    "cannot read '%s'", rd->path);
	}
	rd->lineno++;
	rd->raw = (size_t)n;
	rd->torn = rd->line[n - 1] != '\n';
	rd->len = corral_line_chomp(rd->line, (size_t)n);
	return 1;
}

static int
reader_rewind(struct reader *rd, struct corral_err *err)
{
	if (fseek(rd->fp, 0, SEEK_SET) < 0)
		return corral_err_set(err, errno, "cannot read '%s'",
		    rd->path);
	rd->lineno = 0;
	return 0;
}

/* 1 when the file is not the one first opened (size or mtime moved). */
static int
reader_changed(struct reader *rd)
{
	struct stat now;

	if (fstat(fileno(rd->fp), &now) < 0)
		return 1;
	return now.st_size != rd->st.st_size ||
	    now.st_mtim.tv_sec != rd->st.st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != rd->st.st_mtim.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* records                                                             */

/*
 * The index of s in (ix, names), adding it when new; -1 on ENOMEM.  The
 * records of a log mostly repeat the string of the one before (one run,
 * one inputs digest, "pass"), so *last, the index found last time, is
 * tried first: one short strcmp instead of a hash and a probe.
 */
static long
intern(struct corral_set *ix, struct corral_strv *names, const char *s,
    long *last)
{
	long *vp;
	int put;

	if (*last >= 0 && !strcmp(names->v[*last], s))
		return *last;
	if ((put = corral_set_put(ix, s, (long)names->n, &vp)) < 0)
		return -1;
	if (put == 1 && corral_strv_add(names, s) < 0)
		return -1;
	return *last = *vp;
}

/* Append a record; its index, or -1 on ENOMEM. */
static long
push_rec(struct merge *m, uint32_t agent, size_t line, int ok,
    const char *status, const char *run)
{
	struct rec *r;
	long si, ri;

	if (m->nrecs == m->caprecs) {
		size_t cap = m->caprecs ? m->caprecs * 2 : 256;

		if (!(r = realloc(m->recs, cap * sizeof(*r))))
			return -1;
		m->recs = r;
		m->caprecs = cap;
	}
	si = intern(m->status_ix, &m->statuses, status, &m->status_last);
	ri = intern(m->run_ix, &m->runs, run ? run : "none", &m->run_last);
	if (si < 0 || ri < 0)
		return -1;
	r = &m->recs[m->nrecs];
	memset(r, 0, sizeof(*r));
	r->line = line;
	r->agent = agent;
	r->dup_agent = NONE;
	r->status = (unsigned)si;
	r->run = (unsigned)ri;
	r->ok = (unsigned char)ok;
	r->has_run = run != NULL;
	return (long)m->nrecs++;
}

static void
duplicate(struct merge *m, struct rec *r, uint32_t ai, const char *unit)
{
	if (r->dup_agent == ai)
		return;
	if (r->dup_agent == NONE)
		m->st->duplicates++;
	r->dup_agent = ai;
	say(m, "unit '%s' is in both '%s' and '%s'", unit,
	    m->agents[r->agent].path, m->agents[ai].path);
}

/* ------------------------------------------------------------------ */
/* layers: which attempt of a unit wins                                */

/*
 * "2026-11-29T10:32:13.042Z" as a number that sorts as the time does
 * (YYYYMMDDhhmmssmmm; the fraction is optional), or -1.
 */
static long long
at_key(const char *at)
{
	int y, mo, d, h, mi, s, n = 0, ms = 0, i;
	const char *p;

	if (!at || sscanf(at, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h,
	    &mi, &s, &n) != 6 || n != 19)
		return -1;
	/* Missing digits count as 0; never read past the NUL ("...:13."). */
	if (at[19] == '.')
		for (i = 0, p = at + 20; i < 3; i++, p += *p != '\0')
			ms = ms * 10 + (*p >= '0' && *p <= '9' ? *p - '0' : 0);
	return ((((((long long)y * 100 + mo) * 100 + d) * 100 + h) * 100 +
	    mi) * 100 + s) * 1000 + ms;
}

static struct win *
winner(const struct merge *m, const char *unit)
{
	long *vp;

	if (!m->win_ix || !(vp = corral_set_get(m->win_ix, unit)))
		return NULL;
	return &m->wins[*vp];
}

static struct win *
new_win(struct merge *m, long *vp)
{
	struct win *w;

	if (m->nwins % 256 == 0) {
		w = realloc(m->wins, (m->nwins + 256) * sizeof(*w));
		if (!w)
			return NULL;
		m->wins = w;
	}
	*vp = (long)m->nwins;
	w = &m->wins[m->nwins++];
	memset(w, 0, sizeof(*w));
	return w;
}

/*
 * Weigh one attempt of a unit against the best so far.  Within one log the
 * last line wins; between layers the later "at" (the later layer on a
 * tie); within one layer two logs are a duplicate, left for the main pass
 * to report.  A pass that wins over a failure on the same inputs, or that
 * an older such failure preceded, is flaky.  A record its agent wrote as
 * flaky (a retry passed) is one already, and passes through as it is.
 */
static int
consider(struct merge *m, uint32_t ai, size_t line,
    const struct corral_json_record *jr)
{
	long long at = at_key(jr->at);
	long *vp, inputs = -1;
	struct win *w;
	uint32_t wl, al = m->agents[ai].layer;
	int put, newer, same, self;

	if (jr->inputs && (inputs = intern(m->inputs_ix, &m->inputs,
	    jr->inputs, &m->inputs_last)) < 0)
		return -1;
	if ((put = corral_set_put(m->win_ix, jr->unit, -1, &vp)) < 0)
		return -1;
	if (put == 1 && !(w = new_win(m, vp)))
		return -1;
	w = &m->wins[*vp];
	wl = m->agents[w->agent].layer;
	same = inputs >= 0 && inputs == w->inputs;
	if (put == 1 || w->agent == ai)
		newer = 1;
	else if (wl == al)
		return 0;
	else
		newer = at > w->at || (at == w->at && al > wl);
	self = jr->ok && jr->status && !strcmp(jr->status, "flaky");
	if (!newer) {
		if (!jr->ok && w->ok && same && !w->self)
			w->flaky = 1;
		return 0;
	}
	w->flaky = !self && put == 0 && jr->ok && same &&
	    (!w->ok || w->flaky || w->self);
	w->self = (unsigned char)self;
	w->agent = ai;
	w->line = line;
	w->at = at;
	w->inputs = inputs;
	w->ok = (unsigned char)jr->ok;
	return 0;
}

/*
 * With more than one layer, read every log once to find each unit's
 * winning attempt before anything is written.  Lines that cannot be read
 * are left for the main pass to report.
 */
static int
find_winners(struct merge *m, struct corral_err *err)
{
	struct corral_json_record jr;
	struct reader rd;
	size_t i;
	int rc = 0;

	if (m->nlayers < 2)
		return 0;
	if (!(m->win_ix = corral_set_new()))
		return nomem(err);
	for (i = 0; i < m->nagents && rc >= 0; i++) {
		if (m->agents[i].refused)
			continue;
		if (reader_open(&rd, m->agents[i].path, err) < 0)
			return -1;
		while ((rc = reader_next(&rd, err)) > 0) {
			if (rd.torn || corral_line_blank(rd.line, rd.len) ||
			    corral_json_record_parse(rd.line, rd.len, &jr,
			    NULL) < 0)
				continue;
			rc = consider(m, (uint32_t)i, rd.lineno, &jr);
			corral_json_record_release(&jr);
			if (rc < 0) {
				nomem(err);
				break;
			}
		}
		reader_close(&rd);
	}
	return rc < 0 ? -1 : 0;
}

/*
 * Note a valid record of agent ai.  A unit already kept from the same log
 * is replaced (the last attempt wins); one from another log is a
 * duplicate.  A unit the population lacks is unexpected.  Returns 1 when
 * the line is kept (for now; *kept is its record), 0 when it is not, -1
 * on ENOMEM.
 */
static int
add_record(struct merge *m, uint32_t ai, size_t line,
    const struct corral_json_record *jr, long *kept)
{
	const char *status = jr->status ? jr->status : jr->ok ? "pass" : "fail";
	const struct win *w = winner(m, jr->unit);
	long *vp, idx, was;
	int put, flaky = 0;

	/* Another layer holds the attempt that wins: this one is history. */
	if (w && m->agents[w->agent].layer != m->agents[ai].layer)
		return 0;
	if (w && w->flaky && w->agent == ai && w->line == line) {
		flaky = 1;
		status = "flaky";
	}
	if ((put = corral_set_put(m->units, jr->unit, -1, &vp)) < 0)
		return -1;
	if (put == 1 && m->o->units) {
		m->st->unexpected++;
		say(m, "unit '%s' in '%s' is not in '%s'", jr->unit,
		    m->agents[ai].path, m->o->units);
	}
	was = *vp;
	if (was >= 0 && m->recs[was].agent != ai) {
		duplicate(m, &m->recs[was], ai, jr->unit);
		return 0;
	}
	/* vp stays valid: push_rec adds to other sets, not to m->units. */
	if ((idx = push_rec(m, ai, line, jr->ok, status, jr->run)) < 0)
		return -1;
	m->recs[idx].flaky = (unsigned char)flaky;
	if (was >= 0) {
		m->recs[was].dropped = 1;
		m->recs[idx].dup_agent = m->recs[was].dup_agent;
		m->agents[ai].redo = 1;
	} else {
		m->st->merged++;
	}
	*vp = idx;
	*kept = idx;
	m->agents[ai].n++;
	return 1;
}

static int
note_at(struct merge *m, const char *at)
{
	if (!at || (m->at.data && strcmp(at, m->at.data) <= 0))
		return 0;
	corral_buf_reset(&m->at);
	return corral_buf_addstr(&m->at, at);
}

static int out_add(struct out *o, const char *p, size_t n, int nl,
    struct corral_err *err);

/* Write a kept line to its result file: as it is, or as a flaky record. */
static int
route(struct merge *m, const struct rec *r, const char *line, size_t len,
    struct corral_err *err)
{
	struct out *o = r->ok ? &m->succ : &m->fail;

	if (!r->flaky)
		return out_add(o, line, len, 1, err);
	corral_buf_reset(&m->flaky);
	if (corral_json_record_flaky(line, len, &m->flaky) < 0)
		return nomem(err);
	return out_add(o, m->flaky.data, m->flaky.len, 1, err);
}

/* 1 while the input is good, so that writing the results is worth it. */
static int
writing(const struct merge *m)
{
	return !m->st->bad && !m->st->duplicates;
}

/*
 * Check one line of agent ai's log, and copy it to its result file while
 * the input is good.  0, or -1 with err set (ENOMEM, a write error).
 */
static int
check_line(struct merge *m, uint32_t ai, struct reader *rd,
    struct corral_err *err)
{
	struct corral_json_record jr;
	struct corral_err e;
	long kept;
	int rc;

	/* A seal was checked before (check_seal); it is not a record. */
	if (corral_line_blank(rd->line, rd->len) ||
	    corral_seal_is(rd->line, rd->len))
		return 0;
	if (rd->torn) {
		bad(m, "'%s' line %zu: no trailing newline (torn write)",
		    rd->path, rd->lineno);
		return 0;
	}
	if (corral_json_record_parse(rd->line, rd->len, &jr, &e) < 0) {
		bad(m, "'%s' line %zu: %s", rd->path, rd->lineno, e.msg);
		return 0;
	}
	m->st->attempts++;
	if ((rc = add_record(m, ai, rd->lineno, &jr, &kept)) < 0 ||
	    note_at(m, jr.at) < 0)
		rc = nomem(err);
	else if (rc == 1 && writing(m))
		rc = route(m, &m->recs[kept], rd->line, rd->len, err);
	else
		rc = 0;
	corral_json_record_release(&jr);
	return rc;
}

/* ------------------------------------------------------------------ */
/* writing                                                             */

static int
out_open(struct out *o, const char *dir, const char *name,
    struct corral_err *err)
{
	char *path = join(dir, name);
	int rc;

	memset(o, 0, sizeof(*o));
	if (!path)
		return nomem(err);
	rc = corral_atomic_open(&o->a, path, err);
	free(path);
	o->open = rc == 0;
	return rc;
}

static int
out_flush(struct out *o, struct corral_err *err)
{
	if (o->b.len && corral_atomic_write(&o->a, o->b.data, o->b.len,
	    err) < 0)
		return -1;
	corral_buf_reset(&o->b);
	return 0;
}

/* Append p[0..n) and, when nl, a newline. */
static int
out_add(struct out *o, const char *p, size_t n, int nl,
    struct corral_err *err)
{
	if (corral_buf_add(&o->b, p, n) < 0 ||
	    (nl && corral_buf_addch(&o->b, '\n') < 0))
		return nomem(err);
	o->size += (off_t)(n + (nl != 0));
	return o->b.len >= OUT_CHUNK ? out_flush(o, err) : 0;
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
static int
out_truncate(struct out *o, off_t size, struct corral_err *err)
{
	if (out_flush(o, err) < 0)
		return -1;
	if (ftruncate(o->a.fd, size) < 0 ||
	    lseek(o->a.fd, size, SEEK_SET) < 0)
		return corral_err_set(err, errno, "cannot write '%s'",
		    o->a.tmp);
	o->size = size;
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

static void
out_abort(struct out *o)
{
	if (o->open)
		corral_atomic_abort(&o->a);
	o->open = 0;
	corral_buf_release(&o->b);
}

/* ------------------------------------------------------------------ */
/* seals                                                               */

/* 1 when b is the file a was: same inode, size and mtime. */
static int
same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	    a->st_size == b->st_size &&
	    a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	    a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static void credit_part(struct merge *m, const char *path, long k);

/* Refuse agent ai's log, saying why; its units are credited later. */
static int
refuse(struct merge *m, uint32_t ai, const char *why, size_t line)
{
	struct agent *a = &m->agents[ai];
	struct corral_buf b = CORRAL_BUF_INIT;
	int rc;

	a->refused = 1;
	if (line)
		rc = corral_buf_addf(&b, "'%s' line %zu: %s; refused", a->path,
		    line, why);
	else
		rc = corral_buf_addf(&b, "'%s' %s; refused", a->path, why);
	if (rc == 0) {
		say(m, "%s", b.data);
		rc = corral_strv_add(&m->st->refused, a->path);
	}
	corral_buf_release(&b);
	return rc;
}

/*
 * Check the seal of agent ai's log.  Not being a regular file is left for
 * the main pass to report.  0, or -1 with err set.
 */
static int
check_seal(struct merge *m, uint32_t ai, struct corral_err *err)
{
	struct agent *a = &m->agents[ai];
	struct corral_seal_check c;
	int fd, rc = 0;

	fd = open(a->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return corral_err_set(err, errno, "cannot open '%s'", a->path);
	if (fstat(fd, &a->st) < 0)
		rc = corral_err_set(err, errno, "cannot read '%s'", a->path);
	else if (S_ISREG(a->st.st_mode))
		rc = corral_seal_check_fd(fd, a->path, &c, NULL, err);
	close(fd);
	if (rc < 0 || !S_ISREG(a->st.st_mode))
		return rc;
	a->checked = 1;
	if (c.broken)
		rc = refuse(m, ai, "changed after it was sealed (this seal "
		    "does not match the lines before it)", c.broken);
	else if (c.seals && !c.sealed)
		rc = refuse(m, ai, "changed after it was sealed (a line "
		    "after its seal)", c.seal_line + 1);
	else if (!c.seals && m->o->sealed)
		rc = refuse(m, ai, "has no seal", 0);
	return rc < 0 ? nomem(err) : 0;
}

/*
 * The units of refused logs, for the not-run notes (the logs themselves
 * are not trusted, so this only names where a unit's record went).
 */
static int
credit_refused(struct merge *m)
{
	struct corral_buf note = CORRAL_BUF_INIT;
	size_t i;
	int rc = 0;

	for (i = 0; i < m->nagents && rc == 0; i++) {
		if (!m->agents[i].refused)
			continue;
		corral_buf_reset(&note);
		rc = corral_buf_addf(&note, "the log of agent '%s' is refused: "
		    "its seal does not hold", m->agents[i].id);
		if (rc == 0 && (rc = corral_strv_add(&m->why, note.data)) == 0)
			credit_part(m, m->agents[i].path, (long)m->why.n - 1);
	}
	corral_buf_release(&note);
	return rc;
}

/* ------------------------------------------------------------------ */
/* the two passes over one log                                         */

/*
 * Second pass, only for a log where a later line replaced an earlier one
 * that the first pass had already copied: copy the kept lines again.
 */
static int
copy_log(struct merge *m, uint32_t ai, struct reader *rd,
    struct corral_err *err)
{
	struct agent *a = &m->agents[ai];
	size_t k = a->first, end = a->first + a->n;
	struct rec *r;
	int rc = 1;

	if (reader_rewind(rd, err) < 0)
		return -1;
	while (k < end && (rc = reader_next(rd, err)) > 0) {
		while (k < end && m->recs[k].dropped)
			k++;
		if (k == end || rd->lineno != m->recs[k].line)
			continue;
		r = &m->recs[k++];
		if (route(m, r, rd->line, rd->len, err) < 0)
			return -1;
	}
	if (rc < 0)
		return -1;
	while (k < end && m->recs[k].dropped)
		k++;
	if (k != end)
		bad(m, "'%s' changed while it was being merged", rd->path);
	return 0;
}

/*
 * Read agent ai's log: check every line and copy the kept ones.  When a
 * unit comes back later in the same log, what this log wrote is cut off
 * and copied again without the replaced lines.
 */
static int
merge_log(struct merge *m, uint32_t ai, struct corral_err *err)
{
	off_t succ = m->succ.size, fail = m->fail.size;
	struct reader rd;
	int rc;

	if (reader_open(&rd, m->agents[ai].path, err) < 0)
		return -1;
	if (m->agents[ai].checked && !same_file(&m->agents[ai].st, &rd.st))
		bad(m, "'%s' changed while it was being merged", rd.path);
	m->agents[ai].first = m->nrecs;
	while ((rc = reader_next(&rd, err)) > 0)
		if (check_line(m, ai, &rd, err) < 0) {
			rc = -1;
			break;
		}
	if (rc == 0 && writing(m) && m->agents[ai].redo &&
	    (out_truncate(&m->succ, succ, err) < 0 ||
	    out_truncate(&m->fail, fail, err) < 0 ||
	    copy_log(m, ai, &rd, err) < 0))
		rc = -1;
	if (rc == 0 && reader_changed(&rd))
		bad(m, "'%s' changed while it was being merged", rd.path);
	reader_close(&rd);
	m->st->agents++;
	return rc;
}

/* ------------------------------------------------------------------ */
/* the population: expected, unfinished and missing units              */

static int
read_units(struct merge *m, struct corral_err *err)
{
	struct corral_strv dups = CORRAL_STRV_INIT;
	struct stat st;
	size_t i;
	FILE *fp;
	int rc = -1;

	if (!(fp = corral_fopen_input(m->o->units, err)))
		return -1;
	if (fstat(fileno(fp), &st) < 0) {
		corral_err_set(err, errno, "cannot read '%s'", m->o->units);
		goto out;
	}
	m->units_mtime = st.st_mtime;
	if (corral_units_read(fp, '\n', m->o->units, &m->expected, &dups,
	    err) < 0)
		goto out;
	for (i = 0; i < dups.n; i++)
		say(m, "unit '%s' is listed more than once in '%s'; "
		    "counted once", dups.v[i], m->o->units);
	for (i = 0; i < m->expected.n; i++)
		if (corral_set_put(m->units, m->expected.v[i], -1, NULL) < 0) {
			nomem(err);
			goto out;
		}
	rc = 0;
out:
	corral_strv_release(&dups);
	fclose(fp);
	return rc;
}

static int
has_log(struct merge *m, uint32_t layer, const char *id)
{
	struct agent key;

	if (!m->nagents)
		return 0;
	key.id = (char *)id;
	key.layer = layer;
	return bsearch(&key, m->agents, m->nagents, sizeof(*m->agents),
	    agent_cmp) != NULL;
}

/*
 * Credit the expected units an unfinished agent's .part (or a refused
 * log) holds (its complete, valid lines) to it: their value becomes
 * -2 - k for the k-th note in m->why, so the not-run note can name it.
 */
static void
credit_part(struct merge *m, const char *path, long k)
{
	struct corral_json_record jr;
	struct reader rd;
	long *vp;

	if (reader_open(&rd, path, NULL) < 0)
		return;
	while (reader_next(&rd, NULL) > 0) {
		if (rd.torn || corral_json_record_parse(rd.line, rd.len, &jr,
		    NULL) < 0)
			continue;
		if ((vp = corral_set_get(m->units, jr.unit)) && *vp == -1)
			*vp = -2 - k;
		corral_json_record_release(&jr);
	}
	reader_close(&rd);
}

static int
check_parts(struct merge *m)
{
	struct corral_strv *unf = &m->st->unfinished;
	struct corral_buf name = CORRAL_BUF_INIT;
	char *path = NULL, *id;
	uint32_t layer;
	size_t i;
	int rc = -1;

	for (i = 0; i < m->parts.n; i++) {
		corral_buf_reset(&name);
		free(path);
		path = NULL;
		layer = (uint32_t)strtoul(m->parts.v[i], &id, 10);
		id++;	/* past the '/' */
		if (corral_buf_addf(&name, "agent-%s.jsonl.part", id) < 0 ||
		    !(path = join(m->logdirs[layer], name.data)))
			goto out;
		if (has_log(m, layer, id)) {
			say(m, "'%s': ignored, agent '%s' has a finished log",
			    path, id);
			continue;
		}
		say(m, "'%s': agent '%s' did not finish", path, id);
		corral_buf_reset(&name);
		if (corral_strv_add(unf, id) < 0 ||
		    corral_buf_addf(&name, "agent '%s' did not finish", id) < 0 ||
		    corral_strv_add(&m->why, name.data) < 0)
			goto out;
		credit_part(m, path, (long)m->why.n - 1);
	}
	rc = 0;
out:
	free(path);
	corral_buf_release(&name);
	return rc;
}

static void
iso_time(time_t t, char out[21])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The run id of not-run records: -r, else the greatest run named. */
static int
pick_run(struct merge *m)
{
	const char *best = NULL, *run;
	size_t i;

	for (i = 0; !m->o->run && i < m->nrecs; i++) {
		if (m->recs[i].dropped || !m->recs[i].has_run)
			continue;
		run = m->runs.v[m->recs[i].run];
		if (!best || strcmp(run, best) > 0)
			best = run;
	}
	if (m->o->run)
		best = m->o->run;
	return (m->st->run = strdup(best ? best : "none")) ? 0 : -1;
}

/*
 * Write the not-run record of unit u.  v is its value in m->units: -1
 * when no agent reported it, -2 - k when m->why.v[k] says why not.
 */
static int
not_run(struct merge *m, const char *u, long v, const char *at,
    struct corral_err *err)
{
	struct corral_buf note = CORRAL_BUF_INIT, line = CORRAL_BUF_INIT;
	struct corral_record r;
	int rc;

	if (v == -1)
		rc = corral_buf_addstr(&note, "NOT-RUN: no agent reported it");
	else
		rc = corral_buf_addf(&note, "NOT-RUN: %s", m->why.v[-2 - v]);
	memset(&r, 0, sizeof(r));
	r.unit = u;
	r.note = note.data;
	r.at = at;
	r.status = "not-run";
	r.exit_code = -1;
	r.run = m->st->run;
	if (rc < 0 || corral_record_format(&line, &r) < 0 ||
	    push_rec(m, NONE, 0, 0, "not-run", m->st->run) < 0) {
		rc = nomem(err);
		goto out;
	}
	say(m, "unit '%s' is missing: %s", u, note.data + 9);
	rc = out_add(&m->fail, line.data, line.len, 0, err);
out:
	corral_buf_release(&note);
	corral_buf_release(&line);
	return rc;
}

/* Every expected unit that no log holds gets a not-run record. */
static int
write_missing(struct merge *m, struct corral_err *err)
{
	char mtime[21];
	const char *at;
	size_t i;
	long *vp;

	iso_time(m->units_mtime, mtime);
	at = m->at.data ? m->at.data : mtime;
	for (i = 0; i < m->expected.n; i++) {
		vp = corral_set_get(m->units, m->expected.v[i]);
		if (*vp >= 0)
			continue;
		m->st->missing++;
		if (not_run(m, m->expected.v[i], *vp, at, err) < 0)
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* summary.json                                                        */


/* "by_status": {"fail": 1, "pass": 2}, keys sorted bytewise. */
static int
add_by_status(struct merge *m, struct corral_buf *b)
{
	size_t *count, i, n = m->statuses.n;
	const char **names;
	int rc = 0;

	count = calloc(n + 1, sizeof(*count));
	names = calloc(n + 1, sizeof(*names));
	if (!count || !names) {
		rc = -1;
		goto out;
	}
	for (i = 0; i < m->nrecs; i++)
		if (!m->recs[i].dropped)
			count[m->recs[i].status]++;
	if (n) {
		memcpy(names, m->statuses.v, n * sizeof(*names));
		qsort(names, n, sizeof(*names), bytes_cmp);
	}
	rc |= corral_buf_addstr(b, "  \"by_status\": {");
	for (i = 0; i < n; i++) {
		long *ix = corral_set_get(m->status_ix, names[i]);

		if (!count[*ix])
			continue;
		rc |= corral_buf_addstr(b, b->data[b->len - 1] == '{' ? "" :
		    ", ");
		rc |= corral_buf_addjson(b, names[i], strlen(names[i]));
		rc |= corral_buf_addf(b, ": %zu", count[*ix]);
	}
	rc |= corral_buf_addstr(b, "}\n");
out:
	free(count);
	free(names);
	return rc;
}

static int
format_summary(struct merge *m, struct corral_buf *b)
{
	struct corral_merge_stats *st = m->st;
	size_t i;
	int rc = 0;

	rc |= corral_buf_addf(b, "{\n  \"units\": %zu,\n  \"merged\": %zu,\n"
	    "  \"attempts\": %zu,\n"
	    "  \"successes\": %zu,\n  \"failures\": %zu,\n"
	    "  \"missing\": %zu,\n  \"duplicates\": %zu,\n"
	    "  \"unexpected\": %zu,\n  \"agents\": %zu,\n"
	    "  \"unfinished\": [", st->units, st->merged, st->attempts,
	    st->successes,
	    st->failures, st->missing, st->duplicates, st->unexpected,
	    st->agents);
	for (i = 0; i < st->unfinished.n; i++) {
		rc |= corral_buf_addstr(b, i ? ", " : "");
		rc |= corral_buf_addjson(b, st->unfinished.v[i],
		    strlen(st->unfinished.v[i]));
	}
	rc |= corral_buf_addstr(b, "],\n  \"run\": ");
	rc |= corral_buf_addjson(b, st->run, strlen(st->run));
	rc |= corral_buf_addstr(b, ",\n");
	rc |= add_by_status(m, b);
	rc |= corral_buf_addstr(b, "}\n");
	return rc;
}

static void
count_results(struct merge *m)
{
	long *flaky = corral_set_get(m->status_ix, "flaky");
	size_t i;

	for (i = 0; i < m->nrecs; i++) {
		if (m->recs[i].dropped)
			continue;
		if (m->recs[i].ok)
			m->st->successes++;
		else
			m->st->failures++;
		if (flaky && m->recs[i].status == (uint32_t)*flaky)
			m->st->flaky++;
	}
	m->st->units = m->o->units ? m->expected.n : m->st->merged;
}

/* ------------------------------------------------------------------ */
/* history.jsonl                                                       */

struct history {
	int fd;
	char *path;
	struct corral_set *committed;
	struct corral_set *present;	/* "RUN\0UNIT", see note_present */
	size_t *have;			/* per run of m->runs: of them */
	struct corral_buf b;
	struct corral_buf key;
	off_t keep;	/* the end of the last commit line */
	size_t nbad;	/* complete lines after it that are not records */
	size_t torn;	/* bytes of a torn last line that is not one */
	int need_nl;	/* the last line is one, without its '\n' */
};

/* Pass one: the runs history has committed, and where the last one ends. */
static int
history_commits(struct history *h, struct corral_err *err)
{
	off_t off = 0;
	struct reader rd;
	int rc, c;

	if (reader_open(&rd, h->path, err) < 0)
		return -1;
	while ((rc = reader_next(&rd, err)) > 0) {
		off += (off_t)rd.raw;
		if (rd.torn)
			continue;
		if ((c = corral_json_commit_parse(rd.line, rd.len,
		    &h->key)) < 0 || (c == 1 && corral_set_put(h->committed,
		    h->key.data, 0, NULL) < 0)) {
			rc = nomem(err);
			break;
		}
		if (c == 1)
			h->keep = off;
	}
	reader_close(&rd);
	return rc;
}

/*
 * Note that history holds, uncommitted, jr of one of this merge's runs, so
 * that completing its run appends every unit once: records a merge killed
 * half-way through its append left, or records of a history filtered or
 * written by hand.  0, or -1 on ENOMEM.
 */
static int
note_present(struct merge *m, struct history *h,
    const struct corral_json_record *jr)
{
	const char *run = jr->run ? jr->run : "none";
	long *vp;
	int put;

	if (!(vp = corral_set_get(m->run_ix, run)))
		return 0;
	corral_buf_reset(&h->key);
	if (corral_buf_add(&h->key, run, strlen(run) + 1) < 0 ||
	    corral_buf_addstr(&h->key, jr->unit) < 0 ||
	    (put = corral_set_putn(h->present, h->key.data, h->key.len, 0,
	    NULL)) < 0)
		return -1;
	h->have[*vp] += (size_t)put;
	return 0;
}

/*
 * One line after the last commit line: 1 when it is readable (blank, a
 * record, noted, or a commit line, noted), 0 when not, -1 on ENOMEM.
 */
static int
tail_line(struct merge *m, struct history *h, const struct reader *rd)
{
	struct corral_json_record jr;
	int c;

	if (corral_line_blank(rd->line, rd->len))
		return 1;
	if ((c = corral_json_commit_parse(rd->line, rd->len, &h->key)) != 0)
		return c < 0 || corral_set_put(h->committed, h->key.data, 0,
		    NULL) < 0 ? -1 : 1;
	if (corral_json_record_parse(rd->line, rd->len, &jr, NULL) < 0)
		return 0;
	c = note_present(m, h, &jr);
	corral_json_record_release(&jr);
	return c < 0 ? -1 : 1;
}

/* Pass two, over what follows the last commit line. */
static int
history_tail(struct merge *m, struct history *h, struct corral_err *err)
{
	struct reader rd;
	int rc, c;

	if (reader_open(&rd, h->path, err) < 0)
		return -1;
	if (fseeko(rd.fp, h->keep, SEEK_SET) < 0) {
		reader_close(&rd);
		return corral_err_set(err, errno, "cannot read '%s'", h->path);
	}
	while ((rc = reader_next(&rd, err)) > 0) {
		if ((c = tail_line(m, h, &rd)) < 0) {
			rc = nomem(err);
			break;
		}
		if (rd.torn && c)
			h->need_nl = 1;
		else if (rd.torn)
			h->torn = rd.raw;
		else if (!c)
			h->nbad++;
	}
	reader_close(&rd);
	return rc;
}

/* The ending the line rd had: "\n", "\r\n", or none (torn). */
static const char *
ending_of(const struct reader *rd)
{
	return rd->raw - rd->len == 2 ? "\r\n" : rd->raw > rd->len ? "\n" :
	    "";
}

/* h->path ".unreadable-" and the time, made unique among its siblings. */
static char *
aside_name(const struct history *h)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct stat st;
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	int k;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	for (k = 1; k < 1000; k++) {
		corral_buf_reset(&b);
		if (corral_buf_addf(&b, "%s.unreadable-%s", h->path,
		    stamp) < 0 || (k > 1 && corral_buf_addf(&b, "-%d", k) < 0))
			break;
		if (lstat(b.data, &st) < 0 && errno == ENOENT)
			return b.data;
	}
	corral_buf_release(&b);
	return NULL;
}

/* Copy the first n bytes of rd to a. */
static int
copy_head(struct reader *rd, off_t n, struct corral_atomic *a,
    struct corral_err *err)
{
	char *chunk;
	size_t r, want;
	int rc = 0;

	if (!(chunk = malloc(OUT_CHUNK)))
		return nomem(err);
	for (; rc == 0 && n > 0; n -= (off_t)r) {
		want = n < OUT_CHUNK ? (size_t)n : OUT_CHUNK;
		if ((r = fread(chunk, 1, want, rd->fp)) != want)
			rc = corral_err_set(err, ferror(rd->fp) ? errno : 0,
			    "cannot read '%s'", rd->path);
		else
			rc = corral_atomic_write(a, chunk, r, err);
	}
	free(chunk);
	return rc;
}

/*
 * Split what follows the last commit line: readable lines stay, the
 * unreadable ones go to aside, a torn last line that is not a record
 * goes.  a receives the history to keep.
 */
static int
rewrite_tail(struct merge *m, struct history *h, struct corral_atomic *a,
    struct corral_buf *aside, struct corral_err *err)
{
	struct corral_buf *to;
	struct reader rd;
	int rc, c;

	if (reader_open(&rd, h->path, err) < 0)
		return -1;
	if ((rc = copy_head(&rd, h->keep, a, err)) < 0)
		goto out;
	while ((rc = reader_next(&rd, err)) > 0) {
		if ((c = tail_line(m, h, &rd)) < 0) {
			rc = nomem(err);
			break;
		}
		if (rd.torn && !c)
			continue;
		to = c ? &h->b : aside;
		if (corral_buf_add(to, rd.line, rd.len) < 0 ||
		    corral_buf_addstr(to, rd.torn ? "\n" : ending_of(&rd)) < 0) {
			rc = nomem(err);
			break;
		}
		if (h->b.len < OUT_CHUNK)
			continue;
		if ((rc = corral_atomic_write(a, h->b.data, h->b.len, err)) < 0)
			break;
		corral_buf_reset(&h->b);
	}
	if (rc == 0 && h->b.len)
		rc = corral_atomic_write(a, h->b.data, h->b.len, err);
	corral_buf_reset(&h->b);
out:
	reader_close(&rd);
	return rc;
}

/*
 * History is never wiped: its unreadable lines after the last commit line
 * are moved to a file of their own, named in a warning, and the rest is
 * kept (written beside the old history, renamed over it).
 */
static int
history_aside(struct merge *m, struct history *h, struct corral_err *err)
{
	struct corral_buf aside = CORRAL_BUF_INIT;
	struct corral_atomic a;
	char *name = NULL;
	int rc = -1;

	if (corral_atomic_open(&a, h->path, err) < 0)
		return -1;
	if (rewrite_tail(m, h, &a, &aside, err) < 0)
		goto fail;
	if (!(name = aside_name(h))) {
		corral_err_set(err, errno, "cannot name a file beside '%s'",
		    h->path);
		goto fail;
	}
	if (corral_atomic_file(name, aside.data, aside.len, 0, err) < 0)
		goto fail;
	if (corral_atomic_commit(&a, 0, err) < 0)
		goto out;
	say(m, "'%s': moved %zu unreadable line%s to '%s'", h->path, h->nbad,
	    h->nbad == 1 ? "" : "s", name);
	if (h->torn)
		say(m, "'%s': dropped a torn last line of %zu bytes", h->path,
		    h->torn);
	close(h->fd);
	h->fd = open(h->path, O_RDWR | O_APPEND | O_CLOEXEC);
	if (h->fd < 0)
		corral_err_set(err, errno, "cannot open '%s'", h->path);
	else
		rc = 0;
	goto out;
fail:
	corral_atomic_abort(&a);
out:
	corral_buf_release(&aside);
	free(name);
	return rc;
}

/*
 * Read history: the runs it has committed, and what follows the last
 * commit line -- records of an append a killed merge left unfinished, or
 * of a history written without commit lines: kept, and noted so that no
 * unit of a run is appended twice.  Only a torn last line that is not a
 * record is cut; other unreadable lines are moved aside.
 */
static int
history_scan(struct merge *m, struct history *h, struct corral_err *err)
{
	struct stat st;

	if (history_commits(h, err) < 0)
		return -1;
	if (fstat(h->fd, &st) < 0)
		return corral_err_set(err, errno, "cannot read '%s'", h->path);
	if (st.st_size <= h->keep)
		return 0;
	if (history_tail(m, h, err) < 0)
		return -1;
	if (h->nbad)
		return history_aside(m, h, err);
	if (h->torn) {
		say(m, "'%s': dropped a torn last line of %zu bytes", h->path,
		    h->torn);
		if (ftruncate(h->fd, st.st_size - (off_t)h->torn) < 0)
			return corral_err_set(err, errno, "cannot truncate "
			    "'%s'", h->path);
	}
	if (h->need_nl && corral_buf_addch(&h->b, '\n') < 0)
		return nomem(err);
	return 0;
}

static int
history_flush(struct history *h, struct corral_err *err)
{
	if (h->b.len && corral_write_all(h->fd, h->b.data, h->b.len) < 0)
		return corral_err_set(err, errno, "cannot write '%s'",
		    h->path);
	corral_buf_reset(&h->b);
	return 0;
}

/*
 * How many kept records with this ok belong to run; *all is set when
 * every one of them does.
 */
static size_t
count_run(const struct merge *m, int ok, uint32_t run, int *all)
{
	size_t i, n = 0;

	*all = 1;
	for (i = 0; i < m->nrecs; i++) {
		if (m->recs[i].dropped || m->recs[i].ok != ok)
			continue;
		if (m->recs[i].run == run)
			n++;
		else
			*all = 0;
	}
	return n;
}

/* Append the whole result file rd, which must be size bytes long. */
static int
history_whole(struct history *h, struct reader *rd, off_t size,
    struct corral_err *err)
{
	char *chunk;
	size_t r;
	int rc = 0;

	if (rd->st.st_size != size)
		return corral_err_set(err, 0, "'%s' is not what this merge "
		    "wrote", rd->path);
	if (history_flush(h, err) < 0)
		return -1;
	if (!(chunk = malloc(OUT_CHUNK)))
		return nomem(err);
	while (rc == 0 && (r = fread(chunk, 1, OUT_CHUNK, rd->fp)) > 0)
		if (corral_write_all(h->fd, chunk, r) < 0)
			rc = corral_err_set(err, errno, "cannot write '%s'",
			    h->path);
	if (rc == 0 && ferror(rd->fp))
		rc = corral_err_set(err, errno, "cannot read '%s'", rd->path);
	free(chunk);
	return rc;
}

/*
 * 1 when the record line[0..len) of run is one history holds already, 0
 * when not, -1 on ENOMEM (a line the merge wrote is a record).
 */
static int
is_present(struct history *h, const char *run, const char *line, size_t len)
{
	struct corral_json_record jr;
	int rc;

	if (corral_json_record_parse(line, len, &jr, NULL) < 0)
		return 0;
	corral_buf_reset(&h->key);
	if (corral_buf_add(&h->key, run, strlen(run) + 1) < 0 ||
	    corral_buf_addstr(&h->key, jr.unit) < 0)
		rc = -1;
	else
		rc = corral_set_getn(h->present, h->key.data, h->key.len) !=
		    NULL;
	corral_json_record_release(&jr);
	return rc;
}

/*
 * Append the lines of rd whose records (kept, this ok) belong to run and
 * that history does not hold yet, counting them in *n.
 */
static int
history_lines(struct merge *m, struct history *h, struct reader *rd, int ok,
    uint32_t run, size_t *n, struct corral_err *err)
{
	size_t i;
	int rc = 0, have;

	for (i = 0; i < m->nrecs && rc == 0; i++) {
		struct rec *r = &m->recs[i];

		if (r->dropped || r->ok != ok)
			continue;
		if ((rc = reader_next(rd, err)) == 0)
			return corral_err_set(err, 0, "'%s' is not what this "
			    "merge wrote", rd->path);
		if (rc < 0)
			return -1;
		rc = 0;
		if (r->run != run)
			continue;
		if ((have = h->have[run] ? is_present(h, m->runs.v[run],
		    rd->line, rd->len) : 0) < 0)
			return nomem(err);
		if (have)
			continue;
		if (corral_buf_add(&h->b, rd->line, rd->len) < 0 ||
		    corral_buf_addch(&h->b, '\n') < 0)
			rc = nomem(err);
		else if (h->b.len >= OUT_CHUNK)
			rc = history_flush(h, err);
		(*n)++;
	}
	return rc;
}

/*
 * Append the records of run from result file o (the kept records with
 * ok == ok, in order) that history lacks, counting them in *n.  A file
 * that is all of one run history knows nothing of, the usual case, is
 * copied whole.
 */
static int
history_copy(struct merge *m, struct history *h, const struct out *o,
    const char *name, int ok, uint32_t run, size_t *n,
    struct corral_err *err)
{
	struct reader rd;
	size_t k;
	char *path;
	int rc, all;

	if (!(k = count_run(m, ok, run, &all)))
		return 0;
	if (!(path = join(m->outdir, name)))
		return nomem(err);
	if ((rc = reader_open(&rd, path, err)) == 0) {
		if (all && !h->have[run]) {
			rc = history_whole(h, &rd, o->size, err);
			*n += k;
		} else {
			rc = history_lines(m, h, &rd, ok, run, n, err);
		}
		reader_close(&rd);
	}
	free(path);
	return rc;
}

/*
 * Append run's records, then the commit line that makes them count; its
 * "records" are all of the run's that history holds.
 */
static int
history_run(struct merge *m, struct history *h, uint32_t run,
    struct corral_err *err)
{
	const char *name = m->runs.v[run];
	size_t n = h->have[run];

	if (history_copy(m, h, &m->succ, "successes.jsonl", 1, run, &n,
	    err) < 0 ||
	    history_copy(m, h, &m->fail, "failures.jsonl", 0, run, &n,
	    err) < 0)
		return -1;
	if (corral_buf_addstr(&h->b, "{\"corral\":\"history\",\"run\":") < 0 ||
	    corral_buf_addjson(&h->b, name, strlen(name)) < 0 ||
	    corral_buf_addf(&h->b, ",\"records\":%zu}\n", n) < 0)
		return nomem(err);
	return history_flush(h, err);
}

/* The runs of kept records that history lacks, sorted; NULL-terminated. */
static const char **
history_todo(struct merge *m, struct history *h)
{
	const char **todo;
	unsigned char *seen;
	size_t i, n = 0;

	todo = calloc(m->runs.n + 1, sizeof(*todo));
	seen = calloc(m->runs.n + 1, 1);
	if (!todo || !seen) {
		free(todo);
		free(seen);
		return NULL;
	}
	for (i = 0; i < m->nrecs; i++)
		if (!m->recs[i].dropped)
			seen[m->recs[i].run] = 1;
	for (i = 0; i < m->runs.n; i++)
		if (seen[i] && !corral_set_get(h->committed, m->runs.v[i]))
			todo[n++] = m->runs.v[i];
	qsort(todo, n, sizeof(*todo), bytes_cmp);
	free(seen);
	return todo;
}

static int
append_history(struct merge *m, struct corral_err *err)
{
	struct history h;
	const char **todo = NULL, **t;
	int rc = -1;

	memset(&h, 0, sizeof(h));
	h.fd = -1;
	if (!(h.path = join(m->outdir, "history.jsonl")) ||
	    !(h.committed = corral_set_new()) ||
	    !(h.present = corral_set_new()) ||
	    !(h.have = calloc(m->runs.n + 1, sizeof(*h.have)))) {
		nomem(err);
		goto out;
	}
	h.fd = open(h.path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
	if (h.fd < 0) {
		corral_err_set(err, errno, "cannot open '%s'", h.path);
		goto out;
	}
	if (history_scan(m, &h, err) < 0)
		goto out;
	if (!(todo = history_todo(m, &h))) {
		nomem(err);
		goto out;
	}
	for (t = todo; *t; t++)
		if (history_run(m, &h, (uint32_t)*corral_set_get(m->run_ix, *t),
		    err) < 0)
			goto out;
	if (history_flush(&h, err) < 0)
		goto out;
	if (fsync(h.fd) < 0) {
		corral_err_set(err, errno, "cannot write '%s'", h.path);
		goto out;
	}
	rc = 0;
out:
	free(todo);
	if (h.fd >= 0)
		close(h.fd);
	corral_set_free(h.committed);
	corral_set_free(h.present);
	free(h.have);
	corral_buf_release(&h.b);
	corral_buf_release(&h.key);
	free(h.path);
	return rc;
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
	if (!(path = join(m->outdir, ".merge.lock")))
		return nomem(err);
	m->lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (m->lockfd < 0) {
		rc = corral_err_set(err, errno, "cannot open '%s'", path);
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

/* Remove the temporaries of a merge that was killed (we hold the lock). */
static void
clean_stale(struct merge *m)
{
	static const char *const pre[] = { ".successes.jsonl.tmp.",
	    ".failures.jsonl.tmp.", ".summary.json.tmp.",
	    ".history.jsonl.tmp.", "." COMMIT_NAME ".tmp.", NULL };
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
		if (!*p || !(path = join(m->outdir, de->d_name)))
			continue;
		unlink(path);
		free(path);
	}
	closedir(d);
}

static int
setup(struct merge *m, struct corral_err *err)
{
	size_t l;

	m->lockfd = -1;
	m->status_last = m->run_last = m->inputs_last = -1;
	m->units = corral_set_new();
	m->status_ix = corral_set_new();
	m->run_ix = corral_set_new();
	m->inputs_ix = corral_set_new();
	m->nlayers = m->o->nlogdirs;
	m->logdirs = calloc(m->nlayers, sizeof(*m->logdirs));
	m->dirs = calloc(m->nlayers, sizeof(*m->dirs));
	if (!m->units || !m->status_ix || !m->run_ix || !m->inputs_ix ||
	    !m->logdirs || !m->dirs)
		return nomem(err);
	for (l = 0; l < m->nlayers; l++)
		if (!(m->logdirs[l] = trim_slashes(m->o->logdirs[l])))
			return nomem(err);
	m->logdir = m->logdirs[0];
	if (m->o->outdir)
		m->outdir = trim_slashes(m->o->outdir);
	else
		m->outdir = parent_of(m->logdir);
	if (!m->outdir)
		return nomem(err);
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

	out_abort(&m->succ);
	out_abort(&m->fail);
	out_abort(&m->sum);
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
	corral_strv_release(&m->why);
	corral_strv_release(&m->expected);
	corral_set_free(m->units);
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

	if (list_logs(m, err) < 0)
		return -1;
	if (m->o->units && read_units(m, err) < 0)
		return -1;
	if (out_open(&m->succ, m->outdir, "successes.jsonl", err) < 0 ||
	    out_open(&m->fail, m->outdir, "failures.jsonl", err) < 0)
		return -1;
	if (m->nagents >= NONE)
		return corral_err_set(err, 0, "'%s': too many agent logs",
		    m->logdir);
	for (i = 0; i < m->nagents; i++)
		if (check_seal(m, (uint32_t)i, err) < 0)
			return -1;
	if (find_winners(m, err) < 0)
		return -1;
	for (i = 0; i < m->nagents; i++)
		if (!m->agents[i].refused && merge_log(m, (uint32_t)i, err) < 0)
			return -1;
	if (check_parts(m) < 0 || credit_refused(m) < 0)
		return nomem(err);
	return 0;
}

/*
 * The commit record: the base names of the prepared temporaries, one per
 * line.  Once it is on disk the new result set is decided; a merge killed
 * before it has renamed them all is finished by the next (roll_forward),
 * so the three files are never left half old and half new.
 */
static const char *const targets[] = {
	"successes.jsonl", "failures.jsonl", "summary.json", NULL
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
	char *from = join(m->outdir, tmp), *to = NULL;
	int rc = 0;

	if (!target)
		goto out;
	if (!from || !(to = join(m->outdir, target))) {
		rc = nomem(err);
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
static int
roll_forward(struct merge *m, struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_err e;
	char *path, *line, *nl;
	int rc = -1;

	if (!(path = join(m->outdir, COMMIT_NAME)))
		return nomem(err);
	if (corral_read_file(path, &b, &e) < 0) {
		rc = e.errnum == ENOENT ? 0 : corral_err_set(err, e.errnum,
		    "%s", e.msg);
		goto out;
	}
	say(m, "'%s': finishing the commit of an interrupted merge", path);
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

static const char *
base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Write the commit record, rename every prepared temporary, sync. */
static int
rename_all(struct merge *m, struct corral_err *err)
{
	struct out *outs[] = { &m->succ, &m->fail, &m->sum, NULL }, **o;
	struct corral_buf rec = CORRAL_BUF_INIT;
	char *path;
	int rc = -1;

	if (!(path = join(m->outdir, COMMIT_NAME)))
		return nomem(err);
	for (o = outs; *o; o++)
		if ((*o)->open && (corral_buf_addstr(&rec,
		    base_of((*o)->a.tmp)) < 0 || corral_buf_addch(&rec,
		    '\n') < 0)) {
			nomem(err);
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

/* Put the three result files in place, together. */
static int
commit(struct merge *m, struct corral_err *err)
{
	struct corral_buf sum = CORRAL_BUF_INIT;
	int rc = -1;

	count_results(m);
	if (format_summary(m, &sum) < 0) {
		nomem(err);
		goto out;
	}
	if (out_open(&m->sum, m->outdir, "summary.json", err) < 0 ||
	    out_add(&m->sum, sum.data, sum.len, 0, err) < 0 ||
	    out_prepare(&m->succ, err) < 0 || out_prepare(&m->fail, err) < 0 ||
	    out_prepare(&m->sum, err) < 0 || rename_all(m, err) < 0)
		goto out;
	m->st->written = 1;
	rc = 0;
out:
	corral_buf_release(&sum);
	return rc;
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
	m.report = report;
	m.arg = arg;
	if (setup(&m, err) < 0 || lock_outdir(&m, err) < 0 ||
	    roll_forward(&m, err) < 0)
		goto out;
	clean_stale(&m);
	if (read_logs(&m, err) < 0)
		goto out;
	if (st->bad || st->duplicates) {
		rc = 0;
		goto out;
	}
	if (pick_run(&m) < 0) {
		nomem(err);
		goto out;
	}
	if (write_missing(&m, err) < 0 || commit(&m, err) < 0 ||
	    append_history(&m, err) < 0)
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
