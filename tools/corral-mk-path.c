/* See LICENSE file for copyright and license details. */
/*
 * corral-mk-path prints the path of the corral.mk that belongs to these
 * programs, so a Makefile can say "include $(shell corral mk-path)".  It
 * looks where an install puts it (PREFIX/share/corral beside PREFIX/bin)
 * and where a checkout has it (beside bin/, or above build/FLAVOR/bin).
 * Exit 0 with the path, 2 when there is none, naming where it looked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

static const struct corral_usage use = {
	"corral-mk-path [-h]",
	NULL,
	NULL
};

int
main(int argc, char *argv[])
{
	struct corral_buf path = CORRAL_BUF_INIT;
	struct corral_err err;
	char *bindir;

	corral_setprogname(argv[0]);
	corral_usage_only_h(&use, argc, argv, 0);
	if (!(bindir = corral_self_dir(argv[0], &err)) ||
	    corral_mk_locate(bindir, &path, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	printf("%s\n", path.data);
	free(bindir);
	corral_buf_release(&path);
	xflush_stdout();
	return CORRAL_EXIT_OK;
}
