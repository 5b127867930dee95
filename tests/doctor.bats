#!/usr/bin/env bats
# doctor.bats -- corral-doctor checks an install for real: from a checkout,
# and from 'make install PREFIX=...' run outside the tree with a PATH that
# lacks it; and a broken install -- a missing helper, a helper of another
# version or none, a corral.mk that cannot be found, an old make -- fails
# and names the problem.
bats_require_minimum_version 1.5.0

# One real install for the whole file, made the way a user makes it, from
# the build under test (a sanitizer build installs its own programs).
setup_file() {
	local root flavor=
	root=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	case ${CORRAL_TEST_BIN:-} in
	"$root/build/asan/bin") flavor=SANITIZE=1 ;;
	"$root/build/cov/bin") flavor=COVERAGE=1 ;;
	esac
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$root" \
		--no-print-directory $flavor install \
		PREFIX="$BATS_FILE_TMPDIR/inst" > "$BATS_FILE_TMPDIR/install.log" 2>&1
}

setup() {
	load test_helper
	_corral_setup
	_corral_tmpdir
	INST=$BATS_FILE_TMPDIR/inst
	VERSION=$(sed -n 's/^#define CORRAL_VERSION "\(.*\)"$/\1/p' "$CORRAL_ROOT/src/base/base.h")
}

# broken: a copy of the install at $PWD/inst to break
broken() {
	cp -a "$INST" inst
}

# doctor STATUS [DIR]: run DIR/bin/corral doctor (default: the copy) from
# here, outside the tree, with a PATH that does not hold the tree
doctor() {
	PATH=/usr/bin:/bin run "-$1" --separate-stderr "${2:-$PWD/inst}/bin/corral" doctor
}

# line PREFIX: the one output line that starts with PREFIX
line() {
	printf '%s\n' "$output" | grep -F -- "$1" | head -n 1
}

@test "doctor: -h prints usage; an operand is a usage error" {
	assert_help "usage: corral-doctor [-h]" corral-doctor -h
	assert_usage_error "usage: corral-doctor [-h]" corral doctor now
}

@test "doctor: in the checkout every check passes, and the temporary directory is removed" {
	run -0 --separate-stderr corral doctor
	assert_stderr ""
	assert_equal 10 "${#lines[@]}"
	assert_contains "$output" "  ok:   the programs are here, all of one version -- "
	assert_contains "$output" "  ok:   GNU Make is new enough -- GNU Make "
	assert_contains "$output" "  ok:   corral-split cuts disjoint, complete slices -- 10 units -> 3 disjoint slices of 4, 3 and 3; none lost, none twice"
	assert_contains "$output" "  ok:   a real fan-out through make -j3 corral-run isolates each agent and merges once -- 7 units -> 7 slices, 3 agents at a time -> 7 logs -> 6 passed / 1 failed (u3), merged once, each unit exactly once, each clone holding only its agent's checks"
	assert_contains "$output" "  ok:   the scoreboard reads that run back -- 7 units  ->  6 successes, 1 failure, tallied by verdict"
	refute_contains "$output" "FAIL"
	assert_contains "${lines[9]}" "corral doctor: PASS ("
	run -0 ls -A "$TMPDIR"
	assert_output ""
}

@test "doctor: the repair checks run against this build's corral fix, or say it is not installed" {
	run -0 --separate-stderr corral doctor
	if [ -x "$CORRAL_TEST_BIN/corral-fix" ]; then
		assert_equal "  ok:   a planted defect is repaired, and a dry run does not touch it -- 1 planted defect: the dry run held, the real run repaired it, the finder agrees" \
			"$(line 'a planted defect')"
		assert_equal "  ok:   a verified repair is bundled, applied to another copy, and refused on a moved target -- labelled pkg, applied to a second copy, then refused on a changed target" \
			"$(line 'a verified repair')"
		assert_equal "corral doctor: PASS (9 checks, 0 failures)" "${lines[9]}"
	else
		assert_equal "  skip: a planted defect is repaired, and a dry run does not touch it -- corral fix is not installed" \
			"$(line 'a planted defect')"
		assert_equal "  skip: a verified repair is bundled, applied to another copy, and refused on a moved target -- corral fix is not installed" \
			"$(line 'a verified repair')"
		assert_equal "corral doctor: PASS (7 checks, 0 failures, 2 skipped)" "${lines[9]}"
	fi
}

# with_fix_stubs: stand-ins for corral-fix, corral-bundle and
# corral-marker-find (tests/stubs) in the copy of the install, marked with
# this version as corral's programs are
with_fix_stubs() {
	local stub
	broken
	for stub in "$CORRAL_ROOT"/tests/stubs/corral-*; do
		{ cat "$stub"; printf '# @(#)corral %s\n' "$VERSION"; } \
			> "inst/bin/${stub##*/}"
		chmod +x "inst/bin/${stub##*/}"
	done
}

