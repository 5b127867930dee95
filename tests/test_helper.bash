# test_helper.bash -- shared set-up and assertions for corral's bats suite.
#
# _corral_setup puts the programs under test ($CORRAL_TEST_BIN, set by
# 'make test') first on PATH, sets LC_ALL=C and moves into a directory of
# the test's own under BATS_TEST_TMPDIR, where every test writes.  The assertions print the
# "expected : / actual :" block that bats-assert users know.

CORRAL_ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)

_corral_setup() {
	: "${CORRAL_TEST_BIN:=$CORRAL_ROOT/bin}"
	PATH="$CORRAL_TEST_BIN:$CORRAL_ROOT/tests/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
	export PATH CORRAL_ROOT CORRAL_TEST_BIN
	export LC_ALL=C
	unset CORRAL_KEEP CORRAL_RUN MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES \
		SANITIZE COVERAGE WERROR V SLURMD_NODENAME
	# A cached pass is run again to verify it at random (2% by default):
	# tests that count the units a run ran want none of that chance;
	# tests/cache.bats sets it where it tests it.
	export CORRAL_CACHE_VERIFY=0
	# corral.mk runs the programs under test too (a sanitizer build, say).
	export CORRAL_BIN=$CORRAL_TEST_BIN
	# A directory of our own: bats keeps its --separate-stderr files in
	# BATS_TEST_TMPDIR itself.
	mkdir -p "$BATS_TEST_TMPDIR/w" && cd "$BATS_TEST_TMPDIR/w" || return 1
}

# _corral_tmpdir: TMPDIR inside the test (clones go under it by default).
_corral_tmpdir() {
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	mkdir -p "$TMPDIR"
}

# _corral_ran: RAN, an empty file the units of a test append to, exported;
# ran_count: how many lines it holds.
_corral_ran() {
	RAN=$PWD/ran
	: > "$RAN"
	export RAN
}

# _corral_proj: proj/, for a test's project, and RAN (_corral_ran)
_corral_proj() {
	mkdir -p proj
	_corral_ran
}

# _corral_project UNIT... < SETTINGS: the project in proj/: units.txt
# lists UNIT..., one a line, and the Makefile names it as
# CORRAL_UNITS_FILE, holds SETTINGS (make lines: CORRAL_CMD...) and
# includes corral.mk
_corral_project() {
	printf '%s\n' "$@" > proj/units.txt
	{
		echo 'CORRAL_UNITS_FILE = units.txt'
		cat
		echo "include $CORRAL_ROOT/corral.mk"
	} > proj/Makefile
}
ran_count() { wc -l < "$RAN" | tr -d ' '; }

# _corral_logbin: logbin/, the programs under test each wrapped to log
# its name to $CALLS (calls, emptied) and run; CORRAL_BIN=$PWD/logbin
# makes a run use them.  corral-run-slice -q, the pass that answers
# slices from the stores before make reads the graph (no agent), is
# logged as "corral-run-slice -q".
_corral_logbin() {
	local p
	mkdir logbin
	for p in "$CORRAL_TEST_BIN"/corral-*; do
		printf '#!/bin/sh\nif [ "$1" = -q ]; then echo "%s -q"; else echo %s; fi >> "$CALLS"\nexec %s "$@"\n' \
			"${p##*/}" "${p##*/}" "$p" > "logbin/${p##*/}"
		chmod +x "logbin/${p##*/}"
	done
	export CALLS=$PWD/calls
	: > calls
}

# _corral_kill_bg: for teardown: kill -9 what a test left running in the
# background on purpose, the pids it wrote to bg.pids (in BATS_TEST_TMPDIR
# or in the test's directory), each with its process group when it leads
# one.
_corral_kill_bg() {
	local p
	for p in $(cat "$BATS_TEST_TMPDIR"/bg.pids "$BATS_TEST_TMPDIR"/w/bg.pids 2>/dev/null); do
		kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null || true
	done
}

