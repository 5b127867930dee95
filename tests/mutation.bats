#!/usr/bin/env bats
# mutation.bats -- the suite guards corral-fix's two safety defaults.  For
# each default, setup_file copies the source tree, flips the one line
# marked "MUTATION: <name> default" in src/repair/fix.c with sed (and fails
# loudly if sed changed anything but that one line), builds the copy with
# the same Makefile, and runs tests/fix.bats against the mutant.  A test
# here passes only if the suite FAILED against its mutant, and failed in
# the [MUTATION] test written for that default.  The two mutants build and
# run at the same time.
bats_require_minimum_version 1.5.0

# mutant NAME SED: build and test one mutant in $MUT/NAME; its verdict
# (a number: the suite's exit status, or a sentence) goes to NAME/status.
mutant() {
	local dir=$MUT/$1 status
	mkdir -p "$dir/tmp"
	cp -R "$CORRAL_ROOT/src" "$CORRAL_ROOT/tools" "$CORRAL_ROOT/build-aux" \
		"$CORRAL_ROOT/Makefile" "$dir/"
	sed -i "$2" "$dir/src/repair/fix.c"
	if [ "$(diff "$CORRAL_ROOT/src/repair/fix.c" "$dir/src/repair/fix.c" | grep -c '^>')" != 1 ]; then
		echo "the sed did not change exactly one line of src/repair/fix.c" > "$dir/status"
		return
	fi
	# A plain build, whatever flags the make running this suite was given.
	if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE -u COVERAGE \
		make -C "$dir" -s > "$dir/build.log" 2>&1 ||
		[ ! -x "$dir/bin/corral-fix" ]; then
		{ echo "the mutant did not build:"; tail -n 5 "$dir/build.log"; } \
			> "$dir/status"
		return
	fi
	status=0
	(cd "$CORRAL_ROOT" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="${HOME:-/}" \
		TMPDIR="$dir/tmp" CORRAL_TEST_BIN="$dir/bin" \
		bats --formatter tap tests/fix.bats) > "$dir/tap" 2>&1 || status=$?
	echo "$status" > "$dir/status"
}

setup_file() {
	load test_helper
	export MUT=$BATS_FILE_TMPDIR
	mutant dry-run 's/dry_run = 1;\(.*MUTATION: dry-run default\)/dry_run = 0;\1/' &
	mutant corroboration 's/any_trust = 0;\(.*MUTATION: corroboration default\)/any_trust = 1;\1/' &
	wait
}

setup() {
	load test_helper
	_corral_setup
}

# killed NAME TEST: the mutant NAME made the suite fail, in TEST too
killed() {
	local dir=$MUT/$1 status failed total
	status=$(cat "$dir/status")
	case $status in
	''|*[!0-9]*) flunk "mutant $1: $status" ;;
	esac
	[ "$status" -ne 0 ] || flunk "mutant $1: tests/fix.bats PASSED against it"
	failed=$(grep -c '^not ok ' "$dir/tap" || true)
	total=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$dir/tap")
	[ -n "$total" ] && [ "$failed" -gt 0 ] ||
		flunk "mutant $1: the suite did not run: $(head -c 2000 "$dir/tap")"
	grep -q "^not ok [0-9]* $2" "$dir/tap" ||
		flunk "mutant $1: '$2' did not fail" < /dev/null
	# Not everything failed: the mutant ran, and only the default broke.
	[ "$failed" -lt "$total" ] ||
		flunk "mutant $1: all $total tests failed; the build is suspect"
	echo "# mutant $1: $failed of $total tests in tests/fix.bats failed" >&3
}

@test "mutation: flipping the dry-run default makes the suite fail" {
	killed dry-run "fix: \[MUTATION\] dry run is the default"
}

@test "mutation: flipping the corroboration default makes the suite fail" {
	killed corroboration "fix: \[MUTATION\] a single-method finding is not attempted by default"
}
