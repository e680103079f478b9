//! σ across kernels, and facts derived from one kernel's σ.
//!
//! A read of cell c in kernel k whose kernel-local sources include the entry
//! write of c may also read whatever reaches the start of kernel k: walking
//! back over kernels k-1, k-2, ..., the sources of kernel j's exit read of c
//! (its writes), as long as that exit read also reaches kernel j's entry
//! write of c (nothing in kernel j surely overwrote c); past kernel 0, the
//! initial value. docs/architecture.md proves this equals σ of the whole
//! program.

use super::exits::Exits;
use super::kernel::{Augmented, Role};
use super::{kernel_flow, kernels, parse, settings, Carried, Kernel, LoopFlow, SourceFile};
use crate::dataflow::assemble::Assembler;
use crate::dataflow::grouped::{AccessGroups, Grouper};
use crate::dataflow::{Flow, Read};
use crate::diagnostics::Diagnostic;
use crate::hash::WordHash;
use crate::model::{ArrayId, CondId, CounterId, Node, Program, Site, StmtId};
use std::collections::HashMap;

/// The sources of reads, in the file's ids.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reach {
    pub writes: Vec<(Site, Vec<i64>)>,
    pub initial: bool,
    /// An earlier kernel could not be analysed: its writes are unknown.
    pub unknown: Option<u32>,
}

impl Reach {
    fn add(&mut self, other: &Reach) {
        self.writes.extend(other.writes.iter().cloned());
        self.initial |= other.initial;
        self.unknown = self.unknown.or(other.unknown);
    }
}

/// Finds what reaches the start of a kernel, remembering every answer.
pub struct Resolver<'db> {
    db: &'db dyn salsa::Database,
    kernels: &'db [Kernel<'db>],
    /// By `[kernel, array, cell..]` (one word per value, hashed fast: a
    /// read of every cell asks once per reader instance).
    memo: HashMap<Vec<i64>, Reach, WordHash>,
    key: Vec<i64>,
    /// Spread, the exit reads gathered from every process (`super::exits`):
    /// this process's σ holds only its own stretch's.
    exits: Option<Exits>,
}

impl<'db> Resolver<'db> {
    pub fn new(db: &'db dyn salsa::Database, file: SourceFile) -> Resolver<'db> {
        Resolver {
            db,
            kernels: kernels(db, file),
            memo: HashMap::default(),
            key: Vec::new(),
            exits: None,
        }
    }

    /// A resolver that looks the earlier kernels' exit reads up in `exits`
    /// (every process's, gathered) instead of this process's σ.
    pub fn with_exits(mut self, exits: Option<Exits>) -> Resolver<'db> {
        self.exits = exits;
        self
    }

