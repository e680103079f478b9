//! The pairing (`storage::pair`): maximal static expansion for
//! the arrays under dynamic control, contraction under the schedule for
//! the others, in one emitted program. Checked by hand on a fixture (what
//! each array becomes), by `equiv` against the original at sizes the
//! emitter neither sampled nor validated (a broken variant must differ),
//! by the proof's soundness on a kept array with indirect writes, and on
//! generated programs with unknown conditions and indirect subscripts.

mod support;

use arrayflow::codegen::Options;
use arrayflow::diagnostics::FileId;
use arrayflow::equiv::{equiv, EquivOptions, Verdict};
use arrayflow::model::Program;
use arrayflow::storage::prove::{prove, Layout, Time};
use arrayflow::storage::{emit, pair, Schedule, StorageError};

fn compile(text: &str) -> Program {
    let (p, d) = arrayflow::lower::compile(text, FileId(0));
    p.unwrap_or_else(|| panic!("{d:?}\n{text}"))
}

fn histogram() -> Program {
    let path = format!(
        "{}/fixtures/storage/pair-histogram.loop",
        env!("CARGO_MANIFEST_DIR")
    );
    compile(&std::fs::read_to_string(path).unwrap())
}

fn agree(a: &Program, b: &Program, n: i64, m: i64) -> bool {
    let o = EquivOptions {
        params: vec![("N".into(), n), ("M".into(), m)],
        seeds: 5,
        ..Default::default()
    };
    match equiv(a, b, &o) {
        Ok(Verdict::Agree(_)) => true,
        Ok(Verdict::Differ(_)) => false,
        Err(e) => panic!("{}", e.message),
    }
}

/// The extents of a declared array, as printed (`1..M, 1..N`).
fn extents(p: &Program, name: &str) -> String {
    let text = arrayflow::print::program(p);
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("real {name}[")))
        .unwrap_or_else(|| panic!("no `{name}` in\n{text}"));
    line[line.find('[').unwrap() + 1..line.rfind(']').unwrap()].to_string()
}

#[test]
fn the_histogram_pairs_mse_for_h_with_contraction_for_s() {
    let p = histogram();
    let s = Schedule::new(&p, Some(&["i".to_string()])).unwrap();
    let o = Options::default();
    // Contraction alone cannot: some write of H may miss its cell.
    match emit::checked_with(&p, &s, &[], &o) {
        Err(emit::EmitError::Storage(StorageError::Unmappable(u))) => {
            assert_eq!(u.array, "H");
            assert!(u.dynamic, "{u:?}");
        }
        Err(e) => panic!("{e:?}"),
        Ok(_) => panic!("contracted without the pairing"),
    }
    let e = pair::checked_with(&p, &s, &[], &o).unwrap();
    let m = e.mse.as_ref().expect("paired");
    assert_eq!(m.lines.len(), 1, "{:?}", m.lines);
    assert!(m.lines[0].starts_with("H -> H_1 "), "{}", m.lines[0]);
    assert!(m.unproved.is_none(), "{:?}", m.unproved);
    // By hand (the fixture's comment): M cells per row, one s per row.
    assert_eq!(extents(&e.program, "H_1"), "1..M, 1..N", "{}", e.text);
    assert_eq!(extents(&e.program, "s_c"), "1..N", "{}", e.text);
    let contracted: Vec<&str> = e.arrays.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(contracted, ["s -> s_c"]);
    assert!(e.proof.proved(), "{:?}", e.proof);
    assert!(emit::header(&e).contains("# paired with maximal static expansion"));
    // The interpreter, rows shuffled, at sizes the emitter did not try.
    for (n, mm) in [(11, 4), (3, 9), (13, 13)] {
        assert!(agree(&p, &e.program, n, mm), "N={n} M={mm}\n{}", e.text);
    }
    // Broken: every row in one buffer row. The rows run shuffled, so the
    // copy-out (row N's bins) sees another row's.
    let broken = e.text.replace(", i]", ", 1]");
    assert_ne!(broken, e.text);
    let b = compile(&broken);
    assert!(
        [(11, 4), (3, 9), (13, 13)]
            .iter()
            .any(|&(n, mm)| !agree(&p, &b, n, mm)),
        "{broken}"
    );
}

/// The proof's "on one cell" leaves out a dimension whose subscript is
/// not affine: H kept as it is, written at H[idx[j]] by every row, is
/// proved when the rows run in order and not when they run in parallel.
#[test]
fn an_indirectly_written_array_kept_is_proved_only_in_order() {
    let p = histogram();
    let keep: Vec<Layout> = ["idx", "H", "Out", "s", "X"]
        .iter()
        .map(|n| Layout::identity(&p, p.array(n).unwrap()))
        .collect();
    let none = vec![false; p.counters.len()];
    let proof = prove(&p, Time::Loops(&none), &keep);
    assert!(proof.proved(), "{proof:?}");
    let rows: Vec<bool> = p.counters.iter().map(|c| c.name == "i").collect();
    assert!(!prove(&p, Time::Loops(&rows), &keep).proved());
    // Only H and s are in the way: the others, kept, are proved.
    let others: Vec<Layout> = keep
        .into_iter()
        .filter(|l| ![p.array("H").unwrap(), p.array("s").unwrap()].contains(&l.array))
        .collect();
    assert!(prove(&p, Time::Loops(&rows), &others).proved());
}

