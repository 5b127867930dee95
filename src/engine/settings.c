/* See LICENSE file for copyright and license details. */
/*
 * The one table of corral.mk's settings: each row its name, default,
 * kind, the file of CORRAL_OUT it joins, and the options of the
 * programs it becomes.  Adding a knob is a check in corral.mk, a row
 * here, and its use.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "cache/http.h"
#include "engine/engine.h"

#define SLICE_CFG "slice-config"	/* re-runs every slice */
#define PARTS_CFG "parts-config"	/* lists every slice's parts again */
#define MERGE_CFG "merge-config"	/* merges again */
#define PLAN_CFG "agents"		/* plans again */

#define NO { CP_NONE, 0, CA_VALUE, NULL }
#define TO(p, o) { p, o, CA_VALUE, NULL }

const struct corral_setting corral_settings_table[CS_COUNT] = {
	[CS_SRC] = { "CORRAL_SRC", "", CK_PATH, NULL, SLICE_CFG, { NO, NO } },
	[CS_OUT] = { "CORRAL_OUT", "", CK_PATH, NULL, NULL, { NO, NO } },
	[CS_UNITS] = { "CORRAL_UNITS", "", CK_TEXT, NULL, NULL, { NO, NO } },
	[CS_UNITS_FILE] = { "CORRAL_UNITS_FILE", "", CK_PATH, NULL, NULL,
	    { NO, NO } },
	[CS_DISCOVER] = { "CORRAL_DISCOVER", "", CK_TEXT, NULL, NULL,
	    { NO, NO } },
	[CS_CMD] = { "CORRAL_CMD", "", CK_TEXT, NULL, SLICE_CFG,
	    { TO(CP_SLICE, 'c'), NO }, 1 },
	[CS_SHELL] = { "CORRAL_SHELL", "/bin/sh", CK_WORD, NULL, SLICE_CFG,
	    { TO(CP_SLICE, 's'), NO }, 1 },
	[CS_PARTS] = { "CORRAL_PARTS", "", CK_WORDS, NULL, PARTS_CFG,
	    { { CP_PLAN, 'p', CA_EACH, "auto" }, NO }, 1 },
	[CS_PARTS_CMD] = { "CORRAL_PARTS_CMD", "", CK_TEXT, NULL, PARTS_CFG,
	    { TO(CP_PLAN, 'P'), NO } },
	[CS_PARTS_CHECK] = { "CORRAL_PARTS_CHECK", "0", CK_BOOL, NULL, NULL,
	    { { CP_SLICE, 'W', CA_IF, "1" }, NO } },
	[CS_PARTS_EXCLUDE] = { "CORRAL_PARTS_EXCLUDE", "", CK_WORDS, NULL,
	    PARTS_CFG, { { CP_SLICE, 'I', CA_EACH, NULL }, NO }, 1 },
	[CS_AGENTS] = { "CORRAL_AGENTS", "auto", CK_WORD, NULL, PLAN_CFG,
	    { TO(CP_SPLIT, 'n'), NO } },
	[CS_SPLIT] = { "CORRAL_SPLIT", "auto", CK_WORD, NULL, NULL,
	    { TO(CP_SPLIT, 's'), NO } },
	[CS_TIMEOUT] = { "CORRAL_TIMEOUT", "", CK_SECONDS, NULL, NULL,
	    { TO(CP_SLICE, 't'), NO }, 1 },
	[CS_SLICE_TIMEOUT] = { "CORRAL_SLICE_TIMEOUT", "", CK_SECONDS, NULL,
	    NULL, { TO(CP_SLICE, 'T'), NO } },
	[CS_RUN_TIMEOUT] = { "CORRAL_RUN_TIMEOUT", "", CK_SECONDS, NULL, NULL,
	    { NO, NO } },
	[CS_GRACE] = { "CORRAL_GRACE", "5", CK_SECONDS, NULL, NULL,
	    { TO(CP_SLICE, 'g'), NO } },
	[CS_RETRIES] = { "CORRAL_RETRIES", "0", CK_NUMBER, NULL, NULL,
	    { TO(CP_SLICE, 'R'), NO } },
	[CS_NO_RETRY] = { "CORRAL_NO_RETRY", "", CK_CODES, NULL, NULL,
	    { TO(CP_SLICE, 'N'), NO } },
	[CS_SKIP_CODES] = { "CORRAL_SKIP_CODES", "77", CK_CODES, NULL, NULL,
	    { TO(CP_SLICE, 'K'), NO }, 1 },
	[CS_ERROR_CODES] = { "CORRAL_ERROR_CODES", "99", CK_CODES, NULL, NULL,
	    { TO(CP_SLICE, 'B'), NO }, 1 },
	[CS_VERDICT] = { "CORRAL_VERDICT", "tap", CK_ENUM, "tap exit", NULL,
	    { { CP_SLICE, 'F', CA_IF, "exit" }, NO }, 1 },
	[CS_TMP] = { "CORRAL_TMP", "dir", CK_ENUM, "dir shared private", NULL,
	    { { CP_SLICE, 'U', CA_IF, "shared" },
	    { CP_SLICE, 'Q', CA_IF, "private" } }, 1 },
	[CS_NOTE_PATTERN] = { "CORRAL_NOTE_PATTERN", "", CK_TEXT, NULL, NULL,
	    { TO(CP_SLICE, 'f'), NO } },
	[CS_UNIT_JUNIT] = { "CORRAL_UNIT_JUNIT", "", CK_WORD, NULL, NULL,
	    { TO(CP_SLICE, 'J'), NO }, 1 },
	[CS_FAIL_ON_FLAKY] = { "CORRAL_FAIL_ON_FLAKY", "0", CK_BOOL, NULL,
	    MERGE_CFG, { { CP_MERGE, 'f', CA_IF, "1" }, NO } },
	[CS_HALT] = { "CORRAL_HALT", "", CK_NUMBER, NULL, NULL,
	    { { CP_SLICE, 'H', CA_COUNT, NULL }, NO } },
	[CS_OUTPUT_MAX] = { "CORRAL_OUTPUT_MAX", "1M", CK_BYTES, NULL,
	    MERGE_CFG, { TO(CP_SLICE, 'o'), TO(CP_REPORT, 'o') } },
	[CS_LIMIT_CPU] = { "CORRAL_LIMIT_CPU", "", CK_WHOLE_SECONDS, NULL,
	    NULL, { { CP_SLICE, 'L', CA_PREFIX, "cpu=" }, NO }, 1 },
	[CS_LIMIT_MEM] = { "CORRAL_LIMIT_MEM", "", CK_BYTES, NULL, NULL,
	    { { CP_SLICE, 'L', CA_PREFIX, "mem=" }, NO }, 1 },
	[CS_LIMIT_FSIZE] = { "CORRAL_LIMIT_FSIZE", "", CK_BYTES, NULL, NULL,
	    { { CP_SLICE, 'L', CA_PREFIX, "fsize=" }, NO }, 1 },
	[CS_SANDBOX] = { "CORRAL_SANDBOX", "none", CK_ENUM, "none bwrap",
	    SLICE_CFG, { TO(CP_SLICE, 'X'), NO }, 1 },
	[CS_SANDBOX_ARGS] = { "CORRAL_SANDBOX_ARGS", "", CK_WORDS, NULL,
	    SLICE_CFG, { { CP_SLICE, 'a', CA_EACH, NULL }, NO }, 1 },
	[CS_QUIET] = { "CORRAL_QUIET", "0", CK_BOOL, NULL, NULL, { NO, NO } },
	[CS_SLOWEST] = { "CORRAL_SLOWEST", "5", CK_NUMBER, NULL, NULL,
	    { TO(CP_SCORE, 's'), NO } },
	[CS_TAIL] = { "CORRAL_TAIL", "10", CK_NUMBER, NULL, NULL,
	    { TO(CP_SCORE, 't'), NO } },
	[CS_JUNIT] = { "CORRAL_JUNIT", "", CK_PATH, NULL, MERGE_CFG,
	    { TO(CP_REPORT, 'j'), NO } },
	[CS_JUNIT_SUITE] = { "CORRAL_JUNIT_SUITE", "", CK_TEXT, NULL,
	    MERGE_CFG, { TO(CP_REPORT, 'n'), NO } },
	[CS_TRACE] = { "CORRAL_TRACE", "", CK_PATH, NULL, MERGE_CFG,
	    { TO(CP_REPORT, 'T'), NO } },
	[CS_HTML] = { "CORRAL_HTML", "", CK_PATH, NULL, MERGE_CFG,
	    { TO(CP_REPORT, 'H'), NO } },
	[CS_WAIT] = { "CORRAL_WAIT", "", CK_SECONDS, NULL, NULL, { NO, NO } },
	[CS_ONLY] = { "CORRAL_ONLY", "", CK_TEXT, NULL, NULL, { NO, NO } },
	[CS_SHARD_KNOB] = { "CORRAL_SHARD", "", CK_WORD, NULL, NULL,
	    { NO, NO } },
	[CS_SHARD_TOTAL] = { "CORRAL_SHARD_TOTAL", "", CK_NUMBER, NULL, NULL,
	    { NO, NO } },
	[CS_HISTORY] = { "CORRAL_HISTORY", "", CK_PATH, NULL, NULL,
	    { NO, NO } },
	[CS_HOST] = { "CORRAL_HOST", "", CK_WORD, NULL, NULL,
	    { TO(CP_SLICE, 'm'), NO } },
	[CS_SHARDS] = { "CORRAL_SHARDS", "", CK_PATHS, NULL, NULL,
	    { NO, NO } },
	[CS_LAUNCH] = { "CORRAL_LAUNCH", "", CK_WORDS, NULL, NULL,
	    { NO, NO } },
	[CS_WORK] = { "CORRAL_WORK", "", CK_NODE_PATH, NULL, NULL,
	    { NO, NO } },
	[CS_BIN] = { "CORRAL_BIN", "", CK_PATH, NULL, NULL, { NO, NO } },
	[CS_V] = { "CORRAL_V", "0", CK_BOOL, NULL, NULL, { NO, NO } },
	[CS_CACHE] = { "CORRAL_CACHE", "", CK_STORE, NULL, NULL,
	    { TO(CP_SLICE, 'u'), NO } },
	[CS_CACHE_ENV] = { "CORRAL_CACHE_ENV", "", CK_WORDS, NULL, SLICE_CFG,
	    { TO(CP_SLICE, 'y'), NO }, 1 },
	[CS_CACHE_KEY] = { "CORRAL_CACHE_KEY", "", CK_TEXT, NULL, SLICE_CFG,
	    { TO(CP_SLICE, 'z'), NO }, 1 },
	/*
	 * 2: of every 50 hits one runs again, so a key that misses what a
	 * unit depends on is found within a few runs of any real size, for
	 * 2% of the cached work (see corral.mk(7)).
	 */
	[CS_CACHE_VERIFY] = { "CORRAL_CACHE_VERIFY", "2", CK_PERCENT, NULL,
	    NULL, { TO(CP_SLICE, 'V'), NO } },
	[CS_SHARD] = { "shard", "", CK_INTERNAL, NULL, MERGE_CFG,
	    { TO(CP_MERGE, 'k'), NO } },
	[CS_SHARD_TOP] = { "shard_top", "", CK_INTERNAL, NULL, NULL,
	    { NO, NO } },
	[CS_OUTREL] = { "outrel", "", CK_INTERNAL, NULL, NULL, { NO, NO } },
	[CS_RUN] = { "run", "", CK_INTERNAL, NULL, NULL,
	    { TO(CP_SLICE, 'r'), NO } },
	[CS_DEADLINE] = { "deadline", "", CK_INTERNAL, NULL, NULL,
	    { TO(CP_SLICE, 'd'), NO } },
	[CS_GUARD] = { "guard", "", CK_INTERNAL, NULL, NULL,
	    { TO(CP_SLICE, 'G'), NO } },
	[CS_GUARD_NODE] = { "guard_node", "", CK_INTERNAL, NULL, NULL,
	    { NO, NO } },
	[CS_KEEP_ENV] = { "keep_env", "", CK_INTERNAL, NULL, NULL,
	    { NO, NO } },
	[CS_MAKE] = { "make", "", CK_INTERNAL, NULL, NULL, { NO, NO } },
	[CS_ENGINE_MK] = { "engine_mk", "", CK_INTERNAL, NULL, NULL,
	    { NO, NO } },
	[CS_MAKEFLAGS] = { "makeflags", "", CK_INTERNAL, NULL, NULL,
	    { NO, NO } },
	[CS_MFLAGS] = { "mflags", "", CK_INTERNAL, NULL, NULL, { NO, NO } },
	[CS_MAKELEVEL] = { "makelevel", "", CK_INTERNAL, NULL, NULL,
	    { NO, NO } },
	[CS_SILENT] = { "silent", "", CK_INTERNAL, NULL, NULL, { NO, NO } },
};

