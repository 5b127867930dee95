# scale-gen.awk -- generate systems with randomly planted defects.
#
# awk -v seed=S -v n=N -v out=DIR -f scale-gen.awk
#
# Writes DIR/sys-01 .. DIR/sys-N (the directories sh/, src/, tests/ and
# notes/ of each must exist), and prints the ground truth, one line per
# planted file: "SYSTEM<TAB>PATH<TAB>CLASS<TAB>EXPECT<TAB>FINDERS", where
# EXPECT is catch (a defect) or quiet (a clean control written to look
# like one) and FINDERS the finders that claim CLASS.  Each system holds
# two files per class, each a defect or a control at even odds, in one of
# several forms, with names drawn from a word list.  The generator is
# Park-Miller's minimal standard, so one seed gives the same systems with
# any awk.  Some forms are known to be hard for some finders (a quoted
# operand holding a blank, for the test-rot finder): the catch rate says
# how hard.

function rand31() { state = (state * 16807) % 2147483647; return state }
function pick(k) { return int(rand31() / 2147483647 * k) }

function emit(path, text) {
	printf "%s", text > (sys "/" path)
	close(sys "/" path)
}

function name(    w) {
	w = words[pick(nwords) + 1] "_" words[pick(nwords) + 1]
	while (w in used)
		w = w "x"
	used[w] = 1
	return w
}

function truth(path, class, defect, finders) {
	printf "%s\t%s\t%s\t%s\t%s\n", sysname, path, class,
	    defect ? "catch" : "quiet", finders
}

# One shell script: a defect or a control of a shellcheck class.
function shell(class, defect,    nm, f, k, body, sh) {
	nm = name(); f = "sh/" nm ".sh"; sh = "#!/bin/sh"
	if (class == "SC2086") {
		k = pick(4)
		if (defect)
			body = (k == 0) ? "cp $src \"$dst\"" : (k == 1) ? "rm -f $dst" : \
			    (k == 2) ? "ls $src" : "printf '%s\\n' $src"
		else
			body = (k == 0) ? "cp \"$src\" \"$dst\"" : (k == 1) ? "rm -f \"$dst\"" : \
			    (k == 2) ? "n=${#src}\necho \"$((n + 1))\"" : "ls -- \"$src\""
	} else if (class == "SC2164") {
		k = pick(defect ? 3 : 4)
		if (defect)
			body = (k == 0) ? "cd \"$src\"\nls" : \
			    (k == 1) ? nm "() {\n\tcd \"$1\"\n\tpwd\n}\n" nm " \"$dst\"" : "cd /tmp\nls"
		else
			body = (k == 0) ? "cd \"$src\" || exit 1\nls" : \
			    (k == 1) ? nm "() {\n\tcd \"$1\" || return 1\n\tpwd\n}\n" nm " \"$dst\"" : \
			    (k == 2) ? "(cd \"$src\" && ls)" : "if cd \"$src\"; then\n\tls\nfi"
	} else if (class == "SC2002") {
		k = pick(3)
		if (defect)
			body = (k == 0) ? "cat \"$src\" | wc -l" : (k == 1) ? "cat \"$src\" | grep -c x" : \
			    "cat \"$src\" | sort"
		else
			body = (k == 0) ? "wc -l < \"$src\"" : (k == 1) ? "grep -c x \"$src\"" : \
			    "cat \"$src\" \"$dst\" | sort"
	} else {	# SC3014
		k = pick(2)
		if (defect)
			body = (k == 0) ? "if [ \"$src\" == /tmp ]; then\n\techo tmp\nfi" : \
			    "[ \"$dst\" == x ] && echo x"
		else if (k == 0)
			body = "if [ \"$src\" = /tmp ]; then\n\techo tmp\nfi"
		else {
			sh = "#!/bin/bash"
			body = "if [[ $src == /tmp ]]; then\n\techo tmp\nfi"
		}
	}
	emit(f, sh "\n# " nm ".sh\nset -u\nsrc=${1:-/tmp}\ndst=${2:-/tmp/" nm "}\n" body "\necho \"$dst\"\n")
	truth(f, class, defect, "shellcheck")
}

