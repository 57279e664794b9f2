//! `litmix models`: the built-in models, or with `--pruning MODEL` which of
//! a model's checks cut partial candidates and why the others cannot.

use clap::Args;
use std::io::Write;
use std::process::ExitCode;

#[derive(Args)]
pub struct ModelsArgs {
    /// Show which checks of this model (built-in name or .cat file) prune
    /// the search, and why the others cannot (docs/pruning.md).
    #[arg(long, value_name = "MODEL")]
    pub pruning: Option<String>,
}

/// Runs `litmix models`.
pub fn models(a: ModelsArgs) -> ExitCode {
    let Some(spec) = a.pruning else {
        for b in litmix::models::BUILTINS {
            outln!("{:16} {}", b.name, b.description);
        }
        for litmix::driver::MachineModel {
            name: n,
            description: d,
            ..
        } in litmix::driver::MACHINES
        {
            outln!("{n:16} {d}");
        }
        for m in litmix::driver::DENOTATIONAL {
            outln!("{:16} {}", m.name, m.description);
        }
        for (v, d) in litmix::op::lostpop::VARIANTS
            .iter()
            .chain(litmix::pwt::VARIANTS)
        {
            outln!("{:16} --variant {v}: {d}", "");
        }
        for (a, t) in litmix::models::ALIASES {
            outln!("{a:16} alias of {t}");
        }
        return ExitCode::SUCCESS;
    };
    if litmix::driver::is_operational(&spec) || litmix::driver::denotational(&spec).is_some() {
        outln!(
            "{spec} is an operational or denotational judge, not a cat model: there are no cat checks to prune"
        );
        return ExitCode::SUCCESS;
    }
    match litmix::models::load(&spec) {
        Ok(model) => {
            out!("{}", litmix::exec::prune::report(&model));
            ExitCode::SUCCESS
        }
        Err(d) => {
            eprintln!("{}", d.render());
            ExitCode::from(2)
        }
    }
}
