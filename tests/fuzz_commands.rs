//! Every command on mutated fixtures, as a user would run them: the built
//! binary under a 2 GB address-space limit (`ulimit -v`), each run killed
//! after 20 s. No run may abort, panic, report an internal error or time
//! out; exit codes are the documented 0, 1 and 2.
//!
//! Mutations aim at sizes and shapes: an integer literal replaced by a small,
//! large or overflowing one (a parameter default of 10^8, a bound of 2^31),
//! a line duplicated, deleted or swapped, a token dropped. 200 mutants by
//! default (fixed seed), `ARRAYFLOW_CASES` for more; every tenth mutant is
//! also opened in the language server, under the same limits.

mod support;

#[path = "support/lsp_client.rs"]
mod lsp_client;

use arrayflow::hash::SplitMix64;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow");
/// The address-space limit of every run, in KiB (2 GB).
const LIMIT_KB: u64 = 2_000_000;
const TIMEOUT: Duration = Duration::from_secs(20);

fn fixtures() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in ["fixtures/papers", "fixtures/c/kernels"] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("fixture directory")
            .map(|e| e.expect("entry").path())
            .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("loop" | "c")))
            .collect();
        paths.sort();
        for p in paths {
            let ext = p.extension().unwrap().to_str().unwrap().to_string();
            out.push((ext, std::fs::read_to_string(&p).expect("UTF-8 fixture")));
        }
    }
    out
}

const LITERALS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "1000",
    "100000",
    "100000000",
    "2147483648",
    "-1",
    "99999999999999999999",
];

/// Byte ranges of the integer literals of `src`.
fn literals(src: &str) -> Vec<(usize, usize)> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut k = 0;
    while k < b.len() {
        if b[k].is_ascii_digit()
            && (k == 0 || !(b[k - 1].is_ascii_alphanumeric() || b[k - 1] == b'_'))
        {
            let start = k;
            while k < b.len() && b[k].is_ascii_digit() {
                k += 1;
            }
            out.push((start, k));
        } else {
            k += 1;
        }
    }
    out
}

fn mutate(src: &str, rng: &mut SplitMix64) -> String {
    let mut s = src.to_string();
    for _ in 0..=rng.below(2) {
        match rng.below(6) {
            // Literals twice as often: sizes are what this test is about.
            0 | 1 => {
                let lits = literals(&s);
                if lits.is_empty() {
                    continue;
                }
                let (a, b) = lits[rng.below(lits.len() as u64) as usize];
                let new = LITERALS[rng.below(LITERALS.len() as u64) as usize];
                s.replace_range(a..b, new);
            }
            op => {
                let mut lines: Vec<String> = s.lines().map(str::to_string).collect();
                if lines.is_empty() {
                    continue;
                }
                let k = rng.below(lines.len() as u64) as usize;
                match op {
                    2 => {
                        let l = lines[k].clone();
                        lines.insert(k, l);
                    }
                    3 => {
                        lines.remove(k);
                    }
                    4 => {
                        let j = rng.below(lines.len() as u64) as usize;
                        lines.swap(k, j);
                    }
                    _ => {
                        let words: Vec<&str> = lines[k].split(' ').collect();
                        let drop = rng.below(words.len() as u64) as usize;
                        let kept: Vec<&str> = words
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| *i != drop)
                            .map(|(_, w)| *w)
                            .collect();
                        lines[k] = kept.join(" ");
                    }
                }
                s = lines.join("\n") + "\n";
            }
        }
    }
    s
}

/// What went wrong with one run, if anything.
fn run_limited(args: &[&str], dir: &Path) -> Option<String> {
    let err_path = dir.join(format!("stderr-{}", std::process::id()));
    let err_file = std::fs::File::create(&err_path).expect("stderr file");
    let start = Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {LIMIT_KB}; exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err_file)
        .spawn()
        .expect("start sh");
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break Some(st);
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let tail: String = stderr.chars().take(400).collect();
    let Some(status) = status else {
        return Some(format!("ran past {TIMEOUT:?}"));
    };
    for bad in [
        "panicked",
        "memory allocation of",
        "internal error",
        "RUST_BACKTRACE",
    ] {
        if stderr.contains(bad) {
            return Some(format!("`{bad}` on stderr: {tail}"));
        }
    }
    match status.code() {
        Some(0..=2) => None,
        Some(c) => Some(format!("exit code {c}: {tail}")),
        None => Some(format!("killed by a signal ({status}): {tail}")),
    }
}

/// The command lines run on each mutant (`F`: the mutant's path).
const COMMANDS: &[&[&str]] = &[
    &["check", "F"],
    &["fmt", "F"],
    &["flow", "F"],
    &["flow", "F", "--format", "json"],
    &["flow", "F", "--format", "json", "--instances"],
    &["run", "F"],
    &["deps", "F"],
    &["expand", "F"],
    &["expand", "F", "--transform", "sa"],
    &["expand", "F", "--emit", "code"],
    &["verify", "F", "--seeds", "5"],
    &["verify", "F", "--transform", "mse", "--seeds", "2"],
    &["equiv", "F", "F"],
    &["plot", "F", "--stmt", "S", "-o", "P"],
];

/// A shell script running the server under the same address-space limit.
fn limited_server(dir: &Path) -> String {
    let path = dir.join("arrayflow-limited");
    std::fs::write(
        &path,
        format!("#!/bin/sh\nulimit -v {LIMIT_KB}\nexec \"{BIN}\" \"$@\"\n"),
    )
    .expect("write the wrapper");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.to_string_lossy().into_owned()
}

#[test]
fn every_command_survives_mutated_fixtures_within_limits() {
    let sources = fixtures();
    let n = support::cases(200);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-commands");
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let server = limited_server(&dir);
    let failures = std::sync::Mutex::new(Vec::<String>::new());
    let next = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|s| {
        for worker in 0..2 {
            let (sources, failures, next, dir, server) =
                (&sources, &failures, &next, &dir, &server);
            s.spawn(move || {
                let wdir = dir.join(format!("w{worker}"));
                std::fs::create_dir_all(&wdir).expect("worker directory");
                loop {
                    let case = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if case >= n {
                        return;
                    }
                    let mut rng = SplitMix64::new(0xF022_u64.wrapping_mul(case + 1));
                    let (ext, src) = &sources[rng.below(sources.len() as u64) as usize];
                    let mutant = mutate(src, &mut rng);
                    let file = wdir.join(format!("mutant.{ext}"));
                    std::fs::write(&file, &mutant).expect("write the mutant");
                    let f = file.to_string_lossy().into_owned();
                    let plot = wdir.join("plot.svg").to_string_lossy().into_owned();
                    for cmd in COMMANDS {
                        let args: Vec<&str> = cmd
                            .iter()
                            .map(|a| match *a {
                                "F" => f.as_str(),
                                "P" => plot.as_str(),
                                a => a,
                            })
                            .collect();
                        if let Some(why) = run_limited(&args, &wdir) {
                            let keep = dir.join(format!("failing-{case}.{ext}"));
                            let _ = std::fs::write(&keep, &mutant);
                            failures.lock().unwrap().push(format!(
                                "case {case} ({}): `arrayflow {}`: {why}",
                                keep.display(),
                                cmd.join(" ")
                            ));
                        }
                    }
                    if case % 10 == 0 {
                        let uri = format!("file:///fuzz/mutant.{ext}");
                        let mut c = lsp_client::Client::start(server);
                        c.open(&uri, &mutant);
                        // Diagnostics come back (the wait has a timeout).
                        c.diagnostics(&uri, 1);
                        c.shutdown();
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {n} mutants' runs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
