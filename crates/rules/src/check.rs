//! From parsed clauses to a checked rule set: relations resolved against the
//! declarations and the exported schema, arities and column types checked,
//! every variable made safe, negation stratified. Each failure is a
//! diagnostic with the span of the offending clause part (codes E1002–E1008,
//! docs/language.md).

use super::syntax::{self, Atom, Cmp, Item, Literal, Term as STerm, Type};
use arrayflow_model::diagnostics::{Diagnostic, FileId};
use arrayflow_model::model::Span;
use std::collections::HashMap;

/// A relation of a rule set: exported (an input) or declared by the rules.
#[derive(Clone, Debug, PartialEq)]
pub struct Relation {
    pub name: String,
    pub cols: Vec<(String, Type)>,
    pub exported: bool,
    /// The declaration (Span::NONE for an exported relation).
    pub span: Span,
}

/// A term of a checked rule.
#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    /// A variable, numbered per rule.
    Var(usize),
    Wild,
    Number(i64),
    /// A string constant, interned at evaluation.
    Str(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct CAtom {
    pub rel: usize,
    pub args: Vec<Term>,
}

/// A checked rule: the positive atoms in the order written, then the
/// negated atoms and the comparisons (all of whose variables the positive
/// atoms bind).
#[derive(Clone, Debug, PartialEq)]
pub struct CRule {
    pub head: CAtom,
    pub pos: Vec<CAtom>,
    pub neg: Vec<CAtom>,
    pub cmps: Vec<(Term, Cmp, Term)>,
    pub n_vars: usize,
    pub span: Span,
}

/// A `.check`/`.deny` directive on a declared relation.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub rel: usize,
    pub message: String,
    pub deny: bool,
}

/// A checked rule set, ready to evaluate.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Rules {
    pub relations: Vec<Relation>,
    pub rules: Vec<CRule>,
    /// Strata in evaluation order: the rules of each (indices into `rules`).
    pub strata: Vec<Vec<usize>>,
    pub outputs: Vec<usize>,
    pub checks: Vec<Check>,
}

impl Rules {
    pub fn relation(&self, name: &str) -> Option<usize> {
        self.relations.iter().position(|r| r.name == name)
    }

    /// Whether any rule, output or check reads relation `name`: an exported
    /// relation nothing reads need not be computed.
    pub fn reads(&self, name: &str) -> bool {
        let Some(rel) = self.relation(name) else {
            return false;
        };
        self.outputs.contains(&rel)
            || self.checks.iter().any(|c| c.rel == rel)
            || (self.rules.iter())
                .flat_map(|r| r.pos.iter().chain(&r.neg))
                .any(|a| a.rel == rel)
    }
}

struct Checker {
    file: FileId,
    rels: Vec<Relation>,
    by_name: HashMap<String, usize>,
    diags: Vec<Diagnostic>,
}

impl Checker {
    fn err(&mut self, code: &'static str, message: String, span: Span, label: &str) {
        self.diags
            .push(Diagnostic::error(code, message).primary(self.file, span, label));
    }

    /// The relation `name` names, or E1002.
    fn lookup(&mut self, name: &str, span: Span) -> Option<usize> {
        let found = self.by_name.get(name).copied();
        if found.is_none() {
            self.err(
                "E1002",
                format!("unknown relation `{name}`"),
                span,
                "neither exported nor declared with `.decl`",
            );
        }
        found
    }

    /// The relation an atom names, with its arity checked.
    fn resolve(&mut self, a: &Atom) -> Option<usize> {
        let r = self.lookup(&a.rel, a.rel_span)?;
        let want = self.rels[r].cols.len();
        if a.args.len() != want {
            self.err(
                "E1003",
                format!(
                    "`{}` has {want} column{}, this atom gives {}",
                    a.rel,
                    if want == 1 { "" } else { "s" },
                    a.args.len()
                ),
                a.span,
                &format!("expected {want}"),
            );
            return None;
        }
        Some(r)
    }

