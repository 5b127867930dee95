#!/usr/bin/env bats
# plan.bats -- corral-plan writes one brief per agent (agent_id, units,
# clone_parts, log_path, task), cut exactly as corral-split cuts, with
# disjoint units and unique logs; the original's plan_prompts tests and
# the unhappy paths.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
}

USAGE='usage: corral-plan [-0h] [-C DIR] [-H HISTORY] [-l LOGDIR] [-p PART] [-P PARTS_CMD] [-s STRATEGY] [-t TEMPLATE] -n N [FILE]
       corral-plan -c [-0] [-C DIR] [-H HISTORY] [-p PART] [-P PARTS_CMD] [FILE]
       corral-plan -c [-0] [-C DIR] [-H HISTORY] [-p PART] [-P PARTS_CMD] -o DIR'

# units N: u0 .. u(N-1), one per line, in the file units
units() {
	seq -f 'u%g' 0 $(($1 - 1)) > units
}

@test "plan: -h prints usage to stdout and exits 0" {
	assert_help "$USAGE" corral-plan -h
}

@test "plan: no -n, two files or an unknown option print usage to stderr and exit 2" {
	units 3
	assert_usage_error "$USAGE" corral-plan units
	assert_usage_error "$USAGE" corral-plan -n 2 units units
	run -2 --separate-stderr corral-plan -x -n 2 units
	assert_contains "$stderr" "$USAGE"
}

@test "plan: a bad -n or an empty -l is refused with exit 2" {
	units 3
	run -2 --separate-stderr corral-plan -n x units
	assert_contains "$stderr" "corral-plan: -n"
	run -2 --separate-stderr corral-plan -n 2 -l '' units
	assert_stderr "corral-plan: -l: the value is empty"
}

@test "plan: one brief per slice, each with exactly the five keys" {
	units 10
	run -0 --separate-stderr corral-plan -n 4 units
	assert_json 'length == 4'
	assert_json 'all(.[]; keys == ["agent_id", "clone_parts", "log_path", "task", "units"])'
	assert_json 'map(.agent_id) == ["0", "1", "2", "3"]'
}

@test "plan: the slices are corral-split's, unit for unit and in order" {
	units 23
	run -0 corral-split -n 5 units
	local split=$output
	run -0 --separate-stderr corral-plan -n 5 units
	assert_json_eq "$(jq -c '[.[]]' <<<"$split")" "$(jq -c 'map(.units)' <<<"$output")"
}

@test "plan: -s and -H cut the briefs as corral-split cuts with the same strategy and history" {
	local u ms strategy
	units 12
	for u in $(seq 0 11); do
		ms=$(( (u * 37) % 11 * 100 ))
		printf '{"agent_id":"0","unit":"u%s","ok":true,"note":"PASS: exit 0","at":"2026-01-01T00:00:00.000Z","status":"pass","exit":0,"signal":null,"duration_ms":%s,"attempt":1,"run":"r"}\n' "$u" "$ms"
	done > history.jsonl
	for strategy in weighted auto roundrobin; do
		run -0 --separate-stderr corral-split -s "$strategy" -H history.jsonl -n 3 units
		local split=$output
		run -0 --separate-stderr corral-plan -s "$strategy" -H history.jsonl -n 3 units
		assert_json_eq "$(jq -c '[.[]]' <<<"$split")" "$(jq -c 'map(.units)' <<<"$output")"
	done
	# the weighted briefs are not the round-robin ones: the test tells them apart
	run -0 corral-plan -s weighted -H history.jsonl -n 3 units
	assert_json '.[0].units[0] != "u0"'
}

@test "plan: an unknown -s is refused with exit 2 naming the strategies; -s is refused with -c" {
	units 3
	run -2 --separate-stderr corral-plan -s fastest -n 2 units
	assert_stderr "corral-plan: -s 'fastest' is not a strategy (roundrobin, weighted or auto)"
	assert_usage_error "$USAGE" corral-plan -c -s weighted units
}

@test "plan: units are disjoint and complete, and no slice is empty" {
	units 20
	run -0 --separate-stderr corral-plan -n 6 units
	assert_json '[.[].units[]] | (length == 20 and (unique | length) == 20)'
	assert_json '[.[].units[]] | sort == ([range(20)] | map("u\(.)") | sort)'
	assert_json 'all(.[]; .units | length > 0)'
	units 2
	run -0 --separate-stderr corral-plan -n 10 units
	assert_json 'length == 2'
}

