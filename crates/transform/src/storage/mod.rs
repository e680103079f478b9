//! Storage under a schedule (docs/expansion.md §10;
//! storage-optimization-under-a-schedule.txt): given the loops that run in parallel, the least
//! expansion that schedule needs. The schedule must keep every flow
//! dependence (σ) in order (`dependences::violations`); the memory-based
//! dependences it still orders are neutral, the others broken
//! (`dependences::memory_based`); the storage mapping (`mapping`) adds to
//! each array the loop dimensions that separate the values the broken ones
//! would clobber, expanded for parallel loops and folded modulo a lifetime
//! for sequential ones; `bound` is the most values live at once, a lower
//! bound for any storage; `emit` writes the contracted program. All at
//! concrete sizes; `emit` checks its closed forms at other sizes.
//! docs/expansion.md §10.

pub mod affine;
pub mod bound;
pub mod colour;
pub mod dependences;
pub mod emit;
pub mod mapping;
pub mod modular;
pub use crate::model::nodes;
pub mod pair;
#[cfg(feature = "plot")]
pub mod plot;
pub mod prove;
pub mod render;
pub mod reschedule;
pub mod schedule;
pub mod unfold;

pub use dependences::{Dependence, Violation};
pub use mapping::{ArrayMap, Dim, Mapping, Unmappable};
pub use schedule::{Breach, Order, Schedule};

use crate::expansion::{sa, Expansion};
use crate::model::Program;

/// Everything `expand --transform contract` reports at one size.
#[derive(Debug)]
pub struct Contraction {
    /// Parameter values of the analysis, in declaration order.
    pub params: Vec<i64>,
    pub parallel: Vec<String>,
    /// The affine schedule, normalised, when there is one.
    pub affine: Option<String>,
    pub dependences: Vec<Dependence>,
    pub mapping: Mapping,
    /// Per array: single-assignment cells, MSE cells (classes plus a
    /// private cell per dead write), the live-value bound (none with
    /// may-accesses).
    pub sa: Vec<u64>,
    pub mse: Vec<u64>,
    pub bound: Vec<Option<u64>>,
    /// The most values of the written arrays live at once, together: the
    /// least memory any storage of them needs under the schedule.
    pub bound_all: Option<u64>,
    /// Storage shared among the temporaries (`--temporaries`), if any
    /// were named.
    pub sharing: Option<colour::Sharing>,
    /// Temporaries kept in fewer cells by a modular mapping (`modular`),
    /// and the temporaries that are no candidates, with why.
    pub modular: Vec<modular::Modular>,
    pub modular_refused: modular::Refused,
    /// The pairing's first stage (`pair`): what maximal static expansion
    /// made of each array under dynamic control; this contraction is of
    /// its output. Empty without the pairing.
    pub paired: Vec<String>,
    /// Buffers indexed modulo their extent unfolded first (`unfold`): one
    /// line per array; this contraction is of the unfolded program.
    pub unfolded: Vec<String>,
    /// How the report names each loop, by counter id: its counter; the
    /// command names them `i@LINE` ([`Contraction::name_loops`]).
    pub loop_names: Vec<String>,
}

impl Contraction {
    /// Names loops by `names` (by counter id of the program analysed:
    /// `i@LINE`, telling sibling loops apart) in the report.
    pub fn name_loops(&mut self, names: Vec<String>) {
        for d in &mut self.dependences {
            if let Some(n) = d.counter.and_then(|c| names.get(c.index())) {
                d.verdict = d.verdict.renamed(n);
            }
        }
        self.loop_names = names;
    }
}

/// Why there is no contraction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StorageError {
    /// The schedule breaks flow dependences (the first of each kind).
    Violated(Vec<Violation>),
    /// No mapping found for an array.
    Unmappable(Unmappable),
}

/// The contraction of `program` under `schedule`, from its expansion at
/// the analysed sizes.
pub fn contract(
    program: &Program,
    exp: &Expansion,
    schedule: &Schedule,
) -> Result<Contraction, StorageError> {
    contract_with(program, exp, schedule, None)
}

/// What [`mapped`] finds at one size.
pub(crate) struct Mapped {
    pub mapping: Mapping,
    pub sharing: Option<colour::Sharing>,
    pub modular: Vec<modular::Modular>,
    pub refused: modular::Refused,
}