# One C file: a defect or a control of a class both C finders claim.
function cfile(class, defect,    nm, f, k, body) {
	nm = name(); f = "src/" nm ".c"; k = pick(3)
	if (class == "leak") {
		if (k == 0)
			body = "int\n" nm "(const char *path)\n{\n\tchar *buf = malloc(64);\n\tFILE *fp;\n\n" \
			    "\tif (!buf)\n\t\treturn -1;\n\tif (!(fp = fopen(path, \"r\")))" \
			    (defect ? "\n\t\treturn -1;\n" : " {\n\t\tfree(buf);\n\t\treturn -1;\n\t}\n") \
			    "\tbuf[0] = (char)fgetc(fp);\n\tfclose(fp);\n\tfree(buf);\n\treturn 0;\n}\n"
		else if (k == 1)
			body = "int\n" nm "(int n)\n{\n\tint *v = malloc(sizeof(*v) * 8);\n\n" \
			    "\tif (!v)\n\t\treturn -1;\n\tif (n < 0)" \
			    (defect ? "\n\t\treturn -1;\n" : " {\n\t\tfree(v);\n\t\treturn -1;\n\t}\n") \
			    "\tv[0] = n;\n\tn = v[0] + 1;\n\tfree(v);\n\treturn n;\n}\n"
		else if (defect)
			body = "int\n" nm "(int n)\n{\n\tchar *p = malloc(16);\n\n\tp = malloc(32);\n" \
			    "\tif (!p)\n\t\treturn -1;\n\tp[0] = (char)n;\n\tn = p[0];\n\tfree(p);\n\treturn n;\n}\n"
		else
			body = "char *\n" nm "(size_t n)\n{\n\tchar *p = malloc(n + 1);\n\n" \
			    "\tif (p)\n\t\tp[0] = 0;\n\treturn p;\n}\n"
	} else if (class == "oob-index") {
		if (k == 0)
			body = "int\n" nm "(int n)\n{\n\tint a[8];\n\tint i;\n\n\tfor (i = 0; i " \
			    (defect ? "<=" : "<") " 8; i++)\n\t\ta[i] = i * n;\n\treturn a[3] + a[n & 7];\n}\n"
		else if (k == 1)
			body = "int\n" nm "(int n)\n{\n\tint a[8] = { 0 };\n\n\ta[0] = n;\n\treturn a[" \
			    (defect ? "8" : "7") "];\n}\n"
		else
			body = "static int t_" nm "[4];\n\nvoid\n" nm "(int v)\n{\n\tt_" nm "[" \
			    (defect ? "4" : "v & 3") "] = v;\n}\n"
	} else {	# uninit
		if (k == 0)
			body = "int\n" nm "(int n)\n{\n\tint i, s" (defect ? "" : " = 0") ";\n\n" \
			    "\tfor (i = 0; i < n; i++)\n\t\ts += i;\n\treturn s;\n}\n"
		else if (k == 1)
			body = "int\n" nm "(int n)\n{\n\tint x" (defect ? "" : " = 0") ";\n\n" \
			    "\tif (n > 3)\n\t\tx = n;\n\treturn x;\n}\n"
		else
			body = "int\n" nm "(int n)\n{\n\tint v" (defect ? "" : " = n") ";\n\n\treturn v * n;\n}\n"
	}
	emit(f, "/* " nm ".c */\n#include <stdio.h>\n#include <stdlib.h>\n\n" body)
	truth(f, class, defect, "cppcheck gcc")
}

