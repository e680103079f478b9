//! Messages that must say what is so: each case runs the `arrayflow`
//! binary in a directory of its own files and checks the exit code and
//! what stdout and stderr must and must not say. The expected texts were
//! derived by hand from the programs (see each case's comment).

use std::path::PathBuf;
use std::process::Command;

/// A program where `A` is written then read and `B` only written.
const PROG: &str = "param N = 10;
real A[0..N];
real B[0..N];
for i = 0 to N do
  S: A[i] = ...;
end
for i = 0 to N do
  T: B[i] = A[i];
end
";

/// "An array written but never read": one finding per write access.
const NEVER_READ: &str = r#".decl read_array(a: symbol)
read_array(A) :- read(_, _, X), access(X, _, _, A, _).
.decl never_read(x: access, a: symbol)
never_read(X, A) :- access(X, _, _, A, "write"), !read_array(A).
.check never_read "`{a}` is written here but never read"
"#;

/// mse-example1 (fixtures/papers) at N = 500000: about 10 access instances
/// per trip of `i` (T, four `while` trips of S reading and writing x, R),
/// past the 4·10⁶ where `flow` prefers symbolic σ; every read is under the
/// `while` loop's control, so each gets a set of possible sources.
const WHILE_BIG: &str = "param N = 500000;
real x;
for i = 1 to N do
  T: x = ...;
  while ... do
    S: x = f(x);
  end
  R: use(x);
end
";

struct Case {
    name: &'static str,
    files: Vec<(&'static str, String)>,
    args: &'static [&'static str],
    code: i32,
    stdout: &'static [&'static str],
    stderr: &'static [&'static str],
    /// Texts that must appear nowhere in stdout or stderr.
    absent: &'static [&'static str],
    /// Texts that must appear exactly this often in stderr.
    counted: &'static [(&'static str, usize)],
}

const BASE: Case = Case {
    name: "",
    files: Vec::new(),
    args: &[],
    code: 0,
    stdout: &[],
    stderr: &[],
    absent: &[],
    counted: &[],
};

