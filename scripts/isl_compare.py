#!/usr/bin/env python3
"""Side by side with isl: σ by isl's compute_flow against arrayflow's symbolic σ.

Usage: isl_compare.py MODEL SYMBOLIC [MODEL SYMBOLIC ...]
  MODEL     the output of `arrayflow model FILE --format isl`
  SYMBOLIC  the output of `arrayflow flow FILE --symbolic --format isl`

For every read access arrayflow proved exact (a `source` line), isl computes
the flow from the model (the domains, the 2d+1 schedule, the write relations
as must-sources, that read as the sink); the dependence relation must equal
arrayflow's source relation reversed, and isl's sinks with no source must
equal arrayflow's initial-value set, as isl sets. Prints one line per read;
exit 0 when all agree, 1 on a difference, 3 when islpy is missing.
"""
import sys

try:
    import islpy as isl
except ImportError:
    print("islpy is not installed (python3 -m pip install islpy==2026.2.2)")
    sys.exit(3)


def parse(path):
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, _, val = line.partition(": ")
            out[key] = val
    return out


def compare(model_path, sym_path):
    """(reads compared, reads different) for one program."""
    model, sym = parse(model_path), parse(sym_path)
    dom = isl.UnionSet(model["domain"])
    sched = isl.UnionMap(model["schedule"]).intersect_domain(dom)
    writes = isl.UnionMap(model["write"]).intersect_domain(dom)
    bad = checked = 0
    for key, val in sym.items():
        if not key.startswith("source "):
            continue
        rk = key[len("source "):]
        read = isl.UnionMap(model["read " + rk]).intersect_domain(dom)
        info = isl.UnionAccessInfo.from_sink(read)
        info = info.set_must_source(writes).set_schedule_map(sched)
        flow = info.compute_flow()
        dep = flow.get_must_dependence()
        none = flow.get_must_no_source().domain()
        ours = isl.UnionMap(val).reverse()
        ours_init = isl.UnionSet(sym["initial " + rk])
        checked += 1
        if dep.is_equal(ours) and none.is_equal(ours_init):
            print(f"ok {sym_path} {rk}")
        else:
            bad += 1
            print(f"DIFFERENT {sym_path} {rk}")
            print(f"  isl dependences: {dep}")
            print(f"  ours (reversed): {ours}")
            print(f"  isl no source:   {none}")
            print(f"  ours initial:    {ours_init}")
    return checked, bad


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        print(__doc__)
        sys.exit(2)
    checked = bad = 0
    for k in range(0, len(args), 2):
        c, b = compare(args[k], args[k + 1])
        checked, bad = checked + c, bad + b
    print(f"{checked} reads compared, {bad} different")
    sys.exit(1 if bad else 0)


main()
