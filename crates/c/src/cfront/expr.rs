//! C expressions into model expressions, conditions and accesses.
//!
//! `+ - * / %` and unary `-` map to the model's operators; every other
//! operator becomes an uninterpreted pure function of its operands (`__lt`,
//! `__shl`, `__select`, ...), which keeps every read and lets the value be
//! opaque. `unknown()` is `...`. A whole array used as a value (passed to a
//! function, or in pointer arithmetic) reads any element, and records an
//! [`Escape`]: a call that gets it may write it.

use super::fields::{Fields, F};
use super::mini::{self, Mini};
use super::scan::children;
use super::{span, Binding, Ctx, Escape, MayWrite, ModelRef, Skip, VarId};
use super::{MAX_NESTING, W_MAY_ACCESS, W_UNKNOWN_VALUE, W_UNSUPPORTED};
use crate::model::*;
use tree_sitter::Node;

/// Where an assignment writes.
pub enum Place {
    /// Exactly this element (or scalar).
    Exact(Access),
    /// Some element of this access: `guard` when the access names one cell,
    /// so only an unknown guard around the write makes it a "may".
    Over {
        access: Access,
        guard: bool,
        why: String,
    },
    /// Some element of each of these: an access through a pointer whose
    /// target is not known (`alias`), with the other values it reads.
    Alias {
        accesses: Vec<Access>,
        reads: Vec<Expr>,
        why: String,
    },
    /// Not a variable the model can write; the message says what it is.
    Not(String),
}

impl Place {
    /// Some element of `array` (any cell the subscripts allow); a scalar's
    /// one cell is guarded.
    fn some_element(array: ArrayId, subscripts: Vec<Subscript>, at: Span, why: String) -> Place {
        Place::Over {
            guard: subscripts.is_empty(),
            access: Access {
                array,
                subscripts,
                span: at,
                ext: None,
            },
            why,
        }
    }
}

/// The `__any(...)` subscript: some index of the dimension (the call's
/// arguments keep the reads of the subscript it replaces).
pub fn any(args: Vec<Expr>, at: Span) -> Subscript {
    Subscript::new(Expr::new(ExprKind::Call("__any".to_string(), args), at))
}

fn with_span(mut e: Expr, at: Span) -> Expr {
    e.span = at;
    e
}

fn cmp_op(op: &str) -> Option<CmpOp> {
    Some(match op {
        "<" => CmpOp::Lt,
        "<=" => CmpOp::Le,
        ">" => CmpOp::Gt,
        ">=" => CmpOp::Ge,
        "==" => CmpOp::Eq,
        "!=" => CmpOp::Ne,
        _ => return None,
    })
}

pub fn arith_op(op: &str) -> Option<BinOp> {
    Some(match op {
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        "%" => BinOp::Rem,
        _ => return None,
    })
}

pub use super::cvalue::op_function;

