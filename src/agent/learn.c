/* See LICENSE file for copyright and license details. */
/*
 * learn.c sees which files of its clone a unit opens, and tries a unit
 * that failed once more in a clone of the whole tree.  Seeing needs no
 * privilege: an inotify watch (IN_OPEN) on every directory of the clone,
 * drained by a thread of its own while the unit runs, so that the queue
 * never overflows and the agent's wait for the unit stays as it is.  What
 * the unit opened, that exists in the source, is what it reads: a file
 * opened (or executed) is one part, by its content; a directory listed is
 * one part "DIR/" ("./" for the root), by the names in it, not by their
 * files (Python lists every sys.path directory, pytest its tests: the
 * files of those are not what a unit reads).  A Python bytecode cache
 * opened, DIR/__pycache__/NAME.TAG.pyc, reads DIR/NAME.py too: Python
 * checks a cache against its source's stat(2) alone.  What a unit only
 * stats is never seen, which is why a set learned so is checked: a unit
 * that fails with it and passes with the whole tree is learned again, and
 * one whose failure opened nothing its clone lacked keeps the whole tree
 * ("." ).
 */
#define _GNU_SOURCE	/* pipe2 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "checkout/checkout.h"
#include "agent/agent.h"
#include "agent/run-private.h"

/* The most names a note lists of the files a clone lacked. */
#define LACKED_NAMED	5

struct corral_learn {
	int fd;			/* inotify */
	int stop[2];		/* a byte here ends the thread */
	pthread_t thread;
	char **dirs;		/* watch descriptor -> its directory, relative */
	size_t ndirs;
	struct corral_set *seen;	/* "fREL" and "dREL", each once */
	struct corral_strv keys;	/* the same, in the order seen */
	int lost;		/* a watch or an event was lost: incomplete */
};

/* ------------------------------------------------------------------ */
/* Watching                                                             */

static int
remember_wd(struct corral_learn *l, int wd, const char *rel)
{
	char **dirs;
	size_t n = (size_t)wd + 1;

	if (n > l->ndirs) {
		if (!(dirs = realloc(l->dirs, n * sizeof(*dirs))))
			return -1;
		memset(dirs + l->ndirs, 0, (n - l->ndirs) * sizeof(*dirs));
		l->dirs = dirs;
		l->ndirs = n;
	}
	free(l->dirs[wd]);
	return (l->dirs[wd] = strdup(rel)) ? 0 : -1;
}

/*
 * Watch the directory root/rel and every directory below it, each once
 * it has been listed, so that no listing of ours is seen as the unit's.
 */
static int
watch_tree(struct corral_learn *l, const char *root, const char *rel)
{
	struct dirent *de;
	char *path, *sub;
	DIR *d;
	int wd, rc = 0;

	if (!(path = corral_path_join(root, rel)))
		return -1;
	d = opendir(path);
	while (d && rc == 0 && (de = readdir(d))) {
		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") ||
		    !strcmp(de->d_name, ".."))
			continue;
		if (!(sub = corral_path_join(rel, de->d_name)))
			rc = -1;
		else
			rc = watch_tree(l, root, sub);
		free(sub);
	}
	if (d)
		closedir(d);
	wd = rc < 0 ? -1 : inotify_add_watch(l->fd, path, IN_OPEN |
	    IN_ONLYDIR | IN_DONT_FOLLOW);
	if (rc == 0 && wd < 0)
		l->lost = 1;	/* ENOSPC: out of watches; learning is partial */
	else if (rc == 0 && remember_wd(l, wd, rel) < 0)
		rc = -1;
	free(path);
	return rc;
}

static void
note_event(struct corral_learn *l, const struct inotify_event *ev)
{
	struct corral_buf key = CORRAL_BUF_INIT;
	const char *dir;
	int put;

	if (ev->mask & IN_Q_OVERFLOW)
		l->lost = 1;
	if (!(ev->mask & IN_OPEN) || ev->wd < 0 || (size_t)ev->wd >= l->ndirs ||
	    !(dir = l->dirs[ev->wd]))
		return;
	/* A directory opened is seen by its own watch, without a name. */
	if ((ev->mask & IN_ISDIR) && ev->len && ev->name[0])
		return;
	if (corral_buf_addf(&key, "%c%s%s%s", ev->mask & IN_ISDIR ? 'd' : 'f',
	    dir, *dir && ev->len && ev->name[0] ? "/" : "",
	    ev->len ? ev->name : "") < 0 ||
	    (put = corral_set_put(l->seen, key.data, 0, NULL)) < 0 ||
	    (put && corral_strv_add(&l->keys, key.data) < 0))
		l->lost = 1;
	corral_buf_release(&key);
}

