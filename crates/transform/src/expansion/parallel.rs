//! Which loops carry a dependence at the analysed sizes: in the original
//! program, after maximal static expansion, and in single-assignment form.
//!
//! A loop L carries a dependence when two accesses to the same memory cell,
//! at least one a write, happen in different iterations of L within the same
//! iteration of the loops around L. Memory cells are: the original cells;
//! after MSE, (cell, label), with a private cell for each dead write
//! (Theorem 1) and the initial contents for reads no live write shares; in
//! single-assignment form, one cell per write operation, reads going to every
//! possible source (a φ reads them all) and to the original cell when the
//! initial value may reach them.

use super::classes::NONE;
use super::Expansion;
use crate::budget::Exceeded;
use crate::dataflow::render::site_loops;
use crate::facts::Facts;
use crate::model::{CounterId, Node, Program};

/// Kinds of dependence a loop carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Carried {
    pub flow: bool,
    pub anti: bool,
    pub output: bool,
}

impl Carried {
    pub fn any(&self) -> bool {
        self.flow || self.anti || self.output
    }

    /// `flow, anti` or `none`.
    pub fn describe(&self) -> String {
        let mut v = Vec::new();
        if self.flow {
            v.push("flow");
        }
        if self.anti {
            v.push("anti");
        }
        if self.output {
            v.push("output");
        }
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    }
}

/// One loop of the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopReport {
    pub counter: CounterId,
    /// Its counter's name (a `while` loop's generated name when unnamed).
    pub name: String,
    /// Loops around it.
    pub depth: usize,
    pub original: Carried,
    pub mse: Carried,
    pub sa: Carried,
}

impl LoopReport {
    /// The paper's claim for this loop: parallel in single-assignment form
    /// implies parallel after MSE.
    pub fn mse_keeps_sa(&self) -> bool {
        self.sa.any() || !self.mse.any()
    }
}

const TAG_CELL: u64 = 0;
const TAG_LABEL: u64 = 1 << 62;
const TAG_DEAD: u64 = 2 << 62;
const TAG_SA: u64 = 3 << 62;

/// One access to one memory cell.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    mem: u64,
    op: u32,
    write: bool,
}

/// The loops of `program`, each with the dependences it carries. The three
/// memories are built one at a time, each refused before it is allocated
/// when it would not fit in the expansion's memory budget.
pub fn report(program: &Program, exp: &Expansion) -> Result<Vec<LoopReport>, Exceeded> {
    let f = &exp.inst.facts;
    let loops_of = site_loops(program);
    let loops = loops(program);
    let mut found = vec![[Carried::default(); 3]; loops.len()];
    let rw: usize = (0..f.n_accs() as u32)
        .map(|x| usize::from(f.is_read(x)) + usize::from(f.is_write(x)))
        .sum();
    for (k, what) in ["original", "expanded", "single-assignment"]
        .iter()
        .enumerate()
    {
        // Each access instance is at most one read and one write event,
        // plus, in single-assignment form, one read per source of its slot.
        let n = match k {
            2 => sa(exp, |_| {}),
            _ => rw,
        };
        // Twice: the events and the buffer that sorts them.
        let bytes = (n as u64).saturating_mul(2 * std::mem::size_of::<Event>() as u64);
        let describe = || format!("the {n} memory events of the {what} program's loops, sorted");
        crate::budget::reserve(bytes, exp.max_memory, describe)?;
        let events = match k {
            0 => original(f),
            1 => mse(exp, rw),
            _ => {
                let mut v = Vec::with_capacity(n);
                sa(exp, |e| v.push(e));
                sorted(v)
            }
        };
        for (i, c) in carried_all(f, &loops_of, &events, &loops)
            .into_iter()
            .enumerate()
        {
            found[i][k] = c;
        }
    }
    Ok(loops
        .into_iter()
        .zip(found)
        .map(|((counter, depth), [original, mse, sa])| LoopReport {
            counter,
            name: program.counter_decl(counter).name.clone(),
            depth,
            original,
            mse,
            sa,
        })
        .collect())
}

