#!/bin/sh
# agent.sh -- one subagent: a process of its own that knows nothing but
# its brief (a JSON object from corral plan) and where the project is.
#
#   usage: agent.sh BRIEF TREE
#
# It clones only the brief's clone_parts, runs the brief's units in that
# clone, and writes the brief's log_path and nothing else (corral
# run-slice does all three; the clone goes in a temporary directory and
# is removed).  Exit status: corral run-slice's.
set -eu

brief=$1 tree=$2
agent=$(jq -r .agent_id "$brief")
log=$(jq -r .log_path "$brief")
logdir=$(dirname "$log")
if [ "$log" != "$logdir/agent-$agent.jsonl" ]; then
	echo "agent.sh: '$brief': log_path '$log' is not" \
		"'$logdir/agent-$agent.jsonl'" >&2
	exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
jq -r '.units[]' "$brief" > "$work/units"
jq -r '.clone_parts[]' "$brief" > "$work/parts"

status=0
corral run-slice -C "$tree" -P "$work/parts" -w "$work" \
	-c 'sh "src/$CORRAL_UNIT/check.sh"' -l "$logdir" \
	"$agent" "$work/units" || status=$?
exit "$status"
