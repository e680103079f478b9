//! `arrayflow lsp`: the language server, on stdio.
//!
//! The design is rust-analyzer's, synchronous: one main thread reads
//! messages in order and keeps the documents' text; worker threads answer
//! requests and compute diagnostics on snapshots ([`crate::Analysis`]).
//!
//! - Each open document has its own [`crate::Host`] (files do not depend
//!   on each other), so a slow file never holds up another.
//! - Edits are applied to the text on the main thread (incremental sync) and
//!   reach the host when a worker next needs it. Setting the new text
//!   cancels every question still running on the old one
//!   ([`crate::Cancelled::Edit`]); requests cancelled that way get
//!   `ContentModified`, and a `$/cancelRequest` cancels one request through
//!   its snapshot's [`crate::Canceller`] (`RequestCancelled`).
//! - Diagnostics of a document are computed once per burst of edits: the
//!   main thread drains every waiting message before it schedules them, and
//!   a result computed on an old text is not published.
//! - Nothing the client sends stops the server: malformed messages, unknown
//!   methods, unknown documents, positions outside the document get an error
//!   reply (when the message was a request) and a line on stderr.

mod handlers;
pub mod text;
pub mod transport;

use crate::dataflow::Config;
use crate::host::{Analysis, Cancelled, Canceller, FileId, Host, Options};
use crate::kinds::Kinds;
use crossbeam_channel::{unbounded, Receiver, Sender};
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use text::{Encoding, LineIndex};

/// The server's default budget per kernel: smaller than the command line's,
/// so that an edit is answered in a fraction of a second.
pub const DEFAULT_MAX_INSTANCES: u64 = 5_000_000;
/// Files larger than this get the front end's diagnostics only.
pub const DEFAULT_MAX_ANALYSIS_BYTES: usize = 4 << 20;

/// The command of the code action and the code lenses.
pub const SUMMARY_COMMAND: &str = "arrayflow.expansionSummary";

fn log(msg: impl std::fmt::Display) {
    eprintln!("arrayflow lsp: {msg}");
}

/// Settings from `initializationOptions` and `workspace/didChangeConfiguration`.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub analysis: Config,
    pub max_analysis_bytes: usize,
    /// Run-time rule files (path, text), read when configured.
    pub rules: Vec<(String, String)>,
    /// How C documents are preprocessed: the command line's
    /// `--preprocess`, `-I`, `-D` (settings `preprocess`, `include`,
    /// `define`).
    pub preprocess: crate::cfront::preprocess::Options,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            analysis: Config {
                max_instances: DEFAULT_MAX_INSTANCES,
                ..Config::default()
            },
            max_analysis_bytes: DEFAULT_MAX_ANALYSIS_BYTES,
            rules: Vec::new(),
            preprocess: Default::default(),
        }
    }
}

impl ServerConfig {
    /// Reads `{"params": {"N": 8}, "maxTrips": 4, "maxInstances": 1000000,
    /// "maxMemory": 1073741824, "maxAnalysisBytes": 4194304}`, also when
    /// nested under `"arrayflow"`.
    /// Fields that are absent keep their value; wrong types are reported.
    pub fn update(&mut self, value: &serde_json::Value) -> Vec<String> {
        let v = value.get("arrayflow").unwrap_or(value);
        let mut problems = Vec::new();
        if let Some(p) = v.get("params") {
            match p.as_object() {
                Some(map) => {
                    let mut params = Vec::new();
                    for (name, val) in map {
                        match val.as_i64() {
                            Some(n) => params.push((name.clone(), n)),
                            None => problems.push(format!("params.{name}: not an integer")),
                        }
                    }
                    self.analysis.params = params;
                }
                None => problems.push("params: not an object".to_string()),
            }
        }
        let mut number = |key: &str| -> Option<u64> {
            let x = v.get(key)?;
            let n = x.as_u64();
            if n.is_none() {
                problems.push(format!("{key}: not a non-negative integer"));
            }
            n
        };
        if let Some(n) = number("maxTrips") {
            self.analysis.max_trips = n.min(u64::from(u32::MAX)) as u32;
        }
        if let Some(n) = number("maxInstances") {
            self.analysis.max_instances = n;
        }
        if let Some(n) = number("maxMemory") {
            // 0: the default (half of the machine's memory or `ulimit -v`).
            crate::budget::set_limit(n);
            self.analysis.max_memory = crate::budget::limit();
        }
        if let Some(n) = number("maxAnalysisBytes") {
            self.max_analysis_bytes = n as usize;
        }
        let mut strings = |key: &str| -> Option<Vec<String>> {
            let x = v.get(key)?;
            let list: Option<Vec<String>> = x
                .as_array()
                .and_then(|a| a.iter().map(|e| e.as_str().map(String::from)).collect());
            if list.is_none() {
                problems.push(format!("{key}: not an array of strings"));
            }
            list
        };
        if let Some(dirs) = strings("include") {
            self.preprocess.include = dirs;
        }
        if let Some(macros) = strings("define") {
            self.preprocess.define = macros;
        }
        if let Some(m) = v.get("preprocess") {
            use crate::cfront::preprocess::Mode;
            match m.as_str() {
                Some("auto") => self.preprocess.mode = Mode::Auto,
                Some("always") => self.preprocess.mode = Mode::Always,
                Some("never") => self.preprocess.mode = Mode::Never,
                _ => problems.push("preprocess: not one of \"auto\", \"always\", \"never\"".into()),
            }
        }
        if let Some(r) = v.get("rules") {
            match r.as_array() {
                Some(paths) => self.rules = read_rules(paths, &mut problems),
                None => problems.push("rules: not an array of paths".to_string()),
            }
        }
        problems
    }
}