/* Read what is queued; 0 once the queue is empty, -1 on an error. */
static int
drain(struct corral_learn *l)
{
	char buf[65536] __attribute__((aligned(__alignof__(struct
	    inotify_event))));
	const struct inotify_event *ev;
	ssize_t n;
	char *p;

	for (;;) {
		if ((n = read(l->fd, buf, sizeof(buf))) < 0)
			return errno == EAGAIN ? 0 : errno == EINTR ? 1 : -1;
		for (p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			note_event(l, ev);
		}
	}
}

static void *
watcher(void *arg)
{
	struct corral_learn *l = arg;
	struct pollfd pf[2];

	pf[0].fd = l->fd;
	pf[0].events = POLLIN;
	pf[1].fd = l->stop[0];
	pf[1].events = POLLIN;
	for (;;) {
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			break;
		if (drain(l) < 0)
			break;
		/* The unit has ended: every event it caused is queued. */
		if (pf[1].revents)
			break;
	}
	while (drain(l) > 0)
		;
	return NULL;
}

static void
learn_free(struct corral_learn *l)
{
	size_t i;

	if (l->fd >= 0)
		close(l->fd);
	if (l->stop[0] >= 0)
		close(l->stop[0]);
	if (l->stop[1] >= 0)
		close(l->stop[1]);
	for (i = 0; i < l->ndirs; i++)
		free(l->dirs[i]);
	free(l->dirs);
	corral_set_free(l->seen);
	corral_strv_release(&l->keys);
	free(l);
}

int
corral_learn_start(struct corral_learn **lp, const char *clone,
    struct corral_err *err)
{
	struct corral_learn *l;
	sigset_t all, old;
	int rc;

	*lp = NULL;
	if (!(l = calloc(1, sizeof(*l))))
		return corral_err_set(err, ENOMEM, "cannot learn");
	l->stop[0] = l->stop[1] = -1;
	if ((l->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0 ||
	    pipe2(l->stop, O_CLOEXEC) < 0) {
		rc = corral_err_set(err, errno, "cannot watch '%s'", clone);
		goto fail;
	}
	if (!(l->seen = corral_set_new()) || watch_tree(l, clone, "") < 0) {
		rc = corral_err_set(err, ENOMEM, "cannot learn");
		goto fail;
	}
	/* The thread takes no signal: they are the agent's, as before. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&l->thread, NULL, watcher, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		rc = corral_err_set(err, rc, "cannot watch '%s'", clone);
		goto fail;
	}
	*lp = l;
	return 0;
fail:
	learn_free(l);
	return rc;
}

/* ------------------------------------------------------------------ */
/* What was read                                                        */

static int
exists_in(const char *src, const char *rel, struct stat *st)
{
	char *path = corral_path_join(src, rel);
	int yes = path && lstat(path, st) == 0;

	free(path);
	return yes;
}

/* A directory listed: "DIR/", the root "./". */
static int
add_listing(const char *rel, struct corral_strv *reads)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	int rc;

	rc = corral_buf_addf(&b, "%s/", *rel ? rel : ".") < 0 ? -1 :
	    corral_strv_add(reads, b.data);
	corral_buf_release(&b);
	return rc;
}

/*
 * The source a Python bytecode cache rel (DIR/__pycache__/NAME.TAG.pyc)
 * was compiled from, DIR/NAME.py, when it is a file of src; else 0.
 */
static int
add_pyc_source(const char *src, const char *rel, struct corral_strv *reads)
{
	static const char cache[] = "__pycache__/";
	const char *name = corral_path_base(rel), *dot = strchr(name, '.');
	size_t n = strlen(name), dir = (size_t)(name - rel);
	struct corral_buf b = CORRAL_BUF_INIT;
	struct stat st;
	int rc = 0;

	if (!dot || dot == name || n < 5 || strcmp(name + n - 4, ".pyc") ||
	    dir < sizeof(cache) - 1 || strncmp(name - (sizeof(cache) - 1),
	    cache, sizeof(cache) - 1) || (dir > sizeof(cache) - 1 &&
	    name[-(int)sizeof(cache)] != '/'))
		return 0;
	if (corral_buf_addf(&b, "%.*s%.*s.py", (int)(dir - (sizeof(cache) -
	    1)), rel, (int)(dot - name), name) < 0)
		rc = -1;
	else if (exists_in(src, b.data, &st) && S_ISREG(st.st_mode))
		rc = corral_strv_add(reads, b.data);
	corral_buf_release(&b);
	return rc;
}

int
corral_learn_stop(struct corral_learn *l, const char *src,
    struct corral_strv *reads, struct corral_strv *opened,
    struct corral_err *err)
{
	struct stat st;
	const char *rel;
	size_t i;
	int rc = 0, complete;

