//! `arrayflow-summary DIR`: every `.loop` and `.c` file below DIR, opened in
//! one [`arrayflow::Host`], with per file its errors, its loops and how many
//! of them are parallel as written and after expansion. Exit 1 when a file
//! has errors, 2 when DIR cannot be read.

use arrayflow::{Analysis, FileId, Host, Options};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: arrayflow-summary DIR");
        return ExitCode::from(2);
    };
    let mut paths = Vec::new();
    if let Err(e) = walk(Path::new(&dir), &mut paths) {
        eprintln!("error: {dir}: {e}");
        return ExitCode::from(2);
    }
    paths.sort();
    let mut host = Host::new(Options::default());
    let mut files = Vec::new();
    for path in &paths {
        match std::fs::read_to_string(path) {
            Ok(text) => files.push(host.set_file(&path.to_string_lossy(), text)),
            Err(e) => eprintln!("warning: {}: {e}", path.display()),
        }
    }
    let analysis = host.analysis();
    let mut failed = false;
    for &f in &files {
        match summary(&analysis, f) {
            Ok((line, errors)) => {
                println!("{line}");
                failed |= errors;
            }
            Err(e) => {
                eprintln!("error: {}: {e}", analysis.path(f).unwrap_or("?"));
                return ExitCode::from(2);
            }
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// One line for one file, and whether it has errors.
fn summary(a: &Analysis, f: FileId) -> arrayflow::Cancellable<(String, bool)> {
    let path = a.path(f).ok_or(arrayflow::Cancelled::NoSuchFile)?;
    let diags = a.diagnostics(f)?;
    let errors = diags.iter().filter(|d| d.is_error()).count();
    if errors > 0 {
        return Ok((format!("{path}: {errors} error(s)"), true));
    }
    let loops = a.loops(f)?;
    let parallel = loops.iter().filter(|l| l.parallel).count();
    let after = (loops.iter())
        .filter(|l| l.parallel_after_expansion == Some(true))
        .count();
    Ok((
        format!(
            "{path}: {} loop(s), {parallel} parallel as written, {after} after expansion",
            loops.len()
        ),
        false,
    ))
}

/// The `.loop` and `.c` files below `dir`.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("loop" | "c")
        ) {
            out.push(path);
        }
    }
    Ok(())
}
