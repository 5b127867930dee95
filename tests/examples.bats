#!/usr/bin/env bats
# examples.bats -- every project under examples/ runs as its README says.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
}

@test "examples: textkit through corral.mk gives 12 units, 10 passed, the 2 planted failures failed" {
	run -2 make -C "$CORRAL_ROOT/examples/textkit" -j4 corral-run \
		CORRAL_OUT="$PWD/out" CORRAL_BIN="$CORRAL_TEST_BIN"
	assert_json '[.units, .successes, .failures, .missing, .duplicates, .agents] == [12, 10, 2, 0, 0, 12]' out/summary.json
	# in the order of the slices, which a first run starts largest file first
	run -0 sh -c 'jq -r .unit out/failures.jsonl | LC_ALL=C sort'
	assert_output "$(printf 'tests/slug-squeeze.sh\ntests/titlecase.sh')"
}

@test "examples: the textkit run left no clone behind and wrote only under CORRAL_OUT" {
	local before
	before=$(cd "$CORRAL_ROOT/examples/textkit" && find . -path ./.corral -prune -o -print | LC_ALL=C sort | sha256sum)
	run -2 make -C "$CORRAL_ROOT/examples/textkit" -j4 corral-run \
		CORRAL_OUT="$PWD/out" CORRAL_BIN="$CORRAL_TEST_BIN"
	run -0 find out/work -mindepth 1
	assert_output ""
	assert_equal "$before" "$(cd "$CORRAL_ROOT/examples/textkit" && find . -path ./.corral -prune -o -print | LC_ALL=C sort | sha256sum)"
}

@test "examples: by-hand/fanout.sh does the same fan-out with the four programs and xargs -P" {
	run -1 --separate-stderr "$CORRAL_ROOT/examples/by-hand/fanout.sh" \
		"$CORRAL_ROOT/examples/textkit" 4 out
	assert_output "merged 12 units from 4 agents: 10 passed, 2 failed"
	assert_json '.units == 12 and .successes == 10 and .failures == 2 and .missing == 0' out/summary.json
	run -0 ls out/logs
	assert_contains "$output" "agent-3.jsonl"
}

@test "examples: make demo runs the bundled example from scratch and checks its result, printing no line of make's error" {
	run -0 make -C "$CORRAL_ROOT" --no-print-directory demo
	assert_contains "$output" "demo: as expected -- 12 units, 10 passed, 2 failed on purpose, none lost or doubled"
	refute_contains "$output" "***"
}

# --- subagent-fanout ------------------------------------------------------

@test "examples: subagent-fanout starts one process per brief, 8 agents, and one merge folds 24 of 24" {
	_corral_tmpdir
	run -0 --separate-stderr "$CORRAL_ROOT/examples/subagent-fanout/fanout.sh" out
	assert_stderr ""
	assert_equal "merged 24 units from 8 agents: 24 passed, 0 failed" "${lines[8]}"
	run -0 sh -c "sed -n 's/^started agent \([0-9]*\) as process \([0-9]*\)$/\2/p' <<'EOF'
$output
EOF"
	assert_equal 8 "$(printf '%s\n' "$output" | sort -u | wc -l)"
	assert_json '[.units, .merged, .successes, .failures, .missing, .duplicates, .agents] == [24, 24, 24, 0, 0, 0, 8]' out/summary.json
	run -0 ls -A "$TMPDIR"
	assert_output ""
}

@test "examples: subagent-fanout's briefs: pkg-00..pkg-23, src/<unit> and shared/config, unique logs" {
	run -0 --separate-stderr "$CORRAL_ROOT/examples/subagent-fanout/fanout.sh" out
	run -0 jq -c . out/briefs.json
	assert_json 'length == 8'
	assert_json '[.[].units[]] | sort == ([range(24)] | map(if . < 10 then "pkg-0\(.)" else "pkg-\(.)" end))'
	assert_json 'all(.[]; .clone_parts == ((["shared/config"] + (.units | map("src/" + .))) | sort))'
	assert_json 'map(.log_path) | unique | length == 8'
	assert_json '.[5] as $b | $b.task | contains("3 units") and contains($b.log_path) and contains("src/pkg-05")'
}

