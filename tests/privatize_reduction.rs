//! Reductions from exact σ (`privatize::exact`, `Decision::Reduction`),
//! against a plain check of the instances a run executes: for a loop that
//! exact σ calls a reduction on array X, in every execution of the loop
//! (one iteration of the loops around it) at every size tried,
//! - every write of X in the loop is to one cell;
//! - every read of X in the loop that sees a value the loop wrote in this
//!   execution, or that reads that cell, is an update's read of its own
//!   target (`s` in `s += e`).
//!
//! So nothing but the updates sees the cell's value while the loop runs,
//! and the updates may run in any order. The decisions on hand-written
//! programs are worked out by hand in their comments.

mod support;

use arrayflow::diagnostics::FileId;
use arrayflow::interp::{self, Writer};
use arrayflow::model::{
    Access, CmpOp, Cond, CondId, Condition, CounterId, Expr, Node, Program, Site, Stmt, StmtId,
    StmtKind, Var,
};
use arrayflow::privatize::exact::{self, Decision};
use arrayflow::privatize::reduction::ReduceOp;
use std::collections::HashMap;

fn program(text: &str) -> Program {
    let (p, d) = arrayflow::lower::compile(text, FileId(0));
    p.unwrap_or_else(|| panic!("{d:?}\n{text}"))
}

/// Per statement, the counters of the loops around it, outermost first.
fn nests(p: &Program) -> HashMap<StmtId, Vec<CounterId>> {
    fn walk(
        nodes: &[Node],
        around: &mut Vec<CounterId>,
        out: &mut HashMap<StmtId, Vec<CounterId>>,
    ) {
        for n in nodes {
            match n {
                Node::Stmt(s) => {
                    out.insert(s.id, around.clone());
                }
                Node::For(f) => {
                    around.push(f.counter);
                    walk(&f.body, around, out);
                    around.pop();
                }
                Node::While(w) => {
                    around.push(w.counter);
                    walk(&w.body, around, out);
                    around.pop();
                }
                Node::If(i) => {
                    for (_, b) in &i.branches {
                        walk(b, around, out);
                    }
                    walk(i.otherwise.as_deref().unwrap_or(&[]), around, out);
                }
            }
        }
    }
    let mut out = HashMap::new();
    walk(&p.body, &mut Vec::new(), &mut out);
    out
}

/// Per condition: the condition, the counters of the loops around it
/// (outermost first), and the statements it guards when it is an `if` with
/// one branch of statements only.
type Guards<'p> = HashMap<CondId, (&'p Condition, Vec<CounterId>, Vec<StmtId>)>;

fn guards(p: &Program) -> Guards<'_> {
    fn walk<'p>(nodes: &'p [Node], around: &mut Vec<CounterId>, out: &mut Guards<'p>) {
        for n in nodes {
            match n {
                Node::Stmt(_) => {}
                Node::For(f) => {
                    around.push(f.counter);
                    walk(&f.body, around, out);
                    around.pop();
                }
                Node::While(w) => {
                    around.push(w.counter);
                    out.insert(w.cond.id, (&w.cond, around.clone(), Vec::new()));
                    walk(&w.body, around, out);
                    around.pop();
                }
                Node::If(i) => {
                    for (c, b) in &i.branches {
                        let stmts: Option<Vec<StmtId>> = (b.iter())
                            .map(|n| match n {
                                Node::Stmt(s) => Some(s.id),
                                _ => None,
                            })
                            .collect();
                        let guarded = match (&i.branches[..], &i.otherwise) {
                            ([_], None) => stmts.unwrap_or_default(),
                            _ => Vec::new(),
                        };
                        out.insert(c.id, (c, around.clone(), guarded));
                        walk(b, around, out);
                    }
                    walk(i.otherwise.as_deref().unwrap_or(&[]), around, out);
                }
            }
        }
    }
    let mut out = HashMap::new();
    walk(&p.body, &mut Vec::new(), &mut out);
    out
}

