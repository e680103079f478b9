//! What an editor asks about a position or a file, answered from the
//! database in byte offsets and plain text (the language server turns these
//! into LSP types): hover, definition, code lenses, symbols, summaries.

use super::resolve::{Reach, Resolver};
use super::{kernel_flow, parse, settings, Kernel, Names, SourceFile};
use crate::dataflow::assemble::Assembler;
use crate::dataflow::Config;
use crate::model::{AccessKind, ArrayId, CounterId, Node, Program, Site, Span, StmtId};
use std::collections::{BTreeSet, HashMap};

/// The most lines of sources a hover shows.
const HOVER_LINES: usize = 12;

/// "N=5, max-trips 4": the sizes of every bounded result.
pub fn sizes(config: &Config, program: &Program) -> String {
    let mut parts: Vec<String> = match program.param_values(&config.params) {
        Ok(values) => program
            .params
            .iter()
            .zip(values)
            .map(|(p, v)| format!("{}={v}", p.name))
            .collect(),
        Err(_) => Vec::new(),
    };
    parts.push(format!("max-trips {}", config.max_trips));
    format!("at {}", parts.join(", "))
}

/// "distance 1" or "distances 1..3".
pub fn distance(min: i64, max: i64) -> String {
    if min == max {
        format!("distance {min}")
    } else {
        format!("distances {min}..{max}")
    }
}

/// The header of the loop with this counter.
pub fn loop_span(program: &Program, counter: CounterId) -> Span {
    fn find(nodes: &[Node], c: CounterId) -> Option<Span> {
        nodes.iter().find_map(|n| match n {
            Node::For(f) if f.counter == c => Some(f.span),
            Node::While(w) if w.counter == c => Some(w.span),
            Node::For(f) => find(&f.body, c),
            Node::While(w) => find(&w.body, c),
            Node::If(i) => i
                .branches
                .iter()
                .find_map(|(_, b)| find(b, c))
                .or_else(|| i.otherwise.as_ref().and_then(|b| find(b, c))),
            Node::Stmt(_) => None,
        })
    }
    find(&program.body, counter).unwrap_or(Span::NONE)
}

/// The header of every loop, by counter: one walk of the program, where a
/// [`loop_span`] per loop made a file of n loops cost n².
pub fn loop_spans(program: &Program) -> Vec<Span> {
    let mut out = vec![Span::NONE; program.counters.len()];
    for (c, span) in crate::expansion::parallel::loop_spans(program) {
        if let Some(s) = out.get_mut(c.index()) {
            *s = span;
        }
    }
    out
}

/// Where a site is written.
pub fn site_span(program: &Program, site: Site) -> Span {
    match site {
        Site::Stmt(s) => program
            .stmts()
            .get(s.index())
            .map_or(Span::NONE, |s| s.span),
        Site::Cond(c) => program
            .conditions()
            .get(c.index())
            .map_or(Span::NONE, |c| c.span),
    }
}

/// What is at a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Read `access` of a site (an update's target is a read and a write).
    Access {
        site: Site,
        read: Option<usize>,
        write: bool,
        array: ArrayId,
        span: Span,
    },
    /// An array's declaration.
    Array { array: ArrayId, span: Span },
    /// A loop header.
    Loop { counter: CounterId, span: Span },
}

