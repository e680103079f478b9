//! The requests the server answers, from LSP types to the door's
//! questions (`Analysis`) and back.

use super::{Preprocessing, Snapshot, SUMMARY_COMMAND};
use crate::diagnostics::{Diagnostic, Severity};
use crate::host::{Cancellable, Cancelled, Level};
use crate::model::Span;
use lsp_server::ErrorCode;
use lsp_types::request::{self as req, Request as _};
use lsp_types::*;

/// What a job computes.
#[derive(Clone, Debug)]
pub enum Kind {
    Diagnostics,
    Hover(Position),
    Definition(Position),
    CodeLens,
    /// The actions at a range of the document.
    CodeAction(Range),
    /// Fill in the edit of "Apply maximal static expansion" or "Apply
    /// privatization".
    ResolveAction(Box<CodeAction>),
    Symbols,
    Summary,
}

/// A job's answer.
pub enum Reply {
    Json(serde_json::Value),
    /// JSON text serialized straight from the typed value: a file's
    /// diagnostics can be 16,000 entries, and through `serde_json::Value`
    /// (built, serialized, dropped) they took a third of an edit's time.
    Text(String),
    /// Text to show the user (a `window/showMessage`), also the result.
    Show(String),
}

impl Reply {
    pub fn into_json(self) -> serde_json::Value {
        match self {
            Reply::Json(v) => v,
            Reply::Text(t) => serde_json::from_str(&t).unwrap_or(serde_json::Value::Null),
            Reply::Show(s) => serde_json::Value::String(s),
        }
    }
}

type Failure = (ErrorCode, String);

/// Why a job has no answer: its snapshot's questions were cancelled, or
/// the request cannot be answered.
enum Stop {
    Cancelled(Cancelled),
    Failed(Failure),
}

impl From<Cancelled> for Stop {
    fn from(c: Cancelled) -> Stop {
        Stop::Cancelled(c)
    }
}

impl From<Failure> for Stop {
    fn from(f: Failure) -> Stop {
        Stop::Failed(f)
    }
}

/// The title of the code action that rewrites the file.
pub const APPLY: &str = "Apply maximal static expansion";

/// The title of the code action that privatizes the file, offered on the
/// loops that private copies make parallel.
pub const APPLY_PRIVATIZATION: &str = "Apply privatization";

fn params<T: serde::de::DeserializeOwned>(
    method: &str,
    v: serde_json::Value,
) -> Result<T, Failure> {
    serde_json::from_value(v).map_err(|e| {
        (
            ErrorCode::InvalidParams,
            format!("`{method}`: bad parameters: {e}"),
        )
    })
}

/// The document and the job of a request, or the error to reply with.
pub fn parse_request(method: &str, v: serde_json::Value) -> Result<(String, Kind), Failure> {
    let doc = |t: &TextDocumentIdentifier| t.uri.as_str().to_string();
    match method {
        req::HoverRequest::METHOD => {
            let p: HoverParams = params(method, v)?;
            let t = &p.text_document_position_params;
            Ok((doc(&t.text_document), Kind::Hover(t.position)))
        }
        req::GotoDefinition::METHOD => {
            let p: GotoDefinitionParams = params(method, v)?;
            let t = &p.text_document_position_params;
            Ok((doc(&t.text_document), Kind::Definition(t.position)))
        }
        req::CodeLensRequest::METHOD => {
            let p: CodeLensParams = params(method, v)?;
            Ok((doc(&p.text_document), Kind::CodeLens))
        }
        req::CodeActionRequest::METHOD => {
            let p: CodeActionParams = params(method, v)?;
            Ok((doc(&p.text_document), Kind::CodeAction(p.range)))
        }
        req::CodeActionResolveRequest::METHOD => {
            let a: CodeAction = params(method, v)?;
            let uri = a
                .data
                .as_ref()
                .and_then(|d| d.get("uri"))
                .and_then(|u| u.as_str())
                .map(str::to_string)
                .ok_or((
                    ErrorCode::InvalidParams,
                    "`codeAction/resolve`: the action has no document".to_string(),
                ))?;
            Ok((uri, Kind::ResolveAction(Box::new(a))))
        }
        req::DocumentSymbolRequest::METHOD => {
            let p: DocumentSymbolParams = params(method, v)?;
            Ok((doc(&p.text_document), Kind::Symbols))
        }
        req::ExecuteCommand::METHOD => {
            let p: ExecuteCommandParams = params(method, v)?;
            if p.command != SUMMARY_COMMAND {
                return Err((
                    ErrorCode::InvalidParams,
                    format!("unknown command `{}`", p.command),
                ));
            }
            match p.arguments.first().and_then(|a| a.as_str()) {
                Some(uri) => Ok((uri.to_string(), Kind::Summary)),
                None => Err((
                    ErrorCode::InvalidParams,
                    format!("`{SUMMARY_COMMAND}` takes the document's URI"),
                )),
            }
        }
        m => Err((ErrorCode::MethodNotFound, format!("unknown method `{m}`"))),
    }
}

