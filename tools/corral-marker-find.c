/* See LICENSE file for copyright and license details. */
/*
 * corral-marker-find is the built-in finder, and an example of one: it
 * prints one finding, as a JSON line, for every regular file under DIR
 * that contains the marker DEADCANARY.  The identity is "dc:" and the
 * path relative to DIR; the location is that path.  It walks in sorted
 * order, never follows a symlink, and skips .git, node_modules,
 * __pycache__, .venv and venv.  Like every finder it exits 0 when it
 * looked, whether or not it found anything, and 2 when it could not look
 * (an unreadable file or directory): "could not look" is never "found
 * nothing".
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

#define MARKER "DEADCANARY"

static const struct corral_usage use = {
	"corral-marker-find [DIR]",
	NULL,
	NULL
};

static int
skipped(const char *name)
{
	static const char *const skip[] = { ".git", "node_modules",
	    "__pycache__", ".venv", "venv", NULL };
	size_t i;

	for (i = 0; skip[i]; i++)
		if (!strcmp(name, skip[i]))
			return 1;
	return 0;
}

static int
has_marker(const char *s, size_t n)
{
	size_t i, m = strlen(MARKER);

	for (i = 0; i + m <= n; i++)
		if (s[i] == MARKER[0] && !memcmp(s + i, MARKER, m))
			return 1;
	return 0;
}

static void
report(const char *rel)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	char *id = xmalloc(strlen(rel) + 4);

	sprintf(id, "dc:%s", rel);
	if (corral_buf_addstr(&b, "{\"identity\":") < 0 ||
	    corral_buf_addjson(&b, id, strlen(id)) < 0 ||
	    corral_buf_addstr(&b, ",\"location\":") < 0 ||
	    corral_buf_addjson(&b, rel, strlen(rel)) < 0 ||
	    corral_buf_addstr(&b, ",\"corroboration\":2,\"max_confidence\":"
	    "0.8,\"trust\":\"corroborated\"}\n") < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	fwrite(b.data, 1, b.len, stdout);
	corral_buf_release(&b);
	free(id);
}

/* Look at path (rel to the top, "" for the top itself); 0 or -1. */
static int
look(const char *path, const char *rel)
{
	struct corral_buf text = CORRAL_BUF_INIT;
	struct corral_err err;
	struct dirent **ents;
	struct stat st;
	char *p, *r;
	int i, n, rc = 0;

	if (lstat(path, &st) < 0)
		return corral_error("cannot stat '%s':", path);
	if (S_ISREG(st.st_mode)) {
		if (corral_read_file(path, &text, &err) < 0) {
			corral_warn_err(&err);
			rc = -1;
		} else if (has_marker(text.data, text.len))
			report(rel);
		corral_buf_release(&text);
		return rc;
	}
	if (!S_ISDIR(st.st_mode))
		return 0;
	if ((n = scandir(path, &ents, NULL, alphasort)) < 0)
		return corral_error("cannot open '%s':", path);
	for (i = 0; i < n; i++) {
		if (rc == 0 && strcmp(ents[i]->d_name, ".") &&
		    strcmp(ents[i]->d_name, "..") && !skipped(ents[i]->d_name)) {
			p = xmalloc(strlen(path) + strlen(ents[i]->d_name) + 2);
			r = xmalloc(strlen(rel) + strlen(ents[i]->d_name) + 2);
			sprintf(p, "%s/%s", path, ents[i]->d_name);
			sprintf(r, "%s%s%s", rel, *rel ? "/" : "",
			    ents[i]->d_name);
			rc = look(p, r);
			free(p);
			free(r);
		}
		free(ents[i]);
	}
	free(ents);
	return rc;
}

int
main(int argc, char *argv[])
{
	int rc;

	corral_setprogname(argv[0]);
	corral_usage_only_h(&use, argc, argv, 1);
	rc = look(optind < argc ? argv[optind] : ".", "");
	xflush_stdout();
	return rc < 0 ? CORRAL_EXIT_ERR : CORRAL_EXIT_OK;
}
