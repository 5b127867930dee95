#!/usr/bin/env bats
# faults.bats -- the fault suite: kill, starve and race corral where it
# hurts, and check every time that the result is the complete old one or a
# complete new one, never a mix, and that a run afterwards completes every
# unit exactly once.
#
# Kill points and fill levels are drawn from a seed, printed with each
# test; FAULTS_SEED=N make test TESTS=tests/faults.bats replays them (the
# timing of a kill still varies a little from machine to machine).
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	SEED=${FAULTS_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
	RANDOM=$SEED
	echo "# seed $SEED (replay: FAULTS_SEED=$SEED)" >&3
	VICTIM=
	MNT=
}

teardown() {
	[ -z "$VICTIM" ] || kill -KILL -- "-$VICTIM" 2>/dev/null ||
		kill -KILL "$VICTIM" 2>/dev/null || true
	[ -z "$MNT" ] || ! mountpoint -q "$MNT" || umount -l "$MNT"
}

# say TEXT: a line of the test's own story (shown when it fails)
say() { printf '# seed %s: %s\n' "$SEED" "$*" >&2; }
# tell TEXT: a line for the suite's output, failing or not
tell() { printf '#   %s\n' "$*" >&3; }

# rand LO HI: a number from the seed, LO <= n <= HI
rand() { echo $(($1 + (RANDOM * 32768 + RANDOM) % ($2 - $1 + 1))); }

# --- the result, as a reader of it sees it --------------------------------

# logical DIR FILE: the file that holds DIR's FILE as the result stands.  A
# merge killed after its commit record names the temporaries that are
# decided but not yet renamed; the next merge renames them.
logical() {
	local t
	if [ -f "$1/.merge.commit" ]; then
		while IFS= read -r t; do
			case $t in ".$2.tmp."*)
				[ ! -f "$1/$t" ] || { echo "$1/$t"; return; } ;;
			esac
		done < "$1/.merge.commit"
	fi
	echo "$1/$2"
}

RESULT_FILES="successes.jsonl failures.jsonl summary.json"

# save_result DIR TO: keep a copy of DIR's result set in TO
save_result() {
	local f
	rm -rf "$2" && mkdir -p "$2" || return 1
	for f in $RESULT_FILES; do cp "$(logical "$1" "$f")" "$2/$f" || return 1; done
}

# same_result DIR REF: DIR's result set is byte for byte the one in REF
same_result() {
	local f
	for f in $RESULT_FILES; do
		cmp -s "$(logical "$1" "$f")" "$2/$f" || return 1
	done
}

# unit_number UNIT: u0042 -> 42 (in jq: the same)
JQ_NUM='(.unit | ltrimstr("u") | tonumber)'

# check_result DIR POP RUN MOD RUNS [NOTRUN]: DIR's result set is one
# complete generation of run RUN over the population in file POP: every
# unit exactly once across both files, the summary's counts those of the
# files, every record from one of the runs in the JSON array RUNS, and
# every outcome that of the units of this generation (u<n> fails when MOD
# divides n).  NOTRUN=1 allows not-run records (a run that was cut
# short), each counted as missing.  Prints what is wrong, returns 1.
check_result() {
	local d=$1 pop=$2 s f sum got want n ns nf
	s=$(logical "$d" successes.jsonl)
	f=$(logical "$d" failures.jsonl)
	sum=$(logical "$d" summary.json)
	[ -f "$s" ] && [ -f "$f" ] && [ -f "$sum" ] ||
		{ echo "result files missing in $d"; return 1; }
	got=$(jq -r .unit "$s" "$f" | LC_ALL=C sort) ||
		{ echo "result files are not JSON Lines"; return 1; }
	want=$(LC_ALL=C sort "$pop")
	[ "$got" = "$want" ] || {
		echo "not every unit exactly once:"
		diff <(echo "$want") <(echo "$got") | grep '^[<>]' | head -5
		return 1
	}
	n=$(wc -l < "$pop") ns=$(wc -l < "$s") nf=$(wc -l < "$f")
	jq -e --arg run "$3" --argjson n "$n" --argjson s "$ns" \
		--argjson f "$nf" '.run == $run and .units == $n and
		.merged + .missing == $n and .successes == $s and .failures == $f and
		.duplicates == 0 and .unexpected == 0' "$sum" >/dev/null ||
		{ echo "summary disagrees (run $3, $n units, $ns + $nf): $(jq -c . "$sum")"; return 1; }
	got=$(jq -c --argjson mod "$4" --argjson runs "$5" \
		--argjson notrun "${6:-0}" --arg file successes "select(
		(.run as \$r | \$runs | index(\$r)) == null or
		(if .status == \"not-run\" then \$notrun == 0
		 else ($JQ_NUM % \$mod == 0) == .ok end)) |
		{unit, ok, status, run}" "$s" "$f" | head -3)
	[ -z "$got" ] || { echo "records of another generation: $got"; return 1; }
	got=$(jq -c 'select(.ok != true) | {unit, ok, status, run}' "$s" | head -2)
	[ -z "$got" ] || { echo "a failure in successes.jsonl: $got"; return 1; }
	got=$(jq -c 'select(.ok != false) | {unit, ok, status, run}' "$f" | head -2)
	[ -z "$got" ] || { echo "a success in failures.jsonl: $got"; return 1; }
	jq -e --argjson m "$(jq -c 'select(.status == "not-run")' "$f" | wc -l)" \
		'.missing == $m' "$sum" >/dev/null ||
		{ echo "summary's missing is not the not-run count: $(jq -c . "$sum")"; return 1; }
	return 0
}

