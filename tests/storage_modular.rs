//! Temporaries in fewer cells than they declare (`expand --transform
//! contract --live-out ...`, `storage::modular`): a modular mapping `(a·c)
//! mod M` of each temporary the schedule keeps as it is.
//!
//! - Every `fixtures/storage/modular-*.loop` names its runs (`# run: NAME:
//!   ARGS`); each run's report must be `modular-*.NAME.expected` (worked
//!   out by hand in the fixture's comments), and the program `--emit code`
//!   writes for it must agree with the original under `arrayflow equiv
//!   --live-out` (the temporaries' final contents not compared, every read
//!   is) at the default sizes and at each parameter's default + 3.
//! - The search against the plain reference (`modular::simulate`): at a
//!   concrete size, in program order, a form and modulus keep the conflict
//!   set apart exactly when simulating the program with that layout finds
//!   every read's value; under a parallel loop, the mapping found passes
//!   the simulation in random orders the schedule allows, and the same form
//!   one modulus smaller fails it.
//! - The proof for every parameter value (`storage::prove` with a modular
//!   layout): each fixture's emitted header says proved, blur with `x`
//!   parallel too (its form has the extent `N` as a coefficient); each
//!   mapping written by hand one cell short (or with another form, or a
//!   modulus not a multiple of the extent) is not proved.
//! - Generated static-control programs (ARRAYFLOW_CASES, default 100), in
//!   program order or (odd seeds, where valid) with every loop parallel,
//!   every array a temporary: each modular mapping the contraction finds
//!   passes the simulation at the defaults (in program order, and in 5
//!   random orders the schedule allows), and each
//!   program emitted agrees with the original at every parameter's
//!   default + 6 (+ 2, + 1 where the original fails there).

mod support;

use arrayflow::codegen::Options;
use arrayflow::dataflow::Config;
use arrayflow::diagnostics::FileId;
use arrayflow::equiv::{equiv, EquivOptions, Verdict};
use arrayflow::expansion;
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::model::{ArrayId, Program};
use arrayflow::storage::{self, emit, mapping, modular, Order, Schedule};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(path: &str) -> Program {
    let text = std::fs::read_to_string(format!("{ROOT}/{path}")).unwrap();
    let (p, d) = arrayflow::lower::compile(&text, FileId(0));
    p.unwrap_or_else(|| panic!("{d:?}"))
}

fn arrayflow(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(args)
        .current_dir(ROOT)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// `(name, args)` of every `# run: NAME: ARGS` line.
fn runs(text: &str) -> Vec<(String, Vec<String>)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# run: "))
        .map(|l| {
            let (name, args) = l.split_once(": ").unwrap();
            (
                name.to_string(),
                args.split_whitespace().map(String::from).collect(),
            )
        })
        .collect()
}

fn fixtures() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(format!("{ROOT}/fixtures/storage"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("modular-") && n.ends_with(".loop"))
        .collect();
    v.sort();
    v
}

