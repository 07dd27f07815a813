#!/bin/sh
# bench-original.sh runs BenchmarkFromHTML/docsites on the whole-page
# pipeline extract had before generator rules (commit ada394c, the parent of
# 21800a6: boilerplate removal, readability, html-to-markdown), with this
# tree's benchmark harness and corpus, so that issue 11's speed ratio is
# measured on one machine at one time. Run it next to
#
#	go test ./extract -run XXX -bench BenchmarkFromHTML/docsites -benchtime 3x -count 3
#
# (alternate the two on a loaded machine). Arguments replace the default
# go test flags "-benchtime 3x -count 3".
set -eu
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
[ $# -gt 0 ] || set -- -benchtime 3x -count 3
cd "$tmp" && go test ./extract -run XXX -bench 'BenchmarkFromHTML/docsites$' "$@"
