//! For the tests that build emitted C with gcc and run it: where a function
//! is defined, the file with it replaced by emitted C, the build with its
//! warnings, and a run's output at a number of OpenMP threads.

use std::path::Path;
use std::process::Command;

/// Byte range of the definition of `name` in `text`: from the line that
/// starts it at column 0 (with a line before it that holds only
/// specifiers, PolyBench's `static`) to its closing brace. Declarations
/// (`void f(int);`) and calls are skipped.
pub fn function(text: &str, name: &str) -> Option<(usize, usize)> {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        if line.starts_with(|c: char| c.is_whitespace() || c == '#' || c == '/' || c == '*') {
            continue;
        }
        let Some(k) = find_name(line, name) else {
            continue;
        };
        let open = start + k + name.len() + line[k + name.len()..].find('(')?;
        let close = matching(text, open, b'(', b')')?;
        let rest = text[close + 1..].trim_start();
        if !rest.starts_with('{') {
            continue;
        }
        let brace = text.len() - rest.len();
        let end = matching(text, brace, b'{', b'}')? + 1;
        let before = text[..start].trim_end_matches('\n');
        let begin = match before
            .rfind('\n')
            .map_or((0, before), |k| (k + 1, &before[k + 1..]))
        {
            (k, prev) if specifiers_only(prev) => k,
            _ => start,
        };
        return Some((begin, end));
    }
    None
}

/// Where `name` stands in `line` as a declarator: after a space or `*`,
/// before `(`.
fn find_name(line: &str, name: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(k) = line[from..].find(name).map(|k| k + from) {
        let before = line[..k].chars().last();
        let after = line[k + name.len()..].trim_start();
        if matches!(before, Some(' ' | '*')) && after.starts_with('(') {
            return Some(k);
        }
        from = k + name.len();
    }
    None
}

/// A line of storage-class and type words only (`static`, `static inline`).
fn specifiers_only(line: &str) -> bool {
    let line = line.trim();
    !line.is_empty()
        && line
            .split_whitespace()
            .all(|w| matches!(w, "static" | "inline" | "extern"))
}

/// The offset of the bracket that closes the one at `open`.
fn matching(text: &str, open: usize, left: u8, right: u8) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &b) in text.as_bytes()[open..].iter().enumerate() {
        if b == left {
            depth += 1;
        } else if b == right {
            depth -= 1;
            if depth == 0 {
                return Some(open + k);
            }
        }
    }
    None
}

/// `original` with the definition of `name` replaced by `output`, which
/// must define it with the same name (a drop-in), else why not.
pub fn splice(original: &str, name: &str, output: &str) -> Result<String, String> {
    let (start, end) = function(original, name).ok_or("the function's definition not found")?;
    if function(output, name).is_none() {
        return Err(format!(
            "the output does not define `{name}` as the file does"
        ));
    }
    Ok(format!(
        "{}{output}{}",
        &original[..start],
        &original[end..]
    ))
}

/// gcc's warnings, without their `file:line:col:` positions, sorted.
pub fn warnings(stderr: &str) -> Vec<String> {
    let mut w: Vec<String> = (stderr.lines())
        .filter(|l| l.contains("warning:"))
        .map(|l| l.split_once(' ').map_or(l, |(_, m)| m).to_string())
        .collect();
    w.sort();
    w
}

/// Whether `gcc -fopenmp` builds and links a program here (in `work`).
/// When it does not, a note says the caller skips, and with
/// `ARRAYFLOW_REQUIRE_GCC` set (CI) it is a failure instead.
pub fn have_gcc_openmp(work: &Path) -> bool {
    let src = work.join("probe.c");
    std::fs::write(
        &src,
        "#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n",
    )
    .unwrap();
    let built = gcc(&[src.as_path()], None, &work.join("probe")).is_ok();
    if !built {
        assert!(
            std::env::var_os("ARRAYFLOW_REQUIRE_GCC").is_none(),
            "ARRAYFLOW_REQUIRE_GCC is set but gcc -fopenmp does not build a program here"
        );
        eprintln!("skipped: gcc -fopenmp does not build a program here");
    }
    built
}

/// `sources` built into `exe` with `gcc -O2 -fopenmp -Wall
/// -Werror=implicit-function-declaration` (and `-I include`): its
/// warnings ([`warnings`]), or gcc's messages when it fails.
pub fn gcc(sources: &[&Path], include: Option<&Path>, exe: &Path) -> Result<Vec<String>, String> {
    let mut cmd = Command::new("gcc");
    cmd.args([
        "-O2",
        "-fopenmp",
        "-Wall",
        "-Werror=implicit-function-declaration",
    ]);
    if let Some(dir) = include {
        cmd.arg("-I").arg(dir);
    }
    let out = cmd
        .args(sources)
        .args(["-lm", "-o"])
        .arg(exe)
        .output()
        .expect("gcc runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        Ok(warnings(&stderr))
    } else {
        Err(stderr)
    }
}

/// What `exe` prints with `threads` OpenMP threads; it must succeed.
pub fn run(exe: &Path, threads: &str) -> Vec<u8> {
    let out = Command::new(exe)
        .env("OMP_NUM_THREADS", threads)
        .output()
        .expect("the program runs");
    assert!(
        out.status.success(),
        "{} at {threads} threads: {:?}",
        exe.display(),
        out.status
    );
    out.stdout
}

/// Thread counts the emitted programs run at.
pub const THREADS: [&str; 3] = ["1", "2", "4"];

/// `emitted` spliced in place of `function` in `dir/name.c`, built in
/// `case` with the driver `dir/name.main.c` and run ([`runs_like`]).
pub fn runs_like_the_original(
    dir: &Path,
    name: &str,
    function: &str,
    emitted: &str,
    case: &Path,
) -> Result<(), String> {
    let path = dir.join(format!("{name}.c"));
    let driver = dir.join(format!("{name}.main.c"));
    let original = std::fs::read_to_string(&path).unwrap();
    let spliced =
        splice(&original, function, emitted).map_err(|why| format!("{why}\n{emitted}"))?;
    runs_like(&path, &spliced, &driver, dir, case)
}

/// `text`, a whole C file standing in for the file `original`, built with
/// `driver` (headers from `include`) in the directory `case` and run at 1,
/// 2 and 4 OpenMP threads: no warning the original's build lacks and byte
/// for byte what the original prints at 1 thread, else why not.
pub fn runs_like(
    original: &Path,
    text: &str,
    driver: &Path,
    include: &Path,
    case: &Path,
) -> Result<(), String> {
    std::fs::create_dir_all(case).map_err(|e| e.to_string())?;
    let name = original.file_name().expect("a file name");
    let new_src = case.join(name);
    std::fs::write(&new_src, text).map_err(|e| e.to_string())?;
    let (exe_a, exe_b) = (case.join("original"), case.join("emitted"));
    let base = gcc(&[original, driver], Some(include), &exe_a)
        .map_err(|e| format!("the original does not build:\n{e}"))?;
    let warned = gcc(&[&new_src, driver], Some(include), &exe_b)
        .map_err(|e| format!("the emitted C does not build:\n{e}\n{text}"))?;
    let new: Vec<&String> = warned.iter().filter(|w| !base.contains(w)).collect();
    if !new.is_empty() {
        return Err(format!("new warnings {new:?}\n{text}"));
    }
    let want = run(&exe_a, "1");
    for t in THREADS {
        if run(&exe_b, t) != want {
            return Err(format!("other output at {t} threads\n{text}"));
        }
    }
    Ok(())
}