    pub fn kernels(&self) -> &'db [Kernel<'db>] {
        self.kernels
    }

    /// What may be in `cell` of array `a` when kernel `k` starts.
    pub fn reach(&mut self, k: usize, a: ArrayId, cell: &[i64]) -> Reach {
        let mut out = Reach::default();
        self.reach_into(k, a, cell, &mut out);
        out
    }

    /// [`Resolver::reach`] added to `into`.
    fn reach_into(&mut self, k: usize, a: ArrayId, cell: &[i64], into: &mut Reach) {
        if k == 0 {
            // Nothing runs before the first kernel.
            into.initial = true;
            return;
        }
        memo_key(&mut self.key, k, a, cell);
        if let Some(r) = self.memo.get(self.key.as_slice()) {
            into.add(r);
            return;
        }
        let key = self.key.clone();
        let mut out = Reach::default();
        let mut j = k;
        loop {
            if j == 0 {
                out.initial = true;
                break;
            }
            j -= 1;
            memo_key(&mut self.key, j + 1, a, cell);
            if let Some(r) = self.memo.get(self.key.as_slice()) {
                out.add(r);
                break;
            }
            let kernel = self.kernels[j];
            let kf = kernel_flow(self.db, kernel);
            let Some(exit) = kf.augmented.exit_stmt(a) else {
                continue;
            };
            let flow = match &kf.result {
                Ok(f) => f,
                Err(_) => {
                    out.unknown = Some(j as u32);
                    break;
                }
            };
            // Only the cells kernel j wrote have exit reads (`facts::Frame`):
            // the exit read of any other cell reaches its entry write alone.
            type Writes<'a> = Box<dyn Iterator<Item = (Site, &'a [i64])> + 'a>;
            let (mut passes, writes): (bool, Writes<'_>) = match &mut self.exits {
                Some(exits) => match exits.get(j, exit, cell) {
                    Some(e) => (
                        e.initial,
                        Box::new(e.writes.iter().map(|(s, i)| (*s, i.as_slice()))),
                    ),
                    None => continue,
                },
                None => match flow.get_at(Site::Stmt(exit), cell, 0) {
                    Some(read) => (read.initial(), Box::new(read.writes())),
                    None => continue,
                },
            };
            let place = kernel.place(self.db);
            for (site, iter) in writes {
                match local_role(&kf.augmented, site) {
                    Some(Role::Body(_)) | None => {
                        if let Some(b) = kf.augmented.body_site(site) {
                            out.writes.push((place.global_site(b), iter.to_vec()));
                        }
                    }
                    Some(Role::Entry(_)) => passes = true,
                    Some(Role::Exit(_)) => {}
                }
            }
            if !passes {
                break;
            }
        }
        out.writes.sort();
        out.writes.dedup();
        into.add(&out);
        self.memo.insert(key, out);
    }

    /// The sources of a read of kernel `k` (its local σ), in the file's ids.
    pub fn sources(&mut self, k: usize, aug: &Augmented, read: &Read) -> Reach {
        let place = self.kernels[k].place(self.db);
        let mut out = Reach {
            initial: read.initial(),
            ..Reach::default()
        };
        for (site, iter) in read.writes() {
            match local_role(aug, site) {
                Some(Role::Entry(a)) => self.reach_into(k, a, iter, &mut out),
                Some(Role::Exit(_)) => {}
                Some(Role::Body(_)) | None => {
                    if let Some(b) = aug.body_site(site) {
                        out.writes.push((place.global_site(b), iter.to_vec()));
                    }
                }
            }
        }
        out.writes.sort();
        out.writes.dedup();
        out
    }
}

fn memo_key(key: &mut Vec<i64>, k: usize, a: ArrayId, cell: &[i64]) {
    key.clear();
    key.extend([k as i64, a.index() as i64]);
    key.extend_from_slice(cell);
}

fn local_role(aug: &Augmented, site: Site) -> Option<Role> {
    match site {
        Site::Stmt(s) => Some(aug.role(s)),
        Site::Cond(_) => None,
    }
}

/// Why σ of a whole file is not available.
#[derive(Clone, Debug)]
pub enum FileFlowError {
    /// The file has errors (the front end's diagnostics say which).
    Invalid,
    /// The analysis of some kernel failed; the diagnostic says where.
    Analysis(Diagnostic),
}

/// Where the reads of a whole file go, in the file's ids: each kernel's
/// reads in its execution order, kernel after kernel.
trait ReadSink {
    fn read(
        &mut self,
        site: Site,
        iter: &[i64],
        access: usize,
        writes: &mut dyn Iterator<Item = (Site, &[i64])>,
        initial: bool,
    );
    /// Kernel `k`'s reads are all given.
    fn kernel_done(&mut self, _k: usize) {}
}

impl ReadSink for Assembler {
    fn read(
        &mut self,
        site: Site,
        iter: &[i64],
        access: usize,
        writes: &mut dyn Iterator<Item = (Site, &[i64])>,
        initial: bool,
    ) {
        Assembler::read(self, site, iter, access, writes, initial);
    }
}

/// The program and parameter values of a file's σ.
fn file_sizes(
    db: &dyn salsa::Database,
    file: SourceFile,
) -> Result<(&Program, Sizes), FileFlowError> {
    let program = parse(db, file)
        .program
        .as_ref()
        .ok_or(FileFlowError::Invalid)?;
    let config = settings(db);
    let values = program
        .param_values(&config.params)
        .map_err(|m| FileFlowError::Analysis(Diagnostic::error("E0301", m)))?;
    let params = program
        .params
        .iter()
        .zip(values)
        .map(|(p, v)| (p.name.clone(), v))
        .collect();
    Ok((program, (params, config.max_trips)))
}