void
corral_settings_init(struct corral_settings *s)
{
	memset(s, 0, sizeof(*s));
}

void
corral_settings_release(struct corral_settings *s)
{
	size_t i;

	for (i = 0; i < CS_COUNT; i++)
		free(s->v[i]);
	corral_settings_init(s);
}

const char *
corral_setting(const struct corral_settings *s, enum corral_setting_id id)
{
	return s->v[id] ? s->v[id] : "";
}

int
corral_setting_on(const struct corral_settings *s, enum corral_setting_id id)
{
	return *corral_setting(s, id) != '\0';
}

const struct corral_setting *
corral_setting_find(const char *name)
{
	size_t i;

	for (i = 0; i < CS_COUNT; i++)
		if (!strcmp(corral_settings_table[i].name, name))
			return &corral_settings_table[i];
	return NULL;
}

int
corral_setting_set(struct corral_settings *s, enum corral_setting_id id,
    const char *v)
{
	char *copy = strdup(v ? v : "");

	if (!copy)
		return -1;
	free(s->v[id]);
	s->v[id] = copy;
	return 0;
}

/* s without the white space around it, malloc'd. */
static char *
trimmed(const char *s)
{
	size_t n;

	s += strspn(s, " \t\n");
	for (n = strlen(s); n && strchr(" \t\n", s[n - 1]); n--)
		;
	return strndup(s, n);
}

