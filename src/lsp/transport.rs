//! JSON-RPC framing over byte streams (`Content-Length` headers), written
//! here rather than taken from `lsp-server`'s stdio transport because that
//! one stops reading at the first malformed message; this one reports it
//! and reads on: a header line that is not UTF-8, a header block without
//! `Content-Length` and junk before a header each get an error reply.

use lsp_server::Message;
use std::io::{self, BufRead, Read, Write};

/// The largest message body accepted (a 50 MB document is far below it).
pub const MAX_BODY: usize = 1 << 30;

/// The longest header line kept; the rest of a longer line is skipped, so a
/// stream without newlines cannot grow the reader's memory.
pub const MAX_HEADER_LINE: usize = 1 << 16;

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

/// Reads framed messages from a byte stream.
pub struct Reader<R> {
    input: R,
    /// A header line found glued behind junk (a body longer than its
    /// `Content-Length` said), read again as the next message's first line.
    pending: Option<Vec<u8>>,
}

impl<R: BufRead> Reader<R> {
    pub fn new(input: R) -> Self {
        Reader {
            input,
            pending: None,
        }
    }

    /// One header line without its line end; `None` at the end of the stream.
    fn line(&mut self) -> io::Result<Option<Vec<u8>>> {
        if let Some(l) = self.pending.take() {
            return Ok(Some(l));
        }
        let mut buf = Vec::new();
        let n = (&mut self.input)
            .take(MAX_HEADER_LINE as u64)
            .read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(None);
        }
        if buf.last() != Some(&b'\n') && n == MAX_HEADER_LINE {
            // Too long: drop the rest of the line.
            let mut rest = Vec::new();
            loop {
                rest.clear();
                let m = (&mut self.input)
                    .take(MAX_HEADER_LINE as u64)
                    .read_until(b'\n', &mut rest)?;
                if m == 0 || rest.last() == Some(&b'\n') {
                    break;
                }
            }
        }
        while matches!(buf.last(), Some(b'\n' | b'\r')) {
            buf.pop();
        }
        Ok(Some(buf))
    }

    /// Reads one framed message. `Ok(None)` at the end of the stream.
    pub fn read(&mut self) -> io::Result<Option<Incoming>> {
        let mut length: Option<usize> = None;
        let mut bad_header = None;
        let mut seen = false;
        loop {
            let Some(raw) = self.line()? else {
                return Ok(None);
            };
            if raw.is_empty() {
                if seen {
                    break;
                }
                continue;
            }
            seen = true;
            let Ok(l) = std::str::from_utf8(&raw) else {
                bad_header.get_or_insert_with(|| {
                    "a header line is not UTF-8 (headers are ASCII)".to_string()
                });
                continue;
            };
            match header(l) {
                Header::Length(Ok(n)) => length = Some(n),
                Header::Length(Err(e)) => {
                    bad_header = Some(e);
                }
                Header::Other => {}
                Header::Junk => {
                    // Junk followed by a header on the same line: report the
                    // junk now and read the header as the next message's.
                    if let Some(at) = find_ignore_case(l, "content-length:") {
                        self.pending = Some(l.as_bytes()[at..].to_vec());
                        return Ok(Some(malformed(format!(
                            "not a header line: {}",
                            shown(&l[..at])
                        ))));
                    }
                    bad_header.get_or_insert_with(|| format!("not a header line: {}", shown(l)));
                }
            }
        }
        let Some(n) = length else {
            return Ok(Some(malformed(bad_header.unwrap_or_else(|| {
                "a header block without Content-Length".to_string()
            }))));
        };
        if n > MAX_BODY {
            // Skip the body without keeping it.
            io::copy(&mut Read::take(&mut self.input, n as u64), &mut io::sink())?;
            return Ok(Some(Incoming::Malformed {
                error: format!("a message of {n} bytes; the limit is {MAX_BODY}"),
                code: lsp_server::ErrorCode::InvalidRequest as i32,
                id: None,
            }));
        }
        let mut body = Vec::new();
        Read::take(&mut self.input, n as u64).read_to_end(&mut body)?;
        if body.len() < n {
            return Ok(None);
        }
        if let Some(why) = bad_header {
            return Ok(Some(malformed(why)));
        }
        Ok(Some(parse(&body)))
    }
}

/// A parse error reply without an id.
fn malformed(error: String) -> Incoming {
    Incoming::Malformed {
        error,
        code: lsp_server::ErrorCode::ParseError as i32,
        id: None,
    }
}

