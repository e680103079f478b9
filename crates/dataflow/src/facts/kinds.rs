//! Access kinds: how one access of one operation becomes access instances.
//!
//! Each kind is one [`AccessLowering`] implementation plus the rules (an
//! `ascent_source!`) that say how the walk treats its instances. The
//! lowering asks the kinds of a set in order and uses the first that claims
//! an access; [`CORE`] are the built-in ones. [`crate::kinds::Kinds`] puts a
//! set together with the engine of its rules (docs/rules.md §5).

use super::{role, LowerError};
use crate::hash::WordHash;
use crate::model::{Access, AccessKind, ArrayId, CounterId, ParamId, Span, Var};
use std::collections::HashMap;

/// Concrete values at the current operation: parameters and loop counters
/// by id.
pub struct Point<'a> {
    pub params: &'a [i64],
    pub counters: &'a [i64],
}

impl Point<'_> {
    pub fn param(&self, p: ParamId) -> i64 {
        self.params[p.index()]
    }
    pub fn counter(&self, c: CounterId) -> i64 {
        self.counters[c.index()]
    }
    /// The value of an affine subscript, or an error on overflow.
    pub fn affine(&self, a: &crate::model::Affine, span: Span) -> Result<i64, LowerError> {
        a.eval(|v| match v {
            Var::Param(p) => self.param(p),
            Var::Counter(c) => self.counter(c),
        })
        .ok_or_else(|| LowerError::Eval {
            what: "an affine subscript overflows 64-bit integers at these sizes".to_string(),
            span,
        })
    }
}

/// Where the lowering keeps, for every cell, the latest write so far. Cells
/// cost only when touched where arrays are big: the declared ranges of small
/// arrays are laid out densely (a slot per cell, up to [`DENSE_LIMIT`] cells
/// in all); cells of bigger arrays, and cells outside the declared ranges, are
/// numbered on first use.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CellTable {
    arrays: Vec<Layout>,
    /// Latest write instance of each cell (NONE before the first).
    pub tops: Vec<u32>,
    /// Cells laid out densely: `tops[..dense]`.
    dense: usize,
    /// In-range cells of the big arrays, by (array, row-major position).
    near: HashMap<(u32, u64), u32, WordHash>,
    /// Cells outside the declared ranges (or of ranges past `u64`).
    far: HashMap<(u32, Vec<i64>), u32>,
    /// The array and index of each cell numbered on use: cell `dense + k`.
    used: Vec<(ArrayId, Box<[i64]>)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Layout {
    base: usize,
    lo: Vec<i64>,
    extent: Vec<i64>,
    /// Laid out densely at `base`.
    dense: bool,
    /// The declared cells fit a `u64` (positions can key `near`).
    linear: bool,
}

/// The most cells laid out densely, over all arrays (16 MiB of `tops`).
pub const DENSE_LIMIT: u64 = 1 << 22;

/// How many cells to lay out densely for a lowering with `instances`
/// access instances: a few per instance, since the table is cleared on
/// every lowering. Big declared arrays analysed at small sizes (code
/// generation's samples) would otherwise clear 16 MiB each time.
pub fn dense_limit(instances: Option<u64>) -> u64 {
    instances.map_or(DENSE_LIMIT, |n| n.saturating_mul(8).max(1 << 16))
}

impl Layout {
    /// The row-major position of an in-range index.
    fn position(&self, index: &[i64]) -> Option<u64> {
        let mut lin: u64 = 0;
        for ((&i, &lo), &ext) in index.iter().zip(&self.lo).zip(&self.extent) {
            let off = i.wrapping_sub(lo);
            if i < lo || off >= ext {
                return None;
            }
            // `linear` makes the product of the extents fit.
            lin = lin * ext as u64 + off as u64;
        }
        Some(lin)
    }

    /// The index at a row-major position (the inverse of `position`).
    fn index(&self, mut rest: u64) -> Vec<i64> {
        let mut index = vec![0; self.extent.len()];
        for d in (0..index.len()).rev() {
            let ext = self.extent[d].max(1) as u64;
            index[d] = self.lo[d] + (rest % ext) as i64;
            rest /= ext;
        }
        index
    }
}

