//! Running the system C preprocessor on a C file before it is parsed:
//! PolyBench declares its arrays through macros from
//! `polybench.h` (`POLYBENCH_2D(C, NI, NJ, ni, nj)`), which only a real
//! preprocessor expands. The front end itself knows object-like `#define`s
//! only, and keeps exact source positions; so the preprocessor runs when
//! the file includes a header that is not the C library's (`auto`), or
//! always, or never.

use crate::model::Span;
use std::path::Path;
use std::process::Command;

/// When to preprocess.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Mode {
    /// When the file includes a header that is not the C library's.
    #[default]
    Auto,
    Always,
    Never,
}

/// The preprocessor's options, as a compiler takes them.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub mode: Mode,
    /// `-I DIR`, searched after the file's own directory.
    pub include: Vec<String>,
    /// `-D NAME` or `-D NAME=VALUE`.
    pub define: Vec<String>,
}

/// The C library's headers: including only these needs no preprocessing.
const LIBRARY: &[&str] = &[
    "assert.h",
    "complex.h",
    "ctype.h",
    "errno.h",
    "float.h",
    "inttypes.h",
    "limits.h",
    "math.h",
    "omp.h",
    "stdbool.h",
    "stddef.h",
    "stdint.h",
    "stdio.h",
    "stdlib.h",
    "string.h",
    "time.h",
    "unistd.h",
];

/// The headers a file includes that are not the C library's.
pub fn foreign_includes(source: &str) -> Vec<&str> {
    source
        .lines()
        .filter_map(|l| {
            let l = l.trim_start().strip_prefix('#')?.trim_start();
            let rest = l.strip_prefix("include")?.trim();
            let (open, close) = match rest.chars().next()? {
                '<' => ('<', '>'),
                '"' => ('"', '"'),
                _ => return None,
            };
            let name = rest.strip_prefix(open)?.split(close).next()?;
            (!LIBRARY.contains(&name)).then_some(name)
        })
        .collect()
}

/// Whether `source` is to be preprocessed under `o`.
pub fn wanted(source: &str, o: &Options) -> bool {
    match o.mode {
        Mode::Always => true,
        Mode::Never => false,
        Mode::Auto => !foreign_includes(source).is_empty() || !macro_calls(source).is_empty(),
    }
}

/// The macros `source` defines and calls like a function: function-like
/// ones (`#define MIN(a, b) ...`, `MIN(x, y)`) and object-like ones whose
/// body is a name (`#define ABS fabsf`, `ABS(x)`). The front end expands
/// neither, so a file that calls one is preprocessed (`auto`).
pub fn macro_calls(source: &str) -> Vec<&str> {
    let mut macros = Vec::new();
    for l in source.lines() {
        let Some(rest) = l.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("define") else {
            continue;
        };
        let rest = rest.trim_start();
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (name, body) = rest.split_at(end);
        let body_is_name = {
            let b = body.trim();
            !b.is_empty()
                && b.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !b.starts_with(|c: char| c.is_ascii_digit())
        };
        if !name.is_empty() && (body.starts_with('(') || body_is_name) {
            macros.push(name);
        }
    }
    macros.retain(|m| {
        source.lines().any(|l| {
            !l.trim_start().starts_with('#')
                && l.match_indices(m).any(|(k, _)| {
                    let before = l[..k].chars().next_back();
                    let after = l[k + m.len()..].trim_start();
                    !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                        && after.starts_with('(')
                })
        })
    });
    macros
}

/// `cc -E -I <the file's directory> <-I ...> <-D ...> FILE`: the
/// preprocessed text with where each line came from, or why not (with what
/// to do). `$CC` names the compiler when set.
/// `original` is the file's text, which spans map back into.
pub fn run(path: &Path, original: String, o: &Options) -> Result<Preprocessed, Failure> {
    let out = command(path, o).arg(path).output();
    finish(out, original)
}

