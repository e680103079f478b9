//! The language server's hover on a procedure call (docs/regions.md §6):
//! the procedure's summary as translated at that call, checked by hand on
//! fixtures/procs/rows.loop (row i of B at L; V shifted by one and B[2, 0]
//! at the call inside `fill`).

#[path = "support/lsp_client.rs"]
mod lsp_client;

use lsp_client::Client;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow");

fn pos(text: &str, needle: &str, skip: usize) -> Value {
    let at = text.find(needle).expect("needle") + skip;
    let line = text[..at].matches('\n').count();
    let col = at - text[..at].rfind('\n').map_or(0, |k| k + 1);
    json!({"line": line, "character": col})
}

/// A server with the fixture open, and its text.
fn open(fixture: &str, u: &str) -> (Client, String) {
    let path = format!("{}/fixtures/{fixture}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let mut c = Client::start(BIN);
    c.open(u, &text);
    (c, text)
}

/// The hover's text at `skip` bytes into the first `needle`.
fn hover_at(c: &mut Client, u: &str, text: &str, needle: &str, skip: usize) -> String {
    let h = c.call(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": pos(text, needle, skip)}),
    );
    h["result"]["contents"]["value"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn hover_on_a_call_shows_its_translated_summary() {
    let u = "file:///work/rows.loop";
    let (mut c, text) = open("procs/rows.loop", u);
    let hover = |c: &mut Client, needle: &str, skip: usize| hover_at(c, u, &text, needle, skip);
    let at_l = hover(&mut c, "L: call scale", 5);
    assert!(
        at_l.contains("(exact)") && at_l.contains("call L: scale"),
        "{at_l}"
    );
    assert!(
        at_l.contains("kill  B^{1}_{M} + M*i - M + i - 1 if M >= 0  (exact)"),
        "{at_l}"
    );
    assert!(at_l.contains("use   s + 0 if M >= 0  (exact)"), "{at_l}");
    let inner = hover(&mut c, "call scale(Y, Z[0], 1)", 3);
    assert!(inner.contains("call F._P1: scale"), "{inner}");
    assert!(
        inner.contains("mod   V^{1}_{M} + 0 if M >= 0  (exact)"),
        "{inner}"
    );
    assert!(
        inner.contains("use   B + M + 1 if M >= 0  (exact)"),
        "{inner}"
    );
    // F's summary is approximate: fill reads Y after writing it.
    let at_f = hover(&mut c, "F: call fill", 4);
    assert!(at_f.contains("approximate"), "{at_f}");
    // Elsewhere the hovers are the usual ones.
    let other = hover(&mut c, "R: use(B[1, 0]", 7);
    assert!(!other.contains("summary at this call"), "{other}");
    c.shutdown();
}

/// The same hover on the C twin (docs/c.md, Calls): the same translated
/// summaries, checked by hand as above.
#[test]
fn hover_on_a_c_call_shows_its_translated_summary() {
    let u = "file:///work/rows.c";
    let (mut c, text) = open("c/calls/rows.c", u);
    let mut hover = |needle: &str, skip: usize| hover_at(&mut c, u, &text, needle, skip);
    let at_l = hover("L: scale(B[i]", 5);
    assert!(at_l.contains("call L: scale"), "{at_l}");
    assert!(
        at_l.contains("kill  B^{1}_{M} + M*i - M + i - 1 if M >= 0  (exact)"),
        "{at_l}"
    );
    assert!(at_l.contains("use   s + 0 if M >= 0  (exact)"), "{at_l}");
    let inner = hover("scale(Y, Z[0], 1)", 2);
    assert!(inner.contains("call F._P1: scale"), "{inner}");
    assert!(
        inner.contains("use   B + M + 1 if M >= 0  (exact)"),
        "{inner}"
    );
    c.shutdown();
}
