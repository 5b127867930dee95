# scope.awk -- name the function or test that encloses each finding.
#
# Input: lines "PATH<TAB>LINE<TAB>REST", PATH relative to the current
# directory.  Output: the same lines with the scope inserted after LINE:
# "PATH<TAB>LINE<TAB>SCOPE<TAB>REST".  SCOPE is the C function, the bats
# @test name, or the shell function holding LINE, or "-" at top level.
#
# A heuristic, kept small on purpose: C functions are found by a name
# followed by "(" at the start of a line, or at the end of a type that
# starts in column 0, with braces counted (strings and comments are not
# parsed); shell and bats blocks end at a "}" in column 0.  Finders use
# the scope in identities, so that a finding keeps its identity when code
# above it moves; two tools that name the same scope agree on a place.

function is_c(path) { return path ~ /\.[ch]$/ }

function c_header(s,    t) {
	if (s ~ /^[ \t]/ || s ~ /^#/ || s ~ /;[ \t]*$/ || s !~ /\(/)
		return ""
	t = s
	sub(/\(.*/, "", t)
	sub(/[ \t]+$/, "", t)
	if (t !~ /[A-Za-z_][A-Za-z0-9_]*$/)
		return ""
	sub(/.*[^A-Za-z0-9_]/, "", t)
	if (t ~ /^(if|for|while|switch|return|sizeof)$/)
		return ""
	return t
}

function sh_header(s,    t) {
	if (s ~ /^[ \t]*@test[ \t]/) {
		t = s
		sub(/^[ \t]*@test[ \t]+/, "", t)
		sub(/[ \t]*\{[ \t]*$/, "", t)
		if (t ~ /^".*"$/ || t ~ /^'.*'$/)
			t = substr(t, 2, length(t) - 2)
		return t
	}
	if (s ~ /^[ \t]*(function[ \t]+)?[A-Za-z_][A-Za-z0-9_:.-]*[ \t]*\(\)/) {
		t = s
		sub(/^[ \t]*(function[ \t]+)?/, "", t)
		sub(/[ \t]*\(\).*/, "", t)
		return t
	}
	if (s ~ /^[ \t]*function[ \t]+[A-Za-z_][A-Za-z0-9_:.-]*[ \t]*\{/) {
		t = s
		sub(/^[ \t]*function[ \t]+/, "", t)
		sub(/[ \t]*\{.*/, "", t)
		return t
	}
	return ""
}

# Fill scope[path, n] for every line n of path.
function load(path,    line, n, cur, pend, depth, h, c, i, ls) {
	n = 0; cur = "-"; pend = ""; depth = 0
	while ((getline line < path) > 0) {
		n++
		if (is_c(path)) {
			if (depth == 0 && (h = c_header(line)) != "")
				pend = h
			ls = cur
			for (i = 1; i <= length(line); i++) {
				c = substr(line, i, 1)
				if (c == "{" && depth++ == 0 && pend != "") {
					cur = ls = pend
					pend = ""
				} else if (c == "}" && depth > 0 && --depth == 0)
					cur = "-"
			}
			scope[path, n] = (ls == "-" && pend != "") ? pend : ls
			if (depth == 0 && line ~ /;[ \t]*$/)
				pend = ""
		} else {
			if ((h = sh_header(line)) != "")
				cur = h
			scope[path, n] = cur
			if (line ~ /^}/)
				cur = "-"
		}
	}
	close(path)
	loaded[path] = 1
}

BEGIN { FS = OFS = "\t" }

{
	if (!($1 in loaded))
		load($1)
	s = (($1, $2) in scope) ? scope[$1, $2] : "-"
	rest = $0
	sub(/^[^\t]*\t[^\t]*/, "", rest)
	print $1, $2 "\t" s rest
}
