//! The dd engine (`dataflow::dd`, `flow --engine dd`) computes the ascent
//! engine's σ: the same sources and initial flag for every read, the same
//! initial-value bit for every access instance (`analyze_instances`), the
//! same instance and read counts.
//!
//! The oracle is the ascent engine on one thread (itself checked against
//! the naive transcription of the definition in tests/dataflow_agree.rs).
//! Programs: every `.loop` fixture under fixtures/papers,
//! fixtures/c/kernels and fixtures/dd, and generated programs (`arrayflow::gen`, all
//! features: unknown conditions, `while`, may-writes, updates; 40 by
//! default, `ARRAYFLOW_CASES` more), each at 1 worker and at 3 workers fed
//! in rounds of 5 readers (so that the rounds, each fed once the one before
//! the last is through the walk, are many even on small programs). The
//! command's output (`cli::flow::run_to`, what the binary's process 0
//! runs) on 2 workers is compared byte for byte with `--engine rules` on
//! every fixture (text, JSON on a third), and the binary's on one; two processes on 127.0.0.1 (ports
//! chosen free) are compared on matmul and on guarded programs; bad option
//! combinations exit 2, and a process whose peers never come gives up
//! after `--dd-timeout` with a message.
//!
//! Across processes each process lowers only its share
//! (`facts::lower_share`) and looks a write up at its owner: every fixture
//! (plain, and framed as `flow` lowers it) and generated programs (20 by
//! default) run on 2 processes of 1 worker or 3 of 2 (by turns), in rounds
//! of 16 readers, as threads of the
//! test connected on 127.0.0.1, against the rules (σ, counts) and dd on one
//! process (walk steps); the reads whose last write another process owns
//! are counted, so the cross-process links are exercised.
#![cfg(feature = "dd")]

mod support;

use arrayflow::dataflow::dd::{with_cluster, Cluster, Mutate, FEED};
use arrayflow::dataflow::{
    analyze_framed, analyze_instances, with_threads, Config, DataflowError, Flow, Instances,
};
use arrayflow::model::Program;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow");

fn fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["fixtures/papers", "fixtures/c/kernels", "fixtures/dd"] {
        for e in std::fs::read_dir(dir).expect("fixture directory").flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "loop") {
                out.push(p);
            }
        }
    }
    out.sort();
    assert!(out.len() > 60, "the fixtures are found: {}", out.len());
    out
}

type Run = Result<Instances, DataflowError>;

fn rules(program: &Program, config: &Config) -> Run {
    with_threads(1, || analyze_instances(program, config)).expect("a pool")
}

/// On `workers` workers, feeding `round` readers per round (so that
/// rounds of a few readers exercise the rounds on small programs).
fn dd(program: &Program, config: &Config, workers: usize, round: usize) -> Run {
    let cluster = Cluster {
        round,
        ..Cluster::local(workers)
    };
    with_cluster(cluster, || analyze_instances(program, config))
}

/// Whether two runs agree (σ, counts, initial-value bits, or the error).
fn agree(a: &Run, b: &Run) -> Result<(), String> {
    let (a, b) = match (a, b) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(x), Err(y)) if x.to_string() == y.to_string() => return Ok(()),
        (x, y) => {
            let say = |r: &Run| r.as_ref().map_or_else(|e| e.to_string(), |_| "σ".into());
            return Err(format!("{} vs {}", say(x), say(y)));
        }
    };
    let (sa, sb) = (a.flow.stats(), b.flow.stats());
    if (sa.access_instances, sa.read_instances) != (sb.access_instances, sb.read_instances) {
        return Err(format!("stats {sa:?} vs {sb:?}"));
    }
    support::same_reads(&a.flow, &b.flow)?;
    let n = a.facts.n_accs() as u32;
    if let Some(x) = (0..n).find(|&x| a.initial_at(x) != b.initial_at(x)) {
        return Err(format!("initial-value bit of access instance {x}"));
    }
    Ok(())
}

fn config() -> Config {
    Config {
        max_instances: 2_000_000,
        ..Config::default()
    }
}

/// Compares the engines on `program`; returns how many reads were compared.
fn compare(name: &str, program: &Program) -> usize {
    let oracle = rules(program, &config());
    for (workers, round) in [(1, FEED), (3, 5)] {
        let other = dd(program, &config(), workers, round);
        let at = format!("{name}, {workers} workers, rounds of {round} readers");
        agree(&oracle, &other).unwrap_or_else(|e| panic!("{at}: {e}"));
    }
    oracle.map_or(0, |i| i.flow.len())
}

