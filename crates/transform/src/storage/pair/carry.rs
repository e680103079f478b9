//! The schedule and the sites of the original carried to the pairing's
//! first stage's program, which `codegen` printed and parsed again: its
//! counters are renumbered, its statements versioned (`S.1`, `S.2`), and
//! copy-in and copy-out added before and after the body. A statement is
//! matched to its original by its label (version suffixes taken off), a
//! loop through the statements it holds and its depth (names do not tell
//! loops apart: two loops may share a counter's name).

use super::super::affine::AffineSchedule;
use super::super::emit::{site_span, EmitError};
use super::super::Schedule;
use crate::dataflow::render::site_loops;
use crate::model::{Node, Program, Site, Span};

fn internal(why: &str) -> EmitError {
    EmitError::Other(format!("internal error: the pairing's schedule: {why}"))
}

/// The schedule on the first stage's program: a loop-level one's loops
/// parallel where the original's are (copy loops in order), an affine one
/// carried by `affine_of`.
pub fn schedule_of(
    program: &Program,
    schedule: &Schedule,
    p1: &Program,
) -> Result<Schedule, EmitError> {
    if let Some(a) = &schedule.affine {
        return Ok(Schedule::affine(p1, affine_of(program, a, p1)?));
    }
    let (loops0, loops1) = (site_loops(program), site_loops(p1));
    let mut parallel: Vec<Option<bool>> = vec![None; p1.counters.len()];
    for s in p1.stmts() {
        if s.copy {
            continue;
        }
        let around = &loops1[s.id.index()];
        let was = match original_site(program, p1, Site::Stmt(s.id)) {
            Some(Site::Stmt(o)) => Some(&loops0[o.index()]),
            _ => None,
        };
        let was = (was.filter(|o| o.len() == around.len()))
            .ok_or_else(|| internal(&format!("`{}` has no original", s.label)))?;
        for (&c1, &c0) in around.iter().zip(was) {
            let want = schedule.is_parallel(c0);
            match parallel[c1.index()].replace(want) {
                Some(had) if had != want => return Err(internal("a loop both parallel and not")),
                _ => {}
            }
        }
    }
    Ok(Schedule {
        parallel: parallel.into_iter().map(|p| p.unwrap_or(false)).collect(),
        affine: None,
    })
}

/// The label itself if `known`, else the first with version suffixes
/// (`S.1`, `S.1.2`) taken off one by one that is.
fn original_label(label: &str, known: impl Fn(&str) -> bool) -> Option<&str> {
    let mut l = label;
    while !known(l) {
        if l == crate::model::base_label(l) {
            return None;
        }
        l = l.rsplit_once('.').map_or(l, |(x, _)| x);
    }
    Some(l)
}

/// The span in the original of a site of the first stage's program (which
/// was printed and parsed again: its own spans are of that text).
pub fn original_span(program: &Program, p1: &Program, site: Site) -> Span {
    original_site(program, p1, site).map_or(Span::NONE, |o| site_span(program, o))
}

/// Every site below `nodes` in program order: a `while`'s or `if`'s
/// condition before its body.
fn sites_in_order(nodes: &[Node], out: &mut Vec<Site>) {
    for n in nodes {
        match n {
            Node::Stmt(s) => out.push(Site::Stmt(s.id)),
            Node::For(f) => sites_in_order(&f.body, out),
            Node::While(w) => {
                out.push(Site::Cond(w.cond.id));
                sites_in_order(&w.body, out);
            }
            Node::If(i) => {
                for (c, b) in &i.branches {
                    out.push(Site::Cond(c.id));
                    sites_in_order(b, out);
                }
                if let Some(b) = &i.otherwise {
                    sites_in_order(b, out);
                }
            }
        }
    }
}