#[test]
fn fixtures_report_and_emit_equivalent_programs() {
    let files = fixtures();
    assert!(files.len() >= 4, "{files:?}");
    let mut checked = 0;
    for f in files {
        let path = format!("fixtures/storage/{f}");
        let text = std::fs::read_to_string(format!("{ROOT}/{path}")).unwrap();
        let program = read(&path);
        let runs = runs(&text);
        assert!(!runs.is_empty(), "{f}: no `# run:` line");
        for (name, args) in runs {
            let mut a: Vec<&str> = vec!["expand", &path, "--transform", "contract"];
            a.extend(args.iter().map(String::as_str));
            let (code, report, err) = arrayflow(&a);
            assert_eq!(code, 0, "{f} {name}: {err}");
            let expected_path = path.replace(".loop", &format!(".{name}.expected"));
            let expected = std::fs::read_to_string(format!("{ROOT}/{expected_path}"))
                .unwrap_or_else(|_| panic!("{expected_path} missing; the report:\n{report}"));
            assert_eq!(report, expected, "{f} {name}");
            // The emitted program against the original.
            a.extend(["--emit", "code"]);
            let (code, emitted, err) = arrayflow(&a);
            assert_eq!(code, 0, "{f} {name}: {err}");
            assert!(
                emitted.contains("# temporary in fewer cells:"),
                "{f} {name}:\n{emitted}"
            );
            let out = std::env::temp_dir().join(format!(
                "arrayflow-modular-{}-{f}-{name}.loop",
                std::process::id()
            ));
            std::fs::write(&out, &emitted).unwrap();
            let live = args
                .iter()
                .position(|x| x == "--live-out")
                .map(|k| args[k + 1].clone())
                .unwrap();
            let defaults = program.param_values(&[]).unwrap();
            let bumped: Vec<String> = (program.params.iter().zip(defaults))
                .map(|(q, v)| format!("{}={}", q.name, v + 3))
                .collect();
            for extra in [Vec::new(), bumped] {
                let mut e = vec![
                    "equiv".to_string(),
                    path.clone(),
                    out.to_string_lossy().to_string(),
                    "--live-out".to_string(),
                    live.clone(),
                    "--seeds".to_string(),
                    "5".to_string(),
                ];
                for x in &extra {
                    e.extend(["--param".to_string(), x.clone()]);
                }
                let e: Vec<&str> = e.iter().map(String::as_str).collect();
                let (code, said, err) = arrayflow(&e);
                assert_eq!(code, 0, "{f} {name} {extra:?}: {said}{err}\n{emitted}");
                checked += 1;
            }
            std::fs::remove_file(&out).ok();
        }
    }
    assert!(checked >= 14, "{checked}");
}

/// `path` expanded at `params`, with the parameter values in order.
fn expanded(path: &str, params: &[(&str, i64)]) -> (Program, expansion::Expansion, Vec<i64>) {
    let p = read(path);
    let config = Config {
        params: params.iter().map(|&(n, v)| (n.to_string(), v)).collect(),
        ..Config::default()
    };
    let exp = expansion::expand(&p, &config).unwrap();
    (p, exp, params.iter().map(|x| x.1).collect())
}

/// What the search finds for `a` under `order`, after its contraction.
fn search(
    p: &Program,
    exp: &expansion::Expansion,
    order: &Order,
    a: ArrayId,
) -> (Vec<modular::Modular>, modular::Refused) {
    let m = mapping::compute(p, exp, order).unwrap();
    modular::compute(p, exp, order, &m, &[a])
}

/// Every form searched, every modulus up to one past the least: kept apart
/// by the conflict set exactly when the program-order simulation finds
/// every read's value.
fn agree_in_program_order(path: &str, array: &str, params: &[(&str, i64)]) -> usize {
    let (p, exp, values) = expanded(path, params);
    let a: ArrayId = p.array(array).unwrap();
    let s = Schedule::new(&p, None).unwrap();
    let order = Order::new(&p, &exp.inst.facts, &s);
    let (found, refused) = search(&p, &exp, &order, a);
    assert!(refused.is_empty(), "{refused:?}");
    let found = &found[0];
    let extent = modular::last_extent_at(&p, a, &values);
    let d = modular::conflict_set(&exp, &order, a).unwrap();
    assert_eq!(d.len(), found.conflicts);
    let mut compared = 0;
    for form in modular::forms(p.array_decl(a).dims.len()) {
        let coef = modular::coefficients(&form, extent);
        let least = found.valid.iter().find(|(f, _)| *f == form).map(|x| x.1);
        assert_eq!(least, modular::modulus(&coef, &d));
        for m in 1..=least.unwrap_or(6) + 1 {
            let by_search = modular::keeps_apart(&coef, &d, m);
            let by_simulation = modular::simulate(&exp, &order, a, &coef, m, 0).is_ok();
            assert_eq!(by_search, by_simulation, "{path}: {form:?} mod {m}");
            if least.is_some_and(|l| m >= l) {
                assert!(by_search, "{path}: {form:?} mod {m}");
            }
            compared += 1;
        }
    }
    // The least modulus of the chosen form is really the least: one less
    // fails.
    let coef = modular::coefficients(&found.form, extent);
    if found.modulus > 1 {
        assert!(modular::simulate(&exp, &order, a, &coef, found.modulus - 1, 0).is_err());
    }
    compared
}