    fn rule(&mut self, r: &syntax::Rule) -> Option<CRule> {
        let mut vars: HashMap<String, usize> = HashMap::new();
        // Whether each variable is bound by a positive atom, and its type.
        let mut bound: Vec<Option<Type>> = Vec::new();
        let mut ok = true;
        let var = |name: &str, vars: &mut HashMap<String, usize>, bound: &mut Vec<_>| {
            let n = vars.len();
            *vars.entry(name.to_string()).or_insert_with(|| {
                bound.push(None);
                n
            })
        };
        let head_rel = self.resolve(&r.head);
        if let Some(h) = head_rel {
            if self.rels[h].exported {
                self.err(
                    "E1007",
                    format!(
                        "`{}` is an exported relation; rules cannot add to it",
                        r.head.rel
                    ),
                    r.head.rel_span,
                    "exported relation in a head",
                );
                ok = false;
            }
        }
        let mut pos = Vec::new();
        let mut neg = Vec::new();
        let mut cmps = Vec::new();
        // Positive atoms first: they bind.
        // Variables of positive atoms that did not resolve: their atom's
        // error is enough, so their uses are not also called unsafe.
        let mut unresolved: Vec<&str> = Vec::new();
        for l in &r.body {
            if let Literal::Pos(a) = l {
                let Some(rel) = self.resolve(a) else {
                    ok = false;
                    unresolved.extend(a.args.iter().filter_map(|t| match t {
                        STerm::Var(name, _) => Some(name.as_str()),
                        _ => None,
                    }));
                    continue;
                };
                let mut args = Vec::new();
                for (k, t) in a.args.iter().enumerate() {
                    let ty = self.rels[rel].cols[k].1;
                    let term = match t {
                        STerm::Var(name, span) => {
                            let v = var(name, &mut vars, &mut bound);
                            match bound[v] {
                                Some(t0) if t0.is_symbol() != ty.is_symbol() => {
                                    self.type_error(name, t0, ty, *span);
                                    ok = false;
                                }
                                Some(_) => {}
                                None => bound[v] = Some(ty),
                            }
                            Term::Var(v)
                        }
                        _ => match self.constant(t, ty) {
                            Some(c) => c,
                            None => {
                                ok = false;
                                Term::Wild
                            }
                        },
                    };
                    args.push(term);
                }
                pos.push(CAtom { rel, args });
            }
        }
        let use_term = |c: &mut Self,
                        t: &STerm,
                        want: Option<Type>,
                        what: &str|
         -> Option<(Term, Option<Type>)> {
            match t {
                STerm::Var(name, span) => {
                    let Some(ty) = vars.get(name).and_then(|&v| bound[v]) else {
                        if !unresolved.contains(&name.as_str()) {
                            c.unsafe_var(name, *span, what);
                        }
                        return None;
                    };
                    let v = vars[name];
                    if let Some(w) = want {
                        if w.is_symbol() != ty.is_symbol() {
                            c.type_error(name, ty, w, *span);
                            return None;
                        }
                    }
                    Some((Term::Var(v), Some(ty)))
                }
                STerm::Wild(span) if what != "a negated atom" => {
                    c.err(
                        "E1004",
                        format!("`_` cannot stand in {what}"),
                        *span,
                        "no value to give it",
                    );
                    None
                }
                STerm::Wild(_) => Some((Term::Wild, want)),
                _ => match want {
                    Some(w) => c.constant(t, w).map(|x| (x, want)),
                    None => Some(match t {
                        STerm::Number(n, _) => (Term::Number(*n), Some(Type::Number)),
                        STerm::Str(s, _) => (Term::Str(s.clone()), Some(Type::Symbol)),
                        _ => unreachable!(),
                    }),
                },
            }
        };
        for l in &r.body {
            match l {
                Literal::Pos(_) => {}
                Literal::Neg(a, _) => {
                    let Some(rel) = self.resolve(a) else {
                        ok = false;
                        continue;
                    };
                    let mut args = Vec::new();
                    for (k, t) in a.args.iter().enumerate() {
                        let ty = self.rels[rel].cols[k].1;
                        match use_term(self, t, Some(ty), "a negated atom") {
                            Some((x, _)) => args.push(x),
                            None => ok = false,
                        }
                    }
                    neg.push(CAtom { rel, args });
                }
                Literal::Cmp(a, op, b, span) => {
                    let x = use_term(self, a, None, "a comparison");
                    let y = use_term(self, b, None, "a comparison");
                    let (Some((x, tx)), Some((y, ty))) = (x, y) else {
                        ok = false;
                        continue;
                    };
                    let (tx, ty) = (tx.unwrap_or(Type::Number), ty.unwrap_or(Type::Number));
                    if tx.is_symbol() != ty.is_symbol() {
                        self.err(
                            "E1006",
                            format!(
                                "this comparison compares a {} with a {}",
                                tx.name(),
                                ty.name()
                            ),
                            *span,
                            "operands of different types",
                        );
                        ok = false;
                    } else if syntax::orders(*op) && tx.is_symbol() {
                        self.err(
                            "E1006",
                            "symbols can only be compared with `=` and `!=`".into(),
                            *span,
                            "ordering symbols",
                        );
                        ok = false;
                    }
                    cmps.push((x, *op, y));
                }
            }
        }
        let mut head_args = Vec::new();
        if let Some(h) = head_rel {
            for (k, t) in r.head.args.iter().enumerate() {
                let ty = self.rels[h].cols[k].1;
                match use_term(self, t, Some(ty), "a rule's head") {
                    Some((x, _)) => head_args.push(x),
                    None => ok = false,
                }
            }
        }
        let head = CAtom {
            rel: head_rel?,
            args: head_args,
        };
        ok.then_some(CRule {
            head,
            pos,
            neg,
            cmps,
            n_vars: vars.len(),
            span: r.span,
        })
    }

