//! `verify` is clean on every paper fixture: each executed read's actual
//! writer is among its sources in σ.

use arrayflow::diagnostics::SourceFiles;
use arrayflow::interp::Options;

#[test]
fn verify_is_clean_on_every_paper_fixture() {
    let mut paths: Vec<_> = std::fs::read_dir("fixtures/papers")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "loop"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 3);
    let mut reads = 0;
    for path in paths {
        let source = std::fs::read_to_string(&path).unwrap();
        let mut files = SourceFiles::new();
        let id = files.add(path.display().to_string(), source);
        let (p, diags) = arrayflow::lower::compile(files.source(id), id);
        let p = p.unwrap_or_else(|| panic!("{}", files.render_all(&diags)));
        let mut o = Options::new(p.param_values(&[]).unwrap());
        o.max_trips = 3;
        let r = arrayflow::verify::verify(&p, &[], &o, 5)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            r.violations.is_empty(),
            "{}: {}",
            path.display(),
            r.violations[0]
        );
        reads += r.reads;
    }
    assert!(reads > 1000);
}
