//! Language-server latency, end to end: the release `arrayflow lsp` as a
//! child process, spoken to over its pipes (tests/support/lsp_client.rs).
//!
//! - Edit latency on a file of 50 kernels: change one statement of one
//!   kernel (`didChange`, incremental), time until the diagnostics of that
//!   version are published. Compared with a cold full analysis of the same
//!   file (open it under a new URI, time until its diagnostics).
//! - Cold open of every paper fixture: `didOpen` to diagnostics.
//! - Straight-line programs of 200 and 4,000 statements
//!   `S<k>: A[1] = A[2];`: edit one statement, time until its diagnostics,
//!   then hover on the edited statement's read, p50 and p95 of each.
//!
//! Wall-clock times (what a user waits for). `ARRAYFLOW_BENCH_QUICK=1` runs
//! fewer edits.

#[path = "../tests/support/lsp_client.rs"]
mod lsp_client;

use lsp_client::Client;
use serde_json::json;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow");

/// 50 kernels: 2-level nests at N=24 with reads of the previous row and
/// column, and a scalar reduction, each kernel reading what the one
/// before wrote.
fn file(edit: Option<(usize, u32)>) -> String {
    let mut s = String::from("param N = 24;\nreal A[0..N, 0..N];\nreal B[0..N, 0..N];\nreal s;\n");
    for k in 0..50 {
        let c = match edit {
            Some((e, v)) if e == k => v,
            _ => 1,
        };
        s.push_str(&format!(
            "for i = 1 to N do\n  for j = 1 to N do\n    S{k}: A[i, j] = A[i-1, j] + B[i, j-1] * {c};\n    T{k}: B[i, j] = A[i, j] - s;\n  end\n  U{k}: s = s + A[i, N];\nend\n"
        ));
    }
    s
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let k = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[k.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// `n` statements `S<k>: A[1] = A[2];`, statement k on line k + 1.
fn statements(n: usize) -> Vec<String> {
    (0..n).map(|k| format!("S{k}: A[1] = A[2];")).collect()
}

/// Edits one statement at a time of an `n`-statement program (a different
/// one each time, its text alternating), then hovers on its read; the
/// sorted times to the diagnostics of each version and of each hover.
fn statement_edits(c: &mut Client, n: usize, edits: usize) -> (Vec<Duration>, Vec<Duration>) {
    let uri = format!("file:///bench/statements{n}.loop");
    let mut lines = statements(n);
    let text = format!("real A[1..2];\n{}\n", lines.join("\n"));
    c.open(&uri, &text);
    c.diagnostics(&uri, 1);
    let (mut diags, mut hovers) = (Vec::new(), Vec::new());
    for e in 0..edits {
        let k = (e * 37) % n;
        let new = if lines[k].contains('*') {
            format!("S{k}: A[1] = A[2];")
        } else {
            format!("S{k}: A[1] = A[2] * {};", 2 + e % 5)
        };
        let line = k + 1;
        let version = e as i64 + 2;
        let t = Instant::now();
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"range": {"start": {"line": line, "character": 0},
                                                 "end": {"line": line, "character": lines[k].len()}},
                                       "text": new}]}),
        );
        c.diagnostics(&uri, version);
        diags.push(t.elapsed());
        lines[k] = new;
        let col = lines[k].find("A[2]").expect("the read");
        let t = Instant::now();
        let r = c.call(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri},
                   "position": {"line": line, "character": col + 1}}),
        );
        hovers.push(t.elapsed());
        assert!(r["result"]["contents"]["value"].is_string(), "{r}");
    }
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    diags.sort();
    hovers.sort();
    (diags, hovers)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing
    // else we use.
    let quick = std::env::var("ARRAYFLOW_BENCH_QUICK").is_ok();
    let edits = if quick { 40 } else { 200 };
    let mut c = Client::start(BIN);

    // Cold: the whole file analysed from scratch, several times.
    let text = file(None);
    let mut cold = Vec::new();
    for k in 0..5 {
        let uri = format!("file:///bench/cold{k}.loop");
        let t = Instant::now();
        c.open(&uri, &text);
        let d = c.diagnostics(&uri, 1);
        cold.push(t.elapsed());
        assert!(!d.is_empty());
        c.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        );
    }
    cold.sort();
    let cold_median = percentile(&cold, 0.5);

    // Edits: one statement of one kernel, a different kernel each time.
    let uri = "file:///bench/edit.loop";
    c.open(uri, &text);
    c.diagnostics(uri, 1);
    let mut current = text.clone();
    let mut times = Vec::new();
    for n in 0..edits {
        let kernel = (n * 7) % 50;
        let value = 2 + (n as u32 % 5);
        let next = file(Some((kernel, value)));
        // The changed text: the constant at the end of statement S<kernel>.
        let label = format!("S{kernel}: A[i, j] = A[i-1, j] + B[i, j-1] * ");
        let at = current.find(&label).expect("statement") + label.len();
        let end = at + current[at..].find(';').expect(";");
        let line = current[..at].matches('\n').count();
        let col = at - current[..at].rfind('\n').map_or(0, |k| k + 1);
        let col_end = col + (end - at);
        let version = n as i64 + 2;
        let t = Instant::now();
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"range": {"start": {"line": line, "character": col},
                                                 "end": {"line": line, "character": col_end}},
                                       "text": value.to_string()}]}),
        );
        c.diagnostics(uri, version);
        times.push(t.elapsed());
        current.replace_range(at..end, &value.to_string());
        // Other kernels' constants are 1 in both: the texts agree.
        let _ = next;
    }
    times.sort();
    let (p50, p95) = (percentile(&times, 0.5), percentile(&times, 0.95));

    // Cold open of every paper fixture.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/papers");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    let mut opens = Vec::new();
    for p in &paths {
        let t = std::fs::read_to_string(p).unwrap();
        let uri = format!("file://{}", p.display());
        let start = Instant::now();
        c.open(&uri, &t);
        c.diagnostics(&uri, 1);
        let took = start.elapsed();
        opens.push((took, p.file_name().unwrap().to_string_lossy().to_string()));
    }
    opens.sort();
    let straight: Vec<_> = [(200, 20 * edits / 40), (4000, 10 * edits / 40)]
        .into_iter()
        .map(|(n, e)| (n, statement_edits(&mut c, n, e)))
        .collect();
    c.shutdown();

    println!("lsp benchmark ({} edits)", edits);
    println!(
        "edit latency, 50 kernels: p50 {}, p95 {} (target p95 <= 20 ms)",
        ms(p50),
        ms(p95)
    );
    println!(
        "cold full analysis of the same file: median {} (min {}, max {}); p95 edit / cold = {:.1}% (target <= 10%)",
        ms(cold_median),
        ms(cold[0]),
        ms(cold[cold.len() - 1]),
        100.0 * p95.as_secs_f64() / cold_median.as_secs_f64()
    );
    let (slowest, name) = &opens[opens.len() - 1];
    println!(
        "cold open of {} paper fixtures: median {}, slowest {} ({name}) (target <= 50 ms each)",
        opens.len(),
        ms(opens[opens.len() / 2].0),
        ms(*slowest)
    );
    for (n, (diags, hovers)) in &straight {
        let target = if *n <= 200 { 20 } else { 100 };
        println!(
            "{n} statements, {} edits: diagnostics p50 {}, p95 {}; hover after the edit p50 {}, p95 {} (target p95 <= {target} ms)",
            diags.len(),
            ms(percentile(diags, 0.5)),
            ms(percentile(diags, 0.95)),
            ms(percentile(hovers, 0.5)),
            ms(percentile(hovers, 0.95)),
        );
    }
}