/// Whether `if cond then s end` keeps the larger or the smaller of cell
/// `a` and a value: `cond` compares the two (`<`, `<=`, `>`, `>=`) and `s`
/// assigns that value to the cell.
fn keeps_extreme(p: &Program, cond: &Condition, s: &Stmt, a: &Access) -> bool {
    let StmtKind::Assign {
        target,
        op: None,
        value,
    } = &s.kind
    else {
        return false;
    };
    let Cond::Cmp(CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge, l, r) = &cond.cond else {
        return false;
    };
    let printed = |e: &Expr| arrayflow::print::expr(p, e);
    let (cell, v) = (arrayflow::print::access(p, a), printed(value));
    target.same_cell(a)
        && ((printed(l) == cell && printed(r) == v) || (printed(l) == v && printed(r) == cell))
}

/// A write of `x` kept with an extreme (`k = i` in `if (A[i] > m) { m =
/// A[i]; k = i; }`) must take a value that reads neither `x` nor the
/// extreme's cell: a value of the iteration, not a count or a copy of the
/// running extreme (`k = k + 1`, `v = m`, which depend on the order).
fn kept_values(
    p: &Program,
    guards: &Guards,
    x: arrayflow::model::ArrayId,
    name: &str,
) -> Result<(), String> {
    let stmts = p.stmts();
    for (cond, _, guarded) in guards.values() {
        let mut reads = Vec::new();
        cond.cond.collect_reads(&mut reads);
        // The cell whose extreme the `if` keeps.
        let Some(key) = (reads.iter()).find_map(|r| {
            let k = guarded
                .iter()
                .find(|g| keeps_extreme(p, cond, stmts[g.index()], r.access))?;
            Some((*k, r.access.array))
        }) else {
            continue;
        };
        for &g in guarded {
            let StmtKind::Assign { target, value, .. } = &stmts[g.index()].kind else {
                continue;
            };
            if g == key.0 || target.array != x {
                continue;
            }
            let mut vr = Vec::new();
            value.collect_reads(&mut vr);
            if let Some(r) = vr
                .iter()
                .find(|r| r.access.array == x || r.access.array == key.1)
            {
                return Err(format!(
                    "{}: {name}, kept with an extreme, reads {}",
                    stmts[g.index()].label,
                    arrayflow::print::access(p, r.access)
                ));
            }
        }
    }
    Ok(())
}

/// The cell `a` names at iteration `iter` of its statement.
fn cell(a: &Access, counters: &[CounterId], iter: &[i64], params: &[i64]) -> Vec<i64> {
    let value = |v: Var| match v {
        Var::Counter(c) => iter[counters.iter().position(|&k| k == c).expect("around")],
        Var::Param(q) => params[q.index()],
    };
    (a.subscripts.iter())
        .map(|s| {
            s.affine
                .as_ref()
                .expect("affine")
                .eval(value)
                .expect("fits")
        })
        .collect()
}

/// The plain check above for every reduction exact σ finds in `p` at
/// `values`; Err says which instance breaks it. Ok(n): reductions checked.
fn check(p: &Program, values: &[i64]) -> Result<usize, String> {
    let loops = exact::analyze(p).map_err(|e| format!("no exact σ: {e}"))?;
    let claims: Vec<Claim> = (loops.iter())
        .flat_map(|l| {
            (l.arrays.iter())
                .filter(|(_, d)| matches!(d, Decision::Reduction { .. }))
                .map(|(x, _)| (l.name.clone(), l.counter, l.depth, x.clone()))
        })
        .collect();
    check_claims(p, values, &claims)
}

/// A reduction claimed: (loop name, its counter, its depth, the array).
type Claim = (String, CounterId, usize, String);

