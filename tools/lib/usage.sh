# usage.sh -- what corral's programs written in sh say about themselves.
#
# build-aux/mkscript puts this file in place of a script's '#include
# usage.sh' line, so that an installed program is one file.  Before that
# line the script sets prog, synopsis (its usage line, after "usage: ")
# and options ("OPTION<TAB>WHAT" lines, empty for none).  It then has:
#
#   die MESSAGE...      "prog: MESSAGE" on stderr, exit 2
#   usage STATUS        0: synopsis and options on stdout, exit 0;
#                       else the synopsis alone on stderr, exit 2
#   finder_start ARG    --help or --version as the first argument
#
# as the C programs have them (src/base/usage.c), and the version tag
# that corral-doctor reads:
# @(#)corral @VERSION@
set -u
version=@VERSION@

die() {
	printf '%s: %s\n' "$prog" "$*" >&2
	exit 2
}

usage() {
	if [ "$1" -ne 0 ]; then
		printf 'usage: %s\n' "$synopsis" >&2
		exit 2
	fi
	{
		printf 'usage: %s\n' "$synopsis"
		printf '  %-14s %s\n' '-h, --help' 'print this help and exit' \
			'--version' 'print the version and exit'
		[ -z "$options" ] || printf '%s\n' "$options" |
			while IFS='	' read -r o w; do
				printf '  %-14s %s\n' "$o" "$w"
			done
	} || die "cannot write standard output"
	exit 0
}

finder_start() {
	case ${1-} in
	--help) usage 0 ;;
	--version)
		printf '%s %s\n' "$prog" "$version" ||
			die "cannot write standard output"
		exit 0 ;;
	esac
}
