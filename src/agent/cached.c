/* See LICENSE file for copyright and license details. */
/*
 * cached.c is the agent's side of the result cache: before a unit runs,
 * its key (cache/key.c, over the inputs its last stored result named) is
 * looked up in the local store and then in CORRAL_CACHE; a hit is this
 * run's record of the unit, marked "cached", and the unit does not run.
 * After a pass or a skip, the result goes to every store under the key
 * of what the unit read.  A sample of the hits (CORRAL_CACHE_VERIFY
 * percent) runs anyway after the misses: a verified hit that fails is
 * the unit's result, and its entry goes.  A store that cannot be used
 * is said once and left: the run goes on uncached.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "cache/cache.h"
#include "cache/http.h"
#include "plan/plan.h"
#include "record/record.h"
#include "agent/agent.h"
#include "agent/agent-private.h"
#include "agent/run-private.h"

/* The bytes of a unit's output a stored result keeps: its tail. */
#define TAIL_MAX	4096

/* Say line once for the run: the first agent to make c->warned says it. */
static void
say_once(struct corral_run_cache *c, const char *line)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	int fd = -1;

	if (c->said++)
		return;
	if (c->warned && (fd = open(c->warned, O_WRONLY | O_CREAT | O_EXCL |
	    O_CLOEXEC, 0666)) < 0 && errno == EEXIST)
		return;
	if (fd >= 0)
		close(fd);
	if (c->warn && corral_buf_addf(&b, "%s\n", line) == 0)
		c->warn(NULL, b.data, b.len);
	corral_buf_release(&b);
}

static void
say_broken(struct corral_run_cache *c, struct corral_cache_store *s)
{
	struct corral_buf b = CORRAL_BUF_INIT;

	if (corral_buf_addf(&b, "corral: the cache '%s' cannot be used (%s); "
	    "going on uncached", s->dir, s->why) == 0)
		say_once(c, b.data);
	corral_buf_release(&b);
}

static void
say(struct corral_run_cache *c, const char *msg)
{
	struct corral_buf b = CORRAL_BUF_INIT;

	if (c->warn && corral_buf_addf(&b, "corral: %s\n", msg) == 0)
		c->warn(NULL, b.data, b.len);
	corral_buf_release(&b);
}

/* Keys cannot be made (libcrypto, memory): the slice goes on uncached. */
static void
off(struct corral_run_cache *c, const struct corral_err *why)
{
	struct corral_buf b = CORRAL_BUF_INIT;

	c->off = 1;
	if (corral_buf_addf(&b, "corral: no cache key can be made (%s); going "
	    "on uncached", why->msg) == 0)
		say_once(c, b.data);
	corral_buf_release(&b);
}

/* The shared parts of the keys and the stores, the first time. */
static int
ready(struct corral_run *r, struct corral_err *err)
{
	struct corral_run_cache *c = r->cache;
	size_t i;

	if (c->ready)
		return 0;
	c->ready = 1;
	c->key.src = r->src;
	c->key.exclude = r->exclude;
	for (i = 0; i < 2; i++)
		if (c->store[i].dir && corral_cache_store_open(&c->store[i]) < 0)
			say_broken(c, &c->store[i]);
	if (c->store[0].dir)
		corral_cache_store_note_empty(&c->store[0]);
	return corral_cache_ctx_prepare(&c->key, err);
}

static int
usable(const struct corral_cache_store *s)
{
	return s->dir && !s->broken;
}

/* A store that broke while written is said once. */
static void
after_write(struct corral_run_cache *c, struct corral_cache_store *s, int rc)
{
	if (rc < 0 && s->broken)
		say_broken(c, s);
}

/*
 * Whether the next hit is verified: of h hits, floor(h * P / 100 + u)
 * less floor(u) are, u the slice's phase, so exactly P percent in the
 * long run, and one in 50 hits at the default 2 whatever the phase.
 */
static int
sample(struct corral_run_cache *c)
{
	double a, b;

	if (c->verify <= 0)
		return 0;
	a = (double)c->hits * c->verify / 100 + c->phase;
	b = (double)(c->hits + 1) * c->verify / 100 + c->phase;
	return (long long)b > (long long)a;
}

/* FNV-1a over s and its NUL, from h. */
static unsigned long long
fnv(unsigned long long h, const char *s)
{
	do {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	} while (*s++);
	return h;
}

