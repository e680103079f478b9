//! The parameter vectors `emit` infers closed forms at (samples) and
//! validates them at (unsampled). Both move every parameter on its own and
//! include small values next to the defaults: a form fitted only where the
//! parameters move together (M - N constant) or stay large is wrong
//! elsewhere (`y_1[i, M - N + j]` for `y_1[i, j - 1]`; labels
//! that differ only at N = 2). Vectors violating the assumptions are left
//! out.
//!
//! `emit` places both around a *base*: the given sizes when the program is
//! small there, else those sizes scaled down ([`base`]), because the forms
//! are proved or validated for every parameter value anyway and the cost of
//! the bounded expansion at each sample grows with its size (PolyBench's
//! LARGE_DATASET gemm is 1.3·10⁹ iterations).

use super::check::Vector;
use super::Options;
use crate::model::Program;

/// Samples: the base, base+1, base+3; each parameter at 1 and (with several
/// parameters) at base+2 with the others at the base; every parameter at
/// 2; with several, the small unequal (2, 3, 4, …) and its reverse; every
/// parameter at 0 (loops over 1..N or 0..N-1 empty: what a read after them
/// sees comes from before them).
pub fn samples(p: &Program, o: &Options) -> Result<Vec<Vec<i64>>, String> {
    let base = p.param_values(&o.params)?;
    let n = base.len();
    let mut vs = vec![base.clone()];
    for d in [1, 3] {
        vs.push(base.iter().map(|v| v.saturating_add(d)).collect());
    }
    vs.extend(each(&base, |_| 1));
    if n > 1 {
        vs.extend(each(&base, |b| b.saturating_add(2)));
    }
    vs.push(vec![2; n]);
    if n > 1 {
        let up: Vec<i64> = (2..).take(n).collect();
        vs.push(up.iter().rev().copied().collect());
        vs.push(up);
    }
    vs.push(vec![0; n]);
    Ok(admissible(p, vs))
}

/// Validation vectors not in `sampled`: base+2, +4, +5 on every parameter;
/// with several parameters each at base+4 alone; small vectors (every
/// vector of {1, 2, 3}ⁿ for up to 4 parameters, at most 81, else each parameter at 1
/// and 3 with the others at 2, plus (1, 2, 3, 1, …) and its reverse); every
/// parameter at 0.
pub fn validation(p: &Program, o: &Options, sampled: &[Vec<i64>]) -> Result<Vec<Vector>, String> {
    let base = p.param_values(&o.params)?;
    let n = base.len();
    let mut vs: Vec<Vec<i64>> = [2, 4, 5]
        .iter()
        .map(|&d| base.iter().map(|v| v.saturating_add(d)).collect())
        .collect();
    if n > 1 {
        vs.extend(each(&base, |b| b.saturating_add(4)));
    }
    if n <= 4 {
        for code in 0..3usize.pow(n as u32) {
            vs.push(
                (0..n)
                    .map(|k| (code / 3usize.pow(k as u32) % 3) as i64 + 1)
                    .collect(),
            );
        }
    } else {
        let twos = vec![2; n];
        vs.extend(each(&twos, |_| 1));
        vs.extend(each(&twos, |_| 3));
        let cycle: Vec<i64> = (0..n).map(|k| (k % 3) as i64 + 1).collect();
        vs.push(cycle.iter().rev().copied().collect());
        vs.push(cycle);
    }
    vs.push(vec![0; n]);
    let named = |v: Vec<i64>| -> Vector {
        p.params
            .iter()
            .zip(v)
            .map(|(q, x)| (q.name.clone(), x))
            .collect()
    };
    Ok(admissible(p, vs)
        .into_iter()
        .filter(|v| !sampled.contains(v))
        .map(named)
        .collect())
}

/// The largest parameter value of [`corners`].
pub const CORNER: i64 = 3;

/// The validation vectors at small corners: each value 1 or [`CORNER`], or
/// all 2 (2ⁿ + 1 runs, not 3ⁿ). What validates a program whose labels or
/// loops exact σ proved: a test of the emitter, not of the analysis.
pub fn corners(vectors: &[Vector]) -> Vec<Vector> {
    (vectors.iter())
        .filter(|v| v.iter().all(|x| x.1 == 1 || x.1 == CORNER) || v.iter().all(|x| x.1 == 2))
        .cloned()
        .collect()
}

/// The most access instances the base may have before it is scaled down:
/// about a tenth of a second of bounded expansion per sample in the release
/// profile.
pub const BASE_INSTANCES: u64 = 20_000;

/// Parameters at most this large are never scaled (a small constant such
/// as a stencil's radius keeps its value), and scaled ones stay above it.
const FLOOR: i64 = 8;

