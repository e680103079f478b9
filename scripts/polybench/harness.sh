#!/usr/bin/env bash
# C in, C out, the same numbers, by hand (tests/polybench_c.rs runs the
# same checks in `cargo test`, at MINI and SMALL with 1, 2 and 4 threads): every PolyBench/C kernel of
# fixtures/c/polybench, transformed by arrayflow and spliced back into its
# benchmark in place of the kernel function, must print the same arrays
# (POLYBENCH_DUMP_ARRAYS) as the original, byte for byte.
#
#   scripts/polybench/harness.sh [ARRAYFLOW] [KERNEL...]
#
# For each kernel and dataset (MINI, SMALL), each transformation (expand
# --emit code; privatize --emit code; expand --transform contract
# --parallel L --emit code, L the outermost loop that carries no
# dependence after maximal static expansion) is run with the dataset's
# macros (PolyBench declares the arrays with the dataset's sizes, and
# copies of whole arrays use them) and the MINI dataset's parameter values
# (`--param`: the analyses' sizes; the output is for every value); the
# output is spliced in, built with gcc -O2 -fopenmp -Wall
# -Werror=implicit-function-declaration, and run with OMP_NUM_THREADS=1,
# 2 and 4. A result is PASS (same dumps, no warning the original's build
# does not have), SAME (the transformation had nothing to do, said so, and
# its output still gives the same dumps) or FAIL with the reason.
#
# Failures listed in scripts/polybench/known-failures (KERNEL TRANSFORM
# lines) are reported as KNOWN and do not fail the run; an unlisted
# failure, or a listed one that passes, makes the exit status 1.
#
# Environment: JOBS (parallel jobs, default: the number of processors),
# DATASETS (default "MINI SMALL"), THREADS (default "1 2 4"), CC (gcc),
# KEEP (a directory to keep the work files in).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/common.sh"
arrayflow="${1:-$root/target/debug/arrayflow}"
shift || true
arrayflow="$(cd "$(dirname "$arrayflow")" && pwd)/$(basename "$arrayflow")"
kernels=("$@")
if [ ${#kernels[@]} -eq 0 ]; then
  for f in "$bench"/*.c; do kernels+=("$(basename "$f" .c)"); done
fi
export ARRAYFLOW="$arrayflow" BENCH="$bench" HERE="$here"
export CC="${CC:-gcc}" DATASETS="${DATASETS:-MINI SMALL}" THREADS="${THREADS:-1 2 4}"
work="${KEEP:-$(mktemp -d)}"
mkdir -p "$work"
export WORK="$work"

# One kernel, at each dataset.
one() {
  local k="$1"
  local w="$WORK/$k"
  mkdir -p "$w"
  local params loop
  mapfile -t params < <(af_params "$ARRAYFLOW" "$BENCH/$k.c")
  loop=$(af_loop "$ARRAYFLOW" "$BENCH/$k.c" "${params[@]}")
  local d
  for d in $DATASETS; do
    local flags=(-O2 -fopenmp -Wall -Wno-unknown-pragmas -Werror=implicit-function-declaration
      -I "$BENCH" -D "${d}_DATASET" -D POLYBENCH_DUMP_ARRAYS -D ARRAYFLOW_PARALLEL_WORK=0)
    if ! "$CC" "${flags[@]}" "$BENCH/$k.c" "$HERE/support.c" -lm -o "$w/orig.$d" 2>"$w/orig.$d.cc"; then
      echo "$k $d original FAIL original does not build"
      continue
    fi
    local base_warnings
    base_warnings=$(grep 'warning:' "$w/orig.$d.cc" | sed 's/^[^ ]* //' | sort)
    OMP_NUM_THREADS=1 "$w/orig.$d" 2>"$w/orig.$d.dump" >/dev/null
    local t transforms=()
    for t in expand privatize contract; do
      local out="$w/$t.$d.c" args
      if ! mapfile -t args < <(af_args "$t" "$loop") || [ ${#args[@]} -eq 0 ]; then
        echo "$k $d $t SAME no loop is parallel after expansion: nothing to contract"
        continue
      fi
      if ! "$ARRAYFLOW" "${args[@]}" "$BENCH/$k.c" -D "${d}_DATASET" "${params[@]}" \
        >"$out" 2>"$out.err"; then
        echo "$k $d $t FAIL arrayflow: $(grep -m1 -E 'error' "$out.err" | cut -c1-150)"
        continue
      fi
      if ! python3 "$HERE/splice.py" "$BENCH/$k.c" "$out" >"$w/$t.$d.spliced.c" 2>"$out.splice"; then
        echo "$k $d $t FAIL not a drop-in: $(head -c 150 "$out.splice")"
        continue
      fi
      transforms+=("$t")
    done
    for t in "${transforms[@]}"; do
      local bin="$w/$t.$d"
      if ! "$CC" "${flags[@]}" "$w/$t.$d.spliced.c" "$HERE/support.c" -lm -o "$bin" 2>"$bin.cc"; then
        echo "$k $d $t FAIL does not build: $(grep -m1 'error' "$bin.cc" | cut -c1-150)"
        continue
      fi
      # Warnings the original's build does not have (by message).
      local new
      new=$(comm -13 <(echo "$base_warnings") \
        <(grep 'warning:' "$bin.cc" | sed 's/^[^ ]* //' | sort) | head -1)
      if [ -n "$new" ]; then
        echo "$k $d $t FAIL warnings: $(echo "$new" | cut -c1-150)"
        continue
      fi
      local n verdict=""
      for n in $THREADS; do
        if ! OMP_NUM_THREADS=$n timeout 60 "$bin" 2>"$bin.$n.dump" >/dev/null; then
          verdict="FAIL crashes with $n threads"
          break
        fi
        if ! cmp -s "$w/orig.$d.dump" "$bin.$n.dump"; then
          verdict="FAIL dumps differ with $n threads"
          break
        fi
      done
      if [ -z "$verdict" ]; then
        if grep -q 'no loop becomes parallel' "$w/$t.$d.c"; then
          verdict="SAME nothing to do, said so; the output gives the same dumps"
        else
          verdict=PASS
        fi
      fi
      echo "$k $d $t $verdict"
    done
  done
}
export -f one af_params af_loop af_args

printf '%s\n' "${kernels[@]}" |
  xargs -P "${JOBS:-$(nproc)}" -L 1 bash -c 'one "$0"' >"$work/results.raw"

sort "$work/results.raw" >"$work/results"
known="$here/known-failures"
status=0
while read -r k d t verdict rest; do
  listed=0
  if [ -f "$known" ] && grep -qE "^$k $t( |$)" "$known"; then listed=1; fi
  case "$verdict" in
    FAIL)
      if [ $listed = 1 ]; then verdict=KNOWN; else status=1; fi ;;
    *)
      if [ $listed = 1 ]; then
        rest="$rest (listed in known-failures: remove it)"
        status=1
      fi ;;
  esac
  printf '%-16s %-6s %-10s %-6s %s\n' "$k" "$d" "$t" "$verdict" "$rest"
done <"$work/results" >"$work/shown"
cat "$work/shown"
echo
for t in expand privatize contract; do
  printf '%-10s' "$t"
  for v in PASS SAME KNOWN FAIL; do
    c=$(awk -v t="$t" -v v="$v" '$3 == t && $4 == v' "$work/shown" | wc -l)
    printf ' %s %d' "$v" "$c"
  done
  echo
done
fails=$(awk '$4 == "FAIL"' "$work/results" | wc -l)
total=$(wc -l <"$work/results")
echo "kernel x dataset x transformation: $total results, $fails failing (known ones included)"
[ -z "${KEEP:-}" ] && rm -rf "$work"
exit $status
