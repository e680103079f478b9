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
use super::render::Records;
use crate::model::Site;
use std::io::{BufReader, BufWriter, Read, Write};
use std::net::TcpStream;

/// One end of the parts' connections.
pub struct Merger {
    me: usize,
    /// The number of processes.
    n: usize,
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
            n: cluster.processes(),
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
            send(out, &words).map_err(lost)?;
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
    /// spread run over `n_sites` sites ([`Instances`]).
    pub fn instances(&mut self, records: Records, n_sites: usize) -> Instances<'_> {
        let mut order: Vec<usize> = (0..self.from.len()).collect();
        if self.reversed {
            order.reverse();
        }
        Instances {
            merger: self,
            records,
            n_sites,
            site: 0,
            any: false,
            first: true,
            buf: Vec::new(),
            order,
        }
    }

    /// Every process's `mine`, in process order, on every process: the
    /// others send theirs to process 0, which sends the whole back to each
    /// (a file's exit reads, `db::exits`). Before any site.
    pub fn all_gather(&mut self, mine: Vec<i64>) -> Result<Vec<Vec<i64>>, String> {
        let lost = |e: std::io::Error| format!("the dd engine's exit reads: {e}");
        let n = self.n;
        if let Some(out) = &mut self.to {
            send(out, &mine).and_then(|()| out.flush()).map_err(lost)?;
            // Nothing else comes back from process 0: reading ahead is safe.
            let mut back = BufReader::new(out.get_mut());
            let all: std::io::Result<Vec<_>> = (0..n).map(|_| receive(&mut back)).collect();
            return all.map_err(lost);
        }
        let mut all = vec![mine];
        for (k, from) in self.from.iter_mut().enumerate() {
            let got = receive(from)
                .map_err(|e| format!("process {} stopped before its exit reads: {e}", k + 1))?;
            all.push(got);
        }
        for from in &mut self.from {
            let mut to = BufWriter::new(from.get_mut());
            let sent: std::io::Result<()> = all.iter().try_for_each(|l| send(&mut to, l));
            sent.and_then(|()| to.flush()).map_err(lost)?;
        }
        Ok(all)
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

/// `--instances` of a spread run, this process's reads given site by site
/// in order (within a site in execution order, as `Flow::sorted` lists
/// them): process 0 writes its own records of a site, then each other
/// process's, copied as they come, before the next site; the others send
/// theirs in frames, a site's end an empty one. The stretches are
/// consecutive in execution order, so the document is
/// [`super::render::json`] of the whole σ. Process 0 holds one frame at a
/// time; TCP's flow control holds the others back.
pub struct Instances<'m> {
    merger: &'m mut Merger,
    records: Records,
    n_sites: usize,
    /// The site being written; those before are done.
    site: usize,
    /// A record of `site` was made here (the others).
    any: bool,
    /// No record was written yet (process 0).
    first: bool,
    buf: Vec<u8>,
    order: Vec<usize>,
}

/// Why [`Instances`] stopped.
pub enum Fail {
    /// The connections: another process stopped.
    Lost(String),
    /// Writing the output.
    Out(std::io::Error),
}

impl Instances<'_> {
    /// The read (site index `k`, iteration vector, access, array) with its
    /// sources and initial flag; `k` is never below the last one given.
    pub fn read<'a>(
        &mut self,
        k: usize,
        head: (crate::model::Site, &[i64], usize, crate::model::ArrayId),
        writes: impl Iterator<Item = (crate::model::Site, &'a [i64])>,
        initial: bool,
        out: &mut impl Write,
    ) -> Result<(), Fail> {
        if k < self.site {
            return Err(Fail::Lost("the reads came out of site order".to_string()));
        }
        self.close_before(k, out)?;
        if self.merger.to.is_some() {
            if self.any {
                self.buf.extend_from_slice(b",\n");
            }
            self.any = true;
            let buf = &mut self.buf;
            self.records
                .write_parts(head, writes, initial, buf)
                .map_err(Fail::Out)?;
            if self.buf.len() >= FRAME {
                self.send_frame()?;
            }
            return Ok(());
        }
        let sep: &[u8] = if self.first { b"\n" } else { b",\n" };
        self.first = false;
        out.write_all(sep).map_err(Fail::Out)?;
        (self.records)
            .write_parts(head, writes, initial, out)
            .map_err(Fail::Out)
    }

    /// Every site done, and (process 0) the document's end.
    pub fn finish(mut self, out: &mut impl Write) -> Result<(), Fail> {
        self.close_before(self.n_sites, out)?;
        if self.merger.to.is_none() {
            super::render::json_tail(out).map_err(Fail::Out)?;
        }
        Ok(())
    }

    fn send_frame(&mut self) -> Result<(), Fail> {
        let lost = |e: std::io::Error| Fail::Lost(format!("the dd engine's records: {e}"));
        if let Some(to) = &mut self.merger.to {
            frame(to, &self.buf).map_err(lost)?;
        }
        self.buf.clear();
        Ok(())
    }

    /// Finishes the sites before `k`: sends the end of each (the others),
    /// or copies every other process's records of each (process 0).
    fn close_before(&mut self, k: usize, out: &mut impl Write) -> Result<(), Fail> {
        while self.site < k {
            if self.merger.to.is_some() {
                if !self.buf.is_empty() {
                    self.send_frame()?;
                }
                // The site's end.
                self.send_frame()?;
                self.any = false;
            } else {
                for &p in &self.order {
                    let mut started = false;
                    loop {
                        let n =
                            read_frame(&mut self.merger.from[p], &mut self.buf).map_err(|e| {
                                Fail::Lost(format!(
                                    "process {} stopped before sending its records: {e}",
                                    p + 1
                                ))
                            })?;
                        if n == 0 {
                            break;
                        }
                        let sep: &[u8] = match (started, self.first) {
                            (true, _) => b"",
                            (false, true) => b"\n",
                            (false, false) => b",\n",
                        };
                        started = true;
                        self.first = false;
                        out.write_all(sep)
                            .and_then(|()| out.write_all(&self.buf))
                            .map_err(Fail::Out)?;
                    }
                }
            }
            self.site += 1;
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

/// A message of words: its length, then the words.
fn send(to: &mut impl Write, words: &[i64]) -> std::io::Result<()> {
    to.write_all(&(words.len() as u64).to_le_bytes())?;
    words
        .iter()
        .try_for_each(|w| to.write_all(&w.to_le_bytes()))
}

/// The next message [`send`] wrote.
fn receive(r: &mut impl Read) -> std::io::Result<Vec<i64>> {
    let mut word = [0u8; 8];
    r.read_exact(&mut word)?;
    let n = u64::from_le_bytes(word);
    if n > 1 << 34 {
        let bad = std::io::Error::new(std::io::ErrorKind::InvalidData, "a malformed message");
        return Err(bad);
    }
    let mut words = Vec::with_capacity((n as usize).min(1 << 20));
    for _ in 0..n {
        r.read_exact(&mut word)?;
        words.push(i64::from_le_bytes(word));
    }
    Ok(words)
}

/// One site's parts from one process.
fn read_parts(r: &mut impl Read) -> std::io::Result<Vec<PartialAccess>> {
    let words = receive(r)?;
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
