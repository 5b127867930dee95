/* See LICENSE file for copyright and license details. */
/*
 * corral-status shows, from another terminal, what a run is doing now:
 * the tally so far, and every agent still running with the unit it is on,
 * for how long, and how long that unit usually takes -- the longest
 * running first, so that "stuck at 95%" has an answer.  It reads
 * OUT/live, where each agent keeps a status file of its own, and, for a
 * unit whose agent has no estimate, OUT/history.jsonl; it never writes
 * anything.  Once no agent runs, the run is over: the time it took, and
 * no ETA.  Exit 0 when an agent is running, 1 when none is, 2
 * when there is no live state to read.  -f UNIT follows one unit's
 * output instead, as it is written (the file its agent names in its
 * status), until the unit ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

static const struct corral_usage use = {
	"corral-status [-hj] [-f UNIT] [OUT]",
	"-f UNIT\tfollow UNIT's output as it runs, until it ends\n"
	"-j\tprint the same as JSON",
	NULL
};

static const char *const states[] = { "starting", "running", "done",
    "gone" };

/* Running first, the longest running first; then by state and agent. */
static int
agent_cmp(const void *x, const void *y)
{
	const struct corral_agent_status *a = x, *b = y;
	int ra = a->state == CORRAL_AGENT_RUNNING;
	int rb = b->state == CORRAL_AGENT_RUNNING;

	if (ra != rb)
		return rb - ra;
	if (ra && a->since_ms != b->since_ms)
		return a->since_ms < b->since_ms ? -1 : 1;
	if (a->state != b->state)
		return (int)a->state - (int)b->state;
	return strcmp(a->agent, b->agent);
}

