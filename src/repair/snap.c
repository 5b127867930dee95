/* See LICENSE file for copyright and license details. */
/*
 * snap.c looks at a tree and says what changed between two looks.  A
 * snapshot records every regular file with the SHA-256 of its bytes and
 * every symlink with its target, never following a link, so a fix's
 * change set names real files only.  The diff carries regular files; a
 * change to a symlink is refused rather than guessed at.
 */
#define _GNU_SOURCE	/* fdopendir, openat and friends are POSIX 2008 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corral.h"

struct walk {
	struct corral_snap *s;
	const struct corral_strv *skip;
	struct corral_buf path;
	struct corral_err *err;
};

static int walk_dir(struct walk *w, int dirfd, size_t depth);

static int
skipped(const struct walk *w, const char *name, size_t depth, int isdir)
{
	size_t i;

	if (isdir && !strcmp(name, ".git"))
		return 1;
	for (i = 0; depth == 0 && w->skip && i < w->skip->n; i++)
		if (!strcmp(name, w->skip->v[i]))
			return 1;
	return 0;
}

static struct corral_snap_entry *
new_entry(struct corral_snap *s)
{
	struct corral_snap_entry *v;
	size_t cap;

	if (s->n == s->cap) {
		cap = s->cap ? s->cap * 2 : 64;
		if (!(v = realloc(s->v, cap * sizeof(*v))))
			return NULL;
		s->v = v;
		s->cap = cap;
	}
	memset(&s->v[s->n], 0, sizeof(s->v[0]));
	return &s->v[s->n++];
}

static int
add_file(struct walk *w, int dirfd, const char *name)
{
	struct corral_snap_entry *e;
	int fd, rc;

	if (!(e = new_entry(w->s)) || !(e->path = strdup(w->path.data)))
		return corral_err_set(w->err, ENOMEM, "snapshot");
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return corral_err_set(w->err, errno, "cannot open '%s'",
		    w->path.data);
	rc = corral_sha256_fd(fd, w->path.data, e->sha256, w->err);
	close(fd);
	return rc;
}

static int
add_link(struct walk *w, int dirfd, const char *name)
{
	struct corral_snap_entry *e;
	char target[PATH_MAX];
	ssize_t n;

	if ((n = readlinkat(dirfd, name, target, sizeof(target) - 1)) < 0)
		return corral_err_set(w->err, errno, "cannot read '%s'",
		    w->path.data);
	target[n] = '\0';
	if (!(e = new_entry(w->s)) || !(e->path = strdup(w->path.data)) ||
	    !(e->link = strdup(target)))
		return corral_err_set(w->err, ENOMEM, "snapshot");
	return 0;
}

static int
visit(struct walk *w, int dirfd, const char *name, size_t depth)
{
	struct stat st;
	int fd, rc;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : corral_err_set(w->err, errno,
		    "cannot stat '%s'", w->path.data);
	if (skipped(w, name, depth, S_ISDIR(st.st_mode)))
		return 0;
	if (S_ISREG(st.st_mode))
		return add_file(w, dirfd, name);
	if (S_ISLNK(st.st_mode))
		return add_link(w, dirfd, name);
	if (!S_ISDIR(st.st_mode))
		return 0;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0)
		return corral_err_set(w->err, errno, "cannot open '%s'",
		    w->path.data);
	rc = walk_dir(w, fd, depth + 1);	/* closes fd */
	return rc;
}

/* Visit every entry of the directory open at dirfd, then close it. */
static int
walk_dir(struct walk *w, int dirfd, size_t depth)
{
	struct dirent *de;
	size_t len = w->path.len;
	DIR *d;
	int rc = 0;

	if (!(d = fdopendir(dirfd))) {
		rc = corral_err_set(w->err, errno, "cannot open '%s'",
		    len ? w->path.data : ".");
		close(dirfd);
		return rc;
	}
	while (rc == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((len && corral_buf_addch(&w->path, '/') < 0) ||
		    corral_buf_addstr(&w->path, de->d_name) < 0)
			rc = corral_err_set(w->err, ENOMEM, "snapshot");
		else
			rc = visit(w, dirfd, de->d_name, depth);
		w->path.len = len;
		if (w->path.data)
			w->path.data[len] = '\0';
	}
	closedir(d);
	return rc;
}

