/* See LICENSE file for copyright and license details. */
/*
 * corral-checkout builds an agent's private clone: DEST becomes a fresh
 * copy of just the named parts of SRC (operands, and lines of -p files),
 * or, with -d, removes such a clone.  A part that is absolute, leaves SRC
 * through ".." or leads out through a symlink is refused before anything
 * is written; a missing part is a warning.  DEST is replaced only when it
 * is a clone corral made (or an empty directory), and -d removes nothing
 * else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"

static void
usage(FILE *fp, int status)
{
	fprintf(fp, "usage: corral-checkout [-p PARTSFILE] [-x EXCLUDE] "
	    "SRC DEST [PART...]\n"
	    "       corral-checkout -d DEST\n");
	exit(status);
}

static void
read_parts(const char *file, struct corral_strv *parts)
{
	struct corral_err err;
	FILE *fp = stdin;

	if (strcmp(file, "-") && !(fp = fopen(file, "r")))
		corral_die(CORRAL_EXIT_ERR, "cannot open '%s':", file);
	if (corral_units_read(fp, '\n', file, parts, NULL, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (fp != stdin)
		fclose(fp);
}

static int
run_checkout(const char *src, const char *dest, struct corral_strv *parts,
    struct corral_strv *exclude)
{
	struct corral_strv missing = CORRAL_STRV_INIT;
	struct corral_err err;
	size_t i;

	if (corral_checkout(src, parts, exclude, dest, &missing, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	for (i = 0; i < missing.n; i++)
		corral_warn("part '%s' not found in '%s'", missing.v[i], src);
	corral_strv_release(&missing);
	return CORRAL_EXIT_OK;
}

int
main(int argc, char *argv[])
{
	struct corral_strv parts = CORRAL_STRV_INIT;
	struct corral_strv exclude = CORRAL_STRV_INIT;
	struct corral_err err;
	const char *remove = NULL;
	int c, i, status;

	corral_setprogname(argv[0]);
	while ((c = getopt(argc, argv, "d:hp:x:")) != -1) {
		switch (c) {
		case 'd': remove = optarg; break;
		case 'h': usage(stdout, CORRAL_EXIT_OK); break;
		case 'p': read_parts(optarg, &parts); break;
		case 'x':
			if (corral_strv_add(&exclude, optarg) < 0)
				corral_die(CORRAL_EXIT_ERR, "out of memory:");
			break;
		default: usage(stderr, CORRAL_EXIT_ERR);
		}
	}
	if (remove) {
		if (optind != argc || parts.n || exclude.n)
			usage(stderr, CORRAL_EXIT_ERR);
		if (corral_clone_remove(remove, &err) < 0)
			corral_die_err(CORRAL_EXIT_ERR, &err);
		return CORRAL_EXIT_OK;
	}
	if (argc - optind < 2)
		usage(stderr, CORRAL_EXIT_ERR);
	for (i = optind + 2; i < argc; i++)
		if (corral_strv_add(&parts, argv[i]) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
	status = run_checkout(argv[optind], argv[optind + 1], &parts,
	    &exclude);
	corral_strv_release(&parts);
	corral_strv_release(&exclude);
	return status;
}