/// [`run`] on `text`, the contents of `path` that may differ from the disk
/// (an editor's buffer): the preprocessor reads it on its standard input.
pub fn run_text(path: &Path, text: &str, o: &Options) -> Result<Preprocessed, Failure> {
    use std::io::Write;
    use std::process::Stdio;
    let child = command(path, o)
        .args(["-x", "c", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let out = child.and_then(|mut c| {
        // A writer thread: the preprocessor's output may fill its pipe
        // before it has read all of its input.
        let mut stdin = c.stdin.take();
        let input = text.to_string();
        let writer = std::thread::spawn(move || {
            if let Some(s) = stdin.as_mut() {
                let _ = s.write_all(input.as_bytes());
            }
        });
        let out = c.wait_with_output();
        let _ = writer.join();
        out
    });
    finish(out, text.to_string())
}

fn compiler() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

fn command(path: &Path, o: &Options) -> Command {
    // `gemm.c` alone has the parent "": the current directory.
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut cmd = Command::new(compiler());
    cmd.args(["-E", "-I"]).arg(dir);
    for i in &o.include {
        cmd.arg("-I").arg(i);
    }
    for d in &o.define {
        cmd.arg("-D").arg(d);
    }
    cmd
}

/// Why the preprocessor gave no text.
#[derive(Clone, Debug)]
pub enum Failure {
    /// It could not be started: (the compiler, the error).
    Missing(String, String),
    /// It failed: (the compiler, the first lines of its errors).
    Failed(String, String),
    NotUtf8(String),
}

impl Failure {
    /// Said to a command-line user: with the options to give.
    pub fn for_command(&self) -> String {
        match self {
            Failure::Missing(cc, e) => format!(
                "the C preprocessor `{cc}` could not be run ({e}); install a C compiler, set CC, \
                 or preprocess the file yourself (`cc -E -P -I DIR FILE > out.c`) and analyse \
                 that, or pass `--preprocess never` to parse the file as it is"
            ),
            Failure::Failed(cc, err) => format!(
                "the C preprocessor `{cc} -E` failed on the file (give header directories with \
                 `-I DIR` and macros with `-D NAME=VALUE`, or pass `--preprocess never`):\n{err}"
            ),
            Failure::NotUtf8(cc) => format!("the output of `{cc} -E` is not UTF-8"),
        }
    }

    /// Said in an editor, which analyses the buffer as it is instead.
    pub fn for_editor(&self) -> String {
        match self {
            Failure::Missing(cc, e) => format!(
                "the C preprocessor `{cc}` could not be run ({e}): install a C compiler \
                 or set CC in the editor's environment"
            ),
            Failure::Failed(cc, err) => format!(
                "`{cc} -E` failed on the buffer (headers are searched beside the file):\n{err}"
            ),
            Failure::NotUtf8(cc) => format!("the output of `{cc} -E` is not UTF-8"),
        }
    }
}

fn finish(
    out: std::io::Result<std::process::Output>,
    original: String,
) -> Result<Preprocessed, Failure> {
    let cc = compiler();
    let out = out.map_err(|e| Failure::Missing(cc.clone(), e.to_string()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first: Vec<&str> = err.lines().take(6).collect();
        return Err(Failure::Failed(cc, first.join("\n")));
    }
    let text = String::from_utf8(out.stdout).map_err(|_| Failure::NotUtf8(cc))?;
    Ok(Preprocessed::new(&text, original))
}

/// A preprocessed file: the text the front end parses (the preprocessor's
/// output, its line markers `# N "file"` blanked so that it stays C), and,
/// read from those markers, the line of the original file each output line
/// came from. Spans map back to the original file where the text is the
/// file's own: exactly when the line came through unchanged (up to its
/// indentation), to the same text on the line when a macro changed the line
/// elsewhere, else to the whole line; text from headers or the command line
/// has no place in the file.
#[derive(Clone, Debug)]
pub struct Preprocessed {
    pub text: String,
    pub original: String,
    /// Per output line: the 0-based line of the original it came from.
    origin: Vec<Option<u32>>,
    out_starts: Vec<u32>,
    orig_starts: Vec<u32>,
}

fn line_starts(text: &str) -> Vec<u32> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(k, _)| k as u32 + 1))
        .collect()
}

