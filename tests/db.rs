//! The incremental database: σ put together from kernels equals σ of the
//! whole program, and an edit inside one kernel re-runs only that kernel's
//! analyses (counted through salsa's event callback).

use arrayflow::dataflow::{self, render, Config};
use arrayflow::db::{self, resolve, Database};
use arrayflow::gen::{generate, GenOptions, Size};
use std::sync::{Arc, Mutex};

mod support;

/// σ of the file through the database and through `dataflow::analyze`, as
/// JSON (which lists every read and its sorted sources).
fn both(text: &str, config: &Config) -> Option<(String, String)> {
    let db = Database::new(config.clone());
    let file = db.add_file("t.loop", text);
    let program = db::parse(&db, file).program.clone()?;
    let whole = dataflow::analyze(&program, config).ok()?;
    let mut a = Vec::new();
    render::json(&program, &whole, &mut a).unwrap();
    let merged = match resolve::file_flow(&db, file) {
        Ok(f) => f,
        Err(_) => panic!("the kernels failed where the whole program did not:\n{text}"),
    };
    let mut b = Vec::new();
    render::json(&program, &merged, &mut b).unwrap();
    Some((String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap()))
}

#[test]
fn kernels_give_the_sigma_of_the_whole_program_on_paper_fixtures() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/papers");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        if let Some((a, b)) = both(&text, &Config::default()) {
            assert_eq!(a, b, "{}", path.display());
            checked += 1;
        }
    }
    assert!(checked > 40, "only {checked} fixtures analysed");
}

#[test]
fn kernels_give_the_sigma_of_the_whole_program_on_generated_programs() {
    let mut multi = 0;
    for seed in 0..support::cases(200) {
        for options in [
            GenOptions::all(Size::Medium),
            GenOptions::static_control(Size::Small),
        ] {
            let program = generate(seed, &options);
            multi += usize::from(program.body.len() > 1);
            let text = arrayflow::print::program(&program);
            for max_trips in [0, 3] {
                let config = Config {
                    max_trips,
                    max_instances: 200_000,
                    ..Config::default()
                };
                if let Some((a, b)) = both(&text, &config) {
                    assert_eq!(a, b, "seed {seed}, max-trips {max_trips}:\n{text}");
                }
            }
        }
    }
    assert!(multi > 0, "no program had several kernels");
}

/// A handwritten case: values flow across kernels, through a kernel that
/// writes the array only under a condition, and past one that kills it.
#[test]
fn values_flow_across_kernels() {
    let text = "param N = 4;\nreal A[1..N];\nreal x;\n\
                for i = 1 to N do P: A[i] = i; end\n\
                for i = 1 to N do if ... then Q: A[i] = 0; end end\n\
                x = 1;\n\
                for i = 1 to N do R: use(A[i], x); end\n\
                for i = 2 to N do K: A[i] = 1; end\n\
                for i = 1 to N do U: use(A[i]); end\n";
    let (a, b) = both(text, &Config::default()).unwrap();
    assert_eq!(a, b);
    // R reads A[i] from P or Q; U reads A[1] from P or Q and A[2..] from K.
    assert!(b.contains("\"stmt\":\"R\",\"iter\":[1],\"access\":0,\"array\":\"A\",\"sources\":[{\"stmt\":\"P\",\"iter\":[1]},{\"stmt\":\"Q\",\"iter\":[1]}],\"initial\":false"), "{b}");
    assert!(b.contains("\"stmt\":\"U\",\"iter\":[2],\"access\":0,\"array\":\"A\",\"sources\":[{\"stmt\":\"K\",\"iter\":[2]}],\"initial\":false"), "{b}");
}

/// The names of the queries salsa executes, through the event callback.
use support::logging_db;

fn count(log: &[String], name: &str) -> usize {
    log.iter().filter(|n| *n == name).count()
}

