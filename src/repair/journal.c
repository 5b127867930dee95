/* See LICENSE file for copyright and license details. */
/*
 * journal.c makes an apply all-or-nothing across crashes.  Before the
 * first byte of a root changes, ROOT/.corral-fix/journal.json records, for
 * every path the apply touches, how it was (its bytes, kept in
 * saved/SHA256, its mode and mtime, or its absence), the directories the
 * apply will create, and the mtimes of the directories it touches; it is
 * written atomically and fsynced.  Rolling back puts all of that back, so
 * the root is as it was, byte for byte and mtime for mtime.  Removing
 * journal.json is the commit point: a crash before it is rolled back by
 * corral_journal_recover, a crash after it leaves the committed apply.
 * While the journal exists its lock file is flocked by the writer.
 */
#define _GNU_SOURCE	/* flock */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "base/json.h"
#include "repair/repair.h"

#define JOURNAL_FILE	"journal.json"
#define SAVED_DIR	"saved"
#define LOCK_FILE	"lock"

/* The journal's records: how each path was, and what the apply creates. */
struct corral_saved {
	char *path;		/* relative to the root; "" for the root */
	int exists;		/* 0: the path did not exist */
	char sha256[CORRAL_SHA256_HEX];	/* a file's bytes, in saved/ */
	int has_after;		/* 0: after is unknown (an older journal) */
	char after[CORRAL_SHA256_HEX];	/* what the apply writes; "": it
					   deletes the file */
	unsigned mode;		/* permission bits */
	long long sec;		/* mtime */
	long nsec;
};

struct corral_journal_data {
	struct corral_saved *files;	/* every path the apply touches */
	size_t nfiles, capfiles;
	struct corral_saved *dirs;	/* existing directories, their mtimes */
	size_t ndirs, capdirs;
	struct corral_strv created;	/* directories the apply creates */
};

struct corral_journal {
	char *root;
	char *dir;		/* ROOT/.corral-fix */
	char *saved;		/* ROOT/.corral-fix/saved */
	int lockfd;
	struct corral_journal_data d;
};

static int remove_flat(const char *dir, struct corral_err *err);
static int remove_journal(const char *dir, const char *saved,
    const char *root, const struct timespec *mtime, struct corral_err *err);
static int set_mtime(const char *path, const struct timespec *mtime);
static int read_journal(const char *text, size_t len,
    struct corral_journal_data *d, struct corral_err *err);

static void
journal_data_release(struct corral_journal_data *d)
{
	size_t i;

	for (i = 0; i < d->nfiles; i++)
		free(d->files[i].path);
	for (i = 0; i < d->ndirs; i++)
		free(d->dirs[i].path);
	free(d->files);
	free(d->dirs);
	corral_strv_release(&d->created);
	memset(d, 0, sizeof(*d));
}

static void
journal_free(struct corral_journal *j)
{
	if (!j)
		return;
	if (j->lockfd >= 0)
		close(j->lockfd);
	journal_data_release(&j->d);
	free(j->root);
	free(j->dir);
	free(j->saved);
	free(j);
}

static struct corral_journal *
journal_new(const char *root)
{
	struct corral_journal *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->lockfd = -1;
	j->root = strdup(root);
	j->dir = corral_path_join(root, CORRAL_JOURNAL_DIR);
	j->saved = j->dir ? corral_path_join(j->dir, SAVED_DIR) : NULL;
	if (!j->root || !j->dir || !j->saved) {
		journal_free(j);
		return NULL;
	}
	return j;
}

/* Append a record for path (stat'ed as st) to *v; 0 or -1 ENOMEM. */
static int
add_saved(struct corral_saved **v, size_t *n, size_t *cap, const char *path,
    const struct stat *st, const char *sha)
{
	struct corral_saved *nv, *s;

	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		if (!(nv = realloc(*v, *cap * sizeof(*nv))))
			return -1;
		*v = nv;
	}
	s = &(*v)[*n];
	memset(s, 0, sizeof(*s));
	if (!(s->path = strdup(path)))
		return -1;
	if (st) {
		s->exists = 1;
		s->mode = st->st_mode & 07777;
		s->sec = (long long)st->st_mtim.tv_sec;
		s->nsec = st->st_mtim.tv_nsec;
	}
	snprintf(s->sha256, sizeof(s->sha256), "%s", sha ? sha : "");
	(*n)++;
	return 0;
}

