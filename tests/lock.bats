#!/usr/bin/env bats
# lock.bats -- one run at a time on a CORRAL_OUT: every corral.mk target
# holds CORRAL_OUT's lock, a second one waits (saying so) or refuses, the
# lock goes with its last holder (kill -9 included) and is held by agents
# that outlive their make, units never hold it, and make -n touches
# nothing.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	_corral_proj
	unset CORRAL_WAIT NAP
}

teardown() {
	# the runs a test started in the background, and their units
	_corral_kill_bg
}

# project UNIT...: each unit writes "RUN UNIT" to $RAN, then sleeps $NAP
project() {
	_corral_project "$@" <<EOF
CORRAL_CMD = printf '%s %s\\n' "\$\$CORRAL_RUN" "\$\$CORRAL_UNIT" >> "\$\$RAN"; \
	echo \$\$\$\$ >> "\$\$RAN.pids"; sleep \$\${NAP:-0}
EOF
}

# bg NAME CMD...: CMD in a session of its own, output in NAME.out, status
# in NAME.rc when it ends; its pid in $BG_PID
bg() {
	local name=$1
	shift
	setsid sh -c '"$@" > "$0.out" 2>&1; echo $? > "$0.rc"' "$name" "$@" 3>&- &
	BG_PID=$!
	disown "$BG_PID"
	echo "$BG_PID" >> bg.pids
}

# finish NAME: wait for the background NAME; its status in $status
finish() {
	wait_for test -s "$1.rc"
	status=$(cat "$1.rc")
	output=$(cat "$1.out")
}

ran_at_least() { [ "$(ran_count)" -ge "$1" ]; }

# run_a AGENTS NAP READY: run A, make -jAGENTS corral-run of the project
# with its units sleeping NAP s, in the background; back once READY units
# ran
run_a() {
	NAP=$2 bg A make -C proj -j"$1" corral-run CORRAL_AGENTS="$1"
	wait_for ran_at_least "$3"
}

# waited_for_a: the make just run said it waited for run A, which then
# ended with 0 (its output in $output)
waited_for_a() {
	assert_contains "$stderr" "corral: waiting for the run holding CORRAL_OUT (pid "
	finish A
	assert_equal 0 "$status"
}

# the pid the lock file names: the engine's sub-make
holder() { cat proj/.corral/.lock; }

# one_run_result N: the result holds the N units once each, every record
# of one run, each its first attempt
one_run_result() {
	assert_json ".units == $1 and .successes == $1 and .missing == 0 and .duplicates == 0" proj/.corral/summary.json
	run -0 jq -r .run proj/.corral/successes.jsonl
	assert_equal 1 "$(printf '%s\n' "$output" | sort -u | wc -l)"
	run -0 jq -r .attempt proj/.corral/successes.jsonl
	assert_equal 1 "$(printf '%s\n' "$output" | sort -u)"
	run -0 jq -r .unit proj/.corral/successes.jsonl
	assert_equal "$(seq -f 'u%02g' 1 "$1")" "$(printf '%s\n' "$output" | sort)"
}

# runs_in_blocks: in $RAN, each run's units are one block (never mixed)
runs_in_blocks() {
	local blocks
	blocks=$(cut -d' ' -f1 "$RAN" | uniq | wc -l)
	assert_equal "$(cut -d' ' -f1 "$RAN" | sort -u | wc -l)" "$blocks"
}

@test "lock: a CORRAL_OUT that the run makes is marked a top directory (ext4's T), so that its files go to block groups away from the project's; one that was there stays as it was" {
	command -v lsattr >/dev/null || skip "lsattr is not installed"
	mkdir probe
	chattr +T probe 2>/dev/null || skip "this file system has no T attribute"
	project a
	run -0 make -C proj corral-run
	run -0 lsattr -d proj/.corral
	[[ ${output%% *} == *T* ]] || flunk "not marked: $output"
	run -0 lsattr -d proj/.corral/work
	[[ ${output%% *} == *T* ]] || flunk "the work root not marked: $output"
	mkdir -p mine
	run -0 make -C proj corral-run CORRAL_OUT="$PWD/mine"
	run -0 lsattr -d mine
	[[ ${output%% *} != *T* ]] || flunk "marked: $output"
}

