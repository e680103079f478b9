//! The shipped programs: every `.loop` and `.c` file under `fixtures/`
//! (the error fixtures left out), compiled as the command line does.

use arrayflow::model::Program;
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "errors") {
                sources(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "loop" || x == "c") {
            out.push(p);
        }
    }
}

/// Every fixture program's path, sorted.
pub fn paths() -> Vec<PathBuf> {
    let mut out = Vec::new();
    sources(Path::new("fixtures"), &mut out);
    out.sort();
    assert!(out.len() > 50, "the fixtures are found: {}", out.len());
    out
}

/// The program of a fixture, when it compiles.
pub fn compile(path: &Path) -> Option<Program> {
    let text = std::fs::read_to_string(path).ok()?;
    arrayflow::db::compile(path, &text, arrayflow::diagnostics::FileId(0)).0
}

/// The `.loop` files of one fixture directory (relative to the crate),
/// sorted.
pub fn loop_files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "loop"))
        .collect();
    v.sort();
    v
}

/// The program of a fixture (a path, or relative to the crate), which must
/// compile: the diagnostics otherwise.
pub fn load(path: impl AsRef<Path>) -> Program {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut files = arrayflow::diagnostics::SourceFiles::new();
    let file = files.add(path.display().to_string(), text.clone());
    let (p, diags) = arrayflow::db::compile(&path, &text, file);
    p.unwrap_or_else(|| panic!("{}: {:?}", path.display(), diags))
}
