//! The C front end: C loop kernels into the same [`Program`] as `.loop`
//! files, through [`ProgramBuilder`], with diagnostics through
//! [`crate::diagnostics`].
//!
//! The file is parsed with tree-sitter (tree-sitter-c); it is not run through
//! a preprocessor. The analysed *regions* are the statements between
//! `#pragma scop` and `#pragma endscop`, or, when the file has no such
//! pragma, the body of every function; regions are lowered one after the
//! other into one program, in file order. A construct outside the supported
//! subset either skips its region (a warning says why, and the builder is
//! rolled back to where the region started) or is over-approximated (a
//! warning says how). docs/c.md is the reference.
//!
//! Layout: `scan` (macros, prototypes, globals, regions), `decl`
//! (declarators and types), `typedefs` (what a typedef's name stands
//! for, casts through one), `stmt` (statements and loops), `expr`
//! (expressions, conditions, accesses), `mini` (integer expressions in
//! preprocessor text), `alias` (what pointers point to; `pointee`, its
//! answer), `fields`
//! (tree-sitter field ids); `emit` prints a
//! model back as C.

mod alias;
mod calls;
mod decl;
mod defaults;
mod effects;
mod exits;
mod expr;
mod fields;
mod fold;
mod induction;
mod lvalues;
mod mini;
pub mod opaque;
pub mod origin;
mod pointee;
pub mod premises;
pub mod preprocess;
mod scan;
mod spelling;
mod stmt;
mod tree;
mod typedefs;

use crate::c_spelling::CSpelling;
use crate::diagnostics::{has_errors, Diagnostic, FileId};
use crate::lower::reserved;
pub use crate::model::affine_expr;
use crate::model::builder::{Mark, ProgramBuilder};
use crate::model::calls::Calls;
use crate::model::*;
use arrayflow_cprint::cvalue;
pub use arrayflow_cprint::emit;
pub use arrayflow_cprint::inplace;
pub use arrayflow_cprint::is_c_path;
use fields::{Fields, F};
use mini::Mini;
use scan::{Define, Region};
use std::collections::{HashMap, HashSet};
use tree_sitter::Node;

// Diagnostic codes of the C front end (docs/c.md lists each with an example).
/// C syntax error.
pub const E_SYNTAX: &str = "E0901";
/// There were regions, and every one was skipped.
pub const E_NOTHING: &str = "E0902";
/// A statement or construct the model cannot express: region skipped.
pub const W_UNSUPPORTED: &str = "W0901";
/// A `for` loop header outside the supported forms: region skipped.
pub const W_LOOP: &str = "W0902";
/// A `for` loop analysed as a `while` loop (non-affine bounds or test).
pub const W_AS_WHILE: &str = "W0903";
/// An access over-approximated as a may-access of the whole array.
pub const W_MAY_ACCESS: &str = "W0904";
/// A call that may write an array or variable passed by address.
pub const W_CALL_WRITES: &str = "W0905";
/// A pointer or missing array parameter: a new size parameter; or array
/// parameters that may overlap (`alias`).
pub const W_POINTER: &str = "W0906";
/// A value the model does not know: `...`.
pub const W_UNKNOWN_VALUE: &str = "W0907";
/// A `#pragma scop`/`endscop`/`arrayflow` problem.
pub const W_PRAGMA: &str = "W0908";
/// A C label that cannot name its statement or condition.
pub const W_LABEL: &str = "W0909";
/// A call or block end an extension kind's C spelling took up but could
/// not model: read as plain C.
pub const W_SPELLING: &str = "W0910";
/// A value emitted C cannot keep (`cfront::opaque`).
pub const E_OPAQUE: &str = "E0911";
/// The same, with `--allow-opaque`.
pub const W_OPAQUE: &str = "W0911";
/// Control the model cannot express (a backward or computed `goto`,
/// `setjmp`): region skipped (`exits`).
pub const W_EXIT: &str = "W0915";

/// A non-affine integer expression over macros and `const`s taken at its
/// value (`cfront::fold`): it does not follow `--param`.
pub const W_FOLDED: &str = "W0912";

/// Emitted C printed as `void kernel(...)`: the transformed program does
/// not split back into the file's functions (`cprint::inplace`).
pub const W_NOT_IN_PLACE: &str = "W0913";
/// Emitted C that needs a size C does not have (a pointer's extent no
/// access gives, `cprint::extent`).
pub const E_NO_EXTENT: &str = "E0913";
/// Emitted C in which a transformation's copy of an array that may overlap
/// another would lose the overlap (`cprint::effects::renamed_overlaps`).
pub const E_RENAMED_OVERLAP: &str = "E0914";

/// Errors shown before the rest are only counted.
const MAX_ERRORS: usize = 100;
/// Nesting of statements and expressions that lowering follows; deeper
/// input skips its region instead of overflowing the stack.
const MAX_NESTING: usize = 256;

