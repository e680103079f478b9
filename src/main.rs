// The front end allocates and frees many small nodes; mimalloc does that
// markedly faster than the system allocator (docs/benchmarks.md).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    arrayflow::cli::main()
}
