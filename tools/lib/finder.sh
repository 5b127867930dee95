# finder.sh -- the scope of corral's finders written in sh.
#
# build-aux/mkscript puts this file (and usage.sh, which it includes) in
# place of a script's '#include finder.sh' line.  It gives:
#
#   finder_open "$@"    all a finder of "[-i PATH] [DIR]" does before it
#                       looks: its options (finder_parse), at most one
#                       operand, finder_enter DIR (default .)
#   finder_parse "$@"   --help, --version, -h and -i PATH (repeatable,
#                       finder_include); sets nopts (see usage.sh)
#   finder_include PATH a -i PATH, relative to the tree (checked there)
#   finder_enter DIR    cd to the tree, check the -i paths, make $tmp
#   finder_need PROG    exit 2 (could not look) unless PROG is a command
#   finder_files [-a]   the regular files in scope (-a: in the whole tree,
#                       whatever -i said), relative, sorted, one a line
#                       (names holding a newline are not supported)
#   finder_headers      the folders holding a *.h in the whole tree (a
#                       file in scope may include one from outside it),
#                       "." for the top, sorted, one a line
#
# What a finder looks at is the tree, or only the -i paths in it; .git
# (at any depth), .corral-fix (corral-fix's journal), .corral and
# CORRAL_OUT when it lies in the tree (corral.mk's results) are never
# looked at, even under a -i path.
#include usage.sh
scopes=
tmp=

finder_open() {
	finder_parse "$@"
	shift "$nopts"
	[ "$#" -le 1 ] || usage 2
	finder_enter "${1:-.}"
}

finder_parse() {
	parse_options hi: finder_option "$@"
}

# The one option of finder_parse: -i.
finder_option() {
	finder_include "$2"
}

finder_include() {
	case /$1/ in
	//|//*|*/../*) die "-i '$1' is not a relative path inside the tree" ;;
	esac
	set -- "$(printf '%s\n' "$1" | sed 's|^\(\./\)*||; s|/*$||')"
	scopes="$scopes${scopes:+
}${1:-.}"
}

# The CORRAL_OUT of corral.mk, relative to the tree, when it lies inside.
finder_out() {
	case ${CORRAL_OUT:-} in
	'') ;;
	/*) case $CORRAL_OUT in "$root"/?*) printf '%s\n' "${CORRAL_OUT#"$root"/}" ;; esac ;;
	*) printf '%s\n' "${CORRAL_OUT#./}" ;;
	esac
}

finder_enter() {
	cd -- "$1" 2>/dev/null || die "cannot enter '$1'"
	root=$(pwd -P) || die "cannot enter '$1'"
	out=$(finder_out)
	out=${out%/}
	old=$IFS
	IFS='
'
	for s in ${scopes:-.}; do
		[ -e "$s" ] || die "could not look: no '$s' in '$1'"
		case $(realpath -- "$s") in
		"$root"|"$root"/*) ;;
		*) die "-i '$s' leads out of '$1'" ;;
		esac
	done
	IFS=$old
	make_tmp
}

finder_need() {
	command -v "$1" >/dev/null 2>&1 || die "'$1' not found: could not look"
}

finder_files() {
	w=${scopes:-.}
	[ "${1-}" != -a ] || w=.
	set -- -name .git -o -path ./.corral -o -path ./.corral-fix
	[ -z "$out" ] || set -- "$@" -o -path "./$out"
	old=$IFS
	IFS='
'
	for s in $w; do
		case $s in .) ;; *) s=./$s ;; esac
		find "$s" \( "$@" \) -prune -o -type f -print ||
			die "could not look: cannot walk '$s'"
	done > "$tmp/walk"
	IFS=$old
	sed 's|^\./||' "$tmp/walk" | LC_ALL=C sort -u
}

finder_headers() {
	finder_files -a > "$tmp/all-h" || return 1
	grep '\.h$' "$tmp/all-h" | sed 's|/[^/]*$||; s|^[^/]*\.h$|.|' |
		LC_ALL=C sort -u
}
