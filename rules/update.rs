// Compound assignments (`A[i] += e`): one access instance both reads and
// writes its cell. It reads first, so it enters the walk as a reader, from
// the latest write before it (prev_write never names itself); as a write it
// is must or may by its subscripts, and must.rs or may.rs applies.
ascent::ascent_source! {
    /// Updates read before they write.
    dataflow_update:

    // It starts the walk like a read: at the latest write before it. The
    // batch's updates `update(X, O)` are scanned from the context.
    visit(x, o, w, 0) <-- ctx(c), for &(x, o) in c.updates, let w = c.facts.prev(x);
}
