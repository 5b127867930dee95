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
 * is written; a missing part is a warning.  -x paths and what -I
 * patterns match (CORRAL_PARTS_EXCLUDE) are neither copied nor listed.  DEST is replaced only when it
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
	"corral-checkout [-I PATTERN] [-p PARTSFILE] [-x EXCLUDE] SRC DEST "
	"[PART...]\n"
	"corral-checkout -m MANIFEST [-I PATTERN] [-p PARTSFILE] [-x EXCLUDE] "
	"SRC [PART...]\n"
	"corral-checkout -d DEST\n"
	"corral-checkout -M DIR [-I PATTERN] [-x EXCLUDE] SRC",
	"-d DEST\tremove the clone DEST\n"
	"-I PATTERN\twhat matches PATTERN is left out, as .gitignore reads it (repeatable)\n"
	"-m MANIFEST\twrite what a clone would hold, not a clone\n"
	"-M DIR\tthe same for every DIR/K.parts, in DIR/K.manifest\n"
	"-p PARTSFILE\tread parts from PARTSFILE, one a line\n"
	"-x EXCLUDE\ta path under SRC left out (repeatable)",
	NULL
};

/* What is left out: -x paths, -I patterns. */
struct left_out {
	struct corral_strv exclude, patterns;
};

static int
run_checkout(const char *src, const char *dest, struct corral_strv *parts,
    const struct left_out *l)
{
	struct corral_strv missing = CORRAL_STRV_INIT;
	struct corral_err err;
	size_t i;

	if (corral_checkout(src, parts, &l->exclude, &l->patterns, dest,
	    &missing, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	for (i = 0; i < missing.n; i++)
		corral_warn("part '%s' not found in '%s'", missing.v[i], src);
	corral_strv_release(&missing);
	return CORRAL_EXIT_OK;
}

static int
run_manifest(const char *src, const char *manifest,
    struct corral_strv *parts, const struct left_out *l)
{
	struct corral_buf out = CORRAL_BUF_INIT;
	struct corral_err err;

	if (corral_checkout_manifest(src, parts, &l->exclude, &l->patterns,
	    &out, NULL, &err) < 0 || corral_atomic_file(manifest, out.data ? out.data : "",
	    out.len, CORRAL_ATOMIC_KEEP_SAME | CORRAL_ATOMIC_IN_PLACE, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	corral_buf_release(&out);
	return CORRAL_EXIT_OK;
}

static int
run_manifests(const char *src, const char *dir, const struct left_out *l)
{
	struct corral_sha256 sha;
	struct corral_err err;
	char hex[CORRAL_SHA256_HEX];

	if (corral_sha256_init(&sha, &err) < 0 ||
	    corral_manifests_write(src, dir, &l->exclude, &l->patterns, &sha,
	    &err) < 0 ||
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
	struct left_out l = { CORRAL_STRV_INIT, CORRAL_STRV_INIT };
	struct corral_err err;
	const char *remove = NULL, *manifest = NULL, *slices = NULL;
	int c, i, status;

	corral_setprogname(argv[0]);
	corral_usage_check(&use, argc, argv);
	while ((c = getopt(argc, argv, "d:hI:m:M:p:x:")) != -1) {
		switch (c) {
		case 'd': remove = optarg; break;
		case 'h': corral_usage(&use, CORRAL_EXIT_OK); break;
		case 'I':
			if (corral_strv_add(&l.patterns, optarg) < 0)
				corral_die(CORRAL_EXIT_ERR, "out of memory:");
			break;
		case 'm': manifest = optarg; break;
		case 'M': slices = optarg; break;
		case 'p': xunits_load(optarg, '\n', &parts, 0); break;
		case 'x':
			if (corral_strv_add(&l.exclude, optarg) < 0)
				corral_die(CORRAL_EXIT_ERR, "out of memory:");
			break;
		default: corral_usage(&use, CORRAL_EXIT_ERR);
		}
	}
	if (remove) {
		if (optind != argc || parts.n || l.exclude.n || l.patterns.n ||
		    manifest)
			corral_usage(&use, CORRAL_EXIT_ERR);
		if (corral_clone_remove(remove, &err) < 0)
			corral_die_err(CORRAL_EXIT_ERR, &err);
		return CORRAL_EXIT_OK;
	}
	if (slices) {
		if (argc - optind != 1 || parts.n || manifest)
			corral_usage(&use, CORRAL_EXIT_ERR);
		status = run_manifests(argv[optind], slices, &l);
		goto out;
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
		status = run_manifest(argv[optind], manifest, &parts, &l);
	else
		status = run_checkout(argv[optind], argv[optind + 1], &parts,
		    &l);
out:
	corral_strv_release(&parts);
	corral_strv_release(&l.exclude);
	corral_strv_release(&l.patterns);
	return status;
}
