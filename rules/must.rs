// Must-writes (affine subscripts): they kill. The walk stops at a must-write
// W whose whole guard the reader's guard forces (every earlier write is then
// killed); otherwise it goes on, and `link` = hop(W) skips the writes that W
// itself kills (those inside Inner(W)).
//
// A cover (facts: cover(W)) is the `then` branch's write of a cell that the
// `else` branch writes too: for a reader after the `if`, its own literal
// cond(I, true) counts as forced, since one of the two branches wrote the
// cell. A reader in the `else` branch is not after the `if`: there the
// walk goes on past W as past any must-write that the reader does not force.
ascent::ascent_source! {
    /// When the walk goes on past a must-write.
    dataflow_must:

    step(x, o, w, n) <--
        visit(x, o, w, n), ctx(c), if c.facts.is_must(*w),
        for l in c.facts.guard(c.facts.op(*w)), if !c.facts.is_cover_lit(*w, &l),
        !closure(o, l);

    step(x, o, w, n) <--
        visit(x, o, w, n), ctx(c), if c.facts.is_cover(*w),
        if let Some((other, _)) = c.facts.cover_lits(*w), closure(o, other);
}
