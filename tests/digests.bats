#!/usr/bin/env bats
# digests.bats -- the manifests hold each file's content digest, from a
# memo kept by stat in CORRAL_OUT/digests (src/base/memo.c): a touch
# starts no agent, an edit does, an unchanged tree costs a stat per
# file, and a memo that is corrupt, racy or planted is never believed.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	_corral_proj
}

# project UNIT...: each unit clones data/UNIT (its one part) and records
# that it ran.
project() {
	_corral_project "$@" <<'EOF'
CORRAL_CMD = printf '%s\n' "$$CORRAL_UNIT" >> "$$RAN"; test -f "data/$$CORRAL_UNIT"
CORRAL_PARTS_CMD = echo "data/$$CORRAL_UNIT"
EOF
	mkdir -p proj/data
	for u in "$@"; do echo "content of $u" > "proj/data/$u"; done
}

# agents: how many agents the runs since the last ': > calls' started.
agents() { grep -c '^corral-run-slice$' calls || true; }

# traced CMD...: CMD under strace, its opens in ./trace (LeakSanitizer
# cannot run traced: under a sanitizer build the leak check is off)
traced() {
	command -v strace > /dev/null 2>&1 || skip "no strace"
	strace -f -qq -o /dev/null true 2> /dev/null || skip "strace cannot trace here"
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -f -e trace=open,openat -o trace "$@"
}

# mtime FILE, ctime FILE: as SEC.NSEC (nine digits), as the memo says them.
mtime() { stat -c %.9Y "$1"; }
ctime() { stat -c %.9Z "$1"; }

