#!/bin/sh
# sandbox.sh -- what CORRAL_SANDBOX=bwrap costs per unit.
#
#   usage: sandbox.sh [UNITS] [ROUNDS]      (defaults 100 and 5)
#
# corral-run-slice runs UNITS units of 'true' without the sandbox and
# with it (-X bwrap: a bubblewrap per unit, with its mount, network, IPC,
# PID, UTS, cgroup and user namespaces, no capability, a session and a
# session keyring of its own), interleaved over ROUNDS rounds; it prints each
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
# shellcheck source=lib/rounds.sh
. "$(dirname "$0")/lib/rounds.sh"

bench_rounds "in bwrap" -X bwrap
bench_median 'sandbox bwrap/plain per unit, median of %d rounds: %.2f (about %.1f ms a unit)\n'
