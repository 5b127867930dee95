/* See LICENSE file for copyright and license details. */
/*
 * key.c computes the key of a unit: a SHA-256 over named parts -- the
 * unit, the settings that join the key, the variables of CORRAL_CACHE_ENV,
 * the toolchain (the shell and each program CORRAL_CMD starts, by their
 * content, and CORRAL_CACHE_KEY's output), and the inputs, each file by
 * its content, each listing by its names.  Equal parts make equal keys on
 * any host: no path outside the tree, no mtime and no clock enters it.
 * What the key cannot see is what no part names: a file only stat'ed,
 * the network, the time of day.
 */
#define _GNU_SOURCE	/* realpath */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "cache/cache.h"

void
corral_cache_key_init(struct corral_cache_key *k)
{
	memset(k, 0, sizeof(*k));
}

void
corral_cache_key_release(struct corral_cache_key *k)
{
	corral_strv_release(&k->names);
	corral_strv_release(&k->values);
	corral_cache_key_init(k);
}

void
corral_cache_ctx_init(struct corral_cache_ctx *c)
{
	memset(c, 0, sizeof(*c));
}

void
corral_cache_ctx_release(struct corral_cache_ctx *c)
{
	corral_cache_key_release(&c->base);
	corral_set_free(c->memo);
	corral_strv_release(&c->memo_n);
	corral_strv_release(&c->memo_v);
	corral_memo_free(c->stats);
	corral_cache_ctx_init(c);
}

void
corral_cache_ctx_forget(struct corral_cache_ctx *c)
{
	if (!c->memo)
		return;	/* not prepared yet: nothing computed */
	corral_set_free(c->memo);
	corral_strv_release(&c->memo_n);
	corral_strv_release(&c->memo_v);
	c->memo = corral_set_new();	/* NULL: every input read each time */
}

static int
part_add(struct corral_cache_key *k, const char *name, const char *value)
{
	return corral_strv_add(&k->names, name) |
	    corral_strv_add(&k->values, value);
}

static int
part_addf(struct corral_cache_key *k, const char *kind, const char *what,
    const char *value)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	int rc = corral_buf_addf(&b, "%s %s", kind, what);

	if (rc == 0)
		rc = part_add(k, b.data, value);
	corral_buf_release(&b);
	return rc;
}

int
corral_cache_file_digest(struct corral_cache_ctx *c, const char *path,
    char hex[CORRAL_SHA256_HEX], struct corral_err *err)
{
	unsigned char md[32];
	int fd, rc;

	/* the engine's manifests just digested the tree: a stat, no read */
	if (c && c->stats &&
	    corral_memo_digest(c->stats, AT_FDCWD, path, md) == 0) {
		corral_sha256_tohex(md, hex);
		return 0;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) < 0)
		return corral_err_set(err, errno, "cannot open '%s'", path);
	rc = corral_sha256_fd(fd, path, hex, err);
	close(fd);
	return rc;
}

/* ------------------------------------------------------------------ */
/* The shared parts                                                     */

/* The program word names on PATH (or word itself with a '/'), malloc'd. */
static char *
on_path(const char *word)
{
	const char *path = getenv("PATH"), *p;
	struct corral_buf b = CORRAL_BUF_INIT;
	size_t n;

	if (strchr(word, '/'))
		return *word == '/' && access(word, X_OK) == 0 ?
		    realpath(word, NULL) : NULL;
	for (p = path ? path : "/usr/bin:/bin"; *p; p += n + (p[n] == ':')) {
		n = strcspn(p, ":");
		corral_buf_reset(&b);
		if (n && corral_buf_addf(&b, "%.*s/%s", (int)n, p, word) == 0 &&
		    access(b.data, X_OK) == 0) {
			char *real = realpath(b.data, NULL);

			corral_buf_release(&b);
			return real;
		}
	}
	corral_buf_release(&b);
	return NULL;
}

