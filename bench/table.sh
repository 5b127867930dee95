#!/bin/sh
# table.sh -- every ratio corral holds itself to from the first run (issue
# 14), each measured side by side with its reference in interleaved
# rounds, the median of the per-round ratios, printed as one markdown
# table (README's and doc/measurements.md's table is pasted from one run
# of it), then how the costs grow with the work.  Never a timed assertion:
# a ratio and its target, and whether it was met this time.
#
#   usage: bench/table.sh            (environment knobs below)
#
#   BENCH_ROUNDS=3   rounds of each interleaved pair
#   BENCH_BIG=0      1: also dispatch 100,000 units of 'true' through
#                    corral and merge 1 GB of logs (minutes)
#
# Needs corral's programs on PATH (make bench puts bin/ there), a C
# compiler and libcjson for the parser's own rate, GNU time for memory.
set -eu

rounds=${BENCH_ROUNDS:-3}
big=${BENCH_BIG:-0}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/corral-table.XXXXXX")
trap 'rm -rf "$work"' EXIT
rows=$work/rows

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

# row WHAT MEASURED TARGET OP LIMIT: a line of the table; OP is le or ge
row() {
	awk -v w="$1" -v m="$2" -v t="$3" -v op="$4" -v l="$5" 'BEGIN {
		met = (op == "le" ? m + 0 <= l + 0 : m + 0 >= l + 0) ? "yes" : "**no**"
		printf "| %s | %s | %s | %s |\n", w, m, t, met }' >> "$rows"
}

# note TEXT: a line of the growth table (no target of its own)
note() {
	printf '| %s | %s |\n' "$1" "$2" >> "$work/growth"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", a / b }'; }
fmt() { awk -v v="$1" -v d="${2:-2}" 'BEGIN { printf "%.*f", d, v }'; }

# project DIR: a corral project in DIR over its units.txt, running
# CORRAL_CMD as given by the caller's make command line
project() {
	mkdir -p "$1"
	cat > "$1/Makefile" <<ZZMK
CORRAL_UNITS_FILE = units.txt
CORRAL_CMD = true
CORRAL_QUIET = 1
include $root/corral.mk
ZZMK
}

# corral_run DIR -jN [VAR=VALUE...]: one corral-run of the project in DIR
corral_run() {
	d=$1 j=$2
	shift 2
	make -s -C "$d" "$j" corral-run CORRAL_QUIET=1 "$@"
}
# corral_fresh: the same from nothing (no plan, no history)
corral_fresh() { make -s -C "$1" corral-clean; corral_run "$@"; }

# ---------------------------------------------------------------------
# 1. Balance from the first run: 40 units, 4 of 2 s and 36 of 0.1 s,
# the long ones where a round-robin over 4 puts them together (0, 4, 8,
# 12), no history; the makespan of make -j4 corral-run against xargs -P4
# running each the same way.
mkdir -p "$work/skew/tests"
i=0
while [ $i -lt 40 ]; do
	case $i in 0|4|8|12) s=2 ;; *) s=0.1 ;; esac
	printf 'sleep %s\n' "$s" > "$work/skew/tests/t$(printf %02d $i).sh"
	i=$((i + 1))
done
(cd "$work/skew" && printf '%s\n' tests/t*.sh > units.txt)
project "$work/skew"
sed -i 's/^CORRAL_CMD = true$/CORRAL_CMD = sh "$$CORRAL_UNIT"/' "$work/skew/Makefile"
skew_xargs() { (cd "$work/skew" && xargs -P4 -n1 sh -c 'sh "$0"' < units.txt); }
: > "$work/r"
r=1
while [ "$r" -le "$rounds" ]; do
	c=$(ns corral_fresh "$work/skew" -j4)
	x=$(ns skew_xargs)
	ratio "$c" "$x" >> "$work/r"
	r=$((r + 1))
done
row "first run, no history, 40 units (4 x 2 s, 36 x 0.1 s, the long ones together under round-robin): \`make -j4 corral-run\` / \`xargs -P4\`" \
	"$(median < "$work/r")" "<= 1.05" le 1.05

