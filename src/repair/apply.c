/* See LICENSE file for copyright and license details. */
/*
 * apply.c changes files under a root and nowhere else.  Every path is
 * checked twice: by its text (relative, canonical, no "..", never into
 * .git or the journal) and on disk (every directory on the way is a real
 * directory, not a symlink, and the file itself is a regular file).
 * Writes are atomic per file (RELIABILITY 4.2), and checked at the
 * moment of their own replacement (RELIABILITY 4.6): the new bytes are
 * written and synced to a temporary first, then the file is read once
 * more and must still hold the bytes the change was made against, and
 * only then is the temporary renamed over it.  The temporary has a fixed
 * name beside the file (corral_apply_tmp), which a journal can find
 * after a crash.  Blobs are files named by the SHA-256 of their bytes,
 * and are checked against their names whenever they are read or stored.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "repair/repair.h"

int
corral_path_check(const char *path, struct corral_err *err)
{
	const char *p = path;
	size_t n;

	if (corral_path_lexical("path", path, CORRAL_PATH_CANONICAL, err) < 0)
		return -1;
	for (;; p += n + 1) {
		n = strcspn(p, "/");
		if ((n == 4 && !strncmp(p, ".git", 4)) ||
		    (n == strlen(CORRAL_JOURNAL_DIR) &&
		    !strncmp(p, CORRAL_JOURNAL_DIR, n)))
			return corral_err_set(err, 0, "path '%s' is inside "
			    "'%.*s', which corral never writes", path, (int)n,
			    p);
		if (!p[n])
			return 0;
	}
}

/*
 * Check the directories on the way to root/path: each is a real
 * directory or (from some point on) missing.  0, or -1 with err set.
 */
static int
check_parents(const char *root, const char *path, struct corral_err *err)
{
	char *full = corral_path_join(root, path), *p;
	struct stat st;
	int rc = 0;

	if (!full)
		return corral_err_set(err, ENOMEM, "'%s'", path);
	for (p = strchr(full + strlen(root) + 1, '/'); p && rc == 0;
	    p = strchr(p + 1, '/')) {
		*p = '\0';
		if (lstat(full, &st) < 0) {
			if (errno != ENOENT)
				rc = corral_err_set(err, errno, "cannot stat "
				    "'%s'", full);
			break;
		}
		if (S_ISLNK(st.st_mode))
			rc = corral_err_set(err, 0, "'%s' goes through "
			    "symlink '%s'", path, full + strlen(root) + 1);
		else if (!S_ISDIR(st.st_mode))
			rc = corral_err_set(err, 0, "'%s' goes through '%s', "
			    "which is not a directory", path,
			    full + strlen(root) + 1);
		*p = '/';
	}
	free(full);
	return rc;
}