/// `# 12 "file.c" 1 3` → (12, "file.c").
fn marker(line: &str) -> Option<(u32, &str)> {
    let rest = line.strip_prefix("# ")?;
    let (n, rest) = rest.split_once(' ')?;
    let n: u32 = n.parse().ok()?;
    let name = rest.strip_prefix('"')?;
    let end = name.rfind('"')?;
    Some((n, &name[..end]))
}

impl Preprocessed {
    /// Reads the preprocessor's `output` (with line markers); the first
    /// marker names the main file.
    pub fn new(output: &str, original: String) -> Preprocessed {
        let mut text = String::with_capacity(output.len());
        let mut origin = Vec::new();
        let mut main: Option<String> = None;
        // (in the main file, next line number, 1-based)
        let mut at: (bool, u32) = (false, 1);
        for line in output.split_inclusive('\n') {
            if let Some((n, name)) = marker(line.trim_end_matches(['\n', '\r'])) {
                let main = main.get_or_insert_with(|| name.to_string());
                at = (name == main.as_str(), n);
                text.push('\n');
                origin.push(None);
                continue;
            }
            text.push_str(line);
            origin.push((at.0 && at.1 >= 1).then(|| at.1 - 1));
            at.1 += 1;
        }
        Preprocessed {
            out_starts: line_starts(&text),
            orig_starts: line_starts(&original),
            text,
            original,
            origin,
        }
    }

    fn line(starts: &[u32], text: &str, k: usize) -> (u32, u32) {
        let start = starts[k];
        let end = starts
            .get(k + 1)
            .map_or(text.len() as u32, |&e| e - 1)
            .max(start);
        (start, end)
    }

    /// The original line (its byte range) an output offset came from, with
    /// the output line's range.
    fn lines_of(&self, offset: u32) -> Option<((u32, u32), (u32, u32))> {
        let k = self
            .out_starts
            .partition_point(|&s| s <= offset)
            .checked_sub(1)?;
        let orig = (*self.origin.get(k)?)? as usize;
        if orig >= self.orig_starts.len() {
            return None;
        }
        Some((
            Self::line(&self.out_starts, &self.text, k),
            Self::line(&self.orig_starts, &self.original, orig),
        ))
    }

    /// The span of the original file that `span` of [`Self::text`] stands
    /// for, or `None` for text from a header or the command line.
    pub fn to_original(&self, span: Span) -> Option<Span> {
        // No position (a diagnostic about the whole file): the file's start.
        // (Spans compare equal whatever their ends: compare the ends.)
        if (span.start, span.end) == (0, 0) {
            return Some(span);
        }
        let (out, orig) = self.lines_of(span.start)?;
        let o = &self.text[out.0 as usize..out.1 as usize];
        let g = &self.original[orig.0 as usize..orig.1 as usize];
        let (oi, gi) = (indent(o), indent(g));
        let col = span.start - out.0;
        if o[oi..] == g[gi..] && col as usize >= oi {
            let start = orig.0 + gi as u32 + (col - oi as u32);
            let end = match self.lines_of(span.end.max(span.start + 1) - 1) {
                // Ends on an unchanged line: exact too.
                Some((eo, eg)) => {
                    let (o2, g2) = (
                        &self.text[eo.0 as usize..eo.1 as usize],
                        &self.original[eg.0 as usize..eg.1 as usize],
                    );
                    let (oi2, gi2) = (indent(o2), indent(g2));
                    let c = span.end.saturating_sub(eo.0);
                    if o2[oi2..] == g2[gi2..] && c as usize >= oi2 {
                        eg.0 + gi2 as u32 + (c - oi2 as u32)
                    } else {
                        eg.1
                    }
                }
                None => orig.1,
            };
            return Some(Span::new(start as usize, end.max(start) as usize));
        }
        // A changed line: the same text on the original line, else the line.
        let end = span.end.min(out.1).max(span.start);
        let piece = &self.text[span.start as usize..end as usize];
        if !piece.trim().is_empty() {
            if let Some(k) = g.find(piece) {
                let s = orig.0 as usize + k;
                return Some(Span::new(s, s + piece.len()));
            }
        }
        Some(Span::new(orig.0 as usize + gi, orig.1 as usize))
    }

