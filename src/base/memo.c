/* See LICENSE file for copyright and license details. */
/*
 * memo.c remembers the SHA-256 of a file's content by what stat(2) says
 * of it, as git's index does: an entry is (device, inode, size, mtime,
 * ctime, digest), and a file whose stat still says all five gets its
 * digest back without a read.  The memo is one text file, written whole
 * (temporary, fsync, rename) and only when it changed; one that is
 * missing, foreign or torn is an empty memo, and a line that does not
 * parse is dropped, never an error.
 *
 * A stat that matches is not always the same content (racy git): a file
 * changed again within the clock tick of its mtime keeps its mtime and
 * ctime.  So an entry is trusted only when its mtime and ctime are both
 * older than the memo file's own mtime (the time it was written, by the
 * same clock that stamps the files), and a digest is remembered at all
 * only when the file's times were already older than the coarse clock
 * when its content was read.  An entry loaded untrusted and not read
 * again is dropped on save, or the new write time would vouch for it.
 */
#define _GNU_SOURCE
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"

#define MEMO_HEADER "corral-memo 1\n"
/* Saves an entry outlives without being used (files gone, inodes reused). */
#define MEMO_MAX_AGE 16

struct entry {
	uint64_t dev, ino;
	long long size;
	struct timespec mtime, ctime;
	unsigned char digest[32];
	unsigned age;
	unsigned trusted : 1;	/* a match may be believed */
	unsigned keep : 1;	/* worth saving */
	unsigned used : 1;	/* looked up this time */
};

struct corral_memo {
	char *path;			/* NULL: in memory only */
	struct timespec written;	/* the memo file's mtime when read */
	struct entry *v;
	size_t n, cap;
	struct corral_set *index;	/* (dev, ino) -> index in v */
	int changed;
};

/* ------------------------------------------------------------------ */
/* reading                                                             */

