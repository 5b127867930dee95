#!/usr/bin/env bats
# fix.bats -- corral-fix: a repair lands only when the finder agrees it
# removed its target and added nothing; dry run and "corroborated only"
# are the defaults; verified fixes merge in ranked order whatever -j is;
# a combination that regresses, a re-measure that disagrees and a crash
# mid-apply all leave the root byte for byte as it was.  Every test
# checks the bytes on disk, not just the report.  Tests marked [MUTATION]
# are the ones tests/mutation.bats expects a flipped default to break.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	export TMPDIR=$BATS_TEST_TMPDIR
	mkdir -p root
}

USAGE='usage: corral-fix [-aJnT] [-b BUNDLE] [-c CONFIDENCE] [-F FINDINGS] [-f FINDER] [-j JOBS] [-m NOTE] [-p PATCHER] [-t SECONDS] [-w WORKDIR] ROOT
       corral-fix -R ROOT
       corral-fix -d'

MARK='# DEADCANARY: this test cannot fail'

# plant FILE...: put the marker in each file (under root/)
plant() {
	local f
	for f in "$@"; do
		mkdir -p "root/$(dirname "$f")"
		printf '%s (%s)\n' "$MARK" "$f" > "root/$f"
	done
}

# script NAME: an executable sh script NAME, from standard input
script() {
	{ echo '#!/bin/sh'; cat; } > "$1"
	chmod +x "$1"
}

# finding ID LOCATION [CORROBORATION CONFIDENCE TRUST]: one JSON line
finding() {
	printf '{"identity":"%s","location":"%s","corroboration":%s,"max_confidence":%s,"trust":"%s"}\n' \
		"$1" "$2" "${3:-2}" "${4:-0.8}" "${5:-corroborated}"
}

# content DIR: a digest of the paths and bytes under DIR (not times)
content() {
	(cd "$1" && find . -type f -print0 | LC_ALL=C sort -z |
		xargs -0r sha256sum) | sha256sum | cut -d' ' -f1
}

# no_leftovers: no clone, work directory or journal is left anywhere
no_leftovers() {
	assert_no_file root/.corral-fix
	run -0 find "$TMPDIR" -maxdepth 1 -name 'corral-fix.*'
	assert_output ""
}

# not_applied STATUS DETAIL: corral-fix -a -J with ./patcher on root
# exits 1, its first result is STATUS with DETAIL, nothing is applied,
# and root keeps every byte ($output: the JSON report)
not_applied() {
	local before got
	before=$(tree_digest root)
	run -1 --separate-stderr corral-fix -a -J -p "$PWD/patcher" root
	got=$(jq -c '[.results[0].status, .results[0].detail, .applied]' <<<"$output")
	assert_equal "$(jq -cn --arg s "$1" --arg d "$2" '[$s, $d, []]')" "$got"
	assert_equal "$before" "$(tree_digest root)"
}

# pair_finder: ./finder finds the markers, and "pair:a+b" when a.py and
# b.py are both repaired: two fixes that pass alone but not together
pair_finder() {
	script finder <<-'EOF'
	corral-marker-find "$@" || exit 2
	if grep -q real_assert a.py && grep -q real_assert b.py; then
		echo '{"identity":"pair:a+b","location":"a.py","corroboration":2,"max_confidence":0.9,"trust":"corroborated"}'
	fi
	exit 0
	EOF
}

# late_finder: ./finder finds the markers, and "late" once root/a.py
# itself (not a clone's) is repaired: the re-measure after the write
# disagrees
late_finder() {
	script finder <<-EOF
	corral-marker-find "\$@" || exit 2
	grep -q DEADCANARY "$PWD/root/a.py" ||
		echo '{"identity":"late","location":"x","corroboration":2,"max_confidence":0.9,"trust":"corroborated"}'
	exit 0
	EOF
}

# apply_hang_finder: ./finder finds the markers, but once root/a.py itself
# is repaired (corral-fix is applying) it writes its pid to finder.pid
# and hangs
apply_hang_finder() {
	script finder <<-EOF
	if ! grep -q DEADCANARY "$PWD/root/a.py"; then
		echo \$\$ > "$PWD/finder.pid"
		sleep 60
	fi
	exec corral-marker-find "\$@"
	EOF
}

# hang_finder: ./finder writes its pid to hang.pid and hangs
hang_finder() {
	script finder <<-EOF
	echo \$\$ > "$PWD/hang.pid"
	sleep 60
	EOF
}

# detacher NAME: an executable ./NAME that starts a daemon out of its
# process group and session (setsid, then a double fork: the grandchild,
# sleep 1000, is orphaned at once), waits until the daemon has written
# its pid to a new daemon.* file here, then runs corral-marker-NAME
detacher() {
	script "$1" <<-EOF
	f=\$(mktemp "$PWD/daemon.XXXXXX")
	setsid sh -c '(exec sleep 1000 </dev/null >/dev/null 2>&1) & echo \$! > "\$1.tmp" && mv "\$1.tmp" "\$1"' sh "\$f" &
	while [ ! -s "\$f" ]; do sleep 0.01; done
	exec corral-marker-$2 "\$@"
	EOF
}

# daemons_alive: the pids of daemon.* that kill -0 still reaches, each
# then killed (so a failing test leaves nothing running)
daemons_alive() {
	local f p
	for f in daemon.*; do
		p=$(cat "$f")
		if kill -0 "$p" 2>/dev/null; then
			echo "$p"
			kill -KILL "$p" 2>/dev/null || true
		fi
	done
}