fn kernel_file(n: usize, edited: Option<usize>) -> String {
    let mut s = String::from("param N = 6;\nreal A[0..N+1];\nreal B[0..N+1];\n");
    for k in 0..n {
        let rhs = if Some(k) == edited {
            "A[i-1] * 2 + 1"
        } else {
            "A[i-1] + 1"
        };
        s.push_str(&format!(
            "for i = 1 to N do\n  S{k}: A[i] = {rhs};\n  T{k}: B[i] = A[i] + B[i];\nend\n"
        ));
    }
    s
}

#[test]
fn an_edit_in_one_kernel_reruns_only_that_kernels_analyses() {
    let (mut db, log) = logging_db();
    let file = db.add_file("k.loop", kernel_file(10, None));
    let all = |db: &Database| {
        let d = db::analysis_diagnostics(db, file).len();
        let r = db::remarks(db, file).len();
        (d, r)
    };
    let first = all(&db);
    assert_eq!(first.0, 0);
    {
        let log = log.lock().unwrap();
        assert_eq!(count(&log, "kernel_flow"), 10, "{log:?}");
        assert_eq!(count(&log, "kernel_loops"), 10, "{log:?}");
        assert_eq!(count(&log, "kernel_deps"), 10, "{log:?}");
        assert_eq!(count(&log, "kernel_expansion"), 10, "{log:?}");
    }
    log.lock().unwrap().clear();
    // Change one statement of kernel 4: longer text, so every later
    // kernel moves.
    db.set_text(file, kernel_file(10, Some(4)));
    let second = all(&db);
    assert_eq!(second, first);
    let log = log.lock().unwrap().clone();
    assert_eq!(count(&log, "kernel_flow"), 1, "{log:?}");
    assert_eq!(count(&log, "kernel_loops"), 1, "{log:?}");
    assert_eq!(count(&log, "kernel_deps"), 1, "{log:?}");
    assert_eq!(count(&log, "kernel_expansion"), 1, "{log:?}");
    assert_eq!(count(&log, "kernel_remarks"), 1, "{log:?}");
    // The per-file steps run once each.
    for q in ["parse", "kernels", "analysis_diagnostics", "remarks"] {
        assert_eq!(count(&log, q), 1, "{q}: {log:?}");
    }
    // The remarks moved with the text: they point at the loops as they are now.
    let text = file.text(&db).clone();
    // Loop remarks point at the loops as they are now.
    for r in db::remarks(&db, file)
        .iter()
        .filter(|r| r.message.starts_with("loop"))
    {
        assert!(text[r.span.range()].starts_with("for i"), "{:?}", r);
    }
}

#[test]
fn an_edit_that_only_moves_a_kernel_keeps_its_results_but_not_its_positions() {
    let (mut db, log) = logging_db();
    let text = kernel_file(3, None);
    let file = db.add_file("k.loop", text.clone());
    let loops = |db: &Database| -> Vec<db::Remark> {
        db::remarks(db, file)
            .iter()
            .filter(|r| r.message.starts_with("loop"))
            .cloned()
            .collect()
    };
    let before = loops(&db);
    log.lock().unwrap().clear();
    let moved = text.replacen("real B[0..N+1];", "real B[0..N+1];\n\n# a comment\n", 1);
    db.set_text(file, moved.clone());
    let after = loops(&db);
    assert_eq!(count(&log.lock().unwrap(), "kernel_flow"), 0);
    assert_eq!(count(&log.lock().unwrap(), "kernel_remarks"), 0);
    assert_eq!(before.len(), after.len());
    for (a, b) in before.iter().zip(&after) {
        assert_eq!(a.message, b.message);
        assert_eq!(
            b.span.start as usize,
            a.span.start as usize + moved.len() - text.len()
        );
        assert!(moved[b.span.range()].starts_with("for i"));
    }
}

/// Every `.loop` fixture below `dir`, recursively.
fn loop_fixtures(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            loop_fixtures(&path, out);
        } else if path.extension().is_some_and(|e| e == "loop") {
            out.push(path);
        }
    }
}