@test "plan: log paths are LOGDIR/agent-K.jsonl and unique" {
	units 20
	run -0 --separate-stderr corral-plan -n 6 -l /L units
	assert_json '.[0].log_path == "/L/agent-0.jsonl" and .[2].log_path == "/L/agent-2.jsonl"'
	assert_json 'map(.log_path) | unique | length == 6'
	run -0 --separate-stderr corral-plan -n 2 -l 'out/logs//' units
	assert_json '.[1].log_path == "out/logs/agent-1.jsonl"'
	run -0 --separate-stderr corral-plan -n 1 units
	assert_json '.[0].log_path == "logs/agent-0.jsonl"'
}

@test "plan: clone_parts is the sorted union of -p and each unit's -P parts, each once" {
	units 9
	run -0 --separate-stderr corral-plan -n 1 -p shared -p shared \
		-P 'echo "part-$(( ${CORRAL_UNIT#u} % 3 ))"; echo shared' units
	assert_json '.[0].clone_parts == ["part-0", "part-1", "part-2", "shared"]'
	units 8
	run -0 --separate-stderr corral-plan -n 4 -p shared/config -P 'echo "src/$CORRAL_UNIT"' units
	assert_json 'all(.[]; .clone_parts == ((["shared/config"] + (.units | map("src/" + .))) | sort))'
}

@test "plan: a CRLF units file and CRLF parts output end their lines as LF does; another CR stays in the name" {
	printf 'u1\r\nu2\r\n' > units
	run -0 --separate-stderr corral-plan -n 1 -P 'printf "src/%s\r\n" "$CORRAL_UNIT"; printf "odd\rname\n"' units
	assert_json '.[0].units == ["u1", "u2"] and .[0].clone_parts == ["odd\rname", "src/u1", "src/u2"]'
}

@test "plan: the task fills {agent} {units} {parts} {log} {n} and keeps every other brace" {
	units 4
	run -0 --separate-stderr corral-plan -n 2 -l /L -p p -t 'test {n} units into {log}' units
	assert_json '.[0].task == "test 2 units into /L/agent-0.jsonl"'
	run -0 --separate-stderr corral-plan -n 2 -l /L -p b -p a \
		-t '{agent}|{units}|{parts}|{log}|{n}|{unit}|{"x":1}|{' units
	assert_json '.[1].task == "1|u1 u3|a b|/L/agent-1.jsonl|2|{unit}|{\"x\":1}|{"'
}

@test "plan: the default task names the agent, its parts, its units and its log" {
	units 4
	run -0 --separate-stderr corral-plan -n 2 -p lib units
	assert_json '.[1].task | contains("agent 1") and contains("lib") and contains("u1 u3") and contains("2 units") and contains("logs/agent-1.jsonl")'
}

@test "plan: an empty population gives [] and exit 0" {
	: > units
	run -0 --separate-stderr corral-plan -n 4 units
	assert_output "[]"
	run -0 --separate-stderr corral-plan -n 4 < /dev/null
	assert_output "[]"
}

@test "plan: units with quotes, backslashes, tabs, spaces and UTF-8 come back byte for byte (-0)" {
	printf 'a "quoted" unit\0back\\slash\0tab\there\0caf\303\251\0new\nline\0' > units
	run -0 --separate-stderr corral-plan -0 -n 2 units
	assert_json_eq "$(jq -Rsc 'split("\u0000") | map(select(length > 0)) | sort' units)" \
		"$(jq -c '[.[].units[]] | sort' <<<"$output")"
	assert_json 'length == 2 and (.[0].units | length) == 3'
}

@test "plan: a unit listed twice is one unit, and a warning names it" {
	printf 'a\nb\na\n' > units
	run -0 --separate-stderr corral-plan -n 2 units
	assert_stderr "corral-plan: unit 'a' is listed more than once; counted once"
	assert_json '[.[].units[]] == ["a", "b"]'
}

@test "plan: the parts command sees CORRAL_UNIT; when it fails, exit 2 naming the unit" {
	units 3
	run -2 --separate-stderr corral-plan -n 2 -P 'test "$CORRAL_UNIT" != u2' units
	assert_output ""
	assert_stderr "corral-plan: the parts command failed for unit 'u2' (exit 1)"
}

