#!/bin/sh
# dispatch.sh -- corral's per-unit cost with a shell (issue 14, row 2):
# N one-line scripts, each run as sh "$CORRAL_UNIT", through a whole
# 'make -jJ corral-run' from nothing (split, plan, clones, agent logs,
# merge), against 'xargs -P J' running each the same way, a shell that
# runs the script: sh -c 'sh "$0"' UNIT.  corral starts the script's sh
# itself, without a shell before it, since that command needs none
# (src/agent/direct.c): one shell per unit against xargs's two.  The two
# run interleaved, round by round; prints ms per unit for each, the
# ratio, and the median of the per-round ratios.  Each round is a first
# run in a fresh copy of the project (made before the clock starts, all
# removed at the end): a corral-clean before it would time, in the
# creates that follow, the thousands of files it just deleted (below).
#
#   usage: bench/dispatch.sh [N [J [ROUNDS]]]     (default 2000 2 5)
#
#   BENCH_UNIT=true  units of 'true' instead (RELIABILITY 6.1 P1), against
#                    xargs -P J -n1 sh -c true
#   BENCH_CLEAN=1    every round in the same project after a corral-clean
#                    (not timed), which deleted the last round's files
#
# Creating a file costs a lot more in a directory whose ext4 block group
# has seen many files deleted in the last minutes (ext4 without a journal
# skips recently freed inodes one by one): the line 'file creation here'
# says what it cost in the bench's own directory ($TMPDIR, else /tmp).
set -eu

n=${1:-2000} j=${2:-2} rounds=${3:-5}
unit=${BENCH_UNIT:-sh}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/corral-dispatch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

now_ns() { date +%s%N; }
ms() { awk -v v="$1" -v n="${2:-1}" 'BEGIN { printf "%.3f", v / n / 1e6 }'; }

mkdir -p "$tmp/proj/tests"
case $unit in
sh)
	cmd='sh "$$CORRAL_UNIT"'
	i=1
	while [ "$i" -le "$n" ]; do
		echo ': one line' > "$tmp/proj/tests/u$(printf %06d "$i").sh"
		i=$((i + 1))
	done
	(cd "$tmp/proj" && printf '%s\n' tests/u*.sh > units.txt)
	what="$n one-line scripts run as sh \"\$CORRAL_UNIT\""
	ref="xargs -P$j -n1 sh -c 'sh \"\$0\"'" ;;
true)
	cmd=true
	seq -f 'unit-%06g' 1 "$n" > "$tmp/proj/units.txt"
	what="$n units of 'true'"
	ref="xargs -P$j -n1 sh -c true" ;;
*)
	echo "dispatch: BENCH_UNIT '$unit' is neither sh nor true" >&2
	exit 2 ;;
esac
cat > "$tmp/proj/Makefile" <<ZZMK
CORRAL_UNITS_FILE = units.txt
CORRAL_CMD = $cmd
include $root/corral.mk
ZZMK

reference() {
	cd "$1"
	case $unit in
	sh) xargs -P "$j" -n1 sh -c 'sh "$0"' < units.txt ;;
	true) xargs -P "$j" -n1 sh -c true < units.txt ;;
	esac
}

# What creating an empty file costs in this directory, for the record.
mkdir "$tmp/probe"
t0=$(now_ns)
i=0
while [ "$i" -lt 500 ]; do : > "$tmp/probe/f$i"; i=$((i + 1)); done
t1=$(now_ns)
rm -rf "$tmp/probe"

echo "dispatch: $what, make -j$j corral-run against $ref, $rounds rounds" \
	"$([ "${BENCH_CLEAN:-0}" = 1 ] && echo 'after corral-clean' || echo 'in fresh copies')"
echo "file creation here: $(awk -v v=$((t1 - t0)) 'BEGIN { printf "%.0f", v / 500 / 1e3 }') us;" \
	"load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
printf '%-6s %14s %14s %8s\n' round 'corral ms/unit' 'xargs ms/unit' ratio
i=1
ratios=
while [ "$i" -le "$rounds" ]; do
	if [ "${BENCH_CLEAN:-0}" = 1 ]; then
		[ -d "$tmp/round1" ] || cp -R "$tmp/proj" "$tmp/round1"
		ln -s round1 "$tmp/round$i" 2>/dev/null || :
		make -C "$tmp/round1" -s corral-clean >/dev/null
	else
		cp -R "$tmp/proj" "$tmp/round$i"
	fi
	t0=$(now_ns)
	make -C "$tmp/round$i" -s -j"$j" corral-run CORRAL_QUIET=1 \
		>/dev/null 2>"$tmp/make.err" || { cat "$tmp/make.err" >&2; exit 1; }
	t1=$(now_ns)
	(reference "$tmp/round$i")
	t2=$(now_ns)
	r=$(awk -v c=$((t1 - t0)) -v x=$((t2 - t1)) 'BEGIN { printf "%.3f", c / x }')
	printf '%-6s %14s %14s %8s\n' "$i" "$(ms $((t1 - t0)) "$n")" \
		"$(ms $((t2 - t1)) "$n")" "$r"
	ratios="$ratios $r"
	i=$((i + 1))
done
target=0.8
[ "$unit" = sh ] || target=1.0
printf '%s\n' $ratios | sort -g | awk -v t="$target" '{ v[NR] = $1 } END {
	m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "median corral/xargs ratio: %s (target <= %s)\n", m, t }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