/// The remarks put together from kernels are those of the plain
/// whole-file walk, on every fixture and after edits that move kernels
/// and add generated names before them.
#[test]
fn per_kernel_remarks_equal_the_whole_file_reference() {
    let mut paths = Vec::new();
    loop_fixtures(
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures")),
        &mut paths,
    );
    paths.sort();
    let (mut with_remarks, mut edited_with_remarks) = (0, 0);
    for path in &paths {
        let text = std::fs::read_to_string(path).unwrap();
        let mut db = Database::new(Config::default());
        let file = db.add_file("t.loop", text.clone());
        let whole = db::remark::whole_file(&db, file);
        assert_eq!(db::remarks(&db, file).to_vec(), whole, "{}", path.display());
        with_remarks += usize::from(!whole.is_empty());
        // An unlabelled statement before the first loop: every later
        // generated name and position changes.
        if let Some(at) = text.find("\nfor ") {
            let mut edited = text.clone();
            edited.insert_str(at + 1, "for zz = 1 to 2 do B9[zz] = 1; end\n");
            edited.insert_str(0, "real B9[1..2];\n");
            db.set_text(file, edited);
            let whole = db::remark::whole_file(&db, file);
            assert_eq!(
                db::remarks(&db, file).to_vec(),
                whole,
                "{} edited",
                path.display()
            );
            edited_with_remarks += usize::from(!whole.is_empty());
        }
    }
    assert!(
        with_remarks > 100,
        "only {with_remarks} fixtures have remarks"
    );
    assert!(
        edited_with_remarks > 100,
        "only {edited_with_remarks} edited"
    );
}

/// Generated names are the file's, not the kernel's: the second kernel's
/// `while` is `_W2` (the `if` before it took condition 1).
#[test]
fn remarks_name_generated_loops_as_the_file_does() {
    let text = "param N = 8;\nreal a[0..N];\nreal t;\n\
                for i = 0 to N do\n  if i <= 4 then\n    a[i] = 0;\n  end\nend\n\
                while ... do\n  R: t = a[3];\nend\n";
    let db = Database::new(Config::default());
    let file = db.add_file("t.loop", text);
    let remarks: Vec<String> = (db::remarks(&db, file).iter())
        .filter(|r| r.message.contains("_W"))
        .map(|r| r.message.clone())
        .collect();
    assert!(remarks.len() >= 2, "{remarks:?}");
    assert!(remarks.iter().all(|m| m.contains("_W2")), "{remarks:?}");
    assert!(
        remarks.iter().any(|m| m.contains("once `t` is private")),
        "{remarks:?}"
    );
}

#[test]
fn settings_changes_rerun_every_kernel() {
    let (mut db, log) = logging_db();
    let file = db.add_file("k.loop", kernel_file(4, None));
    db::remarks(&db, file);
    log.lock().unwrap().clear();
    db.configure(Config {
        params: vec![("N".to_string(), 3)],
        ..Config::default()
    });
    let lenses = db::ide::lenses(&db, file);
    assert_eq!(count(&log.lock().unwrap(), "kernel_flow"), 4);
    assert_eq!(lenses.len(), 4);
    assert!(lenses.iter().all(|(_, l)| l.contains("N=3")), "{lenses:?}");
}