# kill_group PIDFILE: kill -9 the process group of the pid in PIDFILE (a
# finder runs in a process group of its own)
kill_group() {
	kill -9 -- "-$(ps -o pgid= -p "$(cat "$1")" | tr -d ' ')"
}

# --- usage ------------------------------------------------------------

@test "fix: -h prints usage to stdout and exits 0" {
	assert_help "$USAGE" corral-fix -h
	assert_help "$USAGE" corral-fix --help
}

@test "fix: no ROOT, or two, prints usage to stderr and exits 2" {
	assert_usage_error "$USAGE" corral-fix
	assert_usage_error "$USAGE" corral-fix root root
}

@test "fix: -a and -n together, or a bad -j, -c or -t, exit 2 and write nothing" {
	plant bad.py
	before=$(tree_digest root)
	run -2 --separate-stderr corral-fix -a -n root
	assert_stderr "corral-fix: -a and -n may not be specified together"
	run -2 --separate-stderr corral-fix -a -j 0 root
	assert_contains "$stderr" "jobs"
	run -2 --separate-stderr corral-fix -a -c 1.5 root
	assert_stderr "corral-fix: confidence '1.5' is not a number in 0..1"
	run -2 --separate-stderr corral-fix -a -t x root
	assert_contains "$stderr" "timeout"
	assert_equal "$before" "$(tree_digest root)"
}

@test "fix: a missing ROOT is named with cannot open and exits 2" {
	run -2 --separate-stderr corral-fix nothere
	assert_output ""
	assert_stderr "corral-fix: cannot open 'nothere': No such file or directory"
}

@test "fix: a write error on standard output exits 2 and writes nothing" {
	plant bad.py
	before=$(tree_digest root)
	run -2 --separate-stderr sh -c 'corral-fix root >/dev/full'
	assert_contains "$stderr" "cannot write standard output"
	assert_equal "$before" "$(tree_digest root)"
}

# --- the original's fixer tests -----------------------------------------

@test "fix: the clone never holds .git, and a change to .git is never applied" {
	plant a.py
	mkdir root/.git
	printf 'ref: refs/heads/main\n' > root/.git/HEAD
	script patcher <<-'EOF'
	[ -e .git/HEAD ] && exit 3
	mkdir -p .git && printf 'evil\n' > .git/HEAD
	exec corral-marker-patch "$@"
	EOF
	run -0 --separate-stderr corral-fix -a -J -p "$PWD/patcher" root
	assert_json '.applied == ["dc:a.py"]'
	assert_json '.results[0].files | map(.path) == ["a.py"]'
	run -0 cat root/.git/HEAD
	assert_output "ref: refs/heads/main"
	run -0 cat root/a.py
	assert_output "# real_assert(): this test cannot fail (a.py)"
}

@test "fix: a fix's changed, added and deleted files all reach the root" {
	plant a.py
	printf 'old\n' > root/b.txt
	printf 'keep\n' > root/c.txt
	script patcher <<-'EOF'
	corral-marker-patch "$@" || exit
	rm b.txt && printf 'new\n' > d.txt
	EOF
	run -0 --separate-stderr corral-fix -a -J -p "$PWD/patcher" root
	assert_json '.results[0].detail == "2 file(s) changed, 1 deleted"'
	assert_json '.results[0].files | map(.path + ":" + .action) == ["a.py:write","b.txt:delete","d.txt:write"]'
	assert_no_file root/b.txt
	run -0 cat root/d.txt root/c.txt root/a.py
	assert_output "new
keep
# real_assert(): this test cannot fail (a.py)"
}

@test "fix: [MUTATION] dry run is the default: the fix is verified and the file keeps its bytes" {
	plant bad.py
	before=$(tree_digest root)
	run -1 --separate-stderr corral-fix -J root
	assert_json '.dry_run == true and .verified == ["dc:bad.py"] and .applied == []'
	assert_equal "$before" "$(tree_digest root)"
	run -0 grep -c DEADCANARY root/bad.py
	assert_output 1
	no_leftovers
}

@test "fix: --apply repairs the file, and the finder then finds nothing" {
	plant bad.py
	printf 'print("healthy")\n' > root/good.py
	run -0 --separate-stderr corral-fix --apply root
	assert_contains "$output" "Applied 1 fix(es); 0 conflict(s) held back."
	run -0 cat root/bad.py root/good.py
	assert_output '# real_assert(): this test cannot fail (bad.py)
print("healthy")'
	run -0 --separate-stderr corral-marker-find root
	assert_output ""
	no_leftovers
}

@test "fix: a fix that removes the marker but plants a new one is rolled back and nothing leaks" {
	plant bad.py
	script patcher <<-'EOF'
	corral-marker-patch "$@" || exit
	printf '# DEADCANARY: new\n' > new.py
	EOF
	not_applied rolled-back "fix introduced 1 new finding(s): dc:new.py"
	assert_json '.rolled_back == ["dc:bad.py"]'
	assert_no_file root/new.py
	no_leftovers
}

@test "fix: a fix that only appends a comment is rolled back, not applied" {
	plant bad.py
	script patcher <<-'EOF'
	printf '# looked at it\n' >> bad.py
	EOF
	not_applied rolled-back "fix did not remove the finding"
}