/// The innermost access, declaration or loop header at byte `offset`.
pub fn target_at(program: &Program, offset: u32) -> Option<Target> {
    let inside = |s: Span| !s.is_none() && s.start <= offset && offset < s.end.max(s.start + 1);
    let mut best: Option<(u32, Target)> = None;
    let mut consider = |span: Span, t: Target| {
        if inside(span)
            && best
                .as_ref()
                .is_none_or(|(w, _)| span.end - span.start < *w)
        {
            best = Some((span.end - span.start, t));
        }
    };
    for s in program.stmts() {
        let mut reads = 0;
        for a in s.accesses() {
            let read = a.kind.reads().then(|| {
                reads += 1;
                reads - 1
            });
            consider(
                a.access.span,
                Target::Access {
                    site: Site::Stmt(s.id),
                    read,
                    write: a.kind != AccessKind::Read,
                    array: a.access.array,
                    span: a.access.span,
                },
            );
        }
    }
    for c in program.conditions() {
        for (k, a) in c.reads().into_iter().enumerate() {
            consider(
                a.span,
                Target::Access {
                    site: Site::Cond(c.id),
                    read: Some(k),
                    write: false,
                    array: a.array,
                    span: a.span,
                },
            );
        }
    }
    for (k, a) in program.arrays.iter().enumerate() {
        consider(
            a.span,
            Target::Array {
                array: ArrayId(k as u32),
                span: a.span,
            },
        );
    }
    for (k, span) in loop_spans(program).into_iter().enumerate() {
        let counter = CounterId(k as u32);
        consider(span, Target::Loop { counter, span });
    }
    best.map(|(_, t)| t)
}

/// The kernel holding a site, with the site's local id.
fn kernel_of<'db>(
    db: &'db dyn salsa::Database,
    kernels: &[Kernel<'db>],
    site: Site,
) -> Option<(usize, Site)> {
    kernels
        .iter()
        .enumerate()
        .find_map(|(k, kern)| kern.place(db).local_site(site).map(|l| (k, l)))
}

/// The sources of every instance of one read, in the file's ids, with the
/// iteration vector of each instance.
pub fn read_sources(
    db: &dyn salsa::Database,
    file: SourceFile,
    site: Site,
    access: usize,
) -> Result<Vec<(Vec<i64>, Reach)>, String> {
    let mut resolver = Resolver::new(db, file);
    let (k, local) = kernel_of(db, resolver.kernels(), site).ok_or("this read is in no kernel")?;
    let kf = kernel_flow(db, resolver.kernels()[k]);
    let flow = kf.result.as_ref().map_err(|e| e.to_string())?;
    let want = match local {
        Site::Stmt(s) => Site::Stmt(kf.augmented.body_stmt(s)),
        c => c,
    };
    let mut out = Vec::new();
    for read in flow.iter() {
        if read.site() == want && read.access() == access {
            let reach = resolver.sources(k, &kf.augmented, &read);
            out.push((read.iter().to_vec(), reach));
        }
    }
    Ok(out)
}

/// Hover text (markdown) for whatever is at `offset`, with the span it is about.
pub fn hover(db: &dyn salsa::Database, file: SourceFile, offset: u32) -> Option<(Span, String)> {
    let program = parse(db, file).program.as_ref()?;
    if let Some(h) = call_hover(db, file, program, offset) {
        return Some(h);
    }
    let config = settings(db);
    let sizes = sizes(&config, program);
    let target = target_at(program, offset)?;
    let text = match &target {
        Target::Access {
            site,
            read,
            write,
            array,
            span,
        } => {
            let mut parts = Vec::new();
            if let Some(access) = read {
                parts.push(read_hover(
                    db, file, program, *site, *access, *array, &sizes,
                ));
            }
            if *write {
                parts.push(write_hover(db, file, program, *site, *array, &sizes));
            }
            return Some((*span, parts.join("\n\n---\n\n")));
        }
        Target::Array { array, .. } => array_hover(db, file, program, *array, &sizes),
        Target::Loop { counter, .. } => loop_hover(db, file, program, *counter, &sizes),
    };
    let span = match target {
        Target::Array { span, .. } | Target::Loop { span, .. } => span,
        Target::Access { span, .. } => span,
    };
    Some((span, text))
}

/// Symbolic σ's answer for the reads of one statement (by its index), for
/// the read hovers: once per edit and statement, however many hovers
/// follow. Per statement, so that a hover after an edit fits and proves
/// the quasts of the statement under the cursor, not of the whole file.
#[salsa::tracked(returns(ref), no_eq)]
pub fn symbolic_hovers(
    db: &dyn salsa::Database,
    file: SourceFile,
    stmt: u32,
) -> HashMap<usize, crate::symbolic::Hover> {
    parse(db, file)
        .program
        .as_ref()
        .map(|p| crate::symbolic::stmt_hovers(p, StmtId(stmt)))
        .unwrap_or_default()
}

