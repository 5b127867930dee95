#!/bin/sh
# sandbox.sh -- what CORRAL_SANDBOX=bwrap costs per unit.
#
#   usage: sandbox.sh [UNITS] [ROUNDS]      (defaults 100 and 5)
#
# corral-run-slice runs UNITS units of 'true' without the sandbox and
# with it (-X bwrap: a bubblewrap per unit, with its mount, network, IPC
# and PID namespaces), interleaved over ROUNDS rounds; it prints each
# round's per-unit times and the median of the per-round ratios, with
# the cost of the sandbox per unit in milliseconds.  Without a working
# bwrap it says so and measures nothing.
set -eu

units=${1:-100}
rounds=${2:-5}
if ! corral-run-slice -n -X bwrap 2> /dev/null; then
	echo "sandbox: bwrap does not work here (corral-run-slice -n -X bwrap); not measured"
	exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/corral-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
seq 1 "$units" > "$work/slice"
export TMPDIR="$work"

# per_unit ARGS...: microseconds per unit of one corral-run-slice run
per_unit() {
	t0=$(date +%s%N)
	corral-run-slice "$@" -c true -l "$work/logs" K "$work/slice"
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000 / units ))
}

r=1
: > "$work/ratios"
while [ "$r" -le "$rounds" ]; do
	plain=$(per_unit)
	boxed=$(per_unit -X bwrap)
	echo "$plain $boxed" | awk -v r="$r" '{
		printf "round %d: %d us/unit plain, %d us/unit in bwrap, ratio %.2f\n",
		    r, $1, $2, $2 / $1
		print $2 / $1, $2 - $1 > "/dev/stderr" }' 2>> "$work/ratios"
	r=$((r + 1))
done
sort -n "$work/ratios" | awk '{ v[NR] = $1; d[NR] = $2 } END {
	m = NR % 2 ? (NR + 1) / 2 : NR / 2
	printf "sandbox bwrap/plain per unit, median of %d rounds: %.2f (about %.1f ms a unit)\n",
	    NR, v[m], d[m] / 1000 }'
