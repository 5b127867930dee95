#!/bin/sh
# tmp.sh -- what CORRAL_TMP=private costs per unit, against the default
# CORRAL_TMP=dir (each unit its own empty TMPDIR, made and removed).
#
#   usage: tmp.sh [UNITS] [ROUNDS]      (defaults 300 and 5)
#
# corral-run-slice runs UNITS units of 'true' with CORRAL_TMP=dir (no
# option) and with -Q (that TMPDIR bound on /tmp in a mount namespace of
# each unit's own), interleaved over ROUNDS rounds; it prints each round's
# per-unit times and the median of the per-round ratios.  Where the
# kernel refuses a mount namespace (not root) it says so and measures
# nothing.
set -eu

units=${1:-300}
rounds=${2:-5}
# shellcheck source=lib/rounds.sh
. "$(dirname "$0")/lib/rounds.sh"

echo 1 > "$work/one"
if ! corral-run-slice -Q -c true -l "$work/probe" K "$work/one" 2> /dev/null; then
	echo "tmp: CORRAL_TMP=private is refused here (corral-run-slice -Q); not measured"
	exit 0
fi
bench_rounds "private /tmp" -Q
bench_median 'tmp private/dir per unit, median of %d rounds: %.3f (about %.2f ms a unit)\n'
