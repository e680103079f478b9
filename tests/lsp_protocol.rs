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
        ("a length of 10^9 with a short body", short.into_bytes(), vec![INVALID_REQUEST]),
        // Within the limit, the next header found inside the body ends it.
        ("a length of 4000 with a short body", short_in_limit.into_bytes(), vec![PARSE_ERROR]),
        ("an object id", id_body(r#"{"a":1}"#), vec![INVALID_REQUEST]),
        ("an id of 2^70", id_body("1180591620717411303424"), vec![INVALID_REQUEST]),
        ("a fractional id", id_body("1.5"), vec![INVALID_REQUEST]),
        ("an array id", id_body("[1]"), vec![INVALID_REQUEST]),
        ("a junk line", b"hello there\r\n".to_vec(), vec![PARSE_ERROR]),
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
        ("bad JSON", framed("{\"jsonrpc\": \"2.0\", \"id\": 3,"), vec![PARSE_ERROR]),
        ("a JSON array", framed("[1, 2]"), vec![INVALID_REQUEST]),
        (
            "a request without jsonrpc",
            framed(r#"{"method":"textDocument/hover","params":{}}"#),
            vec![INVALID_REQUEST],
        ),
    ]
}

#[test]
fn each_malformed_message_gets_its_error_and_the_next_request_an_answer() {
    let mut c = Client::start(BIN);
    let mut next = 1000;
    for (what, bytes, want) in cases() {
        c.send_bytes(&bytes);
        // A method the server does not have: its answer (-32601 with this
        // id) shows that the request was read.
        next += 1;
        c.send(json!({"jsonrpc": "2.0", "id": next, "method": "arrayflow/none", "params": {}}));
        let r = c.wait_within(
            &format!("the request after {what}"),
            Duration::from_secs(10),
            |v| v["id"] == json!(next),
        );
        assert_eq!(r["error"]["code"], json!(-32601), "{what}: {r}");
        // Replies leave in the order their messages came: every error to
        // what was sent before is here by now.
        let seen = c.take_seen();
        let errors: Vec<i64> = seen
            .iter()
            .filter(|v| v.get("method").is_none())
            .map(|v| {
                assert_eq!(v["id"], Value::Null, "{what}: {v}");
                v["error"]["code"].as_i64().unwrap_or(0)
            })
            .collect();
        assert_eq!(errors, want, "{what}: {seen:?}");
    }
    c.shutdown();
}