pub fn capabilities(utf8: bool) -> InitializeResult {
    InitializeResult {
        capabilities: ServerCapabilities {
            position_encoding: Some(if utf8 {
                PositionEncodingKind::UTF8
            } else {
                PositionEncodingKind::UTF16
            }),
            text_document_sync: Some(TextDocumentSyncCapability::Options(
                TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    ..TextDocumentSyncOptions::default()
                },
            )),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            definition_provider: Some(OneOf::Left(true)),
            code_lens_provider: Some(CodeLensOptions {
                resolve_provider: Some(false),
            }),
            code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                code_action_kinds: Some(vec![
                    CodeActionKind::REFACTOR_REWRITE,
                    CodeActionKind::SOURCE,
                ]),
                resolve_provider: Some(true),
                ..CodeActionOptions::default()
            })),
            document_symbol_provider: Some(OneOf::Left(true)),
            execute_command_provider: Some(ExecuteCommandOptions {
                commands: vec![SUMMARY_COMMAND.to_string()],
                ..ExecuteCommandOptions::default()
            }),
            ..ServerCapabilities::default()
        },
        server_info: Some(ServerInfo {
            name: "arrayflow".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
    }
}

fn text<T: serde::Serialize>(v: T) -> Result<Reply, Stop> {
    serde_json::to_string(&v)
        .map(Reply::Text)
        .map_err(|e| Stop::Failed((ErrorCode::InternalError, e.to_string())))
}

fn json<T: serde::Serialize>(v: T) -> Result<Reply, Stop> {
    serde_json::to_value(v)
        .map(Reply::Json)
        .map_err(|e| Stop::Failed((ErrorCode::InternalError, e.to_string())))
}

impl Snapshot {
    /// The offset in the analysed text of a position in the document (they
    /// differ for a preprocessed C file: a line the preprocessor dropped,
    /// a `#define`, has no offset there and answers at the start).
    fn offset(&self, p: Position) -> Result<u32, Failure> {
        let o = self
            .index
            .offset(&self.text, p, self.enc)
            .map_err(|e| (ErrorCode::InvalidParams, e.to_string()))?;
        Ok(match &self.pre {
            Preprocessing::Done(pre) => pre.to_output(o).unwrap_or(0),
            _ => o,
        })
    }

    /// The document's range of a span of the analysed text; text from a
    /// header has no place in the document: its start.
    fn range(&self, span: Span) -> Range {
        let span = match &self.pre {
            Preprocessing::Done(pre) => pre.to_original(span).unwrap_or(Span::NONE),
            _ => span,
        };
        self.index.range(&self.text, span, self.enc)
    }

    /// Whether the analyses run on this document (it is not too large).
    fn analysed(&self) -> bool {
        self.text.len() <= self.config.max_analysis_bytes
    }
}

/// Answers one job on a snapshot, unless its questions were cancelled.
pub fn handle(s: &Snapshot, kind: &Kind, uri: &Uri) -> Cancellable<Result<Reply, Failure>> {
    match answer(s, kind, uri) {
        Ok(reply) => Ok(Ok(reply)),
        Err(Stop::Failed(f)) => Ok(Err(f)),
        Err(Stop::Cancelled(c)) => Err(c),
    }
}

