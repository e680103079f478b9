//! Generated affine schedules for generated programs (storage_affine,
//! reschedule).

use arrayflow::hash::SplitMix64;
use arrayflow::model::{Node, Program};

/// Generated static-control program `seed` (small), its expansion at the
/// defaults, the random stream its schedules are drawn from, and its
/// identity schedule (the program's own order, drawn first); `None` when
/// the expansion fails.
pub fn case(seed: u64) -> Option<(Program, arrayflow::expansion::Expansion, SplitMix64, String)> {
    use arrayflow::gen::{generate, GenOptions, Size};
    let p = generate(seed, &GenOptions::static_control(Size::Small));
    let exp = arrayflow::expansion::expand(&p, &arrayflow::dataflow::Config::default()).ok()?;
    let mut rng = SplitMix64::new(seed ^ 0x5eed);
    let id = generated(&p, &mut rng, true);
    Some((p, exp, rng, id))
}

/// A generated schedule: the 2d + 1 form of the program's own order
/// (`[β0, i, β1, j, β2]`, β a statement's position among its siblings),
/// each loop's counter kept, dropped (its instances then share times:
/// parallel in a wavefront) or skewed by the loop around it, as `rng`
/// picks per loop. `identity` keeps every counter.
pub fn generated(p: &Program, rng: &mut SplitMix64, identity: bool) -> String {
    #[derive(Clone, Copy)]
    enum Choice {
        Keep,
        Drop,
        Skew,
    }
    let choice: Vec<Choice> = (0..p.counters.len())
        .map(|_| match (identity, rng.next_u64() % 4) {
            (true, _) | (false, 0) => Choice::Keep,
            (false, 1 | 2) => Choice::Drop,
            _ => Choice::Skew,
        })
        .collect();
    fn walk(
        p: &Program,
        nodes: &[Node],
        counters: &mut Vec<(String, usize)>,
        time: &mut Vec<String>,
        choice: &[Choice],
        out: &mut Vec<String>,
    ) {
        let mut beta = 0;
        let mut each = |n: &Node, beta: &mut usize, out: &mut Vec<String>| match n {
            Node::Stmt(s) => {
                let mut t = time.clone();
                t.push(beta.to_string());
                let names: Vec<String> = (0..counters.len()).map(|k| format!("c{k}")).collect();
                out.push(format!(
                    "{}[{}] -> [{}]",
                    s.label,
                    names.join(", "),
                    t.join(", ")
                ));
                *beta += 1;
            }
            Node::For(l) => {
                let k = counters.len();
                let me = format!("c{k}");
                let e = match choice[l.counter.index()] {
                    Choice::Keep => me,
                    Choice::Drop => "0".to_string(),
                    Choice::Skew if k > 0 => format!("{me} + c{}", k - 1),
                    Choice::Skew => me,
                };
                time.push(beta.to_string());
                time.push(e);
                counters.push((p.counter_decl(l.counter).name.clone(), k));
                walk(p, &l.body, counters, time, choice, out);
                counters.pop();
                time.pop();
                time.pop();
                *beta += 1;
            }
            // Static control only: no `while`; an `if` adds no dimension.
            _ => {}
        };
        for n in flat(nodes) {
            each(n, &mut beta, out);
        }
    }
    /// The statements and loops of a body, through `if`s.
    fn flat(nodes: &[Node]) -> Vec<&Node> {
        let mut v = Vec::new();
        for n in nodes {
            match n {
                Node::If(i) => {
                    for (_, b) in &i.branches {
                        v.extend(flat(b));
                    }
                    v.extend(i.otherwise.iter().flat_map(|b| flat(b)));
                }
                _ => v.push(n),
            }
        }
        v
    }
    let mut out = Vec::new();
    walk(
        p,
        &p.body,
        &mut Vec::new(),
        &mut Vec::new(),
        &choice,
        &mut out,
    );
    format!("{{ {} }}", out.join("; "))
}

/// `text` (as `generated` writes it) with time dimensions `a` and `b`
/// swapped in every statement whose time has both: on the 2d + 1 form,
/// (1, 2) distributes every outermost loop over its body, (1, 3)
/// interchanges the two outermost loops of the statements two deep.
pub fn swapped(text: &str, a: usize, b: usize) -> String {
    let inner = text.trim().trim_start_matches('{').trim_end_matches('}');
    let parts: Vec<String> = inner
        .split(';')
        .map(|e| {
            let (lhs, time) = e.split_once("-> [").expect("an entry");
            let mut t: Vec<&str> = time.trim().trim_end_matches(']').split(", ").collect();
            if t.len() > a.max(b) {
                t.swap(a, b);
            }
            format!("{}-> [{}]", lhs, t.join(", "))
        })
        .collect();
    format!("{{{} }}", parts.join(";"))
}

/// The value of a `# key: value` line of a fixture.
pub fn header<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("# {key}: ")))
}

/// One `.schedule` fixture of `dir` (under the crate's root) run through
/// `arrayflow expand PROGRAM --transform contract --schedule FILE EXTRA...`
/// (PROGRAM from its `# program:` line, more options from an `# args:`
/// line) and compared with the `.expected` file beside it: stdout, or
/// stderr when its `# exit:` line says 1.
pub struct Fixture {
    pub name: String,
    pub text: String,
    pub program: String,
    pub exit: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Every `.schedule` fixture of `dir`, run and checked (see `Fixture`).
/// The output with the proof's test count masked (`(N exact tests)`): the
/// count is the prover's own figure, which no one checked by hand; the
/// verdict around it is.
fn masked(out: &str) -> String {
    let tail = " exact tests)";
    let mut s = out.to_string();
    let mut from = 0;
    while let Some(k) = s[from..].find(tail).map(|k| k + from) {
        let digits = s[..k]
            .bytes()
            .rev()
            .take_while(|b| b.is_ascii_digit())
            .count();
        s.replace_range(k - digits..k, "N");
        from = k - digits + 1 + tail.len();
    }
    s
}

pub fn run_fixtures(dir: &str, extra: &[&str]) -> Vec<Fixture> {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut files: Vec<_> = std::fs::read_dir(format!("{root}/{dir}"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "schedule"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let program = header(&text, "program").expect("a `# program:` line");
        let exit: i32 = header(&text, "exit").map_or(0, |e| e.parse().unwrap());
        // `# args: --live-out A`: more options for this fixture.
        let args: Vec<&str> =
            header(&text, "args").map_or(Vec::new(), |a| a.split_whitespace().collect());
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
            .args(["expand", program, "--transform", "contract", "--schedule"])
            .arg(format!("{dir}/{name}"))
            .args(&args)
            .args(extra)
            .current_dir(root)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&run.stdout).to_string();
        let stderr = String::from_utf8_lossy(&run.stderr).to_string();
        assert_eq!(run.status.code(), Some(exit), "{name}: {stderr}");
        let shown = masked(if exit == 0 { &stdout } else { &stderr });
        let expected = std::fs::read_to_string(path.with_extension("expected"))
            .unwrap_or_else(|_| panic!("{name}: no .expected file; the output:\n{shown}"));
        assert_eq!(shown, expected, "{name}");
        out.push(Fixture {
            name,
            program: program.to_string(),
            text,
            exit,
            stdout,
            stderr,
        });
    }
    out
}
