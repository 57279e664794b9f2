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

#[derive(Parser)]
#[command(
    name = "litmix",
    version,
    about = "Check litmus tests against GPU and CPU memory models"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check litmus tests (files or directories of *.litmus and NVLitmus *.test).
    Run(RunArgs),
    /// Write NVLitmus .test files in the herd-style litmus form (one test per template row), or print litmus tests back as litmix reads them.
    Convert(ConvertArgs),
    /// Time the checks of whole suites: tests/second and the slowest tests.
    Bench(BenchArgs),
    /// Compare litmix's verdicts with a manifest of expected verdicts.
    Conform(ConformArgs),
    /// Compare two models (axiomatic or operational) test by test.
    Compare(CompareArgs),
    /// Step through an operational model by hand (pick, undo, replay).
    Step(StepArgs),
    /// List the built-in models (`--pruning MODEL`: which checks prune the search).
    Models(ModelsArgs),
    /// Mutation-fuzz the front ends and the cat parser (findings become regression tests).
    Fuzz(FuzzArgs),
    /// List the built-in compiler mappings.
    Mappings,
    /// Print a source test compiled with a mapping (a litmus test `run` accepts).
    Compile(cli::mapping::CompileArgs),
    /// Compare source and target models on source tests compiled with a mapping.
    CheckMapping(cli::mapping::CheckMappingArgs),
    /// Check a mapping on every source program up to a bound.
    VerifyMapping(cli::mapping::VerifyMappingArgs),
    /// Add up the `verify-mapping --json` summaries of shards.
    Merge(cli::mapping::MergeArgs),
    /// Synthesise minimal forbidden tests of a model (or distinguishing ones: compare --distinguish).
    Synth(SynthArgs),
    /// Serve the web playground (loopback by default; all assets embedded).
    Serve(ServeArgs),
    /// Run PTX tests on an NVIDIA GPU and check the states seen against the model.
    Hw(HwArgs),
}

fn main() -> ExitCode {
    // `--help`, `--version` and argument errors end here, before any
    // thread starts.
    let cli = Cli::parse();
    // Parsers and the evaluator bound their depth for this stack, on the
    // main work's thread and on rayon's.
    litmix::budget::init_thread_pool();
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
