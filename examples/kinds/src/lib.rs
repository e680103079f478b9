//! Two access kinds added to arrayflow from outside its crate, with nothing
//! changed in arrayflow itself (docs/rules.md §5 is the tutorial that builds
//! this crate):
//!
//! - [`Section`], `A[i, lo] @section(hi)`: the cells `A[i, lo]`, ...,
//!   `A[i, hi - 1]` (the last dimension from its subscript up to `hi`,
//!   excluded), what `memset`/`memcpy` touch. As a target it surely writes
//!   every cell of the range (a must-write: it kills each); as a read it may
//!   read each.
//! - [`Dead`], `A[i, lo] @dead(hi) = ...;`: the end of the lifetime of the
//!   same cells (a C array declared inside a loop body dies at the end of
//!   each trip). It writes a dead value: no later read can see a write
//!   before it, and a read that may see the dead value is error K0001
//!   ([`dead_reads`]).
//!
//! Both are written in C too ([`c`]): `memset`/`memcpy`/`memmove` are
//! sections, and an array declared in a block inside a loop gets a lifetime
//! end where the block ends.
//!
//! [`kinds`] is the set `arrayflow-kinds` runs with; [`reference`](mod@reference) is the
//! meaning of both kinds for the tests, independent of the lowering.

pub mod c;
pub mod reference;

use arrayflow::dataflow::Flow;
use arrayflow::diagnostics::{Diagnostic, FileId};
use arrayflow::kinds::{AccessLowering, CellTable, Kinds, LowerError, Point, Sink};
use arrayflow::model::{Access, AccessKind, Program, Site, StmtKind};

/// The core kinds, [`Section`] and [`Dead`], run by [`KindsEngine`].
pub fn kinds() -> Kinds {
    Kinds::core()
        .with(&Section)
        .with(&Dead)
        .with_c(&Section)
        .with_c(&Dead)
        .with_engine(&KindsEngine)
        .with_check(dead_reads)
}

// The engine: the core rules, compiled in this crate. Both kinds lower to
// the core's instances (reads, must-writes), so they add no rule; a kind
// that does adds `include_source!(path::to::its_rules);` lines here
// (tests/engine.rs composes one).
arrayflow::dataflow_engine! {
    /// The rules of [`kinds`].
    pub struct KindsEngine;
}

/// `A[i, lo] @section(hi)`: every cell of the last dimension from `lo` to
/// `hi - 1`.
pub struct Section;

/// `A[i, lo] @dead(hi) = ...;`: the cells of the section die here.
pub struct Dead;

/// The subscripts' values and the end of the section, checked to lie in
/// the declared range (so that [`AccessLowering::count`], the declared
/// extent, bounds the cells).
pub fn section_bounds(
    access: &Access,
    at: &Point,
    range: (i64, i64),
) -> Result<(Vec<i64>, i64), LowerError> {
    let ext = access.ext.as_ref().expect("claimed: an extension access");
    let mut index = Vec::with_capacity(access.subscripts.len());
    for s in &access.subscripts {
        let a = s.affine.as_ref().expect("claimed: affine subscripts");
        index.push(at.affine(a, s.expr.span)?);
    }
    let hi = at.affine(
        ext.args[0]
            .affine
            .as_ref()
            .expect("checked affine by the front end"),
        ext.span,
    )?;
    let lo = *index.last().expect("claimed: at least one subscript");
    let (first, len) = range;
    if lo < hi && (lo < first || hi > first + len) {
        return Err(LowerError::Eval {
            what: format!(
                "the section {lo}..{hi} leaves the declared range {first}..{} of its dimension",
                first + len - 1
            ),
            span: access.span,
        });
    }
    Ok((index, hi))
}

/// Emits every cell of the section as `kind`, a must-access.
fn emit_section(
    access: &Access,
    kind: AccessKind,
    at: &Point,
    sink: &mut Sink,
) -> Result<(), LowerError> {
    let d = access.subscripts.len() - 1;
    let (mut index, hi) = section_bounds(access, at, sink.range(access.array, d))?;
    for v in index[d]..hi {
        index[d] = v;
        let cell = sink.cell(access.array, &index);
        sink.put_kind(kind, cell, true);
    }
    Ok(())
}

