//! The rule-file syntax: a hand-written lexer and recursive-descent parser
//! producing an AST with a span on every node (docs/rules.md §8 is the
//! reference). Errors are E1001 diagnostics; the parser skips to the next `.`
//! that ends a clause and goes on, so one file reports all its syntax errors.

use arrayflow_model::diagnostics::{Diagnostic, FileId};
use arrayflow_model::model::Span;

/// A column type. `site`, `access` and `loop` are the exported relations'
/// program entities: `site` is a symbol, `access` and `loop` numbers, and a
/// check relation's columns of these types say where its diagnostics point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Number,
    Symbol,
    Site,
    Access,
    Loop,
}

impl Type {
    pub fn parse(s: &str) -> Option<Type> {
        Some(match s {
            "number" => Type::Number,
            "symbol" => Type::Symbol,
            "site" => Type::Site,
            "access" => Type::Access,
            "loop" => Type::Loop,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Type::Number => "number",
            Type::Symbol => "symbol",
            Type::Site => "site",
            Type::Access => "access",
            Type::Loop => "loop",
        }
    }

    /// Whether values are symbols (else numbers).
    pub fn is_symbol(self) -> bool {
        matches!(self, Type::Symbol | Type::Site)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    Var(String, Span),
    Wild(Span),
    Number(i64, Span),
    Str(String, Span),
}

impl Term {
    pub fn span(&self) -> Span {
        match self {
            Term::Var(_, s) | Term::Wild(s) | Term::Number(_, s) | Term::Str(_, s) => *s,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Atom {
    pub rel: String,
    pub rel_span: Span,
    pub args: Vec<Term>,
    pub span: Span,
}

/// A comparison: the model's operators, with the model's meaning
/// (`model::eval::compare`).
pub use arrayflow_model::model::CmpOp as Cmp;

/// Whether a comparison orders its operands (numbers only).
pub fn orders(op: Cmp) -> bool {
    !matches!(op, Cmp::Eq | Cmp::Ne)
}

#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Pos(Atom),
    Neg(Atom, Span),
    Cmp(Term, Cmp, Term, Span),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub head: Atom,
    pub body: Vec<Literal>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Decl {
    pub name: String,
    pub name_span: Span,
    pub cols: Vec<(String, Type)>,
    pub span: Span,
}

/// `.check rel "message"` (a warning per tuple) or `.deny rel "message"`
/// (an error per tuple).
#[derive(Clone, Debug, PartialEq)]
pub struct CheckDirective {
    pub rel: String,
    pub rel_span: Span,
    pub message: String,
    pub message_span: Span,
    pub deny: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Decl(Decl),
    Rule(Rule),
    Output(String, Span),
    /// `.input rel`: accepted for Soufflé files; the exported relations are
    /// always inputs.
    Input(String, Span),
    Check(CheckDirective),
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Directive(String),
    Number(i64),
    Str(String),
    LParen,
    RParen,
    Comma,
    Colon,
    Dot,
    If,
    Bang,
    Cmp(Cmp),
    /// `+ - * / %`: lexed so that the parser can say there is no arithmetic.
    Arith(char),
    /// Any other character: an error where the parser meets it, skipped
    /// silently in a clause already in error.
    Other(char),
    Eof,
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Directive(s) => format!("`.{s}`"),
        Tok::Number(n) => format!("`{n}`"),
        Tok::Str(_) => "a string".into(),
        Tok::LParen => "`(`".into(),
        Tok::RParen => "`)`".into(),
        Tok::Comma => "`,`".into(),
        Tok::Colon => "`:`".into(),
        Tok::Dot => "`.`".into(),
        Tok::If => "`:-`".into(),
        Tok::Bang => "`!`".into(),
        Tok::Cmp(_) => "a comparison".into(),
        Tok::Arith(c) => format!("`{c}`"),
        Tok::Other(c) => format!("`{c}`"),
        Tok::Eof => "the end of the file".into(),
    }
}

/// Soufflé's aggregate functions, which rule files do not have.
const AGGREGATES: &[&str] = &["count", "sum", "min", "max", "mean"];

/// The most syntax errors reported; parsing stops after them.
const MAX_ERRORS: usize = 50;

struct Lexer<'a> {
    src: &'a [u8],
    text: &'a str,
    pos: usize,
}

impl Lexer<'_> {
    fn skip_space(&mut self) -> Result<(), (String, Span)> {
        loop {
            while self.pos < self.src.len() && self.src[self.pos].is_ascii_whitespace() {
                self.pos += 1;
            }
            let rest = &self.src[self.pos..];
            if rest.starts_with(b"//") || rest.starts_with(b"#") {
                while self.pos < self.src.len() && self.src[self.pos] != b'\n' {
                    self.pos += 1;
                }
            } else if rest.starts_with(b"/*") {
                let start = self.pos;
                match self.text[self.pos + 2..].find("*/") {
                    Some(k) => self.pos += k + 4,
                    None => {
                        self.pos = self.src.len();
                        return Err(("unterminated comment".into(), Span::new(start, start + 2)));
                    }
                }
            } else {
                return Ok(());
            }
        }
    }

    fn token(&mut self) -> Result<(Tok, Span), (String, Span)> {
        self.skip_space()?;
        let start = self.pos;
        let Some(&c) = self.src.get(self.pos) else {
            return Ok((Tok::Eof, Span::new(start, start)));
        };
        let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let take_ident = |lx: &mut Self| {
            let s = lx.pos;
            while lx.pos < lx.src.len() && ident(lx.src[lx.pos]) {
                lx.pos += 1;
            }
            lx.text[s..lx.pos].to_string()
        };
        let tok = match c {
            b'(' | b')' | b',' | b'!' if c != b'!' || self.src.get(self.pos + 1) != Some(&b'=') => {
                self.pos += 1;
                match c {
                    b'(' => Tok::LParen,
                    b')' => Tok::RParen,
                    b',' => Tok::Comma,
                    _ => Tok::Bang,
                }
            }
            b':' if self.src.get(self.pos + 1) == Some(&b'-') => {
                self.pos += 2;
                Tok::If
            }
            b':' => {
                self.pos += 1;
                Tok::Colon
            }
            b'.' if self
                .src
                .get(self.pos + 1)
                .is_some_and(|b| b.is_ascii_alphabetic()) =>
            {
                self.pos += 1;
                Tok::Directive(take_ident(self))
            }
            b'.' => {
                self.pos += 1;
                Tok::Dot
            }
            b'=' | b'!' | b'<' | b'>' => {
                let two = self.src.get(self.pos + 1) == Some(&b'=');
                self.pos += 1 + two as usize;
                Tok::Cmp(match (c, two) {
                    (b'=', _) => Cmp::Eq,
                    (b'!', _) => Cmp::Ne,
                    (b'<', false) => Cmp::Lt,
                    (b'<', true) => Cmp::Le,
                    (b'>', false) => Cmp::Gt,
                    _ => Cmp::Ge,
                })
            }
            b'"' => {
                self.pos += 1;
                let s = self.pos;
                while self.pos < self.src.len()
                    && self.src[self.pos] != b'"'
                    && self.src[self.pos] != b'\n'
                {
                    self.pos += 1;
                }
                if self.src.get(self.pos) != Some(&b'"') {
                    return Err(("unterminated string".into(), Span::new(start, self.pos)));
                }
                self.pos += 1;
                Tok::Str(self.text[s..self.pos - 1].to_string())
            }
            b'+' | b'*' | b'/' | b'%' => {
                self.pos += 1;
                Tok::Arith(c as char)
            }
            b'-' if !self.src.get(self.pos + 1).is_some_and(u8::is_ascii_digit) => {
                self.pos += 1;
                Tok::Arith('-')
            }
            b'-' | b'0'..=b'9' => {
                self.pos += 1;
                while self.pos < self.src.len() && self.src[self.pos].is_ascii_digit() {
                    self.pos += 1;
                }
                let s = &self.text[start..self.pos];
                match s.parse::<i64>() {
                    Ok(n) => Tok::Number(n),
                    Err(_) => {
                        return Err((
                            format!("`{s}` is not a 64-bit integer"),
                            Span::new(start, self.pos),
                        ))
                    }
                }
            }
            _ if ident(c) => Tok::Ident(take_ident(self)),
            _ => {
                let ch = self.text[start..].chars().next().unwrap_or('?');
                self.pos += ch.len_utf8();
                Tok::Other(ch)
            }
        };
        Ok((tok, Span::new(start, self.pos)))
    }
}

struct Parser<'a> {
    lx: Lexer<'a>,
    tok: Tok,
    span: Span,
    file: FileId,
    errors: Vec<Diagnostic>,
}

type PResult<T> = Result<T, ()>;

impl Parser<'_> {
    fn bump(&mut self) {
        loop {
            match self.lx.token() {
                Ok((t, s)) => {
                    self.tok = t;
                    self.span = s;
                    return;
                }
                Err((m, s)) => self.error_at(m, s, "here"),
            }
        }
    }

