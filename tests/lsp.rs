//! `arrayflow lsp` as a child process, spoken to over its pipes. Every wait
//! has a timeout, so a hung server fails the test instead of hanging CI.

#[path = "support/lsp_client.rs"]
mod lsp_client;

use lsp_client::{Client, WAIT};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow");

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/fixtures/papers/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn uri(name: &str) -> String {
    format!("file:///work/{name}")
}

/// The (line, character) of the `nth` occurrence of `needle` in `text`,
/// plus `skip` characters.
fn pos(text: &str, needle: &str, nth: usize, skip: usize) -> Value {
    let at = text.match_indices(needle).nth(nth).expect("needle").0 + skip;
    let line = text[..at].matches('\n').count();
    let col = at - text[..at].rfind('\n').map_or(0, |k| k + 1);
    json!({"line": line, "character": col})
}

/// Example 1 is being served: the hover on R's read of x names T.
fn assert_hover_on_r(c: &mut Client, uri: &str, text: &str) {
    let h = c.call(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": pos(text, "R: use(x)", 0, 7)}),
    );
    let value = h["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(value.contains("T[i]"), "{h}");
}

fn messages(diags: &[Value]) -> Vec<String> {
    diags
        .iter()
        .map(|d| d["message"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_session_on_example_1() {
    let text = fixture("mse-example1.loop");
    let u = uri("mse-example1.loop");
    let mut c = Client::start(BIN);
    c.open(&u, &text);
    let diags = c.diagnostics(&u, 1);
    let msgs = messages(&diags);
    // x is expanded along i: the paper's five classes at N=5.
    assert!(
        msgs.iter()
            .any(|m| m.starts_with("x: 5 classes of live writes over 1 written cells")),
        "{msgs:?}"
    );
    // Both loops reuse x; only the while loop carries its value from one
    // trip to the next.
    assert!(
        msgs.iter()
            .any(|m| m == "loop _W1 carries a flow dependence on x (S → S)"),
        "{msgs:?}"
    );
    assert!(
        msgs.iter()
            .any(|m| m == "loop i carries an anti dependence on x (S → T)"),
        "{msgs:?}"
    );
    assert!(
        msgs.iter().any(|m| m
            .starts_with("after expanding x, loop i is parallel (maximal static expansion at N=5")),
        "{msgs:?}"
    );
    assert!(
        diags.iter().all(|d| d["severity"] != json!(1)),
        "no errors: {msgs:?}"
    );

    // Hover on R's read of x: its sources are T and S, at N=5.
    let at = pos(&text, "R: use(x)", 0, 7);
    let h = c.call(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": at}),
    );
    let value = h["result"]["contents"]["value"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(value.contains("**R** reads `x`"), "{value}");
    assert!(value.contains("from T[i] or S[i, 0..3]"), "{value}");
    // And, for every N and trip count, the set (symbolic::fada).
    assert!(
        value.contains("T(i); S(i, _W1') where _W1' >= 0"),
        "{value}"
    );
    assert!(value.contains("N=5"), "{value}");

    // Definition: the statements T and S.
    let d = c.call(
        "textDocument/definition",
        json!({"textDocument": {"uri": u}, "position": at}),
    );
    let lines: Vec<i64> = d["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["range"]["start"]["line"].as_i64().unwrap())
        .collect();
    let t_line = pos(&text, "T: x", 0, 0)["line"].as_i64().unwrap();
    let s_line = pos(&text, "S: x", 0, 0)["line"].as_i64().unwrap();
    assert_eq!(lines, vec![t_line, s_line], "{d}");

    // Hover on T's write: R reads it.
    let w = c.call(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": pos(&text, "T: x", 0, 3)}),
    );
    let wv = w["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(
        wv.contains("**T** writes `x`")
            && wv.contains("R (access 0)")
            && wv.contains("S (access 0)"),
        "{wv}"
    );
    // Its expanded reference (Figure 3 of the paper).
    assert!(
        wv.contains("After maximal static expansion it writes `x_1[i]` (T)"),
        "{wv}"
    );

    // Code lenses on both loops.
    let lens = c.call("textDocument/codeLens", json!({"textDocument": {"uri": u}}));
    let titles: Vec<&str> = lens["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"]["title"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(titles.len(), 2, "{lens}");
    assert_eq!(
        titles,
        vec![
            "parallel: no → yes after expansion (maximal static expansion of x at N=5, max-trips 4; not proved for other sizes)",
            "parallel: no → no after expansion (values of x flow S → S, distance 1, at N=5, max-trips 4)",
        ]
    );

    // Two code actions: apply the expansion (resolved into an edit), and
    // the summary command.
    let actions = c.call(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": {"start": at, "end": at}, "context": {"diagnostics": []}}),
    );
    let apply = &actions["result"][0];
    assert_eq!(apply["title"], "Apply maximal static expansion");
    let resolved = c.call("codeAction/resolve", apply.clone());
    let change = &resolved["result"]["edit"]["documentChanges"][0];
    assert_eq!(change["textDocument"], json!({"uri": u, "version": 1}));
    // Edits of the lines that change, not one replacing the whole text:
    // the declaration `param N = 5;` stays.
    let edits = &change["edits"];
    let param = text.lines().position(|l| l.starts_with("param ")).unwrap() as u64;
    let line = |e: &Value, end: &str| e["range"][end]["line"].as_u64().unwrap();
    let covered = (edits.as_array().unwrap().iter())
        .any(|e| line(e, "start") <= param && param < line(e, "end"));
    assert!(!covered, "{resolved}");
    // The paper's Figure 3: x expanded along i, i parallel, x copied out
    // when the loop ran (at N = 0 x keeps its value).
    let code = lsp_client::apply_edits(&text, edits);
    let code = code.as_str();
    for line in [
        "real x_1[1..N];",
        "for i = 1 to N doall",
        "  T: x_1[i] = ...;",
        "    S: x_1[i] = f(x_1[i]);",
        "  R: use(x_1[i]);",
        "if [v] 1 <= N then",
        "  @copy copy_out: x = x_1[N];",
    ] {
        assert!(code.lines().any(|l| l == line), "{line}\n{code}");
    }
    let action = &actions["result"][1];
    assert_eq!(action["title"], "Show expansion summary");
    let summary = c.call("workspace/executeCommand", action["command"].clone());
    let s = summary["result"].as_str().unwrap_or("");
    // `arrayflow expand`'s text: x has 1 cell declared, expanded by class.
    assert!(
        s.starts_with("== kernel 1, from statement T\nmaximal static expansion at N=5"),
        "{s}"
    );
    assert!(s.contains("\nx: 1 cells declared, 1 written;"), "{s}");
    c.wait("the summary shown", |v| v["method"] == "window/showMessage");

    // Symbols: the parameter, the scalar, the three statements.
    let syms = c.call(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": u}}),
    );
    let names: Vec<&str> = syms["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["N", "x", "T", "S", "R"]);

    // An incremental edit: R also reads x + 1 … still sourced from T and S;
    // then an error.
    let r_at = pos(&text, "R: use(x)", 0, 8);
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 2},
               "contentChanges": [{"range": {"start": r_at, "end": r_at}, "text": ", y"}]}),
    );
    let diags = c.diagnostics(&u, 2);
    let msgs = messages(&diags);
    assert!(
        msgs.iter().any(|m| m.contains("`y` is not declared")),
        "{msgs:?}"
    );
    let err = diags.iter().find(|d| d["code"] == "E0101").unwrap();
    assert_eq!(err["range"]["start"]["line"], r_at["line"]);
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 3}, "contentChanges": [{"text": text}]}),
    );
    let diags = c.diagnostics(&u, 3);
    assert!(diags.iter().all(|d| d["severity"] != json!(1)));
    c.shutdown();
}

