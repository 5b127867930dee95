#!/usr/bin/env bats
# man.bats -- the manual pages in man/ and the documents in doc/ say what
# the programs and corral.mk are: a page for every program, lint-clean, a
# synopsis with the options the program's usage names, every corral.mk
# knob in corral.mk(7), an install that man(1) reads; every section and
# test name doc/RELIABILITY.md is cited by exists.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	MAN=$CORRAL_ROOT/man
}

# letters: the option letters of the text on stdin ("[-0hj] [-C DIR] -c
# CMD" gives 0 C c h j), one a line, sorted, -h left out: every program
# takes it, and whether its usage line shows it is the program's business.
letters() {
	grep -oE '(^|[][ |])-[A-Za-z0-9]+' | sed 's/^[][ |]*-//' | fold -w1 |
		grep -v '^h$' | LC_ALL=C sort -u
}

# synopsis PAGE: the SYNOPSIS section of PAGE as mandoc renders it.
synopsis() {
	mandoc -T ascii -O width=300 "$1" | sed 's/.\x08//g' |
		sed -n '/^SYNOPSIS/,/^[A-Z]/{/^[A-Z]/!p}'
}

@test "man: every program that is built has a page, and every page a program" {
	local prog page n=0
	for prog in "$CORRAL_TEST_BIN"/corral*; do
		[ -f "$MAN/$(basename "$prog").1" ] ||
			flunk "no manual page man/$(basename "$prog").1"
		n=$((n + 1))
	done
	[ "$n" -ge 16 ] || flunk "only $n programs found in $CORRAL_TEST_BIN"
	for page in "$MAN"/*.1; do
		page=$(basename "$page" .1)
		[ -f "$CORRAL_ROOT/tools/$page.c" ] || [ -f "$CORRAL_ROOT/tools/$page.sh" ] ||
			flunk "man/$page.1 documents no program of tools/"
	done
	[ -f "$MAN/corral.mk.7" ] || flunk "no man/corral.mk.7"
}

@test "man: every page lints clean with mandoc -Tlint -W warning" {
	command -v mandoc >/dev/null || flunk "mandoc is not installed (make deps)"
	run mandoc -T lint -W warning "$MAN"/*.1 "$MAN"/*.7
	[ "$status" -eq 0 ] && [ -z "$output" ] ||
		flunk "mandoc -Tlint (status $status):" "$output"
}

@test "man: each page's SYNOPSIS has exactly the option letters of the program's usage" {
	local prog name want got n=0
	for prog in "$CORRAL_TEST_BIN"/corral*; do
		name=$(basename "$prog")
		run -0 --separate-stderr "$prog" -h
		want=$(printf '%s\n' "$output" |
			sed -n '1{/^usage: /p;};/^       /p' | letters)
		got=$(synopsis "$MAN/$name.1" | letters)
		[ "$want" = "$got" ] || flunk "man/$name.1 SYNOPSIS differs from '$name -h':" \
			"usage:  $(echo $want)" "page:   $(echo $got)"
		n=$((n + 1))
	done
	[ "$n" -ge 16 ] || flunk "only $n programs compared"
}

@test "man: every CORRAL_* knob of the settings table is in corral.mk(7), with its default" {
	local knob value entry n=0
	while IFS=$'\t' read -r knob value; do
		entry=$(sed -n "/^\.It Ev $knob\$/,/^\.It /p" "$MAN/corral.mk.7" | sed '$d')
		[ -n "$entry" ] || flunk "corral.mk.7 has no '.It Ev $knob'"
		case $knob in
		CORRAL_UNITS|CORRAL_UNITS_FILE|CORRAL_DISCOVER|CORRAL_CMD) ;;
		*) assert_contains "$entry" "default" ;;
		esac
		case $value in
		''|*'$('*) ;;
		*) assert_contains "$entry" ".Li $value" ;;
		esac
		n=$((n + 1))
	done < <(corral-engine settings | grep '^CORRAL_')
	[ "$n" -ge 40 ] || flunk "only $n knobs found in the settings table"
	grep -q '^\.It Ev CORRAL_CMD$' "$MAN/corral.mk.7" || flunk "CORRAL_CMD is missing"
}

@test "man: make install puts the pages under MANDIR, man reads them, make uninstall removes them" {
	local root=$BATS_TEST_TMPDIR/dest prefix=/usr/local flavor= page
	command -v man >/dev/null || flunk "man is not installed (make deps)"
	case $CORRAL_TEST_BIN in
	"$CORRAL_ROOT/build/asan/bin") flavor=SANITIZE=1 ;;
	"$CORRAL_ROOT/build/cov/bin") flavor=COVERAGE=1 ;;
	esac
	run -0 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$CORRAL_ROOT" \
		--no-print-directory $flavor install DESTDIR="$root" PREFIX=$prefix
	for page in "$MAN"/*.1; do
		cmp "$page" "$root$prefix/share/man/man1/$(basename "$page")" ||
			flunk "$(basename "$page") is not installed in man1"
	done
	cmp "$MAN/corral.mk.7" "$root$prefix/share/man/man7/corral.mk.7"
	run -0 env MANPATH="$root$prefix/share/man" MANPAGER=cat MANWIDTH=80 \
		MAN_DISABLE_SECCOMP=1 man corral-merge
	assert_contains "$output" "fold the agents' logs into the shared results"
	run -0 env MANPATH="$root$prefix/share/man" MANPAGER=cat MANWIDTH=80 \
		MAN_DISABLE_SECCOMP=1 man 7 corral.mk
	assert_contains "$output" "CORRAL_TIMEOUT"
	run -0 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$CORRAL_ROOT" \
		--no-print-directory uninstall DESTDIR="$root" PREFIX=$prefix
	run -0 find "$root" -type f
	assert_output ""
}

# doc/RELIABILITY.md is numbered so that code can cite "RELIABILITY 4.2".
@test "doc: every 'RELIABILITY N.N' cited in the tree is a section of doc/RELIABILITY.md" {
	local sec n=0
	while read -r sec; do
		grep -qE "^#+ $sec " "$CORRAL_ROOT/doc/RELIABILITY.md" ||
			flunk "'RELIABILITY $sec' is cited, but doc/RELIABILITY.md has no section $sec"
		n=$((n + 1))
	done < <(cd "$CORRAL_ROOT" && cat src/*.h src/*/*.c src/*/*.h tools/*.c mk/*.mk corral.mk Makefile \
		bench/* build-aux/* README.md HACKING.md doc/*.md 2>/dev/null |
		perl -0777 -ne 'while (/RELIABILITY(?:\.md)?[\s*]*(?:section\s+)?(\d+\.\d+)/g) { print "$1\n" }' |
		sort -u)
	[ "$n" -ge 3 ] || flunk "only $n sections cited"
	# README and HACKING.md name the document by its path in the tree.
	run grep -ho '.\{4\}RELIABILITY\.md' "$CORRAL_ROOT/README.md" "$CORRAL_ROOT/HACKING.md"
	refute_contains "$(grep -v 'doc/RELIABILITY\.md' <<<"$output")" "RELIABILITY.md"
}

@test "doc: every test doc/RELIABILITY.md names as a proof is a test of the suite" {
	local name n=0
	while IFS= read -r name; do
		grep -qxF "@test \"$name\" {" "$CORRAL_ROOT"/tests/*.bats ||
			flunk "doc/RELIABILITY.md cites a test that does not exist: $name"
		n=$((n + 1))
	done < <(grep -oE '`[a-z-]+: [^`]+`' "$CORRAL_ROOT/doc/RELIABILITY.md" | tr -d '`' | sort -u)
	[ "$n" -ge 20 ] || flunk "only $n tests cited"
}

@test "man: corral-split(1) describes every strategy corral-split -L names, and no other" {
	local want got
	want=$(corral-split -L | LC_ALL=C sort)
	got=$(sed -n '/^\.It Fl s Ar strategy/,/^\.El/s/^\.It Cm //p' "$MAN/corral-split.1" | LC_ALL=C sort)
	assert_equal "$want" "$got"
}
