//! Building a [`Program`] without writing text.
//!
//! The builder is a stack machine that mirrors the program's nesting: open a
//! loop or an `if`, add statements, close it with [`ProgramBuilder::end`].
//! Front ends use it too, so a model built by hand and one parsed from text
//! get the same ids and generated names.
//!
//! ```
//! use arrayflow_model::model::builder::{ProgramBuilder, e};
//! use arrayflow_model::model::Cond;
//!
//! // Example 1 of the maximal static expansion paper.
//! let mut b = ProgramBuilder::new();
//! let n = b.param("N", Some(5)).unwrap();
//! let x = b.scalar("x").unwrap();
//! let i = b.begin_for("i", e::int(1), e::param(n), 1).unwrap();
//! b.assign(Some("T"), e::access(x, vec![]), None, e::unknown()).unwrap();
//! b.begin_while(None, Cond::Unknown).unwrap();
//! b.assign(Some("S"), e::access(x, vec![]), None, e::call("f", vec![e::read(x, vec![])])).unwrap();
//! b.end().unwrap();
//! b.call(Some("R"), "use", vec![e::read(x, vec![])]).unwrap();
//! b.end().unwrap();
//! let program = b.finish().unwrap();
//! assert_eq!(program.stmts().len(), 3);
//! assert_eq!(program.stmts()[1].label, "S");
//! # let _ = i;
//! ```

use super::*;
use std::fmt;

/// Why the builder refused a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    Duplicate(String),
    NotAffine(&'static str),
    BadStep(i64),
    /// `end`, `elsif` or `else` with nothing open to close, or `finish` with
    /// something still open.
    Nesting(&'static str),
    TooDeep,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Duplicate(n) => write!(f, "`{n}` is declared twice"),
            BuildError::NotAffine(what) => write!(f, "{what} is not affine"),
            BuildError::BadStep(k) => write!(f, "step {k} is not a positive integer"),
            BuildError::Nesting(what) => write!(f, "unbalanced nesting: {what}"),
            BuildError::TooDeep => write!(f, "nesting deeper than {MAX_DEPTH} levels"),
        }
    }
}

impl std::error::Error for BuildError {}

/// The deepest loop and `if` nesting any program may have. Every recursive
/// walk over a model relies on this bound to stay off the end of the stack.
pub const MAX_DEPTH: usize = 200;

/// Generated label of the statement with this id: `_S1`, `_S2`, ...
pub fn generated_stmt_label(id: StmtId) -> String {
    format!("_S{}", id.0 + 1)
}

/// Generated name of an `if`/`elsif` condition: `_C1`, `_C2`, ...
pub fn generated_cond_name(id: CondId) -> String {
    format!("_C{}", id.0 + 1)
}

/// Generated name of an unnamed `while` loop (its counter and its condition).
pub fn generated_while_name(id: CondId) -> String {
    format!("_W{}", id.0 + 1)
}

enum Frame {
    For(For),
    While(While),
    If { node: If, in_else: bool },
}

/// A state of a [`ProgramBuilder`] to roll back to (see [`ProgramBuilder::mark`]).
#[derive(Clone, Copy, Debug)]
pub struct Mark {
    params: usize,
    assumptions: usize,
    arrays: usize,
    counters: usize,
    depth: usize,
    body: usize,
    stmts: u32,
    conds: u32,
}

#[derive(Default)]
pub struct ProgramBuilder {
    program: Program,
    /// The arrays' ids by name: a linear search per declaration made
    /// 100,000 declarations take half a minute.
    array_ids: std::collections::HashMap<String, ArrayId>,
    /// Array records looked at to find names ([`ProgramBuilder::names_looked_at`]).
    looked_at: u64,
    stack: Vec<(Frame, Vec<Node>)>,
    body: Vec<Node>,
    stmts: u32,
    conds: u32,
}

impl ProgramBuilder {
    pub fn new() -> ProgramBuilder {
        ProgramBuilder::default()
    }

    /// How many array records were looked at to find declared names so far:
    /// one per declaration (a search of the arrays declared before made n
    /// declarations cost n²/2).
    pub fn names_looked_at(&self) -> u64 {
        self.looked_at
    }

    pub fn param(&mut self, name: &str, default: Option<i64>) -> Result<ParamId, BuildError> {
        self.param_at(name, default, Span::NONE)
    }