# What the 36 extra clones cost: the same population at 40 slices
# (the default) against 4, every unit 'true'.
: > "$work/r"
r=1
while [ "$r" -le "$rounds" ]; do
	a=$(ns corral_fresh "$work/skew" -j4 CORRAL_CMD=true)
	f=$(ns corral_fresh "$work/skew" -j4 CORRAL_CMD=true CORRAL_AGENTS=4)
	awk -v a="$a" -v f="$f" 'BEGIN { print (a - f) / 36 / 1e6 }' >> "$work/r"
	r=$((r + 1))
done
extra=$(fmt "$(median < "$work/r")" 2)

# ---------------------------------------------------------------------
# 2. Cheap per unit with a shell: 2,000 one-line scripts run as
# sh "$CORRAL_UNIT", make -j2 corral-run against xargs -P2 running each
# the same way (a shell that runs a shell).
mkdir -p "$work/sh/tests"
i=0
while [ $i -lt 2000 ]; do
	echo ': one line' > "$work/sh/tests/u$(printf %04d $i).sh"
	i=$((i + 1))
done
(cd "$work/sh" && printf '%s\n' tests/u*.sh > units.txt)
project "$work/sh"
sed -i 's/^CORRAL_CMD = true$/CORRAL_CMD = sh "$$CORRAL_UNIT"/' "$work/sh/Makefile"
sh_xargs() { (cd "$work/sh" && xargs -P2 -n1 sh -c 'sh "$0"' < units.txt); }
: > "$work/r"
r=1
while [ "$r" -le "$rounds" ]; do
	c=$(ns corral_fresh "$work/sh" -j2)
	x=$(ns sh_xargs)
	ratio "$c" "$x" >> "$work/r"
	r=$((r + 1))
done
row "2,000 units of \`sh \"\$CORRAL_UNIT\"\`: \`make -j2 corral-run\` / \`xargs -P2\` (two shells per unit on both sides)" \
	"$(median < "$work/r")" "<= 0.8" le 0.8

# ---------------------------------------------------------------------
# 3. Dispatch as the work grows: per-unit time of make -j2 corral-run
# over N units of 'true' (names, not files), against xargs -P2 -n1
# sh -c true at the same N.
seq -f 'unit-%06g' 1 1000 > "$work/n1k"
seq -f 'unit-%06g' 1 10000 > "$work/n10k"
seq -f 'unit-%06g' 1 100000 > "$work/n100k"
for n in 1000 10000; do
	f=$work/n$((n / 1000))k
	project "$work/d$n"
	cp "$f" "$work/d$n/units.txt"
	x_true() { seq "$n" | xargs -P2 -n1 sh -c true; }
	: > "$work/r" && : > "$work/c"
	r=1
	while [ "$r" -le "$rounds" ]; do
		c=$(ns corral_fresh "$work/d$n" -j2)
		x=$(ns x_true)
		echo "$c" >> "$work/c"
		ratio "$c" "$x" >> "$work/r"
		r=$((r + 1))
	done
	eval "per$n=\$(awk -v v=\"\$(median < \"\$work/c\")\" -v n=$n 'BEGIN { print v / n / 1e6 }')"
	eval "vs$n=\$(median < \"\$work/r\")"
done
note "dispatch, ms per unit of \`true\` at 1,000 / 10,000 units (\`make -j2 corral-run\`)" \
	"$(fmt "$per1000" 3) / $(fmt "$per10000" 3); 10k/1k: $(fmt "$(ratio "$per10000" "$per1000")")"
note "dispatch vs \`xargs -P2 -n1 sh -c true\` at 1,000 / 10,000 units" "$vs1000 / $vs10000"

# ---------------------------------------------------------------------
# 4. No-op re-runs: everything passed, nothing changed.  The headline is
# 100,000 units over 1,000 slices against starting 1,000 processes;
# growth is 10,000 units at 10, 100 and 1,000 slices.
project "$work/noop"
cp "$work/n100k" "$work/noop/units.txt"
t100k=$(ns corral_fresh "$work/noop" -j2 CORRAL_AGENTS=1000)
[ "$big" != 1 ] ||
	note "dispatch, ms per unit of \`true\` at 100,000 units over 1,000 slices" \
		"$(awk -v v="$t100k" 'BEGIN { printf "%.3f", v / 100000 / 1e6 }')"