@test "fix: a failing patcher is a patch-error, one that exits 1 is no-patch; nothing is applied" {
	plant bad.py
	script crash <<-'EOF'
	printf 'half\n' > bad.py
	echo 'patcher: kaboom' >&2
	exit 3
	EOF
	script nothing <<-'EOF'
	exit 1
	EOF
	script slow <<-'EOF'
	corral-marker-patch "$@" && sleep 30
	EOF
	before=$(tree_digest root)
	run -1 --separate-stderr corral-fix -a -J -p "$PWD/crash" root
	assert_json '.results[0].status == "patch-error"'
	assert_json '.results[0].detail == "the patcher exit 3: patcher: kaboom"'
	run -1 --separate-stderr corral-fix -a -J -p "$PWD/nothing" root
	assert_json '.results[0].status == "no-patch" and .applied == []'
	run -1 --separate-stderr corral-fix -a -J -t 1 -p "$PWD/slow" root
	assert_json '.results[0].detail == "the patcher timed out after 1 s" and .applied == []'
	assert_equal "$before" "$(tree_digest root)"
}

@test "fix: [MUTATION] a single-method finding is not attempted by default, even with --apply" {
	plant bad.py
	finding dc:bad.py bad.py 1 0.9 single-method > findings
	before=$(tree_digest root)
	run -1 --separate-stderr corral-fix -a -J -F findings root
	assert_json '.considered == 1 and .attempted == 0 and .applied == []'
	assert_json '.skipped[0].reason | startswith("trust is '"'single-method'"'")'
	assert_equal "$before" "$(tree_digest root)"
	run -0 grep -c DEADCANARY root/bad.py
	assert_output 1
}

@test "fix: -T attempts and applies a single-method finding" {
	plant bad.py
	finding dc:bad.py bad.py 1 0.9 single-method > findings
	run -0 --separate-stderr corral-fix -a -T -J -F findings root
	assert_json '.attempted == 1 and .applied == ["dc:bad.py"]'
	run -1 grep -c DEADCANARY root/bad.py
}

@test "fix: confidence below 0.6 is not attempted, 0.6 itself is, and -c moves the bar" {
	plant low.py edge.py
	{ finding dc:low.py low.py 2 0.2; finding dc:edge.py edge.py 2 0.6; } > findings
	run -1 --separate-stderr corral-fix -a -J -F findings root
	assert_json '.attempted == 1 and .applied == ["dc:edge.py"]'
	assert_json '.skipped == [{"identity":"dc:low.py","reason":"confidence 0.2 is below 0.6"}]'
	run -0 grep -c DEADCANARY root/low.py
	run -0 --separate-stderr corral-fix -a -J -c 0.1 -F findings root
	assert_json '.applied == ["dc:low.py"]'
	run -1 grep -c DEADCANARY root/low.py
}

@test "fix: the same identity twice is considered twice and attempted once" {
	plant bad.py
	{ finding dc:bad.py bad.py; finding dc:bad.py bad.py; } > findings
	run -1 --separate-stderr corral-fix -J -F findings root
	assert_json '.considered == 2 and .attempted == 1'
	assert_json '.skipped[0].reason == "its identity is attempted already, at a higher rank"'
	run -0 grep -c DEADCANARY root/bad.py
}

@test "fix: a filtered higher-ranked copy does not hide a lower-ranked one that passes" {
	plant bad.py
	{ finding dc:bad.py bad.py 5 0.9 single-method; finding dc:bad.py bad.py 2 0.8; } > findings
	run -0 --separate-stderr corral-fix -a -J -F findings root
	assert_json '.attempted == 1 and .applied == ["dc:bad.py"]'
	assert_json '.skipped | map(.reason[0:5]) == ["trust"]'
	run -1 grep -c DEADCANARY root/bad.py
}

@test "fix: findings are tried highest corroboration, then confidence, first" {
	plant a.py b.py c.py
	{ finding dc:a.py a.py 2 0.7; finding dc:b.py b.py 3 0.6; finding dc:c.py c.py 2 0.9; } > findings
	run -0 --separate-stderr corral-fix -J -a -F findings root
	assert_json '[.results[].identity] == ["dc:b.py","dc:c.py","dc:a.py"]'
	run -0 --separate-stderr corral-marker-find root
	assert_output ""
}

@test "fix: two fixes writing one file differently: the higher-ranked applies, the other is held back" {
	plant shared.py
	{ finding one shared.py 2 0.9; finding two shared.py 2 0.8; } > findings
	script finder <<-'EOF'
	corral-marker-find "$@" | sed 's/"identity":"dc:shared.py"/"identity":"one"/'
	grep -q DEADCANARY shared.py && echo '{"identity":"two","location":"shared.py","corroboration":2,"max_confidence":0.8,"trust":"corroborated"}'
	exit 0
	EOF
	script patcher <<-'EOF'
	printf 'fixed by %s\n' "$(printf '%s' "$CORRAL_FINDING" | jq -r .identity)" > shared.py
	EOF
	run -0 --separate-stderr corral-fix -a -J -F findings -f "$PWD/finder" -p "$PWD/patcher" root
	assert_json '.verified == ["one","two"] and .applied == ["one"]'
	assert_json '.conflicts == [{"identity":"two","path":"shared.py","with":"one"}]'
	run -0 cat root/shared.py
	assert_output "fixed by one"
}

