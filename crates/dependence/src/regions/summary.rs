//! Procedure summaries (docs/regions.md §6): per procedure and
//! array parameter, MOD (the write region), USE (the upward-exposed reads:
//! cells read before the procedure writes them) and KILL (the must-write
//! region), as LMADs over the parameter's offsets; and each translated to
//! the caller's array at a call site (section offsets, fixed subscripts and
//! integer arguments substituted).
//!
//! USE is the read region when no read of the array can see a write of the
//! same call (no flow dependence inside the procedure, by
//! `dependence`'s exact tests for every parameter value): then every read
//! is upward exposed and USE is exact when the reads are. Otherwise USE is
//! still the whole read region, a superset, said so.

use super::build::{self, extents, Region, Section};
use super::lmad::{Dim, Lmad};
use super::ops;
use super::poly::Poly;
use super::render::{region_json, region_text};
use crate::dependence::{self, Kind};
use crate::model::calls::{Actual, CallSite, Calls, FormalKind, Procedure};
use crate::model::{Affine, ArrayId, Program, Span, Var};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Why a summary is a superset (MOD, USE) or a subset (KILL).
pub mod why {
    pub const USE_WRITTEN: &str =
        "a read may see a write of the same call: every read taken as upward exposed";
    pub const SHAPE: &str =
        "the parameter's shape does not match the argument's: the whole section";
    pub const SHAPE_KILL: &str =
        "the parameter's shape does not match the argument's: must-writes dropped";
    pub const OVERFLOW: &str = "arithmetic overflow in the translation: the whole array";
    pub const ALIAS: &str =
        "two parameters are bound to this array: a read may see the other's write";
}

/// One array parameter's summary, over its offsets (row-major over its
/// declared ranges).
#[derive(Clone, Debug)]
pub struct FormalSummary {
    /// The parameter's array in [`Procedure::program`].
    pub formal: ArrayId,
    pub mods: Region,
    pub uses: Region,
    pub kill: Region,
}

#[derive(Clone, Debug)]
pub struct Summary {
    pub arrays: Vec<FormalSummary>,
}

/// A summary at a call, over the offsets of the caller's arrays.
#[derive(Clone, Debug)]
pub struct CallSummary {
    pub array: ArrayId,
    pub mods: Region,
    pub uses: Region,
    pub kill: Region,
}

impl Summary {
    /// Whether every region is exact (KILL: exactly the cells every
    /// execution writes).
    pub fn exact(&self) -> bool {
        self.arrays
            .iter()
            .all(|a| a.mods.exact && a.uses.exact && a.kill_exact())
    }
}

impl FormalSummary {
    /// KILL holds only exact LMADs; it is all the must-writes when MOD is
    /// exact and equals it.
    pub fn kill_exact(&self) -> bool {
        self.kill.exact && self.mods.exact && self.kill.lmads == self.mods.lmads
    }
}

/// Whether a translated summary is exact (as [`Summary::exact`]).
pub fn call_exact(s: &[CallSummary]) -> bool {
    s.iter()
        .all(|a| a.mods.exact && a.uses.exact && a.kill.exact && a.kill.lmads == a.mods.lmads)
}

/// The summary of a procedure; `values` fixes the file's parameters it
/// knows (its integer parameters stay symbolic).
pub fn summarize(proc: &Procedure, values: &dyn Fn(Var) -> Option<i64>) -> Summary {
    let p = &proc.program;
    let whole = build::regions(p, values)
        .into_iter()
        .find(|s| s.section == Section::Program);
    let mut tester = dependence::Tester::new(dependence::Config::default());
    let flows: BTreeSet<String> = dependence::analyze(p, &mut tester)
        .into_iter()
        .filter(|r| r.dependent && r.kinds.contains(&Kind::Flow))
        .map(|r| r.array)
        .collect();
    let mut arrays = Vec::new();
    for a in whole.map(|w| w.arrays).unwrap_or_default() {
        let mut uses = a.read.clone();
        if flows.contains(&p.arrays[a.array.index()].name) && !uses.lmads.is_empty() {
            uses.exact = false;
            uses.notes.insert(why::USE_WRITTEN);
            for l in &mut uses.lmads {
                l.exact = false;
            }
        }
        arrays.push(FormalSummary {
            formal: a.array,
            mods: a.write,
            uses,
            kill: a.must_write,
        });
    }
    Summary { arrays }
}

/// Row-major multipliers of extents: `λ_d = Π_{f > d} E_f`.
fn multipliers(ext: &[Poly]) -> Option<Vec<Poly>> {
    let mut out = vec![Poly::constant(1); ext.len()];
    for d in (0..ext.len().saturating_sub(1)).rev() {
        out[d] = out[d + 1].mul(&ext[d + 1])?;
    }
    Some(out)
}