	if (!l)
		return 0;
	(void)!write(l->stop[1], "", 1);
	pthread_join(l->thread, NULL);
	for (i = 0; rc == 0 && i < l->keys.n; i++) {
		rel = l->keys.v[i] + 1;
		if (!strcmp(rel, CORRAL_CLONE_MARK) || !exists_in(src, rel, &st))
			continue;
		if (l->keys.v[i][0] == 'd' && S_ISDIR(st.st_mode))
			rc = add_listing(rel, reads);
		else if (l->keys.v[i][0] == 'f')
			rc = corral_strv_add(reads, rel) | (opened ?
			    corral_strv_add(opened, rel) : 0) |
			    add_pyc_source(src, rel, reads);
	}
	complete = !l->lost;
	learn_free(l);
	if (rc < 0)
		return corral_err_set(err, ENOMEM, "cannot learn");
	corral_strv_sort_unique(reads);
	if (opened)
		corral_strv_sort_unique(opened);
	return complete;
}

/* ------------------------------------------------------------------ */
/* Learning an attempt, and trying a failed unit in the whole tree      */

/* Whether the slice's clone is the whole tree (the part "."). */
static int
clone_is_whole(const struct corral_run *r)
{
	size_t i;
	char *rel;
	int whole = 0;

	for (i = 0; !whole && i < r->st->cloned.n; i++) {
		if (corral_path_is_listing(r->st->cloned.v[i]))
			continue;
		rel = corral_path_normalise(r->st->cloned.v[i]);
		whole = rel && !*rel;
		free(rel);
	}
	return whole;
}

/* Run attempt, watching what it opens under clone into o->reads. */
static int
watched_attempt(struct corral_run *r, const char *clone, const char *unit,
    size_t n, int attempt, struct outcome *o, struct corral_err *err)
{
	struct corral_learn *l;
	struct corral_err why;
	int rc, complete;

	/* Out of inotify instances: the attempt runs, unwatched. */
	if (corral_learn_start(&l, clone, &why) < 0 && why.errnum == ENOMEM)
		return corral_err_set(err, ENOMEM, "%s", why.msg);
	rc = corral_run_attempt(r, unit, n, attempt, o, err);
	corral_strv_release(&o->reads);
	corral_strv_release(&o->opened);
	complete = corral_learn_stop(l, r->src, &o->reads, &o->opened,
	    rc < 0 ? NULL : err);
	if (rc < 0 || complete < 0)
		return -1;
	/*
	 * A failed attempt teaches nothing: one that stopped early (a wrong
	 * interpreter, an import error) read less than the unit needs, and
	 * its next run would clone too little and run twice.
	 */
	o->has_reads = complete && o->ok;
	return 0;
}

int
corral_learn_attempt(struct corral_run *r, const char *unit, size_t n,
    int attempt, struct outcome *o, struct corral_err *err)
{
	if (!corral_strv_has(r->learn, unit) || !clone_is_whole(r))
		return corral_run_attempt(r, unit, n, attempt, o, err);
	return watched_attempt(r, r->clone, unit, n, attempt, o, err);
}

/* Point the units' CORRAL_WORKDIR at dir. */
static int
set_workdir(struct corral_run *r, const char *dir)
{
	static const char name[] = "CORRAL_WORKDIR=";
	struct corral_buf b = CORRAL_BUF_INIT;
	size_t i;

	for (i = 0; i < r->st->env.n; i++)
		if (!strncmp(r->st->env.v[i], name, sizeof(name) - 1))
			break;
	if (i == r->st->env.n || corral_buf_addf(&b, "%s%s", name, dir) < 0)
		return -1;
	free(r->st->env.v[i]);
	r->st->env.v[i] = b.data;
	return 0;
}

/* A fresh clone of the whole tree beside the slice's, less .git. */
static char *
whole_clone(struct corral_run *r, struct corral_err *err)
{
	struct corral_strv exclude = CORRAL_STRV_INIT, whole = CORRAL_STRV_INIT;
	struct corral_buf t = CORRAL_BUF_INIT;
	char *dir = corral_path_dir(r->clone);
	size_t i;
	int rc = -1;

	if (!dir || corral_buf_addf(&t, "%s/corral-%s-whole.XXXXXX", dir,
	    r->agent) < 0 || corral_strv_add(&whole, ".") < 0 ||
	    corral_strv_add(&exclude, ".git") < 0) {
		corral_err_set(err, ENOMEM, "cannot run a unit");
		goto out;
	}
	for (i = 0; r->exclude && i < r->exclude->n; i++)
		if (corral_strv_add(&exclude, r->exclude->v[i]) < 0) {
			corral_err_set(err, ENOMEM, "cannot run a unit");
			goto out;
		}
	if (!mkdtemp(t.data)) {
		corral_err_set(err, errno, "cannot create '%s'", t.data);
		goto out;
	}
	if (corral_checkout(r->src, &whole, &exclude, r->patterns, t.data,
	    NULL, err) < 0)
		rmdir(t.data);
	else
		rc = 0;
out:
	free(dir);
	corral_strv_release(&exclude);
	corral_strv_release(&whole);
	if (rc < 0)
		corral_buf_release(&t);
	return t.data;
}

/* path, and each directory above it, which the clone holds too. */
static int
put_with_parents(struct corral_set *set, const char *path)
{
	const char *p;

	for (p = strchr(path, '/'); p; p = strchr(p + 1, '/'))
		if (corral_set_putn(set, path, (size_t)(p - path), 0, NULL) < 0)
			return -1;
	return corral_set_put(set, path, 0, NULL);
}

/* What the slice's clone holds, as paths (the manifest's, and above). */
static struct corral_set *
clone_paths(struct corral_run *r, struct corral_err *err)
{
	struct corral_buf m = CORRAL_BUF_INIT;
	struct corral_set *set;
	char *line, *nl, *p, *arrow;
	int k;

	if (!(set = corral_set_new()) || corral_checkout_manifest(r->src,
	    &r->st->cloned, r->exclude, r->patterns, NULL, &m, NULL, err) < 0) {
		if (!set)
			corral_err_set(err, ENOMEM, "cannot run a unit");
		corral_set_free(set);
		corral_buf_release(&m);
		return NULL;
	}
	for (line = m.data; line && *line; line = nl + 1) {
		if (!(nl = strchr(line, '\n')))
			break;
		*nl = '\0';
		for (p = line, k = 0; line[0] != '-' && k < 4 && p; k++)
			if ((p = strchr(p, ' ')))
				p++;
		if (line[0] == '-' || !p)
			continue;
		if (line[0] == 'l' && (arrow = strstr(p, " -> ")))
			*arrow = '\0';
		if (put_with_parents(set, p) < 0)
			break;
	}
	corral_buf_release(&m);
	return set;
}

/*
 * What of path the clone lacked, named as a user would add it: its
 * shallowest directory the clone lacks whole ("plugins/"), else path.
 */
static int
add_lacked(const struct corral_set *have, const char *path,
    struct corral_strv *lacked)
{
	const char *p;

