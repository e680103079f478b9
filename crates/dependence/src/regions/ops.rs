//! Operations on LMADs (digest §2): coalescing, interleaving, exact unions
//! (contiguity, Theorem 3; interleaved parts, Theorem 2 backwards;
//! containment), aggregation with an over-approximate hull, containment
//! and intersection emptiness. A symbolic condition is proved only when
//! it holds for every value of the variables (a constant difference, a
//! constant divisor); when it cannot be, the operation declines rather
//! than guess. Constant LMADs are decided exactly by enumeration (up to a
//! limit on the points).

use super::lmad::{gcd, Concrete, Dim, Lmad};
use super::poly::Poly;

/// The most points enumerated to decide containment or emptiness of
/// constant LMADs.
pub const ENUMERATION_LIMIT: u128 = 1 << 20;

/// `p ≥ 0` whenever the LMAD's own conditions hold (when they do not,
/// it is empty anyway).
fn nonneg(p: &Poly, when: &[Poly]) -> bool {
    p.nonneg_given(when)
}

/// Merges dimensions while one's stride divides the next's and the
/// next's stride is at most one step past the first's run (the contiguity
/// case, Fig 10). Always exact: it only merges what it proves.
pub fn coalesce(l: &Lmad) -> Lmad {
    let mut l = l.normalize();
    'again: loop {
        for j in 0..l.dims.len() {
            for k in 0..l.dims.len() {
                if j == k {
                    continue;
                }
                let (dj, dk) = (&l.dims[j], &l.dims[k]);
                let fits = dk.stride.divisible_by(&dj.stride)
                    && dj.span.divisible_by(&dj.stride)
                    && dk.span.divisible_by(&dk.stride)
                    && dj
                        .span
                        .add(&dj.stride)
                        .and_then(|r| dk.stride.le(&r))
                        .unwrap_or(false);
                let Some(span) = fits.then(|| dj.span.add(&dk.span)).flatten() else {
                    continue;
                };
                // A negative span empties the set; the merged one must too.
                let mut when = l.when.clone();
                for sp in [&dj.span, &dk.span] {
                    if !nonneg(sp, &l.when) {
                        when.push(sp.clone());
                    }
                }
                let stride = dj.stride.clone();
                let mut dims: Vec<Dim> = l
                    .dims
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != j && i != k)
                    .map(|(_, d)| d.clone())
                    .collect();
                dims.push(Dim::new(stride, span));
                l = Lmad {
                    base: l.base.clone(),
                    dims,
                    when,
                    exact: l.exact,
                }
                .normalize();
                continue 'again;
            }
        }
        return l;
    }
}

/// Theorem 2 with the digest's corrected span: dimension `k` of the
/// normalised `l` split into `n` interleaved descriptors, `A_j` with base
/// `τ + (j−1)δ`, stride `nδ` and span `⌊(σ − (j−1)δ)/(nδ)⌋·nδ`. `None`
/// unless `σ/δ` is a known constant `q ≥ 0` and `1 ≤ n ≤ 1 + q`.
pub fn interleave(l: &Lmad, k: usize, n: i64) -> Option<Vec<Lmad>> {
    let l = l.normalize();
    let d = l.dims.get(k)?;
    let q = d.span.quotient(&d.stride)?;
    if n < 1 || q < 0 || n > q + 1 {
        return None;
    }
    let mut out = Vec::new();
    for j in 0..n {
        let mut part = l.clone();
        part.base = l.base.add(&d.stride.scale(j)?)?;
        part.dims[k] = Dim::new(d.stride.scale(n)?, d.stride.scale((q - j) / n * n)?);
        out.push(part.normalize());
    }
    Some(out)
}

/// The dimensions of `l` without `p`, sorted.
fn without(l: &Lmad, p: usize) -> Vec<Dim> {
    let mut v: Vec<Dim> = l
        .dims
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != p)
        .map(|(_, d)| d.clone())
        .collect();
    v.sort();
    v
}

