//! An access kind is held to the count it claims: the budgets are checked
//! against the claims before the lowering, so a kind that makes more
//! instances than it said is stopped at the first operation where it does,
//! with an error at the access, before it can fill memory. The kind here
//! lies on purpose: `A[i] @claim(c, n)` claims `c` instances and makes `n`
//! (reads of `A[i]`).

use arrayflow::dataflow::{analyze_with, Config, DataflowError};
use arrayflow::diagnostics::FileId;
use arrayflow::kinds::{AccessLowering, CellTable, Kinds, LowerError, Point, Sink};
use arrayflow::model::{Access, AccessKind};
use std::time::{Duration, Instant};

struct Claim;

/// The constant of argument `k` of `@claim(c, n)`.
fn arg(access: &Access, k: usize) -> i64 {
    let ext = access.ext.as_ref().expect("an extension access");
    ext.args[k].affine.as_ref().expect("affine").constant
}

impl AccessLowering for Claim {
    fn name(&self) -> &'static str {
        "claim"
    }
    fn syntax(&self) -> Option<&'static str> {
        Some("claim")
    }
    fn arity(&self) -> usize {
        2
    }
    fn claims(&self, access: &Access, kind: AccessKind) -> bool {
        access.is_affine() && kind == AccessKind::Read
    }
    fn count(&self, access: &Access, _: &CellTable) -> u64 {
        arg(access, 0) as u64
    }
    fn emit(
        &self,
        access: &Access,
        _: AccessKind,
        at: &Point,
        sink: &mut Sink,
    ) -> Result<(), LowerError> {
        let mut index = Vec::new();
        for s in &access.subscripts {
            index.push(at.affine(s.affine.as_ref().expect("affine"), s.expr.span)?);
        }
        let cell = sink.cell(access.array, &index);
        for _ in 0..arg(access, 1) {
            sink.read(cell);
        }
        Ok(())
    }
}

/// σ of a 10-trip loop whose read is `A[i] @claim(c, n)`, under a budget of
/// 1000 access instances.
fn analyse(claimed: u64, made: u64) -> Result<usize, DataflowError> {
    let text = format!(
        "param N = 9;\nreal A[0..N];\nreal B[0..N];\nfor i = 0 to N do\n  S: B[i] = A[i] @claim({claimed}, {made});\nend\n"
    );
    let kinds = Kinds::core().with(&Claim);
    let (program, diags) = arrayflow::lower::compile_kinds(&text, FileId(0), &kinds);
    let program = program.unwrap_or_else(|| panic!("{diags:?}"));
    let config = Config {
        max_instances: 1000,
        ..Config::default()
    };
    analyze_with(&program, &config, &kinds).map(|f| f.sorted().count())
}

#[test]
fn a_kind_that_makes_more_than_it_claimed_is_stopped() {
    // (claimed, made, stopped)
    let cases = [
        (1, 2, true),
        (0, 1, true),
        (3, 3, false),
        // Claiming more than is made only costs budget.
        (5, 2, false),
        // Kept, 10^8 instances would take many seconds and gigabytes.
        (0, 100_000_000, true),
    ];
    for (claimed, made, stopped) in cases {
        let start = Instant::now();
        let got = analyse(claimed, made);
        let took = start.elapsed();
        match got {
            Err(DataflowError::Eval { what, span }) if stopped => {
                assert!(
                    what.contains("`claim`")
                        && what.contains(&format!("the {claimed} its `count`")),
                    "{what}"
                );
                assert!(!span.is_none());
            }
            Ok(_) if !stopped => {}
            other => panic!("claimed {claimed}, made {made}: {other:?}"),
        }
        assert!(took < Duration::from_secs(20), "{took:?}");
    }
}
