#!/usr/bin/env bats
# build.bats -- the build as a packager and a user without root meet it: a
# plain make needs only the build's packages, make install honours GNU's
# directories, CPPFLAGS and INSTALL, and make distcheck checks a release
# tarball.  Each test builds a copy of the tree (what git tracks) of its
# own, so the tree under test is never rebuilt.
bats_require_minimum_version 1.5.0

setup_file() {
	# A directory nobody can enter: bats' own are root's alone.
	BUILD_TMP=$(mktemp -d /tmp/corral-build-test.XXXXXX)
	chmod 755 "$BUILD_TMP"
	export BUILD_TMP
}

teardown_file() {
	rm -rf "$BUILD_TMP"
}

setup() {
	load test_helper
	_corral_setup
	unset CPPFLAGS CFLAGS LDFLAGS INSTALL
}

# copy DIR: what git tracks of the tree under test, in DIR, owned by nobody
copy() {
	mkdir -p "$1"
	git -C "$CORRAL_ROOT" ls-files -z | tar -C "$CORRAL_ROOT" --null -T - -cf - |
		tar -C "$1" -xf -
	chown -R nobody: "$1"
}

# build_path DIR: DIR, a PATH of links to every program of the machine but
# those only the tests, the demo, fuzzing or Slurm need (build-aux/packages)
build_path() {
	local d f name
	mkdir -p "$1"
	for d in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do
		for f in "$d"/*; do
			name=${f##*/}
			case $name in
			npm | node | nodejs | gdb | bwrap | bats | jq | shellcheck | \
			cppcheck | xmllint | prove | mandoc | man | chromium | \
			clang | clang-* | srun | salloc | sbatch) continue ;;
			esac
			[ -e "$1/$name" ] || ln -s "$f" "$1/$name"
		done
	done
	ls "$1/cc" "$1/make" "$1/pkg-config" > /dev/null
}

# as_nobody CMD...: CMD as nobody, with the build-only PATH and a HOME
as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
		env -i PATH="$BUILD_TMP/path" HOME="$BUILD_TMP" LC_ALL=C "$@"
}

@test "build: a plain make as a user without root, with only the build's packages on PATH, builds every program with the packager's CPPFLAGS" {
	local src=$BUILD_TMP/plain
	copy "$src"
	build_path "$BUILD_TMP/path"
	as_nobody sh -c 'command -v bats || command -v npm || command -v gdb || command -v bwrap' &&
		flunk "the test's PATH still holds a test tool"
	run -0 --separate-stderr as_nobody make -C "$src" -j2 V=1 \
		CPPFLAGS=-D_FORTIFY_SOURCE=2
	refute_contains "$stderr" "missing packages"
	[ -x "$src/bin/corral-run-slice" ] && [ -x "$src/bin/corral-find-suite" ] ||
		flunk "no programs in bin/: $stderr"
	# every compile command carries the packager's CPPFLAGS (V=1 prints a
	# command over its continued lines: join them first)
	sed -e :a -e '/\\$/N; s/\\\n//; ta' <<<"$output" | grep -e ' -c -o ' > compiles
	[ "$(wc -l < compiles)" -gt 50 ] || flunk "too few compile commands: $output"
	run -1 grep -v -e ' -D_FORTIFY_SOURCE=2 ' compiles
	# the suite needs more, and says exactly what, by name and command
	run -2 --separate-stderr as_nobody make -C "$src" test
	[[ $stderr == *"corral: missing packages: bats shellcheck cppcheck libxml2-utils perl"* ]] ||
		[[ $stderr == *"corral: missing packages: jq bats "* ]] || flunk "$stderr"
	assert_contains "$stderr" "npm mandoc man-db gdb bubblewrap"
	assert_contains "$stderr" "; run: sudo apt-get install -y --no-install-recommends"
}

@test "build: make install honours bindir, datadir, mandir, libexecdir and INSTALL; the installed corral.mk finds its programs in a bindir set apart" {
	local src=$BUILD_TMP/inst-src to=$BUILD_TMP/apart
	copy "$src"
	mkdir -p "$to"
	# INSTALL: a wrapper that logs each call, as a packager's may
	printf '#!/bin/sh\necho "$*" >> %s/install.log\nexec install "$@"\n' "$to" > "$to/my-install"
	chmod +x "$to/my-install"
	run -0 make -C "$src" -s -j2 install INSTALL="$to/my-install" \
		bindir="$to/b" datadir="$to/d" mandir="$to/m" libexecdir="$to/x"
	[ -x "$to/b/corral-run-slice" ] || flunk "no programs in bindir"
	[ -x "$to/x/corral/corral-marker-find" ] && [ ! -e "$to/b/corral-marker-find" ] ||
		flunk "the test helpers are not in libexecdir/corral alone"
	[ -f "$to/d/corral/corral.mk" ] && [ -f "$to/d/corral/mk/engine.mk" ] ||
		flunk "no corral.mk in datadir"
	[ -f "$to/m/man1/corral-merge.1" ] && [ -f "$to/m/man7/corral.mk.7" ] ||
		flunk "no manual pages in mandir"
	[ ! -e "$to/b/../share" ] || flunk "something went to bindir/../share"
	grep -q "corral-run-slice" "$to/install.log" || flunk "INSTALL was not used"
	# a project that includes it, with no corral program on PATH
	mkdir proj
	printf '%s\n' 'CORRAL_UNITS = a b' 'CORRAL_CMD = true' \
		"include $to/d/corral/corral.mk" > proj/Makefile
	unset CORRAL_BIN
	PATH=/usr/bin:/bin run -0 make -C proj -j2 corral-run
	assert_json '.units == 2 and .successes == 2' proj/.corral/summary.json
}

@test "build: make distcheck makes a release tarball that builds with the packager's flags, installs into a DESTDIR and passes corral doctor from there" {
	local src=$BUILD_TMP/dist-src
	mkdir -p "$src"
	git clone -q "$CORRAL_ROOT" "$src"
	run -0 --separate-stderr make -C "$src" distcheck
	assert_contains "$output" "corral doctor: PASS ("
	assert_contains "$stderr" "DISTCHECK corral-"
	tar -tzf "$src"/corral-*.tar.gz > list
	grep -qx 'corral-[0-9.]*/corral.mk' list || flunk "no corral.mk in the tarball"
	grep -qx 'corral-[0-9.]*/build-aux/packages' list || flunk "no package table"
	! grep -q '/\.ci/\|/bin/corral\|/build/' list || flunk "the tarball holds what it should not"
}
