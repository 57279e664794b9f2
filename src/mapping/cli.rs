//! The mapping subcommands, called from `main.rs`: argument structs (clap)
//! and their implementations.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// `litmix compile`.
#[derive(Args)]
pub struct CompileArgs {
    /// Mapping: a built-in name (see `litmix mappings`) or a mapping file.
    #[arg(long)]
    pub mapping: String,
    /// Source litmus files (C / OpenCL).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// `litmix mappings`: lists the built-in mappings.
pub fn list() -> ExitCode {
    for b in super::BUILTINS {
        match super::format::parse(b.name, b.source) {
            Ok(m) => println!(
                "{:22} {} -> {}  {}",
                m.name, m.source, m.target, m.description
            ),
            Err(d) => {
                eprintln!("{}", d.render());
                return ExitCode::from(2);
            }
        }
    }
    ExitCode::SUCCESS
}

/// `litmix compile`: prints each file compiled with the mapping.
pub fn compile(a: CompileArgs) -> ExitCode {
    let m = match super::load(&a.mapping) {
        Ok(m) => m,
        Err(d) => {
            eprintln!("{}", d.render());
            return ExitCode::from(2);
        }
    };
    let mut failed = false;
    for (i, f) in a.files.iter().enumerate() {
        let src = match crate::litmus::parse_file(f) {
            Ok(t) => t,
            Err(d) => {
                eprintln!("{}", d.render());
                failed = true;
                continue;
            }
        };
        match super::compile::compile(&m, &src) {
            Ok(c) => {
                if i > 0 {
                    println!();
                }
                print!("{}", c.text);
            }
            Err(d) => {
                eprintln!("{}", d.render());
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
