//! The C printer (`cfront::emit`, `expand --emit code` on C, `--emit c`):
//! a hand-checked printing of a small program, and every C fixture, kernel
//! and paper example expanded and compiled by the system C compiler.

use arrayflow::cfront::emit;
use arrayflow::diagnostics::SourceFiles;
use arrayflow::model::Program;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn model(src: &str) -> Program {
    let mut files = SourceFiles::new();
    let f = files.add("t.loop", src);
    let (p, d) = arrayflow::lower::compile(files.source(f), f);
    p.unwrap_or_else(|| panic!("{}", files.render_all(&d)))
}

/// Every construct of the mapping (docs/c.md, "C output"), written by hand.
#[test]
fn prints_a_small_program_as_hand_written_c() {
    let p = model(
        "param N = 4;
real A[1..N, 0..N - 1];
int B[-2..N];
real s;

for i = 1 to N step 2 doall
  S.1: A[i, i - 1] = f(A[i, 0], s) + ...;
  while [w] B[w - 2] < N do
    B[w - 1] += w / 2 - i % 3;
  end
end
if ... then
  @copy T: s = -A[N, B[0]];
elsif [c] s > 0 and (s < 1 or not N == 2) then
  g(s);
else
  A[1, f(s, 1)] /= 2;
end
",
    );
    let expected = "/* Printed by arrayflow from the program model (docs/c.md, C output). */
/* parameters: N = 4 */
double unknown(void);
int unknown_cond(void);
double f(double, double);
double g(double);
/* Euclidean division, as in the model (C's `/` truncates). */
static inline long af_div(long a, long b)
{
  long q = a / b;
  if (a % b < 0)
    q += b > 0 ? -1 : 1;
  return q;
}
/* Euclidean remainder, never negative, as in the model. */
static inline long af_mod(long a, long b)
{
  long r = a % b;
  if (r < 0)
    r += b > 0 ? b : -b;
  return r;
}

void kernel(int N, double A[N][N], int B[N + 3], double *s)
{
  #pragma omp parallel for
  for (int i = 1; i <= N; i += 2) {
    S_1: A[i - 1][i - 1] = f(A[i - 1][0], *s) + unknown();
    w: for (int w = 0; B[w - 2 + 2] < N; w++) {
      B[w - 1 + 2] += af_div(w, 2) - af_mod(i, 3);
    }
  }
  if (unknown_cond()) {
    /* copy */ T: *s = -A[N - 1][B[0 + 2]];
  } else /* c */ if (*s > 0 && (*s < 1 || !(N == 2))) {
    g(*s);
  } else {
    A[1 - 1][(long)(f(*s, 1))] /= 2;
  }
}
";
    let got = emit::program(&p, "kernel");
    assert_eq!(got, expected, "got:\n{got}");
    compiles("hand-written", &got);
}

/// Names C cannot take are changed: keywords, the printer's own functions,
/// labels with a dot, a label used twice.
#[test]
fn renames_what_c_cannot_take() {
    let p = model(
        "real double[0..3];
real unknown;

for int_ = 0 to 3 do
  S.1: double[int_] = unknown;
end
S_1: unknown = 1;
",
    );
    let got = emit::program(&p, "k");
    assert!(
        got.contains("void k(double double_[4], double *unknown_)"),
        "{got}"
    );
    assert!(got.contains("S_1: double_[int_] = *unknown_;"), "{got}");
    assert!(got.contains("S_1_: *unknown_ = 1;"), "{got}");
    compiles("renamed", &got);
}

fn have_cc() -> bool {
    let ok = Command::new("cc")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("note: no `cc` on this machine: the emitted C is not compiled");
    }
    ok
}

