#!/bin/sh
# limits.sh -- what timeouts and resource limits cost per unit (P11).
#
#   usage: limits.sh [UNITS] [ROUNDS]      (defaults 300 and 5)
#
# corral-run-slice runs UNITS units of 'true' without limits (posix_spawn)
# and with a timeout, a CPU and an address-space limit (vfork, setrlimit
# in the child), interleaved over ROUNDS rounds; it prints each round's
# per-unit times and the median of the per-round ratios.  With strace on
# PATH it also counts the execs per unit with the limits on (P2: <= 2).
set -eu

units=${1:-300}
rounds=${2:-5}
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
	limited=$(per_unit -t 60 -L cpu=60 -L mem=4G)
	echo "$plain $limited" | awk -v r="$r" '{
		printf "round %d: %d us/unit plain, %d us/unit with limits, ratio %.3f\n",
		    r, $1, $2, $2 / $1; print $2 / $1 > "/dev/stderr" }' 2>> "$work/ratios"
	r=$((r + 1))
done
sort -n "$work/ratios" | awk '{ v[NR] = $1 } END {
	printf "P11 limits/plain, median of %d rounds: %.3f (target <= 1.10)\n",
	    NR, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'

if command -v strace > /dev/null 2>&1; then
	seq 1 100 > "$work/slice100"
	strace -f -qq -o "$work/trace" -e trace=execve \
		corral-run-slice -t 60 -L cpu=60 -L mem=4G -c true \
		-l "$work/logs" K "$work/slice100"
	awk '/execve\(/ { n++ } END {
		printf "P2 execs per unit with limits: %.2f (target <= 2)\n", n / 100 }' \
		"$work/trace"
fi