# --- a merge killed at random points ---------------------------------------

# merge_set DIR TAG MOD N K: K logs of N records in all (u1..uN), tagged
# with run TAG, u<n> failing when MOD divides n, each with a long note
merge_set() {
	mkdir -p "$1"
	local k
	for k in $(seq 0 $(($5 - 1))); do
		awk -v k="$k" -v K="$5" -v tag="$2" -v mod="$3" -v n="$4" 'BEGIN {
			for (i = k + 1; i <= n; i += K)
				printf "{\"agent_id\":\"%d\",\"unit\":\"u%d\",\"ok\":%s,\"note\":\"%s %d %s\",\"status\":\"%s\",\"run\":\"%s\"}\n",
					k, i, (i % mod ? "true" : "false"), tag, i,
					"padding padding padding padding padding padding",
					(i % mod ? "pass" : "fail"), tag
		}' > "$1/agent-$k.jsonl"
	done
}

@test "faults: SIGKILL at 30 or more random points of a merge of 24,000 records over 40 logs (until 3 land mid-way) leaves the complete old or new set, and the next merge completes every unit exactly once" {
	local n=24000 pop=$PWD/pop
	seq -f 'u%g' 1 "$n" > "$pop"
	merge_set A A 3 "$n" 40
	merge_set B B 5 "$n" 40
	run -1 corral-merge -q -u "$pop" -r A -o refA A
	run -1 corral-merge -q -u "$pop" -r B -o refB B
	run -0 check_result refA "$pop" A 3 '["A"]'
	run -0 check_result refB "$pop" B 5 '["B"]'
	local t0 t1 dur=0 point=0 at got old=0 new=0 mid=0
	# the shortest of three, the files cached: a first read can take
	# twice as long, and the kills then miss the merge
	for at in 1 2 3; do
		t0=$(date +%s%N)
		corral-merge -q -u "$pop" -r B -o "timing$at" B || true
		t1=$(date +%s%N)
		[ "$dur" -gt 0 ] && [ "$dur" -le $(((t1 - t0) / 1000)) ] ||
			dur=$(((t1 - t0) / 1000))	# microseconds
	done
	say "a merge takes ${dur}us"
	# A kill lands mid-way (temporaries written, no commit yet) in about
	# half the points; more are drawn, up to 90, until 3 have.
	while [ "$point" -lt 30 ] || { [ "$mid" -lt 3 ] && [ "$point" -lt 90 ]; }; do
		point=$((point + 1))
		rm -rf out
		run -1 corral-merge -q -u "$pop" -r A -o out A
		at=$(rand 0 $((dur * 11 / 10)))
		corral-merge -q -u "$pop" -r B -o out B 2>/dev/null 3>&- &
		VICTIM=$!
		sleep "$(printf '0.%06d' "$at")"
		kill -KILL "$VICTIM" 2>/dev/null || true
		wait "$VICTIM" 2>/dev/null || true
		VICTIM=
		[ -z "$(find out -maxdepth 1 -name '.*.tmp.*')" ] || mid=$((mid + 1))
		if same_result out refA; then
			old=$((old + 1))
		elif same_result out refB; then
			new=$((new + 1))
		else
			got=$(check_result out "$pop" B 5 '["B"]') ||
				flunk "point $point (${at}us): neither the old nor the new set: $got"
			flunk "point $point (${at}us): a complete set that is not the new one's bytes"
		fi
		# the next merge finishes a decided commit, cleans up, completes
		run -1 --separate-stderr corral-merge -q -u "$pop" -r B -o out B
		same_result out refB || flunk "point $point (${at}us): the merge after the kill: $(check_result out "$pop" B 5 '["B"]')"
		assert_no_file out/.merge.commit
		[ -z "$(find out -maxdepth 1 -name '.*.tmp.*')" ] ||
			flunk "point $point: temporaries left"
		jq -e . out/history.jsonl >/dev/null ||
			flunk "point $point: history.jsonl is not JSON"
	done
	tell "kills that left the old set $old, the new $new, temporaries $mid, of $point"
	[ "$mid" -ge 3 ] || flunk "only $mid of $point kills caught a merge mid-way"
}

# --- an apply killed at every change it makes --------------------------------

