/* See LICENSE file for copyright and license details. */
/*
 * checkout.h: an agent's private clone of just the parts it needs, and
 * the manifest of what a clone would hold (the engine's record of a
 * slice's inputs).  The agent checks out before its slice, the repair
 * half checks out its scratch trees, corral-checkout does both by hand.
 */
#ifndef CORRAL_CHECKOUT_H
#define CORRAL_CHECKOUT_H

#include "base/base.h"

/* ------------------------------------------------------------------ */
/* checkout.c: an agent's private clone of just the parts it needs     */

/*
 * A part is a relative path inside src.  It is refused (-1, err names the
 * part) when it is absolute, when ".." takes it out of src, or when a
 * symlink on the way (or the part itself, or a link inside a copied
 * directory) leads outside src.  Checks the part only; 0 when it is fine.
 * A part that does not exist is fine here (checkout warns about it).
 */
int corral_part_check(const char *src, const char *part,
    struct corral_err *err);

/*
 * Build dest as a fresh private copy of the given parts of src: regular
 * files are copied (copy_file_range or FICLONE where the kernel can, plain
 * read/write otherwise; never hard links), directories merged, modes and
 * mtimes kept, symlinks that stay inside src copied as (relative)
 * symlinks, each bringing what it leads to (with its directories; each
 * target once, so links in a circle end).  Every part is checked before
 * anything is written.  The clone
 * is built beside dest under a temporary name and renamed into place, so
 * dest is either the whole clone or absent; an existing dest is replaced
 * only when it is a clone made by corral or an empty directory.  Paths in
 * exclude (relative to src, may be NULL) are never copied, nor what
 * matches one of patterns (may be NULL; see corral_checkout_ignored), nor
 * is dest
 * itself when it lies inside src.  Each part that does not exist is
 * appended to missing (may be NULL) for the caller to warn about.
 * Returns 0, or -1 with err set and nothing left at dest or beside it.
 */
int corral_checkout(const char *src, const struct corral_strv *parts,
    const struct corral_strv *exclude, const struct corral_strv *patterns,
    const char *dest,
    struct corral_strv *missing, struct corral_err *err);

/*
 * Remove a clone made by corral_checkout.  A path that does not exist is
 * fine (0); a path that is not such a clone is refused (-1, nothing
 * removed).  Symlinks inside are removed, never followed.
 */
int corral_clone_remove(const char *dest, struct corral_err *err);

/*
 * Check out dest again after something else removed or replaced it: remove
 * whatever is at dest now (a file, a symlink, never followed, or a
 * directory, clone or not, but not one on another file system), then
 * corral_checkout.  0, or -1 with err set.
 */
int corral_clone_renew(const char *src, const struct corral_strv *parts,
    const struct corral_strv *exclude, const struct corral_strv *patterns,
    const char *dest,
    struct corral_err *err);

/*
 * The manifest of what corral_checkout would copy, without copying: one
 * line per entry ("TYPE MODE SIZE DIGEST PATH", and " -> TARGET" for a
 * link; "- PART" for each missing part, which also goes to missing),
 * sorted by path, each once, appended to out; what links lead to is
 * listed as for a checkout.  DIGEST is a regular file's SHA-256 in hex,
 * from memo (NULL: "-", for a caller that wants the paths only), and "-"
 * for anything else, so that a change to what a part's files hold, their
 * modes or names changes the manifest, and a touch does not; a socket, a
 * FIFO or a device has no line (what a suite makes and remakes as it
 * runs, gpg's sockets, is no input), nor has what patterns leave out
 * (corral_checkout_ignored).  Parts are checked exactly as for a
 * checkout.  0 or -1 (a file that cannot be read too).
 */
int corral_checkout_manifest(const char *src, const struct corral_strv *parts,
    const struct corral_strv *exclude, const struct corral_strv *patterns,
    struct corral_memo *memo, struct corral_buf *out,
    struct corral_strv *missing, struct corral_err *err);

/*
 * Whether rel (relative to src) is left out by patterns (CORRAL_PARTS_EXCLUDE,
 * fnmatch(3) patterns, as .gitignore reads them): a pattern without a '/'
 * matches any one component of rel ("__pycache__", "*.pyc", "S.gpg-*"),
 * one with a '/' rel or a leading part of it, from the top
 * ("tests/gnupg/random_seed", "build/x*"), a trailing '/' dropped.  What is
 * under a directory left out is left out.  1 or 0.
 */
int corral_checkout_ignored(const struct corral_strv *patterns,
    const char *rel);

/* The file corral_checkout leaves at the top of every clone. */
#define CORRAL_CLONE_MARK ".corral-clone"

#endif /* CORRAL_CHECKOUT_H */
