// R of maximal static expansion, in its linear form. Elements are writes
// (dense write ids) and the initial value of each cell that some read may
// see (a pseudo-write, ids after the writes); the driver
// (src/expansion/classes.rs) numbers them. R relates two elements when both
// are possible sources of one read slot. Relating every source of a slot to
// one anchor source (the slot's first) has the same reflexive-transitive
// closure R* as relating every pair, with one tuple per source instead of
// k² per slot: the union-find in the driver takes `related` from here and
// never builds the closure. docs/expansion.md has the argument.
ascent::ascent_source! {
    /// R's spanning edges and the live writes.
    expansion_r:

    // source(S, E): element E is a possible source of read slot S (σ, plus
    // the initial value of every cell whose initial value reaches S).
    relation source(u32, u32);
    // anchor(S, A): the first source of slot S.
    relation anchor(u32, u32);

    // related(E, A): E R A, with A the anchor of a slot E is a source of.
    relation related(u32, u32);
    // live(E): E is a possible source of some read.
    relation live(u32);

    related(e, a) <-- source(s, e), anchor(s, a), if e != a;
    live(e) <-- source(_, e);
}
