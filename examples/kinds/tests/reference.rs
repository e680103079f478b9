//! The example kinds against arrayflow's reference semantics
//! (`dataflow::reference` with this crate's `reference::meaning`) on
//! generated programs: `arrayflow::gen` programs (while loops, unknown and
//! data conditions, non-affine subscripts) in which some affine accesses
//! become sections `@section(last + k)`, k = 0..2, and some assignment
//! targets lifetime ends `@dead(last + k)`. Each program is also printed
//! and parsed back through the kinds (the `.loop` form round-trips).
//! ARRAYFLOW_CASES programs (default 150), at max-trips 0..3.

use arrayflow::dataflow::{analyze_with, reference, Config, DataflowError, Sources};
use arrayflow::diagnostics::FileId;
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::model::{
    Access, BinOp, Expr, ExprKind, ExtAccess, Node, Operation, Program, Span, StmtKind, Subscript,
};
use std::collections::BTreeMap;

fn cases() -> u64 {
    std::env::var("ARRAYFLOW_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150)
}

/// SplitMix64: decisions from the seed, reproducible.
struct Mix(u64);

impl Mix {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// Makes `a` an extension access of kind `name` over `last .. last + k`.
fn annotate(a: &mut Access, name: &str, r: &mut Mix) -> bool {
    if !a.is_affine() || a.subscripts.is_empty() {
        return false;
    }
    let last = a
        .subscripts
        .last()
        .map(|s| s.expr.clone())
        .expect("a subscript");
    let k = Expr::new(ExprKind::Int(r.below(3) as i64), Span::NONE);
    let hi = Expr::new(
        ExprKind::Binary(BinOp::Add, Box::new(last), Box::new(k)),
        Span::NONE,
    );
    a.ext = Some(Box::new(ExtAccess {
        name: name.to_string(),
        args: vec![Subscript::new(hi)],
        span: Span::NONE,
    }));
    true
}

fn reads(e: &mut Expr, r: &mut Mix, n: &mut u32) {
    match &mut e.kind {
        ExprKind::Access(a) => *n += u32::from(r.below(3) == 0 && annotate(a, "section", r)),
        ExprKind::Call(_, args) => args.iter_mut().for_each(|x| reads(x, r, n)),
        ExprKind::Neg(x) => reads(x, r, n),
        ExprKind::Binary(_, x, y) => {
            reads(x, r, n);
            reads(y, r, n);
        }
        _ => {}
    }
}

/// Turns some accesses of `nodes` into sections and lifetime ends; returns
/// how many.
fn sprinkle(nodes: &mut [Node], r: &mut Mix) -> u32 {
    let mut n = 0;
    for node in nodes {
        match node {
            Node::Stmt(s) => match &mut s.kind {
                StmtKind::Assign { target, op, value } => {
                    let kind = match r.below(4) {
                        0 => Some("section"),
                        1 if op.is_none() => Some("dead"),
                        _ => None,
                    };
                    if kind.is_some_and(|k| annotate(target, k, r)) {
                        n += 1;
                    }
                    reads(value, r, &mut n);
                }
                StmtKind::Call { args, .. } => args.iter_mut().for_each(|x| reads(x, r, &mut n)),
            },
            Node::For(f) => n += sprinkle(&mut f.body, r),
            Node::While(w) => n += sprinkle(&mut w.body, r),
            Node::If(i) => {
                for (_, b) in &mut i.branches {
                    n += sprinkle(b, r);
                }
                if let Some(b) = &mut i.otherwise {
                    n += sprinkle(b, r);
                }
            }
        }
    }
    n
}

#[test]
fn the_kinds_agree_with_the_reference_on_generated_programs() {
    let kinds = arrayflow_kinds::kinds();
    let (mut compared, mut with_ext, mut skipped) = (0u64, 0u64, 0u64);
    for seed in 0..cases() {
        let size = if seed % 4 == 0 {
            Size::Medium
        } else {
            Size::Small
        };
        let mut program: Program = generate(seed, &GenOptions::all(size));
        let mut r = Mix(seed ^ 0x5EC7_10B5);
        let n = sprinkle(&mut program.body, &mut r);

        // The program prints as `.loop` text the kinds' front end reads back.
        let text = arrayflow::print::program(&program);
        let (back, diags) = arrayflow::lower::compile_kinds(&text, FileId(0), &kinds);
        let back = back.unwrap_or_else(|| panic!("seed {seed}: {diags:?}\n{text}"));
        assert_eq!(arrayflow::print::program(&back), text, "seed {seed}");

        let max_trips = (seed % 4) as u32;
        let config = Config {
            max_trips,
            ..Config::default()
        };
        let flow = match analyze_with(&program, &config, &kinds) {
            // A section leaving its declared range, or a static condition
            // dividing by zero: not a program to compare on.
            Err(DataflowError::Eval { .. }) => {
                skipped += 1;
                continue;
            }
            other => other.unwrap_or_else(|e| panic!("seed {seed}: {e}")),
        };
        let want = reference::sigma(
            &program,
            &[],
            max_trips,
            &arrayflow_kinds::reference::meaning,
        )
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let got: BTreeMap<(Operation, usize), Sources> = flow
            .iter()
            .map(|r| ((r.operation(), r.access()), r.sources()))
            .collect();
        assert_eq!(got, want, "seed {seed}:\n{text}");
        compared += 1;
        with_ext += u64::from(n > 0);
    }
    // Most programs are compared, and most of those have extension accesses.
    assert!(
        compared * 3 >= cases() * 2,
        "compared {compared}, skipped {skipped}"
    );
    assert!(
        with_ext * 2 >= compared,
        "{with_ext} of {compared} have extension accesses"
    );
}