/// How a parameter's offsets become the argument's: `c·o + base` when
/// linear, or the section when the shapes differ.
enum Map {
    Linear { c: Poly, base: Poly },
    Section(Lmad),
}

struct Translator<'a> {
    caller: &'a Program,
    proc: &'a Procedure,
    /// Integer parameters of the procedure and their arguments.
    ints: Vec<(Var, Poly)>,
    values: &'a dyn Fn(Var) -> Option<i64>,
}

impl Translator<'_> {
    fn subst(&self, x: &Poly) -> Option<Poly> {
        let mut x = x.clone();
        for (v, by) in &self.ints {
            if x.mentions(*v) {
                x = x.subst(*v, by)?;
            }
        }
        x.partial(self.values)
    }

    fn lo(p: &Program, a: ArrayId) -> Vec<Poly> {
        p.arrays[a.index()]
            .dims
            .iter()
            .map(|r| Poly::from_affine(&r.lo.affine))
            .collect()
    }

    fn map(&self, formal: ArrayId, actual: &Actual) -> Option<Map> {
        let Actual::Array { array, .. } = actual else {
            return None;
        };
        let (fixed, offsets) = actual.affine_parts()?;
        let ea: Vec<Poly> = extents(self.caller, *array)?
            .iter()
            .map(|e| e.partial(self.values))
            .collect::<Option<_>>()?;
        let la = multipliers(&ea)?;
        let lo_a = Self::lo(self.caller, *array);
        let ex: Vec<Poly> = extents(&self.proc.program, formal)?
            .iter()
            .map(|e| self.subst(e))
            .collect::<Option<_>>()?;
        let lx = multipliers(&ex)?;
        let lo_x: Vec<Poly> = Self::lo(&self.proc.program, formal)
            .iter()
            .map(|e| self.subst(e))
            .collect::<Option<_>>()?;
        let stars: Vec<usize> = (0..fixed.len()).filter(|&d| fixed[d].is_none()).collect();
        let mut base = Poly::constant(0);
        for (d, f) in fixed.iter().enumerate() {
            if let Some(f) = f {
                let term = Poly::from_affine(f).sub(&lo_a[d])?.mul(&la[d])?;
                base = base.add(&term)?;
            }
        }
        let c = stars.last().map_or(Poly::constant(1), |&d| la[d].clone());
        let mut linear = stars.len() == ex.len();
        for (e, &d) in stars.iter().enumerate() {
            let off = Poly::from_affine(offsets.get(e)?);
            let term = lo_x.get(e)?.add(&off)?.sub(&lo_a[d])?.mul(&la[d])?;
            base = base.add(&term)?;
            linear &= la[d] == c.mul(&lx[e])?;
        }
        let base = base.partial(self.values)?;
        if linear {
            return Some(Map::Linear { c, base });
        }
        // The section: every passed dimension over its whole extent.
        let dims = stars
            .iter()
            .map(|&d| Some(Dim::new(la[d].clone(), ea[d].add_const(-1)?.mul(&la[d])?)))
            .collect::<Option<Vec<_>>>()?;
        let fixed_base = fixed
            .iter()
            .enumerate()
            .filter_map(|(d, f)| Some((d, f.as_ref()?)))
            .try_fold(Poly::constant(0), |acc, (d, f)| {
                acc.add(&Poly::from_affine(f).sub(&lo_a[d])?.mul(&la[d])?)
            })?;
        Some(Map::Section(
            Lmad::new(fixed_base, dims).inexact().normalize(),
        ))
    }

    fn lmad(&self, l: &Lmad, c: &Poly, base: &Poly) -> Option<Lmad> {
        let dims = l
            .dims
            .iter()
            .map(|d| {
                Some(Dim::new(
                    self.subst(&d.stride)?.mul(c)?,
                    self.subst(&d.span)?.mul(c)?,
                ))
            })
            .collect::<Option<Vec<_>>>()?;
        let mut out = Lmad::new(self.subst(&l.base)?.mul(c)?.add(base)?, dims);
        out.when = l
            .when
            .iter()
            .map(|w| self.subst(w))
            .collect::<Option<_>>()?;
        out.exact = l.exact;
        Some(out.normalize())
    }

    /// A region through the map; `kill` drops what cannot be kept exact.
    fn region(&self, r: &Region, map: Option<&Map>, array: ArrayId, kill: bool) -> Region {
        let mut out = Region {
            lmads: Vec::new(),
            exact: r.exact,
            notes: r.notes.clone(),
        };
        if r.lmads.is_empty() {
            return out;
        }
        let fallback = |out: &mut Region, why: &'static str| {
            out.exact = false;
            out.notes.insert(why);
            if !kill {
                out.lmads = vec![build::whole(self.caller, array)];
            } else {
                out.lmads.clear();
            }
        };
        match map {
            Some(Map::Linear { c, base }) => {
                let ls: Option<Vec<Lmad>> = r.lmads.iter().map(|l| self.lmad(l, c, base)).collect();
                match ls {
                    Some(ls) => out.lmads = ls,
                    None => fallback(&mut out, why::OVERFLOW),
                }
            }
            Some(Map::Section(s)) => {
                out.exact = false;
                if kill {
                    out.notes.insert(why::SHAPE_KILL);
                } else {
                    out.notes.insert(why::SHAPE);
                    out.lmads = vec![s.clone()];
                }
            }
            None => fallback(&mut out, why::OVERFLOW),
        }
        out
    }
}