/// On a procedure call (`.loop` or C): the procedure's summary as
/// translated at that call (MOD, USE, KILL over the caller's arrays,
/// symbolic; docs/regions.md §6). A call inside a procedure shows its first
/// inlined instance.
fn call_hover(
    db: &dyn salsa::Database,
    file: SourceFile,
    program: &Program,
    offset: u32,
) -> Option<(Span, String)> {
    use crate::regions::summary;
    let calls = call_sites(db, file).as_ref()?;
    let site = (calls.sites.iter())
        .filter(|s| s.span.start <= offset && offset < s.span.end)
        .min_by_key(|s| s.span.end - s.span.start)?;
    let none = |_| None;
    let summarized = summary::summarize(&calls.procs[site.proc], &none);
    let at = summary::at_call(program, calls, site, &summarized, &none);
    let body = summary::call_text(program, calls, site, &at);
    let exact = if summary::call_exact(&at) {
        "exact"
    } else {
        "approximate: MOD and USE may hold more, KILL less"
    };
    Some((
        site.span,
        format!("**summary at this call** ({exact})\n\n```\n{body}```"),
    ))
}

/// The file's procedures and call sites (`model::calls`), for the call
/// hovers: the front end runs once per edit, however many hovers follow;
/// each hover summarises only its own procedure. `None` for a `.loop` file
/// without calls.
#[salsa::tracked(returns(ref), no_eq)]
pub fn call_sites(
    db: &dyn salsa::Database,
    file: SourceFile,
) -> Option<crate::model::calls::Calls> {
    let path = std::path::Path::new(file.path(db));
    let text = file.text(db);
    if !super::is_c_path(path) && !text.contains("call") {
        return None;
    }
    Some(crate::db::calls(path, text, crate::diagnostics::FileId(0)))
}

fn read_hover(
    db: &dyn salsa::Database,
    file: SourceFile,
    program: &Program,
    site: Site,
    access: usize,
    array: ArrayId,
    sizes: &str,
) -> String {
    let name = program.site_name(site);
    let arr = &program.array_decl(array).name;
    let mut head = format!("**{name}** reads `{arr}` (access {access})");
    let known = match site {
        Site::Stmt(s) => symbolic_hovers(db, file, s.0).get(&access).cloned(),
        Site::Cond(_) => None,
    };
    match known {
        Some(crate::symbolic::Hover::Exact(line)) => {
            return format!("{head}: its source for every parameter value:\n```\n{line}\n```");
        }
        // The set for every parameter value, then the instances at the sizes.
        Some(crate::symbolic::Hover::Possible(line)) => head.push_str(&format!(
            ": one of, for every parameter value and trip count:\n```\n{line}\n```\nIts"
        )),
        None => head.push_str(": its"),
    }
    let head = format!("{head} possible sources {sizes}");
    let reads = match read_sources(db, file, site, access) {
        Ok(r) => r,
        Err(e) => return format!("{head}: not available ({e})"),
    };
    if reads.is_empty() {
        return format!("{head}: none (the read never runs {sizes})");
    }
    let config = settings(db);
    let params = program
        .param_values(&config.params)
        .unwrap_or_default()
        .into_iter()
        .zip(&program.params)
        .map(|(v, p)| (p.name.clone(), v))
        .collect();
    let mut asm = Assembler::new(program, params, config.max_trips);
    let mut unknown = None;
    for (iter, reach) in &reads {
        unknown = unknown.or(reach.unknown);
        asm.read(
            site,
            iter,
            access,
            reach.writes.iter().map(|(s, i)| (*s, i.as_slice())),
            reach.initial,
        );
    }
    let mut text = Vec::new();
    let _ = crate::dataflow::render::text(program, &asm.finish(), &mut text);
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().skip(1).collect();
    let mut shown = lines
        .iter()
        .take(HOVER_LINES)
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    if lines.len() > HOVER_LINES {
        shown.push_str(&format!("\n… {} more lines", lines.len() - HOVER_LINES));
    }
    let mut out = format!("{head}:\n```\n{shown}\n```");
    if let Some(k) = unknown {
        out.push_str(&format!(
            "\n\nKernel {} could not be analysed: writes before it are not shown.",
            k + 1
        ));
    }
    out
}

