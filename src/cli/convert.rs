//! `litmix convert`: NVLitmus `.test` files to herd-style litmus.

use clap::Args;
use litmix::driver::artefacts::sanitize;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ConvertArgs {
    /// Write one FILE.litmus per test into this directory instead of stdout.
    #[arg(long, short, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// NVLitmus .test files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// Runs `litmix convert`.
pub fn convert(a: ConvertArgs) -> ExitCode {
    use litmix::litmus::nvlitmus;
    if let Some(dir) = &a.out
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        eprintln!("litmix: cannot create {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    let mut failed = false;
    let mut first = true;
    for f in &a.files {
        if !nvlitmus::is_nvlitmus_path(f) {
            eprintln!(
                "litmix convert: {}: not an NVLitmus .test file",
                f.display()
            );
            failed = true;
            continue;
        }
        let name = f.display().to_string();
        let source = match std::fs::read_to_string(f) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("litmix convert: {name}: {e}");
                failed = true;
                continue;
            }
        };
        for inst in nvlitmus::parse_all(&name, &source) {
            let test = match inst.test {
                Ok(t) => t,
                Err(d) => {
                    eprintln!("{}", d.render());
                    failed = true;
                    continue;
                }
            };
            let doc = match inst.row {
                Some(r) => format!("Converted from {name}, template row {r}"),
                None => format!("Converted from {name}"),
            };
            let text = nvlitmus::to_herd(&test, &doc);
            match &a.out {
                Some(dir) => {
                    let path = dir.join(format!("{}.litmus", sanitize(&test.name)));
                    if let Err(e) = std::fs::write(&path, text) {
                        eprintln!("litmix: cannot write {}: {e}", path.display());
                        failed = true;
                    }
                }
                None => {
                    if !first {
                        outln!();
                    }
                    out!("{text}");
                    first = false;
                }
            }
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
