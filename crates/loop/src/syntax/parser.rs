//! Recursive-descent parser with error recovery.
//!
//! One run reports every syntax error of a file: after an error the parser
//! skips to a synchronisation point (`;`, `end`, `do`, `then`, or the start of
//! a statement) and goes on. Recursion is bounded twice: blocks nest at most
//! [`MAX_DEPTH`] deep and expressions at most [`MAX_EXPR_DEPTH`] (both in
//! parser recursion and in tree height), each with its own diagnostic, and
//! what lies beyond the limit is skipped by a loop, not by recursion. So no
//! input can overflow the stack, here or in any later walk over the tree.

use super::ast::*;
use super::lexer::{int_value, Lexer, Tok, Token};
use crate::diagnostics::{Diagnostic, FileId};
use crate::model::builder::MAX_DEPTH;
use crate::model::{BinOp, CmpOp, ElemType, Span};
use lasso::Rodeo;

/// The deepest an expression may nest (parentheses, operators, subscripts).
pub const MAX_EXPR_DEPTH: u32 = 256;

/// After this many errors the parser stops reading the file.
pub const MAX_ERRORS: usize = 100;

/// Parses a whole file. The tree holds everything that could be read; the
/// diagnostics say what could not.
pub fn parse(source: &str, file: FileId) -> (File, Vec<Diagnostic>) {
    let mut p = Parser {
        src: source,
        file,
        lexer: Lexer::new(source),
        cur: Token {
            tok: Tok::Eof,
            span: Span::NONE,
        },
        next: None,
        prev: Span::NONE,
        names: Rodeo::with_hasher(NameHasher::default()),
        diags: Vec::new(),
        errors: 0,
        gave_up: false,
        depth: 0,
        edepth: 0,
        consumed: 0,
        exprs: Vec::new(),
        lists: Vec::new(),
        exts: Vec::new(),
        scratch: Vec::new(),
        garbage: None,
        eof_reported: false,
        else_if: None,
        star_ok: false,
    };
    p.cur = p.lex();
    let items = p.items(Block::Top);
    let diags = p.diags;
    (
        File {
            items,
            names: p.names,
            exprs: p.exprs,
            lists: p.lists,
            exts: p.exts,
        },
        diags,
    )
}

/// What kind of block is being parsed, for recovery and messages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    Top,
    For,
    While,
    If,
    Proc,
}

impl Block {
    fn keyword(self) -> &'static str {
        match self {
            Block::Top => "",
            Block::For => "for",
            Block::While => "while",
            Block::If => "if",
            Block::Proc => "proc",
        }
    }
}

struct Parser<'s> {
    src: &'s str,
    file: FileId,
    lexer: Lexer<'s>,
    /// The next token, and the one after it once looked at.
    cur: Token,
    next: Option<Token>,
    /// The last token consumed.
    prev: Span,
    names: Rodeo<lasso::Spur, NameHasher>,
    diags: Vec<Diagnostic>,
    errors: usize,
    gave_up: bool,
    /// Open blocks.
    depth: usize,
    /// Expression recursion.
    edepth: u32,
    /// Tokens consumed so far, to prove progress.
    consumed: u64,
    /// The expression arena and list elements of the file being built.
    exprs: Vec<Expr>,
    lists: Vec<ExprId>,
    exts: Vec<Ext>,
    /// Lists being read, innermost on top.
    scratch: Vec<ExprId>,
    /// The last run of unexpected characters, to silence the parse error it
    /// causes right after it.
    garbage: Option<Span>,
    /// A missing `end` at the end of the file was reported.
    eof_reported: bool,
    /// The first `else if` seen (see `if_rest`).
    else_if: Option<Span>,
    /// Reading a procedure call's arguments: `*` may stand as a subscript.
    star_ok: bool,
}

/// Infix operators: (left binding power, right binding power).
fn infix(tok: Tok) -> Option<(u8, u8)> {
    Some(match tok {
        Tok::Or => (1, 2),
        Tok::And => (3, 4),
        Tok::EqEq | Tok::Ne | Tok::Lt | Tok::Le | Tok::Gt | Tok::Ge => (7, 8),
        Tok::Plus | Tok::Minus => (9, 10),
        Tok::Star | Tok::Slash | Tok::Percent => (11, 12),
        _ => return None,
    })
}
const NOT_BP: u8 = 5;
const NEG_BP: u8 = 13;

fn starts_item(tok: Tok) -> bool {
    matches!(
        tok,
        Tok::Param
            | Tok::Assume
            | Tok::Real
            | Tok::IntKw
            | Tok::ArrayKw
            | Tok::For
            | Tok::While
            | Tok::If
            | Tok::End
            | Tok::Elsif
            | Tok::Else
            | Tok::At
            | Tok::Eof
    )
}

impl<'s> Parser<'s> {
    // ---- tokens -------------------------------------------------------

    fn eof(&self) -> Token {
        let end = self.src.len();
        Token {
            tok: Tok::Eof,
            span: Span::new(end, end),
        }
    }

    /// The next token from the lexer, reporting and skipping unexpected
    /// characters.
    fn lex(&mut self) -> Token {
        loop {
            if self.gave_up {
                return self.eof();
            }
            let t = self.lexer.next_token();
            if t.tok != Tok::Error {
                return t;
            }
            let text: String = self.src[t.span.range()].chars().take(16).collect();
            let shown = text.escape_debug().to_string();
            let d = Diagnostic::error("E0001", format!("unexpected characters `{shown}`"))
                .primary(self.file, t.span, "no token starts with this")
                .note(garbage_hint(&text));
            self.report(d);
            self.garbage = Some(t.span);
        }
    }

