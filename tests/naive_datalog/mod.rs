//! A naive bottom-up Datalog evaluator, the reference the datafrog
//! evaluator is tested against (tests only). Per stratum, every rule is
//! applied to all tuples (nested loops over its positive atoms, in order)
//! until nothing new is derived; negated atoms look at the relation as it
//! is (complete: the stratification puts it in an earlier stratum).

use arrayflow::datalog::check::{CAtom, Rules, Term};
use arrayflow::datalog::{Row, Symbols};
use std::collections::BTreeSet;

fn value(t: &Term, env: &[Option<i64>], symbols: &mut Symbols) -> Option<i64> {
    match t {
        Term::Var(v) => env[*v],
        Term::Number(n) => Some(*n),
        Term::Str(s) => Some(symbols.intern(s)),
        Term::Wild => None,
    }
}

/// Extends `env` so that `atom` matches `row`; false when it cannot.
fn unify(atom: &CAtom, row: &[i64], env: &mut [Option<i64>], symbols: &mut Symbols) -> bool {
    for (t, &x) in atom.args.iter().zip(row) {
        match t {
            Term::Wild => {}
            Term::Var(v) => match env[*v] {
                Some(y) if y != x => return false,
                Some(_) => {}
                None => env[*v] = Some(x),
            },
            t => {
                if value(t, env, symbols) != Some(x) {
                    return false;
                }
            }
        }
    }
    true
}

pub fn evaluate(rules: &Rules, inputs: &[Vec<Row>], symbols: &Symbols) -> (Vec<Vec<Row>>, Symbols) {
    let mut symbols = symbols.clone();
    let mut rels: Vec<BTreeSet<Row>> = vec![BTreeSet::new(); rules.relations.len()];
    for (k, rows) in inputs.iter().enumerate() {
        rels[k] = rows.iter().cloned().collect();
    }
    for stratum in &rules.strata {
        loop {
            let mut new = Vec::new();
            for &r in stratum {
                let rule = &rules.rules[r];
                let mut envs: Vec<Vec<Option<i64>>> = vec![vec![None; rule.n_vars]];
                for atom in &rule.pos {
                    let mut next = Vec::new();
                    for env in &envs {
                        for row in &rels[atom.rel] {
                            let mut e = env.clone();
                            if unify(atom, row, &mut e, &mut symbols) {
                                next.push(e);
                            }
                        }
                    }
                    envs = next;
                }
                for env in envs {
                    let cmps_hold = rule.cmps.iter().all(|(a, op, b)| {
                        let x = value(a, &env, &mut symbols).unwrap();
                        let y = value(b, &env, &mut symbols).unwrap();
                        arrayflow::model::eval::compare(*op, x, y)
                    });
                    let negs_hold = rule.neg.iter().all(|n| {
                        !rels[n.rel].iter().any(|row| {
                            let mut e = env.clone();
                            unify(n, row, &mut e, &mut symbols)
                        })
                    });
                    if cmps_hold && negs_hold {
                        let head: Row = rule
                            .head
                            .args
                            .iter()
                            .map(|t| value(t, &env, &mut symbols).unwrap())
                            .collect();
                        if !rels[rule.head.rel].contains(&head) {
                            new.push((rule.head.rel, head));
                        }
                    }
                }
            }
            if new.is_empty() {
                break;
            }
            for (r, row) in new {
                rels[r].insert(row);
            }
        }
    }
    (
        rels.into_iter().map(|s| s.into_iter().collect()).collect(),
        symbols,
    )
}
