fn main() -> std::process::ExitCode {
    arrayflow::cli::main()
}
