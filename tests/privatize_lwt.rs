//! Every privatization decision on the shipped fixtures, against Last
//! Write Trees (maydan-digest.md §3.8) evaluated by running the program.
//!
//! In the thesis's domain (affine loops and conditions, no `while`, no
//! unknown condition, affine subscripts) a read's LWT at concrete sizes is
//! the last write to its cell before it: exactly what the interpreter
//! records as the read's writer. So the digest's rules, applied to the
//! interpreter's trace, give every (loop, array) decision independently of
//! σ and of the facts `privatize` reads:
//! - **carried** (not privatizable): a level-L data-flow vector, i.e. a read
//!   whose last write is in another iteration of the same execution of L;
//! - **copy-in**: the cells of reads in L whose last write is outside the
//!   current execution of L (the LWT's leaves above level L, or ⊥);
//! - **finalization**: the cells of reads outside the execution whose last
//!   write is in it; from the last iteration when each such write is in
//!   the iteration the loop's bounds make last;
//! - **shared** when, besides, no cell is accessed by two iterations of one
//!   execution with a write among them (no memory dependence to remove).

mod support;

use arrayflow::dataflow::Config;
use arrayflow::expansion;
use arrayflow::interp::{self, SiteNames, Writer};
use arrayflow::model::{Access, CounterId, Node, Program, Site, Var};
use arrayflow::privatize::{analyze, Finalization, Instance, Verdict};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The thesis's domain: affine loops and conditions, affine subscripts.
fn in_lwt_domain(p: &Program) -> bool {
    fn nodes(ns: &[Node]) -> bool {
        ns.iter().all(|n| match n {
            Node::For(f) => nodes(&f.body),
            Node::While(_) => false,
            Node::If(i) => {
                i.branches.iter().all(|(_, b)| nodes(b))
                    && nodes(i.otherwise.as_deref().unwrap_or(&[]))
            }
            Node::Stmt(_) => true,
        })
    }
    let affine = |a: &Access| a.subscripts.iter().all(|s| s.affine.is_some());
    nodes(&p.body)
        && p.conditions().iter().all(|c| c.cond.is_static())
        && p.stmts()
            .iter()
            .all(|s| s.reads().into_iter().all(affine) && s.write().is_none_or(|(a, _)| affine(a)))
        && p.conditions()
            .iter()
            .all(|c| c.reads().into_iter().all(affine))
        && p.first_ext_access().is_none()
}

/// Per `for` loop: its counter, the counters around it, its bounds.
struct Loop<'p> {
    counter: CounterId,
    around: Vec<CounterId>,
    f: &'p arrayflow::model::For,
}

fn loops<'p>(ns: &'p [Node], around: &mut Vec<CounterId>, out: &mut Vec<Loop<'p>>) {
    for n in ns {
        match n {
            Node::For(f) => {
                out.push(Loop {
                    counter: f.counter,
                    around: around.clone(),
                    f,
                });
                around.push(f.counter);
                loops(&f.body, around, out);
                around.pop();
            }
            Node::If(i) => {
                for (_, b) in &i.branches {
                    loops(b, around, out);
                }
                loops(i.otherwise.as_deref().unwrap_or(&[]), around, out);
            }
            Node::While(_) | Node::Stmt(_) => {}
        }
    }
}

/// Per site, the counters of the loops around it, outermost first.
fn site_counters(p: &Program) -> HashMap<Site, Vec<CounterId>> {
    fn walk(ns: &[Node], around: &mut Vec<CounterId>, out: &mut HashMap<Site, Vec<CounterId>>) {
        for n in ns {
            match n {
                Node::For(f) => {
                    around.push(f.counter);
                    walk(&f.body, around, out);
                    around.pop();
                }
                Node::If(i) => {
                    for (c, b) in &i.branches {
                        out.insert(Site::Cond(c.id), around.clone());
                        walk(b, around, out);
                    }
                    walk(i.otherwise.as_deref().unwrap_or(&[]), around, out);
                }
                Node::While(w) => walk(&w.body, around, out),
                Node::Stmt(s) => {
                    out.insert(Site::Stmt(s.id), around.clone());
                }
            }
        }
    }
    let mut out = HashMap::new();
    walk(&p.body, &mut Vec::new(), &mut out);
    out
}

