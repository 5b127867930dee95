#!/bin/sh
# fanout.sh -- a whole corral fan-out by hand, with the four programs and
# xargs -P instead of make: the same safety, no Makefile.
#
#   usage: fanout.sh SRC N OUT
#
# SRC is a project like examples/textkit (tests/*.sh, a lib/ they share),
# N the number of agents, OUT a fresh directory for the results.  Exit
# status: that of corral-merge (0 all passed, 1 some failed, 2 incomplete).
set -eu

src=$1 n=$2 out=$3
mkdir -p "$out"

# 1. split: discover the units, cut them into N disjoint slices.
(cd "$src" && find tests -name '*.sh' | LC_ALL=C sort) > "$out/units"
corral-split -n "$n" -o "$out/slices" "$out/units"

# 2+3. checkout and run: one agent per slice, N at a time.  Each clones
# lib/ and its own test files, runs them, writes only logs/agent-K.jsonl.
# An agent exits 1 when one of its units failed; that is a result, so it
# does not stop the others (xargs would stop on 255 only).  -G $$: should
# this script be killed outright, its agents stop their units too.
ls "$out/slices" | sed -n 's/\.units$//p' |
	xargs -P "$n" -I{} corral-run-slice -G $$ -C "$src" -p lib \
		-P "$out/slices/{}.units" -w "$out/work" \
		-c 'sh "$CORRAL_UNIT"' -l "$out/logs" {} "$out/slices/{}.units" ||
	true

# 4. merge: the only writer of the shared files, after every agent.
corral-merge -u "$out/units" -o "$out" "$out/logs"