/// Sections take affine accesses with at least one dimension.
fn section_shape(access: &Access) -> bool {
    access.is_affine() && !access.subscripts.is_empty()
}

impl AccessLowering for Section {
    fn name(&self) -> &'static str {
        "array section"
    }
    fn syntax(&self) -> Option<&'static str> {
        Some("section")
    }
    fn arity(&self) -> usize {
        1
    }
    fn claims(&self, access: &Access, _: AccessKind) -> bool {
        section_shape(access)
    }
    fn count(&self, access: &Access, cells: &CellTable) -> u64 {
        let d = access.subscripts.len().saturating_sub(1);
        cells.range(access.array, d).1.max(0) as u64
    }
    fn emit(
        &self,
        access: &Access,
        kind: AccessKind,
        at: &Point,
        sink: &mut Sink,
    ) -> Result<(), LowerError> {
        emit_section(access, kind, at, sink)
    }
}

impl AccessLowering for Dead {
    fn name(&self) -> &'static str {
        "lifetime end"
    }
    fn syntax(&self) -> Option<&'static str> {
        Some("dead")
    }
    fn arity(&self) -> usize {
        1
    }
    /// Only as the target of a plain assignment: it writes (a dead value).
    fn claims(&self, access: &Access, kind: AccessKind) -> bool {
        kind == AccessKind::Write && section_shape(access)
    }
    fn count(&self, access: &Access, cells: &CellTable) -> u64 {
        Section.count(access, cells)
    }
    fn emit(
        &self,
        access: &Access,
        kind: AccessKind,
        at: &Point,
        sink: &mut Sink,
    ) -> Result<(), LowerError> {
        emit_section(access, kind, at, sink)
    }
}

/// Whether a statement's target is a lifetime end.
pub fn is_end(program: &Program, site: Site) -> bool {
    let Site::Stmt(s) = site else { return false };
    match &program.stmts()[s.index()].kind {
        StmtKind::Assign { target, .. } => target.ext.as_ref().is_some_and(|x| x.name == "dead"),
        StmtKind::Call { .. } => false,
    }
}

/// The read accesses of a site, in the order of σ's access indices.
fn read_accesses(program: &Program, site: Site) -> Vec<&Access> {
    match site {
        Site::Stmt(s) => program.stmts()[s.index()]
            .accesses()
            .into_iter()
            .filter(|a| a.kind.reads())
            .map(|a| a.access)
            .collect(),
        Site::Cond(c) => {
            let mut out = Vec::new();
            program.conditions()[c.index()].cond.collect_reads(&mut out);
            out.into_iter().map(|a| a.access).collect()
        }
    }
}

/// K0001: a read that may see the dead value of a lifetime end, i.e. read a
/// cell after its lifetime ended (σ has the end among its sources). One
/// diagnostic per read access.
pub fn dead_reads(program: &Program, flow: &Flow, file: FileId) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for r in flow.sorted() {
        let Some((end, iter)) = r.writes().find(|&(s, _)| is_end(program, s)) else {
            continue;
        };
        if !seen.insert((r.site(), r.access())) {
            continue;
        }
        let Some(read) = read_accesses(program, r.site()).get(r.access()).copied() else {
            continue;
        };
        let Site::Stmt(e) = end else { continue };
        let stmt = program.stmts()[e.index()];
        let d = Diagnostic::error(
            "K0001",
            format!(
                "`{}` may read a cell after its lifetime ended",
                arrayflow::print::access(program, read)
            ),
        )
        .primary(
            file,
            read.span,
            format!(
                "at {} this reads a dead cell",
                flow_op(flow, r.site(), r.iter())
            ),
        )
        .secondary(
            file,
            stmt.span,
            format!("the lifetime ends here ({})", flow_op(flow, end, iter)),
        );
        out.push(d);
    }
    out
}

fn flow_op(flow: &Flow, site: Site, iter: &[i64]) -> String {
    arrayflow::interp::format_op(flow.site_name(site), iter)
}
