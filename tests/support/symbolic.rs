//! Symbolic σ against bounded σ (`dataflow::analyze`) at parameter vectors
//! sampled by `symbolic::infer` and not: tests/symbolic.rs and
//! tests/polybench_flow.rs.

use arrayflow::dataflow::{analyze, Config, DataflowError};
use arrayflow::model::{Operation, Program, Site};
use arrayflow::symbolic::{self, Outcome, Symbolic};

/// Parameter vectors to check at: all equal 0..=8, each parameter alone
/// at 0, 1, 2, 3, 7, 9 with the others at 6, and two mixed ones; those the
/// assumptions allow.
pub fn vectors(program: &Program) -> Vec<Vec<(String, i64)>> {
    let n = program.params.len();
    let mut raw: Vec<Vec<i64>> = (0..=8).map(|k| vec![k; n]).collect();
    for p in 0..n {
        for v in [0, 1, 2, 3, 7, 9] {
            let mut b = vec![6; n];
            b[p] = v;
            raw.push(b);
        }
    }
    raw.push((0..n as i64).map(|k| 7 - 2 * (k % 3)).collect());
    raw.push((0..n as i64).map(|k| 3 + 4 * (k % 2)).collect());
    raw.into_iter()
        .map(|v| {
            program
                .params
                .iter()
                .zip(v)
                .map(|(p, x)| (p.name.clone(), x))
                .collect::<Vec<_>>()
        })
        .filter(|named| program.param_values(named).is_ok())
        .collect()
}

/// Compares every exact quast with bounded σ at `params`; returns how many
/// read instances were compared (None: the program cannot run there).
pub fn compare(program: &Program, sym: &Symbolic, params: &[(String, i64)]) -> Option<usize> {
    let config = Config {
        params: params.to_vec(),
        max_trips: 2,
        max_instances: 3_000_000,
        max_memory: arrayflow::budget::limit(),
    };
    let flow = match analyze(program, &config) {
        Ok(f) => f,
        Err(DataflowError::Eval { .. }) | Err(DataflowError::Budget { .. }) => return None,
        Err(e) => panic!("{e}"),
    };
    let values = program.param_values(params).unwrap();
    // Where an access leaves its declared range the run stops: no claim.
    if !sym.claims(&values) {
        return None;
    }
    let mut n = 0;
    for r in flow.iter() {
        let Site::Stmt(s) = r.site() else { continue };
        let Some(rf) = sym
            .reads
            .iter()
            .find(|x| x.stmt == s && x.read == r.access())
        else {
            panic!("no symbolic entry for a read of {s:?}")
        };
        let Outcome::Exact(q) = &rf.outcome else {
            continue;
        };
        let got = q
            .eval(&rf.counters, r.iter(), &values)
            .expect("no overflow");
        let want = r.sources();
        let expect = match got {
            None => (true, vec![]),
            Some((w, it)) => (
                false,
                vec![Operation {
                    site: Site::Stmt(w),
                    iter: it,
                }],
            ),
        };
        assert_eq!(
            (want.initial, want.writes.clone()),
            expect,
            "read {} of {} at {:?}, params {:?}\nquast: {}\nprogram:\n{}",
            r.access(),
            program.site_name(Site::Stmt(s)),
            r.iter(),
            params,
            symbolic::Names::new(program).line(q),
            arrayflow::print::program(program)
        );
        n += 1;
    }
    Some(n)
}

/// Read instances compared at every vector of [`vectors`].
pub fn check_everywhere(program: &Program, sym: &Symbolic) -> usize {
    vectors(program)
        .iter()
        .filter_map(|v| compare(program, sym, v))
        .sum()
}

/// Compares every set of possible sources (`Outcome::Possible`) with
/// bounded σ at `params` with `max_trips` trips per `while`: at each read
/// instance, the statement instances (of the bounded run) the set contains,
/// and whether it contains the initial value, must be exactly the bounded
/// sources. Returns how many read instances were compared.
pub fn compare_possible(
    program: &Program,
    sym: &Symbolic,
    params: &[(String, i64)],
    max_trips: u32,
) -> Option<usize> {
    let config = Config {
        params: params.to_vec(),
        max_trips,
        max_instances: 300_000,
        max_memory: arrayflow::budget::limit(),
    };
    let inst = match arrayflow::dataflow::analyze_instances(program, &config) {
        Ok(f) => f,
        Err(DataflowError::Eval { .. }) | Err(DataflowError::Budget { .. }) => return None,
        Err(e) => panic!("{e}"),
    };
    let values = program.param_values(params).unwrap();
    let facts = &inst.facts;
    let mut n = 0;
    for r in inst.flow.iter() {
        let Site::Stmt(s) = r.site() else { continue };
        let rf = sym
            .reads
            .iter()
            .find(|x| x.stmt == s && x.read == r.access())
            .expect("a symbolic entry for every read");
        let Outcome::Possible(p) = &rf.outcome else {
            continue;
        };
        let want = r.sources();
        let mut got = Vec::new();
        for op in 0..facts.n_ops() as u32 {
            let site = facts.site(op);
            let Site::Stmt(w) = site else { continue };
            if p.contains(
                &rf.counters,
                r.iter(),
                &values,
                Some((w, facts.op_iter(op))),
            ) {
                got.push(Operation {
                    site,
                    iter: facts.op_iter(op).to_vec(),
                });
            }
        }
        let mut wanted = want.writes.clone();
        wanted.sort();
        got.sort();
        let init = p.contains(&rf.counters, r.iter(), &values, None);
        assert_eq!(
            (want.initial, &wanted),
            (init, &got),
            "read {} of {} at {:?}, params {params:?}, max-trips {max_trips}\npossible: {:#?}\nprogram:\n{}",
            r.access(),
            program.site_name(Site::Stmt(s)),
            r.iter(),
            symbolic::render::possible_lines(program, p),
            arrayflow::print::program(program)
        );
        n += 1;
    }
    Some(n)
}
