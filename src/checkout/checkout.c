/* See LICENSE file for copyright and license details. */
/*
 * checkout.c builds an agent's private clone: a fresh directory holding
 * copies of just the parts (relative paths) of a source tree that the
 * agent's units need, and removes such clones again.  Copies are real
 * copies (copy_file_range or FICLONE where the kernel can, read/write
 * otherwise), never hard links: a unit that writes to its inputs must not
 * reach the source.  A part that is absolute, climbs out with "..", or
 * leads out through a symlink is refused before anything is written; a
 * symlink that stays inside brings its target along (once: links that
 * lead in a circle end), so no link in a clone dangles that did not
 * dangle in the source.  The
 * clone is built under a temporary name and renamed into place, and every
 * clone carries a mark file, so cleanup can refuse to remove anything
 * corral did not make and no clone is ever copied into another.
 *
 * A part written "DIR/" is a directory listed (CORRAL_PARTS = auto learns
 * them): what a unit that lists it depends on is the names in it, not its
 * files.  The clone holds DIR with every entry in it as a placeholder of
 * the same name, type, mode, size and times (a file of that size that
 * reads as zeros, a directory left empty, a link with what it leads to as
 * a placeholder too), so that listing it and stat(2)ing its entries give
 * what they give in the tree, while reading a file the unit was never
 * seen to open gives zeros, not content nothing depends on.  A part that
 * is a file in DIR is copied whole over its placeholder.  The manifest
 * says DIR as one line, "n MODE COUNT SHA256 DIR/": the number of the
 * entries and a digest of their names and types; every directory a
 * manifest lists whole gets that line too, so that a listing learned in
 * the whole tree is a line of the whole tree's manifest.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "checkout/checkout.h"

/* A directory whose mode and times are set once it is full. */
struct dirmeta {
	char *path;
	struct stat st;
};

struct job {
	const char *realsrc;
	const struct corral_strv *exclude;	/* normalised, may be NULL */
	const struct corral_strv *patterns;	/* CORRAL_PARTS_EXCLUDE, or
						   NULL */
	const char *tmp;			/* the clone being built */
	const char *part;			/* the part being copied */
	struct corral_strv *list;		/* manifest mode: no copies */
	struct corral_memo *memo;		/* files' digests, or NULL */
	struct corral_set *followed;		/* link targets brought in */
	struct dirmeta *dirs;
	size_t ndirs, capdirs;
	int shallow;				/* placeholders, not copies */
	struct corral_err *err;
};

static int add_listed(struct job *j, const char *from, const char *rel,
    const struct dirent *de, struct corral_strv *names);
static int copy_entry(struct job *j, const char *rel);
static int is_clone(const char *path);
static int make_parents(struct job *j, const char *rel);
static int names_line(struct job *j, const char *rel, const struct stat *st,
    struct corral_strv *names);

/* 1 when path is root or lies below it. */
static int
is_within(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return path[0] == '/';
	return !strncmp(path, root, n) && (path[n] == '\0' || path[n] == '/');
}


/*
 * Where the symlink at link (inside realsrc) leads, resolved: realpath when
 * the target exists, else the lexical resolution of its text.  NULL with
 * errno set when that cannot be told (ELOOP, ENOMEM).
 */
static char *
link_target(const char *link)
{
	char buf[PATH_MAX], *dir, *lexical, *real;
	ssize_t n;

	if ((real = realpath(link, NULL)) || errno != ENOENT)
		return real;
	if ((n = readlink(link, buf, sizeof(buf) - 1)) < 0)
		return NULL;
	buf[n] = '\0';
	if (buf[0] == '/')
		return strdup(buf);
	if (!(dir = corral_path_dir(link)))
		return NULL;
	real = realpath(dir, NULL);
	free(dir);
	if (!real)
		return NULL;
	lexical = corral_path_join(real, buf);
	free(real);
	if (!lexical)
		return NULL;
	/* absolute: normalise below "/" */
	real = corral_path_normalise(lexical + 1);
	free(lexical);
	if (!real)
		return NULL;
	lexical = malloc(strlen(real) + 2);
	if (lexical)
		sprintf(lexical, "/%s", real);
	free(real);
	return lexical;
}

/* 0 when the symlink at path stays inside realsrc, else -1 with err. */
static int
check_link(const char *realsrc, const char *path, const char *part,
    struct corral_err *err)
{
	char *to = link_target(path);
	int inside;

	const char *rel = path + strlen(realsrc) + 1;

	if (!to)
		return corral_err_set(err, errno, "part '%s': cannot resolve "
		    "symlink '%s'", part, rel);
	inside = is_within(to, realsrc);
	free(to);
	if (!inside)
		return corral_err_set(err, 0, "part '%s': symlink '%s' leads "
		    "outside '%s'", part, rel, realsrc);
	return 0;
}

/* Check every prefix of the normalised part rel for a symlink escape. */
static int
check_prefixes(const char *realsrc, const char *rel, const char *part,
    struct corral_err *err)
{
	struct stat st;
	char *path, *p;
	int rc = 0;