void
corral_cached_begin(struct corral_run *r)
{
	struct corral_run_cache *c = r->cache;
	unsigned long long h;

	if (!c)
		return;
	c->hits = c->stored = 0;
	corral_strv_release(&c->deferred);
	corral_strv_release(&c->deferred_key);
	/* the run id is random: so is the phase, from one run to the next */
	h = fnv(fnv(0xcbf29ce484222325ULL, r->run ? r->run : ""), r->agent ?
	    r->agent : "");
	h ^= h >> 33;	/* fmix64: every bit of h to the top ones */
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	c->phase = (double)(h >> 11) / 9007199254740992.0;	/* 2^53 */
}

/* The stored output tail at the unit's N.out, its path into out. */
static int
write_tail(struct corral_run *r, size_t n, const char *tail,
    struct corral_buf *out, struct corral_err *err)
{
	if (corral_buf_addf(out, "%s/%zu.out", r->st->outdir, n) < 0)
		return corral_err_set(err, ENOMEM, "cannot run a unit");
	if (!tail || !*tail) {
		corral_buf_release(out);
		return 0;
	}
	/* made when a tail needs it (corral-run-slice -q makes none first) */
	return corral_mkdir_p(r->st->outdir, 0777, err) < 0 ||
	    corral_atomic_file(out->data, tail, strlen(tail),
	    CORRAL_ATOMIC_NO_SYNC, err) < 0 ? -1 : 0;
}

/*
 * This run's record of a hit: the stored result, marked cached; under
 * CORRAL_PARTS = auto its reads are the inputs of its key, so that a
 * fresh clone's history learns them from hits too.
 */
static int
record_hit(struct corral_run *r, size_t n, const struct corral_cache_entry *e,
    const struct corral_strv *inputs, long long weight,
    struct corral_err *err)
{
	struct corral_record_cached cached = { e->run, e->host, e->at, e->key };
	struct corral_buf out = CORRAL_BUF_INIT;
	struct corral_record rec;
	char at[CORRAL_TIME_ISO_SIZE];
	int rc;

	if (write_tail(r, n, e->tail, &out, err) < 0) {
		corral_buf_release(&out);
		return -1;
	}
	corral_time_iso(at);
	memset(&rec, 0, sizeof(rec));
	rec.agent_id = r->agent;
	rec.unit = e->unit;
	rec.ok = 1;
	rec.note = e->note ? e->note : "PASS: exit 0";
	rec.at = at;
	rec.status = e->status;
	rec.exit_code = (int)e->exit_code;
	rec.duration_ms = e->duration_ms;
	rec.attempt = 1;
	rec.run = r->run;
	rec.output = out.data;
	rec.inputs = r->inputs;
	rec.host = r->host;
	rec.reads = r->learn ? inputs : NULL;
	rec.cached = &cached;
	rc = corral_run_write_record(r, &rec, 1, err);
	if (rc == 0)
		corral_live_hit(&r->st->live, e->unit, e->status,
		    e->duration_ms, weight);
	corral_buf_release(&out);
	return rc;
}

/* What a lookup asks each store for, and gets. */
struct ask {
	const char *key, *unit;
	struct corral_cache_entry *e;	/* a result */
	struct corral_strv *inputs;	/* or a manifest */
	struct corral_cache_key *old;
};

static int
ask_one(struct corral_cache_store *s, struct ask *a, struct corral_err *why)
{
	int rc;

	if (a->e)
		return corral_cache_get(s, a->key, a->unit, a->e, why);
	rc = corral_cache_manifest_get(s, a->unit, a->inputs, a->old, why);
	if (rc != 1) {
		corral_strv_release(a->inputs);
		corral_cache_key_release(a->old);
	}
	return rc;
}

/*
 * Each usable store, the local one first, until one answers: 1 and the
 * store's index in *from, else 0.  An entry not trusted is said.
 */
static int
ask_stores(struct corral_run_cache *c, struct ask *a, size_t *from)
{
	struct corral_err why;
	size_t i;
	int rc;

	for (i = 0; i < 2; i++) {
		if (!usable(&c->store[i]))
			continue;
		if ((rc = ask_one(&c->store[i], a, &why)) == 1) {
			*from = i;
			return 1;
		}
		if (rc == 2)
			say(c, why.msg);
		if (c->store[i].broken)	/* an HTTP store that did not answer */
			say_broken(c, &c->store[i]);
	}
	return 0;
}

