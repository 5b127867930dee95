#!/usr/bin/env bats
# checkout.bats -- corral-checkout builds private clones of just the parts
# a slice needs, refuses every way out of SRC, and removes only its own.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	mkdir -p src/a/deep src/b
	for f in a/x.txt a/deep/y.txt b/z.txt top.txt; do
		printf 'content:%s\n' "$f" > "src/$f"
	done
}

USAGE='usage: corral-checkout [-I PATTERN] [-p PARTSFILE] [-x EXCLUDE] SRC DEST [PART...]
       corral-checkout -m MANIFEST [-D MEMO] [-I PATTERN] [-p PARTSFILE] [-x EXCLUDE] SRC [PART...]
       corral-checkout -d DEST
       corral-checkout -M DIR [-D MEMO] [-I PATTERN] [-x EXCLUDE] SRC'

# listing DIR: every path under DIR, sorted, without the clone mark
listing() {
	(cd "$1" && find . -mindepth 1 ! -name .corral-clone | LC_ALL=C sort)
}

@test "checkout: -h prints usage to stdout and exits 0" {
	assert_help "$USAGE" corral-checkout -h
}

@test "checkout: missing DEST prints usage to stderr and exits 2" {
	assert_usage_error "$USAGE" corral-checkout src
}

@test "checkout: -d with other operands is a usage error" {
	assert_usage_error "$USAGE" corral-checkout -d clone src
}

@test "checkout: a directory part copies its subtree and nothing else" {
	run -0 --separate-stderr corral-checkout src clone a
	assert_stderr ""
	run -0 listing clone
	assert_output "$(printf '%s\n' ./a ./a/deep ./a/deep/y.txt ./a/x.txt)"
	run -0 cat clone/a/deep/y.txt
	assert_output "content:a/deep/y.txt"
}

@test "checkout: a nested file part brings only its parent directories" {
	run -0 corral-checkout src clone a/deep/y.txt top.txt
	run -0 listing clone
	assert_output "$(printf '%s\n' ./a ./a/deep ./a/deep/y.txt ./top.txt)"
}

@test "checkout: a file and then its parent directory merge into one tree" {
	run -0 corral-checkout src clone a/x.txt a
	run -0 listing clone
	assert_output "$(printf '%s\n' ./a ./a/deep ./a/deep/y.txt ./a/x.txt)"
}

@test "checkout: parts come from -p files and operands alike" {
	printf '%s\n' a/x.txt b > parts
	run -0 corral-checkout -p parts src clone top.txt
	run -0 listing clone
	assert_output "$(printf '%s\n' ./a ./a/x.txt ./b ./b/z.txt ./top.txt)"
}

@test "checkout: no parts gives an empty clone" {
	run -0 corral-checkout src clone
	run -0 listing clone
	assert_output ""
	assert_file_exists clone/.corral-clone
}

@test "checkout: the part '.' copies the whole tree except -x exclusions" {
	mkdir -p src/.corral/logs && echo old > src/.corral/logs/agent-0.jsonl
	run -0 corral-checkout -x .corral -x ./b src clone .
	run -0 listing clone
	assert_output "$(printf '%s\n' ./a ./a/deep ./a/deep/y.txt ./a/x.txt ./top.txt)"
}

@test "checkout: -I PATTERN leaves out what matches it as .gitignore reads it: without a '/' any one component, with one the path from the top; neither cloned nor listed" {
	mkdir -p src/a/__pycache__ src/b/gnupg
	touch src/a/__pycache__/m.pyc src/a/m.pyc src/b/gnupg/random_seed src/b/gnupg/S.gpg-agent src/b/gnupg/pubring src/random_seed
	run -0 corral-checkout -I __pycache__ -I '*.pyc' -I 'b/gnupg/S.*' -I b/gnupg/random_seed src clone .
	run -0 listing clone
	assert_output "$(printf '%s\n' ./a ./a/deep ./a/deep/y.txt ./a/x.txt ./b ./b/gnupg ./b/gnupg/pubring ./b/z.txt ./random_seed ./top.txt)"
	run -0 corral-checkout -m manifest -I 'a/' -I 'gnupg/' src .
	run -0 sed -E 's/^([a-z]) [0-9]+ [0-9]+ ([0-9a-f]{64}|-) /\1 /' manifest
	assert_output "$(printf '%s\n' 'd .' 'n ./' 'd b' 'n b/' 'f b/z.txt' 'f random_seed' 'f top.txt')"
}

@test "checkout: a socket or a FIFO is never part of a manifest, nor of a listing's names" {
	run -0 corral-checkout -m before src b
	mkfifo src/b/fifo
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' src/b/S.sock
	run -0 corral-checkout -m after src b
	run -0 diff before after
}

