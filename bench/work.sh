#!/bin/sh
# work.sh -- a first run with the clones under CORRAL_OUT (the default,
# CORRAL_OUT/work) against the same run with CORRAL_WORK on a tmpfs, as a
# node's scratch would be (issue 27).  A tree of FILES files of 4 KiB, 40
# units of 'true' over 4 agents, each agent cloning the whole tree; each
# round one first run of each, interleaved, CORRAL_OUT removed before
# every run.  The tmpfs is /dev/shm; without one it says so and measures
# nothing.
#
#   usage: bench/work.sh [FILES [ROUNDS]]     (default 10000 3)
set -eu

files=${1:-10000} rounds=${2:-3}
top=$(cd "$(dirname "$0")/.." && pwd)
shm=/dev/shm
if [ "$(stat -f -c %T "$shm" 2>/dev/null)" != tmpfs ]; then
	echo "work: $shm is not a tmpfs here; not measured"
	exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/corral-bench.XXXXXX")
scratch=$(mktemp -d "$shm/corral-bench.XXXXXX")
trap 'rm -rf "$work" "$scratch"' EXIT

# shellcheck source=lib/files.sh
. "$(dirname "$0")/lib/files.sh"
mkdir -p "$work/p/t"
small_files "$work/p" "$files" /dev/zero > /dev/null
i=1
while [ "$i" -le 40 ]; do
	echo true > "$work/p/t/u$i.sh"
	i=$((i + 1))
done
cat > "$work/p/Makefile" <<MK
CORRAL_DISCOVER = ls t/*.sh
CORRAL_CMD = true
CORRAL_AGENTS = 4
CORRAL_QUIET = 1
include $top/corral.mk
MK

# ms MAKE-ARGS...: milliseconds of a first run
ms() {
	rm -rf "$work/p/.corral"
	t0=$(date +%s%N)
	make -s -C "$work/p" -j4 corral-run "$@" > /dev/null
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000000 ))
}

echo "work: $files files of 4 KiB, 40 units over 4 agents (4 clones of the tree), $rounds rounds"
: > "$work/ratios"
r=1
while [ "$r" -le "$rounds" ]; do
	out=$(ms)
	shm_ms=$(ms CORRAL_WORK="$scratch")
	echo "$out $shm_ms" | awk -v r="$r" '{
		printf "round %d: clones under CORRAL_OUT %d ms, CORRAL_WORK on tmpfs %d ms, ratio %.2f\n",
		    r, $1, $2, $2 / $1
		print $2 / $1 > "/dev/stderr" }' 2>> "$work/ratios"
	r=$((r + 1))
done
sort -n "$work/ratios" | awk '{ v[NR] = $1 } END {
	a = int((NR + 1) / 2); b = int(NR / 2) + 1
	printf "first run, CORRAL_WORK on tmpfs / clones under CORRAL_OUT, median: %.2f\n",
	    (v[a] + v[b]) / 2 }'