/* A program of the toolchain, by its content: "tool /usr/bin/make". */
static int
add_tool(struct corral_cache_key *k, const char *word, struct corral_err *err)
{
	char hex[CORRAL_SHA256_HEX], *path = on_path(word);
	int rc = 0;

	struct corral_buf name = CORRAL_BUF_INIT;

	if (!path)
		return 0;
	if (corral_buf_addf(&name, "tool %s", path) < 0)
		rc = corral_err_set(err, ENOMEM, "cache key");
	else if (!corral_strv_has(&k->names, name.data)) {
		/* one that cannot be read is named as such, never fatal */
		if (corral_cache_file_digest(NULL, path, hex, err) < 0)
			strcpy(hex, "unreadable");
		rc = part_add(k, name.data, hex) < 0 ?
		    corral_err_set(err, ENOMEM, "cache key") : 0;
	}
	corral_buf_release(&name);
	free(path);
	return rc;
}

static int
is_keyword(const char *w)
{
	static const char *const kw[] = { "if", "then", "else", "elif",
	    "fi", "do", "done", "while", "until", "for", "case", "esac",
	    "in", "{", "}", "!", "time", "exec", "command", "env", NULL };
	size_t i;

	for (i = 0; kw[i]; i++)
		if (!strcmp(w, kw[i]))
			return 1;
	return 0;
}

/* NAME=VALUE before a command. */
static int
is_assignment(const char *w)
{
	const char *eq = strchr(w, '=');

	return eq && eq > w && eq < w + strcspn(w, "/");
}

/*
 * The first word of each simple command of cmd (cut at ; & | ( ) and
 * newlines; assignments and keywords before it skipped), each that
 * resolves on PATH; a word with an expansion or a quote is left out.
 */
static int
add_cmd_tools(struct corral_cache_key *k, const char *cmd,
    struct corral_err *err)
{
	static const char sep[] = ";&|()\n`";
	struct corral_strv words = CORRAL_STRV_INIT;
	char *seg;
	size_t n, i;
	int rc = 0;

	for (; rc == 0 && *cmd; cmd += n + (cmd[n] != '\0')) {
		n = strcspn(cmd, sep);
		if (!(seg = strndup(cmd, n)))
			return corral_err_set(err, ENOMEM, "cache key");
		corral_strv_release(&words);
		rc = corral_words(seg, &words) < 0 ?
		    corral_err_set(err, ENOMEM, "cache key") : 0;
		free(seg);
		for (i = 0; i < words.n && (is_assignment(words.v[i]) ||
		    is_keyword(words.v[i])); i++)
			;
		if (rc == 0 && i < words.n &&
		    !words.v[i][strcspn(words.v[i], "$\"'*?[\\")])
			rc = add_tool(k, words.v[i], err);
	}
	corral_strv_release(&words);
	return rc;
}

/* "setting NAME" for each "NAME value" line. */
static int
add_settings(struct corral_cache_key *k, const char *lines)
{
	struct corral_buf name = CORRAL_BUF_INIT, value = CORRAL_BUF_INIT;
	size_t n, w;
	int rc = 0;

	for (; rc == 0 && lines && *lines; lines += n + (lines[n] == '\n')) {
		n = strcspn(lines, "\n");
		w = strcspn(lines, " \n");
		corral_buf_reset(&name);
		corral_buf_reset(&value);
		rc = corral_buf_addf(&name, "setting %.*s", (int)w, lines) |
		    corral_buf_addf(&value, "%.*s", (int)(n > w ? n - w - 1 :
		    0), lines + (n > w ? w + 1 : n));
		if (rc == 0)
			rc = part_add(k, name.data, value.data);
	}
	corral_buf_release(&name);
	corral_buf_release(&value);
	return rc;
}

