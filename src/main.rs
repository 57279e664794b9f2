//! The `litmix` command line.
//!
//! Each subcommand lives in its own module under `src/cli/`; this file only
//! declares the command set and dispatches.

#[macro_use]
mod cli;

use clap::{Parser, Subcommand};

/// The command line allocates through the library's small-block cache
/// ([`litmix::small_alloc::SmallAlloc`]); a program built on the library
/// chooses its own allocator.
#[global_allocator]
static GLOBAL: litmix::small_alloc::SmallAlloc = litmix::small_alloc::SmallAlloc;
use cli::{
    bench::BenchArgs, compare::CompareArgs, conform::ConformArgs, convert::ConvertArgs,
    fuzz::FuzzArgs, hw::HwArgs, models::ModelsArgs, run::RunArgs, serve::ServeArgs, step::StepArgs,
    synth::SynthArgs,
};
use std::process::ExitCode;

/// One-line descriptions of the subcommands: the derived [`Command`] and
/// the lazily built [`command_line`] both read them, so `--help` says the
/// same whichever builds it.
mod about {
    pub const RUN: &str =
        "Check litmus tests (files or directories of *.litmus and NVLitmus *.test)";
    pub const CONVERT: &str = "Write NVLitmus .test files in the herd-style litmus form (one test per template row), or print litmus tests back as litmix reads them";
    pub const BENCH: &str = "Time the checks of whole suites: tests/second and the slowest tests";
    pub const CONFORM: &str = "Compare litmix's verdicts with a manifest of expected verdicts";
    pub const COMPARE: &str = "Compare two models (axiomatic or operational) test by test";
    pub const STEP: &str = "Step through an operational model by hand (pick, undo, replay)";
    pub const MODELS: &str =
        "List the built-in models (`--pruning MODEL`: which checks prune the search)";
    pub const FUZZ: &str =
        "Mutation-fuzz the front ends and the cat parser (findings become regression tests)";
    pub const MAPPINGS: &str = "List the built-in compiler mappings";
    pub const COMPILE: &str =
        "Print a source test compiled with a mapping (a litmus test `run` accepts)";
    pub const CHECK_MAPPING: &str =
        "Compare source and target models on source tests compiled with a mapping";
    pub const VERIFY_MAPPING: &str = "Check a mapping on every source program up to a bound";
    pub const MERGE: &str = "Add up the `verify-mapping --json` summaries of shards";
    pub const SYNTH: &str = "Synthesise minimal forbidden tests of a model (or distinguishing ones: compare --distinguish)";
    pub const SERVE: &str = "Serve the web playground (loopback by default; all assets embedded)";
    pub const HW: &str =
        "Run PTX tests on an NVIDIA GPU and check the states seen against the model";
    /// The program's own description.
    pub const LITMIX: &str = "Check litmus tests against GPU and CPU memory models";
}

#[derive(Parser)]
#[command(name = "litmix", version, about = about::LITMIX)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    #[command(about = about::RUN)]
    Run(RunArgs),
    #[command(about = about::CONVERT)]
    Convert(ConvertArgs),
    #[command(about = about::BENCH)]
    Bench(BenchArgs),
    #[command(about = about::CONFORM)]
    Conform(ConformArgs),
    #[command(about = about::COMPARE)]
    Compare(CompareArgs),
    #[command(about = about::STEP)]
    Step(StepArgs),
    #[command(about = about::MODELS)]
    Models(ModelsArgs),
    #[command(about = about::FUZZ)]
    Fuzz(FuzzArgs),
    #[command(about = about::MAPPINGS)]
    Mappings,
    #[command(about = about::COMPILE)]
    Compile(cli::mapping::CompileArgs),
    #[command(about = about::CHECK_MAPPING)]
    CheckMapping(cli::mapping::CheckMappingArgs),
    #[command(about = about::VERIFY_MAPPING)]
    VerifyMapping(cli::mapping::VerifyMappingArgs),
    #[command(about = about::MERGE)]
    Merge(cli::mapping::MergeArgs),
    #[command(about = about::SYNTH)]
    Synth(SynthArgs),
    #[command(about = about::SERVE)]
    Serve(ServeArgs),
    #[command(about = about::HW)]
    Hw(HwArgs),
}

/// The command line clap parses: [`Cli`]'s, with each subcommand's
/// arguments added only when that subcommand is the one given
/// (`clap::Command::defer`). Building all sixteen argument sets took most
/// of a millisecond on every start, as long as a whole check of a small
/// test. The test `lazy_command_line_is_the_derived_one` checks that
/// both give the same help, usage and settings.
fn command_line() -> clap::Command {
    use clap::Command as C;
    /// A subcommand whose arguments are built when it is used; its
    /// description is set again after them, as the derived parser does (a
    /// flattened argument struct brings its own).
    macro_rules! sub {
        ($name:literal, $about:expr, $args:ty) => {
            C::new($name).about($about).defer(|c| {
                <$args as clap::Args>::augment_args(c)
                    .about($about)
                    .long_about(None)
            })
        };
    }
    C::new("litmix")
        .version(env!("CARGO_PKG_VERSION"))
        .about(about::LITMIX)
        .subcommand_required(true)
        .arg_required_else_help(true)
        .subcommand(sub!("run", about::RUN, RunArgs))
        .subcommand(sub!("convert", about::CONVERT, ConvertArgs))
        .subcommand(sub!("bench", about::BENCH, BenchArgs))
        .subcommand(sub!("conform", about::CONFORM, ConformArgs))
        .subcommand(sub!("compare", about::COMPARE, CompareArgs))
        .subcommand(sub!("step", about::STEP, StepArgs))
        .subcommand(sub!("models", about::MODELS, ModelsArgs))
        .subcommand(sub!("fuzz", about::FUZZ, FuzzArgs))
        .subcommand(C::new("mappings").about(about::MAPPINGS))
        .subcommand(sub!("compile", about::COMPILE, cli::mapping::CompileArgs))
        .subcommand(sub!(
            "check-mapping",
            about::CHECK_MAPPING,
            cli::mapping::CheckMappingArgs
        ))
        .subcommand(sub!(
            "verify-mapping",
            about::VERIFY_MAPPING,
            cli::mapping::VerifyMappingArgs
        ))
        .subcommand(sub!("merge", about::MERGE, cli::mapping::MergeArgs))
        .subcommand(sub!("synth", about::SYNTH, SynthArgs))
        .subcommand(sub!("serve", about::SERVE, ServeArgs))
        .subcommand(sub!("hw", about::HW, HwArgs))
}

