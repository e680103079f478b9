//! scratch
use arrayflow::diagnostics::FileId;
use arrayflow::model::Program;
use arrayflow::storage::{affine, reschedule};

fn program(text: &str) -> Program {
    let (p, d) = arrayflow::lower::compile(text, FileId(0));
    p.unwrap_or_else(|| panic!("{d:?}"))
}

#[test]
fn scratch() {
    let p = program(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/papers/storage-figure1.loop"
        ))
        .unwrap(),
    );
    for s in [
        "{ R[i] -> [0]; S[i, j] -> [j] }",
        "[n] -> { R[i] -> [0, i]; S[i, j] -> [j, i] }",
        "{ R[i] -> [0, i, 0, 0]; S[i, j] -> [0, i, 1, j] }",
        "{ R[i] -> [i]; S[i, j] -> [i+j] }",
        "{ R[i] -> [-i]; S[i, j] -> [-i, j+1] }",
    ] {
        let a = affine::parse(&p, s).unwrap();
        match reschedule::scan(&p, &a) {
            Ok(r) => println!(
                "{s}\n{}\n{:?}",
                arrayflow::print::program(&r.program),
                r.iterations
            ),
            Err(e) => println!("{s}\nERR {}", e.message),
        }
    }
}
