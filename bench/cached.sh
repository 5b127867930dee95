#!/bin/sh
# cached.sh -- a run whose every unit a store answers (a fresh clone, or
# the next CI job, with the store restored) against the no-op run of the
# same project (everything passed, nothing changed): issue 26's target is
# 1.5x.  Interleaved rounds; prints the median ratio and both medians.
#
#   usage: bench/cached.sh [UNITS [SLICES [ROUNDS]]]   (10000 100 3)
# Needs corral's programs on PATH (make bench puts bin/ there).
set -eu
n=${1:-10000} slices=${2:-100} rounds=${3:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/corral-cached.XXXXXX")
trap 'rm -rf "$work"' EXIT
for d in cached noop; do
	mkdir -p "$work/$d"
	seq -f 'unit-%06g' 1 "$n" > "$work/$d/units.txt"
	cat > "$work/$d/Makefile" <<ZZMK
CORRAL_UNITS_FILE = units.txt
CORRAL_CMD = true
CORRAL_QUIET = 1
CORRAL_AGENTS = $slices
CORRAL_CACHE = $work/store
CORRAL_CACHE_VERIFY = 0
include $root/corral.mk
ZZMK
done
run() { make -s -C "$work/$1" -j2 corral-run > /dev/null 2>&1; }
ns() { t0=$(date +%s%N); "$@"; t1=$(date +%s%N); echo $((t1 - t0)); }
# fill the store, and bring the no-op side up to date
run cached && run noop && run noop
: > "$work/r"; : > "$work/a"; : > "$work/b"
i=1
while [ "$i" -le "$rounds" ]; do
	rm -rf "$work/cached/.corral"
	a=$(ns run cached)
	b=$(ns run noop)
	echo "$a" >> "$work/a"; echo "$b" >> "$work/b"
	awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f\n", a / b }' >> "$work/r"
	i=$((i + 1))
done
median() { sort -g | awk '{ v[NR] = $1 } END {
	print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
hits=$(jq -s 'map(select(.cached)) | length' "$work/cached/.corral/successes.jsonl")
printf 'cached run of %s units over %s slices (%s hits) / no-op run: %s (medians %s ms / %s ms)\n' \
	"$n" "$slices" "$hits" "$(median < "$work/r")" \
	"$(median < "$work/a" | awk '{ printf "%.0f", $1 / 1e6 }')" \
	"$(median < "$work/b" | awk '{ printf "%.0f", $1 / 1e6 }')"