# wait_for CMD...: poll for up to 20 s until CMD succeeds
wait_for() {
	local i
	for i in $(seq 200); do
		"$@" && return 0
		sleep 0.1
	done
	flunk "timed out waiting for: $*"
}

# no_process TAG: within 5 s no live process has TAG in its arguments
no_process() {
	local i
	for i in $(seq 50); do
		pgrep -f -- "$1" > /dev/null || return 0
		sleep 0.1
	done
	flunk "still running with '$1' in its arguments:" "$(pgrep -af -- "$1")"
}

# skip_if_wrapped: for a test that copies a program elsewhere, or runs it
# where PATH cannot find valgrind.  Under CORRAL_TEST_WRAPPER (make test
# VALGRIND=1) the programs are scripts that run the real one, from its own
# directory, through the wrapper found on PATH.
skip_if_wrapped() {
	[ -z "${CORRAL_TEST_WRAPPER:-}" ] ||
		skip "the program runs through a wrapper script, not from where the test put it"
}

flunk() {
	{
		if [ "$#" -eq 0 ]; then cat; else printf '%s\n' "$@"; fi
	} | sed 's/^/# /' >&2
	return 1
}

# _corral_same WHAT EXPECTED ACTUAL [SHOWN]: true when ACTUAL is EXPECTED;
# else the "-- WHAT differs --" block, with SHOWN (default ACTUAL) as actual
_corral_same() {
	[ "$2" = "$3" ] && return 0
	flunk "-- $1 differs --" "expected : $2" "actual   : ${4-$3}" "--"
}

# assert_equal EXPECTED ACTUAL
assert_equal() {
	_corral_same values "$1" "$2"
}

# assert_output TEXT: $output is exactly TEXT
assert_output() {
	_corral_same output "$1" "$output"
}

# assert_synopsis TEXT: the synopsis $output begins with (the "usage: "
# line and its indented continuations, before -h's option lines) is TEXT
assert_synopsis() {
	local syn
	syn=$(printf '%s\n' "$output" | sed -n '1{/^usage: /p;d;};/^       /!q;p')
	_corral_same synopsis "$1" "$syn" "$output"
}

# assert_help SYNOPSIS CMD...: CMD (a -h or --help) exits 0, its synopsis
# is SYNOPSIS, and it writes nothing on stderr
assert_help() {
	local syn=$1
	shift
	run -0 --separate-stderr "$@"
	assert_synopsis "$syn" && assert_stderr ""
}

# assert_usage_error SYNOPSIS CMD...: CMD exits 2 with SYNOPSIS alone on
# stderr and nothing on stdout
assert_usage_error() {
	local syn=$1
	shift
	run -2 --separate-stderr "$@"
	assert_output "" && assert_stderr "$syn"
}

# assert_stderr TEXT: $stderr is exactly TEXT (run --separate-stderr)
assert_stderr() {
	_corral_same stderr "$1" "$stderr"
}

# assert_contains HAYSTACK NEEDLE
assert_contains() {
	case "$1" in *"$2"*) return 0 ;; esac
	flunk "-- text not found --" "expected : ...$2..." "actual   : $1" "--"
}

# refute_contains HAYSTACK NEEDLE
refute_contains() {
	case "$1" in *"$2"*) ;; *) return 0 ;; esac
	flunk "-- text found but must not be --" "unexpected : $2" "actual     : $1" "--"
}

# records FILE: the record lines of an agent's log, its seal left out
records() {
	grep -v '^{"corral_seal":' "$1" || true
}

# assert_json FILTER [FILE]: jq -e FILTER holds for FILE (default: $output)
assert_json() {
	local filter=$1 got
	if [ "$#" -ge 2 ]; then
		got=$(jq -e "$filter" "$2" 2>&1) && return 0
	else
		got=$(jq -e "$filter" <<<"$output" 2>&1) && return 0
	fi
	flunk "-- JSON check failed --" "filter   : $filter" "result   : $got" \
		"input    : $(if [ "$#" -ge 2 ]; then head -c 2000 "$2"; else printf '%s' "${output:0:2000}"; fi)" "--"
}