/// The first kernel analysis error of a file, if any.
fn check_kernels(
    db: &dyn salsa::Database,
    file: SourceFile,
    program: &Program,
) -> Result<(), FileFlowError> {
    for &kernel in kernels(db, file) {
        if let Err(e) = &kernel_flow(db, kernel).result {
            let place = kernel.place(db);
            let d = super::kernel_error(program, kernel.program(db), place, e);
            return Err(FileFlowError::Analysis(d));
        }
    }
    Ok(())
}

/// Hands every read of a file to `sink` with its sources across kernels,
/// once every kernel is known to have been analysed.
fn each_read(
    db: &dyn salsa::Database,
    file: SourceFile,
    program: &Program,
    sink: &mut dyn ReadSink,
) -> Result<(), FileFlowError> {
    each_read_in(db, file, program, sink, false, None)
}

/// [`each_read`], a kernel's reads in execution order, or `sorted` by
/// site, then iteration vector (`Flow::sorted`: every kernel's statements,
/// then every kernel's conditions, as the file's sites are numbered);
/// earlier kernels' exit reads looked up in `exits` when given.
fn each_read_in(
    db: &dyn salsa::Database,
    file: SourceFile,
    program: &Program,
    sink: &mut dyn ReadSink,
    sorted: bool,
    exits: Option<Exits>,
) -> Result<(), FileFlowError> {
    let mut resolver = Resolver::new(db, file).with_exits(exits);
    check_kernels(db, file, program)?;
    // Sorted: statements on the first pass, conditions on the second.
    let passes: &[Option<bool>] = match sorted {
        true => &[Some(true), Some(false)],
        false => &[None],
    };
    let stmt = |r: &Read<'_>| matches!(r.site(), Site::Stmt(_));
    for &stmts in passes {
        for (k, &kernel) in resolver.kernels().iter().enumerate() {
            let kf = kernel_flow(db, kernel);
            let place = kernel.place(db);
            let Ok(flow) = kf.result.as_ref() else {
                continue;
            };
            let aug = &kf.augmented;
            // A flow sorted by site lists its statements' reads first.
            let reads: Box<dyn Iterator<Item = Read<'_>>> = match stmts {
                Some(true) => Box::new(flow.sorted().take_while(stmt)),
                Some(false) => Box::new(flow.sorted().skip_while(stmt)),
                None => Box::new(flow.iter()),
            };
            for read in reads {
                let Some(site) = aug.body_site(read.site()) else {
                    continue;
                };
                let crosses = read
                    .writes()
                    .any(|(s, _)| matches!(local_role(aug, s), Some(Role::Entry(_))));
                let (site, iter, access) = (place.global_site(site), read.iter(), read.access());
                if crosses {
                    let reach = resolver.sources(k, aug, &read);
                    let mut w = reach.writes.iter().map(|(s, i)| (*s, i.as_slice()));
                    sink.read(site, iter, access, &mut w, reach.initial);
                } else {
                    // Only sources of its own kernel: no copy needed.
                    let mut w = read
                        .writes()
                        .filter_map(|(s, i)| Some((place.global_site(aug.body_site(s)?), i)));
                    sink.read(site, iter, access, &mut w, read.initial());
                }
            }
            sink.kernel_done(k);
        }
    }
    Ok(())
}

/// σ of a whole file, put together from its kernels: equal to
/// `dataflow::analyze` on the file's program (docs/architecture.md).
pub fn file_flow(db: &dyn salsa::Database, file: SourceFile) -> Result<Flow, FileFlowError> {
    let (program, (params, max_trips)) = file_sizes(db, file)?;
    let mut asm = Assembler::new(program, params, max_trips);
    each_read(db, file, program, &mut asm)?;
    Ok(asm.finish())
}

