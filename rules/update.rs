// Compound assignments (`A[i] += e`): one access instance both reads and
// writes its cell. It reads first, so it enters the walk as a reader, from
// the latest write before it (prev_write never names itself); as a write it
// is must or may by its subscripts, and must.rs or may.rs applies.
ascent::ascent_source! {
    /// Updates read before they write.
    dataflow_update:

    // Loaded per batch, like `read`.
    relation update(Acc, Op);

    // It starts the walk like a read: at the latest write before it.
    visit(x, o, w, 0) <-- update(x, o), ctx(c), let w = c.facts.prev(*x);
}
