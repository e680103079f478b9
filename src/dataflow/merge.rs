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

    /// Sends what is buffered (the others) and closes.
    pub fn finish(self) -> Result<(), String> {
        if let Some(mut out) = self.to {
            out.flush()
                .map_err(|e| format!("process {}: the parts: {e}", self.me))?;
        }
        Ok(())
    }
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