# apply_trees: old/, a tree of files (one executable, one in a/b/, one
# kept as it is, one to delete, an empty directory), new/, what a bundle
# B turns it into (three files changed, one deleted, two added, one in
# the new directories n/m/), and FROOT, where the apply runs, as a
# physical path
apply_trees() {
	mkdir -p old/a/b old/e
	printf 'top\n' > old/top.txt
	printf 'keep\n' > old/keep.txt
	printf '#!/bin/sh\necho old\n' > old/run.sh && chmod 755 old/run.sh
	printf 'gone\n' > old/gone.txt
	printf 'deep\n' > old/a/b/deep.txt
	printf 'other\n' > old/a/other.txt
	find old -exec touch -h -d '2001-02-03 04:05:06.789' {} +
	cp -a old new
	printf 'top, fixed\n' > new/top.txt
	printf '#!/bin/sh\necho new\n' > new/run.sh
	printf 'deep, fixed\n' > new/a/b/deep.txt
	rm new/gone.txt
	printf 'added\n' > new/a/added.txt
	mkdir -p new/n/m && printf 'new\n' > new/n/m/new.txt
	bundle_of old new B
	mkdir -p root
	FROOT=$(cd root && pwd -P)
	fault_lib
}

# shape DIR: every path, mode and link under DIR, and every file's bytes
# (not times)
shape() {
	(cd "$1" && find . -printf '%p %M %l\n' | LC_ALL=C sort &&
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum)
}

# listing DIR: every path, mode and mtime under DIR (to show a difference)
listing() {
	(cd "$1" && find . -printf '%p %M %T@\n' | LC_ALL=C sort)
}

# killed_at K CMD...: CMD under fault.so in FROOT, SIGKILLed just before
# its Kth change there; fails unless the kill landed
killed_at() {
	local k=$1 rc
	shift
	# (in a subshell of its own, whose notice "Killed" goes nowhere)
	rc=$( (env LD_PRELOAD="$FAULT_LIB" FAULT_ROOT="$FROOT" \
		FAULT_KILL_AT="$k" "$@" > /dev/null 2>&1; echo $?) 2>/dev/null)
	[ "$rc" -eq 137 ] || { echo "kill point $k: $* exited $rc, not killed"; return 1; }
}

# changes CMD...: how many changes CMD makes in FROOT, each logged in
# the file changes.log ("N CALL PATH")
changes() {
	rm -f changes.log
	env LD_PRELOAD="$FAULT_LIB" FAULT_ROOT="$FROOT" FAULT_COUNT="$PWD/count" \
		FAULT_LOG="$PWD/changes.log" "$@" > /dev/null 2>&1 || return 1
	cat count
}

# between_dir_and_time K: whether change K (of changes.log) is the
# utimensat that gives ROOT back its mtime right after ROOT/.corral-fix
# was made or removed.  A kill there leaves ROOT's own mtime moved, and
# nothing can record the old one first: the journal lives in that
# directory (corral-fix(1) says so).
between_dir_and_time() {
	[ "$(sed -n "${1}p" changes.log | cut -d' ' -f2-)" = "utimensat $FROOT" ] &&
		sed -n "$(($1 - 1))p" changes.log | cut -d' ' -f2- |
		grep -qxE "(mkdir|rmdir) $FROOT/\.corral-fix"
}

# as_was DIR K: DIR is old/ in every path, byte, mode and mtime, but for
# DIR's own mtime when K is between_dir_and_time
as_was() {
	if between_dir_and_time "$2"; then
		[ "$(listing old | sed 1d; shape old)" = "$(listing "$1" | sed 1d; shape "$1")" ]
	else
		[ "$(tree_digest "$1")" = "$want" ]
	fi
}

@test "faults: SIGKILL before each change corral-bundle apply -a makes under ROOT (writes, syncs, renames, a delete, new directories), then corral-fix -R: ROOT is as it was in every byte, mode and mtime with no file more, or, killed after the commit, as the bundle makes it" {
	[ -z "${CORRAL_TEST_WRAPPER:-}" ] || skip "one run per kill point: too slow under valgrind"
	apply_trees
	local k total old=0 new=0 want
	want=$(tree_digest old)
	rm -rf root && cp -a old root
	total=$(changes corral-bundle apply -a B root) || flunk "the apply failed"
	[ "$(shape root)" = "$(shape new)" ] || flunk "the apply does not make new/"
	say "the apply makes $total changes"
	for k in $(seq 1 "$total"); do
		rm -rf root && cp -a old root
		killed_at "$k" corral-bundle apply -a B root || flunk "$(killed_at "$k" corral-bundle apply -a B root)"
		run -0 --separate-stderr corral-fix -R root
		if as_was root "$k"; then
			old=$((old + 1))
		elif [ "$(shape root)" = "$(shape new)" ]; then
			new=$((new + 1))
		else
			flunk "kill point $k of $total: after -R ($output), root is neither old nor new:" \
				"$(diff <(listing old) <(listing root))"
		fi
	done
	tell "of $total kill points, $old left the old tree after -R, $new the new (killed after the commit)"
	[ "$old" -gt $((total / 2)) ] || flunk "only $old of $total kill points were rolled back"
}