    fn constant(&mut self, t: &STerm, ty: Type) -> Option<Term> {
        match (t, ty.is_symbol()) {
            (STerm::Wild(_), _) => Some(Term::Wild),
            (STerm::Number(n, _), false) => Some(Term::Number(*n)),
            (STerm::Str(s, _), true) => Some(Term::Str(s.clone())),
            (STerm::Number(_, span), true) | (STerm::Str(_, span), false) => {
                self.err(
                    "E1006",
                    format!("this column is a {}; the constant is not", ty.name()),
                    *span,
                    "wrong type of constant",
                );
                None
            }
            (STerm::Var(..), _) => unreachable!("variables are handled by the caller"),
        }
    }

    fn type_error(&mut self, name: &str, had: Type, want: Type, span: Span) {
        self.err(
            "E1006",
            format!(
                "`{name}` is a {} here but a {} where it is bound",
                want.name(),
                had.name()
            ),
            span,
            "type mismatch",
        );
    }

    fn unsafe_var(&mut self, name: &str, span: Span, what: &str) {
        self.err(
            "E1004",
            format!("variable `{name}` in {what} is not bound by a positive atom of the body"),
            span,
            "unsafe variable",
        );
    }
}

/// Checks parsed clauses against the exported relations. Returns the rule
/// set, or the diagnostics when any clause is wrong.
pub fn check(
    items: &[Item],
    exported: &[(String, Vec<(String, Type)>)],
    file: FileId,
) -> Result<Rules, Vec<Diagnostic>> {
    let mut c = Checker {
        file,
        rels: Vec::new(),
        by_name: HashMap::new(),
        diags: Vec::new(),
    };
    for (name, cols) in exported {
        c.by_name.insert(name.clone(), c.rels.len());
        c.rels.push(Relation {
            name: name.clone(),
            cols: cols.clone(),
            exported: true,
            span: Span::NONE,
        });
    }
    for it in items {
        if let Item::Decl(d) = it {
            if let Some(&r) = c.by_name.get(&d.name) {
                let what = if c.rels[r].exported {
                    "an exported relation".to_string()
                } else {
                    "declared twice".to_string()
                };
                let mut diag = Diagnostic::error("E1007", format!("`{}` is {what}", d.name))
                    .primary(file, d.name_span, "declared again here");
                if !c.rels[r].exported {
                    diag = diag.secondary(file, c.rels[r].span, "first declared here");
                }
                c.diags.push(diag);
                continue;
            }
            c.by_name.insert(d.name.clone(), c.rels.len());
            c.rels.push(Relation {
                name: d.name.clone(),
                cols: d.cols.clone(),
                exported: false,
                span: d.span,
            });
        }
    }
    let mut rules = Vec::new();
    let mut rule_spans = Vec::new();
    let mut outputs = Vec::new();
    let mut checks = Vec::new();
    for it in items {
        match it {
            Item::Decl(_) => {}
            Item::Rule(r) => {
                if let Some(cr) = c.rule(r) {
                    rules.push(cr);
                    rule_spans.push(r);
                }
            }
            Item::Output(name, span) | Item::Input(name, span) => {
                if let Some(r) = c.lookup(name, *span) {
                    if matches!(it, Item::Output(..)) {
                        outputs.push(r)
                    }
                }
            }
            Item::Check(d) => {
                if let Some(ch) = check_directive(&mut c, d) {
                    checks.push(ch);
                }
            }
        }
    }
    let strata = stratify(&mut c, &rules, &rule_spans);
    if !c.diags.is_empty() {
        return Err(c.diags);
    }
    Ok(Rules {
        relations: c.rels,
        rules,
        strata,
        outputs,
        checks,
    })
}

