//! Temporaries sharing storage by colouring (`expand --transform contract
//! --temporaries T1,T2`): two temporaries with disjoint lifetimes
//! share one array, two that overlap do not (worked out in the fixtures'
//! comments); forcing the overlapping pair to share makes `equiv` find the
//! difference (the interference check is what keeps it right); generated
//! programs with every array a temporary are emitted, validated by the
//! emitter and compared again here at a size it neither sampled nor
//! validated. ARRAYFLOW_CASES generated programs (default 100).

mod support;

use arrayflow::codegen::Options;
use arrayflow::dataflow::Config;
use arrayflow::diagnostics::FileId;
use arrayflow::equiv::{equiv, EquivOptions, Verdict};
use arrayflow::expansion;
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::model::{ArrayId, Program};
use arrayflow::storage::{self, colour, emit, Schedule, StorageError};

fn read(path: &str) -> Program {
    let text = std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let (p, d) = arrayflow::lower::compile(&text, FileId(0));
    p.unwrap_or_else(|| panic!("{d:?}"))
}

fn ids(p: &Program, names: &[&str]) -> Vec<ArrayId> {
    names.iter().map(|n| p.array(n).unwrap()).collect()
}

fn scratch(p: &Program, t: &[ArrayId]) -> Vec<String> {
    t.iter().map(|&a| p.array_decl(a).name.clone()).collect()
}

/// `b` against `p` at `params`, `t`'s final contents not compared, the
/// `doall` loops shuffled on 10 seeds.
fn compare(p: &Program, b: &Program, t: &[ArrayId], params: &[(&str, i64)]) -> Verdict {
    let o = EquivOptions {
        params: params.iter().map(|&(n, v)| (n.to_string(), v)).collect(),
        seeds: 10,
        scratch: scratch(p, t),
        ..Default::default()
    };
    equiv(p, b, &o).unwrap()
}

#[test]
fn disjoint_phases_share_one_array() {
    let p = read("fixtures/storage/temporaries-phases.loop");
    let t = ids(&p, &["T1", "T2"]);
    let s = Schedule::new(&p, Some(&["i".to_string()])).unwrap();
    let exp = expansion::expand(&p, &Config::default()).unwrap();
    let c = storage::contract_with(&p, &exp, &s, Some(&t)).unwrap();
    let sh = c.sharing.unwrap();
    assert_eq!(sh.classes, vec![t.clone()]);
    assert!(sh.interfering.is_empty());
    // T2's 8 cells (N = 8) are no longer declared.
    assert_eq!(sh.saved, 8);
    let e = emit::checked_with(&p, &s, &t, &Options::default()).unwrap();
    assert!(!e.text.contains("real T2"), "{}", e.text);
    assert!(e.text.contains("P2: T1[i] = B[i] * 3;"), "{}", e.text);
    assert!(e.text.contains("Q2: C[i] = T1[i] + T1[i];"), "{}", e.text);
    assert_eq!(e.shared, ["T2 in T1"]);
    assert!(matches!(
        compare(&p, &e.program, &t, &[("N", 17)]),
        Verdict::Agree(_)
    ));
}

#[test]
fn overlapping_temporaries_do_not_share_and_forcing_them_is_caught() {
    let p = read("fixtures/storage/temporaries-overlap.loop");
    let t = ids(&p, &["T1", "T2"]);
    let s = Schedule::new(&p, Some(&["i".to_string()])).unwrap();
    let exp = expansion::expand(&p, &Config::default()).unwrap();
    let c = storage::contract_with(&p, &exp, &s, Some(&t)).unwrap();
    let sh = c.sharing.unwrap();
    assert!(sh.classes.is_empty());
    assert_eq!(sh.saved, 0);
    assert_eq!(sh.interfering.len(), 1);
    assert!(
        sh.interfering[0]
            .2
            .contains("Q[1] would read the value of P2[1] instead of P1[1]"),
        "{:?}",
        sh.interfering
    );
    let e = emit::checked_with(&p, &s, &t, &Options::default()).unwrap();
    assert!(e.shared.is_empty());
    assert!(e.text.contains("real T2"), "{}", e.text);
    // Sharing anyway: Q reads T2's value for T1's.
    let mut forced = p.clone();
    colour::apply(&mut forced, std::slice::from_ref(&t));
    assert_eq!(forced.arrays.len(), p.arrays.len() - 1);
    assert!(matches!(compare(&p, &forced, &t, &[]), Verdict::Differ(_)));
}