/// Bridge pairs `(p, q)`: dimension `p` of `a` and `q` of `b` with equal
/// strides whose removal leaves isomorphic LMADs (Definition 5, 1–2); a
/// zero-span dimension is inserted in the shorter one first (Theorem 1).
fn bridges(a: &Lmad, b: &Lmad) -> Vec<(Lmad, Lmad, usize, usize)> {
    let mut out = Vec::new();
    let pad = |l: &Lmad, stride: &Poly| {
        let mut l = l.clone();
        l.dims.push(Dim::new(stride.clone(), Poly::default()));
        l
    };
    let candidates: Vec<(Lmad, Lmad)> = if a.dims.len() == b.dims.len() {
        vec![(a.clone(), b.clone())]
    } else if a.dims.len() + 1 == b.dims.len() {
        b.dims
            .iter()
            .map(|d| (pad(a, &d.stride), b.clone()))
            .collect()
    } else if b.dims.len() + 1 == a.dims.len() {
        a.dims
            .iter()
            .map(|d| (a.clone(), pad(b, &d.stride)))
            .collect()
    } else {
        vec![]
    };
    for (a, b) in candidates {
        for p in 0..a.dims.len() {
            for q in 0..b.dims.len() {
                if a.dims[p].stride == b.dims[q].stride && without(&a, p) == without(&b, q) {
                    out.push((a.clone(), b.clone(), p, q));
                }
            }
        }
    }
    out
}

/// Theorem 3: the union of contiguous `a` and `b` as one LMAD, when
/// Definition 5's conditions are proved (both bridge spans provably
/// non-negative, so that neither set is empty by its bridge).
pub fn union_contiguous(a: &Lmad, b: &Lmad) -> Option<Lmad> {
    let (a, b) = (a.normalize(), b.normalize());
    if a.when != b.when {
        return None;
    }
    // Theorem 3 names the higher base A.
    let (a, b) = if b.base.le(&a.base)? { (a, b) } else { (b, a) };
    let t = a.base.sub(&b.base)?;
    for (a, b, p, q) in bridges(&a, &b) {
        let (dp, dq) = (&a.dims[p], &b.dims[q]);
        let delta = &dp.stride;
        let ok = t.divisible_by(delta)
            && dp.span.divisible_by(delta)
            && dq.span.divisible_by(delta)
            && nonneg(&dp.span, &a.when)
            && nonneg(&dq.span, &b.when)
            && dq.span.add(delta).and_then(|r| t.le(&r)) == Some(true);
        if !ok {
            continue;
        }
        let reach = dp.span.add(&t)?;
        let mut u = match dq.span.lt(&reach)? {
            true => {
                let mut u = b.clone();
                u.dims[q].span = reach;
                u
            }
            false => b.clone(),
        };
        u.exact = a.exact && b.exact;
        return Some(u.normalize());
    }
    None
}

/// Theorem 2 backwards: `n` LMADs alike but for one dimension of stride
/// `D`, with bases `τ + j·t` (`j < n`, `n·t = D`) and spans that are
/// multiples of `D` and fall by at most one step, are the interleaved
/// parts of one LMAD of stride `t`. Returns it and the indices used.
pub fn union_interleaved(ls: &[Lmad]) -> Option<(Lmad, Vec<usize>)> {
    let ls: Vec<Lmad> = ls.iter().map(Lmad::normalize).collect();
    shifted_copies(&ls).or_else(|| interleaved_parts(&ls))
}

