#!/bin/sh
# slurm.sh -- what a Slurm step costs (issue 27): UNITS short units (each
# 'true') inside one allocation of three nodes, two CPUs each
# (salloc -N3 -n6), three ways:
#   corral      make -j6 corral-run, no launcher (the agents on this node)
#   launch      make -j6 corral-run with CORRAL_LAUNCH='srun -N1 -n1
#               --exact': one step per slice
#   srun        xargs -P6 srun -N1 -n1 --exact: one step per unit, no corral
# The three nodes are one 2-CPU machine (build-aux/slurm-up): this
# measures the launcher's overhead, not scaling.  Without Slurm's
# daemons installed (build-aux/deps slurm) it says so and measures
# nothing.
#
#   usage: bench/slurm.sh [UNITS]     (default 600)
set -eu

units=${1:-600}
top=$(cd "$(dirname "$0")/.." && pwd)
PATH=$PATH:/usr/sbin:/sbin
if ! command -v slurmd > /dev/null || ! command -v srun > /dev/null; then
	echo "slurm: Slurm is not installed (build-aux/deps slurm); not measured"
	exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/corral-bench.XXXXXX")
trap '"$top/build-aux/slurm-down" "$work/slurm"; rm -rf "$work"' EXIT INT TERM
"$top/build-aux/slurm-up" "$work/slurm" 3 > /dev/null
# shellcheck source=/dev/null
. "$work/slurm/env"
unset MAKEFLAGS MFLAGS MAKELEVEL CORRAL_LAUNCH CORRAL_OUT

mkdir -p "$work/p"
seq -f 'u%04g' 1 "$units" > "$work/p/units"
cat > "$work/p/Makefile" <<MK
CORRAL_UNITS_FILE = units
CORRAL_CMD = true
CORRAL_QUIET = 1
include $top/corral.mk
MK

# ms CMD...: milliseconds CMD took, under one salloc -N3 -n6
ms() {
	t0=$(date +%s%N)
	salloc -Q -N3 -n6 "$@" > "$work/out" 2>&1 ||
		{ cat "$work/out" >&2; echo "slurm: '$*' failed" >&2; exit 1; }
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000000 ))
}

first() {
	rm -rf "$work/p/.corral"
	ms make -s -C "$work/p" -j6 corral-run "$@"
}

plain=$(first)
slices=$(find "$work/p/.corral/slices" -name "*.units" | wc -l)
launch=$(first CORRAL_LAUNCH='srun -N1 -n1 --exact --quit-on-interrupt')
bare=$(ms sh -c "xargs -P6 -n1 srun -N1 -n1 --exact true < '$work/p/units'")
echo "slurm: $units units of 'true', salloc -N3 -n6 (three nodes on one 2-CPU machine)"
awk -v u="$units" -v s="$slices" -v p="$plain" -v l="$launch" -v b="$bare" 'BEGIN {
	printf "corral, no launcher:           %6d ms  %6.2f ms a unit\n", p, p / u
	printf "corral, a step per slice (%d): %6d ms  %6.2f ms a unit, %.0f ms a step over corral alone\n", s, l, l / u, (l - p) / s
	printf "srun alone, a step per unit:   %6d ms  %6.2f ms a unit\n", b, b / u
	printf "launch / corral: %.2f; srun alone / launch: %.2f\n", l / p, b / l }'
