//! Calls that are not pure (docs/c.md, *Calls*): a call to a function the
//! file does not define, that is not `<math.h>`'s, on the short list
//! `cvalue::PURE` or named by `#pragma arrayflow pure`, a call to one it
//! defines (and does not inline) whose body assigns a global or calls such
//! a function, or a call through a function pointer, may do anything a C
//! function can: read and write every global, everything the enclosing
//! function's pointer and array parameters point to, everything it is
//! passed by address, and state the model does not name (files, the heap,
//! the C library's). It is a barrier. Before the statement that makes it,
//! the model gets
//!
//! ```text
//! __effects = __effect_f(__effects, A[__any()], x, ...);   // reads all of it
//! A[__any()] = __effect_f(__effects);                      // may write each array
//! x = __effect_f(__effects, x);                            // and each scalar
//! ```
//!
//! `__effects` (`cvalue::EFFECTS`) is read and written by every such call,
//! so calls stay in order among themselves and every loop around one
//! carries a dependence: it is never parallel, and neither is a loop that
//! calls `exit`, which OpenMP forbids leaving. A scalar's may-write reads
//! its old value, so that it hides no earlier write. The C printer drops
//! these statements (`cprint::effects`) and prints the call as written.

use super::expr::any;
use super::fields::Fields;
use super::{Binding, Ctx, Escape, MayWrite, ModelRef, Skip};
use crate::model::*;

impl<'t> Ctx<'t> {
    /// Whether a call to `name` is a barrier (see the module's doc).
    pub(super) fn is_barrier(&self, name: &str, through_pointer: bool) -> bool {
        through_pointer || self.barrier_fn(name, &mut Vec::new())
    }

    /// Whether `name` is a barrier: not known pure, or defined in the file
    /// with a body that assigns a global or calls a barrier. `seen` are the
    /// functions being looked at (a recursive call adds nothing).
    fn barrier_fn(&self, name: &str, seen: &mut Vec<String>) -> bool {
        if self.pure_call(name)
            || self.declared_pure.contains(name)
            || seen.iter().any(|s| s == name)
        {
            return false;
        }
        if let Some((params, body)) = self.fn_macros.get(name) {
            seen.push(name.to_string());
            let barrier = self.macro_barrier(params, body, seen);
            seen.pop();
            return barrier;
        }
        let Some(&f) = self.defined.get(name) else {
            return true;
        };
        seen.push(name.to_string());
        // Names the function declares (parameters, locals) hide globals.
        let mut own = std::collections::HashSet::new();
        super::lvalues::walk(&[f], |n| {
            if n.kind() == "identifier"
                && n.parent().is_some_and(|p| p.kind().ends_with("declarator"))
            {
                own.insert(self.text(n));
            }
        });
        let mut found = false;
        super::lvalues::walk(&[f], |n| {
            if found {
                return;
            }
            let target = match n.kind() {
                "assignment_expression" => n.field(super::F::Left),
                "update_expression" => n.field(super::F::Argument),
                "call_expression" => {
                    let callee = n.field(super::F::Function);
                    found = match callee.filter(|c| c.kind() == "identifier") {
                        Some(c) => self.barrier_fn(self.text(c), seen),
                        None => true,
                    };
                    None
                }
                _ => None,
            };
            let root = target.and_then(|t| super::lvalues::lvalue_root(self.src, t));
            if root.is_some_and(|r| !own.contains(r) && self.globals.contains_key(r)) {
                found = true;
            }
        });
        seen.pop();
        found
    }

    /// Whether a function-like macro that is not expanded is a barrier:
    /// its body assigns (`=`, `+=`, `++`, ...), or calls a barrier or one
    /// of its parameters. Read from the body's tokens, since it is text.
    fn macro_barrier(&self, params: &[&str], body: &str, seen: &mut Vec<String>) -> bool {
        let b = body.as_bytes();
        for (k, &c) in b.iter().enumerate() {
            let prev = k.checked_sub(1).map(|j| b[j]);
            let next = b.get(k + 1).copied();
            let assigns = (c == b'='
                && next != Some(b'=')
                && !matches!(prev, Some(b'=' | b'<' | b'>' | b'!')))
                || matches!((c, next), (b'+', Some(b'+')) | (b'-', Some(b'-')));
            // `<<=` and `>>=` end in a `=` after `<`/`>`: assignments too.
            let shift = c == b'=' && k >= 2 && matches!(&b[k - 2..k], b"<<" | b">>");
            if assigns || shift {
                return true;
            }
        }
        let mut rest = body;
        while let Some(start) = rest.find(|c: char| c.is_ascii_alphabetic() || c == '_') {
            let word_len = rest[start..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len() - start);
            let word = &rest[start..start + word_len];
            rest = &rest[start + word_len..];
            const NOT_CALLS: &[&str] = &[
                "sizeof", "_Alignof", "alignof", "defined", "if", "while", "for", "switch",
                "return", "_Generic",
            ];
            if !rest.trim_start().starts_with('(') || NOT_CALLS.contains(&word) {
                continue;
            }
            if params.contains(&word) || self.barrier_fn(word, seen) {
                return true;
            }
        }
        false
    }

