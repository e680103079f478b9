#!/usr/bin/env bash
# Writes `arrayflow expand FILE --emit code` (stdout, stderr and exit code)
# for every fixture under fixtures/ into DIR, one file per fixture, so two
# builds can be compared with `diff -r OLD NEW` (a speed change must leave
# every emitted program identical).
# Usage: scripts/emit-snapshot.sh DIR [BINARY]
set -u
dir=${1:?usage: emit-snapshot.sh DIR [BINARY]}
bin=${2:-target/release/arrayflow}
mkdir -p "$dir"
find fixtures -name '*.loop' -o -name '*.c' | sort | while read -r f; do
    out="$dir/$(echo "$f" | tr / _).txt"
    timeout 60 "$bin" expand "$f" --emit code >"$out" 2>&1
    echo "exit $?" >>"$out"
done