/// The plain check for each of `claims`.
fn check_claims(p: &Program, values: &[i64], claims: &[Claim]) -> Result<usize, String> {
    let Ok(run) = interp::run(p, &interp::Options::new(values.to_vec())) else {
        return Ok(0);
    };
    let nests = nests(p);
    let guards = guards(p);
    let stmts = p.stmts();
    let mut checked = 0;
    for (loop_name, counter, depth, name) in claims {
        {
            let x = p.array(name).expect("array");
            let depth = *depth;
            let in_loop = |s: StmtId| nests[&s].get(depth) == Some(counter);
            // Per execution (the outer counters), the cell written.
            let mut written: HashMap<Vec<i64>, Vec<i64>> = HashMap::new();
            for op in run.ops.iter() {
                let Site::Stmt(s) = op.site else { continue };
                let StmtKind::Assign { target, .. } = &stmts[s.index()].kind else {
                    continue;
                };
                if target.array != x || !in_loop(s) {
                    continue;
                }
                let c = cell(target, &nests[&s], op.iter, values);
                let e = op.iter[..depth].to_vec();
                if let Some(old) = written.insert(e, c.clone()) {
                    if old != c {
                        return Err(format!(
                            "loop {loop_name}: {name} written at {old:?} and {c:?}"
                        ));
                    }
                }
            }
            kept_values(p, &guards, x, name)?;
            for r in &run.reads {
                let op = run.ops.get(r.op);
                // The access read, the loops around it, and whether it is
                // the reduction's own read: an update's of its target, or
                // the comparison of an `if` that keeps the larger or the
                // smaller of the cell and a value (`if (A[i] > m) m = A[i];`).
                let (label, a, nest, own) = match op.site {
                    Site::Stmt(s) => {
                        let stmt = stmts[s.index()];
                        let a = stmt.reads()[r.access as usize];
                        let own = match &stmt.kind {
                            StmtKind::Assign { target, .. } => target.same_cell(a),
                            StmtKind::Call { .. } => false,
                        };
                        (&stmt.label, a, &nests[&s], own)
                    }
                    Site::Cond(c) => {
                        let (cond, nest, guarded) = &guards[&c];
                        let mut reads = Vec::new();
                        cond.cond.collect_reads(&mut reads);
                        let a = reads[r.access as usize].access;
                        let own =
                            (guarded.iter()).any(|g| keeps_extreme(p, cond, stmts[g.index()], a));
                        (&cond.name, a, nest, own)
                    }
                };
                if a.array != x || nest.get(depth) != Some(counter) {
                    continue;
                }
                let e = &op.iter[..depth];
                let at = cell(a, nest, op.iter, values);
                let from_loop = match r.writer {
                    Writer::Op(w) => {
                        let w = run.ops.get(w);
                        matches!(w.site, Site::Stmt(ws) if in_loop(ws)) && &w.iter[..depth] == e
                    }
                    Writer::Initial => false,
                };
                if !from_loop && written.get(e) != Some(&at) {
                    continue;
                }
                if !own {
                    return Err(format!(
                        "loop {}: {}{:?} reads {name}{at:?}, the reduction's cell or a value of this execution",
                        loop_name, label, op.iter
                    ));
                }
            }
            checked += 1;
        }
    }
    Ok(checked)
}

/// (loop, array, operator).
type Found = (String, String, ReduceOp);

/// Every reduction exact σ finds.
fn reductions(p: &Program) -> Vec<Found> {
    let loops = exact::analyze(p).expect("exact σ");
    let mut out = Vec::new();
    for l in &loops {
        for (x, op, _) in l.reductions() {
            out.push((l.name.clone(), x.to_string(), op));
        }
    }
    out
}

fn r(l: &str, x: &str, op: ReduceOp) -> Found {
    (l.to_string(), x.to_string(), op)
}

