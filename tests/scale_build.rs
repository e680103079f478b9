//! The program builder at scale: finding a declared array by name costs one
//! look-up, whatever the number of arrays (100,000 declarations took 25 s
//! to check when each searched the arrays before it).

use arrayflow::model::builder::{BuildError, ProgramBuilder};
use arrayflow::model::Expr;

/// `n` arrays `A<k>[1..2]`, then `A0` again; the records looked at.
fn declare(n: usize) -> u64 {
    let mut b = ProgramBuilder::new();
    for k in 0..n {
        b.array(&format!("A{k}"), vec![(Expr::int(1), Expr::int(2))])
            .expect("a new name");
    }
    let again = b.array("A0", vec![(Expr::int(1), Expr::int(2))]);
    assert!(matches!(again, Err(BuildError::Duplicate(n)) if n == "A0"));
    // Rolled back, a name can be declared again.
    let m = b.mark();
    b.array("B", vec![]).expect("B is new");
    b.rollback(m);
    b.array("B", vec![]).expect("B was rolled back");
    b.names_looked_at()
}

#[test]
fn declarations_look_at_one_record_each() {
    let (small, large) = (declare(10_000), declare(20_000));
    // One look-up per declaration: the n + 3 made above.
    assert_eq!(small, 10_003);
    assert_eq!(large, 20_003);
}
