//! The grouped output of a spread dd run (`dd::Cluster::spread`,
//! docs/scaling.md): each process groups its own stretch's readers, and for
//! each site, in site order, processes 1..P send their unfinished groups
//! ([`Grouper::take_partial`], as words) to process 0, which absorbs them
//! in process order ([`Grouper::absorb`]) after its own and prints. The
//! stretches are consecutive in execution order, so the result is that of
//! one grouper fed every read (tests/flow_grouped.rs). Process 0 holds one
//! site's parts at a time; TCP's flow control holds the senders back.

use super::dd::{sockets, Cluster};
use super::grouped::{Grouper, PartialAccess};
use crate::model::Site;
use std::io::{BufReader, BufWriter, Read, Write};
use std::net::TcpStream;

/// One end of the parts' connections.
pub struct Merger {
    me: usize,
    /// Process 0: a reader per other process, in process order.
    from: Vec<BufReader<TcpStream>>,
    /// The others: the writer to process 0.
    to: Option<BufWriter<TcpStream>>,
    /// Test mutation: absorb the parts in reverse process order.
    reversed: bool,
}

impl Merger {
    /// Connects the processes of `cluster` anew (after the dd run).
    pub fn connect(cluster: &Cluster) -> Result<Merger, String> {
        let me = cluster.process;
        let mut streams = sockets(cluster)?;
        let mut take = |k: usize| {
            streams[k]
                .take()
                .ok_or_else(|| format!("process {me} has no connection to process {k}"))
        };
        let (mut from, mut to) = (Vec::new(), None);
        if me == 0 {
            for k in 1..cluster.processes() {
                from.push(BufReader::new(take(k)?));
            }
        } else {
            to = Some(BufWriter::new(take(0)?));
        }
        Ok(Merger {
            me,
            from,
            to,
            reversed: cluster.mutate == super::dd::Mutate::Order,
        })
    }

    /// Site `site` of `grouper` (fed this process's readers): on process 0,
    /// every process's groups absorbed, `true` (to print); elsewhere its
    /// groups sent to process 0, `false`.
    pub fn site(&mut self, site: Site, grouper: &mut Grouper) -> Result<bool, String> {
        let lost = |e: std::io::Error| format!("the dd engine's parts: {e}");
        if let Some(out) = &mut self.to {
            let parts = grouper.take_partial(site);
            let mut words = vec![parts.len() as i64];
            for p in parts {
                let w = p.words();
                words.push(w.len() as i64);
                words.extend(w);
            }
            out.write_all(&(words.len() as u64).to_le_bytes())
                .map_err(lost)?;
            for w in words {
                out.write_all(&w.to_le_bytes()).map_err(lost)?;
            }
            return Ok(false);
        }
        let mut order: Vec<usize> = (0..self.from.len()).collect();
        if self.reversed {
            order.reverse();
        }
        for k in order {
            let parts = read_parts(&mut self.from[k])
                .map_err(|e| format!("process {} stopped before sending its part: {e}", k + 1))?;
            grouper.absorb(site, parts);
        }
        Ok(true)
    }