/// σ of `program` (with `frame`) on `processes` processes of `workers`
/// workers each, run as threads of this test on 127.0.0.1: each lowers
/// only its share (`facts::lower_share`); process 0's flow.
fn shared(
    program: &Program,
    frame: &arrayflow::facts::Frame,
    processes: usize,
    workers: usize,
) -> Result<Flow, DataflowError> {
    let hosts: Vec<String> = free_ports(processes)
        .iter()
        .map(|p| format!("127.0.0.1:{p}"))
        .collect();
    let kinds = arrayflow::kinds::Kinds::core();
    std::thread::scope(|scope| {
        let runs: Vec<_> = (0..processes)
            .map(|process| {
                let cluster = Cluster {
                    workers,
                    process,
                    hosts: hosts.clone(),
                    timeout: Duration::from_secs(60),
                    // Many rounds even on small programs.
                    round: 16,
                    ..Cluster::local(workers)
                };
                let kinds = &kinds;
                scope.spawn(move || {
                    with_cluster(cluster, || analyze_framed(program, &config(), kinds, frame))
                })
            })
            .collect();
        let mut flows: Vec<_> = runs
            .into_iter()
            .map(|r| r.join().expect("a process thread"))
            .collect();
        for (i, f) in flows.iter().enumerate().skip(1) {
            if let Ok(f) = f {
                assert!(f.is_empty(), "process {i} returns an empty flow");
            }
        }
        flows.swap_remove(0)
    })
}

/// Whether two flows agree (σ and counts, or the error).
fn agree_flows(
    a: &Result<Flow, DataflowError>,
    b: &Result<Flow, DataflowError>,
) -> Result<(), String> {
    match (a, b) {
        (Ok(a), Ok(b)) => {
            let (sa, sb) = (a.stats(), b.stats());
            if (sa.access_instances, sa.read_instances) != (sb.access_instances, sb.read_instances)
            {
                return Err(format!("stats {sa:?} vs {sb:?}"));
            }
            support::same_reads(a, b)
        }
        (Err(x), Err(y)) if x.to_string() == y.to_string() => Ok(()),
        (x, y) => {
            let say = |r: &Result<Flow, DataflowError>| {
                r.as_ref().map_or_else(|e| e.to_string(), |_| "σ".into())
            };
            Err(format!("{} vs {}", say(x), say(y)))
        }
    }
}

/// Readers of `program` whose `prev_write` another process owns, over the
/// shares of `processes` processes (the links a dropped exchange loses).
fn cross_links(program: &Program, frame: &arrayflow::facts::Frame, processes: usize) -> usize {
    let kinds = arrayflow::kinds::Kinds::core();
    (0..processes)
        .filter_map(|p| {
            arrayflow::facts::lower_share(program, &config(), kinds.all(), frame, p, processes).ok()
        })
        .filter(|s| !s.is_whole())
        .map(|s| {
            s.accs()
                .filter(|&x| {
                    s.is_read(x) && s.prev(x) != u32::MAX && s.owner(s.prev(x)) != s.owner(x)
                })
                .count()
        })
        .sum()
}

/// Compares σ across processes, each lowering its share, with the rules on
/// `program`, plain and framed as `flow` lowers it: one on 2 processes of
/// 1 worker, the other on 3 of 2 (`turn` says which); the cross-process
/// links met.
fn compare_shared(name: &str, program: &Program, turn: usize) -> usize {
    let kinds = arrayflow::kinds::Kinds::core();
    let (augmented, a) = arrayflow::db::kernel::augment(program);
    let mut links = 0;
    let runs = [(2, 1), (3, 2)];
    for (k, (p, frame, what)) in [
        (program, arrayflow::facts::Frame::default(), "plain"),
        (&augmented, a.frame(), "framed"),
    ]
    .into_iter()
    .enumerate()
    {
        let oracle =
            with_threads(1, || analyze_framed(p, &config(), &kinds, &frame)).expect("a pool");
        // The walk steps are dd's own (no fuel, no walk run twice).
        let one = with_cluster(Cluster::local(1), || {
            analyze_framed(p, &config(), &kinds, &frame)
        });
        let steps = |r: &Result<Flow, DataflowError>| r.as_ref().ok().map(|f| f.stats().walk_steps);
        let (processes, workers) = runs[(k + turn) % 2];
        {
            let other = shared(p, &frame, processes, workers);
            let at = format!("{name} ({what}), {processes} processes of {workers} workers");
            agree_flows(&oracle, &other).unwrap_or_else(|e| panic!("{at}: {e}"));
            assert_eq!(steps(&one), steps(&other), "{at}: walk steps");
            links += cross_links(p, &frame, processes);
        }
    }
    links
}

#[test]
fn fixtures_agree_across_processes_each_lowering_its_share() {
    let _ports = ports();
    let (mut programs, mut links) = (0, 0);
    for (k, path) in fixtures().iter().enumerate() {
        if let Some(program) = support::compile(path) {
            programs += 1;
            links += compare_shared(&path.display().to_string(), &program, k);
        }
    }
    assert!(programs > 60, "{programs} fixtures compiled");
    assert!(
        links > 1000,
        "{links} reads whose last write another process owns"
    );
}

