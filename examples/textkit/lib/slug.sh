# slug.sh -- turn a title into a URL slug.  It has a bug: runs of
# punctuation are not squeezed, so "a -- b" gives "a----b".

slug() {
	printf '%s\n' "$1" | tr '[:upper:]' '[:lower:]' |
		sed 's/[^a-z0-9]/-/g; s/^-*//; s/-*$//'
}
