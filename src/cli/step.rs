//! `litmix step`: walk an operational machine by hand in the terminal.

use clap::Args;
use litmix::op::step::{Session, render};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct StepArgs {
    /// Operational model: `lostpop` (default) or `rsp-cache`/`rsp-cache-nolock`.
    #[arg(long, default_value = "lostpop")]
    pub model: String,
    /// Start by replaying these transition numbers (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "N,N,...")]
    pub replay: Vec<usize>,
    /// Times a backward jump may be taken.
    #[arg(long, default_value_t = 2)]
    pub unroll: usize,
    /// The litmus test.
    pub file: PathBuf,
}

const HELP: &str = "commands: N (take transition N), u (undo), r N,N,... (replay from the start), \
t (the trace so far), h (help), q (quit)";

/// Runs `litmix step`: shows the state and its enabled transitions, then
/// reads commands from standard input (a terminal or a script) until `q`
/// or the end of input.
pub fn step(a: StepArgs) -> ExitCode {
    let test = match litmix::litmus::parse_file(&a.file) {
        Ok(t) => t,
        Err(d) => {
            eprintln!("{}", d.render());
            return ExitCode::from(1);
        }
    };
    match litmix::driver::open_session(&test, &a.model, a.unroll) {
        Ok(mut s) => session(s.as_mut(), &a.replay),
        Err(e @ litmix::driver::OpenError::NotOperational(_)) => {
            eprintln!("litmix step: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}

fn session(s: &mut dyn Session, replay: &[usize]) -> ExitCode {
    if let Err(e) = s.replay(replay) {
        eprintln!("litmix step: --replay: {e}");
        return ExitCode::from(1);
    }
    let interactive = std::io::stdin().is_terminal();
    if interactive {
        outln!("{HELP}");
    }
    outln!("{}", render(&s.view()));
    let stdin = std::io::stdin();
    loop {
        if interactive {
            out!("> ");
            let _ = std::io::stdout().flush();
        }
        let mut line = String::new();
        match stdin.lock().read_line(&mut line) {
            Ok(0) | Err(_) => return ExitCode::SUCCESS,
            Ok(_) => {}
        }
        let cmd = line.trim();
        let shown = match cmd {
            "" => continue,
            "q" | "quit" => return ExitCode::SUCCESS,
            "h" | "help" | "?" => {
                outln!("{HELP}");
                continue;
            }
            "u" | "undo" => {
                if s.undo() {
                    "undone".to_string()
                } else {
                    "at the initial state".to_string()
                }
            }
            "t" | "trace" => {
                let picks: Vec<String> = s.picks().iter().map(|i| i.to_string()).collect();
                outln!("replay: {}", picks.join(","));
                for (k, l) in s.history().iter().enumerate() {
                    outln!("  {}. {l}", k + 1);
                }
                continue;
            }
            _ if cmd.starts_with("r ") => {
                let trace: Result<Vec<usize>, _> = cmd[2..]
                    .split(',')
                    .map(|x| x.trim().parse::<usize>())
                    .collect();
                match trace {
                    Ok(t) => match s.replay(&t) {
                        Ok(()) => format!("replayed {} steps", t.len()),
                        Err(e) => e.to_string(),
                    },
                    Err(_) => "expected: r N,N,...".to_string(),
                }
            }
            _ => match cmd.parse::<usize>() {
                Ok(i) => match s.pick(i) {
                    Ok(label) => format!("took [{i}] {label}"),
                    Err(e) => e,
                },
                Err(_) => format!("unknown command '{cmd}'; {HELP}"),
            },
        };
        outln!("{shown}");
        outln!("{}", render(&s.view()));
    }
}