@test "faults: SIGKILL before each change corral-fix -R makes while it rolls back an apply killed half way, then -R again: ROOT is as it was in every byte, mode and mtime, with no file more" {
	[ -z "${CORRAL_TEST_WRAPPER:-}" ] || skip "one run per kill point: too slow under valgrind"
	apply_trees
	local k m total want
	want=$(tree_digest old)
	rm -rf root && cp -a old root
	total=$(changes corral-bundle apply -a B root) || flunk "the apply failed"
	# the last kill point before the commit: every file replaced
	for k in $(seq "$total" -1 1); do
		rm -rf root && cp -a old root
		run killed_at "$k" corral-bundle apply -a B root
		[ -f root/.corral-fix/journal.json ] && break
	done
	rm -rf half && cp -a root half
	m=$(changes corral-fix -R root) || flunk "-R failed"
	[ "$(tree_digest root)" = "$want" ] || flunk "-R did not restore root"
	say "the apply killed at $k of $total; its roll-back makes $m changes"
	for k in $(seq 1 "$m"); do
		rm -rf root && cp -a half root
		killed_at "$k" corral-fix -R root || flunk "$(killed_at "$k" corral-fix -R root)"
		run -0 --separate-stderr corral-fix -R root
		as_was root "$k" ||
			flunk "-R killed at $k of $m, then -R ($output): root is not as it was:" \
				"$(diff <(listing old) <(listing root))"
	done
}

# --- a project under corral.mk ------------------------------------------------

# fproject N [MAKEFILE LINES...]: a project of units u001..uN (in the file
# pop).  CORRAL_CMD runs unit.sh with the make variable MOD: u<n> fails
# when MOD divides n, after a nap of 0-40 ms, printing PAD bytes (from
# the environment) first, and writing "RUN UNIT" to the file $RAN if set.  Changing MOD changes CORRAL_CMD, so every
# slice runs again.
fproject() {
	local n=$1
	shift
	mkdir -p proj
	seq -f 'u%03g' 1 "$n" > pop
	cp pop proj/units.txt
	cat > unit.sh <<'UNIT'
#!/bin/sh
n=$(expr "$CORRAL_UNIT" : 'u0*\([0-9]*\)')
[ -z "${RAN:-}" ] || printf '%s %s\n' "$CORRAL_RUN" "$CORRAL_UNIT" >> "$RAN"
[ -z "${PAD:-}" ] || head -c "$PAD" /dev/zero | tr '\0' x
sleep "0.0$((n * 7 % 5))"
[ $((n % $1)) -ne 0 ]
UNIT
	{
		echo 'CORRAL_UNITS_FILE = units.txt'
		echo "CORRAL_CMD = sh $PWD/unit.sh \$(MOD)"
		printf '%s\n' "$@"
		echo "include $CORRAL_ROOT/corral.mk"
	} > proj/Makefile
}

# procs_under DIR: the pids of processes whose working directory is DIR
# or below it (the sub-make, agents, watchdogs and units of a project)
procs_under() {
	find /proc -mindepth 2 -maxdepth 2 -name cwd \( -lname "$1" -o \
		-lname "$1/*" \) 2>/dev/null | cut -d/ -f3
}

# settle DIR: wait (10 s at most) until no process works under DIR; fail
# naming what is left
settle() {
	local end=$((SECONDS + 10)) left
	while left=$(procs_under "$1") && [ -n "$left" ] &&
		[ "$SECONDS" -lt "$end" ]; do
		sleep 0.05
	done
	[ -z "$left" ] && return 0
	ps -o pid,pgid,args -p "$(echo $left | tr ' ' ,)" >&2 || true
	kill -KILL $left 2>/dev/null || true
	flunk "processes left running under $1: $left"
}

# no_leftovers OUT: no unfinished log, commit record or temporary of a
# merge in OUT
no_leftovers() {
	local left
	left=$(find "$1" -name '*.part' -o -name .merge.commit -o -maxdepth 1 \
		-name '.*.tmp.*')
	[ -z "$left" ] || flunk "left in $1: $left"
}