    /// Whether `name` is read as a pure function of its arguments. A
    /// `<math.h>` function may set `errno`: it is pure only in a file that
    /// never names `errno`, where nothing this file does can see it.
    fn pure_call(&self, name: &str) -> bool {
        if super::cvalue::is_math(name) {
            return !names_errno(self.src);
        }
        super::cvalue::is_pure(name)
    }

    /// The statements of a barrier call to `name` (as [`MayWrite`]s, which
    /// the statement flushes before itself): `escaped` are what its
    /// arguments pass by address.
    pub(super) fn barrier(
        &mut self,
        name: &str,
        escaped: Vec<Escape>,
        at: Span,
    ) -> Result<(), Skip> {
        let effects = self.effects_cell(at)?;
        let func = super::cvalue::effect(name);
        let cell = |a: ArrayId| Access {
            array: a,
            subscripts: Vec::new(),
            span: at,
            ext: None,
        };
        let state = Expr::new(ExprKind::Access(cell(effects)), at);
        // What it reaches: what it is passed, then what it sees.
        let mut reach: Vec<Access> = escaped.into_iter().map(|e| e.target).collect();
        for (a, d) in self.reachable(at)? {
            if !reach.iter().any(|r| r.array == a) {
                let subscripts = (0..d).map(|_| any(Vec::new(), at)).collect();
                reach.push(Access {
                    array: a,
                    subscripts,
                    span: at,
                    ext: None,
                });
            }
        }
        let mut names: Vec<String> = reach.iter().map(|r| self.array_name(r.array)).collect();
        names.dedup();
        let ends = super::cvalue::ends_run(name);
        let why = if super::cvalue::is_math(name) {
            "may set `errno`, which this file reads"
        } else if self.defined.contains_key(name) {
            "assigns a global or makes a call that is a barrier"
        } else if self.fn_macros.contains_key(name) {
            "is a function-like macro whose body assigns or makes a call that is a barrier"
        } else {
            "is not defined in this file nor known to be pure"
        };
        let what = format!(
            "`{name}` {why}: {}it is a barrier that may read and write {}",
            if ends { "it ends the run, and " } else { "" },
            if names.is_empty() {
                "the program's other state (files, the heap)".to_string()
            } else {
                format!(
                    "{} and the program's other state",
                    names
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        );
        let mut reads = vec![state.clone()];
        reads.extend(
            reach
                .iter()
                .map(|r| Expr::new(ExprKind::Access(r.clone()), at)),
        );
        self.may_writes.push(MayWrite {
            target: cell(effects),
            exact: false,
            value: Expr::new(ExprKind::Call(func.clone(), reads), at),
            span: at,
            func: name.to_string(),
            what,
            barrier: true,
        });
        // A call that does not return writes nothing a later statement
        // reads: what runs after it in the model runs only when it was not
        // made. Its reads above keep what it may observe in place.
        if ends {
            return Ok(());
        }
        for r in reach {
            let mut args = vec![state.clone()];
            if r.subscripts.is_empty() {
                args.push(Expr::new(ExprKind::Access(r.clone()), at));
            }
            self.may_writes.push(MayWrite {
                value: Expr::new(ExprKind::Call(func.clone(), args), at),
                target: r,
                exact: false,
                span: at,
                func: name.to_string(),
                what: String::new(),
                barrier: true,
            });
        }
        Ok(())
    }

    /// The model's `__effects` scalar, made on first use.
    fn effects_cell(&mut self, at: Span) -> Result<ArrayId, Skip> {
        let n = self.b.counts().1;
        let found = (0..n as u32)
            .map(ArrayId)
            .find(|&a| self.b.array_decl(a).name == super::cvalue::EFFECTS);
        if let Some(a) = found {
            return Ok(a);
        }
        let made = self
            .b
            .array_at(super::cvalue::EFFECTS, ElemType::Real, Vec::new(), at);
        let a = made.map_err(|e| {
            self.unsupported_stmt(format!("modelling this call's effects ({e})"), at)
        })?;
        self.array_names.push(super::cvalue::EFFECTS.to_string());
        Ok(a)
    }

    /// The arrays and scalars a function the file does not define can
    /// reach from here, among those the region names: the globals and the
    /// enclosing function's pointer and array parameters. A global integer
    /// is among them: in a region with a barrier it is a cell, not a
    /// parameter (`Ctx::region_barrier`).
    fn reachable(&mut self, at: Span) -> Result<Vec<(ArrayId, usize)>, Skip> {
        let mut names: Vec<&'t str> = self.mentioned.iter().copied().collect();
        names.sort_unstable();
        let mut out = Vec::new();
        for name in names {
            let Some(Binding::Var(v)) = self.lookup(name) else {
                continue;
            };
            let var = &self.vars[v.index()];
            let pointed = var.func_param && (var.pointers > 0 || !var.dims.is_empty());
            if !(var.global || pointed) {
                continue;
            }
            if let ModelRef::Array(a, d) = self.model_of(v, at)? {
                out.push((a, d));
            }
        }
        Ok(out)
    }
}

/// Whether `src` names `errno`, or what the C library's `<errno.h>`
/// expands it to in a preprocessed file (glibc's `__errno_location`).
pub(super) fn names_errno(src: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    ["errno", "__errno_location"].iter().any(|name| {
        src.match_indices(name)
            .any(|(at, w)| !src[..at].ends_with(ident) && !src[at + w.len()..].starts_with(ident))
    })
}