#[test]
fn generated_programs_agree_across_processes_each_lowering_its_share() {
    let _ports = ports();
    let cases = support::cases(20);
    let mut links = 0;
    for seed in 0..cases {
        let program = support::generated(seed);
        links += compare_shared(
            &format!("generated program {seed}"),
            &program,
            seed as usize,
        );
    }
    assert!(cases < 10 || links > 0, "cross-process links are met");
}

#[test]
fn fixtures_agree_with_the_rules() {
    let (mut programs, mut reads) = (0, 0);
    for path in fixtures() {
        if let Some(program) = support::compile(&path) {
            programs += 1;
            reads += compare(&path.display().to_string(), &program);
        }
    }
    assert!(programs > 60, "{programs} fixtures compiled");
    assert!(reads > 1000, "{reads} reads compared");
}

#[test]
fn generated_programs_agree_with_the_rules() {
    let cases = support::cases(40);
    let mut guarded = 0;
    for seed in 0..cases {
        let program = support::generated(seed);
        guarded += usize::from(!program.conditions().is_empty());
        compare(&format!("generated program {seed}"), &program);
    }
    // The walk's antijoin and the conflicts are exercised, not just chains.
    assert!(
        cases < 10 || guarded > 0,
        "some generated programs have conditions"
    );
}

/// Runs the binary to its end, killed past `limit` (a test never hangs);
/// its pipes are drained meanwhile, so a long output cannot block it.
fn finish(mut child: Child, limit: Duration) -> Output {
    use std::io::Read;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("the binary ran past {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().expect("stdout read"),
        stderr: err.join().expect("stderr read"),
    }
}

fn spawn(args: &[&str]) -> Child {
    Command::new(BIN)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts")
}

fn run(args: &[&str]) -> Output {
    finish(spawn(args), Duration::from_secs(120))
}

/// `flow ARGV` in this process (`cli::flow::run_to`, the path of the
/// binary's process 0), on `cluster` or on the rules at one thread.
fn flow_here(argv: &[&str], cluster: Option<Cluster>) -> (u8, String, String) {
    use arrayflow::cli::flow::{run_to, Args};
    use clap::{Args as _, FromArgMatches};
    let cmd = Args::augment_args(clap::Command::new("flow"));
    let m = cmd
        .try_get_matches_from(std::iter::once("flow").chain(argv.iter().copied()))
        .expect("the options parse");
    let args = Args::from_arg_matches(&m).expect("flow's options");
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = match cluster {
        Some(c) => with_cluster(c, || run_to(&args, &mut out, &mut err)),
        None => with_threads(1, || run_to(&args, &mut out, &mut err)).expect("a pool"),
    };
    let text = |b: Vec<u8>| String::from_utf8(b).expect("UTF-8 output");
    (arrayflow::cli::code_of(code), text(out), text(err))
}

#[test]
fn the_command_prints_what_the_rules_print() {
    for (k, path) in fixtures().iter().enumerate() {
        let p = path.to_str().expect("a UTF-8 path");
        // Text, and JSON on every third file.
        let format = if k % 3 == 0 { "json" } else { "text" };
        let rules = flow_here(&[p, "--format", format, "--engine", "rules"], None);
        let dd = flow_here(
            &[p, "--format", format, "--engine", "dd"],
            Some(Cluster::local(2)),
        );
        assert_eq!(rules, dd, "{p}, {format}");
    }
    // The binary itself, on one file.
    let p = "fixtures/papers/mse-example2.loop";
    let rules = run(&["flow", p, "--engine", "rules"]);
    let dd = run(&["flow", p, "--engine", "dd", "--workers", "2"]);
    assert!(dd.status.success());
    assert_eq!(rules.stdout, dd.stdout, "{p}: the binary");
}

/// The tests that use ports one at a time: a port freed by one test and
/// taken by another's process 0 would connect two tests' processes.
fn ports() -> std::sync::MutexGuard<'static, ()> {
    static PORTS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    PORTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Ports free on 127.0.0.1 now (bound, then released).
fn free_ports(n: usize) -> Vec<u16> {
    let held: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("a free port"))
        .collect();
    held.iter()
        .map(|l| l.local_addr().expect("an address").port())
        .collect()
}