@test "fix: a delete and a write of the same path conflict" {
	plant a.py b.py
	printf 'old\n' > root/common.txt
	script patcher <<-'EOF'
	corral-marker-patch "$@" || exit
	case $CORRAL_FINDING in
	*a.py*) rm common.txt ;;
	*) printf 'rewritten\n' > common.txt ;;
	esac
	EOF
	run -1 --separate-stderr corral-fix -a -J -p "$PWD/patcher" root
	assert_json '.applied == ["dc:a.py"]'
	assert_json '.conflicts == [{"identity":"dc:b.py","path":"common.txt","with":"dc:a.py"}]'
	assert_no_file root/common.txt
	run -0 grep -c DEADCANARY root/b.py
}

@test "fix: a fix that creates deep/er/new.py is applied with its directories" {
	plant bad.py
	script patcher <<-'EOF'
	corral-marker-patch "$@" && mkdir -p deep/er && printf 'ok\n' > deep/er/new.py
	EOF
	run -0 --separate-stderr corral-fix -a -p "$PWD/patcher" root
	run -0 cat root/deep/er/new.py
	assert_output "ok"
}

@test "fix: the dry-run report counts considered and attempted and says DRY RUN" {
	plant bad.py
	run -1 --separate-stderr corral-fix root
	assert_stderr ""
	assert_output "verified     dc:bad.py -- 1 file(s) changed, 0 deleted
together     held: the 1 fix(es) together leave no target and introduce nothing
considered 1, attempted 1, verified 1, rolled back 0, applied 0, conflicts 0, remaining 1
DRY RUN: 1 verified fix(es) staged, not applied. Re-run with --apply to merge."
	run -0 grep -c DEADCANARY root/bad.py
}

@test "fix: -d tours the repair half, every claim holds, and it exits 0" {
	run -0 --separate-stderr corral-fix -d
	assert_stderr ""
	assert_contains "$output" "  found           1 defect(s): dc:broken.py"
	assert_contains "$output" "  the real file   UNTOUCHED, as it must be during a dry run"
	assert_contains "$output" "  re-measured     0 defect(s) remain"
	assert_contains "$output" "  the system      unchanged -- the bad repair never landed"
	assert_contains "$output" "  2 fix(es) across 2 area(s): (root), pkg"
	assert_contains "$output" "  result          Applied 1 fix(es); 0 refused, 1 not requested"
	assert_contains "$output" "  their work      still there -- the bundle refused rather than overwrite it"
	refute_contains "$output" "MODIFIED"
	refute_contains "$output" "OVERWRITTEN"
	no_leftovers
	run -0 find "$TMPDIR" -maxdepth 1 -name 'corral-fix-demo.*'
	assert_output ""
}

# --- beyond the original -------------------------------------------------

@test "fix: exit 0 when the finder finds nothing, and nothing is attempted" {
	printf 'fine\n' > root/ok.py
	before=$(tree_digest root)
	run -0 --separate-stderr corral-fix -a -J root
	assert_json '.considered == 0 and .attempted == 0 and .remaining == [] and .combined.checked == false'
	assert_equal "$before" "$(tree_digest root)"
}

@test "fix: the patcher gets the finding on stdin and in CORRAL_FINDING, and the clone as argument and directory" {
	plant bad.py
	script patcher <<-EOF
	{ cat; printf '%s\n' "\$CORRAL_FINDING" "\$1" "\$PWD"; } > "$PWD/seen"
	exec corral-marker-patch "\$@"
	EOF
	run -1 --separate-stderr corral-fix -p "$PWD/patcher" root
	run -0 sed -n 1p seen
	assert_equal "$output" "$(sed -n 2p seen)"
	assert_json '.identity == "dc:bad.py" and .location == "bad.py"'
	run -0 sed -n 3p seen
	assert_equal "$output" "$(sed -n 4p seen)"
	assert_contains "$output" "$TMPDIR/corral-fix."
	assert_file_exists root/bad.py
	run -0 grep -c DEADCANARY root/bad.py
}

@test "fix: a patcher that exits 0 but changes nothing is no-patch, not applied" {
	plant bad.py
	script patcher <<-'EOF'
	exit 0
	EOF
	not_applied no-patch "the patcher exited 0 but changed nothing"
}

@test "fix: a stale finding, one the finder no longer sees, is not applied" {
	plant bad.py
	finding dc:gone.py gone.py > findings
	script patcher <<-'EOF'
	printf 'made up\n' > gone.py
	EOF
	before=$(tree_digest root)
	run -1 --separate-stderr corral-fix -a -J -F findings -p "$PWD/patcher" root
	assert_json '.results[0].status == "stale" and .applied == []'
	assert_equal "$before" "$(tree_digest root)"
	assert_no_file root/gone.py
}

@test "fix: -F - reads the findings from standard input" {
	plant bad.py
	finding dc:bad.py bad.py > findings
	run -0 --separate-stderr corral-fix -a -J -F - root < findings
	assert_json '.applied == ["dc:bad.py"]'
	run -1 grep -c DEADCANARY root/bad.py
}

