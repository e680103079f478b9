//! Which loops of a kernel carry which memory-based dependences, from the
//! exact dependence tests (`crate::dependence`) on the kernel's local
//! program. A loop-carried dependence never leaves its kernel (a loop lies
//! in one kernel), so the answer is the whole program's.

use crate::dependence::direction::{carrying_levels, Dir};
use crate::dependence::{report, Kind, Tester};
use crate::model::{AccessKind, ArrayId, CounterId, Program, Site};
use std::collections::BTreeMap;

/// A dependence a loop carries: `from`'s access runs in an earlier iteration
/// than `to`'s. `distance` (in iterations of the loop) when constant.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CarriedDep {
    pub kind: Kind,
    pub array: ArrayId,
    pub from: Site,
    pub to: Site,
    /// The constant distances found, smallest and largest; `None` when some
    /// vector had no constant distance.
    pub distance: Option<(i64, i64)>,
}

/// A carried dependence without its distance: loop, kind, array, from, to.
type Key = (CounterId, Kind, ArrayId, Site, Site);

/// The memory-based dependences every loop of a program carries, by counter.
/// Only pairs of references inside a common loop are tested (no other pair
/// is carried by a loop); the memory budget is polled as they go, since a
/// loop of n references has up to n² of them.
pub fn carried_by_loop(
    program: &Program,
) -> Result<BTreeMap<CounterId, Vec<CarriedDep>>, crate::budget::Exceeded> {
    let limit = crate::budget::limit();
    let mut seen: u64 = 0;
    let loops = super::SiteLoops::new(program);
    let stmts = program.stmts();
    let kind_of = |site: Site, position: usize| -> AccessKind {
        match site {
            Site::Stmt(s) => stmts
                .get(s.index())
                .and_then(|s| s.accesses().get(position).map(|a| a.kind))
                .unwrap_or(AccessKind::Read),
            Site::Cond(_) => AccessKind::Read,
        }
    };
    let mut tester = Tester::new(crate::dependence::Config::default());
    let mut found: BTreeMap<Key, Option<(i64, i64)>> = BTreeMap::new();
    report::each(program, &mut tester, report::Scope::CommonLoop, |p| {
        seen += 1;
        if seen.is_multiple_of(4096) {
            crate::budget::check(limit, || {
                "the dependences the loops carry (exact tests)".into()
            })?;
        }
        if !p.dependent {
            return Ok(());
        }
        let (src, dst) = (p.src_id.site, p.dst_id.site);
        let (ks, kd) = (
            kind_of(src, p.src_id.position),
            kind_of(dst, p.dst_id.position),
        );
        let common = loops.common(src, dst);
        let array = p.array_id;
        let levels = (p.dependence.vectors.iter())
            .flat_map(|v| carrying_levels(&v.dirs).into_iter().map(move |l| (v, l)));
        for (v, level) in levels {
            let Some(&counter) = common.get(level) else {
                continue;
            };
            let d = v.distance.as_ref().and_then(|d| d.get(level).copied());
            let mut add =
                |first: (Site, AccessKind), second: (Site, AccessKind), dist: Option<i64>| {
                    let kinds = [
                        (first.1.writes() && second.1.reads(), Kind::Flow),
                        (first.1.reads() && second.1.writes(), Kind::Anti),
                        (first.1.writes() && second.1.writes(), Kind::Output),
                    ];
                    for (yes, kind) in kinds {
                        if !yes {
                            continue;
                        }
                        let key = (counter, kind, array, first.0, second.0);
                        let new = dist.map(|d| (d, d));
                        match found.get_mut(&key) {
                            None => {
                                found.insert(key, new);
                            }
                            Some(e) => {
                                *e = match (*e, new) {
                                    (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
                                    _ => None,
                                }
                            }
                        }
                    }
                };
            match v.dirs[level] {
                Dir::Plus => add((src, ks), (dst, kd), d),
                Dir::Minus => add((dst, kd), (src, ks), d.map(|d| -d)),
                _ => {
                    add((src, ks), (dst, kd), None);
                    add((dst, kd), (src, ks), None);
                }
            }
        }
        Ok(())
    })?;
    let mut out: BTreeMap<CounterId, Vec<CarriedDep>> = BTreeMap::new();
    for ((counter, kind, array, from, to), distance) in found {
        out.entry(counter).or_default().push(CarriedDep {
            kind,
            array,
            from,
            to,
            distance,
        });
    }
    Ok(out)
}