# assert_json_eq EXPECTED_JSON ACTUAL_JSON: equal by meaning (jq -S)
assert_json_eq() {
	local want got
	want=$(jq -S . <<<"$1") || flunk "expected is not JSON: $1" || return 1
	got=$(jq -S . <<<"$2") || flunk "actual is not JSON: $2" || return 1
	[ "$want" = "$got" ] && return 0
	flunk "-- JSON differs --" "expected : $(jq -cS . <<<"$1")" "actual   : $(jq -cS . <<<"$2")" "--"
}

# assert_file_exists PATH / assert_no_file PATH
assert_file_exists() {
	[ -e "$1" ] || flunk "expected file to exist: $1"
}
assert_no_file() {
	[ ! -e "$1" ] && [ ! -L "$1" ] || flunk "expected no file at: $1"
}

# tree_digest DIR: a digest of every path, mode, mtime and byte under DIR
tree_digest() {
	(cd "$1" && find . -printf '%p %M %T@ %l\n' | LC_ALL=C sort &&
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum) |
		sha256sum | cut -d' ' -f1
}

# bats_file NAME: a bats file of four tests (pass, fail, skip, fail), and
# ./bats-tap, which runs one as a unit would: bats --tap, without the
# environment of the bats running this test.
bats_file() {
	# (printf: a line starting with @test here would be a test of this file)
	printf '@test %s\n' '"first passes" { true; }' '"second fails" { false; }' \
		'"third skips" { skip "no db"; }' \
		'"fourth fails" { echo "expected 3, got 4"; return 1; }' > "$1"
	cat > bats-tap <<'EOF'
#!/bin/sh
exec env -i PATH="$PATH" bats --tap "$@"
EOF
	chmod +x bats-tap
}

# fault_lib: FAULT_LIB, tests/preload/fault.c built once per test file:
# an LD_PRELOAD library that kills the program at, or edits a file after,
# a chosen change under FAULT_ROOT (see there), so that nothing in corral
# reads a test-only setting.  ASan is told not to insist on coming first.
fault_lib() {
	FAULT_LIB=$BATS_FILE_TMPDIR/fault.so
	if [ ! -e "$FAULT_LIB" ]; then
		cc -std=c99 -shared -fPIC -O1 -Wall -Wextra -Werror \
			-o "$FAULT_LIB.$$" "$CORRAL_ROOT/tests/preload/fault.c" -ldl &&
			mv "$FAULT_LIB.$$" "$FAULT_LIB" || flunk "cannot build fault.so"
	fi
	export FAULT_LIB ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
}

# bundle_of FROM TO DIR: at DIR a bundle of one fix that turns the files
# of tree FROM into those of TO: a write of each file that is new or
# differs (expected_before: its digest in FROM, or null), a delete of
# each that is gone
bundle_of() {
	local from=$1 to=$2 dir=$3 p old new
	mkdir -p "$dir/files"
	{ (cd "$from" && find . -type f) ; (cd "$to" && find . -type f); } |
		sed 's|^\./||' | LC_ALL=C sort -u |
	while IFS= read -r p; do
		old=null new=
		[ ! -f "$from/$p" ] || old=\"$(sha256sum < "$from/$p" | cut -d' ' -f1)\"
		if [ -f "$to/$p" ]; then
			new=$(sha256sum < "$to/$p" | cut -d' ' -f1)
			[ "$old" != "\"$new\"" ] || continue
			cp "$to/$p" "$dir/files/$new"
			printf '{"path":"%s","action":"write","sha256":"%s","expected_before":%s}\n' "$p" "$new" "$old"
		else
			printf '{"path":"%s","action":"delete","expected_before":%s}\n' "$p" "$old"
		fi
	done | jq -s '{bundle_version: 1, note: "bundle_of", fixes: [{identity: "bundle_of",
		repairs: "", trust: "corroborated", confidence: 1, files: .,
		area: ([.[].path | if test("/") then sub("/.*"; "") else "(root)" end] |
			unique | join("+"))}]}' > "$dir/manifest.json"
}