@test "faults: SIGKILL of make's whole process group at random points of make -j4 corral-run leaves the old or a complete new result; a re-run completes every unit exactly once" {
	fproject 40
	local out=proj/.corral round mod=3 prev=first t0 dur at got old=0 new=0 b
	run -2 make -C proj -j4 corral-run MOD=3 CORRAL_RUN=first
	run -0 check_result "$out" pop first 3 '["first"]'
	t0=$(date +%s%N)
	make -C proj -B -j4 corral-run MOD=7 CORRAL_RUN=timing >/dev/null 2>&1 || true
	dur=$((($(date +%s%N) - t0) / 1000000))	# ms
	run -2 make -C proj -j4 corral-run MOD=3 CORRAL_RUN=first
	say "a run takes ${dur}ms"
	for round in $(seq 1 8); do
		save_result "$out" old
		# a new generation: MOD changes CORRAL_CMD (-B here would also
		# plan again, and a plan killed half-way is not yet safe)
		mod=$((mod == 3 ? 5 : 3))
		b=${FAULTS_B:-}
		at=$(rand 0 $((dur * 11 / 10)))
		setsid make -C proj $b -j4 corral-run MOD=$mod CORRAL_RUN=new$round \
			>/dev/null 2>&1 3>&- &
		VICTIM=$!
		sleep "$(awk -v ms="$at" 'BEGIN { printf "%.3f", ms / 1000 }')"
		kill -KILL -- "-$VICTIM" 2>/dev/null || true
		wait "$VICTIM" 2>/dev/null || true
		VICTIM=
		settle "$PWD/proj"
		if same_result "$out" old; then
			old=$((old + 1))
		else
			got=$(check_result "$out" pop "new$round" $mod "[\"new$round\"]") ||
				flunk "round $round ($b, kill at ${at}ms): neither the old result nor a complete new one: $got"
			new=$((new + 1))
		fi
		run make -C proj -j4 corral-run MOD=$mod CORRAL_RUN=re$round
		got=$(check_result "$out" pop "re$round" $mod "[\"new$round\",\"re$round\"]") ||
			flunk "round $round ($b, kill at ${at}ms): the re-run: $got" \
				"its output (status $status): ${output:0:3000}"
		no_leftovers "$out"
	done
	tell "kills that left the old result $old, a new one $new"
}

# --- a full file system ----------------------------------------------------------

# small_fs SIZE: a tmpfs of SIZE mounted at ./small, in MNT
small_fs() {
	local why
	mkdir -p small
	why=$(mount -t tmpfs -o "size=$1" tmpfs "$PWD/small" 2>&1) ||
		skip "mounting a tmpfs was refused: $why"
	MNT=$PWD/small
}

# leave_free BYTES: fill MNT up to BYTES (rounded to pages) left free
leave_free() {
	rm -f "$MNT/filler"
	dd if=/dev/zero of="$MNT/filler" bs=4k 2>/dev/null || true
	truncate -s "-$1" "$MNT/filler"
}

# names_enospc TEXT: TEXT says that space ran out.  dash's echo says only
# "I/O error" when its write fails; make's error line then names the file
# (relative to CORRAL_OUT, where the engine runs, for the engine's own).
names_enospc() {
	case $1 in
	*"No space left on device"*) return 0 ;;
	*"I/O error"*"*** ["*": $MNT/"*"] Error"*) return 0 ;;
	*"I/O error"*"*** ["*"/mk/engine.mk:"*"] Error"*) return 0 ;;
	esac
	flunk "-- no error names the full file system --" "stderr : ${1:0:2000}" "--"
}

@test "faults: a full file system under CORRAL_OUT, filled so that agents or the merge run out at varied points, leaves the old result or a complete new one and names ENOSPC; once space is freed a re-run completes every unit exactly once" {
	# 2m: what a run keeps (logs, the local result cache with its output
	# tails) fits with room; leave_free sets what is free each round
	small_fs 2m
	fproject 24 "CORRAL_OUT = $MNT/out"
	local out=$MNT/out round mod=3 pad=2000 free got st what runs
	local starved=0 old=0 new=0 merges=0
	PAD=$pad run -2 make -C proj -j3 corral-run MOD=3 CORRAL_RUN=first
	run -0 check_result "$out" pop first 3 '["first"]'
	runs='"first"'
	for round in $(seq 1 12); do
		save_result "$out" old
		if [ $((round % 3)) -eq 0 ]; then
			# the merge alone: its temporaries, then history
			free=$(rand 0 $((round == 3 ? 3000 : 12000)))
			what="corral-merge, $free bytes free"
		else
			# a new generation; agents and the merge: from nothing free
			# to about what a run needs, a band a round
			mod=$((mod == 3 ? 5 : 3)) runs=
			pad=$(rand 4000 16000)
			free=$(rand $(((round - 1) * 4000)) $((round * 4000)))
			what="corral-run, $free bytes free, $pad bytes of output a unit"
		fi
		leave_free "$free"
		if [ -z "$runs" ]; then
			PAD=$pad run --separate-stderr make -C proj -j3 corral-run \
				MOD=$mod CORRAL_RUN=new$round
			runs="\"new$round\""
		else
			run --separate-stderr make -C proj corral-merge MOD=$mod \
				CORRAL_RUN=new$round
		fi
		st=$status
		settle "$PWD/proj"
		local story="round $round ($what, status $st)"
		if same_result "$out" old; then
			old=$((old + 1))
			names_enospc "$stderr" ||
				flunk "$story: the old result stayed, yet no error is named"
		else
			got=$(check_result "$out" pop "new$round" $mod "[$runs]" 1) ||
				flunk "$story: neither the old result nor a complete new one: $got" \
					"stderr: $(grep -v "is missing\|^corral: \[" <<<"$stderr" | head -c 3000)"
			new=$((new + 1))
			if jq -e '.missing > 0' "$(logical "$out" summary.json)" >/dev/null; then
				names_enospc "$stderr" ||
					flunk "$story: units count as not run, yet no error is named"
			fi
		fi
		case $stderr in *"No space left on device"*|*"I/O error"*)
			starved=$((starved + 1))
			case $what in corral-merge*) merges=$((merges + 1)) ;; esac ;;
		esac
		rm -f "$MNT/filler"
		PAD=$pad run make -C proj -j3 corral-run MOD=$mod CORRAL_RUN=re$round
		runs="$runs,\"re$round\""
		got=$(check_result "$out" pop "re$round" $mod "[$runs]") ||
			flunk "$story: the re-run with space: $got" "its output: ${output:0:3000}"
		no_leftovers "$out"
	done
	tell "starved runs $starved of 12 ($merges merges alone): the old result stayed $old times, a new one came $new times"
	[ "$starved" -ge 4 ] || flunk "only $starved of 12 runs ran out of space"
	[ "$merges" -ge 1 ] || flunk "no merge alone ran out of space"
}

