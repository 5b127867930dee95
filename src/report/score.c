/* See LICENSE file for copyright and license details. */
/*
 * score.c reads a run's merged results back into a tally by verdict: the
 * word before the first colon of each note ("CAUGHT: ..." is CAUGHT), or OK
 * and FAIL by the file a row is in when the note has none.  Membership of
 * successes.jsonl or failures.jsonl decides success, as in the original.
 * A line that cannot be read is counted as unreadable, never as a result:
 * "could not look" and "found nothing" must not read alike.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/base.h"
#include "record/record.h"
#include "report/report-private.h"

/* A verdict is at most this many characters (code points). */
#define VERDICT_MAX 24
#define VERDICT_SIZE (VERDICT_MAX * 4 + 1)

static const char *const result_files[] = {
	"successes.jsonl", "failures.jsonl"
};

/*
 * The verdict of a note, as the original defines it: the text before the
 * first colon, trimmed, when it is not empty, holds no white space and is
 * at most VERDICT_MAX characters; upper-cased (ASCII).  Returns 1
 * and fills out, or 0 (out empty) when the note has none; note may be NULL.
 */
static int
verdict_of(const char *note, char out[VERDICT_SIZE])
{
	const char *colon, *head, *end;
	size_t chars = 0, i, n;

	out[0] = '\0';
	if (!note || !(colon = strchr(note, ':')))
		return 0;
	for (head = note; head < colon && isspace((unsigned char)*head);
	    head++)
		;
	for (end = colon; end > head && isspace((unsigned char)end[-1]); end--)
		;
	n = (size_t)(end - head);
	for (i = 0; i < n; i++) {
		if (isspace((unsigned char)head[i]))
			return 0;
		/* Count code points: every byte but UTF-8 continuations. */
		if (((unsigned char)head[i] & 0xC0) != 0x80)
			chars++;
	}
	if (n == 0 || chars > VERDICT_MAX)
		return 0;
	for (i = 0; i < n; i++)
		out[i] = (char)toupper((unsigned char)head[i]);
	out[n] = '\0';
	return 1;
}

int
corral_score_why(const char *dir, struct corral_buf *why)
{
	struct corral_buf path = CORRAL_BUF_INIT;
	struct stat st;
	size_t i;
	int any = 0, rc;

	if (stat(dir, &st) < 0)
		rc = corral_buf_addf(why, "%s does not exist. I wanted the "
		    "OUTPUT DIRECTORY of a fan-out run -- the folder holding "
		    "successes.jsonl and/or failures.jsonl.", dir);
	else if (!S_ISDIR(st.st_mode))
		rc = corral_buf_addf(why, "%s is a file, not a directory. I "
		    "wanted the OUTPUT DIRECTORY of a fan-out run; pass the "
		    "folder, not one file inside it.", dir);
	else {
		for (i = 0; i < 2; i++) {
			corral_buf_reset(&path);
			if (corral_buf_addf(&path, "%s/%s", dir,
			    result_files[i]) == 0 && stat(path.data, &st) == 0)
				any = 1;
		}
		corral_buf_release(&path);
		if (any)
			return 0;
		rc = corral_buf_addf(why, "%s holds neither successes.jsonl "
		    "nor failures.jsonl, so it is not a fan-out output "
		    "directory. Run a fan-out first, or point me at the folder "
		    "its merge wrote.", dir);
	}
	return rc < 0 ? -1 : 1;
}

static int
count_verdict(struct corral_score *s, const char *verdict)
{
	long *count;
	int put = corral_set_put(s->counts, verdict, 0, &count);

	if (put < 0 || (put == 1 && corral_strv_add(&s->verdicts,
	    verdict) < 0))
		return -1;
	++*count;
	return 0;
}

static int
add_row(void *ctx, const struct corral_json_record *r, int success)
{
	struct corral_score *s = ctx;
	char verdict[VERDICT_SIZE];

	s->units++;
	if (success)
		s->successes++;
	else
		s->failures++;
	s->cached += success && r->cached;
	if (!verdict_of(r->note, verdict))
		strcpy(verdict, success ? "OK" : "FAIL");
	if (count_verdict(s, verdict) < 0)
		return -1;
	if (r->tests >= 0) {
		s->tap_units++;
		s->tests += r->tests;
		s->tests_failed += r->tests_failed > 0 ? r->tests_failed : 0;
		s->tests_skipped += r->tests_skipped > 0 ? r->tests_skipped : 0;
	}
	if (success)
		return 0;
	if (corral_strv_add(&s->failed_unit, r->unit) < 0 ||
	    corral_strv_add(&s->failed_note, r->note ? r->note : "") < 0 ||
	    corral_strv_add(&s->failed_output, r->output ? r->output : "") < 0)
		return -1;
	return 0;
}