	if (!(path = corral_path_join(realsrc, rel)))
		return corral_err_set(err, errno, "part '%s'", part);
	p = path + strlen(realsrc);
	while (*rel && rc == 0) {
		p = strchr(p + 1, '/');
		if (p)
			*p = '\0';
		if (lstat(path, &st) < 0) {
			if (errno != ENOENT && errno != ENOTDIR)
				rc = corral_err_set(err, errno,
				    "part '%s': cannot stat '%s'", part, path);
			break;
		}
		if (S_ISLNK(st.st_mode))
			rc = check_link(realsrc, path, part, err);
		if (!p)
			break;
		*p = '/';
	}
	free(path);
	return rc;
}

int
corral_part_check(const char *src, const char *part, struct corral_err *err)
{
	char *realsrc, *rel;
	int rc;

	if (corral_path_lexical("part", part, 0, err) < 0)
		return -1;
	if (!(rel = corral_path_normalise(part)))
		return corral_err_set(err, errno, "part '%s'", part);
	if (!(realsrc = realpath(src, NULL))) {
		free(rel);
		return corral_err_set(err, errno, "cannot open '%s'", src);
	}
	rc = check_prefixes(realsrc, rel, part, err);
	free(realsrc);
	free(rel);
	return rc;
}

/* s[0..n) matches pattern p, a trailing '/' of p dropped. */
static int
matches(const char *p, const char *s, size_t n)
{
	char buf[PATH_MAX];
	size_t k = strlen(p);

	if (n >= sizeof(buf) || k >= sizeof(buf))
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (k > 1 && p[k - 1] == '/') {
		char pat[PATH_MAX];

		memcpy(pat, p, k - 1);
		pat[k - 1] = '\0';
		return fnmatch(pat, buf, FNM_PATHNAME) == 0;
	}
	return fnmatch(p, buf, FNM_PATHNAME) == 0;
}

/* Pattern p leaves rel out: see corral_checkout_ignored. */
static int
ignores(const char *p, const char *rel)
{
	const char *c, *slash = strchr(p, '/');
	int anchored = slash && slash[1] != '\0';

	for (c = rel; *c; c = slash ? slash + 1 : c + strlen(c)) {
		slash = strchr(c, '/');
		if (anchored ? matches(p, rel, slash ? (size_t)(slash - rel) :
		    strlen(rel)) : matches(p, c, slash ? (size_t)(slash - c) :
		    strlen(c)))
			return 1;
		if (!slash)
			break;
	}
	return 0;
}

int
corral_checkout_ignored(const struct corral_strv *patterns, const char *rel)
{
	size_t i;

	for (i = 0; patterns && i < patterns->n; i++)
		if (*patterns->v[i] && *rel && ignores(patterns->v[i], rel))
			return 1;
	return 0;
}

static int
excluded(const struct job *j, const char *rel)
{
	size_t i;

	if (corral_checkout_ignored(j->patterns, rel))
		return 1;
	if (!j->exclude)
		return 0;
	for (i = 0; i < j->exclude->n; i++)
		if (is_within(rel, j->exclude->v[i]) && *j->exclude->v[i])
			return 1;
	return 0;
}

static int
remember_dir(struct job *j, const char *path, const struct stat *st)
{
	struct dirmeta *d;

	if (j->ndirs == j->capdirs) {
		j->capdirs = j->capdirs ? j->capdirs * 2 : 32;
		if (!(d = realloc(j->dirs, j->capdirs * sizeof(*d))))
			return corral_err_set(j->err, errno, "checkout");
		j->dirs = d;
	}
	if (!(j->dirs[j->ndirs].path = strdup(path)))
		return corral_err_set(j->err, errno, "checkout");
	j->dirs[j->ndirs++].st = *st;
	return 0;
}

static int
write_chunk(void *fd, const char *p, size_t n)
{
	return corral_write_all(*(int *)fd, p, n);
}

/* Copy bytes fd to fd: a reflink if possible, else the kernel, else us. */
static int
copy_bytes(int in, int out)
{
	ssize_t n;

	if (ioctl(out, FICLONE, in) == 0)
		return 0;
	while ((n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0)) > 0)
		;
	if (n == 0)
		return 0;
	if (errno != EXDEV && errno != EINVAL && errno != ENOSYS &&
	    errno != EOPNOTSUPP)
		return -1;
	if (lseek(in, 0, SEEK_SET) < 0 || ftruncate(out, 0) < 0 ||
	    lseek(out, 0, SEEK_SET) < 0)
		return -1;
	return corral_fd_chunks(in, write_chunk, &out);
}

