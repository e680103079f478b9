//! Every pair of references of a program, analysed: what `arrayflow deps`
//! prints.
//!
//! Pairs: two references to the same array, at least one a write, the source
//! textually first (a statement's target comes before its reads, as in
//! `Stmt::accesses()`), a writing reference also paired with itself.
//! Kinds come from the lexicographic sign of each direction vector: positive,
//! the source's instance runs first; negative, the destination's; zero (same
//! iteration of the common loops), textual order, except that within one
//! statement the reads run before the write.

use super::direction::{Dependence, Dir};
use super::memo::Stats;
use super::pairs::{self, Note, RefId, Reference};
use super::{Test, Tester};
use crate::model::{AccessKind, ArrayId, CounterId, Program, Site};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use std::collections::BTreeSet;
use std::fmt;

/// A reference as outputs name it: its statement (or condition) and
/// `"write"` or the index of the read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefName {
    pub site: String,
    /// The reference belongs to an `if`/`while` condition.
    pub cond: bool,
    /// `None` for a statement's target.
    pub read: Option<usize>,
}

impl Serialize for RefName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry(if self.cond { "cond" } else { "stmt" }, &self.site)?;
        match self.read {
            Some(k) => m.serialize_entry("access", &k)?,
            None => m.serialize_entry("access", "write")?,
        }
        m.end()
    }
}

impl fmt::Display for RefName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.read {
            Some(k) => write!(f, "{} read {k}", self.site),
            None => write!(f, "{} write", self.site),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Flow,
    Anti,
    Output,
}

#[derive(Clone, Debug, Serialize)]
pub struct PairReport {
    pub array: String,
    pub src: RefName,
    pub dst: RefName,
    pub dependent: bool,
    pub kinds: Vec<Kind>,
    /// Over the common loops, `d = i_dst − i_src`.
    pub directions: Vec<Vec<Dir>>,
    /// The direction vectors whose distance is constant, that distance.
    pub distances: Vec<Vec<i64>>,
    pub decided_by: Test,
    /// The answer holds as stated: no "maybe" and nothing conservative.
    pub exact: bool,
    /// The common loops' counters, outermost first.
    pub loops: Vec<String>,
    /// What the problem left out or assumed (non-affine subscripts, ignored
    /// guards, `while` counters, caps hit).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(skip)]
    pub dependence: Dependence,
    #[serde(skip)]
    pub array_id: ArrayId,
    #[serde(skip)]
    pub src_id: RefId,
    #[serde(skip)]
    pub dst_id: RefId,
}

/// Analyses every pair of references of the program.
pub fn analyze(program: &Program, tester: &mut Tester) -> Vec<PairReport> {
    let mut out = Vec::new();
    let _ = each(program, tester, Scope::All, |p| {
        out.push(p);
        Ok::<(), ()>(())
    });
    out
}

/// Which pairs [`each`] visits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every pair, as `arrayflow deps` prints them.
    All,
    /// Only pairs inside a common loop: the others carry no dependence on
    /// any loop (what loop remarks and rules ask for).
    CommonLoop,
}

/// The pairs [`each`] visits with `Scope::All`, counted without building
/// any: per array, each write with itself and with every other reference.
pub fn count(program: &Program) -> u64 {
    let mut per_array: Vec<(u64, u64)> = vec![(0, 0); program.arrays.len()];
    for r in pairs::references(program) {
        if let Some(c) = per_array.get_mut(r.access.array.index()) {
            if r.kind.writes() {
                c.0 += 1;
            } else {
                c.1 += 1;
            }
        }
    }
    per_array
        .iter()
        .map(|&(w, r)| (w * (w + 1) / 2).saturating_add(w.saturating_mul(r)))
        .fold(0u64, u64::saturating_add)
}

/// Every pair of references of the program, analysed one at a time in the
/// order of [`analyze`] (source textually first, then destination), handed
/// to `f`; stops at its first error. Nothing quadratic is held: a program
/// of n references has up to n² pairs.
pub fn each<E>(
    program: &Program,
    tester: &mut Tester,
    scope: Scope,
    mut f: impl FnMut(PairReport) -> Result<(), E>,
) -> Result<(), E> {
    let refs = pairs::references(program);
    let names = SiteNames::new(program);
    visit(program, &refs, scope, |i, j| {
        f(pair(program, &names, tester, &refs[i], &refs[j]))
    })
}

