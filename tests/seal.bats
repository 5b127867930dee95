#!/usr/bin/env bats
# seal.bats -- no unit can change another unit's result: an agent's log is
# out of its units' reach while they run, every finished log is sealed and
# the merge checks the seal, and a killed slice resumes where it stopped,
# trusting its checkpoint only as far as the agent's own seals go.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	_corral_tmpdir
	mkdir -p src
	_corral_ran
}

# A forged record: unit a passed.
FORGED='{"agent_id":"K","unit":"a","ok":true,"note":"PASS: forged","status":"pass","exit":0}'
export FORGED

# units UNIT...: the slice file 'slice' (also the population), one per line
units() {
	printf '%s\n' "$@" > slice
}

# slice CMD: run slice as agent K the way the engine does, into out/
slice() {
	corral-run-slice -C src -w out/work -c "$1" -l out/logs K slice
}

# merged [-s]: merge out/logs (-s: as the engine does)
merged() {
	corral-merge "$@" -u slice -o out out/logs
}

# seals FILE: how many seal lines FILE holds
seals() {
	grep -c '^{"corral_seal":' "$1" || true
}

# --- a unit cannot reach its agent's log ---------------------------------

# The attack: a fails, then evil appends a pass for a to every log file it
# finds, by the path given ($1 of the unit command).
evil_cmd() {
	printf '%s' 'echo "$CORRAL_UNIT" >> "$RAN"
case $CORRAL_UNIT in
a) exit 1 ;;
evil) for f in '"$1"'/agent-*; do
	[ -f "$f" ] && printf "%s\n" "$FORGED" >> "$f"
	done; exit 0 ;;
esac'
}

# not_forged: the merge of the attacked slice (a, evil, b) still has a
# as the failure it was, and only evil and b as passes
not_forged() {
	run -1 --separate-stderr merged
	run -0 jq -c 'select(.unit == "a") | [.ok, .note]' out/failures.jsonl
	assert_output '[false,"FAIL: exit 1"]'
	run -0 jq -r .unit out/successes.jsonl
	assert_output "$(printf 'evil\nb')"
}

@test "seal: a unit appending a forged pass for an earlier failed unit to the logs found by a relative path cannot turn the failure into a pass" {
	units a evil b
	run -1 slice "$(evil_cmd '"$CORRAL_WORKDIR"/../../logs')"
	not_forged
	assert_equal 1 "$(seals out/logs/agent-K.jsonl)"
}

@test "seal: a unit that finds the logs by an absolute path, from its agent's command line and working directory, cannot turn a failure into a pass" {
	units a evil b
	# The agent is the parent of the unit's shell: its -l LOGDIR, made
	# absolute through its /proc cwd, is where its log would be.
	local find_logs='$(d=$(tr "\0" "\n" < /proc/$PPID/cmdline | sed -n "/^-l$/{n;p;q}"); readlink -f "/proc/$PPID/cwd/$d")'
	run -1 slice "$(evil_cmd "$find_logs")"
	not_forged
}

# --- the merge checks every seal -------------------------------------------

# sealed_ab: out/logs/agent-K.jsonl, the sealed log of a slice where a
# failed and b passed
sealed_ab() {
	units a b
	run -1 slice 'test "$CORRAL_UNIT" != a'
}

# both_not_run: the merge counts a and b as not run
both_not_run() {
	run -0 jq -r .status out/failures.jsonl
	assert_output "$(printf 'not-run\nnot-run')"
}

@test "seal: a log edited after its seal is named by the merge and refused; its units count as not run, exit 2" {
	sealed_ab
	sed -i '1s/"ok":false/"ok":true/' out/logs/agent-K.jsonl
	run -2 --separate-stderr merged -s
	assert_equal "${stderr_lines[0]}" "corral-merge: 'out/logs/agent-K.jsonl' line 3: changed after it was sealed (this seal does not match the lines before it); refused"
	assert_contains "$stderr" "corral-merge: unit 'a' is missing: the log of agent 'K' is refused: its seal does not hold"
	assert_output "merged 0 units from 0 agents: 0 passed, 0 failed, 2 not run; 1 log refused"
	run -0 jq -r '[.unit, .status, .note] | @tsv' out/failures.jsonl
	assert_output "$(printf '%s\t%s\t%s\n' a not-run "NOT-RUN: the log of agent 'K' is refused: its seal does not hold" b not-run "NOT-RUN: the log of agent 'K' is refused: its seal does not hold")"
}

@test "seal: a line appended after a log's seal is named by the merge, also without -s, and the log refused" {
	sealed_ab
	printf '%s\n' "$FORGED" >> out/logs/agent-K.jsonl
	run -2 --separate-stderr corral-merge -u slice -o out out/logs
	assert_equal "${stderr_lines[0]}" "corral-merge: 'out/logs/agent-K.jsonl' line 4: changed after it was sealed (a line after its seal); refused"
	both_not_run
	run -0 jq -s length out/successes.jsonl
	assert_output 0
}

@test "seal: with -s, as the engine merges, a log whose seal was removed is named and refused" {
	sealed_ab
	sed -i '$d' out/logs/agent-K.jsonl
	run -2 --separate-stderr merged -s
	assert_equal "${stderr_lines[0]}" "corral-merge: 'out/logs/agent-K.jsonl' has no seal; refused"
	both_not_run
}

