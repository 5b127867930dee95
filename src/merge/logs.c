/* See LICENSE file for copyright and license details. */
/*
 * logs.c reads the agents' logs: which there are, in which order (layer,
 * then agent ID), whether each one's seal holds, and every line of them,
 * checked on its own and routed to its result file.  A unit keeps one
 * record: the last line of its log, and between layers the latest
 * attempt, which a pass over the same inputs as a failure makes flaky.
 * Its invariant: a line reaches a result file only while the input read
 * so far is good, and a log is read in one open of one file -- changed
 * or replaced while it was read, it is bad input.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "merge/merge-private.h"

/* ------------------------------------------------------------------ */
/* the logs and their order                                            */

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
	v->first = SIZE_MAX;	/* unread: after every record (rec_agent) */
	v->id = id;
	v->layer = layer;
	if (!(v->path = merge_join(m->logdirs[layer], name)))
		return -1;
	m->nagents++;
	return 0;
}

/* "LAYER/ID" into sv, for the file of agent id (freed here). */
static int
add_layer_id(struct corral_strv *sv, uint32_t layer, char *id)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	int rc;

	rc = corral_buf_addf(&b, "%u/%s", (unsigned)layer, id);
	if (rc == 0)
		rc = corral_strv_add(sv, b.data);
	corral_buf_release(&b);
	free(id);
	return rc;
}

/*
 * Sort one directory entry into agents, parts or launches ("LAYER/ID"),
 * or nothing.
 */
static int
list_entry(struct merge *m, uint32_t layer, const char *name)
{
	char *id;

	if ((id = agent_id(name, ".jsonl")))
		return add_agent(m, layer, id, name) < 0 ? (free(id), -1) : 0;
	if (errno)
		return -1;
	if ((id = agent_id(name, ".jsonl.part")))
		return add_layer_id(&m->parts, layer, id);
	if (errno)
		return -1;
	if ((id = agent_id(name, ".launch")))
		return add_layer_id(&m->launches, layer, id);
	return errno ? -1 : 0;
}

int
merge_list_logs(struct merge *m, struct corral_err *err)
{
	struct dirent *de;
	size_t l;

	for (l = 0; l < m->nlayers; l++) {
		for (errno = 0; (de = readdir(m->dirs[l])); errno = 0)
			if (list_entry(m, (uint32_t)l, de->d_name) < 0)
				return merge_nomem(err);
		if (errno)
			return corral_err_set(err, errno, "cannot read '%s'",
			    m->logdirs[l]);
	}
	if (m->nagents)
		qsort(m->agents, m->nagents, sizeof(*m->agents), agent_cmp);
	if (m->parts.n)
		qsort(m->parts.v, m->parts.n, sizeof(*m->parts.v), str_cmp);
	if (m->launches.n)
		qsort(m->launches.v, m->launches.n, sizeof(*m->launches.v),
		    str_cmp);
	return 0;
}