    /// The next token (`n == 0`) or the one after it (`n == 1`).
    fn peek_at(&mut self, n: usize) -> Token {
        if n == 0 {
            return self.cur;
        }
        if self.next.is_none() && self.cur.tok != Tok::Eof {
            let t = self.lex();
            self.next = Some(t);
        }
        self.next.unwrap_or(self.cur)
    }

    fn peek(&mut self) -> Tok {
        self.peek_at(0).tok
    }

    fn span(&mut self) -> Span {
        self.peek_at(0).span
    }

    fn bump(&mut self) -> Token {
        let t = self.cur;
        if t.tok != Tok::Eof {
            self.cur = match self.next.take() {
                Some(n) => n,
                None => self.lex(),
            };
            self.prev = t.span;
            self.consumed += 1;
        }
        t
    }

    fn at(&mut self, tok: Tok) -> bool {
        self.peek() == tok
    }

    fn eat(&mut self, tok: Tok) -> Option<Token> {
        if self.at(tok) {
            Some(self.bump())
        } else {
            None
        }
    }

    fn text(&self, span: Span) -> &'s str {
        &self.src[span.range()]
    }

    fn at_ident(&mut self, word: &str) -> bool {
        let t = self.peek_at(0);
        t.tok == Tok::Ident && self.text(t.span) == word
    }

    /// Whether the next token starts a new line.
    fn on_new_line(&mut self) -> bool {
        let start = self.span().start as usize;
        let from = (self.prev.end as usize).min(start);
        self.src[from..start].contains('\n')
    }

    fn found(&mut self) -> String {
        let t = self.peek_at(0);
        match t.tok {
            Tok::Ident | Tok::Int => format!("`{}`", self.text(t.span)),
            other => other.describe().to_string(),
        }
    }

    // ---- diagnostics --------------------------------------------------

    fn report(&mut self, d: Diagnostic) {
        if self.gave_up {
            return;
        }
        if d.code == "E0002" {
            if let Some(g) = self.garbage {
                if g.start >= self.prev.end && g.end <= self.cur.span.start {
                    return; // caused by the characters just reported
                }
            }
        }
        if d.is_error() {
            self.errors += 1;
            if self.errors > MAX_ERRORS {
                self.gave_up = true;
                self.cur = self.eof();
                self.next = None;
                let at = d.labels.first().map_or(Span::NONE, |l| l.span);
                self.diags.push(
                    Diagnostic::error(
                        "E0008",
                        format!("too many syntax errors; stopped after {MAX_ERRORS}"),
                    )
                    .primary(self.file, at, "stopped reading here"),
                );
                return;
            }
        }
        self.diags.push(d);
    }

    /// "expected X, found Y" at the next token.
    /// When the next token starts a new line, the thing is missing at the
    /// end of the previous one, so the error points there.
    fn expected(&mut self, what: &str) {
        if self.on_new_line() && self.consumed > 0 {
            return self.expected_after(what);
        }
        let found = self.found();
        let span = self.span();
        let d = Diagnostic::error("E0002", format!("expected {what}, found {found}")).primary(
            self.file,
            span,
            format!("expected {what}"),
        );
        self.report(d);
    }

    /// "expected X" right after the last token read.
    fn expected_after(&mut self, what: &str) {
        let found = self.found();
        let after = Span::new(self.prev.end as usize, self.prev.end as usize);
        let mut d = Diagnostic::error("E0002", format!("expected {what}, found {found}"))
            .primary(self.file, after, format!("expected {what} here"))
            .secondary(self.file, self.prev, "after this");
        let decimal = self.text(self.prev).bytes().all(|b| b.is_ascii_digit())
            && self.src[after.end as usize..].starts_with('.')
            && self
                .src
                .as_bytes()
                .get(after.end as usize + 1)
                .is_some_and(u8::is_ascii_digit);
        if decimal {
            d = d.note("numbers are integers: there are no decimal fractions");
        }
        self.report(d);
    }

    fn expect(&mut self, tok: Tok) -> Option<Token> {
        if let Some(t) = self.eat(tok) {
            return Some(t);
        }
        self.expected(tok.describe());
        None
    }

    fn expect_name(&mut self, what: &str) -> Option<Name> {
        if self.at(Tok::Ident) {
            let t = self.bump();
            Some(self.intern(t.span))
        } else {
            self.expected(what);
            None
        }
    }

    fn intern(&mut self, span: Span) -> Name {
        let sym = self.names.get_or_intern(&self.src[span.range()]);
        Name { sym, span }
    }

    /// `;` at the end of a statement. When it is missing, the error points
    /// just after what came before, and nothing is skipped if a new statement
    /// clearly starts.
    fn expect_semi(&mut self) {
        if self.eat(Tok::Semi).is_some() {
            return;
        }
        self.expected_after("`;`");
        if !(self.on_new_line() || starts_item(self.peek())) {
            self.sync();
        }
    }

    // ---- recovery -----------------------------------------------------

    /// Skips to the next synchronisation point. A `do` or `then` found on the
    /// way opens a block, which is parsed (for its errors) and dropped.
    fn sync(&mut self) {
        loop {
            let t = self.peek();
            if t == Tok::Semi {
                self.bump();
                return;
            }
            if starts_item(t) || (t == Tok::Ident && self.on_new_line()) {
                return;
            }
            if t == Tok::Do || t == Tok::Then || self.at_ident("doall") {
                let opener = self.bump().span;
                let kind = if t == Tok::Then {
                    Block::If
                } else {
                    Block::For
                };
                let _ = self.block(kind, opener);
                if kind == Block::If {
                    self.if_tail(opener);
                } else {
                    self.end_block(kind, opener);
                }
                return;
            }
            self.bump();
        }
    }

    /// Skips, without recursion, what is nested past [`MAX_DEPTH`]: up to
    /// (not including) the `end`, `elsif` or `else` that belongs to the
    /// block being skipped.
    fn skip_block(&mut self) {
        let mut open = 0usize;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::For | Tok::While | Tok::If => {
                    open += 1;
                    self.bump();
                }
                Tok::End => {
                    if open == 0 {
                        return;
                    }
                    open -= 1;
                    self.bump();
                    self.closing_keyword();
                }
                Tok::Elsif | Tok::Else if open == 0 => return,
                _ => {
                    self.bump();
                }
            }
        }
    }

    /// Skips, without recursion, an expression nested past
    /// [`MAX_EXPR_DEPTH`]: up to the bracket that closes an enclosing level,
    /// or a `;`, `then`, `do`, `..` or `,` outside brackets.
    fn skip_expr(&mut self) {
        let mut open = 0usize;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::LParen | Tok::LBracket => open += 1,
                Tok::RParen | Tok::RBracket => {
                    if open == 0 {
                        return;
                    }
                    open -= 1;
                }
                Tok::Semi
                | Tok::Then
                | Tok::Do
                | Tok::DotDot
                | Tok::Comma
                | Tok::To
                | Tok::Step
                    if open == 0 =>
                {
                    return
                }
                t if open == 0 && starts_item(t) => return,
                _ => {}
            }
            self.bump();
        }
    }

    // ---- items and blocks ---------------------------------------------

    /// Items up to the end of the file or to what closes `kind`.
    fn items(&mut self, kind: Block) -> Vec<Item> {
        let mut out = Vec::new();
        loop {
            let t = self.peek_at(0);
            match t.tok {
                Tok::Eof => return out,
                Tok::End if kind != Block::Top => return out,
                Tok::Elsif | Tok::Else if kind == Block::If => return out,
                Tok::End | Tok::Elsif | Tok::Else => {
                    let what = if kind == Block::Top {
                        "nothing is open here".to_string()
                    } else {
                        format!("this is inside a `{}` loop", kind.keyword())
                    };
                    let word = t.tok.describe();
                    let d = Diagnostic::error("E0002", format!("{word} does not close anything"))
                        .primary(self.file, t.span, what);
                    self.report(d);
                    self.bump();
                    if t.tok == Tok::End {
                        self.closing_keyword();
                        self.eat(Tok::Semi);
                    }
                }
                _ => {
                    let before = self.consumed;
                    if let Some(item) = self.item() {
                        out.push(item);
                    }
                    if self.consumed == before {
                        // Nothing consumed: never loop on the same token.
                        self.bump();
                    }
                }
            }
        }
    }

    /// A block body, bounded by [`MAX_DEPTH`].
    fn block(&mut self, kind: Block, opener: Span) -> Vec<Item> {
        if self.depth >= MAX_DEPTH {
            let d = Diagnostic::error("E0005", format!("blocks nested more than {MAX_DEPTH} deep"))
                .primary(self.file, opener, "this block is too deep")
                .note(format!(
                    "loops and `if`s may nest at most {MAX_DEPTH} deep; what is inside was skipped"
                ));
            self.report(d);
            self.skip_block();
            return Vec::new();
        }
        self.depth += 1;
        let body = self.items(kind);
        self.depth -= 1;
        body
    }

    /// After `end`: the papers' `end for`, `end while`, `end if` (only on the
    /// same line, so that `end` followed by a new loop stays a new loop).
    fn closing_keyword(&mut self) -> Option<Token> {
        if matches!(self.peek(), Tok::For | Tok::While | Tok::If) && !self.on_new_line() {
            Some(self.bump())
        } else {
            None
        }
    }

    /// The `end` of a block opened at `opener`; returns the end of the block.
    fn end_block(&mut self, kind: Block, opener: Span) -> Span {
        if let Some(end) = self.eat(Tok::End) {
            let mut last = end.span;
            if let Some(k) = self.closing_keyword() {
                last = k.span;
                let expected = match kind {
                    Block::For => Tok::For,
                    Block::While => Tok::While,
                    Block::Proc => Tok::Eof,
                    _ => Tok::If,
                };
                if k.tok != expected {
                    let d = Diagnostic::error(
                        "E0002",
                        format!(
                            "`end {}` closes a `{}` block",
                            self.text(k.span),
                            kind.keyword()
                        ),
                    )
                    .primary(self.file, end.span.to(k.span), "mismatched `end`")
                    .secondary(self.file, opener, "the block opened here");
                    self.report(d);
                }
            }
            if let Some(s) = self.eat(Tok::Semi) {
                last = s.span;
            }
            return last;
        }
        // At the end of the file every open block lacks its `end`: say so
        // once, at the innermost.
        if self.eof_reported {
            return self.prev;
        }
        let eof = self.span();
        let open = self.depth + 1;
        let mut d = Diagnostic::error("E0003", format!("this `{}` has no `end`", kind.keyword()))
            .primary(self.file, opener, "opened here")
            .secondary(self.file, eof, "expected `end` before this")
            .note("every `for`, `while` and `if` closes with `end`");
        if open > 1 {
            d = d.note(format!("{open} blocks are open at the end of the file"));
        }
        if let Some(span) = self.else_if {
            d = d
                .secondary(
                    self.file,
                    span,
                    "this opens a new `if`, which needs its own `end`",
                )
                .note("to test another condition in the same `if`, write `elsif`");
        }
        self.report(d);
        self.eof_reported = self.at(Tok::Eof);
        self.prev
    }

    fn item(&mut self) -> Option<Item> {
        let start = self.span();
        match self.peek() {
            Tok::Param => Some(self.param_decl()),
            Tok::Assume => {
                self.bump();
                let cond = self.expr();
                self.expect_semi();
                Some(Item::Assume(cond, start.to(self.prev)))
            }
            Tok::Real | Tok::IntKw | Tok::ArrayKw => Some(self.array_decl()),
            Tok::For => Some(Item::Stmt(Stmt::For(self.for_loop()))),
            Tok::While => Some(Item::Stmt(Stmt::While(self.while_loop()))),
            Tok::If => Some(Item::Stmt(Stmt::If(self.if_stmt()))),
            Tok::Ident if self.at_ident("proc") && self.peek_at(1).tok == Tok::Ident => {
                Some(self.proc_def())
            }
            // `break` is a keyword only before `;` (elsewhere a name).
            Tok::Ident if self.at_ident("break") && self.peek_at(1).tok == Tok::Semi => {
                let at = self.bump().span;
                self.bump();
                Some(Item::Stmt(Stmt::Break(at)))
            }
            Tok::Semi => {
                let d = Diagnostic::error("E0002", "a `;` with no statement before it").primary(
                    self.file,
                    start,
                    "empty statement",
                );
                self.report(d);
                self.bump();
                None
            }
            _ => self.simple_stmt(),
        }
    }

    fn param_decl(&mut self) -> Item {
        let start = self.bump().span;
        let mut decls = Vec::new();
        loop {
            let Some(name) = self.expect_name("a parameter name") else {
                self.sync();
                return Item::Param(decls, start.to(self.prev));
            };
            let default = if self.eat(Tok::Assign).is_some() {
                let at = self.span();
                let neg = self.eat(Tok::Minus).is_some();
                if self.at(Tok::Int) {
                    let t = self.bump();
                    Some((self.int_literal(t, neg, at), at.to(t.span)))
                } else {
                    self.expected("an integer default value");
                    self.sync();
                    return Item::Param(decls, start.to(self.prev));
                }
            } else {
                None
            };
            decls.push(ParamDecl { name, default });
            if self.eat(Tok::Comma).is_none() {
                break;
            }
        }
        self.expect_semi();
        Item::Param(decls, start.to(self.prev))
    }

    fn array_decl(&mut self) -> Item {
        let kw = self.bump();
        let elem = match kw.tok {
            Tok::IntKw => ElemType::Int,
            Tok::ArrayKw => ElemType::Array,
            _ => ElemType::Real,
        };
        let mut decls = Vec::new();
        loop {
            let Some(name) = self.expect_name("an array name") else {
                self.sync();
                return Item::Array(elem, decls, kw.span.to(self.prev));
            };
            let Some(dims) = self.ranges() else {
                self.sync();
                return Item::Array(elem, decls, kw.span.to(self.prev));
            };
            decls.push(ArrayDecl {
                name,
                dims,
                span: name.span.to(self.prev),
            });
            if self.eat(Tok::Comma).is_none() {
                break;
            }
        }
        self.expect_semi();
        Item::Array(elem, decls, kw.span.to(self.prev))
    }

    /// Declared ranges `[lo..hi, ...][...]` after an array's name; `None`
    /// after a syntax error (reported).
    fn ranges(&mut self) -> Option<Vec<(ExprId, ExprId)>> {
        let mut dims = Vec::new();
        while let Some(open) = self.eat(Tok::LBracket) {
            loop {
                let lo = self.expr();
                self.expect(Tok::DotDot)?;
                let hi = self.expr();
                dims.push((lo, hi));
                if self.eat(Tok::Comma).is_none() {
                    break;
                }
            }
            if !self.close(Tok::RBracket, open.span) {
                return None;
            }
        }
        Some(dims)
    }

    /// `proc name(formal, ...) body end` (extension, docs/language.md).
    fn proc_def(&mut self) -> Item {
        let start = self.bump().span;
        let name = self.bump();
        let name = self.intern(name.span);
        let mut formals = Vec::new();
        if let Some(open) = self.expect(Tok::LParen) {
            if self.eat(Tok::RParen).is_none() {
                loop {
                    match self.formal() {
                        Some(f) => formals.push(f),
                        None => {
                            self.skip_expr();
                            break;
                        }
                    }
                    if self.eat(Tok::Comma).is_none() {
                        break;
                    }
                }
                self.close(Tok::RParen, open.span);
            }
        }
        let header = start.to(self.prev);
        let body = self.block(Block::Proc, start);
        let end = self.end_block(Block::Proc, start);
        Item::Proc(Proc {
            name,
            formals,
            body,
            header,
            span: start.to(end),
        })
    }

    /// `real X[lo..hi]`, `real s` (arrays by reference) or `int k` (a value).
    fn formal(&mut self) -> Option<Formal> {
        let kw = self.peek_at(0);
        let elem = match kw.tok {
            Tok::Real => ElemType::Real,
            Tok::IntKw => ElemType::Int,
            Tok::ArrayKw => ElemType::Array,
            _ => {
                self.expected("a parameter (`real X[1..N]`, `real s` or `int k`)");
                return None;
            }
        };
        self.bump();
        let name = self.expect_name("a parameter name")?;
        let dims = self.ranges()?;
        let kind = if elem == ElemType::Int && dims.is_empty() {
            FormalKind::Int
        } else {
            FormalKind::Array(elem, dims)
        };
        Some(Formal {
            name,
            kind,
            span: kw.span.to(self.prev),
        })
    }

    /// A closing bracket; on failure the error also points at the opener.
    fn close(&mut self, tok: Tok, open: Span) -> bool {
        if self.eat(tok).is_some() {
            return true;
        }
        let found = self.found();
        let span = self.span();
        let d = Diagnostic::error(
            "E0002",
            format!("expected {}, found {found}", tok.describe()),
        )
        .primary(self.file, span, format!("expected {}", tok.describe()))
        .secondary(self.file, open, "to close this");
        self.report(d);
        false
    }

    /// `do` or `doall` after a `for` header; `then` after a condition.
    /// `report` is false when the header already had an error.
    fn header_end(&mut self, what: &str, accept: &[&str], report: bool) -> Option<bool> {
        let t = self.peek_at(0);
        for (k, word) in accept.iter().enumerate() {
            let hit = match *word {
                "do" => t.tok == Tok::Do,
                "then" => t.tok == Tok::Then,
                w => t.tok == Tok::Ident && self.text(t.span) == w,
            };
            if hit {
                self.bump();
                return Some(k == 1);
            }
        }
        if report {
            self.expected(what);
        }
        // Resynchronise on the header's end, without leaving its line.
        loop {
            let t = self.peek_at(0);
            let hit = match t.tok {
                Tok::Do | Tok::Then => true,
                Tok::Ident => accept.contains(&self.text(t.span)),
                _ => false,
            };
            if hit {
                let parallel = t.tok == Tok::Ident;
                self.bump();
                return Some(parallel);
            }
            if starts_item(t.tok) || self.on_new_line() {
                return None;
            }
            self.bump();
        }
    }

    fn for_loop(&mut self) -> For {
        let start = self.bump().span;
        let counter = if self.at(Tok::Ident) {
            let t = self.bump();
            Some(self.intern(t.span))
        } else {
            let found = self.found();
            let span = self.span();
            let d = Diagnostic::error("E0002", format!("expected a loop counter, found {found}"))
                .primary(self.file, span, "expected a counter name")
                .note("a loop reads `for i = 1 to N do ... end`");
            self.report(d);
            None
        };
        let mut parallel = false;
        let missing = self.error_expr(start);
        let (mut lower, mut upper, mut step) = (missing, missing, None);
        let accept = ["do", "doall"];
        if counter.is_some() && self.expect(Tok::Assign).is_some() {
            lower = self.expr();
            if self.expect(Tok::To).is_some() {
                upper = self.expr();
                if self.eat(Tok::Step).is_some() {
                    step = Some(self.expr());
                }
                parallel = self
                    .header_end("`do` or `doall`", &accept, true)
                    .unwrap_or(false);
            } else {
                self.header_end("`do`", &accept, false);
            }
        } else {
            self.header_end("`do`", &accept, false);
        }
        let header = start.to(self.prev);
        let body = self.block(Block::For, start);
        let end = self.end_block(Block::For, start);
        For {
            counter,
            lower,
            upper,
            step,
            parallel,
            body,
            header,
            span: start.to(end),
        }
    }

    /// `[name]` after `while`, `if` or `elsif`; the name may be derived,
    /// `[c.2]`, for a version of condition `c` (docs/interpreter.md).
    fn cond_name(&mut self) -> CondName {
        let open = self.eat(Tok::LBracket)?;
        let name = self.expect_name("a name in brackets").and_then(|n| {
            let mut text = self.text(n.span).to_string();
            self.versions(&mut text, "in a condition name")?;
            let sym = self.names.get_or_intern(&text);
            Some(Name {
                sym,
                span: n.span.to(self.prev),
            })
        });
        if !self.close(Tok::RBracket, open.span) {
            return None;
        }
        name
    }

    fn while_loop(&mut self) -> While {
        let start = self.bump().span;
        let name = self.cond_name();
        let cond = self.condition();
        self.header_end("`do`", &["do"], true);
        let header = start.to(self.prev);
        let body = self.block(Block::While, start);
        let end = self.end_block(Block::While, start);
        While {
            name,
            cond,
            body,
            header,
            span: start.to(end),
        }
    }

    fn branch(&mut self, start: Span) -> Branch {
        let name = self.cond_name();
        let cond = self.condition();
        self.header_end("`then`", &["then"], true);
        let header = start.to(self.prev);
        let body = self.block(Block::If, start);
        Branch {
            name,
            cond,
            body,
            header,
        }
    }

    fn if_stmt(&mut self) -> If {
        let start = self.bump().span;
        let first = self.branch(start);
        let (branches, otherwise, end) = self.if_rest(first, start);
        If {
            branches,
            otherwise,
            span: start.to(end),
        }
    }

    /// The `elsif`/`else` branches and the `end` of an `if`.
    fn if_rest(&mut self, first: Branch, start: Span) -> (Vec<Branch>, Option<Vec<Item>>, Span) {
        let mut branches = vec![first];
        let mut otherwise = None;
        loop {
            match self.peek() {
                Tok::Elsif if otherwise.is_none() => {
                    let at = self.bump().span;
                    branches.push(self.branch(at));
                }
                Tok::Else if otherwise.is_none() => {
                    let at = self.bump().span;
                    if self.at(Tok::If) && !self.on_new_line() {
                        // Legal (an `if` inside the `else`), but usually
                        // meant as `elsif`: remembered for a missing `end`.
                        let span = at.to(self.span());
                        self.else_if.get_or_insert(span);
                    }
                    otherwise = Some(self.block(Block::If, at));
                }
                Tok::Elsif | Tok::Else => {
                    let t = self.bump();
                    let d =
                        Diagnostic::error("E0002", format!("{} after `else`", t.tok.describe()))
                            .primary(self.file, t.span, "the `else` branch must come last");
                    self.report(d);
                    let _ = self.block(Block::If, t.span);
                }
                _ => break,
            }
        }
        let end = self.end_block(Block::If, start);
        (branches, otherwise, end)
    }

    /// The rest of an `if` whose header was skipped by recovery.
    fn if_tail(&mut self, opener: Span) {
        let cond = self.error_expr(opener);
        let first = Branch {
            name: None,
            cond,
            body: Vec::new(),
            header: opener,
        };
        let _ = self.if_rest(first, opener);
    }

    /// Assignments and calls, with their optional `@copy` and label.
    fn simple_stmt(&mut self) -> Option<Item> {
        let start = self.span();
        let mut prefix = Prefix::default();
        if let Some(at) = self.eat(Tok::At) {
            if self.at_ident("copy") {
                self.bump();
                prefix.copy = true;
            } else {
                let found = self.found();
                let d = Diagnostic::error(
                    "E0002",
                    format!("unknown annotation: expected `copy` after `@`, found {found}"),
                )
                .primary(
                    self.file,
                    at.span.to(self.span()),
                    "the only annotation is `@copy`",
                );
                self.report(d);
                if self.at(Tok::Ident) && !matches!(self.peek_at(1).tok, Tok::Colon | Tok::Dot) {
                    self.bump();
                }
            }
        }
        if self.at(Tok::Ident) && matches!(self.peek_at(1).tok, Tok::Colon | Tok::Dot) {
            prefix.label = self.label();
            if prefix.label.is_none() {
                self.sync();
                return None;
            }
        }
        if self.at_ident("call") && self.peek_at(1).tok == Tok::Ident {
            return self.proc_call(prefix, start);
        }
        if matches!(self.peek(), Tok::For | Tok::While | Tok::If) {
            let d = Diagnostic::error(
                "E0002",
                "only assignments and calls take a label or `@copy`",
            )
            .primary(self.file, start.to(self.prev), "put this on a statement")
            .note("name a `while` with `while [w] ...` and an `if` with `if [c] ...`");
            self.report(d);
            return self.item();
        }
        let Some(name) = self.expect_name("a statement") else {
            self.sync();
            return None;
        };
        match self.peek() {
            Tok::LParen => {
                let args = self.list(Tok::RParen);
                let span = start.to(self.prev);
                self.expect_semi();
                Some(Item::Stmt(Stmt::Call(CallStmt {
                    prefix,
                    func: name,
                    args,
                    span,
                })))
            }
            _ => {
                let subscripts = self.list(Tok::RBracket);
                let target_span = name.span.to(self.prev);
                let ext = self.ext_suffix();
                let op = match self.peek() {
                    Tok::Assign => None,
                    Tok::PlusAssign => Some(BinOp::Add),
                    Tok::MinusAssign => Some(BinOp::Sub),
                    Tok::StarAssign => Some(BinOp::Mul),
                    Tok::SlashAssign => Some(BinOp::Div),
                    Tok::PercentAssign => Some(BinOp::Rem),
                    _ => {
                        let what = if subscripts.len == 0 {
                            "`=`, `[` or `(`"
                        } else {
                            "`=`"
                        };
                        self.expected(what);
                        if let Some(kw) = near_keyword(self.text(name.span)) {
                            if let Some(d) = self.diags.last_mut() {
                                d.labels.push(crate::diagnostics::Label {
                                    file: self.file,
                                    span: name.span,
                                    message: format!("did you mean `{kw}`?"),
                                    primary: false,
                                });
                            }
                        }
                        self.sync();
                        return None;
                    }
                };
                self.bump();
                let value = self.expr();
                let span = start.to(self.prev);
                self.expect_semi();
                Some(Item::Stmt(Stmt::Assign(Assign {
                    prefix,
                    target: name,
                    subscripts,
                    target_span,
                    ext,
                    op,
                    value,
                    span,
                })))
            }
        }
    }

    /// `call name(args);`, after its prefix.
    fn proc_call(&mut self, prefix: Prefix, start: Span) -> Option<Item> {
        self.bump();
        let t = self.bump();
        let proc = self.intern(t.span);
        if !self.at(Tok::LParen) {
            self.expected("`(` after the procedure's name");
            self.sync();
            return None;
        }
        let outer = std::mem::replace(&mut self.star_ok, true);
        let args = self.list(Tok::RParen);
        self.star_ok = outer;
        let span = start.to(self.prev);
        self.expect_semi();
        Some(Item::Stmt(Stmt::ProcCall(ProcCall {
            prefix,
            proc,
            args,
            span,
        })))
    }

    /// `S:` or a derived label `S.1.2:`.
    fn label(&mut self) -> Option<Label> {
        let first = self.bump().span;
        let mut text = self.text(first).to_string();
        self.versions(&mut text, "in a label")?;
        let span = first.to(self.prev);
        self.expect(Tok::Colon)?;
        Some(Label { text, span })
    }

    /// A derived-version suffix `.1.2`, appended to `text`; a name
    /// segment, `L.S`, is a statement `S` inlined at call `L` (extension).
    fn versions(&mut self, text: &mut String, what: &str) -> Option<()> {
        while self.eat(Tok::Dot).is_some() {
            if self.at(Tok::Int) || self.at(Tok::Ident) {
                let t = self.bump();
                text.push('.');
                text.push_str(self.text(t.span));
            } else {
                self.expected(&format!("a version number after `.` {what}"));
                return None;
            }
        }
        Some(())
    }

    /// Comma-separated expressions up to the closing `close`, appended to
    /// the scratch stack (so nested lists stay contiguous when moved).
    fn args_onto_scratch(&mut self, close: Tok, open: Span) {
        if self.eat(close).is_some() {
            return;
        }
        loop {
            let e = self.expr();
            self.scratch.push(e);
            if self.eat(Tok::Comma).is_none() {
                break;
            }
        }
        if !self.close(close, open) {
            // Skip to the closer if it is on this statement.
            self.skip_expr();
            self.eat(close);
        }
    }

    /// Moves the scratch stack above `mark` into a list.
    fn list_from(&mut self, mark: usize) -> List {
        let start = self.lists.len() as u32;
        self.lists.extend(self.scratch.drain(mark..));
        List {
            start,
            len: self.lists.len() as u32 - start,
        }
    }

    /// `(a, b)` or `[i, j][k]`: the list after an opening bracket just seen.
    /// `@name(args)` after an access, if there is one (the caller has read
    /// `A[...]`; `@` can follow nothing else there).
    fn ext_suffix(&mut self) -> Option<Ext> {
        let at = self.eat(Tok::At)?;
        if !self.at(Tok::Ident) {
            self.expected("an access kind name after `@`");
            return None;
        }
        let kind = self.bump();
        let kind = self.intern(kind.span);
        if !self.at(Tok::LParen) {
            self.expected("`(` after the access kind");
            return None;
        }
        let args = self.list(Tok::RParen);
        Some(Ext {
            kind,
            args,
            span: at.span.to(self.prev),
        })
    }

    fn list(&mut self, close: Tok) -> List {
        let mark = self.scratch.len();
        let open = if close == Tok::RParen {
            Tok::LParen
        } else {
            Tok::LBracket
        };
        while let Some(o) = self.eat(open) {
            self.args_onto_scratch(close, o.span);
            if close == Tok::RParen {
                break;
            }
        }
        self.list_from(mark)
    }

    // ---- expressions --------------------------------------------------

    /// The condition of an `if`, `elsif` or `while`. `a = b` there is read as
    /// `a == b` after saying so, which is what its writer meant.
    fn condition(&mut self) -> ExprId {
        let lhs = self.expr();
        if !self.at(Tok::Assign) {
            return lhs;
        }
        let eq = self.bump().span;
        let d = Diagnostic::error("E0002", "`=` in a condition")
            .primary(self.file, eq, "write `==` to compare")
            .note("`=` assigns; conditions compare with `==`, `!=`, `<`, `<=`, `>`, `>=`");
        self.report(d);
        let rhs = self.expr();
        let span = self.get(lhs).span.to(self.get(rhs).span);
        self.node(ExprKind::Infix(Infix::Cmp(CmpOp::Eq), lhs, rhs), span)
    }

    fn push(&mut self, e: Expr) -> ExprId {
        self.exprs.push(e);
        ExprId(self.exprs.len() as u32 - 1)
    }

    fn get(&self, id: ExprId) -> &Expr {
        &self.exprs[id.0 as usize]
    }

    fn leaf(&mut self, kind: ExprKind, span: Span) -> ExprId {
        self.push(Expr {
            kind,
            span,
            height: 1,
        })
    }

    fn error_expr(&mut self, span: Span) -> ExprId {
        self.leaf(ExprKind::Error, span)
    }

    /// A node over its children; the height follows from theirs.
    fn node(&mut self, kind: ExprKind, span: Span) -> ExprId {
        let h = |p: &Self, id: ExprId| p.get(id).height;
        let below = match kind {
            ExprKind::Index(_, l) | ExprKind::Call(_, l) => {
                let ids = &self.lists[l.start as usize..(l.start + l.len) as usize];
                ids.iter().map(|&x| h(self, x)).max().unwrap_or(0)
            }
            ExprKind::Neg(x) | ExprKind::Not(x) => h(self, x),
            ExprKind::Ext(x, e) => {
                let l = self.exts[e as usize].args;
                let ids = &self.lists[l.start as usize..(l.start + l.len) as usize];
                ids.iter()
                    .map(|&y| h(self, y))
                    .max()
                    .unwrap_or(0)
                    .max(h(self, x))
            }
            ExprKind::Infix(_, l, r) => h(self, l).max(h(self, r)),
            _ => 0,
        };
        self.push(Expr {
            kind,
            span,
            height: below + 1,
        })
    }

    fn expr(&mut self) -> ExprId {
        self.expr_bp(0)
    }

    fn too_deep(&mut self, span: Span) -> ExprId {
        let d = Diagnostic::error(
            "E0006",
            format!("expression nested more than {MAX_EXPR_DEPTH} deep"),
        )
        .primary(self.file, span, "too deep from here on")
        .note("split the expression, or use fewer parentheses");
        self.report(d);
        self.error_expr(span)
    }

    fn expr_bp(&mut self, min_bp: u8) -> ExprId {
        if self.edepth >= MAX_EXPR_DEPTH {
            let span = self.span();
            let e = self.too_deep(span);
            self.skip_expr();
            return e;
        }
        self.edepth += 1;
        let e = self.expr_bp_inner(min_bp);
        self.edepth -= 1;
        e
    }

    fn expr_bp_inner(&mut self, min_bp: u8) -> ExprId {
        let mut lhs = self.prefix();
        loop {
            let tok = self.peek();
            let Some((l_bp, r_bp)) = infix(tok) else {
                break;
            };
            if l_bp < min_bp {
                break;
            }
            self.bump();
            let rhs = self.expr_bp(r_bp);
            let span = self.get(lhs).span.to(self.get(rhs).span);
            let op = match tok {
                Tok::Or => Infix::Or,
                Tok::And => Infix::And,
                Tok::EqEq => Infix::Cmp(CmpOp::Eq),
                Tok::Ne => Infix::Cmp(CmpOp::Ne),
                Tok::Lt => Infix::Cmp(CmpOp::Lt),
                Tok::Le => Infix::Cmp(CmpOp::Le),
                Tok::Gt => Infix::Cmp(CmpOp::Gt),
                Tok::Ge => Infix::Cmp(CmpOp::Ge),
                Tok::Plus => Infix::Bin(BinOp::Add),
                Tok::Minus => Infix::Bin(BinOp::Sub),
                Tok::Star => Infix::Bin(BinOp::Mul),
                Tok::Slash => Infix::Bin(BinOp::Div),
                _ => Infix::Bin(BinOp::Rem),
            };
            lhs = self.node(ExprKind::Infix(op, lhs, rhs), span);
            if self.get(lhs).height > MAX_EXPR_DEPTH {
                // A long operator chain: report once, keep reading flat.
                lhs = self.too_deep(span);
                while let Some((l_bp, _)) = infix(self.peek()) {
                    if l_bp < min_bp {
                        break;
                    }
                    self.bump();
                    let _ = self.prefix();
                }
                let whole = span.to(self.prev);
                self.exprs[lhs.0 as usize].span = whole;
            }
        }
        lhs
    }

    /// An integer literal, negated when `neg`; `None` when it does not fit.
    fn int_literal(&mut self, t: Token, neg: bool, start: Span) -> Option<i64> {
        let text = self.text(t.span);
        let value = int_value(text).and_then(|v| {
            let v = if neg { -(v as i128) } else { v as i128 };
            i64::try_from(v).ok()
        });
        if value.is_none() {
            let sign = if neg { "-" } else { "" };
            let d = Diagnostic::error(
                "E0004",
                format!("integer literal `{sign}{text}` does not fit in 64 bits"),
            )
            .primary(self.file, start.to(t.span), "too large")
            .note("integers range from -9223372036854775808 to 9223372036854775807");
            self.report(d);
        }
        value
    }

    fn prefix(&mut self) -> ExprId {
        let t = self.peek_at(0);
        match t.tok {
            Tok::Int => {
                self.bump();
                let v = self.int_literal(t, false, t.span);
                self.leaf(ExprKind::Int(v), t.span)
            }
            Tok::Ellipsis => {
                self.bump();
                self.leaf(ExprKind::Unknown, t.span)
            }
            Tok::Star
                if self.star_ok && matches!(self.peek_at(1).tok, Tok::Comma | Tok::RBracket) =>
            {
                self.bump();
                self.leaf(ExprKind::Star, t.span)
            }
            Tok::Ident => {
                self.bump();
                let name = self.intern(t.span);
                match self.peek() {
                    Tok::LParen => {
                        let args = self.list(Tok::RParen);
                        self.node(ExprKind::Call(name, args), t.span.to(self.prev))
                    }
                    Tok::LBracket => {
                        let subs = self.list(Tok::RBracket);
                        let index = self.node(ExprKind::Index(name, subs), t.span.to(self.prev));
                        match self.ext_suffix() {
                            Some(ext) => {
                                self.exts.push(ext);
                                let at = self.exts.len() as u32 - 1;
                                self.node(ExprKind::Ext(index, at), t.span.to(self.prev))
                            }
                            None => index,
                        }
                    }
                    _ => self.leaf(ExprKind::Name(name), t.span),
                }
            }
            Tok::LParen => {
                self.bump();
                let inner = self.expr_bp(0);
                self.close(Tok::RParen, t.span);
                let span = t.span.to(self.prev);
                self.exprs[inner.0 as usize].span = span;
                inner
            }
            Tok::Minus => {
                self.bump();
                let next = self.peek_at(0);
                if next.tok == Tok::Int {
                    // `-5` is one literal, so `-9223372036854775808` fits.
                    self.bump();
                    let v = self.int_literal(next, true, t.span);
                    return self.leaf(ExprKind::Int(v), t.span.to(next.span));
                }
                let x = self.expr_bp(NEG_BP);
                let span = t.span.to(self.get(x).span);
                self.node(ExprKind::Neg(x), span)
            }
            Tok::Not => {
                self.bump();
                let x = self.expr_bp(NOT_BP);
                let span = t.span.to(self.get(x).span);
                self.node(ExprKind::Not(x), span)
            }
            _ => {
                self.expected("an expression");
                self.error_expr(Span::new(t.span.start as usize, t.span.start as usize))
            }
        }
    }
}