fn hosts_file(dir: &Path, ports: &[u16]) -> PathBuf {
    let path = dir.join("hosts");
    let text: String = ports.iter().map(|p| format!("127.0.0.1:{p}\n")).collect();
    std::fs::write(&path, text).expect("writes the hosts file");
    path
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("arrayflow-dd-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// `flow FILE EXTRA` on `processes` processes of `workers` workers each:
/// process 0's output, after checking that the others printed nothing.
fn cluster_flow(
    dir: &Path,
    file: &str,
    extra: &[&str],
    processes: usize,
    workers: usize,
) -> Output {
    let hosts = hosts_file(dir, &free_ports(processes));
    let hosts = hosts.to_str().expect("a UTF-8 path").to_string();
    let (p, w) = (processes.to_string(), workers.to_string());
    let children: Vec<Child> = (0..processes)
        .rev()
        .map(|i| {
            let i = i.to_string();
            let mut args = vec!["flow", file, "--engine", "dd", "--workers", &w];
            args.extend(["--processes", &p, "--process", &i, "--hosts", &hosts]);
            args.extend(["--dd-timeout", "60"]);
            args.extend(extra);
            spawn(&args)
        })
        .collect();
    let mut outputs: Vec<Output> = children
        .into_iter()
        .map(|c| finish(c, Duration::from_secs(120)))
        .collect();
    let root = outputs.pop().expect("process 0");
    for (k, o) in outputs.iter().enumerate() {
        let i = processes - 1 - k;
        assert!(
            o.status.success(),
            "process {i}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.stdout.is_empty(), "process {i} prints nothing");
    }
    root
}

#[test]
fn two_processes_on_localhost_print_what_the_rules_print() {
    let _ports = ports();
    let dir = temp_dir("two");
    // A generated program with unknown conditions (a medium one).
    let gen = dir.join("gen.loop");
    let program = support::generated(8);
    assert!(
        !program.conditions().is_empty(),
        "generated program 8 has conditions"
    );
    std::fs::write(&gen, arrayflow::print::program(&program)).expect("writes");
    let gen = gen.to_str().expect("a UTF-8 path").to_string();
    let cases: [(&str, &[&str]); 5] = [
        ("fixtures/c/kernels/matmul.loop", &["--param", "N=12"]),
        (
            "fixtures/c/kernels/matmul.loop",
            &["--param", "N=12", "--instances", "--format", "json"],
        ),
        ("fixtures/papers/mse-example1.loop", &[]),
        ("fixtures/c/kernels/lu.loop", &["--format", "json"]),
        (gen.as_str(), &[]),
    ];
    for (file, extra) in cases {
        let mut args = vec!["flow", file, "--engine", "rules"];
        args.extend(extra);
        let rules = run(&args);
        assert!(rules.status.success(), "{file}: the rules run");
        let dd = cluster_flow(&dir, file, extra, 2, 1);
        assert!(
            dd.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&dd.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&rules.stdout),
            String::from_utf8_lossy(&dd.stdout),
            "{file}: 2 processes"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_combinations_exit_2() {
    let dir = temp_dir("usage");
    let hosts = hosts_file(&dir, &[1, 2]);
    let h = hosts.to_str().expect("a UTF-8 path");
    let f = "fixtures/c/kernels/lu.loop";
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--workers", "2"], "options of `--engine dd`"),
        (
            vec!["--engine", "rules", "--processes", "2"],
            "options of `--engine dd`",
        ),
        (
            vec!["--engine", "dd", "--processes", "2", "--hosts", h],
            "needs `--process I`",
        ),
        (
            vec!["--engine", "dd", "--processes", "2", "--process", "0"],
            "needs `--hosts FILE`",
        ),
        (
            vec!["--engine", "dd", "--process", "1"],
            "give `--processes P`",
        ),
        (
            vec![
                "--engine",
                "dd",
                "--processes",
                "2",
                "--process",
                "2",
                "--hosts",
                h,
            ],
            "is not below",
        ),
        (
            vec![
                "--engine",
                "dd",
                "--processes",
                "3",
                "--process",
                "0",
                "--hosts",
                h,
            ],
            "names 2 processes",
        ),
        (vec!["--engine", "dd", "--threads", "2"], "not `--threads`"),
        (vec!["--engine", "dd", "--symbolic"], "without `--symbolic`"),
    ];
    for (extra, says) in cases {
        let mut args = vec!["flow", f];
        args.extend(&extra);
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
    }
    let out = run(&["flow", "fixtures/c/kernels", "--engine", "dd"]);
    assert_eq!(out.status.code(), Some(2), "a directory");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_process_without_peers_gives_up_after_the_timeout() {
    let _ports = ports();
    let dir = temp_dir("alone");
    let hosts = hosts_file(&dir, &free_ports(2));
    let h = hosts.to_str().expect("a UTF-8 path");
    let start = Instant::now();
    let out = run(&[
        "flow",
        "fixtures/c/kernels/lu.loop",
        "--engine",
        "dd",
        "--processes",
        "2",
        "--process",
        "1",
        "--hosts",
        h,
        "--dd-timeout",
        "1",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("error[E0305]"), "{err}");
    assert!(err.contains("did not all connect within 1 s"), "{err}");
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "gives up promptly"
    );
    assert!(out.stdout.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `flow ARGV` on `processes` processes of `workers` workers, as threads
/// of this test on 127.0.0.1 (`run_to`, what each binary process runs),
/// spread: each keeps σ of its own readers, process 0 merges the groups.
/// Process 0's code and output, after checking the others succeeded
/// (unless `mutate`).
fn spread_here(
    argv: &[&str],
    processes: usize,
    workers: usize,
    mutate: Mutate,
) -> (u8, String, String) {
    let mut runs = spread_all(argv, processes, workers, mutate, Duration::from_secs(60));
    // Their output goes nowhere (the binary's does not either).
    for (i, (code, _, err)) in runs.iter().enumerate().skip(1) {
        assert!(mutate != Mutate::None || *code == 0, "process {i}: {err}");
    }
    runs.swap_remove(0)
}

/// [`spread_here`]: every process's code, output and errors, in process
/// order, each waiting `timeout` for the others' connections.
fn spread_all(
    argv: &[&str],
    processes: usize,
    workers: usize,
    mutate: Mutate,
    timeout: Duration,
) -> Vec<(u8, String, String)> {
    use arrayflow::cli::flow::{run_to, Args};
    use clap::{Args as _, FromArgMatches};
    let cmd = Args::augment_args(clap::Command::new("flow"));
    let m = cmd
        .try_get_matches_from(std::iter::once("flow").chain(argv.iter().copied()))
        .expect("the options parse");
    let args = Args::from_arg_matches(&m).expect("flow's options");
    let cluster = Cluster {
        timeout,
        round: 16,
        spread: true,
        mutate,
        ..Cluster::local(workers)
    };
    on_processes(processes, cluster, |_| {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run_to(&args, &mut out, &mut err);
        let text = |b: Vec<u8>| String::from_utf8(b).expect("UTF-8 output");
        (arrayflow::cli::code_of(code), text(out), text(err))
    })
}

/// `run(process)` on `processes` threads of this test, each with its own
/// copy of `cluster` on 127.0.0.1 (free ports) installed: the results, in
/// process order.
fn on_processes<T: Send>(
    processes: usize,
    cluster: Cluster,
    run: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let hosts: Vec<String> = free_ports(processes)
        .iter()
        .map(|p| format!("127.0.0.1:{p}"))
        .collect();
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..processes)
            .map(|process| {
                let cluster = Cluster {
                    process,
                    hosts: hosts.clone(),
                    ..cluster.clone()
                };
                let run = &run;
                scope.spawn(move || with_cluster(cluster, || run(process)))
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("a process thread"))
            .collect()
    })
}

/// The files of `programs` written under `dir`, as paths.
fn written(dir: &Path, programs: impl Iterator<Item = (String, Program)>) -> Vec<String> {
    programs
        .map(|(name, p)| {
            let path = dir.join(format!("{name}.loop"));
            std::fs::write(&path, arrayflow::print::program(&p)).expect("writes");
            path.to_str().expect("a UTF-8 path").to_string()
        })
        .collect()
}

/// Whether `flow FILE --format FORMAT` on `processes` spread processes
/// prints what the rules print; `Err` says where not.
fn spread_agrees(
    file: &str,
    format: &str,
    processes: usize,
    workers: usize,
    mutate: Mutate,
) -> Result<(), String> {
    // "instances": `--format json --instances`.
    let argv = match format {
        "instances" => vec![file, "--format", "json", "--instances"],
        _ => vec![file, "--format", format],
    };
    let rules = flow_here(&[&argv[..], &["--engine", "rules"]].concat(), None);
    let dd = spread_here(
        &[&argv[..], &["--engine", "dd"]].concat(),
        processes,
        workers,
        mutate,
    );
    if rules == dd {
        return Ok(());
    }
    Err(format!(
        "{file}, {format}, {processes} processes of {workers} workers: rules {rules:?}, dd {dd:?}"
    ))
}

/// Every fixture and generated program (20 by default, `ARRAYFLOW_CASES`),
/// text and JSON by turns, at 2 processes of 1 worker and 3 of 2.
fn spread_cases() -> Vec<String> {
    let dir = temp_dir("spread");
    let gen = (0..support::cases(20)).map(|seed| (format!("gen{seed}"), support::generated(seed)));
    let mut files: Vec<String> = fixtures()
        .iter()
        .map(|p| p.to_str().expect("a UTF-8 path").to_string())
        .collect();
    files.extend(written(&dir, gen));
    files
}

#[test]
fn spread_processes_print_what_the_rules_print() {
    let _ports = ports();
    let files = spread_cases();
    for (k, file) in files.iter().enumerate() {
        let format = if k % 2 == 0 { "text" } else { "json" };
        let (processes, workers) = if k % 3 == 0 { (3, 2) } else { (2, 1) };
        spread_agrees(file, format, processes, workers, Mutate::None)
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// The check can fail: parts absorbed out of order, the records of a
/// reader sent to the wrong process, or each process resolving reads
/// across kernels by its own exit reads alone, change the output of some
/// files.
#[test]
fn spread_mutations_are_caught() {
    let _ports = ports();
    let files = spread_cases();
    for format in ["text", "instances"] {
        for mutate in [Mutate::Order, Mutate::Route, Mutate::LocalExits] {
            let caught = files
                .iter()
                .take(40)
                .filter(|f| spread_agrees(f, format, 3, 1, mutate).is_err())
                .count();
            eprintln!("{format}, {mutate:?}: {caught} of 40 files differ");
            assert!(caught > 0, "{format}, {mutate:?} changes some output");
        }
    }
}

/// `--instances` (one JSON record per read instance), spread: each
/// process renders its readers' records and process 0 prints them site by
/// site in process order; every fixture and generated program against the
/// rules' bytes, at 2 processes of 1 worker and 3 of 2 by turns.
#[test]
fn spread_instances_print_what_the_rules_print() {
    let _ports = ports();
    for (k, file) in spread_cases().iter().enumerate() {
        let (processes, workers) = if k % 3 == 0 { (3, 2) } else { (2, 1) };
        spread_agrees(file, "instances", processes, workers, Mutate::None)
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// A read whose source is a frame's entry write (the cell's initial value,
/// made at its first touch) is resolved on the reader's process: only the
/// other sources cross processes. matmul at N=8 on 2 processes: 200
/// instances per `i` iteration (S: 8, T: 3 × 64; the frame's are not
/// counted), so the cut is after i = 3 (800 of 1600). Every cross-process
/// source is then an entry write (B's are all made at i = 0, on process 0),
/// but for the exit reads of C, at the end of process 1's stretch: rows 0
/// to 3 were last written on process 0, 32 cells, 32 records. With the
/// entry writes resolved at their owner (process 0) instead, the reads of
/// B on process 1 (4 × 8 × 8 = 256) cross too: 288.
#[test]
fn entry_writes_are_resolved_where_the_reader_is() {
    let _ports = ports();
    let argv = [
        "fixtures/c/kernels/matmul.loop",
        "--param",
        "N=8",
        "--engine",
        "dd",
    ];
    let rules = flow_here(&[&argv[..3], &["--engine", "rules"]].concat(), None);
    for (mutate, shipped) in [(Mutate::None, 32), (Mutate::EntryAtOwner, 288)] {
        let before = arrayflow::dataflow::dd::shipped_sources();
        let got = spread_here(&argv, 2, 1, mutate);
        assert_eq!(got, rules, "{mutate:?}: the rules' output");
        let after = arrayflow::dataflow::dd::shipped_sources();
        assert_eq!(
            after - before,
            shipped,
            "{mutate:?}: source records shipped"
        );
    }
}

/// R(i) walks back over S(i), ..., S(1) (may-writes: `...` is unknown):
/// about N²/2 walk steps for 2N access instances.
const WALKS: &str = "param N = 200;\nreal x;\nfor i = 1 to N do\n  if ... then\n    S: x = ...;\n  end\n  R: use(x);\nend\n";

/// Every process of `runs` but `failed` stopped (exit 1, no output) with
/// E0305 naming process `failed`.
/// Runs `dd` spread over each `(processes, workers)` of `shapes`, where
/// process 0 fails as `one` (its run alone) does: process 0 gives `one`,
/// every other process is told. How long each spread run took.
fn process_0_fails(
    dd: &[&str],
    one: &(u8, String, String),
    shapes: &[(usize, usize)],
) -> Vec<Duration> {
    (shapes.iter())
        .map(|&(processes, workers)| {
            let start = Instant::now();
            let runs = spread_all(
                dd,
                processes,
                workers,
                Mutate::None,
                Duration::from_secs(60),
            );
            assert_eq!(&runs[0], one, "{processes} processes: process 0");
            told(&runs, 0);
            start.elapsed()
        })
        .collect()
}

fn told(runs: &[(u8, String, String)], failed: usize) {
    let says = format!("process {failed} of the dd engine failed");
    for (i, (code, out, err)) in runs.iter().enumerate() {
        if i != failed {
            assert_eq!((*code, out.as_str()), (1, ""), "process {i}: {err}");
            let of = runs.len();
            assert!(
                err.contains("error[E0305]") && err.contains(&says),
                "process {i} of {of}: {err}"
            );
        }
    }
}

/// `text` written to NAME.loop in a fresh directory: the directory (to
/// remove) and the file.
fn program_file(name: &str, text: &str) -> (PathBuf, PathBuf) {
    let dir = temp_dir(name);
    let path = dir.join(format!("{name}.loop"));
    std::fs::write(&path, text).expect("writes");
    (dir, path)
}

/// The walk-step budget (E0302) of a spread run: process 0 gives dd's
/// diagnostic on one process (exit 1): the rules' code and site, with the
/// total of the walk steps where the rules give the count at the batch
/// that crossed the budget (docs/scaling.md); the others, told by process
/// 0 at the groups' connections, stop with E0305 naming it, not after the
/// timeout. Silent (the mutation), they wait for those connections to the
/// timeout, and say so.
#[test]
fn a_walk_step_budget_error_stops_every_process() {
    let _ports = ports();
    let (dir, path) = program_file("walks", WALKS);
    let file = path.to_str().expect("a UTF-8 path");
    let argv = [file, "--param", "N=200", "--max-instances", "5000"];
    let dd = [&argv[..], &["--engine", "dd"]].concat();
    let rules = flow_here(&[&argv[..], &["--engine", "rules"]].concat(), None);
    let one = flow_here(&dd, Some(Cluster::local(1)));
    let head = |e: &str| e.split(" brings the count to").next().map(str::to_string);
    let says = "error[E0302]: the analysis needs more than 5000 walk steps: `<exit>3`";
    assert_eq!(rules.0, 1, "{}", rules.2);
    assert_eq!(head(&rules.2).as_deref(), Some(says), "{}", rules.2);
    assert_eq!(
        (one.0, head(&one.2)),
        (rules.0, head(&rules.2)),
        "{}",
        one.2
    );
    process_0_fails(&dd, &one, &[(2, 1), (3, 2)]);
    let runs = spread_all(&dd, 2, 1, Mutate::Silent, Duration::from_secs(2));
    assert_eq!(runs[0], one, "silent: process 0");
    assert_eq!(runs[1].0, 1, "silent: {}", runs[1].2);
    assert!(
        runs[1].2.contains("did not all connect within 2 s"),
        "silent: {}",
        runs[1].2
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `analyze_framed` of `program` (no frame, core kinds) on 3 processes of
/// one worker as threads of this test (a library cluster: gathered), each
/// with its `config(process)`, waiting `timeout` for the others: each
/// process's result, in process order.
fn three_processes(
    program: &Program,
    config: impl Fn(usize) -> Config + Sync,
    mutate: Mutate,
    timeout: Duration,
) -> Vec<Result<Flow, DataflowError>> {
    let kinds = arrayflow::kinds::Kinds::core();
    let frame = arrayflow::facts::Frame::default();
    let cluster = Cluster {
        timeout,
        mutate,
        ..Cluster::local(1)
    };
    on_processes(3, cluster, |process| {
        analyze_framed(program, &config(process), &kinds, &frame)
    })
}

/// A process that fails before the dd run tells the others at the run's
/// connections, which stop with E0305 naming it. Process 0 alone is given
/// a smaller instance budget here (its count refuses matmul, E0302): a
/// failure only it meets, as a lowering error past another process's
/// stretch would be. Silent (the mutation), they wait to the timeout.
#[test]
fn a_process_that_fails_before_the_run_stops_the_others() {
    let _ports = ports();
    let program =
        support::compile(Path::new("fixtures/c/kernels/matmul.loop")).expect("matmul compiles");
    for (mutate, says) in [
        (Mutate::None, "process 0 of the dd engine failed"),
        (Mutate::Silent, "did not all connect within 2 s"),
    ] {
        let config = |process| Config {
            max_instances: if process == 0 { 10 } else { 1_000_000 },
            ..config()
        };
        let timeout = Duration::from_secs(if mutate == Mutate::None { 60 } else { 2 });
        let runs = three_processes(&program, config, mutate, timeout);
        let err = |r: &Result<Flow, DataflowError>| r.as_ref().err().map(ToString::to_string);
        let first = err(&runs[0]).unwrap_or_default();
        assert!(
            first.contains("access instances"),
            "{mutate:?}: process 0: {first}"
        );
        for (i, r) in runs.iter().enumerate().skip(1) {
            let e = err(r).unwrap_or_default();
            assert!(e.contains(says), "{mutate:?}: process {i}: {e}");
        }
    }
}

/// σ across kernels, spread: the second kernel of fixtures/dd/three-kernels
/// reads, on process 0, cells whose last write (S, first kernel) only the
/// last process's exit reads name. Every process gets every exit read
/// (`db::exits`), so the output is the rules'; with each process looking
/// up its own exit reads alone (`Mutate::LocalExits`), those reads take
/// the initial value instead (checked on the text: the condition reads
/// S[12] at i = 1, and the initial value at i = 1..6 under the fault).
#[test]
fn reads_across_kernels_resolve_through_every_process_exit_reads() {
    let _ports = ports();
    let file = "fixtures/dd/three-kernels.loop";
    for (processes, workers) in [(2, 1), (3, 2), (4, 1)] {
        for format in ["text", "json", "instances"] {
            spread_agrees(file, format, processes, workers, Mutate::None)
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    let argv = [file, "--engine", "dd"];
    let (code, out, err) = spread_here(&argv, 2, 1, Mutate::LocalExits);
    assert_eq!(code, 0, "{err}");
    let line = |from: &str| format!("_C1[i] reads A (access 0) from {from}\n");
    assert!(
        out.contains(&line("the initial value   for i = 1..6")),
        "{out}"
    );
    assert!(!out.contains(&line("S[12]   for i = 1")), "{out}");
    let rules = flow_here(&[file, "--engine", "rules"], None);
    assert!(rules.1.contains(&line("S[12]   for i = 1")), "{}", rules.1);
}

/// A walk-step budget error (E0302) in the first of two kernels: process 0
/// tells the others at the second kernel's run's connections (the next
/// round they are headed for), which stop with E0305 naming it.
#[test]
fn a_budget_error_in_an_earlier_kernel_stops_every_process() {
    let _ports = ports();
    let text = format!("{WALKS}for j = 1 to 3 do\n  V: use(x);\nend\n");
    let (dir, path) = program_file("walks2", &text);
    let file = path.to_str().expect("a UTF-8 path");
    let argv = [file, "--param", "N=200", "--max-instances", "5000"];
    let dd = [&argv[..], &["--engine", "dd"]].concat();
    let one = flow_here(&dd, Some(Cluster::local(1)));
    assert_eq!(one.0, 1, "{}", one.2);
    assert!(one.2.contains("error[E0302]"), "{}", one.2);
    for took in process_0_fails(&dd, &one, &[(2, 1), (3, 1)]) {
        assert!(took < Duration::from_secs(30), "not by the timeout");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A process other than 0 that fails after its part of a spread run (as
/// past the memory budget: `Mutate::FailAfterRun`, the last process) tells
/// the others at the next round of connections: the groups' for a file of
/// one kernel, the next kernel's run for a file of several. Every other
/// process stops with E0305 naming it, not after the timeout.
#[test]
fn a_process_that_fails_after_the_run_stops_the_others() {
    let _ports = ports();
    for file in [
        "fixtures/c/kernels/matmul.loop",
        "fixtures/dd/three-kernels.loop",
    ] {
        for processes in [2, 3] {
            let start = Instant::now();
            let argv = [file, "--engine", "dd"];
            let runs = spread_all(
                &argv,
                processes,
                1,
                Mutate::FailAfterRun,
                Duration::from_secs(60),
            );
            let last = processes - 1;
            let (code, out, err) = &runs[last];
            assert_eq!((*code, out.as_str()), (1, ""), "{file}: process {last}");
            assert!(err.contains("memory"), "{file}: process {last}: {err}");
            told(&runs, last);
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{file}: not by the timeout"
            );
        }
    }
}

/// Gathered (a library cluster, not spread), process 0 alone knows the
/// walk-step total, and the others would return as soon as they fed their
/// readers: process 0 gives its verdict at one more round of connections,
/// so they stop with E0305 naming it; Silent (the mutation), they wait for
/// it to the timeout. A run that succeeds gives the others an empty flow.
#[test]
fn a_gathered_run_tells_the_others_whether_it_succeeded() {
    let _ports = ports();
    let (dir, path) = program_file("walks-gathered", WALKS);
    let program = support::compile(&path).expect("compiles");
    let run = |max: u64, mutate: Mutate, timeout: u64| {
        let config = |_| Config {
            params: vec![("N".to_string(), 200)],
            max_instances: max,
            ..config()
        };
        three_processes(&program, config, mutate, Duration::from_secs(timeout))
    };
    let err = |r: &Result<Flow, DataflowError>| r.as_ref().err().map(ToString::to_string);
    let ok = run(1_000_000, Mutate::None, 60);
    assert!(
        ok.iter().all(Result::is_ok),
        "{:?}",
        ok.iter().map(err).collect::<Vec<_>>()
    );
    assert!(
        ok[1].as_ref().is_ok_and(|f| f.is_empty()),
        "the others' flow is empty"
    );
    for (mutate, says) in [
        (Mutate::None, "process 0 of the dd engine failed"),
        (Mutate::Silent, "did not all connect within 2 s"),
    ] {
        let start = Instant::now();
        let runs = run(5000, mutate, if mutate == Mutate::None { 60 } else { 2 });
        let first = err(&runs[0]).unwrap_or_default();
        assert!(
            first.contains("walk steps"),
            "{mutate:?}: process 0: {first}"
        );
        for (i, r) in runs.iter().enumerate().skip(1) {
            let e = err(r).unwrap_or_default();
            assert!(e.contains(says), "{mutate:?}: process {i}: {e}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{mutate:?}: not by the timeout"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
