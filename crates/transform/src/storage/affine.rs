//! An affine schedule in isl notation (`expand --transform contract
//! --schedule FILE`): `[n] -> { R[i] -> [0, i]; S[i, j] -> [j, i] }` gives
//! every instance of a statement a time vector, affine in its loop counters
//! (bound by position: the tuple names the loops around the statement,
//! outermost first) and the parameters. Instances run in lexicographic
//! order of their times; equal times run in any order (in parallel).
//! Shorter time vectors are padded with zeros. The parser is small and
//! keeps spans into FILE for its diagnostics (E0605).

use crate::dataflow::render::site_loops;
use crate::model::{Program, Span};

/// A parsed schedule: per site (statements, then conditions, as
/// `facts::Facts::site_index` numbers them) its time rows, each the
/// coefficients of the site's loop counters, then of the parameters, then
/// a constant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AffineSchedule {
    pub times: Vec<Option<Vec<Vec<i64>>>>,
    /// The longest time vector.
    pub width: usize,
    /// The schedule as written, normalised (one line).
    pub text: String,
}

/// A schedule file that cannot be used: the message and where in FILE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleError {
    pub message: String,
    pub span: Span,
}

fn err<T>(message: impl Into<String>, span: Span) -> Result<T, ScheduleError> {
    Err(ScheduleError {
        message: message.into(),
        span,
    })
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Int(i64),
    Sym(char),
    Arrow,
}

fn lex(text: &str) -> Result<Vec<(Tok, Span)>, ScheduleError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut k = 0;
    while k < b.len() {
        let c = b[k] as char;
        let start = k;
        if c.is_ascii_whitespace() {
            k += 1;
        } else if c == '#' {
            while k < b.len() && b[k] != b'\n' {
                k += 1;
            }
        } else if c.is_ascii_alphabetic() || c == '_' {
            while k < b.len() && ((b[k] as char).is_ascii_alphanumeric() || b[k] == b'_') {
                k += 1;
            }
            out.push((Tok::Ident(text[start..k].to_string()), Span::new(start, k)));
        } else if c.is_ascii_digit() {
            while k < b.len() && b[k].is_ascii_digit() {
                k += 1;
            }
            let Ok(v) = text[start..k].parse() else {
                return err("integer too large", Span::new(start, k));
            };
            out.push((Tok::Int(v), Span::new(start, k)));
        } else if c == '-' && b.get(k + 1) == Some(&b'>') {
            k += 2;
            out.push((Tok::Arrow, Span::new(start, k)));
        } else if "{}[](),;+-*:<>=".contains(c) {
            k += 1;
            out.push((Tok::Sym(c), Span::new(start, k)));
        } else {
            let len = text[start..].chars().next().map_or(1, char::len_utf8);
            return err(
                format!("unexpected `{}` in the schedule", &text[start..start + len]),
                Span::new(start, start + len),
            );
        }
    }
    Ok(out)
}

/// An affine expression while parsing: coefficients per variable (the
/// tuple's counters, then the parameters) and a constant.
#[derive(Clone)]
struct Lin {
    coef: Vec<i64>,
    constant: i64,
}

impl Lin {
    fn is_constant(&self) -> bool {
        self.coef.iter().all(|&c| c == 0)
    }

    fn combine(&self, o: &Lin, f: impl Fn(i64, i64) -> Option<i64>) -> Option<Lin> {
        Some(Lin {
            coef: self
                .coef
                .iter()
                .zip(&o.coef)
                .map(|(&a, &b)| f(a, b))
                .collect::<Option<_>>()?,
            constant: f(self.constant, o.constant)?,
        })
    }

    fn scale(&self, k: i64) -> Option<Lin> {
        Some(Lin {
            coef: self
                .coef
                .iter()
                .map(|&c| c.checked_mul(k))
                .collect::<Option<_>>()?,
            constant: self.constant.checked_mul(k)?,
        })
    }
}

