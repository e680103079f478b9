//! Running the system C preprocessor on a C file before it is parsed
//! (issue 21): PolyBench declares its arrays through macros from
//! `polybench.h` (`POLYBENCH_2D(C, NI, NJ, ni, nj)`), which only a real
//! preprocessor expands. The front end itself knows object-like `#define`s
//! only, and keeps exact source positions; so the preprocessor runs when
//! the file includes a header that is not the C library's (`auto`), or
//! always, or never.

use std::path::Path;
use std::process::Command;

/// When to preprocess.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
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
        Mode::Auto => !foreign_includes(source).is_empty(),
    }
}

/// `cc -E -P -I <the file's directory> <-I ...> <-D ...> FILE`: the
/// preprocessed text, or why not (with what to do). `$CC` names the
/// compiler when set.
pub fn run(path: &Path, o: &Options) -> Result<String, String> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    // `gemm.c` alone has the parent "": the current directory.
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut cmd = Command::new(&cc);
    cmd.args(["-E", "-P", "-I"]).arg(dir);
    for i in &o.include {
        cmd.arg("-I").arg(i);
    }
    for d in &o.define {
        cmd.arg("-D").arg(d);
    }
    let out = cmd.arg(path).output().map_err(|e| {
        format!(
            "the C preprocessor `{cc}` could not be run ({e}); install a C compiler, set CC, \
             or preprocess the file yourself (`cc -E -P -I DIR FILE > out.c`) and analyse \
             that, or pass `--preprocess never` to parse the file as it is"
        )
    })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first: Vec<&str> = err.lines().take(6).collect();
        return Err(format!(
            "the C preprocessor `{cc} -E` failed on the file (give header directories with \
             `-I DIR` and macros with `-D NAME=VALUE`, or pass `--preprocess never`):\n{}",
            first.join("\n")
        ));
    }
    String::from_utf8(out.stdout).map_err(|_| format!("the output of `{cc} -E` is not UTF-8"))
}