/// Each case: the program, the reductions worked out by hand, and whether
/// the loop is parallel with them.
#[test]
fn reductions_as_worked_out_by_hand() {
    use ReduceOp::*;
    let head = "param N = 6;\nreal A[0..N], B[0..N], s, t;\nint k[0..N];\n";
    let cases: Vec<(&str, Vec<Found>)> = vec![
        // A sum and a maximum in one loop.
        (
            "for i = 0 to N do S: s += A[i]; T: t = __select(__ge(t, A[i]), t, A[i]); end",
            vec![r("i", "s", Add), r("i", "t", Max)],
        ),
        // A running sum: R reads s in the same iteration.
        ("for i = 0 to N do S: s += A[i]; R: B[i] = s; end", vec![]),
        // Only the first iteration reads the old value, outside an update:
        // a private partial result would start at 0 there.
        (
            "for i = 0 to N do if i == 0 then R: B[0] = s; end S: s += A[i]; end",
            vec![],
        ),
        // Two updates with different operators.
        ("for i = 0 to N do S: s += A[i]; T: s *= A[i]; end", vec![]),
        // Two updates with one operator.
        (
            "for i = 0 to N do S: s += A[i]; T: s = s - B[i]; end",
            vec![r("i", "s", Add)],
        ),
        // The cell moves with an inner loop: a reduction of the inner
        // loop, not of the outer one.
        (
            "for i = 0 to N do for j = 0 to N do S: B[j] += A[i]; end end",
            vec![],
        ),
        (
            "for i = 0 to N do for j = 0 to N do S: B[i] += A[j]; end end",
            vec![r("j", "B", Add)],
        ),
        // B[i] read at j = i by the update's other operand.
        (
            "for i = 0 to N do for j = 0 to N do S: B[i] += B[j]; end end",
            vec![],
        ),
        // B[j] only for j < i: never the cell.
        (
            "for i = 0 to N do for j = 0 to i - 1 do S: B[i] = B[i] - A[j] * B[j]; end end",
            vec![r("j", "B", Add)],
        ),
        // Not an update by one operator.
        ("for i = 0 to N do S: s = s * 2 + A[i]; end", vec![]),
        // Written with `if`: a maximum, and a sum of the terms a condition
        // that does not read the sum selects.
        (
            "for i = 0 to N do if A[i] > t then T: t = A[i]; end end",
            vec![r("i", "t", Max)],
        ),
        (
            "for i = 0 to N do if B[i] > 0 then S: s -= A[i]; end end",
            vec![r("i", "s", Add)],
        ),
        // The guarded value is read after the `if` in the same iteration:
        // a running maximum, not a reduction.
        (
            "for i = 0 to N do if A[i] > t then T: t = A[i]; end R: B[i] = t; end",
            vec![],
        ),
        // A maximum kept with its index: one reduction of the pair.
        (
            "for i = 0 to N do if A[i] > t then T: t = A[i]; U: k[0] = i; end end",
            vec![r("i", "k", ArgMax), r("i", "t", ArgMax)],
        ),
        // The last index of a minimum, the comparison the other way round,
        // the index an affine function and a value copied with it.
        (
            "for i = 0 to N do if t >= A[i] then U: k[0] = 2 * i + 1; T: t = A[i]; V: s = B[i]; end end",
            vec![r("i", "k", ArgMin), r("i", "s", ArgMin), r("i", "t", ArgMin)],
        ),
        // The maximum is read after the `if`: the pair is no reduction,
        // the index alone neither.
        (
            "for i = 0 to N do if A[i] > t then T: t = A[i]; U: k[0] = i; end R: B[i] = t; end",
            vec![],
        ),
        // The index is read in the loop.
        (
            "for i = 0 to N do if A[i] > t then T: t = A[i]; U: k[0] = i; end R: B[i] = k[0]; end",
            vec![],
        ),
        // Sums of several terms, either order, and a conditional sum
        // written as a select.
        (
            "for i = 0 to N do S: s = s + A[i] + B[i] - A[0]; T: t = A[i] * 2 + t; end",
            vec![r("i", "s", Add), r("i", "t", Add)],
        ),
        (
            "for i = 0 to N do S: s = __select(__gt(A[i], 0), s + A[i], s); end",
            vec![r("i", "s", Add)],
        ),
        // The sum read by another term of its own update: no reduction.
        ("for i = 0 to N do S: s = s + A[i] * s; end", vec![]),
    ];
    for (body, want) in cases {
        let p = program(&format!("{head}{body}\n"));
        assert_eq!(reductions(&p), want, "{body}");
        for n in [0, 1, 2, 5] {
            let values = vec![n];
            check(&p, &values).unwrap_or_else(|e| panic!("{body} at N = {n}: {e}"));
        }
    }
}

