//! `arrayflow plot`: the 2-D iteration domain of one or more statements that
//! share their two outer loops, each operation a dot coloured by its class
//! (dead writes hollow and grey), arrows for data flow between the plotted
//! operations, as in Figures 4 and 5 of the paper. SVG through plotters.

use super::Expansion;
use crate::model::{Program, Site, StmtId};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::HashMap;
use std::path::Path;

/// What was drawn.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlotSummary {
    pub operations: usize,
    pub classes: usize,
    pub arrows: usize,
}

/// Twenty distinct colours (the tab20 set): neighbouring classes differ.
pub(crate) const PALETTE: [RGBColor; 20] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(174, 199, 232),
    RGBColor(255, 187, 120),
    RGBColor(152, 223, 138),
    RGBColor(255, 152, 150),
    RGBColor(197, 176, 213),
    RGBColor(196, 156, 148),
    RGBColor(247, 182, 210),
    RGBColor(199, 199, 199),
    RGBColor(219, 219, 141),
    RGBColor(158, 218, 229),
];

/// Draws `stmts` (they must have at least two loops around them; the first
/// two counters are the axes) into an SVG file at `path`. With `all_arrows`,
/// an arrow from every possible source; otherwise from the latest one.
pub fn plot(
    program: &Program,
    exp: &Expansion,
    stmts: &[StmtId],
    path: &Path,
    all_arrows: bool,
) -> Result<PlotSummary, String> {
    let facts = &exp.inst.facts;
    let flow = &exp.inst.flow;
    let c = &exp.classes;
    let loops = crate::dataflow::render::site_loops(program);
    let mut axes = None;
    for s in stmts {
        let l = loops.get(s.index()).ok_or("no such statement")?;
        if l.len() < 2 {
            return Err(format!(
                "statement `{}` is inside {} loop(s); a plot needs two",
                program.stmts()[s.index()].label,
                l.len()
            ));
        }
        let pair = (l[0], l[1]);
        if *axes.get_or_insert(pair) != pair {
            return Err("the statements do not share their two outer loops".to_string());
        }
    }
    let Some((ax, ay)) = axes else {
        return Err("no statement to plot".to_string());
    };
    let wanted = |site: Site| matches!(site, Site::Stmt(s) if stmts.contains(&s));

    // Operations: (x, y, statement rank, class or None when dead, label).
    let mut dots: Vec<(f64, f64, usize, Option<u32>, u32)> = Vec::new();
    let mut at: HashMap<u32, (f64, f64)> = HashMap::new();
    for (w, &op) in c.write_ops.iter().enumerate() {
        let site = facts.site(op);
        if !wanted(site) {
            continue;
        }
        let it = facts.op_iter(op);
        let p = (it[0] as f64, it[1] as f64);
        let rank = stmts
            .iter()
            .position(|s| Site::Stmt(*s) == site)
            .unwrap_or(0);
        let class = c.live[w].then(|| c.write_class[w]);
        dots.push((p.0, p.1, rank, class, c.write_label(w).unwrap_or(0)));
        at.insert(op, p);
    }
    // Arrows: source → reader, both plotted.
    let mut arrows: Vec<((f64, f64), (f64, f64))> = Vec::new();
    for r in flow.iter() {
        if !wanted(r.site()) {
            continue;
        }
        let it = r.iter();
        let to = (it[0] as f64, it[1] as f64);
        let srcs = flow.source_ops(r.index());
        let chosen: Vec<u32> = if all_arrows {
            srcs.to_vec()
        } else {
            srcs.iter().copied().max().into_iter().collect()
        };
        for o in chosen {
            if let Some(&from) = at.get(&o) {
                if from != to {
                    arrows.push((from, to));
                }
            }
        }
    }
    if dots.is_empty() {
        return Err("the statements have no write operations at these sizes".to_string());
    }
    let (x0, x1) = bounds(dots.iter().map(|d| d.0));
    let (y0, y1) = bounds(dots.iter().map(|d| d.1));
    let names: Vec<&str> = stmts
        .iter()
        .map(|s| program.stmts()[s.index()].label.as_str())
        .collect();
    let caption = format!(
        "classes of {} at {} (colour: class; number: label; hollow: dead)",
        names.join(", "),
        crate::dataflow::render::sizes(flow)
    );

    let root = canvas(path, (x0, x1), (y0, y1))?;
    let err = |e: &dyn std::fmt::Display| format!("cannot draw `{}`: {e}", path.display());
    let mut chart = grid(
        &root,
        path,
        &caption,
        (x0, x1, program.counter_decl(ax).name.as_str()),
        (y0, y1, program.counter_decl(ay).name.as_str()),
    )?;

    let grey = RGBColor(170, 170, 170);
    chart
        .draw_series(
            arrows.iter().map(|&(a, b)| {
                PathElement::new(vec![a, shorten(a, b, 0.18)], grey.stroke_width(1))
            }),
        )
        .map_err(|e| err(&e))?;
    chart
        .draw_series(
            arrows
                .iter()
                .map(|&(a, b)| Polygon::new(head(a, b, 0.18), grey.filled())),
        )
        .map_err(|e| err(&e))?;
    for &(x, y, rank, class, label) in &dots {
        let style = match class {
            Some(k) => PALETTE[k as usize % PALETTE.len()].filled(),
            None => grey.stroke_width(1),
        };
        if rank == 0 {
            chart
                .draw_series(std::iter::once(Circle::new((x, y), 6, style)))
                .map_err(|e| err(&e))?;
        } else {
            // Later statements: squares around the point, so that they show
            // beside a first-statement dot at the same iteration.
            let d = 0.22;
            let stroke = match class {
                Some(k) => PALETTE[k as usize % PALETTE.len()].stroke_width(3),
                None => grey.stroke_width(1),
            };
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x - d, y - d), (x + d, y + d)],
                    stroke,
                )))
                .map_err(|e| err(&e))?;
        }
        if label > 0 && rank == 0 {
            let style = ("sans-serif", 11)
                .into_font()
                .color(&WHITE)
                .pos(Pos::new(HPos::Center, VPos::Center));
            chart
                .draw_series(std::iter::once(Text::new(label.to_string(), (x, y), style)))
                .map_err(|e| err(&e))?;
        }
    }
    root.present().map_err(|e| err(&e))?;
    let mut classes: Vec<u32> = dots.iter().filter_map(|d| d.3).collect();
    classes.sort_unstable();
    classes.dedup();
    Ok(PlotSummary {
        operations: dots.len(),
        classes: classes.len(),
        arrows: arrows.len(),
    })
}

