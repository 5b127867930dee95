/* See LICENSE file for copyright and license details. */
/*
 * live.c is what a running agent shows of itself, apart from its results.
 * In a state directory each agent keeps STATEDIR/agent-ID.status, a file
 * of its own where it appends one line as it starts and one as each unit
 * starts, so that "corral status" can tell from another terminal which
 * unit every agent is on and since when.  The agents of a run also append
 * one short line per finished unit to STATEDIR/ticks -- the one file
 * several agents write, always with a single O_APPEND write(2) of a few
 * bytes, so no line is ever torn or mixed -- from which each agent tallies
 * the whole run for its progress line, which it hands to the caller to
 * print.  None of this is a result: the merge never reads it, and a lost
 * tick costs a wrong count, not a record.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "agent/agent.h"
#include "agent/agent-private.h"

/* The longest unit name a progress line quotes, in bytes. */
#define NAME_MAX_SHOWN	160
/* A terminal is redrawn at most this often by one agent, in ms. */
#define REDRAW_MS	100

void
corral_live_init(struct corral_live *l)
{
	memset(l, 0, sizeof(*l));
	l->statusfd = -1;
	l->tickfd = -1;
}

/* Append b to fd with one write(2); errors are ignored (advisory). */
static void
put(int fd, const struct corral_buf *b)
{
	if (fd >= 0 && b->len)
		(void)!write(fd, b->data, b->len);
}

static int
open_in(const char *dir, const char *name, int flags, struct corral_err *err)
{
	struct corral_buf path = CORRAL_BUF_INIT;
	int fd;

	if (corral_buf_addf(&path, "%s/%s", dir, name) < 0)
		return corral_err_set(err, ENOMEM, "cannot open '%s'", dir);
	fd = corral_open_state(path.data, flags, 0666, err);
	corral_buf_release(&path);
	return fd;
}

int
corral_live_open(struct corral_live *l, const char *statedir,
    const char *agent, const char *run, size_t units, long long weight,
    struct corral_err *err)
{
	struct corral_buf name = CORRAL_BUF_INIT;
	long long now = corral_time_epoch_ms();
	int rc = -1;

	l->t.total = units;
	l->t.weight = weight;
	l->t.start_ms = now;
	l->statedir = statedir;
	if (!statedir)
		return 0;
	if (corral_mkdir_p(statedir, 0777, err) < 0)
		return -1;
	if (corral_buf_addf(&name, "agent-%s.status", agent) < 0) {
		corral_err_set(err, ENOMEM, "cannot start");
		goto out;
	}
	l->statusfd = open_in(statedir, name.data, O_WRONLY | O_CREAT |
	    O_TRUNC | O_APPEND, err);
	l->tickfd = open_in(statedir, "ticks", O_RDWR | O_CREAT | O_APPEND,
	    err);
	if (l->statusfd < 0 || l->tickfd < 0)
		goto out;
	/* This agent's share of the run; its own tally starts from the file. */
	memset(&l->t, 0, sizeof(l->t));
	corral_buf_reset(&l->b);
	if (corral_buf_addf(&l->b, "S %zu %lld %lld\n", units, weight,
	    now) < 0)
		goto nomem;
	put(l->tickfd, &l->b);
	corral_buf_reset(&l->b);
	if (corral_buf_addstr(&l->b, "{\"agent\":") < 0 ||
	    corral_buf_addjson(&l->b, agent, strlen(agent)) < 0 ||
	    corral_buf_addf(&l->b, ",\"pid\":%ld,\"run\":",
	    (long)getpid()) < 0 ||
	    corral_buf_addjson(&l->b, run, strlen(run)) < 0 ||
	    corral_buf_addf(&l->b, ",\"units\":%zu,\"at_ms\":%lld}\n", units,
	    now) < 0)
		goto nomem;
	put(l->statusfd, &l->b);
	rc = 0;
	goto out;
nomem:
	corral_err_set(err, ENOMEM, "cannot start");
out:
	corral_buf_release(&name);
	return rc;
}