    pub fn param_at(
        &mut self,
        name: &str,
        default: Option<i64>,
        span: Span,
    ) -> Result<ParamId, BuildError> {
        if self.program.param(name).is_some() {
            return Err(BuildError::Duplicate(name.to_string()));
        }
        self.program.params.push(Param {
            name: name.to_string(),
            default,
            span,
            derived: None,
        });
        Ok(ParamId(self.program.params.len() as u32 - 1))
    }

    /// Makes `p` a derived parameter (`Param::derived`): `d` reads only
    /// parameters declared before `p`.
    pub fn derive(&mut self, p: ParamId, d: Derived) {
        self.program.params[p.index()].derived = Some(d);
    }

    pub fn assume(&mut self, cond: Cond) {
        self.program.assumptions.push(cond);
    }

    /// Whether `cond` is already one of the program's assumptions.
    pub fn assumes(&self, cond: &Cond) -> bool {
        self.program.assumptions.contains(cond)
    }

    pub fn scalar(&mut self, name: &str) -> Result<ArrayId, BuildError> {
        self.array_at(name, ElemType::Real, Vec::new(), Span::NONE)
    }

    /// An array with one inclusive `(lo, hi)` range per dimension.
    pub fn array(&mut self, name: &str, dims: Vec<(Expr, Expr)>) -> Result<ArrayId, BuildError> {
        self.array_at(name, ElemType::Real, dims, Span::NONE)
    }

    pub fn array_at(
        &mut self,
        name: &str,
        elem: ElemType,
        dims: Vec<(Expr, Expr)>,
        span: Span,
    ) -> Result<ArrayId, BuildError> {
        // One probe of the map, whatever the number of arrays.
        self.looked_at += 1;
        if self.array_ids.contains_key(name) {
            return Err(BuildError::Duplicate(name.to_string()));
        }
        let dims = dims
            .into_iter()
            .map(|(lo, hi)| {
                Ok(Range {
                    lo: bound(lo, "a declared range")?,
                    hi: bound(hi, "a declared range")?,
                })
            })
            .collect::<Result<_, _>>()?;
        self.program.arrays.push(Array {
            name: name.to_string(),
            elem,
            dims,
            span,
            local: false,
        });
        let id = ArrayId(self.program.arrays.len() as u32 - 1);
        self.array_ids.insert(name.to_string(), id);
        Ok(id)
    }

    /// Marks an array as declared inside the analysed code ([`Array::local`]).
    pub fn set_local(&mut self, a: ArrayId) {
        self.program.arrays[a.index()].local = true;
    }

    /// An array declared so far.
    pub fn array_decl(&self, a: ArrayId) -> &Array {
        &self.program.arrays[a.index()]
    }

    fn counter(
        &mut self,
        name: String,
        kind: CounterKind,
        generated: bool,
        span: Span,
    ) -> CounterId {
        self.program.counters.push(Counter {
            name,
            kind,
            generated,
            span,
        });
        CounterId(self.program.counters.len() as u32 - 1)
    }