/// The original's site of a site of the first stage's program, if it has
/// one (copies and their guards have none).
fn original_site(program: &Program, p1: &Program, site: Site) -> Option<Site> {
    match site {
        Site::Stmt(s) => {
            let st = p1.stmts()[s.index()];
            if st.copy {
                return None;
            }
            let stmts = program.stmts();
            let l = original_label(&st.label, |l| stmts.iter().any(|x| x.label == l))?;
            stmts
                .iter()
                .find(|x| x.label == l)
                .map(|x| Site::Stmt(x.id))
        }
        Site::Cond(c) => {
            let conds = program.conditions();
            let name = &p1.conditions()[c.index()].name;
            let l = original_label(name, |l| conds.iter().any(|x| x.name == l))?;
            conds.iter().find(|x| x.name == l).map(|x| Site::Cond(x.id))
        }
    }
}

/// An affine schedule carried to the first stage's program, one leading
/// time dimension added: copy-in at 0, the body at 1 (each site at its
/// original's times, the columns of parameters matched by name, a
/// parameter the first stage added at 0), copy-out at 2; a copy runs its
/// own loops in order.
fn affine_of(
    program: &Program,
    a: &AffineSchedule,
    p1: &Program,
) -> Result<AffineSchedule, EmitError> {
    let (loops0, loops1) = (site_loops(program), site_loops(p1));
    let (n0, n1) = (program.stmts().len(), p1.stmts().len());
    let index = |n: usize, s: Site| match s {
        Site::Stmt(x) => x.index(),
        Site::Cond(c) => n + c.index(),
    };
    let mut order = Vec::new();
    sites_in_order(&p1.body, &mut order);
    let originals: Vec<Option<Site>> = (order.iter())
        .map(|&s| original_site(program, p1, s))
        .collect();
    let first = originals.iter().position(Option::is_some);
    let last = originals.iter().rposition(Option::is_some);
    let params: Vec<Option<usize>> = (p1.params.iter())
        .map(|q| program.params.iter().position(|x| x.name == q.name))
        .collect();
    let mut times: Vec<Option<Vec<Vec<i64>>>> = vec![None; loops1.len()];
    for (k, (&site, orig)) in order.iter().zip(&originals).enumerate() {
        let k1 = index(n1, site);
        let depth = loops1[k1].len();
        let width = depth + params.len() + 1;
        let constant = |c: i64| {
            let mut row = vec![0; width];
            row[width - 1] = c;
            row
        };
        let rows = match orig {
            Some(o) => {
                let k0 = index(n0, *o);
                let depth0 = loops0[k0].len();
                if depth0 != depth {
                    return Err(internal(&format!("`{}` moved", p1.site_name(site))));
                }
                let Some(rows0) = &a.times[k0] else {
                    continue;
                };
                let mut rows = vec![constant(1)];
                for r in rows0 {
                    let mut row = r[..depth].to_vec();
                    row.extend(params.iter().map(|q| q.map_or(0, |q| r[depth + q])));
                    row.push(r[r.len() - 1]);
                    rows.push(row);
                }
                rows
            }
            None => {
                let phase = match (first, last) {
                    (Some(f), _) if k < f => 0,
                    (_, Some(l)) if k > l => 2,
                    _ => {
                        return Err(internal(&format!(
                            "`{}` inside the body",
                            p1.site_name(site)
                        )))
                    }
                };
                let mut rows = vec![constant(phase)];
                for d in 0..depth {
                    let mut row = vec![0; width];
                    row[d] = 1;
                    rows.push(row);
                }
                rows
            }
        };
        times[k1] = Some(rows);
    }
    let width = times.iter().flatten().map(Vec::len).max().unwrap_or(0);
    Ok(AffineSchedule {
        times,
        width,
        text: a.text.clone(),
    })
}

/// The first stage's statements that stand for `stmts` of the original
/// (every version of each), in the first stage's order.
pub fn stmts_on(
    program: &Program,
    stmts: &[crate::model::StmtId],
    p1: &Program,
) -> Vec<crate::model::StmtId> {
    (p1.stmts().iter())
        .filter(|s| {
            matches!(original_site(program, p1, Site::Stmt(s.id)),
                Some(Site::Stmt(o)) if stmts.contains(&o))
        })
        .map(|s| s.id)
        .collect()
}