void
corral_live_start(struct corral_live *l, const char *unit, size_t i,
    int attempt, long long expect_ms, const char *output)
{
	if (l->statusfd < 0)
		return;
	corral_buf_reset(&l->b);
	if (corral_buf_addstr(&l->b, "{\"unit\":") < 0 ||
	    corral_buf_addjson(&l->b, unit, strlen(unit)) < 0 ||
	    corral_buf_addf(&l->b, ",\"i\":%zu,\"attempt\":%d,\"at_ms\":%lld",
	    i, attempt, corral_time_epoch_ms()) < 0 ||
	    (expect_ms >= 0 && corral_buf_addf(&l->b, ",\"expect_ms\":%lld",
	    expect_ms) < 0) || (output && (corral_buf_addstr(&l->b,
	    ",\"output\":") < 0 || corral_buf_addjson(&l->b, output,
	    strlen(output)) < 0)) || corral_buf_addstr(&l->b, "}\n") < 0)
		return;
	put(l->statusfd, &l->b);
}

/* The tick of a finished unit: one letter for its status, its weight. */
static int
tick_letter(const char *status)
{
	if (!strcmp(status, "pass"))
		return 'p';
	if (!strcmp(status, "flaky"))
		return 'k';
	if (!strcmp(status, "timeout"))
		return 't';
	if (!strcmp(status, "skip"))
		return 's';
	return 'f';
}

static void
tally_tick(struct corral_tally *t, int letter, long long w, long long ms)
{
	t->done++;
	t->wdone += w;
	if (ms >= 0) {
		t->msdone += ms;
		t->timed++;
	}
	switch (letter) {
	case 'p': t->pass++; break;
	case 'k': t->flaky++; break;
	case 't': t->timeout++; break;
	case 's': t->skip++; break;
	default: t->fail++; break;
	}
}

/*
 * "T UNITS": the run will run that many (written before any agent
 * starts); "S UNITS WEIGHT START_MS": an agent began; "E": it ended;
 * "L WEIGHT MS": a unit ended with status letter L after MS (-1: it did
 * not run).
 */
static void
tally_line(struct corral_tally *t, const char *s)
{
	size_t units = 0;
	long long w = 0, start = 0, ms = -1;

	if (s[0] == 'T' && sscanf(s + 1, "%zu", &units) == 1) {
		if (units > t->planned)
			t->planned = units;
		return;
	}
	if (s[0] == 'S' && sscanf(s + 1, "%zu %lld %lld", &units, &w,
	    &start) == 3) {
		t->total += units;
		t->weight += w;
		t->agents++;
		if (!t->start_ms || start < t->start_ms)
			t->start_ms = start;
		return;
	}
	if (s[0] == 'E' && !s[1]) {
		t->agents_done++;
		return;
	}
	if (s[0] && s[1] == ' ' && sscanf(s + 2, "%lld %lld", &w, &ms) >= 1)
		tally_tick(t, s[0], w, ms);
}

/* Fold the ticks written since the last read into t: whole lines only. */
static void
tally_read(int fd, off_t *off, struct corral_tally *t)
{
	char buf[8192], *p, *nl;
	ssize_t n;
	size_t have = 0;

	for (;;) {
		n = pread(fd, buf + have, sizeof(buf) - 1 - have, *off +
		    (off_t)have);
		if (n <= 0)
			return;
		have += (size_t)n;
		buf[have] = '\0';
		for (p = buf; (nl = strchr(p, '\n')); p = nl + 1) {
			*nl = '\0';
			tally_line(t, p);
		}
		*off += (off_t)(p - buf);
		have -= (size_t)(p - buf);
		if (have == sizeof(buf) - 1)
			return;	/* a line longer than any tick: give up */
		memmove(buf, p, have);
	}
}

size_t
corral_tally_total(const struct corral_tally *t)
{
	return t->planned > t->total ? t->planned : t->total;
}

