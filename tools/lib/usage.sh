# usage.sh -- what corral's programs written in sh say about themselves,
# and how they read their options.
#
# build-aux/mkscript puts this file in place of a script's '#include
# usage.sh' line, so that an installed program is one file.  Before that
# line the script sets prog, synopsis (its usage line, after "usage: ")
# and options ("OPTION<TAB>WHAT" lines, empty for none).  It then has:
#
#   die MESSAGE...      "prog: MESSAGE" on stderr, exit 2
#   usage STATUS        0: synopsis and options on stdout, exit 0;
#                       else the synopsis alone on stderr, exit 2
#   parse_options OPTSTRING HANDLER "$@"
#                       --help and --version anywhere (finder_start), then
#                       getopts OPTSTRING (which holds h): -h is usage 0,
#                       an unknown option or a missing value, named on a
#                       line "prog: ...", usage 2, any
#                       other option is handed to 'HANDLER LETTER VALUE';
#                       nopts is how many arguments the options took, for
#                       the script's 'shift "$nopts"'
#   make_tmp            tmp, a new directory TMPDIR/prog.XXXXXX (/tmp
#                       without TMPDIR), removed at exit
#
# as the C programs have them (src/base/usage.c), and the version tag
# that corral-doctor reads:
# @(#)corral @VERSION@
set -u
version=@VERSION@

# What --version prints after the version (src/base/base.h's notice).
version_notice() {
	cat <<'EOF'
@VERSION_NOTICE@
EOF
}

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

# --help and --version anywhere before --, as the C programs answer them
# (src/base/usage.c): the value of an option that takes one (an options
# line "-x VALUE<TAB>...") is skipped, not read as one of them.
finder_start() {
	vals=$(printf '%s\n' "$options" | sed -n 's/^-\([A-Za-z0-9]\) [^	]*	.*/\1/p' |
		tr -d '\n')
	while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
		case $1 in
		--help) usage 0 ;;
		--version)
			{ printf '%s %s\n' "$prog" "$version" && version_notice; } ||
				die "cannot write standard output"
			exit 0 ;;
		--*) ;;
		-?*)
			a=${1#-}
			while [ -n "$a" ]; do
				c=${a%"${a#?}"}
				a=${a#?}
				case $vals in
				*"$c"*) [ -n "$a" ] || [ "$#" -lt 2 ] || shift; break ;;
				esac
			done ;;
		esac
		shift
	done
}

parse_options() {
	spec=$1 handler=$2
	shift 2
	finder_start "$@"
	OPTIND=1
	# getopts's silent mode (the leading colon): the messages are ours,
	# naming the program, as the C programs' getopt names theirs.
	while getopts ":$spec" opt; do
		case $opt in
		h) usage 0 ;;
		\?) printf '%s: unknown option -%s\n' "$prog" "$OPTARG" >&2; usage 2 ;;
		:) printf '%s: option -%s needs a value\n' "$prog" "$OPTARG" >&2; usage 2 ;;
		*) "$handler" "$opt" "${OPTARG-}" ;;
		esac
	done
	nopts=$((OPTIND - 1))
}

make_tmp() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX") || die "cannot make a temporary directory"
	trap 'rm -rf "$tmp"' EXIT
	trap 'exit 2' HUP INT TERM
}
