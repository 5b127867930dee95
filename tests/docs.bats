#!/usr/bin/env bats
# docs.bats -- what README.md says about the programs is what they do.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
}

@test "docs: README shows every program's synopsis exactly as its -h prints it" {
	local prog line n=0
	for prog in "$CORRAL_TEST_BIN"/corral-*; do
		run -0 --separate-stderr "$prog" -h
		while IFS= read -r line; do
			# the synopsis: "usage: " and its indented continuations;
			# the option lines after it are man(1)'s business
			case $line in "usage: "* | "       "*) ;; *) break ;; esac
			line=${line#       }
			line=${line#usage: }
			grep -qF -- "$line" "$CORRAL_ROOT/README.md" ||
				flunk "README.md lacks the synopsis line of $(basename "$prog"): $line"
			n=$((n + 1))
		done <<<"$output"
	done
	[ "$n" -ge 5 ] || flunk "only $n synopsis lines checked"
}

@test "docs: README's table of programs lists every program that is built" {
	local prog
	for prog in "$CORRAL_TEST_BIN"/corral-*; do
		grep -qF "| \`$(basename "$prog")\` |" "$CORRAL_ROOT/README.md" ||
			flunk "README.md's table lacks $(basename "$prog")"
	done
}

@test "docs: README lists every command exactly as corral -h prints it" {
	local line n=0
	run -0 --separate-stderr corral -h
	while IFS= read -r line; do
		case $line in "   "[a-z]*) ;; *) continue ;; esac
		grep -qxF -- "$line" "$CORRAL_ROOT/README.md" ||
			flunk "README.md lacks the corral -h line: $line"
		n=$((n + 1))
	done <<<"$output"
	[ "$n" -ge 6 ] || flunk "only $n command lines checked"
}
