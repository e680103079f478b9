//! Bounded σ from proved quasts: a second engine for `flow` at concrete
//! sizes. When every read of a program has a quast proved exact for every
//! parameter value (`symbolic::analyze`), σ at given sizes is each read
//! instance's quast evaluated there: one walk over the statements'
//! instances, no facts and no rules. The groups are built by the same
//! `Grouper` the rules engine's output goes through, so the two print the
//! same bytes (tests/flow_engines.rs checks it on every fixture and on
//! generated programs). docs/flow.md, "Engines".

use super::domain::{self, Atom, Dnf, Place};
use super::infer::Dense;
use super::{Outcome, Quast, Symbolic};
use crate::dataflow::grouped::{AccessGroups, Grouper};
use crate::model::{ArrayId, CounterId, Program, Site, StmtId};

/// Why the quasts cannot give bounded σ for this program, if they cannot.
pub fn unusable(program: &Program, sym: &Symbolic, params: &[i64]) -> Option<String> {
    if let Some(r) = sym
        .reads
        .iter()
        .find(|r| !matches!(r.outcome, Outcome::Exact(_)))
    {
        let why = match &r.outcome {
            Outcome::Fallback(why) => why.as_str(),
            Outcome::Possible(p) => p.why.as_str(),
            Outcome::Exact(_) => "",
        };
        return Some(format!(
            "read {} of `{}` has no exact quast: {why}",
            r.read,
            program.stmts()[r.stmt.index()].label
        ));
    }
    if let Some((c, _)) = sym.condition_reads.first() {
        return Some(format!("condition `{c}` reads memory"));
    }
    // `flow` still answers where a run would stop: the quasts do not.
    if !sym.claims(params) {
        return Some(format!(
            "the quasts hold where every access stays in its declared range ({}), not at these sizes",
            super::render::in_range(program, sym).join(" and ")
        ));
    }
    None
}

/// A quast with its affine forms resolved to feature indices (the read's
/// counters, then the parameters), so that an evaluation allocates nothing.
enum Compiled {
    Initial,
    /// The statement, its coordinates' numerators and their divisor.
    Source(StmtId, Vec<Dense>, i64),
    Split(Dense, Box<Compiled>, Box<Compiled>),
    /// Yes where the modulus divides the form.
    Stride(Dense, i64, Box<Compiled>, Box<Compiled>),
}

impl Compiled {
    fn new(q: &Quast, counters: &[CounterId]) -> Compiled {
        match q {
            Quast::Leaf(None) => Compiled::Initial,
            Quast::Leaf(Some(s)) => Compiled::Source(
                s.stmt,
                s.iter.iter().map(|e| Dense::new(e, counters)).collect(),
                s.den,
            ),
            Quast::Split { cond, yes, no } => Compiled::Split(
                Dense::new(cond, counters),
                Box::new(Compiled::new(yes, counters)),
                Box::new(Compiled::new(no, counters)),
            ),
            Quast::Stride { expr, k, yes, no } => Compiled::Stride(
                Dense::new(expr, counters),
                *k,
                Box::new(Compiled::new(yes, counters)),
                Box::new(Compiled::new(no, counters)),
            ),
        }
    }

    /// The source at `x` into `it`: Some(stmt), or None for the initial
    /// value; Err on overflow.
    fn eval(&self, x: &[i64], it: &mut Vec<i64>) -> Result<Option<StmtId>, ()> {
        let mut q = self;
        loop {
            match q {
                Compiled::Initial => return Ok(None),
                Compiled::Source(s, iter, den) => {
                    it.clear();
                    for e in iter {
                        match e.at(x) {
                            i64::MIN => return Err(()),
                            // The stride above makes the division exact.
                            v if v % den != 0 => return Err(()),
                            v => it.push(v / den),
                        }
                    }
                    return Ok(Some(*s));
                }
                Compiled::Split(c, yes, no) => match c.at(x) {
                    i64::MIN => return Err(()),
                    v => q = if v >= 0 { yes } else { no },
                },
                Compiled::Stride(e, k, yes, no) => match e.at(x) {
                    i64::MIN => return Err(()),
                    v => q = if v.rem_euclid(*k) == 0 { yes } else { no },
                },
            }
        }
    }
}