    fn push(&mut self, frame: Frame) -> Result<(), BuildError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(BuildError::TooDeep);
        }
        let outer = std::mem::take(&mut self.body);
        self.stack.push((frame, outer));
        Ok(())
    }

    pub fn begin_for(
        &mut self,
        name: &str,
        lo: Expr,
        hi: Expr,
        step: i64,
    ) -> Result<CounterId, BuildError> {
        self.begin_for_at(name, lo, hi, step, false, Span::NONE)
    }

    pub fn begin_for_at(
        &mut self,
        name: &str,
        lo: Expr,
        hi: Expr,
        step: i64,
        parallel: bool,
        span: Span,
    ) -> Result<CounterId, BuildError> {
        if step <= 0 {
            return Err(BuildError::BadStep(step));
        }
        let lower = bound(lo, "a loop bound")?;
        let upper = bound(hi, "a loop bound")?;
        let counter = self.counter(name.to_string(), CounterKind::For, false, span);
        self.push(Frame::For(For {
            counter,
            lower,
            upper,
            step,
            parallel,
            body: Vec::new(),
            span,
        }))?;
        Ok(counter)
    }

    fn condition(
        &mut self,
        name: Option<&str>,
        cond: Cond,
        span: Span,
        generate: fn(CondId) -> String,
    ) -> Condition {
        let id = CondId(self.conds);
        self.conds += 1;
        Condition {
            id,
            name: name.map_or_else(|| generate(id), str::to_string),
            generated: name.is_none(),
            cond,
            span,
        }
    }

    /// Opens a `while` loop; `name` names its counter and its condition.
    pub fn begin_while(&mut self, name: Option<&str>, cond: Cond) -> Result<CounterId, BuildError> {
        self.begin_while_at(name, cond, Span::NONE)
    }

    pub fn begin_while_at(
        &mut self,
        name: Option<&str>,
        cond: Cond,
        span: Span,
    ) -> Result<CounterId, BuildError> {
        let cond = self.condition(name, cond, span, generated_while_name);
        let counter = self.counter(cond.name.clone(), CounterKind::While, cond.generated, span);
        self.push(Frame::While(While {
            counter,
            cond,
            body: Vec::new(),
            span,
        }))?;
        Ok(counter)
    }

    pub fn begin_if(&mut self, name: Option<&str>, cond: Cond) -> Result<CondId, BuildError> {
        self.begin_if_at(name, cond, Span::NONE)
    }

    pub fn begin_if_at(
        &mut self,
        name: Option<&str>,
        cond: Cond,
        span: Span,
    ) -> Result<CondId, BuildError> {
        let c = self.condition(name, cond, span, generated_cond_name);
        let id = c.id;
        self.push(Frame::If {
            node: If {
                branches: vec![(c, Vec::new())],
                otherwise: None,
                span,
            },
            in_else: false,
        })?;
        Ok(id)
    }

    /// Closes the current branch of the innermost `if` and opens an `elsif`.
    pub fn elsif(
        &mut self,
        name: Option<&str>,
        cond: Cond,
        span: Span,
    ) -> Result<CondId, BuildError> {
        let c = self.condition(name, cond, span, generated_cond_name);
        let id = c.id;
        let body = std::mem::take(&mut self.body);
        match self.stack.last_mut() {
            Some((
                Frame::If {
                    node,
                    in_else: false,
                },
                _,
            )) => {
                node.branches.last_mut().expect("an if has a branch").1 = body;
                node.branches.push((c, Vec::new()));
                Ok(id)
            }
            _ => Err(BuildError::Nesting("`elsif` outside an `if`")),
        }
    }

    pub fn otherwise(&mut self) -> Result<(), BuildError> {
        let body = std::mem::take(&mut self.body);
        match self.stack.last_mut() {
            Some((Frame::If { node, in_else }, _)) if !*in_else => {
                node.branches.last_mut().expect("an if has a branch").1 = body;
                *in_else = true;
                Ok(())
            }
            _ => Err(BuildError::Nesting("`else` outside an `if`")),
        }
    }

    /// Closes the innermost open loop or `if`.
    pub fn end(&mut self) -> Result<(), BuildError> {
        let (frame, outer) = self
            .stack
            .pop()
            .ok_or(BuildError::Nesting("`end` with nothing open"))?;
        let body = std::mem::replace(&mut self.body, outer);
        let node = match frame {
            Frame::For(mut f) => {
                f.body = body;
                Node::For(f)
            }
            Frame::While(mut w) => {
                w.body = body;
                Node::While(w)
            }
            Frame::If { mut node, in_else } => {
                if in_else {
                    node.otherwise = Some(body);
                } else {
                    node.branches.last_mut().expect("an if has a branch").1 = body;
                }
                Node::If(node)
            }
        };
        self.body.push(node);
        Ok(())
    }

    fn stmt(&mut self, label: Option<&str>, copy: bool, kind: StmtKind, span: Span) -> StmtId {
        let id = StmtId(self.stmts);
        self.stmts += 1;
        self.body.push(Node::Stmt(Stmt {
            id,
            label: label.map_or_else(|| generated_stmt_label(id), str::to_string),
            label_generated: label.is_none(),
            copy,
            kind,
            span,
        }));
        id
    }

    /// `label: target = value` (or `target op= value`).
    pub fn assign(
        &mut self,
        label: Option<&str>,
        target: Access,
        op: Option<BinOp>,
        value: Expr,
    ) -> Result<StmtId, BuildError> {
        Ok(self.assign_at(label, false, target, op, value, Span::NONE))
    }

    pub fn assign_at(
        &mut self,
        label: Option<&str>,
        copy: bool,
        target: Access,
        op: Option<BinOp>,
        value: Expr,
        span: Span,
    ) -> StmtId {
        self.stmt(label, copy, StmtKind::Assign { target, op, value }, span)
    }

    /// `label: func(args);`
    pub fn call(
        &mut self,
        label: Option<&str>,
        func: &str,
        args: Vec<Expr>,
    ) -> Result<StmtId, BuildError> {
        Ok(self.call_at(label, false, func, args, Span::NONE))
    }

    pub fn call_at(
        &mut self,
        label: Option<&str>,
        copy: bool,
        func: &str,
        args: Vec<Expr>,
        span: Span,
    ) -> StmtId {
        let kind = StmtKind::Call {
            func: func.to_string(),
            args,
        };
        self.stmt(label, copy, kind, span)
    }

    /// The ids the next statement and the next condition will get.
    pub fn next_ids(&self) -> (StmtId, CondId) {
        (StmtId(self.stmts), CondId(self.conds))
    }

    /// How deep the builder is nested right now.
    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    /// A point to return to with [`ProgramBuilder::rollback`]: a front end
    /// that gives up on part of its input (the C front end skips a region it
    /// cannot analyse) drops everything built since.
    pub fn mark(&self) -> Mark {
        Mark {
            params: self.program.params.len(),
            assumptions: self.program.assumptions.len(),
            arrays: self.program.arrays.len(),
            counters: self.program.counters.len(),
            depth: self.stack.len(),
            body: self.body.len(),
            stmts: self.stmts,
            conds: self.conds,
        }
    }

    /// Forgets everything added since `m`: declarations, nodes, open loops
    /// and `if`s, and the numbering of statements and conditions. Loops and
    /// `if`s open at the mark must still be open.
    pub fn rollback(&mut self, m: Mark) {
        while self.stack.len() > m.depth {
            if let Some((_, outer)) = self.stack.pop() {
                self.body = outer;
            }
        }
        self.body.truncate(m.body);
        self.program.params.truncate(m.params);
        self.program.assumptions.truncate(m.assumptions);
        for a in self.program.arrays.drain(m.arrays..) {
            self.array_ids.remove(&a.name);
        }
        self.program.counters.truncate(m.counters);
        self.stmts = m.stmts;
        self.conds = m.conds;
    }

    /// The number of parameters, arrays and counters declared so far: the
    /// next one of each gets this index as its id.
    pub fn counts(&self) -> (usize, usize, usize) {
        (
            self.program.params.len(),
            self.program.arrays.len(),
            self.program.counters.len(),
        )
    }

    pub fn finish(mut self) -> Result<Program, BuildError> {
        if !self.stack.is_empty() {
            return Err(BuildError::Nesting("a loop or `if` is still open"));
        }
        self.program.body = self.body;
        Ok(self.program)
    }
}