/// A white SVG canvas at `path` sized for integer points over the ranges.
pub(crate) fn canvas(
    path: &Path,
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> Result<DrawingArea<SVGBackend<'_>, plotters::coord::Shift>, String> {
    let side = 90 + 48 * ((x1 - x0).max(y1 - y0) as u32 + 2);
    let root = SVGBackend::new(path, (side, side + 30)).into_drawing_area();
    root.fill(&WHITE)
        .map_err(|e| format!("cannot draw `{}`: {e}", path.display()))?;
    Ok(root)
}

type Grid<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// A chart of integer points on `root`: the caption, one label per
/// integer on each axis `(lo, hi, name)`, no mesh.
pub(crate) fn grid<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    path: &Path,
    caption: &str,
    (x0, x1, xn): (f64, f64, &str),
    (y0, y1, yn): (f64, f64, &str),
) -> Result<Grid<'a, 'b>, String> {
    let err = |e: &dyn std::fmt::Display| format!("cannot draw `{}`: {e}", path.display());
    let mut chart = ChartBuilder::on(root)
        .caption(caption, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(36)
        .build_cartesian_2d(x0 - 0.7..x1 + 0.7, y0 - 0.7..y1 + 0.7)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(xn)
        .y_desc(yn)
        .x_labels((x1 - x0) as usize + 1)
        .y_labels((y1 - y0) as usize + 1)
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()
        .map_err(|e| err(&e))?;
    Ok(chart)
}

pub(crate) fn bounds(v: impl Iterator<Item = f64>) -> (f64, f64) {
    v.fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)))
}

/// The point `by` short of `b` on the segment from `a`.
fn shorten(a: (f64, f64), b: (f64, f64), by: f64) -> (f64, f64) {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = (dx * dx + dy * dy).sqrt().max(1e-9);
    (b.0 - dx / len * by, b.1 - dy / len * by)
}

/// An arrow head at `b` (pulled back by `by`), pointing from `a`.
fn head(a: (f64, f64), b: (f64, f64), by: f64) -> Vec<(f64, f64)> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = (dx * dx + dy * dy).sqrt().max(1e-9);
    let (ux, uy) = (dx / len, dy / len);
    let tip = (b.0 - ux * by, b.1 - uy * by);
    let back = (tip.0 - ux * 0.2, tip.1 - uy * 0.2);
    let w = 0.08;
    vec![
        tip,
        (back.0 - uy * w, back.1 + ux * w),
        (back.0 + uy * w, back.1 - ux * w),
    ]
}
