//! Integer expressions written in preprocessor text, which tree-sitter
//! leaves unparsed: the bodies of `#define` lines and the ranges of
//! `#pragma arrayflow array A[lo..hi]`. Integers (decimal, hex, octal, with
//! `u`/`l` suffixes), names, `+ - * / %`, unary `-`/`+` and parentheses.

use crate::model::{BinOp, Span};

/// A parsed expression; spans are byte ranges of the whole source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mini {
    Int(i64, Span),
    Name(String, Span),
    Neg(Box<Mini>, Span),
    Bin(BinOp, Box<Mini>, Box<Mini>, Span),
}

impl Mini {
    pub fn span(&self) -> Span {
        match self {
            Mini::Int(_, s) | Mini::Name(_, s) | Mini::Neg(_, s) | Mini::Bin(.., s) => *s,
        }
    }

    /// The value when no name occurs; `None` on overflow or division by zero.
    pub fn constant(&self) -> Option<i64> {
        match self {
            Mini::Int(v, _) => Some(*v),
            Mini::Name(..) => None,
            Mini::Neg(x, _) => x.constant()?.checked_neg(),
            Mini::Bin(op, l, r, _) => checked(*op, l.constant()?, r.constant()?),
        }
    }
}

pub use crate::model::cint::checked;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Int(i64),
    Name(String),
    Op(u8),
    DotDot,
}

/// Splits `text` (found at byte `base` of the file) into tokens; `None` on a
/// character outside the grammar.
fn tokens(text: &str, base: usize) -> Option<Vec<(Tok, Span)>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() || c == b'\\' {
            i += 1;
            continue;
        }
        let tok = if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric()) {
                i += 1;
            }
            Tok::Int(int_literal(&text[start..i])?)
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            Tok::Name(text[start..i].to_string())
        } else if c == b'.' && b.get(i + 1) == Some(&b'.') {
            i += 2;
            Tok::DotDot
        } else if b"+-*/%()[],".contains(&c) {
            i += 1;
            Tok::Op(c)
        } else {
            return None;
        };
        out.push((tok, Span::new(base + start, base + i)));
    }
    Some(out)
}

/// The value of a C integer literal: decimal, `0x` hex, `0` octal or `0b`
/// binary, with any `u`/`l` suffix. `None` when malformed or too large.
pub fn int_literal(text: &str) -> Option<i64> {
    let t = text
        .trim_end_matches(['u', 'U', 'l', 'L'])
        .replace('\'', "");
    let (digits, radix) = if let Some(h) = t.strip_prefix("0x").or(t.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(bin) = t.strip_prefix("0b").or(t.strip_prefix("0B")) {
        (bin, 2)
    } else if t.len() > 1 && t.starts_with('0') {
        (&t[1..], 8)
    } else {
        (t.as_str(), 10)
    };
    if digits.is_empty() {
        return None;
    }
    i64::from_str_radix(digits, radix).ok()
}

/// Nesting allowed in preprocessor text.
const MAX_DEPTH: u32 = 64;

struct Parser {
    toks: Vec<(Tok, Span)>,
    pos: usize,
    depth: u32,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(t, _)| t)
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == Some(t) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expr(&mut self) -> Option<Mini> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let e = self.binary(&[(b'+', BinOp::Add), (b'-', BinOp::Sub)], Self::term);
        self.depth -= 1;
        e
    }

    fn term(&mut self) -> Option<Mini> {
        let ops = [(b'*', BinOp::Mul), (b'/', BinOp::Div), (b'%', BinOp::Rem)];
        self.binary(&ops, Self::unary)
    }

    /// `next (op next)*`, left associative, for the operators in `ops`.
    fn binary(&mut self, ops: &[(u8, BinOp)], next: fn(&mut Self) -> Option<Mini>) -> Option<Mini> {
        let mut l = next(self)?;
        while let Some(&(_, op)) = ops.iter().find(|(c, _)| self.peek() == Some(&Tok::Op(*c))) {
            self.pos += 1;
            let r = next(self)?;
            let span = l.span().to(r.span());
            l = Mini::Bin(op, Box::new(l), Box::new(r), span);
        }
        Some(l)
    }

    fn unary(&mut self) -> Option<Mini> {
        let (tok, span) = self.toks.get(self.pos)?.clone();
        self.pos += 1;
        match tok {
            Tok::Int(v) => Some(Mini::Int(v, span)),
            Tok::Name(n) => Some(Mini::Name(n, span)),
            Tok::Op(b'-') => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return None;
                }
                let x = self.unary()?;
                self.depth -= 1;
                let s = span.to(x.span());
                Some(Mini::Neg(Box::new(x), s))
            }
            Tok::Op(b'+') => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return None;
                }
                let x = self.unary();
                self.depth -= 1;
                x
            }
            Tok::Op(b'(') => {
                let x = self.expr()?;
                self.eat(&Tok::Op(b')')).then_some(x)
            }
            _ => None,
        }
    }
}