/* s for a terminal, as every line a person reads (corral_show). */
static void
put_clean(const char *s)
{
	struct corral_buf b = CORRAL_BUF_INIT;

	if (corral_buf_add_shown(&b, s, strlen(s), 0) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	fwrite(b.data, 1, b.len, stdout);
	corral_buf_release(&b);
}

/* The run's elapsed ms: until now, or until its end once it is over. */
static long long
elapsed_ms(const struct corral_tally *t, long long end_ms)
{
	long long now = corral_time_epoch_ms();

	if (!t->start_ms)
		return -1;
	return (end_ms > 0 ? end_ms : now) - t->start_ms;
}

/*
 * The ETA of the run: the units in flight by their estimates (what they
 * usually take less what they have run), the rest at the run's mean, over
 * the agents running now; -1 when nothing tells yet.
 */
static long long
run_eta(const struct corral_agent_status *a, size_t n,
    const struct corral_tally *t)
{
	long long now = corral_time_epoch_ms(), *left, *ran, eta;
	size_t i, k = 0;

	if (!(left = calloc(n + 1, sizeof(*left))) ||
	    !(ran = calloc(n + 1, sizeof(*ran))))
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	for (i = 0; i < n; i++) {
		if (a[i].state != CORRAL_AGENT_RUNNING)
			continue;
		ran[k] = a[i].since_ms >= 0 ? now - a[i].since_ms : 0;
		left[k] = a[i].expect_ms < 0 ? -1 : a[i].expect_ms > ran[k] ?
		    a[i].expect_ms - ran[k] : 0;
		k++;
	}
	eta = corral_tally_eta(t, left, ran, k);
	free(left);
	free(ran);
	return eta;
}

/* end_ms > 0: the run is over, then. */
static void
print_tally(const struct corral_tally *t, long long end_ms, long long eta)
{
	long long el = elapsed_ms(t, end_ms);
	char took[32], left[32];

	corral_duration_format(el, took);
	corral_duration_format(eta, left);
	printf("  %zu/%zu done (%zu pass, %zu fail, %zu skip, %zu flaky, "
	    "%zu timeout), ", t->done, corral_tally_total(t), t->pass, t->fail,
	    t->skip, t->flaky, t->timeout);
	if (end_ms > 0)
		printf("took %s; the run is over\n", took);
	else
		printf("%s elapsed, ETA %s\n", took, left);
}

/*
 * When the run ended, once it is over: no agent runs, and either every
 * unit it planned is done or an agent is gone (killed, interrupted).  0
 * while it is not over (between two agents of a long plan, say).
 */
static long long
run_end(const struct corral_agent_status *a, size_t n,
    const struct corral_tally *t)
{
	long long end = 0;
	size_t i;
	int gone = 0;

	for (i = 0; i < n; i++) {
		if (a[i].state == CORRAL_AGENT_RUNNING ||
		    a[i].state == CORRAL_AGENT_STARTING)
			return 0;
		gone |= a[i].state == CORRAL_AGENT_GONE;
		if (a[i].since_ms > end)
			end = a[i].since_ms;
	}
	if (!n || (!gone && t->done < corral_tally_total(t)))
		return 0;
	return end;
}

/*
 * A running unit whose agent has no estimate gets the one history gives,
 * as a plan would (the plan of this run may predate that history).
 */
static void
estimate_from_history(const char *out, struct corral_agent_status *a,
    size_t n)
{
	struct corral_strv units = CORRAL_STRV_INIT;
	struct corral_weights wt;
	struct corral_buf hist = CORRAL_BUF_INIT;
	struct corral_err err;
	size_t i, k;

	for (i = 0; i < n; i++)
		if (a[i].state == CORRAL_AGENT_RUNNING && a[i].expect_ms < 0 &&
		    a[i].unit && corral_strv_add(&units, a[i].unit) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (units.n && corral_buf_addf(&hist, "%s/history.jsonl", out) == 0 &&
	    corral_weights_history(&wt, &units, hist.data, &err) == 0 &&
	    wt.kind == CORRAL_WEIGHTS_MS)
		for (i = k = 0; i < n; i++)
			if (a[i].state == CORRAL_AGENT_RUNNING &&
			    a[i].expect_ms < 0 && a[i].unit) {
				if (wt.known[k])
					a[i].expect_ms = wt.w[k];
				k++;
			}
	if (units.n)
		corral_weights_release(&wt);
	corral_buf_release(&hist);
	corral_strv_release(&units);
}

static void
print_text(const char *out, const struct corral_agent_status *a, size_t n,
    const struct corral_tally *t)
{
	long long now = corral_time_epoch_ms();
	char took[32], usual[32];
	size_t i, running = 0, done = 0;

	corral_showf(stdout, "corral status  %s", out);
	if (n && a[0].run)
		corral_showf(stdout, "  run %s", a[0].run);
	putchar('\n');
	print_tally(t, run_end(a, n, t), run_eta(a, n, t));
	for (i = 0; i < n; i++) {
		running += a[i].state == CORRAL_AGENT_RUNNING;
		done += a[i].state == CORRAL_AGENT_DONE;
	}
	if (running)
		corral_showf(stdout, "  %-8s %8s %8s  %s\n", "agent", "for", "usually",
		    "unit");
	for (i = 0; i < n && a[i].state == CORRAL_AGENT_RUNNING; i++) {
		corral_duration_format(now - a[i].since_ms, took);
		corral_duration_format(a[i].expect_ms, usual);
		corral_showf(stdout, "  %-8s %8s %8s  ", a[i].agent, took, usual);
		put_clean(a[i].unit);
		corral_showf(stdout, " (%lld of %lld", a[i].i, a[i].units);
		if (a[i].attempt > 1)
			corral_showf(stdout, ", attempt %lld", a[i].attempt);
		corral_showf(stdout, ")\n");
	}
	corral_showf(stdout, "  %zu running, %zu finished", running, done);
	for (; i < n; i++)
		if (a[i].state != CORRAL_AGENT_DONE)
			corral_showf(stdout, ", agent %s %s", a[i].agent,
			    states[a[i].state]);
	putchar('\n');
}

static int
add_agent_json(struct corral_buf *b, const struct corral_agent_status *a,
    long long now)
{
	int rc = 0;

	rc |= corral_buf_addstr(b, "{\"agent\":");
	rc |= corral_buf_addjson(b, a->agent, strlen(a->agent));
	rc |= corral_buf_addf(b, ",\"state\":\"%s\",\"pid\":%lld,\"unit\":",
	    states[a->state], a->pid);
	if (a->unit)
		rc |= corral_buf_addjson(b, a->unit, strlen(a->unit));
	else
		rc |= corral_buf_addstr(b, "null");
	rc |= corral_buf_addf(b, ",\"i\":%lld,\"units\":%lld,\"attempt\":%lld,"
	    "\"for_ms\":%lld,\"expect_ms\":%lld}", a->i, a->units, a->attempt,
	    a->since_ms >= 0 ? now - a->since_ms : -1, a->expect_ms);
	return rc;
}

static void
print_json(const char *out, const struct corral_agent_status *a, size_t n,
    const struct corral_tally *t)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	long long now = corral_time_epoch_ms();
	size_t i;
	int rc = 0;

	rc |= corral_buf_addstr(&b, "{\"dir\":");
	rc |= corral_buf_addjson(&b, out, strlen(out));
	rc |= corral_buf_addstr(&b, ",\"run\":");
	if (n && a[0].run)
		rc |= corral_buf_addjson(&b, a[0].run, strlen(a[0].run));
	else
		rc |= corral_buf_addstr(&b, "null");
	rc |= corral_buf_addf(&b, ",\"total\":%zu,\"done\":%zu,\"pass\":%zu,"
	    "\"fail\":%zu,\"skip\":%zu,\"flaky\":%zu,\"timeout\":%zu,"
	    "\"elapsed_ms\":%lld,\"eta_ms\":%lld,\"over\":%s,\"agents\":[",
	    corral_tally_total(t), t->done, t->pass, t->fail, t->skip, t->flaky,
	    t->timeout, elapsed_ms(t, run_end(a, n, t)), run_end(a, n, t) > 0 ?
	    0 : run_eta(a, n, t), run_end(a, n, t) > 0 ? "true" : "false");
	for (i = 0; i < n; i++) {
		rc |= corral_buf_addstr(&b, i ? "," : "");
		rc |= add_agent_json(&b, &a[i], now);
	}
	rc |= corral_buf_addstr(&b, "]}\n");
	xprint_buf(&b, rc);
}

static int
run_status(const char *out, int json)
{
	struct corral_buf live = CORRAL_BUF_INIT;
	struct corral_agent_status *a;
	struct corral_tally t;
	struct corral_err err;
	size_t n, i;
	int running = 0;

	if (corral_buf_addf(&live, "%s/live", out) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (corral_live_read(live.data, &a, &n, &err) < 0 ||
	    corral_live_tally(live.data, &t, &err) < 0) {
		corral_warn_err(&err);
		corral_warn("no run to show in '%s'", out);
		exit(CORRAL_EXIT_ERR);
	}
	estimate_from_history(out, a, n);
	qsort(a, n, sizeof(*a), agent_cmp);
	if (json)
		print_json(out, a, n, &t);
	else
		print_text(out, a, n, &t);
	for (i = 0; i < n; i++)
		running |= a[i].state == CORRAL_AGENT_RUNNING ||
		    a[i].state == CORRAL_AGENT_STARTING;
	corral_live_free(a, n);
	corral_buf_release(&live);
	return running ? CORRAL_EXIT_OK : CORRAL_EXIT_NO;
}

/* How often -f looks again, in ms. */
#define FOLLOW_MS	100

/* The agents of live, or exit 2 naming out. */
static void
xlive_read(const char *live, const char *out, struct corral_agent_status **a,
    size_t *n)
{
	struct corral_err err;

	if (corral_live_read(live, a, n, &err) < 0) {
		corral_warn_err(&err);
		corral_warn("no run to show in '%s'", out);
		exit(CORRAL_EXIT_ERR);
	}
}

/* The agent running unit with its output said, or NULL; *alive: any runs. */
static const struct corral_agent_status *
running(const struct corral_agent_status *a, size_t n, const char *unit,
    int *alive)
{
	const struct corral_agent_status *on = NULL;
	size_t i;

	*alive = 0;
	for (i = 0; i < n; i++) {
		*alive |= a[i].state == CORRAL_AGENT_RUNNING ||
		    a[i].state == CORRAL_AGENT_STARTING;
		if (a[i].state == CORRAL_AGENT_RUNNING && a[i].unit &&
		    a[i].output && !strcmp(a[i].unit, unit))
			on = &a[i];
	}
	return on;
}

/* What fd holds that was not printed yet, to stdout as it is. */
static void
drain(int fd)
{
	char chunk[8192];
	ssize_t got;

	while ((got = read(fd, chunk, sizeof(chunk))) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			corral_die(CORRAL_EXIT_ERR, "cannot read the output:");
		if (fwrite(chunk, 1, (size_t)got, stdout) != (size_t)got)
			corral_die(CORRAL_EXIT_ERR, "write error:");
	}
	fflush(stdout);
}

/* Follow the output file path (a new one for each attempt). */
static int
reopen(int fd, const char *path)
{
	if (fd >= 0) {
		drain(fd);
		close(fd);
	}
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW)) < 0)
		corral_die(CORRAL_EXIT_ERR, "cannot open '%s':", path);
	return fd;
}

