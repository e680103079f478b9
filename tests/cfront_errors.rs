//! Every C file in fixtures/c/errors/ against its expected diagnostics
//! (tests/snapshots/cfront_errors__*.snap, each checked by hand). Files
//! named `warn-*` lower to a program with warnings only.

use arrayflow::diagnostics::{has_errors, SourceFiles};
use std::path::PathBuf;

#[test]
fn c_error_fixtures_match_their_snapshots() {
    let mut paths: Vec<PathBuf> = std::fs::read_dir("fixtures/c/errors")
        .expect("fixtures/c/errors exists")
        .map(|e| e.expect("readable directory").path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 10, "only {} C error fixtures", paths.len());
    for path in paths {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let source = std::fs::read_to_string(&path).unwrap();
        let mut files = SourceFiles::new();
        let id = files.add(path.display().to_string(), source);
        let (program, diags) = arrayflow::cfront::compile(files.source(id), id);
        assert!(!diags.is_empty(), "{stem}: no diagnostic");
        let warn_only = stem.starts_with("warn-");
        assert_eq!(has_errors(&diags), !warn_only, "{stem}");
        assert_eq!(program.is_some(), warn_only, "{stem}");
        insta::assert_snapshot!(stem.clone(), files.render_all(&diags));
    }
}