/* Whether the parts of a and b are the same, in the same order. */
static int
same_parts(const struct corral_cache_key *a, const struct corral_cache_key *b)
{
	size_t i;

	if (a->names.n != b->names.n)
		return 0;
	for (i = 0; i < a->names.n; i++)
		if (strcmp(a->names.v[i], b->names.v[i]) ||
		    strcmp(a->values.v[i], b->values.v[i]))
			return 0;
	return 1;
}

/*
 * A hit that an HTTP CORRAL_CACHE alone held is kept locally too (the
 * next lookup then asks no server), the manifest only when the one the
 * store holds is the one the key was made from (read from the store
 * mfrom, with the same parts as k; a manifest replaced since makes a
 * later local lookup a miss, never a pass).  A directory store answers
 * the next lookup as fast as the local one: nothing of its hit is copied.
 * 1 when it was kept.
 */
static int
keep_local(struct corral_run_cache *c, size_t from, size_t mfrom,
    const struct corral_cache_entry *e, const struct corral_strv *inputs,
    const struct corral_cache_key *k, const struct corral_cache_key *old)
{
	struct corral_cache_store *to = &c->store[0], *at = &c->store[from];

	if (from == 0 || !usable(to) || !corral_http_is_url(at->dir))
		return 0;
	corral_cache_supersede(to, e->unit, k->hex);
	after_write(c, to, corral_cache_put_from(to, at, e));
	after_write(c, to, corral_cache_manifest_put_from(to, mfrom &&
	    same_parts(old, k) ? &c->store[mfrom] : NULL, e->unit, inputs,
	    k));
	return 1;
}

/*
 * Why unit hit, in the local store, for a hit sampled to run again (its
 * record is then the run's, not marked cached): a link of a manifest
 * that holds the key hit -- the local one just kept, or the one read
 * (from the store mfrom) when it has k's parts -- else written.  A hit
 * taken writes no why: its record, marked cached with the key, says it
 * (corral-cache reads it there), and a fully cached run makes no entry
 * in the local store's one why directory, whose lock every -q process
 * would take a unit.
 */
static void
why_hit(struct corral_run_cache *c, const char *unit, int kept,
    size_t mfrom, const struct corral_cache_key *k,
    const struct corral_cache_key *old)
{
	struct corral_cache_store *s = &c->store[0];

	if (!usable(s))
		return;
	if (kept && corral_cache_why_link(s, s, unit) == 0)
		return;
	if (!kept && same_parts(old, k) &&
	    corral_cache_why_link(s, &c->store[mfrom], unit) == 0)
		return;
	corral_cache_why_put(s, unit, 1, k, old);
}

int
corral_cached_lookup(struct corral_run *r, const char *unit, size_t i,
    long long weight, struct corral_err *err)
{
	struct corral_run_cache *c = r->cache;
	struct corral_strv inputs = CORRAL_STRV_INIT;
	struct corral_cache_key old, k;
	struct corral_cache_entry e;
	struct ask man = { NULL, unit, NULL, &inputs, &old }, res;
	struct corral_err why;
	size_t from = 0, mfrom = 0;
	int rc = 0, hit = 0, kept;

	if (!c || c->off)
		return 0;
	if (ready(r, &why) < 0) {
		off(c, &why);
		return 0;
	}
	corral_cache_key_init(&old);
	corral_cache_key_init(&k);
	memset(&e, 0, sizeof(e));
	if (!ask_stores(c, &man, &mfrom) ||
	    corral_cache_key_make(&c->key, unit, &inputs, &k, &why) < 0)
		goto out;
	res = (struct ask){ k.hex, unit, &e, NULL, NULL };
	hit = !c->no_hits && ask_stores(c, &res, &from);
	if (!hit) {
		if (usable(&c->store[0]))
			corral_cache_why_put(&c->store[0], unit, 0, &k, &old);
		goto out;
	}
	kept = keep_local(c, from, mfrom, &e, &inputs, &k, &old);
	if (sample(c)) {
		why_hit(c, unit, kept, mfrom, &k, &old);
		rc = corral_strv_add(&c->deferred, unit) |
		    corral_strv_add(&c->deferred_key, k.hex);
		rc = rc < 0 ? corral_err_set(err, ENOMEM, "cannot run a unit") :
		    2;
	} else
		rc = record_hit(r, i + 1, &e, &inputs, weight, err) < 0 ? -1 :
		    1;
	c->hits++;
out:
	corral_cache_entry_release(&e);
	corral_cache_key_release(&k);
	corral_cache_key_release(&old);
	corral_strv_release(&inputs);
	return rc;
}