/* "env NAME": the digest of its value (no secret is kept), or unset. */
static int
add_env(struct corral_cache_key *k, const char *names, struct corral_err *err)
{
	struct corral_strv words = CORRAL_STRV_INIT;
	char hex[CORRAL_SHA256_HEX];
	const char *v;
	size_t i;
	int rc = corral_words(names ? names : "", &words) < 0 ? -1 : 0;

	for (i = 0; rc == 0 && i < words.n; i++) {
		v = getenv(words.v[i]);
		if (v && corral_sha256_buf(v, strlen(v), hex, err) < 0)
			rc = -2;
		else
			rc = part_addf(k, "env", words.v[i], v ? hex : "unset");
	}
	corral_strv_release(&words);
	if (rc == -1)
		return corral_err_set(err, ENOMEM, "cache key");
	return rc < 0 ? -1 : 0;
}

/* "key-command": the digest of CORRAL_CACHE_KEY's output and status. */
static int
add_key_cmd(struct corral_cache_key *k, const char *cmd,
    struct corral_err *err)
{
	struct corral_buf out = CORRAL_BUF_INIT;
	char hex[CORRAL_SHA256_HEX], buf[4096];
	size_t n;
	FILE *fp;
	int st, rc;

	if (!cmd || !*cmd)
		return 0;
	if (!(fp = popen(cmd, "r")))
		return corral_err_set(err, errno, "cannot run CORRAL_CACHE_KEY");
	rc = 0;
	while ((n = fread(buf, 1, sizeof(buf), fp)) > 0 && rc == 0)
		rc = corral_buf_add(&out, buf, n);
	st = pclose(fp);
	if (rc == 0)
		rc = corral_buf_addf(&out, "\nstatus %d\n", st);
	if (rc < 0)
		rc = corral_err_set(err, ENOMEM, "cache key");
	else if ((rc = corral_sha256_buf(out.data, out.len, hex, err)) == 0 &&
	    part_add(k, "key-command", hex) < 0)
		rc = corral_err_set(err, ENOMEM, "cache key");
	corral_buf_release(&out);
	return rc;
}

