//! `expand --transform contract` output: text for people, JSON for tools.

use super::mapping::{ArrayMap, Dim, ReadPlace};
use super::Contraction;
use crate::codegen::size::Poly;
use crate::model::{Affine, CounterId, Program};
use serde_json::{json, Value};
use std::io::{self, Write};

/// Bounds and step of every `for` loop, by counter.
fn loop_bounds(program: &Program) -> Vec<Option<(Affine, Affine, i64)>> {
    let mut out = vec![None; program.counters.len()];
    for f in super::nodes::fors(&program.body) {
        out[f.counter.index()] = Some((f.lower.affine.clone(), f.upper.affine.clone(), f.step));
    }
    out
}

fn extent(lo: &Affine, hi: &Affine) -> Option<Poly> {
    Poly::affine(&hi.checked_sub(lo)?.checked_add(&Affine::constant(1))?)
}

/// The contracted array's cells as a polynomial in the parameters: the
/// declared extents times each added dimension's (a loop's trip count when
/// its bounds use parameters only and its step is 1, the modulus when
/// folded). None when some factor is not such a polynomial.
pub fn formula(program: &Program, a: &ArrayMap) -> Option<Poly> {
    let bounds = loop_bounds(program);
    let mut p = Poly::constant(1);
    for r in &program.array_decl(a.array).dims {
        p = p.mul(&extent(&r.lo.affine, &r.hi.affine)?)?;
    }
    for d in &a.dims {
        let f = match *d {
            Dim::Expand(c) => {
                let (lo, hi, step) = bounds.get(c.index())?.as_ref()?;
                if *step != 1 {
                    return None;
                }
                extent(lo, hi)?
            }
            Dim::Fold(_, m) => Poly::constant(m),
        };
        p = p.mul(&f)?;
    }
    Some(p)
}

fn counter(program: &Program, c: CounterId) -> &str {
    &program.counter_decl(c).name
}

/// `expanded along parallel i`, `folded along sequential t mod 2` (under
/// an affine schedule: `along loop i`).
pub fn describe_dim(program: &Program, d: Dim, affine: bool) -> String {
    describe_dim_named(&|c| counter(program, c).to_string(), d, affine)
}

/// [`describe_dim`] with the loops named by `name` (`i@12`).
fn describe_dim_named(name: &dyn Fn(CounterId) -> String, d: Dim, affine: bool) -> String {
    let (par, seq) = if affine {
        ("loop", "loop")
    } else {
        ("parallel", "sequential")
    };
    match d {
        Dim::Expand(c) => format!("expanded along {par} {}", name(c)),
        Dim::Fold(c, m) => format!("folded along {seq} {} mod {m}", name(c)),
    }
}

fn ratio(cells: u64, bound: Option<u64>) -> Option<f64> {
    bound.filter(|&b| b > 0).map(|b| cells as f64 / b as f64)
}

/// The arrays some statement writes.
fn written(c: &Contraction) -> impl Iterator<Item = &ArrayMap> + '_ {
    let holds = |a: crate::model::ArrayId| {
        (c.sharing.iter()).any(|s| s.classes.iter().any(|cl| cl[0] == a))
    };
    c.mapping
        .arrays
        .iter()
        .filter(move |a| c.sa[a.array.index()] > 0 || !a.dims.is_empty() || holds(a.array))
}

/// The cells the contraction gives `a`: none when it lives in another's
/// storage, its modulus when laid out modulo a size.
fn cells_of(c: &Contraction, a: &ArrayMap) -> u64 {
    match c.modular.iter().find(|m| m.array == a.array) {
        _ if lives_in(c, a.array).is_some() => 0,
        Some(m) => m.modulus as u64,
        None => a.cells,
    }
}

impl Contraction {
    /// The cells of every array the memory table lists, contracted.
    pub fn contracted_cells(&self) -> u64 {
        written(self).map(|a| cells_of(self, a)).sum()
    }

    /// The arrays the memory table lists (written at the analysed sizes,
    /// expanded, or holding a class's storage): what the contracted cells
    /// and the live-value bound cover.
    pub fn listed(&self) -> Vec<crate::model::ArrayId> {
        written(self).map(|a| a.array).collect()
    }

    /// The cells the same arrays declare.
    pub fn original_cells(&self) -> u64 {
        written(self).map(|a| a.original).sum()
    }
}

/// The array whose storage `a` lives in when not its own: its merged
/// modular group's first array, or its sharing class's.
fn lives_in(c: &Contraction, a: crate::model::ArrayId) -> Option<crate::model::ArrayId> {
    let merged = (c.modular.iter()).find(|m| m.merged.contains(&a) && m.array != a);
    merged
        .map(|m| m.array)
        .or_else(|| (c.sharing.as_ref().map(|s| s.holder(a))).filter(|&h| h != a))
}

