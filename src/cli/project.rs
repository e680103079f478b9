//! `arrayflow check DIR` and `arrayflow flow DIR`: every `.loop` and `.c`
//! file under DIR (recursive, by path), analysed on several threads (files
//! across threads; a file's bounded σ shares the same pool). Each file's
//! output is buffered and printed whole, in path order, as soon as the
//! files before it are done, so the output is the same at every thread
//! count; a table ends the run (file, status, what was found, time). A
//! progress line goes to stderr only when stderr is a terminal and the run
//! has taken more than a second (docs/scaling.md).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What one file's command printed and how it ended.
pub struct Report {
    pub out: Vec<u8>,
    pub err: Vec<u8>,
    /// The file's exit code: 0 ok, 1 errors in the program or the
    /// analysis, 2 unreadable.
    pub code: u8,
    /// The table's summary of a success (e.g. "5120 access instances").
    pub found: String,
}

/// The `.loop` and `.c` files under `dir`, recursively, sorted; hidden
/// entries (`.git`) are left out and symbolic links to directories are not
/// followed (no cycles).
pub fn sources(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    walk(dir, &mut out)?;
    out.sort();
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read directory `{}`: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read directory `{}`: {e}", dir.display()))?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir {
            walk(&path, out)?;
        } else if path.is_file() && path.extension().is_some_and(|x| x == "loop" || x == "c") {
            out.push(path);
        }
    }
    Ok(())
}

/// The paths to analyse: each directory's sources, each file itself.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut all = Vec::new();
    for p in paths {
        if p.is_dir() {
            let found = sources(p)?;
            if found.is_empty() {
                return Err(format!("no `.loop` or `.c` file under `{}`", p.display()));
            }
            all.extend(found);
        } else {
            all.push(p.clone());
        }
    }
    Ok(all)
}

/// Runs `one` on every file on `threads` threads (0: the default), prints
/// each report in order (with a `==> FILE <==` line first when `headers`),
/// then the table; the exit code is the worst file's.
pub fn run(
    files: &[PathBuf],
    threads: usize,
    headers: bool,
    one: impl Fn(&Path) -> Report + Sync,
) -> ExitCode {
    use rayon::prelude::*;
    let (tx, rx) = mpsc::channel::<(usize, Report, Duration)>();
    let start = Instant::now();
    let mut rows = Vec::with_capacity(files.len());
    let mut progress = Progress::new(files.len(), start);
    let pool = std::thread::scope(|s| {
        let worker = s.spawn(|| {
            crate::dataflow::with_threads(threads, || {
                files
                    .par_iter()
                    .enumerate()
                    .for_each_with(tx, |tx, (k, f)| {
                        let t = Instant::now();
                        let r = one(f);
                        let _ = tx.send((k, r, t.elapsed()));
                    })
            })
        });
        let mut waiting: Vec<Option<(Report, Duration)>> = files.iter().map(|_| None).collect();
        let mut next = 0;
        let stdout = std::io::stdout();
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok((k, r, t)) => {
                    waiting[k] = Some((r, t));
                    progress.done += 1;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            while let Some((r, t)) = waiting.get_mut(next).and_then(Option::take) {
                progress.clear();
                let mut out = stdout.lock();
                if headers {
                    let _ = writeln!(out, "==> {} <==", files[next].display());
                }
                let _ = out.write_all(&r.out);
                let _ = out.flush();
                drop(out);
                let _ = std::io::stderr().write_all(&r.err);
                rows.push(row(&files[next], &r, t));
                next += 1;
            }
            progress.draw();
        }
        progress.clear();
        worker.join()
    });
    match pool {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            eprintln!("error: cannot start {threads} threads: {e}");
            return ExitCode::from(2);
        }
        Err(panic) => std::panic::resume_unwind(panic),
    }
    let worst = rows.iter().map(|r| r.code).max().unwrap_or(0);
    let mut out = std::io::stdout().lock();
    let written = out
        .write_all(table(&rows, start.elapsed()).as_bytes())
        .and_then(|()| out.flush());
    match super::finish(written) {
        c if c != ExitCode::SUCCESS => c,
        _ => ExitCode::from(worst),
    }
}

