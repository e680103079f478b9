//! `arrayflow fmt FILE`: print the file in canonical form (see `print`).
//! The comment lines at the top of the file (its header) are kept; other
//! comments are dropped, because the program model does not hold them.
//! A C file prints as the `.loop` program it lowers to, under a comment
//! line that says so.

use super::load;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The `.loop` file to format, or a C file to show as `.loop`.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

pub fn run(args: &Args) -> ExitCode {
    match load(&args.file) {
        Ok(loaded) => {
            let c_header;
            let header = if crate::cfront::is_c_path(&args.file) {
                c_header = format!(
                    "# The .loop form of {} (arrayflow fmt; docs/c.md).",
                    args.file.display()
                );
                &c_header
            } else {
                header(loaded.files.source(loaded.file))
            };
            let source = loaded.files.source(loaded.file);
            match crate::lower::format_procs(source, loaded.file) {
                // A file with procedures prints them and its calls back.
                Some(text) if !crate::cfront::is_c_path(&args.file) => {
                    print!("{}", with_header(header, text))
                }
                _ => print!("{}", format_with_header(header, &loaded.program)),
            }
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

/// The leading comment lines of a source (blank lines between them kept).
pub fn header(source: &str) -> &str {
    let mut end = 0;
    for line in source.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with('#') || t.starts_with("//") || t.is_empty() {
            end += line.len();
        } else {
            break;
        }
    }
    source[..end].trim_end()
}

/// The canonical text of a program under a header.
pub fn format_with_header(header: &str, program: &crate::model::Program) -> String {
    with_header(header, crate::print::program(program))
}

fn with_header(header: &str, body: String) -> String {
    if header.is_empty() {
        body
    } else {
        format!("{header}\n{body}")
    }
}
