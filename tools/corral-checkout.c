/* See LICENSE file for copyright and license details. */
/*
 * corral-checkout builds an agent's private clone: DEST becomes a fresh
 * copy of just the named parts of SRC (operands, and lines of -p files),
 * or, with -d, removes such a clone.  With -m it writes instead the
 * manifest of what such a clone would hold (type, mode, size and, for a
 * file, the SHA-256 of its content, of every entry), only when it
 * changed: a Make prerequisite that changes exactly when what the parts
 * hold does, and not when a file is only touched.  -D remembers the
 * digests in a memo file by each file's stat, so that the next time an
 * unchanged file costs a stat and not a read.  With -M it does so for
 * every slice of a plan at once, one process for all: DIR/K.manifest from DIR/K.parts for
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
	"corral-checkout -m MANIFEST [-D MEMO] [-I PATTERN] [-p PARTSFILE] "
	"[-x EXCLUDE] SRC [PART...]\n"
	"corral-checkout -d DEST\n"
	"corral-checkout -M DIR [-D MEMO] [-I PATTERN] [-x EXCLUDE] SRC",
	"-d DEST\tremove the clone DEST\n"
	"-D MEMO\tremember the files' digests in MEMO (with -m, -M)\n"
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

/* The memo at path (NULL: one in memory only). */
static struct corral_memo *
xmemo_open(const char *path)
{
	struct corral_memo *m = corral_memo_open(path);

	if (!m)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	return m;
}

/* Save and free the memo; one that cannot be saved is only a warning. */
static void
memo_done(struct corral_memo *m, const char *path)
{
	if (corral_memo_save(m) < 0)
		corral_warn("cannot save '%s':", path);
	corral_memo_free(m);
}

static int
run_manifest(const char *src, const char *manifest, const char *memo_path,
    struct corral_strv *parts, const struct left_out *l)
{
	struct corral_buf out = CORRAL_BUF_INIT;
	struct corral_memo *memo = xmemo_open(memo_path);
	struct corral_err err;

	if (corral_checkout_manifest(src, parts, &l->exclude, &l->patterns, memo,
	    &out, NULL, &err) < 0 || corral_atomic_file(manifest, out.data ? out.data : "",
	    out.len, CORRAL_ATOMIC_KEEP_SAME | CORRAL_ATOMIC_IN_PLACE, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	memo_done(memo, memo_path);
	corral_buf_release(&out);
	return CORRAL_EXIT_OK;
}

static int
run_manifests(const char *src, const char *dir, const char *memo_path,
    const struct left_out *l)
{
	struct corral_memo *memo = xmemo_open(memo_path);
	struct corral_sha256 sha;
	struct corral_err err;
	char hex[CORRAL_SHA256_HEX];

	if (corral_sha256_init(&sha, &err) < 0 ||
	    corral_manifests_write(src, dir, &l->exclude, &l->patterns, memo,
	    &sha, &err) < 0 ||
	    corral_sha256_peek(&sha, hex, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	memo_done(memo, memo_path);
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
	const char *memo = NULL;
	int c, i, status;

	corral_setprogname(argv[0]);
	corral_usage_check(&use, argc, argv);
	while ((c = getopt(argc, argv, "d:D:hI:m:M:p:x:")) != -1) {
		switch (c) {
		case 'd': remove = optarg; break;
		case 'D': memo = optarg; break;
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
		    manifest || memo)
			corral_usage(&use, CORRAL_EXIT_ERR);
		if (corral_clone_remove(remove, &err) < 0)
			corral_die_err(CORRAL_EXIT_ERR, &err);
		return CORRAL_EXIT_OK;
	}
	if (slices) {
		if (argc - optind != 1 || parts.n || manifest)
			corral_usage(&use, CORRAL_EXIT_ERR);
		status = run_manifests(argv[optind], slices, memo, &l);
		goto out;
	}
	if (argc - optind < (manifest ? 1 : 2) || (memo && !manifest))
		corral_usage(&use, CORRAL_EXIT_ERR);
	for (i = optind + (manifest ? 1 : 2); i < argc; i++)
		if (corral_strv_add(&parts, argv[i]) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
	/* "lib/" is the whole of lib: only -M's parts files list. */
	for (i = 0; (size_t)i < parts.n; i++)
		corral_path_trim_slashes(parts.v[i]);
	if (manifest)
		status = run_manifest(argv[optind], manifest, memo, &parts, &l);
	else
		status = run_checkout(argv[optind], argv[optind + 1], &parts,
		    &l);
out:
	corral_strv_release(&parts);
	corral_strv_release(&l.exclude);
	corral_strv_release(&l.patterns);
	return status;
}
