//! The `riskgate` binary: parse the command line, set up logging, run.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = riskgate::cli::Cli::parse();
    match riskgate::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("riskgate: {error}");
            error.exit_code()
        }
    }
}