/// The rule files of the `rules` setting; unreadable or wrong ones are
/// reported as problems (and left out).
fn read_rules(paths: &[serde_json::Value], problems: &mut Vec<String>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in paths {
        let Some(path) = p.as_str() else {
            problems.push(format!("rules: {p} is not a path"));
            continue;
        };
        match std::fs::read_to_string(path) {
            Ok(text) => {
                if let Err(diags) = crate::datalog::compile(&text, crate::diagnostics::FileId(0)) {
                    let mut files = crate::diagnostics::SourceFiles::new();
                    let id = files.add(path.to_string(), text.clone());
                    let diags = crate::diagnostics::in_file(&diags, id);
                    problems.push(format!(
                        "rules: `{path}` has errors:\n{}",
                        files.render_all(&diags)
                    ));
                    continue;
                }
                out.push((path.to_string(), text));
            }
            Err(e) => problems.push(format!("rules: cannot read `{path}`: {e}")),
        }
    }
    out
}

/// What the main thread and the workers share.
struct Shared {
    out: Sender<Out>,
    config: RwLock<(u64, ServerConfig)>,
    enc: RwLock<Encoding>,
    /// Requests not answered yet.
    requests: Mutex<HashMap<RequestId, Slot>>,
}

enum Slot {
    Queued,
    Cancelled,
    Running(Canceller),
}

/// A message to write.
enum Out {
    Message(Message),
    /// A notification whose body is already JSON text.
    Text(String),
    Malformed {
        id: Option<serde_json::Value>,
        code: i32,
        message: String,
    },
}

impl Shared {
    fn send(&self, m: impl Into<Message>) {
        let _ = self.out.send(Out::Message(m.into()));
    }

    fn reply_err(&self, id: RequestId, code: ErrorCode, message: String) {
        log(format!("request {id}: {message}"));
        self.send(Response::new_err(id, code as i32, message));
    }

    fn config(&self) -> (u64, ServerConfig) {
        self.config.read().map(|c| c.clone()).unwrap_or_default()
    }

    fn enc(&self) -> Encoding {
        self.enc.read().map_or(Encoding::Utf16, |e| *e)
    }
}

/// An open document.
struct Doc {
    uri: lsp_types::Uri,
    state: Mutex<DocState>,
    engine: Mutex<Engine>,
    /// A diagnostics job is waiting in the queue.
    diag_queued: AtomicBool,
    /// Cancels the diagnostics being computed, when an edit makes them stale.
    diag_token: Mutex<Option<Canceller>>,
    /// Closed by the client: nothing more is published for it.
    closed: AtomicBool,
}

struct DocState {
    text: Arc<String>,
    /// Counts edits: what a snapshot was taken of.
    rev: u64,
    version: i32,
    index: Option<(u64, Arc<LineIndex>)>,
}

struct Engine {
    host: Host,
    file: FileId,
    rev: u64,
    config_gen: u64,
    /// What the host holds of the text at `rev`, when it was preprocessed.
    pre: Preprocessing,
}

