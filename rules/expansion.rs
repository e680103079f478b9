// R of maximal static expansion, in its linear form. Elements are writes
// (dense write ids) and the initial value of each cell some read may see (a
// pseudo-write, ids after the writes); the driver (src/expansion/classes.rs)
// numbers them and hands σ over as `ctx`, looked up by read slot (as the
// dataflow rules look up their facts). R relates two elements when both are
// possible sources of one read slot. Relating every source of a slot to one
// anchor (its first source) has the same reflexive-transitive closure R* as
// relating every pair, with at most one tuple per source instead of k² per
// slot; a slot with one source adds nothing. The union-find in the driver
// takes `related` and never builds the closure. docs/expansion.md, §2.
ascent::ascent_source! {
    /// R's spanning edges.
    expansion_r:

    // ctx(S): σ of the analysis: `S.elements(s)` are the possible sources
    // of read slot s (writes, then initial values), `S.anchor(s)` the first.
    relation ctx(Sigma<'a>);

    // related(E, A): E R A, with A the anchor of a slot E is a source of.
    relation related(u32, u32);

    related(e, a) <--
        ctx(c), for s in 0..c.n_slots(), if let Some(a) = c.anchor(s),
        for e in c.elements(s), if e != a;
}