/// Compiles C text as C99 with pedantic errors; fails the test with the
/// compiler's messages. Without `cc` it only prints a note.
fn compiles(what: &str, c: &str) {
    if !have_cc() {
        return;
    }
    let mut child = Command::new("cc")
        .args([
            "-std=c99",
            "-pedantic-errors",
            "-c",
            "-o",
            "/dev/null",
            "-x",
            "c",
            "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cc starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(c.as_bytes())
        .expect("write to cc");
    let out = child.wait_with_output().expect("cc runs");
    assert!(
        out.status.success(),
        "{what}: cc rejects the emitted C:\n{}\n{c}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixture dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

fn expand(emit: &str, file: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        // The paper examples call functions they do not define (E0911).
        .args(["expand", "--emit", emit, "--allow-opaque"])
        .arg(file)
        .output()
        .expect("the binary runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn every_c_fixture_expands_to_c_that_compiles() {
    let mut all = files("fixtures/c", "c");
    all.extend(files("fixtures/c/kernels", "c"));
    assert!(all.len() >= 13);
    let mut into = 0;
    for f in all {
        let c = expand("code", &f);
        let text = std::fs::read_to_string(&f).unwrap();
        match drop_in(&text, &c) {
            // Printed into the file's function: the file with that
            // function replaced compiles.
            Some(spliced) => {
                into += 1;
                compiles(&f.display().to_string(), &spliced);
            }
            None => {
                assert!(c.contains("void kernel("), "{}: not C:\n{c}", f.display());
                compiles(&f.display().to_string(), &c);
            }
        }
    }
    // All of them: reduction.c's function returns its value.
    assert!(into >= 15, "{into} outputs printed into their function");
}

/// `file` with its function replaced by `output` when `output` defines it
/// (the first line of a definition at column 0, `... name(...) {`, appears
/// in both), else `None`.
fn drop_in(file: &str, output: &str) -> Option<String> {
    let head = file
        .lines()
        .find(|l| !l.starts_with([' ', '\t', '/', '#']) && l.contains('(') && l.ends_with('{'))?;
    output.lines().any(|l| l == head).then_some(())?;
    let start = file.find(head)?;
    let end = file[start..].find("\n}")? + start + 2;
    Some(format!("{}{output}{}", &file[..start], &file[end..]))
}

#[test]
fn every_paper_fixture_expands_to_c_that_compiles() {
    for f in files("fixtures/papers", "loop") {
        let c = expand("c", &f);
        compiles(&f.display().to_string(), &c);
        // `--emit code` on a `.loop` file stays `.loop`.
        assert!(!expand("code", &f).contains("void kernel("));
    }
}

/// Branches that the enclosing loops' bounds and conditions make
/// unreachable are not printed (PolyBench's durbin, expanded, has such
/// branches, and gcc warned about accesses out of bounds in them); every
/// other branch is. Worked out by hand: under `i + 2 <= k` with `i >= 0`,
/// `k >= 2`, so `T` cannot run; `k <= 0` fails for every `k >= 1`, so only
/// the `else` of the last `if` runs; `1 <= N` says nothing about `N`.
#[test]
fn unreachable_branches_are_not_printed() {
    let p = model(
        "param N = 4;
real A[0..N];
real B[0..N];
for k = 1 to N do
  for i = 0 to k - 1 do
    if i + 2 <= k then
      if 2 <= k then
        S: A[i] = 1;
      else
        T: A[i] = 2;
      end
    else
      U: A[i] = 3;
    end
  end
  if k <= 0 then
    V: B[k] = 4;
  else
    W: B[k] = 5;
  end
end
if 1 <= N then
  X: B[0] = 6;
end
",
    );
    let got = emit::program(&p, "kernel");
    for kept in [
        "S: A[i] = 1;",
        "U: A[i] = 3;",
        "W: B[k] = 5;",
        "X: B[0] = 6;",
    ] {
        assert!(got.contains(kept), "{kept}:\n{got}");
    }
    for dropped in ["T: ", "V: ", "if (k <= 0)"] {
        assert!(!got.contains(dropped), "{dropped}:\n{got}");
    }
    compiles("unreachable", &got);
}

fn arrayflow(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// A call to a function the file declares but does not define: every
/// command that emits C stops with E0911 at the call (line 12, column 36
/// of the fixture, counted by hand), unless `--allow-opaque`, when it
/// warns (W0911) and prints the call. `sq`, defined in the file, and
/// `sqrt` are not reported. The call is a barrier: `--allow-opaque` does
/// not let its loop be made parallel (E0602).
#[test]
fn a_call_the_file_does_not_define_stops_emitting_c() {
    let file = "fixtures/c/opaque/undefined-call.c";
    let commands: [&[&str]; 4] = [
        &["expand", "--emit", "code"],
        &["expand", "--emit", "c"],
        &["privatize", "--emit", "code"],
        &["expand", "--transform", "contract", "--emit", "code"],
    ];
    for cmd in commands {
        let mut args = cmd.to_vec();
        args.push(file);
        let out = arrayflow(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(err.contains("error[E0911]"), "{args:?}: {err}");
        assert!(err.contains("undefined-call.c:12:36"), "{args:?}: {err}");
        assert!(err.contains("a call to `noise`"), "{args:?}: {err}");
        assert_eq!(err.matches("error[E0911]").count(), 1, "{args:?}: {err}");

        args.push("--allow-opaque");
        let out = arrayflow(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(
            err.contains("warning[W0911]") && !err.contains("E0911"),
            "{err}"
        );
        assert!(text.contains("noise(i)"), "{args:?}: {text}");
    }
    let out = arrayflow(&[
        "expand",
        "--transform",
        "contract",
        "--parallel",
        "i@11",
        "--emit",
        "code",
        "--allow-opaque",
        file,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("error[E0602]: parallel loop `i@11` breaks a flow dependence")
            && err.contains("reads `__effects`"),
        "{err}"
    );
    // A value the front end reads as `...` is reported too; `unknown()` as
    // written is the front end's spelling of `...` and is not.
    let dir = std::env::temp_dir().join(format!("arrayflow-opaque-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("pi.c");
    std::fs::write(
        &src,
        "double unknown(void);\ndouble A[4];\nvoid f(void) {\n  for (int i = 0; i < 4; i++)\n    A[i] = A[i] + M_PI + unknown();\n}\n",
    )
    .unwrap();
    let out = arrayflow(&["expand", "--emit", "code", src.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("pi.c:5:19"), "{err}");
    assert_eq!(err.matches("error[E0911]").count(), 1, "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The header of emitted C names each array the transformation adds with
/// its element type and size: allocated by the function when printed
/// into it, parameters the caller provides in `void kernel(...)`, private
/// copies on the stack. The sizes are the fixtures' declared extents.
#[test]
fn the_header_states_the_memory_added() {
    // The opaque fixture with `noise` defined: a pure function then.
    let dir = std::env::temp_dir().join(format!("arrayflow-header-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("defined-call.c");
    let text = std::fs::read_to_string("fixtures/c/opaque/undefined-call.c").unwrap();
    let defined = text.replace(
        "double noise(int i);",
        "static double noise(int i) { return 0.5 * i; }",
    );
    assert_ne!(defined, text);
    std::fs::write(&src, defined).unwrap();
    let out = arrayflow(&["expand", "--emit", "code", src.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).ok();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "/* Memory this function allocates (malloc) and frees:
   A_1: double[N], (N) * sizeof(double) bytes,
   B_1: double[N - 1], (N - 1) * sizeof(double) bytes */"
        ),
        "{text}"
    );
    assert!(
        text.contains("double (*A_1) = malloc(sizeof(double[N]));"),
        "{text}"
    );

    let out = arrayflow(&["expand", "--emit", "c", "fixtures/papers/mse-example2.loop"]);
    let text = String::from_utf8_lossy(&out.stdout);
    // A[1..4N-1] written by two statements: A_1 keeps the first's
    // 4N - 1 cells, A_2 the 2N of the second (docs/expansion.md §8.1).
    assert!(
        text.contains(
            "/* Arrays the transformation added: parameters, the caller provides them:
   A_1: double[4 * N - 1], (4 * N - 1) * sizeof(double) bytes,
   A_2: double[2 * N], (2 * N) * sizeof(double) bytes */"
        ),
        "{text}"
    );
    assert!(
        text.contains("double A_1[4 * N - 1], double A_2[2 * N])"),
        "{text}"
    );

    let out = arrayflow(&[
        "privatize",
        "--emit",
        "code",
        "fixtures/c/privatize/rowtemp.c",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "/* Private copies on the stack, one declared here and one per OpenMP thread:
   w_p: double[M], (M) * sizeof(double) bytes */"
        ),
        "{text}"
    );
    assert!(text.contains("double w_p[M > 0 ? M : 1];"), "{text}");
    assert!(!text.contains("Memory this function allocates"), "{text}");
}

/// Contraction of PolyBench's trmm with `-D LARGE_DATASET` and the MINI
/// sizes as parameters: the whole-array copies run over the declared
/// 1000 × 1200 cells, so every validation run of the contracted program
/// reaches the interpreter's step limit. That is not a difference: the
/// mapping is proved for every parameter value, and the header says that
/// equiv compared nothing. (It used to stop with E0604, "differs".)
#[test]
fn a_run_limit_in_validation_is_not_a_difference() {
    if !have_cc() {
        return;
    }
    let path = format!("{}/fixtures/c/polybench/trmm.c", env!("CARGO_MANIFEST_DIR"));
    let out = arrayflow(&[
        "expand",
        "--transform",
        "contract",
        "--parallel",
        "i@86",
        "--emit",
        "code",
        &path,
        "-D",
        "LARGE_DATASET",
        "--param",
        "m=20",
        "--param",
        "n=30",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("checked by equiv nowhere: at every size tried the original fails or a run reaches an interpreter limit"),
        "{text}"
    );
    assert!(
        text.contains("// proved for every parameter value"),
        "{text}"
    );
}