# --- units that forge ------------------------------------------------------------

@test "faults: a unit that scans CORRAL_OUT and appends forged passes for the failing units to every agent log it finds never turns a failure into a pass; a re-run completes every unit exactly once" {
	fproject 24 'CORRAL_AGENTS = 3'
	# the forger, one unit, after a nap: for every failure it finds in an
	# agent-* file under CORRAL_OUT, its own agent's log included, it
	# appends a pass to that file
	cat > forge.sh <<'FORGE'
#!/bin/sh
if [ "$CORRAL_UNIT" = "$FORGER" ]; then
	sleep "$FORGER_NAP"
	find "$OUT" -name 'agent-*' -type f | while IFS= read -r f; do
		grep '"ok":false' "$f" | jq -r .unit | while IFS= read -r u; do
			printf '{"agent_id":"%s","unit":"%s","ok":true,"note":"PASS: forged","at":"2999-01-01T00:00:00.000Z","status":"pass","exit":0,"signal":null,"duration_ms":1,"attempt":1,"run":"%s"}\n' \
				"$CORRAL_AGENT" "$u" "$CORRAL_RUN" >> "$f"
			echo "$f $u" >> "$FORGED"
		done
	done
fi
FORGE
	sed -i "s|^CORRAL_CMD = |CORRAL_CMD = sh $PWD/forge.sh; |" proj/Makefile
	export OUT=$PWD/proj/.corral FORGED=$PWD/forged
	local out=proj/.corral round forger got refused=0 tried=0
	run -2 make -C proj -j3 corral-run MOD=3 CORRAL_RUN=first
	for round in $(seq 1 6); do
		forger=$(printf 'u%03d' "$(rand 1 24)")
		: > "$FORGED"
		FORGER=$forger FORGER_NAP=0.$(rand 0 5) run --separate-stderr make -C proj -j3 -B corral-run MOD=3 \
			CORRAL_RUN=forged$round
		local story="round $round (forger $forger, status $status)"
		[ ! -s "$FORGED" ] || tried=$((tried + 1))
		got=$(check_result "$out" pop "forged$round" 3 "[\"forged$round\"]" 1) ||
			flunk "$story: a forged record counted: $got" "stderr: ${stderr:0:2000}"
		if jq -e '.missing > 0' "$out/summary.json" >/dev/null; then
			refused=$((refused + 1))
			assert_contains "$stderr" "seal" ||
				flunk "$story: units count as not run, yet no log is named"
		fi
		run make -C proj -j3 corral-run MOD=3 CORRAL_RUN=after$round
		got=$(check_result "$out" pop "after$round" 3 "[\"forged$round\",\"after$round\"]") ||
			flunk "$story: the run after: $got" "${output:0:2000}"
	done
	tell "rounds with forged lines $tried of 6, with a log refused $refused"
	[ "$tried" -ge 3 ] || flunk "the forger found a failure to forge in only $tried of 6 rounds"
}

# --- runs that overlap ---------------------------------------------------------

# start NAME TARGET...: make TARGET... on the project in a session of its
# own, in the background, after a nap of $NAP ms; output in NAME.out,
# status in NAME.rc; its pid in NAME.pid
start() {
	local name=$1
	shift
	rm -f "$name.rc"
	setsid sh -c 'sleep "$1"; shift; make -C proj "$@" > "$0.out" 2>&1
		echo $? > "$0.rc"' "$name" \
		"$(awk -v ms="$NAP" 'BEGIN { printf "%.3f", ms / 1000 }')" "$@" \
		3>&- &
	echo $! > "$name.pid"
}

