# files.sh -- the trees of small files the benchmarks copy, digest and
# clone, made one way.  Sourced by checkout.sh, digests.sh and work.sh.
#
#   small_files DIR COUNT SOURCE
#                        COUNT files of 4 KiB read from SOURCE
#                        (/dev/urandom, /dev/zero) as DIR/dK/fI, twenty
#                        directories in turn; prints each path, relative
#                        to DIR, one a line
# shellcheck shell=sh
small_files() {
	sf_i=0
	while [ "$sf_i" -lt "$2" ]; do
		sf_d=d$((sf_i % 20))
		[ -d "$1/$sf_d" ] || mkdir -p "$1/$sf_d"
		head -c 4096 "$3" > "$1/$sf_d/f$sf_i"
		echo "$sf_d/f$sf_i"
		sf_i=$((sf_i + 1))
	done
}
