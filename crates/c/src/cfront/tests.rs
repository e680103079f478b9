//! Unit tests of the C front end: each C form against the `.loop` program it
//! must give (compared as models, so generated names and ids count too),
//! and each unsupported form against its diagnostic.

use super::compile;
use crate::diagnostics::{has_errors, FileId};
use crate::model::Program;

fn c(src: &str) -> Program {
    let (p, diags) = compile(src, FileId(0));
    assert!(!has_errors(&diags), "{diags:#?}");
    p.expect("a program")
}

fn lp(src: &str) -> Program {
    let (p, diags) = crate::lower::compile(src, FileId(0));
    assert!(!has_errors(&diags), "{diags:#?}");
    p.expect("a program")
}

#[track_caller]
fn same(c_src: &str, loop_src: &str) {
    same_locals(c_src, loop_src, &[]);
}

/// [`same`], where `.loop` cannot say which arrays are C locals of the
/// region: `locals` names them.
fn same_locals(c_src: &str, loop_src: &str, locals: &[&str]) {
    let (a, mut b) = (c(c_src), lp(loop_src));
    for x in &mut b.arrays {
        x.local = locals.contains(&x.name.as_str());
    }
    assert_eq!(crate::print::program(&a), crate::print::program(&b));
    assert_eq!(a, b);
}

fn codes(src: &str) -> Vec<&'static str> {
    compile(src, FileId(0)).1.iter().map(|d| d.code).collect()
}

#[test]
fn loop_forms() {
    same(
        "#define N 9\ndouble A[N];\nvoid f(void) {\n\
         for (int i = 0; i <= N - 1; i += 2) A[i] = 0;\n\
         for (int i = 1; N > i; ++i) A[i] = 1;\n\
         for (int i = 2; i < N; i = i + 3) A[i] = 2;\n\
         for (int i = 2; i < N; i = 3 + i) A[i] = 3;\n}\n",
        "param N = 9;\nreal A[0..N - 1];\n\
         for i = 0 to N - 1 step 2 do A[i] = 0; end\n\
         for i = 1 to N - 1 do A[i] = 1; end\n\
         for i = 2 to N - 1 step 3 do A[i] = 2; end\n\
         for i = 2 to N - 1 step 3 do A[i] = 3; end\n",
    );
}

#[test]
fn decreasing_loops_count_upward_with_the_counter_substituted() {
    // i = 8, 6, 4, 2 (i > 1): i' runs 2, 4, 6, 8 and i = 8 + 2 - i'.
    same(
        "double A[10];\nvoid f(void) { for (int i = 8; i > 1; i -= 2) A[i] = A[i - 1]; }\n",
        "real A[0..9];\nfor i = 2 to 8 step 2 do A[-i + 10] = A[-i + 10 - 1]; end\n",
    );
    same(
        "double A[10];\nvoid f(int n) { for (int i = n; i >= 0; i--) A[i] = 0; }\n",
        "param n;\nreal A[0..9];\nfor i = 0 to n do A[n - i] = 0; end\n",
    );
}

#[test]
fn other_for_loops_run_as_while_loops() {
    // A non-affine bound: `while [i]` whose trip counter is C's i - 1.
    let src = "double A[10];\nint m;\nvoid f(void) {\n  m = 5;\n  for (int i = 1; i < m * m; i++) A[i] = 0;\n}\n";
    same(
        src,
        "int m;\nreal A[0..9];\nm = 5;\nwhile [i] i + 1 < m * m do A[i + 1] = 0; end\n",
    );
    assert!(codes(src).contains(&"W0903"));
    // A test of another form (`!=`), counting down by 2.
    same(
        "double A[10];\nvoid f(void) { for (int i = 8; i != 0; i -= 2) A[i] = 0; }\n",
        "real A[0..9];\nwhile [i] -2 * i + 8 != 0 do A[-2 * i + 8] = 0; end\n",
    );
}

#[test]
fn while_if_and_labels_naming_conditions() {
    same(
        "double x;\nint unknown(void);\nvoid f(void) {\n\
         W: while (x > 0) { x = x - 1; }\n\
         C: if (x) x = 1; else D: if (x < 2) x = 2; else if (unknown()) x = 3; else { x = 4; }\n}\n",
        "real x;\nwhile [W] x > 0 do x = x - 1; end\n\
         if [C] x != 0 then x = 1; elsif [D] x < 2 then x = 2; elsif ... then x = 3; else x = 4; end\n",
    );
}

