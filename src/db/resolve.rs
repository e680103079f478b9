//! σ across kernels, and facts derived from one kernel's σ.
//!
//! A read of cell c in kernel k whose kernel-local sources include the entry
//! write of c may also read whatever reaches the start of kernel k: walking
//! back over kernels k-1, k-2, ..., the sources of kernel j's exit read of c
//! (its writes), as long as that exit read also reaches kernel j's entry
//! write of c (nothing in kernel j surely overwrote c); past kernel 0, the
//! initial value. docs/architecture.md proves this equals σ of the whole
//! program.

use super::kernel::{Augmented, Role};
use super::{kernel_flow, kernels, parse, settings, Carried, Kernel, LoopFlow, SourceFile};
use crate::dataflow::assemble::Assembler;
use crate::dataflow::{Flow, Read};
use crate::diagnostics::Diagnostic;
use crate::model::{ArrayId, CounterId, Node, Operation, Program, Site};
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
    memo: HashMap<(usize, ArrayId, Vec<i64>), Reach>,
}

impl<'db> Resolver<'db> {
    pub fn new(db: &'db dyn salsa::Database, file: SourceFile) -> Resolver<'db> {
        Resolver {
            db,
            kernels: kernels(db, file),
            memo: HashMap::new(),
        }
    }

    pub fn kernels(&self) -> &'db [Kernel<'db>] {
        self.kernels
    }

    /// What may be in `cell` of array `a` when kernel `k` starts.
    pub fn reach(&mut self, k: usize, a: ArrayId, cell: &[i64]) -> Reach {
        let key = (k, a, cell.to_vec());
        if let Some(r) = self.memo.get(&key) {
            return r.clone();
        }
        let mut out = Reach::default();
        let mut j = k;
        loop {
            if j == 0 {
                out.initial = true;
                break;
            }
            j -= 1;
            if let Some(r) = self.memo.get(&(j + 1, a, cell.to_vec())) {
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
            let op = Operation {
                site: Site::Stmt(exit),
                iter: cell.to_vec(),
            };
            // Only the cells kernel j wrote have exit reads (`facts::Frame`):
            // the exit read of any other cell reaches its entry write alone.
            let Some(read) = flow.get(&op, 0) else {
                continue;
            };
            let place = kernel.place(self.db);
            let mut passes = read.initial();
            for (site, iter) in read.writes() {
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
        self.memo.insert(key, out.clone());
        out
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
                Some(Role::Entry(a)) => {
                    let r = self.reach(k, a, iter);
                    out.add(&r);
                }
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

fn local_role(aug: &Augmented, site: Site) -> Option<Role> {
    match site {
        Site::Stmt(s) => Some(aug.role(s)),
        Site::Cond(_) => None,
    }
}

/// Why σ of a whole file is not available.
pub enum FileFlowError {
    /// The file has errors (the front end's diagnostics say which).
    Invalid,
    /// The analysis of some kernel failed; the diagnostic says where.
    Analysis(Diagnostic),
}

/// σ of a whole file, put together from its kernels: equal to
/// `dataflow::analyze` on the file's program (docs/architecture.md).
pub fn file_flow(db: &dyn salsa::Database, file: SourceFile) -> Result<Flow, FileFlowError> {
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
    let mut asm = Assembler::new(program, params, config.max_trips);
    let mut resolver = Resolver::new(db, file);
    for (k, &kernel) in resolver.kernels().iter().enumerate() {
        let kf = kernel_flow(db, kernel);
        let place = kernel.place(db);
        let flow = kf.result.as_ref().map_err(|e| {
            FileFlowError::Analysis(super::kernel_error(program, kernel.program(db), place, e))
        })?;
        for read in flow.iter() {
            let Some(site) = kf.augmented.body_site(read.site()) else {
                continue;
            };
            let aug = &kf.augmented;
            let crosses = read
                .writes()
                .any(|(s, _)| matches!(local_role(aug, s), Some(Role::Entry(_))));
            if crosses {
                let reach = resolver.sources(k, aug, &read);
                asm.read(
                    place.global_site(site),
                    read.iter(),
                    read.access(),
                    reach.writes.iter().map(|(s, i)| (*s, i.as_slice())),
                    reach.initial,
                );
            } else {
                // Only sources of its own kernel: no copy needed.
                let local = read
                    .writes()
                    .filter_map(|(s, i)| Some((place.global_site(aug.body_site(s)?), i)));
                asm.read(
                    place.global_site(site),
                    read.iter(),
                    read.access(),
                    local,
                    read.initial(),
                );
            }
        }
    }
    Ok(asm.finish())
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
