#!/usr/bin/env bats
# html.bats -- corral-report -H and CORRAL_HTML: a run as one HTML page that
# needs nothing else, loaded in a real browser (chromium, headless, in a
# network namespace of its own, so with no network at all).
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
}

# slices CMD UNITS-OF-AGENT-0 [-- UNITS-OF-AGENT-1 ...]: one agent per
# group (one retry each), merged into out/
slices() {
	local cmd=$1 k=0 u
	shift
	: > s0
	for u in "$@"; do
		if [ "$u" = -- ]; then k=$((k + 1)); : > "s$k"; continue; fi
		printf '%s\n' "$u" >> "s$k"
	done
	for u in $(seq 0 "$k"); do
		corral-run-slice -R 1 -c "$cmd" -l out/logs "$u" "s$u" || true
	done
	corral-merge -q -o out out/logs || true
}

CMD='case $CORRAL_UNIT in
	*bad*) echo "the last words of $CORRAL_UNIT"; exit 1 ;;
	*flaky*) [ "$CORRAL_ATTEMPT" -gt 1 ] || exit 3 ;;
	esac; sleep 0.02'

# xq XPATH FILE: what XPATH gives in the HTML of FILE (libxml2 knows no
# SVG, and says so on stderr)
xq() {
	xmllint --html --xpath "$1" "$2" 2>/dev/null
}

# browse PAGE: PAGE in headless chromium with no network; its DOM after
# loading in dom.html, a screenshot in shot.png
browse() {
	local flags=(--headless --no-sandbox --disable-gpu
		--user-data-dir="$BATS_TEST_TMPDIR/chromium" --window-size=1200,900)
	run -0 --separate-stderr unshare -n chromium "${flags[@]}" \
		--dump-dom "file://$PWD/$1"
	printf '%s\n' "$output" > dom.html
	run -0 --separate-stderr unshare -n chromium "${flags[@]}" \
		--screenshot="$PWD/shot.png" "file://$PWD/$1"
	# a PNG whose IHDR says 1200 x 900
	run -0 od -An -tx1 -j0 -N24 shot.png
	assert_equal "$(echo $output)" "89 50 4e 47 0d 0a 1a 0a 00 00 00 0d 49 48 44 52 00 00 04 b0 00 00 03 84"
}

@test "html: chromium loads the page with no network, and its DOM holds one bar per attempt with its unit's name, unit, time and status in its title" {
	slices "$CMD" ok bad -- flaky
	run -0 --separate-stderr corral-report -H page.html out
	assert_stderr ""
	browse page.html
	assert_equal 5 "$(grep -c '<rect class="bar ' dom.html)"
	assert_equal 2 "$(grep -c '<rect class="bar fail" [^>]*data-unit="bad"' dom.html)"
	assert_equal 1 "$(grep -c '<rect class="bar flaky" [^>]*data-unit="flaky"' dom.html)"
	assert_equal 1 "$(grep -c '<rect class="bar fail" [^>]*data-unit="flaky"' dom.html)"
	assert_equal 1 "$(grep -c '<rect class="bar pass" [^>]*data-unit="ok"' dom.html)"
	run -0 grep -o '<rect class="bar [^>]*data-unit="ok"><title>[^<]*' <(tr '\n' ' ' < dom.html)
	assert_contains "$output" "<title>ok "
	assert_contains "$output" " ms, pass (exit 0), attempt 1"
	# one row per agent, the checkouts and the merge
	assert_equal 2 "$(grep -c '<rect class="span checkout"' dom.html)"
	assert_equal 1 "$(grep -c '<rect class="span merge"' dom.html)"
	run -0 grep -c '>agent [01]</text>' dom.html
	assert_output 2
}

@test "html: the page needs nothing else: no script, no link, nothing fetched, and a policy that forbids it" {
	slices "$CMD" ok bad
	run -0 corral-report -H page.html out
	run -1 grep -Ei '<script|<link|<img|<iframe|src=|href=|url\(|@import' page.html
	assert_contains "$(cat page.html)" "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
	run -0 grep -o 'http[s]*://[^"]*' page.html
	assert_output "http://www.w3.org/2000/svg"
}