#[test]
fn assignments_and_operators() {
    same(
        "int x, y;\nint A[4];\nvoid f(void) {\n\
         x = 'a' + '\\n';\n x++;\n --y;\n x *= 2;\n x <<= y;\n\
         A[1] = x < y ? -x : +y;\n A[2] = !x + (~y & 3) + (x && y);\n}\n",
        "int x;\nint y;\nint A[0..3];\n\
         x = 97 + 10;\nx += 1;\ny -= 1;\nx *= 2;\nx = __shl(x, y);\n\
         A[1] = __select(__lt(x, y), -x, y);\nA[2] = __not(x) + __bitand(__bitnot(y), 3) + __and(x, y);\n",
    );
}

/// `a = b = c;` is `b = c;` then `a = b;` (deriche's
/// `a1 = a5 = k;` was rejected); compound and parenthesised links too.
#[test]
fn chained_assignments() {
    same(
        "double a, b, c, k;\ndouble A[4];\nvoid f(void) {\n\
         S: a = b = k;\n a = (b += c = 2);\n A[1] = A[2] = A[3];\n}\n",
        // Scalars are declared in order of first use.
        "real b;\nreal k;\nreal a;\nreal c;\nreal A[0..3];\n\
         b = k;\nS: a = b;\nc = 2;\nb += c;\na = b;\nA[2] = A[3];\nA[1] = A[2];\n",
    );
}

/// A parameter's default comes from the calls in the file
/// (PolyBench's `int ni = 20; ... kernel(ni, ...)`): a constant argument or
/// a caller's local with a constant initialiser, never assigned; calls that
/// disagree, or pass anything else, give none.
#[test]
fn parameter_defaults_from_the_calls() {
    // The region is the kernel's (PolyBench's form): `main` is not one, so
    // its calls are not inlined (docs/c.md, Calls).
    let kernel = "void kernel(int n, int m, int k, double A[10]) {\n#pragma scop\n\
                  for (int i = 0; i < n + m + k; i++) A[i] = 0;\n#pragma endscop\n}\n";
    let src = format!(
        "{kernel}int main(void) {{\n  int n = 2 + 1;\n  int k = 4;\n  double A[10];\n  \
         k = 5;\n  kernel(n, 6, k, A);\n  kernel(3, 6, 2, A);\n  return 0;\n}}\n"
    );
    let p = c(&src);
    let defaults: Vec<(&str, Option<i64>)> = p
        .params
        .iter()
        .map(|q| (q.name.as_str(), q.default))
        .collect();
    // n: 3 at both calls; m: 6; k: assigned in main, so no default.
    assert_eq!(defaults, vec![("n", Some(3)), ("m", Some(6)), ("k", None)]);
    let src = format!("{kernel}void g(double *A) {{ kernel(1, 2, 3, A); kernel(4, 2, 3, A); }}\n");
    let p = c(&src);
    assert_eq!(p.params[0].default, None, "the calls disagree on n");
    assert_eq!(p.params[1].default, Some(2));
}

#[test]
fn parameters_constants_and_lets() {
    // Integer parameters never assigned are parameters; assigned ones are
    // scalars (read as the value last assigned where that is known:
    // `m = n` makes `m` read `n`). `const int` and enumerators with constant values are
    // parameters with defaults; an integer local never assigned after a
    // static initialiser is inlined.
    same(
        "#define M (N + 1)\n#define N 4\nconst int K = 2 * 3;\nenum { E = 7 };\n\
         double A[M + K + E];\n\
         void f(int n, int m) {\n  m = n;\n  for (int i = 0; i < n; i++) {\n\
         int j = 2 * i + 1;\n    A[j] = A[M] + K + E + m;\n  }\n}\n",
        "param n;\nparam N = 4;\nparam K = 6;\nparam E = 7;\nint m;\nreal A[0..N + K + E];\n\
         m = n;\nfor i = 0 to n - 1 do A[2 * i + 1] = A[N + 1] + K + E + n; end\n",
    );
}

