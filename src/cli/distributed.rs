//! `flow FILE --engine dd [--workers W] [--processes P --process I --hosts
//! FILE] [--dd-timeout SECS]`: bounded σ on timely/differential-dataflow
//! (`dataflow::dd`, docs/scaling.md), across `W` worker threads in each of
//! `P` processes (timely's `-w`, `-n`, `-p`, `-h`). Every process runs the
//! same command on the same file; process 0 prints, byte for byte what
//! `--engine rules` prints; the others print nothing unless they fail.
//! Usage errors exit 2.

use super::flow::{Args, Engine};
use std::process::ExitCode;

/// Why the options do not describe a cluster (a usage error).
fn usage(args: &Args) -> Result<(), String> {
    let dd = &args.dd;
    if args.engine != Engine::Dd {
        return Err(
            "`--workers`, `--processes`, `--process`, `--hosts` and `--dd-timeout` are options of `--engine dd`"
                .to_string(),
        );
    }
    if args.input.file.is_dir() {
        return Err("`--engine dd` analyses one file, not a directory".to_string());
    }
    if args.symbolic {
        return Err("`--engine dd` computes bounded σ: use it without `--symbolic`".to_string());
    }
    if args.threads.is_some() {
        return Err(
            "`--engine dd` runs on its workers: give `--workers`, not `--threads`".to_string(),
        );
    }
    let p = dd.processes.unwrap_or(1);
    match (p, dd.process, &dd.hosts) {
        (1, None | Some(0), None) => Ok(()),
        (1, _, _) => Err(
            "`--process` and `--hosts` describe several processes: give `--processes P` (P ≥ 2) too".to_string(),
        ),
        (_, None, _) => Err(format!("`--processes {p}` needs `--process I` (0 to {})", p - 1)),
        (_, _, None) => Err(format!("`--processes {p}` needs `--hosts FILE` (one `host:port` per process)")),
        (_, Some(i), Some(_)) if i >= p => Err(format!(
            "`--process {i}` is not below `--processes {p}`"
        )),
        _ => Ok(()),
    }
}

/// The cluster the options describe.
#[cfg(feature = "dd")]
fn cluster(args: &Args) -> Result<crate::dataflow::dd::Cluster, String> {
    usage(args)?;
    let dd = &args.dd;
    let mut c = crate::dataflow::dd::Cluster::local(usize::from(dd.workers.unwrap_or(1)));
    if let Some(secs) = dd.dd_timeout {
        c.timeout = std::time::Duration::from_secs(secs);
    }
    let p = usize::from(dd.processes.unwrap_or(1));
    if let (Some(path), true) = (&dd.hosts, p > 1) {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the hosts file {}: {e}", path.display()))?;
        let hosts: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .take(p)
            .map(str::to_string)
            .collect();
        if hosts.len() < p {
            return Err(format!(
                "the hosts file {} names {} processes, `--processes` asks for {p}",
                path.display(),
                hosts.len()
            ));
        }
        if let Some(bad) = hosts.iter().find(|h| !h.contains(':')) {
            return Err(format!(
                "the hosts file {}: `{bad}` is not `host:port`",
                path.display()
            ));
        }
        c.hosts = hosts;
        c.process = usize::from(dd.process.unwrap_or(0));
        // Each process keeps σ of its own readers, groups or renders them,
        // and process 0 prints them with its own (a file of one kernel).
        c.spread = true;
    }
    Ok(c)
}

/// `flow` with `--engine dd` (or any dd option).
pub fn run(args: &Args) -> ExitCode {
    if let Err(why) = usage(args) {
        eprintln!("error: {why}");
        return ExitCode::from(2);
    }
    run_on(args)
}

#[cfg(not(feature = "dd"))]
fn run_on(_: &Args) -> ExitCode {
    eprintln!("error: `--engine dd`: this arrayflow was built without the `dd` feature (cargo build --features dd)");
    ExitCode::from(2)
}

#[cfg(feature = "dd")]
fn run_on(args: &Args) -> ExitCode {
    let cluster = match cluster(args) {
        Ok(c) => c,
        Err(why) => {
            eprintln!("error: {why}");
            return ExitCode::from(2);
        }
    };
    let root = cluster.is_root();
    let process = cluster.process;
    // One rayon thread: the workers are timely's.
    let here = || {
        crate::dataflow::dd::with_cluster(cluster, || {
            if root {
                let stdout = std::io::stdout();
                let mut out = std::io::BufWriter::new(stdout.lock());
                super::flow::run_to(args, &mut out, &mut std::io::stderr())
            } else {
                // The same analyses as process 0, in the same order; only
                // a failure is shown.
                let mut err = Vec::new();
                let code = super::flow::run_to(args, &mut std::io::sink(), &mut err);
                if code != ExitCode::SUCCESS {
                    let _ = std::io::Write::write_all(&mut std::io::stderr(), &err);
                }
                code
            }
        })
    };
    match crate::dataflow::with_threads(1, here) {
        Ok(code) => {
            if std::env::var_os("ARRAYFLOW_PEAK").is_some() {
                // The benchmark's per-process figure (benches/dd.rs).
                let peak = crate::budget::peak().unwrap_or(0);
                eprintln!("peak heap of process {process}: {peak} bytes");
            }
            code
        }
        Err(e) => {
            eprintln!("error: cannot start a thread: {e}");
            ExitCode::from(2)
        }
    }
}