/// Copies of one LMAD at bases `τ + j·t`, `j < n`: the LMAD with one more
/// dimension `(t, (n−1)·t)` (Theorem 2 with a zero-span bridge, Theorem 1).
fn shifted_copies(ls: &[Lmad]) -> Option<(Lmad, Vec<usize>)> {
    for (x, lx) in ls.iter().enumerate() {
        let mut offs: Vec<(i64, usize)> = ls
            .iter()
            .enumerate()
            .filter(|(_, ly)| ly.dims == lx.dims && ly.when == lx.when)
            .filter_map(|(y, ly)| Some((ly.base.sub(&lx.base)?.as_constant()?, y)))
            .filter(|&(o, _)| o >= 0)
            .collect();
        offs.sort();
        offs.dedup_by_key(|o| o.0);
        let Some(&(t, _)) = offs.get(1) else { continue };
        let run: Vec<usize> = offs
            .iter()
            .enumerate()
            .take_while(|&(j, o)| o.0 == j as i64 * t)
            .map(|(_, o)| o.1)
            .collect();
        if run.len() < 2 || offs[0].1 != x {
            continue;
        }
        let mut u = lx.clone();
        u.dims.push(Dim::new(
            Poly::constant(t),
            Poly::constant(t * (run.len() as i64 - 1)),
        ));
        u.exact = run.iter().all(|&i| ls[i].exact);
        return Some((u.normalize(), run));
    }
    None
}

/// Theorem 2 backwards on a dimension of non-zero span.
fn interleaved_parts(ls: &[Lmad]) -> Option<(Lmad, Vec<usize>)> {
    for lx in ls {
        for p in 0..lx.dims.len() {
            let Some(big) = lx.dims[p].stride.as_constant() else {
                continue;
            };
            let rest = without(lx, p);
            // Members: offset from x's base, index, their bridge span.
            let mut members: Vec<(i64, usize, Poly)> = vec![];
            for (y, ly) in ls.iter().enumerate() {
                if ly.when != lx.when {
                    continue;
                }
                let Some(off) = ly.base.sub(&lx.base).and_then(|d| d.as_constant()) else {
                    continue;
                };
                if let Some(q) = (0..ly.dims.len())
                    .find(|&q| ly.dims[q].stride == lx.dims[p].stride && without(ly, q) == rest)
                {
                    members.push((off, y, ly.dims[q].span.clone()));
                }
            }
            members.sort_by_key(|m| m.0);
            members.dedup_by_key(|m| m.0);
            if members.len() < 2 || members[0].0 != 0 {
                continue;
            }
            let t = members[1].0;
            if t <= 0 || big % t != 0 {
                continue;
            }
            let n = (big / t) as usize;
            if n < 2 || members.len() < n || (0..n).any(|j| members[j].0 != j as i64 * t) {
                continue;
            }
            let d = Poly::constant(big);
            let first = members[0].2.clone();
            // Each span a multiple of D, the same as the first's or one step
            // shorter, never longer again once shorter.
            let drops: Option<Vec<i64>> = members[..n]
                .iter()
                .map(|m| m.2.sub(&first).and_then(|x| x.as_constant()))
                .collect();
            let Some(drops) = drops else { continue };
            let ok = members[..n].iter().all(|m| m.2.divisible_by(&d))
                && drops.iter().all(|&x| x == 0 || x == -big)
                && drops.windows(2).all(|w| w[1] <= w[0]);
            if !ok {
                continue;
            }
            let top = drops.iter().rposition(|&x| x == 0).unwrap_or(0);
            let span = members[top].2.add_const(top as i64 * t)?;
            let mut u = lx.clone();
            u.dims[p] = Dim::new(Poly::constant(t), span);
            u.exact = members.iter().take(n).all(|m| ls[m.1].exact);
            let used = members.iter().take(n).map(|m| m.1).collect();
            return Some((u.normalize(), used));
        }
    }
    None
}

/// The offsets of a constant LMAD with few enough points.
fn enumerate(l: &Lmad, limit: u128) -> Option<std::collections::BTreeSet<i64>> {
    Concrete::of(l)?.offsets(limit)
}

/// Whether `small ⊆ big`: `Some` when decided, `None` when not. Constant
/// LMADs are decided by enumeration up to [`ENUMERATION_LIMIT`] points.
pub fn contains(big: &Lmad, small: &Lmad) -> Option<bool> {
    contains_within(big, small, ENUMERATION_LIMIT)
}