fn answer(s: &Snapshot, kind: &Kind, uri: &Uri) -> Result<Reply, Stop> {
    let (a, file) = (&s.analysis, s.file);
    match kind {
        Kind::Diagnostics => text(PublishDiagnosticsParams::new(
            uri.clone(),
            diagnostics(s, uri)?,
            Some(s.version),
        )),
        Kind::Hover(p) => {
            let offset = s.offset(*p)?;
            if !s.analysed() {
                return json(None::<Hover>);
            }
            json(a.hover(file, offset)?.map(|(span, text)| Hover {
                contents: HoverContents::Markup(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: text,
                }),
                range: Some(s.range(span)),
            }))
        }
        Kind::Definition(p) => {
            let offset = s.offset(*p)?;
            if !s.analysed() {
                return json(Vec::<Location>::new());
            }
            let locs: Vec<Location> = (a.sources(file, offset)?.into_iter())
                .map(|span| Location::new(uri.clone(), s.range(span)))
                .collect();
            json(GotoDefinitionResponse::Array(locs))
        }
        Kind::CodeLens => {
            if !s.analysed() {
                return json(Vec::<CodeLens>::new());
            }
            let lenses: Vec<CodeLens> = (a.code_lenses(file)?.into_iter())
                .map(|(span, title)| CodeLens {
                    range: s.range(span),
                    command: Some(summary_command(title, uri)),
                    data: None,
                })
                .collect();
            json(lenses)
        }
        Kind::CodeAction(range) => {
            let apply = CodeAction {
                title: APPLY.to_string(),
                kind: Some(CodeActionKind::REFACTOR_REWRITE),
                data: Some(serde_json::json!({ "uri": uri.as_str() })),
                ..CodeAction::default()
            };
            let summary = CodeAction {
                title: "Show expansion summary".to_string(),
                kind: Some(CodeActionKind::SOURCE),
                command: Some(summary_command("Show expansion summary".to_string(), uri)),
                ..CodeAction::default()
            };
            let mut actions = vec![
                CodeActionOrCommand::CodeAction(apply),
                CodeActionOrCommand::CodeAction(summary),
            ];
            // On a loop that private copies make parallel for every
            // parameter value (a hint; at the analysed sizes only, the
            // remark is information and nothing is offered).
            let on_loop = s.analysed()
                && a.privatization_remarks(file)?.iter().any(|r| {
                    r.level == crate::db::Level::Hint && {
                        let l = s.range(r.span);
                        l.start <= range.end && range.start <= l.end
                    }
                });
            if on_loop {
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: APPLY_PRIVATIZATION.to_string(),
                    kind: Some(CodeActionKind::REFACTOR_REWRITE),
                    data: Some(serde_json::json!({ "uri": uri.as_str(), "privatize": true })),
                    ..CodeAction::default()
                }));
            }
            json(actions)
        }
        Kind::ResolveAction(action) => {
            if !s.analysed() {
                return Err(Stop::Failed((
                    ErrorCode::RequestFailed,
                    "the file is too large to analyse".to_string(),
                )));
            }
            let privatize = action
                .data
                .as_ref()
                .and_then(|d| d.get("privatize"))
                .is_some_and(|p| p == true);
            let (code, failed) = if privatize {
                (a.privatization(file)?, "cannot privatize")
            } else {
                (a.expansion(file)?, "cannot expand")
            };
            let code = code.map_err(|e| (ErrorCode::RequestFailed, format!("{failed}: {e}")))?;
            // Against the document's text, which the host's may not be (a C
            // file is analysed preprocessed).
            let change = crate::change::SourceChange::between(file, &s.text, &code);
            let at = |offset: u32| s.index.position(&s.text, offset, s.enc);
            let edits = (change.edits.into_iter())
                .map(|e| {
                    let range = Range::new(at(e.range.start), at(e.range.end));
                    OneOf::Left(TextEdit::new(range, e.text))
                })
                .collect();
            // Versioned, so a client applies it only to the text it was made from.
            let edit = TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier {
                    uri: uri.clone(),
                    version: Some(s.version),
                },
                edits,
            };
            let mut action = (**action).clone();
            action.edit = Some(WorkspaceEdit {
                document_changes: Some(DocumentChanges::Edits(vec![edit])),
                ..WorkspaceEdit::default()
            });
            json(action)
        }
        Kind::Symbols => {
            use crate::host::SymbolKind as Named;
            #[allow(deprecated)]
            let symbols: Vec<DocumentSymbol> = (a.symbols(file)?.into_iter())
                .map(|sym| DocumentSymbol {
                    name: sym.name,
                    detail: None,
                    kind: match sym.kind {
                        Named::Parameter => SymbolKind::CONSTANT,
                        Named::Array => SymbolKind::ARRAY,
                        Named::Statement => SymbolKind::FUNCTION,
                        Named::Condition => SymbolKind::BOOLEAN,
                    },
                    tags: None,
                    deprecated: None,
                    range: s.range(sym.span),
                    selection_range: s.range(sym.span),
                    children: None,
                })
                .collect();
            json(DocumentSymbolResponse::Nested(symbols))
        }
        Kind::Summary => {
            if !s.analysed() {
                return Ok(Reply::Show("The file is too large to analyse.".to_string()));
            }
            Ok(Reply::Show(a.expansion_summary(file)?))
        }
    }
}