@test "fix: a finder that exits 2 could not look: exit 2, nothing applied" {
	plant bad.py
	script finder <<-'EOF'
	echo 'finder: the index is locked' >&2
	exit 2
	EOF
	before=$(tree_digest root)
	run -2 --separate-stderr corral-fix -a -f "$PWD/finder" root
	assert_output ""
	assert_stderr "corral-fix: could not look: the finder ended with exit 2: finder: the index is locked"
	assert_equal "$before" "$(tree_digest root)"
	no_leftovers
}

@test "fix: a finder that hangs times out, which is could not look" {
	plant bad.py
	script finder <<-'EOF'
	sleep 30
	EOF
	before=$(tree_digest root)
	SECONDS=0
	run -2 --separate-stderr corral-fix -a -t 1 -f "$PWD/finder" root
	assert_stderr "corral-fix: could not look: the finder timed out after 1 s"
	[ "$SECONDS" -lt 10 ] || flunk "took $SECONDS s"
	assert_equal "$before" "$(tree_digest root)"
}

@test "fix: a finder that prints a malformed line could not look, and says where" {
	plant bad.py
	script finder <<-'EOF'
	echo '{"identity":"x"}'
	echo '{"identity":'
	EOF
	run -2 --separate-stderr corral-fix -a -f "$PWD/finder" root
	assert_stderr "corral-fix: could not look: 'finder output' line 2: invalid JSON at byte 13"
	run -0 grep -c DEADCANARY root/bad.py
}

@test "fix: a finder that fails in an attempt's clone stops the run: exit 2, nothing applied" {
	plant a.py b.py
	script finder <<-'EOF'
	[ -e broke ] && exit 2
	exec corral-marker-find "$@"
	EOF
	script patcher <<-'EOF'
	corral-marker-patch "$@" || exit
	case $CORRAL_FINDING in *b.py*) : > broke ;; esac
	EOF
	before=$(tree_digest root)
	run -2 --separate-stderr corral-fix -a -j 2 -f "$PWD/finder" -p "$PWD/patcher" root
	assert_stderr "corral-fix: could not look: the finder ended with exit 2"
	assert_equal "$before" "$(tree_digest root)"
	no_leftovers
}

@test "fix: fixes that pass alone but break together are all held back; the root stays byte for byte" {
	plant a.py b.py
	pair_finder
	before=$(tree_digest root)
	run -1 --separate-stderr corral-fix -a -J -f "$PWD/finder" root
	assert_json '.verified == ["dc:a.py","dc:b.py"] and .applied == []'
	assert_json '.combined == {"checked":true,"ok":false,"detail":"1 new finding(s): pair:a+b"}'
	assert_json '.message == "Applied 0 fix(es); 0 conflict(s) held back."'
	assert_equal "$before" "$(tree_digest root)"
	no_leftovers
	run -1 --separate-stderr corral-fix -b bundle -f "$PWD/finder" root
	assert_contains "$output" "together     ROLLED BACK: 1 new finding(s): pair:a+b; --apply would apply nothing"
	assert_contains "$output" "bundle       not written -- the fixes do not hold together"
	assert_no_file bundle
}

@test "fix: a re-measure that disagrees after writing is rolled back from the journal, byte for byte" {
	plant a.py
	printf 'keep\n' > root/other.txt
	late_finder
	before=$(tree_digest root)
	run -1 --separate-stderr corral-fix -a -J -f "$PWD/finder" root
	assert_json '.applied == [] and .combined.ok == false and .combined.detail == "1 new finding(s): late"'
	assert_equal "$before" "$(tree_digest root)"
	no_leftovers
}

@test "fix: kill -9 mid-apply leaves a journal that blocks the root until -R restores it byte for byte" {
	plant a.py pkg/b.py
	apply_hang_finder
	before=$(tree_digest root)
	corral-fix -a -f "$PWD/finder" root > /dev/null 2>&1 &
	fix=$!
	wait_for test -s finder.pid
	kill -9 "$fix"
	wait "$fix" || true
	# The finder runs in a process group of its own; end it too.
	kill_group finder.pid
	# Mid-apply: the new bytes are in place and the journal is there.
	run -1 grep -c DEADCANARY root/a.py root/pkg/b.py
	assert_file_exists root/.corral-fix/journal.json
	run -2 --separate-stderr corral-fix root
	assert_stderr "corral-fix: '$(cd root && pwd -P)/.corral-fix' holds the journal of an interrupted apply; run 'corral-fix -R $(cd root && pwd -P)' to roll it back"
	run -0 --separate-stderr corral-fix -R root
	assert_equal "rolled back the interrupted apply in 'root'" "${lines[0]}"
	assert_equal "removed 1 work directory a killed corral-fix left in '$TMPDIR'" "${lines[1]}"
	assert_equal "$before" "$(tree_digest root)"
	run -0 --separate-stderr corral-fix -R root
	assert_output "no interrupted apply in 'root'"
}

@test "fix: -R after kill -9 mid-apply leaves a file the user edited since the apply wrote it, says so, and puts back the rest" {
	plant a.py pkg/b.py
	cp -a root expect
	apply_hang_finder
	corral-fix -a -f "$PWD/finder" root > /dev/null 2>&1 &
	fix=$!
	wait_for test -s finder.pid
	kill -9 "$fix"
	wait "$fix" || true
	kill_group finder.pid
	printf 'the user typed this\n' > root/a.py
	printf 'the user typed this\n' > expect/a.py
	run -0 --separate-stderr corral-fix -R root
	assert_equal "rolled back the interrupted apply in 'root'" "${lines[0]}"
	assert_equal "left 'a.py' as it is: it changed after the apply wrote it" "${lines[1]}"
	touch -r root/a.py expect/a.py
	assert_equal "$(tree_digest expect)" "$(tree_digest root)"
}

