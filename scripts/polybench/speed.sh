#!/usr/bin/env bash
# How fast the OpenMP C arrayflow prints runs, beside what a user would
# pick instead: each PolyBench/C kernel's original (gcc -O3), its
# transformed version spliced in (as harness.sh does) and built by gcc
# -O3 -fopenmp, gcc's own auto-parallelizer on the original
# (-ftree-parallelize-loops=N), LLVM Polly on the original (clang-14 -O3
# -mllvm -polly -mllvm -polly-parallel) and Polly on arrayflow's version
# (does removing false dependences let Polly do more?). Times are
# PolyBench's own kernel timer (POLYBENCH_TIME, scripts/polybench/support.c:
# wall clock around the kernel call only), at the LARGE dataset. Runs
# alternate the variants and thread counts, so that load from elsewhere
# falls on all of them; each time is the median of RUNS runs. Prints a
# markdown table and, under it, the geometric mean speed-up of each
# variant over the original.
#
# Before any timing, every variant is built once more with
# POLYBENCH_DUMP_ARRAYS at DUMP_DATASET and run with 2 threads: a variant
# whose dumps differ from the original's is reported `wrong` and not timed.
#
#   scripts/polybench/speed.sh [ARRAYFLOW] [KERNEL...]
#
# Environment: TRANSFORMS (default "privatize": privatize --emit code;
# also "contract": expand --transform contract --parallel L, L the
# outermost loop that carries no dependence after maximal static
# expansion; "expand"), DATASET (LARGE), DUMP_DATASET (SMALL), THREADS
# ("1 2"), RUNS (5), CC (gcc), CLANG (clang-14; a missing one leaves the
# Polly columns `-`), KEEP (a directory to keep the work files in).
# gcc's auto-parallelizer fixes its thread count when it compiles: its
# 1-thread column is the original's build, its N-thread one is built with
# -ftree-parallelize-loops=N. A kernel whose transformation has nothing
# to do, or whose output does not build, is a row saying so.
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
CLANG="${CLANG:-clang-14}"
TRANSFORMS="${TRANSFORMS:-privatize}"
DATASET="${DATASET:-LARGE}"
DUMP_DATASET="${DUMP_DATASET:-SMALL}"
THREADS="${THREADS:-1 2}"
RUNS="${RUNS:-5}"
work="${KEEP:-$(mktemp -d)}"
mkdir -p "$work"
have_clang=0
command -v "$CLANG" >/dev/null 2>&1 && have_clang=1

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# The variants, in column order: original, arrayflow, gcc autopar, Polly,
# arrayflow's version under Polly.
variants=(orig af autopar polly afpolly)
declare -A title=([orig]="original" [af]="arrayflow" [autopar]="gcc autopar"
  [polly]="Polly" [afpolly]="arrayflow + Polly")

# build VARIANT SOURCE THREADS OUT DEFINES...: one binary; status 1 when
# the variant cannot be built here (no clang).
build() {
  local v="$1" src="$2" n="$3" out="$4"
  shift 4
  local common=(-O3 -Wall -Wno-unknown-pragmas -I "$bench" "$@" "$here/support.c" -lm)
  case "$v" in
    orig) "$CC" -fopenmp "$src" "${common[@]}" -o "$out" ;;
    af) "$CC" -fopenmp "$src" "${common[@]}" -o "$out" ;;
    autopar)
      local par=()
      [ "$n" -gt 1 ] && par=(-ftree-parallelize-loops="$n")
      "$CC" -fopenmp "${par[@]}" "$src" "${common[@]}" -o "$out" ;;
    polly | afpolly)
      [ "$have_clang" = 1 ] || return 1
      "$CLANG" -fopenmp -mllvm -polly -mllvm -polly-parallel "$src" "${common[@]}" -o "$out" ;;
  esac
}

header="| kernel | transformation |"
rule="| --- | --- |"
for n in $THREADS; do
  for v in "${variants[@]}"; do
    header+=" ${title[$v]}, $n thr (s) |"
    rule+=" ---: |"
  done
done
echo "$header"
echo "$rule"

# Speed-ups over the original, per variant and thread count, for the
# geometric means: "variant n" -> list of ratios.
declare -A ratios=()

