#!/usr/bin/env bats
# merge-shards.bats -- make corral-merge-shards and corral-merge -S: the
# shards of one population, run on many hosts, merged on any host, every
# unit exactly once, and a missing, foreign or duplicate shard named.

bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
}

# project DIR [N]: N (default 12) units t/uNN.sh, each noting in ./ran that
# it ran; a unit whose file says 'exit 1' fails.
project() {
	mkdir -p "$1/t"
	for i in $(seq -w 1 "${2:-12}"); do echo 'exit 0' > "$1/t/u$i.sh"; done
	cat > "$1/Makefile" <<EOF
CORRAL_DISCOVER = ls t/*.sh
CORRAL_CMD = printf '%s\\n' "\$\$CORRAL_UNIT" >> "$PWD/ran"; sh "\$\$CORRAL_UNIT"
CORRAL_AGENTS = 2
CORRAL_SPLIT = ${SPLIT:-roundrobin}
include $CORRAL_ROOT/corral.mk
EOF
}

# hosts N: copies h1 .. hN of one project, shard K of N run on hK
hosts() {
	local k
	project h1
	for k in $(seq 2 "$1"); do cp -r h1 "h$k"; done
	for k in $(seq 1 "$1"); do
		make -C "h$k" -j2 corral-run CORRAL_SHARD="$k/$1" \
			CORRAL_HOST="host$k" >/dev/null 2>&1 || return 1
	done
}

shards() {
	local k
	for k in $(seq 1 "$1"); do printf '%s ' "$PWD/h$k/.corral/shard-$k-of-$1"; done
}

@test "merge-shards: three hosts, one with local history, run 1/3 2/3 3/3; one merge on a fourth copy has every unit exactly once" {
	SPLIT=auto project h1 30
	cp -r h1 h2
	cp -r h1 h3
	cp -r h1 m
	# h2 has history of its own: its split inside the shard is weighted
	# (2 slices); h1 and h3 have none: 10 slices each, 2 at a time.
	make -C h2 -j2 corral-run CORRAL_SHARD=2/3 >/dev/null 2>&1
	# Keep only that history: were its slices still up to date (a weighted
	# cut can equal the round-robin one), h2 would rightly run nothing.
	find h2/.corral/shard-2-of-3 -mindepth 1 -maxdepth 1 ! -name history.jsonl ! -name '.*' -exec rm -rf {} +
	: > ran
	for k in 1 2 3; do
		run -0 make -C h$k -j2 corral-run CORRAL_SHARD=$k/3 CORRAL_HOST=host$k
	done
	run -0 jq -r .strategy h2/.corral/shard-2-of-3/slices/plan.json
	assert_output weighted
	assert_equal 30 "$(sort -u ran | wc -l)"
	assert_equal 30 "$(wc -l < ran)"
	run -0 make -C m corral-merge-shards CORRAL_SHARDS="$(shards 3)"
	assert_contains "$output" "merged 30 units from 22 agents: 30 passed, 0 failed"
	assert_json '.units == 30 and .merged == 30 and .successes == 30 and .missing == 0 and .duplicates == 0' m/.corral/summary.json
	run -0 jq -r .unit m/.corral/successes.jsonl
	assert_equal "$(cd m && ls t/*.sh)" "$(printf '%s\n' "$output" | sort)"
	run -0 jq -r .host m/.corral/successes.jsonl
	assert_equal "host1
host2
host3" "$(printf '%s\n' "$output" | sort -u)"
}

@test "merge-shards: by default every .corral/shard-*-of-N under CORRAL_SRC, as a job array on one shared directory leaves them" {
	project p
	for k in 1 2 3; do
		run -0 make -C p corral-run CORRAL_SHARD=$k/3
	done
	run -0 make -C p corral-merge-shards
	assert_json '.units == 12 and .merged == 12 and .missing == 0' p/.corral/summary.json
	assert_equal 12 "$(wc -l < ran)"
	# the merged result's scoreboard, as corral-run prints its own
	assert_contains "$output" "corral scoreboard  $PWD/p/.corral"
	assert_contains "$output" "12 units  ->  12 successes, 0 failures"
}

@test "merge-shards: a shard that holds none of the units (more shards than units) runs nothing, says so, exits 0 and merges as an empty shard" {
	project p 2
	for k in 1 2 3; do
		run -0 make -C p corral-run CORRAL_SHARD=$k/3
	done
	assert_contains "$output" "corral: shard 3/3 holds none of the 2 units: there are more shards than units"
	refute_contains "$output" "no units"
	assert_json '.units == 0' p/.corral/shard-3-of-3/shard.json
	run -0 make -C p corral-merge-shards
	assert_json '.units == 2 and .merged == 2 and .missing == 0' p/.corral/summary.json
	assert_equal 2 "$(wc -l < ran)"
	# a population with no units at all is still an error
	: > p/empty.list
	run -2 make -C p corral-run CORRAL_SHARD=1/3 CORRAL_DISCOVER= CORRAL_UNITS_FILE=empty.list
	assert_contains "$output" "corral: no units: CORRAL_UNITS_FILE"
}

@test "merge-shards: a missing shard is named, its units not-run, exit 2" {
	hosts 3
	run -2 --separate-stderr make -C h1 corral-merge-shards \
		CORRAL_SHARDS="$PWD/h1/.corral/shard-1-of-3 $PWD/h3/.corral/shard-3-of-3"
	assert_contains "$stderr" "corral-merge: shard 2/3 is missing: its 4 units are not-run"
	refute_contains "$stderr" "unit 't/"
	assert_json '.units == 12 and .merged == 8 and .missing == 4' h1/.corral/summary.json
	run -0 jq -r 'select(.status == "not-run") | .note' h1/.corral/failures.jsonl
	assert_equal "NOT-RUN: shard 2/3 is missing" "$(printf '%s\n' "$output" | sort -u)"
	assert_equal 4 "${#lines[@]}"
}

@test "merge-shards: re-merged without shard 2, the page and the trace draw no attempt of shard 2 and count summary.json's attempts, agents and hosts" {
	hosts 3
	run -0 make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 3)"
	run -2 make -C h1 corral-merge-shards \
		CORRAL_SHARDS="$PWD/h1/.corral/shard-1-of-3 $PWD/h3/.corral/shard-3-of-3"
	assert_json '.merged == 8 and .attempts == 8 and .agents == 4' h1/.corral/summary.json
	run -0 --separate-stderr corral-report -H page.html -T trace.json h1/.corral
	run -0 jq -r .unit h2/.corral/shard-2-of-3/successes.jsonl
	assert_equal 4 "${#lines[@]}"
	local u two=("${lines[@]}")
	for u in "${two[@]}"; do
		refute_contains "$(grep -o '<rect class="bar [^>]*>' page.html)" "data-unit=\"$u\""
	done
	assert_equal 8 "$(grep -c '<rect class="bar ' page.html)"
	run -0 --separate-stderr xmllint --html --xpath "string(//p[@class='counts'])" page.html
	assert_contains "$output" "8 attempts"
	assert_contains "$output" "4 agents"
	assert_contains "$output" "2 hosts"
	assert_json '[.traceEvents[] | select(.cat == "unit")] | length == 8' trace.json
	# the title names the shards the result holds
	assert_json '.shards == "1/3 3/3"' h1/.corral/summary.json
	run -0 --separate-stderr xmllint --html --xpath "string(//h1)" page.html
	assert_output "corral run $(jq -r .run h1/.corral/summary.json), shards 1/3 3/3"
	assert_json '[.traceEvents[] | select(.cat == "unit") | .name] - ["'"$(IFS=,; echo "${two[*]}" | sed 's/,/","/g')"'"] | length == 8' trace.json
}

@test "merge-shards: a shard whose run did not finish (a directory, no manifest) is missing, and named so" {
	hosts 2
	rm h2/.corral/shard-2-of-2/shard.json
	run -2 --separate-stderr make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)"
	assert_contains "$stderr" "corral-merge: shard 2/2 is missing ('$PWD/h2/.corral/shard-2-of-2' has no manifest: its run did not finish): its 6 units are not-run"
}

@test "merge-shards: a shard of another population is refused by name, exit 2, nothing written" {
	hosts 2
	project other 13
	make -C other corral-run CORRAL_SHARD=2/2 >/dev/null 2>&1
	run -2 --separate-stderr make -C h1 corral-merge-shards \
		CORRAL_SHARDS="$PWD/h1/.corral/shard-1-of-2 $PWD/other/.corral/shard-2-of-2"
	assert_contains "$stderr" "corral-merge: '$PWD/other/.corral/shard-2-of-2' (shard 2/2) ran another population: 13 units"
	assert_contains "$stderr" "corral-merge: 1 shard directory refused; nothing merged"
	assert_no_file h1/.corral/summary.json
}

@test "merge-shards: a shard of another N is refused by name, exit 2" {
	hosts 3
	make -C h2 corral-run CORRAL_SHARD=2/4 >/dev/null 2>&1
	run -2 --separate-stderr make -C h1 corral-merge-shards \
		CORRAL_SHARDS="$PWD/h1/.corral/shard-1-of-3 $PWD/h2/.corral/shard-2-of-4 $PWD/h3/.corral/shard-3-of-3"
	assert_contains "$stderr" "corral-merge: '$PWD/h2/.corral/shard-2-of-4' is shard 2/4, not one of 3 shards like '$PWD/h1/.corral/shard-1-of-3'"
	assert_no_file h1/.corral/summary.json
}

@test "merge-shards: a shard cut by another plan (another CORRAL_HISTORY) is refused by name, exit 2" {
	hosts 2
	printf '{"agent_id":"0","unit":"t/u01.sh","ok":true,"note":"PASS: x","at":"2026-01-01T00:00:00Z","duration_ms":900}\n' > hist.jsonl
	make -C h2 corral-run CORRAL_SHARD=2/2 CORRAL_HISTORY=$PWD/hist.jsonl >/dev/null 2>&1
	run -2 --separate-stderr make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)"
	assert_contains "$stderr" "corral-merge: '$PWD/h2/.corral/shard-2-of-2' (shard 2/2) was cut by another plan"
	assert_contains "$stderr" "give every host the same CORRAL_HISTORY"
	run -0 make -C h1 corral-run CORRAL_SHARD=1/2 CORRAL_HISTORY=$PWD/hist.jsonl
	run -0 make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)" CORRAL_HISTORY=$PWD/hist.jsonl
	assert_json '.units == 12 and .merged == 12' h1/.corral/summary.json
}

@test "merge-shards: two directories for one shard are refused by name, exit 2" {
	hosts 2
	cp -r h2 h2b
	run -2 --separate-stderr make -C h1 corral-merge-shards \
		CORRAL_SHARDS="$(shards 2) $PWD/h2b/.corral/shard-2-of-2"
	assert_contains "$stderr" "corral-merge: '$PWD/h2/.corral/shard-2-of-2' and '$PWD/h2b/.corral/shard-2-of-2' are both shard 2/2"
	assert_no_file h1/.corral/summary.json
}

@test "merge-shards: a failed unit of one shard fails the merge, and re-runs of a shard are merged as its layers" {
	project h1
	echo 'exit 1' > h1/t/u05.sh
	cp -r h1 h2
	make -C h1 corral-run CORRAL_SHARD=1/2 >/dev/null 2>&1 || true
	make -C h2 corral-run CORRAL_SHARD=2/2 >/dev/null 2>&1 || true
	run -2 make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)"
	assert_json '.successes == 11 and .failures == 1 and .missing == 0' h1/.corral/summary.json
	(cd h1 && ls t/*.sh) > pop
	run -1 corral-merge -S -q -u pop -o out $(shards 2)
	for k in 1 2; do echo 'exit 0' > h$k/t/u05.sh; done
	make -C h1 corral-rerun-failed CORRAL_SHARD=1/2 >/dev/null 2>&1
	make -C h2 corral-rerun-failed CORRAL_SHARD=2/2 >/dev/null 2>&1
	run -0 make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)"
	assert_json '.successes == 12 and .failures == 0' h1/.corral/summary.json
}

@test "merge-shards: a log changed after its seal on a shard host is refused, its units not run" {
	hosts 2
	log=$(ls h2/.corral/shard-2-of-2/logs/agent-*.jsonl | head -1)
	sed -i 's/"ok":true/"ok":false/' "$log"
	run -2 --separate-stderr make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)"
	assert_contains "$stderr" "seal"
	assert_json '.missing > 0' h1/.corral/summary.json
}

@test "merge-shards: JUnit from a merged result names each shard's host" {
	hosts 3
	run -0 make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 3)" CORRAL_JUNIT=$PWD/junit.xml
	run -0 xmllint --xpath 'count(//testsuite)' junit.xml
	assert_output 3
	run -0 xmllint --xpath 'string(//testsuite[@hostname="host2"]/@tests)' junit.xml
	assert_output 4
	run -0 xmllint --xpath 'count(//testcase)' junit.xml
	assert_output 12
}

@test "merge-shards: no shard directory at all is one line, exit 2" {
	project p
	run -2 --separate-stderr make -C p corral-merge-shards
	assert_contains "$stderr" "corral: no shard directories to merge"
}

@test "merge-shards: corral-merge -S does it by hand, and refuses -S without -o and -u" {
	hosts 2
	(cd h1 && ls t/*.sh) > pop
	run -0 corral-merge -S -u pop -o out $(shards 2)
	assert_output "merged 12 units from 4 agents: 12 passed, 0 failed"
	run -2 --separate-stderr corral-merge -S -u pop $(shards 2)
	assert_contains "$stderr" "usage: corral-merge"
	run -2 --separate-stderr corral-merge -u pop -H pop -o out $(shards 2)
	assert_contains "$stderr" "usage: corral-merge"
	run -2 --separate-stderr corral-merge -S -u pop -o out2 "$PWD/pop"
	assert_contains "$stderr" "corral-merge: '$PWD/pop' is not a shard directory"
}

@test "merge-shards: a merge job's .corral that holds only the shards' directories, unpacked from their artifacts, is corral's" {
	hosts 2
	project m
	mkdir -p m/.corral
	cp -r h1/.corral/shard-1-of-2 h2/.corral/shard-2-of-2 m/.corral/
	run -0 make -C m corral-merge-shards
	assert_json '.units == 12 and .merged == 12' m/.corral/summary.json
	mkdir m/.corral/somebody-elses
	rm m/.corral/.corral-out
	run -2 --separate-stderr make -C m corral-merge-shards
	assert_contains "$stderr" "exists and was not made by corral"
}

@test "merge-shards: a stale genuine passing log of shard 2 in shard 3's directory does not replace shard 2's failing one: refused by name, exit 2" {
	project h1
	cp -r h1 h2
	cp -r h1 h3
	make -C h2 corral-run CORRAL_SHARD=2/3 >/dev/null 2>&1
	mkdir stale && cp h2/.corral/shard-2-of-3/logs/agent-*.jsonl stale/
	# shard 2 runs again, and one of its units now fails
	u=$(jq -r .unit h2/.corral/shard-2-of-3/successes.jsonl | head -1)
	echo 'exit 1' > "h2/$u"
	make -C h2 corral-run CORRAL_SHARD=2/3 >/dev/null 2>&1 || true
	make -C h1 corral-run CORRAL_SHARD=1/3 >/dev/null 2>&1
	make -C h3 corral-run CORRAL_SHARD=3/3 >/dev/null 2>&1
	cp stale/agent-*.jsonl h3/.corral/shard-3-of-3/logs/
	stray=$(ls h3/.corral/shard-3-of-3/logs/agent-*.s2.jsonl | head -1)
	run -2 --separate-stderr make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 3)"
	assert_contains "$stderr" "corral-merge: '$PWD/$stray' (shard 3/3) is not a log its manifest (shard.json) vouches for; refused"
	run -0 jq -r 'select(.unit == "'"$u"'") | .status' h1/.corral/failures.jsonl
	assert_output fail
	assert_json '.failures == 1 and .successes == 11' h1/.corral/summary.json
}

@test "merge-shards: a log of another run copied into a shard's directory after its manifest was written is refused by name, exit 2" {
	hosts 2
	cp -r h2 h2run
	echo 'exit 1' > h2run/t/u01.sh
	make -C h2run corral-run CORRAL_SHARD=2/2 -B >/dev/null 2>&1 || true
	# the other run's logs land in the shard's re-run layer, which its manifest never saw
	mkdir -p h2/.corral/shard-2-of-2/rerun/1/logs
	cp h2run/.corral/shard-2-of-2/logs/agent-*.jsonl h2/.corral/shard-2-of-2/rerun/1/logs/
	log=$(ls h2/.corral/shard-2-of-2/rerun/1/logs/agent-*.jsonl | head -1)
	run -2 --separate-stderr make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)"
	assert_contains "$stderr" "corral-merge: '$PWD/$log' (shard 2/2) is not a log its manifest (shard.json) vouches for; refused"
	assert_json '.successes == 12 and .failures == 0' h1/.corral/summary.json
	# the same log put in place of one the manifest names is not the one it vouches for
	rm -r h2/.corral/shard-2-of-2/rerun
	for f in h2run/.corral/shard-2-of-2/logs/agent-*.jsonl; do cp "$f" h2/.corral/shard-2-of-2/logs/; done
	run -2 --separate-stderr make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)"
	assert_contains "$stderr" "(shard 2/2) is not the log its manifest vouches for (its seal differs); refused"
	assert_json '.successes == 6 and .missing == 6' h1/.corral/summary.json
}

@test "merge-shards: a shard re-running while the merge reads it: the manifest decides, its new logs and checkpoints are refused by name" {
	hosts 2
	d=h2/.corral/shard-2-of-2
	# what a merge on a shared file system sees mid-way through shard 2's
	# next run: the manifest it read, a new layer's log, a checkpoint
	cp -r h2 h2next
	make -C h2next corral-rerun-failed CORRAL_SHARD=2/2 CORRAL_ONLY='t/u0*' >/dev/null 2>&1 || true
	make -C h2next corral-run CORRAL_SHARD=2/2 CORRAL_ONLY='t/u*' >/dev/null 2>&1 || true
	mkdir -p $d/rerun/1/logs
	cp h2next/.corral/shard-2-of-2/rerun/1/logs/agent-*.jsonl $d/rerun/1/logs/
	log=$(ls $d/rerun/1/logs/agent-*.jsonl | head -1)
	printf '{"agent_id":"9.s2","unit":"t/u01.sh","ok":false}\n' > $d/logs/agent-9.s2.jsonl.part
	run -2 --separate-stderr make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)"
	assert_contains "$stderr" "corral-merge: '$PWD/$log' (shard 2/2) is not a log its manifest (shard.json) vouches for; refused"
	assert_contains "$stderr" "corral-merge: '$PWD/$d/logs/agent-9.s2.jsonl.part' (shard 2/2) is not a log its manifest (shard.json) vouches for; refused"
	refute_contains "$stderr" "did not finish"
	assert_json '.successes == 12 and .missing == 0' h1/.corral/summary.json
}

@test "merge-shards: with shard 2 absent, its logs lying in shard 3's directory are refused, and its units are not-run, never passes" {
	hosts 3
	cp h2/.corral/shard-2-of-3/logs/agent-*.jsonl h3/.corral/shard-3-of-3/logs/
	run -2 --separate-stderr make -C h1 corral-merge-shards \
		CORRAL_SHARDS="$PWD/h1/.corral/shard-1-of-3 $PWD/h3/.corral/shard-3-of-3"
	assert_contains "$stderr" "corral-merge: shard 2/3 is missing: its 4 units are not-run"
	assert_contains "$stderr" "(shard 3/3) is not a log its manifest (shard.json) vouches for; refused"
	assert_json '.successes == 8 and .missing == 4' h1/.corral/summary.json
}

@test "merge-shards: a manifest made to vouch for another shard's log (seal and all) is refused: a unit of shard 2 is not shard 3's" {
	hosts 3
	d3=h3/.corral/shard-3-of-3
	log=$(ls h2/.corral/shard-2-of-3/logs/agent-*.jsonl | head -1)
	cp "$log" $d3/logs/
	(cd $d3 && corral-shard -k 3 -n 3 -m shard.json -r "$(jq -r .run shard.json)" -s host3 population >/dev/null)
	run -0 jq -r '.logs[].log' $d3/shard.json
	assert_contains "$output" "logs/$(basename "$log")"
	run -2 --separate-stderr make -C h1 corral-merge-shards \
		CORRAL_SHARDS="$PWD/h1/.corral/shard-1-of-3 $PWD/$d3"
	assert_contains "$stderr" "corral-merge: '$PWD/$d3/logs/$(basename "$log")' (shard 3/3) line 1: unit '"
	assert_contains "$stderr" "is shard 2/3's, not this shard's; refused"
	assert_json '.successes == 8 and .missing == 4' h1/.corral/summary.json
}

# reseal LOG: LOG's record lines with a seal recomputed over them, as an
# attacker who rewrites a shard's artifact would
reseal() {
	grep -v '^{"corral_seal"' "$1" > "$1.rec" || true
	printf '{"corral_seal":{"records":%d,"sha256":"%s"}}\n' "$(wc -l < "$1.rec")" \
		"$(sha256sum < "$1.rec" | cut -d' ' -f1)" | cat "$1.rec" - > "$1"
	rm "$1.rec"
}

@test "merge-shards: a shard artifact whose record names a file outside the run as its output (seal and manifest recomputed) never has it read into the JUnit file or the page" {
	project h1
	echo 'echo own-output; exit 1' > h1/t/u05.sh
	cp -r h1 h2
	make -C h1 corral-run CORRAL_SHARD=1/2 >/dev/null 2>&1 || true
	make -C h2 corral-run CORRAL_SHARD=2/2 >/dev/null 2>&1 || true
	# the output its own agent wrote is read, from the merge's copy of it
	run -2 make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)" CORRAL_JUNIT=$PWD/junit.xml
	run -0 grep -c own-output junit.xml
	echo MARKER-OUTSIDE > "$PWD/secret"
	for k in 1 2; do
		d=h$k/.corral/shard-$k-of-2
		for log in $d/logs/agent-*.jsonl; do
			jq -c 'if .corral_seal then empty elif .ok then . else .output = "'"$PWD"'/secret" end' "$log" > "$log.new"
			mv "$log.new" "$log"
			reseal "$log"
		done
		(cd $d && corral-shard -k $k -n 2 -m shard.json -r "$(jq -r .run shard.json)" population >/dev/null)
	done
	run -0 grep -l "$PWD/secret" h1/.corral/shard-1-of-2/logs/*.jsonl h2/.corral/shard-2-of-2/logs/*.jsonl
	run -2 make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)" CORRAL_JUNIT=$PWD/junit.xml CORRAL_HTML=$PWD/page.html
	assert_json '.failures == 1' h1/.corral/summary.json
	run -0 grep -c "$PWD/secret" h1/.corral/failures.jsonl
	[ -s junit.xml ] && [ -s page.html ]
	run ! grep -l MARKER-OUTSIDE junit.xml page.html
	run -0 corral-report -t h1/.corral
	refute_contains "$output" MARKER-OUTSIDE
}

@test "merge-shards: a shard re-run incrementally holds logs of two runs, and its manifest vouches for both: the merge takes them, exit 0" {
	hosts 2
	d=h2/.corral/shard-2-of-2
	u=$(jq -r .unit $d/successes.jsonl | head -1)
	echo 'exit 0 # changed' > "h2/$u"
	run -0 make -C h2 corral-run CORRAL_SHARD=2/2
	run -0 jq '[.logs[].runs[]] | unique | length' $d/shard.json
	assert_output 2
	run -0 make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)"
	assert_json '.successes == 12 and .missing == 0' h1/.corral/summary.json
}

@test "merge-shards: a shard killed mid-way and resumed (a requeued job) holds a log of two runs; the merge takes it, exit 0" {
	project h1
	cp -r h1 h2
	make -C h1 corral-run CORRAL_SHARD=1/2 >/dev/null 2>&1
	: > ran
	kill='printf "%s\n" "$$CORRAL_UNIT" >> "'$PWD'/ran"; [ "$$(wc -l < "'$PWD'/ran")" -ne 2 ] || kill -9 $$PPID; sh "$$CORRAL_UNIT"'
	run -2 make -C h2 corral-run CORRAL_SHARD=2/2 CORRAL_AGENTS=1 CORRAL_CMD="$kill"
	d=h2/.corral/shard-2-of-2
	[ -e $d/logs/agent-0.s2.jsonl.part ]
	# merged now, the killed shard is unfinished: its checkpoint is not vouched for
	run -2 --separate-stderr make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)"
	assert_contains "$stderr" "agent-0.s2.jsonl.part' (shard 2/2) is not a log its manifest (shard.json) vouches for; refused"
	run -0 make -C h2 corral-run CORRAL_SHARD=2/2 CORRAL_AGENTS=1 CORRAL_CMD="$kill"
	assert_contains "$output" "resuming after"
	run -0 jq '.logs[0].runs | length' $d/shard.json
	assert_output 2
	run -0 make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)"
	assert_json '.successes == 12 and .missing == 0' h1/.corral/summary.json
}

# launched: hosts h1 and h2 of one project, shard K of 2 run on hK under
# a launcher that, for the slice holding t/u02.sh, starts nothing: it says
# what srun says when it refuses a step, and exits 1.  note: the path of
# the note that slice's launcher left, from $PWD.
launched() {
	cat > refuse <<'EOS'
#!/bin/sh
eval "slice=\${$#}"
while [ "$#" -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done
if grep -qxF t/u02.sh "$slice"; then
	echo 'srun: error: Unable to create step for job 7: Requested node configuration is not available' >&2
	exit 1
fi
exec "$@"
EOS
	chmod +x refuse
	project h1
	cp -r h1 h2
	for k in 1 2; do
		make -C h$k corral-run CORRAL_SHARD=$k/2 CORRAL_HOST=host$k \
			CORRAL_LAUNCH="$PWD/refuse" >/dev/null 2>&1 || true
	done
	note=$(ls h*/.corral/shard-*-of-2/logs/agent-*.launch)
	[ "$(printf '%s\n' "$note" | wc -l)" -eq 1 ] || flunk "not one note: $note"
	shard=${note#h}
	shard=${shard%%/*}
}

# u02note: the note of t/u02.sh's not-run record in h1's merged result
u02note() {
	jq -r 'select(.unit == "t/u02.sh") | "\(.status) \(.note)"' h1/.corral/failures.jsonl
}

@test "merge-shards: a shard whose launcher failed for a slice: the merge carries the launcher's note, and that unit's not-run record quotes it" {
	launched
	run -2 --separate-stderr make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)"
	refute_contains "$stderr" "refused"
	run -0 u02note
	assert_output "not-run NOT-RUN: launcher: srun: error: Unable to create step for job 7: Requested node configuration is not available"
	n=$(($(wc -l < "$note") - 1))
	assert_json ".units == 12 and .successes == 12 - $n and .missing == $n" h1/.corral/summary.json
	run -0 jq -r '.notes[] | "\(.path) \(.sha256)"' h$shard/.corral/shard-$shard-of-2/shard.json
	assert_output "logs/${note##*/} $(sha256sum < "$note" | cut -d' ' -f1)"
}

