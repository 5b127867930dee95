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

#include "base/base.h"
#include "base/json.h"
#include "repair/repair.h"
#include "repair/repair-private.h"

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

/* ------------------------------------------------------------------ */
/* The "files" array of a manifest and of an attempt's result          */

/* A digest member: absent or null -> "", else 64 lowercase hex digits. */
static int
digest_member(const cJSON *obj, const char *key, char out[CORRAL_SHA256_HEX],
    struct corral_err *err)
{
	const cJSON *v;

	out[0] = '\0';
	if (cj_member(obj, key, cj_is_string, "a string", 0, &v, err) < 0)
		return -1;
	if (!v)
		return 0;
	if (!corral_sha256_valid(v->valuestring))
		return corral_err_set(err, 0, "\"%s\" '%s' is not a SHA-256 "
		    "digest", key, v->valuestring);
	memcpy(out, v->valuestring, CORRAL_SHA256_HEX);
	return 0;
}

static int
file_entry(const cJSON *f, struct corral_changes *c, struct corral_err *err)
{
	char sha[CORRAL_SHA256_HEX], before[CORRAL_SHA256_HEX];
	const cJSON *path, *action;
	struct corral_err e;
	int act;

	if (!cJSON_IsObject(f))
		return corral_err_set(err, 0, "a file entry is not an object");
	if (cj_member(f, "path", cj_is_string, "a string", 1, &path, err) < 0 ||
	    cj_member(f, "action", cj_is_string, "a string", 1, &action,
	    err) < 0)
		return -1;
	if (!strcmp(action->valuestring, "write"))
		act = CORRAL_ACTION_WRITE;
	else if (!strcmp(action->valuestring, "delete"))
		act = CORRAL_ACTION_DELETE;
	else
		return corral_err_set(err, 0, "'%s': action '%s' is neither "
		    "write nor delete", path->valuestring,
		    action->valuestring);
	if (digest_member(f, "sha256", sha, &e) < 0 ||
	    digest_member(f, "expected_before", before, &e) < 0)
		return corral_err_set(err, 0, "'%s': %s", path->valuestring,
		    e.msg);
	if ((act == CORRAL_ACTION_WRITE) != (sha[0] != '\0'))
		return corral_err_set(err, 0, "'%s': a %s %s \"sha256\"",
		    path->valuestring, action->valuestring,
		    sha[0] ? "has no" : "needs a");
	if (corral_changes_add(c, path->valuestring, act, sha, before) < 0)
		return corral_err_set(err, ENOMEM, "parse");
	return 0;
}

int
corral_json_files_parse(const cJSON *obj, struct corral_changes *c,
    struct corral_err *err)
{
	const cJSON *files, *f;

	if (cj_member(obj, "files", cj_is_array, "an array", 1, &files,
	    err) < 0)
		return -1;
	cJSON_ArrayForEach(f, files)
		if (file_entry(f, c, err) < 0)
			return -1;
	return 0;
}

static int
add_indent(struct corral_buf *b, int indent, int depth)
{
	int i, rc = 0;

	if (!indent)
		return 0;
	rc = corral_buf_addch(b, '\n');
	for (i = 0; i < indent * depth && rc == 0; i++)
		rc = corral_buf_addch(b, ' ');
	return rc;
}

static int
add_digest(struct corral_buf *b, const char *sha)
{
	return *sha ? corral_buf_addf(b, "\"%s\"", sha) :
	    corral_buf_addstr(b, "null");
}

int
corral_json_files(struct corral_buf *b, const struct corral_changes *c,
    int indent, int depth)
{
	const char *sep = indent ? ": " : ":";
	const struct corral_change *ch;
	size_t i;
	int rc;

	if (!c->n)
		return corral_buf_addstr(b, "[]");
	rc = corral_buf_addch(b, '[');
	for (i = 0; i < c->n && rc == 0; i++) {
		ch = &c->v[i];
		rc |= i ? corral_buf_addch(b, ',') : 0;
		rc |= add_indent(b, indent, depth + 1);
		rc |= corral_buf_addch(b, '{');
		rc |= add_indent(b, indent, depth + 2);
		rc |= corral_buf_addf(b, "\"action\"%s\"%s\",", sep,
		    ch->action == CORRAL_ACTION_WRITE ? "write" : "delete");
		rc |= add_indent(b, indent, depth + 2);
		rc |= corral_buf_addf(b, "\"expected_before\"%s", sep);
		rc |= add_digest(b, ch->before);
		rc |= corral_buf_addch(b, ',');
		rc |= add_indent(b, indent, depth + 2);
		rc |= corral_buf_addf(b, "\"path\"%s", sep);
		rc |= corral_buf_addjson(b, ch->path, strlen(ch->path));
		rc |= corral_buf_addch(b, ',');
		rc |= add_indent(b, indent, depth + 2);
		rc |= corral_buf_addf(b, "\"sha256\"%s", sep);
		rc |= add_digest(b, ch->sha256);
		rc |= add_indent(b, indent, depth + 1);
		rc |= corral_buf_addch(b, '}');
	}
	rc |= add_indent(b, indent, depth);
	return rc | corral_buf_addch(b, ']');
}