struct Parser<'a> {
    toks: &'a [(Tok, Span)],
    pos: usize,
    end: Span,
    /// Nesting of parentheses and signs, bounded so that no input
    /// overflows the stack.
    depth: usize,
}

const MAX_DEPTH: usize = 64;

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn span(&self) -> Span {
        self.toks.get(self.pos).map_or(self.end, |t| t.1)
    }

    fn eat(&mut self, t: &Tok) -> bool {
        let hit = self.peek() == Some(t);
        self.pos += usize::from(hit);
        hit
    }

    fn expect(&mut self, c: char, what: &str) -> Result<Span, ScheduleError> {
        let s = self.span();
        if self.eat(&Tok::Sym(c)) {
            Ok(s)
        } else {
            err(format!("expected `{c}` {what}"), s)
        }
    }

    fn ident(&mut self, what: &str) -> Result<(String, Span), ScheduleError> {
        match self.toks.get(self.pos) {
            Some((Tok::Ident(n), s)) => {
                self.pos += 1;
                Ok((n.clone(), *s))
            }
            _ => err(format!("expected {what}"), self.span()),
        }
    }

    /// `a, b, c]` after the `[`: names, possibly none.
    fn names(&mut self, what: &str) -> Result<Vec<(String, Span)>, ScheduleError> {
        let mut v = Vec::new();
        if self.eat(&Tok::Sym(']')) {
            return Ok(v);
        }
        loop {
            v.push(self.ident(what)?);
            if self.eat(&Tok::Sym(']')) {
                return Ok(v);
            }
            self.expect(',', &format!("or `]` after {what}"))?;
        }
    }
}

/// What names mean inside one statement's time expressions.
struct Scope<'a> {
    tuple: &'a [(String, Span)],
    program: &'a Program,
    /// The `[n] -> ` prefix, when written: only these parameters may be used.
    declared: Option<&'a [(String, Span)]>,
}

impl Scope<'_> {
    fn width(&self) -> usize {
        self.tuple.len() + self.program.params.len()
    }

    fn var(&self, name: &str, span: Span) -> Result<Lin, ScheduleError> {
        let mut coef = vec![0; self.width()];
        if let Some(k) = self.tuple.iter().position(|(n, _)| n == name) {
            coef[k] = 1;
            return Ok(Lin { coef, constant: 0 });
        }
        let declared = self
            .declared
            .is_none_or(|d| d.iter().any(|(n, _)| n == name));
        match self.program.params.iter().position(|p| p.name == name) {
            Some(k) if declared => {
                coef[self.tuple.len() + k] = 1;
                Ok(Lin { coef, constant: 0 })
            }
            Some(_) => err(
                format!("parameter `{name}` is not declared in the schedule's `[...] ->` prefix"),
                span,
            ),
            None => err(
                format!("`{name}` is neither a counter of this statement's tuple nor a parameter of the program"),
                span,
            ),
        }
    }
}

fn expr(p: &mut Parser, s: &Scope) -> Result<Lin, ScheduleError> {
    let start = p.span();
    let mut acc = term(p, s)?;
    loop {
        let sign = match p.peek() {
            Some(Tok::Sym('+')) => 1,
            Some(Tok::Sym('-')) => -1,
            _ => return Ok(acc),
        };
        p.pos += 1;
        let t = term(p, s)?;
        let Some(next) = acc.combine(&t, |a, b| a.checked_add(b.checked_mul(sign)?)) else {
            return err("coefficient overflow", start);
        };
        acc = next;
    }
}

fn term(p: &mut Parser, s: &Scope) -> Result<Lin, ScheduleError> {
    let start = p.span();
    let mut acc = factor(p, s)?;
    while p.eat(&Tok::Sym('*')) {
        let at = p.span();
        let f = factor(p, s)?;
        let product = if acc.is_constant() {
            f.scale(acc.constant)
        } else if f.is_constant() {
            acc.scale(f.constant)
        } else {
            let whole = Span {
                start: start.start,
                end: p.toks[p.pos - 1].1.end,
            };
            return err(
                "not affine: a product of two variable terms (a schedule here is affine in the counters and parameters)",
                whole,
            );
        };
        match product {
            Some(x) => acc = x,
            None => return err("coefficient overflow", at),
        }
    }
    Ok(acc)
}

