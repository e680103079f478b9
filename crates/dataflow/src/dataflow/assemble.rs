//! Building a [`Flow`] from reads given one by one: how results computed in
//! pieces (per kernel, by `crate::db`) become one flow that renders, and
//! looks up, exactly like the result of [`super::analyze`].

use super::{Flow, Stats};
use crate::hash::WordHash;
use crate::model::{Program, Site};
use std::collections::HashMap;
use std::sync::OnceLock;

/// Collects reads in execution order (operation, then access index) and
/// their sources; [`Assembler::finish`] makes the [`Flow`].
pub struct Assembler {
    flow: Flow,
    /// Operation ids by site index, then iteration vector.
    ops: Vec<HashMap<Box<[i64]>, u32, WordHash>>,
    pairs: Vec<(u32, u64)>,
    last_reader: Option<u32>,
}

/// The arrays each site reads, by access index: statements, then
/// conditions (the site indices of a [`Flow`]).
pub fn site_arrays(program: &Program) -> Vec<Vec<crate::model::ArrayId>> {
    let stmts = program.stmts().into_iter().map(|s| s.reads());
    let conds = program.conditions().into_iter().map(|c| c.reads());
    stmts
        .chain(conds)
        .map(|reads| reads.iter().map(|a| a.array).collect())
        .collect()
}

impl Assembler {
    /// An empty flow over the sites of `program`, at these sizes.
    pub fn new(program: &Program, params: Vec<(String, i64)>, max_trips: u32) -> Assembler {
        let stmts = program.stmts();
        let conds = program.conditions();
        let flow = Flow {
            stats: Stats::default(),
            params,
            max_trips,
            n_stmts: stmts.len() as u32,
            site_names: stmts
                .iter()
                .map(|s| s.label.clone())
                .chain(conds.iter().map(|c| c.name.clone()))
                .collect(),
            site_arrays: site_arrays(program),
            op_site: Vec::new(),
            op_iter_start: vec![0],
            iters: Vec::new(),
            slots: Vec::new(),
            src_start: vec![0],
            src: Vec::new(),
            initial: Vec::new(),
            by_site: OnceLock::new(),
        };
        let n_sites = flow.site_names.len();
        Assembler {
            flow,
            ops: vec![HashMap::default(); n_sites],
            pairs: Vec::new(),
            last_reader: None,
        }
    }

    fn op(&mut self, site: Site, iter: &[i64]) -> u32 {
        let k = self.flow.site_index(site);
        if let Some(&o) = self.ops.get(k).and_then(|m| m.get(iter)) {
            return o;
        }
        let o = self.flow.op_site.len() as u32;
        self.flow.op_site.push(k as u32);
        self.flow.iters.extend_from_slice(iter);
        self.flow.op_iter_start.push(self.flow.iters.len() as u32);
        if let Some(m) = self.ops.get_mut(k) {
            m.insert(iter.into(), o);
        }
        o
    }

    /// Adds the read `access` of operation (`site`, `iter`), with the writes it
    /// may read from and whether it may read the initial value. Reads must
    /// come in execution order of their operations, then by access index.
    pub fn read<'a>(
        &mut self,
        site: Site,
        iter: &[i64],
        access: usize,
        writes: impl IntoIterator<Item = (Site, &'a [i64])>,
        initial: bool,
    ) {
        let op = match self.last_reader {
            Some(o)
                if self.flow.op_site[o as usize] as usize == self.flow.site_index(site)
                    && self.flow.op_iter(o) == iter =>
            {
                o
            }
            _ => self.op(site, iter),
        };
        self.last_reader = Some(op);
        let slot = self.flow.slots.len() as u32;
        self.flow.slots.push(crate::facts::Slot {
            op,
            access: access as u32,
        });
        for (s, it) in writes {
            let o = self.op(s, it);
            let key = (self.flow.site_index(s) as u64) << 32 | u64::from(o);
            self.pairs.push((slot, key));
        }
        if self.flow.initial.len() * 64 <= slot as usize {
            self.flow.initial.push(0);
        }
        if initial {
            self.flow.set_initial(slot);
        }
        let end = slot as usize + 1;
        // Sources sort by (site, operation id); operation ids of one site
        // must follow iteration order, which `finish` restores.
        self.flow.finish_slots(slot as usize, end, &mut self.pairs);
        self.flow.stats.read_instances += 1;
    }

    /// The flow, with every operation renumbered so that ids follow
    /// (site, iteration vector) order, as in an analysed flow.
    pub fn finish(self) -> Flow {
        let mut flow = self.flow;
        let n = flow.op_site.len();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by(|&a, &b| {
            flow.op_site[a as usize]
                .cmp(&flow.op_site[b as usize])
                .then_with(|| flow.op_iter(a).cmp(flow.op_iter(b)))
        });
        let mut new_id = vec![0u32; n];
        for (k, &o) in order.iter().enumerate() {
            new_id[o as usize] = k as u32;
        }
        let mut op_site = Vec::with_capacity(n);
        let mut iters = Vec::with_capacity(flow.iters.len());
        let mut starts = Vec::with_capacity(n + 1);
        starts.push(0);
        for &o in &order {
            op_site.push(flow.op_site[o as usize]);
            iters.extend_from_slice(flow.op_iter(o));
            starts.push(iters.len() as u32);
        }
        for s in &mut flow.slots {
            s.op = new_id[s.op as usize];
        }
        for s in 0..flow.slots.len() {
            let range = flow.src_start[s] as usize..flow.src_start[s + 1] as usize;
            let srcs = &mut flow.src[range];
            for o in srcs.iter_mut() {
                *o = new_id[*o as usize];
            }
            srcs.sort_unstable();
        }
        flow.op_site = op_site;
        flow.iters = iters;
        flow.op_iter_start = starts;
        flow
    }
}
