#!/usr/bin/env bats
# bundle.bats -- corral-bundle: verified repairs travel as a manifest and
# content-addressed blobs, labelled by area; applying is a dry run unless
# -a, all or nothing unless -p, checks every file before writing any, and
# never writes outside ROOT nor through a symlink.  Every test checks the
# bytes on disk, not just the report.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	export TMPDIR=$BATS_TEST_TMPDIR
	mkdir -p src/pkg
	printf '# DEADCANARY: pkg test\n' > src/pkg/bad.py
	printf '# DEADCANARY: root test\n' > src/root_bad.py
	cp -a src dst
}

USAGE='usage: corral-bundle apply [-aJnp] [-A AREA] BUNDLE ROOT
       corral-bundle describe BUNDLE
       corral-bundle write [-A AREA] [-m NOTE] FROM TO'

PKG_FIXED='# real_assert(): pkg test'
ROOT_FIXED='# real_assert(): root test'

# bundle [ARGS...]: B, made by a dry run of corral-fix over src
bundle() {
	run -1 --separate-stderr corral-fix -b B -m test "$@" src
	assert_file_exists B/manifest.json
}

# script NAME: an executable sh script NAME, from standard input
script() {
	{ echo '#!/bin/sh'; cat; } > "$1"
	chmod +x "$1"
}

# blob DIR TEXT: store TEXT as DIR/files/SHA256 and print the digest
blob() {
	local sha
	sha=$(printf '%s' "$2" | sha256sum | cut -d' ' -f1)
	mkdir -p "$1/files"
	printf '%s' "$2" > "$1/files/$sha"
	echo "$sha"
}

# handmade DIR FIXES_JSON: a bundle at DIR with this "fixes" array
handmade() {
	mkdir -p "$1/files"
	printf '{"bundle_version":1,"note":"hand","fixes":%s}\n' "$2" > "$1/manifest.json"
}

# onefix PATH SHA [BEFORE] [AREA]: a fix writing SHA to PATH
onefix() {
	printf '[{"identity":"x","repairs":"x","trust":"corroborated","confidence":0.8,"area":"%s","files":[{"path":"%s","action":"write","sha256":"%s","expected_before":%s}]}]' \
		"${4:-(root)}" "$1" "$2" "${3:-null}"
}

# --- usage ------------------------------------------------------------

@test "bundle: -h prints usage to stdout and exits 0" {
	assert_help "$USAGE" corral-bundle -h
	assert_help "$USAGE" corral-bundle apply -h
}

@test "bundle: no subcommand, an unknown one or wrong operands print usage to stderr and exit 2" {
	assert_usage_error "$USAGE" corral-bundle
	assert_usage_error "$USAGE" corral-bundle frob B
	assert_usage_error "$USAGE" corral-bundle describe
	assert_usage_error "$USAGE" corral-bundle describe -a B
	run -2 --separate-stderr corral-bundle apply -a -n B dst
	assert_stderr "corral-bundle: -a and -n may not be specified together"
}

@test "bundle: a missing bundle is named with cannot open and exits 2" {
	run -2 --separate-stderr corral-bundle describe nothere
	assert_stderr "corral-bundle: cannot open 'nothere/manifest.json': No such file or directory"
}

# --- the original's bundle tests -----------------------------------------