@test "doctor: with a corral fix installed, the repair checks run and pass when it behaves" {
	with_fix_stubs
	doctor 0
	assert_equal "  ok:   a planted defect is repaired, and a dry run does not touch it -- 1 planted defect: the dry run held, the real run repaired it, the finder agrees" \
		"$(line 'a planted defect')"
	assert_equal "  ok:   a verified repair is bundled, applied to another copy, and refused on a moved target -- labelled pkg, applied to a second copy, then refused on a changed target" \
		"$(line 'a verified repair')"
	assert_equal "corral doctor: PASS (9 checks, 0 failures)" "${lines[9]}"
}

@test "doctor: a corral fix whose dry run writes fails the repair check" {
	with_fix_stubs
	STUB_FIX_DRY_WRITES=1 doctor 1
	assert_equal "  FAIL: a planted defect is repaired, and a dry run does not touch it -- the dry run did not hold (exit 0)" \
		"$(line 'a planted defect')"
	assert_equal "corral doctor: FAIL (9 checks, 2 failures)" "${lines[9]}"
}

@test "doctor: a bundle that writes over a changed file fails the bundle check" {
	with_fix_stubs
	STUB_BUNDLE_FORCE=1 doctor 1
	assert_equal "  FAIL: a verified repair is bundled, applied to another copy, and refused on a moved target -- the bundle was not refused on a changed target (exit 0)" \
		"$(line 'a verified repair')"
}

@test "doctor: an install from make install PREFIX=... passes, run outside the tree with a PATH that lacks it" {
	doctor 0 "$INST"
	assert_stderr ""
	assert_equal "  ok:   the programs are here, all of one version -- $(ls "$INST/bin" | wc -l) programs in $INST/bin, all corral $VERSION" \
		"$(line '  ok:   the programs')"
	assert_equal "  ok:   corral.mk is found, and a Makefile can include it -- '$INST/share/corral/corral.mk' is included; it runs the corral $VERSION programs in $INST/bin" \
		"$(line '  ok:   corral.mk')"
	refute_contains "$output" "FAIL"
	refute_contains "$output" "$CORRAL_ROOT"
	assert_contains "${lines[${#lines[@]} - 1]}" "corral doctor: PASS ("
}

@test "doctor: an install keeps the test helpers out of bin/, in libexec/corral, where corral, corral fix and the doctor find them" {
	local h
	for h in corral-marker-find corral-marker-patch; do
		[ ! -e "$INST/bin/$h" ] || flunk "$h is in the install's bin/"
		[ -x "$INST/libexec/corral/$h" ] || flunk "$h is not in libexec/corral"
	done
	doctor 0 "$INST"
	assert_equal "  ok:   a planted defect is repaired, and a dry run does not touch it -- 1 planted defect: the dry run held, the real run repaired it, the finder agrees" \
		"$(line 'a planted defect')"
	PATH=$INST/bin:/usr/bin:/bin run -0 --separate-stderr corral marker-find -h
	assert_contains "${lines[0]}" "usage: corral-marker-find"
	# corral fix's default finder and patcher, with neither on PATH
	mkdir tree
	printf '# DEADCANARY: this test cannot fail\n' > tree/bad.py
	PATH=$INST/bin:/usr/bin:/bin run -1 --separate-stderr corral fix tree
	assert_contains "$output" "verified 1,"
}

@test "doctor: the install's corral mk-path and include \$(shell corral mk-path) work outside the tree" {
	PATH=$INST/bin:/usr/bin:/bin run -0 --separate-stderr corral mk-path
	assert_output "$INST/share/corral/corral.mk"
	mkdir proj
	printf '%s\n' 'CORRAL_UNITS = a b c d' 'CORRAL_CMD = true' \
		'include $(shell corral mk-path)' > proj/Makefile
	unset CORRAL_BIN
	PATH=$INST/bin:/usr/bin:/bin run -0 make -C proj -j2 corral-run
	assert_json '.units == 4 and .successes == 4 and .agents == 4' proj/.corral/summary.json
}

@test "doctor: a missing helper fails the install and names it" {
	broken
	rm inst/bin/corral-merge
	doctor 1
	assert_equal "  FAIL: the programs are here, all of one version -- corral-merge is missing (in $PWD/inst/bin)" \
		"$(line 'the programs are here')"
	assert_contains "$(line 'a real fan-out')" "  FAIL: a real fan-out through make -j3 corral-run isolates each agent and merges once -- "
	assert_contains "${lines[${#lines[@]} - 1]}" "corral doctor: FAIL ("
	run -0 ls -A "$TMPDIR"
	assert_output ""
}