@test "merge-shards: a launcher's note changed after its shard's manifest was written is refused by name, and its units are bare not-run" {
	launched
	printf 'srun: error: it was fine, really\n' > "$note.new"
	tail -n +2 "$note" >> "$note.new"
	mv "$note.new" "$note"
	run -2 --separate-stderr make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)"
	assert_contains "$stderr" "corral-merge: '$PWD/$note' (shard $shard/2) is not the note its manifest vouches for (its digest differs); refused"
	run -0 u02note
	refute_contains "$output" "srun"
	assert_contains "$output" "not-run "
}

@test "merge-shards: a launcher's note planted in a shard's directory after its manifest was written is refused by name" {
	hosts 2
	d=h2/.corral/shard-2-of-2
	u=$(jq -r .unit $d/successes.jsonl | head -1)
	printf 'srun: error: planted\n%s\n' "$u" > $d/logs/agent-9.s2.launch
	run -2 --separate-stderr make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)"
	assert_contains "$stderr" "corral-merge: '$PWD/$d/logs/agent-9.s2.launch' (shard 2/2) is not a note its manifest (shard.json) vouches for; refused"
	refute_contains "$(cat h1/.corral/failures.jsonl)" "planted"
	assert_json '.successes == 12 and .missing == 0' h1/.corral/summary.json
}

