//! Evaluation of a checked rule set with datafrog as the join core: one
//! datafrog `Iteration` per stratum, so every rule is evaluated semi-naively
//! (datafrog joins new tuples against old and new ones only). A rule
//! becomes a pipeline of datafrog operations over rows of variable values:
//! the first positive atom filtered (constants, repeated variables,
//! comparisons), each further atom joined on the variables it shares with
//! the row, negated atoms as antijoins against the (complete, lower-stratum)
//! relation, then the head as a map. Filters are datafrog antijoins against a
//! one-tuple relation `{false}` (datafrog's `from_map` cannot drop tuples).

use super::check::{CAtom, CRule, Rules, Term};
use super::syntax::Cmp;
use super::Symbols;
use arrayflow_model::model::eval::compare;
use datafrog::{Iteration, Relation, Variable};
use smallvec::SmallVec;
use std::collections::HashMap;

/// One tuple: numbers as they are, symbols as their [`Symbols`] id.
pub type Row = Vec<i64>;

/// A tuple inside the evaluation: up to 4 values inline, so that the rows
/// and keys datafrog sorts, merges and clones cost no allocation each.
type Tup = SmallVec<[i64; 4]>;

/// Every relation of a rule set after evaluation, sorted and without
/// duplicates, indexed like `Rules::relations`. An input relation is left
/// empty unless an `.output` or `.check` names it (it is the caller's
/// input, unchanged, and copying it back would cost more than the rules).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    pub relations: Vec<Vec<Row>>,
    /// The input's symbols and the rules' string constants.
    pub symbols: Symbols,
}

/// An operand of a compiled comparison: a row position or a constant.
#[derive(Clone, Copy)]
enum Operand {
    At(usize),
    Const(i64),
}

impl Operand {
    fn get(self, row: &[i64]) -> i64 {
        match self {
            Operand::At(k) => row[k],
            Operand::Const(c) => c,
        }
    }
}

type RowFn = Box<dyn Fn(&Tup) -> Option<Tup>>;

/// One datafrog operation of a stratum's plan.
enum Op {
    /// `dst` gets `f(row)` for each new row of `src` where it is `Some`.
    Filter {
        src: usize,
        tmp: usize,
        dst: usize,
        f: RowFn,
    },
    /// `dst` gets `(key, row)`: the row keyed by the values at `key`.
    Key {
        src: usize,
        dst: usize,
        key: Vec<Operand>,
    },
    /// `dst` gets `out` read from `left ++ right` for equal keys.
    Join {
        left: usize,
        right: usize,
        dst: usize,
        out: Vec<Operand>,
    },
    /// `dst` gets `out` read from each new row of `src`.
    Map {
        src: usize,
        dst: usize,
        out: Vec<Operand>,
    },
    /// `dst` gets the rows of `src` whose key is not in `rel`.
    Anti { src: usize, rel: usize, dst: usize },
}

struct Plan {
    rows: Vec<Variable<Tup>>,
    keyed: Vec<Variable<(Tup, Tup)>>,
    flagged: Vec<Variable<(bool, Tup)>>,
    negs: Vec<Relation<Tup>>,
    ops: Vec<Op>,
    iteration: Iteration,
    /// Relation id → its row variable in this stratum.
    of_rel: HashMap<usize, usize>,
}

impl Plan {
    fn row_var(&mut self) -> usize {
        self.rows.push(self.iteration.variable("row"));
        self.rows.len() - 1
    }

    fn rel_var(&mut self, rel: usize, done: &[Option<Vec<Tup>>]) -> usize {
        if let Some(&v) = self.of_rel.get(&rel) {
            return v;
        }
        let v = self.row_var();
        if let Some(rows) = &done[rel] {
            self.rows[v].extend(rows.iter().cloned());
        }
        self.of_rel.insert(rel, v);
        v
    }

    fn filter(&mut self, src: usize, f: RowFn) -> usize {
        self.flagged.push(self.iteration.variable("flagged"));
        let dst = self.row_var();
        self.ops.push(Op::Filter {
            src,
            tmp: self.flagged.len() - 1,
            dst,
            f,
        });
        dst
    }