@test "examples: each subagent ran only its brief's units, in a clone holding only its brief's parts, into its own log" {
	run -0 --separate-stderr "$CORRAL_ROOT/examples/subagent-fanout/fanout.sh" out 4
	local k want
	for k in 0 1 2 3; do
		want=$(jq -c ".[$k].units" out/briefs.json)
		run -0 jq -sc 'map(.unit)' <(records "out/logs/agent-$k.jsonl")
		assert_json_eq "$want" "$output"
		run -0 jq -sc 'map(.agent_id) | unique' <(records "out/logs/agent-$k.jsonl")
		assert_output "[\"$k\"]"
		# each check's note lists the sources its clone held
		run -0 jq -sc 'map(.note | sub(".*clone holds: "; "") | split(" ")) | unique' <(records "out/logs/agent-$k.jsonl")
		assert_json_eq "[$(jq -c 'sort' <<<"$want")]" "$output"
	done
}

# --- shellfix -------------------------------------------------------------

@test "examples: shellfix, from an install only: corral-fix keeps shellcheck's three real repairs in libexec and rolls back the decoy its suite catches" {
	local inst=$BATS_TEST_TMPDIR/inst flavor= finder before
	case $CORRAL_TEST_BIN in
	"$CORRAL_ROOT/build/asan/bin") flavor=SANITIZE=1 ;;
	"$CORRAL_ROOT/build/cov/bin") flavor=COVERAGE=1 ;;
	esac
	run -0 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$CORRAL_ROOT" \
		--no-print-directory $flavor install PREFIX="$inst"
	export PATH="$inst/bin:/usr/bin:/bin" TMPDIR=$BATS_TEST_TMPDIR/tmp
	unset CORRAL_BIN
	mkdir -p "$TMPDIR"
	assert_equal "$inst/bin/corral-find-suite" "$(command -v corral-find-suite)"
	assert_equal "$inst/share/corral/corral.mk" "$(corral-mk-path)"
	cp -R "$CORRAL_ROOT/examples/shellfix" root
	before=$(tree_digest root)
	finder="corral-find-combine 'corral-find-shellcheck -i libexec' 'corral-find-suite -f suite.mk'"

	# The dry run: three verified, the decoy rolled back, nothing written.
	run -1 --separate-stderr corral-fix -T -J -f "$finder" -p corral-patch-shellcheck root
	assert_json '(.verified | sort) == ["sc:SC2086:libexec/shellfix-count","sc:SC2086:libexec/shellfix-first","sc:SC2164:libexec/shellfix-inside"]'
	assert_json '.rolled_back == ["sc:SC2086:libexec/shellfix-search"]'
	assert_json '.results[] | select(.status == "rolled-back") | .detail == "fix introduced 1 new finding(s): suite:tests/search.sh"'
	assert_json '.combined.ok and .applied == []'
	assert_equal "$before" "$(tree_digest root)"

	# The apply: the three land, the decoy stays as it was.
	run -1 --separate-stderr corral-fix -a -T -f "$finder" -p corral-patch-shellcheck root
	assert_contains "$output" "considered 4, attempted 4, verified 3, rolled back 1, applied 3, conflicts 0, remaining 1"
	run -1 diff -r "$CORRAL_ROOT/examples/shellfix" root
	assert_equal 3 "$(grep -c '^diff -r' <<<"$output")"
	cmp "$CORRAL_ROOT/examples/shellfix/libexec/shellfix-search" root/libexec/shellfix-search
	run -0 --separate-stderr corral-find-shellcheck -i libexec root
	assert_equal "sc:SC2086:libexec/shellfix-search" "$(jq -r .identity <<<"$output")"
	run -0 --separate-stderr corral-find-suite -f suite.mk root
	assert_output ""
	run -0 ls -A "$TMPDIR" root
	assert_output "$(printf '%s:\n\n%s:\nREADME.md\nlibexec\nsuite.mk\ntests' "$TMPDIR" root)"
}