fn summary_command(title: String, uri: &Uri) -> Command {
    Command {
        title,
        command: SUMMARY_COMMAND.to_string(),
        arguments: Some(vec![serde_json::Value::String(uri.as_str().to_string())]),
    }
}

/// Everything published for a document: the front end's errors and
/// warnings, analysis errors, then the remarks as information and hints.
fn diagnostics(s: &Snapshot, uri: &Uri) -> Cancellable<Vec<lsp_types::Diagnostic>> {
    let (a, file) = (&s.analysis, s.file);
    let mut out: Vec<lsp_types::Diagnostic> = (a.parse_diagnostics(file)?.iter())
        .map(|d| convert(s, uri, d))
        .collect();
    if let Some(program) = a.program(file)? {
        out.extend(unknown_params(s, program));
    }
    if let Preprocessing::Failed(why) = &s.pre {
        out.push(lsp_types::Diagnostic {
            range: Range::default(),
            severity: Some(DiagnosticSeverity::WARNING),
            code: Some(NumberOrString::String("W0302".to_string())),
            source: Some("arrayflow".to_string()),
            message: format!("the file is analysed as it is, not preprocessed: {why}"),
            ..lsp_types::Diagnostic::default()
        });
    }
    if !s.analysed() {
        out.push(lsp_types::Diagnostic {
            range: Range::default(),
            severity: Some(DiagnosticSeverity::INFORMATION),
            source: Some("arrayflow".to_string()),
            message: format!(
                "the file has {} bytes: over the analysis limit of {} \
                 (setting maxAnalysisBytes), so only the checks of the text run",
                s.text.len(),
                s.config.max_analysis_bytes
            ),
            ..lsp_types::Diagnostic::default()
        });
        return Ok(out);
    }
    out.extend((a.analysis_diagnostics(file)?.iter()).map(|d| convert(s, uri, d)));
    out.extend((a.rule_diagnostics(file)?.iter()).map(|d| convert(s, uri, d)));
    out.extend(a.remarks(file)?.into_iter().map(|r| lsp_types::Diagnostic {
        range: s.range(r.span),
        severity: Some(match r.level {
            Level::Information => DiagnosticSeverity::INFORMATION,
            Level::Hint => DiagnosticSeverity::HINT,
        }),
        source: Some("arrayflow".to_string()),
        message: r.message,
        ..lsp_types::Diagnostic::default()
    }));
    Ok(out)
}

fn convert(s: &Snapshot, uri: &Uri, d: &Diagnostic) -> lsp_types::Diagnostic {
    let primary = d.labels.iter().find(|l| l.primary).or(d.labels.first());
    let range = primary.map_or(Range::default(), |l| s.range(l.span));
    let mut message = d.message.clone();
    for n in &d.notes {
        message.push_str("\nnote: ");
        message.push_str(n);
    }
    let related: Vec<DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .filter(|l| !l.primary)
        .map(|l| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), s.range(l.span)),
            message: l.message.clone(),
        })
        .collect();
    lsp_types::Diagnostic {
        range,
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        source: Some("arrayflow".to_string()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..lsp_types::Diagnostic::default()
    }
}

/// W0301: names of the `params` setting this file does not declare. The
/// setting applies to every file the editor opens, so such a name is left
/// out of this file's analysis (`Doc::snapshot`) and said here, at the
/// file's first parameter (where a value would be declared), else at its
/// start.
fn unknown_params(s: &Snapshot, program: &crate::model::Program) -> Option<lsp_types::Diagnostic> {
    let unknown: Vec<String> = s
        .config
        .analysis
        .params
        .iter()
        .filter(|(n, _)| program.param(n).is_none())
        .map(|(n, v)| format!("`{n}` = {v}"))
        .collect();
    if unknown.is_empty() {
        return None;
    }
    let declared: Vec<&str> = program.params.iter().map(|p| p.name.as_str()).collect();
    let theirs = if declared.is_empty() {
        "it has no parameters".to_string()
    } else {
        format!("its parameters: {}", declared.join(", "))
    };
    let range = program
        .params
        .first()
        .map_or(Range::default(), |p| s.range(p.span));
    Some(lsp_types::Diagnostic {
        range,
        severity: Some(DiagnosticSeverity::INFORMATION),
        code: Some(NumberOrString::String("W0301".to_string())),
        source: Some("arrayflow".to_string()),
        message: format!(
            "the editor's `params` setting gives {}, which this file does not declare ({theirs}): \
             ignored for this file",
            unknown.join(", ")
        ),
        ..lsp_types::Diagnostic::default()
    })
}