    fn error_at(&mut self, message: String, span: Span, label: &str) {
        if self.errors.len() < MAX_ERRORS {
            self.errors
                .push(Diagnostic::error("E1001", message).primary(self.file, span, label));
        }
    }

    fn expected(&mut self, what: &str) -> PResult<()> {
        if let Tok::Arith(c) = self.tok {
            self.error_at(
                format!(
                    "rule files have no arithmetic: `{c}` cannot compute a value \
                     (a term is a variable, `_`, a number or a string)"
                ),
                self.span,
                "arithmetic",
            );
            return Err(());
        }
        if let Tok::Other(c) = self.tok {
            self.error_at(format!("unexpected character `{c}`"), self.span, "here");
            return Err(());
        }
        let m = format!("expected {what}, found {}", describe(&self.tok));
        self.error_at(m, self.span, &format!("expected {what}"));
        Err(())
    }

    fn eat(&mut self, t: &Tok, what: &str) -> PResult<Span> {
        if &self.tok == t {
            let s = self.span;
            self.bump();
            Ok(s)
        } else {
            self.expected(what)?;
            unreachable!()
        }
    }

    fn ident(&mut self, what: &str) -> PResult<(String, Span)> {
        if let Tok::Ident(s) = &self.tok {
            let out = (s.clone(), self.span);
            self.bump();
            Ok(out)
        } else {
            self.expected(what)?;
            unreachable!()
        }
    }