/// Salsa's cancellation: setting a new text while another handle computes
/// on the old one unwinds that computation (the language server answers
/// such requests with `ContentModified`).
#[test]
fn a_new_text_cancels_a_computation_on_the_old_one() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc::channel;
    let (started_tx, started_rx) = channel::<()>();
    let started_tx = Mutex::new(Some(started_tx));
    let executed = Arc::new(AtomicUsize::new(0));
    let seen = executed.clone();
    let mut db = Database::with_events(
        Config::default(),
        Box::new(move |event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind {
                if format!("{database_key:?}").starts_with("kernel_flow") {
                    match seen.fetch_add(1, Ordering::SeqCst) {
                        0 => {
                            if let Some(tx) = started_tx.lock().unwrap().take() {
                                let _ = tx.send(());
                            }
                        }
                        // Give the writer time to raise the flag.
                        1 => std::thread::sleep(std::time::Duration::from_millis(200)),
                        _ => {}
                    }
                }
            }
        }),
    );
    let file = db.add_file("k.loop", kernel_file(20, None));
    let snapshot = db.clone();
    let worker =
        std::thread::spawn(move || salsa::Cancelled::catch(|| db::remarks(&snapshot, file).len()));
    started_rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the analysis started");
    db.set_text(file, kernel_file(20, Some(3)));
    let outcome = worker.join().expect("no panic but cancellation");
    assert!(
        matches!(outcome, Err(salsa::Cancelled::PendingWrite)),
        "{outcome:?}"
    );
    assert!(executed.load(Ordering::SeqCst) < 20);
    // The database answers on the new text.
    assert!(!db::remarks(&db, file).is_empty());
}

/// An analysis error in a later kernel names the condition as the file
/// does and points at it.
#[test]
fn kernel_errors_use_the_files_names_and_positions() {
    let text = "param N = 5;\nreal A[1..N];\n\
                for i = 1 to N do if i > 2 then A[i] = 1; end end\n\
                for i = 1 to N do if 10 / (N - 5) > i then A[i] = 2; end end\n\
                use(A[1]);\n";
    let db = Database::default();
    let file = db.add_file("e.loop", text);
    let diags = db::analysis_diagnostics(&db, file).clone();
    assert_eq!(diags.len(), 1, "{diags:?}");
    let d = &diags[0];
    assert_eq!(d.code, "E0303");
    assert!(d.message.contains("condition `_C2`"), "{}", d.message);
    let span = d.labels[0].span;
    assert!(
        text[span.range()].starts_with("if 10 / (N - 5) > i"),
        "{:?}",
        &text[span.range()]
    );
}

/// The hover text at each of `offsets`.
fn hovers_at(db: &Database, file: arrayflow::db::SourceFile, offsets: &[u32]) -> Vec<String> {
    offsets
        .iter()
        .map(|&o| db::ide::hover(db, file, o).expect("a hover").1)
        .collect()
}

#[test]
fn read_hovers_analyse_each_statement_once_per_edit() {
    let (mut db, log) = logging_db();
    let text = kernel_file(3, None);
    let file = db.add_file("k.loop", text.clone());
    // Every read `A[i-1]` of the file.
    let offsets: Vec<u32> = text
        .match_indices("A[i-1]")
        .map(|(k, _)| k as u32)
        .collect();
    assert_eq!(offsets.len(), 3);
    let hovers = |db: &Database| hovers_at(db, file, &offsets);
    let first = hovers(&db);
    for (k, h) in first.iter().enumerate() {
        // Hand-checked: kernel k's A[i-1] was last written by its own S_k
        // one iteration before; A[0] by nothing.
        let line = format!("every parameter value:\n```\nS{k}(i - 1) if i >= 2, else initial");
        assert!(h.contains(&line), "{h}");
    }
    // One analysis per statement hovered (the three reads are in three
    // statements), none again for the same hovers, three after an edit.
    assert_eq!(count(&log.lock().unwrap(), "symbolic_hovers"), 3);
    assert_eq!(hovers(&db), first);
    assert_eq!(count(&log.lock().unwrap(), "symbolic_hovers"), 3);
    let edited = kernel_file(3, Some(1));
    let moved: Vec<u32> = edited
        .match_indices("A[i-1]")
        .map(|(k, _)| k as u32)
        .collect();
    db.set_text(file, edited);
    hovers_at(&db, file, &moved);
    assert_eq!(count(&log.lock().unwrap(), "symbolic_hovers"), 6);
}

