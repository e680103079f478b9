//! The C printer: a [`Program`] as one C99 function, so that a transformed
//! program (`expand --emit code` on a C file) can be compiled. docs/c.md,
//! "C output", gives the mapping.
//!
//! Parameters become leading `int` parameters, so array extents can use them
//! in C99 variable-length array parameters; arrays are indexed from 0, so a
//! subscript has its range's lower bound subtracted. Scalars are pointer
//! parameters, read and written as `*x`, so the caller sees their final
//! value. Values are `double` (`int` for `int` arrays); the model's `/` and
//! `%` on integers are Euclidean, so they print as the helpers `af_div` and
//! `af_mod`; with a real operand or target `/` is C's division.
//! [`program_in`] prints a program into the C function it came from.

use crate::cvalue;
pub use crate::effects::renamed_overlaps;
use crate::linear::{facts, infeasible, Linear};
use crate::model::*;
pub use crate::origin::{Origin, Origins};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write;

/// C99 keywords, and the names the printed text defines itself.
const RESERVED: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "_Bool",
    "_Complex",
    "_Imaginary",
    UNKNOWN,
    UNKNOWN_COND,
    DIV,
    MOD,
];

const UNKNOWN: &str = "unknown";
const UNKNOWN_COND: &str = "unknown_cond";
const DIV: &str = "af_div";
const MOD: &str = "af_mod";

const DIV_DEF: &str = "/* Euclidean division, as in the model (C's `/` truncates). */
static inline long af_div(long a, long b)
{
  long q = a / b;
  if (a % b < 0)
    q += b > 0 ? -1 : 1;
  return q;
}
";
const MOD_DEF: &str = "/* Euclidean remainder, never negative, as in the model. */
static inline long af_mod(long a, long b)
{
  long r = a % b;
  if (r < 0)
    r += b > 0 ? b : -b;
  return r;
}
";

/// The program as a C translation unit defining `void function(...)`.
pub fn program(p: &Program, function: &str) -> String {
    program_omp(p, function, &[])
}

/// A loop that OpenMP runs over thread-private copies of arrays
/// (`privatize --emit code` on C): the arrays are parameters, i.e.
/// pointers, which OpenMP's clauses would privatize instead of the cells,
/// so each gets a local copy (`X_p`) that the clauses name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OmpLoop {
    pub counter: CounterId,
    pub arrays: Vec<OmpPrivate>,
    pub reductions: Vec<OmpReduction>,
    /// A loop over threads (`for t = 0 to threads - 1`, explicit
    /// per-thread private copies), with the parameter counting them: that
    /// parameter is a local set to `omp_get_max_threads()` (1 without
    /// OpenMP) where the function is printed in place, and the arrays
    /// whose first dimension it sizes are per-thread copies.
    pub threads: Option<String>,
}

/// A reduction of an [`OmpLoop`]: every iteration updates `cell` with
/// `op`, OpenMP's reduction identifier (`+`, `*`, `max`, ...). A scalar
/// the function declares is named by the clause; any other cell is read
/// into a local before the loop, which the clause names and the loop
/// updates, and written back after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OmpReduction {
    pub cell: Access,
    pub op: &'static str,
}

/// One array of an [`OmpLoop`]: `private` when neither flag is set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OmpPrivate {
    pub array: ArrayId,
    /// `firstprivate`: each thread's copy starts as the shared array.
    pub first: bool,
    /// `lastprivate`: the sequentially last iteration's copy is copied
    /// back to the shared array after the loop.
    pub last: bool,
}

/// [`program`] with the loops of `omp` printed with data-sharing clauses:
/// `{ double X_p[..]; memcpy(X_p, X, ..); #pragma omp parallel for
/// firstprivate(X_p) lastprivate(X_p) for (..) {..} memcpy(X, X_p, ..); }`,
/// the local copied in when firstprivate or lastprivate (a loop that runs
/// no iteration leaves it as the shared array) and out when lastprivate.
pub fn program_omp(p: &Program, function: &str, omp: &[OmpLoop]) -> String {
    program_added(p, function, omp, None)
}

/// [`program_omp`] of a transformation of `original`: the header names
/// the array parameters `original` does not have, the memory the caller
/// provides for them.
pub fn program_of(p: &Program, function: &str, omp: &[OmpLoop], original: &Program) -> String {
    program_added(p, function, omp, Some(original))
}

fn program_added(
    p: &Program,
    function: &str,
    omp: &[OmpLoop],
    original: Option<&Program>,
) -> String {
    let (stripped, omp) = without_effects(p, omp);
    let p = stripped.as_ref().unwrap_or(p);
    let mut cx = Printer::new(p, None);
    cx.omp = omp;
    let mut body = String::new();
    // Arrays local to the region stay locals of the function: the caller
    // neither passes nor sees them.
    for (k, a) in p.arrays.iter().enumerate().filter(|(_, a)| a.local) {
        let id = ArrayId(k as u32);
        let decl = if a.dims.is_empty() {
            cx.local.insert(id);
            format!("{} {}", cx.elem(id), cx.arrays[k])
        } else {
            cx.array_param(id, a)
        };
        let _ = writeln!(body, "  {decl};");
    }
    cx.nodes(&p.body, 1, &mut body);

    let mut out = cx.preamble();
    if !p.params.is_empty() {
        let list: Vec<String> = p
            .params
            .iter()
            .map(|q| match q.default {
                Some(v) => format!("{} = {v}", q.name),
                None => format!("{} (no default)", q.name),
            })
            .collect();
        let _ = writeln!(out, "/* parameters: {} */", list.join(", "));
    }
    for a in &p.assumptions {
        let _ = writeln!(out, "/* assume {} */", crate::print::cond(p, a));
    }
    let mut added = Vec::new();
    for (k, a) in p.arrays.iter().enumerate().filter(|(_, a)| !a.local) {
        if original.is_some_and(|o| o.array(&a.name).is_none()) {
            added.push(cx.sized(ArrayId(k as u32), a));
        }
    }
    memory_note(
        &mut out,
        "Arrays the transformation added: parameters, the caller provides them",
        &added,
    );
    memory_note(&mut out, STACK_NOTE, &cx.stack);
    cx.declarations(&mut out);
    out.push('\n');
    let mut params: Vec<String> = p
        .params
        .iter()
        .filter(|q| q.derived.is_none())
        .map(|q| format!("int {}", cx.param_names[&q.name]))
        .collect();
    for (k, a) in p.arrays.iter().enumerate().filter(|(_, a)| !a.local) {
        params.push(cx.array_param(ArrayId(k as u32), a));
    }
    if params.is_empty() {
        params.push("void".into());
    }
    let _ = writeln!(out, "void {function}({})\n{{", params.join(", "));
    out.push_str(&body);
    out.push_str("}\n");
    out
}

/// A function printed back into its place ([`program_in`]): what the file
/// needs before it (headers, declarations, helpers: one item each, so that
/// several functions share them), and its text, with the comment above it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InPlaceFunction {
    pub head: Vec<String>,
    pub text: String,
}

