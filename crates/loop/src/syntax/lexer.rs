//! The lexer: `.loop` text to tokens, written by hand (a generated lexer
//! pulled a regex compiler into every build of the crate).
//!
//! Comments (`#` or `//` to the end of the line) and whitespace are skipped.
//! A run of characters that start no token becomes one [`Tok::Error`] token,
//! so binary garbage gives one diagnostic per run, not one per byte.
//! Identifiers are interned by the parser; integer literals are parsed here
//! into a `u64` (the parser decides whether it fits an `i64`, since
//! `-9223372036854775808` is a valid literal).

use crate::model::Span;

/// A token's kind. Keywords are whole words (`endx` is a name); of the
/// punctuation, the longest that matches is taken (`...` before `..`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tok {
    Param,
    Assume,
    Real,
    IntKw,
    ArrayKw,
    For,
    To,
    Step,
    Do,
    While,
    If,
    Then,
    Elsif,
    Else,
    End,
    And,
    Or,
    Not,
    Ident,
    Int,
    Semi,
    Comma,
    Colon,
    Assign,
    PlusAssign,
    MinusAssign,
    StarAssign,
    SlashAssign,
    PercentAssign,
    EqEq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    LParen,
    RParen,
    LBracket,
    RBracket,
    DotDot,
    Ellipsis,
    Dot,
    At,
    /// Characters that start no token.
    Error,
    /// The end of the input.
    Eof,
}

