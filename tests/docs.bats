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


@test "docs: HACKING.md's table of areas names every source file of src/, in the row of its area" {
	local f area row
	for f in "$CORRAL_ROOT"/src/*/*.c; do
		area=$(basename "$(dirname "$f")")
		row=$(grep -F "| \`$area/\` |" "$CORRAL_ROOT/HACKING.md") ||
			flunk "HACKING.md has no row for $area/"
		[[ $row == *"\`$(basename "$f")\`"* ]] ||
			flunk "HACKING.md's row for $area/ lacks $(basename "$f")"
	done
}

@test "docs: README's table of packages lists, for each target, exactly the packages of its group in build-aux/packages" {
	local group head row want got
	while IFS='|' read -r group head; do
		row=$(grep -F "| $head" "$CORRAL_ROOT/README.md") ||
			flunk "README.md has no row '$head' (group $group)"
		got=$(printf '%s\n' "$row" | awk -F'|' '{ print $3 }' |
			grep -o '`[^`]*`' | tr -d '`' | tr '\n' ' ')
		want=$(awk -F'\t' -v g="$group" '$1 == g { print $2 }' \
			"$CORRAL_ROOT/build-aux/packages" | tr '\n' ' ')
		[ -n "$want" ] || flunk "build-aux/packages has no group $group"
		[ "$got" = "$want" ] ||
			flunk "README's row for $group lists '$got', build-aux/packages '$want'"
	done <<'ROWS'
build|`make` (the programs
demo|`make demo` |
test|`make test` (or
browser|`make test`, the page
fuzz|`make fuzz` |
slurm|`make slurm-test` |
ROWS
}