static int
has_path(const struct corral_saved *v, size_t n, const char *path)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i].path, path))
			return 1;
	return 0;
}

static int
has_str(const struct corral_strv *sv, const char *s)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		if (!strcmp(sv->v[i], s))
			return 1;
	return 0;
}

/* The journal as JSON; read_journal, below, is its reader. */
static int
format_saved(struct corral_buf *b, const struct corral_saved *v, size_t n)
{
	size_t i;
	int rc = corral_buf_addch(b, '[');

	for (i = 0; i < n && rc == 0; i++) {
		rc |= corral_buf_addstr(b, i ? ",{\"path\":" : "{\"path\":");
		rc |= corral_buf_addjson(b, v[i].path, strlen(v[i].path));
		if (v[i].has_after)
			rc |= corral_buf_addf(b, ",\"after\":\"%s\"",
			    v[i].after);
		rc |= corral_buf_addf(b, ",\"exists\":%s,\"sha256\":\"%s\","
		    "\"mode\":%u,\"sec\":%lld,\"nsec\":%ld}",
		    v[i].exists ? "true" : "false", v[i].sha256, v[i].mode,
		    v[i].sec, v[i].nsec);
	}
	return rc | corral_buf_addch(b, ']');
}

static int
format_journal(struct corral_buf *b, const struct corral_journal_data *d)
{
	size_t i;
	int rc;

	rc = corral_buf_addstr(b, "{\"corral\":\"journal\",\"version\":1,"
	    "\"files\":");
	rc |= format_saved(b, d->files, d->nfiles);
	rc |= corral_buf_addstr(b, ",\"dirs\":");
	rc |= format_saved(b, d->dirs, d->ndirs);
	rc |= corral_buf_addstr(b, ",\"created\":[");
	for (i = 0; i < d->created.n; i++) {
		rc |= i ? corral_buf_addch(b, ',') : 0;
		rc |= corral_buf_addjson(b, d->created.v[i],
		    strlen(d->created.v[i]));
	}
	return rc | corral_buf_addstr(b, "]}\n");
}

static int
write_journal(struct corral_journal *j, struct corral_err *err)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	char *path = corral_path_join(j->dir, JOURNAL_FILE);
	int rc;

	if (!path || format_journal(&b, &j->d) < 0)
		rc = corral_err_set(err, ENOMEM, "journal");
	else
		rc = corral_atomic_file(path, b.data, b.len, 0, err) < 0 ?
		    -1 : 0;
	corral_buf_release(&b);
	free(path);
	return rc;
}

/* Why root's journal directory cannot be taken, in err. */
static int
refuse(const char *root, const char *dir, struct corral_err *err)
{
	char *lock = corral_path_join(dir, LOCK_FILE);
	int fd, busy = 0;

	if (lock && (fd = corral_open_state(lock, O_RDONLY, 0, NULL)) >= 0) {
		busy = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno ==
		    EWOULDBLOCK;
		close(fd);
	}
	free(lock);
	if (busy)
		return corral_err_set(err, 0, "another corral-fix or "
		    "corral-bundle is applying to '%s'", root);
	return corral_err_set(err, 0, "'%s' holds the journal of an "
	    "interrupted apply; run 'corral-fix -R %s' to roll it back", dir,
	    root);
}

int
corral_journal_check(const char *root, struct corral_err *err)
{
	struct stat st;
	char *dir = corral_path_join(root, CORRAL_JOURNAL_DIR);
	int rc = 0;

	if (!dir)
		return corral_err_set(err, ENOMEM, "journal");
	if (lstat(dir, &st) == 0)
		rc = refuse(root, dir, err);
	else if (errno != ENOENT)
		rc = corral_err_set(err, errno, "cannot stat '%s'", dir);
	free(dir);
	return rc;
}