long long
corral_tally_eta(const struct corral_tally *t, const long long *left,
    const long long *ran, size_t n)
{
	size_t total = corral_tally_total(t), pending, i, known = 0;
	size_t agents = t->agents > t->agents_done ?
	    t->agents - t->agents_done : 1;
	double mean = t->timed ? (double)t->msdone / (double)t->timed : -1;
	double work = 0, longest = 0, need;

	pending = total > t->done + n ? total - t->done - n : 0;
	for (i = 0; i < n; i++) {
		if (left[i] >= 0)
			need = (double)left[i];
		else if (mean >= 0)
			need = mean > (double)ran[i] ? mean - (double)ran[i] : 0;
		else
			continue;
		known++;
		work += need;
		if (need > longest)
			longest = need;
	}
	if (mean < 0 && (known < n || !n))
		return t->done >= total && !n ? 0 : -1;
	if (mean >= 0)
		work += (double)pending * mean;
	if (n)
		agents = n;
	return (long long)(work / (double)agents > longest ?
	    work / (double)agents : longest);
}

size_t
corral_live_failures(struct corral_live *l)
{
	if (l->tickfd >= 0)
		tally_read(l->tickfd, &l->tickoff, &l->t);
	return l->t.fail + l->t.timeout;
}

int
corral_live_tally(const char *statedir, struct corral_tally *t,
    struct corral_err *err)
{
	off_t off = 0;
	int fd;

	memset(t, 0, sizeof(*t));
	if ((fd = open_in(statedir, "ticks", O_RDONLY, err)) < 0)
		return errno == ENOENT ? 0 : -1;
	tally_read(fd, &off, t);
	close(fd);
	return 0;
}

/* The unit's name as a progress line shows it: cut, and shown. */
static int
add_name(struct corral_buf *b, const char *unit)
{
	struct corral_buf cut = CORRAL_BUF_INIT;
	int rc;

	rc = corral_add_excerpt(&cut, unit, strlen(unit), NAME_MAX_SHOWN) < 0 ||
	    corral_buf_add_shown(b, cut.data ? cut.data : "", cut.len, 0) < 0 ?
	    -1 : 0;
	corral_buf_release(&cut);
	return rc;
}

/*
 * "12/40 done (10 pass, 1 fail, 0 skip, 1 flaky, 0 timeout), 3.2s
 * elapsed, ETA 9.0s"
 */
static int
add_tally(struct corral_buf *b, const struct corral_tally *t)
{
	long long now = corral_time_epoch_ms(), el;
	char elapsed[32], left[32];

	el = t->start_ms ? now - t->start_ms : 0;
	corral_duration_format(el, elapsed);
	corral_duration_format(corral_tally_eta(t, NULL, NULL, 0), left);
	return corral_buf_addf(b, "%zu/%zu done (%zu pass, %zu fail, %zu "
	    "skip, %zu flaky, %zu timeout), %s elapsed, ETA %s", t->done,
	    corral_tally_total(t), t->pass, t->fail, t->skip, t->flaky,
	    t->timeout, elapsed, left);
}

static int
digits(size_t n)
{
	int d = 1;

	while (n >= 10) {
		n /= 10;
		d++;
	}
	return d;
}

/*
 * One line, one write(2): on a terminal the redrawn tally (a newline once
 * the run is done), elsewhere the finished unit with the count so far.
 */