    /// Skips to just after the next `.` (or to the end).
    fn recover(&mut self) {
        while !matches!(self.tok, Tok::Dot | Tok::Eof | Tok::Directive(_)) {
            self.bump();
        }
        if self.tok == Tok::Dot {
            self.bump();
        }
    }

    fn item(&mut self) -> PResult<Item> {
        if let Tok::Directive(d) = self.tok.clone() {
            let dspan = self.span;
            self.bump();
            return match d.as_str() {
                "decl" => self.decl(dspan).map(Item::Decl),
                "output" | "input" => {
                    let (name, span) = self.ident("a relation name")?;
                    Ok(if d == "output" {
                        Item::Output(name, span)
                    } else {
                        Item::Input(name, span)
                    })
                }
                "check" | "deny" => {
                    let (rel, rel_span) = self.ident("a relation name")?;
                    let Tok::Str(message) = self.tok.clone() else {
                        self.expected("a message in double quotes")?;
                        unreachable!()
                    };
                    let message_span = self.span;
                    self.bump();
                    Ok(Item::Check(CheckDirective {
                        rel,
                        rel_span,
                        message,
                        message_span,
                        deny: d == "deny",
                    }))
                }
                _ => {
                    self.error_at(
                        format!(
                            "unknown directive `.{d}` (expected .decl, .output, .input, .check or .deny)"
                        ),
                        dspan,
                        "unknown directive",
                    );
                    Err(())
                }
            };
        }
        let head = self.atom()?;
        let mut body = Vec::new();
        if self.tok == Tok::If {
            self.bump();
            loop {
                body.push(self.literal()?);
                if self.tok == Tok::Comma {
                    self.bump();
                } else {
                    break;
                }
            }
        }
        let end = self.eat(&Tok::Dot, "`.` at the end of the clause")?;
        Ok(Item::Rule(Rule {
            span: head.span.to(end),
            head,
            body,
        }))
    }

    /// `item, item, ...` up to a `)` (which is not consumed); may be empty.
    fn list<T>(&mut self, mut item: impl FnMut(&mut Self) -> PResult<T>) -> PResult<Vec<T>> {
        let mut out = Vec::new();
        if self.tok != Tok::RParen {
            out.push(item(self)?);
            while self.tok == Tok::Comma {
                self.bump();
                out.push(item(self)?);
            }
        }
        Ok(out)
    }