/// The body of an object-like `#define`, when it is an integer expression.
pub fn define_body(text: &str, base: usize) -> Option<Mini> {
    let toks = tokens(text, base)?;
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
    };
    let e = p.expr()?;
    (p.pos == p.toks.len()).then_some(e)
}

/// `NAME[lo..hi][lo..hi]...` (or `NAME[lo..hi, lo..hi]`), the argument of
/// `#pragma arrayflow array`: the name with its span and the ranges.
pub type ArraySpec = ((String, Span), Vec<(Mini, Mini)>);

pub fn array_spec(text: &str, base: usize) -> Option<ArraySpec> {
    let toks = tokens(text, base)?;
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
    };
    let name = match p.toks.first()? {
        (Tok::Name(n), s) => (n.clone(), *s),
        _ => return None,
    };
    p.pos = 1;
    let mut dims = Vec::new();
    while p.eat(&Tok::Op(b'[')) {
        loop {
            let lo = p.expr()?;
            if !p.eat(&Tok::DotDot) {
                return None;
            }
            let hi = p.expr()?;
            dims.push((lo, hi));
            if !p.eat(&Tok::Op(b',')) {
                break;
            }
        }
        if !p.eat(&Tok::Op(b']')) {
            return None;
        }
    }
    (p.pos == p.toks.len() && !dims.is_empty()).then_some((name, dims))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(int_literal("100"), Some(100));
        assert_eq!(int_literal("0x1F"), Some(31));
        assert_eq!(int_literal("017"), Some(15));
        assert_eq!(int_literal("0"), Some(0));
        assert_eq!(int_literal("10UL"), Some(10));
        assert_eq!(int_literal("0b101"), Some(5));
        assert_eq!(int_literal("99999999999999999999"), None);
        assert_eq!(int_literal("0x"), None);
        assert_eq!(int_literal("1.5"), None);
    }

    #[test]
    fn define_bodies() {
        assert_eq!(
            define_body("(10*10)", 0).and_then(|m| m.constant()),
            Some(100)
        );
        assert_eq!(define_body("-3", 0).and_then(|m| m.constant()), Some(-3));
        let m = define_body(" (N + 1)", 5).unwrap();
        match m {
            Mini::Bin(BinOp::Add, l, _, span) => {
                assert_eq!(*l, Mini::Name("N".into(), Span::new(7, 8)));
                assert_eq!((span.start, span.end), (7, 12));
            }
            other => panic!("{other:?}"),
        }
        assert!(define_body("double", 0).is_some()); // a name; the caller decides
        assert!(define_body("x y", 0).is_none());
        assert!(define_body("(1", 0).is_none());
        assert!(define_body("\"s\"", 0).is_none());
        assert!(define_body("1.5", 0).is_none());
        assert!(define_body(&"(".repeat(1000), 0).is_none());
        assert!(define_body(&"-".repeat(1000), 0).is_none());
        assert_eq!(define_body("7 / 0", 0).and_then(|m| m.constant()), None);
    }

    #[test]
    fn array_specs() {
        let ((name, _), dims) = array_spec("A[1..4*N-1]", 0).unwrap();
        assert_eq!(name, "A");
        assert_eq!(dims.len(), 1);
        assert_eq!(dims[0].0.constant(), Some(1));
        let (_, dims) = array_spec("B[0..N][1..M, 2..3]", 0).unwrap();
        assert_eq!(dims.len(), 3);
        assert!(array_spec("B", 0).is_none());
        assert!(array_spec("B[1]", 0).is_none());
        assert!(array_spec("B[1..2] x", 0).is_none());
    }
}
