#!/bin/sh
# execs.sh -- the programs a corral-run starts (issue 23): a project of
# one unit (CORRAL_UNITS = a, CORRAL_CMD = true, every other setting its
# default) run by 'make -s corral-run' under strace, twice: a first run
# (no CORRAL_OUT yet) and a no-op run (the same again, nothing changed).
# A program started is an execve that succeeded, make's own included
# (strace -ff writes one file per process, so no call is cut in two);
# one that failed (a PATH lookup trying the next directory) is none.
# Prints "first N" and "noop N", then, for each, how many times each
# program (by basename) was started, most first.  Counts, not times: the
# same on any machine for the same code.
#
#   usage: bench/execs.sh            (needs strace; exit 2 without it)
#
#   BENCH_EXECS_KEEP=DIR   keep the traces there (DIR/first.PID, ...)
set -eu

command -v strace > /dev/null 2>&1 || { echo "execs: needs strace" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/corral-execs.XXXXXX")
trap 'rm -rf "$work"' EXIT

mkdir "$work/proj" "$work/trace"
cat > "$work/proj/Makefile" <<ZZMK
CORRAL_UNITS = a
CORRAL_CMD = true
include $root/corral.mk
ZZMK

# trace NAME: make -s corral-run under strace, one file per process
trace() {
	strace -f -ff -qq -e trace=execve -o "$work/trace/$1" \
		make -s -C "$work/proj" corral-run > "$work/$1.out" 2>&1 ||
		{ cat "$work/$1.out" >&2; echo "execs: the $1 run failed" >&2; exit 1; }
}

# execs NAME: the basename of every program the run NAME started, one a
# line (the path execve was given, up to its quote)
execs() {
	cat "$work/trace/$1".* | sed -n 's/^execve("\([^"]*\)".* = 0$/\1/p' |
		sed 's|.*/||'
}

trace first
trace noop
for run in first noop; do
	echo "$run $(execs "$run" | wc -l | tr -d ' ')"
done
for run in first noop; do
	echo
	echo "$run run, programs started:"
	execs "$run" | LC_ALL=C sort | uniq -c | LC_ALL=C sort -k1,1nr -k2,2 |
		awk '{ printf "%5d %s\n", $1, $2 }'
done
[ -z "${BENCH_EXECS_KEEP:-}" ] || { mkdir -p "$BENCH_EXECS_KEEP" &&
	cp "$work/trace"/* "$BENCH_EXECS_KEEP"/; }