/// The reads (site, access) whose sources may include an instance of `site`.
fn readers_of(db: &dyn salsa::Database, file: SourceFile, site: Site) -> BTreeSet<(Site, usize)> {
    let mut resolver = Resolver::new(db, file);
    let kernels = resolver.kernels();
    let mut out = BTreeSet::new();
    let Some((first, _)) = kernel_of(db, kernels, site) else {
        return out;
    };
    for (k, &kern) in kernels.iter().enumerate().skip(first) {
        let kf = kernel_flow(db, kern);
        let Ok(flow) = &kf.result else { continue };
        let place = kern.place(db);
        for read in flow.iter() {
            let Some(local) = kf.augmented.body_site(read.site()) else {
                continue;
            };
            let key = (place.global_site(local), read.access());
            if out.contains(&key) {
                continue;
            }
            if resolver
                .sources(k, &kf.augmented, &read)
                .writes
                .iter()
                .any(|(s, _)| *s == site)
            {
                out.insert(key);
            }
        }
    }
    out
}

fn write_hover(
    db: &dyn salsa::Database,
    file: SourceFile,
    program: &Program,
    site: Site,
    array: ArrayId,
    sizes: &str,
) -> String {
    let name = program.site_name(site);
    let arr = &program.array_decl(array).name;
    let readers = readers_of(db, file, site);
    let list: Vec<String> = readers
        .iter()
        .map(|(s, a)| format!("{} (access {a})", program.site_name(*s)))
        .collect();
    let used = if list.is_empty() {
        format!("no read uses the values it writes {sizes}")
    } else {
        format!("its values may be read by {} {sizes}", list.join(", "))
    };
    let expanded = match super::expanded_code(db, file) {
        Ok((emitted, _)) => {
            let refs: Vec<String> = emitted
                .stmts()
                .iter()
                .filter(|s| !s.copy && s.base_label() == name)
                .filter_map(|s| {
                    let (target, _) = s.write()?;
                    Some(format!(
                        "`{}` ({})",
                        crate::print::access(emitted, target),
                        s.label
                    ))
                })
                .collect();
            if refs.is_empty() {
                "not in the expanded program".to_string()
            } else {
                refs.join(", ")
            }
        }
        Err(e) => format!("not available ({e})"),
    };
    format!(
        "**{name}** writes `{arr}`: {used}.\n\n\
         After maximal static expansion it writes {expanded}; class labels of its \
         instances: *Show expansion summary*."
    )
}

fn array_hover(
    db: &dyn salsa::Database,
    file: SourceFile,
    program: &Program,
    array: ArrayId,
    sizes: &str,
) -> String {
    let decl = program.array_decl(array);
    let config = settings(db);
    let cells = program
        .param_values(&config.params)
        .ok()
        .map(|values| cells(program, array, &values));
    let writers: Vec<String> = program
        .stmts()
        .iter()
        .filter(|s| s.write().is_some_and(|(a, _)| a.array == array))
        .map(|s| s.label.clone())
        .collect();
    let after: Option<u64> = super::kernels(db, file)
        .iter()
        .map(|&k| {
            super::kernel_expansion(db, k).as_ref().ok().map(|e| {
                e.memory
                    .iter()
                    .find(|(a, _, _)| *a == array)
                    .map_or(0, |&(_, _, mse)| mse)
            })
        })
        .sum();
    let before = match cells {
        Some(n) => format!("{n} cells {sizes}"),
        None => "unknown size (parameters without values)".to_string(),
    };
    let written = if writers.is_empty() {
        "never written".to_string()
    } else {
        format!("written by {}", writers.join(", "))
    };
    let after = match after {
        Some(n) => {
            format!("{n} cells (maximal static expansion of each kernel that writes it, {sizes})")
        }
        None => "not available (the expansion of some kernel failed)".to_string(),
    };
    format!(
        "array `{}`: {} dimension(s), {written}.\n\nMemory before expansion: {before}. \
         After expansion: {after}.",
        decl.name,
        decl.dims.len()
    )
}

