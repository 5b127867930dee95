# finder.sh -- the scope of corral's finders written in sh.
#
# build-aux/mkscript puts this file (and usage.sh, which it includes) in
# place of a script's '#include finder.sh' line.  It gives:
#
#   finder_include PATH a -i PATH, relative to the tree (checked there)
#   finder_enter DIR    cd to the tree, check the -i paths, make $tmp
#   finder_files [-a]   the regular files in scope (-a: in the whole tree,
#                       whatever -i said), relative, sorted, one a line
#                       (names holding a newline are not supported)
#
# What a finder looks at is the tree, or only the -i paths in it; .git
# (at any depth), .corral-fix (corral-fix's journal), .corral and
# CORRAL_OUT when it lies in the tree (corral.mk's results) are never
# looked at, even under a -i path.
#include usage.sh
scopes=
tmp=

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
	tmp=$(mktemp -d) || die "cannot make a temporary directory"
	trap 'rm -rf "$tmp"' EXIT
	trap 'exit 2' HUP INT TERM
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
