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

static void
vwarn(const char *fmt, va_list ap)
{
	int saved = errno;
	size_t len = strlen(fmt);

	fprintf(stderr, "%s: ", progname);
	vfprintf(stderr, fmt, ap);
	if (len > 0 && fmt[len - 1] == ':')
		fprintf(stderr, " %s", strerror(saved));
	fputc('\n', stderr);
}

void
corral_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

int
corral_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	return -1;
}

void
corral_die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	exit(status);
}

void
corral_warn_err(const struct corral_err *err)
{
	if (err->errnum)
		fprintf(stderr, "%s: %s: %s\n", progname, err->msg,
		    strerror(err->errnum));
	else
		fprintf(stderr, "%s: %s\n", progname, err->msg);
}

void
corral_die_err(int status, const struct corral_err *err)
{
	corral_warn_err(err);
	exit(status);
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