static int
copy_file(struct job *j, const char *from, const char *to,
    const struct stat *st)
{
	struct timespec times[2];
	int in, out = -1, rc = -1;

	if ((in = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return corral_err_set(j->err, errno, "cannot open '%s'", from);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (out < 0) {
		corral_err_set(j->err, errno, "cannot create '%s'", to);
		goto out;
	}
	times[0] = st->st_atim;
	times[1] = st->st_mtim;
	if (copy_bytes(in, out) < 0 || fchmod(out, st->st_mode & 07777) < 0 ||
	    futimens(out, times) < 0) {
		corral_err_set(j->err, errno, "cannot copy '%s' to '%s'",
		    from, to);
		goto out;
	}
	rc = 0;
out:
	if (out >= 0 && close(out) < 0 && rc == 0)
		rc = corral_err_set(j->err, errno, "cannot write '%s'", to);
	close(in);
	return rc;
}

/*
 * A placeholder of the file from: of its size (a hole that reads as
 * zeros), mode and times.  One that is there already (a copy, or a
 * placeholder of another listing) stays.
 */
static int
place_file(struct job *j, const char *to, const struct stat *st)
{
	struct timespec times[2];
	int out, rc = 0;

	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (out < 0)
		return errno == EEXIST ? 0 : corral_err_set(j->err, errno,
		    "cannot create '%s'", to);
	times[0] = st->st_atim;
	times[1] = st->st_mtim;
	if (ftruncate(out, st->st_size) < 0 ||
	    fchmod(out, st->st_mode & 07777) < 0 || futimens(out, times) < 0)
		rc = corral_err_set(j->err, errno, "cannot create '%s'", to);
	if (close(out) < 0 && rc == 0)
		rc = corral_err_set(j->err, errno, "cannot write '%s'", to);
	return rc;
}

/* A placeholder of a directory: itself, empty (unless it is there). */
static int
place_dir(struct job *j, const char *to, const struct stat *st)
{
	if (mkdir(to, 0700) == 0)
		return remember_dir(j, to, st);
	return errno == EEXIST ? 0 : corral_err_set(j->err, errno,
	    "cannot create '%s'", to);
}

/*
 * Copy a symlink that was checked to stay inside realsrc.  An absolute
 * target is rewritten relative to the link, so the clone's link points into
 * the clone and never back into the source.
 */
static int
copy_link(struct job *j, const char *from, const char *to, const char *rel)
{
	char target[PATH_MAX], *link;
	struct corral_buf b = CORRAL_BUF_INIT;
	const char *p;
	ssize_t n;
	int rc = 0;

	if ((n = readlink(from, target, sizeof(target) - 1)) < 0)
		return corral_err_set(j->err, errno, "cannot read '%s'", from);
	target[n] = '\0';
	link = target;
	if (target[0] == '/') {
		if (!is_within(target, j->realsrc))
			return corral_err_set(j->err, 0,
			    "symlink '%s' leads outside '%s'", from,
			    j->realsrc);
		for (p = strchr(rel, '/'); p; p = strchr(p + 1, '/'))
			rc |= corral_buf_addstr(&b, "../");
		rc |= corral_buf_addstr(&b, target[strlen(j->realsrc)] ?
		    target + strlen(j->realsrc) + 1 : ".");
		if (rc < 0)
			return corral_err_set(j->err, errno, "checkout");
		link = b.data;
	}
	if ((unlink(to) < 0 && errno != ENOENT) || symlink(link, to) < 0)
		rc = corral_err_set(j->err, errno, "cannot create '%s'", to);
	corral_buf_release(&b);
	return rc;
}

static int
copy_dir(struct job *j, const char *from, const char *to, const char *rel,
    const struct stat *st)
{
	struct corral_strv names = CORRAL_STRV_INIT;
	struct dirent *de;
	char *child;
	DIR *d;
	int rc = 0;

	if (!j->list && mkdir(to, 0700) < 0 && errno != EEXIST)
		return corral_err_set(j->err, errno, "cannot create '%s'", to);
	if (!j->list && remember_dir(j, to, st) < 0)
		return -1;
	if (!(d = opendir(from)))
		return corral_err_set(j->err, errno, "cannot open '%s'", from);
	while (rc == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, CORRAL_CLONE_MARK))
			continue;
		/* A manifest says a directory's names too, read on the way. */
		if (j->list && add_listed(j, from, rel, de, &names) < 0)
			rc = -1;
		else if (!(child = corral_path_join(rel, de->d_name)))
			rc = corral_err_set(j->err, errno, "checkout");
		else {
			rc = copy_entry(j, child);
			free(child);
		}
	}
	closedir(d);
	if (rc == 0 && j->list)
		rc = names_line(j, rel, st, &names);
	corral_strv_release(&names);
	return rc;
}

/* 1 when the directory at path is a corral clone (ours or another's). */
static int
is_clone(const char *path)
{
	struct stat st;
	char *mark = corral_path_join(path, CORRAL_CLONE_MARK);
	int yes;

	yes = mark && lstat(mark, &st) == 0 && S_ISREG(st.st_mode);
	free(mark);
	return yes;
}

/*
 * Manifest mode: what a regular file holds, in hex into hex (the digest
 * of its content, from the memo; "-" without one), so that an edit
 * changes the manifest and a touch does not.
 */