int
corral_score_read(const char *dir, struct corral_score *s,
    struct corral_err *err)
{
	struct report_results m = { dir, add_row, s, &s->unreadable, 1 };
	int i, rc;

	memset(s, 0, sizeof(*s));
	if (!(s->counts = corral_set_new()))
		return corral_err_set(err, errno, "scoreboard");
	for (i = 0; i < 2; i++) {
		if ((rc = report_results_read(&m, result_files[i], !i, err)) < 0)
			return -1;
		if (rc == 1 && corral_strv_add(&s->found, result_files[i]) < 0)
			return corral_err_set(err, errno, "scoreboard");
	}
	return 0;
}

long
corral_score_count(const struct corral_score *s, const char *verdict)
{
	long *count = corral_set_get(s->counts, verdict);

	return count ? *count : 0;
}

static const struct corral_score *sort_score;

/* By count, descending; first seen first among equals. */
static int
cmp_verdict(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	long cx = corral_score_count(sort_score, sort_score->verdicts.v[x]);
	long cy = corral_score_count(sort_score, sort_score->verdicts.v[y]);

	if (cx != cy)
		return cx > cy ? -1 : 1;
	return x < y ? -1 : x > y;
}

int
corral_score_order(const struct corral_score *s, const char ***orderp)
{
	const char **order;
	size_t *ix, i, n = s->verdicts.n;

	order = malloc((n + 1) * sizeof(*order));
	ix = malloc((n + 1) * sizeof(*ix));
	if (!order || !ix) {
		free(order);
		free(ix);
		return -1;
	}
	/* qsort is not stable: sort positions, so ties keep their order. */
	for (i = 0; i < n; i++)
		ix[i] = i;
	sort_score = s;
	qsort(ix, n, sizeof(*ix), cmp_verdict);
	for (i = 0; i < n; i++)
		order[i] = s->verdicts.v[ix[i]];
	order[n] = NULL;
	free(ix);
	*orderp = order;
	return 0;
}

void
corral_score_release(struct corral_score *s)
{
	corral_set_free(s->counts);
	corral_strv_release(&s->verdicts);
	corral_strv_release(&s->found);
	corral_strv_release(&s->unreadable);
	corral_strv_release(&s->failed_unit);
	corral_strv_release(&s->failed_note);
	corral_strv_release(&s->failed_output);
	memset(s, 0, sizeof(*s));
}

/* The last CORRAL_TAIL_READ_MAX bytes of the file fd (named path) into b. */
static int
read_end(int fd, const char *path, struct corral_buf *b,
    struct corral_err *err)
{
	char chunk[4096];
	struct stat st;
	ssize_t got;

	if (fstat(fd, &st) < 0)
		return corral_err_set(err, errno, "cannot stat '%s'", path);
	if (st.st_size > CORRAL_TAIL_READ_MAX && lseek(fd, st.st_size -
	    CORRAL_TAIL_READ_MAX, SEEK_SET) < 0)
		return corral_err_set(err, errno, "cannot seek '%s'", path);
	while ((got = read(fd, chunk, sizeof(chunk))) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return corral_err_set(err, errno, "cannot read '%s'",
			    path);
		if (corral_buf_add(b, chunk, (size_t)got) < 0 ||
		    b->len > CORRAL_TAIL_READ_MAX)
			break;
	}
	return 0;
}

int
corral_output_tail(const char *path, size_t n, struct corral_strv *lines,
    struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	const char *p, *end, *nl;
	size_t k = 0, len;
	int fd, rc;

	if ((fd = corral_open_input(path, err)) < 0)
		return -1;
	rc = read_end(fd, path, &b, err);
	close(fd);
	if (rc < 0 || !b.len || !n)
		goto out;
	end = b.data + b.len;
	if (end[-1] == '\n')
		end--;
	/* back from the end to the start of the n-th line before it */
	for (p = end; p > b.data; p--)
		if (p[-1] == '\n' && ++k == n)
			break;
	for (; rc == 0 && p <= end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		nl = nl ? nl : end;
		len = (size_t)(nl - p);
		if (corral_strv_addn(lines, p, len > CORRAL_TAIL_LINE_MAX ?
		    CORRAL_TAIL_LINE_MAX : len) < 0)
			rc = corral_err_set(err, ENOMEM, "tail");
	}
out:
	corral_buf_release(&b);
	return rc;
}
