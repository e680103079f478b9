//! JSON-RPC framing over byte streams (`Content-Length` headers), written
//! here rather than taken from `lsp-server`'s stdio transport because that
//! one stops reading at the first malformed message; this one reports it
//! and reads on. Every malformed message gets one error reply, and the
//! reader resynchronises on the next `Content-Length:` header, so no later
//! request is lost and the reader never waits for bytes a client will not
//! send: junk lines, header blocks without a usable length, bodies over
//! [`MAX_BODY`] and bodies shorter than their length (the next header found
//! inside them) are all reported and skipped.

use lsp_server::{ErrorCode, Message};
use std::io::{self, BufRead, Read, Write};

/// The largest message body accepted (a 50 MB document is below it); a
/// longer one is refused at once, neither waited for nor allocated.
pub const MAX_BODY: usize = 64 << 20;

/// The longest header line kept; the rest of a longer line is skipped, so a
/// stream without newlines cannot grow the reader's memory.
pub const MAX_HEADER_LINE: usize = 1 << 16;

const LENGTH: &[u8] = b"content-length:";

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

/// The input with bytes put back in front of it.
struct Source<R> {
    back: Vec<u8>,
    at: usize,
    input: R,
}

impl<R: BufRead> Source<R> {
    fn put_back(&mut self, bytes: &[u8]) {
        let mut back = bytes.to_vec();
        back.extend_from_slice(&self.back[self.at..]);
        self.back = back;
        self.at = 0;
    }
}

impl<R: BufRead> Read for Source<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = {
            let got = self.fill_buf()?;
            let n = got.len().min(buf.len());
            buf[..n].copy_from_slice(&got[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Source<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at < self.back.len() {
            Ok(&self.back[self.at..])
        } else {
            self.input.fill_buf()
        }
    }

    fn consume(&mut self, n: usize) {
        if self.at < self.back.len() {
            self.at += n;
            if self.at >= self.back.len() {
                self.back.clear();
                self.at = 0;
            }
        } else {
            self.input.consume(n);
        }
    }
}

/// Reads framed messages from a byte stream.
pub struct Reader<R> {
    input: Source<R>,
    /// The last message's extent is unknown (no usable length, too long, or
    /// junk): skip to the next `Content-Length:` before reading on.
    resync: bool,
}

impl<R: BufRead> Reader<R> {
    pub fn new(input: R) -> Self {
        Reader {
            input: Source {
                back: Vec::new(),
                at: 0,
                input,
            },
            resync: false,
        }
    }

    /// One header line without its line end; `None` at the end of the stream.
    fn line(&mut self) -> io::Result<Option<Vec<u8>>> {
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

    /// Skips input up to the next `Content-Length:` (any case), which is
    /// left to be read. `false` at the end of the stream.
    fn skip_to_header(&mut self) -> io::Result<bool> {
        // How much of `LENGTH` the bytes just skipped end with; its first
        // byte occurs nowhere else in it, so a mismatch restarts the match.
        let mut matched = 0;
        loop {
            let buf = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok(false);
            }
            let mut found = None;
            for (k, b) in buf.iter().enumerate() {
                let b = b.to_ascii_lowercase();
                matched = if b == LENGTH[matched] {
                    matched + 1
                } else {
                    usize::from(b == LENGTH[0])
                };
                if matched == LENGTH.len() {
                    found = Some(k + 1);
                    break;
                }
            }
            let used = found.unwrap_or(buf.len());
            self.input.consume(used);
            if found.is_some() {
                self.input.put_back(b"Content-Length:");
                return Ok(true);
            }
        }
    }