impl CellTable {
    /// Lays out arrays whose declared ranges are `dims[a] = [(lo, hi), ..]`,
    /// at most `limit` cells densely ([`dense_limit`]).
    pub fn new(dims: &[Vec<(i64, i64)>], limit: u64) -> CellTable {
        let mut t = CellTable::default();
        let mut total: u64 = 0;
        for d in dims {
            let lo: Vec<i64> = d.iter().map(|r| r.0).collect();
            let extent: Vec<i64> = d
                .iter()
                .map(|&(l, h)| {
                    if h < l {
                        0
                    } else {
                        h.saturating_sub(l).saturating_add(1)
                    }
                })
                .collect();
            let size = extent
                .iter()
                .try_fold(1u64, |acc, &e| acc.checked_mul(e as u64));
            let dense = matches!(size, Some(s) if total + s <= limit.min(DENSE_LIMIT));
            let base = total as usize;
            if dense {
                total += size.unwrap_or(0);
            }
            t.arrays.push(Layout {
                base,
                lo,
                extent,
                dense,
                linear: size.is_some(),
            });
        }
        t.tops = vec![super::NONE; total as usize];
        t.dense = total as usize;
        t
    }

    /// Whether every array is laid out densely: only cells outside the
    /// declared ranges are numbered on use.
    pub fn all_dense(&self) -> bool {
        self.arrays.iter().all(|l| l.dense)
    }

    /// The same layout with no cell written or numbered yet: for lowering
    /// part of a program on its own (`lower::split`).
    pub fn blank(&self) -> CellTable {
        CellTable {
            arrays: self.arrays.clone(),
            tops: vec![super::NONE; self.dense],
            dense: self.dense,
            ..CellTable::default()
        }
    }

    /// How many cells were numbered on use (outside the dense layout).
    pub fn numbered(&self) -> usize {
        self.used.len()
    }

    /// The declared range of dimension `d` of `array`: (lo, number of indices).
    pub fn range(&self, array: ArrayId, d: usize) -> (i64, i64) {
        let l = &self.arrays[array.index()];
        (l.lo[d], l.extent[d])
    }

    /// The array and index of a cell number (the inverse of [`CellTable::cell`]).
    pub fn locate(&self, cell: usize) -> Option<(ArrayId, Vec<i64>)> {
        if cell >= self.dense {
            return self
                .used
                .get(cell - self.dense)
                .map(|(a, index)| (*a, index.to_vec()));
        }
        // Bases never decrease in array order, and every array after the
        // one holding the cell starts past it: the last base at or below
        // the cell is the only candidate (a search, not a scan per cell).
        let a = self
            .arrays
            .partition_point(|l| l.base <= cell)
            .checked_sub(1)?;
        let l = &self.arrays[a];
        let size: u64 = l.extent.iter().map(|&e| e.max(0) as u64).product();
        let inside = l.dense && cell >= l.base && ((cell - l.base) as u64) < size;
        inside.then(|| (ArrayId(a as u32), l.index((cell - l.base) as u64)))
    }

    /// The index into `tops` of one cell.
    pub fn cell(&mut self, array: ArrayId, index: &[i64]) -> usize {
        let l = &self.arrays[array.index()];
        let position = if l.linear { l.position(index) } else { None };
        if let Some(p) = position {
            if l.dense {
                return l.base + p as usize;
            }
            let next = self.tops.len() as u32;
            let k = *self.near.entry((array.0, p)).or_insert(next);
            if k == next {
                self.number(array, index);
            }
            return k as usize;
        }
        let next = self.tops.len() as u32;
        let k = *self.far.entry((array.0, index.to_vec())).or_insert(next);
        if k == next {
            self.number(array, index);
        }
        k as usize
    }

    /// Makes the next cell number that of `index` of `array`.
    fn number(&mut self, array: ArrayId, index: &[i64]) {
        self.tops.push(super::NONE);
        self.used.push((array, index.into()));
    }
}

/// What a kind emits: cells read, and cells written with their flags.
pub struct Sink<'a> {
    pub cells: &'a mut CellTable,
    pub reads: &'a mut Vec<usize>,
    pub writes: &'a mut Vec<(usize, u8)>,
    pub scratch: &'a mut Vec<i64>,
    /// Instances the access being emitted may still make: what its kind's
    /// `count` claimed. The budgets were checked against the claims, so
    /// past it nothing is kept and the lowering stops ([`Sink::claimed`]).
    pub room: u64,
    pub over: bool,
}