/// [`contains`] enumerating at most `limit` points.
pub fn contains_within(big: &Lmad, small: &Lmad, limit: u128) -> Option<bool> {
    contains_coalesced(&coalesce(big), &coalesce(small), limit)
}

/// Whether `small`'s conditions imply each of `big`'s.
fn implies(small: &Lmad, big: &Lmad) -> bool {
    big.when
        .iter()
        .all(|w| small.when.contains(w) || w.nonneg_given(&small.when))
}

/// [`contains_within`] on coalesced LMADs.
fn contains_coalesced(big: &Lmad, small: &Lmad, limit: u128) -> Option<bool> {
    if small.is_empty() || (small.base == big.base && small.dims == big.dims && implies(small, big))
    {
        return Some(true);
    }
    if let (Some(cb), Some(offs)) = (Concrete::of(big), enumerate(small, limit)) {
        let mut budget = (limit as u64).saturating_mul(8);
        for o in offs {
            if !cb.contains(o, &mut budget)? {
                return Some(false);
            }
        }
        return Some(true);
    }
    // A one-dimensional `big` (after coalescing) covering every offset
    // of `small` on its lattice, under no condition `small` lacks.
    if big.dims.len() <= 1 && implies(small, big) {
        let (stride, span) = match big.dims.first() {
            Some(d) => (d.stride.clone(), d.span.clone()),
            None => (Poly::constant(1), Poly::default()),
        };
        let (first, last) = small.first_last()?;
        let on_lattice = span.divisible_by(&stride)
            && first.sub(&big.base)?.divisible_by(&stride)
            && small.dims.iter().all(|d| d.stride.divisible_by(&stride));
        if on_lattice && big.base.le(&first)? && last.le(&big.base.add(&span)?)? {
            return Some(true);
        }
    }
    None
}

/// Whether `a` and `b` share no offset: `Some` when decided.
pub fn disjoint(a: &Lmad, b: &Lmad) -> Option<bool> {
    let (a, b) = (coalesce(a), coalesce(b));
    if a.is_empty() || b.is_empty() {
        return Some(true);
    }
    if let (Some(ca), Some(cb)) = (Concrete::of(&a), Concrete::of(&b)) {
        let (small, other) = if ca.points() <= cb.points() {
            (&ca, &cb)
        } else {
            (&cb, &ca)
        };
        if let Some(offs) = small.offsets(ENUMERATION_LIMIT) {
            let mut budget = (ENUMERATION_LIMIT as u64).saturating_mul(8);
            for o in offs {
                if other.contains(o, &mut budget)? {
                    return Some(false);
                }
            }
            return Some(true);
        }
    }
    let (fa, la) = a.first_last()?;
    let (fb, lb) = b.first_last()?;
    if la.lt(&fb) == Some(true) || lb.lt(&fa) == Some(true) {
        return Some(true);
    }
    // Different residues modulo the gcd of every stride.
    let g = a
        .dims
        .iter()
        .chain(&b.dims)
        .try_fold(0i128, |g, d| Some(gcd(g, d.stride.as_constant()? as i128)));
    let diff = fa.sub(&fb).and_then(|d| d.as_constant());
    if let (Some(g), Some(diff)) = (g, diff) {
        if g > 1 && diff as i128 % g != 0 {
            return Some(true);
        }
    }
    None
}

/// Exactly the union of `a` and `b` as one LMAD, when it is one by
/// containment, contiguity or 2-interleaving.
pub fn union(a: &Lmad, b: &Lmad) -> Option<Lmad> {
    union_within(a, b, ENUMERATION_LIMIT)
}