int
merge_has_log(struct merge *m, uint32_t layer, const char *id)
{
	struct agent key;

	if (!m->nagents)
		return 0;
	key.id = (char *)id;
	key.layer = layer;
	return bsearch(&key, m->agents, m->nagents, sizeof(*m->agents),
	    agent_cmp) != NULL;
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
long
merge_push_rec(struct merge *m, off_t off, int ok, const char *status,
    const char *run)
{
	struct rec *r;
	long si, ri;

	if (m->nrecs == m->caprecs) {
		size_t cap = m->caprecs ? m->caprecs * 2 : 256;

		if (cap > MERGE_EXPECTED ||
		    !(r = realloc(m->recs, cap * sizeof(*r))))
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
	r->off_lo = (uint32_t)((uint64_t)off & 0xffffffffu);
	r->off_hi = (unsigned)((uint64_t)off >> 32) & 0xffffffu;
	r->status = (uint32_t)si;
	r->run = (uint32_t)ri;
	r->ok = ok != 0;
	r->has_run = run != NULL;
	return (long)m->nrecs++;
}

off_t
merge_rec_off(const struct rec *r)
{
	return (off_t)((uint64_t)r->off_hi << 32 | r->off_lo);
}

/*
 * The agent of record k: the last whose first is at most k.  first only
 * grows along m->agents: read_logs sets it for every log in turn, refused
 * or not, and a log not read yet has SIZE_MAX.
 */
uint32_t
merge_rec_agent(const struct merge *m, size_t k)
{
	size_t lo = 0, hi = m->nagents, mid;

	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (m->agents[mid].first <= k)
			lo = mid;
		else
			hi = mid;
	}
	return (uint32_t)lo;
}

/* The agent last named with record k as a duplicate, or NULL. */
static uint32_t *
dup_of(const struct merge *m, size_t k)
{
	size_t pos = 0;

	return corral_fpset_next(m->dups, (uint64_t)k + 1, &pos);
}

/* Record k, kept from another log, is also in agent ai's: say so once. */
static int
duplicate(struct merge *m, size_t k, uint32_t ai, const char *unit,
    struct corral_err *err)
{
	uint32_t *was = dup_of(m, k);

	if (was && *was == ai)
		return 0;
	if (was) {
		*was = ai;
	} else {
		m->st->duplicates++;
		if (corral_fpset_add(m->dups, (uint64_t)k + 1, ai) < 0)
			return merge_nomem(err);
	}
	merge_say(m, "unit '%s' is in both '%s' and '%s'", unit,
	    m->agents[merge_rec_agent(m, k)].path, m->agents[ai].path);
	return 0;
}

/* ------------------------------------------------------------------ */
/* the index of units                                                  */

uint64_t
merge_fp(const struct merge *m, const char *unit, size_t len)
{
	uint64_t fp = corral_fingerprint(unit, len);

	(void)m;
#ifdef CORRAL_TEST_FP_BITS
	/*
	 * The tests' build of corral-merge (the Makefile's FP1_BIN) cuts
	 * every fingerprint to this many bits, so that names collide: a
	 * collision must be settled by the names.
	 */
	fp = (fp & ((UINT64_C(1) << CORRAL_TEST_FP_BITS) - 1)) + 1;
#endif
	return fp;
}

/*
 * Read the line of record k again, from its log, into m->reread.  The
 * last log read this way stays open: a unit met again is most often met
 * again in the same log (a retry).  0, or -1 with err set.
 */
static int
reread_line(struct merge *m, size_t k, struct corral_err *err)
{
	uint32_t ai = merge_rec_agent(m, k);
	const char *path = m->agents[ai].path;
	off_t off = merge_rec_off(&m->recs[k]);
	char chunk[4096], *nl;
	ssize_t n;

	if (m->reread_fd < 0 || m->reread_agent != ai) {
		if (m->reread_fd >= 0)
			close(m->reread_fd);
		if ((m->reread_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return corral_err_set(err, errno, "cannot open '%s'",
			    path);
		m->reread_agent = ai;
	}
	corral_buf_reset(&m->reread);
	while ((n = pread(m->reread_fd, chunk, sizeof(chunk), off)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return corral_err_set(err, errno, "cannot read '%s'",
			    path);
		nl = memchr(chunk, '\n', (size_t)n);
		if (corral_buf_add(&m->reread, chunk, nl ? (size_t)(nl - chunk) :
		    (size_t)n) < 0)
			return merge_nomem(err);
		if (nl)
			break;
		off += n;
	}
	m->reread.len = corral_line_chomp(m->reread.data, m->reread.len);
	return 0;
}

/*
 * 1 when value v of m->units stands for the unit unit[0..len), 0 when it
 * is another unit of the same fingerprint, -1 with err set.  An expected
 * unit's name is read again from the units file, a record's from its
 * log, which must still hold it there.
 */
static int
same_unit(struct merge *m, uint32_t v, const char *unit, size_t len,
    struct corral_err *err)
{
	struct corral_json_record jr;
	const char *name;
	size_t n;
	int same;

	if (v & MERGE_EXPECTED) {
		if ((same = merge_units_line(m, v & ~MERGE_EXPECTED, &name,
		    &n, err)) <= 0)
			return same;
		return n == len && !memcmp(name, unit, len);
	}
	if (reread_line(m, v, err) < 0)
		return -1;
	if (corral_json_record_parse(m->reread.data, m->reread.len, &jr,
	    NULL) < 0) {
		merge_bad(m, "'%s' changed while it was being merged",
		    m->agents[m->reread_agent].path);
		return 0;
	}
	same = strlen(jr.unit) == len && !memcmp(jr.unit, unit, len);
	corral_json_record_release(&jr);
	return same;
}

/*
 * The value of unit[0..len) in m->units, fingerprint fp: 1 with *vp at
 * it, 0 when the unit is not there, -1 with err set.
 */
static int
unit_slot(struct merge *m, const char *unit, size_t len, uint64_t fp,
    uint32_t **vp, struct corral_err *err)
{
	size_t pos = 0;
	int same;

	while ((*vp = corral_fpset_next(m->units, fp, &pos)))
		if ((same = same_unit(m, **vp, unit, len, err)) != 0)
			return same;
	return 0;
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
consider(struct merge *m, uint32_t ai, off_t off,
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
	w->off = off;
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
int
merge_find_winners(struct merge *m, struct corral_err *err)
{
	struct corral_json_record jr;
	struct corral_reader rd;
	size_t i;
	int rc = 0;

	if (m->nlayers < 2)
		return 0;
	if (!(m->win_ix = corral_set_new()))
		return merge_nomem(err);
	for (i = 0; i < m->nagents && rc >= 0; i++) {
		if (m->agents[i].refused)
			continue;
		if (corral_reader_open(&rd, m->agents[i].path, err) < 0)
			return -1;
		while ((rc = corral_reader_next(&rd, err)) > 0) {
			if (rd.torn || corral_line_blank(rd.line, rd.len) ||
			    corral_record_scan(rd.line, rd.len, &jr,
			    &m->scratch, NULL, NULL, NULL) < 0)
				continue;
			rc = consider(m, (uint32_t)i, rd.off, &jr);
			corral_json_record_release(&jr);
			if (rc < 0) {
				merge_nomem(err);
				break;
			}
		}
		corral_reader_close(&rd);
	}
	return rc < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* checking a line                                                     */

/*
 * Another layer holds the attempt of this unit that wins (w): this one is
 * an earlier attempt of the result, which replaced.jsonl keeps for the
 * run's page and trace (history has it only when a merge came between).
 */
static int
layer_lost(const struct merge *m, uint32_t ai, const struct win *w)
{
	return w && m->agents[w->agent].layer != m->agents[ai].layer;
}

/*
 * Note a valid record of agent ai, whose line starts at off.  A unit
 * already kept from the same log is replaced (the last attempt wins); one
 * from another log is a duplicate.  A unit the population lacks is
 * unexpected.  Returns 1 when the line is kept (for now; *kept is its
 * record), 0 when it is not, -1 with err set.
 */
static int
add_record(struct merge *m, uint32_t ai, off_t off,
    const struct corral_json_record *jr, long *kept, struct corral_err *err)
{
	const char *status = jr->status ? jr->status : jr->ok ? "pass" : "fail";
	const struct win *w = winner(m, jr->unit);
	size_t len = strlen(jr->unit);
	uint64_t fp = !jr->doc && m->hinted ? m->hint_fp :
	    merge_fp(m, jr->unit, len);
	uint32_t *vp, *dup;
	long idx, was;
	int found, flaky = 0;

	if (layer_lost(m, ai, w))
		return 0;
	if (w && w->flaky && w->agent == ai && w->off == off) {
		flaky = 1;
		status = "flaky";
	}
	if ((found = unit_slot(m, jr->unit, len, fp, &vp, err)) < 0)
		return -1;
	/* An expected unit no log reported yet counts as new. */
	was = found && !(*vp & MERGE_EXPECTED) ? (long)*vp : -1;
	if (!found && m->o->units) {
		m->st->unexpected++;
		merge_say(m, "unit '%s' in '%s' is not in '%s'", jr->unit,
		    m->agents[ai].path, m->o->units);
	}
	if (was >= 0 && (size_t)was < m->agents[ai].first)
		return duplicate(m, (size_t)was, ai, jr->unit, err);
	/* vp stays valid: push_rec and dups add to other sets. */
	if ((idx = merge_push_rec(m, off, jr->ok, status, jr->run)) < 0)
		return merge_nomem(err);
	m->recs[idx].flaky = flaky;
	m->recs[idx].cached = jr->cached != 0;
	if (was >= 0) {
		m->recs[was].dropped = 1;
		if ((dup = dup_of(m, (size_t)was)) &&
		    corral_fpset_add(m->dups, (uint64_t)idx + 1, *dup) < 0)
			return merge_nomem(err);
		m->agents[ai].redo = 1;
	} else {
		m->st->merged++;
	}
	if (found)
		*vp = (uint32_t)idx;
	else if (corral_fpset_add(m->units, fp, (uint32_t)idx) < 0)
		return merge_nomem(err);
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

/* Write a kept line to its result file: as it is, or as a flaky record. */
static int
route(struct merge *m, const struct rec *r, const char *line, size_t len,
    struct corral_err *err)
{
	struct out *o = r->ok ? &m->succ : &m->fail;

	if (!r->flaky)
		return merge_out_add(o, line, len, 1, err);
	corral_buf_reset(&m->flaky);
	if (corral_json_record_flaky(line, len, &m->flaky) < 0)
		return merge_nomem(err);
	return merge_out_add(o, m->flaky.data, m->flaky.len, 1, err);
}

/* 1 while the input is good, so that writing the results is worth it. */
static int
writing(const struct merge *m)
{
	return !m->st->bad && !m->st->duplicates;
}

/* A unit is coming: fetch its first slot while the line is read on. */
static void
prefetch(void *ctx, const char *unit, size_t len)
{
	struct merge *m = ctx;

	m->hint_fp = merge_fp(m, unit, len);
	m->hinted = 1;
	corral_fpset_prefetch(m->units, m->hint_fp);
}

/*
 * Check one line of agent ai's log, and copy it to its result file while
 * the input is good.  0, or -1 with err set (ENOMEM, a write error).
 */
static int
check_line(struct merge *m, uint32_t ai, struct corral_reader *rd,
    struct corral_err *err)
{
	struct corral_json_record jr;
	struct corral_err e;
	long kept = -1;
	int rc;

	/* A seal was checked before (merge_check_seal); it is not a record. */
	if (corral_line_blank(rd->line, rd->len) ||
	    corral_seal_is(rd->line, rd->len))
		return 0;
	if (rd->torn) {
		merge_bad(m, "'%s' line %zu: no trailing newline (torn write)",
		    rd->path, rd->lineno);
		return 0;
	}
	m->hinted = 0;
	if (corral_record_scan(rd->line, rd->len, &jr, &m->scratch, prefetch,
	    m, &e) < 0) {
		merge_bad(m, "'%s' line %zu: %s", rd->path, rd->lineno, e.msg);
		return 0;
	}
	m->st->attempts++;
	if ((rc = add_record(m, ai, rd->off, &jr, &kept, err)) < 0)
		rc = -1;
	else if (note_at(m, jr.at) < 0)
		rc = merge_nomem(err);
	else if (rc == 1 && writing(m))
		rc = route(m, &m->recs[kept], rd->line, rd->len, err);
	else if (rc == 0 && writing(m) && layer_lost(m, ai,
	    winner(m, jr.unit)))
		rc = merge_out_add(&m->rep, rd->line, rd->len, 1, err);
	else
		rc = 0;
	corral_json_record_release(&jr);
	return rc;
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
		merge_say(m, "%s", b.data);
		rc = corral_strv_add(&m->st->refused, a->path);
	}
	corral_buf_release(&b);
	return rc;
}

static const char seal_head[] = "{\"corral_seal\":";	/* corral_seal_is */
#define SEAL_HEAD (sizeof(seal_head) - 1)

/*
 * 1 when p[0..n) holds a seal's first bytes, else 0 with *keep the bytes
 * at its end that may be the start of some, cut by the read.  By memchr
 * of its '{', which is faster than memmem.
 */
static int
holds_head(const char *p, size_t n, size_t *keep)
{
	const char *q = p, *end = p + n;

	*keep = 0;
	while ((q = memchr(q, '{', (size_t)(end - q)))) {
		if ((size_t)(end - q) < SEAL_HEAD) {
			*keep = (size_t)(end - q);
			return 0;
		}
		if (!memcmp(q, seal_head, SEAL_HEAD))
			return 1;
		q++;
	}
	return 0;
}

/*
 * 0 when the log open on fd holds no line that corral_seal_is would take
 * for a seal: nowhere the bytes a seal starts with.  Then there is nothing
 * to hash, and corral_seal_check_fd would find no seal and nothing broken.
 * 1 when it may hold one, -1 with err set.
 */
static int
may_hold_seal(int fd, const char *path, struct corral_err *err)
{
	char *chunk;
	size_t have = 0, keep;
	off_t off = 0;
	ssize_t n;
	int rc = 0;

	if (!(chunk = malloc(MERGE_OUT_CHUNK)))
		return merge_nomem(err);
	while ((n = pread(fd, chunk + have, MERGE_OUT_CHUNK - have, off))) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = corral_err_set(err, errno, "cannot read '%s'", path);
			break;
		}
		off += n;
		have += (size_t)n;
		if ((rc = holds_head(chunk, have, &keep)))
			break;
		memmove(chunk, chunk + have - keep, keep);
		have = keep;
	}
	free(chunk);
	return rc;
}

/* corral_seal_check_fd, when there may be a seal to check. */
static int
seal_check(int fd, const char *path, struct corral_seal_check *c,
    struct corral_err *err)
{
	int rc;

	memset(c, 0, sizeof(*c));
	if ((rc = may_hold_seal(fd, path, err)) <= 0)
		return rc;
	return corral_seal_check_fd(fd, path, c, NULL, err);
}

/*
 * Check the seal of agent ai's log.  Not being a regular file is left for
 * the main pass to report.  0, or -1 with err set.
 */
int
merge_check_seal(struct merge *m, uint32_t ai, struct corral_err *err)
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
		rc = seal_check(fd, a->path, &c, err);
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
	return rc < 0 ? merge_nomem(err) : 0;
}

/* ------------------------------------------------------------------ */
/* the two passes over one log                                         */

/*
 * Second pass, only for a log where a later line replaced an earlier one
 * that the first pass had already copied: copy the kept lines again.
 */
static int
copy_log(struct merge *m, uint32_t ai, struct corral_reader *rd,
    struct corral_err *err)
{
	struct agent *a = &m->agents[ai];
	size_t k = a->first, end = a->first + a->n;
	struct rec *r;
	int rc = 1;

	if (corral_reader_rewind(rd, err) < 0)
		return -1;
	while (k < end && (rc = corral_reader_next(rd, err)) > 0) {
		while (k < end && m->recs[k].dropped)
			k++;
		if (k == end || rd->off != merge_rec_off(&m->recs[k]))
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
		merge_bad(m, "'%s' changed while it was being merged",
		    rd->path);
	return 0;
}

/*
 * Read agent ai's log: check every line and copy the kept ones.  When a
 * unit comes back later in the same log, what this log wrote is cut off
 * and copied again without the replaced lines.
 */
int
merge_log(struct merge *m, uint32_t ai, struct corral_err *err)
{
	off_t succ = m->succ.size, fail = m->fail.size;
	struct corral_reader rd;
	int rc;

	if (corral_reader_open(&rd, m->agents[ai].path, err) < 0)
		return -1;
	if (m->agents[ai].checked && !same_file(&m->agents[ai].st, &rd.st))
		merge_bad(m, "'%s' changed while it was being merged", rd.path);
	m->agents[ai].first = m->nrecs;
	while ((rc = corral_reader_next(&rd, err)) > 0)
		if (check_line(m, ai, &rd, err) < 0) {
			rc = -1;
			break;
		}
	if (rc == 0 && writing(m) && m->agents[ai].redo &&
	    (merge_out_truncate(&m->succ, succ, err) < 0 ||
	    merge_out_truncate(&m->fail, fail, err) < 0 ||
	    copy_log(m, ai, &rd, err) < 0))
		rc = -1;
	if (rc == 0 && corral_reader_changed(&rd))
		merge_bad(m, "'%s' changed while it was being merged", rd.path);
	corral_reader_close(&rd);
	m->st->agents++;
	return rc;
}