fn loop_hover(
    db: &dyn salsa::Database,
    file: SourceFile,
    program: &Program,
    counter: CounterId,
    sizes: &str,
) -> String {
    let name = &program.counter_decl(counter).name;
    match lens_for(db, file, program, counter) {
        Some(lens) => format!("loop `{name}` {sizes}: {lens}"),
        None => format!("loop `{name}`: not analysed"),
    }
}

/// Declared cells of an array at these parameter values.
pub fn cells(program: &Program, array: ArrayId, values: &[i64]) -> u64 {
    let mut env = crate::model::eval::StaticEnv {
        params: values,
        counters: &[],
    };
    program
        .array_decl(array)
        .dims
        .iter()
        .map(|r| {
            let lo = crate::model::eval::expr(&r.lo.expr, &mut env).unwrap_or(0);
            let hi = crate::model::eval::expr(&r.hi.expr, &mut env).unwrap_or(-1);
            hi.saturating_sub(lo).saturating_add(1).max(0) as u64
        })
        .fold(1u64, u64::saturating_mul)
}

/// The statements (and for the initial value, the array's declaration)
/// whose instances may have written the value the read at `offset` sees.
pub fn definition(db: &dyn salsa::Database, file: SourceFile, offset: u32) -> Vec<Span> {
    let Some(program) = parse(db, file).program.as_ref() else {
        return Vec::new();
    };
    let Some(Target::Access {
        site,
        read: Some(access),
        array,
        ..
    }) = target_at(program, offset)
    else {
        return Vec::new();
    };
    let Ok(reads) = read_sources(db, file, site, access) else {
        return Vec::new();
    };
    let mut sites = BTreeSet::new();
    let mut initial = false;
    for (_, r) in &reads {
        sites.extend(r.writes.iter().map(|(s, _)| *s));
        initial |= r.initial;
    }
    let mut out: Vec<Span> = sites.into_iter().map(|s| site_span(program, s)).collect();
    if initial {
        out.push(program.array_decl(array).span);
    }
    out
}

/// The code lens text of a loop: whether it runs in parallel as written
/// (exact dependence tests) and after expansion (σ: no value flows between
/// its iterations at the analysed sizes).
fn lens_text(program: &Program, names: &Names, l: &super::LoopStatus, sizes: &str) -> String {
    if l.deps_failed {
        return "parallel: not analysed (over the memory budget)".to_string();
    }
    if l.deps.is_empty() {
        return "parallel: yes".to_string();
    }
    match l.after_mse {
        Some(false) => {
            return format!(
                "parallel: no → yes after expansion (maximal static expansion of {} {sizes}; not proved for other sizes)",
                super::dep_arrays(program, &l.deps)
            )
        }
        Some(true) if l.flows.as_ref().is_some_and(|f| f.is_empty()) => {
            return format!(
                "parallel: no → no after static expansion (φ merges values of {}); \
                 yes after single assignment {sizes}",
                super::dep_arrays(program, &l.deps)
            )
        }
        _ => {}
    }
    match &l.flows {
        Some(f) if f.is_empty() => format!(
            "parallel: no → yes after expanding {} (no value flows between iterations {sizes})",
            super::dep_arrays(program, &l.deps)
        ),
        Some(f) => {
            let c = &f[0];
            format!(
                "parallel: no → no after expansion (values of {} flow {} → {}, {}, {sizes})",
                program.array_decl(c.array).name,
                names.site(c.from),
                names.site(c.to),
                distance(c.min, c.max)
            )
        }
        None => format!(
            "parallel: no ({}); after expansion: not analysed",
            super::describe_dep(program, names, &l.deps[0])
        ),
    }
}