/// Parses and lowers a C file. Returns the program when there is no error,
/// and every diagnostic (warnings say what was skipped or approximated).
pub fn compile(source: &str, file: FileId) -> (Option<Program>, Vec<Diagnostic>) {
    compile_with(source, file, &[])
}

/// [`compile`], offering calls and the ends of blocks that declare arrays
/// to the C spellings of extension kinds (`crate::c_spelling`).
pub fn compile_with(
    source: &str,
    file: FileId,
    spellings: &[&'static dyn CSpelling],
) -> (Option<Program>, Vec<Diagnostic>) {
    let (p, _, d) = compile_calls_with(source, file, spellings);
    (p, d)
}

/// [`compile`] also returning the functions inlined at their calls and the
/// call sites (docs/c.md, *Calls*).
pub fn compile_calls(source: &str, file: FileId) -> (Option<Program>, Calls, Vec<Diagnostic>) {
    compile_calls_with(source, file, &[])
}

fn compile_calls_with(
    source: &str,
    file: FileId,
    spellings: &[&'static dyn CSpelling],
) -> (Option<Program>, Calls, Vec<Diagnostic>) {
    let (p, c, d) = compile_inner(source, file, spellings);
    (p, c.unwrap_or_default(), d)
}

fn compile_inner(
    source: &str,
    file: FileId,
    spellings: &[&'static dyn CSpelling],
) -> (Option<Program>, Option<Calls>, Vec<Diagnostic>) {
    if let Some(d) = crate::lower::too_large(source, file) {
        return (None, None, vec![d]);
    }
    let mut parser = tree_sitter::Parser::new();
    if parser
        .set_language(&tree_sitter_c::LANGUAGE.into())
        .is_err()
    {
        let d = Diagnostic::error(E_SYNTAX, "the C grammar could not be loaded")
            .note("tree-sitter and tree-sitter-c versions do not match: a build problem");
        return (None, None, vec![d]);
    }
    let Some(tree::Parsed {
        tree,
        pragma_before,
    }) = tree::parse(source)
    else {
        let d = Diagnostic::error(E_SYNTAX, "the C parser gave up on this file");
        return (None, None, vec![d]);
    };
    let mut cx = Ctx::new(source, file);
    cx.spellings = spellings.to_vec();
    cx.pragma_before = pragma_before;
    let root = tree.root_node();
    if root.has_error() {
        cx.syntax_errors(root);
        return (None, None, cx.diags);
    }
    let functions = cx.scan_file(root);
    cx.alias = alias::Aliases::scan(source, root);
    cx.defined = (functions.iter())
        .map(|&f| (scan::function_name(source, f), f))
        .collect();
    cx.call_defaults = cx.call_defaults(root);
    let regions = cx.regions(root, &functions);
    // Counters keep their C names: arrays and parameters of every region
    // avoid them, so they are collected before any region is lowered.
    let mut assigned = Vec::with_capacity(regions.len());
    for r in &regions {
        let (names, counters) = lvalues::prescan(source, &r.items);
        cx.counter_names
            .extend(counters.into_iter().map(str::to_string));
        assigned.push(names);
    }
    cx.lower_procs(&functions, &regions);
    let mut lowered = 0;
    let assigned_all = assigned.clone();
    for (r, names) in regions.iter().zip(assigned) {
        if cx.procs.funcs.contains_key(&r.func.start_byte()) {
            lowered += 1; // lowered as a procedure, inlined at its calls
            continue;
        }
        cx.assigned = names;
        if cx.lower_region(r) {
            lowered += 1;
        }
    }
    // Functions with a call left unknown are analysed on their own too.
    for (r, names) in regions.iter().zip(&assigned_all) {
        let k = cx.procs.index_of(r.func.start_byte());
        if k.is_some_and(|k| cx.procs.not_inlined.contains(&k)) {
            cx.assigned = names.clone();
            let said = cx.diags.len();
            cx.lower_region(r);
            cx.diags.truncate(said); // said when it was lowered as a procedure
            cx.procs.not_inlined.remove(&k.unwrap_or(0));
        }
    }
    if !regions.is_empty() && lowered == 0 {
        let d = Diagnostic::error(
            E_NOTHING,
            "no region of the file could be analysed; the warnings above say why",
        )
        .primary(file, regions[0].anchor, "first region")
        .note("docs/c.md lists the supported subset of C");
        cx.diags.push(d);
    }
    let locals = std::mem::take(&mut cx.locals);
    let forwarded: HashSet<ArrayId> = (cx.forwarded.iter())
        .filter_map(|v| cx.vars[v.index()].array)
        .collect();
    let mut diags = cx.diags;
    let mut calls = std::mem::take(&mut cx.procs.calls);
    let program = cx.b.finish().unwrap_or_default();
    for p in &mut calls.procs {
        if let Some(q) = crate::lower::rebase(p, &program.params) {
            *p = q;
        }
    }
    if has_errors(&diags) {
        return (None, Some(calls), diags);
    }
    diags.extend(crate::lower::model_warnings(&program, file, &|a| {
        locals.contains(&a) && !forwarded.contains(&a)
    }));
    (Some(program), Some(calls), diags)
}

fn span(n: Node<'_>) -> Span {
    Span::new(n.start_byte(), n.end_byte())
}

fn text<'t>(src: &'t str, n: Node<'_>) -> &'t str {
    src.get(n.byte_range()).unwrap_or("")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VarId(u32);

impl VarId {
    fn index(self) -> usize {
        self.0 as usize
    }
}

/// A declared C variable (global, parameter or local) or enumerator.
pub struct CVar<'t> {
    pub name: &'t str,
    /// Byte offset of the declared name: identifies the declaration.
    pub pos: usize,
    pub span: Span,
    pub elem: ElemType,
    /// The C type of the elements as written (`double`, `unsigned int`, a
    /// typedef's name), for what extension spellings compare.
    pub ctype: &'t str,
    /// One per dimension (pointers included): the declared size, if any.
    pub dims: Vec<Option<Node<'t>>>,
    pub pointers: usize,
    pub is_const: bool,
    pub is_struct: bool,
    pub init: Option<Node<'t>>,
    pub func_param: bool,
    pub global: bool,
    /// Ranges from `#pragma arrayflow array`.
    pub range: Option<Vec<(Mini, Mini)>>,
    /// The model objects made for it.
    pub param: Option<ParamId>,
    pub array: Option<ArrayId>,
}

/// What a C name means at a point of a region.
#[derive(Clone)]
pub enum Binding {
    Var(VarId),
    /// A loop counter: its value as a model expression (a counter, or an
    /// expression of one for decreasing loops and loops run as `while`).
    Counter(Expr),
    /// An integer local never assigned after its static initialiser.
    Let(Expr),
}

/// A model object a variable stands for.
#[derive(Clone, Copy, Debug)]
pub enum ModelRef {
    Param(ParamId),
    /// An array and its number of dimensions (0 for a scalar).
    Array(ArrayId, usize),
}

/// Why a region is skipped.
pub struct Skip(Option<Box<SkipWhy>>);

pub struct SkipWhy {
    code: &'static str,
    what: String,
    at: Span,
    label: &'static str,
    note: &'static str,
}

/// Undo log of one region, replayed backwards when the region is skipped.
enum Undo {
    VarParam(VarId),
    VarArray(VarId),
    ParamKey(String, Option<i64>),
    Name(String),
    /// The suffix hint of a name before the region changed it.
    Suffix(String, u32),
    Site(String),
    Derived(ParamId),
}

/// A statement a call adds because it may write through an argument.
pub struct MayWrite {
    target: Access,
    /// Every cell of the target is known: only an unknown guard makes the
    /// write a "may".
    exact: bool,
    value: Expr,
    span: Span,
    func: String,
    what: String,
    /// Added for a call that is a barrier (`effects`): `what` is the
    /// warning for the whole call on its first write, empty on the others.
    barrier: bool,
}

/// An argument passed by address or an array passed whole (it may be
/// written by the callee).
pub struct Escape {
    target: Access,
    exact: bool,
    span: Span,
    what: String,
}

/// .loop keywords: model names must avoid them so that `fmt` prints a valid
/// program.
const KEYWORDS: &[&str] = &[
    "param", "assume", "real", "int", "array", "for", "to", "step", "do", "while", "if", "then",
    "elsif", "else", "end", "and", "or", "not",
];

pub struct Ctx<'t> {
    src: &'t str,
    file: FileId,
    b: ProgramBuilder,
    diags: Vec<Diagnostic>,
    errors: usize,
    // The file.
    defines: HashMap<&'t str, Define>,
    /// Function-like macros: name → (parameters, body), as written.
    fn_macros: HashMap<&'t str, (Vec<&'t str>, &'t str)>,
    /// `typedef` names of the file, with the type each stands for.
    typedefs: HashMap<&'t str, &'t str>,
    /// Per declared function: which parameters are pointers to `const`.
    protos: HashMap<&'t str, Vec<bool>>,
    globals: HashMap<&'t str, VarId>,
    vars: Vec<CVar<'t>>,
    var_at: HashMap<usize, VarId>,
    // Model names.
    taken: HashSet<String>,
    suffixes: HashMap<String, u32>,
    counter_names: HashSet<String>,
    sites: HashSet<String>,
    params_by_key: HashMap<(String, Option<i64>), ParamId>,
    /// Arrays declared inside regions (W0001 is reported for these only).
    locals: Vec<ArrayId>,
    /// The model name of every array, by id (for messages).
    array_names: Vec<String>,
    // The region being lowered.
    region_span: Span,
    func_name: &'t str,
    region_labels: HashSet<&'t str>,
    scope: Vec<(&'t str, Binding)>,
    /// Model names of the loops around the current point.
    loop_names: Vec<String>,
    assigned: HashSet<&'t str>,
    /// The region makes a barrier call, which may change any global: a
    /// global integer it reads is then a cell, not a parameter.
    region_barrier: bool,
    exited: HashSet<&'t str>,
    depth: usize,
    creating: Vec<VarId>,
    expanding: Vec<&'t str>,
    /// The byte range of each non-constant macro body expanded, with the
    /// macro's name: a derived parameter that is a whole body is spelled
    /// by that name.
    macro_bodies: HashMap<(u32, u32), &'t str>,
    /// The derived parameters made so far (`fold`).
    derived_params: HashMap<ParamId, fold::Constant>,
    escapes: Vec<Escape>,
    may_writes: Vec<MayWrite>,
    omp_next: bool,
    /// Pragmas between a brace-less header and its statement, read as
    /// blank to parse (`tree`): the statement's start byte, the words.
    pragma_before: std::sync::Arc<Vec<(usize, String)>>,
    undo: Vec<Undo>,
    /// Defaults of function parameters from the calls in the file.
    call_defaults: defaults::CallDefaults<'t>,
    /// Position among its function's parameters, by declaration offset.
    param_pos: HashMap<usize, usize>,
    /// The C spellings of the run's extension kinds.
    spellings: Vec<&'static dyn CSpelling>,
    /// Functions inlined at their calls, and the call sites.
    procs: calls::CProcs<'t>,
    /// What pointers point to (`alias`).
    alias: alias::Aliases<'t>,
    /// Functions the file defines, by name (a call to any other is a
    /// barrier unless it is pure: `effects`).
    defined: HashMap<&'t str, Node<'t>>,
    /// Functions `#pragma arrayflow pure` declares pure.
    declared_pure: HashSet<&'t str>,
    /// The identifiers the region being lowered names.
    mentioned: HashSet<&'t str>,
    /// Integer locals whose value here is a known static expression
    /// (`induction`).
    known: HashMap<VarId, Expr>,
    /// Names the function being lowered takes the address of.
    addressed: HashSet<&'t str>,
    /// Variables a read of which was replaced by its known value: their
    /// cells may be written and never read in the model, as C intends.
    forwarded: HashSet<VarId>,
    /// The early exits of the region being lowered (`exits`).
    exits: exits::Exits<'t>,
}

impl<'t> Ctx<'t> {
    fn new(src: &'t str, file: FileId) -> Ctx<'t> {
        Ctx {
            src,
            file,
            b: ProgramBuilder::new(),
            diags: Vec::new(),
            errors: 0,
            defines: HashMap::new(),
            fn_macros: HashMap::new(),
            typedefs: HashMap::new(),
            protos: HashMap::new(),
            globals: HashMap::new(),
            vars: Vec::new(),
            var_at: HashMap::new(),
            taken: HashSet::new(),
            suffixes: HashMap::new(),
            counter_names: HashSet::new(),
            sites: HashSet::new(),
            params_by_key: HashMap::new(),
            locals: Vec::new(),
            array_names: Vec::new(),
            region_span: Span::NONE,
            func_name: "",
            region_labels: HashSet::new(),
            scope: Vec::new(),
            loop_names: Vec::new(),
            assigned: HashSet::new(),
            region_barrier: false,
            exited: HashSet::new(),
            depth: 0,
            creating: Vec::new(),
            expanding: Vec::new(),
            macro_bodies: HashMap::new(),
            derived_params: HashMap::new(),
            escapes: Vec::new(),
            may_writes: Vec::new(),
            omp_next: false,
            pragma_before: Default::default(),
            undo: Vec::new(),
            call_defaults: HashMap::new(),
            spellings: Vec::new(),
            param_pos: HashMap::new(),
            procs: Default::default(),
            alias: Default::default(),
            defined: HashMap::new(),
            declared_pure: HashSet::new(),
            mentioned: HashSet::new(),
            known: HashMap::new(),
            addressed: HashSet::new(),
            forwarded: HashSet::new(),
            exits: exits::Exits::default(),
        }
    }

    fn text(&self, n: Node<'_>) -> &'t str {
        text(self.src, n)
    }

    // ---- diagnostics ----------------------------------------------------

    fn warn(
        &mut self,
        code: &'static str,
        message: impl Into<String>,
        at: Span,
        label: &str,
        note: &str,
    ) {
        let mut d = Diagnostic::warning(code, message).primary(self.file, at, label);
        if !note.is_empty() {
            d = d.note(note);
        }
        self.diags.push(d);
    }

    fn error(&mut self, d: Diagnostic) {
        self.errors += 1;
        if self.errors <= MAX_ERRORS {
            self.diags.push(d);
        } else if self.errors == MAX_ERRORS + 1 {
            self.diags.push(Diagnostic::error(
                "E0008",
                format!("too many errors; only the first {MAX_ERRORS} are shown"),
            ));
        }
    }

    fn skip(
        &self,
        code: &'static str,
        what: impl Into<String>,
        at: Span,
        label: &'static str,
        note: &'static str,
    ) -> Skip {
        Skip(Some(Box::new(SkipWhy {
            code,
            what: what.into(),
            at,
            label,
            note,
        })))
    }

    /// Every ERROR and MISSING node: E0901 each.
    fn syntax_errors(&mut self, root: Node<'t>) {
        let mut c = root.walk();
        let mut todo = true;
        while todo {
            let n = c.node();
            let mut descend = n.has_error();
            if n.is_missing() {
                let d =
                    Diagnostic::error(E_SYNTAX, format!("syntax error: missing `{}`", n.kind()))
                        .primary(self.file, span(n), "expected here");
                self.error(d);
                descend = false;
            } else if n.is_error() {
                let t = self.text(n).trim();
                let line = t.lines().next().unwrap_or("");
                let mut shown: String = line.chars().take(40).collect();
                if shown.len() < t.len() {
                    shown.push_str(" ...");
                }
                let d = Diagnostic::error(E_SYNTAX, format!("syntax error in `{shown}`"))
                    .primary(self.file, span(n), "not understood as C")
                    .note("the file is not run through the preprocessor: a macro that changes the syntax cannot be read (docs/c.md)");
                self.error(d);
                descend = false;
            }
            if descend && c.goto_first_child() {
                continue;
            }
            loop {
                if c.goto_next_sibling() {
                    break;
                }
                if !c.goto_parent() {
                    todo = false;
                    break;
                }
            }
        }
        if self.diags.is_empty() {
            self.error(Diagnostic::error(E_SYNTAX, "the file is not valid C"));
        }
    }

    // ---- names ----------------------------------------------------------

    fn usable(name: &str) -> bool {
        let mut chars = name.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !KEYWORDS.contains(&name)
    }

    /// `base` if `ok`, else `base_1`, `base_2`, ...
    fn fresh(base: &str, ok: impl Fn(&str) -> bool) -> String {
        Self::fresh_from(base, 1, ok).0
    }

    /// [`Ctx::fresh`], trying suffixes from `start`; also returns the suffix
    /// used (0 for none).
    fn fresh_from(base: &str, start: u32, ok: impl Fn(&str) -> bool) -> (String, u32) {
        let clean: String = base
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let clean = if clean.starts_with(|c: char| c.is_ascii_digit()) || clean.is_empty() {
            format!("v{clean}")
        } else {
            clean
        };
        if Self::usable(&clean) && ok(&clean) {
            return (clean, 0);
        }
        (start.max(1)..)
            .map(|k| (format!("{clean}_{k}"), k))
            .find(|(n, _)| ok(n))
            .unwrap_or((clean, 0))
    }

    /// A name for a new parameter or array: unique among them and apart
    /// from every loop counter of the file. Kernels repeat names (every one
    /// has an `A`), so the next suffix to try is remembered per name.
    fn global_name(&mut self, base: &str) -> String {
        let start = self.suffixes.get(base).copied().unwrap_or(1);
        let (name, k) = Self::fresh_from(base, start, |n| {
            !self.taken.contains(n) && !self.counter_names.contains(n) && !reserved(n)
        });
        if k > 0 {
            self.undo.push(Undo::Suffix(base.to_string(), start));
            self.suffixes.insert(base.to_string(), k + 1);
        }
        self.taken.insert(name.clone());
        self.undo.push(Undo::Name(name.clone()));
        name
    }

    /// A name for a loop counter: apart from parameters, arrays and the
    /// counters of enclosing loops.
    fn counter_name(&self, base: &str) -> String {
        Self::fresh(base, |n| {
            !self.taken.contains(n) && !self.loop_names.iter().any(|l| l == n) && !reserved(n)
        })
    }

    /// Claims a site name (statement label or condition name); `None` when
    /// it is taken, reserved or not usable in `.loop`.
    fn claim_site(&mut self, name: &str, counter_too: bool) -> Option<String> {
        if !Self::usable(name) || reserved(name) || self.sites.contains(name) {
            return None;
        }
        if counter_too && (self.taken.contains(name) || self.loop_names.iter().any(|l| l == name)) {
            return None;
        }
        self.sites.insert(name.to_string());
        self.undo.push(Undo::Site(name.to_string()));
        Some(name.to_string())
    }

    /// A fresh site name derived from `base` (for `while` loops run from a
    /// `for`).
    fn fresh_site(&mut self, base: &str) -> String {
        let name = Self::fresh(base, |n| {
            !self.sites.contains(n)
                && !self.taken.contains(n)
                && !self.loop_names.iter().any(|l| l == n)
                && !reserved(n)
        });
        self.sites.insert(name.clone());
        self.undo.push(Undo::Site(name.clone()));
        name
    }

    /// The parameter for a name and default, shared by every use.
    fn param_for(&mut self, name: &str, default: Option<i64>, at: Span) -> ParamId {
        let key = (name.to_string(), default);
        if let Some(&p) = self.params_by_key.get(&key) {
            return p;
        }
        let model_name = self.global_name(name);
        let id = self
            .b
            .param_at(&model_name, default, at)
            .unwrap_or(ParamId(0));
        self.params_by_key.insert(key.clone(), id);
        self.undo.push(Undo::ParamKey(key.0, key.1));
        id
    }

    fn new_var(&mut self, v: CVar<'t>) -> VarId {
        let id = VarId(self.vars.len() as u32);
        self.var_at.insert(v.pos, id);
        self.vars.push(v);
        id
    }

    // ---- regions --------------------------------------------------------

    /// Lowers one region; on a construct that skips it, rolls everything
    /// back and reports why. Returns whether the region was kept.
    fn lower_region(&mut self, r: &Region<'t>) -> bool {
        let mark: Mark = self.b.mark();
        let diags_at = self.diags.len();
        let locals_at = self.locals.len();
        let sites_at = self.procs.calls.sites.len();
        self.undo.clear();
        self.region_span = r.span;
        self.func_name = r.func_name;
        self.region_labels.clear();
        self.scope.clear();
        self.loop_names.clear();
        self.exited.clear();
        self.escapes.clear();
        self.may_writes.clear();
        self.mentioned.clear();
        self.known.clear();
        self.addressed_in(r.func);
        let mut barrier = false;
        lvalues::walk(&r.items, |n| match n.kind() {
            "identifier" => {
                self.mentioned.insert(text(self.src, n));
            }
            "call_expression" => {
                barrier |= match n.field(F::Function) {
                    Some(f) if f.kind() == "identifier" => {
                        self.is_barrier(text(self.src, f), false)
                    }
                    _ => true,
                };
            }
            _ => {}
        });
        self.region_barrier = barrier;
        self.omp_next = false;
        self.depth = 0;
        let result = (self.enter_function(r))
            .and_then(|()| self.parameter_aliases(r))
            .and_then(|()| self.region_body(r));
        match result {
            Ok(()) => true,
            Err(Skip(why)) => {
                self.b.rollback(mark);
                self.rollback();
                self.array_names.truncate(self.b.counts().1);
                self.diags.truncate(diags_at);
                self.locals.truncate(locals_at);
                // Their callees' bodies are analysed as regions instead.
                let dropped = self.procs.calls.sites.split_off(sites_at);
                let callees = dropped.iter().filter(|s| s.parent.is_none());
                self.procs.not_inlined.extend(callees.map(|s| s.proc));
                if let Some(w) = why {
                    let place = if r.pragma {
                        format!("the `#pragma scop` region in `{}`", r.func_name)
                    } else {
                        format!("function `{}`", r.func_name)
                    };
                    let mut d =
                        Diagnostic::warning(w.code, format!("{}; {place} is not analysed", w.what))
                            .primary(self.file, w.at, w.label)
                            .secondary(self.file, r.anchor, "the region skipped");
                    if !w.note.is_empty() {
                        d = d.note(w.note);
                    }
                    self.diags.push(d);
                }
                false
            }
        }
    }

    fn rollback(&mut self) {
        while let Some(u) = self.undo.pop() {
            match u {
                Undo::VarParam(v) => self.vars[v.index()].param = None,
                Undo::VarArray(v) => self.vars[v.index()].array = None,
                Undo::ParamKey(n, d) => {
                    self.params_by_key.remove(&(n, d));
                }
                Undo::Name(n) => {
                    self.taken.remove(&n);
                }
                Undo::Suffix(n, k) => {
                    self.suffixes.insert(n, k);
                }
                Undo::Site(n) => {
                    self.sites.remove(&n);
                }
                Undo::Derived(p) => {
                    self.derived_params.remove(&p);
                }
            }
        }
    }

    /// The scope at the start of a region: the function's parameters, and
    /// for a pragma region the declarations before it in the blocks around
    /// it (and the `for` loops around it).
    fn enter_function(&mut self, r: &Region<'t>) -> Result<(), Skip> {
        if let Some(params) = r.func.field(F::Declarator).and_then(function_parameters) {
            for (k, p) in scan::children(params).into_iter().enumerate() {
                if p.kind() == "parameter_declaration" {
                    for v in self.declaration(p, false) {
                        let name = self.vars[v.index()].name;
                        self.param_pos.insert(self.vars[v.index()].pos, k);
                        self.scope.push((name, Binding::Var(v)));
                    }
                }
            }
        }
        if !r.pragma {
            return Ok(());
        }
        // Ancestors of the region's first item up to the function body.
        let Some(first) = r.items.first().copied() else {
            return Ok(());
        };
        let mut path = Vec::new();
        let mut n = first;
        while let Some(up) = n.parent() {
            path.push((up, n));
            if up == r.func {
                break;
            }
            n = up;
        }
        path.reverse();
        for (block, child) in path {
            match block.kind() {
                "compound_statement" => {
                    for item in scan::children(block) {
                        if item.start_byte() >= child.start_byte() {
                            break;
                        }
                        match item.kind() {
                            "declaration" => {
                                for v in self.declaration(item, false) {
                                    let name = self.vars[v.index()].name;
                                    self.scope.push((name, Binding::Var(v)));
                                }
                            }
                            "preproc_call" => self.scoped_range_pragma(item),
                            _ => {}
                        }
                    }
                }
                "for_statement" => {
                    if let Some(init) = block.field(F::Initializer) {
                        if init.kind() == "declaration" && init != child {
                            for v in self.declaration(init, false) {
                                let name = self.vars[v.index()].name;
                                self.scope.push((name, Binding::Var(v)));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// `#pragma arrayflow array` inside a function: the name is resolved in
    /// the current scope.
    fn scoped_range_pragma(&mut self, n: Node<'t>) {
        let local: Vec<(&'t str, VarId)> = self
            .scope
            .iter()
            .filter_map(|(name, b)| match b {
                Binding::Var(v) => Some((*name, *v)),
                _ => None,
            })
            .collect();
        self.range_pragma(n, &local);
    }

    /// An array's model name, for messages.
    fn array_name(&self, a: ArrayId) -> String {
        self.array_names.get(a.index()).cloned().unwrap_or_default()
    }

    fn in_region(&self, pos: usize) -> bool {
        pos >= self.region_span.start as usize && pos < self.region_span.end as usize
    }

    /// The model object for a variable, made on first use.
    fn model_of(&mut self, v: VarId, at: Span) -> Result<ModelRef, Skip> {
        let var = &self.vars[v.index()];
        let scalar_int = var.dims.is_empty() && var.elem == ElemType::Int && !var.is_struct;
        if scalar_int {
            if var.is_const {
                if let Some(k) = var.init.and_then(|i| self.const_value(i, 0)) {
                    let (name, span) = (var.name, var.span);
                    let p = self.param_for(name, Some(k), span);
                    return Ok(ModelRef::Param(p));
                }
            }
            let changed = self.assigned.contains(var.name) || (var.global && self.region_barrier);
            if !self.in_region(var.pos) && !changed {
                if let Some(p) = var.param {
                    return Ok(ModelRef::Param(p));
                }
                let (name, span) = (var.name, var.span);
                let default = match var.func_param {
                    true => (self.param_pos.get(&var.pos))
                        .and_then(|&k| *self.call_defaults.get(&(self.func_name, k))?),
                    false => None,
                };
                let p = self.param_for(name, default, span);
                self.vars[v.index()].param = Some(p);
                self.undo.push(Undo::VarParam(v));
                return Ok(ModelRef::Param(p));
            }
        }
        if let Some(a) = var.array {
            return Ok(ModelRef::Array(a, self.model_dims(v)));
        }
        let ndims = self.model_dims(v);
        if self.creating.contains(&v) {
            return Err(self.skip(
                W_UNSUPPORTED,
                format!("the size of `{}` refers to itself", var.name),
                at,
                "here",
                "",
            ));
        }
        self.creating.push(v);
        let made = self.make_array(v);
        self.creating.pop();
        let a = made?;
        self.vars[v.index()].array = Some(a);
        self.undo.push(Undo::VarArray(v));
        if self.in_region(self.vars[v.index()].pos) {
            self.locals.push(a);
            self.b.set_local(a);
        }
        Ok(ModelRef::Array(a, ndims))
    }

    fn make_array(&mut self, v: VarId) -> Result<ArrayId, Skip> {
        let (name, span, elem) = {
            let var = &self.vars[v.index()];
            (var.name, var.span, var.elem)
        };
        let mut dims = Vec::new();
        let mut missing = Vec::new();
        let ndims = self.model_dims(v);
        for k in 0..ndims {
            let range = self.vars[v.index()]
                .range
                .as_ref()
                .and_then(|r| r.get(k))
                .cloned();
            if let Some((lo, hi)) = range {
                let lo = self.mini_value(&lo)?;
                let hi = self.mini_value(&hi)?;
                if param_affine(&lo) && param_affine(&hi) {
                    dims.push((lo, hi));
                    continue;
                }
                self.warn(
                    W_PRAGMA,
                    format!("the range given for dimension {k} of `{name}` is not affine in the parameters; ignored"),
                    lo.span.to(hi.span),
                    "not affine",
                    "",
                );
            }
            let size = self.vars[v.index()].dims[k];
            let hi = match size {
                Some(s) => {
                    let e = self.value(s)?;
                    let e = self.folded(e);
                    match Affine::from_expr(&e) {
                        Some(a) if !a.uses_counters() => a
                            .checked_sub(&Affine::constant(1))
                            .map(|a| affine_expr(&a, span)),
                        _ => None,
                    }
                }
                None => None,
            };
            let hi = match hi {
                Some(h) => h,
                None => {
                    let p = self.param_for(&format!("{name}_dim{k}"), None, span);
                    missing.push(k);
                    Expr::new(
                        ExprKind::Binary(
                            BinOp::Sub,
                            Box::new(Expr::new(ExprKind::Param(p), span)),
                            Box::new(Expr::new(ExprKind::Int(1), span)),
                        ),
                        span,
                    )
                }
            };
            dims.push((Expr::new(ExprKind::Int(0), span), hi));
        }
        if !missing.is_empty() {
            let list: Vec<String> = missing.iter().map(|k| format!("`{name}_dim{k}`")).collect();
            self.warn(
                W_POINTER,
                format!(
                    "`{name}` has no usable size for dimension {}: its extent is the new parameter {} (give it with `--param`)",
                    missing.iter().map(usize::to_string).collect::<Vec<_>>().join(", "),
                    list.join(", ")
                ),
                span,
                "size unknown",
                "`#pragma arrayflow array` can give its range; whether it overlaps another array is decided by `restrict` and the calls in this file (docs/c.md, Aliasing)",
            );
        }
        let model_name = self.global_name(name);
        self.array_names.push(model_name.clone());
        self.b.array_at(&model_name, elem, dims, span).map_err(|e| {
            self.skip(
                W_UNSUPPORTED,
                format!("the declaration of `{name}` cannot be modelled ({e})"),
                span,
                "here",
                "",
            )
        })
    }

    /// The value of an integer constant expression: literals, `#define`
    /// constants, `const` integers and enumerators.
    fn const_value(&self, n: Node<'t>, depth: usize) -> Option<i64> {
        if depth > 32 {
            return None;
        }
        match n.kind() {
            "number_literal" => mini::int_literal(self.text(n)),
            "parenthesized_expression" => self.const_value(*scan::children(n).first()?, depth + 1),
            "unary_expression" => {
                let x = self.const_value(n.field(F::Argument)?, depth + 1)?;
                match self.text(n.field(F::Operator)?) {
                    "-" => x.checked_neg(),
                    "+" => Some(x),
                    _ => None,
                }
            }
            "binary_expression" => {
                let l = self.const_value(n.field(F::Left)?, depth + 1)?;
                let r = self.const_value(n.field(F::Right)?, depth + 1)?;
                mini::checked(expr::arith_op(self.text(n.field(F::Operator)?))?, l, r)
            }
            "identifier" => {
                let name = self.text(n);
                if let Some(d) = self.defines.get(name) {
                    return d.body.as_ref().and_then(|b| self.mini_const(b, depth + 1));
                }
                let v = self.globals.get(name)?;
                let var = &self.vars[v.index()];
                if var.is_const && var.dims.is_empty() {
                    self.const_value(var.init?, depth + 1)
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    fn mini_const(&self, m: &Mini, depth: usize) -> Option<i64> {
        if depth > 32 {
            return None;
        }
        match m {
            Mini::Name(n, _) => {
                let d = self.defines.get(n.as_str())?;
                self.mini_const(d.body.as_ref()?, depth + 1)
            }
            Mini::Neg(x, _) => self.mini_const(x, depth + 1)?.checked_neg(),
            Mini::Bin(op, l, r, _) => mini::checked(
                *op,
                self.mini_const(l, depth + 1)?,
                self.mini_const(r, depth + 1)?,
            ),
            Mini::Int(v, _) => Some(*v),
        }
    }
}

fn function_parameters(d: Node<'_>) -> Option<Node<'_>> {
    let mut d = d;
    loop {
        if d.kind() == "function_declarator" {
            return d.field(F::Parameters);
        }
        d = d.field(F::Declarator)?;
    }
}

/// Affine in the parameters alone (a declared range).
fn param_affine(e: &Expr) -> bool {
    Affine::from_expr(e).is_some_and(|a| !a.uses_counters())
}

#[cfg(test)]
mod tests;