@test "merge-shards: a launcher's note that is a link (to its own bytes) is refused by name" {
	launched
	mv "$note" real.launch
	ln -s "$PWD/real.launch" "$note"
	run -2 --separate-stderr make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)"
	assert_contains "$stderr" "corral-merge: '$PWD/$note' (shard $shard/2) cannot be opened (a link, or not readable); refused"
	run -0 u02note
	refute_contains "$output" "srun"
}

@test "merge-shards: a launcher's note naming another shard's unit (manifest recomputed) is refused by name" {
	launched
	other=$((3 - shard))
	u=$(jq -r .unit h$other/.corral/shard-$other-of-2/successes.jsonl | head -1)
	printf '%s\n' "$u" >> "$note"
	d=h$shard/.corral/shard-$shard-of-2
	(cd $d && corral-shard -k $shard -n 2 -m shard.json -r "$(jq -r .run shard.json)" -s host$shard population >/dev/null)
	run -2 --separate-stderr make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)"
	assert_contains "$stderr" "corral-merge: '$PWD/$note' (shard $shard/2) line $(wc -l < "$note"): unit '$u' is shard $other/2's, not this shard's; refused"
	run -0 jq -r 'select(.unit == "'"$u"'") | .status' h1/.corral/successes.jsonl
	assert_output pass
}

@test "merge-shards: a manifest whose note path leaves the shard's logs/ is no shard directory, named, exit 2" {
	hosts 2
	d=h2/.corral/shard-2-of-2
	jq -c '.notes = [{"path": "logs/agent-1/../../../../secret.launch", "sha256": ("a" * 64)}]' $d/shard.json > $d/shard.json.new
	mv $d/shard.json.new $d/shard.json
	run -2 --separate-stderr make -C h1 corral-merge-shards CORRAL_SHARDS="$(shards 2)"
	assert_contains "$stderr" "corral-merge: '$PWD/$d' is not a shard directory: '$PWD/$d/shard.json': \"logs/agent-1/../../../../secret.launch\" is not logs/agent-ID.launch or rerun/N/logs/agent-ID.launch"
}
