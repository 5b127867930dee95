/* See LICENSE file for copyright and license details. */
/*
 * corral-checkout builds an agent's private clone: DEST becomes a fresh
 * copy of just the named parts of SRC (operands, and lines of -p files),
 * or, with -d, removes such a clone.  With -m it writes instead the
 * manifest of what such a clone would hold (type, mode, size and mtime of
 * every entry), only when it changed: a Make prerequisite that changes
 * exactly when the parts do.  With -M it does so for every slice of a
 * plan at once, one process for all: DIR/K.manifest from DIR/K.parts for
 * K = 0, 1, ... (the manifest of a slice whose parts are refused is
 * removed: its agent reports why), and prints the SHA-256 of all of them,
 * in slice order, the digest of what the slices depend on.  A part that is absolute, leaves SRC
 * through ".." or leads out through a symlink is refused before anything
 * is written; a missing part is a warning.  DEST is replaced only when it
 * is a clone corral made (or an empty directory), and -d removes nothing
 * else.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

static const struct corral_usage use = {
	"corral-checkout [-p PARTSFILE] [-x EXCLUDE] SRC DEST "
	"[PART...]\n"
	"corral-checkout -m MANIFEST [-p PARTSFILE] [-x EXCLUDE] "
	"SRC [PART...]\n"
	"corral-checkout -d DEST\n"
	"corral-checkout -M DIR [-x EXCLUDE] SRC",
	"-d DEST\tremove the clone DEST\n"
	"-m MANIFEST\twrite what a clone would hold, not a clone\n"
	"-M DIR\tthe same for every DIR/K.parts, in DIR/K.manifest\n"
	"-p PARTSFILE\tread parts from PARTSFILE, one a line\n"
	"-x EXCLUDE\ta path under SRC left out (repeatable)",
	NULL
};

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

static int
run_manifest(const char *src, const char *manifest,
    struct corral_strv *parts, struct corral_strv *exclude)
{
	struct corral_buf out = CORRAL_BUF_INIT;
	struct corral_err err;

	if (corral_checkout_manifest(src, parts, exclude, &out, NULL,
	    &err) < 0 || corral_atomic_file(manifest, out.data ? out.data : "",
	    out.len, CORRAL_ATOMIC_KEEP_SAME | CORRAL_ATOMIC_IN_PLACE, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	corral_buf_release(&out);
	return CORRAL_EXIT_OK;
}

static int
run_manifests(const char *src, const char *dir,
    const struct corral_strv *exclude)
{
	struct corral_sha256 sha;
	struct corral_err err;
	char hex[CORRAL_SHA256_HEX];

	if (corral_sha256_init(&sha, &err) < 0 ||
	    corral_manifests_write(src, dir, exclude, &sha, &err) < 0 ||
	    corral_sha256_peek(&sha, hex, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	corral_sha256_release(&sha);
	if (printf("%s\n", hex) < 0 || fflush(stdout) == EOF)
		corral_die(CORRAL_EXIT_ERR, "cannot write standard output:");
	return CORRAL_EXIT_OK;
}

int
main(int argc, char *argv[])
{
	struct corral_strv parts = CORRAL_STRV_INIT;
	struct corral_strv exclude = CORRAL_STRV_INIT;
	struct corral_err err;
	const char *remove = NULL, *manifest = NULL, *slices = NULL;
	int c, i, status;

	corral_setprogname(argv[0]);
	corral_usage_check(&use, argc, argv);
	while ((c = getopt(argc, argv, "d:hm:M:p:x:")) != -1) {
		switch (c) {
		case 'd': remove = optarg; break;
		case 'h': corral_usage(&use, CORRAL_EXIT_OK); break;
		case 'm': manifest = optarg; break;
		case 'M': slices = optarg; break;
		case 'p': xunits_load(optarg, '\n', &parts, 0); break;
		case 'x':
			if (corral_strv_add(&exclude, optarg) < 0)
				corral_die(CORRAL_EXIT_ERR, "out of memory:");
			break;
		default: corral_usage(&use, CORRAL_EXIT_ERR);
		}
	}
	if (remove) {
		if (optind != argc || parts.n || exclude.n || manifest)
			corral_usage(&use, CORRAL_EXIT_ERR);
		if (corral_clone_remove(remove, &err) < 0)
			corral_die_err(CORRAL_EXIT_ERR, &err);
		return CORRAL_EXIT_OK;
	}
	if (slices) {
		if (argc - optind != 1 || parts.n || manifest)
			corral_usage(&use, CORRAL_EXIT_ERR);
		status = run_manifests(argv[optind], slices, &exclude);
		corral_strv_release(&exclude);
		return status;
	}
	if (argc - optind < (manifest ? 1 : 2))
		corral_usage(&use, CORRAL_EXIT_ERR);
	for (i = optind + (manifest ? 1 : 2); i < argc; i++)
		if (corral_strv_add(&parts, argv[i]) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
	/* "lib/" is the whole of lib: only -M's parts files list. */
	for (i = 0; (size_t)i < parts.n; i++)
		corral_path_trim_slashes(parts.v[i]);
	if (manifest)
		status = run_manifest(argv[optind], manifest, &parts, &exclude);
	else
		status = run_checkout(argv[optind], argv[optind + 1], &parts,
		    &exclude);
	corral_strv_release(&parts);
	corral_strv_release(&exclude);
	return status;
}