/// The plain check can fail: the loops exact σ rightly refuses, claimed
/// as reductions anyway, are caught at N = 4.
#[test]
fn the_check_refuses_false_claims() {
    let head = "param N = 4;\nreal A[0..N], B[0..N], s;\n";
    for (body, array, why) in [
        (
            "for i = 0 to N do S: s += A[i]; R: B[i] = s; end",
            "s",
            "R[0] reads s",
        ),
        (
            "for i = 0 to N do if i == 0 then R: B[0] = s; end S: s += A[i]; end",
            "s",
            "R[0] reads s",
        ),
        (
            "for i = 0 to N do S: B[i] += A[i]; end",
            "B",
            "written at [0] and [1]",
        ),
        (
            "for i = 0 to N do S: B[0] += B[i]; end",
            "B",
            "S[0] reads B[0]",
        ),
    ] {
        let p = program(&format!("{head}{body}\n"));
        let l = &exact::analyze(&p).unwrap()[0];
        assert!(l.reductions().next().is_none(), "{body}");
        let claim = (l.name.clone(), l.counter, l.depth, array.to_string());
        let err = check_claims(&p, &[4], &[claim]).unwrap_err();
        assert!(err.contains(why), "{body}: {err}");
    }
    // A guard that reads the sum it guards keeps no extreme: claimed by
    // hand, since the program is outside static control.
    let p = program(&format!(
        "{head}for i = 0 to N do if s != 2 then S: s += A[i]; end end\n"
    ));
    let claim = ("i".to_string(), CounterId(0), 0, "s".to_string());
    let err = check_claims(&p, &[4], &[claim]).unwrap_err();
    assert!(err.contains("reads s"), "{err}");
    // A true one passes.
    let p = program(&format!("{head}for i = 0 to N do S: s += A[i]; end\n"));
    assert_eq!(check(&p, &[4]), Ok(1));
    // Kept with a maximum: the pair passes; a count under the comparison,
    // a copy of the maximum, or the maximum read elsewhere do not (claimed
    // by hand where exact σ has nothing to say).
    let head = "param N = 4;\nreal A[0..N], B[0..N], s, m;\nint k;\n";
    let p = program(&format!(
        "{head}for i = 0 to N do if A[i] > m then T: m = A[i]; U: k = i; end end\n"
    ));
    assert_eq!(check(&p, &[4]), Ok(2));
    for (body, array, why) in [
        (
            "T: m = A[i]; U: k = k + 1;",
            "k",
            "U: k, kept with an extreme, reads k",
        ),
        (
            "T: m = A[i]; U: s = m;",
            "s",
            "U: s, kept with an extreme, reads m",
        ),
    ] {
        let p = program(&format!(
            "{head}for i = 0 to N do if A[i] > m then {body} end end\n"
        ));
        let claim = ("i".to_string(), CounterId(0), 0, array.to_string());
        let err = check_claims(&p, &[4], &[claim]).unwrap_err();
        assert!(err.contains(why), "{body}: {err}");
    }
    let p = program(&format!(
        "{head}for i = 0 to N do if A[i] > m then T: m = A[i]; U: k = i; end R: B[i] = m; end\n"
    ));
    let claim = ("i".to_string(), CounterId(0), 0, "m".to_string());
    let err = check_claims(&p, &[4], &[claim]).unwrap_err();
    assert!(err.contains("R[0] reads m"), "{err}");
}

