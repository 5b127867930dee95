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

# mk_targets: the targets corral.mk defines, one a line, as __corral_phony
# (which .PHONY names) lists them
mk_targets() {
	sed -n '/^__corral_phony :=/,/[^\\]$/p' "$CORRAL_ROOT/corral.mk" |
		sed 's/^__corral_phony :=//; s/\\$//' | tr -s ' \t' '\n' | grep .
}

# number_word N: N (1 to 12) as a word
number_word() {
	local w=(zero one two three four five six seven eight nine ten eleven twelve)
	echo "${w[$1]}"
}

# listed_after FILE: the number word and the targets of the first "N
# corral-* targets (...)" of FILE, its lines joined, markup taken off
# (backquotes; mdoc's .Cm, .Po and .Pc): "N T1 T2 ..." on one line
listed_after() {
	tr '\n' ' ' < "$1" | sed 's/`//g; s/ \.Cm / /g; s/ \.Po / (/g; s/ \.Pc / )/g' |
		grep -o '[a-z]* corral-\* targets ([^)]*)' | head -n 1 |
		sed 's/ corral-\* targets (/ /; s/)$//; s/ *, */ /g; s/ \{1,\}/ /g; s/ $//'
}

@test "docs: corral.mk's targets, its Targets: comment and its rules name the same targets" {
	local want got
	want=$(mk_targets | LC_ALL=C sort)
	[ -n "$want" ] || flunk "corral.mk has no __corral_phony"
	got=$(sed -n '/^# Targets:$/,/^#$/p' "$CORRAL_ROOT/corral.mk" |
		sed -n 's/^#   \(corral-[a-z-]*\) .*/\1/p' | LC_ALL=C sort)
	_corral_same "the targets of corral.mk's Targets: comment" "$want" "$got"
	got=$(sed -n 's/^\(corral-[a-z-]*\):.*/\1/p' "$CORRAL_ROOT/corral.mk" | LC_ALL=C sort)
	_corral_same "the targets corral.mk has rules for" "$want" "$got"
}

@test "docs: README, HACKING, corral.mk(7) and the design list exactly the targets corral.mk defines, and count them right" {
	local want n doc got
	want=$(mk_targets | tr '\n' ' ' | sed 's/ $//')
	n=$(mk_targets | wc -l)
	for doc in README.md HACKING.md man/corral.mk.7 doc/design.md; do
		got=$(listed_after "$CORRAL_ROOT/$doc")
		[ -n "$got" ] || flunk "$doc says nowhere 'N corral-* targets (...)'"
		_corral_same "$doc's corral-* targets" "$(number_word "$n") $want" "$got"
	done
	# corral.mk(7): its synopsis and its Targets list
	got=$(sed -n 's/^\.Cm \(corral-[a-z-]* | .*\)/\1/p' "$CORRAL_ROOT/man/corral.mk.7" | sed 's/ | / /g')
	_corral_same "corral.mk(7)'s SYNOPSIS" "$want" "$got"
	got=$(sed -n '/^\.Ss Targets$/,/^\.El$/s/^\.It Cm \(corral-[a-z-]*\)$/\1/p' \
		"$CORRAL_ROOT/man/corral.mk.7" | tr '\n' ' ' | sed 's/ $//')
	_corral_same "corral.mk(7)'s Targets" "$want" "$got"
	# README's lines of make commands name every target, and no other
	got=$(sed -n 's/^    make .*/&/p' "$CORRAL_ROOT/README.md" | sed 's/#.*//' |
		grep -o 'corral-[a-z-]*' | LC_ALL=C sort -u)
	_corral_same "the targets of README's make lines" "$(mk_targets | LC_ALL=C sort)" "$got"
}

@test "docs: the design and corral.mk(7) name exactly the settings the table puts in a unit's cache key" {
	local want got
	want=$(corral-engine settings -k | LC_ALL=C sort)
	[ "$(wc -l <<< "$want")" -ge 10 ] || flunk "only $(wc -l <<< "$want") settings in the key"
	got=$(sed -n '/^- the settings the settings table marks as joining the key/,/`-Y`;$/p' \
		"$CORRAL_ROOT/doc/design.md" | grep -o 'CORRAL_[A-Z_]*' | LC_ALL=C sort -u)
	_corral_same "the settings design.md says join the key" "$want" "$got"
	got=$(sed -n "/^unit's name, the settings that join it\$/,/^\.Ev CORRAL_CACHE_KEY \.\$/p" \
		"$CORRAL_ROOT/man/corral.mk.7" | grep -o 'CORRAL_[A-Z_]*' | LC_ALL=C sort -u)
	_corral_same "the settings corral.mk(7) says join the key" "$want" "$got"
}
