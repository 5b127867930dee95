#!/usr/bin/env bats
# docs.bats -- what README.md says about the programs is what they do.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
}

@test "docs: README's table of programs lists every program that is built" {
	local prog
	for prog in "$CORRAL_TEST_BIN"/corral-*; do
		grep -qF "| \`$(basename "$prog")\` |" "$CORRAL_ROOT/README.md" ||
			flunk "README.md's table lacks $(basename "$prog")"
	done
}

