/* See LICENSE file for copyright and license details. */
/*
 * die.c ends a program with a message: corral_die formats one as
 * corral_warn does, corral_die_err prints a library error, and both then
 * exit with the status given.  Only the programs exit; the library fills
 * a struct corral_err and returns.
 */
#include <stdarg.h>
#include <stdlib.h>

#include "tool.h"

void
corral_die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	corral_vwarn(fmt, ap);
	va_end(ap);
	exit(status);
}

void
corral_die_err(int status, const struct corral_err *err)
{
	corral_warn_err(err);
	exit(status);
}
