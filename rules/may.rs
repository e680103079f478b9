// May-writes (a non-affine subscript): they never kill, so the walk always
// goes on past them, to the previous write of the cell (`link` = prev_write).
ascent::ascent_source! {
    /// When the walk goes on past a may-write.
    dataflow_may:

    step(x, o, w, n) <-- visit(x, o, w, n), ctx(c), if c.facts.is_may(*w);
}