/// What [`file_groups`] hands each site's accesses to.
type Each<'a, S, E> = dyn FnMut(&mut S, Vec<AccessGroups>) -> Result<(), E> + 'a;

/// Groups a file's reads and hands each site's accesses on, in site order,
/// as soon as the kernels of that site and of every site before it are done.
struct GroupSink<'a, S, E> {
    state: S,
    grouper: Grouper,
    /// The arrays each site reads, by access index, by site index.
    arrays: Vec<Vec<ArrayId>>,
    /// The kernel of each site (by site index); sites before `next` are out.
    owner: Vec<usize>,
    next: usize,
    n_stmts: usize,
    each: &'a mut Each<'a, S, E>,
    failed: Option<E>,
    /// A spread run's merge, and why it failed.
    #[cfg_attr(not(feature = "dd"), allow(dead_code))]
    merge: Merge<'a>,
    lost: Option<String>,
}

impl<S, E> GroupSink<'_, S, E> {
    fn site(&self, k: usize) -> Site {
        if k < self.n_stmts {
            Site::Stmt(StmtId(k as u32))
        } else {
            Site::Cond(CondId((k - self.n_stmts) as u32))
        }
    }

    fn emit_through(&mut self, kernel: usize) {
        while self.next < self.owner.len() && self.owner[self.next] <= kernel {
            let site = self.site(self.next);
            self.next += 1;
            #[cfg(feature = "dd")]
            if let Some(m) = self.merge.as_mut().and_then(|m| m.as_mut()) {
                match m.site(site, &mut self.grouper) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(why) => {
                        self.lost = Some(why);
                        if let Some(m) = self.merge.as_mut() {
                            **m = None;
                        }
                        continue;
                    }
                }
            }
            let done = self.grouper.take(site);
            if self.failed.is_none() && self.lost.is_none() && !done.is_empty() {
                if let Err(e) = (self.each)(&mut self.state, done) {
                    self.failed = Some(e);
                }
            }
        }
    }
}

impl<S, E> ReadSink for GroupSink<'_, S, E> {
    fn read(
        &mut self,
        site: Site,
        iter: &[i64],
        access: usize,
        writes: &mut dyn Iterator<Item = (Site, &[i64])>,
        initial: bool,
    ) {
        let Some((_, array)) = site_array(&self.arrays, self.n_stmts, site, access) else {
            return;
        };
        self.grouper
            .read(site, iter, access, array, writes, initial);
    }

    fn kernel_done(&mut self, k: usize) {
        self.emit_through(k);
    }
}

/// The site index of `site` (statements, then conditions) and the array
/// its read `access` reads, by `arrays` (`assemble::site_arrays`).
fn site_array(
    arrays: &[Vec<ArrayId>],
    n_stmts: usize,
    site: Site,
    access: usize,
) -> Option<(usize, ArrayId)> {
    let k = site_index(n_stmts, site);
    arrays.get(k).and_then(|a| a.get(access)).map(|&a| (k, a))
}

fn site_index(n_stmts: usize, site: Site) -> usize {
    match site {
        Site::Stmt(s) => s.index(),
        Site::Cond(c) => n_stmts + c.index(),
    }
}

/// A file's parameter values and trip limit.
pub type Sizes = (Vec<(String, i64)>, u32);

/// σ of a whole file grouped per read access (`dataflow::grouped`), without
/// the file's [`Flow`]: `start` makes a state from the program and sizes,
/// then `each` gets it with each site's accesses in site order as soon as
/// they are complete (`arrayflow flow` streams them); the state is given
/// back. Equal to grouping [`file_flow`]. Nothing is handed on when some
/// kernel's analysis failed.
pub fn file_groups<'db, S, E>(
    db: &'db dyn salsa::Database,
    file: SourceFile,
    start: impl FnOnce(&'db Program, Sizes) -> Result<S, E>,
    each: impl FnMut(&mut S, Vec<AccessGroups>) -> Result<(), E>,
) -> Result<Result<S, E>, FileFlowError> {
    #[cfg(feature = "dd")]
    if let Some(c) = crate::dataflow::dd::installed().filter(|c| c.spread && c.processes() > 1) {
        return spread_groups(db, file, &c, start, each);
    }
    groups_merged(db, file, None, None, start, each)
}