@test "lock: a second corral-run on a CORRAL_OUT in use waits, saying so once, and the result is one run's, every unit run once" {
	project $(seq -f 'u%02g' 1 6)
	run_a 3 0.5 1
	local pid
	pid=$(holder)
	run -0 --separate-stderr make -C proj -j3 corral-run CORRAL_AGENTS=3
	assert_equal 1 "$(grep -c 'waiting for the run' <<<"$stderr")"
	assert_contains "$stderr" "corral: waiting for the run holding CORRAL_OUT (pid $pid)"
	waited_for_a
	# the second run found everything done: each unit ran once, in run A
	assert_equal 6 "$(ran_count)"
	one_run_result 6
}

@test "lock: make -B corral-run during a run waits for it; the result is the second run's alone, each run's units unmixed" {
	project $(seq -f 'u%02g' 1 6)
	run_a 3 0.5 1
	run -0 --separate-stderr make -C proj -B -j3 corral-run CORRAL_AGENTS=3
	waited_for_a
	assert_equal 12 "$(ran_count)"
	runs_in_blocks
	one_run_result 6
	assert_equal "$(tail -n 1 "$RAN" | cut -d' ' -f1)" "$(jq -r .run proj/.corral/summary.json)"
}

@test "lock: corral-merge during a run waits for it, then merges the whole run" {
	project $(seq -f 'u%02g' 1 4)
	run_a 2 0.5 1
	run -0 --separate-stderr make -C proj corral-merge
	waited_for_a
	one_run_result 4
}

@test "lock: corral-clean during a run waits for it, then removes CORRAL_OUT; the run is unharmed" {
	project $(seq -f 'u%02g' 1 4)
	run_a 2 0.5 1
	run -0 --separate-stderr make -C proj corral-clean
	waited_for_a
	assert_contains "$output" "4 passed, 0 failed"
	assert_no_file proj/.corral
	run -0 ls proj
	assert_output "$(printf 'Makefile\nunits.txt')"
}

@test "lock: with CORRAL_WAIT=0 every corral target refuses at once, exit 2, while a run holds CORRAL_OUT" {
	project $(seq -f 'u%02g' 1 2)
	run_a 2 30 2
	local pid t goal start
	pid=$(holder)
	for goal in corral-run corral-merge corral-rerun-failed corral-plan corral-clean; do
		start=$SECONDS
		run -2 --separate-stderr make -C proj "$goal" CORRAL_WAIT=0
		assert_contains "$stderr" "corral: the run of pid $pid holds CORRAL_OUT; not waiting (CORRAL_WAIT=0)"
		[ $((SECONDS - start)) -le 3 ] || flunk "$goal took $((SECONDS - start)) s to refuse"
	done
	t=$(date +%s%N)
	run -2 --separate-stderr make -C proj corral-run CORRAL_WAIT=0.5
	assert_contains "$stderr" "corral: gave up waiting for the run holding CORRAL_OUT (pid $pid) after 0.5 s"
	[ $(( ($(date +%s%N) - t) / 1000000 )) -ge 500 ] || flunk "gave up before 0.5 s"
	assert_equal 2 "$(ran_count)"
	run -2 --separate-stderr make -C proj corral-run CORRAL_WAIT=soon
	assert_contains "$stderr" "corral: CORRAL_WAIT is 'soon'; it must be a number of seconds"
}

@test "lock: kill -9 of a whole run leaves no stale lock, and a unit's processes never hold it" {
	project $(seq -f 'u%02g' 1 2)
	cat >> proj/Makefile <<'EOF'
CORRAL_CMD = ! ls -l /proc/$$$$/fd | grep -q '/\.lock$$' || echo "$$CORRAL_UNIT" >> "$$RAN.held"; \
	echo $$$$ >> "$$RAN.pids"; echo "$$CORRAL_UNIT" >> "$$RAN"; sleep $${NAP:-0}
EOF
	run_a 2 30 2
	run -2 --separate-stderr make -C proj corral-run CORRAL_WAIT=0
	kill -KILL -- "-$BG_PID"
	# the units (process groups of their own) live on, holding nothing
	# (the agents' watchdogs, which hold it too, clean up and end at once)
	run -0 --separate-stderr make -C proj -B corral-run CORRAL_WAIT=5 NAP=0
	assert_json '.successes == 2' proj/.corral/summary.json
	assert_no_file "$RAN.held"
	local p
	for p in $(cat "$RAN.pids"); do kill -KILL -- "-$p" 2>/dev/null || true; done
}

