//! The default memo (`auto`) pays for itself. On a program of
//! many varied statements (tests/support/many.rs) its tables switch
//! themselves off, and every mode gives the same answers: `auto` exactly
//! `improved`'s report, and `off` the same verdicts, kinds and directions
//! (the test that decides may differ: `improved` solves the reduced problem).
//! 100 statements (about 9,600 problems), three modes: a few seconds in the
//! test profile. Figures: docs/benchmarks.md, "The `deps` memo".

#[path = "support/many.rs"]
mod many;

use arrayflow::dependence::{analyze, report, Config, MemoMode, Stats, Tester};
use arrayflow::diagnostics::FileId;

fn deps(text: &str, memo: MemoMode) -> (String, Stats) {
    let (program, diags) = arrayflow::lower::compile(text, FileId(0));
    let program = program.unwrap_or_else(|| panic!("{diags:?}"));
    let mut t = Tester::new(Config {
        memo,
        ..Config::default()
    });
    let pairs = analyze(&program, &mut t);
    (report::render_text(&pairs), t.stats())
}

/// The report without the name of the test that decided each pair.
fn verdicts(report: &str) -> String {
    report
        .lines()
        .map(|l| match (l.rfind('['), l.rfind(',')) {
            (Some(a), Some(b)) if a < b => format!("{}[{}", &l[..a], &l[b + 1..]),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_auto_memo_switches_off_where_it_does_not_pay_and_answers_the_same() {
    let text = many::program(100, 1);
    assert_eq!(text.matches(": ").count(), 100);
    let (auto, s) = deps(&text, MemoMode::Auto);
    let (improved, si) = deps(&text, MemoMode::Improved);
    let (off, _) = deps(&text, MemoMode::Off);
    assert!(
        auto.lines().count() > 1000,
        "{} pairs",
        auto.lines().count()
    );
    // The problems are many and mostly distinct: the tables stop.
    assert!(
        si.problems > 4096 && si.exact_hit_rate() < 0.25,
        "{}",
        si.render()
    );
    assert!(s.switched_off.1, "{}", s.render());
    assert!(s.render().contains("switched itself off"), "{}", s.render());
    assert_eq!(auto, improved);
    assert_eq!(verdicts(&auto), verdicts(&off));
}

#[test]
fn the_auto_memo_keeps_its_tables_on_a_small_program() {
    // A few hundred problems, many repeated: the tables stay on and hit.
    let text = many::program(12, 3);
    let (auto, s) = deps(&text, MemoMode::Auto);
    let (improved, si) = deps(&text, MemoMode::Improved);
    assert_eq!(auto, improved);
    assert!(!s.switched_off.0 && !s.switched_off.1, "{}", s.render());
    assert_eq!(s.exact_hit_rate(), si.exact_hit_rate());
}