/// [`file_groups`] on a spread dd cluster: each process groups the reads
/// of its stretch of each kernel, process 0 merges (`dataflow::merge`) and
/// hands them on; the others hand nothing on. The kernels' exit reads are
/// gathered on every process first (`super::exits`).
#[cfg(feature = "dd")]
fn spread_groups<'db, S, E>(
    db: &'db dyn salsa::Database,
    file: SourceFile,
    cluster: &crate::dataflow::dd::Cluster,
    start: impl FnOnce(&'db Program, Sizes) -> Result<S, E>,
    each: impl FnMut(&mut S, Vec<AccessGroups>) -> Result<(), E>,
) -> Result<Result<S, E>, FileFlowError> {
    let (program, _) = file_sizes(db, file)?;
    check_kernels(db, file, program)?;
    let failed = |why| cluster_failed(db, file, program, why);
    let mut merger = crate::dataflow::merge::Merger::connect(cluster).map_err(failed)?;
    let exits = gather_exits(db, file, &mut merger).map_err(failed)?;
    let mut merge = Some(merger);
    let r = groups_merged(db, file, Some(&mut merge), exits, start, each)?;
    if let Some(m) = merge {
        m.finish().map_err(failed)?;
    }
    Ok(r)
}

/// Every process's exit reads of `file`'s kernels but the last, on every
/// process (`super::exits`); none for a file of one kernel.
#[cfg(feature = "dd")]
fn gather_exits(
    db: &dyn salsa::Database,
    file: SourceFile,
    merger: &mut crate::dataflow::merge::Merger,
) -> Result<Option<Exits>, String> {
    let kernels = kernels(db, file);
    let cluster = crate::dataflow::dd::installed();
    let local = cluster.is_some_and(|c| c.mutate == crate::dataflow::dd::Mutate::LocalExits);
    if kernels.len() < 2 || local {
        return Ok(None);
    }
    let all = merger.all_gather(super::exits::words(db, kernels))?;
    Exits::from_words(&all)
        .map(Some)
        .ok_or_else(|| "the dd engine's exit reads came malformed".to_string())
}

/// A spread run's connections failed: E0305 at the file's first kernel.
#[cfg(feature = "dd")]
fn cluster_failed(
    db: &dyn salsa::Database,
    file: SourceFile,
    program: &Program,
    why: String,
) -> FileFlowError {
    let e = crate::dataflow::DataflowError::Cluster(why);
    let kernel = kernels(db, file)[0];
    FileFlowError::Analysis(super::kernel_error(
        program,
        kernel.program(db),
        kernel.place(db),
        &e,
    ))
}

/// σ of a whole file as one JSON record per read instance
/// (`dataflow::render::json`, `flow --instances`) into `out`; the inner
/// error is `out`'s. On a spread dd cluster, the reads are rendered where
/// they are and the records meet on process 0 (`dataflow::merge`), which
/// alone writes.
pub fn file_instances(
    db: &dyn salsa::Database,
    file: SourceFile,
    out: &mut impl std::io::Write,
) -> Result<std::io::Result<()>, FileFlowError> {
    #[cfg(feature = "dd")]
    if let Some(c) = crate::dataflow::dd::installed().filter(|c| c.spread && c.processes() > 1) {
        return spread_instances(db, file, &c, out);
    }
    let (program, _) = file_sizes(db, file)?;
    let flow = file_flow(db, file)?;
    Ok(crate::dataflow::render::json(program, &flow, out))
}

