//! Malformed input on the language server's pipe, case by case: each gets
//! the JSON-RPC error that fits, with a null id, and the request sent right
//! after it is answered (the server neither waits for bytes that will not
//! come nor swallows the next message).

#[path = "support/lsp_client.rs"]
mod lsp_client;

use lsp_client::Client;
use serde_json::{json, Value};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow");

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

fn framed(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// A whole request, sent after headers that claim a longer body.
fn hover_body() -> &'static str {
    r#"{"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":{}}"#
}

/// (what is sent, the errors it must get: codes of null-id replies in order).
fn cases() -> Vec<(&'static str, Vec<u8>, Vec<i64>)> {
    let short = format!("Content-Length: 1000000000\r\n\r\n{}", hover_body());
    let short_in_limit = format!("Content-Length: 4000\r\n\r\n{}", hover_body());
    let id_body = |id: &str| {
        framed(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"textDocument/hover","params":{{}}}}"#
        ))
    };
    vec![
        // Over the 64 MiB limit: refused at once, its body skipped.
        (
            "a length of 10^9 with a short body",
            short.into_bytes(),
            vec![INVALID_REQUEST],
        ),
        // Within the limit, the next header found inside the body ends it.
        (
            "a length of 4000 with a short body",
            short_in_limit.into_bytes(),
            vec![PARSE_ERROR],
        ),
        ("an object id", id_body(r#"{"a":1}"#), vec![INVALID_REQUEST]),
        (
            "an id of 2^70",
            id_body("1180591620717411303424"),
            vec![INVALID_REQUEST],
        ),
        ("a fractional id", id_body("1.5"), vec![INVALID_REQUEST]),
        ("an array id", id_body("[1]"), vec![INVALID_REQUEST]),
        (
            "a junk line",
            b"hello there\r\n".to_vec(),
            vec![PARSE_ERROR],
        ),
        (
            "junk lines and blank lines",
            b"junk\r\n\r\nmore junk\nand more\r\n\r\n".to_vec(),
            vec![PARSE_ERROR],
        ),
        (
            "a header block with a length of 2^70",
            b"Content-Length: 1180591620717411303424\r\n\r\n{}".to_vec(),
            vec![PARSE_ERROR],
        ),
        (
            "bad JSON",
            framed("{\"jsonrpc\": \"2.0\", \"id\": 3,"),
            vec![PARSE_ERROR],
        ),
        ("a JSON array", framed("[1, 2]"), vec![INVALID_REQUEST]),
        (
            "a request without jsonrpc",
            framed(r#"{"method":"textDocument/hover","params":{}}"#),
            vec![INVALID_REQUEST],
        ),
    ]
}

/// Sends `bytes` to a fresh server, then a request: the errors the server
/// answered before answering the request, or why it did not.
fn errors_before_the_next_answer(what: &str, bytes: &[u8]) -> Result<Vec<i64>, String> {
    let mut c = Client::start(BIN);
    c.send_bytes(bytes);
    // A method the server does not have: its answer (-32601 with this id)
    // shows that the request was read.
    c.send(json!({"jsonrpc": "2.0", "id": 1000, "method": "arrayflow/none", "params": {}}));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        c.wait_within(
            &format!("the request after {what}"),
            Duration::from_secs(10),
            |v| v["id"] == json!(1000),
        )
    }))
    .map_err(|_| "no answer to the request after it".to_string())?;
    if r["error"]["code"] != json!(-32601) {
        return Err(format!("the request after it got {r}"));
    }
    // Replies leave in the order their messages came: every error to what
    // was sent before is here by now.
    let mut errors = Vec::new();
    for v in c.take_seen().iter().filter(|v| v.get("method").is_none()) {
        if v["id"] != Value::Null {
            return Err(format!("an error with an id: {v}"));
        }
        errors.push(v["error"]["code"].as_i64().unwrap_or(0));
    }
    c.shutdown();
    Ok(errors)
}

#[test]
fn each_malformed_message_gets_its_error_and_the_next_request_an_answer() {
    let failures: Vec<String> = cases()
        .into_iter()
        .filter_map(
            |(what, bytes, want)| match errors_before_the_next_answer(what, &bytes) {
                Ok(got) if got == want => None,
                Ok(got) => Some(format!("{what}: errors {got:?}, wanted {want:?}")),
                Err(why) => Some(format!("{what}: {why}")),
            },
        )
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}