@test "lock: an agent alive after its make was killed blocks a new run until it ends" {
	project $(seq -f 'u%02g' 1 2)
	cat >> proj/Makefile <<'EOF'
CORRAL_CMD = echo "$$CORRAL_UNIT" >> "$$RAN"; \
	if [ -n "$$DEAF" ]; then echo $$PPID >> "$$RAN.agents"; trap '' TERM; sleep 30; fi; \
	for a in $$(cat "$$RAN.agents"); do ! kill -0 $$a 2>/dev/null || echo "$$a" >> "$$RAN.overlap"; done
EOF
	DEAF=1 bg A make -C proj -j2 corral-run CORRAL_AGENTS=2 CORRAL_GRACE=3
	wait_for lines_at_least 2 "$RAN.agents"
	# make and its sub-make die; the agents stop their deaf units, which
	# takes them the grace period
	kill -KILL "$(holder)" "$(pgrep -P "$BG_PID" make)"
	run -2 --separate-stderr make -C proj corral-run CORRAL_WAIT=0
	assert_contains "$stderr" "holds CORRAL_OUT; not waiting (CORRAL_WAIT=0)"
	run -0 --separate-stderr make -C proj -j2 corral-run CORRAL_AGENTS=2
	assert_contains "$stderr" "corral: waiting for the run holding CORRAL_OUT (pid "
	assert_no_file "$RAN.overlap"
	assert_json '.successes == 2 and .missing == 0' proj/.corral/summary.json
}

# lines_at_least N FILE: FILE holds N complete lines or more
lines_at_least() {
	[ -f "$2" ] && [ "$(wc -l < "$2")" -ge "$1" ]
}

# listing DIR: every path under DIR with its size and mtime
listing() {
	find "$1" -printf '%p %s %T@\n' | LC_ALL=C sort
}

@test "lock: make -n of any corral target runs nothing and writes nothing, not even a fresh CORRAL_OUT" {
	project u01 u02
	local goal before
	for goal in corral-run corral-merge corral-rerun-failed corral-plan corral-clean; do
		run -0 make -C proj -n "$goal"
		assert_no_file proj/.corral
		run -0 make -C proj -n -B "$goal"
		assert_no_file proj/.corral
	done
	run -0 make -C proj -j2 corral-run
	echo u03 >> proj/units.txt
	before=$(listing proj/.corral)
	: > "$RAN"
	for goal in corral-run corral-merge corral-rerun-failed corral-plan corral-clean; do
		run -0 make -C proj -n "$goal"
		run -0 make -C proj -n -B "$goal"
		run -0 make -C proj -nk -j2 "$goal"
	done
	assert_equal "$before" "$(listing proj/.corral)"
	assert_equal 0 "$(ran_count)"
}

@test "lock: the clones agents of a killed run left are removed when the next run starts" {
	project $(seq -f 'u%02g' 1 4)
	run_a 2 30 2
	kill -KILL -- "-$BG_PID"
	local p
	for p in $(cat "$RAN.pids"); do kill -KILL -- "-$p" 2>/dev/null || true; done
	# as an agent killed before its watchdog could remove its clone leaves it
	mkdir -p proj/.corral/work/corral-0.OLD/tests && echo x > proj/.corral/work/corral-0.OLD/tests/a
	run -0 ls proj/.corral/work
	[ "${#lines[@]}" -ge 1 ] || flunk "no clone left"
	# SIGKILL is delivered, not awaited: the killed agents may hold the lock
	# a moment longer, so the next run waits for them (never for ever).
	run -0 make -C proj -j2 corral-run CORRAL_AGENTS=2 CORRAL_WAIT=20
	run -0 ls -A proj/.corral/work
	assert_output ""
}

@test "lock: corral-merge by hand into a CORRAL_OUT in use waits for the run, or with CORRAL_WAIT=0 refuses" {
	project $(seq -f 'u%02g' 1 2)
	run_a 2 30 2
	local out=$PWD/proj/.corral
	CORRAL_WAIT=0 run -2 --separate-stderr corral-merge -u "$out/units" -o "$out" "$out/logs"
	assert_equal "corral-merge: the run of pid $(holder) holds CORRAL_OUT '$out'; not waiting (CORRAL_WAIT=0)" "$stderr"
	assert_no_file "$out/summary.json"
	CORRAL_WAIT=0.2 run -2 --separate-stderr corral-merge "$out/logs"
	assert_contains "$stderr" "corral-merge: waiting for the run holding CORRAL_OUT '$out' (pid $(holder))"
	assert_no_file "$out/summary.json"
}