fn lens_for(
    db: &dyn salsa::Database,
    file: SourceFile,
    program: &Program,
    counter: CounterId,
) -> Option<String> {
    let sizes = sizes(&settings(db), program);
    super::loop_status(db, file)
        .iter()
        .find(|l| l.counter == counter)
        .map(|l| lens_text(program, &Names::new(program), l, &sizes) + &assumes(db, file))
}

/// What a loop's verdict rests on beyond the model, as the reports say it:
/// `; assumes ...` per premise (`super::premises`), or nothing.
fn assumes(db: &dyn salsa::Database, file: SourceFile) -> String {
    (super::premises(db, file).iter())
        .map(|p| format!("; assumes {p}"))
        .collect()
}

/// One code lens per loop: its header and what the lens says.
pub fn lenses(db: &dyn salsa::Database, file: SourceFile) -> Vec<(Span, String)> {
    let Some(program) = parse(db, file).program.as_ref() else {
        return Vec::new();
    };
    let sizes = sizes(&settings(db), program);
    let names = Names::new(program);
    let spans = loop_spans(program);
    let assumes = assumes(db, file);
    super::loop_status(db, file)
        .iter()
        .map(|l| {
            let text = lens_text(program, &names, l, &sizes);
            (spans[l.counter.index()], text + &assumes)
        })
        .collect()
}

/// A named thing of a file, for an outline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// Its name, as written.
    pub name: String,
    /// What it is.
    pub kind: SymbolKind,
    /// Where it is declared or labelled.
    pub span: Span,
}

/// What a [`Symbol`] names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    /// A parameter.
    Parameter,
    /// An array.
    Array,
    /// A labelled statement.
    Statement,
    /// A named condition.
    Condition,
}

/// Parameters, arrays, labelled statements and named conditions.
pub fn symbols(program: &Program) -> Vec<Symbol> {
    let mut out: Vec<Symbol> = program
        .params
        .iter()
        .map(|p| Symbol {
            name: p.name.clone(),
            kind: SymbolKind::Parameter,
            span: p.span,
        })
        .collect();
    out.extend(program.arrays.iter().map(|a| Symbol {
        name: a.name.clone(),
        kind: SymbolKind::Array,
        span: a.span,
    }));
    out.extend(
        program
            .stmts()
            .iter()
            .filter(|s| !s.label_generated)
            .map(|s| Symbol {
                name: s.label.clone(),
                kind: SymbolKind::Statement,
                span: s.span,
            }),
    );
    out.extend(
        program
            .conditions()
            .iter()
            .filter(|c| !c.generated)
            .map(|c| Symbol {
                name: c.name.clone(),
                kind: SymbolKind::Condition,
                span: c.span,
            }),
    );
    out.sort_by_key(|s| s.span.start);
    out
}

/// `arrayflow expand`'s summary of every kernel (its maximal static
/// expansion at the settings' sizes), kernel by kernel.
pub fn expansion_summary(db: &dyn salsa::Database, file: SourceFile) -> String {
    let Some(program) = parse(db, file).program.as_ref() else {
        return "The file has errors: no summary.".to_string();
    };
    let mut out = String::new();
    for (k, &kern) in super::kernels(db, file).iter().enumerate() {
        let place = kern.place(db);
        let first = place.stmts.start;
        let label = program
            .stmts()
            .get(first as usize)
            .map_or(String::new(), |s| format!(", from statement {}", s.label));
        out.push_str(&format!("== kernel {}{label}\n", k + 1));
        match super::kernel_expansion(db, kern) {
            Ok(e) => out.push_str(&e.text),
            Err(e) => out.push_str(&format!("not expanded: {e}\n")),
        }
    }
    out
}