@test "digests: a touch of every file, with no change, starts no agent" {
	project u1 u2 u3 u4
	_corral_logbin
	CORRAL_BIN=$PWD/logbin run -0 make -C proj -j4 corral-run CORRAL_AGENTS=4
	assert_equal 4 "$(agents)"
	: > calls
	: > "$RAN"
	touch proj/data/*
	CORRAL_BIN=$PWD/logbin run -0 make -C proj -j4 corral-run CORRAL_AGENTS=4
	assert_contains "$output" "4 successes, 0 failures"
	assert_equal 0 "$(agents)"
	assert_equal 0 "$(ran_count)"
}

@test "digests: an edit starts the agent of its slice alone, and so does an edit of the same size whose mtime was put back" {
	project u1 u2 u3 u4
	_corral_logbin
	CORRAL_BIN=$PWD/logbin run -0 make -C proj -j4 corral-run CORRAL_AGENTS=4
	: > calls
	: > "$RAN"
	echo changed >> proj/data/u3
	CORRAL_BIN=$PWD/logbin run -0 make -C proj -j4 corral-run CORRAL_AGENTS=4
	assert_equal 1 "$(agents)"
	run -0 cat "$RAN"
	assert_output "u3"
	# the same size, the old mtime: only the ctime tells
	: > calls
	: > "$RAN"
	touch -r proj/data/u2 stamp
	echo 'CONTENT of u2' > proj/data/u2
	touch -r stamp proj/data/u2
	CORRAL_BIN=$PWD/logbin run -0 make -C proj -j4 corral-run CORRAL_AGENTS=4
	assert_equal 1 "$(agents)"
	run -0 cat "$RAN"
	assert_output "u2"
}

@test "digests: a run after a touch reads only the touched file, the memo answers for the rest from a stat" {
	_corral_project a <<'EOF'
CORRAL_CMD = printf '%s\n' "$$CORRAL_UNIT" >> "$$RAN"
CORRAL_PARTS = data
EOF
	mkdir -p proj/data
	head -c 4000000 /dev/urandom > proj/data/big
	echo small > proj/data/small
	run -0 make -C proj corral-run
	assert_equal 1 "$(ran_count)"
	run -0 head -n 1 proj/.corral/digests
	assert_output "corral-memo 1"
	touch proj/data/small
	run -0 traced make -C proj corral-run
	assert_equal 1 "$(ran_count)"
	run -0 grep -c 'data/small"' trace
	assert_output 1
	run -1 grep 'data/big"' trace
}

@test "digests: a corrupt memo is an empty one, and a torn or foreign line is dropped while the good ones are kept" {
	project u1 u2
	run -0 make -C proj -j2 corral-run
	head -c 300 /dev/urandom > proj/.corral/digests
	: > "$RAN"
	touch proj/data/*
	run -0 --separate-stderr make -C proj -j2 corral-run
	assert_equal "" "$stderr"
	assert_equal 0 "$(ran_count)"
	run -0 head -n 1 proj/.corral/digests
	assert_output "corral-memo 1"
	run -0 wc -l < proj/.corral/digests
	assert_output 3
	# a good line among bad ones is believed: it answers with a stat
	{ echo 'corral-memo 1'; echo 'garbage'; echo '1 2 3 4.5 6.7 zz 0'
	  sed -n 2p proj/.corral/digests | cut -c 1-40
	  sed -n 2,3p proj/.corral/digests; } > memo
	touch -d '+1 minute' memo
	run -0 --separate-stderr corral-checkout -m m -D memo proj/data u1 u2
	assert_equal "" "$stderr"
	run -0 traced corral-checkout -m m -D memo proj/data u1 u2
	run -1 grep 'data/u[12]"' trace
}

@test "digests: an entry whose mtime is not older than the memo itself is not believed (racily clean), one older is" {
	mkdir src
	echo 'the real content' > src/f
	local real wrong line
	real=$(sha256sum < src/f | cut -d' ' -f1)
	wrong=$(printf '0%.0s' $(seq 64))
	line="$(stat -c '%d %i %s' src/f) $(mtime src/f) $(ctime src/f) $wrong 0"
	printf 'corral-memo 1\n%s\n' "$line" > memo
	# written after the file: the memo's digest is believed (no read)
	touch -d '+1 minute' memo
	run -0 corral-checkout -m m -D memo src f
	run -0 cat m
	assert_output "f 0644 17 $wrong f"
	# written in the tick the file was: read again, never the memo's word
	printf 'corral-memo 1\n%s\n' "$line" > memo
	touch -d "@$(mtime src/f)" memo
	run -0 corral-checkout -m m -D memo src f
	run -0 cat m
	assert_output "f 0644 17 $real f"
	# and the memo now holds the true digest
	run -0 grep -c " $real 0\$" memo
	assert_output 1
}

@test "digests: a link planted in place of the memo is neither followed nor replaced" {
	mkdir src elsewhere
	echo 'the real content' > src/f
	local real wrong
	real=$(sha256sum < src/f | cut -d' ' -f1)
	wrong=$(printf '0%.0s' $(seq 64))
	printf 'corral-memo 1\n%s\n' "$(stat -c '%d %i %s' src/f) $(mtime src/f) $(ctime src/f) $wrong 0" > elsewhere/memo
	touch -d '+1 minute' elsewhere/memo
	cp -p elsewhere/memo before
	ln -s elsewhere/memo memo
	run -0 --separate-stderr corral-checkout -m m -D memo src f
	assert_equal "corral-checkout: cannot save 'memo': Too many levels of symbolic links" "$stderr"
	run -0 cat m
	assert_output "f 0644 17 $real f"
	[ -L memo ] || flunk "the link was replaced"
	run -0 cmp before elsewhere/memo
	# the engine's memo: the run lock refuses what is planted in CORRAL_OUT
	project u1
	run -0 make -C proj corral-run
	rm proj/.corral/digests
	ln -s ../../elsewhere/engine proj/.corral/digests
	run -2 --separate-stderr make -C proj corral-run
	assert_contains "$stderr" "'$PWD/proj/.corral/digests' is a symbolic link, not a regular file"
	assert_no_file elsewhere/engine
	[ -L proj/.corral/digests ] || flunk "the engine replaced the link"
}

@test "digests: -D goes with -m or -M only" {
	mkdir src
	run -2 --separate-stderr corral-checkout -D memo src clone
	assert_contains "${stderr_lines[0]}" "usage: corral-checkout"
	run -2 --separate-stderr corral-checkout -D memo -d clone
	assert_contains "${stderr_lines[0]}" "usage: corral-checkout"
}

@test "digests: a unit's cache key takes a file's digest from the memo: a big file its slice clones is read to copy it, not again for the key" {
	_corral_project u1 <<'EOF2'
CORRAL_CMD = printf '%s\n' "$$CORRAL_UNIT" >> "$$RAN"; cat data/small > /dev/null
CORRAL_PARTS = data
EOF2
	mkdir -p proj/data
	head -c 4000000 /dev/urandom > proj/data/big
	echo small > proj/data/small
	run -0 make -C proj corral-run
	echo changed > proj/data/small
	run -0 traced make -C proj corral-run
	assert_equal 2 "$(ran_count)"
	# the copy into the clone opens it once; the key reads the memo
	run -0 grep -c '/proj/data/big"' trace
	assert_output 1
}