#[test]
fn search_agrees_with_the_simulation_in_program_order() {
    let n = agree_in_program_order("fixtures/storage/modular-fibonacci.loop", "F", &[("N", 9)])
        + agree_in_program_order(
            "fixtures/storage/modular-heat1d.loop",
            "M",
            &[("T", 3), ("N", 6)],
        )
        + agree_in_program_order(
            "fixtures/storage/modular-blur.loop",
            "blurx",
            &[("H", 5), ("N", 4)],
        );
    assert!(n > 100, "{n}");
}

#[test]
fn parallel_mappings_pass_the_simulation_in_random_orders() {
    for (path, array, par, params) in [
        (
            "fixtures/storage/modular-heat1d.loop",
            "M",
            "i",
            vec![("T", 3), ("N", 6)],
        ),
        (
            "fixtures/storage/modular-blur.loop",
            "blurx",
            "x",
            vec![("H", 5), ("N", 4)],
        ),
    ] {
        let (p, exp, values) = expanded(path, &params);
        let a = p.array(array).unwrap();
        let s = Schedule::new(&p, Some(&[par.to_string()])).unwrap();
        let order = Order::new(&p, &exp.inst.facts, &s);
        let (found, _) = search(&p, &exp, &order, a);
        let found = &found[0];
        let coef = modular::coefficients(&found.form, modular::last_extent_at(&p, a, &values));
        for seed in 0..20 {
            modular::simulate(&exp, &order, a, &coef, found.modulus, seed)
                .unwrap_or_else(|e| panic!("{path}: seed {seed}: {e}"));
        }
        // One cell fewer: some order the schedule allows breaks it.
        let broken = (0..200).any(|seed| {
            modular::simulate(&exp, &order, a, &coef, found.modulus - 1, seed).is_err()
        });
        assert!(broken, "{path}: mod {} never fails", found.modulus - 1);
        // The program-order mapping is not enough under the parallel loop.
        let seq = Schedule::new(&p, None).unwrap();
        let order0 = Order::new(&p, &exp.inst.facts, &seq);
        let (f0, _) = search(&p, &exp, &order0, a);
        let c0 = modular::coefficients(&f0[0].form, modular::last_extent_at(&p, a, &values));
        let broken = (1..200)
            .any(|seed| modular::simulate(&exp, &order, a, &c0, f0[0].modulus, seed).is_err());
        assert!(
            broken,
            "{path}: the program-order mapping survives `{par}` parallel"
        );
    }
}