#[test]
fn the_command_reports_sharing_and_refuses_unknown_arrays() {
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
            .args(["expand", "fixtures/storage/temporaries-phases.loop"])
            .args(["--transform", "contract", "--parallel", "i@10,i@14"])
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, out, _) = run(&["--temporaries", "T1,T2"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("  T2 in T1\n  cells saved: 8\n"), "{out}");
    let (code, out, _) = run(&["--temporaries", "T1,T2", "--format", "json"]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["sharing"]["classes"][0][1], "T2");
    assert_eq!(v["sharing"]["saved"], 8);
    let (code, out, _) = run(&["--temporaries", "T1,T2", "--emit", "code"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("# temporaries sharing storage: T2 in T1"),
        "{out}"
    );
    let (code, _, err) = run(&["--temporaries", "T9"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("E0606"), "{err}");
}

#[test]
fn generated_programs_with_every_array_a_temporary() {
    // No loop parallel and every array a temporary: the most sharing the
    // program order allows. The emitter validates; here again at every
    // parameter's default + 6.
    let n = support::cases(100);
    let (mut emitted, mut shared, mut unshared, mut refused) = (0, 0, 0, 0);
    let mut saved = 0u64;
    for seed in 0..n {
        let p = generate(seed, &GenOptions::static_control(Size::Small));
        let Ok(exp) = expansion::expand(&p, &Config::default()) else {
            continue;
        };
        let t: Vec<ArrayId> = (0..p.arrays.len() as u32).map(ArrayId).collect();
        let s = Schedule::new(&p, Some(&[])).unwrap();
        let c = match storage::contract_with(&p, &exp, &s, Some(&t)) {
            Ok(c) => c,
            Err(StorageError::Violated(v)) => panic!("seed {seed}: sequential yet {v:?}"),
            Err(StorageError::Unmappable(u)) => panic!("seed {seed}: sequential yet {u:?}"),
        };
        saved += c.sharing.map_or(0, |x| x.saved);
        let e = match emit::checked_with(&p, &s, &t, &Options::default()) {
            Ok(e) => e,
            Err(err) => {
                eprintln!("seed {seed}: {err:?}");
                refused += 1;
                continue;
            }
        };
        emitted += 1;
        shared += usize::from(!e.shared.is_empty());
        if let Some(u) = &e.unshared {
            eprintln!("seed {seed}: not shared after all: {u}");
            unshared += 1;
        }
        let params = support::defaults_plus(&p, 6);
        let o = EquivOptions {
            params,
            seeds: 5,
            scratch: scratch(&p, &t),
            ..Default::default()
        };
        match equiv(&p, &e.program, &o) {
            Ok(Verdict::Agree(_)) | Err(_) => {}
            Ok(Verdict::Differ(m)) => panic!("seed {seed}: {m}\n{}", e.text),
        }
    }
    eprintln!(
        "{n} programs: {emitted} emitted, {shared} with shared storage \
         ({saved} cells saved at the defaults), {unshared} whose sharing was dropped (refuted \
         at a smaller sample or a validation size), {refused} refused"
    );
    assert!(emitted * 4 >= n * 3, "{emitted} of {n}");
    assert!(shared > 0);
}

/// `--live-out A,B,C` says what `--temporaries T1,T2` says; `equiv
/// --live-out` compares programs that share storage (T2 lives in T1), and
/// still finds a changed value.
#[test]
fn live_out_arrays_are_what_equiv_compares_on_shared_storage() {
    let src = "fixtures/storage/temporaries-phases.loop";
    let contract = [
        "expand",
        src,
        "--transform",
        "contract",
        "--parallel",
        "i@10,i@14",
    ];
    let live = [&contract[..], &["--live-out", "A,B,C", "--emit", "code"]].concat();
    let temps = [&contract[..], &["--temporaries", "T1,T2", "--emit", "code"]].concat();
    let (rc, by_live, err) = support::run(&live);
    assert_eq!(rc, 0, "{err}");
    let (_, by_temps, _) = support::run(&temps);
    assert_eq!(by_live, by_temps);
    assert!(
        by_live.contains("T2 in T1") && !by_live.contains("real T2"),
        "{by_live}"
    );
    let dir = std::env::temp_dir().join(format!("arrayflow-live-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let b = dir.join("shared.loop");
    std::fs::write(&b, &by_live).unwrap();
    let b = b.to_str().unwrap();
    let (rc, out, err) = support::run(&["equiv", src, b, "--live-out", "A,B,C"]);
    assert_eq!(rc, 0, "{out}{err}");
    // Without it, T2 of A has no array in B.
    let (rc, _, err) = support::run(&["equiv", src, b]);
    assert_eq!(rc, 1);
    assert!(err.contains("E0401") && err.contains("`T2`"), "{err}");
    let (rc, _, err) = support::run(&["equiv", src, b, "--live-out", "A,X"]);
    assert_eq!(rc, 2);
    assert!(err.contains("declares no array `X`"), "{err}");
    // A changed value read from the shared array is still a difference.
    let changed = dir.join("changed.loop");
    std::fs::write(&changed, by_live.replace("T1[i] + 1", "T1[i] + 2")).unwrap();
    let (rc, out, _) = support::run(&[
        "equiv",
        src,
        changed.to_str().unwrap(),
        "--live-out",
        "A,B,C",
    ]);
    assert_eq!(rc, 1, "{out}");
    assert!(out.contains("mismatch"), "{out}");
}

/// Five smoothing passes, only the last a result
/// (fixtures/storage/jacobi2d-smoothing.loop, worked out in its comments):
/// A2 lives in A0, A1 and A3 in the input a, so the emitted program
/// declares a, A0 and A4, 3N^2 cells for the 6N^2 declared, proved for
/// every N, in program order and with every pass's i, j parallel. At
/// N <= 2 more arrays could share, which must not drop the sharing.
/// `equiv --live-out A4` agrees at sizes the emitter neither sampled nor
/// validated; A2 put with A1 instead is neither proved nor equivalent.
#[test]
fn smoothing_passes_fit_in_three_arrays() {
    let src = "fixtures/storage/jacobi2d-smoothing.loop";
    let dir = std::env::temp_dir().join(format!("arrayflow-smoothing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let contract = |extra: &[&str]| {
        let base = ["expand", src, "--transform", "contract", "--live-out", "A4"];
        support::run(&[&base[..], extra].concat())
    };
    for parallel in [None, Some("i,j")] {
        let mut args = vec!["--emit", "code"];
        args.extend(parallel.iter().flat_map(|p| ["--parallel", *p]));
        let (rc, out, err) = contract(&args);
        assert_eq!(rc, 0, "{err}");
        for line in [
            "# proved for every parameter value",
            "# temporaries sharing storage: A1, A3 in a (",
            "# temporaries sharing storage: A2 in A0 (",
        ] {
            assert!(out.contains(line), "{parallel:?}: {line}\n{out}");
        }
        assert!(!out.contains("not sharing"), "{out}");
        let b = arrayflow::lower::compile(&out, FileId(0)).0.unwrap();
        let names: Vec<&str> = b.arrays.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["a", "A0", "A4"]);
        assert_eq!(b.arrays.len(), 3);
        for n in 0..=12 {
            assert_eq!(support::declared(&b, n), 3 * n * n);
        }
        let file = dir.join(format!("smoothing-{}.loop", parallel.is_some()));
        std::fs::write(&file, &out).unwrap();
        let f = file.to_str().unwrap();
        for n in ["1", "2", "5", "13"] {
            let at = format!("N={n}");
            let (rc, out, err) = support::run(&[
                "equiv",
                src,
                f,
                "--live-out",
                "A4",
                "--param",
                &at,
                "--seeds",
                "5",
            ]);
            assert_eq!(rc, 0, "N={n}: {out}{err}");
        }
    }
    // The report at N = 6: a class's first array holds the class's cells
    // and its bound is the most values of the class live at once (one
    // array's 36: A0's die in pass 1, A2's are born in pass 2); the others
    // hold none. 108 = 3 * 36 cells in all.
    let (rc, out, err) = contract(&[]);
    assert_eq!(rc, 0, "{err}");
    for line in [
        "  a: 36 / 36 [N^2] / 0 / 0 / 36 (1.00)\n",
        "  A0: 36 / 36 [N^2] / 36 / 36 / 36 (1.00)\n",
        "  A1: 36 / 0 [in a] / 36 / 36 / 36 (0.00)\n",
        "  A2: 36 / 0 [in A0] / 36 / 36 / 36 (0.00)\n",
        "  A3: 36 / 0 [in a] / 36 / 36 / 36 (0.00)\n",
        "  A4: 36 / 36 [N^2] / 36 / 36 / 36 (1.00)\n",
        "  A1, A3 in a\n  A2 in A0\n",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
    let (rc, out, err) = contract(&["--format", "json"]);
    assert_eq!(rc, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let row = |name: &str| {
        (v["arrays"].as_array().unwrap().iter())
            .find(|a| a["array"] == name)
            .unwrap_or_else(|| panic!("{name}: {out}"))
            .clone()
    };
    for (name, into, cells) in [("a", None, 36), ("A1", Some("a"), 0), ("A2", Some("A0"), 0)] {
        let r = row(name);
        assert_eq!(r["shared_into"].as_str(), into, "{r}");
        assert_eq!(r["contracted"], cells, "{r}");
        assert_eq!(r["bound"], 36, "{r}");
    }
    // With `assume N >= 3` (no sample below 3) the sharing needs symbolic σ
    // of the boundary guard to be proved.
    let text = std::fs::read_to_string(format!("{}/{src}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let text = text.replace("param N = 6;\n", "param N = 6;\nassume N >= 3;\n");
    let q = arrayflow::lower::compile(&text, FileId(0)).0.unwrap();
    let temps = ids(&q, &["a", "A0", "A1", "A2", "A3"]);
    let s = Schedule::new(&q, Some(&[])).unwrap();
    let e = emit::checked_with(&q, &s, &temps, &Options::default()).unwrap();
    assert_eq!(e.shared, ["A1, A3 in a", "A2 in A0"]);
    assert!(e.proof.proved(), "{:?}", e.proof);
    // A2 in a with A1 and A3: pass 2 reads A1[i + 1, j] after writing A2[i, j]
    // on the same cell.
    let p = read(src);
    let wrong = ids(&p, &["a", "A1", "A2", "A3"]);
    let mut forced = p.clone();
    colour::apply(&mut forced, std::slice::from_ref(&wrong));
    assert!(matches!(
        compare(&p, &forced, &ids(&p, &["a", "A0", "A1", "A2", "A3"]), &[]),
        Verdict::Differ(_)
    ));
    use arrayflow::storage::prove::{prove, Layout, Time};
    let mut layouts = vec![Layout::shared(&p, &wrong).unwrap()];
    layouts.extend(
        ids(&p, &["A0", "A4"])
            .into_iter()
            .map(|a| Layout::identity(&p, a)),
    );
    let order = vec![false; p.counters.len()];
    assert!(!prove(&p, Time::Loops(&order), &layouts).proved());
    let mut right = vec![
        Layout::shared(&p, &ids(&p, &["a", "A1", "A3"])).unwrap(),
        Layout::shared(&p, &ids(&p, &["A0", "A2"])).unwrap(),
    ];
    right.push(Layout::identity(&p, ids(&p, &["A4"])[0]));
    assert!(prove(&p, Time::Loops(&order), &right).proved());
}

/// Two temporaries that may share at every N but 1: T2's first write is
/// T2[N], before Q reads T1[1]; T2's other cells are written after it. At
/// N >= 2 no cell is live in both at once; at N = 1 P2 clobbers T1[1].
/// The classes come from the larger samples, and the check at N = 1 drops
/// this one and says why. Forced, it differs at N = 1 only.
#[test]
fn sharing_refuted_at_a_small_sample_is_dropped() {
    let text = "param N = 4;\nreal A[1..N];\nreal T1[1..N];\nreal T2[1..N];\n\
                real C[1..N];\nreal D[1..N];\n\
                for i = 1 to N do\n  P1: T1[i] = A[i];\nend\n\
                P2: T2[N] = T1[N] + 1;\nQ: D[1] = T1[1] + T2[N];\n\
                for i = 1 to N - 1 do\n  P3: T2[i] = T1[i] + 2;\nend\n\
                for i = 1 to N do\n  U: C[i] = T2[i];\nend\n";
    let p = arrayflow::lower::compile(text, FileId(0)).0.unwrap();
    let t = ids(&p, &["T1", "T2"]);
    let s = Schedule::new(&p, Some(&[])).unwrap();
    let exp = expansion::expand(&p, &Config::default()).unwrap();
    let c = storage::contract_with(&p, &exp, &s, Some(&t)).unwrap();
    assert_eq!(c.sharing.unwrap().classes, vec![t.clone()]);
    let e = emit::checked_with(&p, &s, &t, &Options::default()).unwrap();
    assert!(e.shared.is_empty(), "{}", e.text);
    let why = e.unshared.unwrap();
    assert_eq!(
        why,
        "T2 in T1 at (N=1): Q would read the value of P2 instead of P1[1]"
    );
    assert!(e.text.contains("real T2"), "{}", e.text);
    let mut forced = p.clone();
    colour::apply(&mut forced, std::slice::from_ref(&t));
    assert!(matches!(
        compare(&p, &forced, &t, &[("N", 4)]),
        Verdict::Agree(_)
    ));
    assert!(matches!(
        compare(&p, &forced, &t, &[("N", 1)]),
        Verdict::Differ(_)
    ));
}