# finish NAME: wait (60 s at most) until NAME ended
finish() {
	local end=$((SECONDS + 60))
	while [ ! -s "$1.rc" ] && [ "$SECONDS" -lt "$end" ]; do sleep 0.05; done
	[ -s "$1.rc" ] || {
		kill -KILL -- "-$(cat "$1.pid")" 2>/dev/null
		flunk "'$1' did not end within 60 s: $(tail -5 "$1.out")"
	}
}

# one_generation OUT POP IDS: OUT holds one result generation: complete,
# exactly once, its summary agreeing with its files, every record from
# one of the runs in the JSON array IDS, all successes of one run and all
# failures of one run (the successes' run, or a corral-rerun-failed that
# came after it), never the records of two runs side by side
one_generation() {
	local s f sum runs
	s=$(logical "$1" successes.jsonl)
	f=$(logical "$1" failures.jsonl)
	sum=$(logical "$1" summary.json)
	jq -e --argjson ids "$3" '.run as $r | $ids | index($r) != null' \
		"$sum" >/dev/null || { echo "summary of another run: $(jq -c .run "$sum")"; return 1; }
	check_result "$1" "$2" "$(jq -r .run "$sum")" 3 "$3" || return 1
	runs=$(jq -r .run "$s" | sort -u | tr '\n' ' ')
	[ "$(echo $runs | wc -w)" -le 1 ] || { echo "successes of runs $runs"; return 1; }
	runs=$(jq -r .run "$f" | sort -u | tr '\n' ' ')
	[ "$(echo $runs | wc -w)" -le 1 ] || { echo "failures of runs $runs"; return 1; }
}

# What overlaps: a target, and its option after a colon
OVERLAP_TARGETS="corral-run:-k corral-run:-B corral-merge:-k corral-rerun-failed:-k corral-clean:-k"

@test "faults: 20 pairs of corral-run, -B, corral-merge, corral-rerun-failed and corral-clean started at varied moments on one CORRAL_OUT serialise, or the second refuses with CORRAL_WAIT=0: one generation of one run, then a re-run completes every unit exactly once" {
	# round-robin: every slice holds a failing unit, so every run runs
	# every slice, and a generation is the records of one run (and of a
	# re-run of its failures)
	fproject 16 'CORRAL_SPLIT = roundrobin' 'CORRAL_AGENTS = 4'
	export RAN=$PWD/ran
	local out=proj/.corral round a b ida idb nap wait0 got ids waited=0 refused=0
	local -a targets=($OVERLAP_TARGETS)
	run -2 make -C proj -j4 corral-run MOD=3 CORRAL_RUN=r0
	ids='"r0"'
	for round in $(seq 1 20); do
		: > "$RAN"
		a=${targets[RANDOM % 5]}
		b=${targets[RANDOM % 5]}
		ida=a$round idb=b$round
		NAP=0 start A -j4 ${a#*:} ${a%%:*} MOD=3 CORRAL_RUN=$ida
		nap=$(rand 0 250)
		# one time in four the second does not wait
		wait0=; [ $((RANDOM % 4)) -ne 0 ] || wait0=CORRAL_WAIT=0
		NAP=$nap start B -j4 ${b#*:} ${b%%:*} MOD=3 CORRAL_RUN=$idb $wait0
		local story="round $round: ${a/:/ } and, $nap ms later, ${b/:/ } $wait0"
		finish A
		finish B
		settle "$PWD/proj"
		grep -q 'waiting for the run holding CORRAL_OUT' A.out B.out &&
			waited=$((waited + 1))
		ids="$ids,\"$ida\""
		if grep -q 'not waiting (CORRAL_WAIT=0)' B.out; then
			# refused at once, exit 2, and nothing of it in the result
			[ "$(cat B.rc)" = 2 ] || flunk "$story: refused, yet exit $(cat B.rc)"
			refused=$((refused + 1))
			waited=$((waited + 1))
		else
			ids="$ids,\"$idb\""
		fi
		if [ -e "$out/summary.json" ]; then
			got=$(one_generation "$out" pop "[$ids]") ||
				flunk "$story: $got" "A ($(cat A.rc)): $(tail -5 A.out)" \
					"B ($(cat B.rc)): $(tail -5 B.out)"
		fi
		got=$(sort "$RAN" | uniq -d | head -3)
		[ -z "$got" ] || flunk "$story: units run twice by one run: $got"
		run make -C proj -j4 corral-run MOD=3 CORRAL_RUN=after$round
		got=$(check_result "$out" pop "after$round" 3 "[\"after$round\"]") ||
			flunk "$story: the run after: $got" "${output:0:2000}"
		no_leftovers "$out"
		ids="\"after$round\""
	done
	tell "pairs in which one waited for the other or refused: $waited of 20 ($refused refused)"
	[ "$waited" -ge 3 ] || flunk "only $waited of 20 pairs overlapped"
}

# --- units that detach, units that remove their clone ----------------------------

# misbehave ACTIONS...: a project of 24 units whose CORRAL_CMD first does
# what the file 'acts' (lines "UNIT ACTION") says for its unit, then runs
# unit.sh; ACTIONS are those the rounds draw from
misbehave() {
	fproject 24 'CORRAL_AGENTS = 3'
	cat > act.sh <<'ACT'
#!/bin/sh
# a process that stays: writes its pid to $PIDS, then sleeps a minute
stay='echo $$ >> "$PIDS"; : > "$PIDS.$CORRAL_UNIT"; exec sleep 60'
act=$(sed -n "s/^$CORRAL_UNIT //p" "$ACTS")
case $act in
setsid) setsid -f sh -c "$stay" </dev/null >/dev/null 2>&1 ;;
double-fork)	# out of the unit's process group, then orphaned
	( perl -e 'setpgrp(0, 0); exec @ARGV' sh -c "$stay" \
		</dev/null >/dev/null 2>&1 & ) ;;
nohup)	# under job control: a process group of its own
	sh -c 'set -m; nohup sh -c "$1" </dev/null >/dev/null 2>&1 &' sh "$stay" ;;