#[test]
fn generated_programs_in_fewer_cells() {
    let n = support::cases(100);
    let (mut found, mut emitted, mut laid, mut refused) = (0, 0, 0, 0);
    let (mut declared, mut cells, mut not_compared, mut dropped) = (0i64, 0i64, 0, 0);
    let (mut parallel, mut in_refused, mut arrays_laid, mut proved) = (0, 0, 0, 0);
    for seed in 0..n {
        let p = generate(seed, &GenOptions::static_control(Size::Small));
        let Ok(exp) = expansion::expand(&p, &Config::default()) else {
            continue;
        };
        let t: Vec<ArrayId> = (0..p.arrays.len() as u32).map(ArrayId).collect();
        // Odd seeds: every loop parallel when that keeps every flow
        // dependence and needs no expansion of a temporary; else (and even
        // seeds) program order.
        let names: Vec<String> = p.counters.iter().map(|c| c.name.clone()).collect();
        let all = Schedule::new(&p, Some(&names)).unwrap();
        let s = match storage::contract_with(&p, &exp, &all, Some(&t)) {
            Ok(_) if seed % 2 == 1 => {
                parallel += 1;
                all
            }
            _ => Schedule::new(&p, Some(&[])).unwrap(),
        };
        let c = storage::contract_with(&p, &exp, &s, Some(&t)).unwrap();
        let order = Order::new(&p, &exp.inst.facts, &s);
        let values: Vec<i64> = exp.inst.facts.params.iter().map(|x| x.1).collect();
        for m in &c.modular {
            found += 1;
            let ext = modular::last_extent_at(&p, m.array, &values);
            let coef = modular::coefficients(&m.form, ext);
            if m.merged.is_empty() {
                let orig = c
                    .mapping
                    .arrays
                    .iter()
                    .find(|a| a.array == m.array)
                    .unwrap();
                declared += orig.original as i64;
                cells += m.modulus;
                for r in 0..6 {
                    modular::simulate(&exp, &order, m.array, &coef, m.modulus, r)
                        .unwrap_or_else(|e| panic!("seed {seed}, order {r}: {}: {e}", m.name));
                }
            }
        }
        let e = match emit::checked_with(&p, &s, &t, &Options::default()) {
            Ok(e) => e,
            Err(err) => {
                eprintln!("seed {seed}: {err:?}");
                refused += 1;
                in_refused += c.modular.len();
                continue;
            }
        };
        emitted += 1;
        if e.modular.is_empty() {
            continue;
        }
        laid += 1;
        arrays_laid += e.modular.len();
        proved += usize::from(e.proof.proved());
        if let arrayflow::storage::prove::Proof::NotProved(why) = &e.proof {
            eprintln!("seed {seed}: not proved: {why}");
        }
        if let Some(u) = &e.unmodular {
            eprintln!("seed {seed}: dropped by the validation: {u}");
            dropped += 1;
        }
        // At default + 6, else + 2, else + 1: the first size where the
        // original runs without error.
        let mut compared = false;
        for k in [6, 2, 1] {
            let o = EquivOptions {
                params: support::defaults_plus(&p, k),
                seeds: 5,
                scratch: t.iter().map(|&a| p.array_decl(a).name.clone()).collect(),
                ..Default::default()
            };
            match equiv(&p, &e.program, &o) {
                Ok(Verdict::Agree(_)) => {
                    compared = true;
                    break;
                }
                Ok(Verdict::Differ(m)) => panic!("seed {seed} at +{k}: {m}\n{}", e.text),
                Err(err) if err.message.starts_with("A fails") => {}
                Err(err) => panic!("seed {seed}: {err}\n{}", e.text),
            }
        }
        not_compared += usize::from(!compared);
    }
    eprintln!(
        "{n} programs ({parallel} with every loop parallel): {found} modular mappings at the defaults ({cells} cells for \
         {declared} declared, single arrays), {emitted} emitted, {laid} with a mapping laid \
         out ({arrays_laid} mappings; {proved} programs proved; {not_compared} of them not compared: the original fails at default + 6, + 2 \
         and + 1), {dropped} dropped by the emitter's validation, {refused} refused ({in_refused} \
         mappings there)"
    );
}

