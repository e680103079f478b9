//! A `.loop` program of many statements for `deps` (the 400-statement
//! benchmark of docs/benchmarks.md, "The `deps` memo"): loop nests one to
//! three deep (some triangular) over four 2-D arrays, each statement
//! writing one affine reference and reading two, with small coefficients,
//! so that the dependence problems are many and mostly alike, as in real
//! code. Deterministic for a given count and seed; every subscript stays
//! inside the declared range for every N ≥ 1.

/// `statements` statements, in nests of 2 to 8.
pub fn program(statements: usize, seed: u64) -> String {
    let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |n: u64| {
        // xorshift64*
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        (rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) % n
    };
    let arrays = ["A", "B", "C", "D"];
    let mut out = String::from("param N = 10;\nassume N >= 1;\n");
    for a in arrays {
        out.push_str(&format!("real {a}[-2..4 * N + 2, -2..4 * N + 2];\n"));
    }
    let counters = ["i", "j", "k"];
    let mut done = 0;
    while done < statements {
        let depth = 1 + next(3) as usize;
        for (d, c) in counters.iter().take(depth).enumerate() {
            let indent = "  ".repeat(d);
            // Triangular now and then: the inner loop starts at the outer counter.
            let lower = if d > 0 && next(3) == 0 {
                counters[d - 1].to_string()
            } else {
                "1".to_string()
            };
            out.push_str(&format!("{indent}for {c} = {lower} to N do\n"));
        }
        let body = "  ".repeat(depth);
        let here = &counters[..depth];
        let subscript = |next: &mut dyn FnMut(u64) -> u64| -> String {
            // a*c1 + b*c2 + k with a, b in 0..=2 and k in -2..=2.
            let mut terms = Vec::new();
            for _ in 0..2 {
                let c = here[next(here.len() as u64) as usize];
                match next(3) {
                    0 => {}
                    1 => terms.push(c.to_string()),
                    _ => terms.push(format!("2 * {c}")),
                }
            }
            let k = next(5) as i64 - 2;
            if terms.is_empty() || k != 0 {
                terms.push(k.to_string());
            }
            terms.join(" + ").replace("+ -", "- ")
        };
        let n = (2 + next(7) as usize).min(statements - done);
        for _ in 0..n {
            done += 1;
            let r = |next: &mut dyn FnMut(u64) -> u64| {
                let a = arrays[next(4) as usize];
                format!("{a}[{}, {}]", subscript(next), subscript(next))
            };
            let w = r(&mut next);
            let (x, y) = (r(&mut next), r(&mut next));
            out.push_str(&format!("{body}S{done}: {w} = {x} + {y};\n"));
        }
        for d in (0..depth).rev() {
            out.push_str(&format!("{}end\n", "  ".repeat(d)));
        }
    }
    out
}
