//! `litmix convert`: NVLitmus `.test` files to herd-style litmus; any other
//! litmus file printed back as litmix reads it (`litmus::print`).

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
    /// NVLitmus .test files; other litmus files (X86, PTX, X86+PTX, C,
    /// OpenCL) are printed back as litmix reads them.
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
        let name = f.display().to_string();
        if !nvlitmus::is_nvlitmus_path(f) {
            for parsed in litmix::litmus::parse_file_all(f) {
                let text = match parsed {
                    Ok(t) => litmix::litmus::print::print_test(&t)
                        .map(|text| (t.name.clone(), text))
                        .map_err(|e| format!("litmix convert: {name}: cannot print: {e}")),
                    Err(d) => Err(d.render()),
                };
                match text {
                    Ok((test, text)) => failed |= !emit(&a, &test, &text, &mut first),
                    Err(e) => {
                        eprintln!("{e}");
                        failed = true;
                    }
                }
            }
            continue;
        }
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
            failed |= !emit(&a, &test.name, &text, &mut first);
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Writes one test's text into `--out` (as NAME.litmus) or to stdout;
/// false when it could not be written.
fn emit(a: &ConvertArgs, name: &str, text: &str, first: &mut bool) -> bool {
    match &a.out {
        Some(dir) => {
            let path = dir.join(format!("{}.litmus", sanitize(name)));
            if let Err(e) = std::fs::write(&path, text) {
                eprintln!("litmix: cannot write {}: {e}", path.display());
                return false;
            }
        }
        None => {
            if !*first {
                outln!();
            }
            out!("{text}");
            *first = false;
        }
    }
    true
}