static int
take_lock(struct corral_journal *j, struct corral_err *err)
{
	char *lock = corral_path_join(j->dir, LOCK_FILE);

	if (!lock)
		return corral_err_set(err, ENOMEM, "journal");
	j->lockfd = corral_open_state(lock, O_RDWR | O_CREAT, 0600, err);
	free(lock);
	if (j->lockfd < 0)
		return -1;
	if (flock(j->lockfd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? refuse(j->root, j->dir, err) :
		    corral_err_set(err, errno, "cannot lock '%s'", j->dir);
	return 0;
}

int
corral_journal_begin(struct corral_journal **jp, const char *root,
    struct corral_err *err)
{
	struct corral_journal *j;
	struct stat st;

	*jp = NULL;
	if (!(j = journal_new(root)))
		return corral_err_set(err, ENOMEM, "journal");
	if (stat(root, &st) < 0 || !S_ISDIR(st.st_mode)) {
		corral_err_set(err, errno, "cannot open '%s'", root);
		goto fail;
	}
	if (mkdir(j->dir, 0700) < 0) {
		if (errno == EEXIST)
			refuse(root, j->dir, err);
		else
			corral_err_set(err, errno, "cannot create '%s'",
			    j->dir);
		goto fail;
	}
	/*
	 * The root's mtime back at once: until journal.json records it, a
	 * recovery keeps the mtime the root has (keep_root_mtime).
	 */
	(void)set_mtime(root, &st.st_mtim);
	/* The root's mtime from before the journal, so rollback restores it. */
	if (add_saved(&j->d.dirs, &j->d.ndirs, &j->d.capdirs, "", &st,
	    NULL) < 0) {
		corral_err_set(err, ENOMEM, "journal");
		goto fail_dir;
	}
	if (take_lock(j, err) < 0 || mkdir(j->saved, 0700) < 0 ||
	    write_journal(j, err) < 0)
		goto fail_dir;
	*jp = j;
	return 0;
fail_dir:
	if (j->lockfd < 0) {
		remove_flat(j->dir, NULL);
		if (rmdir(j->dir) == 0)
			(void)set_mtime(root, &st.st_mtim);
		journal_free(j);
	} else {
		corral_journal_rollback(j, NULL, NULL);
	}
	return -1;
fail:
	journal_free(j);
	return -1;
}

/* Give path the mtime *mtime (its atime stays).  0, or -1 with errno. */
static int
set_mtime(const char *path, const struct timespec *mtime)
{
	struct timespec t[2];

	t[0].tv_sec = 0;
	t[0].tv_nsec = UTIME_OMIT;
	t[1] = *mtime;
	return utimensat(AT_FDCWD, path, t, 0);
}

/*
 * Remove a journal without journal.json: the apply never began (or had
 * committed, and the removal was cut short).  The root keeps the mtime
 * it has now: journal_begin put the old one back right after making
 * the directory.
 */
static int
remove_unwritten(struct corral_journal *j, struct corral_err *err)
{
	struct stat st;

	if (stat(j->root, &st) < 0)
		return corral_err_set(err, errno, "cannot stat '%s'", j->root);
	return remove_journal(j->dir, j->saved, j->root, &st.st_mtim, err);
}

/* Record the directories above path: existing ones' mtimes, new ones. */
static int
save_parents(struct corral_journal *j, const char *path,
    struct corral_err *err)
{
	struct corral_journal_data *d = &j->d;
	char *rel = strdup(path), *p, *full;
	struct stat st;
	int rc = 0;

	if (!rel)
		return corral_err_set(err, ENOMEM, "journal");
	for (p = strchr(rel, '/'); p && rc == 0; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (!(full = corral_path_join(j->root, rel)))
			rc = corral_err_set(err, ENOMEM, "journal");
		else if (lstat(full, &st) == 0) {
			if (!has_path(d->dirs, d->ndirs, rel) &&
			    add_saved(&d->dirs, &d->ndirs, &d->capdirs, rel,
			    &st, NULL) < 0)
				rc = corral_err_set(err, ENOMEM, "journal");
		} else if (!has_str(&d->created, rel) &&
		    corral_strv_add(&d->created, rel) < 0) {
			rc = corral_err_set(err, ENOMEM, "journal");
		}
		free(full);
		*p = '/';
	}
	free(rel);
	return rc;
}

/*
 * The temporary of path (corral_apply_tmp) under root: NULL on ENOMEM.
 * tmp_free is 0 when nothing is there, else -1 with err set: the name is
 * the apply's, and what holds it now is nobody's to overwrite or remove.
 */
static char *
tmp_of(const char *root, const char *path)
{
	char *rel = corral_apply_tmp(path), *full;

	full = rel ? corral_path_join(root, rel) : NULL;
	free(rel);
	return full;
}

static int
tmp_free(const char *root, const char *path, struct corral_err *err)
{
	char *tmp = tmp_of(root, path);
	struct stat st;
	int rc = 0;

	if (!tmp)
		return corral_err_set(err, ENOMEM, "journal");
	if (lstat(tmp, &st) == 0)
		rc = corral_err_set(err, 0, "'%s' is in the way: corral writes "
		    "'%s' through that name; move it away", tmp, path);
	else if (errno != ENOENT && errno != ENOTDIR)
		rc = corral_err_set(err, errno, "cannot stat '%s'", tmp);
	free(tmp);
	return rc;
}

int
corral_journal_save(struct corral_journal *j, const char *path,
    const char *after, struct corral_err *err)
{
	struct corral_journal_data *d = &j->d;
	char sha[CORRAL_SHA256_HEX], *full;
	struct stat st;
	int state, rc = 0;

	if (has_path(d->files, d->nfiles, path))
		return 0;
	if ((state = corral_path_state(j->root, path, sha, err)) < 0 ||
	    tmp_free(j->root, path, err) < 0 ||
	    save_parents(j, path, err) < 0)
		return -1;
	if (!(full = corral_path_join(j->root, path)))
		return corral_err_set(err, ENOMEM, "journal");
	if (state == 1 && lstat(full, &st) < 0)
		rc = corral_err_set(err, errno, "cannot stat '%s'", full);
	else if (state == 1)
		rc = corral_blob_put(j->saved, full, sha, err);
	if (rc == 0 && add_saved(&d->files, &d->nfiles, &d->capfiles, path,
	    state == 1 ? &st : NULL, state == 1 ? sha : NULL) < 0)
		rc = corral_err_set(err, ENOMEM, "journal");
	if (rc == 0) {
		d->files[d->nfiles - 1].has_after = 1;
		snprintf(d->files[d->nfiles - 1].after, CORRAL_SHA256_HEX,
		    "%s", after);
	}
	free(full);
	return rc;
}

int
corral_journal_seal(struct corral_journal *j, struct corral_err *err)
{
	if (write_journal(j, err) < 0)
		return -1;
	return corral_fsync_parent(j->saved, err);
}

/* Give root/path (or root itself for "") its saved mode and mtime. */
static int
set_meta(const char *root, const struct corral_saved *s, int mode,
    struct corral_err *err)
{
	struct timespec t[2];
	char *full = corral_path_join(root, s->path);
	int rc = 0;

	if (!full)
		return corral_err_set(err, ENOMEM, "journal");
	t[0].tv_sec = 0;
	t[0].tv_nsec = UTIME_OMIT;
	t[1].tv_sec = (time_t)s->sec;
	t[1].tv_nsec = s->nsec;
	if ((mode && chmod(full, s->mode) < 0) ||
	    utimensat(AT_FDCWD, full, t, AT_SYMLINK_NOFOLLOW) < 0)
		rc = corral_err_set(err, errno, "cannot restore '%s'", full);
	free(full);
	return rc;
}

/* Remove the apply's temporary of s->path, if a crash left it. */
static int
remove_tmp(const char *root, const struct corral_saved *s,
    struct corral_err *err)
{
	char *tmp = tmp_of(root, s->path);
	int rc = 0;

	if (!tmp)
		return corral_err_set(err, ENOMEM, "journal");
	if (unlink(tmp) < 0 && errno != ENOENT && errno != ENOTDIR)
		rc = corral_err_set(err, errno, "cannot remove '%s'", tmp);
	free(tmp);
	return rc;
}

/*
 * Put one saved file back as it was (or remove it if it was absent),
 * when it holds what the apply wrote; one that holds neither that nor
 * what it held before was changed by someone else since, and is left as
 * it is (its path added to kept, which may be NULL).
 */
static int
restore_file(const char *root, const char *saved, const struct corral_saved *s,
    struct corral_strv *kept, struct corral_err *err)
{
	struct corral_changes c = CORRAL_CHANGES_INIT;
	char now[CORRAL_SHA256_HEX];
	int rc = 0;

	if (corral_path_state(root, s->path, now, err) < 0 ||
	    remove_tmp(root, s, err) < 0)
		return -1;
	if (!strcmp(now, s->sha256))
		;	/* as it was: its mode and mtime below */
	else if (s->has_after && strcmp(now, s->after))
		return kept && corral_strv_add(kept, s->path) < 0 ?
		    corral_err_set(err, ENOMEM, "journal") : 0;
	else if (s->exists && corral_blob_check(saved, s->sha256, err) < 0)
		return -1;
	else
		rc = corral_changes_add(&c, s->path, s->exists ?
		    CORRAL_ACTION_WRITE : CORRAL_ACTION_DELETE,
		    s->exists ? s->sha256 : NULL, now);
	if (rc < 0)
		rc = corral_err_set(err, ENOMEM, "journal");
	else
		rc = corral_apply_changes(root, &c, saved, err);
	if (rc == 0 && s->exists)
		rc = set_meta(root, s, 1, err);
	corral_changes_release(&c);
	return rc;
}

static int
cmp_depth(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	size_t nx = strlen(x), ny = strlen(y);

	return nx < ny ? 1 : nx > ny ? -1 : strcmp(x, y);
}

static int
cmp_saved_depth(const void *a, const void *b)
{
	const char *x = ((const struct corral_saved *)a)->path;
	const char *y = ((const struct corral_saved *)b)->path;

	return cmp_depth(&x, &y);
}

/* Undo what d records under root.  0, or -1 with err (first failure). */
static int
restore(const char *root, const char *saved, struct corral_journal_data *d,
    struct corral_strv *kept, struct corral_err *err)
{
	char *full;
	size_t i;
	int rc = 0;

	for (i = 0; i < d->nfiles; i++)
		if (restore_file(root, saved, &d->files[i], kept,
		    rc ? NULL : err) < 0)
			rc = -1;
	if (d->created.n)
		qsort(d->created.v, d->created.n, sizeof(char *), cmp_depth);
	for (i = 0; i < d->created.n; i++) {
		if (!(full = corral_path_join(root, d->created.v[i])))
			return corral_err_set(err, ENOMEM, "journal");
		if (rmdir(full) < 0 && errno != ENOENT && rc == 0)
			rc = corral_err_set(err, errno, "cannot remove '%s'",
			    full);
		free(full);
	}
	if (d->ndirs)
		qsort(d->dirs, d->ndirs, sizeof(*d->dirs), cmp_saved_depth);
	for (i = 0; i < d->ndirs; i++)
		if (set_meta(root, &d->dirs[i], 0, rc ? NULL : err) < 0)
			rc = -1;
	return rc;
}

/* Remove every file in dir (one level), then dir itself. */
static int
remove_flat(const char *dir, struct corral_err *err)
{
	struct dirent *de;
	DIR *d;
	int fd, rc = 0;

	if (!(d = opendir(dir)))
		return errno == ENOENT ? 0 : corral_err_set(err, errno,
		    "cannot open '%s'", dir);
	fd = dirfd(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, SAVED_DIR) &&
		    unlinkat(fd, de->d_name, 0) < 0 && rc == 0)
			rc = corral_err_set(err, errno, "cannot remove '%s/%s'",
			    dir, de->d_name);
	closedir(d);
	return rc;
}

/*
 * Remove the journal: journal.json first (the commit point), then all;
 * then, when mtime is not NULL, give root that mtime back at once (the
 * rmdir changed it), and only then sync root.
 */
static int
remove_journal(const char *dir, const char *saved, const char *root,
    const struct timespec *mtime, struct corral_err *err)
{
	char *file = corral_path_join(dir, JOURNAL_FILE);

	if (!file)
		return corral_err_set(err, ENOMEM, "journal");
	if (unlink(file) < 0 && errno != ENOENT) {
		corral_err_set(err, errno, "cannot remove '%s'", file);
		free(file);
		return -1;
	}
	if (corral_fsync_parent(file, err) < 0) {
		free(file);
		return -1;
	}
	free(file);
	if (remove_flat(saved, err) < 0 ||
	    (rmdir(saved) < 0 && errno != ENOENT) ||
	    remove_flat(dir, err) < 0 || rmdir(dir) < 0)
		return corral_err_set(err, errno, "cannot remove '%s'", dir);
	if (mtime && set_mtime(root, mtime) < 0)
		return corral_err_set(err, errno, "cannot restore '%s'", root);
	return corral_fsync_parent(dir, err);
}

/* Restore, remove the journal, and put the root's own mtime back. */
static int
undo(const char *root, const char *dir, const char *saved,
    struct corral_journal_data *d, struct corral_strv *kept,
    struct corral_err *err)
{
	struct timespec t, *mtime = NULL;
	size_t i;

	if (restore(root, saved, d, kept, err) < 0)
		return -1;
	for (i = 0; i < d->ndirs && !mtime; i++)
		if (!*d->dirs[i].path) {
			t.tv_sec = (time_t)d->dirs[i].sec;
			t.tv_nsec = d->dirs[i].nsec;
			mtime = &t;
		}
	return remove_journal(dir, saved, root, mtime, err);
}

int
corral_journal_rollback(struct corral_journal *j, struct corral_strv *kept,
    struct corral_err *err)
{
	int rc = undo(j->root, j->dir, j->saved, &j->d, kept, err);

	journal_free(j);
	return rc;
}

int
corral_journal_kept(struct corral_buf *b, const struct corral_strv *kept)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < kept->n && i < 3 && rc == 0; i++)
		rc = corral_buf_addf(b, "%s'%s'", i ? ", " : "", kept->v[i]);
	if (rc == 0 && kept->n > 3)
		rc = corral_buf_addf(b, " and %zu more", kept->n - 3);
	return rc;
}