# HOSTILE: bytes that would drive a terminal: OSC retitle ended by BEL,
# clear screen, CR, BS, other C0, DEL, C1 (U+0085, U+009B) and invalid
# UTF-8 (a lone continuation byte, 0xff, a truncated sequence)
HOSTILE=$'\e]0;pwned\a\e[2J\rX\bY\x01\x7f\xc2\x85\xc2\x9b[31m\x80\xff\xe2\x82'

# assert_shown FILE...: each holds no byte a terminal acts on: no C0 but
# newline and tab, no DEL, no C1, only well-formed UTF-8
assert_shown() {
	local f
	for f in "$@"; do
		perl -MEncode -e 'local $/; my $s = <STDIN>;
			my $t = eval { Encode::decode("UTF-8", $s, Encode::FB_CROAK) };
			defined $t or exit 3;
			exit($t =~ /[\x00-\x08\x0b-\x1f\x7f-\x9f]/ ? 1 : 0)' < "$f" ||
			flunk "'$f' holds bytes a terminal acts on: $(od -c "$f" | head -20)"
	done
}

# _http_store_start DIR: a real HTTP store (Debian's nginx, its WebDAV
# PUT and DELETE) on 127.0.0.1, serving DIR/store; its files (config,
# pid, logs, temps) under DIR.  Sets HTTP_STORE to its URL (a path under
# the server) and HTTP_STORE_DIR to what it stores in.  A port another
# test holds makes nginx fail to bind: another is tried.
_http_store_start() {
	local dir=$1 port try
	local nginx=/usr/sbin/nginx
	[ -x "$nginx" ] || flunk "nginx-light is not installed (build-aux/packages)"
	mkdir -p "$dir/store" "$dir/tmp"
	for try in 1 2 3 4 5 6 7 8; do
		port=$((20000 + (RANDOM % 20000)))
		cat > "$dir/nginx.conf" <<-CONF
		daemon on;
		user root;
		pid $dir/nginx.pid;
		error_log $dir/error.log;
		events {}
		http {
			access_log off;
			client_body_temp_path $dir/tmp/body;
			proxy_temp_path $dir/tmp/proxy;
			fastcgi_temp_path $dir/tmp/fastcgi;
			uwsgi_temp_path $dir/tmp/uwsgi;
			scgi_temp_path $dir/tmp/scgi;
			server {
				listen 127.0.0.1:$port;
				root $dir/store;
				location / {
					dav_methods PUT DELETE;
					create_full_put_path on;
					client_max_body_size 16m;
				}
			}
		}
		CONF
		if "$nginx" -c "$dir/nginx.conf" -e "$dir/error.log" 2>/dev/null 3>&-; then
			HTTP_STORE=http://127.0.0.1:$port/corral
			HTTP_STORE_DIR=$dir/store/corral
			export HTTP_STORE HTTP_STORE_DIR
			return 0
		fi
	done
	flunk "nginx would not start: $(tail -n 3 "$dir/error.log")"
}

# _http_store_stop DIR: stop the store _http_store_start DIR started
# (its master and workers), and wait until the master is gone.  The
# daemon's parent may be a subreaper that reaps only later (corral's
# agent, when the suite runs through corral): a zombie is gone.
_http_store_stop() {
	local pid n=0
	pid=$(cat "$1/nginx.pid" 2>/dev/null) || return 0
	kill -QUIT "$pid" 2>/dev/null || return 0
	while kill -0 "$pid" 2>/dev/null &&
		[ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" != Z ]; do
		n=$((n + 1))
		[ "$n" -le 400 ] || flunk "nginx $pid did not stop in 20 s"
		sleep 0.05
	done
}
