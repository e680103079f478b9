#!/usr/bin/env bash
# How fast the OpenMP C arrayflow prints runs: each PolyBench/C kernel's
# original against its transformed version spliced in (as harness.sh
# does), at the LARGE dataset, timed by PolyBench's own kernel timer
# (POLYBENCH_TIME, scripts/polybench/support.c: wall clock around the
# kernel call only). Runs alternate original and version, 1 and 2
# threads, so that load from elsewhere falls on both; each time is the
# median of RUNS runs. Prints a markdown table.
#
#   scripts/polybench/speed.sh [ARRAYFLOW] [KERNEL...]
#
# Environment: TRANSFORMS (default "contract": expand --transform contract
# --parallel L, L the outermost loop that carries no dependence after
# maximal static expansion; also "privatize", "expand"), DATASET (LARGE),
# THREADS ("1 2"), RUNS (5), CC (gcc), KEEP (a directory to keep the work
# files in). A kernel whose transformation has nothing to do, or whose
# output does not build, is a row saying so. The script only times: that
# the versions compute what the originals do is harness.sh's check (and
# tests/polybench_c.rs's), at MINI and SMALL.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/common.sh"
arrayflow="${1:-$root/target/debug/arrayflow}"
shift || true
kernels=("$@")
if [ ${#kernels[@]} -eq 0 ]; then
  for f in "$bench"/*.c; do kernels+=("$(basename "$f" .c)"); done
fi
CC="${CC:-gcc}"
TRANSFORMS="${TRANSFORMS:-contract}"
DATASET="${DATASET:-LARGE}"
THREADS="${THREADS:-1 2}"
RUNS="${RUNS:-5}"
work="${KEEP:-$(mktemp -d)}"
mkdir -p "$work"

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

header="| kernel | transformation |"
rule="| --- | --- |"
for n in $THREADS; do
  header+=" original, $n thr (s) | version, $n thr (s) | speed-up, $n thr |"
  rule+=" ---: | ---: | ---: |"
done
echo "$header"
echo "$rule"

for k in "${kernels[@]}"; do
  w="$work/$k"
  mkdir -p "$w"
  mapfile -t params < <(af_params "$arrayflow" "$bench/$k.c")
  loop=$(af_loop "$arrayflow" "$bench/$k.c" "${params[@]}")
  flags=(-O2 -fopenmp -Wall -Wno-unknown-pragmas -I "$bench" -D "${DATASET}_DATASET" -D POLYBENCH_TIME)
  if ! "$CC" "${flags[@]}" "$bench/$k.c" "$here/support.c" -lm -o "$w/orig" 2>"$w/orig.cc"; then
    echo "| $k | original | does not build |"
    continue
  fi
  for t in $TRANSFORMS; do
    if ! mapfile -t args < <(af_args "$t" "$loop") || [ ${#args[@]} -eq 0 ]; then
      echo "| $k | $t | no loop is parallel after expansion |"
      continue
    fi
    out="$w/$t.c"
    if ! "$arrayflow" "${args[@]}" "$bench/$k.c" -D "${DATASET}_DATASET" "${params[@]}" \
      >"$out" 2>"$out.err"; then
      echo "| $k | $t | arrayflow fails: $(grep -m1 error "$out.err" | cut -c1-80) |"
      continue
    fi
    if grep -q "no loop becomes parallel" "$out"; then
      echo "| $k | $t | nothing to do |"
      continue
    fi
    if ! python3 "$here/splice.py" "$bench/$k.c" "$out" >"$w/$t.spliced.c" 2>/dev/null ||
      ! "$CC" "${flags[@]}" "$w/$t.spliced.c" "$here/support.c" -lm -o "$w/$t" 2>"$w/$t.cc"; then
      echo "| $k | $t | does not build |"
      continue
    fi
    row="| $k | $t ($loop) |"
    [ "$t" = contract ] || row="| $k | $t |"
    for n in $THREADS; do
      : >"$w/$t.$n.orig"
      : >"$w/$t.$n.version"
    done
    for _ in $(seq "$RUNS"); do
      for n in $THREADS; do
        OMP_NUM_THREADS=$n "$w/orig" 2>/dev/null | tail -1 >>"$w/$t.$n.orig"
        OMP_NUM_THREADS=$n "$w/$t" 2>/dev/null | tail -1 >>"$w/$t.$n.version"
      done
    done
    for n in $THREADS; do
      a=$(median <"$w/$t.$n.orig")
      b=$(median <"$w/$t.$n.version")
      row+=" $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }') |"
    done
    echo "$row"
  done
done
[ -n "${KEEP:-}" ] || rm -rf "$work"
