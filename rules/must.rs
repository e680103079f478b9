// Must-writes (affine subscripts): they kill. The walk stops at a must-write
// W whose whole guard the reader's guard forces (every earlier write is then
// killed); otherwise it goes on, and `link` = hop(W) skips the writes that W
// itself kills (those inside Inner(W)).
ascent::ascent_source! {
    /// When the walk goes on past a must-write.
    dataflow_must:

    step(x, o, w, n) <--
        visit(x, o, w, n), ctx(c), if c.facts.is_must(*w),
        for l in c.facts.guard(c.facts.op(*w)), !closure(o, l);
}