static int
file_digest(struct job *j, const char *from, const struct stat *st,
    char hex[CORRAL_SHA256_HEX])
{
	unsigned char md[32];

	if (!j->memo) {
		strcpy(hex, "-");
		return 0;
	}
	if (corral_memo_digest_stat(j->memo, AT_FDCWD, from, st, md) < 0)
		return corral_err_set(j->err, errno, "cannot read '%s'", from);
	corral_sha256_tohex(md, hex);
	return 0;
}

/*
 * Manifest mode: one line for the entry (none for a socket, a FIFO or a
 * device), saying what a copy would hold
 * (type, mode, size, a file's content digest, path, and a link's target),
 * so that any change to what a part's files hold changes the manifest.
 * Symlinks are checked as for a copy.
 */
static int
list_entry(struct job *j, const char *from, const char *rel,
    const struct stat *st)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	char target[PATH_MAX], hex[CORRAL_SHA256_HEX] = "-";
	ssize_t n = -1;
	int type = S_ISDIR(st->st_mode) ? 'd' : S_ISREG(st->st_mode) ? 'f' :
	    S_ISLNK(st->st_mode) ? 'l' : 0;
	int rc;

	if (!type)	/* a socket, FIFO or device: remade as a suite runs */
		return 0;
	if (type == 'l') {
		if (check_link(j->realsrc, from, j->part, j->err) < 0)
			return -1;
		if ((n = readlink(from, target, sizeof(target) - 1)) < 0)
			return corral_err_set(j->err, errno,
			    "cannot read '%s'", from);
		target[n] = '\0';
	}
	if (type == 'f' && file_digest(j, from, st, hex) < 0)
		return -1;
	/* A directory is its entries: its own size only adds noise. */
	rc = corral_buf_addf(&b, "%c %04o %lld %s %s%s%s", type,
	    (unsigned)(st->st_mode & 07777),
	    type == 'd' ? 0LL : (long long)st->st_size, hex,
	    *rel ? rel : ".", n >= 0 ? " -> " : "", n >= 0 ? target : "");
	if (rc < 0 || corral_strv_add(j->list, b.data) < 0)
		rc = corral_err_set(j->err, errno, "manifest");
	corral_buf_release(&b);
	return rc;
}

/* The letter of a listed entry's type; 0: a clone never holds it. */
static int
entry_type(const char *path, unsigned char d_type)
{
	struct stat st;

	if (d_type == DT_UNKNOWN) {
		if (lstat(path, &st) < 0)
			return 0;
		d_type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ?
		    DT_REG : S_ISLNK(st.st_mode) ? DT_LNK :
		    S_ISFIFO(st.st_mode) ? DT_FIFO : DT_UNKNOWN;
	}
	/* a FIFO, as a socket, is what a suite makes as it runs: no input */
	return d_type == DT_DIR ? 'd' : d_type == DT_REG ? 'f' :
	    d_type == DT_LNK ? 'l' : 0;
}

/*
 * How the entry de of a listing is written ("NAME/T", T its type, a
 * link's "NAME/l -> TARGET"), into b; 0 with b empty when a clone never
 * holds it (a socket, a device, a clone of corral's, what is left out).
 */
static int
listed_entry(struct job *j, const char *from, const char *rel,
    const struct dirent *de, struct corral_buf *b)
{
	const char *name = de->d_name;
	char target[PATH_MAX], *path = NULL, *child = NULL;
	ssize_t n = -1;
	int type, rc = -1;

	corral_buf_reset(b);
	/* Most entries need neither path: a file the kernel typed. */
	if ((j->exclude && j->exclude->n) || (j->patterns && j->patterns->n)) {
		if (!(child = corral_path_join(rel, name)))
			goto out;
		if (excluded(j, child))
			goto none;
	}
	if (de->d_type == DT_REG || de->d_type == DT_FIFO)
		type = entry_type(NULL, de->d_type);
	else if ((path = corral_path_join(from, name)))
		type = entry_type(path, de->d_type);
	else
		goto out;
	if (!type || (type == 'd' && is_clone(path)))
		goto none;
	if (type == 'l' && (n = readlink(path, target, sizeof(target) - 1)) >= 0)
		target[n] = '\0';
	if (corral_buf_addstr(b, name) < 0 || corral_buf_addch(b, '/') < 0 ||
	    corral_buf_addch(b, type) < 0 || (n >= 0 &&
	    (corral_buf_addstr(b, " -> ") < 0 ||
	    corral_buf_addstr(b, target) < 0)))
		goto out;
none:
	rc = 0;
out:
	free(path);
	free(child);
	return rc;
}

/* Add the entry de of the directory from (rel) to a listing's names. */
static int
add_listed(struct job *j, const char *from, const char *rel,
    const struct dirent *de, struct corral_strv *names)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	int rc = 0;

	if (listed_entry(j, from, rel, de, &b) < 0 ||
	    (b.len && corral_strv_add(names, b.data) < 0))
		rc = corral_err_set(j->err, errno, "manifest");
	corral_buf_release(&b);
	return rc;
}