fn check_directive(c: &mut Checker, d: &syntax::CheckDirective) -> Option<Check> {
    let rel = c.lookup(&d.rel, d.rel_span)?;
    let cols = &c.rels[rel].cols;
    if !cols
        .iter()
        .any(|(_, t)| matches!(t, Type::Site | Type::Access | Type::Loop))
    {
        c.err(
            "E1008",
            format!(
                "`{}` has no column of type site, access or loop, so its tuples point nowhere in the program",
                d.rel
            ),
            d.rel_span,
            "a check relation needs a site, access or loop column",
        );
        return None;
    }
    for name in placeholders(&d.message) {
        if !cols.iter().any(|(n, _)| *n == name) {
            c.err(
                "E1008",
                format!("`{{{name}}}` names no column of `{}`", d.rel),
                d.message_span,
                "unknown column in the message",
            );
            return None;
        }
    }
    Some(Check {
        rel,
        message: d.message.clone(),
        deny: d.deny,
    })
}

/// The `{name}` placeholders of a check message.
pub fn placeholders(message: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = message;
    while let Some(k) = rest.find('{') {
        match rest[k..].find('}') {
            Some(e) => {
                out.push(rest[k + 1..k + e].to_string());
                rest = &rest[k + e + 1..];
            }
            None => break,
        }
    }
    out
}

/// Strata of the declared relations (Tarjan's strongly connected
/// components of the dependency graph, in topological order); a negated
/// atom inside a component is E1005.
fn stratify(c: &mut Checker, rules: &[CRule], spans: &[&syntax::Rule]) -> Vec<Vec<usize>> {
    let n = c.rels.len();
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); n];
    for r in rules {
        for a in r.pos.iter().chain(&r.neg) {
            edges[r.head.rel].push(a.rel);
        }
    }
    // Iterative Tarjan: components come out dependencies first.
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on = vec![false; n];
    let mut stack = Vec::new();
    let mut comp = vec![usize::MAX; n];
    let mut comps: Vec<Vec<usize>> = Vec::new();
    let mut counter = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        index[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        on[root] = true;
        while let Some(&mut (v, ref mut k)) = work.last_mut() {
            if *k < edges[v].len() {
                let w = edges[v][*k];
                *k += 1;
                if index[w] == usize::MAX {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on[w] = true;
                    work.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                work.pop();
                if let Some(&(u, _)) = work.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut members = Vec::new();
                    while let Some(w) = stack.pop() {
                        on[w] = false;
                        comp[w] = comps.len();
                        members.push(w);
                        if w == v {
                            break;
                        }
                    }
                    comps.push(members);
                }
            }
        }
    }
    for (r, s) in rules.iter().zip(spans) {
        for a in &r.neg {
            if comp[a.rel] == comp[r.head.rel] {
                let lit = s.body.iter().find_map(|l| match l {
                    Literal::Neg(x, span) if x.rel == c.rels[a.rel].name => Some(*span),
                    _ => None,
                });
                c.diags.push(
                    Diagnostic::error(
                        "E1005",
                        format!(
                            "`{}` depends on its own negation through `{}`: the rules cannot be stratified",
                            c.rels[r.head.rel].name, c.rels[a.rel].name
                        ),
                    )
                    .primary(c.file, lit.unwrap_or(s.span), "negation inside a recursive cycle")
                    .secondary(c.file, s.head.span, "this head is in the same cycle"),
                );
            }
        }
    }
    comps
        .iter()
        .map(|members| {
            (0..rules.len())
                .filter(|&k| members.contains(&rules[k].head.rel))
                .collect::<Vec<_>>()
        })
        .filter(|s: &Vec<usize>| !s.is_empty())
        .collect()
}
