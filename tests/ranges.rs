//! W0005 (a subscript out of its declared range at the defaults) against the
//! interpreter, on generated programs (in range by construction, see
//! `arrayflow::gen`) with one affine subscript shifted by a constant:
//!
//! - unshifted programs get no W0005 (the generator's own interval argument
//!   is the oracle);
//! - whenever the run at the defaults stops on an out-of-range subscript,
//!   `check` warned at that very subscript;
//! - whenever `check` says a subscript certainly *leaves* its range (not
//!   "may"), the run at the defaults stops on an out-of-range subscript.
//!
//! `ARRAYFLOW_CASES` programs (default 600), sizes small, medium and large in
//! turn.

mod support;

use arrayflow::diagnostics::{has_errors, Diagnostic, SourceFiles};
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::interp::{run, ErrorKind, Options};
use arrayflow::model::{BinOp, Cond, Expr, ExprKind, Node, Program, Span, StmtKind, Subscript};

/// Calls `f` on every affine subscript, in textual order.
fn each_affine(nodes: &mut [Node], f: &mut dyn FnMut(&mut Subscript)) {
    for n in nodes {
        match n {
            Node::Stmt(s) => match &mut s.kind {
                StmtKind::Assign { target, value, .. } => {
                    for sub in &mut target.subscripts {
                        in_subscript(sub, f);
                    }
                    in_expr(value, f);
                }
                StmtKind::Call { args, .. } => args.iter_mut().for_each(|a| in_expr(a, f)),
            },
            Node::For(l) => each_affine(&mut l.body, f),
            Node::While(w) => {
                in_cond(&mut w.cond.cond, f);
                each_affine(&mut w.body, f);
            }
            Node::If(i) => {
                for (c, body) in &mut i.branches {
                    in_cond(&mut c.cond, f);
                    each_affine(body, f);
                }
                if let Some(e) = &mut i.otherwise {
                    each_affine(e, f);
                }
            }
        }
    }
}

fn in_subscript(s: &mut Subscript, f: &mut dyn FnMut(&mut Subscript)) {
    in_expr(&mut s.expr, f);
    if s.affine.is_some() {
        f(s);
    }
}

fn in_expr(e: &mut Expr, f: &mut dyn FnMut(&mut Subscript)) {
    match &mut e.kind {
        ExprKind::Access(a) => a.subscripts.iter_mut().for_each(|s| in_subscript(s, f)),
        ExprKind::Call(_, args) => args.iter_mut().for_each(|a| in_expr(a, f)),
        ExprKind::Neg(x) => in_expr(x, f),
        ExprKind::Binary(_, l, r) => {
            in_expr(l, f);
            in_expr(r, f);
        }
        ExprKind::Int(_) | ExprKind::Param(_) | ExprKind::Counter(_) | ExprKind::Unknown => {}
    }
}

fn in_cond(c: &mut Cond, f: &mut dyn FnMut(&mut Subscript)) {
    match c {
        Cond::Cmp(_, l, r) => {
            in_expr(l, f);
            in_expr(r, f);
        }
        Cond::And(a, b) | Cond::Or(a, b) => {
            in_cond(a, f);
            in_cond(b, f);
        }
        Cond::Not(a) => in_cond(a, f),
        Cond::Unknown => {}
    }
}

/// Adds `by` to the `pick`-th affine subscript (modulo their number).
fn shift(p: &mut Program, pick: u64, by: i64) {
    let mut count = 0u64;
    each_affine(&mut p.body, &mut |_| count += 1);
    if count == 0 {
        return;
    }
    let target = pick % count;
    let mut k = 0u64;
    each_affine(&mut p.body, &mut |s| {
        if k == target {
            let old = std::mem::replace(&mut s.expr, Expr::int(0));
            let sum = Expr::new(
                ExprKind::Binary(BinOp::Add, Box::new(old), Box::new(Expr::int(by))),
                Span::NONE,
            );
            *s = Subscript::new(sum);
        }
        k += 1;
    });
}

fn w0005(diags: &[Diagnostic]) -> Vec<&Diagnostic> {
    diags.iter().filter(|d| d.code == "W0005").collect()
}

#[test]
fn w0005_agrees_with_the_interpreter_on_generated_programs() {
    let sizes = [Size::Small, Size::Medium, Size::Large];
    let (mut stopped, mut certain, mut may) = (0, 0, 0);
    for seed in 0..support::cases(600) {
        let mut p = generate(seed, &GenOptions::all(sizes[(seed % 3) as usize]));
        // Every fourth program unshifted; the others by -3..=3 (0 included).
        let by = if seed % 4 == 0 {
            0
        } else {
            (seed / 4 % 7) as i64 - 3
        };
        shift(&mut p, seed.wrapping_mul(0x9e37_79b9), by);
        // Through text, so that spans are real and shared by both sides.
        let text = arrayflow::print::program(&p);
        let mut files = SourceFiles::new();
        let id = files.add(format!("gen-{seed}.loop"), text.clone());
        let (parsed, diags) = arrayflow::lower::compile(files.source(id), id);
        assert!(!has_errors(&diags), "seed {seed}:\n{text}");
        let p = parsed.expect("no errors, so a program");
        let warned = w0005(&diags);
        let context = || format!("seed {seed}:\n{text}\n{}", files.render_all(&diags));
        if by == 0 {
            assert!(warned.is_empty(), "unshifted, in range: {}", context());
        }
        let mut o = Options::new(p.param_values(&[]).expect("defaults"));
        o.seed = seed;
        o.max_steps = 2_000_000;
        let outcome = run(&p, &o);
        if let Err(e) = &outcome {
            if e.kind == ErrorKind::OutOfRange {
                stopped += 1;
                assert!(
                    warned.iter().any(|d| d.labels[0].span == e.span),
                    "the run stopped ({e}) but no W0005 there: {}",
                    context()
                );
            }
        }
        for d in &warned {
            if d.message.contains("may leave") {
                may += 1;
                continue;
            }
            certain += 1;
            assert!(
                matches!(&outcome, Err(e) if e.kind == ErrorKind::OutOfRange),
                "W0005 says it leaves, but the run gave {:?}: {}",
                outcome.as_ref().err(),
                context()
            );
        }
    }
    // The shifts must actually exercise both directions.
    let n = support::cases(600);
    if n >= 300 {
        assert!(stopped > n / 20, "only {stopped} runs went out of range");
        assert!(certain > n / 20 && may > 0, "{certain} certain, {may} may");
    }
}