#[test]
fn pointer_parameters_get_size_parameters() {
    let src = "void f(int n, double *restrict p, double q[restrict][4]) {\n\
               for (int i = 0; i < n; i++) p[i] = q[i][0];\n}\n";
    same(
        src,
        "param n;\nparam p_dim0;\nparam q_dim0;\nreal p[0..p_dim0 - 1];\nreal q[0..q_dim0 - 1, 0..3];\n\
         for i = 0 to n - 1 do p[i] = q[i, 0]; end\n",
    );
    assert_eq!(codes(src), vec!["W0906", "W0906"]);
    // Without `restrict` and without a call, `p` may overlap `q`: the
    // write is also a may-write of any element of `q`.
    let src = src.replace("restrict", "");
    same(
        &src,
        "param n;\nparam p_dim0;\nparam q_dim0;\nreal p[0..p_dim0 - 1];\nreal q[0..q_dim0 - 1, 0..3];\n\
         for i = 0 to n - 1 do p[i] = q[i, 0]; q[__any(), __any()] = __effect_overlap(q[i, 0]); end\n",
    );
    assert_eq!(codes(&src), vec!["W0906", "W0906", "W0906", "W0906"]);
}

/// `g`, `h` and `k` are declared, not defined: barriers. Before each
/// call, `__effects` is read and written with everything the call can
/// reach (what it gets by address, then the globals the region names, by
/// name), and each of those may be written; `h`'s `const` parameter
/// passes nothing by address. The call statements stay.
#[test]
fn calls_the_file_does_not_define_are_barriers() {
    let src = "double A[4], B[4][4];\ndouble x;\nvoid g(double *, double *);\n\
               void h(const double *);\ndouble k(double *);\nvoid f(void) {\n\
               S: g(A, &x);\n  T: h(A);\n  U: x = k(B[1]);\n}\n";
    same(
        src,
        "real A[0..3];\nreal x;\nreal __effects;\nreal B[0..3, 0..3];\n\
         S.1: __effects = __effect_g(__effects, A[__any()], x, B[__any(), __any()]);\n\
         S.2: A[__any()] = __effect_g(__effects);\nS.3: x = __effect_g(__effects, x);\n\
         S.4: B[__any(), __any()] = __effect_g(__effects);\nS: g(A[__any()], x);\n\
         T.1: __effects = __effect_h(__effects, A[__any()], B[__any(), __any()], x);\n\
         T.2: A[__any()] = __effect_h(__effects);\nT.3: B[__any(), __any()] = __effect_h(__effects);\n\
         T.4: x = __effect_h(__effects, x);\nT: h(A[__any()]);\n\
         U.1: __effects = __effect_k(__effects, B[1, __any()], A[__any()], x);\n\
         U.2: B[1, __any()] = __effect_k(__effects);\nU.3: A[__any()] = __effect_k(__effects);\n\
         U.4: x = __effect_k(__effects, x);\nU: x = k(B[1, __any()]);\n",
    );
    assert_eq!(codes(src), vec!["W0905", "W0905", "W0905"]);
}

/// A pure function (`<math.h>`'s `modf`) may still write what it gets by
/// address: a may-write under an unknown `if` for one cell.
#[test]
fn pure_calls_may_write_what_they_get_by_address() {
    let src = "#include <math.h>\ndouble y, ip;\nvoid f(void) {\n  S: y = modf(y, &ip);\n}\n";
    same(
        src,
        "real y;\nreal ip;\nif ... then S.1: ip = modf(y, ip); end\nS: y = modf(y, ip);\n",
    );
    assert_eq!(codes(src), vec!["W0905"]);
}

#[test]
fn pointers_and_fields_are_over_approximated() {
    let src = "struct s { double a; };\nstruct s P[4];\nstruct s v;\nvoid f(double *p, int n) {\n\
               *p = 1;\n  *(p + n) = 2;\n  P[1].a = p[0];\n  v.a = P[2].a;\n}\n";
    same(
        src,
        "param p_dim0;\nparam n;\nreal p[0..p_dim0 - 1];\nreal P[0..3];\nreal v;\n\
         p[__any()] = 1;\np[__any(n)] = 2;\nif ... then P[1] = p[0]; end\nif ... then v = P[2]; end\n",
    );
    let cs = codes(src);
    assert_eq!(cs.iter().filter(|c| **c == "W0904").count(), 5, "{cs:?}");
}

#[test]
fn initialisers() {
    same_locals(
        "void f(void) {\n  double w[3] = {1, 2, 3};\n  int m[2][2] = {{1, 2}, {3, 4}};\n  double s = w[1] + m[1][0];\n}\n",
        "real w[0..2];\nint m[0..1, 0..1];\nreal s;\n\
         w[0] = 1;\nw[1] = 2;\nw[2] = 3;\nm[0, 0] = 1;\nm[0, 1] = 2;\nm[1, 0] = 3;\nm[1, 1] = 4;\n\
         s = w[1] + m[1, 0];\n",
        &["w", "m", "s"],
    );
}