static int
cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct corral_snap_entry *)a)->path,
	    ((const struct corral_snap_entry *)b)->path);
}

int
corral_snap_take(struct corral_snap *s, const char *dir,
    const struct corral_strv *skip, struct corral_err *err)
{
	struct walk w = { s, skip, CORRAL_BUF_INIT, err };
	int fd, rc;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return corral_err_set(err, errno, "cannot open '%s'", dir);
	if (corral_buf_addstr(&w.path, "") < 0) {
		close(fd);
		return corral_err_set(err, ENOMEM, "snapshot");
	}
	rc = walk_dir(&w, fd, 0);
	corral_buf_release(&w.path);
	if (rc == 0 && s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_entry);
	return rc;
}

void
corral_snap_release(struct corral_snap *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].link);
	}
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

const struct corral_snap_entry *
corral_snap_find(const struct corral_snap *s, const char *path)
{
	struct corral_snap_entry key;

	if (!s->n)
		return NULL;
	key.path = (char *)path;
	return bsearch(&key, s->v, s->n, sizeof(*s->v), cmp_entry);
}

int
corral_changes_add(struct corral_changes *c, const char *path, int action,
    const char *sha, const char *before)
{
	struct corral_change *v, *ch;
	size_t cap;

	if (c->n == c->cap) {
		cap = c->cap ? c->cap * 2 : 8;
		if (!(v = realloc(c->v, cap * sizeof(*v))))
			return -1;
		c->v = v;
		c->cap = cap;
	}
	ch = &c->v[c->n];
	if (!(ch->path = strdup(path)))
		return -1;
	ch->action = action;
	snprintf(ch->sha256, sizeof(ch->sha256), "%s", sha ? sha : "");
	snprintf(ch->before, sizeof(ch->before), "%s", before ? before : "");
	c->n++;
	return 0;
}

void
corral_changes_release(struct corral_changes *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
	c->v = NULL;
	c->n = c->cap = 0;
}

/* One step of the merge-walk: x in a only (b NULL), b only, or both. */
static int
diff_one(const struct corral_snap_entry *x, const struct corral_snap_entry *y,
    struct corral_changes *out, struct corral_err *err)
{
	const char *path = x ? x->path : y->path;
	int rc = 0;

	if ((x && x->link) || (y && y->link)) {
		if (x && y && x->link && y->link && !strcmp(x->link, y->link))
			return 0;
		return corral_err_set(err, 0, "the change to symlink '%s' "
		    "cannot be carried: only regular files are", path);
	}
	if (x && !y)
		rc = corral_changes_add(out, path, CORRAL_ACTION_DELETE, NULL,
		    x->sha256);
	else if (!x)
		rc = corral_changes_add(out, path, CORRAL_ACTION_WRITE,
		    y->sha256, NULL);
	else if (strcmp(x->sha256, y->sha256))
		rc = corral_changes_add(out, path, CORRAL_ACTION_WRITE,
		    y->sha256, x->sha256);
	return rc < 0 ? corral_err_set(err, ENOMEM, "diff") : 0;
}

int
corral_snap_diff(const struct corral_snap *a, const struct corral_snap *b,
    struct corral_changes *out, struct corral_err *err)
{
	size_t i = 0, j = 0;
	int c, rc = 0;

	while (rc == 0 && (i < a->n || j < b->n)) {
		if (i == a->n)
			c = 1;
		else if (j == b->n)
			c = -1;
		else
			c = strcmp(a->v[i].path, b->v[j].path);
		if (c < 0)
			rc = diff_one(&a->v[i++], NULL, out, err);
		else if (c > 0)
			rc = diff_one(NULL, &b->v[j++], out, err);
		else
			rc = diff_one(&a->v[i++], &b->v[j++], out, err);
	}
	return rc;
}