#[test]
fn fixtures_are_proved_and_broken_layouts_are_not() {
    use arrayflow::model::{Affine, Var};
    use arrayflow::storage::prove::{prove, Layout, Modulo, Stride, Time};
    // The headers of the programs emitted.
    for (f, args, proved) in [
        ("modular-fibonacci", vec!["--live-out", "R"], true),
        ("modular-heat1d", vec!["--live-out", "Out"], true),
        (
            "modular-heat1d",
            vec!["--live-out", "Out", "--parallel", "i"],
            true,
        ),
        ("modular-blur", vec!["--live-out", "out"], true),
        (
            "modular-blur",
            vec!["--live-out", "out", "--parallel", "x"],
            true,
        ),
        (
            "modular-heat1d-double-buffer",
            vec!["--live-out", "Out"],
            true,
        ),
        (
            "modular-heat1d-double-buffer",
            vec!["--live-out", "Out", "--parallel", "i"],
            true,
        ),
        ("modular-heat1d-buffers", vec!["--live-out", "Out"], true),
        (
            "modular-heat1d-buffers",
            vec!["--live-out", "Out", "--parallel", "i"],
            true,
        ),
    ] {
        let path = format!("fixtures/storage/{f}.loop");
        let mut a = vec![
            "expand",
            path.as_str(),
            "--transform",
            "contract",
            "--emit",
            "code",
        ];
        a.extend(args.iter().copied());
        let (code, out, err) = arrayflow(&a);
        assert_eq!(code, 0, "{f}: {err}");
        let line = out
            .lines()
            .find(|l| l.contains("proved for every"))
            .unwrap();
        assert_eq!(line.starts_with("# proved"), proved, "{f} {args:?}: {line}");
    }
    // By hand: blur with `x` parallel, `(N*y - x) mod 3N` (rows y - 2,
    // y - 1 and y live at once) is proved; mod 2N (row y - 2 on row y's
    // places while T still reads it) is not, and mod (3N - 1) is not a
    // multiple of the extent N, which the proof does not take.
    let p = read("fixtures/storage/modular-blur.loop");
    let blurx = p.array("blurx").unwrap();
    let n = Affine::var(Var::Param(p.param("N").unwrap()));
    let mut par = vec![false; p.counters.len()];
    for (k, c) in p.counters.iter().enumerate() {
        par[k] = c.name == "x";
    }
    let rows = |modulus: Affine| {
        let mo = Modulo {
            coefs: vec![0, -1],
            k: [(blurx, 0)].into_iter().collect(),
            modulus,
            stride: Some(Stride {
                coefs: vec![1, 0],
                extent: n.clone(),
            }),
        };
        let all = vec![
            Layout::modular(&p, &[blurx], mo).unwrap(),
            Layout::identity(&p, p.array("out").unwrap()),
        ];
        prove(&p, Time::Loops(&par), &all)
    };
    assert!(rows(n.checked_scale(3).unwrap()).proved());
    match rows(n.checked_scale(2).unwrap()) {
        arrayflow::storage::prove::Proof::NotProved(why) => {
            assert!(!why.contains("not a multiple"), "{why}")
        }
        _ => panic!("mod 2N proved"),
    }
    match rows(
        n.checked_scale(3)
            .unwrap()
            .checked_sub(&Affine::constant(1))
            .unwrap(),
    ) {
        arrayflow::storage::prove::Proof::NotProved(why) => {
            assert!(why.contains("not a multiple"), "{why}")
        }
        _ => panic!("mod (3N - 1) proved"),
    }
    // By hand: heat-1d in program order, (t - i) mod (N + 1); one cell
    // fewer, or the form (t + i), is not proved.
    let p = read("fixtures/storage/modular-heat1d.loop");
    let m = p.array("M").unwrap();
    let n = Affine::var(Var::Param(p.param("N").unwrap()));
    let order = vec![false; p.counters.len()];
    let layout = |coefs: Vec<i64>, modulus: Affine| {
        let mo = Modulo {
            coefs,
            k: [(m, 0)].into_iter().collect(),
            modulus,
            stride: None,
        };
        // Every array written: M, laid out, and Out, kept.
        vec![
            Layout::modular(&p, &[m], mo).unwrap(),
            Layout::identity(&p, p.array("Out").unwrap()),
        ]
    };
    let np1 = n.checked_add(&Affine::constant(1)).unwrap();
    assert!(prove(&p, Time::Loops(&order), &layout(vec![1, -1], np1.clone())).proved());
    assert!(!prove(&p, Time::Loops(&order), &layout(vec![1, -1], n.clone())).proved());
    assert!(!prove(&p, Time::Loops(&order), &layout(vec![1, 1], np1.clone())).proved());
    // With `i` parallel, the program-order mapping is not proved; 2N is.
    let mut par = vec![false; p.counters.len()];
    for (k, c) in p.counters.iter().enumerate() {
        par[k] = c.name == "i";
    }
    assert!(!prove(&p, Time::Loops(&par), &layout(vec![1, -1], np1)).proved());
    let two_n = n.checked_scale(2).unwrap();
    assert!(prove(&p, Time::Loops(&par), &layout(vec![1, -2], two_n.clone())).proved());
    let short = two_n.checked_sub(&Affine::constant(1)).unwrap();
    assert!(!prove(&p, Time::Loops(&par), &layout(vec![1, -2], short)).proved());
    // Fibonacci: (i) mod 2 is proved; mod 1 is not, nor mod (N - 9),
    // which is 0 or less where F is written for N <= 9.
    let p = read("fixtures/storage/modular-fibonacci.loop");
    let f = p.array("F").unwrap();
    let n = Affine::var(Var::Param(p.param("N").unwrap()));
    let order = vec![false; p.counters.len()];
    let fib = |modulus: Affine| {
        let mo = Modulo {
            coefs: vec![1],
            k: [(f, 0)].into_iter().collect(),
            modulus,
            stride: None,
        };
        let all = vec![
            Layout::modular(&p, &[f], mo).unwrap(),
            Layout::identity(&p, p.array("R").unwrap()),
        ];
        prove(&p, Time::Loops(&order), &all)
    };
    assert!(fib(Affine::constant(2)).proved());
    assert!(!fib(Affine::constant(1)).proved());
    let proof = fib(n.checked_sub(&Affine::constant(9)).unwrap());
    match proof {
        arrayflow::storage::prove::Proof::NotProved(why) => {
            assert!(why.contains("0 or less"), "{why}")
        }
        _ => panic!("mod (N - 9) proved"),
    }
}