int
corral_path_state(const char *root, const char *path,
    char sha[CORRAL_SHA256_HEX], struct corral_err *err)
{
	struct stat st;
	char *full;
	int fd, rc;

	if (corral_path_check(path, err) < 0 ||
	    check_parents(root, path, err) < 0)
		return -1;
	if (!(full = corral_path_join(root, path)))
		return corral_err_set(err, ENOMEM, "'%s'", path);
	sha[0] = '\0';
	if (lstat(full, &st) < 0) {
		rc = errno == ENOENT || errno == ENOTDIR ? 0 :
		    corral_err_set(err, errno, "cannot stat '%s'", full);
	} else if (S_ISLNK(st.st_mode)) {
		rc = corral_err_set(err, 0, "'%s' is a symlink", path);
	} else if (!S_ISREG(st.st_mode)) {
		rc = corral_err_set(err, 0, "'%s' is not a regular file",
		    path);
	} else if ((fd = open(full, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		rc = corral_err_set(err, errno, "cannot open '%s'", full);
	} else {
		rc = corral_sha256_fd(fd, full, sha, err) < 0 ? -1 : 1;
		close(fd);
	}
	free(full);
	return rc;
}

/* mkdir -p of the directories above root/path (root itself exists). */
static int
make_parents(const char *root, const char *path, struct corral_err *err)
{
	char *full = corral_path_join(root, path), *p;
	int rc = 0;

	if (!full)
		return corral_err_set(err, ENOMEM, "'%s'", path);
	for (p = strchr(full + strlen(root) + 1, '/'); p && rc == 0;
	    p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(full, 0777) < 0 && errno != EEXIST)
			rc = corral_err_set(err, errno, "cannot create '%s'",
			    full);
		*p = '/';
	}
	free(full);
	return rc;
}

struct copy {
	struct corral_atomic *a;
	struct corral_err *err;
	int failed;	/* the write, not the read */
};

static int
put_chunk(void *ctx, const char *p, size_t n)
{
	struct copy *c = ctx;

	if (corral_atomic_write(c->a, p, n, c->err) == 0)
		return 0;
	c->failed = 1;
	return -1;
}

/* Copy the open fd into the atomic file a.  0 or -1 with err set. */
static int
copy_into(int fd, const char *from, struct corral_atomic *a,
    struct corral_err *err)
{
	struct copy c = { a, err, 0 };

	if (corral_fd_chunks(fd, put_chunk, &c) == 0)
		return 0;
	if (!c.failed)
		corral_err_set(err, errno, "cannot read '%s'", from);
	return -1;
}

char *
corral_apply_tmp(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t dirlen = base ? (size_t)(base - path) + 1 : 0;
	char *tmp;

	base = base ? base + 1 : path;
	if (!(tmp = malloc(strlen(path) + sizeof("." CORRAL_APPLY_TMP) + 1)))
		return NULL;
	memcpy(tmp, path, dirlen);
	sprintf(tmp + dirlen, ".%s%s", base, CORRAL_APPLY_TMP);
	return tmp;
}

/*
 * The check at the moment of replacement: root/c->path (parents and the
 * file itself checked again) holds c->before, "" being absent.  0, or -1
 * with err set.
 */
static int
still_before(const char *root, const struct corral_change *c,
    struct corral_err *err)
{
	char now[CORRAL_SHA256_HEX];

	if (corral_path_state(root, c->path, now, err) < 0)
		return -1;
	if (strcmp(now, c->before))
		return corral_err_set(err, 0, "'%s' changed while it was "
		    "being replaced: it no longer holds what the change was "
		    "made against", c->path);
	return 0;
}

/* Copy blob into the temporary a, with mode (0: the umask's default). */
static int
fill_tmp(struct corral_atomic *a, const char *blob, mode_t mode,
    struct corral_err *err)
{
	int fd, rc;

	if ((fd = open(blob, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return corral_err_set(err, errno, "cannot open '%s'", blob);
	rc = copy_into(fd, blob, a, err);
	close(fd);
	if (rc == 0 && mode && fchmod(a->fd, mode) < 0)
		rc = corral_err_set(err, errno, "cannot write '%s'", a->tmp);
	return rc;
}

/*
 * Put the bytes of the file at from at path, atomically, with mode (or
 * the umask's default when mode is 0).  0, or -1 with err set.
 */
static int
write_from(const char *path, const char *from, mode_t mode,
    struct corral_err *err)
{
	struct corral_atomic a;

	if (corral_atomic_open(&a, path, err) < 0)
		return -1;
	if (fill_tmp(&a, from, mode, err) < 0) {
		corral_atomic_abort(&a);
		return -1;
	}
	return corral_atomic_commit(&a, 0, err) < 0 ? -1 : 0;
}

/*
 * A write: the new bytes go to the temporary of corral_apply_tmp, are
 * fsynced, and only then is root/path checked (still_before) and the
 * temporary renamed over it, with no other file between the check and
 * the rename.
 */
static int
write_checked(const char *root, const struct corral_change *c,
    const char *full, const char *blobdir, struct corral_err *err)
{
	struct corral_atomic a;
	struct stat st;
	char *rel = corral_apply_tmp(c->path), *tmp = NULL, *blob = NULL;
	mode_t mode = 0;
	int rc = -1;

	if (lstat(full, &st) == 0)
		mode = st.st_mode & 07777;
	if (!rel || !(tmp = corral_path_join(root, rel)) ||
	    !(blob = corral_path_join(blobdir, c->sha256)))
		corral_err_set(err, ENOMEM, "'%s'", c->path);
	else if (make_parents(root, c->path, err) == 0 &&
	    corral_atomic_open_as(&a, full, tmp, err) == 0) {
		/* prepare and rename release a on success, prepare on failure */
		if (fill_tmp(&a, blob, mode, err) == 0 &&
		    corral_atomic_prepare(&a, 0, err) == 1 &&
		    still_before(root, c, err) == 0 &&
		    corral_atomic_rename(&a, err) == 0)
			rc = corral_fsync_parent(full, err);
		if (a.path)
			corral_atomic_abort(&a);
	}
	free(rel);
	free(tmp);
	free(blob);
	return rc;
}

static int
apply_one(const char *root, const struct corral_change *c,
    const char *blobdir, struct corral_err *err)
{
	char *full;
	int rc;

	if (corral_path_check(c->path, err) < 0 ||
	    check_parents(root, c->path, err) < 0)
		return -1;
	if (!(full = corral_path_join(root, c->path)))
		return corral_err_set(err, ENOMEM, "'%s'", c->path);
	if (c->action != CORRAL_ACTION_DELETE)
		rc = write_checked(root, c, full, blobdir, err);
	else if ((rc = still_before(root, c, err)) == 0 &&
	    unlink(full) < 0 && errno != ENOENT)
		rc = corral_err_set(err, errno, "cannot remove '%s'", full);
	else if (rc == 0)
		rc = corral_fsync_parent(full, err);
	free(full);
	return rc;
}

int
corral_apply_changes(const char *root, const struct corral_changes *c,
    const char *blobdir, struct corral_err *err)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (apply_one(root, &c->v[i], blobdir, err) < 0)
			return -1;
	return 0;
}

int
corral_blob_check(const char *blobdir, const char *sha256,
    struct corral_err *err)
{
	char got[CORRAL_SHA256_HEX], *path;
	struct stat st;
	int fd, rc;

	if (!corral_sha256_valid(sha256))
		return corral_err_set(err, 0, "blob name '%s' is not a "
		    "SHA-256 digest", sha256);
	if (!(path = corral_path_join(blobdir, sha256)))
		return corral_err_set(err, ENOMEM, "blob");
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		rc = corral_err_set(err, 0, "the bundle is missing its content "
		    "blob");
	else if ((rc = corral_sha256_fd(fd, path, got, err)) == 0 &&
	    strcmp(got, sha256))
		rc = corral_err_set(err, 0, "blob does not match its own hash");
	if (fd >= 0)
		close(fd);
	free(path);
	return rc;
}

int
corral_blob_put(const char *blobdir, const char *from, const char *sha256,
    struct corral_err *err)
{
	char *path;
	int rc;

	if (!corral_sha256_valid(sha256))
		return corral_err_set(err, 0, "blob name '%s' is not a "
		    "SHA-256 digest", sha256);
	if (corral_mkdir_p(blobdir, 0777, err) < 0)
		return -1;
	if (corral_blob_check(blobdir, sha256, NULL) == 0)
		return 0;
	if (!(path = corral_path_join(blobdir, sha256)))
		return corral_err_set(err, ENOMEM, "blob");
	rc = write_from(path, from, 0, err);
	free(path);
	if (rc == 0 && corral_blob_check(blobdir, sha256, err) < 0)
		return corral_err_set(err, 0, "'%s' changed while it was "
		    "copied", from);
	return rc;
}