fn cases() -> Vec<Case> {
    vec![
        // Sanity: the rule finds B (written by T, read by nobody), not A.
        Case {
            name: "never-read",
            files: vec![
                ("p.loop", PROG.into()),
                ("never_read.dl", NEVER_READ.into()),
            ],
            args: &["check", "p.loop", "--rules", "never_read.dl"],
            counted: &[("`B` is written here but never read", 1)],
            absent: &["`A` is written"],
            stdout: &["p.loop: ok"],
            ..BASE
        },
        // The same file twice, spelt two ways: each finding once.
        Case {
            name: "rules-twice",
            files: vec![
                ("p.loop", PROG.into()),
                ("never_read.dl", NEVER_READ.into()),
            ],
            args: &[
                "check",
                "p.loop",
                "--rules",
                "never_read.dl",
                "--rules",
                "./never_read.dl",
            ],
            counted: &[("`B` is written here but never read", 1)],
            ..BASE
        },
        // A rule file in error: exit 1 and no "ok" for the program.
        Case {
            name: "rules-in-error",
            files: vec![
                ("p.loop", PROG.into()),
                ("bad.dl", ".decl p(x: number)\np(X) :- nothing(X).\n".into()),
            ],
            args: &["check", "p.loop", "--rules", "bad.dl"],
            code: 1,
            stderr: &["E1002"],
            absent: &["p.loop: ok"],
            ..BASE
        },
        // `check` takes the budget its own E0302 tells the user to raise.
        Case {
            name: "check-max-instances",
            files: vec![("p.loop", PROG.into())],
            args: &["check", "p.loop", "--max-instances", "5"],
            stdout: &["p.loop: ok"],
            ..BASE
        },
        // 33 access instances are over a budget of 5 (at N = 10^8, 3·10^8
        // are over the default 5·10^7): the analysis fails, so the instance
        // relations are empty and the rules would call A never read. They
        // are not run.
        Case {
            name: "rules-on-failed-analysis",
            files: vec![
                ("p.loop", PROG.into()),
                ("never_read.dl", NEVER_READ.into()),
            ],
            args: &[
                "check",
                "p.loop",
                "--rules",
                "never_read.dl",
                "--max-instances",
                "5",
            ],
            code: 1,
            stderr: &["E0302", "E1102", "were not run"],
            absent: &["is written here but never read", "p.loop: ok"],
            ..BASE
        },
        Case {
            name: "rules-on-failed-analysis-large",
            files: vec![
                ("p.loop", PROG.into()),
                ("never_read.dl", NEVER_READ.into()),
            ],
            args: &[
                "check",
                "p.loop",
                "--rules",
                "never_read.dl",
                "--param",
                "N=100000000",
            ],
            code: 1,
            stderr: &["E0302", "E1102", "were not run"],
            absent: &["is written here but never read", "p.loop: ok"],
            ..BASE
        },
        Case {
            name: "facts-max-memory",
            files: vec![("p.loop", PROG.into())],
            args: &[
                "facts",
                "p.loop",
                "--format",
                "souffle",
                "out",
                "--max-memory",
                "1",
            ],
            code: 1,
            stderr: &["E0304"],
            ..BASE
        },
        Case {
            name: "flow-possible-sources-note",
            files: vec![("w.loop", WHILE_BIG.into())],
            args: &["flow", "w.loop"],
            stdout: &["possible sources"],
            stderr: &["possible sources (not exact) for the 2 reads outside static control"],
            absent: &["exact for every parameter value"],
            ..BASE
        },
        // 2·N + 2 at N = 2⁶³ - 1 is 2⁶⁴: past 64-bit integers (wrapped, it
        // would be the range 0..0).
        Case {
            name: "run-range-overflow",
            files: vec![(
                "r.loop",
                "param N = 10;\nreal A[0..2 * N + 2];\nS: A[0] = 1;\nT: print(A[0]);\n".into(),
            )],
            args: &["run", "r.loop", "--param", "N=9223372036854775807"],
            code: 1,
            stderr: &["E0303", "overflows", "r.loop:2:11"],
            absent: &["0..0"],
            ..BASE
        },
        // A byte order mark is skipped; positions after it stay right (`M`
        // is at line 2, column 11).
        Case {
            name: "bom",
            files: vec![
                ("bom.loop", format!("\u{feff}{PROG}")),
                (
                    "bom_err.loop",
                    "\u{feff}param N = 10;\nreal A[0..M];\n".into(),
                ),
            ],
            args: &["check", "bom.loop", "bom_err.loop"],
            code: 1,
            stdout: &["bom.loop: ok"],
            stderr: &["bom_err.loop:2:11", "`M`"],
            absent: &["E0001", "bom_err.loop: ok"],
            ..BASE
        },
    ]
}

#[test]
fn messages_say_what_is_so() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_messages");
    let mut failures = Vec::new();
    for c in cases() {
        let dir = root.join(c.name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in &c.files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let o = Command::new(env!("CARGO_BIN_EXE_arrayflow"))
            .args(c.args)
            .current_dir(&dir)
            .output()
            .expect("the binary runs");
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        let mut wrong = Vec::new();
        if o.status.code() != Some(c.code) {
            wrong.push(format!("exit {:?}, wanted {}", o.status.code(), c.code));
        }
        wrong.extend(
            c.stdout
                .iter()
                .filter(|t| !out.contains(*t))
                .map(|t| format!("stdout lacks {t:?}")),
        );
        wrong.extend(
            c.stderr
                .iter()
                .filter(|t| !err.contains(*t))
                .map(|t| format!("stderr lacks {t:?}")),
        );
        wrong.extend(
            (c.absent.iter())
                .filter(|t| out.contains(*t) || err.contains(*t))
                .map(|t| format!("says {t:?}")),
        );
        for (t, n) in c.counted {
            let got = err.matches(t).count();
            if got != *n {
                wrong.push(format!("{t:?} {got} times, wanted {n}"));
            }
        }
        if !wrong.is_empty() {
            failures.push(format!(
                "{}: {}\n--- stdout\n{out}--- stderr\n{err}",
                c.name,
                wrong.join("; ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
