#!/bin/sh
# table.sh -- every ratio corral holds itself to from the first run (issue
# 14), each measured side by side with its reference in interleaved
# rounds, the median of the per-round ratios, printed as one markdown
# table (README's and doc/measurements.md's tables are pasted from one run
# of it), then how the costs grow with the work, each against its target.
# Never a timed assertion: a ratio and its target, and whether it was met
# this time.
#
#   usage: bench/table.sh            (environment knobs below)
#
#   BENCH_ROUNDS=3   rounds of each interleaved pair
#   BENCH_BIG=0      1: also dispatch 100,000 units of 'true' through
#                    corral (auto slices) and merge 1 GB of logs (minutes)
#   BENCH_SUITE=     a bats project (e.g. a checkout of rbenv): the row of
#                    a real suite, by bench/suite.sh (which make bench
#                    then runs no more; its own knobs apply)
#   BENCH_SUITE_ROUNDS=1   rounds of that pair (each is a whole suite)
#   BENCH_RBENV=     a checkout of rbenv: the repair round's row, by
#                    bench/repair.sh (minutes: the round with and without
#                    the session store, each beside a serial bats test/)
#   BENCH_QUICK=0    1: a tenth of every population, to check this script,
#                    not to measure
#
# With strace on PATH, it also counts the programs a first and a no-op run
# of one unit start (bench/execs.sh, issue 23).
#
# A first run is timed from nothing: the previous run's CORRAL_OUT is
# removed before the clock starts, as the xargs side has nothing to remove.
# Needs corral's programs on PATH (make bench puts bin/ there), a C
# compiler and libcjson for the parser's own rate, GNU time for memory.
set -eu

load0=$(cut -d' ' -f1-3 /proc/loadavg)
rounds=${BENCH_ROUNDS:-3}
big=${BENCH_BIG:-0}
suite=${BENCH_SUITE:-}
suite_rounds=${BENCH_SUITE_ROUNDS:-1}
rbenv=${BENCH_RBENV:-}
q=1
[ "${BENCH_QUICK:-0}" != 1 ] || q=10
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/corral-table.XXXXXX")
trap 'rm -rf "$work"' EXIT
rows=$work/rows growth=$work/growth
: > "$rows"
: > "$growth"

# ns CMD...: the nanoseconds CMD took; its output is discarded, and it
# must succeed or exit 1 (failures are results).
ns() {
	t0=$(date +%s%N)
	"$@" > /dev/null 2>&1 || [ $? -eq 1 ] || { echo "bench: '$*' failed" >&2; exit 1; }
	t1=$(date +%s%N)
	echo $((t1 - t0))
}

# median: the median of the numbers on stdin, one a line
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# pair N SETUP A B: N interleaved rounds of the commands A and B (each a
# function of no argument; B may be '-', none), SETUP run untimed before
# each of them.  Leaves the medians: ratio (of A / B, round by round),
# ta and tb (nanoseconds).
pair() {
	: > "$work/r" && : > "$work/ta" && : > "$work/tb"
	i=1
	while [ "$i" -le "$1" ]; do
		$2
		a=$(ns "$3")
		echo "$a" >> "$work/ta"
		if [ "$4" != - ]; then
			$2
			b=$(ns "$4")
			echo "$b" >> "$work/tb"
			awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f\n", a / b }' >> "$work/r"
		fi
		i=$((i + 1))
	done
	ta=$(median < "$work/ta")
	ratio=0 tb=0
	[ "$4" = - ] || { ratio=$(median < "$work/r"); tb=$(median < "$work/tb"); }
}

# verdict MEASURED OP LIMIT...: yes when every MEASURED holds (OP is le or
# ge), else **no**
verdict() {
	awk -v m="$1" -v op="$2" -v l="$3" 'BEGIN {
		n = split(m, v, " "); ok = 1
		for (i = 1; i <= n; i++)
			if (op == "le" ? v[i] + 0 > l + 0 : v[i] + 0 < l + 0) ok = 0
		print ok ? "yes" : "**no**" }'
}

# row WHAT MEASURED TARGET OP LIMIT: a line of the table
row() {
	printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$(verdict "$2" "$4" "$5")" >> "$rows"
}

# grow WHAT FIGURES STEPS TARGET OP LIMIT [VALUES]: a line of the growth
# table; the verdict looks at VALUES, else at STEPS (the growth factors)
grow() {
	printf '| %s | %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4" \
		"$(verdict "${7:-$3}" "$5" "$6")" >> "$growth"
}