#[test]
fn pragma_regions_and_the_scope_around_them() {
    // Only the pragma region is lowered; `n` and `t` are declared outside
    // it and never assigned inside, so they are parameters.
    same(
        "double A[100];\nvoid f(int n) {\n  double junk = 1;\n  for (int t = 0; t < 3; t++) {\n\
         #pragma scop\n    for (int i = 0; i < n; i++) A[i + t] = 0;\n#pragma endscop\n  }\n  junk = 2;\n}\n",
        "param n;\nparam t;\nreal A[0..99];\nfor i = 0 to n - 1 do A[i + t] = 0; end\n",
    );
}

#[test]
fn regions_of_several_functions_share_globals_and_parameters() {
    // Both functions' `n` is one parameter; their local arrays named `B`
    // are two arrays; labels taken by an earlier function get qualified.
    same_locals(
        "double A[10];\nvoid f(int n) { double B[10];\n  S: B[0] = n;\n  A[0] = B[0]; }\n\
         void g(int n) { double B[10];\n  S: B[1] = n;\n  A[1] = B[1] + A[0]; }\n",
        "real B[0..9];\nparam n;\nreal A[0..9];\nreal B_1[0..9];\n\
         S: B[0] = n;\nA[0] = B[0];\ng_S: B_1[1] = n;\nA[1] = B_1[1] + A[0];\n",
        &["B", "B_1"],
    );
}

#[test]
fn names_that_clash_with_loop_language_keywords_or_counters_are_renamed() {
    same(
        "double end[3], i;\nvoid f(void) { for (int i = 0; i < 3; i++) end[i] = 0;\n i = end[1]; }\n",
        "real end_1[0..2];\nreal i_1;\nfor i = 0 to 2 do end_1[i] = 0; end\ni_1 = end_1[1];\n",
    );
}

#[test]
fn return_at_the_end_is_a_call_statement() {
    same(
        "double s;\ndouble f(void) { s = 1;\n  R: return s * 2; }\n",
        "real s;\ns = 1;\nR: return(s * 2);\n",
    );
}

#[test]
fn omp_parallel_for_marks_a_doall_loop() {
    same(
        "double A[4];\nvoid f(void) {\n#pragma omp parallel for\n  for (int i = 0; i < 4; i++) A[i] = 0;\n}\n",
        "real A[0..3];\nfor i = 0 to 3 doall A[i] = 0; end\n",
    );
}

#[test]
fn omp_pragma_between_a_header_and_its_statement() {
    // Compilers accept it; the C grammar takes directives only in blocks.
    same(
        "double A[4][4];\nvoid f(void) {\n  for (int i = 1; i < 4; i++)\n#pragma omp parallel for\n    for (int j = 0; j < 4; j++)\n      A[i][j] = A[i - 1][j];\n}\n",
        "real A[0..3, 0..3];\nfor i = 1 to 3 do\n  for j = 0 to 3 doall A[i, j] = A[i - 1, j]; end\nend\n",
    );
    // Another pragma there is read and dropped; the loop stays sequential.
    same(
        "double A[4];\nvoid f(void) {\n  if (1)\n#pragma GCC ivdep\n    for (int j = 1; j < 4; j++)\n      A[j] = A[j - 1];\n}\n",
        "real A[0..3];\nif 1 != 0 then\n  for j = 1 to 3 do A[j] = A[j - 1]; end\nend\n",
    );
}

/// `do ... while`: a `while` loop on its `break` flag, the test read after
/// the body and failing sets the flag.
#[test]
fn do_while_runs_its_body_before_the_test() {
    same_locals(
        "double A[8];\nvoid f(int n) {\n  int i = 0;\n  do {\n    A[i] = 1;\n    i++;\n  } while (i < n);\n}\n",
        "param n;\nint i;\nint broke;\nreal A[0..7];\ni = 0;\nbroke = 0;\nwhile 1 != 0 and broke == 0 do\n  A[i] = 1;\n  i += 1;\n  if not i < n then broke = 1; end\nend\n",
        &["i", "broke"],
    );
}

