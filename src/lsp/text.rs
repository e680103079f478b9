//! Positions: LSP's (line, character in UTF-16 or UTF-8 code units) against
//! byte offsets, and incremental edits of a document's text.

use lsp_types::{Position, Range};

/// How the client counts characters in a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

/// The start of every line of a text.
pub struct LineIndex {
    starts: Vec<u32>,
    len: u32,
}

/// A position that is not in the document.
#[derive(Debug, PartialEq, Eq)]
pub struct OutOfRange(pub Position);

impl std::fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "position {}:{} is outside the document",
            self.0.line, self.0.character
        )
    }
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(k, _)| k as u32 + 1),
        );
        LineIndex {
            starts,
            len: text.len() as u32,
        }
    }

    /// The byte offset of a position; a character past the end of its line
    /// is an error, as is a line past the last.
    pub fn offset(&self, text: &str, p: Position, enc: Encoding) -> Result<u32, OutOfRange> {
        let line = p.line as usize;
        let start = *self.starts.get(line).ok_or(OutOfRange(p))? as usize;
        let end = self
            .starts
            .get(line + 1)
            .map_or(self.len as usize, |&e| e as usize);
        let content = text.get(start..end).ok_or(OutOfRange(p))?;
        let content = content.trim_end_matches('\n').trim_end_matches('\r');
        let want = p.character as usize;
        let mut units = 0;
        for (k, c) in content.char_indices() {
            let next = units
                + match enc {
                    Encoding::Utf8 => c.len_utf8(),
                    Encoding::Utf16 => c.len_utf16(),
                };
            // At the character, or inside it (half a surrogate pair): its start.
            if units == want || next > want {
                return Ok((start + k) as u32);
            }
            units = next;
        }
        if units == want {
            Ok((start + content.len()) as u32)
        } else {
            Err(OutOfRange(p))
        }
    }

    /// The position of a byte offset (clamped to the text).
    pub fn position(&self, text: &str, offset: u32, enc: Encoding) -> Position {
        let offset = offset.min(self.len);
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line] as usize;
        let mut end = offset as usize;
        while end > start && !text.is_char_boundary(end) {
            end -= 1;
        }
        let prefix = text.get(start..end).unwrap_or("");
        let character = match enc {
            Encoding::Utf8 => prefix.len(),
            Encoding::Utf16 => prefix.chars().map(char::len_utf16).sum(),
        };
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, text: &str, span: crate::model::Span, enc: Encoding) -> Range {
        Range::new(
            self.position(text, span.start, enc),
            self.position(text, span.end, enc),
        )
    }
}

/// Applies one content change: the whole text when `range` is `None`.
/// A range outside the text is an error and changes nothing.
pub fn apply(
    text: &mut String,
    range: Option<Range>,
    new: &str,
    enc: Encoding,
) -> Result<(), OutOfRange> {
    let Some(range) = range else {
        text.clear();
        text.push_str(new);
        return Ok(());
    };
    let index = LineIndex::new(text);
    let start = index.offset(text, range.start, enc)? as usize;
    let end = index.offset(text, range.end, enc)? as usize;
    if start > end {
        return Err(OutOfRange(range.start));
    }
    text.replace_range(start..end, new);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_and_utf8_columns() {
        // `∈` is 3 bytes and one UTF-16 unit; `𝄞` 4 bytes and two units.
        let text = "ab\n∈x𝄞y\n";
        let ix = LineIndex::new(text);
        let p = |l, c| Position::new(l, c);
        assert_eq!(ix.offset(text, p(1, 1), Encoding::Utf16), Ok(6));
        assert_eq!(ix.offset(text, p(1, 2), Encoding::Utf16), Ok(7));
        assert_eq!(ix.offset(text, p(1, 4), Encoding::Utf16), Ok(11));
        assert_eq!(ix.offset(text, p(1, 4), Encoding::Utf8), Ok(7));
        assert_eq!(ix.offset(text, p(1, 5), Encoding::Utf16), Ok(12));
        assert!(ix.offset(text, p(1, 6), Encoding::Utf16).is_err());
        assert!(ix.offset(text, p(7, 0), Encoding::Utf16).is_err());
        assert_eq!(ix.offset(text, p(2, 0), Encoding::Utf16), Ok(13));
        assert_eq!(ix.position(text, 11, Encoding::Utf16), p(1, 4));
        assert_eq!(ix.position(text, 11, Encoding::Utf8), p(1, 8));
    }

    #[test]
    fn incremental_edits() {
        let mut t = "for i\nend\n".to_string();
        let r = Range::new(Position::new(0, 4), Position::new(0, 5));
        apply(&mut t, Some(r), "j = 1", Encoding::Utf16).unwrap();
        assert_eq!(t, "for j = 1\nend\n");
        let bad = Range::new(Position::new(5, 0), Position::new(5, 1));
        assert!(apply(&mut t, Some(bad), "x", Encoding::Utf16).is_err());
        assert_eq!(t, "for j = 1\nend\n");
        apply(&mut t, None, "new", Encoding::Utf16).unwrap();
        assert_eq!(t, "new");
    }
}
