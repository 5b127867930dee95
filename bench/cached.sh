#!/bin/sh
# cached.sh -- a run whose every unit a store answers (a fresh clone, or
# the next CI job, with the store restored) against the no-op run of the
# same project (everything passed, nothing changed): issue 26's target is
# 1.5x.  Interleaved rounds; prints the median ratio and both medians.
# With BENCH_BEFORE=DIR (the bin/ of another build, e.g. main's) the same
# pair is measured by that build too, in the same rounds, and printed on
# a second line with the cached run's speed-up (before / this build);
# each side includes the corral.mk beside its bin/.
#
#   usage: bench/cached.sh [UNITS [AGENTS [ROUNDS]]]   (10000 100 3)
# Needs corral's programs on PATH (make bench puts bin/ there).
set -eu
n=${1:-10000} agents=${2:-100} rounds=${3:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
after=${CORRAL_BIN:-$root/bin}
before=${BENCH_BEFORE:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/corral-cached.XXXXXX")
trap 'rm -rf "$work"' EXIT
sides=after
[ -z "$before" ] || sides="after before"
# each side's own corral.mk, the one its programs go with
for s in $sides; do
	mk=$root/corral.mk
	[ "$s" = after ] || mk=$(cd "$before/.." && pwd)/corral.mk
	for d in cached noop; do
		mkdir -p "$work/$s/$d"
		seq -f 'unit-%06g' 1 "$n" > "$work/$s/$d/units.txt"
		cat > "$work/$s/$d/Makefile" <<ZZMK
CORRAL_UNITS_FILE = units.txt
CORRAL_CMD = true
CORRAL_QUIET = 1
CORRAL_AGENTS = $agents
CORRAL_CACHE = $work/$s/store
CORRAL_CACHE_VERIFY = 0
include $mk
ZZMK
	done
done
# run SIDE DIR: one corral-run of SIDE's project DIR by SIDE's programs
run() {
	bin=$after
	[ "$1" = after ] || bin=$before
	CORRAL_BIN=$bin make -s -C "$work/$1/$2" -j2 corral-run > /dev/null 2>&1
}
ns() { t0=$(date +%s%N); "$@"; t1=$(date +%s%N); echo $((t1 - t0)); }
# fill each store, and bring each no-op side up to date
for s in $sides; do
	run "$s" cached && run "$s" noop && run "$s" noop
	: > "$work/$s/r"; : > "$work/$s/a"; : > "$work/$s/b"
done
i=1
while [ "$i" -le "$rounds" ]; do
	for s in $sides; do
		# a fresh clone's CORRAL_OUT, set aside rather than removed:
		# ext4 skips the inodes freed in the last seconds when it
		# makes new ones (recently_deleted), so an rm -rf here would
		# time the removal's aftermath, which a fresh clone has not
		mv "$work/$s/cached/.corral" "$work/$s/gone.$i"
		a=$(ns run "$s" cached)
		b=$(ns run "$s" noop)
		echo "$a" >> "$work/$s/a"; echo "$b" >> "$work/$s/b"
		awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f\n", a / b }' \
			>> "$work/$s/r"
	done
	i=$((i + 1))
done
median() { sort -g | awk '{ v[NR] = $1 } END {
	print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ms() { median < "$1" | awk '{ printf "%.0f", $1 / 1e6 }'; }
hits=$(jq -s 'map(select(.cached)) | length' "$work/after/cached/.corral/successes.jsonl")
# AGENTS is how many run at once; without a history the plan cuts finer
# (corral-split -F), so the count of slices is read off the plan
cut=$(ls "$work/after/cached/.corral/slices" | grep -c '\.units$')
printf 'cached run of %s units over %s slices (CORRAL_AGENTS = %s; %s hits) / no-op run: %s (medians %s ms / %s ms)\n' \
	"$n" "$cut" "$agents" "$hits" "$(median < "$work/after/r")" \
	"$(ms "$work/after/a")" "$(ms "$work/after/b")"
[ -n "$before" ] || exit 0
printf 'before (%s): %s (medians %s ms / %s ms); the cached run %sx faster\n' \
	"$before" "$(median < "$work/before/r")" "$(ms "$work/before/a")" \
	"$(ms "$work/before/b")" "$(awk -v a="$(ms "$work/after/a")" \
	-v b="$(ms "$work/before/a")" 'BEGIN { printf "%.1f", b / a }')"