/// The cell an affine access touches at iteration `iter` of `counters`.
fn cell(a: &Access, counters: &[CounterId], iter: &[i64], params: &[i64]) -> Vec<i64> {
    let value = |v: Var| match v {
        Var::Param(q) => params[q.index()],
        Var::Counter(c) => iter[counters.iter().position(|&k| k == c).unwrap()],
    };
    a.subscripts
        .iter()
        .map(|s| s.affine.as_ref().unwrap().eval(value).unwrap())
        .collect()
}

/// (An execution of a loop: the outer counters' values, a cell.)
type ExecCell = (Vec<i64>, Vec<i64>);

/// One access of the run, in execution order (an operation's reads, then
/// its write).
struct Event {
    op: u32,
    array: String,
    cell: Vec<i64>,
    write: bool,
    /// For a read: who wrote the value (the LWT's leaf).
    writer: Option<Writer>,
}

/// The decisions the digest's rules give, per loop counter and array name.
fn lwt_decisions(p: &Program) -> BTreeMap<CounterId, BTreeMap<String, Verdict>> {
    let params = p.param_values(&[]).unwrap();
    let run = interp::run(p, &interp::Options::new(params.clone())).expect("the program runs");
    let names = SiteNames::new(p);
    let around = site_counters(p);
    let stmts = p.stmts();
    let conds = p.conditions();
    let array_name = |a: &Access| p.array_decl(a.array).name.clone();

    // The accesses of the run, in execution order.
    let mut events = Vec::new();
    let mut reads = run.reads.iter().peekable();
    for (k, op) in run.ops.iter().enumerate() {
        let k = k as u32;
        let counters = &around[&op.site];
        let site_reads = match op.site {
            Site::Stmt(s) => stmts[s.index()].reads(),
            Site::Cond(c) => conds[c.index()].reads(),
        };
        let mut op_reads: Vec<_> = std::iter::from_fn(|| reads.next_if(|r| r.op == k)).collect();
        // The facts order an update's read of its target after the plain
        // reads (it is one access instance with the write): the same order
        // here, so the first carried pair is named alike.
        if let Site::Stmt(s) = op.site {
            if stmts[s.index()]
                .write()
                .is_some_and(|(_, kind)| kind.reads())
            {
                op_reads.sort_by_key(|r| r.access == 0);
            }
        }
        for r in op_reads {
            let a = site_reads[r.access as usize];
            let c = cell(a, counters, op.iter, &params);
            events.push(Event {
                op: k,
                array: array_name(a),
                cell: c,
                write: false,
                writer: Some(r.writer),
            });
        }
        if let Site::Stmt(s) = op.site {
            if let Some((a, _)) = stmts[s.index()].write() {
                let c = cell(a, counters, op.iter, &params);
                events.push(Event {
                    op: k,
                    array: array_name(a),
                    cell: c,
                    write: true,
                    writer: None,
                });
            }
        }
    }
    assert!(reads.next().is_none(), "every read belongs to an operation");

    let mut all = Vec::new();
    loops(&p.body, &mut Vec::new(), &mut all);
    let mut out = BTreeMap::new();
    for l in &all {
        let depth = l.around.len();
        let in_loop = |op: u32| around[&run.ops.get(op).site].get(depth) == Some(&l.counter);
        let outer = |op: u32| run.ops.get(op).iter[..depth].to_vec();
        let at = |op: u32| run.ops.get(op).iter[depth];
        // The last iteration of an execution, from the bounds.
        let last = |outer: &[i64]| {
            let value = |v: Var| match v {
                Var::Param(q) => params[q.index()],
                Var::Counter(c) => outer[l.around.iter().position(|&k| k == c).unwrap()],
            };
            let lo = l.f.lower.affine.eval(value).unwrap();
            let hi = l.f.upper.affine.eval(value).unwrap();
            lo + (hi - lo) / l.f.step * l.f.step
        };
        #[derive(Default)]
        struct Per {
            inside: bool,
            carried: Option<(u32, u32)>,
            copy_in: BTreeSet<Vec<i64>>,
            live_out: BTreeSet<Vec<i64>>,
            not_last: bool,
            /// Per (execution, cell): iterations that touch it, whether written.
            touched: HashMap<ExecCell, (BTreeSet<i64>, bool)>,
        }
        let mut per: BTreeMap<String, Per> = BTreeMap::new();
        for e in &events {
            let a = per.entry(e.array.clone()).or_default();
            let r_in = in_loop(e.op);
            if r_in {
                a.inside = true;
                let t = a.touched.entry((outer(e.op), e.cell.clone())).or_default();
                t.0.insert(at(e.op));
                t.1 |= e.write;
            }
            let Some(writer) = e.writer else { continue };
            let w = match writer {
                Writer::Op(w) => Some(w),
                Writer::Initial => None,
            };
            let w_in = w.is_some_and(in_loop);
            let same = w_in && r_in && outer(w.unwrap()) == outer(e.op);
            if same && at(w.unwrap()) != at(e.op) {
                a.carried.get_or_insert((w.unwrap(), e.op));
            } else if r_in && !same {
                a.copy_in.insert(e.cell.clone());
            }
            if w_in && !same {
                let w = w.unwrap();
                a.live_out.insert(e.cell.clone());
                a.not_last |= at(w) != last(&outer(w));
            }
        }
        let instance = |op: u32| Instance {
            site: names.name(run.ops.get(op).site).to_string(),
            iter: run.ops.get(op).iter.to_vec(),
        };
        let verdicts = per
            .into_iter()
            .filter(|(_, a)| a.inside)
            .map(|(name, a)| {
                let conflict = a.touched.values().any(|(its, w)| *w && its.len() > 1);
                let v = match a.carried {
                    Some((w, r)) => Verdict::Carried {
                        source: instance(w),
                        read: instance(r),
                    },
                    None if !conflict => Verdict::Shared,
                    None => Verdict::Privatizable {
                        copy_in: a.copy_in,
                        finalization: match (a.live_out.is_empty(), a.not_last) {
                            (true, _) => Finalization::None,
                            (false, false) => Finalization::LastIteration { cells: a.live_out },
                            (false, true) => Finalization::LastWriter {
                                cells: a.live_out,
                                dynamic: false,
                            },
                        },
                    },
                };
                (name, v)
            })
            .collect();
        out.insert(l.counter, verdicts);
    }
    out
}