@test "checkout: a missing part is a warning naming it, and the rest is copied" {
	run -0 --separate-stderr corral-checkout src clone nothere a/x.txt
	assert_stderr "corral-checkout: part 'nothere' not found in 'src'"
	assert_file_exists clone/a/x.txt
}

@test "checkout: modes and mtimes of files and directories are kept" {
	chmod 751 src/a/deep
	chmod 640 src/a/x.txt
	touch -d '2001-02-03 04:05:06' src/a/x.txt src/a/deep/y.txt
	touch -d '2002-02-03 04:05:06' src/a/deep
	run -0 corral-checkout src clone a
	run -0 stat -c '%a %Y' src/a/x.txt src/a/deep src/a/deep/y.txt
	local want=$output
	run -0 stat -c '%a %Y' clone/a/x.txt clone/a/deep clone/a/deep/y.txt
	assert_output "$want"
}

@test "checkout: files are copies, not hard links" {
	run -0 corral-checkout src clone top.txt
	run -0 stat -c %h clone/top.txt
	assert_output "1"
	[ "$(stat -c %i src/top.txt)" != "$(stat -c %i clone/top.txt)" ]
}

@test "checkout: writing, truncating and chmod-ing a clone leaves SRC and the other clone alone" {
	run -0 corral-checkout src c1 a top.txt
	run -0 corral-checkout src c2 a top.txt
	local before
	before=$(tree_digest src)
	echo more >> c1/top.txt
	: > c1/a/x.txt
	chmod 000 c1/a/deep/y.txt
	rm c1/a/deep/y.txt
	run -0 tree_digest src
	assert_output "$before"
	run -0 cat c2/top.txt c2/a/x.txt c2/a/deep/y.txt
	assert_output "$(printf 'content:top.txt\ncontent:a/x.txt\ncontent:a/deep/y.txt')"
}

@test "checkout: a large file is copied byte for byte" {
	head -c 5000000 /dev/urandom > src/big.bin
	run -0 corral-checkout src clone big.bin
	run -0 cmp src/big.bin clone/big.bin
}

@test "checkout: an existing clone at DEST is replaced, stale files gone" {
	run -0 corral-checkout src clone a
	echo stale > clone/stale.txt
	run -0 corral-checkout src clone b
	run -0 listing clone
	assert_output "$(printf '%s\n' ./b ./b/z.txt)"
}

@test "checkout: an empty directory at DEST is used" {
	mkdir clone
	run -0 corral-checkout src clone top.txt
	assert_file_exists clone/top.txt
}

@test "checkout: a DEST that is not a corral clone is refused and kept" {
	mkdir mine && echo precious > mine/data
	run -2 --separate-stderr corral-checkout src mine a
	assert_stderr "corral-checkout: 'mine' exists and is not a corral clone; not replacing it"
	run -0 cat mine/data
	assert_output "precious"
	echo plain > file
	run -2 --separate-stderr corral-checkout src file a
	assert_stderr "corral-checkout: 'file' exists and is not a corral clone; not replacing it"
}

@test "checkout: an absolute part is refused and nothing is written" {
	run -2 --separate-stderr corral-checkout src clone a /etc
	assert_stderr "corral-checkout: part '/etc' is absolute"
	run -0 ls
	assert_output "src"
}

@test "checkout: a part whose '..' leaves SRC is refused, one that stays inside is fine" {
	run -2 --separate-stderr corral-checkout src clone 'a/../../secret'
	assert_stderr "corral-checkout: part 'a/../../secret' leaves the tree"
	run -0 ls
	assert_output "src"
	run -0 corral-checkout src clone 'a/../b'
	assert_file_exists clone/b/z.txt
}

@test "checkout: a symlinked directory leading out of SRC is refused before anything is written" {
	mkdir outside && echo secret > outside/s.txt
	ln -s "$PWD/outside" src/out
	run -2 --separate-stderr corral-checkout src clone a out/s.txt
	assert_stderr "corral-checkout: part 'out/s.txt': symlink 'out' leads outside '$PWD/src'"
	run -0 ls
	assert_output "$(printf 'outside\nsrc')"
}

@test "checkout: a symlink leading out found inside a copied directory is refused and nothing is left" {
	ln -s /etc/passwd src/b/evil
	run -2 --separate-stderr corral-checkout src clone b
	assert_stderr "corral-checkout: part 'b': symlink 'b/evil' leads outside '$PWD/src'"
	run -0 ls -A
	assert_output "src"
}

