//! A transformation's result as edits to the file it came from, the way an
//! editor applies them (rust-analyzer's `SourceChange`): the lines that
//! differ, each run of them one [`TextEdit`], in order of position. The
//! command line writes the whole new text; the language server sends
//! these edits, so a client keeps its cursor, folds and marks wherever
//! the text stays.

use similar::{Algorithm, DiffOp, TextDiff};
use std::time::{Duration, Instant};

/// One replacement: the bytes `range` of the old text become `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextEdit {
    /// Byte offsets in the old text, at line starts.
    pub range: std::ops::Range<u32>,
    /// What replaces them: whole lines.
    pub text: String,
}

/// Edits to one file (a [`crate::host::FileId`] of the host that answered):
/// sorted, none overlapping another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceChange<F> {
    /// The file edited.
    pub file: F,
    /// The edits, first in the text first.
    pub edits: Vec<TextEdit>,
}

impl<F> SourceChange<F> {
    /// The edits that turn `old` into `new`, line by line. A diff that
    /// takes longer than a tenth of a second (a rewrite of a huge file)
    /// gives larger edits, never wrong ones.
    pub fn between(file: F, old: &str, new: &str) -> SourceChange<F> {
        let diff = TextDiff::configure()
            .algorithm(Algorithm::Myers)
            .deadline(Instant::now() + Duration::from_millis(100))
            .diff_lines(old, new);
        let starts = |text: &str| -> Vec<usize> {
            let mut at = vec![0];
            at.extend(text.match_indices('\n').map(|(i, _)| i + 1));
            if at.last() != Some(&text.len()) {
                at.push(text.len());
            }
            at
        };
        let (old_at, new_at) = (starts(old), starts(new));
        let mut edits: Vec<TextEdit> = Vec::new();
        for op in diff.ops() {
            if let DiffOp::Equal { .. } = op {
                continue;
            }
            let (o, n) = (op.old_range(), op.new_range());
            let range = old_at[o.start] as u32..old_at[o.end] as u32;
            let text = &new[new_at[n.start]..new_at[n.end]];
            // Neighbouring changes are one edit.
            match edits.last_mut() {
                Some(last) if last.range.end == range.start => {
                    last.range.end = range.end;
                    last.text.push_str(text);
                }
                _ => edits.push(TextEdit {
                    range,
                    text: text.to_string(),
                }),
            }
        }
        SourceChange { file, edits }
    }

    /// `old` with the edits made: the new text.
    pub fn apply(&self, old: &str) -> String {
        let mut out = String::with_capacity(old.len());
        let mut at = 0;
        for e in &self.edits {
            out.push_str(&old[at..e.range.start as usize]);
            out.push_str(&e.text);
            at = e.range.end as usize;
        }
        out.push_str(&old[at..]);
        out
    }
}
