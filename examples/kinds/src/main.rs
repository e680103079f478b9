//! `arrayflow-kinds`: the `arrayflow` command with the kinds of this crate.

fn main() -> std::process::ExitCode {
    arrayflow::cli::main_with(arrayflow_kinds::kinds())
}
