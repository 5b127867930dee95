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