fn factor(p: &mut Parser, s: &Scope) -> Result<Lin, ScheduleError> {
    let span = p.span();
    if p.depth >= MAX_DEPTH {
        return err(format!("nested more than {MAX_DEPTH} deep"), span);
    }
    p.depth += 1;
    let r = factor_inner(p, s, span);
    p.depth -= 1;
    r
}

fn factor_inner(p: &mut Parser, s: &Scope, span: Span) -> Result<Lin, ScheduleError> {
    match p.toks.get(p.pos).map(|t| t.0.clone()) {
        Some(Tok::Int(v)) => {
            p.pos += 1;
            Ok(Lin {
                coef: vec![0; s.width()],
                constant: v,
            })
        }
        Some(Tok::Ident(n)) => {
            p.pos += 1;
            if p.peek() == Some(&Tok::Sym('(')) {
                return err(
                    format!("not affine: `{n}(...)` (no functions: floor, mod and division are not supported)"),
                    span,
                );
            }
            s.var(&n, span)
        }
        Some(Tok::Sym('(')) => {
            p.pos += 1;
            let e = expr(p, s)?;
            p.expect(')', "to close `(`")?;
            Ok(e)
        }
        Some(Tok::Sym('-')) => {
            p.pos += 1;
            let f = factor(p, s)?;
            match f.scale(-1) {
                Some(x) => Ok(x),
                None => err("coefficient overflow", span),
            }
        }
        _ => err("expected an affine expression", span),
    }
}