@test "checkout: a relative symlink that climbs out of SRC is refused" {
	ln -s ../../x src/a/up
	run -2 --separate-stderr corral-checkout src clone a/up
	assert_stderr "corral-checkout: part 'a/up': symlink 'a/up' leads outside '$PWD/src'"
}

@test "checkout: symlinks inside SRC stay symlinks, absolute ones made relative to the clone" {
	ln -s ../top.txt src/a/rel
	ln -s "$PWD/src/b/z.txt" src/a/abs
	run -0 corral-checkout src clone a b top.txt
	run -0 readlink clone/a/rel
	assert_output "../top.txt"
	run -0 readlink clone/a/abs
	assert_output "../b/z.txt"
	run -0 cat clone/a/abs
	assert_output "content:b/z.txt"
}

@test "checkout: a dangling symlink inside SRC is copied as it is" {
	ln -s gone.txt src/a/dangling
	run -0 corral-checkout src clone a
	run -0 readlink clone/a/dangling
	assert_output "gone.txt"
}

@test "checkout: a part that is a symlink inside SRC brings its target into the clone" {
	mkdir src/bin
	ln -s ../a/x.txt src/bin/tool
	run -0 --separate-stderr corral-checkout src clone bin/tool
	assert_stderr ""
	run -0 listing clone
	assert_output "$(printf '%s\n' ./a ./a/x.txt ./bin ./bin/tool)"
	run -0 cat clone/bin/tool
	assert_output "content:a/x.txt"
}

@test "checkout: a link inside a copied directory brings its target, and a target that is a link is followed too" {
	ln -s ../b src/a/tob
	ln -s ../top.txt src/b/totop
	run -0 corral-checkout src clone a
	run -0 listing clone
	assert_output "$(printf '%s\n' ./a ./a/deep ./a/deep/y.txt ./a/tob ./a/x.txt ./b ./b/totop ./b/z.txt ./top.txt)"
}

@test "checkout: links that lead in a circle are each followed once, and the checkout ends" {
	ln -s ../b src/a/tob
	ln -s ../a src/b/toa
	ln -s . src/a/self
	run -0 timeout 10 corral-checkout src clone a
	run -0 listing clone
	assert_output "$(printf '%s\n' ./a ./a/deep ./a/deep/y.txt ./a/self ./a/tob ./a/x.txt ./b ./b/toa ./b/z.txt)"
}

@test "checkout: -m lists what a link leads to, once, so editing the target changes the manifest" {
	mkdir src/bin
	ln -s ../b/z.txt src/bin/tool
	run -0 corral-checkout -m m src bin/tool
	run -0 grep -c ' b/z.txt$' m
	assert_output 1
	cp m m.before
	sleep 0.01
	echo changed > src/b/z.txt
	run -0 corral-checkout -m m src bin/tool
	run -1 cmp -s m m.before
}

@test "checkout: a clone inside SRC is never copied into another clone" {
	run -0 corral-checkout src src/work/agent-0 a
	run -0 corral-checkout src src/work/agent-1 .
	run -0 listing src/work/agent-1
	refute_contains "$output" "agent-0"
	refute_contains "$output" "./work/"
}

@test "checkout: a DEST under a regular file fails with exit 2" {
	echo plain > plain
	run -2 --separate-stderr corral-checkout src plain/clone a
	assert_stderr "corral-checkout: cannot stat 'plain/clone': Not a directory"
}

@test "checkout: a missing SRC is named and exits 2" {
	run -2 --separate-stderr corral-checkout nosrc clone a
	assert_stderr "corral-checkout: cannot open 'nosrc': No such file or directory"
}

@test "checkout: an unreadable -p file is named and exits 2" {
	run -2 --separate-stderr corral-checkout -p noparts src clone
	assert_stderr "corral-checkout: cannot open 'noparts': No such file or directory"
}

@test "checkout: -d removes a clone, also one a unit made unreadable" {
	run -0 corral-checkout src clone a
	chmod 000 clone/a/deep
	run -0 --separate-stderr corral-checkout -d clone
	assert_stderr ""
	assert_no_file clone
}

@test "checkout: -d removes symlinks inside a clone without following them" {
	mkdir keep && echo mine > keep/file
	run -0 corral-checkout src clone a
	ln -s "$PWD/keep" clone/a/link
	run -0 corral-checkout -d clone
	run -0 cat keep/file
	assert_output "mine"
}

@test "checkout: -d refuses a directory that is not a clone and removes nothing" {
	run -2 --separate-stderr corral-checkout -d src
	assert_stderr "corral-checkout: 'src' is not a corral clone; not removing it"
	assert_file_exists src/top.txt
}