impl Tok {
    /// How the token is shown in a diagnostic.
    pub fn describe(self) -> &'static str {
        match self {
            Tok::Param => "`param`",
            Tok::Assume => "`assume`",
            Tok::Real => "`real`",
            Tok::IntKw => "`int`",
            Tok::ArrayKw => "`array`",
            Tok::For => "`for`",
            Tok::To => "`to`",
            Tok::Step => "`step`",
            Tok::Do => "`do`",
            Tok::While => "`while`",
            Tok::If => "`if`",
            Tok::Then => "`then`",
            Tok::Elsif => "`elsif`",
            Tok::Else => "`else`",
            Tok::End => "`end`",
            Tok::And => "`and`",
            Tok::Or => "`or`",
            Tok::Not => "`not`",
            Tok::Ident => "a name",
            Tok::Int => "an integer",
            Tok::Semi => "`;`",
            Tok::Comma => "`,`",
            Tok::Colon => "`:`",
            Tok::Assign => "`=`",
            Tok::PlusAssign => "`+=`",
            Tok::MinusAssign => "`-=`",
            Tok::StarAssign => "`*=`",
            Tok::SlashAssign => "`/=`",
            Tok::PercentAssign => "`%=`",
            Tok::EqEq => "`==`",
            Tok::Ne => "`!=`",
            Tok::Lt => "`<`",
            Tok::Le => "`<=`",
            Tok::Gt => "`>`",
            Tok::Ge => "`>=`",
            Tok::Plus => "`+`",
            Tok::Minus => "`-`",
            Tok::Star => "`*`",
            Tok::Slash => "`/`",
            Tok::Percent => "`%`",
            Tok::LParen => "`(`",
            Tok::RParen => "`)`",
            Tok::LBracket => "`[`",
            Tok::RBracket => "`]`",
            Tok::DotDot => "`..`",
            Tok::Ellipsis => "`...`",
            Tok::Dot => "`.`",
            Tok::At => "`@`",
            Tok::Error => "unexpected characters",
            Tok::Eof => "the end of the file",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

/// Tokens on demand, so memory stays flat however long the input is.
pub struct Lexer<'src> {
    src: &'src str,
    pos: usize,
}

/// The keyword spelled `word`, if any.
fn keyword(word: &str) -> Option<Tok> {
    Some(match word {
        "param" => Tok::Param,
        "assume" => Tok::Assume,
        "real" => Tok::Real,
        "int" => Tok::IntKw,
        "array" => Tok::ArrayKw,
        "for" => Tok::For,
        "to" => Tok::To,
        "step" => Tok::Step,
        "do" => Tok::Do,
        "while" => Tok::While,
        "if" => Tok::If,
        "then" => Tok::Then,
        "elsif" => Tok::Elsif,
        "else" => Tok::Else,
        "end" => Tok::End,
        "and" => Tok::And,
        "or" => Tok::Or,
        "not" => Tok::Not,
        _ => return None,
    })
}

/// The punctuation at the start of `b` and its length, longest first.
fn punct(b: &[u8]) -> Option<(Tok, usize)> {
    let two = |second: u8, long: Tok, short: Option<Tok>| match b.get(1) {
        Some(&c) if c == second => Some((long, 2)),
        _ => short.map(|t| (t, 1)),
    };
    match b[0] {
        b';' => Some((Tok::Semi, 1)),
        b',' => Some((Tok::Comma, 1)),
        b':' => Some((Tok::Colon, 1)),
        b'(' => Some((Tok::LParen, 1)),
        b')' => Some((Tok::RParen, 1)),
        b'[' => Some((Tok::LBracket, 1)),
        b']' => Some((Tok::RBracket, 1)),
        b'@' => Some((Tok::At, 1)),
        b'=' => two(b'=', Tok::EqEq, Some(Tok::Assign)),
        b'!' => two(b'=', Tok::Ne, None),
        b'<' => two(b'=', Tok::Le, Some(Tok::Lt)),
        b'>' => two(b'=', Tok::Ge, Some(Tok::Gt)),
        b'+' => two(b'=', Tok::PlusAssign, Some(Tok::Plus)),
        b'-' => two(b'=', Tok::MinusAssign, Some(Tok::Minus)),
        b'*' => two(b'=', Tok::StarAssign, Some(Tok::Star)),
        b'/' => two(b'=', Tok::SlashAssign, Some(Tok::Slash)),
        b'%' => two(b'=', Tok::PercentAssign, Some(Tok::Percent)),
        b'.' => Some(match (b.get(1), b.get(2)) {
            (Some(b'.'), Some(b'.')) => (Tok::Ellipsis, 3),
            (Some(b'.'), _) => (Tok::DotDot, 2),
            _ => (Tok::Dot, 1),
        }),
        _ => None,
    }
}

impl<'src> Lexer<'src> {
    pub fn new(source: &'src str) -> Lexer<'src> {
        // A byte order mark, as editors on Windows write and C compilers
        // accept: skipped, spans still counting its bytes.
        let pos = if source.starts_with('\u{feff}') {
            '\u{feff}'.len_utf8()
        } else {
            0
        };
        Lexer { src: source, pos }
    }

    /// Skips whitespace and comments (`#` or `//` to the end of the line).
    fn skip(&mut self) {
        let b = self.src.as_bytes();
        while let Some(&c) = b.get(self.pos) {
            let comment = c == b'#' || (c == b'/' && b.get(self.pos + 1) == Some(&b'/'));
            if comment {
                self.pos = (b[self.pos..].iter().position(|&c| c == b'\n'))
                    .map_or(b.len(), |k| self.pos + k);
            } else if matches!(c, b' ' | b'\t' | b'\r' | b'\n' | b'\x0c') {
                self.pos += 1;
            } else {
                return;
            }
        }
    }

    /// The token at `at` (after any skipping) and its end, or `None` when
    /// no token starts there.
    fn token_at(&self, at: usize) -> Option<(Tok, usize)> {
        let b = &self.src.as_bytes()[at..];
        let run = |ok: fn(u8) -> bool| b.iter().position(|&c| !ok(c)).unwrap_or(b.len());
        let c = b[0];
        if c.is_ascii_alphabetic() || c == b'_' {
            let n = run(|c| c.is_ascii_alphanumeric() || c == b'_');
            let tok = keyword(&self.src[at..at + n]).unwrap_or(Tok::Ident);
            return Some((tok, at + n));
        }
        if c.is_ascii_digit() {
            return Some((Tok::Int, at + run(|c| c.is_ascii_digit())));
        }
        punct(b).map(|(t, n)| (t, at + n))
    }

    /// Whether a token, whitespace or a comment starts at `at`.
    fn starts_something(&self, at: usize) -> bool {
        let b = self.src.as_bytes();
        matches!(b[at], b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' | b'#')
            || (b[at] == b'/' && b.get(at + 1) == Some(&b'/'))
            || self.token_at(at).is_some()
    }

    /// The next token; after the input, [`Tok::Eof`] forever.
    pub fn next_token(&mut self) -> Token {
        self.skip();
        let start = self.pos;
        if start >= self.src.len() {
            let end = self.src.len();
            return Token {
                tok: Tok::Eof,
                span: Span::new(end, end),
            };
        }
        if let Some((tok, end)) = self.token_at(start) {
            self.pos = end;
            return Token {
                tok,
                span: Span::new(start, end),
            };
        }
        // A run of characters that start nothing: one error token.
        let mut end = start;
        while end < self.src.len() && (end == start || !self.starts_something(end)) {
            end += self.src[end..].chars().next().map_or(1, char::len_utf8);
        }
        self.pos = end;
        Token {
            tok: Tok::Error,
            span: Span::new(start, end),
        }
    }
}

/// Parses the text of an integer token; `None` if it does not fit a `u64`.
pub fn int_value(text: &str) -> Option<u64> {
    text.parse::<u64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        let mut l = Lexer::new(s);
        let mut out = Vec::new();
        loop {
            let t = l.next_token();
            if t.tok == Tok::Eof {
                return out;
            }
            out.push(t.tok);
        }
    }

    #[test]
    fn ranges_ellipsis_and_derived_labels() {
        assert_eq!(
            toks("A[1..N] ... S.1:"),
            vec![
                Tok::Ident,
                Tok::LBracket,
                Tok::Int,
                Tok::DotDot,
                Tok::Ident,
                Tok::RBracket,
                Tok::Ellipsis,
                Tok::Ident,
                Tok::Dot,
                Tok::Int,
                Tok::Colon
            ]
        );
    }

    #[test]
    fn comments_and_keywords() {
        assert_eq!(
            toks("for # x y\n end // z\n endx doall"),
            vec![Tok::For, Tok::End, Tok::Ident, Tok::Ident]
        );
    }

    #[test]
    fn longest_punctuation_and_lone_characters() {
        assert_eq!(
            toks("a+=1 b/=c//x\n!=! <= < .. . ...."),
            vec![
                Tok::Ident,
                Tok::PlusAssign,
                Tok::Int,
                Tok::Ident,
                Tok::SlashAssign,
                Tok::Ident,
                Tok::Ne,
                Tok::Error,
                Tok::Le,
                Tok::Lt,
                Tok::DotDot,
                Tok::Dot,
                Tok::Ellipsis,
                Tok::Dot
            ]
        );
        // Not ASCII: one error over whole characters, then the name.
        let mut l = Lexer::new("\u{feff}é€x");
        let e = l.next_token();
        assert_eq!((e.tok, e.span.range()), (Tok::Error, 3..8));
        assert_eq!(l.next_token().span.range(), 8..9);
    }

    #[test]
    fn error_runs_merge() {
        let mut l = Lexer::new("x $$$ y");
        assert_eq!(l.next_token().tok, Tok::Ident);
        let e = l.next_token();
        assert_eq!((e.tok, e.span.range()), (Tok::Error, 2..5));
        assert_eq!(l.next_token().tok, Tok::Ident);
        assert_eq!(l.next_token().tok, Tok::Eof);
        // Each run is one token, the second as much as the first.
        let mut l = Lexer::new("x $$$ ~~ y");
        assert_eq!(l.next_token().tok, Tok::Ident);
        assert_eq!(l.next_token().span.range(), 2..5);
        let e = l.next_token();
        assert_eq!((e.tok, e.span.range()), (Tok::Error, 6..8));
        assert_eq!(l.next_token().tok, Tok::Ident);
    }
}