/*
 * Manifest mode: the directory rel as a listing, from its names (which
 * it sorts), one line "n MODE COUNT SHA256 REL/" ("./" for the root):
 * how many entries a clone holds in it, and the digest of how they are
 * written, sorted bytewise, each ended by a NUL (which no name holds).
 */
static int
names_line(struct job *j, const char *rel, const struct stat *st,
    struct corral_strv *names)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_sha256 sha = { NULL };
	char hex[CORRAL_SHA256_HEX];
	size_t i;
	int rc;

	corral_strv_sort_unique(names);
	rc = corral_sha256_init(&sha, j->err);
	for (i = 0; rc == 0 && i < names->n; i++)
		rc = corral_sha256_add(&sha, names->v[i],
		    strlen(names->v[i]) + 1, j->err);
	if (rc == 0 && (rc = corral_sha256_peek(&sha, hex, j->err)) == 0 &&
	    (corral_buf_addf(&b, "n %04o %zu %s %s/",
	    (unsigned)(st->st_mode & 07777), names->n, hex,
	    *rel ? rel : ".") < 0 || corral_strv_add(j->list, b.data) < 0))
		rc = corral_err_set(j->err, errno, "manifest");
	corral_sha256_release(&sha);
	corral_buf_release(&b);
	return rc;
}

/* Manifest mode: the directory at from (rel) listed, as its one line. */
static int
list_names(struct job *j, const char *from, const char *rel,
    const struct stat *st)
{
	struct corral_strv names = CORRAL_STRV_INIT;
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (!(d = opendir(from)))
		return corral_err_set(j->err, errno, "cannot open '%s'", from);
	while (rc == 0 && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, CORRAL_CLONE_MARK))
			rc = add_listed(j, from, rel, de, &names);
	closedir(d);
	if (rc == 0)
		rc = names_line(j, rel, st, &names);
	corral_strv_release(&names);
	return rc;
}

/*
 * Where the link at rel (checked to stay inside) leads, relative to the
 * source and normalised: its text read lexically from the link's
 * directory, an absolute one less the source's path.  NULL when that
 * climbs out lexically (through links of its own) or on ENOMEM.
 */
static char *
link_rel(const struct job *j, const char *from, const char *rel)
{
	char text[PATH_MAX], *dir, *joined, *out;
	size_t n = strlen(j->realsrc);
	ssize_t len;

	if ((len = readlink(from, text, sizeof(text) - 1)) < 0)
		return NULL;
	text[len] = '\0';
	if (text[0] == '/')
		return is_within(text, j->realsrc) ?
		    corral_path_normalise(text[n] ? text + n + 1 : "") : NULL;
	if (!(dir = corral_path_dir(rel)))
		return NULL;
	joined = corral_path_join(strcmp(dir, ".") ? dir : "", text);
	free(dir);
	out = joined ? corral_path_normalise(joined) : NULL;
	free(joined);
	return out;
}

/*
 * A link inside the tree brings what it leads to into the clone (or the
 * manifest), so that it never dangles there: the target, once per
 * checkout (the loop guard), with the directories above it.  A target
 * that does not exist, or is left out, is not followed.
 */
static int
follow_link(struct job *j, const char *from, const char *rel)
{
	struct stat st;
	char *to, *path;
	long *kind;
	int rc = 0, fresh;

	if (!(to = link_rel(j, from, rel)))
		return errno == ENOMEM ? corral_err_set(j->err, errno,
		    "checkout") : 0;
	if (!j->followed && !(j->followed = corral_set_new())) {
		free(to);
		return corral_err_set(j->err, errno, "checkout");
	}
	/* A target brought as a placeholder may come again as a copy. */
	if ((fresh = corral_set_put(j->followed, to, j->shallow, &kind)) < 0)
		rc = corral_err_set(j->err, errno, "checkout");
	else if (fresh == 0 && *kind && !j->shallow) {
		fresh = 1;
		*kind = 0;
	}
	path = fresh > 0 ? corral_path_join(j->realsrc, to) : NULL;
	if (path && lstat(path, &st) == 0 && !excluded(j, to)) {
		if (!j->list)
			rc = make_parents(j, to);
		if (rc == 0)
			rc = copy_entry(j, to);
	}
	free(path);
	free(to);
	return rc;
}