@test "seal: the finished log ends in one seal of its record count and the SHA-256 of the lines before it" {
	units a b c
	run -1 slice 'test "$CORRAL_UNIT" != b'
	local sum
	sum=$(head -n -1 out/logs/agent-K.jsonl | sha256sum | cut -d' ' -f1)
	run -0 tail -n 1 out/logs/agent-K.jsonl
	assert_output "{\"corral_seal\":{\"records\":3,\"sha256\":\"$sum\"}}"
	assert_equal 1 "$(seals out/logs/agent-K.jsonl)"
	# jq readers see it as an object with no unit
	run -0 jq -r '.unit // "seal"' out/logs/agent-K.jsonl
	assert_output "$(printf 'a\nb\nc\nseal')"
}

@test "seal: while units run, no name in the log directory leads to the file the log is written to" {
	units a
	run -0 slice 'ls -i "$CORRAL_WORKDIR"/../../logs > "$RAN.ls"; ls -l /proc/$PPID/fd > "$RAN.fd"'
	# the agent holds its log open as a deleted (unnamed) file
	run -0 grep -c "out/logs/#[0-9]* (deleted)" "$RAN.fd"
	assert_output 1
	run -0 awk '{print $2}' "$RAN.ls"
	assert_output "$(printf 'agent-K\nagent-K.jsonl.part')"
}

# --- a killed slice resumes --------------------------------------------------

# Each unit notes that it ran; unit 'stop' kills its agent once (the
# file $RAN.killed says it did) while the units before it are sealed.
RESUME_CMD='echo "$CORRAL_UNIT" >> "$RAN"
case $CORRAL_UNIT in
f*) exit 1 ;;
stop) [ -e "$RAN.killed" ] || { touch "$RAN.killed"; kill -9 $PPID; sleep 5; } ;;
esac'

# killed_slice CMD: the slice run with CMD (RESUME_CMD's kind) is killed
# at 'stop'; RAN is emptied for the run that resumes it
killed_slice() {
	run -137 slice "$1"
	: > "$RAN"
}

# ran_again UNIT...: the units the resumed run ran, in order, are UNIT...
ran_again() {
	run -0 cat "$RAN"
	assert_output "$(printf '%s\n' "$@")"
}

@test "seal: a slice killed by SIGKILL resumes at the unit it stopped at: no finished unit runs again" {
	units p1 f2 p3 stop p5 p6
	killed_slice "$RESUME_CMD"
	assert_no_file out/logs/agent-K.jsonl
	assert_equal 3 "$(seals out/logs/agent-K.jsonl.part)"
	run -1 --separate-stderr slice "$RESUME_CMD"
	assert_stderr "corral-run-slice: resuming after 3 of 6 units from 'out/logs/agent-K.jsonl.part'"
	ran_again stop p5 p6
	run -0 jq -r '[.unit, .status] | @tsv' <(records out/logs/agent-K.jsonl)
	assert_output "$(printf '%s\t%s\n' p1 pass f2 fail p3 pass stop pass p5 pass p6 pass)"
	assert_no_file out/logs/agent-K.jsonl.part
	run -1 --separate-stderr merged -s
	assert_output "merged 6 units from 1 agent: 5 passed, 1 failed"
}

@test "seal: a resumed slice detects a line another process added to its checkpoint and runs again from there" {
	units p1 a p3 stop p5
	local cmd='case $CORRAL_UNIT in a) exit 1 ;;
p3) printf "%s\n" "$FORGED" >> "$CORRAL_WORKDIR"/../../logs/agent-K.jsonl.part ;; esac
'"$RESUME_CMD"
	killed_slice "$cmd"
	run -1 --separate-stderr slice "$cmd"
	assert_stderr "corral-run-slice: resuming after 2 of 5 units from 'out/logs/agent-K.jsonl.part'; 'out/logs/agent-K.jsonl.part' line 7: the seal does not match lines 5 to 6, so one of them is not this agent's; ignored from line 5"
	ran_again p3 stop p5
	run -0 jq -r '[.unit, .ok] | @tsv' <(records out/logs/agent-K.jsonl)
	assert_output "$(printf '%s\t%s\n' p1 true a false p3 true stop true p5 true)"
	run -1 --separate-stderr merged -s
}

@test "seal: a checkpoint of other units or other inputs is not resumed; every unit runs" {
	units p1 p2 stop p4
	killed_slice "$RESUME_CMD"
	units p1 other stop p4
	run -0 --separate-stderr slice "$RESUME_CMD"
	assert_stderr "corral-run-slice: 'out/logs/agent-K.jsonl.part' is not of this slice, its agent or its inputs; running every unit"
	ran_again p1 other stop p4
}

@test "seal: through corral.mk a re-run after kill -9 of an agent runs again only the unit it was running" {
	mkdir -p proj
	printf '%s\n' $(seq -f 'k%02g' 1 12) > proj/units.txt
	cat > proj/Makefile <<'EOF'
CORRAL_UNITS_FILE = units.txt
CORRAL_CMD = printf '%s\n' "$$CORRAL_UNIT" >> "$$RAN"; if [ "$$CORRAL_UNIT" = k06 ] && [ ! -e "$$RAN.killed" ]; then touch "$$RAN.killed"; kill -9 $$PPID; sleep 5; fi
include $(CORRAL_ROOT)/corral.mk
EOF
	run -2 make -C proj -j3 corral-run CORRAL_AGENTS=3 CORRAL_ROOT="$CORRAL_ROOT"
	run -0 make -C proj -j3 corral-run CORRAL_AGENTS=3 CORRAL_ROOT="$CORRAL_ROOT"
	assert_json '.successes == 12 and .failures == 0 and .missing == 0' proj/.corral/summary.json
	run -0 sort "$RAN"
	assert_equal "$( (seq -f 'k%02g' 1 12; echo k06) | sort)" "$output"
}