/* Whether s is digits, one at least, then one of tail's bytes or none. */
static int
digits_then(const char *s, const char *tail)
{
	size_t n = strspn(s, "0123456789");

	return n && (!s[n] || (tail && strchr(tail, s[n]) && !s[n + 1]));
}

/* Whether s is seconds as corral.mk takes them: 1, 0.5, 2., .5. */
static int
seconds(const char *s)
{
	size_t a = strspn(s, "0123456789"), b = 0;

	if (s[a] == '.')
		b = strspn(s + a + 1, "0123456789") + 1;
	return (a || b > 1) && !s[a + b];
}

/* Whether s is exit codes, commas or spaces between them. */
static int
codes(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (strchr("0123456789", *s))
			n++;
		else if (!strchr(", \t", *s))
			return 0;
	return n > 0;
}

/* Whether s is a whole number from 0 to 100 (leading zeros allowed). */
static int
percent(const char *s)
{
	const char *v = s + strspn(s, "0");

	return digits_then(s, NULL) && strlen(v) <= 3 && atoi(v) <= 100;
}

/*
 * Whether s starts with a URL's scheme and "://" (RFC 3986: a letter,
 * then letters, digits, "+", "-" or "."): no path a store is given as,
 * so one that is not http:// or https:// is refused rather than made a
 * directory under the project named "ftp:".
 */