/// The program printed into the C function it was lowered from (`origin`,
/// which [`Origin::fits`] it): that function's text with the region
/// replaced, so that it is a drop-in for the original. Arrays the program
/// adds are allocated on the heap at the region's start and freed at its
/// end, with the element type of the array whose name they extend; a
/// header comment gives their sizes. Parameters C does not declare (a
/// bound made a parameter) are locals set to their defaults, and the
/// extent of a pointer parameter (`a_dim0` of `double *a`) to what the
/// program accesses of it (`Origin::extents`).
///
/// `Err` when the printed region uses a parameter that C does not declare
/// and that has no value: C has nothing to give it (`Refused` for a
/// pointer's extent the accesses do not give, else `Kernel`: a name the
/// model had to change). One the region does not use is not printed. `p`
/// may be one function's part of a program ([`crate::inplace`]): arrays it
/// does not use are not declared.
pub fn program_in(
    p: &Program,
    origin: &Origin,
    omp: &[OmpLoop],
) -> Result<InPlaceFunction, NotInPlace> {
    let (stripped, omp) = without_effects(p, omp);
    let p = stripped.as_ref().unwrap_or(p);
    let mut cx = Printer::new(p, Some(origin));
    cx.omp = omp;
    leading_copies(&p.body, &mut cx.leading);
    let used_arrays = crate::accessed::arrays_of(&p.body);
    let mut body = String::new();
    let mut scratch = Vec::new();
    let mut frees = Vec::new();
    let mut declared = HashSet::new();
    // `sizeof` of each array of `frees`, as allocated.
    let mut sizes = Vec::new();
    for (k, a) in p.arrays.iter().enumerate() {
        let id = ArrayId(k as u32);
        // A local of the region is declared again, even where it hides a
        // global of its name.
        let local = a.local || origin.region_locals.contains(&a.name);
        if !local && origin.shares(&a.name) {
            continue;
        }
        // Another function's locals and arrays.
        if !used_arrays.contains(&id) && !origin.region_locals.contains(&a.name) {
            continue;
        }
        declared.insert(a.name.as_str());
        let name = cx.arrays[k].clone();
        let ty = cx.elem(id);
        if a.dims.is_empty() {
            cx.local.insert(id);
            let _ = writeln!(body, "  {ty} {name};");
            continue;
        }
        let extents = cx.extents(a);
        if local {
            let _ = writeln!(body, "  {ty} {name}{};", extents.concat());
            continue;
        }
        // A pointer to rows: `C_2[i][j][k]` indexes it as an array.
        let size = format!("sizeof({ty}{})", extents.concat());
        let _ = writeln!(
            body,
            "  {ty} (*{name}){} = malloc({size});",
            extents[1..].concat(),
        );
        scratch.push(cx.sized(id, a));
        sizes.push(size);
        frees.push(name);
    }
    cx.uses_malloc = !frees.is_empty();
    allocation_checked(&mut body, &frees, &sizes);
    cx.nodes(&p.body, 1, &mut body);
    // The function's locals the program no longer reads (a transformation
    // renamed their uses) would make `-Wall` say they are set but unused.
    let read = read_arrays(p, &cx.leading);
    let mut unread: Vec<&String> = (origin.locals.iter())
        .chain(
            origin
                .region_locals
                .iter()
                .filter(|n| declared.contains(n.as_str())),
        )
        .filter(|n| p.array(n).is_some_and(|a| !read.contains(&a)))
        .collect();
    unread.sort();
    unread.dedup();
    for n in unread {
        let _ = writeln!(body, "  (void) {n};");
    }
    for f in &frees {
        let _ = writeln!(body, "  free({f});");
    }
    // The function's result, kept where the region returned it (in
    // several places when the transformation made versions of the
    // statement), returned after what the transformation added there:
    // `return e;` where nothing was.
    if let Some((var, ty)) = cx.result.take() {
        let last = match cx.returns.as_slice() {
            [(value, line)] => body
                .strip_suffix(line.as_str())
                .map(|before| format!("{before}  return {value};\n")),
            _ => None,
        };
        body = match last {
            Some(body) => body,
            // `= 0`: gcc cannot always tell that one of the branches runs.
            None => format!("  {ty} {var} = 0;\n{body}  return {var};\n"),
        };
    }
    // Parameters C does not declare (a bound made a parameter, a pointer's
    // extent) are locals set to their values, where the region uses them.
    let used = crate::origin::identifiers(&body);
    let mut constants = String::new();
    for q in p.params.iter().filter(|q| !origin.shares(&q.name)) {
        let name = &cx.param_names[&q.name];
        if !used.contains(name) {
            continue;
        }
        if cx.omp.iter().any(|o| o.threads.as_ref() == Some(&q.name)) {
            let _ = write!(constants, "{}", threads_local(name));
            cx.uses_omp = true;
            continue;
        }
        let value = match (q.default, origin.extents.get(&q.name)) {
            (Some(v), _) => v.to_string(),
            (None, Some(Ok(e))) => {
                let e = cx.extent(e, origin).map_err(NotInPlace::Refused)?;
                // No access runs where it is not positive: any size does.
                format!("{e} > 0 ? {e} : 0")
            }
            (None, Some(Err(why))) => return Err(NotInPlace::Refused(why.clone())),
            (None, None) => {
                return Err(NotInPlace::Kernel(format!(
                    "the model names a variable of the function `{}`, which C does not have there",
                    q.name
                )));
            }
        };
        let _ = writeln!(constants, "  const int {name} = {value};");
    }
    body.insert_str(0, &constants);
    let mut text = String::new();
    memory_note(
        &mut text,
        "Memory this function allocates (malloc) and frees",
        &scratch,
    );
    memory_note(&mut text, STACK_NOTE, &cx.stack);
    text.push_str(&origin.prefix);
    // A region without `#pragma scop` starts after the body's `{`.
    if !origin.prefix.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&body);
    text.push_str(&origin.suffix);
    text.push('\n');
    let mut head: Vec<String> = (cx.preamble().lines().skip(1))
        .map(|l| format!("{l}\n"))
        .collect();
    head.extend(cx.declaration_items());
    Ok(InPlaceFunction { head, text })
}

/// The first line of C printed back into a file.
pub const PRINTED: &str =
    "/* Printed by arrayflow from the program model (docs/c.md, C output). */\n";

/// Why a program is not printed back into its functions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotInPlace {
    /// It does not split back per function, or does not fit one; it can
    /// be printed as `void kernel(...)`.
    Kernel(String),
    /// A function needs a value C does not have (a pointer's extent):
    /// printed as `void kernel(...)`, it would be a function of it.
    Refused(String),
}

/// `p` without the statements and cells that stand for calls' effects
/// (`effects::strip`; `None` when it has none), and `omp` in its arrays.
pub(crate) fn without_effects(p: &Program, omp: &[OmpLoop]) -> (Option<Program>, Vec<OmpLoop>) {
    let Some(s) = crate::effects::strip(p) else {
        return (None, omp.to_vec());
    };
    let to = |a: ArrayId| s.map.get(a.index()).copied().flatten();
    let omp = omp
        .iter()
        .map(|o| OmpLoop {
            counter: o.counter,
            arrays: (o.arrays.iter())
                .filter_map(|x| {
                    Some(OmpPrivate {
                        array: to(x.array)?,
                        ..x.clone()
                    })
                })
                .collect(),
            reductions: (o.reductions.iter())
                .filter_map(|r| {
                    let mut cell = r.cell.clone();
                    cell.array = to(cell.array)?;
                    Some(OmpReduction { cell, op: r.op })
                })
                .collect(),
            threads: o.threads.clone(),
        })
        .collect();
    (Some(s.program), omp)
}

/// After the `malloc`s of `frees` (of `sizes` bytes): when one failed, all
/// are freed (`free(NULL)` does nothing) and the program stops with a
/// message naming them, before the region has written anything. A `NULL`
/// for 0 bytes (an empty extent: C allows either answer) is no failure.
fn allocation_checked(body: &mut String, frees: &[String], sizes: &[String]) {
    if frees.is_empty() {
        return;
    }
    let failed: Vec<String> = (frees.iter().zip(sizes))
        .map(|(f, size)| format!("(!{f} && {size} > 0)"))
        .collect();
    let _ = writeln!(body, "  if ({}) {{", failed.join(" || "));
    for f in frees {
        let _ = writeln!(body, "    free({f});");
    }
    let _ = writeln!(
        body,
        "    fprintf(stderr, \"out of memory for {}\\n\");\n    exit(1);\n  }}",
        frees.join(", ")
    );
}

/// The declaration of the thread count `name`: OpenMP's (1 without it).
fn threads_local(name: &str) -> String {
    format!(
        "#ifdef _OPENMP\n  const int {name} = omp_get_max_threads();\n#else\n  \
         const int {name} = 1;\n#endif\n"
    )
}

/// A private copy of [`Printer::omp_loop`]: the shared variable, the
/// local one, and the local's extents when sized by what the program
/// reaches rather than declared.
struct Copy {
    scalar: bool,
    shared: String,
    local: String,
    reached: Option<Vec<String>>,
}

/// The header's title for the private copies `omp_loop` declares.
const STACK_NOTE: &str = "Private copies on the stack, one declared here and one per OpenMP thread";

/// `/* title:\n   item,\n   item */`, nothing when there is no item.
fn memory_note(out: &mut String, title: &str, items: &[String]) {
    if !items.is_empty() {
        let _ = writeln!(out, "/* {title}:\n   {} */", items.join(",\n   "));
    }
}

