/* See LICENSE file for copyright and license details. */
/*
 * direct.c tells a unit's command that needs no shell from one that does,
 * and cuts the first into its words, as make does for a recipe line: a
 * shell costs an exec per unit, as much again as a small unit itself.  A
 * command needs no shell when it is words of plain characters, '...'
 * and "..." strings, the double-quoted ones holding at most $NAME or
 * ${NAME}, taken from the unit's environment (so sh "$CORRAL_UNIT" needs
 * none); anything else -- an unquoted $, a glob, a redirection, a
 * keyword or a builtin of the shell's own first, an assignment -- goes to
 * /bin/sh -c as written.  What the words run is what sh would run:
 * found on PATH, and when it cannot be started (not found, not an
 * executable, a script without #!) the caller starts the shell instead,
 * which says so as sh says it.  The program is looked up on PATH once
 * per slice, not once per unit and directory by execvp.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "agent/run-private.h"

/* First words a shell must see: its keywords and its own builtins. */
static const char *const shell_words[] = {
	"!", "{", "}", "case", "do", "done", "elif", "else", "esac", "fi",
	"for", "if", "in", "then", "until", "while", ".", ":", "alias", "bg",
	"break", "cd", "command", "continue", "eval", "exec", "exit",
	"export", "fc", "fg", "getopts", "hash", "jobs", "local", "read",
	"readonly", "return", "set", "shift", "times", "trap", "type",
	"ulimit", "umask", "unalias", "unset", "wait", NULL
};

static int
plain(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || (c && strchr("_./,:+=@%^-", c));
}

static int
name_char(int c, int first)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (!first && c >= '0' && c <= '9');
}

/* The value of name[0..n) in env (NULL-ended NAME=VALUE), or "". */
static const char *
lookup(char *const *env, const char *name, size_t n)
{
	for (; env && *env; env++)
		if (!strncmp(*env, name, n) && (*env)[n] == '=')
			return *env + n + 1;
	return "";
}

/*
 * A "..." string at *sp (past its opening quote) appended to w, $NAME and
 * ${NAME} expanded; *sp is left past the closing quote.  0, 1 when the
 * string needs a shell, -1 on ENOMEM.
 */
static int
dquoted(const char **sp, char *const *env, struct corral_buf *w)
{
	const char *s = *sp, *name;
	size_t n;
	int brace;

	for (; *s != '"'; s++) {
		if (!*s || *s == '\\' || *s == '`')
			return 1;
		if (*s != '$') {
			if (corral_buf_addch(w, *s) < 0)
				return -1;
			continue;
		}
		brace = s[1] == '{';
		name = s + 1 + brace;
		for (n = 0; name_char(name[n], n == 0); n++)
			;
		if (!n || (brace && name[n] != '}'))
			return 1;
		if (corral_buf_addstr(w, lookup(env, name, n)) < 0)
			return -1;
		s = name + n + brace - 1;
	}
	*sp = s + 1;
	return 0;
}

/* One word at *sp appended to w; 0, 1 (needs a shell) or -1. */
static int
word(const char **sp, char *const *env, struct corral_buf *w)
{
	const char *s = *sp, *q;
	int rc;

	while (*s && *s != ' ' && *s != '\t') {
		if (*s == '\'') {
			if (!(q = strchr(s + 1, '\'')))
				return 1;
			if (corral_buf_add(w, s + 1, (size_t)(q - s - 1)) < 0)
				return -1;
			s = q + 1;
		} else if (*s == '"') {
			s++;
			if ((rc = dquoted(&s, env, w)) != 0)
				return rc;
		} else if (plain((unsigned char)*s)) {
			if (corral_buf_addch(w, *s++) < 0)
				return -1;
		} else {
			return 1;
		}
	}
	*sp = s;
	return 0;
}

static int
shell_word(const char *s)
{
	const char *const *k;

	for (k = shell_words; *k; k++)
		if (!strcmp(s, *k))
			return 1;
	return 0;
}

int
corral_run_words(const char *cmd, char *const *env, struct corral_strv *argv)
{
	struct corral_buf w = CORRAL_BUF_INIT;
	const char *s = cmd, *start;
	int rc = 0;

	while (rc == 0) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		corral_buf_reset(&w);
		start = s;
		if ((rc = word(&s, env, &w)) != 0)
			break;
		/* The first word: no keyword, builtin or assignment. */
		if (!argv->n && (shell_word(w.data ? w.data : "") ||
		    memchr(start, '=', (size_t)(s - start))))
			rc = 1;
		else if (corral_strv_addn(argv, w.data ? w.data : "", w.len) < 0)
			rc = -1;
	}
	if (rc == 0 && !argv->n)
		rc = 1;
	corral_buf_release(&w);
	return rc;
}

int
corral_run_which(const char *word, char *const *env, struct corral_buf *path)
{
	const char *dirs = lookup(env, "PATH", 4), *end;
	struct stat st;
	size_t n;

	for (; dirs; dirs = *end ? end + 1 : NULL) {
		end = strchr(dirs, ':');
		end = end ? end : dirs + strlen(dirs);
		n = (size_t)(end - dirs);
		corral_buf_reset(path);
		if ((n ? corral_buf_add(path, dirs, n) : corral_buf_addch(path,
		    '.')) < 0 || corral_buf_addf(path, "/%s", word) < 0)
			return -1;
		if (stat(path->data, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(path->data, X_OK) == 0)
			return 0;
	}
	return 1;
}
