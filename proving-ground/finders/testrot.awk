# testrot.awk -- bats tests that cannot fail, read from their text.
#
# Input: one or more .bats files.  Output, one line per finding:
# "PATH<TAB>LINE<TAB>KIND<TAB>TEST<TAB>DETAIL", for four kinds:
#
#   asserts-nothing    a test whose only commands are a plain 'run' (which
#                      never fails) and housekeeping (echo, cd, local,
#                      assignments, ...): nothing it does can fail it.  A
#                      bare command counts as a check, since bats fails a
#                      test on any failing command.
#   tautology          a check comparing a thing with itself, or two
#                      constants: [ 1 -eq 1 ], [ "$x" = "$x" ],
#                      assert_equal a a
#   swallowed-failure  a check followed by '|| true' (or '|| :'): it
#                      can never fail the test.  '|| true' after a command
#                      that is not a check (rm, kill) is housekeeping.
#   skip-permanent     a 'skip' that no condition guards: not inside an
#                      if/case/loop, not after '||' or '&&', in a test or
#                      in setup (which skips every test of the file).
#
# Words are split on blanks, so a quoted operand holding a blank is not
# compared; heredoc bodies are skipped.  It reads text and runs nothing.

BEGIN { OFS = "\t" }

function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }

function unquote(s) {
	if (s ~ /^".*"$/ || s ~ /^'.*'$/)
		return substr(s, 2, length(s) - 2)
	return s
}

function constant(s) { return s !~ /[$`]/ }

function report(kind, detail, at) {
	if (!((FILENAME, test, kind) in seen)) {
		seen[FILENAME, test, kind] = 1
		print FILENAME, at, kind, test, detail
	}
}

# Is this command (its first word w1) a check of something?
function is_check(cmd, w1) {
	if (w1 ~ /^(\[|\[\[|test|\(\(|grep|diff|cmp|false)$/)
		return 1
	if (w1 ~ /^(assert|refute)/ || w1 ~ /^(flunk|fail)$/)
		return 1
	if (w1 == "run" && cmd ~ /^run([ \t]+--?[a-z-]+)*[ \t]+(-[0-9]+|!)([ \t]|$)/)
		return 1
	if (w1 == "jq" && cmd ~ /[ \t]-[a-z]*e/)
		return 1
	return 0
}

# Housekeeping that checks nothing about the code under test.
function is_chore(cmd, w1) {
	if (w1 ~ /^[A-Za-z_][A-Za-z0-9_]*=/ || cmd == "" || w1 ~ /^#/)
		return 1
	return w1 ~ /^(run|echo|printf|cd|pushd|popd|local|export|declare)$/ ||
	    w1 ~ /^(readonly|unset|:|true|load|source|\.|set|shift|wait|skip)$/ ||
	    w1 ~ /^(mkdir|touch|rm|cp|mv|ln|sleep|cat)$/ ||
	    w1 ~ /^(\{|\}|then|else|fi|do|done|esac|;;)$/
}

# Tautologies among the words of a check.
function tautology(cmd,    n, w, a, b, i) {
	n = split(cmd, w, /[ \t]+/)
	if (w[1] == "!" ) {
		for (i = 1; i < n; i++) w[i] = w[i + 1]
		n--
	}
	if (w[1] == "[" || w[1] == "[[" || w[1] == "test") {
		if (w[n] == "]" || w[n] == "]]")
			n--
		if (n == 4 && w[3] ~ /^(=|==|!=|-eq|-ne|-lt|-le|-gt|-ge|<|>)$/) {
			a = unquote(w[2]); b = unquote(w[4])
			if (a == b)
				return "compares " w[2] " with itself"
			if (constant(a) && constant(b))
				return "compares two constants"
		}
		if (n == 3 && w[2] ~ /^-[nz]$/ && constant(unquote(w[3])))
			return "tests a constant"
		return ""
	}
	if (w[1] == "assert_equal" && n == 3) {
		a = unquote(w[2]); b = unquote(w[3])
		if (a == b)
			return "compares " w[2] " with itself"
		if (constant(a) && constant(b))
			return "compares two constants"
	}
	return ""
}

FNR == 1 { test = ""; depth = 0; heredoc = ""; infunc = "" }

# A heredoc body: skip up to its terminator.
heredoc != "" {
	if (trim($0) == heredoc)
		heredoc = ""
	next
}

{
	line = trim($0)
	if (match(" " line, /[^<]<<-?[ \t]*['"]?[A-Za-z_][A-Za-z0-9_]*/)) {
		heredoc = substr(" " line, RSTART + 1, RLENGTH - 1)
		sub(/^<<-?[ \t]*['"]?/, "", heredoc)
	}
}

/^[ \t]*@test[ \t]/ {
	test = $0
	sub(/^[ \t]*@test[ \t]+/, "", test)
	sub(/[ \t]*\{[ \t]*$/, "", test)
	test = unquote(test)
	start = FNR; checks = 0; chores = 0; depth = 0
	next
}

/^(setup|setup_file)[ \t]*\(\)/ { infunc = $0; sub(/[ \t]*\(.*/, "", infunc); depth = 0; next }

/^}/ {
	if (test != "" && checks == 0) {
		report("asserts-nothing", "only plain 'run' and housekeeping", start)
	}
	test = ""; infunc = ""
	next
}

test == "" && infunc == "" { next }

{
	# Block depth: a skip inside any if, case or loop is conditional.
	w1 = line; sub(/[ \t;].*/, "", w1)
	if (w1 ~ /^(if|case|while|until|for)$/)
		depth++
	if (line ~ /(^|[ \t;])(fi|esac|done)[ \t;]*$/ && depth > 0)
		depth--

	if (line ~ /^skip([ \t]|$)/ && depth == 0) {
		if (test == "") {
			test = infunc
			report("skip-permanent", "'skip' in " infunc " skips every test of the file", FNR)
			test = ""
		} else
			report("skip-permanent", "'skip' that no condition guards", FNR)
	}
	if (test == "")
		next

	# Split the line on || and && into commands.
	n = split(line, part, /[ \t]*(\|\||&&)[ \t]*/)
	for (i = 1; i <= n; i++) {
		cmd = trim(part[i])
		c1 = cmd; sub(/^![ \t]+/, "", c1); sub(/[ \t;].*/, "", c1)
		if (is_check(cmd, c1)) {
			checks++
			if ((d = tautology(cmd)) != "")
				report("tautology", d, FNR)
			if (i < n && trim(part[n]) ~ /^(true|:|return 0|exit 0)[ \t;]*$/)
				report("swallowed-failure", "'" trim(part[n]) \
				    "' after a check: it can never fail the test", FNR)
		} else if (!is_chore(cmd, c1))
			checks++
	}
}