    /// Reads one framed message. `Ok(None)` at the end of the stream.
    pub fn read(&mut self) -> io::Result<Option<Incoming>> {
        if std::mem::take(&mut self.resync) && !self.skip_to_header()? {
            return Ok(None);
        }
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
                    if let Some(at) = find_ignore_case(l.as_bytes(), LENGTH) {
                        self.input
                            .put_back(&[&l.as_bytes()[at..], b"\r\n"].concat());
                        return Ok(Some(malformed(format!(
                            "not a header line: {}",
                            shown(&l[..at])
                        ))));
                    }
                    if length.is_none() {
                        // Junk before any length: what follows up to the
                        // next header is junk too.
                        self.resync = true;
                        return Ok(Some(malformed(format!("not a header line: {}", shown(l)))));
                    }
                    bad_header.get_or_insert_with(|| format!("not a header line: {}", shown(l)));
                }
            }
        }
        let Some(n) = length else {
            // The body's length is unknown: it is skipped with the rest.
            self.resync = true;
            return Ok(Some(malformed(bad_header.unwrap_or_else(|| {
                "a header block without Content-Length".to_string()
            }))));
        };
        if n > MAX_BODY {
            self.resync = true;
            return Ok(Some(Incoming::Malformed {
                error: format!("a message of {n} bytes; the limit is {MAX_BODY}"),
                code: ErrorCode::InvalidRequest as i32,
                id: None,
            }));
        }
        let body = match self.body(n)? {
            Body::Whole(b) => b,
            Body::Short(got) => {
                return Ok(Some(malformed(format!(
                    "a message shorter than its Content-Length of {n}: \
                     the next header came after {got} bytes"
                ))))
            }
            Body::End => return Ok(None),
        };
        if let Some(why) = bad_header {
            return Ok(Some(malformed(why)));
        }
        Ok(Some(parse(&body)))
    }

    /// `n` bytes of body, read as they come. A header line among them (which
    /// no JSON text holds: see [`header_end`]) ends the body there and is put
    /// back, so a body shorter than its length does not swallow the next
    /// message, and the reader does not wait for bytes that never come.
    fn body(&mut self, n: usize) -> io::Result<Body> {
        let mut body = Vec::new();
        while body.len() < n {
            let buf = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok(Body::End);
            }
            let take = buf.len().min(n - body.len());
            let from = body.len();
            body.extend_from_slice(&buf[..take]);
            self.input.consume(take);
            let new_lines = body[from..]
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(k, _)| from + k);
            if let Some(at) = new_lines.filter_map(|end| header_end(&body[..end])).next() {
                self.input.put_back(&body[at..]);
                return Ok(Body::Short(at));
            }
        }
        Ok(Body::Whole(body))
    }
}

enum Body {
    Whole(Vec<u8>),
    /// The next message's header began after this many bytes.
    Short(usize),
    End,
}

/// Where a `Content-Length: digits` header ending `text` (before a line end)
/// starts. Such a line is never part of a JSON text: outside a string it is
/// no JSON token, and a string cannot hold the raw line end after it.
fn header_end(text: &[u8]) -> Option<usize> {
    let blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\r');
    let mut end = text.len();
    while end > 0 && blank(&text[end - 1]) {
        end -= 1;
    }
    let digits_end = end;
    while end > 0 && text[end - 1].is_ascii_digit() {
        end -= 1;
    }
    if end == digits_end {
        return None;
    }
    while end > 0 && matches!(text[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    let start = end.checked_sub(LENGTH.len())?;
    text[start..end]
        .eq_ignore_ascii_case(LENGTH)
        .then_some(start)
}

/// A parse error reply without an id.
fn malformed(error: String) -> Incoming {
    Incoming::Malformed {
        error,
        code: ErrorCode::ParseError as i32,
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
fn find_ignore_case(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

/// An id the protocol allows (LSP: an integer of 32 bits or a string), which
/// is also what a reply can carry.
fn valid_id(id: &serde_json::Value) -> bool {
    id.is_string() || id.as_i64().is_some_and(|n| i32::try_from(n).is_ok())
}

/// A message body as a JSON-RPC message, or why it is not one.
pub fn parse(body: &[u8]) -> Incoming {
    let value: serde_json::Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return Incoming::Malformed {
                error: format!("invalid JSON: {e}"),
                code: ErrorCode::ParseError as i32,
                id: None,
            }
        }
    };
    let invalid = |error: String, id: Option<serde_json::Value>| Incoming::Malformed {
        error,
        code: ErrorCode::InvalidRequest as i32,
        id,
    };
    let raw_id = value.get("id");
    // The reply carries the id only when it is one (JSON-RPC: else null).
    let id = raw_id.filter(|v| valid_id(v)).cloned();
    if let Some(bad) = raw_id.filter(|v| !valid_id(v)) {
        // lsp-server would read such a request as a notification (no reply).
        return invalid(
            format!(
                "the id {} is not an integer of 32 bits or a string",
                shown(&bad.to_string())
            ),
            None,
        );
    }
    if value.get("jsonrpc").and_then(|v| v.as_str()) != Some("2.0") {
        return invalid(
            "not a JSON-RPC 2.0 message (\"jsonrpc\": \"2.0\" missing)".to_string(),
            id,
        );
    }
    match serde_json::from_value::<Message>(value) {
        Ok(m) => Incoming::Message(m),
        Err(e) => invalid(
            format!("not a JSON-RPC request, response or notification: {e}"),
            id,
        ),
    }
}

/// Writes one message with its header.
pub fn write(w: &mut impl Write, msg: &Message) -> io::Result<()> {
    msg.write(w)
}

/// A message whose body is already JSON text.
pub fn write_text(w: &mut impl Write, body: &str) -> io::Result<()> {
    write!(w, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    w.flush()
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
    write_text(w, &body)
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
