//! The language server's privatization remark and code action
//! (docs/editors.md): on Maydan's Figure 13 the remark sits on loop `j`
//! as information (not proved for every size, so no action); on a static
//! control C loop it is a hint whose action rewrites the document into what
//! `arrayflow privatize --emit code` prints; an edit that leaves the kernel
//! alone keeps the remark without running the kernel's privatization query
//! again.

#[path = "support/lsp_client.rs"]
mod lsp_client;

use arrayflow::dataflow::Config;
use arrayflow::db::{self, Database};
use lsp_client::Client;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow");
const FIG13: &str = "fixtures/papers/maydan-3.8-fig13-subst.loop";
/// Worked out from the thesis (Figure 13: every read of `work` in iteration
/// j is written in iteration j, nothing after the loop reads it) at the
/// fixture's sizes and the server's default trip bound.
const REMARK: &str = "loop `j` is parallel once `work` is private (copy-in: none; \
                      finalization: none) at N1=7, N2P=4, max-trips 4 (not proved for others)";

fn path(p: &str) -> String {
    format!("{}/{p}", env!("CARGO_MANIFEST_DIR"))
}

/// The line (from 0) of the first line of `text` that starts with `start`.
fn line_of(text: &str, start: &str) -> usize {
    text.lines()
        .position(|l| l.starts_with(start))
        .expect(start)
}

fn remark(diags: &[Value]) -> Option<&Value> {
    diags.iter().find(|d| d["message"] == REMARK)
}

#[test]
fn the_remark_on_figure_13_is_information_and_offers_no_action() {
    let text = std::fs::read_to_string(path(FIG13)).unwrap();
    let u = "file:///work/fig13.loop";
    let mut c = Client::start(BIN);
    c.open(u, &text);
    let diags = c.diagnostics(u, 1);
    let r = remark(&diags).unwrap_or_else(|| panic!("{diags:#?}"));
    let j = line_of(&text, "for j = 1 to N1 step 2 do");
    assert_eq!(
        r["range"]["start"],
        json!({"line": j, "character": 0}),
        "{r}"
    );
    // Exact σ cannot decide this program (a source modulo a stride): the
    // verdict holds at the analysed sizes only, so it is information, not
    // a hint to act on.
    assert_eq!(r["severity"], json!(3), "information: {r}");
    // Only loop j gains: the inner loops are parallel as they are.
    let others: Vec<&Value> = diags
        .iter()
        .filter(|d| {
            d["message"]
                .as_str()
                .unwrap_or("")
                .contains(" is private (")
        })
        .collect();
    assert_eq!(others.len(), 1, "{others:#?}");

    // No action rewrites the loop on a verdict that is not proved.
    let at = json!({"line": j, "character": 2});
    let a = c.call(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": {"start": at, "end": at},
               "context": {"diagnostics": []}}),
    );
    let titles: Vec<&str> = (a["result"].as_array().into_iter().flatten())
        .map(|x| x["title"].as_str().unwrap_or(""))
        .collect();
    assert!(!titles.contains(&"Apply privatization"), "{titles:?}");

    // An unrelated edit (a comment line on top) keeps the remark, one
    // line lower.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 2},
               "contentChanges": [{"range": {"start": {"line": 0, "character": 0},
                                             "end": {"line": 0, "character": 0}},
                                   "text": "# edited\n"}]}),
    );
    let diags = c.diagnostics(u, 2);
    let r = remark(&diags).unwrap_or_else(|| panic!("{diags:#?}"));
    assert_eq!(r["range"]["start"], json!({"line": j + 1, "character": 0}));
    c.shutdown();
}

/// On a C file the hint sits on the C loop, and the action gives C with
/// OpenMP's clauses (docs/expansion.md §9.3: `w` is written whole by every
/// iteration before it is read, so `lastprivate` alone).
#[test]
fn the_remark_and_its_action_on_a_c_file() {
    let file = "fixtures/c/privatize/rowtemp.c";
    let text = std::fs::read_to_string(path(file)).unwrap();
    let u = "file:///work/rowtemp.c";
    let mut c = Client::start(BIN);
    c.open(u, &text);
    let diags = c.diagnostics(u, 1);
    // Static control: exact σ decides, for every size.
    let want = "loop `j` is parallel once `w` is private (copy-in: none; finalization: none) \
                for every parameter value";
    let r = diags
        .iter()
        .find(|d| d["message"] == want)
        .unwrap_or_else(|| panic!("{diags:#?}"));
    let j = line_of(&text, "  for (int j = 0; j < N; j++) {");
    assert_eq!(r["range"]["start"]["line"], json!(j), "{r}");
    let at = r["range"]["start"].clone();
    let a = c.call(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": {"start": at, "end": at},
               "context": {"diagnostics": []}}),
    );
    let apply = a["result"]
        .as_array()
        .and_then(|v| v.iter().find(|x| x["title"] == "Apply privatization"))
        .unwrap_or_else(|| panic!("{a}"))
        .clone();
    let resolved = c.call("codeAction/resolve", apply);
    let edits = &resolved["result"]["edit"]["documentChanges"][0]["edits"];
    let code = lsp_client::apply_edits(&text, edits);
    assert!(
        code.lines().any(|l| l
            .trim()
            .starts_with("#pragma omp parallel for lastprivate(w_p) if(")),
        "{code}"
    );
    // The document it gives is the program the command prints.
    let out = std::process::Command::new(BIN)
        .args(["privatize", "--emit", "code", &path(file)])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(code, String::from_utf8(out.stdout).unwrap());
    c.shutdown();
}

/// The privatization query runs per kernel: editing one kernel of two
/// reruns it for that kernel only, and a comment edit for neither.
#[test]
fn an_edit_elsewhere_does_not_recompute_the_privatization() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = log.clone();
    let mut db = Database::with_events(
        Config::default(),
        Box::new(move |event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind {
                let name = format!("{database_key:?}");
                if name.starts_with("kernel_privatization") {
                    sink.lock().unwrap().push(name);
                }
            }
        }),
    );
    let two = |rhs: &str| {
        format!(
            "param N = 6;\nreal t;\nreal A[0..N];\nreal B[0..N];\n\
             for i = 0 to N do\n  S1: t = A[i] * 2;\n  S2: B[i] = t + 1;\nend\n\
             for k = 0 to N do\n  S3: t = B[k];\n  S4: A[k] = {rhs};\nend\n"
        )
    };
    let file = db.add_file("k.loop", two("t + 1"));
    let ran = |db: &Database| {
        let r: Vec<String> = db::remarks(db, file)
            .iter()
            .filter(|r| r.message.contains(" is private ("))
            .map(|r| r.message.clone())
            .collect();
        r
    };
    let first = ran(&db);
    // Both loops: `t` private, written before it is read in every
    // iteration (no copy-in), read by nothing after its loop in its kernel.
    assert_eq!(first.len(), 2, "{first:?}");
    assert!(
        first[0].starts_with(
            "loop `i` is parallel once `t` is private (copy-in: none; finalization: none)"
        ),
        "{first:?}"
    );
    assert_eq!(log.lock().unwrap().len(), 2);
    log.lock().unwrap().clear();
    db.set_text(file, format!("# a comment\n{}", two("t + 1")));
    assert_eq!(ran(&db), first);
    assert_eq!(log.lock().unwrap().len(), 0, "{:?}", log.lock().unwrap());
    db.set_text(file, two("t * 3"));
    assert_eq!(ran(&db).len(), 2);
    assert_eq!(log.lock().unwrap().len(), 1, "{:?}", log.lock().unwrap());
}