@test "doctor: a corral.mk that cannot be found fails and says where it looked" {
	broken
	rm -r inst/share/corral
	doctor 1
	assert_equal "  FAIL: corral.mk is found, and a Makefile can include it -- corral.mk not found; looked for '$PWD/inst/bin/../share/corral/corral.mk', '$PWD/inst/bin/../corral.mk'" \
		"$(line 'corral.mk is found')"
	assert_equal "  FAIL: a real fan-out through make -j3 corral-run isolates each agent and merges once -- corral.mk not found; looked for '$PWD/inst/bin/../share/corral/corral.mk', '$PWD/inst/bin/../corral.mk'" \
		"$(line 'a real fan-out')"
	assert_contains "$(line '  ok:   the programs')" "programs in $PWD/inst/bin"
}

@test "doctor: a corral.mk without its engine fails the fan-out and quotes make" {
	broken
	rm inst/share/corral/mk/engine.mk
	doctor 1
	assert_contains "$(line 'a real fan-out')" "  FAIL: a real fan-out through make -j3 corral-run isolates each agent and merges once -- "
	assert_contains "$(line 'a real fan-out')" "engine.mk"
}

@test "doctor: a helper of another version fails and names both versions" {
	broken
	LC_ALL=C sed -i "s/@(#)corral $VERSION/@(#)corral 0.0.9/" inst/bin/corral-split
	doctor 1
	assert_equal "  FAIL: the programs are here, all of one version -- corral-split is corral 0.0.9, not $VERSION (in $PWD/inst/bin)" \
		"$(line 'the programs are here')"
}

@test "doctor: a helper that is no corral program fails the split check too" {
	broken
	printf '#!/bin/sh\nexit 0\n' > inst/bin/corral-split
	doctor 1
	assert_equal "  FAIL: the programs are here, all of one version -- corral-split carries no corral version (in $PWD/inst/bin)" \
		"$(line 'the programs are here')"
	assert_equal "  FAIL: corral-split cuts disjoint, complete slices -- slice 0 is missing" \
		"$(line 'corral-split cuts')"
}

@test "doctor: another corral-* program beside it must be of the same version, if it is corral's" {
	broken
	cp inst/bin/corral-split inst/bin/corral-extra
	LC_ALL=C sed -i "s/@(#)corral $VERSION/@(#)corral 9.9.9/" inst/bin/corral-extra
	printf '#!/bin/sh\n' > inst/bin/corral-mine
	chmod +x inst/bin/corral-mine
	doctor 1
	assert_equal "  FAIL: the programs are here, all of one version -- corral-extra is corral 9.9.9, not $VERSION (in $PWD/inst/bin)" \
		"$(line 'the programs are here')"
}

@test "doctor: a make older than 4.0 fails" {
	mkdir stubs
	printf '#!/bin/sh\necho "GNU Make 3.81"\n' > stubs/make
	chmod +x stubs/make
	PATH=$PWD/stubs:$PATH run -1 --separate-stderr corral doctor
	assert_equal "  FAIL: GNU Make is new enough -- GNU Make 3.81 is too old; corral.mk needs 4.0 or later" \
		"$(line 'GNU Make is new enough')"
}

@test "doctor: a write error on standard output exits 2" {
	run -2 --separate-stderr sh -c 'corral doctor > /dev/full'
	assert_contains "$stderr" "corral-doctor: cannot write standard output: No space left on device"
}

@test "doctor: says whether CORRAL_SANDBOX=bwrap works here: ok with bwrap, skipped with the reason without it" {
	command -v bwrap > /dev/null || skip "bubblewrap is not installed"
	run -0 --separate-stderr corral doctor
	assert_equal "  ok:   CORRAL_SANDBOX=bwrap keeps a unit in its clone -- bwrap: a unit wrote its clone, and nothing outside it" \
		"$(line 'CORRAL_SANDBOX=bwrap')"
	mkdir nobwrap
	for f in /usr/bin/*; do [ "${f##*/}" = bwrap ] || ln -s "$f" nobwrap/; done
	PATH=$CORRAL_TEST_BIN:$PWD/nobwrap run -0 --separate-stderr corral doctor
	assert_equal "  skip: CORRAL_SANDBOX=bwrap keeps a unit in its clone -- CORRAL_SANDBOX=bwrap would stop a run: corral-run-slice: sandbox 'bwrap' asked for, but there is no 'bwrap' on PATH" \
		"$(line 'CORRAL_SANDBOX=bwrap')"
	assert_contains "${lines[9]}" ", 1 skipped)"
}
