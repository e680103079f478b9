//! Generated affine schedules for generated programs (storage_affine,
//! reschedule).

use arrayflow::hash::SplitMix64;
use arrayflow::model::{Node, Program};

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
