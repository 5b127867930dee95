/* See LICENSE file for copyright and license details. */
/*
 * checkpoint.c fuzzes the reader of an agent's checkpoint, the
 * agent-ID.jsonl.part a killed agent of a slice left, as the next agent
 * of the slice resumes from it (corral_runlog_resume): the input is the
 * checkpoint, the slice is the units u1 to u4 of agent F.  The reader is
 * the agent's own, in src/agent/agent-private.h: the only one that reads
 * a checkpoint back.  Whatever it resumes must be units of the slice, in
 * order.
 */
#include "fuzz.h"
#include "agent/agent-private.h"

static size_t next;	/* the unit the callback expects */

static void
resumed(void *arg, size_t i, const struct corral_json_record *last)
{
	const struct corral_strv *units = arg;

	if (i != next++ || i >= units->n || strcmp(last->unit, units->v[i]))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *names[] = { "u1", "u2", "u3", "u4" };
	struct corral_strv units = CORRAL_STRV_INIT;
	struct corral_runlog l;
	struct corral_err err;
	char log[4200], part[4200];
	size_t i;

	for (i = 0; i < 4; i++)
		if (corral_strv_add(&units, names[i]) < 0)
			abort();
	snprintf(log, sizeof(log), "%s/agent-F.jsonl", fuzz_dir());
	snprintf(part, sizeof(part), "%s/agent-F.jsonl.part", fuzz_dir());
	fuzz_put(part, data, size);
	corral_runlog_init(&l);
	l.dir = fuzz_dir();
	l.log = log;
	l.part = part;
	l.agent = "F";
	next = 0;
	if (corral_runlog_open(&l, &err) < 0)
		abort();
	if (corral_runlog_resume(&l, &units, NULL, resumed, &units, &err) == 0 &&
	    (l.resumed != next || l.resumed > units.n))
		abort();
	corral_runlog_release(&l);
	corral_strv_release(&units);
	return 0;
}