impl Sink<'_> {
    pub fn clear(&mut self) {
        self.reads.clear();
        self.writes.clear();
    }
    /// The operation may read `cell` (a reader of the rules' walk).
    pub fn read(&mut self, cell: usize) {
        self.put(AccessKind::Read, cell, false);
    }
    /// The operation writes `cell`: `must` when it surely does (it kills the
    /// writes before it), otherwise a may-write.
    pub fn write(&mut self, cell: usize, must: bool) {
        self.put(AccessKind::Write, cell, must);
    }
    /// The operation reads `cell`, then writes it (one instance).
    pub fn update(&mut self, cell: usize, must: bool) {
        self.put(AccessKind::Update, cell, must);
    }
    /// The cell number of `index` in `array` (dense or numbered on first use).
    pub fn cell(&mut self, array: ArrayId, index: &[i64]) -> usize {
        self.cells.cell(array, index)
    }
    /// The declared range of dimension `d` of `array`: (lo, number of indices).
    pub fn range(&self, array: ArrayId, d: usize) -> (i64, i64) {
        self.cells.range(array, d)
    }
    /// Emits `kind` of `cell`: a read, a write or an update.
    pub fn put_kind(&mut self, kind: AccessKind, cell: usize, must: bool) {
        self.put(kind, cell, must);
    }
    /// Emits up to `count` instances next (one access's claim).
    pub fn claim(&mut self, count: u64) {
        self.room = count;
        self.over = false;
    }
    /// An error when the last access made more instances than the `count`
    /// `kind` claimed for it.
    pub fn claimed(
        &self,
        kind: &dyn AccessLowering,
        access: &Access,
        count: u64,
    ) -> Result<(), LowerError> {
        if !self.over {
            return Ok(());
        }
        Err(LowerError::Eval {
            what: format!(
                "the access kind `{}` made more access instances than the {} its `count` \
                 claimed for this access (the budgets are checked against the claims)",
                kind.name(),
                count
            ),
            span: access.span,
        })
    }
    fn put(&mut self, kind: AccessKind, cell: usize, must: bool) {
        if self.room == 0 {
            self.over = true;
            return;
        }
        self.room -= 1;
        let m = if must { role::MUST } else { 0 };
        match kind {
            AccessKind::Read => self.reads.push(cell),
            AccessKind::Write => self.writes.push((cell, role::WRITE | m)),
            AccessKind::Update => self.writes.push((cell, role::READ | role::WRITE | m)),
        }
    }
}

/// How one kind of access becomes access instances.
///
/// An extension kind names itself in `.loop` text through [`syntax`]
/// (`A[i] @name(args)`, docs/language.md): the model keeps such an access's
/// kind name and arguments in [`Access::ext`], and only a kind whose
/// `syntax` is that name may claim it.
///
/// [`syntax`]: AccessLowering::syntax
pub trait AccessLowering: Sync {
    /// The kind's name in docs and messages.
    fn name(&self) -> &'static str;
    /// The name after `@` that writes an access of this kind in `.loop`
    /// text; `None` for kinds that take plain accesses (the core's).
    fn syntax(&self) -> Option<&'static str> {
        None
    }
    /// How many arguments `@name(...)` takes (checked by the front end).
    fn arity(&self) -> usize {
        0
    }
    /// Whether this kind lowers the access.
    fn claims(&self, access: &Access, kind: AccessKind) -> bool;
    /// How many access instances it makes, at most (checked against the
    /// budget before anything is emitted). Making more is an error at the
    /// access, raised as soon as it happens.
    fn count(&self, access: &Access, cells: &CellTable) -> u64;
    /// Emits its instances into `sink`.
    fn emit(
        &self,
        access: &Access,
        kind: AccessKind,
        at: &Point,
        sink: &mut Sink,
    ) -> Result<(), LowerError>;
}

/// Affine subscripts: exactly one cell, a must-access. Rules: `rules/must.rs`.
pub struct AffineMust;

/// A non-affine subscript: every cell of the declared range in the non-affine
/// dimensions, a may-access. Rules: `rules/may.rs`.
pub struct RangeMay;

/// The target of a compound assignment: reads its cell, then writes it; must
/// or may by its subscripts. Rules: `rules/update.rs`.
pub struct Update;

/// The core kinds, in the order the lowering asks them.
pub static CORE: [&dyn AccessLowering; 3] = [&Update, &AffineMust, &RangeMay];