    fn key(&mut self, src: usize, key: Vec<Operand>) -> usize {
        self.keyed.push(self.iteration.variable("keyed"));
        let dst = self.keyed.len() - 1;
        self.ops.push(Op::Key { src, dst, key });
        dst
    }

    fn run(&mut self) {
        let reject: Relation<bool> = Relation::from_vec(vec![false]);
        while self.iteration.changed() {
            for op in &self.ops {
                match op {
                    Op::Filter { src, tmp, dst, f } => {
                        self.flagged[*tmp].from_map(&self.rows[*src], |r| match f(r) {
                            Some(x) => (true, x),
                            None => (false, Tup::new()),
                        });
                        self.rows[*dst]
                            .from_antijoin(&self.flagged[*tmp], &reject, |_, r| r.clone());
                    }
                    Op::Key { src, dst, key } => {
                        self.keyed[*dst].from_map(&self.rows[*src], |r| {
                            (key.iter().map(|o| o.get(r)).collect(), r.clone())
                        });
                    }
                    Op::Join {
                        left,
                        right,
                        dst,
                        out,
                    } => {
                        self.rows[*dst].from_join(
                            &self.keyed[*left],
                            &self.keyed[*right],
                            |_, a, b| {
                                out.iter()
                                    .map(|o| match *o {
                                        Operand::At(k) if k < a.len() => a[k],
                                        Operand::At(k) => b[k - a.len()],
                                        Operand::Const(c) => c,
                                    })
                                    .collect()
                            },
                        );
                    }
                    Op::Map { src, dst, out } => {
                        self.rows[*dst]
                            .from_map(&self.rows[*src], |r| out.iter().map(|o| o.get(r)).collect());
                    }
                    Op::Anti { src, rel, dst } => {
                        self.rows[*dst].from_antijoin(
                            &self.keyed[*src],
                            &self.negs[*rel],
                            |_, r| r.clone(),
                        );
                    }
                }
            }
        }
    }
}

/// Evaluates `rules` over the exported relations `inputs` (indexed like the
/// first relations of `rules.relations`), stratum by stratum.
pub fn evaluate(rules: &Rules, inputs: &[Vec<Row>], symbols: &Symbols) -> Output {
    let mut symbols = symbols.clone();
    let n = rules.relations.len();
    let mut done: Vec<Option<Vec<Tup>>> = vec![None; n];
    // Only the inputs read are converted and sorted: the exported facts
    // hold 18 relations, and a rule reads two or three.
    let mut read = vec![false; n];
    for r in &rules.rules {
        for a in r.pos.iter().chain(&r.neg) {
            read[a.rel] = true;
        }
    }
    let mut keep = vec![false; n];
    for &k in rules
        .outputs
        .iter()
        .chain(rules.checks.iter().map(|c| &c.rel))
    {
        read[k] = true;
        keep[k] = true;
    }
    for (k, rows) in inputs.iter().enumerate().take(n) {
        if !read[k] {
            continue;
        }
        let mut rows: Vec<Tup> = rows.iter().map(|r| Tup::from_slice(r)).collect();
        rows.sort_unstable();
        rows.dedup();
        done[k] = Some(rows);
    }
    for stratum in &rules.strata {
        let mut plan = Plan {
            rows: Vec::new(),
            keyed: Vec::new(),
            flagged: Vec::new(),
            negs: Vec::new(),
            ops: Vec::new(),
            iteration: Iteration::new(),
            of_rel: HashMap::new(),
        };
        let heads: Vec<usize> = {
            let mut h: Vec<usize> = stratum.iter().map(|&r| rules.rules[r].head.rel).collect();
            h.sort_unstable();
            h.dedup();
            h
        };
        for &r in stratum {
            compile(&rules.rules[r], &mut plan, &done, &mut symbols);
        }
        plan.run();
        for h in heads {
            let v = plan.of_rel[&h];
            let var = plan.rows[v].clone();
            // Every variable is complete once `changed` is false; only the
            // heads' contents are kept.
            drop(std::mem::take(&mut plan.ops));
            let rel = var.complete();
            done[h] = Some(rel.elements);
        }
    }
    let relations = (done.into_iter().enumerate())
        .map(|(k, rows)| match k >= inputs.len() || keep[k] {
            true => (rows.unwrap_or_default().into_iter())
                .map(|r| r.into_vec())
                .collect(),
            false => Vec::new(),
        })
        .collect();
    Output { relations, symbols }
}