@test "fix: -R over a journal directory without journal.json says there was nothing to roll back, and keeps ROOT's mtime" {
	plant a.py
	mkdir root/.corral-fix
	: > root/.corral-fix/lock
	touch -d '2001-02-03 04:05:06' root
	run -0 --separate-stderr corral-fix -R root
	assert_equal "nothing to roll back in 'root': the interrupted apply had written nothing, or had committed; its journal is removed" "${lines[0]}"
	assert_no_file root/.corral-fix
	assert_equal "2001-02-03 04:05:06.000000000" "$(date -r root '+%F %T.%N')"
}

@test "fix: after a re-measure that disagrees, the report says the files were written to the root and then restored" {
	plant a.py
	late_finder
	before=$(tree_digest root)
	run -1 --separate-stderr corral-fix -a -f "$PWD/finder" root
	assert_contains "$output" "together     ROLLED BACK: 1 new finding(s): late; 1 file(s) were written to the root, then restored from the journal: it is byte for byte as it was"
	refute_contains "$output" "nothing was applied"
	assert_equal "$before" "$(tree_digest root)"
	run -1 --separate-stderr corral-fix -a -J -f "$PWD/finder" root
	assert_json '.restored == 1 and .applied == []'
	no_leftovers
}

@test "fix: a combination that fails before any write still says nothing was applied, and restored is 0" {
	plant a.py b.py
	pair_finder
	run -1 --separate-stderr corral-fix -a -f "$PWD/finder" root
	assert_contains "$output" "together     ROLLED BACK: 1 new finding(s): pair:a+b; nothing was applied, the root is as it was"
	run -1 --separate-stderr corral-fix -a -J -f "$PWD/finder" root
	assert_json '.restored == 0'
}

# killed_run: start corral-fix on root with a finder that hangs (its pid
# in hang.pid), kill -9 corral-fix and then the finder's process group;
# the work directory it left in workdir.
killed_run() {
	hang_finder
	corral-fix -f "$PWD/finder" root > /dev/null 2>&1 &
	fix=$!
	wait_for test -s hang.pid
	kill -9 "$fix"
	wait "$fix" || true
	kill_group hang.pid
	for _ in $(seq 100); do kill -0 "$(cat hang.pid)" 2>/dev/null || break; sleep 0.1; done
	run -0 find "$TMPDIR" -maxdepth 1 -name 'corral-fix.*'
	[ "${#lines[@]}" -eq 1 ] || flunk "work directories after kill -9: $output"
	workdir=$output
}

@test "fix: the work directory of a corral-fix killed with SIGKILL is removed by the next run" {
	plant a.py
	killed_run
	assert_file_exists "$workdir/.corral-clone"
	run -1 --separate-stderr corral-fix root
	assert_no_file "$workdir"
	no_leftovers
}

@test "fix: -R removes the work directory a corral-fix killed with SIGKILL left, and says so" {
	plant a.py
	killed_run
	run -0 --separate-stderr corral-fix -R root
	assert_equal "no interrupted apply in 'root'" "${lines[0]}"
	assert_equal "removed 1 work directory a killed corral-fix left in '$TMPDIR'" "${lines[1]}"
	assert_no_file "$workdir"
	run -0 --separate-stderr corral-fix -R root
	assert_output "no interrupted apply in 'root'"
}

@test "fix: another run never removes the work directory of a corral-fix that is still running" {
	plant a.py
	mkdir other
	printf '%s\n' "$MARK" > other/b.py
	hang_finder
	corral-fix -f "$PWD/finder" root > /dev/null 2>&1 &
	fix=$!
	wait_for test -s hang.pid
	run -0 find "$TMPDIR" -maxdepth 1 -name 'corral-fix.*'
	live=$output
	[ -n "$live" ] || flunk "no work directory while corral-fix runs"
	run -1 --separate-stderr corral-fix other
	run -0 --separate-stderr corral-fix -R other
	assert_output "no interrupted apply in 'other'"
	[ -d "$live" ] || flunk "the live run's '$live' was removed"
	kill "$(cat hang.pid)"
	st=0
	wait "$fix" || st=$?
	assert_equal 2 "$st"
	no_leftovers
}

@test "fix: daemons a finder and a patcher detach (setsid and a double fork) are killed before corral-fix returns: no pid they wrote is alive" {
	plant a.py pkg/b.py
	detacher finder find
	detacher patcher patch
	run -0 --separate-stderr corral-fix -a -J -j2 -f "$PWD/finder" -p "$PWD/patcher" root
	assert_json '.applied == ["dc:a.py", "dc:pkg/b.py"]'
	# the first look, two attempts (before, patch, after), the combined
	# look and the re-measure
	assert_equal 9 "$(ls daemon.* | wc -l)"
	assert_equal "" "$(daemons_alive)"
	no_leftovers
}

