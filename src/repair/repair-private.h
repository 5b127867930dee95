/* See LICENSE file for copyright and license details. */
/*
 * repair-private.h: what the repair modules share and nothing outside
 * src/repair/ reads.
 */
#ifndef CORRAL_REPAIR_PRIVATE_H
#define CORRAL_REPAIR_PRIVATE_H

#include "repair/repair.h"

/*
 * Read the "files" array of obj (a manifest's fix, an attempt's result)
 * into c, the reader of what corral_json_files writes (snap.c): each
 * entry's "path" and "action" ("write" or "delete"), a write's "sha256"
 * and the "expected_before" digest.  0, or -1 with err set.
 */
int corral_json_files_parse(const cJSON *obj, struct corral_changes *c,
    struct corral_err *err);

#endif /* CORRAL_REPAIR_PRIVATE_H */
