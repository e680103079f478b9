# What harness.sh and speed.sh both ask arrayflow (sourced by them, with
# `here` set to this directory).

root="$(cd "$here/../.." && pwd)"
bench="$root/fixtures/c/polybench"

# af_params ARRAYFLOW FILE: `--param` and `NAME=VALUE`, one a line, for
# each parameter of the kernel at MINI (the `param` lines of `fmt`): the
# analyses' sizes whatever the dataset built.
af_params() {
  "$1" fmt "$2" -D MINI_DATASET 2>/dev/null |
    sed -n 's/^param \([A-Za-z_0-9]*\) = \(-\?[0-9]*\);$/--param\n\1=\2/p'
}

# af_loop ARRAYFLOW FILE PARAM...: the outermost loop of `expand`'s report
# that carries no dependence after maximal static expansion (the MSE
# column is `none`); nothing when there is none.
af_loop() {
  local arrayflow="$1" file="$2"
  shift 2
  "$arrayflow" expand "$file" "$@" 2>/dev/null |
    awk '/^loops: dependences carried/ {on=1; next}
         on && /^  *[^ ]+ : / {
           split($0, f, "|"); ind = match($0, /[^ ]/);
           if (f[2] ~ /^ *none *$/ && (best == "" || ind < bi)) { best = $1; bi = ind } }
         END { print best }'
}

# af_args TRANSFORM LOOP: the command of a transformation, one argument a
# line; status 1 for `contract` without a loop (nothing to contract).
af_args() {
  case "$1" in
    expand) printf '%s\n' expand --emit code ;;
    privatize) printf '%s\n' privatize --emit code ;;
    contract)
      [ -n "$2" ] || return 1
      printf '%s\n' expand --transform contract --parallel "$2" --emit code ;;
    *) echo "unknown transformation $1" >&2; return 2 ;;
  esac
}
