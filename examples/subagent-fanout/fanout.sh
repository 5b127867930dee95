#!/bin/sh
# fanout.sh -- a real subagent fan-out, driven by the briefs corral plan
# writes: one OS process per brief, each writing only its own log, then
# one merge.
#
#   usage: fanout.sh OUT [N]
#
# The project (made in OUT/tree): 24 units, pkg-00 .. pkg-23; unit U is
# src/U/check.sh and needs src/U and shared/config.  corral plan cuts the
# units over N agents (default 8) and gives each a brief: its units, the
# parts its clone needs, the one log it may write, and a task text for an
# agent that reads prose.  Every brief starts agent.sh as a process of
# its own, which reads nothing but its brief.  When all have ended, one
# corral merge folds their logs.  Exit status: corral merge's (0 all
# passed, 1 some failed, 2 incomplete).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=$1 n=${2:-8}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The project.
tree=$out/tree
mkdir -p "$tree/shared"
echo 'greeting=hello' > "$tree/shared/config"
i=0
while [ "$i" -lt 24 ]; do
	unit=$(printf 'pkg-%02d' "$i")
	mkdir -p "$tree/src/$unit"
	cp "$here/check.sh" "$tree/src/$unit/check.sh"
	i=$((i + 1))
done
(cd "$tree/src" && ls) > "$out/units"

# The briefs: one per agent, as JSON.
corral plan -n "$n" -l "$out/logs" -p shared/config \
	-P 'echo "src/$CORRAL_UNIT"' \
	-t 'You are agent {agent}. Clone only {parts} from the project into a private directory. Run each of your {n} units ({units}) there with: sh src/UNIT/check.sh. Write one JSON record per unit to {log}, and nothing anywhere else.' \
	"$out/units" > "$out/briefs.json"

# One process per brief, all at once; each gets its brief and the tree.
mkdir -p "$out/briefs" "$out/logs"
count=$(jq length "$out/briefs.json")
pids=
k=0
while [ "$k" -lt "$count" ]; do
	jq ".[$k]" "$out/briefs.json" > "$out/briefs/$k.json"
	sh "$here/agent.sh" "$out/briefs/$k.json" "$tree" &
	echo "started agent $k as process $!"
	pids="$pids $!"
	k=$((k + 1))
done

# Wait for every agent.  An agent whose units failed exits 1: that is a
# result, and the merge reports it; one that could not run is reported
# by the merge as missing units.
for pid in $pids; do
	wait "$pid" || echo "agent process $pid exited $?"
done

# One merge, the only writer of the shared result files.
corral merge -u "$out/units" -o "$out" "$out/logs"