@test "lock: agents started by hand on one CORRAL_OUT share its lock and run side by side" {
	mkdir -p out && : > out/.corral-out
	printf 'a\n' > s0
	printf 'b\n' > s1
	# each unit waits (10 s at most) until both have started
	local cmd='touch "$OUT/$CORRAL_UNIT.started"; i=0; while [ ! -e "$OUT/a.started" ] || [ ! -e "$OUT/b.started" ]; do [ $i -lt 100 ] || exit 1; i=$((i + 1)); sleep 0.1; done'
	export OUT=$PWD
	corral-run-slice -c "$cmd" -l out/logs 0 s0 3>&- &
	local a=$! rc=0
	CORRAL_WAIT=0 run -0 corral-run-slice -c "$cmd" -l out/logs 1 s1
	wait "$a" || rc=$?
	assert_equal 0 "$rc"
}

@test "lock: corral-lock refuses a directory that holds somebody else's files and creates nothing in it" {
	mkdir theirs && echo mine > theirs/keep
	run -2 --separate-stderr corral-lock theirs true
	assert_equal "corral: CORRAL_OUT 'theirs' exists and was not made by corral; choose another" "$stderr"
	run -0 ls -A theirs
	assert_output "keep"
}

@test "lock: corral-lock makes the directory and its mark, holds the lock for COMMAND and its children, then lets go" {
	run -0 corral-lock fresh sh -c 'CORRAL_WAIT=0 corral-lock fresh true && cat fresh/.lock && flock -n fresh/.lock true || echo held'
	assert_equal "held" "${lines[1]}"
	[ "${lines[0]}" -gt 0 ] || flunk "no pid in the lock file: ${lines[0]}"
	assert_file_exists fresh/.corral-out
	run -0 flock -n fresh/.lock true
	run -0 corral-lock -h
	assert_synopsis "usage: corral-lock [-u] [-G PID] [-w SECONDS] DIR COMMAND [ARG...]"
	run -2 --separate-stderr corral-lock fresh
	run -127 --separate-stderr corral-lock fresh ./no-such-program
	assert_equal "corral: cannot run './no-such-program': No such file or directory" "$stderr"
}

@test "lock: corral-lock -u runs COMMAND without the lock passed down, so a daemon it leaves does not hold it; with -G or -w it is refused" {
	run -0 corral-lock out corral-lock -u out sh -c 'sleep 30 >/dev/null 2>&1 & echo $! >> bg.pids'
	[ -s bg.pids ] || flunk "nothing left running"
	run -0 kill -0 $(cat bg.pids)
	CORRAL_WAIT=0 run -0 --separate-stderr corral-lock out true
	run -2 --separate-stderr corral-lock -u -w 0 out true
	assert_stderr "corral: -u takes no -G or -w: it waits for nothing"
	run -2 --separate-stderr corral-lock -u -G 1 out true
	assert_stderr "corral: -u takes no -G or -w: it waits for nothing"
}

@test "lock: corral-lock -G counts a zombie as gone and runs nothing" {
	perl -e 'my $p = fork; exit 0 unless $p; open my $f, ">", "zombie"; print $f "$p\n"; close $f; sleep 30' 3>&- &
	local parent=$!
	disown "$parent"
	echo "$parent" >> bg.pids
	wait_for test -s zombie
	local z
	z=$(cat zombie)
	wait_for grep -q ') Z' "/proc/$z/stat"
	run -0 kill -0 "$z"
	run -2 --separate-stderr corral-lock -G "$z" out touch touched
	assert_equal "corral: process $z, which the run hangs on, is gone; 'touch' not run" "$stderr"
	assert_no_file touched
	run -0 corral-lock -G "$parent" out touch touched
	assert_file_exists touched
}

# plant KIND PATH: make PATH a dangling link, a link to the marker file
# $PWD/marker (which holds "marker"), a directory or a FIFO
plant() {
	rm -rf "$2"
	mkdir -p "$(dirname "$2")"
	case $1 in
	dangling) ln -s "$PWD/nowhere/x" "$2" ;;
	link) echo marker > marker; ln -s "$PWD/marker" "$2" ;;
	dir) mkdir "$2" ;;
	fifo) mkfifo "$2" ;;
	esac
}

# refused KIND PATH: the command just run (under timeout) ended at once,
# status 2, its last line of stderr naming PATH as what KIND planted, and
# nothing was written through it
refused() {
	local what
	case $1 in
	dangling|link) what='a symbolic link' ;;
	dir) what='a directory' ;;
	fifo) what='a FIFO' ;;
	esac
	[ "$status" -ne 124 ] || flunk "$1 at '$2': it hung"
	assert_contains "$stderr" "'$2' is $what, not a regular file"
	[ "$status" -ne 0 ] || flunk "$1 at '$2': it went on (status 0)"
	[ ! -e nowhere ] || flunk "$1 at '$2': made its target"
	[ "$1" != link ] || assert_equal marker "$(cat marker)"
}

