#!/usr/bin/env python3
"""Side by side with isl: σ by isl's compute_flow against arrayflow's symbolic σ.

Usage: isl_compare.py MODEL SYMBOLIC [MODEL SYMBOLIC ...]
  MODEL     the output of `arrayflow model FILE --format isl`
  SYMBOLIC  the output of `arrayflow flow FILE --symbolic --format isl`

For every read access arrayflow proved exact (a `source` line), isl computes
the flow from the model (the domains, the 2d+1 schedule, the write relations
as must-sources, that read as the sink); the dependence relation must equal
arrayflow's source relation reversed, and isl's sinks with no source must
equal arrayflow's initial-value set, as isl sets.

For every read outside static control (a `possible` line: its set of possible
sources), isl computes the may-flow with the writes the model marks `may`
(under an unknown condition, in a `while`, through a non-affine subscript) as
may-sources: a may-source kills nothing, where arrayflow's definition lets a
write whose guard the read forces kill (docs/rules.md §1). So arrayflow's
relation must be a subset of isl's may-dependences, and its initial set a
subset of isl's may-no-source; the line says `same` or `smaller`.

Prints one line per read; exit 0 when all agree, 1 on a difference, 3 when
islpy is missing.
"""
import sys

try:
    import islpy as isl
except ImportError:
    print("islpy is not installed (python3 -m pip install islpy==2026.2.2)")
    sys.exit(3)


def parse(path):
    out = {"may writes": set()}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("# write of ") and ": may" in line:
                out["may writes"].add(line[len("# write of "):].split(":")[0])
            if not line or line.startswith("#"):
                continue
            key, _, val = line.partition(": ")
            out[key] = val
    return out


def split_writes(writes, may_names):
    """(must, may) parts of the write relation, by statement."""
    must = isl.UnionMap.empty(writes.get_space())
    may = isl.UnionMap.empty(writes.get_space())
    maps = writes.get_map_list()
    for k in range(maps.n_map()):
        m = maps.get_at(k)
        if m.get_tuple_name(isl.dim_type.in_) in may_names:
            may = may.union(isl.UnionMap.from_map(m))
        else:
            must = must.union(isl.UnionMap.from_map(m))
    return must, may


def compare_possible(model, sym, dom, sched, writes, sym_path):
    """(reads compared, reads different, reads smaller than isl's)."""
    must, may = split_writes(writes, model["may writes"])
    bad = checked = smaller = 0
    for key, val in sym.items():
        if not key.startswith("possible "):
            continue
        rk = key[len("possible "):]
        read = isl.UnionMap(model["read " + rk]).intersect_domain(dom)
        info = isl.UnionAccessInfo.from_sink(read)
        info = info.set_must_source(must).set_may_source(may).set_schedule_map(sched)
        flow = info.compute_flow()
        dep = flow.get_may_dependence()
        none = flow.get_may_no_source().domain()
        ours = isl.UnionMap(val).reverse().intersect_range(dom)
        ours_init = isl.UnionSet(sym["initial " + rk]).intersect(dom)
        checked += 1
        if ours.is_subset(dep) and ours_init.is_subset(none):
            same = ours.is_equal(dep) and ours_init.is_equal(none)
            smaller += not same
            print(f"ok {sym_path} {rk} possible: {'same' if same else 'smaller'}")
        else:
            bad += 1
            print(f"DIFFERENT {sym_path} {rk} (possible sources not within isl's may-flow)")
            print(f"  isl may-dependences: {dep}")
            print(f"  ours (reversed):     {ours}")
            print(f"  isl may-no-source:   {none}")
            print(f"  ours initial:        {ours_init}")
    return checked, bad, smaller


def compare(model_path, sym_path):
    """(reads compared, reads different, possible sets, smaller) for one program."""
    model, sym = parse(model_path), parse(sym_path)
    dom = isl.UnionSet(model["domain"])
    # Quasts proved for the runs that complete hold where every access
    # stays in its declared range: both sides are compared there.
    ctx = isl.Set(sym["context"]) if "context" in sym else None
    if ctx is not None:
        dom = dom.intersect_params(ctx)
    sched = isl.UnionMap(model["schedule"]).intersect_domain(dom)
    writes = isl.UnionMap(model["write"]).intersect_domain(dom)
    sets, set_bad, smaller = compare_possible(model, sym, dom, sched, writes, sym_path)
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
        if ctx is not None:
            ours = ours.intersect_params(ctx)
            ours_init = ours_init.intersect_params(ctx)
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
    return checked, bad + set_bad, sets, smaller


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        print(__doc__)
        sys.exit(2)
    checked = bad = sets = smaller = 0
    for k in range(0, len(args), 2):
        c, b, s, m = compare(args[k], args[k + 1])
        checked, bad, sets, smaller = checked + c, bad + b, sets + s, smaller + m
    print(f"{checked} reads compared, {bad} different; {sets} possible-source sets within isl's may-flow, {smaller} of them smaller")
    sys.exit(1 if bad else 0)


main()
