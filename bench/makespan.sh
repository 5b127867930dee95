#!/bin/sh
# makespan.sh -- how long the slowest agent takes, round-robin against the
# weighted plan, against the lower bound max(total / N, longest unit).
#
#   usage: makespan.sh [N]        (N agents; default 4)
#
# A skewed population: 6 units of 2 s among 34 of 0.2 s, in the order a
# directory listing gives them.  The first run has no history, so it is
# planned round-robin; 'make -B' then plans afresh from the history that
# run left, by weight.  Each run's makespan is measured from its agents'
# records (from the first unit's start to the last unit's end), and its
# lower bound from the same records' durations, so both ratios compare
# like with like.  Needs corral's programs on PATH (or CORRAL_BIN) and jq.
set -eu

n=${1:-4}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/corral-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/proj/tests"
i=0
while [ $i -lt 40 ]; do
	name=$(printf 'tests/t%02d.sh' $i)
	case $i in
	3|7|11|15|22|26) echo 'sleep 2' > "$work/proj/$name" ;;
	*) echo 'sleep 0.2' > "$work/proj/$name" ;;
	esac
	i=$((i + 1))
done
cat > "$work/proj/Makefile" <<EOF
CORRAL_DISCOVER = find tests -name '*.sh' | LC_ALL=C sort
CORRAL_CMD      = sh "\$\$CORRAL_UNIT"
CORRAL_QUIET    = 1
include $root/corral.mk
EOF

# measure: "makespan_ms lower_bound_ms strategy" of the last run
measure() {
	jq -rs --argjson n "$n" '
		def ms: (.[0:19] + "Z" | fromdate) * 1000 + (.[20:23] | tonumber);
		map(select(.unit)) |
		(map(.at | ms) | max) as $stop |
		(map((.at | ms) - .duration_ms) | min) as $start |
		(map(.duration_ms) | add) as $total |
		(map(.duration_ms) | max) as $longest |
		"\($stop - $start) \([($total / $n), $longest] | max | floor)"' \
		"$work"/proj/.corral/logs/agent-*.jsonl
}

make -s -C "$work/proj" -j"$n" corral-run CORRAL_AGENTS="$n" > /dev/null 2>&1
rr=$(measure)
make -s -C "$work/proj" -B -j"$n" corral-run CORRAL_AGENTS="$n" > /dev/null 2>&1
wt=$(measure)
jq -r '"weighted plan: \(.strategy), \(.estimated) of \(.units) units estimated"' \
	"$work/proj/.corral/slices/plan.json"

set -- $rr $wt
awk -v rr="$1" -v rlb="$2" -v wt="$3" -v wlb="$4" -v n="$n" 'BEGIN {
	printf "agents: %d, units: 40 (6 of 2 s, 34 of 0.2 s)\n", n
	printf "round-robin: makespan %5d ms, lower bound %5d ms, ratio %.2f\n", rr, rlb, rr / rlb
	printf "weighted:    makespan %5d ms, lower bound %5d ms, ratio %.2f\n", wt, wlb, wt / wlb
	printf "weighted / round-robin: %.2f\n", wt / rr
}'