/// Temporaries (`--temporaries`): without `assume N >= 1` the copy-out
/// of H (row N's bins, or H's initial contents when N = 0) has no static
/// label, so MSE does not expand H; as a temporary H has no copy-out, and
/// the pairing goes through, its final contents not compared.
#[test]
fn a_temporary_has_no_copy_out_to_tie_its_writes() {
    let text = std::fs::read_to_string(format!(
        "{}/fixtures/storage/pair-histogram.loop",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
    .replace("assume N >= 1;\n", "");
    let p = compile(&text);
    let s = Schedule::new(&p, Some(&["i".to_string()])).unwrap();
    let o = Options::default();
    let h = p.array("H").unwrap();
    match pair::checked_with(&p, &s, &[], &o) {
        Err(emit::EmitError::Other(m)) => {
            assert!(m.contains("maximal static expansion did not"), "{m}")
        }
        Err(e) => panic!("{e:?}"),
        Ok(e) => panic!("paired:\n{}", e.text),
    }
    let e = pair::checked_with(&p, &s, &[h], &o).unwrap();
    let m = e.mse.as_ref().expect("paired");
    assert!(m.lines[0].ends_with("a temporary: its final contents not copied out"));
    assert!(!e.text.contains("H[o"), "copied out:\n{}", e.text);
    let eo = EquivOptions {
        params: vec![("N".into(), 9), ("M".into(), 6)],
        seeds: 5,
        scratch: vec!["H".into()],
        ..Default::default()
    };
    assert!(matches!(equiv(&p, &e.program, &eo), Ok(Verdict::Agree(_))));
}

/// A dead write sent to a scratch group keeps only its κ subscripts;
/// reads in its own subscripts would not run (found by the pairing's
/// end-to-end check on generated seed 3): such a form is not emitted.
#[test]
fn a_dead_write_with_subscript_reads_is_not_compacted() {
    let p = compile(
        "param N = 2;\nassume N >= 2;\nreal A[-1..N, -1..N, 1..N];\nreal x;\n\
         for i = 1 to N + 1 step 2 do\n  for j = 1 to i step 2 do\n    use(x, A[j - 1, -1, 2]);\n  end\nend\n\
         S2: A[2, -1, A[0, 1 - N, 6 - 2 * N] % N + 1] = 1;\n\
         for i = 2 to N + 1 do\n  A[0, -1, 2] = (x + 8) / 4;\nend\n",
    );
    let o = Options {
        scratch: vec![p.array("A").unwrap()],
        ..Options::default()
    };
    let e = arrayflow::codegen::emit(&p, &o).unwrap();
    let a = e.arrays.iter().find(|r| r.name == "A").unwrap();
    assert!(!a.expanded, "{}", e.text);
    assert!(
        a.verdict
            .contains("`S2` is a dead write with reads in its subscripts"),
        "{}",
        a.verdict
    );
}

/// `expand --transform contract`: the report (text, JSON) and the emitted
/// program of the pairing; the refusal where MSE is not enough points at
/// the write in the original file.
#[test]
fn the_command_pairs_in_the_report_the_json_and_the_program() {
    let f = "fixtures/storage/pair-histogram.loop";
    let base = ["expand", f, "--transform", "contract", "--parallel", "i"];
    let (code, out, err) = support::run(&base);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("paired with maximal static expansion, first"),
        "{out}"
    );
    // By hand at N=4, M=5: H_1 holds M bins per row, 20 cells; s one per
    // row, 4.
    assert!(out.contains("  H_1: 20 / 20 [N * M]"), "{out}");
    assert!(out.contains("  s: 1 / 4 [N]"), "{out}");
    let (code, json, _) = support::run(&[&base[..], &["--format", "json"]].concat());
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let paired = v["paired"].as_array().unwrap();
    assert_eq!(paired.len(), 1);
    assert!(paired[0].as_str().unwrap().starts_with("H -> H_1 "));
    let (code, program, err) = support::run(&[&base[..], &["--emit", "code"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(program.contains("# H -> H_1 ((M)·(N) cells)"), "{program}");
    assert!(program.contains("real H_1[1..M, 1..N];"), "{program}");

    let f = "fixtures/storage/pair-not-enough.loop";
    for emit in [&[][..], &["--emit", "code"][..]] {
        let args = [
            &["expand", f, "--transform", "contract", "--parallel", "i"][..],
            emit,
        ]
        .concat();
        let (code, out, err) = support::run(&args);
        assert_eq!(code, 1, "{out}");
        assert!(
            err.contains("error[E0604]: no storage mapping for `A_1`"),
            "{err}"
        );
        assert!(
            err.contains("still needs expanding under parallel i"),
            "{err}"
        );
        // The span is the original's S (line 9), not the printed first stage's.
        assert!(err.contains("pair-not-enough.loop:9:3"), "{err}");
        assert!(err.contains("S: A[idx[i]] = i;"), "{err}");
    }
}

/// `plot --transform contract` pairs as `expand` does: MSE example 3's T
/// (`A[j]` in every row) with `i` parallel writes A_1[j, i], by hand N^2 =
/// 25 places at N = 5, one per write.
#[test]
fn the_plot_draws_the_paired_storage() {
    let out = std::env::temp_dir().join(format!("arrayflow-pair-{}.svg", std::process::id()));
    let o = out.display().to_string();
    let (code, _, err) = support::run(&[
        "plot",
        "fixtures/papers/mse-example3.loop",
        "--stmt",
        "T",
        "--transform",
        "contract",
        "--parallel",
        "i",
        "-o",
        &o,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("paired with maximal static expansion: A -> A_1 "),
        "{err}"
    );
    assert!(err.contains("25 writes, 25 storage places"), "{err}");
    assert!(std::fs::read_to_string(&out).unwrap().contains("<svg"));
    let _ = std::fs::remove_file(&out);
}