int
corral_journal_abandon(struct corral_journal *j, struct corral_err *err)
{
	struct corral_strv kept = CORRAL_STRV_INIT;
	struct corral_buf b = CORRAL_BUF_INIT;
	char *root = strdup(j->root);
	struct corral_err e;
	int rc;

	if (err && err->errnum)
		rc = corral_buf_addf(&b, "%s: %s", err->msg,
		    strerror(err->errnum));
	else
		rc = corral_buf_addstr(&b, err ? err->msg : "");
	if (corral_journal_rollback(j, &kept, &e) < 0)
		rc |= corral_buf_addf(&b, "; rolling back failed too: %s%s%s; "
		    "the journal stays: run 'corral-fix -R %s'", e.msg,
		    e.errnum ? ": " : "", e.errnum ? strerror(e.errnum) : "",
		    root ? root : "ROOT");
	else
		rc |= corral_buf_addstr(&b, "; rolled back: nothing was "
		    "applied");
	if (kept.n) {
		rc |= corral_buf_addstr(&b, ", and what changed meanwhile is "
		    "left as it is: ");
		rc |= corral_journal_kept(&b, &kept);
	}
	if (rc == 0)
		corral_err_set(err, 0, "%s", b.data);
	corral_buf_release(&b);
	corral_strv_release(&kept);
	free(root);
	return -1;
}