#[test]
fn robustness_errors_get_replies_and_the_server_goes_on() {
    let text = fixture("mse-example1.loop");
    let u = uri("a.loop");
    let log = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("lsp-robustness.log");
    let file = std::fs::File::create(&log).unwrap();
    let mut c = Client::start_logging(BIN, json!({}), file.into());
    c.open(&u, &text);
    c.diagnostics(&u, 1);

    // Malformed JSON: a parse error with a null id.
    c.send_raw(b"{\"jsonrpc\": \"2.0\", \"id\": 99, \"method\": ");
    let e = c.wait("the parse error", |v| v["error"]["code"] == json!(-32700));
    assert_eq!(e["id"], Value::Null);
    // A header line that is not UTF-8: an error reply, not the end.
    c.send_bytes(b"Content-Length: 2\r\nX-Junk: \xff\xfe\r\n\r\n{}");
    let e = c.wait("the non-UTF-8 header error", |v| {
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("not UTF-8"))
    });
    assert_eq!(e["id"], Value::Null);
    // A header block without Content-Length: an error reply too.
    c.send_bytes(b"Content-Type: application/json\r\n\r\n");
    c.wait("the missing Content-Length error", |v| {
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("without Content-Length"))
    });
    assert_hover_on_r(&mut c, &u, &text);
    // A message that is not a JSON-RPC message, with an id.
    c.send(json!({"jsonrpc": "2.0", "id": 98}));
    let e = c.wait("the invalid request", |v| v["id"] == json!(98));
    assert_eq!(e["error"]["code"], json!(-32600), "{e}");
    // Unknown method.
    let e = c.call("textDocument/frobnicate", json!({}));
    assert_eq!(e["error"]["code"], json!(-32601), "{e}");
    // Unknown notification: no reply, no crash.
    c.notify("workspace/frobnicated", json!({}));
    // A document never opened.
    let e = c.call(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri("never.loop")}, "position": {"line": 0, "character": 0}}),
    );
    assert_eq!(e["error"]["code"], json!(-32803), "{e}");
    // Positions outside the document.
    for p in [
        json!({"line": 500, "character": 0}),
        json!({"line": 0, "character": 5000}),
    ] {
        let e = c.call(
            "textDocument/hover",
            json!({"textDocument": {"uri": u}, "position": p}),
        );
        assert_eq!(e["error"]["code"], json!(-32602), "{e}");
    }
    // Bad parameters.
    let e = c.call("textDocument/hover", json!({"textDocument": 7}));
    assert_eq!(e["error"]["code"], json!(-32602), "{e}");
    // An edit with a range outside the document is skipped, not applied.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 2},
               "contentChanges": [{"range": {"start": {"line": 900, "character": 0}, "end": {"line": 900, "character": 1}}, "text": "x"}]}),
    );
    let d = c.diagnostics(&u, 2);
    assert!(d.iter().all(|d| d["severity"] != json!(1)));
    // Still serving.
    assert_hover_on_r(&mut c, &u, &text);
    // A cancelled request gets an answer: its result or RequestCancelled.
    let id = c.request("textDocument/codeLens", json!({"textDocument": {"uri": u}}));
    c.notify("$/cancelRequest", json!({"id": id}));
    let r = c.response(id);
    assert!(
        r.get("result").is_some() || r["error"]["code"] == json!(-32800),
        "{r}"
    );
    c.shutdown();
}

