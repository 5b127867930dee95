#!/usr/bin/env bats
# trace.bats -- corral-report -T and CORRAL_TRACE: a run's timeline in the
# Chrome Trace Event Format, from the merged results alone, checked by jq
# (and CORRAL_HTML beside it; the page itself is html.bats's).
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
}

# A unit that fails on its first attempt and passes on its second.
FLAKY='case $CORRAL_UNIT in
	bad) exit 1 ;;
	flaky) [ "$CORRAL_ATTEMPT" -gt 1 ] || exit 3 ;;
	esac; sleep 0.05'

# run2 UNITS-OF-AGENT-0 -- UNITS-OF-AGENT-1: two agents (one retry each),
# merged into out/, traced to trace.json
run2() {
	local a=() b=() side=a u
	for u in "$@"; do
		if [ "$u" = -- ]; then side=b; continue; fi
		if [ $side = a ]; then a+=("$u"); else b+=("$u"); fi
	done
	printf '%s\n' "${a[@]}" > s0
	printf '%s\n' "${b[@]}" > s1
	corral-run-slice -R 1 -c "$FLAKY" -l out/logs 0 s0 || true
	corral-run-slice -R 1 -c "$FLAKY" -l out/logs 1 s1 || true
	corral-merge -q -o out out/logs || true
	run -0 --separate-stderr corral-report -T trace.json out
	assert_output ""
	assert_stderr ""
}

@test "trace: one complete event per attempt of every unit, named the unit, with status, exit and attempt" {
	run2 ok bad -- flaky
	assert_json '[.traceEvents[] | select(.ph == "X" and .cat == "unit")] | length == 5' trace.json
	assert_json '[.traceEvents[] | select(.cat == "unit") | [.name, .args.attempt, .args.status, .args.exit]] | sort ==
		[["bad",1,"fail",1],["bad",2,"fail",1],["flaky",1,"fail",3],["flaky",2,"flaky",0],["ok",1,"pass",0]]' trace.json
	# the events of a unit's attempts follow one another on its agent
	assert_json '[.traceEvents[] | select(.name == "flaky")] | .[0].ts + .[0].dur <= .[1].ts + 1000' trace.json
	assert_json '[.traceEvents[] | select(.cat == "unit" and .args.exit == 0) | .dur >= 50000] | all' trace.json
}

@test "trace: agents are the threads of their process, each named" {
	run2 a b -- c
	assert_json '[.traceEvents[] | select(.cat == "unit") | [.name, .tid]] | sort == [["a",0],["b",0],["c",1]]' trace.json
	assert_json '[.traceEvents[] | select(.name == "thread_name") | [.tid, .args.name]] == [[0,"agent 0"],[1,"agent 1"]]' trace.json
	assert_json '[.traceEvents[] | select(.cat == "unit") | .pid] | unique == [1]' trace.json
}

@test "trace: no event lies outside the run: none starts before 0, the merge ends last, each agent's checkout comes before its units" {
	run2 a b -- c d
	assert_json '[.traceEvents[] | select(.ph == "X") | .ts >= 0 and .dur >= 0] | all' trace.json
	assert_json '[.traceEvents[] | select(.ph == "X")] | min_by(.ts).ts == 0' trace.json
	assert_json '([.traceEvents[] | select(.ph == "X") | .ts + .dur] | max) as $stop |
		[.traceEvents[] | select(.cat == "merge")] | length == 1 and .[0].ts + .[0].dur == $stop' trace.json
	assert_json '[.traceEvents[] | select(.cat == "checkout")] | length == 2' trace.json
	assert_json '[.traceEvents[] | select(.ph == "X" and .cat != "merge")] | group_by(.tid)[] |
		(map(select(.cat == "checkout")) | .[0].ts + .[0].dur) as $ready |
		map(select(.cat == "unit") | .ts + 1000 >= $ready) | all' trace.json
	# the merge began after the last unit ended
	assert_json '([.traceEvents[] | select(.cat == "unit") | .ts + .dur] | max) as $last |
		[.traceEvents[] | select(.cat == "merge") | .ts + 1000 >= $last] | all' trace.json
}

@test "trace: corral-merge notes when it ended and how long it took in merge.json beside the results, with or without -o" {
	run2 a --
	assert_json '(.at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{3}Z$")) and .duration_ms >= 0' out/merge.json
	rm out/merge.json
	run -0 corral-merge -q out/logs/
	assert_json '.duration_ms >= 0' out/merge.json
	mkdir -p deep/x && cp -r out/logs deep/x/logs
	(cd deep/x && corral-merge -q logs)
	assert_json '.duration_ms >= 0' deep/x/merge.json
}