# fmt V [D]: V with D decimals (2); per V N DIV: V / N / DIV, 3 decimals
fmt() { awk -v v="$1" -v d="${2:-2}" 'BEGIN { printf "%.*f", d, v }'; }
per() { awk -v v="$1" -v n="$2" -v d="$3" 'BEGIN { printf "%.3f", v / n / d }'; }
# steps A B [C]: the growth factors B / A [and C / B], two decimals
steps() {
	awk -v a="$1" -v b="$2" -v c="${3:-}" 'BEGIN {
		printf "%.2f", b / a; if (c != "") printf " %.2f", c / b }'
}

# project DIR [CMD]: a corral project in DIR over its units.txt, running
# CMD ('true' unless given)
project() {
	mkdir -p "$1"
	cat > "$1/Makefile" <<ZZMK
CORRAL_UNITS_FILE = units.txt
CORRAL_CMD = ${2:-true}
CORRAL_QUIET = 1
include $root/corral.mk
ZZMK
}
# scripts DIR N S...: N one-line scripts DIR/tests/uNNNNN.sh, the I-th
# 'sleep S' for the I-th S given (the last one for the rest), its units
scripts() {
	mkdir -p "$1/tests"
	awk -v dir="$1" -v n="$2" -v s="${3:-}" 'BEGIN {
		k = split(s, v, " ")
		for (i = 0; i < n; i++) {
			f = sprintf("%s/tests/u%05d.sh", dir, i)
			print (i < k ? "sleep " v[i + 1] : (k ? "sleep " v[k] : ": one line")) > f
			close(f)
			print substr(f, length(dir) + 2) > (dir "/units.txt")
		} }'
	project "$1" 'sh "$$CORRAL_UNIT"'
}

# The commands the pairs time, over the project in $p: corral at -j$j,
# and xargs at -P$j running each unit as corral does (a shell that runs a
# shell), or 'true'.  Extra make arguments in $args.  A first run is made
# in a fresh copy of the project $proj (setup 'fresh', not timed), as
# bench/dispatch.sh does: a corral-clean before it would time, in the
# creates that follow, the files it just deleted.
p='' j=2 args='' proj='' runs=0
fresh() { runs=$((runs + 1)); p=$work/run$runs; cp -R "$proj" "$p"; }
clean() { make -s -C "$p" corral-clean > /dev/null 2>&1; }
corral() { make -s -C "$p" -j"$j" corral-run CORRAL_QUIET=1 $args; }
xargs_sh() { (cd "$p" && xargs -P"$j" -n1 sh -c 'sh "$0"' < units.txt); }
xargs_1000() { seq 1000 | xargs -n1 -P2 true; }

# ---------------------------------------------------------------------
# 1. Balance from the first run: 40 units, 4 of 2 s and 36 of 0.1 s,
# the long ones where a round-robin over 4 puts them together (0, 4, 8,
# 12), no history; the makespan of make -j4 corral-run against xargs -P4
# running each the same way.
scripts "$work/skew" 40 "2 0.1 0.1 0.1 2 0.1 0.1 0.1 2 0.1 0.1 0.1 2 0.1"
proj=$work/skew j=4
pair "$rounds" fresh corral xargs_sh
row "first run, no history, 40 units (4 x 2 s, 36 x 0.1 s, the long ones together under round-robin): \`make -j4 corral-run\` / \`xargs -P4\`" \
	"$ratio" "<= 1.05" le 1.05
# The same with the slice count fixed by the user, as a CI config that
# matches its -j does (issue 28): no history, so nothing tells the plan
# where the long units are.
args=CORRAL_AGENTS=4
pair "$rounds" fresh corral xargs_sh
row "the same with \`CORRAL_AGENTS=4\` set by the user: \`make -j4 corral-run CORRAL_AGENTS=4\` / \`xargs -P4\`" \
	"$ratio" "<= 1.25" le 1.25
args=

