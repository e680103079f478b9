//! A transformed program printed back into the C functions its regions
//! came from, each in its place with its own name, signature and result
//! (docs/c.md, C output), and the whole file with them replaced (`-o`).
//!
//! The C front end lowers the regions of a file's functions one after the
//! other into one program. A transformation that keeps each function's
//! statements together (privatization, expansion of the loop nests of one
//! function) gives a program whose top level splits back: each top-level
//! node goes to the function its statements came from (by their labels,
//! derived labels `S.1` by their base `S`); a node with none of them (a
//! copy loop) goes with the node before it. The split is refused, and the
//! program printed as one `void kernel(...)`, when a node mixes functions,
//! the functions' parts are out of file order, an array the transformation
//! added is used by two functions, or two functions share a global one of
//! them writes: the analysis ran them once each, in file order, and what
//! it proved may rest on that order, which callers need not keep.

use crate::accessed::arrays_of;
use crate::emit::{self, OmpLoop, PRINTED};
use crate::model::*;
use crate::origin::Origins;
use std::collections::{BTreeSet, HashMap, HashSet};

/// One function of the file, printed back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    /// Its byte range in the file as written.
    pub at: (usize, usize),
    /// Its text, with the comment above it.
    pub text: String,
}

/// The functions of a file a transformation changed, printed back, and
/// what the file needs before them (headers, declarations, helpers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InPlace {
    pub head: Vec<String>,
    pub functions: Vec<Function>,
}

pub use crate::emit::NotInPlace;

impl InPlace {
    /// The changed functions, after what they need.
    pub fn text(&self) -> String {
        let mut out = String::from(PRINTED);
        out.push_str(&self.head.concat());
        let texts: Vec<&str> = self.functions.iter().map(|f| f.text.as_str()).collect();
        out.push_str(&texts.join("\n"));
        out
    }

    /// `original`, the file as written, with each changed function
    /// replaced; `header` (comments) and what the functions need go
    /// before the first of them, after the file's own headers and macros.
    pub fn file(&self, original: &str, header: &str) -> String {
        let mut functions: Vec<&Function> = self.functions.iter().collect();
        functions.sort_by_key(|f| f.at);
        let mut out = String::new();
        let mut at = 0;
        for (k, f) in functions.iter().enumerate() {
            out.push_str(original.get(at..f.at.0).unwrap_or(""));
            if k == 0 {
                out.push_str(header);
                out.push_str(PRINTED);
                out.push_str(&self.head.concat());
            }
            out.push_str(f.text.strip_suffix('\n').unwrap_or(&f.text));
            at = f.at.1;
        }
        out.push_str(original.get(at..).unwrap_or(""));
        out
    }
}

/// `p`, transformed from `original`, printed into the functions `origins`
/// names when it fits them (each a drop-in, this module), else as
/// `void kernel(...)` ([`emit::program_of`]). The command line and the language
/// server print C this one way.
pub fn program_into(
    p: &Program,
    origins: Option<&Origins>,
    original: &Program,
    omp: &[OmpLoop],
) -> String {
    match origins.map(|o| in_place(p, o, original, omp)) {
        Some(Ok(done)) => done.text(),
        _ => emit::program_of(p, "kernel", omp, original),
    }
}

