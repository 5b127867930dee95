#!/usr/bin/env bats
# properties.bats -- seeded random populations, checked for the properties
# the original proved with hypothesis: disjoint, complete, balanced slices.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
}

# random_units SEED COUNT: COUNT distinct names with awkward characters
random_units() {
	awk -v seed="$1" -v n="$2" 'BEGIN {
		srand(seed); split("a b c x/y z_ - . $ % : # \047 \" é ✓", al, " ")
		for (i = 0; i < n; i++) {
			s = ""; len = 1 + int(rand() * 8)
			for (j = 0; j < len; j++) s = s al[1 + int(rand() * length(al))]
			print s "-" i
		}
	}'
}

@test "properties: 60 seeded populations (0-500 units, 1-40 slices) split disjoint, complete and balanced" {
	local seed size n
	for seed in $(seq 1 60); do
		size=$(( (seed * 7919) % 501 ))
		n=$(( 1 + (seed * 104729) % 40 ))
		random_units "$seed" "$size" > units
		corral-split -n "$n" -o "plan$seed" -j units > plan.json
		# complete and disjoint: the slices are exactly the population
		cat "plan$seed"/*.units | LC_ALL=C sort > got
		LC_ALL=C sort units > want
		cmp -s got want || flunk "seed $seed: slices are not the population"
		# balanced, never empty, never more slices than units
		jq -e --argjson n "$n" --argjson size "$size" '
			(length == ([$n, $size] | min)) and
			(if length > 0 then ([.[] | length] | (max - min <= 1) and min >= 1) else true end)' \
			plan.json >/dev/null || flunk "seed $seed: unbalanced plan (n=$n size=$size)"
	done
}

# write_logs SEED NAGENTS UNITS DIR: the population in UNITS, each unit
# given to a random one of NAGENTS agents, written by awk to
# DIR/agent-K.jsonl with a random verdict; about one unit in ten gets an
# earlier attempt with the opposite verdict first (the merge keeps the
# last), and blank lines are sprinkled in.  Final verdicts go to DIR.truth.
write_logs() {
	mkdir -p "$4"
	awk -v seed="$1" -v n="$2" -v dir="$4" '
	function esc(s,   i, c, r) {
		for (i = 1; i <= length(s); i++) {
			c = substr(s, i, 1)
			if (c == "\\" || c == "\"") r = r "\\" c
			else if (c == "\t") r = r "\\t"
			else r = r c
		}
		return r
	}
	function put(k, u, ok, f) {
		f = dir "/agent-" k ".jsonl"
		printf "{\"agent_id\":\"%d\",\"unit\":\"%s\",\"ok\":%s}\n", k, esc(u), ok > f
		if (rand() < 0.05) print "" > f
	}
	BEGIN { srand(seed) }
	{
		k = int(rand() * n); ok = rand() < 0.8 ? "true" : "false"
		if (rand() < 0.1) put(k, $0, ok == "true" ? "false" : "true")
		put(k, $0, ok)
		print ok "\t" $0 > (dir ".truth")
	}' "$3"
	touch "$4.truth"
}

@test "properties: 40 seeded populations (0-500 units, 1-40 agents) merge every unit exactly once" {
	local seed size n status
	for seed in $(seq 1 40); do
		size=$(( (seed * 7919) % 501 ))
		n=$(( 1 + (seed * 104729) % 40 ))
		random_units "$seed" "$size" > units
		[ "$size" -gt 0 ] && printf '%s\n' "back\\slash-$seed" "$(printf 'tab\there')-$seed" >> units &&
			size=$((size + 2))
		write_logs "$seed" "$n" units "logs$seed"
		status=0
		corral-merge -q -u units "logs$seed" 2>err || status=$?
		[ "$status" -le 1 ] && [ ! -s err ] ||
			flunk "seed $seed: exit $status: $(cat err)"
		jq -e --argjson size "$size" --argjson n "$(ls "logs$seed" | wc -l)" '
			.units == $size and .merged == $size and
			.successes + .failures == $size and .missing == 0 and
			.duplicates == 0 and .unexpected == 0 and .agents == $n' \
			summary.json >/dev/null ||
			flunk "seed $seed: summary $(cat summary.json)"
		# every unit in exactly one file, with its last verdict
		cat successes.jsonl failures.jsonl | jq -r .unit | LC_ALL=C sort > got
		LC_ALL=C sort units > want
		cmp -s got want || flunk "seed $seed: the results are not the population"
		jq -r .unit successes.jsonl | LC_ALL=C sort > got
		sed -n 's/^true\t//p' "logs$seed.truth" | LC_ALL=C sort > want
		cmp -s got want || flunk "seed $seed: a unit has the wrong verdict"
	done
}

@test "properties: 40 seeded weighted plans are disjoint, complete, longest slice first, and within total/N + longest" {
	local seed size n
	for seed in $(seq 1 40); do
		size=$(( 1 + (seed * 7919) % 300 ))
		n=$(( 1 + (seed * 104729) % 20 ))
		random_units "$seed" "$size" > units
		# a skewed history: most units short, a few long, some unknown
		awk -v seed="$seed" 'BEGIN { srand(seed) } rand() < 0.9 {
			gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); gsub(/\t/, "\\t")
			ms = rand() < 0.1 ? int(rand() * 100000) : int(rand() * 500)
			printf "{\"unit\":\"%s\",\"ok\":true,\"duration_ms\":%d}\n", $0, ms
		}' units > history.jsonl
		corral-split -s weighted -H history.jsonl -n "$n" -o "plan$seed" units 2>/dev/null
		cat "plan$seed"/*.units | LC_ALL=C sort > got
		LC_ALL=C sort units > want
		cmp -s got want || flunk "seed $seed: slices are not the population"
		jq -e --argjson n "$n" --argjson size "$size" '
			.slices == ([$n, $size] | min) and .units == $size and
			(.loads | . == (sort | reverse)) and
			.makespan <= (.total / .slices + .longest) and
			.makespan >= .lower_bound' "plan$seed/plan.json" >/dev/null ||
			flunk "seed $seed: $(cat "plan$seed/plan.json")"
	done
}