int
corral_cache_ctx_prepare(struct corral_cache_ctx *c, struct corral_err *err)
{
	struct corral_cache_key *k = &c->base;

	if (!(c->memo = corral_set_new()))
		return corral_err_set(err, ENOMEM, "cache key");
	/* missing, torn or foreign: an empty memo, every file read */
	if (c->digests && !c->stats && !(c->stats = corral_memo_open(c->digests)))
		return corral_err_set(err, ENOMEM, "cache key");
	if (add_settings(k, c->settings) < 0)
		return corral_err_set(err, ENOMEM, "cache key");
	if (add_env(k, c->env, err) < 0 ||
	    add_tool(k, c->shell && *c->shell ? c->shell : "/bin/sh",
	    err) < 0 ||
	    add_cmd_tools(k, c->cmd ? c->cmd : "", err) < 0 ||
	    add_key_cmd(k, c->key_cmd, err) < 0)
		return -1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Inputs                                                               */

/* Whether rel (relative to the tree) is left out: c->exclude, as cloned. */
static int
excluded(const struct corral_cache_ctx *c, const char *rel)
{
	size_t i;

	for (i = 0; c->exclude && i < c->exclude->n; i++)
		if (!strcmp(c->exclude->v[i], rel))
			return 1;
	return 0;
}

/* name in the directory rel of the tree ("." its top), malloc'd. */
static char *
sub_rel(const char *rel, const char *name)
{
	return strcmp(rel, ".") ? corral_path_join(rel, name) : strdup(name);
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir, sorted (less "." and ".."), into names. */
static int
names_in(const char *dir, struct corral_strv *names)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int rc = 0;

	if (!d)
		return -1;
	while (rc == 0 && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = corral_strv_add(names, de->d_name);
	closedir(d);
	if (names->n)
		qsort(names->v, names->n, sizeof(*names->v), by_name);
	return rc;
}

static int tree_add(struct corral_cache_ctx *c, struct corral_sha256 *sha,
    const char *path, const char *rel, int depth, struct corral_err *err);

/* Each name of dir and what it holds, into sha. */
static int
dir_add(struct corral_cache_ctx *c, struct corral_sha256 *sha,
    const char *path, const char *rel, int depth, struct corral_err *err)
{
	struct corral_strv names = CORRAL_STRV_INIT;
	char *sub, *subrel;
	size_t i;
	int rc = names_in(path, &names) < 0 ? corral_err_set(err, errno,
	    "cannot open '%s'", path) : 0;

	for (i = 0; rc == 0 && i < names.n; i++) {
		if (depth == 0 && !strcmp(names.v[i], ".git"))
			continue;
		sub = corral_path_join(path, names.v[i]);
		subrel = sub_rel(rel, names.v[i]);
		if (!sub || !subrel)
			rc = corral_err_set(err, ENOMEM, "cache key");
		else if (!excluded(c, subrel))
			rc = tree_add(c, sha, sub, subrel, depth + 1, err);
		free(sub);
		free(subrel);
	}
	corral_strv_release(&names);
	return rc;
}

/* path (rel in the tree) into sha: its type, name and content. */
static int
tree_add(struct corral_cache_ctx *c, struct corral_sha256 *sha,
    const char *path, const char *rel, int depth, struct corral_err *err)
{
	char hex[CORRAL_SHA256_HEX], link[4096];
	struct corral_buf line = CORRAL_BUF_INIT;
	struct stat st;
	ssize_t n;
	int rc = 0;

	if (lstat(path, &st) < 0)
		return 0;	/* gone while walking: not what the unit saw */
	if (S_ISREG(st.st_mode))
		rc = corral_cache_file_digest(c, path, hex, err) < 0 ? -1 :
		    corral_buf_addf(&line, "f %s %s %o\n", rel, hex,
		    (unsigned)(st.st_mode & 0111));
	else if (S_ISLNK(st.st_mode) && (n = readlink(path, link,
	    sizeof(link) - 1)) >= 0)
		rc = corral_buf_addf(&line, "l %s %.*s\n", rel, (int)n, link);
	else if (S_ISDIR(st.st_mode))
		rc = corral_buf_addf(&line, "d %s\n", rel);
	if (rc == 0 && line.data)
		rc = corral_sha256_add(sha, line.data, line.len, err);
	corral_buf_release(&line);
	if (rc == 0 && S_ISDIR(st.st_mode))
		rc = dir_add(c, sha, path, rel, depth, err);
	return rc;
}

/* The names in the directory path, as one digest. */
static int
listing_digest(const char *path, char hex[CORRAL_SHA256_HEX],
    struct corral_err *err)
{
	struct corral_strv names = CORRAL_STRV_INIT;
	struct corral_buf b = CORRAL_BUF_INIT;
	size_t i;
	int rc = names_in(path, &names) < 0 ? corral_err_set(err, errno,
	    "cannot open '%s'", path) : 0;

	for (i = 0; rc == 0 && i < names.n; i++)
		rc = corral_buf_addf(&b, "%s\n", names.v[i]) < 0 ?
		    corral_err_set(err, ENOMEM, "cache key") : 0;
	if (rc == 0)
		rc = corral_sha256_buf(b.data ? b.data : "", b.len, hex, err);
	corral_strv_release(&names);
	corral_buf_release(&b);
	return rc;
}

/* The part an input makes: its name into name, its digest into hex. */
static int
input_part(struct corral_cache_ctx *c, const char *input,
    struct corral_buf *name, char hex[CORRAL_SHA256_HEX],
    struct corral_err *err)
{
	struct corral_sha256 sha = { NULL };
	size_t n = strlen(input);
	char *path = corral_path_join(c->src, input);
	struct stat st;
	int rc;

	if (!path)
		return corral_err_set(err, ENOMEM, "cache key");
	if (stat(path, &st) < 0 || excluded(c, input)) {
		rc = corral_buf_addf(name, "absent %s", input);
		strcpy(hex, "-");
	} else if (n && input[n - 1] == '/' && S_ISDIR(st.st_mode))
		rc = corral_buf_addf(name, "list %s", input) < 0 ? -1 :
		    listing_digest(path, hex, err);
	else if (S_ISDIR(st.st_mode))
		rc = corral_buf_addf(name, "tree %s", input) < 0 ||
		    corral_sha256_init(&sha, err) < 0 ||
		    tree_add(c, &sha, path, input, 0, err) < 0 ||
		    corral_sha256_peek(&sha, hex, err) < 0 ? -1 : 0;
	else
		rc = corral_buf_addf(name, "file %s", input) < 0 ? -1 :
		    corral_cache_file_digest(c, path, hex, err);
	corral_sha256_release(&sha);
	free(path);
	return rc;
}

/* An input's part, once per agent (the memo). */
static int
add_input(struct corral_cache_ctx *c, struct corral_cache_key *k,
    const char *input, struct corral_err *err)
{
	struct corral_buf name = CORRAL_BUF_INIT;
	char hex[CORRAL_SHA256_HEX];
	long *at = c->memo ? corral_set_get(c->memo, input) : NULL;
	int rc;

	if (at)
		return part_add(k, c->memo_n.v[*at], c->memo_v.v[*at]) < 0 ?
		    corral_err_set(err, ENOMEM, "cache key") : 0;
	if ((rc = input_part(c, input, &name, hex, err)) == 0 &&
	    (part_add(k, name.data, hex) < 0 ||
	    (c->memo && (corral_set_put(c->memo, input, (long)c->memo_n.n,
	    NULL) < 0 || corral_strv_add(&c->memo_n, name.data) < 0 ||
	    corral_strv_add(&c->memo_v, hex) < 0))))
		rc = corral_err_set(err, ENOMEM, "cache key");
	corral_buf_release(&name);
	return rc;
}

/* hex = SHA-256 of every part, each "name\0value\n". */
static int
key_digest(struct corral_cache_key *k, struct corral_err *err)
{
	struct corral_sha256 sha = { NULL };
	size_t i;
	int rc = corral_sha256_init(&sha, err);

	for (i = 0; rc == 0 && i < k->names.n; i++)
		rc = corral_sha256_add(&sha, k->names.v[i],
		    strlen(k->names.v[i]) + 1, err) |
		    corral_sha256_add(&sha, k->values.v[i],
		    strlen(k->values.v[i]), err) |
		    corral_sha256_add(&sha, "\n", 1, err);
	if (rc == 0)
		rc = corral_sha256_peek(&sha, k->hex, err);
	corral_sha256_release(&sha);
	return rc < 0 ? -1 : 0;
}

int
corral_cache_key_make(struct corral_cache_ctx *c, const char *unit,
    const struct corral_strv *inputs, struct corral_cache_key *k,
    struct corral_err *err)
{
	struct corral_strv sorted = CORRAL_STRV_INIT;
	size_t i;
	int rc = part_add(k, "unit", unit);

	for (i = 0; rc == 0 && i < c->base.names.n; i++)
		rc = part_add(k, c->base.names.v[i], c->base.values.v[i]);
	for (i = 0; rc == 0 && inputs && i < inputs->n; i++)
		if (!corral_strv_has(&sorted, inputs->v[i]))
			rc = corral_strv_add(&sorted, inputs->v[i]);
	if (rc < 0)
		return corral_err_set(err, ENOMEM, "cache key");
	if (sorted.n)
		qsort(sorted.v, sorted.n, sizeof(*sorted.v), by_name);
	for (i = 0; rc == 0 && i < sorted.n; i++)
		rc = add_input(c, k, sorted.v[i], err);
	corral_strv_release(&sorted);
	return rc < 0 ? -1 : key_digest(k, err);
}
