//! The emitted program against the original by experiment (`equiv`, doall
//! loops shuffled) at several parameter vectors: `emit`'s validation and
//! `verify --transform mse`.

use crate::equiv::{EquivError, EquivOptions, Original, Verdict};
use crate::model::Program;

/// Named parameter values, as `--param` gives them.
pub type Vector = Vec<(String, i64)>;

/// The vector `overrides` (defaults for the rest) shifted by each of
/// `offsets` on every parameter, where the assumptions hold; duplicates
/// dropped.
pub fn shifted(
    p: &Program,
    overrides: &[(String, i64)],
    offsets: &[i64],
) -> Result<Vec<Vector>, String> {
    let base = p.param_values(overrides)?;
    let mut out: Vec<Vector> = Vec::new();
    for &d in offsets {
        let v: Vector = p
            .params
            .iter()
            .zip(&base)
            .map(|(q, x)| (q.name.clone(), x.saturating_add(d)))
            .collect();
        if p.param_values(&v).is_ok() && !out.contains(&v) {
            out.push(v);
        }
    }
    Ok(out)
}

/// Each parameter at 0 and at 1 with the others at `overrides` (defaults
/// for the rest), then every pair of parameters each at 0 or 1: sizes where
/// a loop runs no trip or one, which sizes near the defaults miss. Split
/// into the vectors where the assumptions hold and those where they do
/// not; duplicates dropped.
pub fn corners(
    p: &Program,
    overrides: &[(String, i64)],
) -> Result<(Vec<Vector>, Vec<Vector>), String> {
    let base = p.param_values(overrides)?;
    let n = base.len();
    let mut raw: Vec<Vec<i64>> = Vec::new();
    for k in 0..n {
        for x in [0, 1] {
            let mut v = base.clone();
            v[k] = x;
            raw.push(v);
        }
    }
    for k in 0..n {
        for l in k + 1..n {
            for (x, y) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                let mut v = base.clone();
                (v[k], v[l]) = (x, y);
                raw.push(v);
            }
        }
    }
    let (mut held, mut failed): (Vec<Vector>, Vec<Vector>) = (Vec::new(), Vec::new());
    for v in raw {
        let v: Vector = (p.params.iter().map(|q| q.name.clone())).zip(v).collect();
        if held.contains(&v) || failed.contains(&v) {
            continue;
        }
        match p.param_values(&v) {
            Ok(_) => held.push(v),
            Err(_) => failed.push(v),
        }
    }
    Ok((held, failed))
}

/// "(T=3, N=10)": one vector as a tuple, "(no parameters)" when empty.
pub fn tuple(v: &[(String, i64)]) -> String {
    if v.is_empty() {
        return "(no parameters)".into();
    }
    let x: Vec<String> = v.iter().map(|(n, x)| format!("{n}={x}")).collect();
    format!("({})", x.join(", "))
}

/// "(T=3, N=10), (T=4, N=11)": vectors as tuples, so that the values
/// that went together stay together (the headers of `expand --emit code`,
/// `privatize --emit code` and the contraction).
pub fn tuples(vs: &[Vector]) -> String {
    vs.iter().map(|v| tuple(v)).collect::<Vec<_>>().join(", ")
}

/// "N = 6, M = 3".
pub fn text(v: &[(String, i64)]) -> String {
    v.iter()
        .map(|(n, x)| format!("{n} = {x}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `equiv(original, emitted)` at each vector on seeds `0..seeds`, stopping
/// after the first that does not agree.
pub fn compare(
    original: &Program,
    emitted: &Program,
    vectors: &[Vector],
    seeds: u64,
) -> Vec<(Vector, Result<Verdict, EquivError>)> {
    Originals::new(original, seeds).compare(emitted, vectors)
}

/// The original at each vector compared so far, its runs shared by every
/// emitted program compared with it.
pub struct Originals<'p> {
    original: &'p Program,
    seeds: u64,
    at: Vec<(Vector, Original<'p>)>,
    /// `--max-steps` and `--max-cells` of every run.
    limits: (u64, u64),
    /// Arrays whose final contents are not compared.
    scratch: Vec<String>,
}

impl<'p> Originals<'p> {
    pub fn new(original: &'p Program, seeds: u64) -> Self {
        Originals {
            original,
            seeds,
            at: Vec::new(),
            limits: (
                crate::interp::DEFAULT_MAX_STEPS,
                crate::interp::DEFAULT_MAX_CELLS,
            ),
            scratch: Vec::new(),
        }
    }

    /// Without comparing these arrays' final contents (temporaries).
    pub fn with_scratch(mut self, scratch: Vec<String>) -> Self {
        self.scratch = scratch;
        self
    }

    /// Runs with these step and cell budgets (`verify --max-steps`).
    pub fn with_limits(mut self, max_steps: u64, max_cells: u64) -> Self {
        self.limits = (max_steps, max_cells);
        self
    }

    /// [`compare`] with the original's runs reused. The vectors run in
    /// parallel (each has its own original); the results are those of a
    /// sequential pass, which stops after the first that neither agrees,
    /// nor fails in the original, nor hits a limit.
    pub fn compare(
        &mut self,
        emitted: &Program,
        vectors: &[Vector],
    ) -> Vec<(Vector, Result<Verdict, EquivError>)> {
        use rayon::prelude::*;
        let mut wanted: Vec<usize> = Vec::new();
        for v in vectors {
            let k = match self.at.iter().position(|(w, _)| w == v) {
                Some(k) => k,
                None => {
                    let mut o = EquivOptions {
                        params: v.clone(),
                        seeds: self.seeds,
                        scratch: self.scratch.clone(),
                        ..EquivOptions::default()
                    };
                    (o.run.max_steps, o.run.max_cells) = self.limits;
                    self.at.push((v.clone(), Original::new(self.original, &o)));
                    self.at.len() - 1
                }
            };
            wanted.push(k);
        }
        // Each original once, however often its vector is listed.
        let mut results: Vec<Option<Result<Verdict, EquivError>>> =
            (0..self.at.len()).map(|_| None).collect();
        let jobs: Vec<(usize, &mut Original<'p>)> = (self.at.iter_mut().enumerate())
            .filter(|(k, _)| wanted.contains(k))
            .map(|(k, (_, o))| (k, o))
            .collect();
        let watch = arrayflow_model::cancel::current();
        let done: Vec<(usize, Result<Verdict, EquivError>)> = jobs
            .into_par_iter()
            .map(|(k, o)| {
                let _watch = arrayflow_model::cancel::enter(&watch);
                (k, o.equiv(emitted))
            })
            .collect();
        for (k, r) in done {
            results[k] = Some(r);
        }
        let mut out = Vec::new();
        for (v, &k) in vectors.iter().zip(&wanted) {
            let r = results[k].clone().expect("compared");
            let stop = !matches!(r, Ok(Verdict::Agree(_))) && !not_made(&r);
            out.push((v.clone(), r));
            if stop {
                break;
            }
        }
        out
    }
}

/// The comparison was not made: the emitted program's run stopped on a
/// limit (steps, cells) where the original's did not, or the original
/// itself does not run (`equiv::Compared::NotMade`).
pub fn not_made(r: &Result<Verdict, EquivError>) -> bool {
    matches!(r, Ok(Verdict::Differ(m)) if m.limit) || matches!(r, Err(e) if !e.in_b)
}
