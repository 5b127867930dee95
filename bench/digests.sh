#!/bin/sh
# digests.sh -- what the manifests' content digests cost and save (issue
# 26 item 4): over a tree of FILES files of 4 KiB, each file a unit that
# its slice clones, the median time of a no-op `make corral-run`
# (nothing changed: a stat per file, the memo answers) and of a run after
# `touch` of every file (each file read again, no agent started), with
# the agents each started.  With BENCH_BEFORE=DIR (the bin/ of another
# build, e.g. main's) each is measured against that build too, in
# interleaved rounds, and the ratio printed (this build / BENCH_BEFORE).
#
#   usage: bench/digests.sh [FILES [ROUNDS]]     (default 2000 5)
set -eu

files=${1:-2000} rounds=${2:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/files.sh
. "$root/bench/lib/files.sh"
after=${CORRAL_BIN:-$root/bin}
before=${BENCH_BEFORE:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/corral-digests.XXXXXX")
trap 'rm -rf "$work"' EXIT

# tree DIR: the project in DIR, its units the files of DIR/tree
tree() {
	mkdir -p "$1/tree"
	small_files "$1/tree" "$files" /dev/urandom | sed 's|^|tree/|' \
		>> "$1/units.txt"
	cat > "$1/Makefile" <<ZZMK
CORRAL_UNITS_FILE = units.txt
CORRAL_CMD = true
CORRAL_QUIET = 1
include $root/corral.mk
ZZMK
}

# ms BIN DIR [touch]: milliseconds of one run of DIR's project by the
# programs of BIN (after touching every file when asked)
ms() {
	[ "${3:-}" != touch ] || find "$2/tree" -type f -exec touch {} +
	t0=$(date +%s%N)
	CORRAL_BIN=$1 make -s -C "$2" -j2 corral-run > /dev/null 2>&1 ||
		{ echo "bench: the run of '$2' by '$1' failed" >&2; exit 1; }
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

median() {
	sort -n | awk '{ v[NR] = $1 } END {
		print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# agents DIR: the agents the last run of DIR started (the logs it wrote)
agents() {
	find "$1/.corral/logs" -name 'agent-*.jsonl' -newer "$1/.stamp" | wc -l
}

# measure WHAT [touch]: rounds of both builds, interleaved
measure() {
	: > "$work/a" && : > "$work/b"
	i=0
	while [ "$i" -lt "$rounds" ]; do
		touch "$work/after/.stamp"
		ms "$after" "$work/after" "${2:-}" >> "$work/a"
		[ -z "$before" ] || { touch "$work/before/.stamp"
			ms "$before" "$work/before" "${2:-}" >> "$work/b"; }
		i=$((i + 1))
	done
	a=$(median < "$work/a")
	if [ -n "$before" ]; then
		b=$(median < "$work/b")
		printf '%s: %s ms, before %s ms, ratio %s\n' "$1" "$a" "$b" \
			"$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
	else
		printf '%s: %s ms\n' "$1" "$a"
	fi
}

echo "digests: $files files of 4 KiB, one unit each, $rounds rounds"
tree "$work/after"
[ -z "$before" ] || tree "$work/before"
ms "$after" "$work/after" > /dev/null
[ -z "$before" ] || ms "$before" "$work/before" > /dev/null
measure "no-op run"
printf 'agents started by the last no-op run: %s%s\n' "$(agents "$work/after")" \
	"${before:+, before $(agents "$work/before")}"
measure "run after a touch of every file" touch
printf 'agents started by the last run after a touch: %s%s\n' \
	"$(agents "$work/after")" "${before:+, before $(agents "$work/before")}"
