#!/bin/sh
# merge.sh -- corral-merge's throughput and memory against baselines run
# side by side on the same bytes (RELIABILITY 6.1 P6, P6b, P7).
#
#   usage: bench/merge.sh [MB [AGENTS [ROUNDS]]]     (default 100 16 3)
#
# It writes AGENTS agent logs of MB megabytes in all (records shaped as
# corral-run-slice writes them, a tenth of them failures with a longer
# note), then, in interleaved rounds, times corral-merge against
# 'grep -F' routing the same lines to two files (P6: >= 0.4x grep's MB/s),
# against cJSON's own parse of every line (bench/cjson-parse.c, issue 14:
# >= 0.9x its rate) and, when python3 is on PATH, a json.loads routing
# loop (P6b: >= 8x).  With GNU time it also prints the merge's maximum RSS
# at MB and at a hundredth of it (P7: <= 1.5x and <= 16 MB) and its memory
# per unit, the RSS less a bare cJSON program's over the records (issue
# 14: <= 48 B); the merge keeps one entry per unit to prove each is there
# exactly once, so its memory follows the number of units, not the bytes
# of the logs.  The load average is printed: on a loaded machine every
# ratio is noisy.
set -eu

mb=${1:-100} agents=${2:-16} rounds=${3:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/corral-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# logs DIR MB: AGENTS logs of about MB megabytes under DIR/logs
logs() {
	mkdir -p "$1/logs"
	awk -v mb="$2" -v agents="$agents" -v dir="$1/logs" 'BEGIN {
		pad = sprintf("%120s", ""); gsub(/ /, "x", pad)
		for (i = 0; bytes < mb * 1048576; i++) {
			a = i % agents
			ok = i % 10 ? "true" : "false"
			note = ok == "true" ? "PASS: exit 0" : "FAIL: exit 1: " pad
			line = sprintf("{\"agent_id\":\"%d\",\"unit\":\"tests/unit-%07d.bats\",\"ok\":%s,\"note\":\"%s\",\"at\":\"2026-11-29T10:00:00.000Z\",\"status\":\"%s\",\"exit\":%d,\"signal\":null,\"duration_ms\":%d,\"attempt\":1,\"run\":\"R1\",\"output\":\"/tmp/logs/agent-%d/%d.out\",\"inputs\":\"0123456789abcdef\"}",
			    a, i, ok, note, ok == "true" ? "pass" : "fail",
			    ok == "true" ? 0 : 1, i % 997, a, i)
			print line > (dir "/agent-" a ".jsonl")
			bytes += length(line) + 1
		}
		print i > (dir "/../count")
	}'
}

# ns CMD...: nanoseconds CMD took (its output discarded)
ns() {
	t0=$(date +%s%N)
	"$@" > /dev/null 2>&1 || true
	t1=$(date +%s%N)
	echo $((t1 - t0))
}

# (the last round's outputs are removed before the clock starts)
merge_once() {
	corral-merge -q -o "$work/out" "$work/big/logs"
}

grep_once() {
	cat "$work"/big/logs/*.jsonl | grep -F '"ok":true' > "$work/g.ok"
	cat "$work"/big/logs/*.jsonl | grep -vF '"ok":true' > "$work/g.fail"
}

cat > "$work/route.py" <<'ZZPY'
import json, sys
ok = open(sys.argv[1] + "/p.ok", "w")
fail = open(sys.argv[1] + "/p.fail", "w")
for path in sys.argv[2:]:
    with open(path) as f:
        for line in f:
            (ok if json.loads(line)["ok"] else fail).write(line)
ZZPY

py_once() {
	python3 "$work/route.py" "$work" "$work"/big/logs/*.jsonl
}

cc -O2 -o "$work/cjparse" "$(dirname "$0")/cjson-parse.c" \
	$(pkg-config --cflags --libs libcjson)
cj_once() { "$work/cjparse" "$work"/big/logs/*.jsonl; }

logs "$work/big" "$mb"
bytes=$(cat "$work"/big/logs/*.jsonl | wc -c)
echo "merge: $(cat "$work/big/count") records, $((bytes / 1048576)) MB over $agents agent logs, $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg)"
py=
command -v python3 > /dev/null 2>&1 && py=1
: > "$work/r6" && : > "$work/r6b" && : > "$work/rcj"
r=1
while [ "$r" -le "$rounds" ]; do
	rm -rf "$work/out" && mkdir "$work/out"
	m=$(ns merge_once)
	j=$(ns cj_once)
	g=$(ns grep_once)
	p=
	[ -z "$py" ] || p=$(ns py_once)
	awk -v r="$r" -v b="$bytes" -v m="$m" -v g="$g" -v p="$p" -v j="$j" \
	    -v r6="$work/r6" -v r6b="$work/r6b" -v rcj="$work/rcj" 'BEGIN {
		mbs = b / 1048576
		printf "round %d: merge %.0f MB/s, cJSON parse %.0f MB/s, grep %.0f MB/s", r, mbs / (m / 1e9), mbs / (j / 1e9), mbs / (g / 1e9)
		print g / m > r6
		print j / m > rcj
		if (p != "") {
			printf ", python %.0f MB/s", mbs / (p / 1e9)
			print p / m > r6b
		}
		printf "\n"
	}'
	r=$((r + 1))
done
median() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
printf 'merge/cJSON parse throughput, median: %.3f (target >= 0.9)\n' "$(median "$work/rcj")"
printf 'P6 merge/grep throughput, median: %.2f (target >= 0.40)\n' "$(median "$work/r6")"
[ -z "$py" ] ||
	printf 'P6b merge/python throughput, median: %.1f (target >= 8)\n' "$(median "$work/r6b")"

if [ -x /usr/bin/time ] && /usr/bin/time -f %M true > /dev/null 2>&1; then
	small=$(( mb / 100 > 0 ? mb / 100 : 1 ))
	logs "$work/small" "$small"
	rss() {
		rm -rf "$work/out" && mkdir "$work/out"
		/usr/bin/time -f %M -o "$work/rss" \
			corral-merge -q -o "$work/out" "$1/logs" > /dev/null 2>&1 || true
		tail -n 1 "$work/rss"
	}
	big=$(rss "$work/big") little=$(rss "$work/small")
	/usr/bin/time -f %M -o "$work/rss0" "$work/cjparse" /dev/null > /dev/null
	awk -v b="$big" -v s="$little" -v mb="$mb" -v smb="$small" \
	    -v z="$(tail -n 1 "$work/rss0")" -v n="$(cat "$work/big/count")" 'BEGIN {
		printf "P7 max RSS: %.1f MB at %d MB, %.1f MB at %d MB, ratio %.2f (targets <= 1.5 and <= 16 MB)\n",
		    b / 1024, mb, s / 1024, smb, b / s
		printf "memory per unit: %.0f B (max RSS less a bare cJSON program'"'"'s, over %d records; target <= 48)\n",
		    (b - z) * 1024 / n, n }'
fi