@test "plan: -c prints the parts of all the units as one slice; -C counts a unit that names an entry of DIR and runs the parts command there" {
	mkdir -p tree/sub && touch tree/u1 && ln -s /nowhere tree/u2
	export HERE=$PWD
	units 4
	run -0 --separate-stderr corral-plan -c -p shared -p shared -P 'pwd > "$HERE/where"; echo "x/$CORRAL_UNIT"' units
	assert_output "$(printf '%s\n' shared x/u0 x/u1 x/u2 x/u3)"
	assert_equal "$PWD" "$(cat where)"
	run -0 --separate-stderr corral-plan -c -C tree -p .. -P 'pwd > "$HERE/where"; [ "$CORRAL_UNIT" != u3 ] || echo sub' units
	assert_output "$(printf '%s\n' .. sub u1 u2)"
	assert_equal "$PWD/tree" "$(cat where)"
	run -0 --separate-stderr corral-plan -n 1 -C tree units
	assert_json '.[0].clone_parts == ["u1", "u2"]'
	run -0 --separate-stderr corral-plan -c units
	assert_output ""
	assert_usage_error "$USAGE" corral-plan -c -n 2 units
	run -2 --separate-stderr corral-plan -c -P false units
	assert_stderr "corral-plan: the parts command failed for unit 'u0' (exit 1)"
}

@test "plan: -c -o writes every slice's parts in one process, as -c prints them for the slice, and rewrites only what changed" {
	mkdir -p tree/t out
	touch tree/t/a tree/t/b tree/t/c tree/lib
	printf '%s\n' t/a t/c > out/0.units
	printf '%s\n' t/b not-a-file > out/1.units
	run -0 corral-plan -c -C tree -p lib -P 'echo "x/$CORRAL_UNIT"' -o out
	for k in 0 1; do
		run -0 corral-plan -c -C tree -p lib -P 'echo "x/$CORRAL_UNIT"' out/$k.units
		assert_equal "$output" "$(cat out/$k.parts)"
	done
	assert_equal "$(printf '%s\n' lib t/a t/c x/t/a x/t/c)" "$(cat out/0.parts)"
	touch -d 2001-01-01 out/0.parts out/1.parts
	echo t/a > out/1.units
	run -0 corral-plan -c -C tree -p lib -P 'echo "x/$CORRAL_UNIT"' -o out
	run -0 stat -c %Y out/0.parts
	assert_output "$(date -d 2001-01-01 +%s)"
	[ "$(stat -c %Y out/1.parts)" -gt "$(date -d 2001-01-01 +%s)" ]
	assert_usage_error "$USAGE" corral-plan -c -o out units
	run -2 --separate-stderr corral-plan -c -C tree -P 'exit 3' -o out
	assert_contains "$stderr" "the parts command failed"
}

@test "plan: a part that is absolute or leaves the tree is refused with exit 2" {
	units 2
	run -2 --separate-stderr corral-plan -n 1 -p /etc units
	assert_stderr "corral-plan: part '/etc' is absolute"
	run -2 --separate-stderr corral-plan -n 1 -p 'a/../../x' units
	assert_stderr "corral-plan: part 'a/../../x' leaves the tree"
	run -2 --separate-stderr corral-plan -n 1 -P 'echo ..' units
	assert_stderr "corral-plan: part '..' leaves the tree"
	run -0 --separate-stderr corral-plan -n 1 -p 'a/../b' units
}

@test "plan: an unreadable FILE is named with cannot open and exits 2" {
	run -2 --separate-stderr corral-plan -n 2 nothere
	assert_output ""
	assert_stderr "corral-plan: cannot open 'nothere': No such file or directory"
}

@test "plan: a write error on standard output exits 2" {
	units 3
	run -2 --separate-stderr sh -c 'corral-plan -n 2 units > /dev/full'
	assert_stderr "corral-plan: cannot write standard output: No space left on device"
}

@test "plan: the briefs are enough: agents run from them alone and one merge folds every log" {
	mkdir -p src/lib
	echo 'ok=1' > src/lib/env
	units 7
	run -0 --separate-stderr corral-plan -n 3 -l "$PWD/logs" -p lib units
	printf '%s\n' "$output" > briefs.json
	local k
	for k in 0 1 2; do
		jq -r ".[$k].units[]" briefs.json > "units.$k"
		jq -r ".[$k].clone_parts[]" briefs.json > "parts.$k"
		run -0 corral-run-slice -C src -P "parts.$k" -w "$PWD" \
			-c '. ./lib/env && test "$ok" = 1' \
			-l "$(dirname "$(jq -r ".[$k].log_path" briefs.json)")" \
			"$(jq -r ".[$k].agent_id" briefs.json)" "units.$k"
	done
	run -0 --separate-stderr corral-merge -u units -o . logs
	assert_output "merged 7 units from 3 agents: 7 passed, 0 failed"
}
