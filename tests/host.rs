//! The door for embedders (`arrayflow::Host`, `Analysis`): files in, plain
//! answers out, the same answers the command line gives, and cancellation
//! of what an edit makes stale.

use arrayflow::{Host, Options};
use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow");

const SCAN: &str = "param N = 4;\nreal A[0..N];\nfor i = 1 to N do\n  S: A[i] = A[i - 1];\nend\n";
const COPY: &str =
    "param N = 4;\nreal A[1..N];\nreal B[1..N];\nfor i = 1 to N do\n  S: B[i] = A[i];\nend\n";

fn cli(args: &[&str]) -> String {
    let o = Command::new(BIN)
        .args(args)
        .output()
        .expect("run arrayflow");
    String::from_utf8(o.stdout).expect("utf-8")
}

#[test]
fn loops_say_which_are_parallel() {
    let mut host = Host::new(Options::default());
    let scan = host.set_file("scan.loop", SCAN.to_string());
    let copy = host.set_file("copy.loop", COPY.to_string());
    let a = host.analysis();
    let scan_loops = a.loops(scan).unwrap();
    assert_eq!(scan_loops.len(), 1);
    assert_eq!(scan_loops[0].counter, "i");
    assert!(
        !scan_loops[0].parallel,
        "S reads A[i - 1], written one iteration before"
    );
    assert!(
        !scan_loops[0].dependences.is_empty(),
        "the carried dependence is described"
    );
    assert_eq!(&SCAN[scan_loops[0].span.start as usize..][..3], "for");
    let copy_loops = a.loops(copy).unwrap();
    assert!(
        copy_loops[0].parallel,
        "every iteration writes its own B[i]"
    );
    assert!(copy_loops[0].dependences.is_empty());
}

/// A file id belongs to its host: another host's id, or one removed,
/// answers `NoSuchFile` (never another file's answer, never a panic);
/// paths are looked up; a removed path opens as a new file.
#[test]
fn file_ids_are_checked_against_their_host() {
    use arrayflow::Cancelled;
    let mut one = Host::new(Options::default());
    let mut two = Host::new(Options::default());
    let scan = one.set_file("scan.loop", SCAN.to_string());
    let copy = two.set_file("copy.loop", COPY.to_string());
    // Both are their host's first file, with the same index.
    assert_eq!(scan.index(), copy.index());
    let a = one.analysis();
    assert_eq!(a.loops(copy), Err(Cancelled::NoSuchFile));
    assert_eq!(a.path(copy), None);
    assert_eq!(a.path(scan), Some("scan.loop"));
    drop(a);
    assert_eq!(
        one.set_text(copy, COPY.to_string()),
        Err(Cancelled::NoSuchFile)
    );
    assert_eq!(one.file("scan.loop"), Some(scan));
    assert_eq!(one.file("copy.loop"), None);
    assert!(one.remove_file(scan));
    assert!(!one.remove_file(scan), "removed once");
    assert_eq!(one.file("scan.loop"), None);
    assert_eq!(one.analysis().text(scan), Err(Cancelled::NoSuchFile));
    let again = one.set_file("scan.loop", COPY.to_string());
    assert_ne!(again, scan);
    assert!(one.analysis().loops(again).unwrap()[0].parallel);
    assert!(format!("{one:?}").contains("scan.loop"));
    assert!(format!("{:?}", Options::default()).contains("max_instances: 50000000"));
}

/// `Host::apply` makes a batch of changes at once: files opened and
/// replaced, one removed, options set; answers reflect all of them.
#[test]
fn a_batch_of_changes_is_one_edit() {
    use arrayflow::{Cancelled, Change};
    let mut host = Host::new(Options::default());
    let old = host.set_file("old.loop", SCAN.to_string());
    let opened = host.apply(vec![
        Change::File {
            path: "scan.loop".into(),
            text: SCAN.into(),
        },
        Change::File {
            path: "copy.loop".into(),
            text: SCAN.into(),
        },
        Change::File {
            path: "copy.loop".into(),
            text: COPY.into(),
        },
        Change::Remove("old.loop".into()),
        Change::Options(Options {
            max_trips: 7,
            ..Options::default()
        }),
    ]);
    assert_eq!(opened.len(), 3);
    assert_eq!(opened[1], opened[2], "one path, one file");
    let a = host.analysis();
    assert!(!a.loops(opened[0]).unwrap()[0].parallel);
    assert!(a.loops(opened[1]).unwrap()[0].parallel);
    assert_eq!(a.loops(old), Err(Cancelled::NoSuchFile));
}