#[test]
fn decisions_on_the_fixtures_equal_the_last_write_trees() {
    let (mut files, mut decisions, mut privatizable, mut carried) = (0, 0, 0, 0);
    for path in support::fixtures::paths() {
        let rel = path.to_string_lossy();
        if !(rel.contains("papers/") || rel.contains("c/kernels/") || rel.contains("c/privatize/"))
        {
            continue;
        }
        let Some(p) = support::fixtures::compile(&path) else {
            continue;
        };
        if !in_lwt_domain(&p) {
            continue;
        }
        let Ok(exp) = expansion::expand(&p, &Config::default()) else {
            continue;
        };
        let mine = analyze(&p, &exp);
        let lwt = lwt_decisions(&p);
        assert_eq!(mine.len(), lwt.len(), "{rel}: the loops");
        for l in &mine {
            let expected = &lwt[&l.counter];
            assert!(l.approximate.is_empty(), "{rel}: loop {}", l.name);
            assert_eq!(&l.arrays, expected, "{rel}: loop {}", l.name);
            decisions += l.arrays.len();
            for v in l.arrays.values() {
                privatizable += usize::from(matches!(v, Verdict::Privatizable { .. }));
                carried += usize::from(matches!(v, Verdict::Carried { .. }));
            }
        }
        files += 1;
    }
    eprintln!(
        "{files} files, {decisions} (loop, array) decisions: {privatizable} privatizable, \
         {carried} carried"
    );
    // The fixtures in the domain include the thesis's Figures 10 and 13.
    assert!(
        files >= 30 && privatizable >= 3 && carried >= 10,
        "{files} {privatizable} {carried}"
    );
}

#[test]
fn decisions_on_generated_programs_equal_the_last_write_trees() {
    use arrayflow::gen::{generate, GenOptions, Size};
    let cases = support::cases(500);
    let (mut programs, mut decisions) = (0, 0);
    for seed in 0..cases {
        let p = generate(seed, &GenOptions::static_control(Size::Small));
        if !in_lwt_domain(&p) {
            continue;
        }
        let Ok(exp) = expansion::expand(&p, &Config::default()) else {
            continue;
        };
        let lwt = lwt_decisions(&p);
        for l in analyze(&p, &exp) {
            assert_eq!(
                l.arrays,
                lwt[&l.counter],
                "seed {seed}, loop {}\n{}",
                l.name,
                arrayflow::print::program(&p)
            );
            decisions += l.arrays.len();
        }
        programs += 1;
    }
    eprintln!("{programs} generated programs, {decisions} (loop, array) decisions");
    assert!(
        programs * 2 >= cases as usize,
        "{programs} of {cases} in the domain"
    );
}