static void
draw(struct corral_live *l, const char *unit, const char *status,
    long long ms, int attempt, int final)
{
	struct corral_buf *b = &l->b;
	long long now = corral_time_ms();
	char took[32];
	size_t total = corral_tally_total(&l->t);
	int rc = 0, last = final && l->t.done >= total;

	corral_buf_reset(b);
	if (l->tty) {
		if (!last && l->drawn_ms && now - l->drawn_ms < REDRAW_MS)
			return;
		l->drawn_ms = now;
		rc |= corral_buf_addstr(b, "\r\033[Kcorral: ");
		rc |= add_tally(b, &l->t);
		rc |= corral_buf_addstr(b, last ? "\n" : "");
	} else {
		if (l->hit)
			strcpy(took, "cached");
		else
			corral_duration_format(ms, took);
		rc |= corral_buf_addf(b, "corral: [%*zu/%zu] %-7s %6s  ",
		    digits(total), l->t.done, total, status, took);
		rc |= add_name(b, unit);
		if (attempt > 1 || !final)
			rc |= corral_buf_addf(b, " (attempt %d%s)", attempt,
			    final ? "" : ", retrying");
		rc |= corral_buf_addch(b, '\n');
	}
	if (rc == 0)
		l->print(l->print_arg, b->data, b->len);
}

void
corral_live_end(struct corral_live *l, const char *unit, const char *status,
    long long ms, int attempt, int final, long long weight)
{
	long long took = strcmp(status, "not-run") ? ms : -1;

	if (final && l->tickfd >= 0) {
		corral_buf_reset(&l->b);
		if (corral_buf_addf(&l->b, "%c %lld %lld\n",
		    tick_letter(status), weight, took) == 0)
			put(l->tickfd, &l->b);
	} else if (final) {
		tally_tick(&l->t, tick_letter(status), weight, took);
	}
	if (l->tickfd >= 0)
		tally_read(l->tickfd, &l->tickoff, &l->t);
	if (l->print)
		draw(l, unit, status, ms, attempt, final);
}

void
corral_live_hit(struct corral_live *l, const char *unit, const char *status,
    long long ms, long long weight)
{
	l->hit = 1;
	corral_live_end(l, unit, status, ms, 1, 1, weight);
	l->hit = 0;
}

void
corral_live_interrupted(struct corral_live *l)
{
	struct corral_err err;
	int fd = -1;

	if (!l->print || !l->tty)
		return;
	corral_live_failures(l);	/* the run's ticks so far */
	if (!l->t.done)
		return;		/* nothing drawn yet */
	if (l->statedir && (fd = open_in(l->statedir, "interrupted",
	    O_WRONLY | O_CREAT | O_EXCL, &err)) < 0)
		return;		/* another agent ended the line */
	if (fd >= 0)
		close(fd);
	l->print(l->print_arg, "\n", 1);
}

void
corral_live_close(struct corral_live *l, int finished)
{
	if (l->tickfd >= 0) {
		corral_buf_reset(&l->b);
		if (corral_buf_addstr(&l->b, "E\n") == 0)
			put(l->tickfd, &l->b);
	}
	if (finished && l->statusfd >= 0) {
		corral_buf_reset(&l->b);
		if (corral_buf_addf(&l->b, "{\"state\":\"done\",\"at_ms\":%lld}\n",
		    corral_time_epoch_ms()) == 0)
			put(l->statusfd, &l->b);
	}
	if (l->statusfd >= 0)
		close(l->statusfd);
	if (l->tickfd >= 0)
		close(l->tickfd);
	corral_buf_release(&l->b);
	corral_live_init(l);
}

/* ------------------------------------------------------------------ */
/* Reading the agents' status files (corral-status)                    */

/* The first and the last whole line of the file at path. */
static int
first_last(const char *path, struct corral_buf *first, struct corral_buf *last)
{
	struct corral_buf all = CORRAL_BUF_INIT;
	char *nl, *end, *p;
	int rc;

	if ((rc = corral_read_file(path, &all, NULL)) < 0 || !all.len)
		goto out;
	end = all.data + all.len;
	while (end > all.data && end[-1] != '\n')
		end--;	/* a line being written: not yet */
	if (end == all.data)
		goto out;
	nl = memchr(all.data, '\n', (size_t)(end - all.data));
	rc = corral_buf_add(first, all.data, (size_t)(nl - all.data));
	for (p = end - 1; p > all.data && p[-1] != '\n'; p--)
		;
	rc |= corral_buf_add(last, p, (size_t)(end - 1 - p));
out:
	corral_buf_release(&all);
	return rc;
}

