//! `arrayflow gen --seed S [--size small|medium|large]`: print a random valid
//! program whose subscripts stay in range at its parameter defaults.

use crate::gen::{generate, GenOptions, Size};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[arg(long, value_enum, default_value_t = Size::Small)]
    pub size: Size,
    /// Only affine subscripts and conditions, no `while`: a static control
    /// program, on which the dataflow analysis can be exact.
    #[arg(long)]
    pub static_control: bool,
}

pub fn run(args: &Args) -> ExitCode {
    let options = if args.static_control {
        GenOptions::static_control(args.size)
    } else {
        GenOptions::all(args.size)
    };
    let program = generate(args.seed, &options);
    let size = format!("{:?}", args.size).to_lowercase();
    let restrict = if args.static_control {
        " --static-control"
    } else {
        ""
    };
    println!(
        "# arrayflow gen --seed {} --size {size}{restrict}",
        args.seed
    );
    print!("{}", crate::print::program(&program));
    ExitCode::SUCCESS
}