@test "fix: -j1 and -j4 give the same report and the same bytes" {
	plant ok1.py ok2.py ok3.py ok4.py ok5.py reg.py np.py conf1.py conf2.py pkg/ok6.py
	script patcher <<-'EOF'
	loc=$(printf '%s' "$CORRAL_FINDING" | jq -r .location)
	case $loc in
	ok1.py) sleep 0.4 ;;
	ok3.py) sleep 0.2 ;;
	esac
	case $loc in
	reg.py) corral-marker-patch "$@" && printf '# DEADCANARY\n' > worse.py ;;
	np.py) exit 1 ;;
	conf*) corral-marker-patch "$@" && printf 'by %s\n' "$loc" > shared.txt ;;
	*) corral-marker-patch "$@" ;;
	esac
	EOF
	cp -a root one && cp -a root four
	run -1 --separate-stderr corral-fix -a -J -j 1 -p "$PWD/patcher" one
	one=$(jq -c 'del(.root)' <<<"$output")
	run -1 --separate-stderr corral-fix -a -J -j 4 -p "$PWD/patcher" four
	four=$(jq -c 'del(.root)' <<<"$output")
	assert_equal "$one" "$four"
	assert_json '(.applied | length) == 7 and .rolled_back == ["dc:reg.py"] and (.conflicts | length) == 1'
	assert_equal "$(content one)" "$(content four)"
	run -0 cat four/shared.txt
	assert_output "by conf1.py"
}

@test "fix: a symlink in ROOT that leads outside is refused with exit 2, and nothing is written" {
	plant bad.py
	mkdir outside
	ln -s ../outside root/escape
	before=$(tree_digest root)
	run -2 --separate-stderr corral-fix -a root
	assert_stderr "corral-fix: cannot clone 'root': part '.': symlink 'escape' leads outside '$(cd root && pwd -P)'"
	assert_equal "$before" "$(tree_digest root)"
	no_leftovers
}

@test "fix: a patch that changes a symlink is a patch-error, never carried" {
	plant bad.py
	printf 'x\n' > root/target.txt
	ln -s target.txt root/link
	script patcher <<-'EOF'
	corral-marker-patch "$@" && ln -sf bad.py link
	EOF
	not_applied patch-error "the change to symlink 'link' cannot be carried: only regular files are"
}

@test "fix: -b writes the verified fixes as a bundle whose expected_before is ROOT before applying" {
	plant bad.py
	old=$(sha256sum < root/bad.py | cut -d' ' -f1)
	run -0 --separate-stderr corral-fix -a -b bundle -m 'from a test' root
	assert_contains "$output" "bundle       bundle"
	new=$(sha256sum < root/bad.py | cut -d' ' -f1)
	assert_json ".fixes[0].files == [{\"action\":\"write\",\"expected_before\":\"$old\",\"path\":\"bad.py\",\"sha256\":\"$new\"}]" bundle/manifest.json
	assert_json '.bundle_version == 1 and .note == "from a test" and .areas == ["(root)"]' bundle/manifest.json
	cmp bundle/files/"$new" root/bad.py
	run -0 ls bundle/files
	assert_output "$new"
}

@test "fix: the text and JSON reports agree, and JSON has the original's keys" {
	plant a.py
	run -1 --separate-stderr corral-fix -J root
	assert_json 'keys_unsorted == ["root","dry_run","considered","attempted","results","verified","rolled_back","applied","conflicts","skipped","combined","restored","found","remaining","bundle","message"]'
	assert_json '.found == ["dc:a.py"] and .remaining == ["dc:a.py"]'
	run -0 grep -c DEADCANARY root/a.py
}

@test "fix: -w puts the clones in WORKDIR, and they are gone afterwards" {
	plant bad.py
	mkdir work
	script patcher <<-EOF
	pwd > "$PWD/where"
	exec corral-marker-patch "\$@"
	EOF
	run -1 --separate-stderr corral-fix -w "$PWD/work" -p "$PWD/patcher" root
	run -0 cat where
	assert_contains "$output" "$PWD/work/corral-fix."
	run -0 ls -A work
	assert_output ""
	run -0 grep -c DEADCANARY root/bad.py
}

@test "fix: what the finder writes into a clone (a cache) never reaches the root" {
	plant a.py
	script finder <<-'EOF'
	mkdir -p .cache && date +%N > .cache/index
	exec corral-marker-find "$@"
	EOF
	run -0 --separate-stderr corral-fix -a -J -f "$PWD/finder" root
	assert_json '.applied == ["dc:a.py"] and (.results[0].files | map(.path)) == ["a.py"]'
	assert_no_file root/.cache
}

@test "fix: ROOT changed while corral-fix ran: exit 2, and nothing of the fix is applied" {
	plant a.py
	script patcher <<-EOF
	printf 'edited meanwhile\n' > "$PWD/root/a.py"
	exec corral-marker-patch "\$@"
	EOF
	run -2 --separate-stderr corral-fix -a -p "$PWD/patcher" root
	assert_stderr "corral-fix: 'a.py' changed in 'root' while corral-fix ran; nothing was applied"
	run -0 cat root/a.py
	assert_output "edited meanwhile"
	no_leftovers
}