int
corral_journal_commit(struct corral_journal *j, struct corral_err *err)
{
	int rc = remove_journal(j->dir, j->saved, NULL, NULL, err);

	journal_free(j);
	return rc;
}

int
corral_journal_recover(const char *root, struct corral_strv *kept,
    struct corral_err *err)
{
	struct corral_buf text = CORRAL_BUF_INIT;
	struct corral_journal *j;
	struct corral_err e;
	struct stat st;
	char *file = NULL;
	int rc = -1;

	if (!(j = journal_new(root)))
		return corral_err_set(err, ENOMEM, "journal");
	if (lstat(j->dir, &st) < 0) {
		rc = errno == ENOENT ? 0 : corral_err_set(err, errno,
		    "cannot stat '%s'", j->dir);
		goto out;
	}
	if (take_lock(j, err) < 0 || !(file = corral_path_join(j->dir, JOURNAL_FILE)))
		goto out;
	if (corral_read_file(file, &text, &e) < 0) {
		/* Never begun: nothing was written. */
		if (e.errnum == ENOENT)
			rc = remove_unwritten(j, err) < 0 ? -1 : 2;
		else
			corral_err_set(err, e.errnum, "%s", e.msg);
		goto out;
	}
	if (read_journal(text.data, text.len, &j->d, &e) < 0) {
		corral_err_set(err, 0, "'%s': %s", file, e.msg);
		goto out;
	}
	rc = undo(root, j->dir, j->saved, &j->d, kept, err) < 0 ? -1 : 1;
out:
	free(file);
	corral_buf_release(&text);
	journal_free(j);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Reading journal.json                                                */

static int
saved_entry(const cJSON *o, struct corral_saved *s, struct corral_err *err)
{
	const cJSON *exists, *mode, *sec, *nsec, *sha, *after;
	long m, ns, sc;

	if (!cJSON_IsObject(o))
		return corral_err_set(err, 0, "an entry is not an object");
	if (cj_str_member(o, "path", NULL, &s->path, err) < 0 ||
	    cj_member(o, "exists", cj_is_bool, "a boolean", 1, &exists, err) < 0 ||
	    cj_member(o, "mode", cj_is_number, "a number", 1, &mode, err) < 0 ||
	    cj_member(o, "sec", cj_is_number, "a number", 1, &sec, err) < 0 ||
	    cj_member(o, "nsec", cj_is_number, "a number", 1, &nsec, err) < 0 ||
	    cj_member(o, "sha256", cj_is_string, "a string", 1, &sha, err) < 0 ||
	    cj_member(o, "after", cj_is_string, "a string", 0, &after, err) < 0)
		return -1;
	if (cj_whole(mode->valuedouble, 0, &m) < 0 || m > 07777 ||
	    cj_whole(sec->valuedouble, -1000000000000L, &sc) < 0 ||
	    cj_whole(nsec->valuedouble, 0, &ns) < 0 || ns > 999999999)
		return corral_err_set(err, 0, "'%s': bad mode or mtime",
		    s->path);
	if ((*sha->valuestring && !corral_sha256_valid(sha->valuestring)) ||
	    (after && *after->valuestring &&
	    !corral_sha256_valid(after->valuestring)))
		return corral_err_set(err, 0, "'%s': bad digest", s->path);
	if ((s->has_after = after != NULL))
		memcpy(s->after, after->valuestring,
		    strlen(after->valuestring) + 1);
	s->exists = cJSON_IsTrue(exists);
	s->mode = (unsigned)m;
	s->sec = sc;
	s->nsec = ns;
	memcpy(s->sha256, sha->valuestring, strlen(sha->valuestring) + 1);
	return 0;
}

static int
saved_array(const cJSON *doc, const char *key, struct corral_saved **v,
    size_t *n, size_t *cap, struct corral_err *err)
{
	const cJSON *arr, *o;

	if (cj_member(doc, key, cj_is_array, "an array", 1, &arr, err) < 0)
		return -1;
	*cap = (size_t)cJSON_GetArraySize(arr);
	if (*cap && !(*v = calloc(*cap, sizeof(**v))))
		return corral_err_set(err, ENOMEM, "parse");
	cJSON_ArrayForEach(o, arr)
		if (saved_entry(o, &(*v)[(*n)++], err) < 0)
			return -1;
	return 0;
}

static int
read_journal(const char *text, size_t len,
    struct corral_journal_data *d, struct corral_err *err)
{
	const cJSON *created, *s;
	cJSON *doc;
	int rc = -1;

	memset(d, 0, sizeof(*d));
	if (!(doc = cj_object_text(text, len, err)))
		return -1;
	if (saved_array(doc, "files", &d->files, &d->nfiles, &d->capfiles,
	    err) < 0 || saved_array(doc, "dirs", &d->dirs, &d->ndirs,
	    &d->capdirs, err) < 0 || cj_member(doc, "created", cj_is_array,
	    "an array", 1, &created, err) < 0)
		goto out;
	rc = 0;
	cJSON_ArrayForEach(s, created)
		if (rc == 0 && (!cJSON_IsString(s) ||
		    corral_strv_add(&d->created, s->valuestring) < 0))
			rc = corral_err_set(err, 0, "\"created\" holds a "
			    "non-string");
out:
	cJSON_Delete(doc);
	if (rc < 0)
		journal_data_release(d);
	return rc;
}

int
corral_journal_parse(const char *text, size_t len, struct corral_err *err)
{
	struct corral_journal_data d;

	if (read_journal(text, len, &d, err) < 0)
		return -1;
	journal_data_release(&d);
	return 0;
}