@test "html: failures come first with their notes and output tail, then the slowest units, the flaky ones and the plan's balance" {
	slices "$CMD" ok bad -- flaky
	run -0 corral-report -H page.html out
	run -0 grep -o '<h2 id="[a-z]*">' page.html
	assert_output "$(printf '<h2 id="%s">\n' timeline failures slowest flaky skipped balance)"
	run -0 xq 'string(//h2[@id="failures"]/following-sibling::table[1]//tr[2]/td[1])' page.html
	assert_contains "$output" "bad"
	run -0 xq 'string(//h2[@id="failures"]/following-sibling::table[1]//tr[2]/td[5])' page.html
	assert_contains "$output" "FAIL: exit 1: the last words of bad"
	assert_contains "$output" "output tail"
	run -0 xq 'string(//h2[@id="flaky"]/following-sibling::table[1]//tr[2])' page.html
	assert_contains "$output" "FLAKY: passed on attempt 2"
	run -0 xq 'count(//h2[@id="slowest"]/following-sibling::table[1]//tr)' page.html
	assert_output 4
}

@test "html: the skipped units are listed with their reasons, after the flaky ones" {
	printf '%s\n' ok skip-net skip-db > s0
	corral-run-slice -K 77 -c 'case $CORRAL_UNIT in skip*) echo "no network here" >&2; exit 77 ;; esac' -l out/logs 0 s0
	corral-merge -q -o out out/logs
	run -0 corral-report -H page.html out
	run -0 grep -o '<h2 id="skipped">Skipped units (2)</h2>' page.html
	run -0 xq 'string(//h2[@id="skipped"]/following-sibling::table[1])' page.html
	assert_contains "$output" "skip-net"
	assert_contains "$output" "skip-db"
	assert_contains "$output" "SKIP: exit 77: no network here"
}

@test "html: the balance is the makespan against max(total / agents, longest unit)" {
	mkdir out
	# agent 0: a (1s), b (1s); agent 1: c (2s, on its second attempt)
	cat > out/successes.jsonl <<'EOF2'
{"agent_id":"0","unit":"a","ok":true,"at":"2026-01-01T00:00:01.000Z","status":"pass","exit":0,"duration_ms":1000,"attempt":1}
{"agent_id":"0","unit":"b","ok":true,"at":"2026-01-01T00:00:02.000Z","status":"pass","exit":0,"duration_ms":1000,"attempt":1}
{"agent_id":"1","unit":"c","ok":true,"at":"2026-01-01T00:00:04.000Z","status":"flaky","exit":0,"duration_ms":2000,"attempt":2,"tries":[{"at":"2026-01-01T00:00:01.500Z","duration_ms":1500,"status":"fail","exit":1}]}
EOF2
	run -0 corral-report -H page.html out
	balance() {
		xq "string(//h2[@id='balance']/following-sibling::table[1]//tr[$1]/td[2])" page.html
	}
	run -0 balance 1
	assert_output "4.0s"	# makespan: 0 to 4 s
	run -0 balance 2
	assert_output "3.5s"	# max(5.5 s / 2, 3.5 s: c's attempts together)
	run -0 balance 3
	assert_output "5.5s"
	run -0 balance 5
	assert_output "1.14"
}

@test "html: unit names with <, &, quotes and invalid UTF-8 are escaped everywhere, the bad bytes as U+FFFD" {
	mkdir out
	printf '{"agent_id":"0","unit":"x<script>alert(1)</script>&amp;\\"q\\"'"'"'s\xff","ok":false,"note":"FAIL: <b>bold</b> & \xfe","at":"2026-01-01T00:00:01.000Z","status":"fail","exit":1,"duration_ms":10,"attempt":1}\n' > out/failures.jsonl
	run -0 corral-report -H page.html out
	refute_contains "$(cat page.html)" "<script"
	refute_contains "$(cat page.html)" "<b>bold"
	run -0 iconv -f UTF-8 -t UTF-8 page.html
	browse page.html
	refute_contains "$(cat dom.html)" "<script"
	run -0 xq 'string(//rect[@class="bar fail"]/@data-unit)' dom.html
	assert_output "x<script>alert(1)</script>&amp;\"q\"'s"$'\xef\xbf\xbd'
	run -0 xq 'string(//h2[@id="failures"]/following-sibling::table[1]//tr[2]/td[5])' dom.html
	assert_output "FAIL: <b>bold</b> & "$'\xef\xbf\xbd'
}