fn union_within(a: &Lmad, b: &Lmad, limit: u128) -> Option<Lmad> {
    let both = a.exact && b.exact;
    let keep = |mut l: Lmad| {
        l.exact = both;
        l
    };
    let (ca, cb) = (coalesce(a), coalesce(b));
    if contains_coalesced(&ca, &cb, limit) == Some(true) {
        return Some(keep(ca));
    }
    if contains_coalesced(&cb, &ca, limit) == Some(true) {
        return Some(keep(cb));
    }
    if let Some(u) = union_contiguous(a, b) {
        return Some(coalesce(&u));
    }
    union_interleaved(&[a.normalize(), b.normalize()]).map(|(u, _)| coalesce(&u))
}

/// One LMAD covering all of `ls` (a superset, marked inexact): stride the
/// gcd of the constant strides and base differences, from the lowest
/// first offset to the highest last. `None` when the ends cannot be
/// ordered.
pub fn hull(ls: &[Lmad]) -> Option<Lmad> {
    let ls: Vec<Lmad> = ls.iter().map(coalesce).filter(|l| !l.is_empty()).collect();
    let first = ls.first()?;
    let (mut lo, mut hi) = first.first_last()?;
    let mut g: Option<i128> = Some(0);
    for l in &ls {
        let (f, t) = l.first_last()?;
        if f.lt(&lo)? {
            lo = f.clone();
        }
        if hi.lt(&t)? {
            hi = t;
        }
        g = g.and_then(|g| {
            let d = f.sub(&first.base)?.as_constant()?;
            l.dims.iter().try_fold(gcd(g, d as i128), |g, d| {
                Some(gcd(g, d.stride.as_constant()? as i128))
            })
        });
    }
    let stride = match g {
        Some(g) if g > 0 => i64::try_from(g).ok()?,
        _ => 1,
    };
    let span = hi.sub(&lo)?;
    let when = if ls.iter().all(|l| l.when == first.when) {
        first.when.clone()
    } else {
        Vec::new()
    };
    let mut h = Lmad::new(lo, vec![Dim::new(Poly::constant(stride), span)]);
    h.when = when;
    h.exact = ls.len() == 1 && first.exact;
    Some(h.normalize())
}

/// Several LMADs of one array as few as exactly possible: each
/// coalesced, then merged by containment, contiguity and interleaving
/// until nothing changes; with `hull`, what is left over one is replaced
/// by [`hull`]. The result's flag says whether it is exactly the union of
/// the inputs (every input exact and no hull taken).
pub fn aggregate(ls: &[Lmad], hull_left: bool) -> (Vec<Lmad>, bool) {
    // Enumeration inside the pairwise loop stays small: n² pairs.
    const PAIR_LIMIT: u128 = 256;
    let mut exact = ls.iter().all(|l| l.exact);
    let mut cur: Vec<Lmad> = ls.iter().map(coalesce).filter(|l| !l.is_empty()).collect();
    cur.sort_by(|a, b| a.base.cmp(&b.base).then(a.dims.cmp(&b.dims)));
    cur.dedup_by(|a, b| a.base == b.base && a.dims == b.dims && a.when == b.when);
    loop {
        let mut changed = false;
        // `union` is symmetric; a merged LMAD is tried again against the
        // rest at once, so that a run of neighbours (sorted by base) merges
        // in one pass.
        let mut i = 0;
        while i < cur.len() {
            let mut j = i + 1;
            while j < cur.len() {
                match union_within(&cur[i], &cur[j], PAIR_LIMIT) {
                    Some(u) => {
                        cur[i] = u;
                        cur.remove(j);
                        changed = true;
                        j = i + 1;
                    }
                    None => j += 1,
                }
            }
            i += 1;
        }
        if !changed && cur.len() > 2 {
            if let Some((u, used)) = union_interleaved(&cur) {
                let mut keep: Vec<Lmad> = cur
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !used.contains(i))
                    .map(|(_, l)| l.clone())
                    .collect();
                keep.push(coalesce(&u));
                cur = keep;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    if hull_left && cur.len() > 1 {
        if let Some(h) = hull(&cur) {
            exact = false;
            cur = vec![h];
        }
    }
    (cur, exact)
}
