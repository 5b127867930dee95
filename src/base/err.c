/* See LICENSE file for copyright and license details. */
/*
 * err.c prints every diagnostic in corral's one format, "progname: what
 * went wrong", and carries library errors to the tool that prints them.
 * A format ending in ':' appends strerror(errno), as sbase's eprintf does.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"

static const char *progname = "corral";

/*
 * Every program links this file, so every program carries its version
 * here, where corral-doctor (or what(1)) reads it from the binary.
 */
__attribute__((used)) const char corral_version_tag[] =
    CORRAL_VERSION_TAG CORRAL_VERSION;

void
corral_setprogname(const char *argv0)
{
	const char *slash;

	if (!argv0 || !*argv0)
		return;
	slash = strrchr(argv0, '/');
	progname = slash ? slash + 1 : argv0;
}

const char *
corral_progname(void)
{
	return progname;
}

int
corral_err_set(struct corral_err *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->errnum = errnum;
	return -1;
}

/* text to fp as corral_buf_add_shown shows it, with flags. */
static void
put_shown(FILE *fp, const char *text, size_t n, int flags)
{
	struct corral_buf b = CORRAL_BUF_INIT;

	if (corral_buf_add_shown(&b, text, n, flags) == 0)
		fwrite(b.data, 1, b.len, fp);
	else	/* out of memory: the bytes that cannot harm */
		fputs("(a message, lost: out of memory)", fp);
	corral_buf_release(&b);
}

/* "progname: msg" as one line on stderr, shown. */
static void
put_line(const char *msg)
{
	fprintf(stderr, "%s: ", progname);
	put_shown(stderr, msg, strlen(msg), 0);
	fputc('\n', stderr);
}

void
corral_vwarn(const char *fmt, va_list ap)
{
	struct corral_buf msg = CORRAL_BUF_INIT;
	int saved = errno;
	size_t len = strlen(fmt);

	if (corral_buf_vaddf(&msg, fmt, ap) == 0 && len > 0 &&
	    fmt[len - 1] == ':')
		(void)corral_buf_addf(&msg, " %s", strerror(saved));
	put_line(msg.data ? msg.data : fmt);
	corral_buf_release(&msg);
}

void
corral_show(FILE *fp, const char *s, size_t n)
{
	put_shown(fp, s, n, CORRAL_SHOWN_LINES);
}

void
corral_showf(FILE *fp, const char *fmt, ...)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	if (corral_buf_vaddf(&b, fmt, ap) == 0)
		corral_show(fp, b.data, b.len);
	va_end(ap);
	corral_buf_release(&b);
}

void
corral_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	corral_vwarn(fmt, ap);
	va_end(ap);
}

int
corral_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	corral_vwarn(fmt, ap);
	va_end(ap);
	return -1;
}

void
corral_warn_err(const struct corral_err *err)
{
	struct corral_buf msg = CORRAL_BUF_INIT;

	if (err->errnum && corral_buf_addf(&msg, "%s: %s", err->msg,
	    strerror(err->errnum)) == 0)
		put_line(msg.data);
	else
		put_line(err->msg);
	corral_buf_release(&msg);
}

#ifdef CORRAL_COVERAGE
void __gcov_dump(void);
#endif

void
corral_child_exit(int status)
{
#ifdef CORRAL_COVERAGE
	__gcov_dump();
#endif
	_exit(status);
}