struct Printer<'a> {
    p: &'a Program,
    /// C names of parameters and arrays, by model name.
    param_names: HashMap<String, String>,
    arrays: Vec<String>,
    counters: Vec<String>,
    /// Called functions: C name → argument count (`None` when calls differ).
    functions: BTreeMap<String, Option<usize>>,
    function_names: HashMap<String, String>,
    labels: HashSet<String>,
    uses_unknown: bool,
    uses_unknown_cond: bool,
    uses_div: bool,
    uses_mod: bool,
    omp: Vec<OmpLoop>,
    /// Scalars printed as locals (`x`, not `*x`): private copies.
    local: HashSet<ArrayId>,
    uses_memcpy: bool,
    uses_malloc: bool,
    /// A clause of the cost model compares with its threshold's macro.
    uses_threshold: bool,
    /// `omp_get_max_threads()` sets a thread count: `omp.h`.
    uses_omp: bool,
    uses_math: bool,
    /// The function printed into ([`program_in`]).
    origin: Option<&'a Origin>,
    /// The private copies of arrays declared (`omp_loop`), for the header.
    stack: Vec<String>,
    /// Inside a loop with `#pragma omp parallel for`: no nested one.
    in_parallel: bool,
    /// Inside a parallel region around a sequential loop ([`Printer::region`]):
    /// parallel loops are `omp for`, the rest runs under `omp single`.
    region: bool,
    /// Cells printed as a local instead: reduction variables.
    cells: Vec<(Access, String)>,
    /// The copies the program starts with, before anything else runs.
    leading: HashSet<StmtId>,
    /// What holds where the printer is: each form is `>= 0` (the
    /// enclosing loops' bounds, the conditions of the branches it is in).
    context: Vec<Linear>,
    /// Printed into a function with a result: the variable that holds
    /// it and its type, once a `return` is met.
    result: Option<(String, String)>,
    /// Each `return` printed: the value, and the line assigning it.
    returns: Vec<(String, String)>,
    /// Per loop around the printer, innermost last: the exit flag it
    /// ends with `break` ([`crate::exits`]).
    exits: Vec<Option<ArrayId>>,
}

/// The copy statements `body` starts with (alone or in loops of copies).
fn leading_copies(body: &[Node], out: &mut HashSet<StmtId>) -> bool {
    for n in body {
        let all = match n {
            Node::Stmt(s) if s.copy => {
                out.insert(s.id);
                true
            }
            Node::For(f) => leading_copies(&f.body, out),
            _ => false,
        };
        if !all {
            return false;
        }
    }
    true
}

/// Whether a called name is a C operator, literal or cast kept as a
/// function (`cvalue`), or a `<math.h>` function: none needs a prototype.
fn spelled(f: &str) -> bool {
    cvalue::literal_spelling(f).is_some()
        || cvalue::cast_type(f).is_some()
        || cvalue::operator(f).is_some()
        || f == SELECT
        || cvalue::is_math(f)
}

const SELECT: &str = "__select";

/// `name` as a C identifier (`.` of derived names becomes `_`), with `_`
/// appended until it is neither reserved nor in `taken`.
fn fresh(name: &str, taken: &HashSet<String>) -> String {
    let mut n: String = name
        .chars()
        .map(|ch| if ch.is_ascii_alphanumeric() { ch } else { '_' })
        .collect();
    while RESERVED.contains(&n.as_str()) || taken.contains(&n) {
        n.push('_');
    }
    n
}

/// The arrays (and scalars) the program reads somewhere, but in the
/// statements `except`.
fn read_arrays(p: &Program, except: &HashSet<StmtId>) -> HashSet<ArrayId> {
    let mut out = HashSet::new();
    for s in p.stmts().into_iter().filter(|s| !except.contains(&s.id)) {
        for a in s.accesses() {
            if a.kind.reads() {
                out.insert(a.access.array);
            }
        }
    }
    for c in p.conditions() {
        let mut reads = Vec::new();
        c.cond.collect_reads(&mut reads);
        out.extend(reads.iter().map(|a| a.access.array));
    }
    out
}

/// How many loops from `f` down are perfectly nested, parallel, and
/// bounded independently of each other: OpenMP's `collapse(n)`.
fn collapsed(f: &For) -> usize {
    let mut n = 1;
    let mut outer = vec![f.counter];
    let mut cur = f;
    while let [Node::For(g)] = cur.body.as_slice() {
        let free = |b: &Bound| {
            (b.affine.terms.iter()).all(|(v, _)| !matches!(v, Var::Counter(c) if outer.contains(c)))
        };
        if !(g.parallel && free(&g.lower) && free(&g.upper)) {
            break;
        }
        n += 1;
        outer.push(g.counter);
        cur = g;
    }
    n
}

/// Whether `c` has an unknown condition, an unknown value or a call to a
/// function other than C's operators and `<math.h>`'s: each thread would
/// call it for its own answer, or do its effects once more.
fn has_unknown(c: &Cond) -> bool {
    fn value(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Unknown => true,
            ExprKind::Call(f, args) => !spelled(f) || args.iter().any(value),
            ExprKind::Neg(x) => value(x),
            ExprKind::Binary(_, l, r) => value(l) || value(r),
            ExprKind::Access(a) => a.subscripts.iter().any(|s| value(&s.expr)),
            ExprKind::Int(_) | ExprKind::Param(_) | ExprKind::Counter(_) => false,
        }
    }
    match c {
        Cond::Unknown => true,
        Cond::Cmp(_, l, r) => value(l) || value(r),
        Cond::And(a, b) | Cond::Or(a, b) => has_unknown(a) || has_unknown(b),
        Cond::Not(a) => has_unknown(a),
    }
}

/// Whether `n` is or holds a parallel loop.
fn holds_parallel_node(n: &Node) -> bool {
    match n {
        Node::For(g) => g.parallel || g.body.iter().any(holds_parallel_node),
        Node::While(w) => w.body.iter().any(holds_parallel_node),
        Node::If(i) => (i.branches.iter().flat_map(|(_, b)| b))
            .chain(i.otherwise.iter().flatten())
            .any(holds_parallel_node),
        Node::Stmt(_) => false,
    }
}

/// The outermost parallel loops in `body`, each with the sequential loops
/// around it (`around`, from the region's loop down).
fn parallel_nests<'b>(
    body: &'b [Node],
    around: &mut Vec<crate::cost::Inside>,
    out: &mut Vec<(&'b For, Vec<crate::cost::Inside>)>,
) {
    for n in body {
        match n {
            Node::For(g) if g.parallel => out.push((g, around.clone())),
            Node::For(g) => {
                around.push(crate::cost::inside(g));
                parallel_nests(&g.body, around, out);
                around.pop();
            }
            Node::While(w) => parallel_nests(&w.body, around, out),
            Node::If(i) => {
                for b in (i.branches.iter().map(|(_, b)| b)).chain(&i.otherwise) {
                    parallel_nests(b, around, out);
                }
            }
            Node::Stmt(_) => {}
        }
    }
}

/// The counters of the `for` loops in `body`, below the first `skip`
/// perfectly nested ones (those a `collapse` makes private).
fn inner_counters(body: &[Node], skip: usize, out: &mut Vec<CounterId>) {
    for n in body {
        match n {
            Node::For(f) => {
                if skip == 0 {
                    out.push(f.counter);
                }
                inner_counters(&f.body, skip.saturating_sub(1), out);
            }
            Node::While(w) => inner_counters(&w.body, 0, out),
            Node::If(i) => {
                for (_, b) in &i.branches {
                    inner_counters(b, 0, out);
                }
                if let Some(e) = &i.otherwise {
                    inner_counters(e, 0, out);
                }
            }
            Node::Stmt(_) => {}
        }
    }
}