static int
has_scheme(const char *s)
{
	static const char alpha[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	size_t n = strspn(s, alpha);

	if (!n)
		return 0;
	while (s[n] && (strchr(alpha, s[n]) || strchr("0123456789+-.", s[n])))
		n++;
	return !strncmp(s + n, "://", 3);
}

/* Whether s is a store: no white space, and a path or an http(s) URL. */
static int
store(const char *s)
{
	return !s[strcspn(s, " \t\n")] && (!has_scheme(s) ||
	    corral_http_is_url(s));
}

/* Whether word is one of the words of list. */
static int
one_of(const char *word, const char *list)
{
	size_t n = strlen(word);

	for (; *list; list += strcspn(list, " "), list += *list == ' ')
		if (!strncmp(list, word, n) && (list[n] == ' ' || !list[n]))
			return 1;
	return 0;
}

/* What a kind accepts, for the refusal. */
static const char *
accepts(const struct corral_setting *row)
{
	switch (row->kind) {
	case CK_NUMBER: return "a number";
	case CK_PERCENT: return "a whole number from 0 to 100 (a percent)";
	case CK_SECONDS: return "a number of seconds";
	case CK_WHOLE_SECONDS: return "a whole number of seconds";
	case CK_BYTES:
		return "a number of bytes, optionally with K, M or G";
	case CK_CODES: return "exit codes separated by commas or spaces";
	case CK_BOOL: return "0 or 1";
	case CK_ENUM: return row->choices;
	case CK_PATH:
	case CK_NODE_PATH:
		return "one path without spaces (a make limitation)";
	case CK_STORE:
		return "one path or http:// or https:// URL without spaces";
	case CK_WORD: return "one word";
	default: return "text";
	}
}

int
corral_setting_check(const struct corral_setting *row, const char *value,
    struct corral_err *err)
{
	int ok = 1;

	if (!*value)
		return 0;
	switch (row->kind) {
	case CK_NUMBER: ok = digits_then(value, NULL); break;
	case CK_PERCENT: ok = percent(value); break;
	case CK_SECONDS: ok = seconds(value); break;
	case CK_WHOLE_SECONDS: ok = digits_then(value, NULL); break;
	case CK_BYTES: ok = digits_then(value, "KMG"); break;
	case CK_CODES: ok = codes(value); break;
	case CK_BOOL: ok = one_of(value, "0 1"); break;
	case CK_ENUM: ok = one_of(value, row->choices); break;
	case CK_STORE: ok = store(value); break;
	case CK_PATH:
	case CK_NODE_PATH:
	case CK_WORD: ok = !value[strcspn(value, " \t\n")]; break;
	default: break;
	}
	if (!ok)
		return corral_err_set(err, 0, "%s is '%s'; it must be %s",
		    row->name, value, accepts(row));
	return 0;
}

/* Exit codes as one comma-separated word. */
static char *
comma_codes(const char *value)
{
	struct corral_strv words = CORRAL_STRV_INIT;
	struct corral_buf b = CORRAL_BUF_INIT;
	char *copy = strdup(value), *p;
	size_t i;
	int rc = copy ? 0 : -1;

	for (p = copy; rc == 0 && p && *p; p++)
		if (*p == ',')
			*p = ' ';
	if (rc == 0)
		rc = corral_words(copy, &words);
	for (i = 0; rc == 0 && i < words.n; i++)
		rc = corral_buf_addf(&b, "%s%s", i ? "," : "", words.v[i]);
	if (rc == 0 && !b.data)
		rc = corral_buf_addstr(&b, "");
	free(copy);
	corral_strv_release(&words);
	if (rc < 0) {
		corral_buf_release(&b);
		return NULL;
	}
	return b.data;
}

/* path made absolute against cwd, lexically (as make's $(abspath)). */
static char *
absolute(const char *path, const char *cwd)
{
	char *joined, *norm, *out;

	if (!*path)
		return strdup("");
	if (!(joined = *path == '/' ? strdup(path + 1) :
	    corral_path_join(cwd + (*cwd == '/'), path)))
		return NULL;
	norm = corral_path_normalise(joined);
	free(joined);
	if (!norm)
		return errno == EINVAL ? strdup("/") : NULL;
	out = malloc(strlen(norm) + 2);
	if (out)
		strcat(strcpy(out, "/"), norm);
	free(norm);
	return out;
}

/* Each word of value made absolute, one space between them. */
static char *
absolute_words(const char *value, const char *cwd)
{
	struct corral_strv words = CORRAL_STRV_INIT;
	struct corral_buf b = CORRAL_BUF_INIT;
	size_t i;
	char *p;
	int rc = corral_words(value, &words);

	for (i = 0; rc == 0 && i < words.n; i++) {
		rc = (p = absolute(words.v[i], cwd)) ? corral_buf_addf(&b,
		    "%s%s", i ? " " : "", p) : -1;
		free(p);
	}
	if (rc == 0 && !b.data)
		rc = corral_buf_addstr(&b, "");
	corral_strv_release(&words);
	if (rc < 0) {
		corral_buf_release(&b);
		return NULL;
	}
	return b.data;
}

/*
 * value as the row keeps it, malloc'd: its default when unset, or empty
 * (but exit codes: none).
 */
static char *
normal(const struct corral_setting *row, const char *value, int unset,
    const char *cwd)
{
	char *t = row->kind == CK_TEXT ? strdup(value) : trimmed(value), *v;

	if (!t || !*row->dflt || (*t && !unset) || (!unset && row->kind ==
	    CK_CODES))
		v = t;
	else {
		free(t);
		v = strdup(row->dflt);
	}
	if (!v)
		return NULL;
	switch (row->kind) {
	case CK_CODES: t = comma_codes(v); break;
	case CK_PATH: t = absolute(v, cwd); break;
	/* "$TMPDIR/x" is absolute, or not, only where it is expanded. */
	case CK_NODE_PATH:
		t = *v == '$' ? strdup(v) : absolute(v, cwd);
		break;
	/* a URL stays as written, to be checked (store) or used */
	case CK_STORE:
		t = has_scheme(v) ? strdup(v) : absolute(v, cwd);
		break;
	case CK_PATHS: t = absolute_words(v, cwd); break;
	default: return v;
	}
	free(v);
	return t;
}

/* Whether corral.mk says name was never set (__corral_unset). */
static int
is_unset(const char *name)
{
	const char *list = getenv("__corral_unset"), *p;
	size_t n = strlen(name);

	for (p = list; p && (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ' ') && (!p[n] || p[n] == ' '))
			return 1;
	return 0;
}

int
corral_settings_from_env(struct corral_settings *s, const char *cwd,
    struct corral_err *err)
{
	const struct corral_setting *row;
	struct corral_buf name = CORRAL_BUF_INIT;
	const char *v = "";
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < CS_COUNT; i++) {
		row = &corral_settings_table[i];
		if (row->kind == CK_INTERNAL)
			continue;
		corral_buf_reset(&name);
		if (corral_buf_addf(&name, "%s%s", CORRAL_SETTINGS_ENV,
		    row->name) < 0)
			rc = corral_err_set(err, ENOMEM, "settings");
		else if (!(v = getenv(name.data)))
			v = "";
		if (rc == 0 && !(s->v[i] = normal(row, v, is_unset(row->name),
		    cwd)))
			rc = corral_err_set(err, ENOMEM, "settings");
		if (rc == 0)
			rc = corral_setting_check(row, s->v[i], err);
	}
	corral_buf_release(&name);
	return rc;
}