/// The sizes the samples and validation vectors are placed around: the
/// given ones (`o.params`, defaults for the rest, [`FLOOR`] for a parameter
/// with neither) when the program has at
/// most [`BASE_INSTANCES`] access instances there; else the first of them
/// divided by 2, 4, 8, … (never below `FLOOR`) that satisfies the
/// assumptions and is that small, or the smallest of them the assumptions
/// allow. Sizes where the count cannot be made (a `while` over memory)
/// are kept.
pub fn base(p: &Program, o: &Options) -> Result<Vec<i64>, String> {
    // A parameter nothing gives a value (a C function's `int n` that no
    // call in the file sets) is sampled around FLOOR: the emitted program
    // is for every value, the samples only check it.
    let mut params = o.params.clone();
    for q in &p.params {
        if q.default.is_none() && !params.iter().any(|(n, _)| *n == q.name) {
            params.push((q.name.clone(), FLOOR));
        }
    }
    let given = p.param_values(&params)?;
    if small(p, &given, o) != Some(false) {
        return Ok(given);
    }
    let mut fallback = None;
    let mut f = 2i64;
    loop {
        let v: Vec<i64> = given
            .iter()
            .map(|&d| if d <= FLOOR { d } else { (d / f).max(FLOOR) })
            .collect();
        if admissible(p, vec![v.clone()]).len() == 1 {
            match small(p, &v, o) {
                Some(true) => return Ok(v),
                Some(false) => fallback = Some(v.clone()),
                None => {}
            }
        }
        if given
            .iter()
            .zip(&v)
            .all(|(&d, &x)| d <= FLOOR || x == FLOOR)
        {
            break;
        }
        f = f.saturating_mul(2);
    }
    Ok(fallback.unwrap_or(given))
}

/// The most access instances the base may have at all: about fifteen
/// samples of that size, each expanded and fitted, take about a minute.
pub const MAX_BASE_INSTANCES: u64 = 1_000_000;

/// Why the program is too large to sample around `base`, if it is: a loop
/// bound that is no parameter (PolyBench's heat-3d runs `TSTEPS` = 500
/// steps at every size) keeps it large however small the parameters.
pub fn too_large(p: &Program, base: &[i64], o: &Options) -> Option<String> {
    let named: Vec<(String, i64)> = (p.params.iter())
        .zip(base)
        .map(|(q, &x)| (q.name.clone(), x))
        .collect();
    let config = crate::dataflow::Config {
        params: named.clone(),
        max_trips: o.max_trips,
        max_instances: MAX_BASE_INSTANCES,
        max_memory: crate::budget::limit(),
    };
    let crate::facts::LowerError::Budget { site, .. } = crate::facts::lower(p, &config).err()?
    else {
        return None;
    };
    Some(format!(
        "code generation samples the program at about fifteen sizes around {}, where it already has more than {MAX_BASE_INSTANCES} access instances (`{site}` brings it there): that would take minutes; turn constant loop bounds into parameters, or give smaller sizes (`--param`, `-D`)",
        super::check::text(&named)
    ))
}

/// Whether the program has at most [`BASE_INSTANCES`] access instances at
/// `values`; None when that cannot be told (an evaluation error).
fn small(p: &Program, values: &[i64], o: &Options) -> Option<bool> {
    let config = crate::dataflow::Config {
        params: p
            .params
            .iter()
            .zip(values)
            .map(|(q, &x)| (q.name.clone(), x))
            .collect(),
        max_trips: o.max_trips,
        max_instances: BASE_INSTANCES,
        max_memory: crate::budget::limit(),
    };
    match crate::facts::lower(p, &config) {
        Ok(_) => Some(true),
        Err(crate::facts::LowerError::Budget { .. } | crate::facts::LowerError::Memory(_)) => {
            Some(false)
        }
        Err(_) => None,
    }
}

/// `base` with parameter k replaced by `f(base[k])`, for each k.
fn each(base: &[i64], f: impl Fn(i64) -> i64) -> Vec<Vec<i64>> {
    (0..base.len())
        .map(|k| {
            let mut v = base.to_vec();
            v[k] = f(v[k]);
            v
        })
        .collect()
}

/// The vectors where the assumptions hold, first occurrences only.
fn admissible(p: &Program, vs: Vec<Vec<i64>>) -> Vec<Vec<i64>> {
    let mut out: Vec<Vec<i64>> = Vec::new();
    for v in vs {
        let named: Vector = p
            .params
            .iter()
            .zip(&v)
            .map(|(q, &x)| (q.name.clone(), x))
            .collect();
        if !out.contains(&v) && p.param_values(&named).is_ok() {
            out.push(v);
        }
    }
    out
}