/*
 * -f UNIT: wait while the run lives for an agent to run unit, then print
 * its output as it is written, every attempt's, until the agent is done
 * with it.  0 then; 1 when no agent runs and unit is not running.
 */
static int
follow(const char *out, const char *unit)
{
	const struct timespec pause = { 0, FOLLOW_MS * 1000000L };
	const struct corral_agent_status *on;
	struct corral_buf live = CORRAL_BUF_INIT, path = CORRAL_BUF_INIT;
	struct corral_agent_status *a;
	size_t n;
	int fd = -1, alive, st = -1;

	if (corral_buf_addf(&live, "%s/live", out) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	while (st < 0) {
		xlive_read(live.data, out, &a, &n);
		on = running(a, n, unit, &alive);
		if (on && (fd < 0 || strcmp(path.data, on->output))) {
			corral_buf_reset(&path);
			if (corral_buf_addstr(&path, on->output) < 0)
				corral_die(CORRAL_EXIT_ERR, "out of memory:");
			fd = reopen(fd, path.data);
		}
		if (fd >= 0)
			drain(fd);
		if (!on && fd >= 0)
			st = CORRAL_EXIT_OK;
		else if (!on && !alive) {
			corral_warn("'%s' is not running in '%s'", unit, out);
			st = CORRAL_EXIT_NO;
		}
		corral_live_free(a, n);
		if (st < 0)
			nanosleep(&pause, NULL);
	}
	if (fd >= 0)
		close(fd);
	corral_buf_release(&live);
	corral_buf_release(&path);
	return st;
}

int
main(int argc, char *argv[])
{
	const char *unit = NULL;
	int c, json = 0, status;

	corral_setprogname(argv[0]);
	corral_usage_check(&use, argc, argv);
	while ((c = getopt(argc, argv, "f:hj")) != -1) {
		switch (c) {
		case 'f': unit = optarg; break;
		case 'h': corral_usage(&use, CORRAL_EXIT_OK); break;
		case 'j': json = 1; break;
		default: corral_usage(&use, CORRAL_EXIT_ERR);
		}
	}
	if (argc - optind > 1)
		corral_usage(&use, CORRAL_EXIT_ERR);
	if (unit && json)
		corral_die(CORRAL_EXIT_ERR, "-f and -j may not be given together");
	if (unit)
		status = follow(optind < argc ? argv[optind] : ".corral", unit);
	else
		status = run_status(optind < argc ? argv[optind] : ".corral",
		    json);
	xflush_stdout();
	return status;
}