/* The last TAIL_MAX bytes of the output at path, malloc'd ("" if none). */
static char *
read_tail(const char *path)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_err err;
	char *t;

	if (!path || corral_read_file(path, &b, &err) < 0 || !b.data)
		return strdup("");
	t = strdup(b.len > TAIL_MAX ? b.data + b.len - TAIL_MAX : b.data);
	corral_buf_release(&b);
	return t;
}

/* What the unit's key is computed over: what it read, else its parts. */
static const struct corral_strv *
inputs_of(struct corral_run *r, const char *unit, const struct outcome *o)
{
	const struct corral_strv *learned;

	if (o->has_reads)
		return &o->reads;
	if (r->cache->learned &&
	    (learned = corral_learned_of(r->cache->learned, unit)))
		return learned;
	return &r->st->cloned;
}

/* e for the outcome o of unit under key. */
static int
entry_of(struct corral_run *r, const char *unit, const struct outcome *o,
    const char *key, struct corral_cache_entry *e)
{
	char at[CORRAL_TIME_ISO_SIZE];

	corral_time_iso(at);
	e->key = strdup(key);
	e->unit = strdup(unit);
	e->status = strdup(o->status);
	e->note = strdup(o->note.data ? o->note.data : "");
	e->run = strdup(r->run ? r->run : "");
	e->host = strdup(r->host ? r->host : "");
	e->at = strdup(at);
	e->tail = read_tail(o->out.data);
	e->exit_code = o->exit_code;
	e->duration_ms = o->ms;
	return e->key && e->unit && e->status && e->note && e->run &&
	    e->host && e->at && e->tail ? 0 : -1;
}

int
corral_cached_store(struct corral_run *r, const char *unit,
    const struct outcome *o)
{
	struct corral_run_cache *c = r->cache;
	const struct corral_strv *inputs;
	struct corral_cache_entry e;
	struct corral_cache_key k;
	struct corral_err err;
	size_t i;

	if (!c || c->off || !o->ok || (strcmp(o->status, "pass") &&
	    strcmp(o->status, "skip")))
		return 0;
	if (ready(r, &err) < 0) {
		off(c, &err);
		return 0;
	}
	inputs = inputs_of(r, unit, o);
	corral_cache_key_init(&k);
	memset(&e, 0, sizeof(e));
	if (corral_cache_key_make(&c->key, unit, inputs, &k, &err) == 0 &&
	    entry_of(r, unit, o, k.hex, &e) == 0)
		for (i = 0; i < 2; i++)
			if (usable(&c->store[i])) {
				if (i == 0)	/* the local one: the last only */
					corral_cache_supersede(&c->store[i],
					    unit, k.hex);
				after_write(c, &c->store[i],
				    corral_cache_put(&c->store[i], &e));
				after_write(c, &c->store[i],
				    corral_cache_manifest_put(&c->store[i], unit,
				    inputs, &k));
			}
	c->stored++;
	corral_cache_entry_release(&e);
	corral_cache_key_release(&k);
	return 0;
}

int
corral_cached_verdict(struct corral_run *r, const char *key,
    struct outcome *o)
{
	size_t i;

	if (o->ok && (!strcmp(o->status, "pass") ||
	    !strcmp(o->status, "skip")))
		return corral_buf_addstr(&o->note, "; CACHE: a cached pass, "
		    "run again to verify it, held");
	for (i = 0; i < 2; i++)
		if (usable(&r->cache->store[i]))
			corral_cache_drop(&r->cache->store[i], key);
	return corral_buf_addstr(&o->note, "; CACHE: the cache held a pass "
	    "its key did not justify (something the unit depends on is not "
	    "in its key); the entry is removed");
}

void
corral_cached_release(struct corral_run_cache *c)
{
	if (!c)
		return;
	corral_cache_ctx_release(&c->key);
	corral_strv_release(&c->deferred);
	corral_strv_release(&c->deferred_key);
}
