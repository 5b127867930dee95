#!/bin/sh
# suite.sh -- a real bats suite's first run through corral against the
# same suite run serially by bats itself, side by side in interleaved
# rounds (issue 14's last row: corral / serial bats, target <= 0.65 at
# -j2).  The suite is the user's own: it is not part of this repository.
#
#   usage: BENCH_SUITE=DIR bench/suite.sh [J [ROUNDS]]    (default 2 3)
#
# DIR is copied once; its units are the files BENCH_SUITE_UNITS (default
# 'test/*.bats') names, run with 'bats', with CORRAL_PARTS
# BENCH_SUITE_PARTS (default auto: a first run learns what each unit
# reads).  Every round starts from no .corral, so each corral run is a
# first run, and checks that the merge found every unit exactly once.
set -eu

if [ -z "${BENCH_SUITE:-}" ]; then
	echo "suite: skipped (set BENCH_SUITE to a project with a bats suite)"
	exit 0
fi
j=${1:-2} rounds=${2:-3}
glob=${BENCH_SUITE_UNITS:-test/*.bats}
parts=${BENCH_SUITE_PARTS:-auto}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cp -R "$BENCH_SUITE" "$tmp/suite"
rm -rf "$tmp/suite/.corral"
cat > "$tmp/suite/corral-bench.mk" <<ZZMK
CORRAL_DISCOVER = ls $glob
CORRAL_CMD = bats "\$\$CORRAL_UNIT"
CORRAL_PARTS = $parts
include $root/corral.mk
ZZMK
# shellcheck disable=SC2012,SC2086 # the glob is the point, as for bats
n=$(cd "$tmp/suite" && ls $glob | wc -l)

now_ns() { date +%s%N; }

echo "suite: $BENCH_SUITE, $n files ($glob), -j$j, $rounds rounds, load $(cut -d' ' -f1 /proc/loadavg)"
printf '%-6s %12s %12s %8s\n' round 'corral s' 'bats s' ratio
i=1
ratios=
while [ "$i" -le "$rounds" ]; do
	rm -rf "$tmp/suite/.corral"
	t0=$(now_ns)
	make -C "$tmp/suite" -f corral-bench.mk -s -j"$j" corral-run \
		CORRAL_QUIET=1 > "$tmp/make.out" 2>&1 || :
	t1=$(now_ns)
	# shellcheck disable=SC2086
	(cd "$tmp/suite" && bats $glob > /dev/null 2>&1) || :
	t2=$(now_ns)
	jq -e --argjson n "$n" '.units == $n and .merged == $n and .missing == 0
	    and .duplicates == 0' "$tmp/suite/.corral/summary.json" > /dev/null ||
		{ echo "suite: the corral run did not merge every unit:" >&2
		  tail -n 5 "$tmp/make.out" >&2; exit 1; }
	r=$(awk -v c="$((t1 - t0))" -v b="$((t2 - t1))" \
		'BEGIN { printf "%.2f", c / b }')
	awk -v i="$i" -v c="$((t1 - t0))" -v b="$((t2 - t1))" -v r="$r" \
		'BEGIN { printf "%-6d %12.1f %12.1f %8s\n", i, c / 1e9, b / 1e9, r }'
	ratios="$ratios $r"
	i=$((i + 1))
done
# shellcheck disable=SC2086 # one ratio a word
printf '%s\n' $ratios | sort -n | awk '{ v[NR] = $1 } END {
	a = int((NR + 1) / 2); b = int(NR / 2) + 1
	printf "suite corral/serial bats, median of %d rounds: %.2f (target <= 0.65)\n",
	    NR, (v[a] + v[b]) / 2 }'