    fn column(&mut self) -> PResult<(String, Type)> {
        let (col, _) = self.ident("a column name")?;
        self.eat(&Tok::Colon, "`:` and a type")?;
        let (ty, ty_span) = self.ident("a type")?;
        match Type::parse(&ty) {
            Some(t) => Ok((col, t)),
            None => {
                self.error_at(
                    format!("unknown type `{ty}` (expected number, symbol, site, access or loop)"),
                    ty_span,
                    "unknown type",
                );
                Err(())
            }
        }
    }

    fn decl(&mut self, start: Span) -> PResult<Decl> {
        let (name, name_span) = self.ident("a relation name")?;
        self.eat(&Tok::LParen, "`(`")?;
        let cols = self.list(Self::column)?;
        let end = self.eat(&Tok::RParen, "`)`")?;
        Ok(Decl {
            name,
            name_span,
            cols,
            span: start.to(end),
        })
    }

    fn atom(&mut self) -> PResult<Atom> {
        let (rel, rel_span) = self.ident("a relation name")?;
        self.eat(&Tok::LParen, "`(`")?;
        let args = self.list(Self::term)?;
        let end = self.eat(&Tok::RParen, "`,` or `)`")?;
        Ok(Atom {
            rel,
            rel_span,
            args,
            span: rel_span.to(end),
        })
    }

    fn term(&mut self) -> PResult<Term> {
        let span = self.span;
        if let Tok::Ident(s) = self.tok.clone() {
            if AGGREGATES.contains(&s.as_str()) && self.peek_aggregate() {
                self.error_at(
                    format!(
                        "rule files have no aggregates: `{s}` cannot count or combine tuples \
                         (a term is a variable, `_`, a number or a string)"
                    ),
                    span,
                    "aggregate",
                );
                return Err(());
            }
        }
        let t = match self.tok.clone() {
            Tok::Ident(s) if s == "_" => Term::Wild(span),
            Tok::Ident(s) => Term::Var(s, span),
            Tok::Number(n) => Term::Number(n, span),
            Tok::Str(s) => Term::Str(s, span),
            _ => {
                self.expected("a variable, `_`, a number or a string")?;
                unreachable!()
            }
        };
        self.bump();
        Ok(t)
    }

    /// Whether the name at hand starts a Soufflé aggregate (`count : ...`,
    /// `sum X : ...`) rather than being a variable so named.
    fn peek_aggregate(&mut self) -> bool {
        let save = (self.lx.pos, self.tok.clone(), self.span, self.errors.len());
        self.bump();
        let agg = matches!(self.tok, Tok::Colon | Tok::Ident(_));
        (self.lx.pos, self.tok, self.span) = (save.0, save.1, save.2);
        self.errors.truncate(save.3);
        agg
    }

    fn literal(&mut self) -> PResult<Literal> {
        let start = self.span;
        if self.tok == Tok::Bang {
            self.bump();
            let a = self.atom()?;
            let span = start.to(a.span);
            return Ok(Literal::Neg(a, span));
        }
        // An atom is a name followed by `(`; anything else is a comparison.
        if let Tok::Ident(_) = self.tok {
            let save = (self.lx.pos, self.tok.clone(), self.span);
            self.bump();
            let is_atom = self.tok == Tok::LParen;
            (self.lx.pos, self.tok, self.span) = save;
            if is_atom {
                return self.atom().map(Literal::Pos);
            }
        }
        let left = self.term()?;
        let Tok::Cmp(op) = self.tok else {
            self.expected("a comparison (=, !=, <, <=, >, >=)")?;
            unreachable!()
        };
        self.bump();
        let right = self.term()?;
        let span = left.span().to(right.span());
        Ok(Literal::Cmp(left, op, right, span))
    }
}

/// Parses a rule file. Returns every clause that parsed and the syntax
/// errors (E1001) of the others.
pub fn parse(text: &str, file: FileId) -> (Vec<Item>, Vec<Diagnostic>) {
    let mut p = Parser {
        lx: Lexer {
            src: text.as_bytes(),
            text,
            // A byte order mark is skipped, as in program files.
            pos: if text.starts_with('\u{feff}') { 3 } else { 0 },
        },
        tok: Tok::Eof,
        span: Span::NONE,
        file,
        errors: Vec::new(),
    };
    p.bump();
    let mut items = Vec::new();
    while p.tok != Tok::Eof && p.errors.len() < MAX_ERRORS {
        match p.item() {
            Ok(i) => items.push(i),
            Err(()) => p.recover(),
        }
    }
    (items, p.errors)
}