/// A C document that includes its own headers is preprocessed as the
/// command line does (docs/c.md), and positions map back to its lines.
#[derive(Clone, Default)]
pub(crate) enum Preprocessing {
    #[default]
    None,
    Done(Arc<crate::cfront::preprocess::Preprocessed>),
    /// The preprocessor failed: the text is analysed as it is (W0302).
    Failed(String),
}

impl Preprocessing {
    /// The text to analyse for `text`, the document `uri`.
    fn of(
        uri: &lsp_types::Uri,
        text: &str,
        o: &crate::cfront::preprocess::Options,
    ) -> (String, Preprocessing) {
        use crate::cfront::preprocess;
        let path = std::path::PathBuf::from(decode(uri.path().as_str()));
        if !crate::cfront::is_c_path(&path) || !preprocess::wanted(text, o) {
            return (text.to_string(), Preprocessing::None);
        }
        match preprocess::run_text(&path, text, o) {
            Ok(p) => (p.text.clone(), Preprocessing::Done(Arc::new(p))),
            Err(e) => (text.to_string(), Preprocessing::Failed(e.for_editor())),
        }
    }
}

/// A URI's path with its `%XX` escapes decoded.
fn decode(path: &str) -> String {
    let b = path.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut k = 0;
    while k < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[k],
            b.get(k + 1).copied().and_then(hex),
            b.get(k + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                k += 3;
            }
            (c, _, _) => {
                out.push(c);
                k += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A consistent view of a document for one job.
pub(crate) struct Snapshot {
    pub analysis: Analysis,
    pub file: FileId,
    pub text: Arc<String>,
    pub index: Arc<LineIndex>,
    pub rev: u64,
    pub version: i32,
    pub enc: Encoding,
    pub config: ServerConfig,
    pub pre: Preprocessing,
}

impl Doc {
    fn snapshot(&self, shared: &Shared) -> Snapshot {
        let (text, rev, version) = {
            let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            (st.text.clone(), st.rev, st.version)
        };
        let (gen, config) = shared.config();
        // The file is read under the same lock: once this thread holds a
        // snapshot, it must never wait for the engine (a writer holding the
        // engine waits for every snapshot to be dropped).
        let (analysis, file, pre) = {
            let mut e = self.engine.lock().unwrap_or_else(|e| e.into_inner());
            // A new text, or new settings (the preprocessor's among them).
            if e.rev != rev || e.config_gen != gen {
                let file = e.file;
                let (analysed, pre) = Preprocessing::of(&self.uri, &text, &config.preprocess);
                // Cancels what still runs on the old text, and waits for it.
                // The entry's file is its host's own and never removed.
                let _ = e.host.set_text(file, analysed);
                e.rev = rev;
                e.pre = pre;
            }
            if e.config_gen != gen {
                e.host.set_rules(&config.rules);
                e.config_gen = gen;
            }
            // The editor's `params` apply to every file it opens: a name this
            // file does not declare is left out here (W0301, not E0301).
            let mut sizes = config.analysis.clone();
            {
                // Dropped before the host writes. Nothing else writes to
                // this host while the engine is held: never cancelled.
                let a = e.host.analysis();
                if let Ok(Some(p)) = a.program(e.file) {
                    sizes.params.retain(|(n, _)| p.param(n).is_some());
                }
            }
            // Writes only what changed.
            e.host.set_options(&sizes.into());
            (e.host.analysis(), e.file, e.pre.clone())
        };
        let index = {
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            match &st.index {
                Some((r, ix)) if *r == rev => ix.clone(),
                _ => {
                    let ix = Arc::new(LineIndex::new(&text));
                    if st.rev == rev {
                        st.index = Some((rev, ix.clone()));
                    }
                    ix
                }
            }
        };
        Snapshot {
            analysis,
            file,
            text,
            index,
            rev,
            version,
            enc: shared.enc(),
            config,
            pre,
        }
    }

    fn rev(&self) -> u64 {
        self.state.lock().map_or(0, |s| s.rev)
    }
}

/// Work for a worker thread.
struct Job {
    doc: Arc<Doc>,
    kind: handlers::Kind,
    /// The request to answer; none for diagnostics.
    id: Option<RequestId>,
}

/// Runs the server on stdin and stdout until `exit`, with the core access
/// kinds.
pub fn run() -> std::process::ExitCode {
    run_with(Kinds::core())
}

/// [`run`] with the access kinds of `kinds`: every document's database
/// takes their `@name` accesses and analyses them with their rules.
pub fn run_with(kinds: Kinds) -> std::process::ExitCode {
    let input = std::io::BufReader::new(std::io::stdin());
    match serve_with(input, std::io::stdout(), kinds) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            log(e);
            std::process::ExitCode::from(1)
        }
    }
}

