//! σ against reality: run a program on several seeds and check that every
//! executed read's actual writer (or the initial value) is among the sources
//! the dataflow analysis computed for it.

use crate::dataflow::{self, Config, Flow};
use crate::interp::{self, Options, Run, RunError, SiteNames, Writer};
use crate::model::Program;
use std::fmt;

/// A read whose writer σ does not allow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub seed: u64,
    /// "read 0 of `R[2]`".
    pub read: String,
    pub value: i64,
    /// The actual writer, `initial` for an initial value.
    pub writer: String,
    /// What σ allows, e.g. `{T[2], S[2, 0], initial}`; `None` when the
    /// analysis has no such read at all.
    pub sigma: Option<String>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.sigma {
            Some(s) => write!(
                f,
                "seed {}: {} read {} written by {}, which σ = {s} does not contain",
                self.seed, self.read, self.value, self.writer
            ),
            None => write!(
                f,
                "seed {}: {} read {} written by {}, but σ has no such read",
                self.seed, self.read, self.value, self.writer
            ),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerifyError {
    Analysis(dataflow::DataflowError),
    Run(u64, RunError),
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyError::Analysis(m) => write!(f, "the dataflow analysis failed: {m}"),
            VerifyError::Run(seed, e) => write!(f, "the run on seed {seed} failed: {e}"),
        }
    }
}

/// What a check found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub seeds: u64,
    /// Reads checked over all seeds.
    pub reads: u64,
    pub violations: Vec<Violation>,
}

/// Checks σ against runs on seeds `0..seeds`. `options` gives parameters,
/// trips and budgets; loops run in program order (σ is for that order).
pub fn verify(
    program: &Program,
    overrides: &[(String, i64)],
    options: &Options,
    seeds: u64,
) -> Result<Report, VerifyError> {
    let config = Config {
        params: overrides.to_vec(),
        max_trips: options.max_trips,
        ..Config::default()
    };
    verify_with(program, &config, options, seeds)
}

/// [`verify`] with σ computed under `config` (its budgets; its parameters
/// and trips should be those of `options`).
pub fn verify_with(
    program: &Program,
    config: &Config,
    options: &Options,
    seeds: u64,
) -> Result<Report, VerifyError> {
    let flow = dataflow::analyze(program, config).map_err(VerifyError::Analysis)?;
    let mut o = options.clone();
    o.reverse.clear();
    o.shuffle.clear();
    o.shuffle_parallel = false;
    o.trace_copies = true;
    let names = SiteNames::new(program);
    let mut report = Report {
        seeds,
        ..Report::default()
    };
    for seed in 0..seeds {
        o.seed = seed;
        let run = interp::run(program, &o).map_err(|e| VerifyError::Run(seed, e))?;
        check(&flow, &run, &names, seed, &mut report);
    }
    Ok(report)
}

fn check(flow: &Flow, run: &Run, names: &SiteNames, seed: u64, report: &mut Report) {
    for r in &run.reads {
        report.reads += 1;
        let op = run.ops.get(r.op);
        let sources = flow
            .get_at(op.site, op.iter, r.access as usize)
            .map(|r| r.sources());
        let ok = match (&sources, run.op(r.writer)) {
            (None, _) => false,
            (Some(s), None) => s.initial,
            (Some(s), Some(w)) => s.writes.iter().any(|x| w == *x),
        };
        if !ok {
            let writer = match r.writer {
                Writer::Initial => "initial".to_string(),
                Writer::Op(_) => run.op(r.writer).map_or(String::new(), |w| names.op(w)),
            };
            report.violations.push(Violation {
                seed,
                read: format!("read {} of {}", r.access, names.op(op)),
                value: r.value,
                writer,
                sigma: sources.map(|s| sigma_text(&s, names)),
            });
        }
    }
}

/// `{T[2], S[2, 0], initial}`.
pub fn sigma_text(s: &dataflow::Sources, names: &SiteNames) -> String {
    let mut parts: Vec<String> = s.writes.iter().map(|w| names.op(w)).collect();
    if s.initial {
        parts.push("initial".into());
    }
    format!("{{{}}}", parts.join(", "))
}