/// The summary of `proc` at `site`, over the caller's arrays (one entry
/// per array, parameters bound to the same array joined).
pub fn at_call(
    caller: &Program,
    calls: &Calls,
    site: &CallSite,
    summary: &Summary,
    values: &dyn Fn(Var) -> Option<i64>,
) -> Vec<CallSummary> {
    let proc = &calls.procs[site.proc];
    let mut ints = Vec::new();
    for (f, a) in proc.formals.iter().zip(&site.args) {
        if let (FormalKind::Int(pid), Actual::Int(e)) = (f.kind, a) {
            if let Some(x) = Affine::from_expr(e) {
                ints.push((Var::Param(pid), Poly::from_affine(&x)));
            }
        }
    }
    let t = Translator {
        caller,
        proc,
        ints,
        values,
    };
    let mut by_array: BTreeMap<ArrayId, [Region; 3]> = BTreeMap::new();
    let mut bound: BTreeMap<ArrayId, usize> = BTreeMap::new();
    for s in &summary.arrays {
        let Some(k) = proc
            .formals
            .iter()
            .position(|f| matches!(f.kind, FormalKind::Array(id, _) if id == s.formal))
        else {
            continue;
        };
        let Some(actual @ Actual::Array { array, .. }) = site.args.get(k) else {
            continue;
        };
        *bound.entry(*array).or_default() += 1;
        let map = t.map(s.formal, actual);
        let parts = [
            t.region(&s.mods, map.as_ref(), *array, false),
            t.region(&s.uses, map.as_ref(), *array, false),
            t.region(&s.kill, map.as_ref(), *array, true),
        ];
        let slot = by_array.entry(*array).or_insert_with(|| {
            [(); 3].map(|()| Region {
                lmads: Vec::new(),
                exact: true,
                notes: BTreeSet::new(),
            })
        });
        for (into, part) in slot.iter_mut().zip(parts) {
            into.lmads.extend(part.lmads);
            into.exact &= part.exact;
            into.notes.extend(part.notes);
        }
    }
    by_array
        .into_iter()
        .map(|(array, [mods, mut uses, kill])| {
            // Aliased parameters: the procedure's own USE did not see it.
            if bound[&array] > 1 && !mods.lmads.is_empty() && !uses.lmads.is_empty() {
                uses.exact = false;
                uses.notes.insert(why::ALIAS);
            }
            let join = |mut r: Region| {
                let (lmads, exact) = ops::aggregate(&r.lmads, false);
                r.lmads = lmads;
                r.exact &= exact;
                r
            };
            CallSummary {
                array,
                mods: join(mods),
                uses: join(uses),
                kill: join(kill),
            }
        })
        .collect()
}

fn regions_text(out: &mut String, p: &Program, array: &str, [m, u, k]: [&Region; 3]) {
    let _ = writeln!(out, "  {array}");
    let _ = writeln!(out, "    mod   {}", region_text(p, array, m, false));
    let _ = writeln!(out, "    use   {}", region_text(p, array, u, false));
    let _ = writeln!(out, "    kill  {}", region_text(p, array, k, true));
}

/// One call's translated summary as text (also the language server's hover).
pub fn call_text(caller: &Program, calls: &Calls, site: &CallSite, s: &[CallSummary]) -> String {
    let mut out = format!("call {}: {}\n", site.label, calls.procs[site.proc].name);
    if s.is_empty() {
        out.push_str("  no access\n");
    }
    for a in s {
        let n = &caller.arrays[a.array.index()].name;
        regions_text(&mut out, caller, n, [&a.mods, &a.uses, &a.kill]);
    }
    out
}