/* Copy the entry at rel (normalised, relative to the source). */
static int
copy_entry(struct job *j, const char *rel)
{
	char *from = corral_path_join(j->realsrc, rel), *to = corral_path_join(j->tmp, rel);
	struct stat st;
	int rc = 0;

	if (!from || !to) {
		rc = corral_err_set(j->err, errno, "checkout");
		goto out;
	}
	if (excluded(j, rel))
		goto out;
	if (lstat(from, &st) < 0) {
		rc = corral_err_set(j->err, errno, "cannot stat '%s'", from);
		goto out;
	}
	if (j->list) {
		rc = list_entry(j, from, rel, &st);
		if (rc == 0 && S_ISDIR(st.st_mode) && !is_clone(from))
			rc = copy_dir(j, from, to, rel, &st);
		if (rc == 0 && S_ISLNK(st.st_mode))
			rc = follow_link(j, from, rel);
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		if (!is_clone(from))
			rc = j->shallow ? place_dir(j, to, &st) :
			    copy_dir(j, from, to, rel, &st);
	} else if (S_ISREG(st.st_mode)) {
		rc = j->shallow ? place_file(j, to, &st) :
		    copy_file(j, from, to, &st);
	} else if (S_ISLNK(st.st_mode)) {
		if ((rc = check_link(j->realsrc, from, j->part, j->err)) == 0)
			rc = copy_link(j, from, to, rel);
		if (rc == 0)
			rc = follow_link(j, from, rel);
	} else if (S_ISFIFO(st.st_mode)) {
		if (mkfifo(to, st.st_mode & 07777) < 0 && errno != EEXIST)
			rc = corral_err_set(j->err, errno,
			    "cannot create '%s'", to);
	}	/* sockets and devices are not copied */
out:
	free(from);
	free(to);
	return rc;
}

/* Create the directories above rel in the clone, with their source modes. */
static int
make_parents(struct job *j, const char *rel)
{
	char *p, *sub = strdup(rel), *from, *to;
	struct stat st;
	int rc = 0;

	if (!sub)
		return corral_err_set(j->err, errno, "checkout");
	for (p = strchr(sub, '/'); p && rc == 0; p = strchr(p + 1, '/')) {
		*p = '\0';
		from = corral_path_join(j->realsrc, sub);
		to = corral_path_join(j->tmp, sub);
		if (!from || !to)
			rc = corral_err_set(j->err, errno, "checkout");
		else if (stat(from, &st) < 0)
			rc = corral_err_set(j->err, errno, "cannot stat '%s'",
			    from);
		else if (mkdir(to, 0700) == 0)
			rc = remember_dir(j, to, &st);
		else if (errno != EEXIST)
			rc = corral_err_set(j->err, errno,
			    "cannot create '%s'", to);
		free(from);
		free(to);
		*p = '/';
	}
	free(sub);
	return rc;
}

/* Give every copied directory its mode and times, deepest first. */
static int
finish_dirs(struct job *j)
{
	struct timespec times[2];
	size_t i;
	int rc = 0;

	for (i = j->ndirs; i-- > 0; ) {
		times[0] = j->dirs[i].st.st_atim;
		times[1] = j->dirs[i].st.st_mtim;
		if (rc == 0 && (chmod(j->dirs[i].path,
		    j->dirs[i].st.st_mode & 07777) < 0 ||
		    utimensat(AT_FDCWD, j->dirs[i].path, times, 0) < 0))
			rc = corral_err_set(j->err, errno, "cannot set times "
			    "of '%s'", j->dirs[i].path);
		free(j->dirs[i].path);
	}
	free(j->dirs);
	j->dirs = NULL;
	j->ndirs = j->capdirs = 0;
	return rc;
}

static int
list_missing(struct job *j, const char *part)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	int rc = 0;

	if (corral_buf_addf(&b, "- %s", part) < 0 ||
	    corral_strv_add(j->list, b.data) < 0)
		rc = corral_err_set(j->err, errno, "manifest");
	corral_buf_release(&b);
	return rc;
}

/* A listing in a clone: the directory rel, a placeholder of each entry. */
static int
place_listing(struct job *j, const char *from, const char *rel,
    const struct stat *st)
{
	struct dirent *de;
	char *to, *child;
	DIR *d;
	int rc;

	if (!(to = corral_path_join(j->tmp, rel)))
		return corral_err_set(j->err, errno, "checkout");
	rc = *rel ? place_dir(j, to, st) : remember_dir(j, to, st);
	free(to);
	if (rc < 0)
		return -1;
	if (!(d = opendir(from)))
		return corral_err_set(j->err, errno, "cannot open '%s'", from);
	j->shallow = 1;
	while (rc == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, CORRAL_CLONE_MARK))
			continue;
		if (!(child = corral_path_join(rel, de->d_name)))
			rc = corral_err_set(j->err, errno, "checkout");
		else
			rc = copy_entry(j, child);
		free(child);
	}
	j->shallow = 0;
	closedir(d);
	return rc;
}

/* The part rel that exists at from, st its lstat; listing: "DIR/". */
static int
copy_existing(struct job *j, const char *from, const char *rel,
    const struct stat *st, int listing)
{
	int rc;

	listing = listing && S_ISDIR(st->st_mode) && !is_clone(from);
	if (listing && excluded(j, rel))
		return 0;
	if (j->list)
		return listing ? list_names(j, from, rel, st) :
		    copy_entry(j, rel);
	if ((rc = make_parents(j, rel)) < 0)
		return rc;
	if (listing)
		return place_listing(j, from, rel, st);
	if (*rel == '\0')
		return copy_dir(j, from, j->tmp, rel, st);
	return copy_entry(j, rel);
}