/// Parses the process's arguments with [`command_line`]; `--help`,
/// `--version` and argument errors print and exit as clap's derived
/// parser does.
fn parse_args() -> Cli {
    use clap::FromArgMatches;
    let mut matches = command_line().get_matches();
    Cli::from_arg_matches_mut(&mut matches).unwrap_or_else(|e| e.format(&mut command_line()).exit())
}

fn main() -> ExitCode {
    // `--help`, `--version` and argument errors end here, before any
    // thread starts.
    let cli = parse_args();
    // Before any worker starts: glibc sizes a thread's heap when the
    // thread first allocates, so a worker that allocated before this call
    // would grow its heap a page at a time.
    if !matches!(cli.command, Command::Serve(_)) {
        litmix::budget::grow_heap_in_big_steps();
    }
    // Parsers and the evaluator bound their depth for this stack, on the
    // main work's thread and on rayon's.
    litmix::budget::init_thread_pool();
    // The searches that allocate and free millions of blocks take them
    // from mimalloc (docs/decisions.md, "mimalloc for synthesis").
    if matches!(cli.command, Command::Synth(_) | Command::Compare(_)) {
        litmix::small_alloc::prefer_mimalloc();
    }
    // Every command's work runs on one of the pool's workers, but for
    // those that wait on threads of their own which may need the pool
    // (fuzz judges each input on a thread it waits for; the GPU harness
    // runs host threads) and the server, which runs until stopped: on a
    // worker they could leave a one-thread pool with none free.
    if matches!(
        cli.command,
        Command::Serve(_) | Command::Fuzz(_) | Command::Hw(_)
    ) {
        litmix::budget::with_big_stack(move || dispatch(cli))
    } else {
        litmix::budget::on_pool(move || dispatch(cli))
    }
}

fn dispatch(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Run(a) => cli::run::run(a),
        Command::Convert(a) => cli::convert::convert(a),
        Command::Bench(a) => cli::bench::bench(a),
        Command::Conform(a) => cli::conform::conform(a),
        Command::Compare(a) => cli::compare::compare(a),
        Command::Step(a) => cli::step::step(a),
        Command::Models(a) => cli::models::models(a),
        Command::Fuzz(a) => cli::fuzz::fuzz(a),
        Command::Mappings => cli::mapping::list(),
        Command::Compile(a) => cli::mapping::compile(a),
        Command::CheckMapping(a) => cli::mapping::check_mapping(a),
        Command::VerifyMapping(a) => cli::mapping::verify_mapping(a),
        Command::Merge(a) => cli::mapping::merge(a),
        Command::Synth(a) => cli::synth::synth(a),
        Command::Serve(a) => cli::serve::serve(a),
        Command::Hw(a) => cli::hw::hw(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// What clap prints for `args`: help, version or error text, or the
    /// name of the subcommand parsed.
    fn outcome(cmd: clap::Command, args: &[&str]) -> String {
        match cmd.try_get_matches_from(args) {
            Ok(m) => format!("parsed {:?}", m.subcommand_name()),
            Err(e) => format!("{:?}\n{}", e.kind(), e.render()),
        }
    }

    #[test]
    fn lazy_command_line_is_the_derived_one() {
        let derived = Cli::command();
        let names: Vec<String> = derived
            .get_subcommands()
            .map(|s| s.get_name().to_string())
            .collect();
        let lazy: Vec<String> = command_line()
            .get_subcommands()
            .map(|s| s.get_name().to_string())
            .collect();
        assert_eq!(names, lazy);
        assert_eq!(names.len(), 16);
        let mut cases: Vec<Vec<&str>> = vec![
            vec!["litmix"],
            vec!["litmix", "--help"],
            vec!["litmix", "-h"],
            vec!["litmix", "--version"],
            vec!["litmix", "nonsense"],
            vec!["litmix", "run", "--model", "sc", "a.litmus"],
            vec!["litmix", "hw", "--help"],
        ];
        for n in &names {
            for tail in [&["--help"][..], &["-h"], &["--no-such-flag"], &[]] {
                let mut c = vec!["litmix", n.as_str()];
                c.extend(tail);
                cases.push(c);
            }
        }
        for args in &cases {
            let d = outcome(Cli::command(), args);
            let l = outcome(command_line(), args);
            assert_eq!(d, l, "litmix differs on {args:?}");
        }
        // The help texts are real ones, not two identical errors.
        let help = outcome(command_line(), &["litmix", "run", "--help"]);
        assert!(
            help.starts_with("DisplayHelp") && help.contains("--model"),
            "{help}"
        );
    }
}