	for (p = strchr(path, '/'); p; p = strchr(p + 1, '/'))
		if (!corral_set_getn(have, path, (size_t)(p - path)))
			return corral_strv_addn(lacked, path,
			    (size_t)(p - path) + 1);
	return corral_strv_add(lacked, path);
}

static int
dirs_first(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	int dx = x[strlen(x) - 1] == '/', dy = y[strlen(y) - 1] == '/';

	return dx != dy ? dy - dx : strcmp(x, y);
}

/*
 * What of w's reads the slice's clone lacked: of the files it opened,
 * else of those in the directories it listed; directories first, each
 * once.
 */
static int
lacked_of(struct corral_run *r, const struct outcome *w,
    struct corral_strv *lacked, struct corral_err *err)
{
	struct corral_set *have = clone_paths(r, err);
	const struct corral_strv *from = &w->opened;
	size_t i;
	int rc = 0;

	if (!have)
		return -1;
	for (i = 0; rc == 0 && i < from->n; i++)
		if (!corral_set_get(have, from->v[i]))
			rc = add_lacked(have, from->v[i], lacked);
	for (i = 0, from = &w->reads; rc == 0 && !lacked->n && i < from->n; i++)
		if (!corral_set_get(have, from->v[i]))
			rc = add_lacked(have, from->v[i], lacked);
	corral_set_free(have);
	if (rc < 0)
		return corral_err_set(err, ENOMEM, "cannot run a unit");
	corral_strv_sort_unique(lacked);
	if (lacked->n)
		qsort(lacked->v, lacked->n, sizeof(*lacked->v), dirs_first);
	return 0;
}

/* "'a', 'b' and 3 more" */
static int
add_names(struct corral_buf *b, const struct corral_strv *names)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < names->n && i < LACKED_NAMED; i++)
		rc |= corral_buf_addf(b, "%s'%s'", i ? ", " : "", names->v[i]);
	if (names->n > LACKED_NAMED)
		rc |= corral_buf_addf(b, " and %zu more",
		    names->n - LACKED_NAMED);
	return rc;
}