static int
ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	    (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static int
ts_equal(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* A decimal number at *p up to a space or end, below max: 0, or -1. */
static int
parse_num(const char **p, const char *end, uint64_t max, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (s == end || *s < '0' || *s > '9')
		return -1;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (v > (max - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	*p = s;
	return 0;
}

/* The separator c at *p, stepped over: 0, or -1. */
static int
expect(const char **p, const char *end, char c)
{
	if (*p == end || **p != c)
		return -1;
	(*p)++;
	return 0;
}

/* SEC.NSEC (exactly nine digits of nanoseconds). */
static int
parse_time(const char **p, const char *end, struct timespec *ts)
{
	const char *start;
	uint64_t sec, nsec;

	if (parse_num(p, end, INT64_MAX, &sec) < 0 || expect(p, end, '.') < 0)
		return -1;
	start = *p;
	if (parse_num(p, end, 999999999, &nsec) < 0 || *p - start != 9)
		return -1;
	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = (long)nsec;
	return 0;
}

/* The value of each byte as a hex digit, 16 for a byte that is none. */
static unsigned char hexval[256];

static void
hex_table(void)
{
	int c;

	if (hexval[0])
		return;
	memset(hexval, 16, sizeof(hexval));
	for (c = 0; c < 10; c++)
		hexval['0' + c] = (unsigned char)c;
	for (c = 0; c < 6; c++)
		hexval['a' + c] = (unsigned char)(10 + c);
}

/* 64 lowercase hex digits into out[32]. */
static int
parse_digest(const char **p, const char *end, unsigned char out[32])
{
	const unsigned char *s = (const unsigned char *)*p;
	unsigned hi, lo;
	int i;

	if (end - *p < 64)
		return -1;
	hex_table();
	for (i = 0; i < 32; i++) {
		hi = hexval[s[2 * i]];
		lo = hexval[s[2 * i + 1]];
		if ((hi | lo) & 16)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	*p += 64;
	return 0;
}

/* "DEV INO SIZE MTIME CTIME DIGEST AGE", the whole of [p, end). */
static int
parse_line(const char *p, const char *end, struct entry *e)
{
	uint64_t size, age;

	memset(e, 0, sizeof(*e));
	if (parse_num(&p, end, UINT64_MAX, &e->dev) < 0 ||
	    expect(&p, end, ' ') < 0 ||
	    parse_num(&p, end, UINT64_MAX, &e->ino) < 0 ||
	    expect(&p, end, ' ') < 0 ||
	    parse_num(&p, end, INT64_MAX, &size) < 0 ||
	    expect(&p, end, ' ') < 0 || parse_time(&p, end, &e->mtime) < 0 ||
	    expect(&p, end, ' ') < 0 || parse_time(&p, end, &e->ctime) < 0 ||
	    expect(&p, end, ' ') < 0 || parse_digest(&p, end, e->digest) < 0 ||
	    expect(&p, end, ' ') < 0 ||
	    parse_num(&p, end, MEMO_MAX_AGE, &age) < 0 || p != end)
		return -1;
	e->size = (long long)size;
	e->age = (unsigned)age;
	return 0;
}

/* The entry of (dev, ino), or NULL. */
static struct entry *
find(const struct corral_memo *m, uint64_t dev, uint64_t ino)
{
	uint64_t key[2] = { dev, ino };
	long *at = corral_set_getn(m->index, (const char *)key, sizeof(key));

	return at ? &m->v[*at] : NULL;
}

/* e added (a copy); 0, or -1 with errno ENOMEM. */
static int
add(struct corral_memo *m, const struct entry *e)
{
	uint64_t key[2] = { e->dev, e->ino };
	struct entry *v;
	size_t cap;

	if (m->n == m->cap) {
		cap = m->cap ? 2 * m->cap : 256;
		if (!(v = realloc(m->v, cap * sizeof(*v))))
			return -1;
		m->v = v;
		m->cap = cap;
	}
	if (corral_set_putn(m->index, (const char *)key, sizeof(key),
	    (long)m->n, NULL) < 0)
		return -1;
	m->v[m->n++] = *e;
	return 0;
}

/* The lines of text[0..n) after the header, each a loaded entry. */
static int
load(struct corral_memo *m, const char *text, size_t n)
{
	const char *p = text, *end = text + n, *nl;
	struct entry e;
	size_t hl = strlen(MEMO_HEADER);

	if (n < hl || memcmp(text, MEMO_HEADER, hl))
		return 0;	/* not a memo of ours: empty */
	for (p += hl; p < end; p = nl + 1) {
		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			break;	/* a torn last line */
		if (parse_line(p, nl, &e) < 0 || find(m, e.dev, e.ino))
			continue;
		e.trusted = ts_before(&e.mtime, &m->written) &&
		    ts_before(&e.ctime, &m->written);
		e.keep = e.trusted;
		if (add(m, &e) < 0)
			return -1;
	}
	return 0;
}

/* Read the memo file at m->path, if there is a regular file there. */
static int
read_memo(struct corral_memo *m)
{
	struct corral_buf text = CORRAL_BUF_INIT;
	struct stat st;
	int fd, rc = 0;

	fd = open(m->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
	    O_NOCTTY);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		m->written = st.st_mtim;
		if (corral_fd_chunks(fd, corral_buf_eat, &text) == 0)
			rc = load(m, text.data ? text.data : "", text.len);
		else if (errno == ENOMEM)
			rc = -1;
	}
	close(fd);
	corral_buf_release(&text);
	return rc;
}

struct corral_memo *
corral_memo_open(const char *memo_path)
{
	struct corral_memo *m = calloc(1, sizeof(*m));

	if (!m || !(m->index = corral_set_new()) ||
	    (memo_path && !(m->path = strdup(memo_path))) ||
	    (m->path && read_memo(m) < 0)) {
		corral_memo_free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

void
corral_memo_free(struct corral_memo *m)
{
	if (!m)
		return;
	corral_set_free(m->index);
	free(m->v);
	free(m->path);
	free(m);
}

/* ------------------------------------------------------------------ */
/* digests                                                             */

/* Whether st still describes e (the same file, unchanged as stat sees). */
static int
same_stat(const struct entry *e, const struct stat *st)
{
	return e->dev == (uint64_t)st->st_dev &&
	    e->ino == (uint64_t)st->st_ino &&
	    e->size == (long long)st->st_size &&
	    ts_equal(&e->mtime, &st->st_mtim) &&
	    ts_equal(&e->ctime, &st->st_ctim);
}

static void
fill(struct entry *e, const struct stat *st)
{
	e->dev = (uint64_t)st->st_dev;
	e->ino = (uint64_t)st->st_ino;
	e->size = (long long)st->st_size;
	e->mtime = st->st_mtim;
	e->ctime = st->st_ctim;
}

/*
 * The content of relpath (st its lstat) into e->digest, *stable when the
 * file's stat after the read is what it was before: 0, or -1 with errno
 * (EAGAIN: another file is there now).
 */
static int
read_digest(int dirfd, const char *relpath, const struct stat *st,
    struct entry *e, int *stable)
{
	struct corral_err err;
	struct stat now;
	char hex[CORRAL_SHA256_HEX];
	const char *p = hex;
	int fd, rc = -1;

	if ((fd = openat(dirfd, relpath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC | O_NOCTTY)) < 0)
		return -1;
	err.errnum = 0;
	if (fstat(fd, &now) < 0)
		goto out;
	if (now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		errno = EAGAIN;
		goto out;
	}
	if (corral_sha256_fd(fd, relpath, hex, &err) < 0) {
		errno = err.errnum ? err.errnum : EIO;
		goto out;
	}
	if (fstat(fd, &now) < 0)
		goto out;
	(void)parse_digest(&p, hex + 64, e->digest);
	*stable = same_stat(e, &now);
	rc = 0;
out:
	if (rc < 0) {
		int saved = errno;

		close(fd);
		errno = saved;
	} else
		close(fd);
	return rc;
}

/*
 * Whether the times of st lie before the coarse clock (the one that
 * stamps files): a change in this tick could not keep them.
 */
static int
settled(const struct stat *st)
{
	struct timespec now;

	if (clock_gettime(CLOCK_REALTIME_COARSE, &now) < 0)
		return 0;
	return ts_before(&st->st_mtim, &now) && ts_before(&st->st_ctim, &now);
}

/* Remember e (fresh from a read) in m, replacing what (dev, ino) had. */
static int
remember(struct corral_memo *m, struct entry *e)
{
	struct entry *old = find(m, e->dev, e->ino);

	if (old) {
		if (!old->keep || !e->keep ||
		    memcmp(old->digest, e->digest, 32) ||
		    !ts_equal(&old->mtime, &e->mtime) ||
		    !ts_equal(&old->ctime, &e->ctime) || old->size != e->size)
			m->changed = 1;
		*old = *e;
		return 0;
	}
	if (e->keep)
		m->changed = 1;
	return add(m, e);
}

int
corral_memo_digest_stat(struct corral_memo *m, int dirfd,
    const char *relpath, const struct stat *lst, unsigned char out[32])
{
	struct entry *hit, e;
	struct stat st;
	int stable, tries = 0, was;

again:
	if (lst && !tries)
		st = *lst;
	else if (fstatat(dirfd, relpath, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		errno = S_ISDIR(st.st_mode) ? EISDIR : S_ISLNK(st.st_mode) ?
		    ELOOP : EINVAL;
		return -1;
	}
	hit = find(m, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	if (hit && hit->trusted && same_stat(hit, &st)) {
		hit->used = 1;
		memcpy(out, hit->digest, 32);
		return 0;
	}
	memset(&e, 0, sizeof(e));
	fill(&e, &st);
	was = settled(&st);
	if (read_digest(dirfd, relpath, &st, &e, &stable) < 0) {
		if (errno == EAGAIN && ++tries < 3)
			goto again;
		return -1;
	}
	e.trusted = e.keep = e.used = was && stable;
	memcpy(out, e.digest, 32);
	return remember(m, &e) < 0 ? (errno = ENOMEM, -1) : 0;
}

int
corral_memo_digest(struct corral_memo *m, int dirfd, const char *relpath,
    unsigned char out[32])
{
	return corral_memo_digest_stat(m, dirfd, relpath, NULL, out);
}

/* ------------------------------------------------------------------ */
/* saving                                                              */

/* e as its line, into b. */
static int
add_line(struct corral_buf *b, const struct entry *e)
{
	char hex[CORRAL_SHA256_HEX];

	corral_sha256_tohex(e->digest, hex);
	return corral_buf_addf(b, "%llu %llu %lld %lld.%09ld %lld.%09ld %s "
	    "%u\n", (unsigned long long)e->dev, (unsigned long long)e->ino,
	    e->size, (long long)e->mtime.tv_sec, e->mtime.tv_nsec,
	    (long long)e->ctime.tv_sec, e->ctime.tv_nsec, hex,
	    e->used ? 0 : e->age + 1);
}

/* The memo as the text of its file, into b. */
static int
format(const struct corral_memo *m, struct corral_buf *b)
{
	size_t i;

	if (corral_buf_addstr(b, MEMO_HEADER) < 0)
		return -1;
	for (i = 0; i < m->n; i++)
		if (m->v[i].keep && (m->v[i].used ||
		    m->v[i].age < MEMO_MAX_AGE) && add_line(b, &m->v[i]) < 0)
			return -1;
	return 0;
}

int
corral_memo_save(struct corral_memo *m)
{
	struct corral_buf text = CORRAL_BUF_INIT;
	struct corral_err err;
	struct stat st;
	int rc = 0;

	if (!m->path || !m->changed)
		return 0;
	if (lstat(m->path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* Planted: never followed, never replaced. */
		errno = S_ISLNK(st.st_mode) ? ELOOP : EEXIST;
		return -1;
	}
	if (format(m, &text) < 0)
		rc = -1;
	else if (corral_atomic_file(m->path, text.data, text.len, 0,
	    &err) < 0) {
		rc = -1;
		errno = err.errnum ? err.errnum : EEXIST;
	} else
		m->changed = 0;
	corral_buf_release(&text);
	return rc;
}