@test "checkout: -d of a missing path is not an error" {
	run -0 --separate-stderr corral-checkout -d nothere
	assert_stderr ""
}

@test "checkout: -m writes a manifest of what the clone would hold, a link's target too, each directory's names as a line too, and copies nothing" {
	ln -s ../top.txt src/a/lnk
	run -0 --separate-stderr corral-checkout -m manifest src a nothere
	assert_stderr ""
	run -0 sed -E 's/^([a-z]) [0-9]+ [0-9]+ ([0-9a-f]{64}|-) /\1 /' manifest
	assert_output "$(printf '%s\n' 'd a' 'n a/' 'd a/deep' 'n a/deep/' 'f a/deep/y.txt' 'l a/lnk -> ../top.txt' 'f a/x.txt' '- nothere' 'f top.txt')"
	run -0 ls
	assert_output "$(printf 'manifest\nsrc')"
}

@test "checkout: -m rewrites the manifest only when a part's content changed" {
	run -0 corral-checkout -m manifest src a b
	touch -d '2001-01-01' manifest
	run -0 corral-checkout -m manifest src a b
	run -0 stat -c %Y manifest
	assert_output "$(date -d 2001-01-01 +%s)"
	echo changed >> src/b/z.txt
	run -0 corral-checkout -m manifest src a b
	run -0 stat -c %Y manifest
	[ "$output" -gt "$(date -d 2001-01-01 +%s)" ]
}

@test "checkout: -m refuses an escaping part like a checkout does" {
	ln -s /etc src/out
	run -2 --separate-stderr corral-checkout -m manifest src out
	assert_stderr "corral-checkout: part 'out': symlink 'out' leads outside '$PWD/src'"
	assert_no_file manifest
}

@test "checkout: -M writes every slice's manifest in one process, rewrites only the changed ones, and prints their digest" {
	mkdir plan
	printf 'a\n' > plan/0.parts
	printf 'b\ntop.txt\n' > plan/1.parts
	printf 'nothere\n' > plan/2.parts
	run -0 --separate-stderr corral-checkout -M plan src
	assert_stderr ""
	first=$output
	[[ $first =~ ^[0-9a-f]{64}$ ]] || flunk "$first"
	run -0 corral-checkout -m m1 src b top.txt
	run -0 cmp m1 plan/1.manifest
	assert_equal "$first" "$(cat plan/0.manifest plan/1.manifest plan/2.manifest | sha256sum | cut -d' ' -f1)"
	touch -d 2001-01-01 plan/*.manifest
	echo changed >> src/b/z.txt
	run -0 corral-checkout -M plan src
	[ "$output" != "$first" ] || flunk "digest unchanged"
	run -0 stat -c %Y plan/0.manifest plan/2.manifest
	assert_output "$(printf '%s\n' "$(date -d 2001-01-01 +%s)" "$(date -d 2001-01-01 +%s)")"
	[ "$(stat -c %Y plan/1.manifest)" -gt "$(date -d 2001-01-01 +%s)" ]
}

@test "checkout: -M reads a part DIR/ as DIR listed, one line of the names in it (a file's content changing leaves it, an entry added changes it) that the whole tree's manifest holds too; a PART DIR/ of -m is the whole of DIR" {
	mkdir plan
	printf 'a/\n' > plan/0.parts
	run -0 --separate-stderr corral-checkout -M plan src
	assert_stderr ""
	run -0 cat plan/0.manifest
	[[ $output =~ ^n\ [0-7]{4}\ 2\ [0-9a-f]{64}\ a/$ ]] || flunk "not one line of a's names: $output"
	local names=$output
	echo changed >> src/a/x.txt
	touch -d '+1 second' src/a/x.txt
	run -0 corral-checkout -M plan src
	run -0 cat plan/0.manifest
	assert_output "$names"
	run -0 corral-checkout -m whole src .
	run -0 grep -cxF "$names" whole
	assert_output 1
	: > src/a/new
	run -0 corral-checkout -M plan src
	run -0 cat plan/0.manifest
	[ "$output" != "$names" ] || flunk "an entry added left the line as it was"
	run -0 corral-checkout -m slash src a/
	run -0 corral-checkout -m plain src a
	run -0 cmp slash plain
}

@test "checkout: -M removes the manifest of a slice whose parts are refused and goes on" {
	mkdir plan
	ln -s /etc src/out
	printf 'out\n' > plan/0.parts
	printf 'a\n' > plan/1.parts
	echo stale > plan/0.manifest
	run -0 corral-checkout -M plan src
	assert_no_file plan/0.manifest
	assert_file_exists plan/1.manifest
}
