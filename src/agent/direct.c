/* See LICENSE file for copyright and license details. */
/*
 * direct.c tells a unit's command that needs no shell from one that does,
 * and cuts the first into its words, as make does for a recipe line: a
 * shell costs an exec per unit, as much again as a small unit itself.  A
 * command needs no shell when what the shell would run is known without
 * it: words of plain characters, '...' and "..." strings, the
 * double-quoted ones holding at most $NAME or ${NAME} of a variable the
 * agent itself sets for every unit (so sh "$CORRAL_UNIT" needs none),
 * since the shell passes those on as they came.  Anything else goes to
 * /bin/sh -c as written: an unquoted $, a glob, a redirection, any other
 * variable (the shell sets some itself, such as PPID, IFS, OPTIND and
 * PS1), a keyword or a builtin of the shell's own first (echo, printf,
 * test, pwd and kill differ from the programs of the same name; true and
 * false alone do not), an assignment.  What the words run is what sh
 * would run: found on PATH (a PATH that is not set means the shell's own
 * default, and one with an empty or relative entry is read in the
 * clone: both go to the shell), and when it cannot be started
 * (not found, not an executable, a script without #!) the caller starts
 * the shell instead, which says so as sh says it.  The program is looked
 * up on PATH once per slice, not once per unit and directory by execvp.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "agent/run-private.h"

/*
 * First words a shell must see: its keywords and its own builtins (dash's
 * and, for a /bin/sh that is bash, those of bash with a program of the
 * same name or a keyword's meaning).
 */
static const char *const shell_words[] = {
	"!", "{", "}", "case", "coproc", "do", "done", "elif", "else", "esac",
	"fi", "for", "function", "if", "in", "select", "then", "time",
	"until", "while", ".", ":", "alias", "bg", "break", "cd", "chdir",
	"command", "continue", "echo", "eval", "exec", "exit", "export",
	"false", "fc", "fg", "getopts", "hash", "jobs", "kill", "local",
	"printf", "pwd", "read", "readonly", "return", "set", "shift", "test",
	"times", "trap", "true", "type", "ulimit", "umask", "unalias", "unset",
	"wait", NULL
};

/*
 * Builtins that do just what the program of the same name does when
 * they are the whole command (given arguments, the programs read
 * --help and --version).
 */
static const char *const alone_words[] = { "true", "false", NULL };

/*
 * The variables the agent sets for every unit (run.c, make_env): the only
 * ones expanded without a shell.  One missing here only costs a shell.
 */
static const char *const own_vars[] = {
	"CORRAL_AGENT", "CORRAL_ATTEMPT", "CORRAL_NOTE", "CORRAL_RUN",
	"CORRAL_UNIT", "CORRAL_WORKDIR", NULL
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

/* Whether name[0..n) is one of words. */
static int
listed(const char *const *words, const char *name, size_t n)
{
	for (; *words; words++)
		if (strlen(*words) == n && !strncmp(*words, name, n))
			return 1;
	return 0;
}

/* The value of name[0..n) in env (NULL-ended NAME=VALUE), or NULL. */
static const char *
lookup(char *const *env, const char *name, size_t n)
{
	for (; env && *env; env++)
		if (!strncmp(*env, name, n) && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

/*
 * A "..." string at *sp (past its opening quote) appended to w, $NAME and
 * ${NAME} expanded; *sp is left past the closing quote.  0, 1 when the
 * string needs a shell, -1 on ENOMEM.
 */
static int
dquoted(const char **sp, char *const *env, struct corral_buf *w)
{
	const char *s = *sp, *name, *value;
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
		if (!n || (brace && name[n] != '}') ||
		    !listed(own_vars, name, n) || !(value = lookup(env, name, n)))
			return 1;
		if (corral_buf_addstr(w, value) < 0)
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

/*
 * Whether the first word, as expanded, is the shell's own: a keyword or a
 * builtin, but for one of alone_words as the whole command.
 */
static int
shells_own(const struct corral_strv *argv)
{
	const char *w = argv->v[0];

	if (!listed(shell_words, w, strlen(w)))
		return 0;
	return argv->n > 1 || !listed(alone_words, w, strlen(w));
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
		if (!argv->n && memchr(start, '=', (size_t)(s - start)))
			rc = 1;
		else if (corral_strv_addn(argv, w.data ? w.data : "", w.len) < 0)
			rc = -1;
	}
	if (rc == 0 && (!argv->n || shells_own(argv)))
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

	/* Without PATH, the shell searches a default of its own. */
	for (; dirs; dirs = *end ? end + 1 : NULL) {
		end = strchr(dirs, ':');
		end = end ? end : dirs + strlen(dirs);
		n = (size_t)(end - dirs);
		/* The shell reads "" and "bin" in the clone, not here. */
		if (!n || dirs[0] != '/')
			return 1;
		corral_buf_reset(path);
		if (corral_buf_add(path, dirs, n) < 0 ||
		    corral_buf_addf(path, "/%s", word) < 0)
			return -1;
		if (stat(path->data, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(path->data, X_OK) == 0)
			return 0;
	}
	return 1;
}
