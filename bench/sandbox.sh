#!/bin/sh
# sandbox.sh -- what CORRAL_SANDBOX=bwrap costs, per unit and in a whole run.
#
#   usage: sandbox.sh [UNITS] [ROUNDS] [WHOLE]      (defaults 100, 5 and 300)
#   (UNITS 0: only the whole runs, as bench/table.sh runs it)
#
# First corral-run-slice runs UNITS units of 'true' in one slice without
# the sandbox and with it (-X bwrap: one bubblewrap for the slice, each
# unit forked into it with mount, PID and IPC namespaces, /tmp, /dev/shm
# and /proc of its own, no capability), interleaved over ROUNDS rounds;
# it prints each round's per-unit times and the median of the per-round
# ratios, with the cost of the sandbox per unit in milliseconds.  Then
# whole runs: `make -j2 corral-run` of WHOLE units of 'exit 0' from
# nothing (no history: the default plan's slices), CORRAL_SANDBOX=bwrap
# against none, interleaved over ROUNDS rounds, and the median ratio
# (issue 28's target: <= 2).  Without a working bwrap it says so and
# measures nothing.
set -eu

units=${1:-100}
rounds=${2:-5}
whole=${3:-300}
if ! corral-run-slice -n -X bwrap 2> /dev/null; then
	echo "sandbox: bwrap does not work here (corral-run-slice -n -X bwrap); not measured"
	exit 0
fi
# shellcheck source=lib/rounds.sh
. "$(dirname "$0")/lib/rounds.sh"

if [ "$units" -gt 0 ]; then
	bench_rounds "in bwrap" -X bwrap
	bench_median 'sandbox bwrap/plain per unit, median of %d rounds: %.2f (about %.1f ms a unit)\n'
fi

root=$(cd "$(dirname "$0")/.." && pwd)
for sb in none bwrap; do
	mkdir -p "$work/$sb"
	seq -f 'unit-%05g' 1 "$whole" > "$work/$sb/units.txt"
	cat > "$work/$sb/Makefile" <<ZZMK
CORRAL_UNITS_FILE = units.txt
CORRAL_CMD = exit 0
CORRAL_QUIET = 1
CORRAL_SANDBOX = $sb
include $root/corral.mk
ZZMK
done
# whole_ms SANDBOX: the milliseconds of one first run
whole_ms() {
	rm -rf "$work/$1/.corral"
	t0=$(date +%s%N)
	make -s -C "$work/$1" -j2 corral-run > /dev/null 2>&1 ||
		{ echo "sandbox: the whole run with CORRAL_SANDBOX=$1 failed" >&2; exit 1; }
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000000 ))
}
: > "$work/whole"
r=1
while [ "$r" -le "$rounds" ]; do
	plain=$(whole_ms none)
	with=$(whole_ms bwrap)
	echo "$plain $with" | awk -v r="$r" '{
		printf "whole run %d: %d ms plain, %d ms in bwrap, ratio %.3f\n", r, $1, $2, $2 / $1
		print $2 / $1 > "/dev/stderr" }' 2>> "$work/whole"
	r=$((r + 1))
done
sort -g "$work/whole" | awk -v n="$whole" '{ v[NR] = $1 } END {
	printf "sandbox bwrap/plain, whole runs of %d units of exit 0 at -j2, median of %d rounds: %.2f (target <= 2)\n",
	    n, NR, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