static int
copy_part(struct job *j, const char *part, struct corral_strv *missing)
{
	char *rel = corral_path_normalise(part), *from;
	struct stat st;
	int rc;

	if (!rel)
		return corral_err_set(j->err, errno, "part '%s'", part);
	if (!(from = corral_path_join(j->realsrc, rel))) {
		free(rel);
		return corral_err_set(j->err, errno, "checkout");
	}
	if (lstat(from, &st) < 0) {
		rc = 0;
		if (errno != ENOENT && errno != ENOTDIR)
			rc = corral_err_set(j->err, errno, "cannot stat '%s'",
			    from);
		else if (missing && corral_strv_add(missing, part) < 0)
			rc = corral_err_set(j->err, errno, "checkout");
		else if (j->list && list_missing(j, part) < 0)
			rc = -1;
	} else {
		rc = copy_existing(j, from, rel, &st,
		    corral_path_is_listing(part));
	}
	free(from);
	free(rel);
	return rc;
}

/* 0 when dest may be replaced: absent, an empty directory, or a clone. */
static int
check_dest(const char *dest, struct corral_err *err)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	int empty = 1;

	if (lstat(dest, &st) < 0)
		return errno == ENOENT ? 0 :
		    corral_err_set(err, errno, "cannot stat '%s'", dest);
	if (S_ISDIR(st.st_mode) && is_clone(dest))
		return 0;
	if (S_ISDIR(st.st_mode) && (d = opendir(dest))) {
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				empty = 0;
		closedir(d);
		if (empty)
			return 0;
	}
	return corral_err_set(err, 0,
	    "'%s' exists and is not a corral clone; not replacing it", dest);
}

static char *
make_tmp(const char *dest, struct corral_err *err)
{
	char *tmp;

	if (corral_mkdir_parent(dest, 0777, err) < 0)
		return NULL;
	if (!(tmp = malloc(strlen(dest) + sizeof(".tmp.XXXXXX")))) {
		corral_err_set(err, errno, "checkout");
		return NULL;
	}
	sprintf(tmp, "%s.tmp.XXXXXX", dest);
	if (!mkdtemp(tmp)) {
		corral_err_set(err, errno, "cannot create '%s'", tmp);
		free(tmp);
		return NULL;
	}
	/* mkdtemp makes 0700; a clone gets the usual directory mode. */
	chmod(tmp, 0777 & ~corral_umask());
	return tmp;
}

static int
write_mark(const char *tmp, const char *realsrc, struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	char *mark = corral_path_join(tmp, CORRAL_CLONE_MARK);
	int fd, rc = 0;

	if (!mark || corral_buf_addf(&b, "corral clone of %s\n", realsrc) < 0)
		rc = corral_err_set(err, errno, "checkout");
	else if ((fd = corral_open_state(mark, O_WRONLY | O_CREAT | O_EXCL,
	    0644, err)) < 0)
		rc = -1;
	else if (corral_write_all(fd, b.data, b.len) < 0 || close(fd) < 0)
		rc = corral_err_set(err, errno, "cannot write '%s'", mark);
	free(mark);
	corral_buf_release(&b);
	return rc;
}

/* Check the parts and normalise the exclusions.  0, or -1 with err. */
static int
prepare(const char *src, const struct corral_strv *parts,
    const struct corral_strv *exclude, struct corral_strv *normex,
    struct corral_err *err)
{
	char *rel;
	size_t i;

	for (i = 0; i < parts->n; i++)
		if (corral_part_check(src, parts->v[i], err) < 0)
			return -1;
	for (i = 0; exclude && i < exclude->n; i++) {
		if (!(rel = corral_path_normalise(exclude->v[i])) && errno != EINVAL)
			return corral_err_set(err, errno, "checkout");
		if (rel && corral_strv_add(normex, rel) < 0) {
			free(rel);
			return corral_err_set(err, errno, "checkout");
		}
		free(rel);
	}
	return 0;
}

static int
install_clone(const char *tmp, const char *dest, struct corral_err *err)
{
	if (rmdir(dest) < 0 && errno != ENOENT &&
	    corral_clone_remove(dest, err) < 0)
		return -1;
	if (rename(tmp, dest) < 0)
		return corral_err_set(err, errno, "cannot rename '%s' to '%s'",
		    tmp, dest);
	return 0;
}

int
corral_checkout(const char *src, const struct corral_strv *parts,
    const struct corral_strv *exclude, const struct corral_strv *patterns,
    const char *dest, struct corral_strv *missing, struct corral_err *err)
{
	struct corral_strv normex = CORRAL_STRV_INIT;
	struct job j = { 0 };
	char *realsrc = NULL, *tmp = NULL;
	size_t i;
	int rc = -1;

	if (!(realsrc = realpath(src, NULL))) {
		corral_err_set(err, errno, "cannot open '%s'", src);
		goto out;
	}
	if (prepare(src, parts, exclude, &normex, err) < 0 ||
	    check_dest(dest, err) < 0 || !(tmp = make_tmp(dest, err)))
		goto out;
	j.realsrc = realsrc;
	j.exclude = &normex;
	j.patterns = patterns;
	j.tmp = tmp;
	j.err = err;
	if (write_mark(tmp, realsrc, err) < 0)
		goto fail;
	for (i = 0; i < parts->n; i++) {
		j.part = parts->v[i];
		if (copy_part(&j, parts->v[i], missing) < 0)
			goto fail;
	}
	if (finish_dirs(&j) < 0 || install_clone(tmp, dest, err) < 0)
		goto fail;
	rc = 0;
	goto out;
fail:
	finish_dirs(&j);
	corral_clone_remove(tmp, NULL);
out:
	corral_set_free(j.followed);
	free(tmp);
	free(realsrc);
	corral_strv_release(&normex);
	return rc;
}