/// Every fixture program (`.loop` and C, PolyBench's among them): whatever
/// exact σ calls a reduction passes the instance check with every
/// parameter at 1, 3 and 5.
#[test]
fn fixture_reductions_pass_the_instance_check() {
    let mut total = 0;
    let mut seen = Vec::new();
    // PolyBench's kernels are read as the harness does, preprocessed.
    let o = arrayflow::cfront::preprocess::Options {
        define: vec!["MINI_DATASET".to_string()],
        ..Default::default()
    };
    for path in support::fixtures::paths() {
        let program = if path.starts_with("fixtures/c/polybench") {
            let text = std::fs::read_to_string(&path).unwrap();
            let pre = arrayflow::cfront::preprocess::run(&path, text, &o)
                .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.for_command()));
            arrayflow::cfront::compile(&pre.text, FileId(0)).0
        } else {
            support::fixtures::compile(&path)
        };
        let Some(p) = program else {
            continue;
        };
        if exact::analyze(&p).is_err() {
            continue;
        }
        let mut n = 0;
        for k in [1, 3, 5] {
            let values = vec![k; p.params.len()];
            match check(&p, &values) {
                Ok(c) => n = n.max(c),
                Err(e) => panic!("{} at {values:?}: {e}", path.display()),
            }
        }
        if n > 0 {
            seen.push(path.display().to_string());
        }
        total += n;
    }
    // At least: integer.c 3, guarded.c 3, triangular.c 1, real.c 1,
    // not-reductions.c 1 (`u` in loop j), argmax.c 9, argmax2d.c 3 (loops
    // i and j each), meaning.c 6, and nussinov's loop k.
    for f in [
        "argmax.c",
        "argmax2d.c",
        "meaning.c",
        "integer.c",
        "guarded.c",
        "triangular.c",
        "real.c",
        "not-reductions.c",
        "nussinov.c",
    ] {
        assert!(seen.iter().any(|s| s.ends_with(f)), "{f}: {seen:?}");
    }
    assert!(total >= 31, "{total} reductions checked: {seen:?}");
}

/// A maximum kept with its index, as `privatize --emit code` writes it in
/// the `.loop` form: a loop over threads folding blocks into partials,
/// then the partials combined in thread order. The interpreter compares
/// it with the original at several sizes and thread counts (the reads of
/// the group left out, its final values compared); with the comparison
/// of the combination turned round, it differs.
#[test]
fn a_maximum_with_its_index_runs_per_thread_in_the_loop_form() {
    let src = "param N = 9;\nreal A[0..N], m, v;\nint k;\n\
               m = A[0];\nk = -1;\n\
               for i = 0 to N do\n  if A[i] >= m then\n    T: m = A[i];\n    U: k = 2 * i + 1;\n    V: v = A[N - i];\n  end\nend\n";
    let a = program(src);
    let checked = arrayflow::privatize::emit::checked(&a, &Default::default()).unwrap();
    let e = checked.emitted.expect("the loop is emitted");
    assert_eq!(
        e.loops,
        vec![("i".to_string(), vec!["k".into(), "m".into(), "v".into()])]
    );
    assert_eq!(e.threads.unordered, ["T", "U", "V", "_C1"]);
    assert!(
        e.text.contains("m_h[t_1, 0] == 1 and m_p[t_1, 0] >= m"),
        "{}",
        e.text
    );
    let compare = |b: &Program, n: i64, threads: i64| {
        let o = e
            .threads
            .equiv_options(&[("N".to_string(), n)], threads, 20);
        arrayflow::equiv::equiv(&a, b, &o).unwrap()
    };
    for n in [0, 1, 2, 7, 20] {
        for threads in [1, 2, 3, 4] {
            let v = compare(&e.program, n, threads);
            assert!(
                matches!(v, arrayflow::equiv::Verdict::Agree(_)),
                "N = {n}, {threads} threads: {v:?}"
            );
        }
    }
    let bad = program(&e.text.replace("m_p[t_1, 0] >= m", "m_p[t_1, 0] <= m"));
    let v = compare(&bad, 20, 3);
    assert!(matches!(v, arrayflow::equiv::Verdict::Differ(_)), "{v:?}");
}