/// The notes of every W0005 of `source`: (message, reach note).
fn notes(source: &str) -> Vec<(String, String)> {
    let (program, diags) = arrayflow::lower::compile(source, arrayflow::diagnostics::FileId(0));
    assert!(program.is_some(), "{diags:?}");
    w0005(&diags)
        .into_iter()
        .map(|d| (d.message.clone(), d.notes[0].clone()))
        .collect()
}

/// Cases computed by hand: steps, huge sizes (only the ends of a loop whose
/// counter guards nothing are visited), `while` trips, and where nothing may
/// be said.
#[test]
fn w0005_reach_by_hand() {
    // i takes 1, 5, 9: in 1..9, but not in 1..8.
    assert!(notes("real A[1..9];\nfor i = 1 to 10 step 4 do A[i] = 0; end\nuse(A[1]);").is_empty());
    assert_eq!(
        notes("real A[1..8];\nfor i = 1 to 10 step 4 do A[i] = 0; end\nuse(A[1]);")[0].1,
        "`A[i]` reaches 9 for i = 9; `A` is declared 1..8"
    );
    // A billion iterations, two of them visited; both sides reported.
    let big = "param N = 1000000000;\nreal A[0..N];\nfor i = 0 to N do\n  for j = 0 to N do\n    A[2 * i - j + 1] = 0;\n  end\nend\nuse(A[0]);";
    assert_eq!(
        notes(big),
        vec![(
            "`A[2 * i - j + 1]` leaves the declared range of `A` at the default parameter values"
                .to_string(),
            "`A[2 * i - j + 1]` reaches -999999999 for i = 0, j = 1000000000 and 2000000001 \
             for i = 1000000000, j = 0; `A` is declared 0..1000000000"
                .to_string()
        )]
    );
    // A triangular nest: i is enumerated (j's bound uses it), j only at its
    // ends, so N = 100000 is within the budget.
    let triangle = "param N = 100000;\nreal A[0..N];\nfor i = 0 to N do\n  for j = i to N do\n    A[j - i + 1] = 0;\n  end\nend\nuse(A[0]);";
    assert_eq!(
        notes(triangle)[0].1,
        "`A[j - i + 1]` reaches 100001 for i = 0, j = 100000; `A` is declared 0..100000"
    );
    // Three deep, i and j both enumerated: past the budget, nothing said.
    let deep = "param N = 100000;\nreal A[0..N];\nfor i = 0 to N do\n  for j = i to N do\n    for k = j to N do\n      A[k + 1] = 0;\n    end\n  end\nend\nuse(A[0]);";
    assert!(notes(deep).is_empty());
    // The same at N = 10 is walked in full.
    assert_eq!(
        notes(&deep.replace("100000", "10"))[0].1,
        "`A[k + 1]` reaches 11 for i = 0, j = 0, k = 10; `A` is declared 0..10"
    );
    // A `while` with an unknown test: trips 4 and on may run; the note gives
    // the furthest of the 64 trips followed.
    let w = notes("real A[0..3];\nwhile [w] ... do\n  A[w] = 1;\nend\nuse(A[0]);");
    assert_eq!(
        w,
        vec![(
            "`A[w]` may leave the declared range of `A` at the default parameter values"
                .to_string(),
            "`A[w]` reaches 63 for w = 63; `A` is declared 0..3".to_string()
        )]
    );
    // A `while` with a static test runs trips 0..=3 for sure.
    assert!(notes("real A[0..3];\nwhile [w] w < 4 do\n  A[w] = 1;\nend\nuse(A[0]);").is_empty());
    assert!(
        notes("real A[0..3];\nwhile [w] w < 5 do\n  A[w] = 1;\nend\nuse(A[0]);")[0]
            .0
            .contains(" leaves ")
    );
    // Only the test of a `while` leaves the range (its body holds nothing to
    // check): tested at trip 0 for sure.
    let test = notes("real A[0..3];\nreal x;\nfor i = 0 to 3 do\n  while A[i + 1] > 0 do\n    x = 1;\n  end\nend\nuse(x);");
    assert_eq!(
        test,
        vec![(
            "`A[i + 1]` leaves the declared range of `A` at the default parameter values"
                .to_string(),
            "`A[i + 1]` reaches 4 for i = 3, _W1 = 0; `A` is declared 0..3".to_string()
        )]
    );
    // No default, or defaults that break an assumption: nothing said.
    assert!(
        notes("param N;\nreal A[1..N];\nfor i = 1 to N do A[i + 1] = 0; end\nuse(A[1]);")
            .is_empty()
    );
    assert!(notes("param N = 2;\nassume N > 3;\nreal A[1..N];\nfor i = 1 to N do A[i + 1] = 0; end\nuse(A[1]);").is_empty());
    // Outside every loop, and a subscript inside a subscript.
    let flat = notes("real A[1..3];\nreal B[1..3];\nA[B[4] % 3 + 1] = 0;\nuse(A[1]);");
    assert_eq!(flat[0].1, "`B[4]` reaches 4; `B` is declared 1..3");
}
