//! JSON-RPC framing over byte streams (`Content-Length` headers), written
//! here rather than taken from `lsp-server`'s stdio transport because that
//! one stops reading at the first malformed message; this one reports it
//! and reads on.

use lsp_server::Message;
use std::io::{self, BufRead, Read, Write};

/// The largest message body accepted (a 50 MB document is far below it).
pub const MAX_BODY: usize = 1 << 30;

/// What the reader found.
#[derive(Debug)]
pub enum Incoming {
    Message(Message),
    /// Not a JSON-RPC message; `id` is the request id when one could be read,
    /// so that the reply can carry it (else the reply's id is null).
    Malformed {
        error: String,
        code: i32,
        id: Option<serde_json::Value>,
    },
}

/// Reads one framed message. `Ok(None)` at the end of the stream.
pub fn read<R: BufRead>(r: &mut R) -> io::Result<Option<Incoming>> {
    let mut length: Option<usize> = None;
    let mut bad_header = None;
    let mut line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let l = line.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            if length.is_some() || bad_header.is_some() {
                break;
            }
            continue;
        }
        match l.split_once(':') {
            Some((name, value)) if name.eq_ignore_ascii_case("content-length") => {
                match value.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    Err(e) => {
                        bad_header = Some(format!("bad Content-Length `{}`: {e}", value.trim()))
                    }
                }
            }
            Some(_) => {}
            None => bad_header = Some(format!("not a header line: {l:?}")),
        }
    }
    let Some(n) = length else {
        return Ok(Some(Incoming::Malformed {
            error: bad_header.unwrap_or_else(|| "no Content-Length header".to_string()),
            code: lsp_server::ErrorCode::ParseError as i32,
            id: None,
        }));
    };
    if n > MAX_BODY {
        // Skip the body without keeping it.
        io::copy(&mut Read::take(&mut *r, n as u64), &mut io::sink())?;
        return Ok(Some(Incoming::Malformed {
            error: format!("a message of {n} bytes; the limit is {MAX_BODY}"),
            code: lsp_server::ErrorCode::InvalidRequest as i32,
            id: None,
        }));
    }
    let mut body = vec![0; n];
    r.read_exact(&mut body)?;
    Ok(Some(parse(&body)))
}

/// A message body as a JSON-RPC message, or why it is not one.
pub fn parse(body: &[u8]) -> Incoming {
    let value: serde_json::Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return Incoming::Malformed {
                error: format!("invalid JSON: {e}"),
                code: lsp_server::ErrorCode::ParseError as i32,
                id: None,
            }
        }
    };
    let id = value.get("id").cloned().filter(|v| !v.is_null());
    match serde_json::from_value::<Message>(value) {
        Ok(m) => Incoming::Message(m),
        Err(e) => Incoming::Malformed {
            error: format!("not a JSON-RPC request, response or notification: {e}"),
            code: lsp_server::ErrorCode::InvalidRequest as i32,
            id,
        },
    }
}

/// Writes one message with its header.
pub fn write(w: &mut impl Write, msg: &Message) -> io::Result<()> {
    msg.write(w)
}

/// The error reply to a malformed message (`id` null when it had none).
pub fn error_reply(
    w: &mut impl Write,
    id: Option<serde_json::Value>,
    code: i32,
    message: &str,
) -> io::Result<()> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(serde_json::Value::Null),
        "error": { "code": code, "message": message },
    })
    .to_string();
    write!(w, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[test]
    fn reads_on_after_malformed_messages() {
        let input = [
            framed("{not json"),
            framed(r#"{"jsonrpc":"2.0","id":7,"params":{}}"#),
            "Content-Length: x\r\n\r\n".to_string(),
            framed(r#"{"jsonrpc":"2.0","method":"exit"}"#),
        ]
        .concat();
        let mut r = io::Cursor::new(input.into_bytes());
        let kinds: Vec<String> = std::iter::from_fn(|| read(&mut r).ok().flatten())
            .map(|m| match m {
                Incoming::Message(m) => format!("message {m:?}"),
                Incoming::Malformed { code, id, .. } => format!("malformed {code} {id:?}"),
            })
            .collect();
        assert_eq!(kinds.len(), 4, "{kinds:?}");
        assert_eq!(kinds[0], "malformed -32700 None");
        assert_eq!(kinds[1], "malformed -32600 Some(Number(7))");
        assert_eq!(kinds[2], "malformed -32700 None");
        assert!(kinds[3].contains("exit"), "{kinds:?}");
    }
}
