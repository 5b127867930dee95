#!/bin/sh
# check.sh -- one unit of the subagent example, run inside its agent's
# clone.  It needs shared/config (without it, '.' fails and so does the
# unit), and its note says which units' sources the clone holds: only
# those of its own agent.
. ./shared/config
if [ "$greeting" != hello ]; then
	echo "FAIL: shared/config says '$greeting'" > "$CORRAL_NOTE"
	exit 1
fi
echo "PASS: $CORRAL_UNIT, agent $CORRAL_AGENT, clone holds:" $(ls src) \
	> "$CORRAL_NOTE"