/// `i += inc`, `inc` a parameter: a `while` loop over the trips, C's `i`
/// being `inc` times the trip, for `inc >= 1` (assumed, and said).
#[test]
fn a_parameter_step_runs_as_a_while_loop_for_a_positive_step() {
    let src = "double A[8];\nvoid f(int n, int inc) {\n  for (int i = 1; i < n; i += inc)\n    A[i] = 1;\n}\n";
    same(
        src,
        "param inc;\nparam n;\nassume inc >= 1;\nreal A[0..7];\nwhile [i] 1 + inc * i < n do\n  A[1 + inc * i] = 1;\nend\n",
    );
    let got = codes(src);
    assert_eq!(got, vec!["W0903", "W0903"], "{got:?}");
}

#[test]
fn unsupported_statements_skip_their_region_only() {
    for (body, code) in [
        // Jumps the model cannot express (`exits`).
        ("back: A[0] = 1; if (A[1] > 0) goto back;", "W0915"),
        ("if (n) goto in; { in: A[0] = 1; }", "W0915"),
        ("int k = setjmp(0); A[0] = k;", "W0915"),
        ("switch (n) { case 1: n = 2; A[0] = 1; }", "W0915"),
        ("switch (n) { case A[0] > 0: A[0] = 1; }", "W0915"),
        ("switch (n) { A[1] = 2; case 1: A[0] = 1; }", "W0915"),
        ("do { A[0] = 1; } while (g(A));", "W0901"),
        ("A[n++] = 1;", "W0901"),
        // A chain `A[0] = (n = 2);` is supported; an assignment inside an
        // expression is not.
        ("A[0] = (n = 2) + 1;", "W0901"),
        ("for (int i = 0; i < 4; i++) i = 2;", "W0901"),
        ("for (;;) A[0] = 1;", "W0902"),
        ("for (int i = 0; i < 4; i *= 2) A[i] = 1;", "W0902"),
        ("for (int i = 0, j = 0; j < 4; i++) A[i] = 1;", "W0902"),
        ("for (int i = 0; i < 4; i += A[0]) A[i] = 1;", "W0902"),
        ("for (int i = 0; i < 4; i += n) n = 2;", "W0902"),
        ("for (int i = A[0]; i < 4; i++) A[0] = 1;", "W0902"),
        ("while (g(A)) A[0] = 1;", "W0901"),
    ] {
        let src = format!(
            "double A[8];\nint g(double *);\nvoid keep(void) {{ A[7] = 7; }}\nvoid f(int n) {{\n  {body}\n}}\n"
        );
        let (p, diags) = compile(&src, FileId(0));
        let got: Vec<_> = diags.iter().map(|d| d.code).collect();
        assert!(got.contains(&code), "{body}: {got:?}");
        // The other function is still analysed; the skipped one left nothing.
        let p = p.unwrap_or_else(|| panic!("{body}: {got:?}"));
        assert_eq!(
            crate::print::program(&p),
            "real A[0..7];\n\nA[7] = 7;\n",
            "{body}"
        );
    }
}

#[test]
fn all_regions_skipped_is_an_error() {
    let (p, diags) = compile("void f(void) { x: ; goto x; }\n", FileId(0));
    assert!(p.is_none());
    let got: Vec<_> = diags.iter().map(|d| d.code).collect();
    assert_eq!(got, vec!["W0915", "E0902"]);
}

#[test]
fn syntax_errors_are_errors() {
    let (p, diags) = compile("void f( { A[ = ; }\n", FileId(0));
    assert!(p.is_none());
    assert!(diags.iter().all(|d| d.code == "E0901"), "{diags:#?}");
    assert!(!diags.is_empty());
}

#[test]
fn unknown_values_are_reported() {
    let src = "double A[4];\n#define F(x) (x)\nvoid f(void) { A[0] = M_PI + F(1);\n  for (int i = 0; i < 4; i++) A[i] = 0;\n  A[1] = i; }\n";
    let got = codes(src);
    // M_PI, the macro F, and `i` out of its loop's scope.
    assert_eq!(got, vec!["W0907", "W0907", "W0907"], "{got:?}");
    let src =
        "double A[4];\nvoid f(void) { int i;\n  for (i = 0; i < 4; i++) A[i] = 0;\n  A[1] = i; }\n";
    assert_eq!(codes(src), vec!["W0907"]);
}

