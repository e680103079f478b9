// The front end allocates and frees many small nodes; mimalloc does that
// markedly faster than the system allocator (docs/benchmarks.md). The
// counting wrapper gives the memory budget its live bytes (src/budget.rs).
// Built without transparent huge pages (`no_thp`): with them, each fresh
// 2 MiB page is zeroed whole, which took up to half of `expand`'s time.
#[global_allocator]
static ALLOC: arrayflow::budget::Counting<mimalloc::MiMalloc> =
    arrayflow::budget::Counting::new(mimalloc::MiMalloc);

fn main() -> std::process::ExitCode {
    let code = arrayflow::cli::main();
    // The peak of the live bytes the memory budget counts, for measuring a
    // command against `--max-memory` (docs/scaling.md).
    if std::env::var_os("ARRAYFLOW_PEAK").is_some() {
        let peak = arrayflow::budget::peak().unwrap_or(0);
        eprintln!("peak heap: {peak} bytes");
    }
    code
}
