//! How the two kinds are written in C (arrayflow's `kinds::c`):
//!
//! - `memset(p, v, size)`, `memcpy(p, q, size)` and `memmove(p, q, size)`,
//!   where `p` and `q` point into arrays (`&A[i][lo]`, `A[i] + lo`, `A`)
//!   and `size` counts their elements (`n * sizeof(double)`,
//!   `sizeof A[0]`, or a constant number of bytes), are sections:
//!   `A[i, lo] @section(lo + n) = v;` and
//!   `A[i, lo] @section(lo + n) = B[j, lo'] @section(lo' + n);`.
//! - An array declared in a block inside a loop dies at the block's end:
//!   `T[r, lo] @dead(hi + 1) = ...;` for each row `r` of its leading
//!   dimensions (at most [`MAX_ROWS`], which must be constant).

use crate::{Dead, Section};
use arrayflow::kinds::c::{CArg, CCall, CLocal, CSpelling, CStmt, Spelled};
use arrayflow::model::{Access, BinOp, Expr, ExprKind, ExtAccess, Span, Subscript};

/// Rows of a lifetime end spelled out, at most (a `T[8][8][8]` local is 64
/// statements).
pub const MAX_ROWS: i64 = 64;

impl CSpelling for Section {
    fn name(&self) -> &'static str {
        "array section"
    }

    fn call(&self, call: &CCall<'_>) -> Spelled {
        let copy = match call.name {
            "memset" => false,
            "memcpy" | "memmove" => true,
            _ => return None,
        };
        Some(section_call(call, copy))
    }
}

fn section_call(call: &CCall<'_>, copy: bool) -> Result<Vec<CStmt>, String> {
    let [dst, from, size] = call.args else {
        return Err(format!("takes 3 arguments, not {}", call.args.len()));
    };
    let CArg::Pointer {
        access: dst,
        elem,
        span: dst_at,
    } = dst
    else {
        return Err("writes through something that is not a pointer into an array".into());
    };
    let n = elements(size, elem)?;
    let target = section(dst, &n, *dst_at)?;
    let value = if copy {
        let CArg::Pointer {
            access: src,
            elem: src_elem,
            span: src_at,
        } = from
        else {
            return Err("copies from something that is not a pointer into an array".into());
        };
        if src_elem != elem {
            return Err(format!("copies `{src_elem}` elements into `{elem}` ones"));
        }
        Expr::new(ExprKind::Access(section(src, &n, *src_at)?), call.span)
    } else {
        match from {
            CArg::Value(v) => v.clone(),
            _ => Expr::new(ExprKind::Unknown, from.span()),
        }
    };
    Ok(vec![CStmt { target, value }])
}

/// `size` as a count of `elem` elements.
fn elements(size: &CArg, elem: &str) -> Result<Expr, String> {
    match size {
        CArg::Size { count, unit, .. } if unit == elem => Ok(count.expr.clone()),
        CArg::Size { unit, .. } => Err(format!(
            "counts `{unit}` objects where the array holds `{elem}` ones"
        )),
        CArg::Value(e) => {
            let bytes = match e.kind {
                ExprKind::Int(b) => b,
                _ => return Err("has a size that is not `n * sizeof(...)` or a constant".into()),
            };
            match c_size(elem) {
                Some(s) if bytes % s == 0 => Ok(Expr::new(ExprKind::Int(bytes / s), e.span)),
                Some(s) => Err(format!(
                    "covers {bytes} bytes, not a whole number of {s}-byte `{elem}` elements"
                )),
                None => Err(format!("counts bytes of `{elem}`, whose size is unknown")),
            }
        }
        CArg::Pointer { .. } => Err("has a pointer where the size goes".into()),
    }
}

/// The size of a C arithmetic type on the targets we know (LP64).
fn c_size(t: &str) -> Option<i64> {
    Some(match t {
        "char" | "signed char" | "unsigned char" => 1,
        "short" | "unsigned short" => 2,
        "int" | "unsigned" | "unsigned int" | "float" => 4,
        "long" | "unsigned long" | "long long" | "double" | "size_t" => 8,
        _ => return None,
    })
}

/// `e` as a subscript, in canonical form when affine (`lo + 8`, not
/// `lo + 8 * 1`).
fn folded(e: Expr) -> Subscript {
    let s = Subscript::new(e);
    match &s.affine {
        Some(a) => Subscript::new(arrayflow::cfront::affine_expr(a, s.expr.span)),
        None => s,
    }
}

/// `p` as a section of `n` elements from its last subscript.
fn section(p: &Access, n: &Expr, at: Span) -> Result<Access, String> {
    let last = p.subscripts.last().ok_or("points at a scalar")?;
    let hi = folded(Expr::new(
        ExprKind::Binary(BinOp::Add, Box::new(last.expr.clone()), Box::new(n.clone())),
        at,
    ));
    if hi.affine.is_none() || !p.is_affine() {
        return Err("has a start or a length that is not affine".into());
    }
    Ok(Access {
        ext: Some(Box::new(ExtAccess {
            name: "section".to_string(),
            args: vec![hi],
            span: at,
        })),
        span: at,
        ..p.clone()
    })
}

impl CSpelling for Dead {
    fn name(&self) -> &'static str {
        "lifetime end"
    }

    fn block_end(&self, local: &CLocal<'_>) -> Spelled {
        let (last, leading) = local.dims.split_last()?;
        let mut rows: Vec<Vec<i64>> = vec![Vec::new()];
        for r in leading {
            let (lo, hi) = match (r.lo.affine.is_constant(), r.hi.affine.is_constant()) {
                (true, true) => (r.lo.affine.constant, r.hi.affine.constant),
                _ => {
                    return Some(Err(
                        "has a leading dimension whose extent is not a constant".into(),
                    ))
                }
            };
            rows = rows
                .into_iter()
                .flat_map(|row| {
                    (lo..=hi).map(move |v| {
                        let mut row = row.clone();
                        row.push(v);
                        row
                    })
                })
                .collect();
            if rows.len() as i64 > MAX_ROWS {
                return Some(Err(format!("has more than {MAX_ROWS} rows")));
            }
        }
        let at = local.span;
        let int = |v: i64| Subscript::new(Expr::new(ExprKind::Int(v), at));
        let end = folded(Expr::new(
            ExprKind::Binary(
                BinOp::Add,
                Box::new(last.hi.expr.clone()),
                Box::new(Expr::new(ExprKind::Int(1), at)),
            ),
            at,
        ))
        .expr;
        let stmts = rows
            .into_iter()
            .map(|row| {
                let mut subscripts: Vec<Subscript> = row.into_iter().map(int).collect();
                subscripts.push(Subscript::new(last.lo.expr.clone()));
                CStmt {
                    target: Access {
                        array: local.array,
                        subscripts,
                        span: at,
                        ext: Some(Box::new(ExtAccess {
                            name: "dead".to_string(),
                            args: vec![Subscript::new(end.clone())],
                            span: at,
                        })),
                    },
                    value: Expr::new(ExprKind::Unknown, at),
                }
            })
            .collect();
        Some(Ok(stmts))
    }
}