/// [`file_instances`] on a spread dd cluster: this process's reads
/// rendered straight from its kernels' σ (no file `Flow` is built), site by
/// site, the records meeting on process 0 (`dataflow::merge::Instances`);
/// the kernels' exit reads gathered on every process first.
#[cfg(feature = "dd")]
fn spread_instances(
    db: &dyn salsa::Database,
    file: SourceFile,
    cluster: &crate::dataflow::dd::Cluster,
    out: &mut impl std::io::Write,
) -> Result<std::io::Result<()>, FileFlowError> {
    use crate::dataflow::merge::Fail;
    let (program, (params, trips)) = file_sizes(db, file)?;
    check_kernels(db, file, program)?;
    let failed = |why| cluster_failed(db, file, program, why);
    let mut merger = crate::dataflow::merge::Merger::connect(cluster).map_err(failed)?;
    let exits = gather_exits(db, file, &mut merger).map_err(failed)?;
    let n_stmts = program.stmts().len();
    let stmts = program.stmts();
    let conds = program.conditions();
    let records = crate::dataflow::render::Records::named(program, |s| match s {
        Site::Stmt(x) => stmts[x.index()].label.clone(),
        Site::Cond(c) => conds[c.index()].name.clone(),
    });
    let arrays = crate::dataflow::assemble::site_arrays(program);
    if cluster.is_root() {
        if let Err(e) = crate::dataflow::render::json_head(&params, trips, out) {
            return Ok(Err(e));
        }
    }
    let mut sink = RecordSink {
        stream: merger.instances(records, arrays.len()),
        out,
        arrays,
        n_stmts,
        failed: None,
    };
    each_read_in(db, file, program, &mut sink, true, exits)?;
    let RecordSink {
        stream,
        out,
        failed: stopped,
        ..
    } = sink;
    let done = match stopped {
        Some(f) => Err(f),
        None => stream.finish(out),
    };
    match done {
        Ok(()) => {}
        Err(Fail::Out(e)) => return Ok(Err(e)),
        Err(Fail::Lost(why)) => return Err(failed(why)),
    }
    merger.finish().map_err(failed)?;
    Ok(Ok(()))
}

/// Renders each read handed to it ([`spread_instances`]).
#[cfg(feature = "dd")]
struct RecordSink<'s, 'o, W> {
    stream: crate::dataflow::merge::Instances<'s>,
    out: &'o mut W,
    arrays: Vec<Vec<ArrayId>>,
    n_stmts: usize,
    failed: Option<crate::dataflow::merge::Fail>,
}

#[cfg(feature = "dd")]
impl<W: std::io::Write> ReadSink for RecordSink<'_, '_, W> {
    fn read(
        &mut self,
        site: Site,
        iter: &[i64],
        access: usize,
        writes: &mut dyn Iterator<Item = (Site, &[i64])>,
        initial: bool,
    ) {
        if self.failed.is_some() {
            return;
        }
        let n = self.n_stmts;
        let Some((k, array)) = site_array(&self.arrays, n, site, access) else {
            return;
        };
        // A flow's order of sources: by site, then iteration vector, once.
        let mut w: Vec<(usize, &[i64], Site)> =
            writes.map(|(s, i)| (site_index(n, s), i, s)).collect();
        w.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        w.dedup_by(|a, b| (a.0, a.1) == (b.0, b.1));
        let head = (site, iter, access, array);
        let writes = w.iter().map(|&(_, i, s)| (s, i));
        if let Err(f) = self.stream.read(k, head, writes, initial, self.out) {
            self.failed = Some(f);
        }
    }
}

/// Where a spread run's parts meet ([`spread_groups`]); taken on a failure.
#[cfg(feature = "dd")]
type Merge<'m> = Option<&'m mut Option<crate::dataflow::merge::Merger>>;
#[cfg(not(feature = "dd"))]
type Merge<'m> = Option<&'m mut Option<()>>;