/// One header line, classified.
enum Header {
    Length(Result<usize, String>),
    Other,
    Junk,
}

fn header(l: &str) -> Header {
    let Some((name, value)) = l.split_once(':') else {
        return Header::Junk;
    };
    // A header name is a token (RFC 7230): letters, digits and `-` here.
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Header::Junk;
    }
    if !name.eq_ignore_ascii_case("content-length") {
        return Header::Other;
    }
    Header::Length(
        value
            .trim()
            .parse::<usize>()
            .map_err(|e| format!("bad Content-Length `{}`: {e}", value.trim())),
    )
}

/// A header line quoted for a message, cut after 60 characters.
fn shown(l: &str) -> String {
    match l.char_indices().nth(60) {
        Some((at, _)) => format!("{:?}…", &l[..at]),
        None => format!("{l:?}"),
    }
}

/// Where `needle` (ASCII, lower case) starts in `hay`, ignoring ASCII case.
fn find_ignore_case(hay: &str, needle: &str) -> Option<usize> {
    hay.as_bytes()
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
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

    /// What a reader makes of `input`, one line per message.
    fn kinds(input: Vec<u8>) -> Vec<String> {
        let mut r = Reader::new(io::Cursor::new(input));
        std::iter::from_fn(|| r.read().ok().flatten())
            .map(|m| match m {
                Incoming::Message(m) => format!("message {m:?}"),
                Incoming::Malformed { code, id, error } => {
                    format!("malformed {code} {id:?} {error}")
                }
            })
            .collect()
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
        let kinds = kinds(input.into_bytes());
        assert_eq!(kinds.len(), 4, "{kinds:?}");
        assert!(kinds[0].starts_with("malformed -32700 None"), "{kinds:?}");
        assert!(
            kinds[1].starts_with("malformed -32600 Some(Number(7))"),
            "{kinds:?}"
        );
        assert!(kinds[2].starts_with("malformed -32700 None"), "{kinds:?}");
        assert!(kinds[3].contains("exit"), "{kinds:?}");
    }

    #[test]
    fn non_utf8_header_is_an_error_and_reading_goes_on() {
        let mut input = b"Content-Length: 2\r\nX-Bad: \xff\xfe\r\n\r\n{}".to_vec();
        input.extend(framed(r#"{"jsonrpc":"2.0","method":"exit"}"#).bytes());
        let kinds = kinds(input);
        assert_eq!(kinds.len(), 2, "{kinds:?}");
        assert!(kinds[0].contains("not UTF-8"), "{kinds:?}");
        assert!(kinds[1].contains("exit"), "{kinds:?}");
    }

    #[test]
    fn header_block_without_length_is_an_error() {
        let input = [
            "Content-Type: application/json\r\n\r\n".to_string(),
            framed(r#"{"jsonrpc":"2.0","method":"exit"}"#),
        ]
        .concat();
        let kinds = kinds(input.into_bytes());
        assert_eq!(kinds.len(), 2, "{kinds:?}");
        assert!(kinds[0].contains("without Content-Length"), "{kinds:?}");
        assert!(kinds[1].contains("exit"), "{kinds:?}");
    }

    #[test]
    fn junk_glued_before_a_header_is_reported_then_the_message_read() {
        // A body one byte longer than its Content-Length says.
        let input = [
            "Content-Length: 2\r\n\r\n{}}".to_string(),
            framed(r#"{"jsonrpc":"2.0","method":"exit"}"#),
        ]
        .concat();
        let kinds = kinds(input.into_bytes());
        assert_eq!(kinds.len(), 3, "{kinds:?}");
        assert!(kinds[0].contains("-32600"), "{{}} is no message: {kinds:?}");
        assert!(kinds[1].contains("not a header line: \"}\""), "{kinds:?}");
        assert!(kinds[2].contains("exit"), "{kinds:?}");
    }

    #[test]
    fn endless_header_line_is_bounded() {
        let mut input = vec![b'a'; 3 * MAX_HEADER_LINE + 5];
        input.extend(b"\r\n\r\n");
        input.extend(framed(r#"{"jsonrpc":"2.0","method":"exit"}"#).bytes());
        let kinds = kinds(input);
        assert_eq!(kinds.len(), 2, "{kinds:?}");
        assert!(kinds[0].contains("not a header line"), "{kinds:?}");
        assert!(kinds[1].contains("exit"), "{kinds:?}");
    }
}