@test "trace: a run merged by hand from hosts' records has one process per host, the merge one of its own" {
	mkdir out
	cat > out/successes.jsonl <<'EOF2'
{"agent_id":"0","unit":"u1","ok":true,"at":"2026-01-01T00:00:01.500Z","status":"pass","exit":0,"duration_ms":1000,"attempt":1,"host":"h1","checkout":{"at":"2026-01-01T00:00:00.500Z","duration_ms":500}}
{"agent_id":"0","unit":"u2","ok":true,"at":"2026-01-01T00:00:02.500Z","status":"pass","exit":0,"duration_ms":2000,"attempt":1,"host":"h2"}
{"agent_id":"1","unit":"u3","ok":true,"at":"2026-01-01T00:00:03.000Z","status":"pass","exit":0,"duration_ms":500,"attempt":1,"host":"h2"}
EOF2
	run -0 --separate-stderr corral-report -T - out
	assert_stderr ""
	assert_json '[.traceEvents[] | select(.name == "process_name") | [.pid, .args.name]] == [[1,"host h1"],[2,"host h2"],[3,"merge"]]'
	assert_json '[.traceEvents[] | select(.cat == "unit") | [.name, .pid, .tid, .ts, .dur]] ==
		[["u1",1,0,500000,1000000],["u2",2,0,500000,2000000],["u3",2,1,2500000,500000]]'
	assert_json '[.traceEvents[] | select(.cat == "checkout") | [.pid, .tid, .ts, .dur]] == [[1,0,0,500000]]'
	assert_json '[.traceEvents[] | select(.cat == "merge")] == []'
}

@test "trace: unit names with <, &, quotes, newlines and invalid UTF-8 come out as valid JSON, the bad bytes as U+FFFD" {
	mkdir out
	printf '{"agent_id":"0","unit":"a<b>&\\"c\\"'"'"'d\\n\xff\xfe","ok":false,"at":"2026-01-01T00:00:01.000Z","status":"fail","exit":1,"duration_ms":10,"attempt":1}\n' > out/failures.jsonl
	run -0 --separate-stderr corral-report -T trace.json out
	run -0 jq -r '.traceEvents[] | select(.cat == "unit") | .name' trace.json
	assert_output "$(printf 'a<b>&"c"'"'"'d\n\xef\xbf\xbd\xef\xbf\xbd')"
	run -0 iconv -f UTF-8 -t UTF-8 trace.json
}

@test "trace: -T - and -H - share standard output with nothing else, and a write error exits 2" {
	run2 a --
	run -2 --separate-stderr corral-report -t -T - out
	assert_stderr "corral-report: only one of -H -, -j -, -t and -T - may write to standard output"
	run -2 --separate-stderr corral-report -T /dev/full out
	assert_contains "$stderr" "corral-report: "
	run -0 sh -c 'corral-report -T - out >/dev/null'
	run -2 sh -c 'corral-report -T - out >/dev/full'
}

@test "trace: CORRAL_TRACE and CORRAL_HTML write the trace and the page on every merge, and a path with a space stops make naming it" {
	mkdir proj
	printf '%s\n' a b c > proj/units.txt
	cat > proj/Makefile <<EOF2
CORRAL_UNITS_FILE = units.txt
CORRAL_CMD = true
include $CORRAL_ROOT/corral.mk
EOF2
	run -0 make -C proj -j2 corral-run CORRAL_AGENTS=2 CORRAL_TRACE=out/trace.json CORRAL_HTML=out/run.html
	assert_equal 3 "$(grep -c '<rect class="bar pass"' proj/out/run.html)"
	assert_json '[.traceEvents[] | select(.cat == "unit")] | length == 3' proj/out/trace.json
	assert_json '[.traceEvents[] | select(.cat == "unit") | .tid] | unique == [0,1]' proj/out/trace.json
	assert_json '[.traceEvents[] | select(.cat == "merge")] | length == 1' proj/out/trace.json
	run -2 --separate-stderr make -C proj corral-run 'CORRAL_TRACE=a b'
	assert_contains "$stderr" "CORRAL_TRACE is 'a b'"
	run -2 --separate-stderr make -C proj corral-run 'CORRAL_HTML=a b'
	assert_contains "$stderr" "CORRAL_HTML is 'a b'"
}

@test "trace: a re-run's result still shows every attempt: a unit that failed in the run and passed in corral-rerun-failed has both events, and a new whole run after it shows only its own" {
	mkdir proj
	_corral_project a b c <<EOF2
CORRAL_CMD = [ "\$\$CORRAL_UNIT" != b ] || [ -e "$PWD/b.ran" ] || { : > "$PWD/b.ran"; exit 1; }
EOF2
	run -2 make -C proj -j2 corral-run CORRAL_AGENTS=3
	run -0 make -C proj corral-rerun-failed CORRAL_AGENTS=3
	run -0 --separate-stderr corral-report -T trace.json proj/.corral
	assert_stderr ""
	assert_json '[.traceEvents[] | select(.cat == "unit") | [.name, .args.status]] | sort ==
		[["a","pass"],["b","fail"],["b","flaky"],["c","pass"]]' trace.json
	assert_json '[.traceEvents[] | select(.name == "b")] | sort_by(.ts) | .[0].ts + .[0].dur <= .[1].ts' trace.json
	assert_json '[.traceEvents[] | select(.ph == "X") | .ts >= 0] | all' trace.json
	# the page shows both too
	run -0 corral-report -H page.html proj/.corral
	assert_equal 2 "$(grep -c '<title>b\b' page.html)"
	# the runs before a whole run are not its attempts
	run -0 make -C proj corral-run CORRAL_AGENTS=3 CORRAL_CMD=true
	run -0 corral-report -T trace2.json proj/.corral
	assert_json '[.traceEvents[] | select(.cat == "unit")] | length == 3' trace2.json
}