/// The kind that lowers an access, among `kinds` (asked in order): for an
/// extension access the kind whose syntax it names (an error when none
/// takes it), otherwise the first core-syntax kind that claims it.
pub fn kind_of(
    kinds: &[&'static dyn AccessLowering],
    access: &Access,
    kind: AccessKind,
) -> Result<&'static dyn AccessLowering, LowerError> {
    if let Some(ext) = &access.ext {
        return kinds
            .iter()
            .copied()
            .find(|k| k.syntax() == Some(ext.name.as_str()) && k.claims(access, kind))
            .ok_or_else(|| LowerError::Eval {
                what: format!("no access kind `@{}` takes this access", ext.name),
                span: ext.span,
            });
    }
    Ok(kinds
        .iter()
        .copied()
        .find(|k| k.syntax().is_none() && k.claims(access, kind))
        .unwrap_or(&RangeMay))
}

impl AccessLowering for AffineMust {
    fn name(&self) -> &'static str {
        "affine must-access"
    }
    fn claims(&self, access: &Access, _: AccessKind) -> bool {
        access.is_affine()
    }
    fn count(&self, _: &Access, _: &CellTable) -> u64 {
        1
    }
    fn emit(
        &self,
        access: &Access,
        kind: AccessKind,
        at: &Point,
        sink: &mut Sink,
    ) -> Result<(), LowerError> {
        sink.scratch.clear();
        for s in &access.subscripts {
            // `claims` made sure every subscript is affine.
            if let Some(a) = &s.affine {
                sink.scratch.push(at.affine(a, s.expr.span)?);
            }
        }
        let cell = sink.cells.cell(access.array, sink.scratch);
        sink.put(kind, cell, true);
        Ok(())
    }
}

impl AccessLowering for RangeMay {
    fn name(&self) -> &'static str {
        "non-affine may-access"
    }
    fn claims(&self, access: &Access, _: AccessKind) -> bool {
        !access.is_affine()
    }
    fn count(&self, access: &Access, cells: &CellTable) -> u64 {
        access
            .subscripts
            .iter()
            .enumerate()
            .filter(|(_, s)| s.affine.is_none())
            .fold(1u64, |n, (d, _)| {
                n.saturating_mul(cells.range(access.array, d).1 as u64)
            })
    }
    fn emit(
        &self,
        access: &Access,
        kind: AccessKind,
        at: &Point,
        sink: &mut Sink,
    ) -> Result<(), LowerError> {
        may_cells(access, kind, at, sink)
    }
}

/// Emits every cell an access with some non-affine subscript may touch: the
/// affine dimensions fixed, the others over their declared range.
fn may_cells(
    access: &Access,
    kind: AccessKind,
    at: &Point,
    sink: &mut Sink,
) -> Result<(), LowerError> {
    let dims = access.subscripts.len();
    let mut fixed = vec![None; dims];
    let mut ranges = vec![(0i64, 0i64); dims];
    for (d, s) in access.subscripts.iter().enumerate() {
        match &s.affine {
            Some(a) => fixed[d] = Some(at.affine(a, s.expr.span)?),
            None => {
                let (lo, ext) = sink.cells.range(access.array, d);
                if ext == 0 {
                    return Ok(());
                }
                ranges[d] = (lo, ext);
            }
        }
    }
    // Odometer over the non-affine dimensions, last dimension fastest.
    let mut pos = vec![0i64; dims];
    let mut index = vec![0i64; dims];
    loop {
        for d in 0..dims {
            index[d] = fixed[d].unwrap_or(ranges[d].0 + pos[d]);
        }
        let cell = sink.cells.cell(access.array, &index);
        sink.put(kind, cell, false);
        let mut d = dims;
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            if fixed[d].is_none() {
                pos[d] += 1;
                if pos[d] < ranges[d].1 {
                    break;
                }
                pos[d] = 0;
            }
        }
    }
}

impl Update {
    /// The kind that finds the cells: by the target's subscripts.
    fn cells(access: &Access) -> &'static dyn AccessLowering {
        if access.is_affine() {
            &AffineMust
        } else {
            &RangeMay
        }
    }
}

impl AccessLowering for Update {
    fn name(&self) -> &'static str {
        "compound read-then-write"
    }
    fn claims(&self, _: &Access, kind: AccessKind) -> bool {
        kind == AccessKind::Update
    }
    fn count(&self, access: &Access, cells: &CellTable) -> u64 {
        Update::cells(access).count(access, cells)
    }
    fn emit(
        &self,
        access: &Access,
        kind: AccessKind,
        at: &Point,
        sink: &mut Sink,
    ) -> Result<(), LowerError> {
        // One instance per cell that both reads and writes it: the rules read
        // through it before they write (rules/update.rs).
        Update::cells(access).emit(access, kind, at, sink)
    }
}
