//! A language-server client for tests and benchmarks: starts `arrayflow
//! lsp` as a child process and speaks JSON-RPC over its pipes. Every wait
//! has a timeout, so a hung server fails instead of hanging.

#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub const WAIT: Duration = Duration::from_secs(60);

pub struct Client {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    inbox: Receiver<Value>,
    /// Messages received while waiting for something else.
    seen: Vec<Value>,
    next_id: i64,
}

impl Client {
    pub fn start(binary: &str) -> Client {
        Client::start_with(binary, json!({}))
    }

    pub fn start_with(binary: &str, options: Value) -> Client {
        Client::start_logging(binary, options, Stdio::null())
    }

    /// Starts the server with its stderr (its log) going to `stderr`.
    pub fn start_logging(binary: &str, options: Value, stderr: Stdio) -> Client {
        let mut child = Command::new(binary)
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start arrayflow lsp");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = None;
                let mut line = String::new();
                loop {
                    line.clear();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let l = line.trim();
                    if l.is_empty() {
                        break;
                    }
                    if let Some(v) = l.strip_prefix("Content-Length:") {
                        len = v.trim().parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; len.expect("a Content-Length header")];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                let v: Value = serde_json::from_slice(&body).expect("the server sends JSON");
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut c = Client {
            child,
            stdin,
            inbox: rx,
            seen: Vec::new(),
            next_id: 1,
        };
        let id = c.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": null,
                "capabilities": {},
                "initializationOptions": options,
            }),
        );
        let r = c.response(id);
        assert!(
            r["result"]["capabilities"]["hoverProvider"] == json!(true),
            "{r}"
        );
        assert_eq!(
            r["result"]["capabilities"]["textDocumentSync"]["change"],
            json!(2),
            "incremental sync"
        );
        c.notify("initialized", json!({}));
        c
    }

    pub fn send_raw(&mut self, body: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        write!(stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        stdin.write_all(body).unwrap();
        stdin.flush().unwrap();
    }

    /// Writes `bytes` as they are, framing included.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, v: Value) {
        self.send_raw(v.to_string().as_bytes());
    }

    pub fn request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The first message (seen before or arriving within the timeout) that
    /// satisfies `want`.
    pub fn wait(&mut self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        self.wait_within(what, WAIT, want)
    }

    /// [`Client::wait`] with its own timeout.
    pub fn wait_within(
        &mut self,
        what: &str,
        timeout: Duration,
        want: impl Fn(&Value) -> bool,
    ) -> Value {
        if let Some(k) = self.seen.iter().position(&want) {
            return self.seen.remove(k);
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.inbox.recv_timeout(left) {
                Ok(v) if want(&v) => return v,
                Ok(v) => self.seen.push(v),
                Err(RecvTimeoutError::Timeout) => panic!("timed out waiting for {what}"),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the server closed while waiting for {what}")
                }
            }
        }
    }

    /// The messages received so far while waiting for others, taken.
    pub fn take_seen(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.seen)
    }

    pub fn response(&mut self, id: i64) -> Value {
        self.wait(&format!("the response to {id}"), |v| v["id"] == json!(id))
    }

    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        self.response(id)
    }

    /// The diagnostics published for `uri` at `version`.
    pub fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let v = self.wait(&format!("diagnostics of {uri} v{version}"), |v| {
            v["method"] == "textDocument/publishDiagnostics"
                && v["params"]["uri"] == uri
                && v["params"]["version"] == json!(version)
        });
        v["params"]["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    pub fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "loop", "version": 1, "text": text}}),
        );
    }

    pub fn shutdown(mut self) {
        let r = self.call("shutdown", Value::Null);
        assert!(r.get("error").is_none(), "{r}");
        self.notify("exit", Value::Null);
        drop(self.stdin.take());
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "exit status {status}");
                return;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `text` with the `TextEdit`s of a `documentChanges` entry made, as a
/// client makes them: ranges in lines and characters of the old text
/// (ASCII text here, so characters are bytes), applied last first.
pub fn apply_edits(text: &str, edits: &Value) -> String {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let offset = |p: &Value| {
        let line = p["line"].as_u64().expect("line") as usize;
        let character = p["character"].as_u64().expect("character") as usize;
        starts.get(line).map_or(text.len(), |s| s + character)
    };
    let mut edits: Vec<(usize, usize, &str)> = (edits.as_array().expect("edits").iter())
        .map(|e| {
            let new = e["newText"].as_str().expect("newText");
            (
                offset(&e["range"]["start"]),
                offset(&e["range"]["end"]),
                new,
            )
        })
        .collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = text.to_string();
    for (start, end, new) in edits {
        out.replace_range(start..end, new);
    }
    out
}