/// Runs the server on any pair of streams until `exit` or the end of the
/// input. An error when the session did not end with `shutdown` then `exit`.
pub fn serve(
    input: impl BufRead + Send,
    output: impl Write + Send + 'static,
) -> Result<(), String> {
    serve_with(input, output, Kinds::core())
}

/// [`serve`] with the access kinds of `kinds`.
pub fn serve_with(
    input: impl BufRead + Send,
    output: impl Write + Send + 'static,
    kinds: Kinds,
) -> Result<(), String> {
    let (out_tx, out_rx) = unbounded::<Out>();
    let writer = std::thread::Builder::new()
        .name("lsp-writer".to_string())
        .spawn(move || write_loop(output, out_rx))
        .map_err(|e| e.to_string())?;
    let (in_tx, in_rx) = unbounded::<transport::Incoming>();
    let shared = Arc::new(Shared {
        out: out_tx,
        config: RwLock::new((0, ServerConfig::default())),
        enc: RwLock::new(Encoding::Utf16),
        requests: Mutex::new(HashMap::new()),
    });
    let (job_tx, job_rx) = unbounded::<Job>();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4));
    let mut handles = Vec::new();
    for k in 0..workers {
        let rx = job_rx.clone();
        let sh = shared.clone();
        let h = std::thread::Builder::new()
            .name(format!("lsp-worker-{k}"))
            .spawn(move || {
                for job in rx {
                    run_job(&sh, job);
                }
            })
            .map_err(|e| e.to_string())?;
        handles.push(h);
    }
    let result = std::thread::scope(|s| {
        s.spawn(move || read_loop(input, in_tx));
        let mut server = Server {
            shared: shared.clone(),
            jobs: job_tx,
            docs: HashMap::new(),
            kinds,
            initialized: false,
            shutdown: false,
        };
        server.main_loop(&in_rx)
    });
    drop(shared);
    for h in handles {
        let _ = h.join();
    }
    let _ = writer.join();
    result
}

fn read_loop(input: impl BufRead, tx: Sender<transport::Incoming>) {
    let mut reader = transport::Reader::new(input);
    loop {
        match reader.read() {
            Ok(Some(m)) => {
                let exit = matches!(&m, transport::Incoming::Message(Message::Notification(n)) if n.method == "exit");
                if tx.send(m).is_err() || exit {
                    return;
                }
            }
            Ok(None) => return,
            Err(e) => {
                log(format!("cannot read the input: {e}"));
                return;
            }
        }
    }
}

fn write_loop(mut output: impl Write, rx: Receiver<Out>) {
    for m in rx {
        let r = match m {
            Out::Message(m) => transport::write(&mut output, &m).and_then(|()| output.flush()),
            Out::Text(body) => transport::write_text(&mut output, &body),
            Out::Malformed { id, code, message } => {
                transport::error_reply(&mut output, id, code, &message)
            }
        };
        if let Err(e) = r {
            log(format!("cannot write to the client: {e}"));
            return;
        }
    }
}

struct Server {
    shared: Arc<Shared>,
    /// The access kinds every document's database is made with.
    kinds: Kinds,
    jobs: Sender<Job>,
    docs: HashMap<String, Arc<Doc>>,
    initialized: bool,
    shutdown: bool,
}