    /// `--instances` (`flow`'s one JSON record per read instance) of a
    /// spread run, `flow` being this process's readers' ([`super::part`]):
    /// site by site in order, process 0 writes its own records, then each
    /// other process's, copied as they come; the others send theirs in
    /// frames. A site's records are in execution order and the stretches
    /// consecutive, so this is [`super::render::json`] of the whole σ. An
    /// error writing `out` is the inner one.
    pub fn instances(
        &mut self,
        program: &crate::model::Program,
        flow: &super::Flow,
        out: &mut impl Write,
    ) -> Result<std::io::Result<()>, String> {
        let lost = |e: std::io::Error| format!("the dd engine's records: {e}");
        let records = super::render::Records::new(program, flow);
        let n_sites = program.stmts().len() + program.conditions().len();
        let mut reads = flow.sorted().peekable();
        let mut buf = Vec::new();
        if let Some(to) = &mut self.to {
            for k in 0..n_sites {
                let mut any = false;
                while let Some(r) = reads.next_if(|r| flow.site_index(r.site()) == k) {
                    if any {
                        buf.extend_from_slice(b",\n");
                    }
                    any = true;
                    records.write(&r, &mut buf).map_err(lost)?;
                    if buf.len() >= FRAME {
                        frame(to, &buf).map_err(lost)?;
                        buf.clear();
                    }
                }
                if !buf.is_empty() {
                    frame(to, &buf).map_err(lost)?;
                    buf.clear();
                }
                // The site's end.
                frame(to, &[]).map_err(lost)?;
            }
            return Ok(Ok(()));
        }
        let mut order: Vec<usize> = (0..self.from.len()).collect();
        if self.reversed {
            order.reverse();
        }
        let mut first = true;
        let mut run = || -> Result<std::io::Result<()>, String> {
            if let Err(e) = super::render::json_head(flow, out) {
                return Ok(Err(e));
            }
            for k in 0..n_sites {
                while let Some(r) = reads.next_if(|r| flow.site_index(r.site()) == k) {
                    let sep: &[u8] = if first { b"\n" } else { b",\n" };
                    first = false;
                    if let Err(e) = out.write_all(sep).and_then(|()| records.write(&r, out)) {
                        return Ok(Err(e));
                    }
                }
                for &p in &order {
                    let mut started = false;
                    loop {
                        let bytes = read_frame(&mut self.from[p], &mut buf).map_err(|e| {
                            format!("process {} stopped before sending its records: {e}", p + 1)
                        })?;
                        if bytes == 0 {
                            break;
                        }
                        let sep: &[u8] = match (started, first) {
                            (true, _) => b"",
                            (false, true) => b"\n",
                            (false, false) => b",\n",
                        };
                        started = true;
                        first = false;
                        if let Err(e) = out.write_all(sep).and_then(|()| out.write_all(&buf)) {
                            return Ok(Err(e));
                        }
                    }
                }
            }
            Ok(super::render::json_tail(out))
        };
        run()
    }

    /// Sends what is buffered (the others) and closes.
    pub fn finish(self) -> Result<(), String> {
        if let Some(mut out) = self.to {
            out.flush()
                .map_err(|e| format!("process {}: the parts: {e}", self.me))?;
        }
        Ok(())
    }
}

/// Bytes of records sent in one frame ([`Merger::instances`]).
const FRAME: usize = 1 << 16;

/// A frame: its length, then its bytes (none: the end of a site).
fn frame(to: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    to.write_all(&(bytes.len() as u64).to_le_bytes())?;
    to.write_all(bytes)
}

/// The next frame into `buf`; its length.
fn read_frame(r: &mut impl Read, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut word = [0u8; 8];
    r.read_exact(&mut word)?;
    let n = u64::from_le_bytes(word) as usize;
    if n > 1 << 30 {
        let bad = std::io::Error::new(std::io::ErrorKind::InvalidData, "a malformed frame");
        return Err(bad);
    }
    buf.resize(n, 0);
    r.read_exact(buf)?;
    Ok(n)
}

/// One site's parts from one process.
fn read_parts(r: &mut impl Read) -> std::io::Result<Vec<PartialAccess>> {
    let mut word = [0u8; 8];
    r.read_exact(&mut word)?;
    let n = u64::from_le_bytes(word) as usize;
    let mut words = Vec::with_capacity(n.min(1 << 20));
    for _ in 0..n {
        r.read_exact(&mut word)?;
        words.push(i64::from_le_bytes(word));
    }
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "malformed parts");
    let (&count, mut rest) = words.split_first().ok_or_else(bad)?;
    let mut out = Vec::new();
    for _ in 0..count {
        let (&len, tail) = rest.split_first().ok_or_else(bad)?;
        let (one, tail) = tail.split_at_checked(len as usize).ok_or_else(bad)?;
        out.push(PartialAccess::from_words(one).ok_or_else(bad)?);
        rest = tail;
    }
    Ok(out)
}