int
corral_settings_json(const struct corral_settings *s, struct corral_buf *b)
{
	const char *v;
	size_t i;
	int rc = corral_buf_addch(b, '{');

	for (i = 0; rc == 0 && i < CS_COUNT; i++) {
		v = corral_setting(s, (enum corral_setting_id)i);
		rc = corral_buf_addf(b, "%s\n  ", i ? "," : "") |
		    corral_buf_addjson(b, corral_settings_table[i].name,
		    strlen(corral_settings_table[i].name)) |
		    corral_buf_addstr(b, ": ") |
		    corral_buf_addjson(b, v, strlen(v));
	}
	return rc | corral_buf_addstr(b, "\n}\n");
}

int
corral_settings_read(struct corral_settings *s, const char *file,
    struct corral_err *err)
{
	struct corral_buf text = CORRAL_BUF_INIT;
	struct corral_err why;
	cJSON *doc = NULL;
	const char *v;
	size_t i;
	int rc = corral_read_state(file, &text, err);

	if (rc == 0 && !(doc = cj_object_text(text.data ? text.data : "",
	    text.len, &why)))
		rc = corral_err_set(err, 0, "'%s': %s", file, why.msg);
	for (i = 0; rc == 0 && i < CS_COUNT; i++) {
		v = cj_get_str(doc, corral_settings_table[i].name);
		if (!v)
			rc = corral_err_set(err, 0, "'%s': \"%s\" is missing",
			    file, corral_settings_table[i].name);
		else if (corral_setting_set(s, (enum corral_setting_id)i,
		    v) < 0)
			rc = corral_err_set(err, ENOMEM, "'%s'", file);
	}
	cJSON_Delete(doc);
	corral_buf_release(&text);
	return rc;
}