impl Server {
    fn main_loop(&mut self, inbox: &Receiver<transport::Incoming>) -> Result<(), String> {
        let mut dirty: Vec<Arc<Doc>> = Vec::new();
        while let Ok(first) = inbox.recv() {
            // Drain what is waiting, so a burst of edits is analysed once.
            let mut batch = vec![first];
            batch.extend(inbox.try_iter());
            for m in batch {
                match m {
                    transport::Incoming::Malformed { error, code, id } => {
                        log(format!("malformed message: {error}"));
                        let _ = self.shared.out.send(Out::Malformed {
                            id,
                            code,
                            message: error,
                        });
                    }
                    transport::Incoming::Message(Message::Request(r)) => self.request(r),
                    transport::Incoming::Message(Message::Response(r)) => {
                        log(format!("ignoring a response to request {}", r.id));
                    }
                    transport::Incoming::Message(Message::Notification(n)) => {
                        if n.method == "exit" {
                            return if self.shutdown {
                                Ok(())
                            } else {
                                Err("exit without shutdown".to_string())
                            };
                        }
                        if let Some(doc) = self.notification(n) {
                            if !dirty.iter().any(|d| Arc::ptr_eq(d, &doc)) {
                                dirty.push(doc);
                            }
                        }
                    }
                }
            }
            for doc in dirty.drain(..) {
                self.schedule_diagnostics(doc);
            }
        }
        Err("the input ended without exit".to_string())
    }

    fn schedule_diagnostics(&self, doc: Arc<Doc>) {
        if let Some(t) = doc.diag_token.lock().ok().and_then(|t| t.clone()) {
            t.cancel();
        }
        if !doc.diag_queued.swap(true, Ordering::SeqCst) {
            let _ = self.jobs.send(Job {
                doc,
                kind: handlers::Kind::Diagnostics,
                id: None,
            });
        }
    }

    fn request(&mut self, r: Request) {
        let id = r.id.clone();
        if r.method == "initialize" {
            if self.initialized {
                return self.shared.reply_err(
                    id,
                    ErrorCode::InvalidRequest,
                    "initialize was already received".to_string(),
                );
            }
            self.initialized = true;
            let result = self.initialize(&r.params);
            return self.shared.send(Response::new_ok(id, result));
        }
        if !self.initialized {
            return self.shared.reply_err(
                id,
                ErrorCode::ServerNotInitialized,
                format!("`{}` before initialize", r.method),
            );
        }
        if self.shutdown {
            return self.shared.reply_err(
                id,
                ErrorCode::InvalidRequest,
                format!("`{}` after shutdown", r.method),
            );
        }
        if r.method == "shutdown" {
            self.shutdown = true;
            return self.shared.send(Response::new_ok(id, ()));
        }
        let (uri, kind) = match handlers::parse_request(&r.method, r.params) {
            Ok(x) => x,
            Err((code, msg)) => return self.shared.reply_err(id, code, msg),
        };
        let Some(doc) = self.docs.get(&uri).cloned() else {
            return self.shared.reply_err(
                id,
                ErrorCode::RequestFailed,
                format!("`{}`: the document {uri} is not open", r.method),
            );
        };
        if let Ok(mut map) = self.shared.requests.lock() {
            map.insert(id.clone(), Slot::Queued);
        }
        let _ = self.jobs.send(Job {
            doc,
            kind,
            id: Some(id),
        });
    }