impl<'t> Ctx<'t> {
    /// Runs `f` one nesting level deeper; past `MAX_NESTING` levels the
    /// region is skipped instead, so no input overflows the stack.
    pub fn nested<T>(
        &mut self,
        at: Span,
        f: impl FnOnce(&mut Self) -> Result<T, Skip>,
    ) -> Result<T, Skip> {
        if self.depth >= MAX_NESTING {
            return Err(self.skip(
                W_UNSUPPORTED,
                format!("statements or expressions nested deeper than {MAX_NESTING} levels"),
                at,
                "too deep",
                "",
            ));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    pub fn lookup(&self, name: &str) -> Option<Binding> {
        if let Some((_, b)) = self.scope.iter().rev().find(|(n, _)| *n == name) {
            return Some(b.clone());
        }
        self.globals.get(name).map(|&v| Binding::Var(v))
    }

    fn unknown_value(&mut self, what: String, at: Span) -> Expr {
        self.warn(
            W_UNKNOWN_VALUE,
            what,
            at,
            "value unknown",
            "the analysis treats it as `...`: an opaque value that reads nothing",
        );
        Expr::new(ExprKind::Unknown, at)
    }

    fn unsupported(&self, what: String, at: Span) -> Skip {
        self.skip(
            W_UNSUPPORTED,
            what,
            at,
            "not supported",
            "docs/c.md lists the supported subset",
        )
    }

    /// An expression used as a value.
    pub fn value(&mut self, n: Node<'t>) -> Result<Expr, Skip> {
        self.nested(span(n), |cx| cx.value_inner(n))
    }

    fn value_inner(&mut self, n: Node<'t>) -> Result<Expr, Skip> {
        let at = span(n);
        let mk = |k: ExprKind| Expr::new(k, at);
        match n.kind() {
            "number_literal" => {
                let t = self.text(n);
                if let Some(v) = mini::int_literal(t) {
                    return Ok(mk(ExprKind::Int(v)));
                }
                let is_float = !t.starts_with("0x")
                    && !t.starts_with("0X")
                    && (t.contains('.') || t.contains('e') || t.contains('E'))
                    || t.contains('p')
                    || t.contains('P');
                if is_float {
                    // A 0-ary function named after its spelling: printed
                    // back as written (`cvalue`).
                    Ok(match super::cvalue::literal(t) {
                        Some(f) => mk(ExprKind::Call(f, Vec::new())),
                        None => mk(ExprKind::Unknown),
                    })
                } else {
                    Ok(
                        self.unknown_value(
                            format!("the integer `{t}` does not fit in 64 bits"),
                            at,
                        ),
                    )
                }
            }
            "char_literal" => Ok(match char_value(self.text(n)) {
                Some(v) => mk(ExprKind::Int(v)),
                None => mk(ExprKind::Unknown),
            }),
            "true" => Ok(mk(ExprKind::Int(1))),
            "false" | "null" => Ok(mk(ExprKind::Int(0))),
            "string_literal"
            | "concatenated_string"
            | "sizeof_expression"
            | "alignof_expression"
            | "offsetof_expression" => Ok(mk(ExprKind::Unknown)),
            "parenthesized_expression" => match children(n).first() {
                Some(&x) => self.value(x),
                None => Err(Skip(None)),
            },
            "cast_expression" => {
                let x = self.value(n.field(F::Value).ok_or(Skip(None))?)?;
                let ty = n.field(F::Type).map_or("", |t| self.text(t));
                Ok(self.cast_to(ty, x, at))
            }
            "identifier" => self.ident_value(n),
            "subscript_expression" => self.subscript_value(n),
            // `(real_t)(x)`: a cast the parser took for a call.
            "call_expression" => match self.typedef_cast(n) {
                Some((ty, x)) => {
                    let x = self.value(x)?;
                    Ok(self.cast_to(ty, x, at))
                }
                None => self.call(n),
            },
            "unary_expression" => {
                let arg = n.field(F::Argument).ok_or(Skip(None))?;
                let op = n.field(F::Operator).map_or("", |o| self.text(o));
                let x = self.value(arg)?;
                Ok(match op {
                    "-" => mk(ExprKind::Neg(Box::new(x))),
                    "+" => x,
                    _ => mk(ExprKind::Call(op_function(op).to_string(), vec![x])),
                })
            }
            "binary_expression" => {
                let (l, r) = (
                    n.field(F::Left).ok_or(Skip(None))?,
                    n.field(F::Right).ok_or(Skip(None))?,
                );
                let op = n.field(F::Operator).map_or("", |o| self.text(o));
                let (l, r) = (self.value(l)?, self.value(r)?);
                Ok(match arith_op(op) {
                    Some(b) => mk(ExprKind::Binary(b, Box::new(l), Box::new(r))),
                    None => mk(ExprKind::Call(op_function(op).to_string(), vec![l, r])),
                })
            }
            "conditional_expression" => {
                let mut args = Vec::new();
                for f in ["condition", "consequence", "alternative"] {
                    if let Some(x) = n.child_by_field_name(f) {
                        args.push(self.value(x)?);
                    }
                }
                Ok(mk(ExprKind::Call("__select".to_string(), args)))
            }
            "pointer_expression" => {
                let op = n.field(F::Operator).map_or("", |o| self.text(o));
                let arg = n.field(F::Argument).ok_or(Skip(None))?;
                if op == "&" {
                    return self.address_of(arg, at);
                }
                let place = self.pointer_place(n)?;
                Ok(self.over_read(place, at))
            }
            "field_expression" => {
                let place = self.place(n)?;
                Ok(self.over_read(place, at))
            }
            "assignment_expression" | "update_expression" | "comma_expression" => Err(self
                .unsupported(
                    "an assignment, `++`/`--` or `,` inside an expression".to_string(),
                    at,
                )),
            "ERROR" => Err(Skip(None)),
            other => Err(self.unsupported(format!("the expression `{other}`"), at)),
        }
    }

    /// A read through a place that is not exactly known.
    fn over_read(&mut self, place: Place, at: Span) -> Expr {
        match place {
            Place::Exact(a) => Expr::new(ExprKind::Access(a), at),
            Place::Over { access, why, .. } => {
                let name = self.array_name(access.array);
                self.warn(
                    W_MAY_ACCESS,
                    format!("{why}: over-approximated as a read of any element of `{name}`"),
                    at,
                    "may read any element",
                    "",
                );
                Expr::new(ExprKind::Access(access), at)
            }
            Place::Alias {
                accesses,
                reads,
                why,
            } => self.alias_read(accesses, reads, &why, at),
            Place::Not(what) => self.unknown_value(format!("{what}: its value is unknown"), at),
        }
    }

    /// `&x`: a read of `x` whose address escapes (a call may write it).
    fn address_of(&mut self, arg: Node<'t>, at: Span) -> Result<Expr, Skip> {
        let place = self.place(arg)?;
        let (access, exact, what) = match place {
            Place::Exact(a) => (a, true, format!("`{}`", self.text(arg))),
            Place::Over { access, guard, .. } => (access, guard, format!("`{}`", self.text(arg))),
            Place::Alias {
                accesses,
                reads,
                why,
            } => {
                for a in &accesses {
                    self.escapes.push(Escape {
                        target: a.clone(),
                        exact: false,
                        span: at,
                        what: format!("`{}`", self.text(arg)),
                    });
                }
                return Ok(self.alias_read(accesses, reads, &why, at));
            }
            Place::Not(what) => {
                return Ok(self.unknown_value(format!("{what}: its address is not modelled"), at))
            }
        };
        self.escapes.push(Escape {
            target: access.clone(),
            exact,
            span: at,
            what,
        });
        Ok(Expr::new(ExprKind::Access(access), at))
    }

    fn ident_value(&mut self, n: Node<'t>) -> Result<Expr, Skip> {
        let at = span(n);
        let name = self.text(n);
        if self.defines.contains_key(name) {
            return self.define_value(name, at);
        }
        match self.lookup(name) {
            Some(Binding::Counter(e)) | Some(Binding::Let(e)) => Ok(with_span(e, at)),
            Some(Binding::Var(v)) => match self.known_value(v) {
                Some(e) => Ok(with_span(e, at)),
                None => self.var_value(v, name, at),
            },
            None => Ok(self.unknown_value(format!("`{name}` is not declared in this file"), at)),
        }
    }

    fn var_value(&mut self, v: VarId, name: &str, at: Span) -> Result<Expr, Skip> {
        if self.exited.contains(name) && self.vars[v.index()].dims.is_empty() {
            return Ok(self.unknown_value(
                format!("`{name}` is read after the `for` loop it counted: its value there is not modelled"),
                at,
            ));
        }
        // A pointer as a value (passed to a call): what it points into.
        match self.pointer_use(v)? {
            super::pointee::PtrUse::NotPointer => {}
            super::pointee::PtrUse::Resolved(p) => {
                let var_name = self.vars[p.var.index()].name;
                return self.var_value(p.var, var_name, at);
            }
            super::pointee::PtrUse::Unknown => {
                let place = self.alias_place(v, Vec::new(), at)?;
                if let Place::Alias { accesses, .. } = &place {
                    for a in accesses {
                        self.escapes.push(Escape {
                            target: a.clone(),
                            exact: false,
                            span: at,
                            what: format!("`{name}`"),
                        });
                    }
                }
                return Ok(self.over_read(place, at));
            }
        }
        match self.model_of(v, at)? {
            ModelRef::Param(p) => Ok(Expr::new(ExprKind::Param(p), at)),
            ModelRef::Array(a, 0) => Ok(Expr::new(
                ExprKind::Access(Access {
                    array: a,
                    subscripts: Vec::new(),
                    span: at,
                    ext: None,
                }),
                at,
            )),
            ModelRef::Array(a, d) => {
                let access = Access {
                    array: a,
                    subscripts: (0..d).map(|_| any(Vec::new(), at)).collect(),
                    span: at,
                    ext: None,
                };
                self.escapes.push(Escape {
                    target: access.clone(),
                    exact: false,
                    span: at,
                    what: format!("`{name}`"),
                });
                Ok(Expr::new(ExprKind::Access(access), at))
            }
        }
    }

    /// The value of an object-like macro: a parameter when its body is a
    /// constant, else its body expanded.
    fn define_value(&mut self, name: &'t str, at: Span) -> Result<Expr, Skip> {
        let Some(d) = self.defines.get(name) else {
            return Ok(Expr::new(ExprKind::Unknown, at));
        };
        let (body, name_span) = (d.body.clone(), d.name_span);
        let Some(body) = body else {
            return Ok(self.unknown_value(
                format!("the macro `{name}` is not an integer expression"),
                at,
            ));
        };
        // A constant body is a parameter; one with names is expanded, so
        // that `--param` on those names carries through.
        if let Some(k) = body.constant() {
            let p = self.param_for(name, Some(k), name_span);
            return Ok(Expr::new(ExprKind::Param(p), at));
        }
        if self.expanding.contains(&name) || self.expanding.len() > 32 {
            return Ok(self.unknown_value(format!("the macro `{name}` expands to itself"), at));
        }
        self.expanding.push(name);
        (self.macro_bodies).insert((body.span().start, body.span().end), name);
        let e = self.mini_value(&body);
        self.expanding.pop();
        e
    }

    /// An integer expression from preprocessor text.
    pub fn mini_value(&mut self, m: &Mini) -> Result<Expr, Skip> {
        self.nested(m.span(), |cx| cx.mini_inner(m))
    }

    fn mini_inner(&mut self, m: &Mini) -> Result<Expr, Skip> {
        let at = m.span();
        match m {
            Mini::Int(v, _) => Ok(Expr::new(ExprKind::Int(*v), at)),
            Mini::Name(n, _) => {
                if let Some((&name, _)) = self.defines.get_key_value(n.as_str()) {
                    return self.define_value(name, at);
                }
                match self.lookup(n) {
                    Some(Binding::Counter(e)) | Some(Binding::Let(e)) => Ok(with_span(e, at)),
                    Some(Binding::Var(v)) => {
                        let name = self.vars[v.index()].name;
                        self.var_value(v, name, at)
                    }
                    None => {
                        Ok(self.unknown_value(format!("`{n}` is not declared in this file"), at))
                    }
                }
            }
            Mini::Neg(x, _) => Ok(Expr::new(ExprKind::Neg(Box::new(self.mini_value(x)?)), at)),
            Mini::Bin(op, l, r, _) => {
                let l = self.mini_value(l)?;
                let r = self.mini_value(r)?;
                Ok(Expr::new(
                    ExprKind::Binary(*op, Box::new(l), Box::new(r)),
                    at,
                ))
            }
        }
    }

    /// `A[i][j]`: the base and the index expressions, outermost first.
    pub(super) fn chain(n: Node<'t>) -> (Node<'t>, Vec<Node<'t>>) {
        let mut idx = Vec::new();
        let mut base = n;
        while base.kind() == "subscript_expression" {
            match (base.field(F::Argument), base.field(F::Index)) {
                (Some(a), Some(i)) => {
                    idx.push(i);
                    base = a;
                }
                _ => break,
            }
        }
        idx.reverse();
        (base, idx)
    }

    fn subscript_value(&mut self, n: Node<'t>) -> Result<Expr, Skip> {
        let at = span(n);
        let (base, idx) = Self::chain(n);
        let ident = base.kind() == "identifier" && !self.defines.contains_key(self.text(base));
        if !ident {
            let place = self.pointer_place(n)?;
            return Ok(self.over_read(place, at));
        }
        if let Some(place) = self.pointer_access(base, &idx, at)? {
            return Ok(self.over_read(place, at));
        }
        let name = self.text(base);
        match self.array_of(base)? {
            (a, d, _) if idx.len() == d => {
                let subscripts = self.subscripts(&idx)?;
                Ok(Expr::new(
                    ExprKind::Access(Access {
                        array: a,
                        subscripts,
                        span: at,
                        ext: None,
                    }),
                    at,
                ))
            }
            (a, d, _) if idx.len() < d => {
                // A row or plane: passed as a pointer.
                let mut subscripts = self.subscripts(&idx)?;
                subscripts.extend((idx.len()..d).map(|_| any(Vec::new(), at)));
                let access = Access {
                    array: a,
                    subscripts,
                    span: at,
                    ext: None,
                };
                self.escapes.push(Escape {
                    target: access.clone(),
                    exact: false,
                    span: at,
                    what: format!("`{}`", self.text(n)),
                });
                Ok(Expr::new(ExprKind::Access(access), at))
            }
            (a, d, _) => {
                let place = self.too_many_subscripts(a, d, &idx, name, at)?;
                Ok(self.over_read(place, at))
            }
        }
    }

    pub(super) fn subscripts(&mut self, idx: &[Node<'t>]) -> Result<Vec<Subscript>, Skip> {
        let mut out = Vec::with_capacity(idx.len());
        for &i in idx {
            let v = self.value(i)?;
            out.push(Subscript::new(self.folded(v)));
        }
        Ok(out)
    }

    /// More subscripts than declared dimensions: the extra ones go into the
    /// last `__any(...)`.
    fn too_many_subscripts(
        &mut self,
        a: ArrayId,
        d: usize,
        idx: &[Node<'t>],
        name: &str,
        at: Span,
    ) -> Result<Place, Skip> {
        let mut subscripts = self.subscripts(&idx[..d.saturating_sub(1)])?;
        let mut rest = Vec::new();
        for &i in &idx[d.saturating_sub(1)..] {
            rest.push(self.value(i)?);
        }
        if d > 0 {
            subscripts.push(any(rest, at));
        }
        let why = format!(
            "`{name}` has {d} dimension(s) but is used with {} subscripts",
            idx.len()
        );
        Ok(Place::some_element(a, subscripts, at, why))
    }

    /// The array a name denotes (for a subscripted access).
    pub(super) fn array_of(&mut self, base: Node<'t>) -> Result<(ArrayId, usize, VarId), Skip> {
        let at = span(base);
        let name = self.text(base);
        match self.lookup(name) {
            Some(Binding::Var(v)) => match self.model_of(v, at)? {
                ModelRef::Array(a, d) => Ok((a, d, v)),
                ModelRef::Param(_) => Err(self.unsupported(
                    format!("`{name}` is an integer parameter and is subscripted"),
                    at,
                )),
            },
            Some(_) => Err(self.unsupported(
                format!("`{name}` is a loop counter or constant and is subscripted"),
                at,
            )),
            None => Err(self.unsupported(
                format!("the array `{name}` is not declared in this file"),
                at,
            )),
        }
    }

    /// What an assignment's left side writes.
    pub fn place(&mut self, n: Node<'t>) -> Result<Place, Skip> {
        self.nested(span(n), |cx| cx.place_inner(n))
    }

    fn place_inner(&mut self, n: Node<'t>) -> Result<Place, Skip> {
        let at = span(n);
        match n.kind() {
            "parenthesized_expression" => match children(n).first() {
                Some(&x) => self.place(x),
                None => Err(Skip(None)),
            },
            "identifier" => {
                let name = self.text(n);
                if self.defines.contains_key(name) {
                    return Ok(Place::Not(format!("`{name}` is a macro")));
                }
                match self.lookup(name) {
                    Some(Binding::Counter(_)) => {
                        Ok(Place::Not(format!("`{name}` is a loop counter")))
                    }
                    Some(Binding::Let(_)) => Ok(Place::Not(format!("`{name}` is a constant"))),
                    Some(Binding::Var(v)) => match self.model_of(v, at)? {
                        ModelRef::Param(_) => Ok(Place::Not(format!("`{name}` is a constant"))),
                        ModelRef::Array(a, 0) => Ok(Place::Exact(Access {
                            array: a,
                            subscripts: Vec::new(),
                            span: at,
                            ext: None,
                        })),
                        ModelRef::Array(a, d) => Ok(Place::Over {
                            access: Access {
                                array: a,
                                subscripts: (0..d).map(|_| any(Vec::new(), at)).collect(),
                                span: at,
                                ext: None,
                            },
                            guard: false,
                            why: format!("`{name}` is written as a whole"),
                        }),
                    },
                    None => Ok(Place::Not(format!("`{name}` is not declared in this file"))),
                }
            }
            "subscript_expression" => {
                let (base, idx) = Self::chain(n);
                let ident =
                    base.kind() == "identifier" && !self.defines.contains_key(self.text(base));
                if !ident {
                    return self.pointer_place(n);
                }
                if let Some(place) = self.pointer_access(base, &idx, at)? {
                    return Ok(place);
                }
                let name = self.text(base);
                let (a, d, _) = self.array_of(base)?;
                if idx.len() == d {
                    let subscripts = self.subscripts(&idx)?;
                    return Ok(Place::Exact(Access {
                        array: a,
                        subscripts,
                        span: at,
                        ext: None,
                    }));
                }
                if idx.len() < d {
                    let mut subscripts = self.subscripts(&idx)?;
                    subscripts.extend((idx.len()..d).map(|_| any(Vec::new(), at)));
                    return Ok(Place::Over {
                        access: Access {
                            array: a,
                            subscripts,
                            span: at,
                            ext: None,
                        },
                        guard: false,
                        why: format!("`{}` is part of `{name}`", self.text(n)),
                    });
                }
                self.too_many_subscripts(a, d, &idx, name, at)
            }
            "field_expression" => {
                let arg = n.field(F::Argument).ok_or(Skip(None))?;
                let arrow = n.field(F::Operator).is_some_and(|o| self.text(o) == "->");
                let field = n.field(F::Field).map_or("?", |f| self.text(f));
                let inner = if arrow {
                    self.pointer_place(arg)?
                } else {
                    self.place(arg)?
                };
                let why = format!("`{}` is a field of a struct", self.text(n));
                let _ = field;
                Ok(match inner {
                    Place::Exact(access) => Place::Over {
                        access,
                        guard: true,
                        why,
                    },
                    Place::Over { access, guard, .. } => Place::Over { access, guard, why },
                    other => other,
                })
            }
            "pointer_expression" => {
                let star = n.field(F::Operator).is_some_and(|o| self.text(o) == "*");
                if !star {
                    return Ok(Place::Not(format!("`{}` is not a variable", self.text(n))));
                }
                self.pointer_place(n)
            }
            "cast_expression" => match n.field(F::Value) {
                Some(x) => self.place(x),
                None => Err(Skip(None)),
            },
            "ERROR" => Err(Skip(None)),
            _ => Ok(Place::Not(format!("`{}` is not a variable", self.text(n)))),
        }
    }

    /// An access through pointer arithmetic or a dereference: any element
    /// of the array at its root, the other operands' reads kept inside
    /// `__any(...)`.
    pub fn pointer_place(&mut self, n: Node<'t>) -> Result<Place, Skip> {
        let at = span(n);
        let mut others = Vec::new();
        self.alias.unknown_root = None;
        let root = self.pointer_root(n, &mut others, 0)?;
        if let Some(v) = self.alias.unknown_root.take() {
            return self.alias_place(v, others, at);
        }
        let Some((a, d, name)) = root else {
            return Ok(Place::Not(format!(
                "`{}` points to no array declared here",
                self.text(n)
            )));
        };
        let mut subscripts = Vec::new();
        if d > 0 {
            subscripts.push(any(others, at));
            subscripts.extend((1..d).map(|_| any(Vec::new(), at)));
        }
        let why = format!("`{}` goes through a pointer to `{name}`", self.text(n));
        Ok(Place::some_element(a, subscripts, at, why))
    }

    fn pointer_root(
        &mut self,
        n: Node<'t>,
        others: &mut Vec<Expr>,
        depth: usize,
    ) -> Result<Option<(ArrayId, usize, &'t str)>, Skip> {
        if depth > MAX_NESTING {
            return Err(self.unsupported("pointer expression too deep".to_string(), span(n)));
        }
        match n.kind() {
            "identifier" => {
                let name = self.text(n);
                if self.defines.contains_key(name) {
                    others.push(self.value(n)?);
                    return Ok(None);
                }
                match self.lookup(name) {
                    Some(Binding::Var(v)) => match self.pointer_use(v)? {
                        super::pointee::PtrUse::Resolved(p) => {
                            match self.model_of(p.var, span(n))? {
                                ModelRef::Array(a, d) => {
                                    Ok(Some((a, d, self.vars[p.var.index()].name)))
                                }
                                ModelRef::Param(_) => Ok(None),
                            }
                        }
                        super::pointee::PtrUse::Unknown => {
                            self.alias.unknown_root = Some(v);
                            Ok(None)
                        }
                        super::pointee::PtrUse::NotPointer => self.pointer_root_var(v, n, others),
                    },
                    _ => {
                        others.push(self.value(n)?);
                        Ok(None)
                    }
                }
            }
            "parenthesized_expression"
            | "cast_expression"
            | "pointer_expression"
            | "field_expression" => {
                let inner = if n.kind() == "cast_expression" {
                    n.field(F::Value)
                } else if n.kind() == "parenthesized_expression" {
                    children(n).first().copied()
                } else {
                    n.field(F::Argument)
                };
                match inner {
                    Some(x) => self.pointer_root(x, others, depth + 1),
                    None => Ok(None),
                }
            }
            "subscript_expression" => {
                let (Some(a), Some(i)) = (n.field(F::Argument), n.field(F::Index)) else {
                    return Ok(None);
                };
                let root = self.pointer_root(a, others, depth + 1)?;
                others.push(self.value(i)?);
                Ok(root)
            }
            "binary_expression" => {
                let (Some(l), Some(r)) = (n.field(F::Left), n.field(F::Right)) else {
                    return Ok(None);
                };
                let root = self.pointer_root(l, others, depth + 1)?;
                if root.is_some() {
                    others.push(self.value(r)?);
                    return Ok(root);
                }
                self.pointer_root(r, others, depth + 1)
            }
            "update_expression" | "assignment_expression" | "comma_expression" => Err(self
                .unsupported(
                    "an assignment, `++`/`--` or `,` inside an expression".to_string(),
                    span(n),
                )),
            _ => {
                others.push(self.value(n)?);
                Ok(None)
            }
        }
    }

    /// The root of a pointer expression that is a variable: its array, or
    /// a parameter among the other operands.
    fn pointer_root_var(
        &mut self,
        v: VarId,
        n: Node<'t>,
        others: &mut Vec<Expr>,
    ) -> Result<Option<(ArrayId, usize, &'t str)>, Skip> {
        match self.model_of(v, span(n))? {
            ModelRef::Array(a, d) => Ok(Some((a, d, self.vars[v.index()].name))),
            ModelRef::Param(p) => {
                others.push(Expr::new(ExprKind::Param(p), span(n)));
                Ok(None)
            }
        }
    }

    /// A call: `unknown()` is `...`; otherwise an uninterpreted function of
    /// its arguments. A call that is not pure is a barrier (`effects`).
    /// Otherwise an argument passed by address, or an array passed whole,
    /// may be written unless the prototype says `const`.
    fn call(&mut self, n: Node<'t>) -> Result<Expr, Skip> {
        let at = span(n);
        let func = n.field(F::Function).ok_or(Skip(None))?;
        let args_node = n.field(F::Arguments).ok_or(Skip(None))?;
        let args_nodes = children(args_node);
        let name = if func.kind() == "identifier" {
            self.text(func)
        } else {
            "__call"
        };
        if name == "unknown" && args_nodes.is_empty() {
            return Ok(Expr::new(ExprKind::Unknown, at));
        }
        if func.kind() != "identifier" {
            self.warn(
                W_UNKNOWN_VALUE,
                "a call through a function pointer: treated as the uninterpreted function `__call`",
                span(func),
                "not a function name",
                "",
            );
        } else if self.fn_macros.contains_key(name) {
            self.warn(
                W_UNKNOWN_VALUE,
                format!("`{name}` is a function-like macro: treated as an uninterpreted function"),
                span(func),
                "macro not expanded",
                "the file is not preprocessed; write the expression out to make it affine",
            );
        }
        let read_only = self.protos.get(name).cloned().unwrap_or_default();
        let mut args = Vec::new();
        let mut escaped = Vec::new();
        for (k, &a) in args_nodes.iter().enumerate() {
            let mark = self.escapes.len();
            args.push(self.value(a)?);
            let new: Vec<Escape> = self.escapes.drain(mark..).collect();
            if !read_only.get(k).copied().unwrap_or(false) {
                escaped.extend(new);
            }
        }
        let model_name = Self::fresh(name, |_| true);
        let call = Expr::new(ExprKind::Call(model_name.clone(), args), at);
        if self.is_barrier(name, func.kind() != "identifier") {
            self.barrier(&model_name, escaped, at)?;
            return Ok(call);
        }
        for e in escaped {
            self.may_writes.push(MayWrite {
                target: e.target,
                exact: e.exact,
                value: call.clone(),
                span: e.span,
                func: model_name.clone(),
                what: e.what,
                barrier: false,
            });
        }
        Ok(call)
    }

    /// An expression used as a condition.
    pub fn cond(&mut self, n: Node<'t>) -> Result<Cond, Skip> {
        self.nested(span(n), |cx| cx.cond_inner(n))
    }

    fn cond_inner(&mut self, n: Node<'t>) -> Result<Cond, Skip> {
        match n.kind() {
            "parenthesized_expression" => {
                if let Some(&x) = children(n).first() {
                    return self.cond(x);
                }
            }
            "binary_expression" => {
                let op = n.field(F::Operator).map_or("", |o| self.text(o));
                let (Some(l), Some(r)) = (n.field(F::Left), n.field(F::Right)) else {
                    return Err(Skip(None));
                };
                if let Some(c) = cmp_op(op) {
                    return Ok(Cond::Cmp(c, self.value(l)?, self.value(r)?));
                }
                match op {
                    "&&" => return Ok(Cond::And(Box::new(self.cond(l)?), Box::new(self.cond(r)?))),
                    "||" => return Ok(Cond::Or(Box::new(self.cond(l)?), Box::new(self.cond(r)?))),
                    _ => {}
                }
            }
            "unary_expression" => {
                let op = n.field(F::Operator).map_or("", |o| self.text(o));
                if op == "!" {
                    let arg = n.field(F::Argument).ok_or(Skip(None))?;
                    return Ok(Cond::Not(Box::new(self.cond(arg)?)));
                }
            }
            "call_expression" => {
                let v = self.value(n)?;
                if matches!(v.kind, ExprKind::Unknown) {
                    return Ok(Cond::Unknown);
                }
                return Ok(Cond::Cmp(
                    CmpOp::Ne,
                    v,
                    Expr::new(ExprKind::Int(0), span(n)),
                ));
            }
            _ => {}
        }
        let v = self.value(n)?;
        Ok(Cond::Cmp(
            CmpOp::Ne,
            v,
            Expr::new(ExprKind::Int(0), span(n)),
        ))
    }
}

/// The value of a simple character literal (`'a'`, `'\n'`, `'\0'`).
fn char_value(t: &str) -> Option<i64> {
    let inner = t.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut chars = inner.chars();
    let c = chars.next()?;
    if c != '\\' {
        return (chars.next().is_none()).then_some(c as i64);
    }
    let rest: String = chars.collect();
    Some(match rest.as_str() {
        "n" => 10,
        "t" => 9,
        "r" => 13,
        "0" => 0,
        "\\" => 92,
        "'" => 39,
        "\"" => 34,
        _ => return None,
    })
}
