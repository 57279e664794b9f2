//! The command line's subcommands, one module each; `main.rs` only parses
//! and dispatches. Shared here: output that survives a closed pipe, the
//! progress bar, the search limits every checking command takes.

use clap::Args;
use litmix::exec::CheckOptions;
use std::io::IsTerminal;

/// Checks a write to stdout: a closed pipe (`litmix run ... | head`) ends
/// the program quietly, any other failure with a message.
pub fn emit(r: std::io::Result<()>) {
    if let Err(e) = r {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("litmix: cannot write output: {e}");
        std::process::exit(2);
    }
}

/// `println!` that goes through [`emit`].
macro_rules! outln {
    () => { $crate::cli::emit(writeln!(std::io::stdout().lock())) };
    ($($t:tt)*) => { $crate::cli::emit(writeln!(std::io::stdout().lock(), $($t)*)) };
}

/// `print!` that goes through [`emit`].
macro_rules! out {
    ($($t:tt)*) => { $crate::cli::emit(write!(std::io::stdout().lock(), $($t)*)) };
}

pub mod bench;
pub mod compare;
pub mod conform;
pub mod convert;
pub mod fuzz;
pub mod http_client;
pub mod hw;
pub mod live;
pub mod mapping;
pub mod models;
pub mod run;
pub mod serve;
pub mod serve_bench;
pub mod step;
pub mod synth;

/// Search limits shared by every command that checks tests.
#[derive(Args, Clone)]
pub struct Limits {
    /// Times a backward jump may be taken on one path.
    #[arg(long, default_value_t = 2)]
    pub unroll: usize,
    /// Give up on a test after this many candidate executions.
    #[arg(long, default_value_t = 2_000_000)]
    pub max_candidates: u64,
    /// Give up on a test whose thread path has more events than this.
    #[arg(long, default_value_t = 256)]
    pub max_events: usize,
    /// Operational models: give up on a test after this many machine states.
    #[arg(long, default_value_t = 2_000_000)]
    pub max_states: usize,
    /// Give a test a `timeout` result after this many seconds (the other
    /// tests are still checked and reported).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Judge every candidate whole: no pruning by the model's monotone
    /// checks (same results, for comparison; see docs/pruning.md).
    #[arg(long)]
    pub no_prune: bool,
}

/// How user models are loaded, as herd does (`-I`, `-variant`).
#[derive(Args, Clone)]
pub struct CatArgs {
    /// Directory searched for a model's includes and for herd's stdlib.cat
    /// (repeatable; also the LITMIX_CAT_PATH environment variable).
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    pub include: Vec<std::path::PathBuf>,
    /// Set a model variant for `if "NAME"` (repeatable; herd's -variant).
    #[arg(long, value_name = "NAME")]
    pub variant: Vec<String>,
    /// A bell file loaded before a model file (herd's -bell): its enums,
    /// `instructions` declarations and definitions are visible to the model.
    #[arg(long, value_name = "FILE")]
    pub bell: Option<std::path::PathBuf>,
    /// Treat upper-case names no front end defines as empty sets (with a
    /// warning) instead of errors.
    #[arg(long)]
    pub lenient: bool,
}

impl CatArgs {
    /// Configures model loading and the engine options.
    pub fn apply(&self, opts: &mut CheckOptions) {
        litmix::models::configure(litmix::models::LoadConfig {
            include_dirs: self.include.clone(),
            variants: self.variant.clone(),
            bell: self.bell.clone(),
        });
        if self.lenient {
            eprintln!(
                "litmix: warning: --lenient: upper-case names no front end defines are empty sets"
            );
        }
        opts.lenient = self.lenient;
    }
}

/// The engine options for these limits (the driver's one conversion).
pub fn options(l: &Limits) -> CheckOptions {
    litmix::driver::Limits {
        unroll: l.unroll,
        max_candidates: l.max_candidates,
        max_events: l.max_events,
        max_states: l.max_states,
        prune: !l.no_prune,
        timeout: litmix::driver::Limits::timeout_secs(l.timeout),
        ..Default::default()
    }
    .options()
}

/// A progress bar on stderr when it is a terminal and there is more than one item.
pub fn progress(total: usize) -> Option<indicatif::ProgressBar> {
    if total > 1 && std::io::stderr().is_terminal() {
        let pb = indicatif::ProgressBar::new(total as u64);
        pb.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(pb)
    } else {
        None
    }
}