    fn initialize(&mut self, params: &serde_json::Value) -> serde_json::Value {
        let p: lsp_types::InitializeParams =
            serde_json::from_value(params.clone()).unwrap_or_default();
        let utf8 = p
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_ref())
            .is_some_and(|e| e.contains(&lsp_types::PositionEncodingKind::UTF8));
        if let Ok(mut e) = self.shared.enc.write() {
            *e = if utf8 {
                Encoding::Utf8
            } else {
                Encoding::Utf16
            };
        }
        if let Some(opts) = &p.initialization_options {
            self.configure(opts);
        }
        serde_json::to_value(handlers::capabilities(utf8)).unwrap_or_default()
    }

    fn configure(&mut self, value: &serde_json::Value) {
        if let Ok(mut c) = self.shared.config.write() {
            for p in c.1.update(value) {
                log(format!("configuration: {p}"));
            }
            c.0 += 1;
        }
    }

    /// Handles a notification; returns the document whose diagnostics it made stale.
    fn notification(&mut self, n: Notification) -> Option<Arc<Doc>> {
        use lsp_types::notification::{self as notif, Notification as _};
        let method = n.method.as_str();
        if !self.initialized {
            log(format!("`{method}` before initialize: ignored"));
            return None;
        }
        let bad = |e: String| {
            log(format!("`{method}`: bad parameters: {e}"));
            None
        };

        match method {
            notif::DidOpenTextDocument::METHOD => {
                let p = params::<lsp_types::DidOpenTextDocumentParams>(method, n.params)?;
                let doc = self.open(p.text_document);
                Some(doc)
            }
            notif::DidChangeTextDocument::METHOD => {
                let p = params::<lsp_types::DidChangeTextDocumentParams>(method, n.params)?;
                let key = p.text_document.uri.as_str().to_string();
                let Some(doc) = self.docs.get(&key).cloned() else {
                    log(format!("didChange of {key}, which is not open: ignored"));
                    return None;
                };
                let enc = self.shared.enc();
                let mut st = doc.state.lock().unwrap_or_else(|e| e.into_inner());
                let mut text = (*st.text).clone();
                for c in p.content_changes {
                    if let Err(e) = text::apply(&mut text, c.range, &c.text, enc) {
                        log(format!("didChange of {key}: {e}; that change is skipped"));
                    }
                }
                st.text = Arc::new(text);
                st.rev += 1;
                st.version = p.text_document.version;
                drop(st);
                Some(doc)
            }
            notif::DidCloseTextDocument::METHOD => {
                let p = params::<lsp_types::DidCloseTextDocumentParams>(method, n.params)?;
                let key = p.text_document.uri.as_str().to_string();
                if let Some(doc) = self.docs.remove(&key) {
                    doc.closed.store(true, Ordering::SeqCst);
                    if let Some(t) = doc.diag_token.lock().ok().and_then(|t| t.clone()) {
                        t.cancel();
                    }
                    // Clear what was published for it.
                    self.shared.send(Notification::new(
                        notif::PublishDiagnostics::METHOD.to_string(),
                        lsp_types::PublishDiagnosticsParams::new(doc.uri.clone(), Vec::new(), None),
                    ));
                }
                None
            }
            notif::DidChangeConfiguration::METHOD => {
                let p = params::<lsp_types::DidChangeConfigurationParams>(method, n.params)?;
                self.configure(&p.settings);
                for doc in self.docs.values() {
                    let _ = self.jobs.send(Job {
                        doc: doc.clone(),
                        kind: handlers::Kind::Diagnostics,
                        id: None,
                    });
                }
                None
            }
            notif::Cancel::METHOD => {
                let id = match n.params.get("id") {
                    Some(serde_json::Value::Number(k)) => {
                        k.as_i64().map(|k| RequestId::from(k as i32))
                    }
                    Some(serde_json::Value::String(s)) => Some(RequestId::from(s.clone())),
                    _ => None,
                };
                let Some(id) = id else {
                    return bad("no id".to_string());
                };
                if let Ok(mut map) = self.shared.requests.lock() {
                    match map.get_mut(&id) {
                        Some(Slot::Running(t)) => t.cancel(),
                        Some(slot) => *slot = Slot::Cancelled,
                        None => {}
                    }
                }
                None
            }
            notif::Initialized::METHOD | notif::DidSaveTextDocument::METHOD => None,
            m if m.starts_with("$/") => None,
            m => {
                log(format!("unknown notification `{m}`: ignored"));
                None
            }
        }
    }

    fn open(&mut self, item: lsp_types::TextDocumentItem) -> Arc<Doc> {
        let key = item.uri.as_str().to_string();
        let (_, config) = self.shared.config();
        let mut host = Host::new(Options {
            kinds: self.kinds.clone(),
            ..config.analysis.into()
        });
        // The text reaches the host at the first snapshot (rev differs),
        // preprocessed there when it is to be: not on this thread.
        let file = host.set_file(&key, String::new());
        let doc = Arc::new(Doc {
            uri: item.uri,
            state: Mutex::new(DocState {
                text: Arc::new(item.text),
                rev: 0,
                version: item.version,
                index: None,
            }),
            engine: Mutex::new(Engine {
                host,
                file,
                rev: u64::MAX,
                config_gen: u64::MAX,
                pre: Preprocessing::None,
            }),
            diag_queued: AtomicBool::new(false),
            diag_token: Mutex::new(None),
            closed: AtomicBool::new(false),
        });
        if self.docs.insert(key.clone(), doc.clone()).is_some() {
            log(format!("didOpen of {key}, which was open: replaced"));
        }
        doc
    }
}

/// A notification's parameters, or `None` after logging why not.
fn params<T: serde::de::DeserializeOwned>(method: &str, v: serde_json::Value) -> Option<T> {
    serde_json::from_value(v)
        .map_err(|e| log(format!("`{method}`: bad parameters: {e}")))
        .ok()
}

