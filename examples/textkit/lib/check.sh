# check.sh -- the assertion every test uses: check EXPECTED ACTUAL.

check() {
	if [ "$1" != "$2" ]; then
		printf 'expected: %s\nactual:   %s\n' "$1" "$2"
		exit 1
	fi
}