#[test]
fn a_thousand_rapid_edits_end_in_the_last_text() {
    let u = uri("edits.loop");
    let base = "param N = 4;\nreal A[0..N];\nfor i = 1 to N do\n  S: A[i] = A[i-1];\nend\n";
    let mut c = Client::start(BIN);
    c.open(&u, base);
    c.diagnostics(&u, 1);
    // Type 1,000 characters into a comment at the end, one edit each.
    let line = base.matches('\n').count();
    for k in 0..1000 {
        let at = json!({"line": line, "character": k});
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": u, "version": k + 2},
                   "contentChanges": [{"range": {"start": at, "end": at},
                                       "text": if k == 0 { "#" } else { "x" }}]}),
        );
    }
    let diags = c.diagnostics(&u, 1001);
    let msgs = messages(&diags);
    assert!(
        msgs.iter()
            .any(|m| m.starts_with("loop i carries a flow dependence on A (S → S, distance 1)")),
        "{msgs:?}"
    );
    // The server kept the text: the hover still points at A[i-1].
    let h = c.call(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": pos(base, "A[i-1]", 0, 0)}),
    );
    assert!(
        h["result"]["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("S(i - 1) if i >= 2, else initial"),
        "{h}"
    );
    c.shutdown();
}

#[test]
fn over_budget_and_configuration() {
    let text = fixture("mse-example2.loop");
    let u = uri("ex2.loop");
    let other = uri("ex1.loop");
    let mut c = Client::start_with(BIN, json!({"params": {"N": 50}, "maxInstances": 100}));
    c.open(&u, &text);
    let diags = c.diagnostics(&u, 1);
    let e = diags
        .iter()
        .find(|d| d["code"] == "E0302")
        .expect("a budget error");
    assert!(
        e["message"].as_str().unwrap().contains("count to 101"),
        "{e}"
    );
    // Another file is served meanwhile (with N=50 it has no such parameter).
    c.open(&other, &fixture("mse-example1.loop"));
    let d = c.diagnostics(&other, 1);
    // Example 1 goes over the budget too, at its statement T.
    let e = d
        .iter()
        .find(|d| d["code"] == "E0302")
        .expect("a budget error");
    assert!(e["message"].as_str().unwrap().contains("`T`"), "{e}");
    // New settings: the analyses run again.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"arrayflow": {"params": {"N": 3}, "maxInstances": 1000000}}}),
    );
    c.wait("diagnostics without the budget error", |v| {
        v["method"] == "textDocument/publishDiagnostics"
            && v["params"]["uri"] == u
            && !v.to_string().contains("E0302")
    });
    let lens = c.call("textDocument/codeLens", json!({"textDocument": {"uri": u}}));
    assert!(lens.to_string().contains("N=3"), "{lens}");
    c.shutdown();
}