x_1000() { seq 1000 | xargs -n1 -P2 true; }
: > "$work/r"
r=1
while [ "$r" -le $((rounds + 2)) ]; do
	c=$(ns corral_run "$work/noop" -j2 CORRAL_AGENTS=1000)
	x=$(ns x_1000)
	ratio "$c" "$x" >> "$work/r"
	r=$((r + 1))
done
row "no-op \`corral-run\`, 100,000 units over 1,000 slices, all passed / \`xargs -n1 -P2 true\` over 1,000" \
	"$(median < "$work/r")" "<= 0.25" le 0.25
cp "$work/n10k" "$work/d10000/units.txt"
for k in 10 100 1000; do
	corral_fresh "$work/d10000" -j2 CORRAL_AGENTS=$k > /dev/null 2>&1
	: > "$work/c"
	r=1
	while [ "$r" -le $((rounds + 2)) ]; do
		ns corral_run "$work/d10000" -j2 CORRAL_AGENTS=$k >> "$work/c"
		r=$((r + 1))
	done
	eval "noop$k=\$(awk -v v=\"\$(median < \"\$work/c\")\" 'BEGIN { printf \"%.0f\", v / 1e6 }')"
done
note "no-op \`corral-run\`, ms, 10,000 units at 10 / 100 / 1,000 slices" \
	"$noop10 / $noop100 / $noop1000"

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
merge_once() {
	rm -rf "$1/out" && mkdir "$1/out"
	corral-merge -q -o "$1/out" "$1/logs"
}
cj_once() { "$work/cjparse" "$1"/logs/*.jsonl; }
sizes="10 100"
[ "$big" != 1 ] || sizes="10 100 1000"
for mb in $sizes; do
	logs "$work/m$mb" "$mb"
	recs=$(cat "$work/m$mb/count")
	: > "$work/r" && : > "$work/c"
	r=1
	while [ "$r" -le "$rounds" ]; do
		m=$(ns merge_once "$work/m$mb")
		j=$(ns cj_once "$work/m$mb")
		echo "$m" >> "$work/c"
		ratio "$j" "$m" >> "$work/r"
		r=$((r + 1))
	done
	eval "mrate$mb=\$(median < \"\$work/r\")"
	eval "mper$mb=\$(awk -v v=\"\$(median < \"\$work/c\")\" -v n=$recs 'BEGIN { printf \"%.2f\", v / n / 1e3 }')"
	eval "mrecs$mb=$recs"
	rm -rf "$work/m$mb/out"
	if [ "$mb" = 100 ] && /usr/bin/time -f %M true > /dev/null 2>&1; then
		/usr/bin/time -f %M -o "$work/rss" corral-merge -q -o "$work/m$mb/out0" \
			"$work/m$mb/logs" > /dev/null 2>&1 || true
		mkdir -p "$work/empty/logs"
		/usr/bin/time -f %M -o "$work/rss0" "$work/cjparse" /dev/null > /dev/null
		perunit=$(awk -v k="$(tail -n 1 "$work/rss")" -v z="$(tail -n 1 "$work/rss0")" \
			-v n="$recs" 'BEGIN { printf "%.0f", (k - z) * 1024 / n }')
	fi
	[ "$mb" = 1000 ] || rm -rf "$work/m$mb"
done
row "corral-merge of 16 logs, ~100 MB ($mrecs100 records): throughput / cJSON's own parse rate on the same bytes" \
	"$mrate100" ">= 0.9" ge 0.9
[ -z "${perunit:-}" ] ||
	row "corral-merge memory per unit at ~100 MB (max RSS less a bare cJSON program's, over the records)" \
		"$perunit B" "<= 48 B" le 48
if [ "$big" = 1 ]; then
	note "merge, us per record at 10 MB / 100 MB / 1 GB" "$mper10 / $mper100 / $mper1000"
else
	note "merge, us per record at 10 MB / 100 MB (1 GB: BENCH_BIG=1)" "$mper10 / $mper100"
fi

echo "corral bench (issue 14): $rounds rounds each, medians of per-round ratios; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| what | measured | target | met |"
echo "|---|---|---|---|"
cat "$rows"
echo
echo "Each extra slice (a clone, an agent) cost $extra ms on the first run: 40 slices against 4 for the same 40 units of \`true\`."
echo
echo "| growth | measured |"
echo "|---|---|"
cat "$work/growth"