/// `p`, transformed from `original` (the program lowered from the file
/// whose functions `origins` are), printed back into those functions.
pub fn in_place(
    p: &Program,
    origins: &Origins,
    original: &Program,
    omp: &[OmpLoop],
) -> Result<InPlace, NotInPlace> {
    let (stripped, omp) = emit::without_effects(p, omp);
    let p = stripped.as_ref().unwrap_or(p);
    let n = origins.functions.len();
    let names: Vec<&str> = origins.functions.iter().map(|o| o.name.as_str()).collect();
    let name = |k: usize| names[k];
    let of_span = |s: Span| {
        (origins.functions.iter())
            .position(|o| (o.source.0..o.source.1).contains(&(s.start as usize)))
    };
    // The function of each statement of the original, by label.
    let mut by_label: HashMap<&str, usize> = HashMap::new();
    for s in original.stmts() {
        if let Some(k) = of_span(s.span) {
            by_label.insert(&s.label, k);
        }
    }
    let originals = split(&original.body, n, &|s: &Stmt| of_span(s.span))
        .map_err(|why| NotInPlace::Kernel(why.describe(&names)))?;
    let parts = split(&p.body, n, &|s: &Stmt| {
        let base = s.label.split('.').next().unwrap_or("");
        (!s.copy).then(|| by_label.get(base).copied()).flatten()
    })
    .map_err(|why| NotInPlace::Kernel(why.describe(&names)))?;
    shared_globals(original, &originals).map_err(|(a, w, u)| {
        NotInPlace::Kernel(format!(
            "`{}` writes `{a}`, which `{}` uses too: the file's functions are analysed as one \
             program that runs each once, in file order, and what a transformation proves may \
             rest on that order",
            name(w),
            name(u)
        ))
    })?;
    // An array the transformation added (or a local) is one function's.
    let known: HashSet<&str> = (original.arrays.iter())
        .filter(|a| !a.local)
        .map(|a| a.name.as_str())
        .collect();
    let mut owner: HashMap<ArrayId, usize> = HashMap::new();
    for (k, part) in parts.iter().enumerate() {
        for a in arrays_of(part) {
            let arr = p.array_decl(a);
            if known.contains(arr.name.as_str()) {
                continue;
            }
            if let Some(&j) = owner.get(&a).filter(|&&j| j != k) {
                return Err(NotInPlace::Kernel(format!(
                    "`{}`, an array of the transformed program, is used by `{}` and `{}`",
                    arr.name,
                    name(j),
                    name(k)
                )));
            }
            owner.insert(a, k);
        }
    }
    let extents = crate::extent::pointer_extents(original);
    let mut done = InPlace {
        head: Vec::new(),
        functions: Vec::new(),
    };
    for (k, part) in parts.into_iter().enumerate() {
        if part.is_empty() {
            continue; // left as written
        }
        let o = &origins.functions[k];
        let mut origin = o.for_program(original);
        origin.extents = extents.clone();
        let mine = Program {
            body: originals[k].clone(),
            ..original.clone()
        };
        if !origin.fits(&mine) {
            return Err(NotInPlace::Kernel(format!(
                "`{}` does not take the transformed program as it is (a name the model had to \
                 change, or a `return` not at the end)",
                o.name
            )));
        }
        let sub = Program {
            body: part,
            ..p.clone()
        };
        let printed = emit::program_in(&sub, &origin, &omp).map_err(|e| match e {
            NotInPlace::Refused(why) => NotInPlace::Refused(format!("`{}`: {why}", o.name)),
            NotInPlace::Kernel(why) => NotInPlace::Kernel(format!("`{}`: {why}", o.name)),
        })?;
        for h in printed.head {
            if !done.head.contains(&h) {
                done.head.push(h);
            }
        }
        done.functions.push(Function {
            name: o.name.clone(),
            at: o.at,
            text: printed.text,
        });
    }
    if done.functions.is_empty() {
        return Err(NotInPlace::Kernel("no function has a statement".into()));
    }
    Ok(done)
}

/// Why a program's top level does not split per function.
enum NoSplit {
    Mixed(usize, usize),
    Order(usize, usize),
}

impl NoSplit {
    fn describe(&self, names: &[&str]) -> String {
        match *self {
            NoSplit::Mixed(a, b) => format!(
                "the transformation put statements of `{}` and `{}` in one loop or branch",
                names[a], names[b]
            ),
            NoSplit::Order(a, b) => format!(
                "the transformation put statements of `{}` after those of `{}`",
                names[b], names[a]
            ),
        }
    }
}

/// The top level of `body` split into `n` functions' parts, by the
/// function `of` gives each statement (`None`: the transformation's own);
/// a node with none of them goes with the node before it (the first, with
/// the node after it).
fn split(
    body: &[Node],
    n: usize,
    of: &dyn Fn(&Stmt) -> Option<usize>,
) -> Result<Vec<Vec<Node>>, NoSplit> {
    let mut parts = vec![Vec::new(); n];
    if n == 1 {
        parts[0] = body.to_vec();
        return Ok(parts);
    }
    let mut owners = Vec::new();
    for node in body {
        let ks: BTreeSet<usize> = (stmts_in(std::slice::from_ref(node)).into_iter())
            .filter_map(of)
            .collect();
        let mut it = ks.iter();
        match (it.next(), it.next()) {
            (Some(&a), Some(&b)) => return Err(NoSplit::Mixed(a, b)),
            (k, _) => owners.push(k.copied()),
        }
    }
    let Some(first) = owners.iter().flatten().next().copied() else {
        parts[0] = body.to_vec();
        return Ok(parts);
    };
    let mut last = first;
    for (node, k) in body.iter().zip(owners) {
        let k = k.unwrap_or(last);
        if k < last {
            return Err(NoSplit::Order(last, k));
        }
        last = k;
        parts[k].push(node.clone());
    }
    Ok(parts)
}

/// A global (an array no function declares) that one function's part of
/// `original` writes and another's uses: (its name, the writer, the user).
fn shared_globals(original: &Program, parts: &[Vec<Node>]) -> Result<(), (String, usize, usize)> {
    let mut writers: HashMap<ArrayId, usize> = HashMap::new();
    let mut users: HashMap<ArrayId, BTreeSet<usize>> = HashMap::new();
    for (k, part) in parts.iter().enumerate() {
        for s in stmts_in(part) {
            for r in s.accesses() {
                if r.kind.writes() {
                    writers.insert(r.access.array, k);
                }
            }
        }
        for a in arrays_of(part) {
            users.entry(a).or_default().insert(k);
        }
    }
    for (a, w) in writers {
        let arr = original.array_decl(a);
        if arr.local || crate::cvalue::is_effects_array(&arr.name) {
            continue;
        }
        if let Some(&u) = users[&a].iter().find(|&&u| u != w) {
            return Err((arr.name.clone(), w, u));
        }
    }
    Ok(())
}