@test "fix: a file a user edits while -a writes (after a.py is replaced, before pkg/b.py is) stops the apply at it: exit 2 naming it, a.py is put back, and the edit survives byte for byte" {
	plant a.py pkg/b.py
	cp -a root expect
	printf 'the user typed this\n' > expect/pkg/b.py
	fault_lib
	r=$(cd root && pwd -P)
	run -2 --separate-stderr env LD_PRELOAD="$FAULT_LIB" FAULT_ROOT="$r" \
		FAULT_EDIT_AFTER="$r/a.py" FAULT_EDIT_FILES="$r/pkg/b.py" \
		FAULT_EDIT_TEXT='the user typed this
' corral-fix -a root
	assert_stderr "corral-fix: 'pkg/b.py' changed while it was being replaced: it no longer holds what the change was made against; rolled back: nothing was applied, and what changed meanwhile is left as it is: 'pkg/b.py'"
	run -0 cat root/pkg/b.py
	assert_output "the user typed this"
	touch -r root/pkg/b.py expect/pkg/b.py
	assert_equal "$(tree_digest expect)" "$(tree_digest root)"
	no_leftovers
}

@test "fix: a second apply while one holds the journal is refused; the first, losing its finder, rolls back" {
	plant a.py
	apply_hang_finder
	before=$(tree_digest root)
	corral-fix -a -f "$PWD/finder" root > first.out 2> first.err &
	first=$!
	wait_for test -s finder.pid
	run -2 --separate-stderr corral-fix -a root
	assert_stderr "corral-fix: another corral-fix or corral-bundle is applying to '$(cd root && pwd -P)'"
	kill_group finder.pid
	status=0
	wait "$first" || status=$?
	assert_equal 2 "$status"
	run -0 cat first.err
	assert_output "corral-fix: could not look: the finder ended with signal 9 (SIGKILL); rolled back: nothing was applied"
	assert_equal "$before" "$(tree_digest root)"
	no_leftovers
}

# cached_suite: root holds a corral.mk suite (suite.mk, CORRAL_PARTS =
# auto) of two units that note each run in ./ran: tests/a.sh reads lib/a
# and passes while it says good or holds the marker (its repair breaks
# it), tests/b.sh reads lib/b; doc/
# is read by none.  No hit is sampled again (CORRAL_CACHE_VERIFY = 0), so
# ./ran counts exactly the units that ran.  SUITE: the finder of both.
cached_suite() {
	mkdir -p root/tests root/lib root/doc
	printf 'echo a >> %s/ran\ngrep -qE "^good|DEAD""CANARY" lib/a\n' "$PWD" > root/tests/a.sh
	printf 'good\n' > root/lib/a
	printf 'echo b >> %s/ran\ngrep -q fine lib/b\n' "$PWD" > root/tests/b.sh
	printf 'fine\n' > root/lib/b
	cat > root/suite.mk <<-'MK'
	CORRAL_DISCOVER = find tests -name '*.sh' | LC_ALL=C sort
	CORRAL_CMD      = sh "$$CORRAL_UNIT"
	CORRAL_PARTS    = auto
	CORRAL_CACHE_VERIFY = 0
	include $(shell corral-mk-path)
	MK
	: > ran
	SUITE="corral-find-combine corral-marker-find 'corral-find-suite -f suite.mk'"
}

# runs: how many times each unit ran, as "a=N b=N"
runs() {
	printf 'a=%s b=%s' "$(grep -c '^a$' ran)" "$(grep -c '^b$' ran)"
}

@test "fix: one store for the session: a candidate that breaks a unit is rolled back with the store warm, and only the unit whose input it changed runs again" {
	cached_suite
	plant lib/a doc/x
	unset CORRAL_CACHE
	run -1 --separate-stderr corral-fix -J -T -f "$SUITE" root
	assert_json '[.results[] | [.identity, .status, .detail]] == [
	    ["dc:doc/x", "verified", "1 file(s) changed, 0 deleted"],
	    ["dc:lib/a", "rolled-back", "fix introduced 1 new finding(s): suite:tests/a.sh"]]'
	# six looks: first, before and after each attempt, together; a ran
	# at the first and after lib/a changed, b only at the first
	assert_equal "a=2 b=1" "$(runs)"
	no_leftovers
}

@test "fix: a candidate in a file no unit reads is verified and applied with no unit run again" {
	cached_suite
	plant doc/x
	unset CORRAL_CACHE
	run -0 --separate-stderr corral-fix -a -J -T -f "$SUITE" root
	assert_json '.applied == ["dc:doc/x"] and .combined.ok and .remaining == []'
	run -0 grep -c real_assert root/doc/x
	# first look, before, after, together, the re-measure: one run each
	assert_equal "a=1 b=1" "$(runs)"
	no_leftovers
}

@test "fix: a CORRAL_CACHE set is the session's store (a relative one from the working directory), kept for the next; set and empty, there is none" {
	cached_suite
	plant doc/x
	mkdir elsewhere
	CORRAL_CACHE=store run -1 --separate-stderr corral-fix -J -T -f "$SUITE" root
	assert_json '.verified == ["dc:doc/x"]'
	assert_equal "a=1 b=1" "$(runs)"
	run -0 find store/r -name '*.json'
	assert_equal 2 "${#lines[@]}"
	cd elsewhere
	CORRAL_CACHE=../store run -1 --separate-stderr corral-fix -J -T -f "$SUITE" ../root
	cd ..
	assert_json '.verified == ["dc:doc/x"]'
	assert_equal "a=1 b=1" "$(runs)"
	CORRAL_CACHE= run -1 --separate-stderr corral-fix -J -T -f "$SUITE" root
	assert_json '.verified == ["dc:doc/x"]'
	assert_equal "a=5 b=5" "$(runs)"
	no_leftovers
}
