#!/bin/sh
# bench-original.sh measures BenchmarkFromHTML/docsites (median FromHTML
# thread-CPU ms/page over the docsites corpus) on the whole-page pipeline
# extract had before generator rules (commit ada394c, the parent of
# 21800a6: boilerplate removal, readability, html-to-markdown) and on this
# tree, with this tree's benchmark harness and corpus, alternating the two
# so that a loaded machine disturbs both alike. It prints each round's
# figures, each round's ratio (this tree / original) and the median ratio:
#
#	extract/bench-original.sh [rounds [iterations]]    (default 5 rounds of -benchtime 3x)
#
# Each page's figure is its least CPU time over the iterations; on a loaded
# machine more iterations (e.g. 10) bring both figures nearer to what an
# idle machine measures.
set -eu
rounds=${1:-5}
iterations=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
original=ada394c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$root/go.mod" "$root/go.sum" "$tmp/"
cp -r "$root/extract" "$tmp/extract"
# The original package, and of today's tests only the benchmark harness.
rm "$tmp"/extract/*.go
for f in $(git -C "$root" ls-tree --name-only "$original" extract/ | grep '\.go$' | grep -v '_test\.go$'); do
	git -C "$root" show "$original:$f" >"$tmp/$f"
done
cp "$root"/extract/bench_test.go "$root"/extract/cputime_*_test.go "$root"/extract/docsites_test.go "$tmp/extract/"
(cd "$tmp" && go test -c -o "$tmp/original.test" ./extract)
(cd "$root" && go test -c -o "$tmp/current.test" ./extract)
bench() { # binary -> ms/page
	(cd "$2" && "$1" -test.run XXX -test.bench 'BenchmarkFromHTML/docsites$' -test.benchtime "${iterations}x") |
		awk '/ms\/page/ { for (i = 1; i < NF; i++) if ($(i+1) == "ms/page") print $i }'
}
ratios=""
i=1
while [ "$i" -le "$rounds" ]; do
	o=$(bench "$tmp/original.test" "$tmp/extract")
	c=$(bench "$tmp/current.test" "$root/extract")
	r=$(awk -v c="$c" -v o="$o" 'BEGIN { printf "%.3f", c / o }')
	echo "round $i: original $o ms/page, this tree $c ms/page, ratio $r"
	ratios="$ratios $r"
	i=$((i + 1))
done
echo "$ratios" | tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "median ratio over %d rounds: %.3f\n", NR, m }'
