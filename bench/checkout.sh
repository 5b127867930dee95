#!/bin/sh
# checkout.sh -- corral-checkout against 'cp -r' on the same trees, side by
# side in interleaved rounds (RELIABILITY 6.1 P9, P9b): FILES small files
# of 4 KiB (P9: per-file time <= 1.5x cp -r) and BIG files of 32 MiB
# (P9b: throughput >= 0.8x cp -r).  Both copy into fresh directories on
# the same filesystem; the page cache is warm for both.
#
#   usage: bench/checkout.sh [FILES [BIG [ROUNDS]]]     (default 1000 4 5)
set -eu

files=${1:-1000} big=${2:-4} rounds=${3:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/corral-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# shellcheck source=lib/files.sh
. "$(dirname "$0")/lib/files.sh"
mkdir -p "$work/small/tree" "$work/large/tree"
small_files "$work/small/tree" "$files" /dev/urandom > /dev/null
i=0
while [ "$i" -lt "$big" ]; do
	head -c 33554432 /dev/urandom > "$work/large/tree/big$i"
	i=$((i + 1))
done

# ns CMD...: nanoseconds CMD took
ns() {
	t0=$(date +%s%N)
	"$@"
	t1=$(date +%s%N)
	echo $((t1 - t0))
}

# round SET: corral's and cp's times for one copy of SET/tree, fresh dests
round() {
	rm -rf "$1/c" "$1/p"
	c=$(ns corral-checkout "$1" "$1/c" tree)
	p=$(ns cp -r "$1/tree" "$1/p")
	echo "$c $p"
}

median() {
	sort -n | awk '{ v[NR] = $1 } END {
		print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "checkout: $files files of 4 KiB and $big of 32 MiB, $rounds rounds"
: > "$work/r9" && : > "$work/r9b"
r=1
while [ "$r" -le "$rounds" ]; do
	set -- $(round "$work/small")
	awk -v r="$r" -v n="$files" -v c="$1" -v p="$2" -v out="$work/r9" 'BEGIN {
		printf "round %d: small files: corral %.1f us/file, cp -r %.1f us/file, ratio %.2f\n",
		    r, c / n / 1000, p / n / 1000, c / p
		print c / p > out }'
	set -- $(round "$work/large")
	awk -v r="$r" -v n="$big" -v c="$1" -v p="$2" -v out="$work/r9b" 'BEGIN {
		mb = n * 32
		printf "round %d: large files: corral %.0f MB/s, cp -r %.0f MB/s, ratio %.2f\n",
		    r, mb / (c / 1e9), mb / (p / 1e9), p / c
		print p / c > out }'
	r=$((r + 1))
done
printf 'P9 small files corral/cp per file, median: %.2f (target <= 1.5)\n' "$(median < "$work/r9")"
printf 'P9b large files corral/cp throughput, median: %.2f (target >= 0.8)\n' "$(median < "$work/r9b")"