int
corral_clone_remove(const char *dest, struct corral_err *err)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd, rc = 0;

	if (lstat(dest, &st) < 0)
		return errno == ENOENT ? 0 :
		    corral_err_set(err, errno, "cannot stat '%s'", dest);
	if (!S_ISDIR(st.st_mode) || !is_clone(dest))
		return corral_err_set(err, 0, "'%s' is not a corral clone; "
		    "not removing it", dest);
	if ((st.st_mode & 0700) != 0700)
		chmod(dest, (st.st_mode & 07777) | 0700);
	if (!(d = corral_dir_open(AT_FDCWD, dest, &fd, err)))
		return -1;
	/* The mark goes last, so a clone half removed is still a clone. */
	while (rc == 0 && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, CORRAL_CLONE_MARK))
			rc = corral_remove_at(fd, de->d_name, err);
	if (rc == 0)
		rc = corral_remove_at(fd, CORRAL_CLONE_MARK, err);
	closedir(d);
	if (rc == 0 && rmdir(dest) < 0 && errno != ENOENT)
		rc = corral_err_set(err, errno, "cannot remove '%s'", dest);
	return rc;
}

/*
 * Whatever is at dest was put there by someone else (a unit that removed
 * or replaced its clone), and dest is a name the caller made its own: it
 * may go, but a directory mounted there is never entered.
 */
int
corral_clone_renew(const char *src, const struct corral_strv *parts,
    const struct corral_strv *exclude, const struct corral_strv *patterns,
    const char *dest, struct corral_err *err)
{
	struct stat st, up;
	char *parent;
	int other;

	if (lstat(dest, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (!(parent = corral_path_join(dest, "..")))
			return corral_err_set(err, errno, "checkout");
		other = stat(parent, &up) == 0 && up.st_dev != st.st_dev;
		free(parent);
		if (other)
			return corral_err_set(err, 0, "'%s' is a mount point; "
			    "not removing it", dest);
	}
	if (corral_remove_tree(dest, err) < 0)
		return -1;
	return corral_checkout(src, parts, exclude, patterns, dest, NULL, err);
}

/* The path of a manifest line: after "- ", or after the four fields. */
static const char *
manifest_path(const char *line)
{
	int fields = line[0] == '-' ? 1 : 4;

	while (fields-- > 0 && (line = strchr(line, ' ')))
		line++;
	return line ? line : "";
}

static int
cmp_manifest(const void *a, const void *b)
{
	return strcmp(manifest_path(*(char *const *)a),
	    manifest_path(*(char *const *)b));
}

int
corral_checkout_manifest(const char *src, const struct corral_strv *parts,
    const struct corral_strv *exclude, const struct corral_strv *patterns,
    struct corral_memo *memo, struct corral_buf *out,
    struct corral_strv *missing, struct corral_err *err)
{
	struct corral_strv normex = CORRAL_STRV_INIT, lines = CORRAL_STRV_INIT;
	struct job j = { 0 };
	char *realsrc;
	size_t i;
	int rc = -1;

	if (!(realsrc = realpath(src, NULL)))
		return corral_err_set(err, errno, "cannot open '%s'", src);
	if (prepare(src, parts, exclude, &normex, err) < 0)
		goto out;
	j.realsrc = realsrc;
	j.exclude = &normex;
	j.patterns = patterns;
	j.tmp = realsrc;
	j.err = err;
	j.list = &lines;
	j.memo = memo;
	for (i = 0; i < parts->n; i++) {
		j.part = parts->v[i];
		if (copy_part(&j, parts->v[i], missing) < 0)
			goto out;
	}
	if (lines.n)
		qsort(lines.v, lines.n, sizeof(*lines.v), cmp_manifest);
	/* Parts that overlap, and links into them, list an entry twice. */
	for (i = 0, rc = 0; i < lines.n && rc == 0; i++)
		if ((i == 0 || strcmp(lines.v[i], lines.v[i - 1])) &&
		    (corral_buf_addstr(out, lines.v[i]) < 0 ||
		    corral_buf_addch(out, '\n') < 0))
			rc = corral_err_set(err, errno, "manifest");
out:
	corral_set_free(j.followed);
	free(realsrc);
	corral_strv_release(&normex);
	corral_strv_release(&lines);
	return rc;
}
