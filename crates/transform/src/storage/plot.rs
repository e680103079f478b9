//! `arrayflow plot FILE --transform contract`: the storage mapping drawn.
//! Each write operation of the plotted statements is a dot at its first
//! two loop counters (a statement inside one loop sits on a row below the
//! others), coloured by the place it writes: its cell and its indices in
//! the added dimensions. Operations that share a colour reuse one place;
//! under Figure 1's `i` parallel, `s[i]`'s n places give n colours. SVG
//! through plotters, the palette of `expansion::plot`.

use super::mapping::{write_place, Mapping};
use super::schedule::Order;
use crate::expansion::plot::{bounds, canvas, grid, PALETTE};
use crate::expansion::Expansion;
use crate::model::{Program, Site, StmtId};
use plotters::prelude::*;
use std::collections::HashMap;
use std::path::Path;

/// What was drawn.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoragePlot {
    pub operations: usize,
    /// Distinct places written (colours, modulo the palette's 20).
    pub places: usize,
}

/// Draws the writes of `stmts` (every statement inside a loop when empty;
/// they must share their outermost loop) under `mapping` into `path`.
pub fn plot(
    program: &Program,
    exp: &Expansion,
    order: &Order,
    mapping: &Mapping,
    stmts: &[StmtId],
    path: &Path,
) -> Result<StoragePlot, String> {
    let f = &exp.inst.facts;
    let loops = crate::dataflow::render::site_loops(program);
    let all: Vec<StmtId> = program
        .stmts()
        .iter()
        .filter(|s| !loops[s.id.index()].is_empty())
        .map(|s| s.id)
        .collect();
    let stmts = if stmts.is_empty() { &all[..] } else { stmts };
    let mut outer = None;
    let mut inner = None;
    for s in stmts {
        let l = &loops[s.index()];
        let label = &program.stmts()[s.index()].label;
        let Some(&first) = l.first() else {
            return Err(format!("statement `{label}` is in no loop"));
        };
        if *outer.get_or_insert(first) != first {
            return Err("the statements do not share their outermost loop".to_string());
        }
        if let Some(&second) = l.get(1) {
            inner.get_or_insert(second);
        }
    }
    let Some(ax) = outer else {
        return Err("no statement to plot".to_string());
    };
    // Writes: (x, y or None for one loop, statement rank, place).
    let mut dots: Vec<(f64, Option<f64>, usize, usize)> = Vec::new();
    let mut place_ids: HashMap<(u32, Vec<i64>), usize> = HashMap::new();
    for x in 0..f.n_accs() as u32 {
        if !f.is_write(x) {
            continue;
        }
        let op = f.op(x);
        let Site::Stmt(s) = f.site(op) else { continue };
        let Some(rank) = stmts.iter().position(|&t| t == s) else {
            continue;
        };
        let cell = f.acc_cell[x as usize];
        let Some((a, _)) = f.cells.locate(cell as usize) else {
            continue;
        };
        let ds = &mapping.arrays[a.index()].dims;
        let key = (cell, write_place(order, &mapping.ranges, ds, op));
        let next = place_ids.len();
        let place = *place_ids.entry(key).or_insert(next);
        let it = f.op_iter(op);
        dots.push((it[0] as f64, it.get(1).map(|&v| v as f64), rank, place));
    }
    if dots.is_empty() {
        return Err("the statements write nothing at these sizes".to_string());
    }
    let (x0, x1) = bounds(dots.iter().map(|d| d.0));
    let (mut y0, y1) = bounds(dots.iter().filter_map(|d| d.1));
    if y0 > y1 {
        y0 = 1.0;
    }
    let low = y0 - 1.0;
    let (y0, y1) = if dots.iter().any(|d| d.1.is_none()) {
        (low, y1.max(low))
    } else {
        (y0, y1)
    };
    let names: Vec<&str> = stmts
        .iter()
        .map(|s| program.stmts()[s.index()].label.as_str())
        .collect();
    let caption = format!(
        "storage places written by {} at {} (colour: place; {} places)",
        names.join(", "),
        crate::dataflow::render::sizes(&exp.inst.flow),
        place_ids.len()
    );
    let root = canvas(path, (x0, x1), (y0, y1))?;
    let err = |e: &dyn std::fmt::Display| format!("cannot draw `{}`: {e}", path.display());
    let y_name = inner.map_or(String::new(), |c| program.counter_decl(c).name.clone());
    let mut chart = grid(
        &root,
        path,
        &caption,
        (x0, x1, program.counter_decl(ax).name.as_str()),
        (y0, y1, y_name.as_str()),
    )?;
    // Later statements smaller, so that both show at one point.
    chart
        .draw_series(dots.iter().map(|&(x, y, rank, place)| {
            let colour = PALETTE[place % PALETTE.len()];
            Circle::new(
                (x, y.unwrap_or(low)),
                6 - 2 * rank.min(2) as i32,
                colour.filled(),
            )
        }))
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(StoragePlot {
        operations: dots.len(),
        places: place_ids.len(),
    })
}
