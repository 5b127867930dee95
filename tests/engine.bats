#!/usr/bin/env bats
# engine.bats -- the steps of corral-engine one by one, in a CORRAL_OUT
# made by hand, and the one settings table they all read: every knob
# corral.mk checks has its row, and every row reaches the program it is
# for as that program's option.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	mkdir out
}

# settings NAME=VALUE...: out/settings.json, every setting at its default
# but those given (and CORRAL_SRC, CORRAL_OUT: src/ and out/ here).
settings() {
	local kv args=()
	mkdir -p src
	for kv in CORRAL_SRC="$PWD/src" CORRAL_OUT="$PWD/out" "$@"; do
		args+=(--arg "${kv%%=*}" "${kv#*=}")
	done
	corral-engine settings |
		jq -R -n "${args[@]}" '[inputs | split("\t") | {(.[0]): (.[1] // "")}] | add
			| with_entries(.value = ($ARGS.named[.key] // .value))' \
		> out/settings.json
}

@test "engine: the settings table has a row for exactly the knobs corral.mk checks" {
	printf 'CORRAL_UNITS = a\nCORRAL_CMD = true\ninclude %s/corral.mk\n$(info $(sort $(__corral_knobs)))\nall: ;\n' \
		"$CORRAL_ROOT" > Makefile
	run -0 make -s all
	local checked=$output
	run -0 sh -c "corral-engine settings | cut -f1 | grep '^CORRAL_' | sort | tr '\n' ' '"
	assert_equal "$checked" "${output% }"
	run -0 sh -c "corral-engine settings | grep -c '^CORRAL_'"
	[ "$output" -ge 45 ]
}

@test "engine: README's table and corral.mk(7) name every knob of the table, with the table's default" {
	local name dflt row entry
	while IFS=$'\t' read -r name dflt; do
		case $name in CORRAL_*) ;; *) continue ;; esac
		row=$(grep -E "^\| [^|]*\`$name\`[^|]*\|" "$CORRAL_ROOT/README.md") ||
			flunk "README has no row for $name"
		[ -z "$dflt" ] || printf '%s\n' "$row" | cut -d'|' -f3 | grep -qF "\`$dflt\`" ||
			flunk "README's row for $name does not give its default '$dflt'"
		entry=$(awk -v n="$name" '$0 == ".It Ev " n { on = 1; next }
			on && /^\.It / { exit } on' "$CORRAL_ROOT/man/corral.mk.7")
		[ -n "$entry" ] || flunk "corral.mk(7) has no entry for $name"
		[ -z "$dflt" ] || printf '%s\n' "$entry" | grep -qF ".Li $dflt" ||
			flunk "corral.mk(7) does not give $name's default '$dflt'"
	done < <(corral-engine settings)
}

@test "engine: units drops CORRAL_OUT from the listing, as P, ./P and under it, and takes a CR before LF as the line's end" {
	printf 'a\r\n.corral\n./.corral/x\n.corral/y\n.corralx\nb' > list
	settings CORRAL_UNITS_FILE="$PWD/list" outrel=.corral
	cd out
	run -0 corral-engine units
	run -0 cat units
	assert_output "$(printf 'a\n.corralx\nb')"
}

@test "engine: units keeps the file and its time when the population did not change" {
	settings CORRAL_UNITS='a b c'
	cd out
	run -0 corral-engine units
	touch -d '2001-01-01' units
	run -0 corral-engine units
	assert_equal 2001 "$(date -r units +%Y)"
	run -0 cat units
	assert_output "$(printf 'a\nb\nc')"
}

@test "engine: a listing command that fails stops the step, naming its status, and writes no units" {
	settings CORRAL_DISCOVER='echo a; exit 3'
	cd out
	run -2 corral-engine units
	assert_output "corral: listing the units failed (status 3)"
	assert_no_file units
}

@test "engine: live counts the units of exactly the slices make will run: no stamp, or one older than the units, manifest or slice-config" {
	settings
	cd out
	mkdir slices
	printf 'a\nb\n' > slices/0.units
	printf 'c\n' > slices/1.units
	printf 'd\ne\nf\n' > slices/2.units
	printf 'g\n' > slices/3.units
	touch slice-config slices/0.manifest slices/1.manifest slices/2.manifest slices/3.manifest
	touch -d '2001-01-01' slice-config slices/*.units slices/*.manifest
	touch slices/0.pass slices/2.pass slices/3.pass	# 1 has none
	touch -d '2000-01-01' slices/3.pass		# older than its inputs
	run -0 corral-engine live 4
	run -0 cat live/ticks
	assert_output "T 2"
	# -B: all of them
	MAKEFLAGS=B run -0 corral-engine live 4
	run -0 cat live/ticks
	assert_output "T 7"
}

@test "engine: slice gives corral-run-slice each knob as the option the table names, and nothing for a knob at its default" {
	mkdir stub
	printf '#!/bin/sh\nprintf "%%s\\n" "$@" > "%s/argv"\n' "$PWD" > stub/corral-run-slice
	chmod +x stub/corral-run-slice
	settings CORRAL_BIN="$PWD/stub" CORRAL_TIMEOUT=3 CORRAL_LIMIT_MEM=1M \
		CORRAL_VERDICT=exit CORRAL_HALT=0 CORRAL_NO_RETRY=23,24 CORRAL_CMD='echo "$x"'
	cd out
	mkdir slices && printf 'a\n' > slices/0.units
	run -0 corral-engine slice slices/0
	run -0 cat ../argv
	assert_contains "$output" "$(printf -- '-t\n3\n')"
	assert_contains "$output" "$(printf -- '-L\nmem=1M\n')"
	assert_contains "$output" "$(printf -- '-N\n23,24\n')"
	assert_contains "$output" "$(printf -- '-c\necho "$x"\n')"
	assert_contains "$output" "$(printf -- '\n-F\n')"
	refute_contains "$output" "$(printf -- '\n-H\n')"
	refute_contains "$output" "$(printf -- '\n-U\n')"
	refute_contains "$output" "$(printf -- '\n-W\n')"
}

@test "engine: a settings.json planted as a link, or that is no JSON object, is refused by name" {
	cd out
	echo '{}' > ../elsewhere.json
	ln -s ../elsewhere.json settings.json
	run -2 corral-engine units
	assert_contains "$output" "corral: 'settings.json' is a symbolic link, not a regular file"
	rm settings.json
	printf '{"CORRAL_SRC": "x"} trailing' > settings.json
	run -2 corral-engine units
	assert_contains "$output" "corral: 'settings.json': invalid JSON"
	printf '{"CORRAL_SRC": "x"}' > settings.json
	run -2 corral-engine units
	assert_output "corral: 'settings.json': \"CORRAL_OUT\" is missing"
}

@test "engine: a value of any bytes but NUL and newline survives settings.json and reaches the unit as written" {
	local cmd
	cmd=$(printf 'printf "%%s\\n" '\''a b'\'' "$CORRAL_UNIT" "\t" >> "$RAN" # ; & | * ? [ ] $HOME `x` \\ \xc3\xa9')
	_corral_ran
	mkdir proj
	printf 'CORRAL_UNITS = u\nCORRAL_CMD = %s\ninclude %s/corral.mk\n' \
		"$(printf '%s' "$cmd" | sed 's/\$/$$/g; s/#/\\#/')" "$CORRAL_ROOT" > proj/Makefile
	run -0 make -C proj corral-run
	run -0 jq -r .CORRAL_CMD proj/.corral/settings.json
	assert_output "$cmd"
	run -0 cat "$RAN"
	assert_output "$(printf 'a b\nu\n\t')"
}

@test "engine: a run removes the temporaries a killed step of the last one left, and nothing else" {
	printf 'CORRAL_UNITS = a b\nCORRAL_CMD = true\ninclude %s/corral.mk\n' "$CORRAL_ROOT" > Makefile
	run -0 make corral-run
	for f in .inputs.tmp.Ab3dEf .settings.json.tmp.zZ9yY0 board.tmp slices/.0.manifest.tmp.q1w2e3 \
		slices/.1.parts.tmp.r4t5y6 .mine.tmp.u7i8o9 slices/.x.manifest.tmp.a1s2d3 mine.tmp; do
		echo half > ".corral/$f"
	done
	run -0 make corral-run
	run -0 sh -c 'cd .corral && find . -name "*tmp*" | sort'
	assert_output "$(printf '%s\n' ./.mine.tmp.u7i8o9 ./mine.tmp ./slices/.x.manifest.tmp.a1s2d3)"
}