/// The loops of `program` that carry a dependence on its own cells, from
/// its access facts alone (no σ, no classes): what `report` gives as
/// `original` for every loop.
pub fn carried_in_place(program: &Program, facts: &Facts) -> Vec<(CounterId, Carried)> {
    let loops_of = site_loops(program);
    let events = original(facts);
    let loops = loops(program);
    let found = carried_all(facts, &loops_of, &events, &loops);
    loops.into_iter().map(|(c, _)| c).zip(found).collect()
}

/// Every loop (`for` and `while`) with the number of loops around it, in
/// program order.
pub fn loops(program: &Program) -> Vec<(CounterId, usize)> {
    let mut out = Vec::new();
    collect_loops(&program.body, 0, &mut out);
    out
}

/// Every loop's counter with its span (the whole `for` or `while`), in
/// program order.
pub fn loop_spans(program: &Program) -> Vec<(CounterId, crate::model::Span)> {
    fn walk(nodes: &[Node], out: &mut Vec<(CounterId, crate::model::Span)>) {
        for n in nodes {
            match n {
                Node::For(f) => {
                    out.push((f.counter, f.span));
                    walk(&f.body, out);
                }
                Node::While(w) => {
                    out.push((w.counter, w.span));
                    walk(&w.body, out);
                }
                Node::If(i) => {
                    for (_, b) in &i.branches {
                        walk(b, out);
                    }
                    if let Some(b) = &i.otherwise {
                        walk(b, out);
                    }
                }
                Node::Stmt(_) => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(&program.body, &mut out);
    out
}

/// How reports name loops, by counter id: "i@12", the counter and the line
/// of its loop (`lines`, by counter id), so that sibling loops with one
/// counter name are told apart; the bare name where the line is unknown.
pub fn loop_names(program: &Program, lines: &[Option<u32>]) -> Vec<String> {
    (program.counters.iter().enumerate())
        .map(|(k, c)| match lines.get(k).copied().flatten() {
            Some(l) => format!("{}@{l}", c.name),
            None => c.name.clone(),
        })
        .collect()
}

/// The lines (`lines`, by counter id of `p`) carried over to `q`, a program
/// made from `p` that keeps its loops in order (an expanded or privatized
/// program, printed and read back): the k-th loop with a given counter
/// name in `q` is the k-th with that name in `p`. Loops `q` adds have
/// names `p` does not use, and no line.
pub fn lines_in(p: &Program, lines: &[Option<u32>], q: &Program) -> Vec<Option<u32>> {
    let by_name = |prog: &Program| {
        let mut m: std::collections::HashMap<String, Vec<CounterId>> = Default::default();
        for (c, _) in loops(prog) {
            m.entry(prog.counter_decl(c).name.clone())
                .or_default()
                .push(c);
        }
        m
    };
    let (from, to) = (by_name(p), by_name(q));
    let mut out = vec![None; q.counters.len()];
    for (name, cs) in &to {
        let Some(ps) = from.get(name) else { continue };
        // Only when both have as many: else which is which is a guess.
        if ps.len() == cs.len() {
            for (c, pc) in cs.iter().zip(ps) {
                out[c.index()] = lines.get(pc.index()).copied().flatten();
            }
        }
    }
    out
}

fn collect_loops(nodes: &[Node], depth: usize, out: &mut Vec<(CounterId, usize)>) {
    for n in nodes {
        match n {
            Node::For(f) => {
                out.push((f.counter, depth));
                collect_loops(&f.body, depth + 1, out);
            }
            Node::While(w) => {
                out.push((w.counter, depth));
                collect_loops(&w.body, depth + 1, out);
            }
            Node::If(i) => {
                for (_, b) in &i.branches {
                    collect_loops(b, depth, out);
                }
                if let Some(b) = &i.otherwise {
                    collect_loops(b, depth, out);
                }
            }
            Node::Stmt(_) => {}
        }
    }
}

/// What each loop of `loops` carries, in one pass over `events`: each
/// event goes to every loop around its site, which keeps the scan of
/// [`carried`] for the events under it. A scan per loop made the report
/// quadratic in loops.
fn carried_all(
    facts: &Facts,
    loops_of: &[Vec<CounterId>],
    events: &[Event],
    loops: &[(CounterId, usize)],
) -> Vec<Carried> {
    let mut at: Vec<Option<usize>> = Vec::new();
    for (k, &(l, _)) in loops.iter().enumerate() {
        if at.len() <= l.index() {
            at.resize(l.index() + 1, None);
        }
        at[l.index()] = Some(k);
    }
    let mut scans = vec![Scan::default(); loops.len()];
    for (i, ev) in events.iter().enumerate() {
        arrayflow_model::cancel::poll_every(i);
        let site = facts.op_site[ev.op as usize] as usize;
        let Some(around) = loops_of.get(site) else {
            continue;
        };
        for (d, l) in around.iter().enumerate() {
            let Some(k) = at.get(l.index()).copied().flatten() else {
                continue;
            };
            if loops[k].1 == d {
                scans[k].step(facts, ev, d);
            }
        }
    }
    scans.into_iter().map(|s| s.carried).collect()
}

/// One loop's scan of the events under it, in order: per cell and outer
/// iteration, the least iteration of this loop that wrote and that read.
#[derive(Clone, Default)]
struct Scan {
    carried: Carried,
    prev: Option<Event>,
    min_w: i64,
    min_r: i64,
}

impl Scan {
    fn step(&mut self, facts: &Facts, ev: &Event, d: usize) {
        let c = &mut self.carried;
        if c.flow && c.anti && c.output {
            return;
        }
        let it = facts.op_iter(ev.op);
        let same = self
            .prev
            .is_some_and(|p| p.mem == ev.mem && facts.op_iter(p.op)[..d] == it[..d]);
        if !same {
            (self.min_w, self.min_r) = (i64::MAX, i64::MAX);
        }
        let v = it[d];
        if ev.write {
            c.output |= self.min_w < v;
            c.anti |= self.min_r < v;
            self.min_w = self.min_w.min(v);
        } else {
            c.flow |= self.min_w < v;
            self.min_r = self.min_r.min(v);
        }
        self.prev = Some(*ev);
    }
}

/// One loop at a time: the plain scan [`carried_all`] must agree with.
#[cfg(test)]
fn carried(
    facts: &Facts,
    loops_of: &[Vec<CounterId>],
    events: &[Event],
    l: CounterId,
    d: usize,
) -> Carried {
    let mut c = Carried::default();
    let mut prev: Option<Event> = None;
    let (mut min_w, mut min_r) = (i64::MAX, i64::MAX);
    for ev in events {
        let site = facts.op_site[ev.op as usize] as usize;
        if loops_of.get(site).and_then(|v| v.get(d)) != Some(&l) {
            continue;
        }
        let it = facts.op_iter(ev.op);
        let same = prev.is_some_and(|p| p.mem == ev.mem && facts.op_iter(p.op)[..d] == it[..d]);
        if !same {
            (min_w, min_r) = (i64::MAX, i64::MAX);
        }
        let v = it[d];
        if ev.write {
            c.output |= min_w < v;
            c.anti |= min_r < v;
            min_w = min_w.min(v);
        } else {
            c.flow |= min_w < v;
            min_r = min_r.min(v);
        }
        prev = Some(*ev);
        if c.flow && c.anti && c.output {
            break;
        }
    }
    c
}

/// `v` in (mem, op, write) order without duplicates. The events come in
/// instance order (by operation, an operation's reads before its writes),
/// so a stable sort on `mem` alone gives the whole order: a radix sort, 16
/// bits a pass, skipping the digits every event shares. Linear where a
/// comparison sort was most of an expansion's time, and it polls for
/// cancellation as it goes. Events in another order are sorted whole.
fn sorted(mut v: Vec<Event>) -> Vec<Event> {
    if !v
        .windows(2)
        .all(|w| (w[0].op, w[0].write) <= (w[1].op, w[1].write))
    {
        v.sort_unstable();
        v.dedup();
        return v;
    }
    let (or, and) = (v.iter()).fold((0u64, u64::MAX), |(o, a), e| (o | e.mem, a & e.mem));
    let mut out = v.clone();
    for shift in (0..64).step_by(16) {
        if (or ^ and) >> shift & 0xffff == 0 {
            continue;
        }
        let digit = |e: &Event| (e.mem >> shift & 0xffff) as usize;
        let mut start = vec![0usize; (1 << 16) + 1];
        for e in &v {
            start[digit(e) + 1] += 1;
        }
        for d in 0..1 << 16 {
            start[d + 1] += start[d];
        }
        for (i, e) in v.iter().enumerate() {
            arrayflow_model::cancel::poll_every(i);
            let at = &mut start[digit(e)];
            out[*at] = *e;
            *at += 1;
        }
        std::mem::swap(&mut v, &mut out);
    }
    v.dedup();
    v
}

/// Every access instance on its original cell, in [`sorted`]'s order by a
/// counting sort on the cell: instances come in execution order and an
/// operation's reads before its writes, so (cell, op, write) order is
/// instance order within a cell.
fn original(f: &Facts) -> Vec<Event> {
    let cells = f.acc_cell.iter().max().map_or(0, |&c| c as usize + 1);
    let mut start = vec![0usize; cells + 1];
    for x in 0..f.n_accs() {
        let n = usize::from(f.is_read(x as u32)) + usize::from(f.is_write(x as u32));
        start[f.acc_cell[x] as usize + 1] += n;
    }
    for c in 0..cells {
        start[c + 1] += start[c];
    }
    let none = Event {
        mem: 0,
        op: 0,
        write: false,
    };
    let mut v = vec![none; start[cells]];
    for x in 0..f.n_accs() as u32 {
        let cell = f.acc_cell[x as usize];
        let op = f.op(x);
        for (on, write) in [(f.is_read(x), false), (f.is_write(x), true)] {
            if on {
                let at = &mut start[cell as usize];
                v[*at] = Event {
                    mem: TAG_CELL | u64::from(cell),
                    op,
                    write,
                };
                *at += 1;
            }
        }
    }
    debug_assert!(v.windows(2).all(|w| w[0] <= w[1]));
    v.dedup();
    v
}

/// (cell, label) cells; dead writes private.
fn mse(exp: &Expansion, events: usize) -> Vec<Event> {
    let f = &exp.inst.facts;
    let c = &exp.classes;
    let mut v = Vec::with_capacity(events);
    let mut w = 0usize;
    for x in 0..f.n_accs() as u32 {
        let cell = u64::from(f.acc_cell[x as usize]);
        let op = f.op(x);
        if f.is_read(x) {
            let label = c.read_label(f.acc_slot[x as usize] as usize).unwrap_or(0);
            let mem = TAG_LABEL | u64::from(label) << 32 | cell;
            v.push(Event {
                mem,
                op,
                write: false,
            });
        }
        if f.is_write(x) {
            while c.write_ops[w] != op {
                w += 1;
            }
            let mem = match c.write_label(w) {
                Some(l) => TAG_LABEL | u64::from(l) << 32 | cell,
                None => TAG_DEAD | w as u64,
            };
            v.push(Event {
                mem,
                op,
                write: true,
            });
        }
    }
    sorted(v)
}

/// One cell per write operation; reads of every possible source. Each event
/// goes to `push`; returns how many there were.
fn sa(exp: &Expansion, mut push: impl FnMut(Event)) -> usize {
    let f = &exp.inst.facts;
    let c = &exp.classes;
    let flow = &exp.inst.flow;
    let mut op_write = vec![NONE; f.n_ops()];
    for (w, &op) in c.write_ops.iter().enumerate() {
        op_write[op as usize] = w as u32;
    }
    let mut n = 0;
    let mut put = |mem: u64, op: u32, write: bool| {
        n += 1;
        push(Event { mem, op, write });
    };
    let mut last_slot = NONE;
    for x in 0..f.n_accs() as u32 {
        let op = f.op(x);
        if f.is_read(x) {
            let slot = f.acc_slot[x as usize];
            if slot != last_slot {
                last_slot = slot;
                for &o in flow.source_ops(slot as usize) {
                    put(TAG_SA | u64::from(op_write[o as usize]), op, false);
                }
            }
            if exp.inst.initial_at(x) {
                put(TAG_CELL | u64::from(f.acc_cell[x as usize]), op, false);
            }
        }
        if f.is_write(x) {
            put(TAG_SA | u64::from(op_write[op as usize]), op, true);
        }
    }
    n
}

/// The line (from 1) of every loop's `for` (or `while`) in `source`, the
/// text `program` was read from, by counter id: reports name loops
/// `i@LINE`.
pub fn source_lines(program: &Program, source: &str) -> Vec<Option<u32>> {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(source.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let mut out = vec![None; program.counters.len()];
    for (c, span) in loop_spans(program) {
        if !span.is_none() {
            let line = starts.partition_point(|&s| s <= span.start as usize);
            out[c.index()] = Some(line as u32);
        }
    }
    out
}

/// The `for` loops of `emitted` marked `doall`, in program order, named
/// `i@LINE` by the lines (`lines`, by counter id of `original`) of the
/// loops of `original` they come from.
pub fn doall_names(original: &Program, lines: &[Option<u32>], emitted: &Program) -> Vec<String> {
    let lines = lines_in(original, lines, emitted);
    let names = loop_names(emitted, &lines);
    (crate::model::nodes::fors(&emitted.body).into_iter())
        .filter(|f| f.parallel)
        .map(|f| names[f.counter.index()].clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass scan agrees with one scan per loop on the original,
    /// expanded and single-assignment memories.
    #[test]
    fn one_pass_agrees_with_a_scan_per_loop() {
        let programs = [
            "param N = 5;\nreal A[0..N+1];\nfor i = 1 to N do\n  S: A[i] = A[i + 1];\nend\nfor i = 1 to N do\n  T: A[i] = A[i - 1];\nend\n",
            "param N = 4;\nreal A[0..N, 0..N];\nreal s;\nfor t = 1 to 3 do\n  for i = 1 to N do\n    for j = 1 to N do\n      S: A[i, j] = A[i - 1, j] + A[i, j - 1];\n    end\n    U: s = s + A[i, N];\n  end\nend\n",
            "param N = 6;\nreal x;\nreal B[0..N];\nfor i = 0 to N do\n  P: x = B[i];\n  if i >= 2 then\n    Q: B[i] = x;\n  end\nend\n",
        ];
        for text in programs {
            let p = crate::readback::compile(text, "a program").expect("program");
            let exp = crate::expansion::expand(&p, &crate::dataflow::Config::default())
                .expect("expanded");
            let f = &exp.inst.facts;
            let loops_of = site_loops(&p);
            let loops = loops(&p);
            let rw: usize = (0..f.n_accs() as u32)
                .map(|x| usize::from(f.is_read(x)) + usize::from(f.is_write(x)))
                .sum();
            let mut single = Vec::new();
            sa(&exp, |e| single.push(e));
            let mut any = false;
            for events in [original(f), mse(&exp, rw), sorted(single)] {
                let all = carried_all(f, &loops_of, &events, &loops);
                for (k, &(l, d)) in loops.iter().enumerate() {
                    assert_eq!(all[k], carried(f, &loops_of, &events, l, d), "{text}");
                    any |= all[k].any();
                }
            }
            assert!(any, "each program has a carried dependence: {text}");
        }
    }

    /// The radix sort gives what a comparison sort gives, on events in
    /// instance order (mems over every digit, repeats included) and on
    /// events in any order.
    #[test]
    fn radix_sort_agrees_with_a_comparison_sort() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..40 {
            let n = 1 + (next() % 3000) as usize;
            let mut v: Vec<Event> = (0..n)
                .map(|_| Event {
                    mem: match round % 4 {
                        0 => next() % 50,
                        1 => TAG_LABEL | ((next() % 7) << 32) | (next() % 40),
                        2 => next(),
                        _ => TAG_DEAD | (next() % 5),
                    },
                    op: (next() % 400) as u32,
                    write: next() % 2 == 0,
                })
                .collect();
            if round % 5 != 4 {
                v.sort_by_key(|e| (e.op, e.write));
            }
            let mut want = v.clone();
            want.sort_unstable();
            want.dedup();
            assert!(sorted(v) == want, "round {round}");
        }
    }
}