#[test]
fn a_50_mb_file_gets_checked_and_other_files_are_served() {
    let u = uri("big.loop");
    let mut big = String::from("param N = 4;\nreal A[0..N];\n");
    let kernel = "for i = 1 to N do\n  A[i] = A[i-1] + 1;\nend\n";
    while big.len() < 50_000_000 {
        big.push_str(kernel);
    }
    big.push_str("use(A[1]);\n");
    let mut c = Client::start(BIN);
    c.open(&u, &big);
    drop(big);
    let small = uri("small.loop");
    let text = fixture("mse-example1.loop");
    c.open(&small, &text);
    assert_hover_on_r(&mut c, &small, &text);
    let diags = c.diagnostics(&u, 1);
    assert!(
        messages(&diags)
            .iter()
            .any(|m| m.contains("over the analysis limit")),
        "{diags:?}"
    );
    c.shutdown();
}

#[test]
fn exit_without_shutdown_is_an_error_exit() {
    let mut c = Client::start(BIN);
    c.notify("exit", Value::Null);
    drop(c.stdin.take());
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = c.child.try_wait().unwrap() {
            assert_eq!(status.code(), Some(1));
            return;
        }
        assert!(Instant::now() < deadline, "the server did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn c_files_get_the_same_analyses() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/c/mse-example1.c"
    ))
    .unwrap();
    let u = uri("mse-example1.c");
    let mut c = Client::start(BIN);
    c.open(&u, &text);
    let diags = c.diagnostics(&u, 1);
    assert!(diags.iter().all(|d| d["severity"] != json!(1)), "{diags:?}");
    assert!(
        messages(&diags)
            .iter()
            .any(|m| m.starts_with("after expanding x, loop i is parallel")),
        "{diags:?}"
    );
    let h = c.call(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": pos(&text, "R: use(x)", 0, 7)}),
    );
    let value = h["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(value.contains("from T[i] or S[i, 0..3]"), "{h}");
    c.shutdown();
}

/// The editor's `params` apply to every file it opens, so a C file
/// that does not declare `N` gets the other values and an information at
/// its first parameter that names the setting (W0301), not the command
/// line's E0301 at line 1.
#[test]
fn an_editor_parameter_a_c_file_lacks_is_ignored_there_and_said_so() {
    let u = uri("kernel.c");
    let text = "// a kernel without N\n#define NI 6\ndouble A[NI];\nvoid k(void) {\n  for (int i = 1; i < NI; i++)\n    A[i] = A[i - 1] + 1;\n}\n";
    let mut c = Client::start_with(BIN, json!({"params": {"N": 8, "NI": 3}}));
    c.open(&u, text);
    let diags = c.diagnostics(&u, 1);
    assert!(!diags.iter().any(|d| d["code"] == "E0301"), "{diags:?}");
    let w = diags
        .iter()
        .find(|d| d["code"] == "W0301")
        .unwrap_or_else(|| panic!("no W0301: {diags:?}"));
    let m = w["message"].as_str().unwrap();
    assert!(
        m.contains("`params` setting") && m.contains("`N` = 8") && m.contains("parameters: NI"),
        "{m}"
    );
    assert!(!m.contains("--param"), "{m}");
    assert_eq!(w["severity"], 3, "information: {w}");
    // At `#define NI 6`, the file's parameter.
    assert_eq!(w["range"]["start"]["line"], 1, "{w}");
    // NI's value from the setting reached the analysis.
    let lens = c.call("textDocument/codeLens", json!({"textDocument": {"uri": u}}));
    assert!(lens.to_string().contains("NI=3"), "{lens}");
    c.shutdown();
}