/// [`file_groups`], each site's groups merged with the other processes'
/// first when `merge` is given, earlier kernels' exit reads looked up in
/// `exits` when given.
fn groups_merged<'db, S, E>(
    db: &'db dyn salsa::Database,
    file: SourceFile,
    merge: Merge<'_>,
    exits: Option<Exits>,
    start: impl FnOnce(&'db Program, Sizes) -> Result<S, E>,
    mut each: impl FnMut(&mut S, Vec<AccessGroups>) -> Result<(), E>,
) -> Result<Result<S, E>, FileFlowError> {
    let (program, sizes) = file_sizes(db, file)?;
    let n_stmts = program.stmts().len();
    let arrays = crate::dataflow::assemble::site_arrays(program);
    let mut owner = vec![0; arrays.len()];
    for (k, &kernel) in kernels(db, file).iter().enumerate() {
        let place = kernel.place(db);
        for (ids, base) in [(place.stmts, 0), (place.conds, n_stmts)] {
            for id in ids.start..ids.start + ids.len {
                if let Some(o) = owner.get_mut(base + id as usize) {
                    *o = k;
                }
            }
        }
    }
    // Every kernel analysed before anything is written.
    check_kernels(db, file, program)?;
    let state = match start(program, sizes) {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let mut sink = GroupSink {
        state,
        grouper: Grouper::new(program),
        arrays,
        owner,
        next: 0,
        n_stmts,
        each: &mut each,
        failed: None,
        merge,
        lost: None,
    };
    each_read_in(db, file, program, &mut sink, false, exits)?;
    sink.emit_through(usize::MAX);
    if let Some(why) = sink.lost {
        let e = crate::dataflow::DataflowError::Cluster(why);
        let kernel = kernels(db, file)[0];
        let d = super::kernel_error(program, kernel.program(db), kernel.place(db), &e);
        return Err(FileFlowError::Analysis(d));
    }
    Ok(match sink.failed {
        Some(e) => Err(e),
        None => Ok(sink.state),
    })
}

/// The loops of a kernel (local ids) and the flow dependences each carries,
/// from the kernel's σ: a source in an earlier iteration of a loop around
/// both the write and the read, in the same iteration of the loops outside.
pub fn carried(local: &Program, aug: &Augmented, flow: &Flow) -> Vec<LoopFlow> {
    let site_loops = super::SiteLoops::new(local);
    let mut out = self::loops(local);
    let index: HashMap<CounterId, usize> = out
        .iter()
        .enumerate()
        .map(|(k, l)| (l.counter, k))
        .collect();
    let mut found: HashMap<(CounterId, ArrayId, Site, Site), (i64, i64)> = HashMap::new();
    for read in flow.iter() {
        let Some(to) = aug.body_site(read.site()) else {
            continue;
        };
        for (site, iter) in read.writes() {
            let Some(from) = aug.body_site(site) else {
                continue;
            };
            let shared = site_loops.common(from, to);
            let common = shared.len();
            let r = read.iter();
            let Some(d) = (0..common.min(r.len()).min(iter.len())).find(|&d| r[d] != iter[d])
            else {
                continue;
            };
            let dist = r[d].saturating_sub(iter[d]);
            let e = found
                .entry((shared[d], read.array(), from, to))
                .or_insert((dist, dist));
            e.0 = e.0.min(dist);
            e.1 = e.1.max(dist);
        }
    }
    let mut found: Vec<_> = found.into_iter().collect();
    found.sort_by_key(|&((c, a, f, t), _)| (c, f, t, a));
    for ((counter, array, from, to), (min, max)) in found {
        if let Some(&k) = index.get(&counter) {
            out[k].carried.push(Carried {
                array,
                from,
                to,
                min,
                max,
            });
        }
    }
    out
}

/// Every loop of a program, in textual order, with no dependence yet.
pub fn loops(p: &Program) -> Vec<LoopFlow> {
    let mut out = Vec::new();
    collect_loops(&p.body, &mut out);
    out
}

fn collect_loops(nodes: &[Node], out: &mut Vec<LoopFlow>) {
    for n in nodes {
        match n {
            Node::Stmt(_) => {}
            Node::For(f) => {
                out.push(LoopFlow {
                    counter: f.counter,
                    doall: f.parallel,
                    carried: Vec::new(),
                });
                collect_loops(&f.body, out);
            }
            Node::While(w) => {
                out.push(LoopFlow {
                    counter: w.counter,
                    doall: false,
                    carried: Vec::new(),
                });
                collect_loops(&w.body, out);
            }
            Node::If(i) => {
                for (_, b) in &i.branches {
                    collect_loops(b, out);
                }
                if let Some(b) = &i.otherwise {
                    collect_loops(b, out);
                }
            }
        }
    }
}