impl<'a> Printer<'a> {
    fn new(p: &'a Program, origin: Option<&'a Origin>) -> Printer<'a> {
        let calls = crate::calls::collect_calls(p);
        let uses_math = calls.iter().any(|(f, _)| cvalue::is_math(f));
        let mut model: HashSet<String> = p.params.iter().map(|q| q.name.clone()).collect();
        model.extend(p.arrays.iter().map(|a| a.name.clone()));
        model.extend(p.counters.iter().map(|c| c.name.clone()));
        let mut function_names = HashMap::new();
        let mut functions: BTreeMap<String, Option<usize>> = BTreeMap::new();
        for (f, n) in calls {
            // Printed into its function, `return(e)` is C's `return`.
            if origin.is_some() && f == "return" {
                continue;
            }
            if spelled(&f) {
                function_names.insert(f.clone(), f.clone());
                continue;
            }
            let c = function_names
                .entry(f.clone())
                .or_insert_with(|| fresh(&f, &model))
                .clone();
            functions
                .entry(c)
                .and_modify(|k| {
                    if *k != Some(n) {
                        *k = None;
                    }
                })
                .or_insert(Some(n));
        }
        // Variables avoid keywords and the functions' names (a counter named
        // like a called function would hide it).
        let mut taken: HashSet<String> = functions.keys().cloned().collect();
        taken.extend(function_names.keys().cloned());
        // Printed into its function, a name C does not know (a
        // transformation's array or counter) avoids every identifier of
        // the file too: a global `c` is no counter's name.
        let rename = |name: &str| {
            let mut avoid = taken.clone();
            avoid.extend(model.iter().filter(|m| *m != name).cloned());
            if let Some(o) = origin.filter(|o| !o.knows(name)) {
                avoid.extend(o.identifiers.iter().cloned());
            }
            fresh(name, &avoid)
        };
        let param_names = p
            .params
            .iter()
            .map(|q| (q.name.clone(), rename(&q.name)))
            .collect();
        let arrays = p.arrays.iter().map(|a| rename(&a.name)).collect();
        let counters = p.counters.iter().map(|c| rename(&c.name)).collect();
        Printer {
            p,
            param_names,
            arrays,
            counters,
            functions,
            function_names,
            labels: HashSet::new(),
            uses_unknown: false,
            uses_unknown_cond: false,
            uses_div: false,
            uses_mod: false,
            omp: Vec::new(),
            local: HashSet::new(),
            uses_memcpy: false,
            uses_malloc: false,
            uses_threshold: false,
            uses_omp: false,
            uses_math,
            origin,
            stack: Vec::new(),
            in_parallel: false,
            region: false,
            cells: Vec::new(),
            context: Vec::new(),
            leading: HashSet::new(),
            result: None,
            returns: Vec::new(),
            exits: Vec::new(),
        }
    }

    /// The first lines: what printed the text, and the headers it uses.
    fn preamble(&self) -> String {
        let mut out = String::from(PRINTED);
        for (used, header) in [
            (self.uses_memcpy, "string.h"),
            // `fprintf` when a `malloc` fails.
            (self.uses_malloc, "stdio.h"),
            (self.uses_malloc, "stdlib.h"),
            (self.uses_math, "math.h"),
        ] {
            if used {
                let _ = writeln!(out, "#include <{header}>");
            }
        }
        if self.uses_omp {
            out.push_str("#ifdef _OPENMP\n#include <omp.h>\n#endif\n");
        }
        out
    }

    /// Declarations of what the body uses and C does not declare: opaque
    /// values, functions the file does not declare, the Euclidean helpers.
    fn declarations(&self, out: &mut String) {
        for item in self.declaration_items() {
            out.push_str(&item);
        }
    }

    /// [`Printer::declarations`], one item each.
    fn declaration_items(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.uses_unknown && !self.file_has_unknown() {
            out.push(format!("double {UNKNOWN}(void);\n"));
        }
        if self.uses_unknown_cond {
            out.push(format!("int {UNKNOWN_COND}(void);\n"));
        }
        for (name, arity) in &self.functions {
            if self.origin.is_some_and(|o| o.functions.contains(name)) {
                continue;
            }
            let args = match arity {
                Some(0) => "void".to_string(),
                Some(n) => vec!["double"; *n].join(", "),
                // Called with different argument counts: no prototype.
                None => String::new(),
            };
            out.push(format!("double {name}({args});\n"));
        }
        if self.uses_threshold {
            out.push(crate::cost::threshold_definition());
        }
        if self.uses_div {
            out.push(DIV_DEF.to_string());
        }
        if self.uses_mod {
            out.push(MOD_DEF.to_string());
        }
        out
    }

    /// An [`crate::extent::Extent`] in C, by the names C gives its
    /// parameters; `Err` when one is not a variable of the function.
    fn extent(&self, e: &crate::extent::Extent, origin: &Origin) -> Result<String, String> {
        let mut a = Affine::constant(e.constant);
        for (name, c) in &e.terms {
            let q = (self.p.params.iter().position(|q| &q.name == name))
                .filter(|_| origin.shares(name))
                .ok_or_else(|| {
                    format!("the extent it needs is in `{name}`, which C does not have there")
                })?;
            let term = Affine::var(Var::Param(ParamId(q as u32))).checked_scale(*c);
            a = term
                .and_then(|t| a.checked_add(&t))
                .ok_or("the extent overflows")?;
        }
        Ok(self.affine(&a))
    }

    /// The element type: as the function declares the array (or the
    /// array whose name it extends), else from the model's.
    fn elem(&self, a: ArrayId) -> String {
        let decl = self.p.array_decl(a);
        // An `int` array of the model (a transformation's iteration
        // numbers, `X_l`) is `int` whatever its name extends.
        let typed = self.origin.filter(|_| decl.elem != ElemType::Int);
        if let Some(t) = typed.and_then(|o| o.type_of(&decl.name)) {
            return t.to_string();
        }
        match decl.elem {
            ElemType::Int => "int",
            ElemType::Real | ElemType::Array => "double",
        }
        .to_string()
    }

    /// `[hi - lo + 1]` per dimension.
    fn extents(&mut self, a: &Array) -> Vec<String> {
        let mut out = Vec::new();
        for r in &a.dims {
            let extent =
                r.hi.affine
                    .checked_sub(&r.lo.affine)
                    .and_then(|d| d.checked_add(&Affine::constant(1)));
            let text = match extent {
                Some(e) => self.affine(&e),
                None => {
                    let lo = self.expr(&r.lo.expr);
                    format!("{} - ({lo}) + 1", self.expr(&r.hi.expr))
                }
            };
            out.push(format!("[{text}]"));
        }
        out
    }

    /// `A_1: double[N][M], (N) * (M) * sizeof(double) bytes`: an added
    /// array's name, element type and size, for the header.
    fn sized(&mut self, id: ArrayId, a: &Array) -> String {
        let name = self.arrays[id.index()].clone();
        let ty = self.elem(id);
        let extents = self.extents(a);
        let size: Vec<&str> = extents
            .iter()
            .map(|e| e.trim_start_matches('[').trim_end_matches(']'))
            .collect();
        let mut text = format!(
            "{name}: {ty}{}, ({}) * sizeof({ty}) bytes",
            extents.concat(),
            size.join(") * (")
        );
        if self.per_thread(a) {
            let cells = match &size[1..] {
                [] => String::new(),
                rest => format!("({}) * ", rest.join(") * (")),
            };
            let _ = write!(text, ", per thread {cells}sizeof({ty}) bytes");
        }
        text
    }

    /// Whether `a`'s first dimension is `0 .. threads - 1` for the thread
    /// count of a loop over threads ([`OmpLoop::threads`]): one copy per
    /// thread.
    fn per_thread(&self, a: &Array) -> bool {
        let Some(first) = a.dims.first() else {
            return false;
        };
        (self.omp.iter().filter_map(|o| o.threads.as_ref())).any(|name| {
            let Some(q) = self.p.param(name) else {
                return false;
            };
            let last = Affine::var(Var::Param(q)).checked_sub(&Affine::constant(1));
            first.lo.affine == Affine::constant(0) && Some(&first.hi.affine) == last.as_ref()
        })
    }

    /// `double A[hi - lo + 1][...]`, or `double *x` for a scalar.
    fn array_param(&mut self, id: ArrayId, a: &Array) -> String {
        let name = &self.arrays[id.index()];
        let ty = self.elem(id);
        if a.dims.is_empty() {
            return format!("{ty} *{name}");
        }
        let name = name.clone();
        format!("{ty} {name}{}", self.extents(a).concat())
    }

    fn affine(&self, a: &Affine) -> String {
        let mut s = String::new();
        for &(v, c) in &a.terms {
            let name = match v {
                Var::Param(q) => self.param(q),
                Var::Counter(k) => self.counters[k.index()].clone(),
            };
            let mag = c.unsigned_abs();
            if s.is_empty() {
                s.push_str(if c < 0 { "-" } else { "" });
            } else {
                s.push_str(if c < 0 { " - " } else { " + " });
            }
            if mag != 1 {
                let _ = write!(s, "{mag} * ");
            }
            s.push_str(&name);
        }
        let k = a.constant;
        if s.is_empty() {
            let _ = write!(s, "{}", int(k));
        } else if k != 0 {
            let _ = write!(s, " {} {}", if k < 0 { '-' } else { '+' }, k.unsigned_abs());
        }
        s
    }

    /// `name: ` as a C label; a comment in a function printed into its
    /// origin (a label nothing jumps to makes `-Wall` warn); nothing for a
    /// generated name or one derived from it (`_S1.1`).
    fn label(&mut self, name: &str, out: &mut String) {
        if name.starts_with('_') {
            return;
        }
        let c = fresh(name, &self.labels);
        self.labels.insert(c.clone());
        let _ = match self.origin {
            Some(_) => write!(out, "/* {c}: */ "),
            None => write!(out, "{c}: "),
        };
    }

    fn nodes(&mut self, body: &[Node], depth: usize, out: &mut String) {
        if self.region && !self.in_parallel {
            return self.region_nodes(body, depth, out);
        }
        for n in body {
            self.node(n, depth, out);
        }
    }

    fn node(&mut self, n: &Node, depth: usize, out: &mut String) {
        self.node_inner(n, depth, out);
        // An inner loop that may have set the exit flag of the loop
        // around it ends that loop too (`crate::exits`).
        let body = match n {
            Node::For(f) => &f.body,
            Node::While(w) => &w.body,
            _ => return,
        };
        if let Some(Some(flag)) = self.exits.last() {
            if crate::exits::loop_sets(body, *flag) {
                let flag = self.access(&Access {
                    array: *flag,
                    subscripts: Vec::new(),
                    span: Span::NONE,
                    ext: None,
                });
                let _ = writeln!(out, "{}if ({flag} != 0) break;", "  ".repeat(depth));
            }
        }
    }

    fn node_inner(&mut self, n: &Node, depth: usize, out: &mut String) {
        {
            let pad = "  ".repeat(depth);
            match n {
                Node::Stmt(s) => {
                    out.push_str(&pad);
                    self.stmt(s, out);
                    if let Some(Some(flag)) = self.exits.last() {
                        if crate::exits::sets(s, *flag) {
                            let _ = writeln!(out, "{pad}break;");
                        }
                    }
                }
                Node::For(f) => match self.omp.iter().find(|o| o.counter == f.counter).cloned() {
                    // A loop over threads indexes shared arrays by thread.
                    Some(o)
                        if o.threads.is_none()
                            && !(o.arrays.is_empty() && o.reductions.is_empty()) =>
                    {
                        self.omp_loop(f, &o, depth, out)
                    }
                    _ if !f.parallel
                        && !self.in_parallel
                        && !self.region
                        && self.fits_region(f) =>
                    {
                        self.region(f, depth, out)
                    }
                    _ => self.for_loop(f, "", depth, out),
                },
                Node::While(w) => {
                    out.push_str(&pad);
                    self.cond_label(&w.cond, out);
                    // The model's `while` counts its trips from 0.
                    let i = self.counters[w.counter.index()].clone();
                    let c = self.cond(&w.cond.cond);
                    let _ = writeln!(out, "for (int {i} = 0; {c}; {i}++) {{");
                    self.exits.push(None);
                    self.nodes(&w.body, depth + 1, out);
                    self.exits.pop();
                    let _ = writeln!(out, "{pad}}}");
                }
                Node::If(i) => self.if_node(i, depth, out),
            }
        }
    }

    /// A pragma's `private(...)` clause, and its `if(...)` clause when the
    /// cost model gave the work of what it opens.
    fn private_and_cost(&mut self, pragma: &mut String, private: &[String], work: Option<&str>) {
        if !private.is_empty() {
            let _ = write!(pragma, " private({})", private.join(", "));
        }
        if let Some(work) = work {
            let _ = write!(pragma, " if({work} >= {})", crate::cost::THRESHOLD);
            self.uses_threshold = true;
        }
    }

    /// `for (..) {..}`, after `#pragma omp parallel for{clauses}` when the
    /// loop is parallel.
    fn for_loop(&mut self, f: &For, clauses: &str, depth: usize, out: &mut String) {
        let pad = "  ".repeat(depth);
        let outermost = f.parallel && !self.in_parallel;
        // Outside a region, the cost model (printed into a function only):
        // the nest's work, compared with the threshold where it starts.
        let pays = match outermost && !self.region && self.origin.is_some() {
            true => crate::cost::pays(&[(f, crate::cost::outermost())], &|a| self.affine(a)),
            false => None,
        };
        if outermost {
            let n = collapsed(f);
            let directive = if self.region { "for" } else { "parallel for" };
            let mut pragma = format!("{pad}#pragma omp {directive}");
            if n > 1 {
                let _ = write!(pragma, " collapse({n})");
            }
            pragma.push_str(clauses);
            // Counters the function declares are shared unless named:
            // the inner loops' ones are private to each iteration.
            let mut inner = Vec::new();
            inner_counters(&f.body, n - 1, &mut inner);
            let mut private: Vec<String> = Vec::new();
            for c in inner {
                let name = self.counters[c.index()].clone();
                if self.declared(&name) && !private.contains(&name) {
                    private.push(name);
                }
            }
            self.private_and_cost(&mut pragma, &private, pays.as_deref());
            let _ = writeln!(out, "{pragma}");
            self.in_parallel = true;
        }
        let i = self.counters[f.counter.index()].clone();
        let step = if f.step == 1 {
            format!("{i}++")
        } else {
            format!("{i} += {}", f.step)
        };
        let int = if self.declared(&i) { "" } else { "int " };
        let (lo, hi) = (self.expr(&f.lower.expr), self.expr(&f.upper.expr));
        let body = match thread_block(f) {
            // One thread's block of consecutive iterations as bounds, not
            // as a test in every iteration of every thread.
            Some((first, threads, next, body)) if f.step == 1 => {
                let (first, threads, next) =
                    (self.expr(first), self.expr(threads), self.expr(next));
                let _ = writeln!(
                    out,
                    "{pad}for ({int}{i} = {lo} + ({first} + {threads} - 1) / ({threads}); \
                     {i} <= {lo} + ({next} + {threads} - 1) / ({threads}) - 1 && {i} <= {hi}; {step}) {{"
                );
                body
            }
            _ => {
                let _ = writeln!(out, "{pad}for ({int}{i} = {lo}; {i} <= {hi}; {step}) {{");
                &f.body
            }
        };
        let known = self.context.len();
        let c = Linear::of(&Affine::var(Var::Counter(f.counter)));
        self.context.push(c.minus(&Linear::of(&f.lower.affine), 0));
        self.context.push(Linear::of(&f.upper.affine).minus(&c, 0));
        // Only a loop that runs in order, on one thread, may stop early.
        let in_order = !f.parallel && (!self.region || self.in_parallel);
        (self.exits).push(in_order.then(|| crate::exits::exit_flag(body)).flatten());
        self.nodes(body, depth + 1, out);
        self.exits.pop();
        self.context.truncate(known);
        let _ = writeln!(out, "{pad}}}");
        if outermost {
            self.in_parallel = false;
        }
    }

    /// Whether sequential loop `f` can be one parallel region around the
    /// parallel loops inside it ([`Printer::region`]): it holds one, every
    /// parallel loop in it runs on the shared arrays (no private copies,
    /// no reduction: those are blocks of their own), and every thread
    /// takes the same path to them (`if` conditions that read no array;
    /// no `while` loop around one).
    fn fits_region(&self, f: &For) -> bool {
        fn holds_parallel(nodes: &[Node]) -> bool {
            nodes.iter().any(|n| match n {
                Node::For(g) => g.parallel || holds_parallel(&g.body),
                Node::While(w) => holds_parallel(&w.body),
                Node::If(i) => (i.branches.iter().map(|(_, b)| b))
                    .chain(&i.otherwise)
                    .any(|b| holds_parallel(b)),
                Node::Stmt(_) => false,
            })
        }
        fn fits(cx: &Printer, nodes: &[Node]) -> bool {
            nodes.iter().all(|n| match n {
                Node::Stmt(_) => true,
                Node::For(g) if g.parallel => cx.omp.iter().all(|o| {
                    o.counter != g.counter
                        || (o.arrays.is_empty() && o.reductions.is_empty() && o.threads.is_none())
                }),
                Node::For(g) => fits(cx, &g.body),
                Node::While(w) => !holds_parallel(&w.body),
                Node::If(i) => {
                    let branches: Vec<&Vec<Node>> = (i.branches.iter().map(|(_, b)| b))
                        .chain(&i.otherwise)
                        .collect();
                    if !branches.iter().any(|b| holds_parallel(b)) {
                        return true;
                    }
                    let reads_nothing = i.branches.iter().all(|(c, _)| {
                        let mut reads = Vec::new();
                        c.cond.collect_reads(&mut reads);
                        reads.is_empty() && !has_unknown(&c.cond)
                    });
                    reads_nothing && branches.iter().all(|b| fits(cx, b))
                }
            })
        }
        self.origin.is_some() && holds_parallel(&f.body) && fits(self, &f.body)
    }

    /// Sequential loop `f` as one parallel region around the parallel
    /// loops inside it: `#pragma omp parallel` before it, every thread
    /// running the sequential loops (their counters private), each
    /// parallel loop shared among them (`#pragma omp for`, whose end is a
    /// barrier), and what lies between under `#pragma omp single` (run
    /// once, a barrier after): the order of the original, with one team
    /// for the whole nest instead of one per iteration of the loops
    /// around the parallel ones. The cost model decides for the region
    /// from the work of the parallel loops in one iteration of `f`.
    fn region(&mut self, f: &For, depth: usize, out: &mut String) {
        let pad = "  ".repeat(depth);
        let mut counters = Vec::new();
        inner_counters(
            std::slice::from_ref(&Node::For(f.clone())),
            0,
            &mut counters,
        );
        let mut private: Vec<String> = Vec::new();
        for c in counters {
            let name = self.counters[c.index()].clone();
            if self.declared(&name) && !private.contains(&name) {
                private.push(name);
            }
        }
        // The parallel loops, each with the sequential loops between `f`'s
        // body and it: their counters have no value where the region starts.
        let mut nests = Vec::new();
        parallel_nests(&f.body, &mut vec![crate::cost::inside(f)], &mut nests);
        let pays = crate::cost::pays(&nests, &|a| self.affine(a));
        let mut pragma = format!("{pad}#pragma omp parallel");
        self.private_and_cost(&mut pragma, &private, pays.as_deref());
        let _ = writeln!(out, "{pragma}");
        self.region = true;
        self.for_loop(f, "", depth, out);
        self.region = false;
    }

    /// The body of a sequential loop inside a parallel region: nodes that
    /// hold a parallel loop as they are (every thread runs them), each run
    /// of the others in one `#pragma omp single` block.
    fn region_nodes(&mut self, body: &[Node], depth: usize, out: &mut String) {
        let pad = "  ".repeat(depth);
        let mut k = 0;
        while k < body.len() {
            let alone = |n: &Node| !holds_parallel_node(n);
            if !alone(&body[k]) {
                self.node(&body[k], depth, out);
                k += 1;
                continue;
            }
            let run = body[k..].iter().take_while(|n| alone(n)).count();
            let _ = writeln!(out, "{pad}#pragma omp single\n{pad}{{");
            self.in_parallel = true;
            for n in &body[k..k + run] {
                self.node(n, depth + 1, out);
            }
            self.in_parallel = false;
            let _ = writeln!(out, "{pad}}}");
            k += run;
        }
    }

    /// Whether the file printed into declares the function `unknown`.
    fn file_has_unknown(&self) -> bool {
        self.origin.is_some_and(|o| o.functions.contains(UNKNOWN))
    }

    /// An `if`, without the branches that the enclosing loops' bounds and
    /// conditions make unreachable (compilers warn on what such a branch
    /// would do, an access out of bounds, say); an `else` left alone is a
    /// block.
    fn if_node(&mut self, i: &If, depth: usize, out: &mut String) {
        let pad = "  ".repeat(depth);
        let known = self.context.len();
        // Branch k runs when every earlier condition fails and its own
        // holds; `None`: it is unreachable.
        let mut kept: Vec<(&Condition, &Vec<Node>, Vec<Linear>)> = Vec::new();
        let mut failed: Vec<Linear> = Vec::new();
        for (c, b) in &i.branches {
            let mut here = failed.clone();
            here.extend(facts(&c.cond, true).unwrap_or_default());
            let all: Vec<Linear> = self.context.iter().chain(&here).cloned().collect();
            if !infeasible(&all) {
                kept.push((c, b, here));
            }
            // A failed condition says something when it is one comparison
            // (or several joined by `or`).
            failed.extend(facts(&c.cond, false).unwrap_or_default());
        }
        let otherwise = i.otherwise.as_ref().filter(|_| {
            let all: Vec<Linear> = self.context.iter().chain(&failed).cloned().collect();
            !infeasible(&all)
        });
        if kept.is_empty() {
            if let Some(e) = otherwise {
                out.push_str(&pad);
                out.push_str("{\n");
                self.context.extend(failed);
                self.nodes(e, depth + 1, out);
                self.context.truncate(known);
                let _ = writeln!(out, "{pad}}}");
            }
            return;
        }
        out.push_str(&pad);
        for (k, (c, b, here)) in kept.into_iter().enumerate() {
            if k == 0 {
                self.cond_label(c, out);
            } else {
                out.push_str(" else ");
                if !c.generated {
                    let _ = write!(out, "/* {} */ ", c.name);
                }
            }
            let text = self.cond(&c.cond);
            let _ = writeln!(out, "if ({text}) {{");
            self.context.extend(here);
            self.nodes(b, depth + 1, out);
            self.context.truncate(known);
            out.push_str(&pad);
            out.push('}');
        }
        if let Some(e) = otherwise {
            out.push_str(" else {\n");
            self.context.extend(failed);
            self.nodes(e, depth + 1, out);
            self.context.truncate(known);
            out.push_str(&pad);
            out.push('}');
        }
        out.push('\n');
    }

    /// Whether the function printed into declares `name` where the region
    /// is (a counter declared there is assigned, not declared again); a
    /// name the region declares itself (`for (int c = ...)` hiding a
    /// global `c`) is declared again.
    fn declared(&self, name: &str) -> bool {
        self.origin
            .is_some_and(|o| o.visible.contains(name) && !o.region_types.contains_key(name))
    }

    /// The loop in a block of its own over local copies ([`program_omp`]).
    fn omp_loop(&mut self, f: &For, o: &OmpLoop, depth: usize, out: &mut String) {
        let pad = "  ".repeat(depth);
        let inner = "  ".repeat(depth + 1);
        let _ = writeln!(out, "{pad}{{");
        let saved = self.arrays.clone();
        let mut taken = self.taken();
        let mut copies = Vec::new();
        let mut clauses: [Vec<String>; 3] = Default::default();
        for a in &o.arrays {
            let shared = saved[a.array.index()].clone();
            let decl = self.p.array_decl(a.array);
            let k = match (a.first, a.last) {
                (false, false) => 0,
                (true, _) => 1,
                (false, true) => 2,
            };
            // A local of the function is a real array or variable, not a
            // pointer: the clauses name it, with no copy; so is a scalar of
            // the function printed into.
            let name = if decl.local || (decl.dims.is_empty() && self.origin.is_some()) {
                shared
            } else {
                let local = fresh(&format!("{shared}_p"), &taken);
                taken.insert(local.clone());
                self.arrays[a.array.index()] = local.clone();
                let scalar = decl.dims.is_empty();
                let reached = if scalar {
                    None
                } else {
                    self.reached_extents(a.array)
                };
                let text = if scalar {
                    self.local.insert(a.array);
                    format!("{} {local}", self.elem(a.array))
                } else if let Some(extents) = &reached {
                    let ty = self.elem(a.array);
                    let dims: String = extents
                        .iter()
                        .map(|e| format!("[{e} > 0 ? {e} : 1]"))
                        .collect();
                    self.stack.push(format!(
                        "{local}: {ty}[{}], ({}) * sizeof({ty}) bytes",
                        extents.join("]["),
                        extents.join(") * (")
                    ));
                    format!("{ty} {local}{dims}")
                } else {
                    let sized = self.sized(a.array, decl);
                    self.stack.push(sized);
                    self.array_param(a.array, decl)
                };
                let _ = writeln!(out, "{inner}{text};");
                let copy = Copy {
                    scalar,
                    shared,
                    local: local.clone(),
                    reached,
                };
                if a.first || a.last {
                    self.copy(&copy, true, &inner, out);
                }
                copies.push((a.last, copy));
                local
            };
            if a.first && a.last {
                clauses[2].push(name.clone());
            }
            clauses[k].push(name);
        }
        let mut text = String::new();
        for (name, list) in ["private", "firstprivate", "lastprivate"]
            .iter()
            .zip(&clauses)
        {
            if !list.is_empty() {
                let _ = write!(text, " {name}({})", list.join(", "));
            }
        }
        let known = self.cells.len();
        let mut back = Vec::new();
        for r in &o.reductions {
            let decl = self.p.array_decl(r.cell.array);
            let name = if r.cell.subscripts.is_empty() && (decl.local || self.origin.is_some()) {
                self.arrays[r.cell.array.index()].clone()
            } else {
                let shared = self.access(&r.cell);
                let local = fresh(&format!("{}_r", saved[r.cell.array.index()]), &taken);
                taken.insert(local.clone());
                let _ = writeln!(
                    out,
                    "{inner}{} {local} = {shared};",
                    self.elem(r.cell.array)
                );
                self.cells.push((r.cell.clone(), local.clone()));
                back.push((shared, local.clone()));
                local
            };
            let _ = write!(text, " reduction({}:{name})", r.op);
        }
        self.for_loop(f, &text, depth + 1, out);
        self.cells.truncate(known);
        for (shared, local) in back {
            let _ = writeln!(out, "{inner}{shared} = {local};");
        }
        for (last, copy) in &copies {
            if *last {
                self.copy(copy, false, &inner, out);
            }
        }
        for a in o
            .arrays
            .iter()
            .filter(|a| !self.p.array_decl(a.array).local)
        {
            self.local.remove(&a.array);
        }
        self.arrays = saved;
        let _ = writeln!(out, "{pad}}}");
    }

    /// The shared array copied into the local one (`inward`) or back; a
    /// scalar parameter is a pointer. A copy sized by the cells the program
    /// reaches is copied cell by cell over them (its rows are shorter than
    /// the shared array's); one of the declared size, whole.
    fn copy(&mut self, c: &Copy, inward: bool, pad: &str, out: &mut String) {
        let deref = if self.origin.is_some() { "" } else { "*" };
        let (shared, local) = (&c.shared, &c.local);
        if let Some(extents) = &c.reached {
            let mut taken = self.taken();
            let mut cell = String::new();
            let mut head = String::new();
            for (k, e) in extents.iter().enumerate() {
                let i = fresh("c", &taken);
                taken.insert(i.clone());
                let _ = writeln!(
                    head,
                    "{pad}{}for (int {i} = 0; {i} < {e}; {i}++)",
                    "  ".repeat(k)
                );
                let _ = write!(cell, "[{i}]");
            }
            let body = "  ".repeat(extents.len());
            let _ = match inward {
                true => writeln!(out, "{head}{pad}{body}{local}{cell} = {shared}{cell};"),
                false => writeln!(out, "{head}{pad}{body}{shared}{cell} = {local}{cell};"),
            };
            return;
        }
        let _ = match (c.scalar, inward) {
            (true, true) => writeln!(out, "{pad}{local} = {deref}{shared};"),
            (true, false) => writeln!(out, "{pad}{deref}{shared} = {local};"),
            (false, true) => writeln!(out, "{pad}memcpy({local}, {shared}, sizeof {local});"),
            (false, false) => writeln!(out, "{pad}memcpy({shared}, {local}, sizeof {local});"),
        };
        self.uses_memcpy |= !c.scalar;
    }

    /// Printed into its function, the extents of a private copy of array
    /// parameter `x` by the function's parameters: per dimension (from 0),
    /// one past the largest index the program reaches
    /// ([`crate::extent::reached`]), so that the copy fits whatever sizes
    /// the file is built with (its declared extents are the dataset's
    /// constants once preprocessed). `None` where one is not known.
    fn reached_extents(&self, x: ArrayId) -> Option<Vec<String>> {
        let origin = self.origin?;
        let decl = self.p.array_decl(x);
        (decl.dims.iter().enumerate())
            .map(|(k, r)| {
                if r.lo.affine != Affine::constant(0) {
                    return None;
                }
                let e = crate::extent::reached(self.p, x, k).ok()?;
                self.extent(&e, origin).ok()
            })
            .collect()
    }

    /// A written condition name as a C label (the C front end reads a label
    /// on `if` or `while` as the condition's name).
    fn cond_label(&mut self, c: &Condition, out: &mut String) {
        if !c.generated {
            self.label(&c.name, out);
        }
    }

    fn stmt(&mut self, s: &Stmt, out: &mut String) {
        if s.copy {
            out.push_str("/* copy */ ");
        }
        if !s.label_generated {
            self.label(&s.label, out);
        }
        match &s.kind {
            StmtKind::Assign { target, op, value } => {
                let t = self.access(target);
                let v = match &value.kind {
                    // A copy of a local the function has not set yet: its
                    // value is indeterminate, so nothing reads the copy
                    // before writing it; reading it would make gcc warn.
                    ExprKind::Access(a)
                        if self.leading.contains(&s.id)
                            && a.subscripts.is_empty()
                            && self.origin.is_some_and(|o| {
                                let name = &self.p.array_decl(a.array).name;
                                o.unset.contains(name) || o.region_locals.contains(name)
                            }) =>
                    {
                        "0".to_string()
                    }
                    _ => self.expr(value),
                };
                let _ = match op {
                    None => writeln!(out, "{t} = {v};"),
                    Some(BinOp::Add) => writeln!(out, "{t} += {v};"),
                    Some(BinOp::Sub) => writeln!(out, "{t} -= {v};"),
                    Some(BinOp::Mul) => writeln!(out, "{t} *= {v};"),
                    // C's `/=` on a real target; the model's Euclidean
                    // division on integers.
                    Some(BinOp::Div) if !self.is_int_access(target) => {
                        writeln!(out, "{t} /= {v};")
                    }
                    Some(BinOp::Div) => {
                        self.uses_div = true;
                        writeln!(out, "{t} = {DIV}({t}, {v});")
                    }
                    Some(BinOp::Rem) => {
                        self.uses_mod = true;
                        writeln!(out, "{t} = {MOD}({t}, {v});")
                    }
                };
            }
            StmtKind::Call { func, args } if func == "return" && self.origin.is_some() => {
                self.returned(args, out)
            }
            StmtKind::Call { func, args } => {
                let f = self.function_names[func].clone();
                let args = self.list(args);
                let _ = writeln!(out, "{f}({args});");
            }
        }
    }

    /// C's `return e;` in the function printed into: the value is kept in
    /// a variable of the function's result type, returned at the end
    /// ([`program_in`]). `return;` prints a comment: it is the last
    /// statement.
    fn returned(&mut self, args: &[Expr], out: &mut String) {
        let ty = self.origin.and_then(|o| o.returns.clone());
        let (Some(ty), [e]) = (ty, args) else {
            out.push_str("/* return */\n");
            return;
        };
        let value = self.expr(e);
        if self.result.is_none() {
            self.result = Some((fresh("result", &self.taken()), ty));
        }
        let var = self.result.as_ref().map_or("", |(v, _)| v);
        let line = format!("{var} = {value};\n");
        out.push_str(&line);
        self.returns.push((value, format!("  {line}")));
    }

    /// Every name the printed text uses or may meet: the model's, the
    /// called functions', and the file's identifiers.
    fn taken(&self) -> HashSet<String> {
        let mut taken: HashSet<String> = self.arrays.iter().cloned().collect();
        taken.extend(self.counters.iter().cloned());
        taken.extend(self.param_names.values().cloned());
        taken.extend(self.functions.keys().cloned());
        if let Some(o) = self.origin {
            taken.extend(o.identifiers.iter().cloned());
        }
        taken
    }

    fn list(&mut self, xs: &[Expr]) -> String {
        xs.iter()
            .map(|x| self.expr(x))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `A[i][j]` with each subscript shifted to start at 0, or `*x`.
    fn access(&mut self, a: &Access) -> String {
        if let Some((_, local)) = self.cells.iter().find(|(c, _)| c.same_cell(a)) {
            return local.clone();
        }
        let mut s = self.arrays[a.array.index()].clone();
        if a.subscripts.is_empty() {
            // Scalars the function declares are variables there.
            if self.local.contains(&a.array) || self.origin.is_some() {
                return s;
            }
            return format!("*{s}");
        }
        let dims = &self.p.array_decl(a.array).dims;
        for (k, sub) in a.subscripts.iter().enumerate() {
            let mut text = self.expr(&sub.expr);
            if !self.is_int(&sub.expr) {
                // A real-valued subscript (a call, `...`): C wants an integer.
                text = format!("(long)({text})");
            }
            // Appending `- lo` needs no parentheses around the subscript:
            // `+` and `-` bind loosest in printed expressions, from the left.
            if let Some(r) = dims.get(k) {
                let lo = &r.lo;
                match lo.affine.is_constant().then_some(lo.affine.constant) {
                    Some(0) => {}
                    Some(c) if c < 0 && c != i64::MIN => {
                        let _ = write!(text, " + {}", c.unsigned_abs());
                    }
                    Some(c) => {
                        let _ = write!(text, " - {}", int(c));
                    }
                    None => {
                        let atom = self.prec(&lo.expr) >= 4;
                        let lo = self.expr(&lo.expr);
                        let _ = match atom {
                            true => write!(text, " - {lo}"),
                            false => write!(text, " - ({lo})"),
                        };
                    }
                }
            }
            let _ = write!(s, "[{text}]");
        }
        s
    }

    /// A parameter as C spells it: its name, or what a derived one stands
    /// for (`LEN / 2`, in parentheses unless it is a name).
    fn param(&self, q: ParamId) -> String {
        let q = &self.p.params[q.index()];
        match &q.derived {
            Some(d) => d.operand(),
            None => self.param_names[&q.name].clone(),
        }
    }

    /// Whether C gives the printed expression an integer type.
    fn is_int(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Param(_) | ExprKind::Counter(_) => true,
            ExprKind::Access(a) => self.is_int_access(a),
            ExprKind::Neg(x) => self.is_int(x),
            ExprKind::Binary(_, l, r) => self.is_int(l) && self.is_int(r),
            ExprKind::Call(f, args) if f == SELECT && args.len() == 3 => {
                self.is_int(&args[1]) && self.is_int(&args[2])
            }
            ExprKind::Call(f, _) => cvalue::operator(f).is_some(),
            ExprKind::Unknown => false,
        }
    }

    fn is_int_access(&self, a: &Access) -> bool {
        self.p.array_decl(a.array).elem == ElemType::Int
    }

    /// Binding strength of printed C: sums 1, products and real quotients
    /// 2, unary minus and casts 3, atoms (and calls, including `af_div`,
    /// and parenthesized operators) 4.
    fn prec(&self, e: &Expr) -> u8 {
        match &e.kind {
            ExprKind::Binary(BinOp::Add | BinOp::Sub, ..) => 1,
            ExprKind::Binary(BinOp::Mul, ..) => 2,
            ExprKind::Binary(BinOp::Div | BinOp::Rem, l, r)
                if !(self.is_int(l) && self.is_int(r)) =>
            {
                2
            }
            ExprKind::Neg(_) => 3,
            ExprKind::Call(f, _) if cvalue::cast_type(f).is_some() => 3,
            ExprKind::Int(n) if *n < 0 => 3,
            _ => 4,
        }
    }

    fn expr(&mut self, e: &Expr) -> String {
        let mut out = String::new();
        self.write_expr(e, &mut out);
        out
    }

    fn write_expr(&mut self, e: &Expr, out: &mut String) {
        match &e.kind {
            ExprKind::Int(n) => out.push_str(&int(*n)),
            ExprKind::Param(q) => out.push_str(&self.param(*q)),
            ExprKind::Counter(c) => out.push_str(&self.counters[c.index()]),
            ExprKind::Access(a) => {
                let s = self.access(a);
                out.push_str(&s);
            }
            ExprKind::Call(f, args) => self.call(f, args, out),
            ExprKind::Unknown => {
                self.uses_unknown = true;
                let _ = write!(out, "{UNKNOWN}()");
            }
            ExprKind::Neg(x) => {
                out.push('-');
                let wrap = matches!(x.kind, ExprKind::Int(_)) || self.prec(x) < 4;
                self.paren(x, wrap, out);
            }
            ExprKind::Binary(op @ (BinOp::Div | BinOp::Rem), l, r)
                if self.is_int(l) && self.is_int(r) =>
            {
                let f = if *op == BinOp::Div {
                    self.uses_div = true;
                    DIV
                } else {
                    self.uses_mod = true;
                    MOD
                };
                let (l, r) = (self.expr(l), self.expr(r));
                let _ = write!(out, "{f}({l}, {r})");
            }
            ExprKind::Binary(op, l, r) => {
                let me = self.prec(e);
                self.paren(l, self.prec(l) < me, out);
                out.push_str(match op {
                    BinOp::Add => " + ",
                    BinOp::Sub => " - ",
                    BinOp::Mul => " * ",
                    BinOp::Div => " / ",
                    BinOp::Rem => " % ",
                });
                self.paren(r, self.prec(r) <= me, out);
            }
        }
    }

    /// A call, or the C operator, literal or cast it stands for.
    fn call(&mut self, f: &str, args: &[Expr], out: &mut String) {
        if let Some(lit) = cvalue::literal_spelling(f).filter(|_| args.is_empty()) {
            out.push_str(&lit);
            return;
        }
        match (cvalue::cast_type(f), cvalue::operator(f), args) {
            (Some(ty), _, [x]) => {
                let _ = write!(out, "({ty})");
                self.paren(x, self.prec(x) < 3, out);
            }
            (_, Some((op, _)), [x]) => {
                let _ = write!(out, "({op}");
                self.paren(x, self.prec(x) < 4, out);
                out.push(')');
            }
            (_, Some((op, _)), [l, r]) => {
                let (l, r) = (self.expr(l), self.expr(r));
                let _ = write!(out, "({l} {op} {r})");
            }
            _ if f == SELECT && args.len() == 3 => {
                let (c, a, b) = (
                    self.expr(&args[0]),
                    self.expr(&args[1]),
                    self.expr(&args[2]),
                );
                let _ = write!(out, "({c} ? {a} : {b})");
            }
            _ => {
                let f = self.function_names[f].clone();
                let args = self.list(args);
                let _ = write!(out, "{f}({args})");
            }
        }
    }

    fn paren(&mut self, e: &Expr, wrap: bool, out: &mut String) {
        if wrap {
            out.push('(');
        }
        self.write_expr(e, out);
        if wrap {
            out.push(')');
        }
    }

    fn cond(&mut self, c: &Cond) -> String {
        match c {
            // In a function whose file declares `unknown()` (the C front
            // end's opaque value and condition), the condition is that call
            // again.
            Cond::Unknown if self.file_has_unknown() => format!("{UNKNOWN}()"),
            Cond::Unknown => {
                self.uses_unknown_cond = true;
                format!("{UNKNOWN_COND}()")
            }
            // `e <= e` is true: compilers warn on comparing a value with
            // itself.
            Cond::Cmp(op, l, r) if l == r => {
                let holds = matches!(op, CmpOp::Eq | CmpOp::Le | CmpOp::Ge);
                format!("{}", holds as i32)
            }
            Cond::Cmp(op, l, r) => {
                let op = crate::print::cmp_op(*op);
                format!("{} {op} {}", self.expr(l), self.expr(r))
            }
            Cond::Not(a) => format!("!({})", self.cond(a)),
            Cond::And(a, b) => format!("{} && {}", self.operand(a), self.operand(b)),
            Cond::Or(a, b) => format!("{} || {}", self.operand(a), self.operand(b)),
        }
    }

    /// An operand of `&&` or `||`, in parentheses when it is one itself
    /// (C's `&&` binds tighter than `||`, and compilers warn on mixing them).
    fn operand(&mut self, c: &Cond) -> String {
        let text = self.cond(c);
        if matches!(c, Cond::And(..) | Cond::Or(..)) {
            format!("({text})")
        } else {
            text
        }
    }
}