@test "html: at 10,000 units bars below a pixel merge into one that counts them, the failures fold after 50, and hosts group the rows" {
	mkdir out
	awk 'BEGIN {
		for (i = 0; i < 10000; i++) {
			a = i % 8; t[a] += 100; ok = i % 97 ? "true" : "false"
			printf "{\"agent_id\":\"%d\",\"unit\":\"u%05d\",\"ok\":%s,\"at\":\"2026-01-01T00:%02d:%02d.%03dZ\",\"status\":\"%s\",\"exit\":%d,\"duration_ms\":90,\"attempt\":1,\"host\":\"h%d\"}\n", a, i, ok, t[a] / 60000, t[a] / 1000 % 60, t[a] % 1000, ok == "true" ? "pass" : "fail", ok == "true" ? 0 : 1, a % 2
		} }' > all.jsonl
	grep '"ok":true' all.jsonl > out/successes.jsonl
	grep '"ok":false' all.jsonl > out/failures.jsonl
	run -0 corral-report -H page.html out
	# every attempt is a bar of its own or counted in a merged one
	run -0 awk '/<rect class="bar / { n++ } match($0, /<title>[0-9]+ attempts/) {
		split(substr($0, RSTART + 7), w, " "); n += w[1] } END { print n }' page.html
	assert_output 10000
	[ "$(grep -c '<rect class="bars ' page.html)" -gt 0 ]
	[ "$(grep -c '<rect ' page.html)" -lt 4000 ]
	[ "$(wc -c < page.html)" -lt 1500000 ]
	run -0 grep -c '<summary>54 more</summary>' page.html
	run -0 grep -c '<text class="host"' page.html
	assert_output 2
	browse page.html
}

@test "html: a pause between runs (a re-run an hour later) is left out of the time axis and said so, the balance is the latest run's alone, and the title names the project and that run" {
	mkdir out
	# run r1: a (2s) on agent 0, b (4s) on agent 1; an hour later, run
	# r2 re-runs c (3s) on agent 0
	cat > out/successes.jsonl <<'EOF2'
{"agent_id":"0","unit":"a","ok":true,"at":"2026-01-01T05:00:02.000Z","status":"pass","exit":0,"duration_ms":2000,"attempt":1,"run":"r1"}
{"agent_id":"1","unit":"b","ok":true,"at":"2026-01-01T05:00:04.000Z","status":"pass","exit":0,"duration_ms":4000,"attempt":1,"run":"r1"}
{"agent_id":"0","unit":"c","ok":true,"at":"2026-01-01T06:00:03.000Z","status":"pass","exit":0,"duration_ms":3000,"attempt":1,"run":"r2"}
EOF2
	run -0 corral-report -n 'our <project>' -H page.html -T trace.json out
	run -0 xq "string(//title)" page.html
	assert_output "our <project>: corral run r2: 3 units"
	run -0 xq "string(//h1)" page.html
	assert_output "our <project>: corral run r2"
	run -0 xq "string(//p[@class='counts'])" page.html
	assert_contains "$output" "7.0s in all"
	assert_contains "$output" "1 pause between runs left out (59m56s)"
	# c follows the end of r1 in the trace too
	assert_json '[.traceEvents[] | select(.ph == "X" and .name == "c") | .ts] == [4000000]' trace.json
	balance() {
		xq "string(//h2[@id='balance']/following-sibling::table[1]//tr[$1]/td[$2])" page.html
	}
	run -0 balance 1 2
	assert_output "3.0s"	# makespan of r2 alone
	run -0 balance 2 1
	assert_output "lower bound, max(total / 1 agents, longest unit)"
}