/// The shipped ping-pong stencils with only `A` live-out, in program order
/// and with the space loops parallel: proved, in at most the two buffers
/// they declare (2N cells, 2N^2 in 2-D; jacobi-1d's `B` in the N - 2 cells
/// it writes, all live between its two loops), and equivalent under
/// `equiv --live-out A` at N = 13, T = 4, sizes the emitter neither
/// sampled nor validated, with the `doall` loops shuffled.
#[test]
fn ping_pong_stencils_keep_at_most_their_two_buffers() {
    let dir = std::env::temp_dir().join(format!("arrayflow-ping-pong-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (kernel, space, dims) in [
        ("jacobi1d", "i", 1),
        ("heat1d", "i", 1),
        ("jacobi2d", "i,j", 2),
        ("heat2d", "i,j", 2),
    ] {
        let src = format!("fixtures/c/kernels/{kernel}.loop");
        for parallel in [None, Some(space)] {
            let mut args = vec![
                "expand",
                &src,
                "--transform",
                "contract",
                "--live-out",
                "A",
                "--emit",
                "code",
            ];
            args.extend(parallel.iter().flat_map(|p| ["--parallel", *p]));
            let (rc, out, err) = arrayflow(&args);
            assert_eq!(rc, 0, "{kernel}: {err}");
            assert!(
                out.contains("# proved for every parameter value"),
                "{kernel}\n{out}"
            );
            let b = arrayflow::lower::compile(&out, FileId(0)).0.unwrap();
            for n in 3..=12 {
                let cells = support::declared(&b, n);
                assert!(
                    cells <= 2 * n.pow(dims),
                    "{kernel} {parallel:?} at N={n}: {cells}"
                );
                if kernel == "jacobi1d" {
                    assert_eq!(cells, 2 * n - 2, "{kernel} {parallel:?} at N={n}");
                }
            }
            let file = dir.join(format!("{kernel}-{}.loop", parallel.is_some()));
            std::fs::write(&file, &out).unwrap();
            let (rc, out, err) = arrayflow(&[
                "equiv",
                &src,
                file.to_str().unwrap(),
                "--live-out",
                "A",
                "--param",
                "N=13",
                "--param",
                "T=4",
                "--seeds",
                "5",
            ]);
            assert_eq!(rc, 0, "{kernel} {parallel:?}: {out}{err}");
        }
    }
}

/// The values of the shipped stencils live at once, `A` live-out, in
/// program order, as counted by hand: the least memory any storage of
/// their values needs. jacobi-1d: A's N (its boundary cells are read at
/// every step) and, while `S` runs at i, A[i..N-2] of this step against
/// B[1..i] less one: N + 1. heat-1d's `U` also reads B[0] and B[N-1], which
/// nothing writes: N + 3. In 2-D, A's 4N - 4 boundary cells (results, never
/// written), B's 4(N - 2) boundary cells read at every step, and
/// (N - 1)(N - 2) interior values, A's rows still to be read against B's
/// rows written: N^2 + 5N - 10.
#[test]
fn stencil_values_live_together_as_counted_by_hand() {
    for (kernel, count) in [
        ("jacobi1d", (|n| n + 1) as fn(u64) -> u64),
        ("heat1d", |n| n + 3),
        ("jacobi2d", |n| n * n + 5 * n - 10),
        ("heat2d", |n| n * n + 5 * n - 10),
    ] {
        let src = format!("fixtures/c/kernels/{kernel}.loop");
        for n in 4..=9u64 {
            for t in [2, 3] {
                let (np, tp) = (format!("N={n}"), format!("T={t}"));
                let (rc, out, err) = arrayflow(&[
                    "expand",
                    &src,
                    "--transform",
                    "contract",
                    "--live-out",
                    "A",
                    "--param",
                    &np,
                    "--param",
                    &tp,
                ]);
                assert_eq!(rc, 0, "{kernel}: {err}");
                let line = out.lines().find(|l| l.contains("together:")).unwrap();
                let live: u64 = line
                    .split("; ")
                    .nth(1)
                    .and_then(|x| x.split(' ').next())
                    .and_then(|x| x.parse().ok())
                    .unwrap_or_else(|| panic!("{line}"));
                assert_eq!(live, count(n), "{kernel} at N={n}, T={t}: {line}");
            }
        }
    }
}

/// jacobi-1d with its space loops fused (fixtures/storage/jacobi1d-fused.
/// schedule) writes A in place and keeps B in 2 cells: N + 2 in all,
/// proved, at N = 3..12, and equivalent to the original under that
/// schedule (`equiv --schedule`) at sizes the emitter neither sampled nor
/// validated.
#[test]
fn jacobi_1d_fused_in_place_in_n_plus_2_cells() {
    let (src, sched) = (
        "fixtures/c/kernels/jacobi1d.loop",
        "fixtures/storage/jacobi1d-fused.schedule",
    );
    let (rc, out, err) = arrayflow(&[
        "expand",
        src,
        "--transform",
        "contract",
        "--live-out",
        "A",
        "--schedule",
        sched,
        "--emit",
        "code",
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("# proved for every parameter value"), "{out}");
    let b = arrayflow::lower::compile(&out, FileId(0)).0.unwrap();
    for n in 3..=12 {
        assert_eq!(support::declared(&b, n), n + 2, "at N={n}\n{out}");
    }
    let file = std::env::temp_dir().join(format!("arrayflow-fused-{}.loop", std::process::id()));
    std::fs::write(&file, &out).unwrap();
    // `equiv` of the original and `file` under the schedule, `A` live-out.
    let equiv_rc = |extra: &[&str]| {
        let mut args = vec!["equiv", src, file.to_str().unwrap()];
        args.extend(["--schedule", sched, "--live-out", "A"]);
        args.extend(extra);
        arrayflow(&args)
    };
    for (n, t) in [("N=13", "T=4"), ("N=3", "T=1"), ("N=20", "T=7")] {
        let (rc, out, err) = equiv_rc(&["--param", n, "--param", t, "--seeds", "5"]);
        assert_eq!(rc, 0, "{n} {t}: {out}{err}");
    }
    // The check can fail: B in one cell breaks it.
    let broken = out
        .replace("% 2]", "% 1]")
        .replace("B_m[0..1]", "B_m[0..0]");
    assert_ne!(broken, out);
    std::fs::write(&file, &broken).unwrap();
    assert_ne!(equiv_rc(&[]).0, 0);
    let _ = std::fs::remove_file(&file);
}

/// A buffer indexed modulo its extent is unfolded only when the unfolded
/// program computes what the original does. heat-1d's double buffer is
/// (the proof's exact tests counted); reading a row two steps old
/// (`A[(t + 1) % 2, i + 1]`, not yet written in this step), or the
/// buffer's row 1 after the loop (the last odd step's values in the
/// original, step 0's in the unfolded program), is not, and the
/// contraction then keeps the buffer.
#[test]
fn double_buffers_unfold_only_when_the_values_stay() {
    use arrayflow::storage::unfold::unfold;
    let p = read("fixtures/storage/modular-heat1d-double-buffer.loop");
    let temps: Vec<_> = ["In", "A"].iter().map(|n| p.array(n).unwrap()).collect();
    let u = unfold(&p, &temps).unwrap().expect("unfolded");
    assert!(u.unfolding.tests > 0);
    let text = arrayflow::print::program(&u.program);
    assert!(text.contains("real A[0..T, 0..N + 1];"), "{text}");
    assert!(
        text.contains("S: A[t + 1, i] = (A[t, i - 1] + A[t, i] + A[t, i + 1]) / 3;"),
        "{text}"
    );
    assert!(text.contains("C: Out[i] = A[T, i];"), "{text}");
    // Live-out, it is not a candidate.
    assert!(unfold(&p, &[p.array("In").unwrap()]).unwrap().is_none());
    let base = std::fs::read_to_string(format!(
        "{ROOT}/fixtures/storage/modular-heat1d-double-buffer.loop"
    ))
    .unwrap();
    for (what, from, to, why) in [
        (
            "a row two steps old",
            "A[t % 2, i + 1]) / 3;",
            "A[(t + 1) % 2, i + 1]) / 3;",
            "read before it is written",
        ),
        (
            "row 1 after the loop",
            "C: Out[i] = A[T % 2, i];",
            "C: Out[i] = A[1, i];",
            "not proved",
        ),
    ] {
        let text = base.replace(from, to);
        assert_ne!(text, base, "{what}");
        let p = arrayflow::lower::compile(&text, FileId(0)).0.unwrap();
        let temps: Vec<_> = ["In", "A"].iter().map(|n| p.array(n).unwrap()).collect();
        match unfold(&p, &temps) {
            Err(e) => assert!(e.contains(why), "{what}: {e}"),
            Ok(u) => panic!("{what}: unfolded: {:?}", u.map(|u| u.unfolding)),
        }
        // The contraction keeps the buffer, and its program still agrees.
        let file =
            std::env::temp_dir().join(format!("arrayflow-unfold-{}.loop", std::process::id()));
        std::fs::write(&file, &text).unwrap();
        let path = file.to_str().unwrap();
        let (rc, out, err) = arrayflow(&[
            "expand",
            path,
            "--transform",
            "contract",
            "--live-out",
            "Out",
            "--emit",
            "code",
        ]);
        assert_eq!(rc, 0, "{what}: {err}");
        assert!(!out.contains("unfolded"), "{what}\n{out}");
        let _ = std::fs::remove_file(&file);
    }
    // Without `assume T >= 1` nothing says 0 is below T: the report says
    // why the buffer stays.
    let text = base.replace("assume T >= 1;\n", "");
    assert_ne!(text, base);
    let file = std::env::temp_dir().join(format!("arrayflow-unfold-t-{}.loop", std::process::id()));
    std::fs::write(&file, &text).unwrap();
    let (rc, out, err) = arrayflow(&[
        "expand",
        file.to_str().unwrap(),
        "--transform",
        "contract",
        "--live-out",
        "Out",
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.contains("A: indexed modulo its extent, and not unfolded: `A`: no subscript bound lies below the others"),
        "{out}"
    );
    let _ = std::fs::remove_file(&file);
}