/// Bounded σ at `params` (one value per parameter), grouped per read
/// access: `each` gets each statement's accesses in statement order, as
/// `db::resolve::file_groups` hands them. Err when the quasts cannot give
/// it ([`unusable`]), or on overflow.
pub fn groups<E>(
    program: &Program,
    sym: &Symbolic,
    params: &[i64],
    mut each: impl FnMut(Vec<AccessGroups>) -> Result<(), E>,
) -> Result<Result<(), E>, String> {
    if let Some(why) = unusable(program, sym, params) {
        return Err(why);
    }
    let places = domain::places(program);
    let mut grouper = Grouper::new(program);
    let overflow = || "an affine form overflows at these sizes".to_string();
    // Each statement's reads, found without a pass over every read per
    // statement (quadratic in statements).
    let stmts = program.stmts();
    let mut of_stmt: Vec<Vec<&super::ReadFlow>> = vec![Vec::new(); stmts.len()];
    for r in &sym.reads {
        if let Some(v) = of_stmt.get_mut(r.stmt.index()) {
            v.push(r);
        }
    }
    for s in stmts {
        let place = &places[s.id.index()];
        let counters = place.counters();
        let reads: Vec<(usize, ArrayId, Compiled)> = of_stmt[s.id.index()]
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::Exact(q) => Some((r.read, r.array, Compiled::new(q, &counters))),
                Outcome::Fallback(_) | Outcome::Possible(_) => None,
            })
            .collect();
        if reads.is_empty() {
            continue;
        }
        let guards = guards(place).ok_or_else(|| format!("`{}` is not static control", s.label))?;
        let site = Site::Stmt(s.id);
        let mut it = Vec::new();
        let mut failed = false;
        // The groups are small, but a program whose sources vary without
        // pattern makes one per instance: the memory budget is polled.
        let limit = crate::budget::limit();
        let mut over: Option<String> = None;
        let mut seen: u32 = 0;
        instances(place, &guards, params, &mut |x| {
            seen = seen.wrapping_add(1);
            if seen.is_multiple_of(65_536) && over.is_none() {
                if let Err(e) = crate::budget::check(limit, || "the groups of bounded σ".into()) {
                    over = Some(e.to_string());
                }
            }
            if over.is_some() {
                return;
            }
            let iter = &x[..counters.len()];
            for (k, array, q) in &reads {
                match q.eval(x, &mut it) {
                    Ok(Some(w)) => {
                        grouper.read(site, iter, *k, *array, [(Site::Stmt(w), &it[..])], false)
                    }
                    Ok(None) => grouper.read(site, iter, *k, *array, [], true),
                    Err(()) => failed = true,
                }
            }
        })
        .ok_or_else(overflow)?;
        if let Some(e) = over {
            return Err(e);
        }
        if failed {
            return Err(overflow());
        }
        let done = grouper.take(site);
        if !done.is_empty() {
            if let Err(e) = each(done) {
                return Ok(Err(e));
            }
        }
    }
    Ok(Ok(()))
}

/// The guards of a place as a DNF (None when not affine); empty when there
/// are none.
fn guards(place: &Place) -> Option<Dnf> {
    let mut out: Dnf = vec![Vec::new()];
    for (c, b) in &place.guards {
        out = domain::and(&out, &domain::dnf(c, *b)?)?;
    }
    Some(out)
}

/// Whether an atom (its expression compiled) holds at `x` (None on
/// overflow).
fn holds((e, a): &(Dense, &Atom), x: &[i64]) -> Option<bool> {
    let v = e.at(x);
    if v == i64::MIN {
        return None;
    }
    Some(match a {
        Atom::Le(_) => v <= 0,
        Atom::Eq(_) => v == 0,
        Atom::Stride(_, s) => v.rem_euclid(*s) == 0,
        Atom::NotStride(_, s) => v.rem_euclid(*s) != 0,
    })
}

/// Calls `f` with the features (counters then parameters) of every
/// instance of `place`, in execution order. None on overflow.
fn instances(place: &Place, guards: &Dnf, params: &[i64], f: &mut dyn FnMut(&[i64])) -> Option<()> {
    let counters = place.counters();
    let depth = counters.len();
    let bounds: Vec<(Dense, Dense, i64)> = place
        .loops
        .iter()
        .map(|l| {
            (
                Dense::new(&l.lo, &counters),
                Dense::new(&l.hi, &counters),
                l.step,
            )
        })
        .collect();
    if bounds.iter().any(|b| b.2 < 1) {
        return None;
    }
    let guards: Vec<Vec<(Dense, &Atom)>> = guards
        .iter()
        .map(|conj| {
            conj.iter()
                .map(|a| (Dense::new(a.expr(), &counters), a))
                .collect()
        })
        .collect();
    let mut x = vec![0; depth];
    x.extend_from_slice(params);
    type Guards<'a> = [Vec<(Dense, &'a Atom)>];
    fn level(
        d: usize,
        x: &mut Vec<i64>,
        bounds: &[(Dense, Dense, i64)],
        guards: &Guards,
        f: &mut dyn FnMut(&[i64]),
    ) -> Option<()> {
        let Some((lo, hi, step)) = bounds.get(d) else {
            let mut any = guards.is_empty();
            for conj in guards {
                let mut all = true;
                for a in conj {
                    if !holds(a, x)? {
                        all = false;
                        break;
                    }
                }
                if all {
                    any = true;
                    break;
                }
            }
            if any {
                f(x);
            }
            return Some(());
        };
        let (lo, hi) = (lo.at(x), hi.at(x));
        if lo == i64::MIN || hi == i64::MIN {
            return None;
        }
        let mut v = lo;
        while v <= hi {
            x[d] = v;
            level(d + 1, x, bounds, guards, f)?;
            v = v.checked_add(*step)?;
        }
        Some(())
    }
    level(0, &mut x, &bounds, &guards, f)
}