/// Parses `text` (the schedule file) against `program`: every statement
/// must be scheduled once, with one tuple entry per loop around it; a
/// condition (by its name) may be, and must be when its test reads memory.
pub fn parse(program: &Program, text: &str) -> Result<AffineSchedule, ScheduleError> {
    let toks = lex(text)?;
    let end = Span::new(text.len(), text.len());
    let mut p = Parser {
        toks: &toks,
        pos: 0,
        end,
        depth: 0,
    };
    let mut declared = None;
    if p.eat(&Tok::Sym('[')) {
        let names = p.names("a parameter name")?;
        for (n, s) in &names {
            if program.param(n).is_none() {
                return err(format!("`{n}` is not a parameter of the program"), *s);
            }
        }
        if !p.eat(&Tok::Arrow) {
            return err("expected `->` after the parameters", p.span());
        }
        declared = Some(names);
    }
    let open = p.expect(
        '{',
        "to open the schedule (isl notation: `{ S[i, j] -> [j, i] }`)",
    )?;
    let stmts = program.stmts();
    let conds = program.conditions();
    let loops = site_loops(program);
    let mut times: Vec<Option<Vec<Vec<i64>>>> = vec![None; loops.len()];
    let mut parts: Vec<String> = Vec::new();
    let mut width = 0;
    while !p.eat(&Tok::Sym('}')) {
        let from = p.pos;
        let (name, name_span) = p.ident("a statement label")?;
        let site = match stmts.iter().position(|s| s.label == name) {
            Some(k) => k,
            None => match conds.iter().position(|c| c.name == name) {
                Some(k) => stmts.len() + k,
                None => {
                    return err(
                        format!("no statement or condition is labelled `{name}` in the program"),
                        name_span,
                    )
                }
            },
        };
        if times[site].is_some() {
            return err(format!("`{name}` is scheduled twice"), name_span);
        }
        let tuple_start = p.expect('[', &format!("after `{name}`"))?;
        let tuple = p.names("a counter name")?;
        let tuple_span = Span {
            start: tuple_start.start,
            end: p.toks[p.pos - 1].1.end,
        };
        if tuple.len() != loops[site].len() {
            let around: Vec<&str> = loops[site]
                .iter()
                .map(|&c| program.counter_decl(c).name.as_str())
                .collect();
            return err(
                format!(
                    "`{name}` is inside {} loop(s) ([{}]) but its tuple has {} counter(s)",
                    around.len(),
                    around.join(", "),
                    tuple.len()
                ),
                tuple_span,
            );
        }
        for (k, (n, s)) in tuple.iter().enumerate() {
            if tuple[..k].iter().any(|(m, _)| m == n) {
                return err(format!("`{n}` appears twice in the tuple"), *s);
            }
        }
        if !p.eat(&Tok::Arrow) {
            return err("expected `->` after the statement's tuple", p.span());
        }
        p.expect('[', "to open the time vector")?;
        let scope = Scope {
            tuple: &tuple,
            program,
            declared: declared.as_deref(),
        };
        let mut rows = Vec::new();
        if !p.eat(&Tok::Sym(']')) {
            loop {
                let e = expr(&mut p, &scope)?;
                let mut row = e.coef;
                row.push(e.constant);
                rows.push(row);
                if p.eat(&Tok::Sym(']')) {
                    break;
                }
                p.expect(',', "or `]` in the time vector")?;
            }
        }
        if p.peek() == Some(&Tok::Sym(':')) {
            return err(
                "constraints (`: ...`) are not supported: an entry schedules every instance of its statement",
                p.span(),
            );
        }
        parts.push(render_tokens(&toks[from..p.pos]));
        width = width.max(rows.len());
        times[site] = Some(rows);
        if !p.eat(&Tok::Sym(';')) {
            p.expect('}', "or `;` after a statement's schedule")?;
            break;
        }
    }
    if p.pos < toks.len() {
        return err("unexpected text after the schedule", p.span());
    }
    for (k, s) in stmts.iter().enumerate() {
        if times[k].is_none() {
            return err(
                format!(
                    "statement `{}` has no schedule: every statement needs one",
                    s.label
                ),
                open,
            );
        }
    }
    for (k, c) in conds.iter().enumerate() {
        if times[stmts.len() + k].is_none() && !c.reads().is_empty() {
            return err(
                format!(
                    "condition `{}` reads memory: give it a schedule (by its name) so its reads have a time",
                    c.name
                ),
                open,
            );
        }
    }
    let prefix = declared.map_or(String::new(), |d| {
        let n: Vec<&str> = d.iter().map(|(n, _)| n.as_str()).collect();
        format!("[{}] -> ", n.join(", "))
    });
    Ok(AffineSchedule {
        times,
        width,
        text: format!("{prefix}{{ {} }}", parts.join("; ")),
    })
}

/// Tokens back to text: `S[i, j] -> [j + 1, i]`.
fn render_tokens(toks: &[(Tok, Span)]) -> String {
    let mut s = String::new();
    for (t, _) in toks {
        match t {
            Tok::Ident(n) => s.push_str(n),
            Tok::Int(v) => s.push_str(&v.to_string()),
            Tok::Arrow => s.push_str(" -> "),
            Tok::Sym(c @ (',' | ';')) => {
                s.push(*c);
                s.push(' ');
            }
            Tok::Sym(c @ ('+' | '-' | '*')) => {
                s.push(' ');
                s.push(*c);
                s.push(' ');
            }
            Tok::Sym(c) => s.push(*c),
        }
    }
    s
}

impl AffineSchedule {
    /// The time of an instance of site `site` at iteration `iter` with
    /// parameter values `params`, padded with zeros to `width`.
    pub fn time(&self, site: usize, iter: &[i64], params: &[i64], out: &mut Vec<i64>) {
        let start = out.len();
        if let Some(rows) = self.times.get(site).and_then(|r| r.as_ref()) {
            for row in rows {
                let vars = iter.iter().chain(params);
                let v = row
                    .iter()
                    .zip(vars)
                    .fold(row[row.len() - 1], |acc, (c, x)| {
                        acc.saturating_add(c.saturating_mul(*x))
                    });
                out.push(v);
            }
        }
        out.resize(start + self.width, 0);
    }
}
