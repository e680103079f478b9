//! Constraint systems of digest §1 against tests/data/deps-systems.txt, both
//! through the cascade and through each applicable test on its own.

use arrayflow::dependence::{
    acyclic, fourier, residue, svpc, Config, MemoMode, Problem, Rows, Tester,
};

/// `Σ c·t + k` parsed from text like `2 t1 - t3 + 4`: (coefficients by
/// variable number, constant).
fn linear(text: &str) -> (Vec<(usize, i64)>, i64) {
    let mut terms = Vec::new();
    let mut constant = 0;
    let spaced = text
        .replace('-', " - ")
        .replace('+', " + ")
        .replace('*', " ");
    let mut sign = 1;
    let mut coeff: Option<i64> = None;
    for tok in spaced.split_whitespace() {
        match tok {
            "+" => sign = 1,
            "-" => sign = -sign,
            t if t.starts_with('t') => {
                let v: usize = t[1..].parse().expect("variable");
                terms.push((v - 1, sign * coeff.take().unwrap_or(1)));
                sign = 1;
            }
            t => {
                let k: i64 = t.parse().expect("integer");
                if let Some(c) = coeff.replace(k) {
                    constant += sign * c;
                    sign = 1;
                }
            }
        }
    }
    if let Some(c) = coeff {
        constant += sign * c;
    }
    (terms, constant)
}

/// Terms, right-hand side, and whether it is an equality.
type Row = (Vec<(usize, i64)>, i64, bool);

fn system(text: &str) -> Problem {
    let mut rows: Vec<Row> = Vec::new();
    let mut n = 0;
    for c in text.split(';') {
        // Split a chain on its operators, keeping them.
        let mut parts = Vec::new();
        let mut ops = Vec::new();
        let mut rest = c.trim();
        while let Some(pos) = rest.find(['<', '>', '=']) {
            parts.push(rest[..pos].to_string());
            let op_len = if rest[pos + 1..].starts_with('=') {
                2
            } else {
                1
            };
            ops.push(rest[pos..pos + op_len].to_string());
            rest = &rest[pos + op_len..];
        }
        parts.push(rest.to_string());
        for (k, op) in ops.iter().enumerate() {
            let (l, lc) = linear(&parts[k]);
            let (r, rc) = linear(&parts[k + 1]);
            // l - r (op) rc - lc
            let mut diff = l.clone();
            diff.extend(r.iter().map(|&(v, c)| (v, -c)));
            n = diff.iter().map(|&(v, _)| v + 1).fold(n, usize::max);
            let b = rc - lc;
            let neg = |d: &[(usize, i64)]| d.iter().map(|&(v, c)| (v, -c)).collect::<Vec<_>>();
            match op.as_str() {
                "<=" => rows.push((diff, b, false)),
                "<" => rows.push((diff, b - 1, false)),
                ">=" => rows.push((neg(&diff), -b, false)),
                ">" => rows.push((neg(&diff), -b - 1, false)),
                "=" => rows.push((diff, b, true)),
                other => panic!("operator {other}"),
            }
        }
    }
    let mut p = Problem::new(n);
    for (terms, b, eq) in rows {
        let mut dense = vec![0i64; n];
        for (v, c) in terms {
            dense[v] += c;
        }
        if eq {
            p.add_eq(&dense, b);
        } else {
            p.add_le(&dense, b);
        }
    }
    p
}

struct Case {
    name: String,
    dependent: bool,
    decided_by: String,
    problem: Problem,
}

fn cases() -> Vec<Case> {
    include_str!("data/deps-systems.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('|').map(str::trim).collect();
            assert_eq!(f.len(), 4, "{l}");
            Case {
                name: f[0].into(),
                dependent: f[1] == "dependent",
                decided_by: f[2].into(),
                problem: system(f[3]),
            }
        })
        .collect()
}

#[test]
fn the_parser_reads_what_it_should() {
    let p = system("1 <= t1 + 10 <= 10; 2 t1 <= 2 t3 - 7; t1 + 2 = t2");
    assert_eq!(p.n(), 3);
    assert!(p.holds(&[-9, -7, 0]));
    assert!(!p.holds(&[-10, -8, 0]));
    assert!(!p.holds(&[-9, -7, -6]));
}

#[test]
fn cascade_matches_the_digest() {
    let cases = cases();
    assert!(cases.len() >= 10);
    for c in &cases {
        let mut t = Tester::new(Config {
            memo: MemoMode::Off,
            ..Config::default()
        });
        let a = t.test(&c.problem, &vec![false; c.problem.n()]);
        assert_eq!(a.dependent(), c.dependent, "{}", c.name);
        assert!(a.exact(), "{}", c.name);
        assert_eq!(a.decided_by.name(), c.decided_by, "{}", c.name);
    }
}

/// Each test alone, on every equality-free case it applies to, gives the
/// stated verdict.
#[test]
fn each_test_alone_agrees_where_it_applies() {
    for c in cases().iter().filter(|c| c.problem.eqs.is_empty()) {
        let rows: &Rows<i64> = &c.problem.ineqs;
        if let Some(dep) = svpc::test(rows).unwrap() {
            assert_eq!(dep, c.dependent, "svpc on {}", c.name);
        }
        match acyclic::test(rows).unwrap() {
            acyclic::Outcome::Dependent => assert!(c.dependent, "acyclic on {}", c.name),
            acyclic::Outcome::Independent => assert!(!c.dependent, "acyclic on {}", c.name),
            acyclic::Outcome::Stuck(_) => {}
        }
        if let Some(dep) = residue::test(rows).unwrap() {
            assert_eq!(dep, c.dependent, "loop residue on {}", c.name);
        }
        match fourier::test(rows, fourier::Limits::default()).unwrap().0 {
            fourier::Outcome::Dependent => assert!(c.dependent, "fm on {}", c.name),
            fourier::Outcome::Independent => assert!(!c.dependent, "fm on {}", c.name),
            other => panic!("fm on {}: {other:?}", c.name),
        }
    }
}

/// The digest's Loop Residue example, given to that test directly (the
/// cascade hands it to the Acyclic test first).
#[test]
fn loop_residue_example_directly() {
    let p = system("1 <= t1 <= 10; 1 <= t2 <= 10; 0 <= t3 <= 4; t2 <= t1; 2 t1 <= 2 t3 - 7");
    assert_eq!(residue::test(&p.ineqs).unwrap(), Some(false));
}