pub fn text(program: &Program, c: &Contraction, out: &mut impl Write) -> io::Result<()> {
    let params: Vec<String> = program
        .params
        .iter()
        .enumerate()
        .map(|(k, p)| format!("{}={}", p.name, c.mapping_param(k)))
        .collect();
    writeln!(
        out,
        "storage under a schedule at {} ({})",
        if params.is_empty() {
            "no parameters".to_string()
        } else {
            params.join(", ")
        },
        match &c.affine {
            Some(a) => format!("schedule: {a}"),
            None if c.parallel.is_empty() => "parallel: none".to_string(),
            None => format!("parallel: {}", c.parallel.join(", ")),
        }
    )?;
    // A first stage the contraction is of: its title, then its lines.
    for (lines, title) in [
        (
            &c.unfolded,
            "buffers indexed modulo their extent unfolded, first (what follows is of that program)",
        ),
        (
            &c.paired,
            "paired with maximal static expansion, first (what follows is of its output)",
        ),
    ] {
        if !lines.is_empty() {
            writeln!(out, "\n{title}:")?;
            for l in lines {
                writeln!(out, "  {l}")?;
            }
        }
    }
    writeln!(
        out,
        "\nmemory-based dependences (neighbouring pairs on a cell):"
    )?;
    if c.dependences.is_empty() {
        writeln!(out, "  none")?;
    }
    for d in &c.dependences {
        writeln!(
            out,
            "  {} {} -> {} on {}: {} ({} pairs, e.g. {} -> {})",
            d.kind.name(),
            d.from,
            d.to,
            d.array,
            d.verdict.describe(),
            d.count,
            d.example.0,
            d.example.1
        )?;
    }
    let name_of = |l: CounterId| {
        (c.loop_names.get(l.index())).map_or_else(|| counter(program, l).to_string(), Clone::clone)
    };
    writeln!(out, "\nstorage mapping:")?;
    for a in written(c) {
        let modular = c.modular.iter().find(|m| m.array == a.array);
        let how = if let Some(m) = modular {
            let f = m.formula.as_ref().map_or("no formula".to_string(), |f| {
                super::modular::modulus_text(program, f)
            });
            let least = if m.least < m.modulus {
                format!(", {} would do at these sizes", m.least)
            } else {
                String::new()
            };
            let merged = if m.merged.is_empty() {
                String::new()
            } else {
                let ks: Vec<String> = (m.merged.iter().enumerate())
                    .map(|(k, x)| format!("{k} for {}", program.array_decl(*x).name))
                    .collect();
                format!("merged (k: {}), ", ks.join(", "))
            };
            format!(
                "{merged}{} cells {} [formula {f}] (modular: {} conflict differences{least})",
                super::modular::describe(program, a.array, &m.form, &m.modulus.to_string()),
                m.modulus,
                m.conflicts
            )
        } else if let Some(m) = (c.modular.iter()).find(|m| m.merged.contains(&a.array)) {
            format!("merged into {}'s storage", program.array_decl(m.array).name)
        } else if a.dims.is_empty() {
            "original cells (every loop mod 1)".to_string()
        } else {
            a.dims
                .iter()
                .map(|&d| describe_dim_named(&name_of, d, c.affine.is_some()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        writeln!(out, "  {}: {how}", a.name)?;
        for ((site, access), place) in &a.reads {
            if let ReadPlace::Original = place {
                writeln!(
                    out,
                    "    {}: initial values only, from the original array",
                    crate::codegen::read_name::read_of(program, *site, *access)
                )?;
            }
        }
    }
    writeln!(
        out,
        "\nmemory (cells): original / contracted [formula] / MSE / single assignment / live-value bound (contracted ÷ bound)"
    )?;
    let mut total = 0u64;
    for a in written(c) {
        let k = a.array.index();
        let into = lives_in(c, a.array);
        let cells = cells_of(c, a);
        let f = match c.modular.iter().find(|m| m.array == a.array) {
            _ if into.is_some() => format!("in {}", program.array_decl(into.unwrap()).name),
            Some(m) => m.formula.as_ref().map_or("no formula".to_string(), |f| {
                super::modular::modulus_text(program, f)
            }),
            None => formula(program, a).map_or("no formula".to_string(), |p| p.text(program)),
        };
        total += cells;
        let r = ratio(cells, c.bound[k]).map_or("-".to_string(), |r| format!("{r:.2}"));
        writeln!(
            out,
            "  {}: {} / {} [{f}] / {} / {} / {} ({r})",
            a.name,
            a.original,
            cells,
            c.mse[k],
            c.sa[k],
            c.bound[k].map_or("- (may-accesses)".to_string(), |b| b.to_string())
        )?;
    }
    if let Some(all) = c.bound_all {
        let r = ratio(total, Some(all)).map_or("-".to_string(), |r| format!("{r:.2}"));
        writeln!(
            out,
            "  together: {total} contracted; {all} values live at once, which no storage holds in fewer cells ({r})"
        )?;
    }
    if let Some(sh) = &c.sharing {
        let name = |a: crate::model::ArrayId| program.array_decl(a).name.as_str();
        writeln!(
            out,
            "\ntemporaries sharing storage (never live together on a cell):"
        )?;
        if sh.classes.is_empty() {
            writeln!(out, "  none")?;
        }
        for cl in &sh.classes {
            let rest: Vec<&str> = cl[1..].iter().map(|&a| name(a)).collect();
            writeln!(out, "  {} in {}", rest.join(", "), name(cl[0]))?;
        }
        for (a, b, why) in &sh.interfering {
            writeln!(out, "  {} and {} interfere: {why}", name(*a), name(*b))?;
        }
        for (a, why) in &sh.excluded {
            writeln!(out, "  {} cannot share: {why}", name(*a))?;
        }
        writeln!(out, "  cells saved: {}", sh.saved)?;
    }
    if !c.modular_refused.is_empty() {
        writeln!(out, "\narrays not live-out kept in their declared cells:")?;
        for (a, why) in &c.modular_refused {
            writeln!(out, "  {}: {why}", program.array_decl(*a).name)?;
        }
    }
    Ok(())
}

pub fn json(program: &Program, c: &Contraction, out: &mut impl Write) -> io::Result<()> {
    let params: serde_json::Map<String, Value> = program
        .params
        .iter()
        .enumerate()
        .map(|(k, p)| (p.name.clone(), json!(c.mapping_param(k))))
        .collect();
    let deps: Vec<Value> = c
        .dependences
        .iter()
        .map(|d| {
            use super::dependences::Verdict as V;
            let (verdict, lp, dim) = match &d.verdict {
                V::Carried(l) => ("carried", Some(l), None),
                V::Independent => ("independent", None, None),
                V::Broken(l) => ("broken", Some(l), None),
                V::Scheduled(k) => ("scheduled", None, Some(*k)),
                V::Reordered(l) => ("reordered", Some(l).filter(|l| !l.is_empty()), None),
            };
            json!({
                "kind": d.kind.name(), "array": d.array, "from": d.from, "to": d.to,
                "neutral": d.verdict.neutral(), "verdict": verdict, "loop": lp,
                "time_dimension": dim,
                "pairs": d.count, "example": [d.example.0, d.example.1],
            })
        })
        .collect();
    let arrays: Vec<Value> = written(c)
        .map(|a| {
            let k = a.array.index();
            let dims: Vec<Value> = a
                .dims
                .iter()
                .map(|&d| match d {
                    Dim::Expand(l) => json!({"loop": counter(program, l), "expanded": true}),
                    Dim::Fold(l, m) => json!({"loop": counter(program, l), "mod": m}),
                })
                .collect();
            let m = c.modular.iter().find(|m| m.array == a.array);
            let into = (c.modular.iter())
                .find(|m| m.merged.contains(&a.array) && m.array != a.array)
                .map(|m| program.array_decl(m.array).name.clone());
            let shared = (lives_in(c, a.array).filter(|_| into.is_none()))
                .map(|h| program.array_decl(h).name.clone());
            let cells = match (into.as_ref().or(shared.as_ref()), m) {
                (Some(_), _) => 0,
                (None, Some(m)) => m.modulus as u64,
                (None, None) => a.cells,
            };
            let f = match m {
                Some(m) => (m.formula.as_ref()).map(|f| super::modular::modulus_text(program, f)),
                None => formula(program, a).map(|p| p.text(program)),
            };
            let modular = m.map(|m| {
                json!({
                    "mapping": super::modular::describe(program, a.array, &m.form, &m.modulus.to_string()),
                    "coefficients": super::modular::coefficients(
                        &m.form,
                        super::modular::last_extent_at(program, a.array, &c.params),
                    ),
                    "modulus": m.modulus, "conflicts": m.conflicts,
                    "merged": m.merged.iter()
                        .map(|x| program.array_decl(*x).name.clone())
                        .collect::<Vec<_>>(),
                })
            });
            json!({
                "array": a.name, "dims": dims, "original": a.original, "contracted": cells,
                "formula": f, "modular": modular, "merged_into": into, "shared_into": shared,
                "mse": c.mse[k], "sa": c.sa[k], "bound": c.bound[k],
                "ratio": ratio(cells, c.bound[k]),
            })
        })
        .collect();
    let sharing = c.sharing.as_ref().map(|sh| {
        let name = |a: crate::model::ArrayId| program.array_decl(a).name.clone();
        json!({
            "classes": sh.classes.iter()
                .map(|cl| cl.iter().map(|&a| name(a)).collect::<Vec<_>>())
                .collect::<Vec<_>>(),
            "interfering": sh.interfering.iter()
                .map(|(a, b, why)| json!({"arrays": [name(*a), name(*b)], "reason": why}))
                .collect::<Vec<_>>(),
            "excluded": sh.excluded.iter()
                .map(|(a, why)| json!({"array": name(*a), "reason": why}))
                .collect::<Vec<_>>(),
            "saved": sh.saved,
        })
    });
    let doc = json!({
        "params": params, "parallel": c.parallel, "schedule": c.affine, "sharing": sharing,
        "dependences": deps, "arrays": arrays, "paired": c.paired, "unfolded": c.unfolded,
        "live_together": c.bound_all,
    });
    writeln!(out, "{doc}")
}

impl Contraction {
    /// The value of parameter `k` at the analysed sizes.
    fn mapping_param(&self, k: usize) -> i64 {
        self.params.get(k).copied().unwrap_or(0)
    }
}