/// What to write instead of characters the language has no token for.
fn garbage_hint(text: &str) -> &'static str {
    match text.trim() {
        "!" => "write `not` for negation (`!=` compares)",
        "&&" | "&" => "write `and`",
        "||" | "|" => "write `or`",
        "{" | "}" => "blocks are `do ... end` and `then ... end`, not braces",
        "\"" | "'" => "there are no strings; use `...` for an unknown value",
        _ => "names are letters, digits and `_`; comments start with `#` or `//`",
    }
}

/// A keyword the misspelt `word` is probably meant to be: one edit away
/// (two for long keywords), counting a swap of neighbours as one edit.
fn near_keyword(word: &str) -> Option<&'static str> {
    const KEYWORDS: [&str; 13] = [
        "param", "assume", "real", "int", "array", "for", "while", "if", "then", "elsif", "else",
        "end", "step",
    ];
    if word.len() < 2 {
        return None;
    }
    KEYWORDS.into_iter().find(|kw| {
        let limit = if kw.len() >= 5 { 2 } else { 1 };
        edit_distance(word, kw) <= limit
    })
}

/// Optimal string alignment distance (Levenshtein plus adjacent swaps).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > 2 {
        return usize::MAX;
    }
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspelt_keywords_are_recognised() {
        assert_eq!(near_keyword("fro"), Some("for"));
        assert_eq!(near_keyword("ned"), Some("end"));
        assert_eq!(near_keyword("whiel"), Some("while"));
        assert_eq!(near_keyword("x"), None);
        assert_eq!(near_keyword("A"), None);
        assert_eq!(near_keyword("tmp"), None);
    }
}
