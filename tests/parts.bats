#!/usr/bin/env bats
# parts.bats -- corral-parts says which parts do not exist (and the path
# nearest to each), and prints the parts corral learned the units read.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	mkdir -p src/test/helpers src/libexec
	: > src/test/test_helper.bash
	: > src/libexec/rbenv
}

USAGE='usage: corral-parts -k [-C SRC] [PART...]
       corral-parts [-u] -H HISTORY [UNIT...]'

# history: two runs of three units; u1 learned twice (the latest wins),
# u3 never learned
history() {
	cat > history.jsonl <<'JSON'
{"agent_id":"0","unit":"u1","ok":true,"note":"PASS","at":"t","run":"r1","reads":["old","lib/a"]}
{"agent_id":"0","unit":"u2","ok":true,"note":"PASS","at":"t","run":"r1","reads":["lib/b","lib/a"]}
{"agent_id":"0","unit":"u3","ok":true,"note":"PASS","at":"t","run":"r1"}
{"corral":"history","run":"r1","records":3}
{"agent_id":"0","unit":"u1","ok":true,"note":"PASS","at":"t","run":"r2","reads":["lib/c"]}
{"agent_id":"0","unit":"u2","ok":true,"note":"PASS","at":"t","run":"r2"}
{"corral":"history","run":"r2","records":2}
JSON
}

@test "parts: -h prints usage to stdout and exits 0" {
	assert_help "$USAGE" corral-parts -h
}

@test "parts: neither -k nor -H, both, or -u with -k print usage to stderr and exit 2" {
	assert_usage_error "$USAGE" corral-parts
	assert_usage_error "$USAGE" corral-parts -k -H h
	assert_usage_error "$USAGE" corral-parts -k -u a
	assert_usage_error "$USAGE" corral-parts -C src -H h
}

@test "parts: -k exits 0 and prints nothing when every part exists" {
	run -0 --separate-stderr corral-parts -k -C src test libexec/rbenv test/helpers .
	assert_output ""
	assert_stderr ""
}

@test "parts: -k names each missing part on one line with the nearest existing path, and exits 1" {
	run -1 --separate-stderr corral-parts -k -C src tset/test_helper.bash libexec/rbnev test/helper nothing-like-it
	assert_output ""
	assert_stderr "corral-parts: part 'tset/test_helper.bash' not found in 'src'; nearest is 'test/test_helper.bash'
corral-parts: part 'libexec/rbnev' not found in 'src'; nearest is 'libexec/rbenv'
corral-parts: part 'test/helper' not found in 'src'; nearest is 'test/helpers'
corral-parts: part 'nothing-like-it' not found in 'src'"
}

@test "parts: -k leaves a part that leaves the tree to the checkout, and a missing SRC exits 2" {
	run -0 --separate-stderr corral-parts -k -C src ../x
	run -2 --separate-stderr corral-parts -k -C nosuch test
	assert_stderr "corral-parts: cannot open 'nosuch': No such file or directory"
}

@test "parts: -H prints the union of every unit's latest learned parts, sorted, each once" {
	history
	run -0 --separate-stderr corral-parts -H history.jsonl
	assert_output "$(printf '%s\n' lib/a lib/b lib/c)"
	assert_stderr ""
}

@test "parts: -H -u prints each named unit's parts, and names a unit nothing is learned of" {
	history
	run -0 --separate-stderr corral-parts -u -H history.jsonl u1 u3
	assert_output "$(printf 'u1\tlib/c')"
	assert_stderr "corral-parts: nothing learned for unit 'u3' in 'history.jsonl'"
}

@test "parts: -H of a missing history prints nothing, and a write error exits 2" {
	run -0 --separate-stderr corral-parts -H nosuch.jsonl
	assert_output ""
	history
	run -2 --separate-stderr sh -c 'corral-parts -H history.jsonl > /dev/full'
	assert_stderr "corral-parts: cannot write standard output: No space left on device"
}