# What the 36 extra clones cost: the same population at 40 slices (the
# default) against 4, every unit 'true'.
args=CORRAL_CMD=true
forty() { corral; }
four() { make -s -C "$p" -j4 corral-run CORRAL_QUIET=1 CORRAL_CMD=true CORRAL_AGENTS=4; }
pair "$rounds" fresh forty four
extra=$(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.1f", (a - b) / 36 / 1e6 }')
args=
rm -rf "$work"/run*

# ---------------------------------------------------------------------
# 2. Cheap per unit with a shell, and 3. dispatch as the work grows: both
# are bench/dispatch.sh's measurements (shown here; make bench runs it no
# more): 2,000 one-line scripts run as sh "$CORRAL_UNIT" against xargs
# -P2 running each the same way, then N units of 'true' against xargs
# -P2 -n1 sh -c true, each round a first run in a fresh copy.
# dispatch N: dispatch.sh's lines into $work/dispatch, shown; leaves
# ratio (its median) and cms (the median of its corral ms per unit)
dispatch() {
	sh "$root/bench/dispatch.sh" "$1" 2 "$rounds" > "$work/dispatch"
	cat "$work/dispatch"
	echo
	ratio=$(sed -n 's/^median corral\/xargs ratio: \([0-9.]*\).*/\1/p' "$work/dispatch")
	cms=$(awk '$1 ~ /^[0-9]+$/ && NF == 4 { print $2 }' "$work/dispatch" | median)
}
dispatch $((2000 / q))
row "$((2000 / q)) units of \`sh \"\$CORRAL_UNIT\"\`: \`make -j2 corral-run\` / \`xargs -P2\` (bench/dispatch.sh)" \
	"$ratio" "<= 0.8" le 0.8
sizes="1000 10000"
[ "$big" != 1 ] || sizes="1000 10000 100000"
dper='' dvs='' dn=''
for n in $sizes; do
	n=$((n / q)) dn="$dn $n"
	BENCH_UNIT=true dispatch "$n"
	dper="$dper $cms"
	dvs="$dvs $ratio"
done
set -- $dper
grow "dispatch, ms per unit of \`true\`, first \`make -j2 corral-run\` at$(echo "$dn" | sed 's/ \([0-9]\)/ \/ \1/2g') units (bench/dispatch.sh)" \
	"$(echo $dper | sed 's/ / \/ /g')" "$(steps "$@")" "each step <= 1.1 (linear or better)" le 1.1
grow "dispatch vs \`xargs -P2 -n1 sh -c true\`, same sizes" \
	"$(echo $dvs | sed 's/ / \/ /g')" - "<= 1.0 (RELIABILITY P1)" le 1.0 "$dvs"

# ---------------------------------------------------------------------
# 4. No-op re-runs: everything passed, nothing changed.  The headline is
# 100,000 units over 1,000 slices against starting 1,000 processes;
# growth is 1,000 units at 10, 100 and 1,000 slices.
p=$work/noop j=2
project "$p"
seq -f 'unit-%06g' 1 $((100000 / q)) > "$p/units.txt"
args=CORRAL_AGENTS=1000
clean && corral > /dev/null 2>&1
pair $((rounds + 2)) : corral xargs_1000
row "no-op \`corral-run\`, $((100000 / q)) units over 1,000 slices, all passed / \`xargs -n1 -P2 true\` over 1,000" \
	"$ratio" "<= 0.25" le 0.25
rm -rf "$p"
p=$work/d$((1000 / q)) noops=''
project "$p"
seq -f 'unit-%06g' 1 $((1000 / q)) > "$p/units.txt"
for k in 10 100 1000; do
	args=CORRAL_AGENTS=$k
	clean && corral > /dev/null 2>&1
	pair $((rounds + 2)) : corral -
	noops="$noops $(fmt "$(per "$ta" 1 1e6)" 0)"
done
args=
set -- $noops
grow "no-op \`corral-run\`, ms, $((1000 / q)) units at 10 / 100 / 1,000 slices" \
	"$(echo $noops | sed 's/ / \/ /g')" "$(steps "$@")" "each 10x slices <= 10 (linear or better)" le 10

# A run whose every unit the store answers (a fresh clone, the next CI
# job) against the no-op run of the same project (bench/cached.sh).
line=$("$root"/bench/cached.sh $((10000 / q)) 100 "$rounds" 2>/dev/null) || line=
ratio=$(printf '%s\n' "$line" | sed -n 's/.* no-op run: \([0-9.]*\) .*/\1/p')
row "cached \`corral-run\` (a fresh CORRAL_OUT, every unit a hit of CORRAL_CACHE), $((10000 / q)) units, CORRAL_AGENTS = 100, / the no-op run (bench/cached.sh)" \
	"${ratio:-?}" "<= 1.5" le 1.5

# CORRAL_SANDBOX=bwrap against none, whole first runs of $((300 / q))
# units of 'exit 0' at -j2 (bench/sandbox.sh, issue 28).
line=$(sh "$root"/bench/sandbox.sh 0 "$rounds" $((300 / q)) 2>/dev/null | tail -n 1) || line=
ratio=$(printf '%s\n' "$line" | sed -n 's/.*median of [0-9]* rounds: \([0-9.]*\) .*/\1/p')
row "\`CORRAL_SANDBOX=bwrap\` / none, whole first runs of $((300 / q)) units of \`exit 0\`: \`make -j2 corral-run\` (bench/sandbox.sh)" \
	"${ratio:-?}" "<= 2" le 2

# ---------------------------------------------------------------------
# 5. The merge: 16 agent logs of records shaped as corral-run-slice
# writes them, against cJSON's own parse rate over the same bytes, and
# the merge's memory per unit.
cc -O2 -o "$work/cjparse" "$root/bench/cjson-parse.c" \
	$(pkg-config --cflags --libs libcjson)
# logs DIR MB: 16 logs of about MB megabytes in all under DIR/logs
logs() {
	mkdir -p "$1/logs"
	awk -v mb="$2" -v dir="$1/logs" 'BEGIN {
		for (i = 0; bytes < mb * 1000000; i++) {
			a = i % 16
			ok = i % 10 ? "true" : "false"
			note = ok == "true" ? "PASS: exit 0" : "FAIL: exit 1: assertion failed at line 12"
			line = sprintf("{\"agent_id\":\"%d\",\"unit\":\"tests/unit-%07d.bats\",\"ok\":%s,\"note\":\"%s\",\"at\":\"2026-11-29T10:00:00.000Z\",\"status\":\"%s\",\"exit\":%d,\"signal\":null,\"duration_ms\":%d,\"attempt\":1,\"run\":\"R1\",\"output\":\"logs/agent-%d/%d.out\",\"inputs\":\"0123456789abcdef\"}",
			    a, i, ok, note, ok == "true" ? "pass" : "fail",
			    ok == "true" ? 0 : 1, i % 997, a, i)
			print line > (dir "/agent-" a ".jsonl")
			bytes += length(line) + 1
		}
		print i > (dir "/../count")
	}'
}
m=
merge_once() { rm -rf "$m/out" && mkdir "$m/out" && corral-merge -q -o "$m/out" "$m/logs"; }
cj_once() { "$work/cjparse" "$m"/logs/*.jsonl; }
sizes="10 100"
[ "$big" != 1 ] || sizes="10 100 1000"
mper=
for mb in $sizes; do
	m=$work/m$mb
	logs "$m" $((mb / q))
	recs=$(cat "$m/count")
	pair "$rounds" : cj_once merge_once
	mper="$mper $(per "$tb" "$recs" 1e3)"
	[ "$mb" != 100 ] || { mrate=$ratio mrecs=$recs; }
	rm -rf "$m/out"
	rm -rf "$m"
done
row "corral-merge of 16 logs, ~$((100 / q)) MB ($mrecs records): throughput / cJSON's own parse rate on the same bytes" \
	"$mrate" ">= 0.9" ge 0.9
# The memory per unit as corral.mk runs the merge, with the population
# (-u): max RSS over the units, nothing taken off, at 320,000 and
# 1,000,000 units of one record each (issue 28).
population() {
	mkdir -p "$1/logs"
	awk -v n="$2" -v dir="$1/logs" 'BEGIN {
		for (i = 0; i < n; i++) {
			a = i % 16
			ok = i % 10 ? "true" : "false"
			note = ok == "true" ? "PASS: exit 0" : "FAIL: exit 1: assertion failed at line 12"
			printf "{\"agent_id\":\"%d\",\"unit\":\"tests/unit-%07d.bats\",\"ok\":%s,\"note\":\"%s\",\"at\":\"2026-11-29T10:00:00.000Z\",\"status\":\"%s\",\"exit\":%d,\"signal\":null,\"duration_ms\":%d,\"attempt\":1,\"run\":\"R1\",\"output\":\"logs/agent-%d/%d.out\",\"inputs\":\"0123456789abcdef\"}\n",
			    a, i, ok, note, ok == "true" ? "pass" : "fail",
			    ok == "true" ? 0 : 1, i % 997, a, i > (dir "/agent-" a ".jsonl")
			printf "tests/unit-%07d.bats\n", i > (dir "/../units")
		} }'
}
if /usr/bin/time -f %M true > /dev/null 2>&1; then
	for n in 320000 1000000; do
		m=$work/p$n
		population "$m" $((n / q))
		/usr/bin/time -f %M -o "$work/rss" corral-merge -q -o "$m/out" \
			-u "$m/units" "$m/logs" > /dev/null 2>&1 || true
		b=$(awk -v k="$(tail -n 1 "$work/rss")" -v n=$((n / q)) \
			'BEGIN { printf "%.0f", k * 1024 / n }')
		lim=80
		[ "$n" = 320000 ] || lim=64
		row "corral-merge memory per unit with \`-u\` (as corral.mk runs it), $(echo $((n / q)) | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta') units: max RSS / units" \
			"$b B" "<= $lim B" le "$lim"
		rm -rf "$m"
	done
fi
set -- $mper
grow "merge, us per record at $(echo "$sizes" | sed 's/ / MB \/ /g') MB" \
	"$(echo $mper | sed 's/ / \/ /g')" "$(steps "$@")" "each step <= 1.1 (linear or better)" le 1.1

# ---------------------------------------------------------------------
# 6. A real bats suite (BENCH_SUITE), its first run through corral at -j2
# against serial bats: bench/suite.sh's measurement, its lines shown here.
if [ -n "$suite" ]; then
	BENCH_SUITE=$suite sh "$root/bench/suite.sh" 2 "$suite_rounds" > "$work/suite"
	cat "$work/suite"
	echo
	row "a real bats suite, $(sed -n '1s/^suite: \(.*\), \([0-9]*\) files.*/\1 (\2 files)/p' "$work/suite"), first run: \`make -j2 corral-run\` / serial \`bats\` ($suite_rounds round(s))" \
		"$(sed -n 's/.*median of [0-9]* rounds: \([0-9.]*\).*/\1/p' "$work/suite")" "<= 0.65" le 0.65
else
	printf '| a real bats suite at -j2, first run / serial bats | not run (set BENCH_SUITE to a bats project) | <= 0.65 | |\n' >> "$rows"
fi

# ---------------------------------------------------------------------
# 6b. A repair round on rbenv (BENCH_RBENV): 3 planted defects and a
# decoy, corral-fix with shellcheck's repairs and the suite as finders,
# against one serial bats test/ beside it (bench/repair.sh, its lines
# shown here); the row is with the session store, the round without it
# is said in the row's name.
if [ -n "$rbenv" ]; then
	sh "$root/bench/repair.sh" "$rbenv" 1 > "$work/repair"
	cat "$work/repair"
	echo
	rr=$(sed -n 's/.*before (no store) \([0-9.]*\), after (the session store) \([0-9.]*\).*/\1 \2/p' "$work/repair")
	row "rbenv's repair round (3 planted defects, a decoy; bench/repair.sh), corral-fix's session store / one serial \`bats test/\` (without the store: ${rr%% *})" \
		"${rr##* }" "<= 5" le 5
else
	printf "| rbenv's repair round / one serial \`bats test/\` | not run (set BENCH_RBENV to a checkout of rbenv) | <= 5 | |\n" >> "$rows"
fi

# ---------------------------------------------------------------------
# 7. The programs a run starts (issue 23): successful execve under strace
# for a one-unit project, a first run and a no-op run, by bench/execs.sh
# (its histogram shown here; make bench runs it no more).  A count, the
# same on any machine for the same code.
if command -v strace > /dev/null 2>&1; then
	sh "$root/bench/execs.sh" > "$work/execs"
	cat "$work/execs"
	echo
	row "programs started (successful \`execve\`) by a first \`make -s corral-run\` of one unit (bench/execs.sh)" \
		"$(sed -n 's/^first \([0-9]*\)$/\1/p' "$work/execs")" "<= 25" le 25
	row "programs started by a no-op \`make -s corral-run\` of one unit (bench/execs.sh)" \
		"$(sed -n 's/^noop \([0-9]*\)$/\1/p' "$work/execs")" "<= 12" le 12
else
	printf '| programs started by a first / a no-op `make -s corral-run` of one unit | not run (no strace) | <= 25 / <= 12 | |\n' >> "$rows"
fi

echo "corral bench (issue 14): $rounds rounds each, medians of per-round ratios; $(nproc) CPUs, load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo
echo "| what | measured | target | met |"
echo "|---|---|---|---|"
cat "$rows"
echo
echo "Each extra slice (a clone, an agent) cost $extra ms on a first run: 40 slices against 4 for the same 40 units of \`true\`."
echo
echo "| growth | measured | steps | target | met |"
echo "|---|---|---|---|---|"
cat "$growth"