/* "NAME value\n" for each row file names (NULL: each row of the key). */
static int
rows_of(const struct corral_settings *s, const char *file,
    struct corral_buf *b)
{
	const struct corral_setting *row;
	size_t i;
	int rc = corral_buf_addstr(b, "");

	for (i = 0; rc == 0 && i < CS_COUNT; i++) {
		row = &corral_settings_table[i];
		if (file ? row->joins && !strcmp(row->joins, file) : row->key)
			rc = corral_buf_addf(b, "%s %s\n", row->name,
			    corral_setting(s, (enum corral_setting_id)i));
	}
	return rc;
}

int
corral_settings_joined(const struct corral_settings *s, const char *file,
    struct corral_buf *b)
{
	return rows_of(s, file, b);
}

int
corral_settings_keyed(const struct corral_settings *s, struct corral_buf *b)
{
	return rows_of(s, NULL, b);
}

/* The option to of value, appended to argv. */
static int
add_option(const struct corral_option *to, const char *value,
    struct corral_strv *argv)
{
	struct corral_strv words = CORRAL_STRV_INIT;
	char opt[3] = { '-', to->opt, '\0' };
	struct corral_buf b = CORRAL_BUF_INIT;
	size_t i;
	int rc = 0;

	switch (to->how) {
	case CA_VALUE:
		if (*value)
			rc = corral_strv_add(argv, opt) |
			    corral_strv_add(argv, value);
		break;
	case CA_COUNT:
		if (*value && strcmp(value, "0"))
			rc = corral_strv_add(argv, opt) |
			    corral_strv_add(argv, value);
		break;
	case CA_PREFIX:
		if (*value)
			rc = corral_buf_addf(&b, "%s%s", to->arg, value) |
			    corral_strv_add(argv, opt) |
			    corral_strv_add(argv, b.data);
		break;
	case CA_EACH:
		rc = corral_words(value, &words);
		for (i = 0; rc == 0 && i < words.n; i++)
			if (!to->arg || strcmp(words.v[i], to->arg))
				rc = corral_strv_add(argv, opt) |
				    corral_strv_add(argv, words.v[i]);
		break;
	case CA_IF:
		if (!strcmp(value, to->arg))
			rc = corral_strv_add(argv, opt);
		break;
	}
	corral_strv_release(&words);
	corral_buf_release(&b);
	return rc;
}

int
corral_settings_argv(const struct corral_settings *s, enum corral_prog prog,
    struct corral_strv *argv)
{
	const struct corral_setting *row;
	size_t i, j;
	int rc = 0;

	for (i = 0; rc == 0 && i < CS_COUNT; i++) {
		row = &corral_settings_table[i];
		for (j = 0; rc == 0 && j < 2; j++)
			if (row->to[j].prog == prog && prog != CP_NONE)
				rc = add_option(&row->to[j], corral_setting(s,
				    (enum corral_setting_id)i), argv);
	}
	return rc;
}