remove) cd / && rm -rf "$CORRAL_WORKDIR" ;;
empty) rm -rf ./* ./.[!.]* ;;
replace) cd / && rm -rf "$CORRAL_WORKDIR" && echo gone > "$CORRAL_WORKDIR" ;;
move) cd / && mv "$CORRAL_WORKDIR" "$CORRAL_WORKDIR.moved" ;;
esac
# a detached process is counted once it has said its pid: the unit waits
# for that (5 s at most), or it could be killed before it says it
case $act in setsid|double-fork|nohup)
	i=0
	while [ ! -e "$PIDS.$CORRAL_UNIT" ] && [ $i -lt 100 ]; do
		sleep 0.05; i=$((i + 1))
	done ;;
esac
exit 0
ACT
	sed -i "s|^CORRAL_CMD = |CORRAL_CMD = sh $PWD/act.sh; |" proj/Makefile
	export ACTS=$PWD/acts PIDS=$PWD/pids
}

# draw ACTION...: each unit does one of ACTIONs with odds of 1 in 3
draw() {
	local u acts=("$@")
	: > acts
	while IFS= read -r u; do
		[ $((RANDOM % 3)) -ne 0 ] ||
			echo "$u ${acts[RANDOM % ${#acts[@]}]}" >> acts
	done < pop
	[ -s acts ] || echo "u001 ${acts[0]}" > acts
}

# alive PIDFILE: those of the pids in PIDFILE still running (zombies are gone)
alive() {
	local p
	while IFS= read -r p; do
		[ -r "/proc/$p/stat" ] || continue
		case $(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null) in Z|X|'') ;; *) echo "$p" ;; esac
	done < "$1"
}

@test "faults: units that detach at random (setsid, a double fork out of their group, nohup under job control) leave nothing running once make returns, each counted in its record; the result is complete, and a re-run completes exactly once" {
	misbehave
	local out=proj/.corral round got left n
	for round in $(seq 1 4); do
		draw setsid double-fork nohup
		: > pids && rm -f pids.*
		run make -C proj -j3 -B corral-run MOD=3 CORRAL_RUN=r$round
		left=$(alive pids)
		[ -z "$left" ] || kill -KILL $left 2>/dev/null || true
		local story="round $round ($(tr '\n' ' ' < acts))"
		[ -z "$left" ] || flunk "$story: still running after make returned: $left"
		[ "$(wc -l < pids)" -eq "$(wc -l < acts)" ] ||
			flunk "$story: $(wc -l < pids) processes detached, not $(wc -l < acts)"
		got=$(check_result "$out" pop "r$round" 3 "[\"r$round\"]") ||
			flunk "$story: $got" "${output:0:2000}"
		n=$(jq -s '[.[] | select((.stray // 0) > 0)] | length' \
			"$out/successes.jsonl" "$out/failures.jsonl")
		[ "$n" -eq "$(wc -l < acts)" ] ||
			flunk "$story: $n records count stray processes, not $(wc -l < acts)"
	done
	: > acts
	run make -C proj -j3 corral-run MOD=3 CORRAL_RUN=after
	got=$(check_result "$out" pop after 3 '["r4","after"]') || flunk "the run after: $got"
	settle "$PWD/proj"
}

@test "faults: units that remove, empty, replace or move their clone at random do not change the result of the units after them; a re-run completes exactly once" {
	misbehave
	local out=proj/.corral round got
	for round in $(seq 1 4); do
		draw remove empty replace move
		run make -C proj -j3 -B corral-run MOD=3 CORRAL_RUN=r$round
		local story="round $round ($(tr '\n' ' ' < acts))"
		got=$(check_result "$out" pop "r$round" 3 "[\"r$round\"]") ||
			flunk "$story: $got" "${output:0:2000}"
		settle "$PWD/proj"
	done
	: > acts
	run make -C proj -j3 corral-run MOD=3 CORRAL_RUN=after
	got=$(check_result "$out" pop after 3 '["r4","after"]') || flunk "the run after: $got"
}