#[test]
fn call_hovers_share_one_front_end_per_edit() {
    let (mut db, log) = logging_db();
    let path = format!("{}/fixtures/procs/rows.loop", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).expect("the fixture");
    let file = db.add_file("rows.loop", text.clone());
    let at = |needle: &str| text.find(needle).expect("in the fixture") as u32 + 5;
    let offsets = [at("L: call scale"), at("F: call fill"), at("L: call scale")];
    let hovers = |db: &Database| hovers_at(db, file, &offsets);
    let first = hovers(&db);
    // Hand-checked as in tests/lsp_procs.rs: scale's kill of row i of B.
    assert!(
        first[0].contains("kill  B^{1}_{M} + M*i - M + i - 1 if M >= 0  (exact)"),
        "{}",
        first[0]
    );
    assert!(first[1].contains("call F: fill") && first[1].contains("approximate"));
    assert_eq!(count(&log.lock().unwrap(), "call_sites"), 1);
    assert_eq!(hovers(&db), first);
    assert_eq!(count(&log.lock().unwrap(), "call_sites"), 1);
    // An edit after the calls: their offsets stay.
    db.set_text(file, format!("{text}# edited\n"));
    assert_eq!(hovers(&db), first);
    assert_eq!(count(&log.lock().unwrap(), "call_sites"), 2);
}

/// What the language server computes after an edit: the diagnostics (the
/// front end's, the analysis errors, the remarks) and a hover on the edited
/// read, as `(query, executions)` sorted, after changing one statement of
/// kernel 4 of a file of `n` kernels.
fn edit_then_hover(n: usize) -> Vec<(String, usize)> {
    let (mut db, log) = logging_db();
    let file = db.add_file("k.loop", kernel_file(n, None));
    let served = |db: &Database| {
        let text = file.text(db).clone();
        let read = text.find("S4: A[i] = ").expect("S4") + "S4: A[i] = ".len();
        let diags = db::analysis_diagnostics(db, file).len() + db::remarks(db, file).len();
        let hover = db::ide::hover(db, file, read as u32 + 1)
            .expect("a hover")
            .1;
        (diags, hover)
    };
    let (_, before) = served(&db);
    log.lock().unwrap().clear();
    db.set_text(file, kernel_file(n, Some(4)));
    let (diags, after) = served(&db);
    assert!(diags > n, "a remark per loop at least: {diags}");
    // Hand-checked: S4's A[i-1] is its own write one iteration before; at
    // i = 1, A[0], which no statement writes.
    let line = "S4(i - 1) if i >= 2, else initial";
    assert!(before.contains(line) && after.contains(line), "{after}");
    let log = log.lock().unwrap();
    let mut counts: Vec<(String, usize)> = Vec::new();
    for q in log.iter() {
        match counts.iter_mut().find(|(n, _)| n == q) {
            Some((_, c)) => *c += 1,
            None => counts.push((q.clone(), 1)),
        }
    }
    counts.sort();
    counts
}

/// An edit re-runs the edited kernel's analyses and the per-file steps
/// once each, whatever the number of kernels: the queries executed after
/// an edit to a file of 40 kernels are those of a file of 10.
#[test]
fn an_edit_then_a_hover_reruns_what_the_edit_touched() {
    let small = edit_then_hover(10);
    let large = edit_then_hover(40);
    assert_eq!(small, large);
    let runs = |q: &str| large.iter().find(|(n, _)| n == q).map_or(0, |(_, c)| *c);
    for q in [
        "kernel_flow",
        "kernel_loops",
        "kernel_deps",
        "kernel_expansion",
        "kernel_privatization",
        "kernel_remarks",
    ] {
        assert_eq!(runs(q), 1, "{q}: {large:?}");
    }
    for q in [
        "parse",
        "kernels",
        "analysis_diagnostics",
        "remarks",
        "symbolic_hovers",
    ] {
        assert_eq!(runs(q), 1, "{q}: {large:?}");
    }
}