fn constant(t: &Term, symbols: &mut Symbols) -> Option<i64> {
    match t {
        Term::Number(n) => Some(*n),
        Term::Str(s) => Some(symbols.intern(s)),
        _ => None,
    }
}

/// Adds the operations of one rule to the stratum's plan.
fn compile(rule: &CRule, plan: &mut Plan, done: &[Option<Vec<Tup>>], symbols: &mut Symbols) {
    // Position of each variable in the current row.
    let mut at: Vec<Option<usize>> = vec![None; rule.n_vars];
    let mut width = 0usize;
    let mut pending: Vec<(Term, Cmp, Term)> = rule.cmps.clone();
    let head = plan.rel_var(rule.head.rel, done);
    let mut current: Option<usize> = None;

    for (i, atom) in rule.pos.iter().enumerate() {
        let src = plan.rel_var(atom.rel, done);
        // Columns of the atom: checks (constants, repeats) and the new
        // variables it binds, in column order.
        let mut checks: Vec<(usize, Operand)> = Vec::new();
        let mut shared: Vec<(usize, usize)> = Vec::new(); // (column, position in row)
        let mut new_cols: Vec<usize> = Vec::new();
        let mut first_col: HashMap<usize, usize> = HashMap::new();
        for (c, t) in atom.args.iter().enumerate() {
            match t {
                Term::Var(v) => {
                    if let Some(&c0) = first_col.get(v) {
                        checks.push((c, Operand::At(c0)));
                    } else {
                        first_col.insert(*v, c);
                        match at[*v] {
                            Some(p) => shared.push((c, p)),
                            None => new_cols.push(c),
                        }
                    }
                }
                Term::Wild => {}
                t => checks.push((c, Operand::Const(constant(t, symbols).unwrap_or(0)))),
            }
        }
        // Bind the new variables.
        let base = if i == 0 { 0 } else { width };
        for (k, &c) in new_cols.iter().enumerate() {
            if let Term::Var(v) = atom.args[c] {
                at[v] = Some(base + k);
            }
        }
        // Comparisons that become decidable with this atom.
        let (ready, rest): (Vec<_>, Vec<_>) = pending.into_iter().partition(|(a, _, b)| {
            [a, b]
                .iter()
                .all(|t| !matches!(t, Term::Var(v) if at[*v].is_none()))
        });
        pending = rest;
        let cmps: Vec<(Operand, Cmp, Operand)> = ready
            .iter()
            .map(|(a, op, b)| (operand(a, &at, symbols), *op, operand(b, &at, symbols)))
            .collect();

        if i == 0 {
            // The row is the values of the new variables.
            let identity =
                checks.is_empty() && cmps.is_empty() && new_cols.len() == atom.args.len();
            current = Some(if identity {
                src
            } else if checks.is_empty() && cmps.is_empty() {
                // Only `_` columns to drop: a projection.
                let dst = plan.row_var();
                plan.ops.push(Op::Map {
                    src,
                    dst,
                    out: new_cols.iter().map(|&c| Operand::At(c)).collect(),
                });
                dst
            } else {
                let cols = new_cols.clone();
                plan.filter(
                    src,
                    Box::new(move |r: &Tup| {
                        if !checks.iter().all(|&(c, o)| r[c] == o.get(r)) {
                            return None;
                        }
                        let row: Tup = cols.iter().map(|&c| r[c]).collect();
                        cmps.iter()
                            .all(|&(a, op, b)| compare(op, a.get(&row), b.get(&row)))
                            .then_some(row)
                    }),
                )
            });
            width = new_cols.len();
        } else {
            let cur = current.expect("a row before the second atom");
            let left = plan.key(cur, shared.iter().map(|&(_, p)| Operand::At(p)).collect());
            // The right side: the atom's new columns, keyed by its shared ones.
            let right_rows = if checks.is_empty() {
                src
            } else {
                plan.filter(
                    src,
                    Box::new(move |r: &Tup| {
                        checks
                            .iter()
                            .all(|&(c, o)| r[c] == o.get(r))
                            .then(|| r.clone())
                    }),
                )
            };
            let right_key: Vec<Operand> = shared.iter().map(|&(c, _)| Operand::At(c)).collect();
            // Keyed by the shared columns, carrying only the new ones.
            plan.keyed.push(plan.iteration.variable("keyed"));
            let right = plan.keyed.len() - 1;
            plan.ops.push(Op::Key {
                src: right_rows,
                dst: right,
                key: right_key,
            });
            let w = width;
            // Where a variable of the new row is in `left ++ right`.
            let concat = |p: usize| if p < w { p } else { w + new_cols[p - w] };
            if i + 1 == rule.pos.len() && rule.neg.is_empty() && cmps.is_empty() {
                // The last join makes the head's tuples directly.
                let out = rule
                    .head
                    .args
                    .iter()
                    .map(|t| match operand(t, &at, symbols) {
                        Operand::At(p) => Operand::At(concat(p)),
                        c => c,
                    })
                    .collect();
                plan.ops.push(Op::Join {
                    left,
                    right,
                    dst: head,
                    out,
                });
                return;
            }
            let out = (0..w)
                .chain(new_cols.iter().map(|&c| w + c))
                .map(Operand::At)
                .collect();
            let joined = plan.row_var();
            plan.ops.push(Op::Join {
                left,
                right,
                dst: joined,
                out,
            });
            width += new_cols.len();
            current = Some(if cmps.is_empty() {
                joined
            } else {
                plan.filter(
                    joined,
                    Box::new(move |row: &Tup| {
                        cmps.iter()
                            .all(|&(a, op, b)| compare(op, a.get(row), b.get(row)))
                            .then(|| row.clone())
                    }),
                )
            });
        }
    }

    let head_ops: Vec<Operand> = rule
        .head
        .args
        .iter()
        .map(|t| operand(t, &at, symbols))
        .collect();
    let Some(mut cur) = current else {
        // No positive atom: a fact, or constants compared with constants.
        let cmps_hold = pending.iter().all(|(a, op, b)| {
            compare(
                *op,
                operand(a, &at, symbols).get(&[]),
                operand(b, &at, symbols).get(&[]),
            )
        });
        // Negated atoms of constants (and `_`): against the complete relation.
        let negs_hold = rule.neg.iter().all(|n| {
            let rows = done[n.rel].as_deref().unwrap_or(&[]);
            !rows.iter().any(|r| {
                n.args.iter().zip(r).all(|(t, &x)| match t {
                    Term::Wild => true,
                    t => operand(t, &at, symbols).get(&[]) == x,
                })
            })
        });
        let ok = cmps_hold && negs_hold;
        if ok {
            let row: Tup = head_ops.iter().map(|o| o.get(&[])).collect();
            plan.rows[head].extend([row]);
        }
        return;
    };
    for n in &rule.neg {
        cur = antijoin(n, cur, &at, plan, done, symbols);
    }
    plan.ops.push(Op::Map {
        src: cur,
        dst: head,
        out: head_ops,
    });
}