static PANICS: AtomicU64 = AtomicU64::new(0);

fn run_job(shared: &Shared, job: Job) {
    if job.id.is_none() {
        job.doc.diag_queued.store(false, Ordering::SeqCst);
    }
    if let Some(id) = &job.id {
        let cancelled = shared
            .requests
            .lock()
            .map(|m| matches!(m.get(id), Some(Slot::Cancelled)))
            .unwrap_or(false);
        if cancelled {
            finish(shared, id);
            return shared.reply_err(id.clone(), ErrorCode::RequestCanceled, "cancelled".into());
        }
    }
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let snap = job.doc.snapshot(shared);
        let canceller = snap.analysis.canceller();
        match &job.id {
            Some(id) => {
                if let Ok(mut m) = shared.requests.lock() {
                    m.insert(id.clone(), Slot::Running(canceller));
                }
            }
            None => {
                if let Ok(mut t) = job.doc.diag_token.lock() {
                    *t = Some(canceller);
                }
            }
        }
        let r = handlers::handle(&snap, &job.kind, &job.doc.uri);
        (r, snap.rev)
    }));
    if let Some(id) = &job.id {
        finish(shared, id);
    }
    match (outcome, job.id) {
        (Ok((Ok(result), _)), Some(id)) => match result {
            Ok(value) => {
                if let handlers::Reply::Show(text) = &value {
                    shared.send(Notification::new(
                        "window/showMessage".to_string(),
                        lsp_types::ShowMessageParams {
                            typ: lsp_types::MessageType::INFO,
                            message: text.clone(),
                        },
                    ));
                }
                shared.send(Response::new_ok(id, value.into_json()));
            }
            Err((code, msg)) => shared.reply_err(id, code, msg),
        },
        (Ok((Ok(result), rev)), None) => {
            // Publish only what was computed on the current text of an open document.
            if job.doc.rev() == rev && !job.doc.closed.load(Ordering::SeqCst) {
                const METHOD: &str = "textDocument/publishDiagnostics";
                match result {
                    Ok(handlers::Reply::Json(v)) => {
                        shared.send(Notification::new(METHOD.to_string(), v))
                    }
                    Ok(handlers::Reply::Text(params)) => {
                        let body =
                            format!(r#"{{"jsonrpc":"2.0","method":"{METHOD}","params":{params}}}"#);
                        let _ = shared.out.send(Out::Text(body));
                    }
                    Ok(handlers::Reply::Show(_)) | Err(_) => {}
                }
            }
        }
        (Ok((Err(c), _)), Some(id)) => {
            let (code, message) = cancelled(c);
            shared.reply_err(id, code, message.to_string());
        }
        (Ok((Err(_), _)), None) => {}
        (Err(panic), id) => {
            let n = PANICS.fetch_add(1, Ordering::Relaxed) + 1;
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".to_string());
            log(format!(
                "internal error #{n} while handling {:?}: {what}",
                job.kind
            ));
            if let Some(id) = id {
                shared.reply_err(
                    id,
                    ErrorCode::InternalError,
                    format!("internal error: {what}"),
                );
            }
        }
    }
    if let Ok(mut t) = job.doc.diag_token.lock() {
        if t.as_ref().is_some_and(|t| t.is_cancelled()) {
            *t = None;
        }
    }
}

/// The error a request whose questions were cancelled gets; the messages
/// are salsa's words for each cause, which clients may match.
fn cancelled(c: Cancelled) -> (ErrorCode, &'static str) {
    match c {
        Cancelled::Request => (
            ErrorCode::RequestCanceled,
            "cancelled: cancelled because of local cancellation request",
        ),
        Cancelled::Edit => (
            ErrorCode::ContentModified,
            "cancelled: cancelled because of pending write",
        ),
        Cancelled::Failed => (
            ErrorCode::ContentModified,
            "cancelled: cancelled because of propagated panic",
        ),
        // Each document has its own host and keeps its file open.
        Cancelled::NoSuchFile => (ErrorCode::InvalidParams, "no such document"),
    }
}

fn finish(shared: &Shared, id: &RequestId) {
    if let Ok(mut m) = shared.requests.lock() {
        m.remove(id);
    }
}