/// The schedule checked against σ, the storage mapping, the modular
/// mappings of the `temporaries` and the sharing among the others: what
/// `emit` needs at each sample (none of the report's dependences, memory
/// and bound).
pub(crate) fn mapped(
    program: &Program,
    exp: &Expansion,
    order: &Order,
    temporaries: Option<&[crate::model::ArrayId]>,
) -> Result<Mapped, StorageError> {
    let violations = dependences::violations(program, exp, order);
    if !violations.is_empty() {
        return Err(StorageError::Violated(violations));
    }
    let mapping = mapping::compute(program, exp, order).map_err(StorageError::Unmappable)?;
    // The modular search and the sharing both walk every access.
    let located = match temporaries {
        Some(_) => locate_accesses(exp),
        None => Vec::new(),
    };
    let sample = Sample {
        program,
        exp,
        order,
        mapping: &mapping,
        located: &located,
    };
    let (modular, refused) = match temporaries {
        Some(t) => modular::compute_located(&sample, t),
        None => Default::default(),
    };
    let rest: Option<Vec<_>> = temporaries.map(|t| {
        (t.iter().copied())
            .filter(|a| {
                !(modular.iter()).any(|m| m.worth && (m.array == *a || m.merged.contains(a)))
            })
            .collect()
    });
    let sharing = rest.map(|t| colour::compute(&sample, &t));
    Ok(Mapped {
        mapping,
        sharing,
        modular,
        refused,
    })
}

/// What the modular search and the sharing read of one sample: the
/// program's expansion and order at its sizes, the contraction's mapping,
/// and each access located once.
pub struct Sample<'a> {
    pub program: &'a Program,
    pub exp: &'a Expansion,
    pub order: &'a Order<'a>,
    pub mapping: &'a mapping::Mapping,
    /// [`locate_accesses`] of `exp`.
    pub located: &'a Located,
}

/// Each access's array and index at the sizes of `exp` (None: not a cell
/// of an array), found once for the analyses of one sample that walk every
/// access.
pub type Located = Vec<Option<(crate::model::ArrayId, Vec<i64>)>>;

pub fn locate_accesses(exp: &Expansion) -> Located {
    let f = &exp.inst.facts;
    (0..f.n_accs())
        .map(|x| f.cells.locate(f.acc_cell[x] as usize))
        .collect()
}

/// `contract`, then the storage `temporaries` (arrays whose final contents
/// are not results) can share (`colour`).
pub fn contract_with(
    program: &Program,
    exp: &Expansion,
    schedule: &Schedule,
    temporaries: Option<&[crate::model::ArrayId]>,
) -> Result<Contraction, StorageError> {
    let order = Order::new(program, &exp.inst.facts, schedule);
    let Mapped {
        mapping,
        sharing,
        modular,
        refused,
    } = mapped(program, exp, &order, temporaries)?;
    let (modular, kept): (Vec<_>, Vec<modular::Modular>) =
        modular.into_iter().partition(|m| m.worth);
    let mut refused = refused;
    let in_group = |a| modular.iter().any(|m| m.merged.contains(&a));
    for m in kept
        .into_iter()
        .filter(|m| m.merged.is_empty() && m.values > 0 && !in_group(m.array))
    {
        let cells = mapping.arrays.iter().find(|a| a.array == m.array);
        refused.push((
            m.array,
            format!(
                "its values need {} cells, it declares {}",
                m.modulus,
                cells.map_or(0, |a| a.original)
            ),
        ));
    }
    let dependences = dependences::memory_based(program, exp, &order);
    let base = sa::single_assignment(program, exp);
    let memory = crate::expansion::render::memory(exp, &base);
    let n = program.arrays.len();
    let mut sa_cells = vec![0; n];
    let mut mse_cells = vec![0; n];
    for (k, m) in memory.iter().enumerate().take(n) {
        sa_cells[k] = m.sa;
        mse_cells[k] = m.mse + m.dead_cells;
    }
    let classes = sharing.as_ref().map_or(&[][..], |s| &s.classes[..]);
    // The arrays the report lists: written, or holding a class's storage.
    let mut declared = vec![None; n];
    for a in &mapping.arrays {
        let k = a.array.index();
        if sa_cells[k] > 0 || !a.dims.is_empty() || classes.iter().any(|cl| cl[0] == a.array) {
            declared[k] = Some(a.original);
        }
    }
    let bound::Bound { arrays: bound, all } = bound::live_values(
        exp,
        &order,
        &declared,
        temporaries.unwrap_or_default(),
        classes,
    );
    Ok(Contraction {
        params: exp.inst.facts.params.iter().map(|&(_, v)| v).collect(),
        parallel: schedule.names(program),
        affine: schedule.affine.as_ref().map(|a| a.text.clone()),
        dependences,
        mapping,
        sa: sa_cells,
        mse: mse_cells,
        bound,
        bound_all: all,
        sharing,
        modular,
        modular_refused: refused,
        paired: Vec::new(),
        unfolded: Vec::new(),
        loop_names: program.counters.iter().map(|c| c.name.clone()).collect(),
    })
}