/// A procedure's summary or a call's, ready to print: the program whose
/// names the regions use, and per array its MOD, USE and KILL.
struct Block<'a> {
    procedure: bool,
    /// The procedure's name, or the call's label and its procedure's.
    name: String,
    proc: &'a str,
    at: (usize, usize),
    exact: bool,
    program: &'a Program,
    arrays: Vec<(&'a str, [Region; 3])>,
}

/// Every procedure's summary, then every call's.
fn blocks<'a>(
    caller: &'a Program,
    calls: &'a Calls,
    values: &dyn Fn(Var) -> Option<i64>,
    at: &dyn Fn(Span) -> (usize, usize),
) -> Vec<Block<'a>> {
    let summaries: Vec<Summary> = calls.procs.iter().map(|p| summarize(p, values)).collect();
    let mut out = Vec::new();
    for (proc, s) in calls.procs.iter().zip(&summaries) {
        let p = &proc.program;
        out.push(Block {
            procedure: true,
            name: proc.name.clone(),
            proc: &proc.name,
            at: at(proc.span),
            exact: s.exact(),
            program: p,
            arrays: s
                .arrays
                .iter()
                .map(|a| {
                    let n = p.arrays[a.formal.index()].name.as_str();
                    (n, [a.mods.clone(), a.uses.clone(), a.kill.clone()])
                })
                .collect(),
        });
    }
    for site in &calls.sites {
        let s = at_call(caller, calls, site, &summaries[site.proc], values);
        out.push(Block {
            procedure: false,
            name: site.label.clone(),
            proc: &calls.procs[site.proc].name,
            at: at(site.span),
            exact: call_exact(&s),
            program: caller,
            arrays: s
                .into_iter()
                .map(|a| {
                    let n = caller.arrays[a.array.index()].name.as_str();
                    (n, [a.mods, a.uses, a.kill])
                })
                .collect(),
        });
    }
    out
}

impl Block<'_> {
    fn title(&self) -> String {
        let (l, c) = self.at;
        if self.procedure {
            format!("procedure {} at {l}:{c}", self.name)
        } else {
            format!("call {}: {} at {l}:{c}", self.name, self.proc)
        }
    }
}

/// Every procedure's summary and every call's, as `arrayflow regions`
/// prints them after the loops' regions.
pub fn text(
    caller: &Program,
    calls: &Calls,
    values: &dyn Fn(Var) -> Option<i64>,
    at: &dyn Fn(Span) -> (usize, usize),
) -> String {
    let mut out = String::new();
    for b in blocks(caller, calls, values, at) {
        let _ = writeln!(out, "{}{}", b.title(), if b.procedure { ":" } else { "" });
        if b.arrays.is_empty() {
            out.push_str("  no access\n");
        }
        for (n, [m, u, k]) in &b.arrays {
            regions_text(&mut out, b.program, n, [m, u, k]);
        }
    }
    out
}

/// The JSON of [`text`]: `{"procedures": [...], "calls": [...]}`.
pub fn json(
    caller: &Program,
    calls: &Calls,
    values: &dyn Fn(Var) -> Option<i64>,
    at: &dyn Fn(Span) -> (usize, usize),
) -> Value {
    let (mut procs, mut sites) = (Vec::new(), Vec::new());
    for b in blocks(caller, calls, values, at) {
        let p = b.program;
        let arrays: Vec<Value> = b
            .arrays
            .iter()
            .map(|(n, [m, u, k])| {
                json!({"array": n, "mod": region_json(p, n, m), "use": region_json(p, n, u),
                       "kill": region_json(p, n, k)})
            })
            .collect();
        let (l, c) = b.at;
        if b.procedure {
            procs.push(
                json!({"procedure": b.name, "line": l, "column": c, "exact": b.exact,
                              "arrays": arrays}),
            );
        } else {
            sites.push(
                json!({"call": b.name, "procedure": b.proc, "line": l, "column": c,
                              "exact": b.exact, "arrays": arrays}),
            );
        }
    }
    json!({"procedures": procs, "calls": sites})
}

/// The isl lines of [`text`].
pub fn isl(
    caller: &Program,
    calls: &Calls,
    values: &dyn Fn(Var) -> Option<i64>,
    at: &dyn Fn(Span) -> (usize, usize),
) -> String {
    let mut out = String::new();
    for b in blocks(caller, calls, values, at) {
        let _ = writeln!(out, "# {}", b.title());
        for (n, regions) in &b.arrays {
            for (kind, r) in ["mod", "use", "kill"].into_iter().zip(regions) {
                let exact = if r.exact { "exact" } else { "approximate" };
                let set = super::render::isl_set(b.program, n, &r.lmads);
                let _ = writeln!(out, "{n} {kind} ({exact}): {set}");
            }
        }
    }
    out
}