/// The pairs [`each`] analyses, in its order, as indices into `refs`: per
/// array, each reference with itself (a write) and with every later one, at
/// least one of the two a write.
pub fn visit<E>(
    program: &Program,
    refs: &[Reference<'_>],
    scope: Scope,
    mut f: impl FnMut(usize, usize) -> Result<(), E>,
) -> Result<(), E> {
    // Per array, its references in textual order, so that a reference is
    // compared only with those of its array.
    let mut by_array: Vec<Vec<usize>> = vec![Vec::new(); program.arrays.len()];
    let mut rank = vec![0usize; refs.len()];
    for (i, r) in refs.iter().enumerate() {
        if let Some(v) = by_array.get_mut(r.access.array.index()) {
            rank[i] = v.len();
            v.push(i);
        }
    }
    // With `CommonLoop`, the references sharing an outermost loop with the
    // source are a run of its array's list: where each run ends.
    let outer: Vec<Option<CounterId>> = refs.iter().map(|r| r.loops().first().copied()).collect();
    for (i, src) in refs.iter().enumerate() {
        let Some(same_array) = by_array.get(src.access.array.index()) else {
            continue;
        };
        let start = rank[i];
        let end = match scope {
            Scope::All => same_array.len(),
            Scope::CommonLoop => {
                if outer[i].is_none() {
                    continue;
                }
                let run = same_array[start..]
                    .iter()
                    .take_while(|&&j| outer[j] == outer[i])
                    .count();
                start + run
            }
        };
        for &j in &same_array[start..end] {
            let dst = &refs[j];
            let same = i == j;
            let writes = src.kind.writes() || dst.kind.writes();
            if !writes || (same && !src.kind.writes()) {
                continue;
            }
            f(i, j)?;
        }
    }
    Ok(())
}

/// Sites' names by index: `Program::site_name` lists every statement on
/// each call, which made a pair cost as much as the program.
struct SiteNames {
    stmts: Vec<String>,
    conds: Vec<String>,
}

impl SiteNames {
    fn new(program: &Program) -> SiteNames {
        SiteNames {
            stmts: program.stmts().iter().map(|s| s.label.clone()).collect(),
            conds: program
                .conditions()
                .iter()
                .map(|c| c.name.clone())
                .collect(),
        }
    }

    fn of(&self, site: Site) -> String {
        let name = match site {
            Site::Stmt(s) => self.stmts.get(s.index()),
            Site::Cond(c) => self.conds.get(c.index()),
        };
        name.cloned().unwrap_or_default()
    }
}

fn pair(
    program: &Program,
    names: &SiteNames,
    tester: &mut Tester,
    src: &Reference<'_>,
    dst: &Reference<'_>,
) -> PairReport {
    let built = pairs::build(program, src, dst);
    let dep = tester.dependence(&built.pair);
    let dependent = dep.dependent();
    let mut notes: Vec<Note> = built.notes;
    for why in dep.vectors.iter().filter_map(|v| v.why) {
        let note = Note {
            text: format!("conservative: {}", why.describe()),
            exact: false,
        };
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    let exact = !dependent || (dep.exact() && notes.iter().all(|n| n.exact));
    let directions: Vec<Vec<Dir>> = dep.vectors.iter().map(|v| v.dirs.clone()).collect();
    let mut distances: Vec<Vec<i64>> = Vec::new();
    for v in &dep.vectors {
        if let Some(d) = &v.distance {
            if !distances.contains(d) {
                distances.push(d.clone());
            }
        }
    }
    PairReport {
        array: program.array_decl(src.access.array).name.clone(),
        array_id: src.access.array,
        src: name(names, src),
        dst: name(names, dst),
        dependent,
        kinds: kinds(src, dst, &directions),
        directions,
        distances,
        decided_by: dep.decided_by(),
        exact,
        loops: built
            .common
            .iter()
            .map(|&c| program.counter_decl(c).name.clone())
            .collect(),
        notes: notes.into_iter().map(|n| n.text).collect(),
        dependence: dep,
        src_id: src.id(),
        dst_id: dst.id(),
    }
}

fn name(names: &SiteNames, r: &Reference<'_>) -> RefName {
    RefName {
        site: names.of(r.site),
        cond: matches!(r.site, Site::Cond(_)),
        read: r.read,
    }
}

/// Which of the two runs first for a vector whose lexicographic sign is
/// zero: textual order, but within one statement the reads run before the
/// write.
fn zero_first_is_src(src: &Reference<'_>, dst: &Reference<'_>) -> bool {
    !(src.site == dst.site && src.kind.writes())
}

/// The lexicographic signs a vector allows: (positive, zero, negative).
fn lex_signs(dirs: &[Dir]) -> (bool, bool, bool) {
    let (mut pos, mut neg) = (false, false);
    for d in dirs {
        match d {
            Dir::Plus => return (true, false, neg),
            Dir::Minus => return (pos, false, true),
            Dir::Zero => {}
            Dir::Star => {
                pos = true;
                neg = true;
            }
        }
    }
    (pos, true, neg)
}

/// The dependence kinds the vectors give.
pub fn kinds(src: &Reference<'_>, dst: &Reference<'_>, vectors: &[Vec<Dir>]) -> Vec<Kind> {
    let mut set = BTreeSet::new();
    let mut add = |first: AccessKind, second: AccessKind| {
        if first.writes() && second.reads() {
            set.insert(Kind::Flow);
        }
        if first.reads() && second.writes() {
            set.insert(Kind::Anti);
        }
        if first.writes() && second.writes() {
            set.insert(Kind::Output);
        }
    };
    for v in vectors {
        let (pos, zero, neg) = lex_signs(v);
        if pos {
            add(src.kind, dst.kind);
        }
        if neg {
            add(dst.kind, src.kind);
        }
        if zero {
            if zero_first_is_src(src, dst) {
                add(src.kind, dst.kind);
            } else {
                add(dst.kind, src.kind);
            }
        }
    }
    set.into_iter().collect()
}

/// The JSON of `arrayflow deps --format json`.
pub fn to_json(pairs: &[PairReport], stats: Option<&Stats>) -> serde_json::Value {
    let mut v = serde_json::json!({ "pairs": pairs });
    if let Some(s) = stats {
        v["stats"] = stats_json(s);
    }
    v
}

/// The `stats` member of [`to_json`].
pub fn stats_json(s: &Stats) -> serde_json::Value {
    serde_json::json!({
        "memo": s.memo,
        "problems": s.problems,
        "gcd_hit_rate": s.gcd_hit_rate(),
        "exact_hit_rate": s.exact_hit_rate(),
        "gcd": s.gcd,
        "decided": s.per_test().map(|(t, c)| (t.name(), c)).collect::<std::collections::BTreeMap<_, _>>(),
    })
}

fn vector(v: &[impl fmt::Display]) -> String {
    let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("({})", parts.join(","))
}

impl fmt::Display for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// The text of `arrayflow deps`: one line per pair, notes indented below.
pub fn render_text(pairs: &[PairReport]) -> String {
    let mut out = String::new();
    for p in pairs {
        render_pair(p, &mut out);
    }
    if pairs.is_empty() {
        out.push_str(NO_PAIR);
    }
    out
}

/// What [`render_text`] prints for a program without pairs.
pub const NO_PAIR: &str = "no pair of references to the same array with a write\n";

/// One pair's lines of [`render_text`], appended to `out`.
pub fn render_pair(p: &PairReport, out: &mut String) {
    use std::fmt::Write;
    let exact = if p.exact { "exact" } else { "conservative" };
    let _ = write!(out, "{}: {} -> {}: ", p.array, p.src, p.dst);
    if p.dependent {
        let kinds: Vec<&str> = p
            .kinds
            .iter()
            .map(|k| match k {
                Kind::Flow => "flow",
                Kind::Anti => "anti",
                Kind::Output => "output",
            })
            .collect();
        let _ = write!(out, "dependent ({})", kinds.join(", "));
        if !p.loops.is_empty() {
            let dirs: Vec<String> = p.directions.iter().map(|d| vector(d)).collect();
            let _ = write!(
                out,
                "; loops {}; directions {}",
                vector(&p.loops),
                dirs.join(" ")
            );
            if !p.distances.is_empty() {
                let d: Vec<String> = p.distances.iter().map(|d| vector(d)).collect();
                let _ = write!(out, "; distances {}", d.join(" "));
            }
        }
    } else {
        out.push_str("independent");
    }
    let _ = writeln!(out, " [{}, {exact}]", p.decided_by.name());
    for n in &p.notes {
        let _ = writeln!(out, "    note: {n}");
    }
}
