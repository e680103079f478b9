//! Hostile inputs: deep nests, huge numbers, exotic guards. Never a panic,
//! never a hang, and a conservative answer says why.

use arrayflow::dependence::{analyze, Config, PairReport, Tester};
use arrayflow::diagnostics::{has_errors, SourceFiles};
use arrayflow::model::Program;

fn compile(source: &str) -> Program {
    let mut files = SourceFiles::new();
    let id = files.add("test.loop", source.to_string());
    let (program, diags) = arrayflow::lower::compile(files.source(id), id);
    assert!(!has_errors(&diags), "{}", files.render_all(&diags));
    program.expect("lowered")
}

fn deps(source: &str) -> Vec<PairReport> {
    analyze(&compile(source), &mut Tester::new(Config::default()))
}

fn pair<'a>(pairs: &'a [PairReport], src: &str, dst: &str) -> &'a PairReport {
    pairs
        .iter()
        .find(|p| p.src.to_string() == src && p.dst.to_string() == dst)
        .unwrap_or_else(|| panic!("no pair {src} -> {dst}"))
}

/// `x = x + 1` at the bottom of `depth` loops `for ik = 1 to upper`.
fn scalar_nest(depth: usize, upper: &str) -> String {
    let mut src = String::from("param N;\nreal x;\n");
    for k in 0..depth {
        src.push_str(&format!("for i{k} = 1 to {upper} do\n"));
    }
    src.push_str("S: x = x + 1;\n");
    src.push_str(&"end\n".repeat(depth));
    src
}

/// 3^25 direction vectors are possible; the refinement budget stops it.
#[test]
fn deep_symbolic_nest_is_capped() {
    let src = scalar_nest(25, "N");
    let config = Config {
        max_direction_tests: 60,
        ..Config::default()
    };
    let pairs = analyze(&compile(&src), &mut Tester::new(config));
    let p = pair(&pairs, "S write", "S read 0");
    assert!(p.dependent);
    assert!(!p.exact);
    assert!(p.notes.iter().any(|n| n.contains("cap")), "{:?}", p.notes);
    // Every direction is still covered: the first component is refined.
    assert!(p.directions.iter().any(|d| d[0].symbol() == "+"));
}

/// The same nest with constant bounds: every index unused, `*` without tests.
#[test]
fn deep_constant_nest_is_exact() {
    let depth = 40;
    let pairs = deps(&scalar_nest(depth, "3"));
    let p = pair(&pairs, "S write", "S write");
    assert!(p.exact && p.dependent);
    // (*, ..., *) minus the zero vector: 2 * depth vectors.
    assert_eq!(p.directions.len(), 2 * depth);
}

#[test]
fn huge_coefficients_do_not_panic() {
    let big = i64::MAX;
    let src = format!(
        "real a[0..1];\nfor i = 1 to {big} do\n  S: a[{big} * i - {big}] = a[i - 1] + a[4611686018427387904 * i];\nend\n"
    );
    let pairs = deps(&src);
    for p in &pairs {
        // Whatever is said is either exact or says why not.
        assert!(p.exact || !p.notes.is_empty(), "{p:?}");
    }
    // a[MAX*i - MAX] meets a[i - 1] at i = 1, i' = 1 only: the (0) direction.
    let p = pair(&pairs, "S write", "S read 0");
    assert!(p.dependent);
}

#[test]
fn guards_of_every_shape() {
    let src = "param N;\nreal a[0..100];\nfor i = 0 to N do\n  if i != 3 or i * i > N then\n    S: a[i] = a[i + 1];\n  elsif not (i < 2 and a[i] > 0) then\n    T: a[2 * i] = f(i);\n  else\n    U: use(a[i / 2]);\n  end\n  while a[i] > f(i) do\n    W: a[i] = 0;\n  end\nend\n";
    let pairs = deps(src);
    assert!(!pairs.is_empty());
    let s = pair(&pairs, "S write", "S read 0");
    // The `or` guard is ignored (conservatively), and the answer says so.
    assert!(s.dependent);
    assert!(!s.exact && !s.notes.is_empty());
    // S and T are in different branches: same cell in the same iteration
    // would need both; a[i] = a[2i'] with i = i' only at i = 0.
    let st = pair(&pairs, "S write", "T write");
    assert!(st.directions.iter().all(|d| d[0].symbol() != "0"), "{st:?}");
}

#[test]
fn empty_loops_are_independent() {
    let src = "real a[0..10];\nfor i = 5 to 4 do\n  S: a[i] = a[i];\nend\nfor j = 1 to 3 do\n  for k = 2 to 1 do\n    T: a[0] = 1;\n  end\nend\n";
    let pairs = deps(src);
    for p in &pairs {
        assert!(!p.dependent, "{p:?}");
        assert!(p.exact);
    }
}