static char *
dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Fill a from the first line (who) and the last line (what now). */
static void
read_agent(struct corral_agent_status *a, const char *first, size_t flen,
    const char *last, size_t llen)
{
	struct corral_json_obj o;

	a->state = CORRAL_AGENT_STARTING;
	if (corral_json_obj_parse(first, flen, &o, NULL) == 0) {
		a->pid = corral_json_obj_int(&o, "pid");
		a->run = dup_or_null(corral_json_obj_str(&o, "run"));
		a->units = corral_json_obj_int(&o, "units");
		a->since_ms = corral_json_obj_int(&o, "at_ms");
		corral_json_obj_release(&o);
	}
	if (corral_json_obj_parse(last, llen, &o, NULL) == 0) {
		if (corral_json_obj_str(&o, "unit")) {
			a->state = CORRAL_AGENT_RUNNING;
			a->unit = dup_or_null(corral_json_obj_str(&o, "unit"));
			a->i = corral_json_obj_int(&o, "i");
			a->attempt = corral_json_obj_int(&o, "attempt");
			a->since_ms = corral_json_obj_int(&o, "at_ms");
			a->expect_ms = corral_json_obj_int(&o, "expect_ms");
			a->output = dup_or_null(corral_json_obj_str(&o,
			    "output"));
		} else if (corral_json_obj_str(&o, "state")) {
			a->state = CORRAL_AGENT_DONE;
			a->since_ms = corral_json_obj_int(&o, "at_ms");
		}
		corral_json_obj_release(&o);
	}
	if (a->state != CORRAL_AGENT_DONE &&
	    !corral_pid_alive((pid_t)a->pid))
		a->state = CORRAL_AGENT_GONE;
}

static int
add_agent(struct corral_agent_status **list, size_t *n, const char *dir,
    const char *name)
{
	struct corral_buf path = CORRAL_BUF_INIT, first = CORRAL_BUF_INIT;
	struct corral_buf last = CORRAL_BUF_INIT;
	struct corral_agent_status *a;
	size_t len = strlen(name) - strlen(".status");
	int rc = -1;

	if (!(a = realloc(*list, (*n + 1) * sizeof(*a))))
		return -1;
	*list = a;
	a += *n;
	memset(a, 0, sizeof(*a));
	a->expect_ms = -1;
	if (corral_buf_addf(&path, "%s/%s", dir, name) < 0 ||
	    !(a->agent = strdup(name + 6)))
		goto out;
	a->agent[len - 6] = '\0';
	(*n)++;
	rc = 0;
	if (first_last(path.data, &first, &last) < 0)
		a->state = CORRAL_AGENT_GONE;
	else if (first.len)
		read_agent(a, first.data, first.len, last.data, last.len);
out:
	corral_buf_release(&path);
	corral_buf_release(&first);
	corral_buf_release(&last);
	return rc;
}

static int
is_status_file(const char *name)
{
	size_t n = strlen(name);

	return n > 13 && !strncmp(name, "agent-", 6) &&
	    !strcmp(name + n - 7, ".status");
}

int
corral_live_read(const char *statedir, struct corral_agent_status **listp,
    size_t *np, struct corral_err *err)
{
	struct dirent *de;
	DIR *d;
	int rc = 0;

	*listp = NULL;
	*np = 0;
	if (!(d = opendir(statedir)))
		return corral_err_set(err, errno, "cannot open '%s'", statedir);
	while (rc == 0 && (de = readdir(d)))
		if (is_status_file(de->d_name) && add_agent(listp, np,
		    statedir, de->d_name) < 0)
			rc = corral_err_set(err, ENOMEM, "reading '%s'",
			    statedir);
	closedir(d);
	return rc;
}

void
corral_live_free(struct corral_agent_status *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(list[i].agent);
		free(list[i].run);
		free(list[i].unit);
		free(list[i].output);
	}
	free(list);
}
