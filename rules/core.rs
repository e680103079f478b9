// Core rules of σ: the backward walk over the writes of one cell, and what
// it yields. Input relations are those of src/facts/mod.rs; `facts` is the
// lowered `Facts`, looked up by key (an index join on its first column).
// The kinds' rule files (must.rs, may.rs, update.rs) say when the walk goes
// on past a write (`step`) and where other readers start it. docs/rules.md proves
// that `source` and `initial` are exactly the definition of σ (its §1).
ascent::ascent_source! {
    /// The walk, the sources, the initial value.
    dataflow_core:

    // ctx(C): the one context tuple: the lowered facts (looked up by key),
    // the batch's pure reads `read(X, O)` (scanned), and the fuel of this run.
    relation ctx(Ctx<'a>);
    // Loaded per batch: for the operations of the batch's readers, the
    // literals their guards force and their condition literals.
    relation closure(Op, Lit);
    relation cond_lit(Op, u32, bool);

    // visit(X, O, W, N): walking back from reader X (a read, or an update), write W (or NONE, the
    // initial value) is reached after N steps. `#[ds(arrayflow::dataflow::bag)]`: a bag
    // relation, kept without a dedup index (src/dataflow/bag.rs): the rules
    // derive each of its tuples once.
    #[ds(arrayflow::dataflow::bag)]
    relation visit(Acc, Op, Acc, u32);
    // step(X, O, W, N): the walk from X goes on past the visited write W
    // (each kind's rules say when).
    relation step(Acc, Op, Acc, u32);
    // exhausted(X): the walk from X used up its fuel; the engine runs X
    // again with more.
    #[ds(arrayflow::dataflow::bag)]
    relation exhausted(Acc);
    // conflict(X, W): G(W) ∪ G(X) holds a condition literal with both values.
    relation conflict(Acc, Acc);
    #[ds(arrayflow::dataflow::bag)]
    relation source(Acc, Acc);
    #[ds(arrayflow::dataflow::bag)]
    relation initial(Acc);

    // The walk starts at the latest write of the cell before the read.
    visit(x, o, w, 0) <-- ctx(c), for &(x, o) in c.reads, let w = c.facts.prev(x);

    // It goes on to the write `link` names: the one before the writes this
    // write hides (must) or simply the one before (may).
    visit(x, o, h, n + 1) <-- step(x, o, w, n), ctx(c), if *n < c.fuel, let h = c.facts.link(*w);
    exhausted(x) <-- step(x, _, _, n), ctx(c), if *n >= c.fuel;

    conflict(x, w) <--
        visit(x, o, w, _), if *w != NONE, ctx(c),
        for (i, b) in c.facts.cond_lits(c.facts.op(*w)), let nb = !b, cond_lit(o, i, nb);

    // Every visited write consistent with the reader is a source; the walk
    // reaching the end of the chain means the initial value is one.
    source(x, w) <-- visit(x, _, w, _), if *w != NONE, !conflict(x, w);
    initial(x) <-- visit(x, _, w, _), if *w == NONE;
}
