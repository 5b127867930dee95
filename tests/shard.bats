#!/usr/bin/env bats
# shard.bats -- corral-shard and CORRAL_SHARD: which units are this host's,
# the same cut on every host, from K/N or from the engine that started the
# job, and a shard's own directory, manifest and summary.

bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	unset CI_NODE_INDEX CI_NODE_TOTAL CIRCLE_NODE_INDEX CIRCLE_NODE_TOTAL \
		BUILDKITE_PARALLEL_JOB BUILDKITE_PARALLEL_JOB_COUNT \
		SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_MIN SLURM_ARRAY_TASK_MAX \
		SLURM_ARRAY_TASK_COUNT TEST_SHARD_INDEX TEST_TOTAL_SHARDS \
		TEST_SHARD_STATUS_FILE JOB_COMPLETION_INDEX CORRAL_SHARD_TOTAL
	seq -f 'tests/u%02g.sh' 1 30 > pop
}

# project DIR: 12 units, each noting in ./ran that it ran, and its agent
project() {
	mkdir -p "$1/t"
	for i in $(seq -w 1 12); do echo 'exit 0' > "$1/t/u$i.sh"; done
	cat > "$1/Makefile" <<EOF
CORRAL_DISCOVER = ls t/*.sh
CORRAL_CMD = printf '%s %s\\n' "\$\$CORRAL_UNIT" "\$\$CORRAL_AGENT" >> "$PWD/ran"; sh "\$\$CORRAL_UNIT"
CORRAL_AGENTS = 2
include $CORRAL_ROOT/corral.mk
EOF
}

@test "shard: the three shards of a population cover it exactly once, whatever order a host lists it in" {
	for k in 1 2 3; do
		run -0 corral-shard -k $k -n 3 pop
		printf '%s\n' "$output" > a.$k
		run -0 corral-shard -k $k -n 3 <(sort -r pop)
		assert_equal "$(sort a.$k)" "$(printf '%s\n' "$output" | sort)"
	done
	assert_equal "$(sort pop)" "$(cat a.1 a.2 a.3 | sort)"
	assert_equal 30 "$(cat a.1 a.2 a.3 | sort -u | wc -l)"
	for k in 1 2 3; do
		[ "$(wc -l < a.$k)" -eq 10 ] || flunk "shard $k: $(wc -l < a.$k) units"
	done
}

@test "shard: a history weighs the cut only when it is given, and then its digest is the plan's" {
	run -0 corral-shard -k 2 -n 3 pop
	before=$output
	for u in $(cat pop); do
		printf '{"agent_id":"0","unit":"%s","ok":true,"note":"PASS: x","at":"2026-01-01T00:00:00Z","duration_ms":%d}\n' \
			"$u" "$((RANDOM % 900 + 1))"
	done > hist.jsonl
	run -0 corral-shard -H hist.jsonl -k 2 -n 3 -m m1.json pop
	run -0 corral-shard -k 2 -n 3 -m m2.json pop
	assert_equal "$before" "$output"
	[ "$(jq -r .plan m1.json)" != "$(jq -r .plan m2.json)" ] ||
		flunk "the plan does not name the history"
	run -0 corral-shard -H hist.jsonl -k 2 -n 3 -m m3.json <(sort -r pop)
	assert_equal "$(jq -r .plan m1.json)" "$(jq -r .plan m3.json)"
	assert_equal "$(jq -r .population m1.json)" "$(jq -r .population m3.json)"
}

@test "shard: a history that is not there is an error, not a digest cut" {
	run -2 --separate-stderr corral-shard -H nothere.jsonl -k 1 -n 3 pop
	assert_equal "" "$output"
	assert_contains "$stderr" "corral-shard: cannot open 'nothere.jsonl'"
}

@test "shard: -e reads K/N, and 0/3, 4/3, 1/0, x and the like are refused in one line, exit 2" {
	run -0 corral-shard -e 2/3
	assert_output "2 3"
	for v in 0/3 4/3 1/0 x 1/3/4 /3 1/ -1/3 ''; do
		run -2 --separate-stderr corral-shard -e "$v"
		assert_equal "" "$output"
		assert_stderr "corral-shard: CORRAL_SHARD is '$v'; it must be K/N with 1 <= K <= N, or auto"
	done
}

@test "shard: auto takes GitLab's 1-based CI_NODE_INDEX of CI_NODE_TOTAL" {
	CI_NODE_INDEX=3 CI_NODE_TOTAL=3 run -0 corral-shard -e auto
	assert_output "3 3"
}

@test "shard: auto takes CircleCI's 0-based CIRCLE_NODE_INDEX of CIRCLE_NODE_TOTAL" {
	CIRCLE_NODE_INDEX=0 CIRCLE_NODE_TOTAL=4 run -0 corral-shard -e auto
	assert_output "1 4"
}

@test "shard: auto takes Buildkite's 0-based BUILDKITE_PARALLEL_JOB of BUILDKITE_PARALLEL_JOB_COUNT" {
	BUILDKITE_PARALLEL_JOB=2 BUILDKITE_PARALLEL_JOB_COUNT=3 run -0 corral-shard -e auto
	assert_output "3 3"
}

@test "shard: auto takes a Slurm array's SLURM_ARRAY_TASK_ID from SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT, and refuses an array with a step" {
	SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=4 SLURM_ARRAY_TASK_MAX=6 \
		SLURM_ARRAY_TASK_COUNT=3 run -0 corral-shard -e auto
	assert_output "2 3"
	SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=5 \
		SLURM_ARRAY_TASK_COUNT=3 run -2 --separate-stderr corral-shard -e auto
	assert_stderr "corral-shard: CORRAL_SHARD is auto, but the job array 1-5 with 3 tasks has gaps (a step?)"
}

@test "shard: auto takes Bazel's 0-based TEST_SHARD_INDEX of TEST_TOTAL_SHARDS and touches TEST_SHARD_STATUS_FILE" {
	TEST_SHARD_INDEX=1 TEST_TOTAL_SHARDS=2 TEST_SHARD_STATUS_FILE=$PWD/status \
		run -0 corral-shard -e auto
	assert_output "2 2"
	assert_file_exists status
}

@test "shard: auto takes a Kubernetes Indexed Job's JOB_COMPLETION_INDEX, the total from CORRAL_SHARD_TOTAL" {
	JOB_COMPLETION_INDEX=0 run -0 corral-shard -t 2 -e auto
	assert_output "1 2"
	JOB_COMPLETION_INDEX=0 CORRAL_SHARD_TOTAL=3 run -0 corral-shard -e auto
	assert_output "1 3"
	JOB_COMPLETION_INDEX=0 run -2 --separate-stderr corral-shard -e auto
	assert_stderr "corral-shard: CORRAL_SHARD is auto and JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job), but CORRAL_SHARD_TOTAL is not set"
}

@test "shard: auto with an index past the total is refused" {
	CI_NODE_INDEX=4 CI_NODE_TOTAL=3 run -2 --separate-stderr corral-shard -e auto
	assert_stderr "corral-shard: CORRAL_SHARD is auto, but CI_NODE_INDEX is '4' of CI_NODE_TOTAL 3 (GitLab)"
}

@test "shard: auto that finds no engine says so in one line and exits 2" {
	run -2 --separate-stderr corral-shard -e auto
	assert_equal "" "$output"
	assert_stderr "corral-shard: CORRAL_SHARD is auto, but no engine says which shard this is (none of CI_NODE_INDEX, CIRCLE_NODE_INDEX, BUILDKITE_PARALLEL_JOB, SLURM_ARRAY_TASK_ID, TEST_SHARD_INDEX, JOB_COMPLETION_INDEX is set)"
}

@test "shard: the manifest names K, N, the population's count and digest, the plan, the host, the run and the version" {
	run -0 corral-shard -k 2 -n 3 -m m.json -r R1 -s h2 pop
	version=$(corral-shard --version | sed -n '1s/.* //p')
	assert_json '.shard == 2 and .of == 3 and .population_units == 30 and .units == 10 and (.population | test("^[0-9a-f]{64}$")) and (.plan | test("^[0-9a-f]{64}$")) and .host == "h2" and .run == "R1" and .version == "'"$version"'"' m.json
	run -0 corral-shard -k 2 -n 3 -m m2.json pop
	assert_json ".host == \"$(hostname)\" and .run == \"none\"" m2.json
}

@test "shard: the manifest vouches for every sealed log beside it (place, agent, runs, seal), and for no link, unsealed or broken log, each named" {
	mkdir -p d/logs d/rerun/1/logs
	printf 'tests/u01.sh\ntests/u02.sh\n' > slice
	corral-run-slice -r R1 -c true -l d/logs 0.s1 slice
	corral-run-slice -r R2 -c true -l d/rerun/1/logs 0.s1 slice
	seal=$(tail -1 d/logs/agent-0.s1.jsonl | jq -r .corral_seal.sha256)
	head -1 d/logs/agent-0.s1.jsonl > d/logs/agent-1.s1.jsonl
	sed 's/"ok":true/"ok":false/' d/logs/agent-0.s1.jsonl > d/logs/agent-2.s1.jsonl
	ln -s "$PWD/d/logs/agent-0.s1.jsonl" d/logs/agent-3.s1.jsonl
	run -0 --separate-stderr corral-shard -k 1 -n 1 -m d/shard.json -r R2 pop
	assert_json '[.logs[] | [.log, .agent, (.runs | join(",")), .records]] == [["logs/agent-0.s1.jsonl", "0.s1", "R1", 2], ["rerun/1/logs/agent-0.s1.jsonl", "0.s1", "R2", 2]]' d/shard.json
	assert_json '.logs[0].sha256 == "'"$seal"'"' d/shard.json
	assert_contains "$stderr" "'d/logs/agent-1.s1.jsonl' has no seal; the manifest does not vouch for it"
	assert_contains "$stderr" "'d/logs/agent-2.s1.jsonl' changed after it was sealed"
	assert_contains "$stderr" "cannot open 'd/logs/agent-3.s1.jsonl'"
}

@test "corral-mk: CORRAL_SHARD=2/3 runs only shard 2's units, into .corral/shard-2-of-3 with its own lock, and its summary says shard 2/3" {
	project p
	run -0 make -C p -j2 corral-run CORRAL_SHARD=2/3
	assert_contains "$output" "shard 2/3: merged 4 units from 2 agents: 4 passed, 0 failed"
	assert_equal "$(ls p/t | sed 's|^|t/|' | corral-shard -k 2 -n 3 | sort)" \
		"$(cut -d' ' -f1 ran | sort)"
	assert_json '.shard == "2/3" and .units == 4 and .merged == 4' p/.corral/shard-2-of-3/summary.json
	assert_file_exists p/.corral/shard-2-of-3/.lock
	assert_file_exists p/.corral/.corral-out
	assert_json '.shard == 2 and .of == 3 and .population_units == 12 and .units == 4' p/.corral/shard-2-of-3/shard.json
	assert_no_file p/.corral/summary.json
}

@test "corral-mk: a shard's records name their host, and its agents are named after the shard" {
	project p
	run -0 make -C p -j2 corral-run CORRAL_SHARD=3/3 CORRAL_HOST=node-7
	run -0 jq -r '.host + " " + .agent_id' p/.corral/shard-3-of-3/successes.jsonl
	assert_equal "node-7 0.s3
node-7 1.s3" "$(printf '%s\n' "$output" | sort -u)"
	assert_equal "0.s3
1.s3" "$(cut -d' ' -f2 ran | sort -u)"
	assert_json '.host == "node-7"' p/.corral/shard-3-of-3/shard.json
}

@test "corral-mk: a bad CORRAL_SHARD stops make in one line, exit 2, before anything runs" {
	project p
	for v in 0/3 4/3 1/0 x; do
		run -2 --separate-stderr make -C p corral-run CORRAL_SHARD=$v
		assert_contains "$stderr" "corral: CORRAL_SHARD is '$v'; it must be K/N with 1 <= K <= N, or auto.  Stop."
		assert_equal 1 "$(printf '%s\n' "$stderr" | grep -c 'CORRAL_SHARD')"
	done
	assert_no_file p/.corral
	assert_no_file ran
}

@test "corral-mk: CORRAL_SHARD=auto without an engine stops make, exit 2, and never runs the whole suite" {
	project p
	run -2 --separate-stderr make -C p corral-run CORRAL_SHARD=auto
	assert_contains "$stderr" "corral: CORRAL_SHARD is auto, but no engine says which shard this is"
	assert_no_file p/.corral
	assert_no_file ran
}

@test "corral-mk: CORRAL_SHARD=auto in a GitLab parallel job runs the shard CI_NODE_INDEX names" {
	project p
	CI_NODE_INDEX=1 CI_NODE_TOTAL=2 run -0 make -C p corral-run CORRAL_SHARD=auto
	assert_json '.shard == "1/2" and .units == 6' p/.corral/shard-1-of-2/summary.json
}

@test "corral-mk: CORRAL_SHARD=auto under Bazel touches TEST_SHARD_STATUS_FILE; under Kubernetes CORRAL_SHARD_TOTAL gives N" {
	project p
	TEST_SHARD_INDEX=0 TEST_TOTAL_SHARDS=2 TEST_SHARD_STATUS_FILE=$PWD/bazel-status \
		run -0 make -C p corral-run CORRAL_SHARD=auto
	assert_file_exists bazel-status
	assert_file_exists p/.corral/shard-1-of-2/shard.json
	JOB_COMPLETION_INDEX=2 run -0 make -C p corral-run CORRAL_SHARD=auto CORRAL_SHARD_TOTAL=3
	assert_file_exists p/.corral/shard-3-of-3/shard.json
}

@test "corral-mk: nothing under .corral is a unit of a shard, and a shard given CORRAL_OUT writes there" {
	project p
	echo "CORRAL_DISCOVER = find . -name '*.sh' | sed 's|^\./||'" >> p/Makefile
	run -0 make -C p corral-run CORRAL_SHARD=1/9
	touch p/.corral/shard-1-of-9/looks-like-a-unit.sh
	run -0 make -C p corral-run CORRAL_SHARD=1/1
	assert_json '.units == 12' p/.corral/shard-1-of-1/summary.json
	run -0 make -C p corral-run CORRAL_SHARD=1/2 CORRAL_OUT=$PWD/elsewhere
	assert_json '.shard == "1/2"' elsewhere/summary.json
}

@test "corral-mk: a shard's run that is killed leaves no manifest behind" {
	project p
	run -0 make -C p corral-run CORRAL_SHARD=1/2
	assert_file_exists p/.corral/shard-1-of-2/shard.json
	echo "CORRAL_CMD = touch '$PWD/started'; sleep 30" >> p/Makefile
	make -C p corral-run CORRAL_SHARD=1/2 CORRAL_GRACE=0.1 >/dev/null 2>&1 &
	pid=$!
	echo "$pid" >> "$BATS_TEST_TMPDIR/bg.pids"
	for _ in $(seq 300); do [ ! -e started ] || break; sleep 0.1; done
	assert_file_exists started
	kill -TERM "$pid"
	st=0
	wait "$pid" || st=$?
	[ "$st" -ne 0 ] || flunk "the killed run exited 0"
	assert_no_file p/.corral/shard-1-of-2/shard.json
}