@test "lock: a .lock planted as a dangling link, a link to a file of ours, a directory or a FIFO stops corral-lock and make corral-run at once with one line naming it, -w 0 or not; the file linked to is untouched" {
	project a
	run -0 make -C proj corral-run
	local k out=$PWD/proj/.corral
	for k in dangling link dir fifo; do
		plant "$k" "$out/.lock"
		run --separate-stderr timeout 20 corral-lock -w 0 "$out" true
		refused "$k" "$out/.lock"
		run --separate-stderr timeout 20 corral-lock "$out" true
		refused "$k" "$out/.lock"
		run --separate-stderr timeout 60 make -C proj corral-run
		refused "$k" "$out/.lock"
		CORRAL_WAIT=0 run --separate-stderr timeout 60 make -C proj corral-run
		refused "$k" "$out/.lock"
	done
	assert_equal 1 "$(ran_count)"
}

@test "lock: a .merge.lock planted as a link, a directory or a FIFO stops the merge, in a CORRAL_OUT and in a plain directory, with one line naming it; nothing is made at the link's target" {
	project a b
	run -0 make -C proj corral-run
	local k out=$PWD/proj/.corral
	for k in dangling link dir fifo; do
		plant "$k" "$out/.merge.lock"
		run --separate-stderr timeout 60 make -C proj corral-merge
		refused "$k" "$out/.merge.lock"
		mkdir -p plain
		plant "$k" plain/.merge.lock
		run --separate-stderr timeout 60 corral-merge -u "$out/units" -o plain "$out/logs"
		refused "$k" plain/.merge.lock
	done
	rm -rf plain/.merge.lock
	run -0 corral-merge -u "$out/units" -o plain "$out/logs"
	assert_json '.successes == 2' plain/summary.json
}

@test "lock: a file of the run's state (a setting the shell writes, a stamp, the plan, an agent's log, the history, the board, a status file) planted as a link or a FIFO stops make corral-run at once with one line naming it; the file linked to is untouched" {
	project a b
	run -0 make -C proj corral-run
	local f k out=$PWD/proj/.corral
	for f in cmd agents inputs merge-config merged plan.mk slices/0.pass \
		slices/0.units logs/agent-0.jsonl history.jsonl board \
		exit-status live/ticks summary.json; do
		for k in dangling link fifo; do
			cp -a "$out" saved
			plant "$k" "$out/$f"
			run --separate-stderr timeout 60 make -C proj -B corral-run
			refused "$k" "$out/$f"
			rm -rf "$out" && mv saved "$out"
		done
	done
	assert_equal 2 "$(ran_count)"
}

@test "lock: corral-fix's sweep of old scratch directories opens no lock planted there as a FIFO or a link: it goes on and ends" {
	_corral_tmpdir
	mkdir -p t "$TMPDIR/corral-fix.AAAAAA" "$TMPDIR/corral-fix.BBBBBB"
	mkfifo "$TMPDIR/corral-fix.AAAAAA/lock"
	echo marker > marker
	ln -s "$PWD/marker" "$TMPDIR/corral-fix.BBBBBB/lock"
	: > "$TMPDIR/corral-fix.AAAAAA/.corral-clone"
	: > "$TMPDIR/corral-fix.BBBBBB/.corral-clone"
	echo clean > t/f
	run --separate-stderr timeout 60 corral-fix t
	[ "$status" -ne 124 ] || flunk "corral-fix hung on a FIFO"
	assert_equal 0 "$status"
	assert_equal marker "$(cat marker)"
}

@test "lock: a message naming a CORRAL_OUT whose name holds OSC, clear screen, CR, C0, DEL, C1 and invalid UTF-8 prints none of those bytes" {
	local out="o$HOSTILE"
	mkdir "$out"
	corral-lock "$out" true
	ln -sf "$PWD/nowhere" "$out/.lock"
	run -2 --separate-stderr timeout 20 corral-lock -w 0 "$out" true
	printf '%s\n' "$stderr" > err
	assert_shown err
	assert_contains "$stderr" "'o?]0;pwned??[2J?X?Y????[31m????/.lock' is a symbolic link"
}
