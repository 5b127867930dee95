# shellcheck shell=sh disable=SC2034 # found and why are the caller's
# finder.sh -- how the proving ground finds a finder; sourced.
#
# finder_var NAME: the variable that may name finder NAME's command,
# CORRAL_FINDER_<NAME> (upper case, '-' as '_').
finder_var() {
	printf 'CORRAL_FINDER_%s' "$(printf '%s' "$1" | tr 'a-z-' 'A-Z_')"
}

# finder_command NAME: set found to the command that runs finder NAME:
# the value of its variable when that is set, else corral-find-NAME on
# PATH.  Return 1, with the reason in why, when there is none.
finder_command() {
	eval "val=\${$(finder_var "$1")-}"
	if [ -n "$val" ]; then
		found=$val
		command -v "${val%% *}" >/dev/null 2>&1 && return 0
		why="finder '$1' not found: $(finder_var "$1") is '$val'"
	else
		found=corral-find-$1
		command -v "$found" >/dev/null 2>&1 && return 0
		why="finder '$1' not found: no corral-find-$1 on PATH, $(finder_var "$1") not set"
	fi
	return 1
}