/// An integer literal C reads back as the same value (`-9223372036854775808`
/// would be the negation of a constant too large for `long`).
fn int(n: i64) -> String {
    if n == i64::MIN {
        "(-9223372036854775807 - 1)".into()
    } else {
        n.to_string()
    }
}

/// A loop whose whole body runs only on one thread's block of its
/// iterations, as privatization writes it: `if (first <= threads * (i -
/// lo) && threads * (i - lo) < next) { body }`, with `first = t * n` and
/// `next = (t + 1) * n` for `n` trips. Gives `first`, `threads`, `next`
/// and the body: the block is `lo + ceil(first / threads)` to `lo +
/// ceil(next / threads) - 1` (`first`, `next` >= 0 whenever the loop runs).
fn thread_block(f: &For) -> Option<(&Expr, &Expr, &Expr, &[Node])> {
    let [Node::If(If {
        branches,
        otherwise: None,
        ..
    })] = f.body.as_slice()
    else {
        return None;
    };
    let [(condition, body)] = branches.as_slice() else {
        return None;
    };
    let Cond::And(a, b) = &condition.cond else {
        return None;
    };
    let (Cond::Cmp(CmpOp::Le, first, from), Cond::Cmp(CmpOp::Lt, from_2, next)) = (&**a, &**b)
    else {
        return None;
    };
    let ExprKind::Binary(BinOp::Mul, threads, offset) = &from.kind else {
        return None;
    };
    let i = Affine::var(Var::Counter(f.counter));
    let is_offset = Affine::from_expr(offset) == i.checked_sub(&f.lower.affine);
    (from == from_2 && is_offset).then_some((first, &**threads, next, body.as_slice()))
}