@test "html: cached units that follow one another merge into one mark of their own, never into the bars of what ran, and the balance and the slowest units leave them out" {
	mkdir out
	# agent 0: a, b, c cached within 2 ms, then d ran for 10 s
	cat > out/successes.jsonl <<'EOF2'
{"agent_id":"0","unit":"a","ok":true,"at":"2026-01-01T00:00:00.000Z","status":"pass","exit":0,"duration_ms":9000,"attempt":1,"run":"r2","cached":{"run":"r1","host":"h","at":"2025-12-31T00:00:00.000Z","key":"k"}}
{"agent_id":"0","unit":"b","ok":true,"at":"2026-01-01T00:00:00.001Z","status":"pass","exit":0,"duration_ms":8000,"attempt":1,"run":"r2","cached":{"run":"r1","host":"h","at":"2025-12-31T00:00:00.000Z","key":"k"}}
{"agent_id":"0","unit":"c","ok":true,"at":"2026-01-01T00:00:00.002Z","status":"skip","exit":77,"duration_ms":7000,"attempt":1,"run":"r2","cached":{"run":"r1","host":"h","at":"2025-12-31T00:00:00.000Z","key":"k"}}
{"agent_id":"0","unit":"d","ok":true,"at":"2026-01-01T00:00:10.002Z","status":"pass","exit":0,"duration_ms":10000,"attempt":1,"run":"r2"}
EOF2
	run -0 corral-report -H page.html out
	run -0 grep -o '<rect class="bars\? [a-z]*"[^>]*><title>[^<]*' <(tr '\n' ' ' < page.html)
	assert_equal 2 "${#lines[@]}"
	assert_contains "${lines[0]}" '<rect class="bars cached" x="130.00"'
	assert_contains "${lines[0]}" 'width="4.00"'
	assert_contains "${lines[0]}" '<title>3 cached, not run again a ... c'
	assert_contains "${lines[1]}" '<rect class="bar pass"'
	assert_contains "${lines[1]}" 'data-unit="d"'
	grep -q '3 cached, not run again</span><span>4 attempts' page.html
	run -0 xq "string(//h2[@id='balance']/following-sibling::table[1]//tr[3]/td[2])" page.html
	assert_output "10.0s"
	run -0 xq 'count(//h2[@id="slowest"]/following-sibling::table[1]//tr)' page.html
	assert_output 2
}

# units U...: proj/, one unit file U.sh each, run by corral.mk, two agents,
# cut round-robin (a.sh c.sh, b.sh d.sh)
units() {
	mkdir -p proj
	for u in "$@"; do echo 'exit 0' > "proj/$u.sh"; done
	printf '%s.sh\n' "$@" > proj/units.txt
	cat > proj/Makefile <<EOF2
CORRAL_UNITS_FILE = units.txt
CORRAL_CMD = sh "\$\$CORRAL_UNIT"
CORRAL_AGENTS = 2
CORRAL_SPLIT = roundrobin
include $CORRAL_ROOT/corral.mk
EOF2
}

@test "html: after a second run that re-ran one slice (a unit's file edited), the page and the trace draw each unit's latest attempt and none it superseded, count summary.json's attempts, and balance that run alone" {
	units a b c d
	run -0 make -C proj -j2 corral-run
	echo 'echo edited; exit 0' > proj/a.sh
	run -0 make -C proj -j2 corral-run
	assert_json '.merged == 4 and .attempts == 4' proj/.corral/summary.json
	run -0 --separate-stderr corral-report -H page.html -T trace.json proj/.corral
	run -0 xq "string(//p[@class='counts'])" page.html
	assert_contains "$output" "4 attempts"
	assert_contains "$output" "2 agents"
	run -0 grep -o '<rect class="bar [^>]*data-unit="[^"]*"' page.html
	assert_equal "a.sh b.sh c.sh d.sh" "$(printf '%s\n' "$output" | sed 's/.*data-unit="//; s/"$//' | sort | tr '\n' ' ' | sed 's/ $//')"
	assert_json '[.traceEvents[] | select(.cat == "unit") | .name] | sort == ["a.sh","b.sh","c.sh","d.sh"]' trace.json
	# the balance is the second run's: a.sh and c.sh, one agent
	local r
	r=$(jq -r .run proj/.corral/summary.json)
	run -0 xq "string(//h2[@id='balance']/following-sibling::p[1])" page.html
	assert_output "Of run $r alone: 2 of the 4 attempts."
	run -0 xq "string(//h2[@id='balance']/following-sibling::table[1]//tr[2]/td[1])" page.html
	assert_output "lower bound, max(total / 1 agents, longest unit)"
}

@test "html: the title names the project, the run summary.json names and the shard" {
	units a b c
	run -0 make -C proj -j2 corral-run CORRAL_SHARD=2/3 CORRAL_HTML="$PWD/page.html"
	local r
	r=$(jq -r .run proj/.corral/shard-2-of-3/summary.json)
	run -0 xq "string(//title)" page.html
	assert_output "proj: corral run $r, shard 2/3: 1 units"
	run -0 xq "string(//h1)" page.html
	assert_output "proj: corral run $r, shard 2/3"
}