#[test]
fn pragma_problems_are_reported() {
    let got = codes("double A[4];\nvoid f(void) {\n#pragma scop\n  A[0] = 1;\n}\n");
    assert_eq!(got, vec!["W0908", "W0003"]);
    let got =
        codes("double A[4];\n#pragma arrayflow array A[1..2][1..2]\nvoid f(void) { A[1] = 1; }\n");
    assert_eq!(got, vec!["W0908"]);
    let got = codes("double A[4];\n#pragma arrayflow aray A[1..2]\nvoid f(void) { A[1] = 1; }\n");
    assert_eq!(got, vec!["W0908"]);
}

#[test]
fn labels_that_cannot_be_used_are_reported() {
    let (p, diags) = compile(
        "double x;\nvoid f(void) { _S1: x = 1;\n  L: for (int i = 0; i < 2; i++) x = i; }\n",
        FileId(0),
    );
    let got: Vec<_> = diags.iter().map(|d| d.code).collect();
    assert_eq!(got, vec!["W0909", "W0909"]);
    let p = p.unwrap();
    assert_eq!(p.stmts()[0].label, "_S1");
    assert!(p.stmts()[0].label_generated);
}

#[test]
fn no_function_is_an_empty_program() {
    let (p, diags) = compile("int x;\n", FileId(0));
    assert_eq!(p.unwrap().stmts().len(), 0);
    let got: Vec<_> = diags.iter().map(|d| d.code).collect();
    assert_eq!(got, vec!["W0003"]);
}

#[test]
fn deep_nesting_skips_without_overflowing_the_stack() {
    let src = format!(
        "double x;\nvoid f(void) {{ x = {}1{}; }}\nvoid g(void) {{ {} x = 1; {} }}\n",
        "(".repeat(5000),
        ")".repeat(5000),
        "{".repeat(5000),
        "}".repeat(5000)
    );
    let got = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || codes(&src))
        .unwrap()
        .join()
        .unwrap();
    assert!(got.contains(&"W0901"), "{got:?}");
}

/// A cast through a typedef of a floating type is the cast function named
/// after the type and the typedef (printed back as `(real_t)`), also
/// written `(real_t)(x)`, which the parser reads as a call; a typedef of
/// an integer type declares integers, and a cast to one is transparent.
#[test]
fn casts_and_declarations_through_typedefs() {
    let src = "typedef float real_t;\ntypedef real_t scalar;\ntypedef long idx_t;\n\
               real_t A[4];\nidx_t K[4];\nvoid f(void) {\n\
               for (int i = 0; i < 4; i++) {\n\
               A[i] = (real_t) 1. + (scalar)(i + 1);\n\
               K[(idx_t)(i)] = (idx_t) i;\n}\n}\n";
    assert_eq!(codes(src), Vec::<&str>::new());
    same(
        src,
        "real A[0..3];\nint K[0..3];\n\
         for i = 0 to 3 do\n\
         A[i] = __cast_float__real_t(__lit_1_d()) + __cast_float__scalar(i + 1);\n\
         K[i] = i;\nend\n",
    );
}

#[test]
fn induction_variables_are_closed_forms_of_the_counter() {
    // j++ before the write: j = i there; the update assigns the closed
    // form (no read of j), so j keeps its C value after the loop.
    same_locals(
        "double A[8], B[8];\nint last;\nvoid f(void) {\n  int i, j;\n  j = -1;\n\
         for (i = 0; i < 8; i++) {\n    j++;\n    A[j] = B[i];\n  }\n  last = j;\n}\n",
        "int j;\nreal A[0..7];\nreal B[0..7];\nint last;\n\
         j = -1;\nfor i = 0 to 7 do j = i; A[i] = B[i]; end\nlast = j;\n",
        &["j"],
    );
    // Stepped by 4 in a loop of step 2: k = 2*i + 1 at the write.
    same_locals(
        "double A[20];\nvoid f(void) {\n  int i, k;\n  k = 1;\n\
         for (i = 0; i < 8; i += 2) {\n    A[k] = 0;\n    k += 4;\n  }\n}\n",
        "int k;\nreal A[0..19];\nk = 1;\nfor i = 0 to 7 step 2 do A[2 * i + 1] = 0; k = 2 * i + 5; end\n",
        &["k"],
    );
    // Stepped by a parameter: exact (k = inc*i), though not affine.
    same_locals(
        "double A[8], B[99];\nvoid f(int inc) {\n  int i, k;\n  k = 0;\n\
         for (i = 0; i < 8; i++) {\n    A[i] = B[k];\n    k += inc;\n  }\n}\n",
        "param inc;\nint k;\nreal A[0..7];\nreal B[0..98];\n\
         k = 0;\nfor i = 0 to 7 do A[i] = B[inc * i]; k = inc * i + inc; end\n",
        &["k"],
    );
    // Counting down: C's i is 7 - i', and k = i' at the write.
    same_locals(
        "double A[8], B[8];\nvoid f(void) {\n  int i, k;\n  k = 0;\n\
         for (i = 7; i >= 0; i--) {\n    A[k] = B[i];\n    k++;\n  }\n}\n",
        "int k;\nreal A[0..7];\nreal B[0..7];\n\
         k = 0;\nfor i = 0 to 7 do A[i] = B[-i + 7]; k = i + 1; end\n",
        &["k"],
    );
}

