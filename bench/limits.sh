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
# shellcheck source=lib/rounds.sh
. "$(dirname "$0")/lib/rounds.sh"

bench_rounds "with limits" -t 60 -L cpu=60 -L mem=4G
bench_median 'P11 limits/plain, median of %d rounds: %.3f (target <= 1.10)\n'

if command -v strace > /dev/null 2>&1; then
	seq 1 100 > "$work/slice100"
	strace -f -qq -o "$work/trace" -e trace=execve \
		corral-run-slice -t 60 -L cpu=60 -L mem=4G -c true \
		-l "$work/logs" K "$work/slice100"
	awk '/execve\(/ { n++ } END {
		printf "P2 execs per unit with limits: %.2f (target <= 2)\n", n / 100 }' \
		"$work/trace"
fi
