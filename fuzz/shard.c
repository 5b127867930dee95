/* See LICENSE file for copyright and license details. */
/*
 * shard.c fuzzes the reader of a shard's manifest, shard.json
 * (corral_shard_manifest_read), with the logs and the launchers' notes
 * it vouches for.  What it takes must be written again
 * (corral_shard_manifest_format) and read back to the same logs and
 * notes.
 */
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct corral_shard_manifest m, again;
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_err err;
	char path[4200], *agent;
	long layer;
	size_t i;

	snprintf(path, sizeof(path), "%s/shard.json", fuzz_dir());
	fuzz_put(path, data, size);
	if (corral_shard_manifest_read(path, &m, &err) == 0) {
		for (i = 0; i < m.nlogs; i++) {
			if (corral_shard_log_path(m.logs[i].log, &layer, &agent,
			    &err) < 0 || strcmp(agent, m.logs[i].agent) ||
			    layer != m.logs[i].layer)
				abort();
			free(agent);
		}
		for (i = 0; i < m.nnotes; i++)
			if (corral_shard_note_path(m.notes[i].path, &layer,
			    NULL, &err) < 0)
				abort();
		if (corral_shard_manifest_format(&m, &b) < 0)
			abort();
		fuzz_put(path, b.data, b.len);
		if (corral_shard_manifest_read(path, &again, &err) < 0 ||
		    again.nlogs != m.nlogs || again.k != m.k ||
		    again.n != m.n || again.nnotes != m.nnotes)
			abort();
		for (i = 0; i < m.nnotes; i++)
			if (strcmp(again.notes[i].path, m.notes[i].path) ||
			    strcmp(again.notes[i].sha256, m.notes[i].sha256))
				abort();
		for (i = 0; i < m.nlogs; i++)
			if (strcmp(again.logs[i].log, m.logs[i].log) ||
			    again.logs[i].records != m.logs[i].records ||
			    again.logs[i].runs.n != m.logs[i].runs.n)
				abort();
		corral_shard_manifest_release(&again);
	}
	corral_shard_manifest_release(&m);
	corral_buf_release(&b);
	return 0;
}