for k in "${kernels[@]}"; do
  w="$work/$k"
  mkdir -p "$w"
  mapfile -t params < <(af_params "$arrayflow" "$bench/$k.c")
  loop=$(af_loop "$arrayflow" "$bench/$k.c" "${params[@]}")
  for t in $TRANSFORMS; do
    if ! mapfile -t args < <(af_args "$t" "$loop") || [ ${#args[@]} -eq 0 ]; then
      echo "| $k | $t | no loop is parallel after expansion |"
      continue
    fi
    # The version for the timed dataset and the one for the dumps: the
    # dataset's macros give the extents PolyBench declares.
    out="$w/$t.c"
    dump_out="$w/$t.dump.c"
    if ! "$arrayflow" "${args[@]}" "$bench/$k.c" -D "${DATASET}_DATASET" "${params[@]}" \
      >"$out" 2>"$out.err" ||
      ! "$arrayflow" "${args[@]}" "$bench/$k.c" -D "${DUMP_DATASET}_DATASET" "${params[@]}" \
        >"$dump_out" 2>"$dump_out.err"; then
      echo "| $k | $t | arrayflow fails: $(cat "$out.err" "$dump_out.err" | grep -m1 error | cut -c1-80) |"
      continue
    fi
    if grep -q "no loop becomes parallel" "$out"; then
      echo "| $k | $t | nothing to do |"
      continue
    fi
    if ! python3 "$here/splice.py" "$bench/$k.c" "$out" >"$w/$t.spliced.c" 2>/dev/null ||
      ! python3 "$here/splice.py" "$bench/$k.c" "$dump_out" >"$w/$t.dump.spliced.c" 2>/dev/null; then
      echo "| $k | $t | the output does not splice |"
      continue
    fi
    declare -A src=([orig]="$bench/$k.c" [af]="$w/$t.spliced.c" [autopar]="$bench/$k.c"
      [polly]="$bench/$k.c" [afpolly]="$w/$t.spliced.c")
    declare -A dump_src=([orig]="$bench/$k.c" [af]="$w/$t.dump.spliced.c" [autopar]="$bench/$k.c"
      [polly]="$bench/$k.c" [afpolly]="$w/$t.dump.spliced.c")
    # Binaries by "variant n" (empty: not built), and each variant's verdict
    # on the dumps.
    declare -A bin=() state=()
    for v in "${variants[@]}"; do
      for n in $THREADS; do
        b="$w/$t.$v.$n"
        if build "$v" "${src[$v]}" "$n" "$b" -D "${DATASET}_DATASET" -D POLYBENCH_TIME \
          2>"$b.cc"; then
          bin["$v $n"]="$b"
        else
          bin["$v $n"]=""
        fi
        # Dumps with 2 threads (the autopar build for the largest count).
        if [ -n "${bin[$v $n]}" ]; then
          d="$w/$t.$v.$n.dump"
          if build "$v" "${dump_src[$v]}" "$n" "$d" -D "${DUMP_DATASET}_DATASET" -D POLYBENCH_DUMP_ARRAYS -D ARRAYFLOW_PARALLEL_WORK=0 \
            2>/dev/null; then
            OMP_NUM_THREADS=2 "$d" 2>"$d.out" >/dev/null
          else
            : >"$d.out"
          fi
        fi
      done
    done
    for v in "${variants[@]}"; do
      for n in $THREADS; do
        [ -n "${bin[$v $n]}" ] || continue
        if ! cmp -s "$w/$t.orig.$n.dump.out" "$w/$t.$v.$n.dump.out" ||
          [ ! -s "$w/$t.orig.$n.dump.out" ]; then
          state["$v $n"]=wrong
        fi
      done
    done
    for v in "${variants[@]}"; do
      for n in $THREADS; do : >"$w/$t.$v.$n.times"; done
    done
    for _ in $(seq "$RUNS"); do
      for n in $THREADS; do
        for v in "${variants[@]}"; do
          b="${bin[$v $n]}"
          [ -n "$b" ] && [ -z "${state[$v $n]:-}" ] || continue
          OMP_NUM_THREADS=$n "$b" 2>/dev/null | tail -1 >>"$w/$t.$v.$n.times"
        done
      done
    done
    row="| $k | $t |"
    [ "$t" = contract ] && row="| $k | $t ($loop) |"
    for n in $THREADS; do
      base=$(median <"$w/$t.orig.$n.times")
      for v in "${variants[@]}"; do
        if [ -z "${bin[$v $n]}" ]; then
          row+=" - |"
        elif [ -n "${state[$v $n]:-}" ]; then
          row+=" ${state[$v $n]} |"
        else
          s=$(median <"$w/$t.$v.$n.times")
          row+=" $s |"
          ratios["$v $n"]+=" $(awk -v a="$base" -v b="$s" 'BEGIN { printf "%.6f", (b > 0) ? a / b : 0 }')"
        fi
      done
    done
    echo "$row"
    unset src dump_src bin state
  done
done

echo
echo "Geometric mean speed-up over the original (kernels timed):"
for n in $THREADS; do
  for v in "${variants[@]}"; do
    [ "$v" = orig ] && continue
    r="${ratios[$v $n]:-}"
    [ -n "$r" ] || continue
    echo "$r" | awk -v name="${title[$v]}, $n thr" '{ s = 0; c = 0; for (i = 1; i <= NF; i++) if ($i > 0) { s += log($i); c++ } }
      END { if (c) printf "- %s: %.2fx over %d kernels\n", name, exp(s / c), c }'
  done
done
[ -n "${KEEP:-}" ] || rm -rf "$work"