fn operand(t: &Term, at: &[Option<usize>], symbols: &mut Symbols) -> Operand {
    match t {
        Term::Var(v) => Operand::At(at[*v].expect("checked: variables are bound")),
        t => Operand::Const(constant(t, symbols).unwrap_or(0)),
    }
}

/// The rows of `cur` with no tuple of the negated atom `n`.
fn antijoin(
    n: &CAtom,
    cur: usize,
    at: &[Option<usize>],
    plan: &mut Plan,
    done: &[Option<Vec<Tup>>],
    symbols: &mut Symbols,
) -> usize {
    let cols: Vec<usize> = (0..n.args.len())
        .filter(|&c| !matches!(n.args[c], Term::Wild))
        .collect();
    let key: Vec<Operand> = cols
        .iter()
        .map(|&c| operand(&n.args[c], at, symbols))
        .collect();
    let rows = done[n.rel].as_deref().unwrap_or(&[]);
    plan.negs.push(Relation::from_iter(
        rows.iter()
            .map(|r| cols.iter().map(|&c| r[c]).collect::<Tup>()),
    ));
    let rel = plan.negs.len() - 1;
    let src = plan.key(cur, key);
    let dst = plan.row_var();
    plan.ops.push(Op::Anti { src, rel, dst });
    dst
}
