# shellcheck shell=sh
# notes.sh -- the functions behind bin/notes.

: "${NOTES_DIR:=$HOME/.notes}"
: "${NOTES_GREP_FLAGS:=-i -F}"

notes_usage() {
	echo "usage: notes add TEXT... | list | count | search WORD | check" >&2
	exit 2
}

notes_file() {
	printf '%s/notes.txt\n' "$NOTES_DIR"
}

notes_add() {
	[ -n "$1" ] || notes_usage
	mkdir -p "$NOTES_DIR" && printf '%s\n' "$1" >> "$(notes_file)"
}

notes_list() {
	[ ! -f "$(notes_file)" ] || cat "$(notes_file)"
}

notes_count() {
	if [ -f "$(notes_file)" ]; then
		wc -l < "$(notes_file)"
	else
		echo 0
	fi
}

# The integrity check: every note is one non-empty line.
notes_check() {
	[ ! -f "$(notes_file)" ] || ! grep -q '^[[:space:]]*$' "$(notes_file)"
}