#[test]
fn two_counters_in_one_header() {
    // The counter is the one the test compares; j is set before the loop
    // and stepped after each trip, as C does.
    same_locals(
        "double A[8], B[8];\nvoid f(void) {\n  int i, j;\n\
         for (i = 0, j = 7; i < 8; i++, j--) A[i] = B[j];\n}\n",
        "int j;\nreal A[0..7];\nreal B[0..7];\n\
         j = 7;\nfor i = 0 to 7 do A[i] = B[-i + 7]; j = -i + 6; end\n",
        &["j"],
    );
}

#[test]
fn affine_scalars_are_forwarded() {
    // `j = i + 1` then `a[j]`: the subscript is i + 1. `k = 4` makes the
    // bound affine.
    same_locals(
        "double A[9];\nvoid f(void) {\n  int i, j, k;\n  k = 4;\n\
         for (i = 0; i < k; i++) {\n    j = i + 1;\n    A[j] = A[j] * 2;\n  }\n}\n",
        "int k;\nint j;\nreal A[0..8];\n\
         k = 4;\nfor i = 0 to 3 do j = i + 1; A[i + 1] = A[i + 1] * 2; end\n",
        &["j", "k"],
    );
}

#[test]
fn wrap_around_variables_split_on_the_first_trip() {
    same_locals(
        "double A[8], B[8];\nvoid f(void) {\n  int i, im1;\n  im1 = 7;\n\
         for (i = 0; i < 8; i++) {\n    B[i] = A[i] + A[im1];\n    im1 = i;\n  }\n}\n",
        "int im1;\nreal B[0..7];\nreal A[0..7];\n\
         im1 = 7;\nfor i = 0 to 7 do\n  if i == 0 then B[i] = A[i] + A[7];\n  \
         else B[i] = A[i] + A[i - 1]; end\n  im1 = i;\nend\n",
        &["im1"],
    );
}

#[test]
fn counters_the_front_end_cannot_follow_stay_scalars() {
    // Under a data-dependent `if`: k is read as the scalar it is.
    same_locals(
        "double A[8], B[8];\nvoid f(void) {\n  int i, k;\n  k = 0;\n\
         for (i = 0; i < 8; i++) {\n    if (B[i] > 0) {\n      A[k] = B[i];\n      k++;\n    }\n  }\n}\n",
        "int k;\nreal B[0..7];\nreal A[0..7];\n\
         k = 0;\nfor i = 0 to 7 do if B[i] > 0 then A[k] = B[i]; k += 1; end end\n",
        &["k"],
    );
    // A step that changes (s is assigned in the loop).
    same_locals(
        "double A[8];\nvoid f(void) {\n  int i, k, s;\n  k = 0;\n  s = 1;\n\
         for (i = 0; i < 8; i++) {\n    A[k] = 0;\n    k += s;\n    s = -s;\n  }\n}\n",
        "int k;\nint s;\nreal A[0..7];\n\
         k = 0;\ns = 1;\nfor i = 0 to 7 do A[k] = 0; k += s; s = -s; end\n",
        &["k", "s"],
    );
    // Its address is taken: the call may change it, so the loop writes
    // A[k] (the cell), not A[0].
    let p = crate::print::program(&c(
        "double A[8];\nvoid g(int *);\nvoid f(void) {\n  int i, k;\n  k = 0;\n  g(&k);\n\
         for (i = 0; i < 8; i++) A[k] = 0;\n}\n",
    ));
    assert!(p.contains("for i = 0 to 7 do\n  A[k] = 0;\nend\n"), "{p}");
}
