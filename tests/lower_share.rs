//! One process's share of the lowering (`facts::lower_share`, the dd
//! engine across processes) holds exactly the facts the whole lowering
//! makes for its stretch of the access instances: every column of its
//! access instances, their operations' guards, in the whole program's ids;
//! the stretches of the parts tile the access instances in order; process
//! 0 holds every operation's tables and the totals, and meets the whole
//! lowering's error when a budget runs out.
//!
//! The oracle is the whole sequential lowering (`lower_framed` on one
//! thread). Programs: every fixture, plain and with the kernel frame the
//! `flow` command lowers with (`db::kernel::augment`: entry writes and exit
//! reads), and generated programs with every form (40 by default,
//! `ARRAYFLOW_CASES` more), at 2, 3 and 5 parts, each at its default sizes
//! and with a budget of access instances that runs out part-way.

mod support;

use arrayflow::dataflow::{with_threads, Config};
use arrayflow::facts::{lower_framed, lower_share, Facts, Frame, Lit, Share};
use arrayflow::model::Program;

fn kinds() -> arrayflow::kinds::Kinds {
    arrayflow::kinds::Kinds::core()
}

fn whole(program: &Program, config: &Config, frame: &Frame) -> Result<Facts, String> {
    with_threads(1, || {
        lower_framed(program, config, kinds().all(), false, frame).map_err(|e| e.to_string())
    })
    .expect("a pool")
}

fn share(
    program: &Program,
    config: &Config,
    frame: &Frame,
    part: usize,
    parts: usize,
) -> Result<Share, String> {
    lower_share(program, config, kinds().all(), frame, part, parts).map_err(|e| e.to_string())
}

fn guard(f: &Facts, op: u32) -> Vec<Lit> {
    f.guard(op).collect()
}

/// Checks the shares of `program` against its whole lowering; returns
/// whether the program was cut into at least two non-empty stretches.
fn compare(name: &str, program: &Program, frame: &Frame) -> bool {
    let base = Config {
        max_instances: 2_000_000,
        ..Config::default()
    };
    let mut cut = false;
    let Ok(all) = whole(program, &base, frame) else {
        return false;
    };
    let n = all.n_accs() as u32;
    for parts in [2, 3, 5] {
        let mut next = 0u32;
        let mut stretches = 0;
        for part in 0..parts {
            let s = share(program, &base, frame, part, parts)
                .unwrap_or_else(|e| panic!("{name}, part {part} of {parts}: {e}"));
            if s.is_whole() {
                assert!(
                    s.facts == all,
                    "{name}: a whole share is the whole lowering"
                );
                next = n;
                continue;
            }
            let accs = s.accs();
            assert_eq!(
                accs.start, next,
                "{name}, part {part} of {parts}: the stretches tile"
            );
            next = accs.end;
            stretches += usize::from(!accs.is_empty());
            for x in accs {
                let k = x as usize;
                let o = all.acc_op[k];
                let what = |col: &str| format!("{name}, part {part} of {parts}: {col} of {x}");
                assert_eq!(s.op(x), o, "{}", what("op"));
                assert_eq!(s.prev(x), all.acc_prev[k], "{}", what("prev"));
                assert_eq!(s.link(x), all.acc_link[k], "{}", what("link"));
                assert_eq!(s.slot(x), all.acc_slot[k], "{}", what("slot"));
                assert_eq!(s.is_read(x), all.is_read(x), "{}", what("read"));
                assert_eq!(s.is_must(x), all.is_must(x), "{}", what("must"));
                assert_eq!(s.is_may(x), all.is_may(x), "{}", what("may"));
                assert_eq!(s.site(o), all.op_site[o as usize], "{}", what("site"));
                assert_eq!(
                    s.guard(o).collect::<Vec<_>>(),
                    guard(&all, o),
                    "{}",
                    what("guard")
                );
                assert_eq!(s.owner(x), part, "{}", what("owner"));
            }
            if part == 0 {
                assert!(s.has_all_ops(), "{name}: process 0 holds every operation");
                assert_eq!(s.facts.op_site, all.op_site, "{name}: op_site");
                assert_eq!(
                    s.facts.op_iter_start, all.op_iter_start,
                    "{name}: op_iter_start"
                );
                assert_eq!(s.facts.iters, all.iters, "{name}: iters");
                assert_eq!(s.facts.slots, all.slots, "{name}: slots");
                assert_eq!(
                    s.facts.frame_instances, all.frame_instances,
                    "{name}: frame"
                );
                assert_eq!(s.n_accs(), u64::from(n), "{name}: the total");
                let readers = (0..n).filter(|&x| all.is_read(x));
                let (count, last) = readers.fold((0, u32::MAX), |(c, _), x| (c + 1, all.op(x)));
                assert_eq!(s.readers(), (count, last), "{name}: the readers");
                // A budget that runs out part-way: the whole lowering's error.
                let half = Config {
                    max_instances: u64::from(n) / 2,
                    ..base.clone()
                };
                if let Err(e) = whole(program, &half, frame) {
                    let got = share(program, &half, frame, 0, parts).err();
                    assert_eq!(got, Some(e), "{name}: process 0's budget error");
                }
            }
        }
        assert_eq!(
            next, n,
            "{name}, {parts} parts: the stretches cover the program"
        );
        cut |= stretches >= 2;
    }
    cut
}

fn frame_of(program: &Program) -> (Program, Frame) {
    let (p, augmented) = arrayflow::db::kernel::augment(program);
    let frame = augmented.frame();
    (p, frame)
}

#[test]
fn fixtures_are_shared_exactly() {
    let (mut programs, mut cut, mut framed) = (0, 0, 0);
    for path in support::fixtures::paths() {
        let Some(program) = support::fixtures::compile(&path) else {
            continue;
        };
        let name = path.display().to_string();
        programs += 1;
        cut += usize::from(compare(&name, &program, &Frame::default()));
        let (p, frame) = frame_of(&program);
        framed += usize::from(compare(&format!("{name} (framed)"), &p, &frame));
    }
    assert!(programs > 60, "{programs} fixtures");
    // Most programs have a top-level loop to cut.
    assert!(cut > programs / 2, "{cut} of {programs} fixtures cut");
    assert!(
        framed > programs / 2,
        "{framed} of {programs} framed fixtures cut"
    );
}

#[test]
fn generated_programs_are_shared_exactly() {
    let cases = support::cases(40);
    let mut cut = 0;
    for seed in 0..cases {
        let program = support::generated(seed);
        let name = format!("generated program {seed}");
        cut += usize::from(compare(&name, &program, &Frame::default()));
        let (p, frame) = frame_of(&program);
        compare(&format!("{name} (framed)"), &p, &frame);
    }
    assert!(cases < 10 || cut > 0, "some generated programs are cut");
}