/*
 * The failed unit passed in the whole tree (w): with auto, it passes, its
 * reads learned again (the whole tree when it opened nothing its clone
 * lacked); with the check alone it still fails, and says what is missing.
 */
static int
passed_whole(struct corral_run *r, struct outcome *o, struct outcome *w,
    const struct corral_strv *lacked)
{
	struct corral_buf note = CORRAL_BUF_INIT;
	int rc;

	if (r->learn)
		rc = corral_buf_addstr(&note, "PASS: with the whole tree; its "
		    "learned parts were not enough");
	else
		rc = corral_buf_addstr(&note, "FAIL: passes with the whole "
		    "tree: a part is missing");
	if (!w->has_reads)
		rc |= corral_buf_addstr(&note, "; what it opened was not seen "
		    "(out of inotify watches or instances)");
	else if (lacked->n)
		rc |= corral_buf_addstr(&note, "; its clone lacked ") |
		    add_names(&note, lacked);
	else
		rc |= corral_buf_addstr(&note, "; it opened nothing its clone "
		    "lacked (what it lists or stats is not seen)");
	if (r->learn && w->has_reads && lacked->n)
		rc |= corral_buf_addstr(&note, "; learned again");
	else if (r->learn && w->has_reads)
		rc |= corral_buf_addstr(&note, "; it keeps the whole tree");
	if (rc < 0 || (r->learn && w->has_reads && !lacked->n &&
	    (corral_strv_release(&w->reads), corral_strv_add(&w->reads,
	    ".") < 0))) {
		corral_buf_release(&note);
		return -1;
	}
	corral_buf_release(&w->note);
	w->note = note;
	if (!r->learn) {
		/* The failure stands; what it needs is what the whole run read. */
		corral_buf_release(&o->note);
		o->note = w->note;
		memset(&w->note, 0, sizeof(w->note));
		corral_strv_release(&o->reads);
		o->reads = w->reads;
		memset(&w->reads, 0, sizeof(w->reads));
		o->has_reads = w->has_reads;
		return 0;
	}
	return 1;
}

/* Swap the finished whole-tree attempt w into o (its record is o's). */
static void
take_outcome(struct outcome *o, struct outcome *w)
{
	struct outcome old = *o;

	*o = *w;
	*w = old;
}

static void
outcome_release(struct outcome *o)
{
	corral_buf_release(&o->note);
	corral_buf_release(&o->out);
	corral_strv_release(&o->reads);
	corral_strv_release(&o->opened);
}

int
corral_learn_after(struct corral_run *r, const char *unit, size_t n,
    int *attempt, struct outcome *o, struct corral_err *err)
{
	struct corral_strv lacked = CORRAL_STRV_INIT;
	struct outcome w;
	char *whole, *slice = r->clone;
	int rc;

	if (o->ok || (!r->whole_check && !r->learn) || clone_is_whole(r) ||
	    !strcmp(o->status, "error") || corral_run_caught())
		return 0;
	if (!(whole = whole_clone(r, err)))
		return -1;
	memset(&w, 0, sizeof(w));
	r->clone = whole;
	rc = set_workdir(r, whole) < 0 ? corral_err_set(err, ENOMEM,
	    "cannot run a unit") : watched_attempt(r, whole, unit, n,
	    *attempt + 1, &w, err);
	r->clone = slice;
	if (set_workdir(r, slice) < 0 && rc == 0)
		rc = corral_err_set(err, ENOMEM, "cannot run a unit");
	if (corral_clone_remove(whole, rc < 0 ? NULL : err) < 0)
		rc = -1;
	free(whole);
	if (rc == 0 && !w.ok && corral_buf_addstr(&o->note, "; fails with "
	    "the whole tree too") < 0)
		rc = corral_err_set(err, ENOMEM, "cannot run a unit");
	if (rc == 0 && w.ok && (rc = lacked_of(r, &w, &lacked, err)) == 0 &&
	    (rc = passed_whole(r, o, &w, &lacked)) < 0)
		corral_err_set(err, ENOMEM, "cannot run a unit");
	if (rc == 1) {
		take_outcome(o, &w);
		++*attempt;
		rc = 0;
	}
	outcome_release(&w);
	corral_strv_release(&lacked);
	return rc;
}
