//! Diagnostics: what every layer of arrayflow reports through.
//!
//! A [`Diagnostic`] has a severity, a stable code (`E0101`, `W0001`; listed in
//! docs/language.md), a message, labelled spans and notes. Spans point into a
//! file of a [`SourceFiles`] set, which renders diagnostics with
//! `codespan-reporting` (text) or as JSON:
//! `{"diagnostics":[{"severity","message","file","line","column","end_line","end_column"}]}`
//! with 1-based lines and columns (columns count characters).

use crate::model::Span;
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{Files, SimpleFiles};
use codespan_reporting::term;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

/// A file in a [`SourceFiles`] set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct FileId(pub u32);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub file: FileId,
    pub span: Span,
    pub message: String,
    /// The primary label says where the problem is; secondary ones give context.
    pub primary: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A stable code such as `E0101`.
    pub code: &'static str,
    pub message: String,
    /// The first label is the primary one (when there are labels at all).
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn warning(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message)
        }
    }

    /// Adds the label that says where the problem is.
    pub fn primary(mut self, file: FileId, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            file,
            span,
            message: message.into(),
            primary: true,
        });
        self
    }

    /// Adds a label that gives context.
    pub fn secondary(mut self, file: FileId, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            file,
            span,
            message: message.into(),
            primary: false,
        });
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    fn main_label(&self) -> Option<&Label> {
        self.labels
            .iter()
            .find(|l| l.primary)
            .or(self.labels.first())
    }
}

/// Lines longer than this are not shown in snippets.
pub const MAX_SNIPPET_LINE: usize = 1000;

/// Whether any of these diagnostics is an error.
pub fn has_errors(diagnostics: &[Diagnostic]) -> bool {
    diagnostics.iter().any(Diagnostic::is_error)
}

/// The source files diagnostics point into.
#[derive(Default)]
pub struct SourceFiles {
    files: SimpleFiles<String, String>,
    count: u32,
    /// Files whose spans point into a text derived from what is shown
    /// (a preprocessed C file): by file, how spans map back.
    mapped: Vec<(u32, Mapped)>,
}

/// Maps a span of the analysed text to the shown file, or `None` when it
/// has no place there (then it is shown in the analysed text, the file
/// after this one).
pub type SpanMap = Box<dyn Fn(Span) -> Option<Span>>;

struct Mapped {
    map: SpanMap,
    note: String,
}

/// One diagnostic in the JSON output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JsonDiagnostic {
    pub severity: Severity,
    pub message: String,
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
}

impl SourceFiles {
    pub fn new() -> SourceFiles {
        SourceFiles::default()
    }

    /// Adds a file; `name` is what diagnostics call it (usually its path).
    pub fn add(&mut self, name: impl Into<String>, source: impl Into<String>) -> FileId {
        self.files.add(name.into(), source.into());
        self.count += 1;
        FileId(self.count - 1)
    }

    /// Adds a file shown as `source` whose diagnostics' spans point into
    /// `analysed`, a text derived from it; `map` takes them back, and what
    /// it cannot is shown in `analysed` (named `analysed_name`) with `note`.
    pub fn add_mapped(
        &mut self,
        name: impl Into<String>,
        source: impl Into<String>,
        analysed_name: impl Into<String>,
        analysed: impl Into<String>,
        map: SpanMap,
        note: impl Into<String>,
    ) -> FileId {
        let id = self.add(name, source);
        self.add(analysed_name, analysed);
        self.mapped.push((
            id.0,
            Mapped {
                map,
                note: note.into(),
            },
        ));
        id
    }

    /// The codespan file and byte range a label is shown at, and the note
    /// to add when it could not be mapped to its file.
    fn place(&self, l: &Label) -> (usize, std::ops::Range<usize>, Option<&str>) {
        let mut id = l.file.0 as usize;
        let mut span = l.span;
        let mut note = None;
        if let Some((_, m)) = self.mapped.iter().find(|(f, _)| *f == l.file.0) {
            match (m.map)(span) {
                Some(s) => span = s,
                None => {
                    id += 1;
                    note = Some(m.note.as_str());
                }
            }
        }
        let len = self.files.get(id).map_or(0, |f| f.source().len());
        (
            id,
            (span.start as usize).min(len)..(span.end as usize).min(len),
            note,
        )
    }

    pub fn name(&self, file: FileId) -> &str {
        self.files
            .get(file.0 as usize)
            .map_or("<unknown>", |f| f.name().as_str())
    }

    pub fn source(&self, file: FileId) -> &str {
        self.files
            .get(file.0 as usize)
            .map_or("", |f| f.source().as_str())
    }

    /// 1-based line and column (in characters) of a byte offset, clamped to
    /// the file.
    pub fn location(&self, file: FileId, byte: usize) -> (usize, usize) {
        let id = file.0 as usize;
        let byte = byte.min(self.source(file).len());
        match self.files.location(id, byte) {
            Ok(l) => (l.line_number, l.column_number),
            Err(_) => (1, 1),
        }
    }

    /// The 1-based line a span starts on, in the file a diagnostic would
    /// show it in (a C file's line, not its preprocessed text's).
    pub fn line_of(&self, file: FileId, span: Span) -> usize {
        let (id, range, _) = self.place(&Label {
            file,
            span,
            message: String::new(),
            primary: true,
        });
        match self.files.location(id, range.start) {
            Ok(l) => l.line_number,
            Err(_) => 1,
        }
    }