/// One line of the table.
struct Row {
    file: String,
    code: u8,
    found: String,
    time: Duration,
}

fn row(file: &Path, r: &Report, time: Duration) -> Row {
    let found = match r.code {
        0 => r.found.clone(),
        _ => {
            first_code(&String::from_utf8_lossy(&r.err)).unwrap_or_else(|| "see above".to_string())
        }
    };
    Row {
        file: file.display().to_string(),
        code: r.code,
        found,
        time,
    }
}

/// The code of the first error diagnostic in rendered text (`error[E0302]`).
fn first_code(text: &str) -> Option<String> {
    let at = text.find("error[")? + "error[".len();
    let end = text[at..].find(']')?;
    Some(text[at..at + end].to_string())
}

fn table(rows: &[Row], total: Duration) -> String {
    let status = |c: u8| match c {
        0 => "ok",
        1 => "error",
        _ => "unreadable",
    };
    let w = rows.iter().map(|r| r.file.len()).max().unwrap_or(4).max(4);
    let f = rows.iter().map(|r| r.found.len()).max().unwrap_or(5).max(5);
    let mut s = format!(
        "\n{:<w$}  {:<10}  {:<f$}  {:>10}\n",
        "file", "status", "found", "time"
    );
    for r in rows {
        s += &format!(
            "{:<w$}  {:<10}  {:<f$}  {:>7.1} ms\n",
            r.file,
            status(r.code),
            r.found,
            r.time.as_secs_f64() * 1e3
        );
    }
    let failed = rows.iter().filter(|r| r.code != 0).count();
    s += &format!(
        "{} files, {} ok, {failed} failed, {:.1} ms\n",
        rows.len(),
        rows.len() - failed,
        total.as_secs_f64() * 1e3
    );
    s
}

/// The progress line on stderr: drawn only on a terminal, after a second.
struct Progress {
    total: usize,
    done: usize,
    start: Instant,
    on: bool,
    shown: bool,
}

impl Progress {
    fn new(total: usize, start: Instant) -> Progress {
        Progress {
            total,
            done: 0,
            start,
            on: std::io::stderr().is_terminal(),
            shown: false,
        }
    }

    fn draw(&mut self) {
        let t = self.start.elapsed();
        if !self.on || t < Duration::from_secs(1) || self.done == self.total {
            return;
        }
        const WIDTH: usize = 30;
        let filled = WIDTH * self.done / self.total.max(1);
        eprint!(
            "\r[{}{}] {}/{} files, {:.0} s",
            "#".repeat(filled),
            " ".repeat(WIDTH - filled),
            self.done,
            self.total,
            t.as_secs_f64()
        );
        self.shown = true;
    }

    fn clear(&mut self) {
        if self.shown {
            eprint!("\r\x1b[2K");
            self.shown = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_code_finds_the_error_code() {
        let t = "warning[W0001]: x\nerror[E0302]: too many\nerror[E0101]: y";
        assert_eq!(first_code(t).as_deref(), Some("E0302"));
        assert_eq!(first_code("error: cannot read"), None);
    }

    #[test]
    fn table_counts_failures() {
        let rows = [
            Row {
                file: "a.loop".into(),
                code: 0,
                found: "12 access instances".into(),
                time: Duration::from_millis(3),
            },
            Row {
                file: "b.loop".into(),
                code: 1,
                found: "E0101".into(),
                time: Duration::from_millis(1),
            },
        ];
        let t = table(&rows, Duration::from_millis(4));
        assert!(t.contains("a.loop  ok "), "{t}");
        assert!(t.contains("b.loop  error "), "{t}");
        assert!(t.contains("2 files, 1 ok, 1 failed"), "{t}");
    }
}