fn bound(expr: Expr, what: &'static str) -> Result<Bound, BuildError> {
    let affine = Affine::from_expr(&expr).ok_or(BuildError::NotAffine(what))?;
    Ok(Bound { expr, affine })
}

/// Short constructors for expressions built by hand.
pub mod e {
    use super::super::*;

    pub fn int(n: i64) -> Expr {
        Expr::int(n)
    }
    pub fn param(p: ParamId) -> Expr {
        Expr::new(ExprKind::Param(p), Span::NONE)
    }
    pub fn counter(c: CounterId) -> Expr {
        Expr::new(ExprKind::Counter(c), Span::NONE)
    }
    pub fn unknown() -> Expr {
        Expr::new(ExprKind::Unknown, Span::NONE)
    }
    /// An access (for a write target, or inside [`read`]).
    pub fn access(array: ArrayId, subscripts: Vec<Expr>) -> Access {
        Access {
            array,
            subscripts: subscripts.into_iter().map(Subscript::new).collect(),
            span: Span::NONE,
            ext: None,
        }
    }
    /// A read of `array[subscripts]`.
    pub fn read(array: ArrayId, subscripts: Vec<Expr>) -> Expr {
        Expr::new(ExprKind::Access(access(array, subscripts)), Span::NONE)
    }
    pub fn call(func: &str, args: Vec<Expr>) -> Expr {
        Expr::new(ExprKind::Call(func.to_string(), args), Span::NONE)
    }
    pub fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::new(ExprKind::Binary(op, Box::new(l), Box::new(r)), Span::NONE)
    }
    pub fn add(l: Expr, r: Expr) -> Expr {
        bin(BinOp::Add, l, r)
    }
    pub fn sub(l: Expr, r: Expr) -> Expr {
        bin(BinOp::Sub, l, r)
    }
    pub fn mul(l: Expr, r: Expr) -> Expr {
        bin(BinOp::Mul, l, r)
    }
    pub fn neg(x: Expr) -> Expr {
        Expr::new(ExprKind::Neg(Box::new(x)), Span::NONE)
    }
    pub fn cmp(op: CmpOp, l: Expr, r: Expr) -> Cond {
        Cond::Cmp(op, l, r)
    }
}