# One bats file holding one test: a defect or a control of a test-rot class.
function batsfile(class, defect,    nm, f, k, body, finders) {
	nm = name(); f = "tests/" nm ".bats"; finders = "testrot"
	if (class == "asserts-nothing") {
		k = pick(3)
		if (defect)
			body = (k == 0) ? "\trun " nm " arg" : (k == 1) ? "\trun " nm " arg\n\techo \"$output\"" : \
			    "\trun " nm " a\n\trun " nm " b"
		else
			body = (k == 0) ? "\trun -0 " nm " arg" : \
			    (k == 1) ? "\trun " nm " arg\n\t[ \"$status\" -eq 0 ]" : "\t" nm " arg"
	} else if (class == "tautology") {
		finders = "testrot shellcheck"
		k = pick(defect ? 4 : 2)
		if (defect)
			body = (k == 0) ? "\trun -0 " nm "\n\t[ 1 -eq 1 ]" : \
			    (k == 1) ? "\trun -0 " nm "\n\t[ \"$output\" = \"$output\" ]" : \
			    (k == 2) ? "\trun -0 " nm "\n\t[ \"ok\" = \"ok\" ]" : \
			    "\t[ \"$(" nm " 2 3)\" -eq \"$(" nm " 2 3)\" ]"
		else
			body = (k == 0) ? "\trun -0 " nm "\n\t[ \"$output\" = expected ]" : \
			    "\trun " nm "\n\t[ \"$status\" -eq 0 ]"
	} else if (class == "swallowed-failure") {
		k = pick(defect ? 3 : 2)
		if (defect)
			body = (k == 0) ? "\trun " nm "\n\t[ \"$output\" = x ] || true" : \
			    (k == 1) ? "\trun " nm "\n\t[ \"$status\" -eq 0 ] || :" : \
			    "\trun -0 " nm "\n\tgrep -q x \"$BATS_TEST_TMPDIR/f\" || true"
		else
			body = (k == 0) ? "\trun -0 " nm "\n\trm -f \"$BATS_TEST_TMPDIR/f\" || true" : \
			    "\trun -0 " nm "\n\tkill \"$!\" 2>/dev/null || true"
	} else {	# skip-permanent
		k = pick(defect ? 2 : 3)
		if (defect)
			body = (k == 0) ? "\tskip\n\trun -0 " nm : "\tskip \"not ready\"\n\trun -0 " nm
		else
			body = (k == 0) ? "\t[ -x /bin/sh ] || skip \"no sh\"\n\trun -0 " nm : \
			    (k == 1) ? "\tif [ -z \"${HOME:-}\" ]; then\n\t\tskip \"no HOME\"\n\tfi\n\trun -0 " nm : \
			    "\tcommand -v tar >/dev/null || skip \"no tar\"\n\trun -0 " nm
	}
	emit(f, "#!/usr/bin/env bats\nbats_require_minimum_version 1.5.0\n\n@test \"" nm \
	    " works\" {\n" body "\n}\n")
	truth(f, class, defect, finders)
}

# One note: a marker, or a note that only talks about one.
function note(defect,    nm, f) {
	nm = name(); f = "notes/" nm ".txt"
	emit(f, defect ? nm ": DEADCANARY until the check is written\n" : \
	    nm ": the dead canary marker is gone from here\n")
	truth(f, "marker", defect, "deadcanary")
}

BEGIN {
	OFS = "\t"
	state = (seed % 2147483646) + 1
	nwords = split("alpha bravo cargo delta ember fable grove harbor ivory jolly kiosk lumen mango nylon orbit pixel", words, " ")
	nsh = split("SC2086 SC2164 SC2002 SC3014", shc, " ")
	nc = split("leak oob-index uninit", cc, " ")
	nt = split("asserts-nothing tautology swallowed-failure skip-permanent", tc, " ")
	for (s = 1; s <= n; s++) {
		sysname = sprintf("sys-%02d", s)
		split("", used)
		sys = out "/" sysname
		for (i = 1; i <= nsh; i++) { shell(shc[i], pick(2)); shell(shc[i], pick(2)) }
		for (i = 1; i <= nc; i++) { cfile(cc[i], pick(2)); cfile(cc[i], pick(2)) }
		for (i = 1; i <= nt; i++) { batsfile(tc[i], pick(2)); batsfile(tc[i], pick(2)) }
		note(pick(2)); note(pick(2))
	}
}