    /// Renders one diagnostic as text with source snippets, without colours.
    /// A label on a very long line (minified or generated input) is shown
    /// without its snippet, so one diagnostic never prints megabytes.
    pub fn render(&self, diagnostic: &Diagnostic) -> String {
        let mut config = term::Config::default();
        if diagnostic
            .labels
            .iter()
            .any(|l| self.line_len(l) > MAX_SNIPPET_LINE)
        {
            config.display_style = term::DisplayStyle::Medium;
        }
        let d = self.to_codespan(diagnostic);
        term::emit_into_string(&config, &self.files, &d).unwrap_or_else(|e| {
            format!(
                "{}[{}]: {} (could not show the source: {e})\n",
                severity_word(diagnostic.severity),
                diagnostic.code,
                diagnostic.message
            )
        })
    }

    /// Renders every diagnostic, separated as codespan-reporting separates them.
    pub fn render_all(&self, diagnostics: &[Diagnostic]) -> String {
        diagnostics.iter().map(|d| self.render(d)).collect()
    }

    /// The length of the longest line a label touches.
    fn line_len(&self, l: &Label) -> usize {
        let (id, range, _) = self.place(l);
        let line = |byte: usize| {
            self.files
                .line_index(id, byte)
                .and_then(|i| self.files.line_range(id, i))
                .map_or(0, |r| r.len())
        };
        line(range.start).max(line(range.end))
    }

    pub fn to_json_diagnostic(&self, d: &Diagnostic) -> JsonDiagnostic {
        let (file, (line, column), (end_line, end_column)) = match d.main_label() {
            Some(l) => {
                let (id, range, _) = self.place(l);
                let f = FileId(id as u32);
                (
                    self.name(f).to_string(),
                    self.location(f, range.start),
                    self.location(f, range.end),
                )
            }
            None => (String::new(), (1, 1), (1, 1)),
        };
        JsonDiagnostic {
            severity: d.severity,
            message: d.message.clone(),
            file,
            line,
            column,
            end_line,
            end_column,
        }
    }

    /// `{"diagnostics":[...]}`, the format docs/language.md documents.
    pub fn to_json(&self, diagnostics: &[Diagnostic]) -> String {
        #[derive(Serialize)]
        struct Out {
            diagnostics: Vec<JsonDiagnostic>,
        }
        let out = Out {
            diagnostics: diagnostics
                .iter()
                .map(|d| self.to_json_diagnostic(d))
                .collect(),
        };
        serde_json::to_string(&out).unwrap_or_else(|_| "{\"diagnostics\":[]}".to_string())
    }

    fn to_codespan(&self, d: &Diagnostic) -> cs::Diagnostic<usize> {
        let severity = match d.severity {
            Severity::Error => cs::Severity::Error,
            Severity::Warning => cs::Severity::Warning,
        };
        let mut notes = d.notes.clone();
        let labels = d
            .labels
            .iter()
            .map(|l| {
                let style = if l.primary {
                    cs::LabelStyle::Primary
                } else {
                    cs::LabelStyle::Secondary
                };
                let (id, range, note) = self.place(l);
                if let Some(n) = note {
                    if !notes.iter().any(|x| x == n) {
                        notes.push(n.to_string());
                    }
                }
                cs::Label::new(style, id, range).with_message(&l.message)
            })
            .collect();
        cs::Diagnostic::new(severity)
            .with_code(d.code)
            .with_message(&d.message)
            .with_labels(labels)
            .with_notes(notes)
    }
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// Diagnostics that point into another file (the database's single `FILE`,
/// say) pointing into `file` instead.
pub fn in_file(diags: &[Diagnostic], file: FileId) -> Vec<Diagnostic> {
    let mut diags = diags.to_vec();
    for d in &mut diags {
        for l in &mut d.labels {
            l.file = file;
        }
    }
    diags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_positions_are_one_based_and_count_characters() {
        let mut files = SourceFiles::new();
        let f = files.add("a.loop", "x = 1;\n  ∈y = 2;\n");
        // `y` is at byte 12 (`∈` takes 3 bytes) and character column 4 of line 2.
        let d = Diagnostic::error("E0101", "undeclared").primary(f, Span::new(12, 13), "here");
        let j = files.to_json_diagnostic(&d);
        assert_eq!((j.line, j.column, j.end_line, j.end_column), (2, 4, 2, 5));
        assert_eq!(j.file, "a.loop");
        let text = files.to_json(&[d]);
        assert!(text.starts_with("{\"diagnostics\":[{\"severity\":\"error\""));
    }

    #[test]
    fn rendering_names_file_line_and_column() {
        let mut files = SourceFiles::new();
        let f = files.add("b.loop", "real x;\nx = y;\n");
        let d = Diagnostic::error("E0101", "`y` is not declared").primary(
            f,
            Span::new(12, 13),
            "not declared",
        );
        let text = files.render(&d);
        assert!(text.contains("error[E0101]: `y` is not declared"), "{text}");
        assert!(text.contains("b.loop:2:5"), "{text}");
    }

    #[test]
    fn very_long_lines_are_not_printed() {
        let mut files = SourceFiles::new();
        let source = format!("real x;\nx = {}y;\n", "1 + ".repeat(100_000));
        let f = files.add("c.loop", source.clone());
        let at = source.find('y').unwrap();
        let d = Diagnostic::error("E0101", "`y` is not declared").primary(
            f,
            Span::new(at, at + 1),
            "not declared",
        );
        let text = files.render(&d);
        assert!(text.len() < 500, "{} bytes", text.len());
        assert!(text.contains("c.loop:2:400005"), "{text}");
    }
}