    /// The offset of [`Self::text`] at `offset` of the original, for a
    /// position an editor asks about: exact on a line that came through
    /// unchanged, else the start of the line's text.
    pub fn to_output(&self, offset: u32) -> Option<u32> {
        let g = self
            .orig_starts
            .partition_point(|&s| s <= offset)
            .checked_sub(1)? as u32;
        let k = self.origin.iter().position(|&o| o == Some(g))?;
        let out = Self::line(&self.out_starts, &self.text, k);
        let orig = Self::line(&self.orig_starts, &self.original, g as usize);
        let o = &self.text[out.0 as usize..out.1 as usize];
        let t = &self.original[orig.0 as usize..orig.1 as usize];
        let (oi, gi) = (indent(o), indent(t));
        let col = offset - orig.0;
        if o[oi..] == t[gi..] && col as usize >= gi {
            return Some(out.0 + oi as u32 + (col - gi as u32));
        }
        Some(out.0 + oi as u32)
    }
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cc -E` output written by hand: a header's line, then the file's
    /// lines 3 and 4 (line 4 re-indented), then line 6 with a macro expanded.
    const OUT: &str = "# 0 \"k.c\"\n# 1 \"k.h\" 1\nint h;\n# 3 \"k.c\" 2\nint a;\n  x[i] = 1;\n\n# 6 \"k.c\"\ny[ 20 + 0] = z;\n";
    const ORIG: &str = "#include \"k.h\"\n#define N 20\nint a;\n\tx[i] = 1;\n\ny[N] = z;\n";

    fn span_of(text: &str, needle: &str) -> Span {
        let s = text.find(needle).unwrap();
        Span::new(s, s + needle.len())
    }

    #[test]
    fn spans_map_back_to_the_files_lines() {
        let p = Preprocessed::new(OUT, ORIG.to_string());
        // Markers are blanked, so the output is still C with the same lines.
        assert!(!p.text.contains('#'));
        assert_eq!(p.text.lines().count(), OUT.lines().count());
        let back = |needle: &str| {
            p.to_original(span_of(&p.text, needle))
                .map(|s| &ORIG[s.start as usize..s.end as usize])
        };
        assert_eq!(back("int h"), None);
        let none = p.to_original(Span::NONE).map(|s| (s.start, s.end));
        assert_eq!(none, Some((0, 0)));
        assert_eq!(back("int a;"), Some("int a;"));
        // Re-indented: exact after the indentation.
        assert_eq!(back("x[i]"), Some("x[i]"));
        assert_eq!(back("= 1"), Some("= 1"));
        // A changed line: the same text where it is on the line, else the line.
        assert_eq!(back("z"), Some("z"));
        assert_eq!(back("20 + 0"), Some("y[N] = z;"));
        // And positions the other way (an editor's request).
        let at = ORIG.find("x[i]").unwrap() as u32 + 2;
        let o = p.to_output(at).unwrap() as usize;
        assert_eq!(&p.text[o..o + 2], "i]");
        let n = ORIG.find("N]").unwrap() as u32;
        let o = p.to_output(n).unwrap() as usize;
        assert!(p.text[o..].starts_with("y[ 20"));
        // `#define N 20` has no output line.
        assert_eq!(p.to_output(ORIG.find("define").unwrap() as u32), None);
    }

    #[test]
    fn macros_called_like_functions() {
        let src = "#define N 8\n#define ABS fabsf\n#define MIN(a, b) ((a) < (b) ? (a) : (b))\n\
                   #define SQ(x) ((x) * (x))\nx = ABS(y) + MIN(1, 2) + N;\nNABS(2);\n";
        assert_eq!(super::macro_calls(src), ["ABS", "MIN"]);
        assert!(super::macro_calls("#define N 8\nA[N] = (N);\n").is_empty());
    }
}
