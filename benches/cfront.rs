//! The C front end: parse + lower a C file of 10,000 lines of
//! kernels. `cargo bench --bench cfront`. Target: under 200 ms.
//!
//! The file is PolyBench-style kernels (arrays and sizes as parameters,
//! labelled statements, counters declared at the top or in the loop), one
//! function each, repeated with numbered names until it has 10,000 lines:
//! matrix multiply, 2-D Jacobi, Gauss-Seidel, LU, a triangular solve
//! counting down, a reduction, a prefix sum, a CSR product (a loop run as a
//! `while`), a histogram through an index array, and a kernel with a
//! `while` loop, `if`/`else`, calls and a struct-free pointer parameter.

use arrayflow::diagnostics::{has_errors, FileId};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::fmt::Write;
use std::hint::black_box;

mod clock;
use clock::wall_and_cpu;

// The allocator of the `arrayflow` binary, so the figure is the CLI's.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The kernels, `{k}` standing for the copy's number.
const KERNELS: &str = r#"
void matmul_{k}(int n, double C[n][n], double A[n][n], double B[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      S: C[i][j] = 0;
      for (int k = 0; k < n; k++)
        T: C[i][j] += A[i][k] * B[k][j];
    }
}

void jacobi_2d_{k}(int tsteps, int n, double A[n][n], double B[n][n]) {
  int t, i, j;
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        S: B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][1 + j] + A[1 + i][j] + A[i - 1][j]);
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        T: A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][1 + j] + B[1 + i][j] + B[i - 1][j]);
  }
}

void seidel_2d_{k}(int tsteps, int n, double A[n][n]) {
  for (int t = 0; t <= tsteps - 1; t++)
    for (int i = 1; i <= n - 2; i++)
      for (int j = 1; j <= n - 2; j++)
        S: A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1]
                      + A[i][j - 1] + A[i][j] + A[i][j + 1]
                      + A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / 9.0;
}

void lu_{k}(int n, double A[n][n]) {
  for (int k = 0; k < n; k++)
    for (int i = k + 1; i < n; i++) {
      S: A[i][k] = A[i][k] / A[k][k];
      for (int j = k + 1; j < n; j++)
        T: A[i][j] -= A[i][k] * A[k][j];
    }
}

void backsolve_{k}(int n, double U[n][n], double b[n], double x[n]) {
  for (int i = n - 1; i >= 0; i--) {
    S: x[i] = b[i];
    for (int j = i + 1; j < n; j++)
      T: x[i] -= U[i][j] * x[j];
    R: x[i] = x[i] / U[i][i];
  }
}

double sum_{k}(int n, const double A[n]) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    S: s += A[i];
  return s;
}

void prefix_{k}(int n, int A[n], int B[n]) {
  I: B[0] = A[0];
  for (int i = 1; i < n; i++)
    S: B[i] = B[i - 1] + A[i];
}

void spmv_{k}(int n, int nnz, int rowptr[n + 1], int col[nnz], double val[nnz], double x[n], double y[n]) {
  for (int i = 0; i < n; i++) {
    Y: y[i] = 0;
    for (int k = rowptr[i]; k < rowptr[i + 1]; k++)
      A: y[i] += val[k] * x[col[k]];
  }
}

void histogram_{k}(int n, int m, int key[n], double w[n], double hist[m]) {
  for (int b = 0; b < m; b++)
    Z: hist[b] = 0;
  for (int i = 0; i < n; i++)
    H: hist[key[i] % m] += w[i];
}

int converge_{k}(int n, double *r, double tol) {
  int it = 0;
  double err = tol + 1;
  W: while (err > tol) {
    err = 0;
    for (int i = 0; i < n; i++) {
      if (r[i] > 0)
        P: r[i] = r[i] / 2;
      else
        Q: r[i] = -r[i] / 2;
      E: err = err + fabs(r[i]);
    }
    it++;
  }
  return it;
}
"#;

/// At least `lines` lines of C: the kernels, copy after copy.
fn source(lines: usize) -> String {
    let mut out = String::from("#include <math.h>\n");
    let mut k = 0;
    while out.lines().count() < lines {
        let _ = write!(out, "{}", KERNELS.replace("{k}", &k.to_string()));
        k += 1;
    }
    out
}

fn bench(c: &mut Criterion) {
    let source = source(10_000);
    let lines = source.lines().count();
    let (p, diags) = arrayflow::cfront::compile(&source, FileId(0));
    assert!(!has_errors(&diags), "the generated file lowers");
    let p = p.expect("a program");
    println!(
        "cfront input: {lines} lines, {} bytes, {} statements, {} arrays, {} diagnostics",
        source.len(),
        p.stmts().len(),
        p.arrays.len(),
        diags.len()
    );
    let mut g = c.benchmark_group("cfront");
    g.sample_size(20);
    g.throughput(Throughput::Bytes(source.len() as u64));
    wall_and_cpu(&mut g, "parse+lower 10k lines", || {
        arrayflow::cfront::compile(black_box(&source), FileId(0))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
