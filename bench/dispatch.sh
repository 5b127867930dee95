#!/bin/sh
# dispatch.sh -- corral's per-unit dispatch cost against xargs -P, measured
# side by side in interleaved rounds (RELIABILITY 6.1 P1): N units whose
# command is 'true', J at a time, once through 'make -jJ corral-run' (split,
# plan, J clones, J agent logs, one merge) and once through
# 'xargs -P J -n1 sh -c true'.  Prints ms per unit for each, round by
# round, and the median of the per-round ratios.
#
#   usage: bench/dispatch.sh [N [J [ROUNDS]]]     (default 2000 2 5)
set -eu

n=${1:-2000} j=${2:-2} rounds=${3:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir "$tmp/proj"
seq -f 'unit-%05g' 1 "$n" > "$tmp/proj/units.txt"
cat > "$tmp/proj/Makefile" <<ZZMK
CORRAL_UNITS_FILE = units.txt
CORRAL_CMD = true
include $root/corral.mk
ZZMK

now_ns() { date +%s%N; }

echo "dispatch: $n units of 'true', $j at a time, $rounds rounds"
printf '%-6s %14s %14s %8s\n' round 'corral ms/unit' 'xargs ms/unit' ratio
i=1
ratios=
while [ "$i" -le "$rounds" ]; do
	make -C "$tmp/proj" -s corral-clean >/dev/null
	t0=$(now_ns)
	make -C "$tmp/proj" -s -j"$j" corral-run CORRAL_QUIET=1 \
		>/dev/null 2>"$tmp/make.err" || { cat "$tmp/make.err" >&2; exit 1; }
	t1=$(now_ns)
	seq "$n" | xargs -P "$j" -n1 sh -c true
	t2=$(now_ns)
	c=$(( (t1 - t0) / n )) x=$(( (t2 - t1) / n ))
	r=$(awk -v c="$c" -v x="$x" 'BEGIN { printf "%.2f", c / x }')
	printf '%-6s %14.3f %14.3f %8s\n' "$i" \
		"$(awk -v v="$c" 'BEGIN { print v / 1e6 }')" \
		"$(awk -v v="$x" 'BEGIN { print v / 1e6 }')" "$r"
	ratios="$ratios $r"
	i=$((i + 1))
done
printf '%s\n' $ratios | sort -n | awk '{ v[NR] = $1 }
	END { printf "median corral/xargs per-unit ratio: %s (target <= 1.0)\n", v[int((NR + 1) / 2)] }'