@test "bundle: areas are the first directory, (root) at the top, joined with +, (nothing) for none" {
	bundle
	assert_json '.areas == ["(root)","pkg"] and ([.fixes[].area] == ["pkg","(root)"])' B/manifest.json
	s=$(blob H 'x')
	handmade H "[{\"identity\":\"a\",\"area\":\"corral\",\"files\":[{\"path\":\"corral/fixer.py\",\"action\":\"write\",\"sha256\":\"$s\"}]},
		{\"identity\":\"b\",\"area\":\"tests\",\"files\":[{\"path\":\"tests/a.py\",\"action\":\"write\",\"sha256\":\"$s\"},{\"path\":\"tests/b.py\",\"action\":\"write\",\"sha256\":\"$s\"}]},
		{\"identity\":\"c\",\"area\":\"(root)\",\"files\":[{\"path\":\"a.py\",\"action\":\"write\",\"sha256\":\"$s\"}]},
		{\"identity\":\"d\",\"area\":\"corral+tests\",\"files\":[{\"path\":\"corral/a.py\",\"action\":\"write\",\"sha256\":\"$s\"},{\"path\":\"tests/b.py\",\"action\":\"write\",\"sha256\":\"$s\"}]},
		{\"identity\":\"e\",\"area\":\"(nothing)\",\"files\":[]}]"
	run -0 --separate-stderr corral-bundle describe H
	assert_contains "$output" "5 fix(es) across 5 area(s): (nothing), (root), corral, corral+tests, tests"
	handmade H "[{\"identity\":\"d\",\"area\":\"corral\",\"files\":[{\"path\":\"corral/a.py\",\"action\":\"write\",\"sha256\":\"$s\"},{\"path\":\"tests/b.py\",\"action\":\"write\",\"sha256\":\"$s\"}]}]"
	run -2 --separate-stderr corral-bundle describe H
	assert_stderr "corral-bundle: 'H': fix 1: area 'corral' is not the area of its files, 'corral+tests'"
}

@test "bundle: apply is a dry run by default: 2 would apply, and both files keep their bytes" {
	bundle
	before=$(tree_digest dst)
	run -0 --separate-stderr corral-bundle apply B dst
	assert_output "would apply  [pkg] dc:pkg/bad.py
would apply  [(root)] dc:root_bad.py
DRY RUN: 2 fix(es) would apply, 0 refused, 0 not requested"
	assert_equal "$before" "$(tree_digest dst)"
}

@test "bundle: -A pkg applies 1, skips 1, and leaves the root file untouched" {
	bundle
	run -0 --separate-stderr corral-bundle apply -a -A pkg B dst
	assert_output "applied      [pkg] dc:pkg/bad.py
skipped      [(root)] dc:root_bad.py -- area '(root)' not requested
Applied 1 fix(es); 0 refused, 1 not requested"
	run -0 cat dst/pkg/bad.py dst/root_bad.py
	assert_output "$PKG_FIXED
# DEADCANARY: root test"
	assert_no_file dst/.corral-fix
}

@test "bundle: an edited target is refused, nothing is applied, and the edit survives" {
	bundle
	printf 'their newer work\n' > dst/root_bad.py
	before=$(tree_digest dst)
	run -1 --separate-stderr corral-bundle apply -a -A '(root)' B dst
	assert_output "skipped      [pkg] dc:pkg/bad.py -- area 'pkg' not requested
refused      [(root)] dc:root_bad.py -- 'root_bad.py' has changed since this bundle was made
Applied 0 fix(es); 1 refused, 1 not requested"
	assert_equal "$before" "$(tree_digest dst)"
}

@test "bundle: a fix that creates a file applies where it is absent, and is refused where it now exists" {
	script patcher <<-'EOF'
	corral-marker-patch "$@" || exit
	mkdir -p new && printf 'added\n' > new/added.py
	EOF
	bundle -p "$PWD/patcher"
	cp -a dst dst2
	run -0 --separate-stderr corral-bundle apply -a B dst
	assert_contains "$output" "Applied 2 fix(es)"
	run -0 cat dst/new/added.py
	assert_output "added"
	mkdir dst2/new && printf 'somebody else\n' > dst2/new/added.py
	before=$(tree_digest dst2)
	run -1 --separate-stderr corral-bundle apply -a B dst2
	assert_contains "$output" "'new/added.py' did not exist when this bundle was made, and exists now"
	assert_equal "$before" "$(tree_digest dst2)"
}

@test "bundle: a tampered blob is refused: it does not match its own hash" {
	bundle
	sha=$(jq -r '.fixes[0].files[0].sha256' B/manifest.json)
	printf 'evil\n' > "B/files/$sha"
	before=$(tree_digest dst)
	run -1 --separate-stderr corral-bundle apply -a B dst
	assert_contains "$output" "refused      [pkg] dc:pkg/bad.py -- 'pkg/bad.py': blob does not match its own hash"
	assert_contains "$output" "held back    [(root)] dc:root_bad.py -- held back: another fix was refused"
	assert_equal "$before" "$(tree_digest dst)"
}

@test "bundle: an unknown manifest version is refused with a message, and nothing is applied" {
	bundle
	jq '.bundle_version = 100' B/manifest.json > m && mv m B/manifest.json
	before=$(tree_digest dst)
	run -2 --separate-stderr corral-bundle apply -a B dst
	assert_output ""
	assert_stderr "corral-bundle: 'B': bundle_version 100, this corral reads 1; refusing to guess"
	assert_equal "$before" "$(tree_digest dst)"
}

@test "bundle: two fixes writing identical bytes share exactly one blob, named by its SHA-256" {
	script patcher <<-'EOF'
	loc=$(printf '%s' "$CORRAL_FINDING" | jq -r .location)
	printf 'identical\n' > "$loc"
	EOF
	bundle -p "$PWD/patcher"
	run -0 ls B/files
	assert_output "$(printf 'identical\n' | sha256sum | cut -d' ' -f1)"
	assert_json '[.fixes[].files[].sha256] | unique | length == 1' B/manifest.json
}

@test "bundle: describe names every area and every file" {
	bundle
	run -0 --separate-stderr corral-bundle describe B
	assert_output "2 fix(es) across 2 area(s): (root), pkg
note: test
  [pkg] dc:pkg/bad.py -- repairs pkg/bad.py (corroborated)
      write  pkg/bad.py
  [(root)] dc:root_bad.py -- repairs root_bad.py (corroborated)
      write  root_bad.py"
}

# --- beyond the original -------------------------------------------------

@test "bundle: re-applying an applied bundle says already applied, and exits 0" {
	bundle
	run -0 --separate-stderr corral-bundle apply -a B dst
	after=$(tree_digest dst)
	run -0 --separate-stderr corral-bundle apply -a B dst
	assert_output "already      [pkg] dc:pkg/bad.py -- already applied
already      [(root)] dc:root_bad.py -- already applied
Applied 0 fix(es); 0 refused, 0 not requested, 2 already applied"
	assert_equal "$after" "$(tree_digest dst)"
	run -0 cat dst/pkg/bad.py dst/root_bad.py
	assert_output "$PKG_FIXED
$ROOT_FIXED"
}

@test "bundle: one refusal holds back the whole bundle; -p applies fix by fix" {
	bundle
	printf 'theirs\n' > dst/root_bad.py
	before=$(tree_digest dst)
	run -1 --separate-stderr corral-bundle apply -a B dst
	assert_contains "$output" "Applied 0 fix(es); 1 refused, 0 not requested, 1 held back"
	assert_equal "$before" "$(tree_digest dst)"
	run -1 --separate-stderr corral-bundle apply -a -p B dst
	assert_contains "$output" "Applied 1 fix(es); 1 refused, 0 not requested"
	run -0 cat dst/pkg/bad.py dst/root_bad.py
	assert_output "$PKG_FIXED
theirs"
}

@test "bundle: a fix touching two areas applies only when both are requested, and says why" {
	script patcher <<-'EOF'
	corral-marker-patch "$@" || exit
	case $CORRAL_FINDING in *root_bad*) printf 'note\n' > pkg/NOTES ;; esac
	EOF
	bundle -p "$PWD/patcher"
	assert_json '[.fixes[].area] == ["pkg","(root)+pkg"]' B/manifest.json
	run -0 --separate-stderr corral-bundle apply -a -A '(root)' B dst
	assert_contains "$output" "skipped      [(root)+pkg] dc:root_bad.py -- area 'pkg' not requested (the fix touches (root)+pkg; it applies only when all its areas are requested)"
	run -0 cat dst/root_bad.py
	assert_output "# DEADCANARY: root test"
	assert_no_file dst/pkg/NOTES
	run -0 --separate-stderr corral-bundle apply -a -A '(root)' -A pkg B dst
	assert_contains "$output" "Applied 2 fix(es)"
	run -0 cat dst/root_bad.py dst/pkg/NOTES
	assert_output "$ROOT_FIXED
note"
}

@test "bundle: absolute, climbing, unclean and .git paths are refused, and nothing is written anywhere" {
	s=$(blob H 'pwned')
	mkdir -p dst/sub
	before=$(tree_digest dst)
	for p in ../escape.txt /tmp/abs-corral-test sub/../../escape.txt ./a.py 'a//b' .git/config sub/.corral-fix/x; do
		handmade H "$(onefix "$p" "$s")"
		run -2 --separate-stderr corral-bundle apply -a H dst/sub
		assert_contains "$stderr" "corral-bundle: 'H': fix 1: path '$p' "
	done
	assert_no_file escape.txt
	assert_no_file /tmp/abs-corral-test
	assert_equal "$before" "$(tree_digest dst)"
}

@test "bundle: a blob name that is not a 64-hex digest is refused" {
	mkdir -p H
	printf 'x\n' > H/secret
	before=$(tree_digest dst)
	for s in ../manifest.json '' secret "$(printf 'A%.0s' $(seq 64))"; do
		handmade H "$(onefix a.py "$s")"
		run -2 --separate-stderr corral-bundle apply -a H dst
		assert_contains "$stderr" "is not a SHA-256 digest"
	done
	assert_equal "$before" "$(tree_digest dst)"
}

@test "bundle: a path through a symlink in ROOT, or onto one, is refused and nothing is written through it" {
	bundle
	mkdir outside
	printf '# DEADCANARY: pkg test\n' > outside/bad.py
	printf '# DEADCANARY: root test\n' > outside/root.py
	rm -r dst/pkg dst/root_bad.py
	ln -s ../outside dst/pkg
	ln -s ../outside/root.py dst/root_bad.py
	before=$(tree_digest .)
	run -1 --separate-stderr corral-bundle apply -a -p B dst
	assert_contains "$output" "refused      [pkg] dc:pkg/bad.py -- 'pkg/bad.py' goes through symlink 'pkg'"
	assert_contains "$output" "refused      [(root)] dc:root_bad.py -- 'root_bad.py' is a symlink"
	assert_equal "$before" "$(tree_digest .)"
}

@test "bundle: a blob that is a symlink is not read" {
	bundle
	sha=$(jq -r '.fixes[0].files[0].sha256' B/manifest.json)
	cp "B/files/$sha" real-blob
	rm "B/files/$sha"
	ln -s ../../real-blob "B/files/$sha"
	before=$(tree_digest dst)
	run -1 --separate-stderr corral-bundle apply -a B dst
	assert_contains "$output" "'pkg/bad.py': the bundle is missing its content blob"
	assert_equal "$before" "$(tree_digest dst)"
}

@test "bundle: a deletion is applied, and is already applied afterwards" {
	printf 'obsolete\n' > src/pkg/old.txt
	cp src/pkg/old.txt dst/pkg/old.txt
	script patcher <<-'EOF'
	corral-marker-patch "$@" && rm -f pkg/old.txt
	EOF
	bundle -p "$PWD/patcher"
	assert_json '.fixes[0].files[1] == {"action":"delete","expected_before":"'"$(sha256sum < src/pkg/old.txt | cut -d' ' -f1)"'","path":"pkg/old.txt","sha256":null}' B/manifest.json
	run -0 --separate-stderr corral-bundle apply -a -A pkg B dst
	assert_no_file dst/pkg/old.txt
	run -0 --separate-stderr corral-bundle apply -a -A pkg B dst
	assert_contains "$output" "1 already applied"
}

@test "bundle: malformed manifest JSON is refused with where it broke" {
	mkdir B
	printf '{"bundle_version":1,"fixes":[}\n' > B/manifest.json
	run -2 --separate-stderr corral-bundle describe B
	assert_stderr "corral-bundle: 'B/manifest.json': invalid JSON at byte 30"
}

@test "bundle: apply refuses a root that holds an interrupted apply's journal" {
	bundle
	mkdir dst/.corral-fix
	before=$(tree_digest dst)
	run -2 --separate-stderr corral-bundle apply B dst
	assert_contains "$stderr" "holds the journal of an interrupted apply; run 'corral-fix -R dst' to roll it back"
	assert_equal "$before" "$(tree_digest dst)"
}

@test "bundle: -J prints the outcome as one JSON document" {
	bundle
	run -0 --separate-stderr corral-bundle apply -J -A pkg B dst
	assert_json '.dry_run == true and .applied == [{"identity":"dc:pkg/bad.py","area":"pkg"}]'
	assert_json '.skipped[0].reason == "area '"'(root)'"' not requested"'
	run -0 grep -c DEADCANARY dst/pkg/bad.py
}

@test "bundle: write copies only the requested areas, checking every blob" {
	bundle
	run -0 --separate-stderr corral-bundle write -A pkg -m 'pkg only' B P
	assert_output "wrote 1 fix(es) to 'P'"
	assert_json '.note == "pkg only" and .areas == ["pkg"] and ([.fixes[].identity] == ["dc:pkg/bad.py"])' P/manifest.json
	run -0 ls P/files
	assert_output "$(jq -r '.fixes[0].files[0].sha256' P/manifest.json)"
	sha=$(jq -r '.fixes[0].files[0].sha256' B/manifest.json)
	printf 'evil\n' > "B/files/$sha"
	run -2 --separate-stderr corral-bundle write B Q
	assert_stderr "corral-bundle: 'B/files/$sha': blob does not match its own hash"
	assert_no_file Q
	run -2 --separate-stderr corral-bundle write B P
	assert_stderr "corral-bundle: 'P' exists; a bundle is never written over anything"
}

# --- edits and kills during an apply ---------------------------------------

# many N: dst/ holds f001.txt..fN.txt ("old I") and B a bundle that
# writes "new I" into each (new/, the tree it makes); expect/ is a copy
# of dst/
many() {
	local i
	rm -rf dst && mkdir -p dst new
	for i in $(seq -f '%03g' 1 "$1"); do
		printf 'old %s\n' "$i" > "dst/f$i.txt"
		printf 'new %s\n' "$i" > "new/f$i.txt"
	done
	bundle_of dst new B
	cp -a dst expect
}

# apply_editing AFTER FILE...: corral-bundle apply -a B dst (run), where
# a user writes "the user typed this" into each FILE (under dst/) once
# the apply has renamed its new bytes onto dst/AFTER; the same edit is
# made to expect/
apply_editing() {
	local after=$1 f files= root
	root=$(cd dst && pwd -P)
	shift
	for f in "$@"; do
		files=$files${files:+:}$root/$f
		printf 'the user typed this\n' > "expect/$f"
	done
	fault_lib
	run --separate-stderr env LD_PRELOAD="$FAULT_LIB" FAULT_ROOT="$root" \
		FAULT_EDIT_AFTER="$root/$after" FAULT_EDIT_FILES="$files" \
		FAULT_EDIT_TEXT='the user typed this
' corral-bundle apply -a B dst
	for f in "$@"; do touch -r "dst/$f" "expect/$f"; done
}

@test "bundle: a file a user edits while -a runs (after 100 of 300 files) stops the apply at that file: exit 2 naming it, every file written is put back, and the edit survives byte for byte" {
	many 300
	apply_editing f100.txt f200.txt
	assert_equal 2 "$status"
	assert_stderr "corral-bundle: 'f200.txt' changed while it was being replaced: it no longer holds what the change was made against; rolled back: nothing was applied, and what changed meanwhile is left as it is: 'f200.txt'"
	assert_output ""
	run -0 cat dst/f200.txt
	assert_output "the user typed this"
	assert_equal "$(tree_digest expect)" "$(tree_digest dst)"
}

@test "bundle: rolling back after an edit stopped the apply never overwrites a file the user edited after it was replaced; both edits survive and are named" {
	many 300
	apply_editing f100.txt f050.txt f200.txt
	assert_equal 2 "$status"
	assert_stderr "corral-bundle: 'f200.txt' changed while it was being replaced: it no longer holds what the change was made against; rolled back: nothing was applied, and what changed meanwhile is left as it is: 'f050.txt', 'f200.txt'"
	assert_equal "$(tree_digest expect)" "$(tree_digest dst)"
}

@test "bundle: a file in the way of the temporary an apply writes through is refused by name, and nothing is written" {
	many 3
	printf 'mine\n' > dst/.f002.txt.corral-fix.tmp
	rm -rf expect && cp -a dst expect
	run -2 --separate-stderr corral-bundle apply -a B dst
	assert_stderr "corral-bundle: 'dst/.f002.txt.corral-fix.tmp' is in the way: corral writes 'f002.txt' through that name; move it away; rolled back: nothing was applied"
	assert_equal "$(tree_digest expect)" "$(tree_digest dst)"
}

@test "bundle: corral-fix's and corral-bundle's messages naming a root or a bundle whose name holds OSC, clear screen, CR, C0, DEL, C1 and invalid UTF-8 print none of those bytes" {
	local r="root$HOSTILE"
	mkdir "$r"
	run -0 --separate-stderr corral-fix -R "$r"
	printf '%s\n%s\n' "$output" "$stderr" > fix.out
	assert_shown fix.out
	assert_contains "$output" "no interrupted apply in 'root?]0;pwned"
	run --separate-stderr corral-bundle describe "b$HOSTILE"
	printf '%s\n%s\n' "$output" "$stderr" > bundle.out
	assert_shown bundle.out
	assert_contains "$stderr" "b?]0;pwned"
}