#[test]
fn an_edit_replaces_the_text_and_keeps_the_id() {
    let mut host = Host::new(Options::default());
    let f = host.set_file("p.loop", SCAN.to_string());
    assert!(!host.analysis().loops(f).unwrap()[0].parallel);
    let g = host.set_file("p.loop", COPY.to_string());
    assert_eq!(f, g);
    let a = host.analysis();
    assert_eq!(a.text(f).unwrap(), COPY);
    assert!(a.loops(f).unwrap()[0].parallel);
}

#[test]
fn errors_point_at_the_source_and_render_as_the_cli_does() {
    let mut host = Host::new(Options::default());
    let bad = "param N = 4;\nreal A[1..N];\nfor i = 1 to N do\n  S: A[i] = B[i];\nend\n";
    let f = host.set_file("bad.loop", bad.to_string());
    let a = host.analysis();
    let diags = a.diagnostics(f).unwrap();
    assert!(!diags.is_empty(), "B is not declared");
    let rendered = a.render(f, &diags).unwrap();
    assert!(rendered.contains("bad.loop:4"), "{rendered}");
    assert!(a.program(f).unwrap().is_none());
    assert!(a.expansion(f).unwrap().is_err());
    // The command line's check says the same first line.
    let dir = std::env::temp_dir().join(format!("arrayflow-host-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.loop");
    std::fs::write(&path, bad).unwrap();
    let o = Command::new(BIN)
        .args(["check", path.to_str().unwrap()])
        .output()
        .unwrap();
    let cli_first = String::from_utf8_lossy(&o.stderr)
        .lines()
        .next()
        .map(str::to_string);
    assert_eq!(rendered.lines().next().map(str::to_string), cli_first);
}

#[test]
fn expansion_is_the_code_expand_emits() {
    let path = "fixtures/papers/mse-example2.loop";
    let mut host = Host::new(Options::default());
    let f = host.set_file(path, std::fs::read_to_string(path).unwrap());
    let code = host.analysis().expansion(f).unwrap().expect("expanded");
    assert_eq!(code, cli(&["expand", path, "--emit", "code"]));
    // As edits: made to the text, they give that code; lines that stay
    // (the declarations of parameters) are in no edit.
    let text = std::fs::read_to_string(path).unwrap();
    let change = host
        .analysis()
        .expansion_change(f)
        .unwrap()
        .expect("expanded");
    assert_eq!(change.file, f);
    assert_eq!(change.apply(&text), code);
    let kept = text.find("param ").unwrap() as u32;
    assert!(
        (change.edits.iter()).all(|e| !e.range.contains(&kept)),
        "{change:?}"
    );
    let sorted = change
        .edits
        .windows(2)
        .all(|w| w[0].range.end < w[1].range.start);
    assert!(sorted, "{change:?}");
}

/// Line edits between two texts, worked out by hand: one changed line in
/// the middle, one added at the end, and the texts without a last newline.
#[test]
fn a_source_change_edits_only_the_lines_that_differ() {
    use arrayflow::{SourceChange, TextEdit};
    let mut host = Host::new(Options::default());
    let f = host.set_file("p.loop", SCAN.to_string());
    let old = "a\nb\nc\n";
    let change = SourceChange::between(f, old, "a\nB\nc\nd\n");
    let want = vec![
        TextEdit {
            range: 2..4,
            text: "B\n".into(),
        },
        TextEdit {
            range: 6..6,
            text: "d\n".into(),
        },
    ];
    assert_eq!(change.edits, want);
    assert_eq!(change.apply(old), "a\nB\nc\nd\n");
    let change = SourceChange::between(f, "a\nb", "a\nc");
    assert_eq!(change.edits.len(), 1);
    assert_eq!(change.apply("a\nb"), "a\nc");
    assert!(SourceChange::between(f, old, old).edits.is_empty());
}

#[test]
fn privatization_and_regions_answer_as_the_commands_do() {
    let path = "fixtures/papers/mse-example2.loop";
    let mut host = Host::new(Options::default());
    let f = host.set_file(path, std::fs::read_to_string(path).unwrap());
    let a = host.analysis();
    let code = a.privatization(f).unwrap().expect("privatized");
    assert_eq!(code, cli(&["privatize", path, "--emit", "code"]));
    let regions = a.regions(f).unwrap().expect("regions");
    assert_eq!(regions, cli(&["regions", path]));
}

#[test]
fn hover_and_sources_at_a_read() {
    let mut host = Host::new(Options::default());
    let f = host.set_file("scan.loop", SCAN.to_string());
    let a = host.analysis();
    let at = SCAN.find("A[i - 1]").unwrap() as u32;
    let (span, text) = a.hover(f, at).unwrap().expect("a hover at the read");
    assert!(span.start <= at && at < span.end);
    assert!(text.contains('S'), "the source names S: {text}");
    let sources = a.sources(f, at).unwrap();
    assert!(
        sources
            .iter()
            .any(|s| SCAN[s.start as usize..].starts_with("S:")
                || SCAN[s.start as usize..].starts_with("A[i] =")),
        "{sources:?}"
    );
}

/// A snapshot still in use when the host edits sees `Cancelled`, and the
/// edit goes through once the snapshot is dropped.
#[test]
fn an_edit_cancels_older_snapshots() {
    let mut host = Host::new(Options::default());
    let f = host.set_file("p.loop", SCAN.to_string());
    let old = host.analysis();
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let asker = std::thread::spawn(move || {
        wait.recv().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if old.diagnostics(f).is_err() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        false
    });
    go.send(()).unwrap();
    host.set_file("p.loop", COPY.to_string());
    assert!(
        asker.join().unwrap(),
        "the old snapshot was never cancelled"
    );
    assert!(host.analysis().loops(f).unwrap()[0].parallel);
}

/// A snapshot's canceller stops the question running on it
/// (`Cancelled::Request`); the stop is used up by that question, and other
/// snapshots go on.
#[test]
fn a_canceller_stops_its_snapshot_only() {
    use arrayflow::Cancelled;
    let mut host = Host::new(Options::default());
    let f = host.set_file("p.loop", SCAN.to_string());
    let a = host.analysis();
    let other = host.analysis();
    a.canceller().cancel();
    assert_eq!(a.loops(f), Err(Cancelled::Request));
    assert!(a.loops(f).is_ok(), "the next question runs");
    assert!(other.loops(f).is_ok());
}

/// What the language server shows beside the code: the outline in text
/// order, one lens per loop at its header, the expansion summary per
/// kernel, and the privatization remark on Maydan's Figure 13.
#[test]
fn outline_lenses_summary_and_privatization_remarks() {
    use arrayflow::SymbolKind;
    let mut host = Host::new(Options::default());
    let f = host.set_file("scan.loop", SCAN.to_string());
    let fig13 = "fixtures/papers/maydan-3.8-fig13-subst.loop";
    let g = host.set_file(fig13, std::fs::read_to_string(fig13).unwrap());
    let a = host.analysis();
    let symbols = a.symbols(f).unwrap();
    let named: Vec<(&str, SymbolKind)> = (symbols.iter())
        .map(|s| (s.name.as_str(), s.kind))
        .collect();
    assert_eq!(
        named,
        [
            ("N", SymbolKind::Parameter),
            ("A", SymbolKind::Array),
            ("S", SymbolKind::Statement)
        ]
    );
    let loops = a.loops(f).unwrap();
    let lenses = a.code_lenses(f).unwrap();
    assert_eq!(
        lenses.iter().map(|l| l.0).collect::<Vec<_>>(),
        loops.iter().map(|l| l.span).collect::<Vec<_>>()
    );
    let summary = a.expansion_summary(f).unwrap();
    assert!(
        summary.starts_with("== kernel 1, from statement S\n"),
        "{summary}"
    );
    assert!(a.privatization_remarks(f).unwrap().is_empty());
    let remarks = a.privatization_remarks(g).unwrap();
    assert_eq!(remarks.len(), 1, "{remarks:?}");
    assert!(
        remarks[0]
            .message
            .starts_with("loop `j` is parallel once `work` is private"),
        "{remarks:?}"
    );
}

/// A matrix product big enough that its expansion takes seconds.
fn product(n: i64) -> String {
    format!(
        "param N = {n};\nreal C[0..N - 1, 0..N - 1];\nreal A[0..N - 1, 0..N - 1];\n\
         real B[0..N - 1, 0..N - 1];\nfor i = 0 to N - 1 do\n  for j = 0 to N - 1 do\n    \
         S: C[i, j] = 0;\n    for k = 0 to N - 1 do\n      T: C[i, j] += A[i, k] * B[k, j];\n    \
         end\n  end\nend\n"
    )
}

/// Starts `ask` on another thread and returns once it is under way (with
/// a little time to get into the engines).
fn asked<T: Send + 'static>(
    ask: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<(T, Duration)> {
    let (started, wait) = std::sync::mpsc::channel();
    let asker = std::thread::spawn(move || {
        started.send(()).unwrap();
        let t = Instant::now();
        let answer = ask();
        (answer, t.elapsed())
    });
    wait.recv().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    asker
}

/// An edit while a long question runs stops the question inside the
/// engines (σ, the classes, the scans of the loops): it returns
/// `Cancelled::Edit` instead of finishing, which it would otherwise do
/// before salsa lets the edit through.
#[test]
fn an_edit_stops_a_long_question_inside_the_engines() {
    use arrayflow::Cancelled;
    let mut host = Host::new(Options::default());
    let f = host.set_file("mm.loop", product(90));
    let a = host.analysis();
    let asker = asked(move || a.expansion_summary(f).map(|s| s.len()));
    let t = Instant::now();
    host.set_text(f, product(4)).unwrap();
    let waited = t.elapsed();
    let (answer, ran) = asker.join().unwrap();
    eprintln!("the edit waited {waited:?}; the question ran {ran:?}");
    assert_eq!(answer, Err(Cancelled::Edit), "ran {ran:?}");
    assert!(host.analysis().expansion_summary(f).is_ok());
}

/// A canceller used while a long question runs stops it the same way
/// (`Cancelled::Request`), and the next question on the snapshot runs.
#[test]
fn a_canceller_stops_a_long_question_inside_the_engines() {
    use arrayflow::Cancelled;
    let mut host = Host::new(Options::default());
    let f = host.set_file("mm.loop", product(90));
    let a = host.analysis();
    let canceller = a.canceller();
    let asker = asked(move || {
        let answer = a.expansion_summary(f).map(|s| s.len());
        (answer, a.text(f).is_ok())
    });
    let t = Instant::now();
    canceller.cancel();
    let ((answer, next), ran) = asker.join().unwrap();
    eprintln!(
        "stopped {:?} after the cancel; the question ran {ran:?}",
        t.elapsed()
    );
    assert_eq!(answer, Err(Cancelled::Request), "ran {ran:?}");
    assert!(next, "the stop is used up: the next question runs");
}

/// A C row reversal through a scratch row, with the matrix stored in one
/// dimension: `N` multiplies `i`, so the program assumes `N == 8`. At that
/// value rows are disjoint and `t` is written before it is read in each
/// iteration of `i`, so privatizing `t` makes loop `i` parallel, worked out
/// by hand. Every verdict the editor shows says what it assumes, as the
/// command's report and header do.
#[test]
fn editor_verdicts_say_what_they_assume() {
    const ROWS: &str = "#define N 8\n\
        double x[N * N], t[N];\n\
        void f(void) {\n\
        \x20 for (int i = 0; i < N; i++) {\n\
        \x20   for (int j = 0; j < N; j++) t[j] = x[i * N + j];\n\
        \x20   for (int j = 0; j < N; j++) x[i * N + j] = t[N - 1 - j];\n\
        \x20 }\n\
        }\n";
    let assumes = "assumes `N == 8`: the macro multiplies a counter";
    let mut host = Host::new(Options::default());
    let f = host.set_file("rows.c", ROWS.to_string());
    let a = host.analysis();
    let remarks = a.privatization_remarks(f).unwrap();
    assert_eq!(remarks.len(), 1, "{remarks:?}");
    assert!(
        remarks[0]
            .message
            .starts_with("loop `i` is parallel once `t` is private")
            && remarks[0].message.contains(assumes),
        "{remarks:?}"
    );
    let lenses = a.code_lenses(f).unwrap();
    assert_eq!(lenses.len(), 3, "{lenses:?}");
    assert!(
        lenses.iter().all(|(_, l)| l.contains(assumes)),
        "{lenses:?}"
    );
    let code = a.privatization(f).unwrap().unwrap();
    assert!(code.contains(&format!("\n// {assumes}")), "{code}");
    assert!(code.contains("#pragma omp parallel for"), "{code}");
    // The same file as `.loop` text assumes what the user wrote: nothing
    // is added.
    let g = host.set_file("scan.loop", SCAN.to_string());
    let a = host.analysis();
    assert!(a
        .code_lenses(g)
        .unwrap()
        .iter()
        .all(|(_, l)| !l.contains("assumes")));
}

/// Outside static control, the editor's privatization remark is proved
/// for every parameter value where the possible sources back it, as the
/// command's report is: `x`, set on both branches of an `if`/`else` and
/// then read, is private to each trip of loop `i` (worked out by hand).
#[test]
fn a_remark_outside_static_control_can_be_proved() {
    let path = "fixtures/c/real/select_temp.c";
    let mut host = Host::new(Options::default());
    let f = host.set_file(path, std::fs::read_to_string(path).unwrap());
    let remarks = host.analysis().privatization_remarks(f).unwrap();
    assert_eq!(remarks.len(), 1, "{remarks:?}");
    assert!(
        remarks[0]
            .message
            .starts_with("loop `i` is parallel once `x` is private")
            && remarks[0].message.ends_with(" for every parameter value"),
        "{remarks:?}"
    );
}
