//! A mutation fuzzer over every input language: litmus front ends (PTX,
//! x86, X86+PTX, C/OpenCL, NVLitmus `.test`), cat models and compiler
//! mapping files, seeded from `examples/`, `models/`, `mappings/` and
//! `../shared/oracles`.
//!
//! Each input is a seed file mutated a few times (lines deleted, duplicated
//! up to a dozen times, swapped, spliced from another seed of the same
//! kind; characters and tokens inserted; numbers enlarged; truncation).
//! A litmus input is parsed and, when it parses, checked under its default
//! model; a cat input is parsed and, when it parses, used to check a few
//! small tests. Every check runs with a deadline. A *finding* is an input
//! that panicked, or that ran past the limit without an answer (a timeout
//! result, or no return at all). Findings are written out so that they
//! become regression tests (`tests/fuzz-regressions/`, see
//! `tests/fuzz.rs`). Mapping files (`mappings/*.map`) are parsed.
//!
//! Run: `litmix fuzz --seconds 600` (the documented long run; see
//! docs/fuzzing.md). CI runs a fixed number of inputs (`tests/fuzz.rs`).

use crate::verdict::{CheckError, CheckOptions};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What an input is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A herd-style litmus file (any front end).
    Litmus,
    /// An NVLitmus `.test` template file.
    NvLitmus,
    /// A cat model.
    Cat,
    /// A compiler mapping file (`mappings/*.map`).
    Mapping,
}

impl Target {
    /// The file extension of inputs of this kind.
    pub fn extension(self) -> &'static str {
        match self {
            Target::Litmus => "litmus",
            Target::NvLitmus => "test",
            Target::Cat => "cat",
            Target::Mapping => "map",
        }
    }

    fn of(path: &Path) -> Option<Target> {
        match path.extension()?.to_str()? {
            "litmus" => Some(Target::Litmus),
            "test" => Some(Target::NvLitmus),
            "cat" => Some(Target::Cat),
            "map" => Some(Target::Mapping),
            _ => None,
        }
    }
}

/// One seed or input.
#[derive(Clone, Debug)]
pub struct Input {
    pub target: Target,
    pub name: String,
    pub text: String,
}

/// How one input ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Parsed and checked, or rejected with a diagnostic or a limit message.
    Answered,
    /// Panicked (the message).
    Panicked(String),
    /// A timeout result: no answer within the limit.
    Timeout,
    /// Did not return within three times the limit.
    Hung,
    /// Parsed, printed back ([`crate::litmus::print::print_test`]), and the
    /// printed text does not parse (the diagnostic).
    Misprinted(String),
}

/// An input worth keeping.
#[derive(Clone, Debug)]
pub struct Finding {
    pub input: Input,
    pub verdict: Verdict,
    pub seconds: f64,
}

/// Totals of a run.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub inputs: u64,
    pub litmus: u64,
    pub cat: u64,
    pub mapping: u64,
    pub findings: Vec<Finding>,
    /// The slowest input that got an answer, and its time.
    pub slowest: Option<(String, f64)>,
}

/// Reads the seeds: `.litmus`, `.test` and `.cat` files under `dirs`.
pub fn seeds(dirs: &[PathBuf]) -> Vec<Input> {
    let mut files = Vec::new();
    for d in dirs {
        walk(d, &mut files);
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|p| {
            let target = Target::of(&p)?;
            let text = std::fs::read_to_string(&p).ok()?;
            Some(Input {
                target,
                name: p.display().to_string(),
                text,
            })
        })
        .collect()
}

fn walk(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_file() {
        out.push(p.to_path_buf());
        return;
    }
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            walk(&e.path(), out);
        }
    }
}

/// A small deterministic generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
}

/// Tokens worth inserting: keywords and shapes of every language.
const TOKENS: &[&str] = &[
    "fence.sc.gpu",
    "fence.sc.sys",
    "fence.acq_rel.cta",
    "st.release.gpu x, 1",
    "ld.acquire.gpu r9, x",
    "atom.acq_rel.gpu.cas r1, y, 0, 1",
    "bar.cta.sync 0",
    "MFENCE",
    "MOV [x],$1",
    "LOCK XADD [x],EAX",
    "beq r0, 0, L",
    "L:",
    "|",
    ";",
    "\n",
    "P9@cta 9,gpu 9",
    "exists",
    "~exists",
    "forall",
    "/\\",
    "\\/",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "0",
    "-1",
    "4294967296",
    "99999999999999999999",
    "\"",
    "(*",
    "*)",
    "let",
    "let rec",
    "and",
    "acyclic",
    "irreflexive",
    "empty",
    "~",
    "\\",
    "&",
    ";",
    "^-1",
    "+",
    "*",
    "?",
    "with s from linearisations(F, po)",
    "include \"cos.cat\"",
    "flag",
    "as x",
    "po",
    "rf",
    "co",
    "fr",
    "_",
    "0",
    "domain(",
    "fencerel(",
    "atomic_store_explicit(x, 1, memory_order_release);",
    "r0 = *x;",
    "while (1) {}",
];

/// One mutation of `text`; `other` is another seed of the same kind.
pub fn mutate(rng: &mut Rng, text: &str, other: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        lines.push(String::new());
    }
    let n = lines.len();
    match rng.below(9) {
        0 => {
            lines.remove(rng.below(n));
        }
        1 => {
            // Repeat a line (a row of a thread table: more events).
            let i = rng.below(n);
            let k = 1 + rng.below(12);
            for _ in 0..k {
                lines.insert(i, lines[i].clone());
            }
        }
        2 => {
            let (i, j) = (rng.below(n), rng.below(n));
            lines.swap(i, j);
        }
        3 => {
            let o: Vec<&str> = other.lines().collect();
            if !o.is_empty() {
                let l = o[rng.below(o.len())].to_string();
                lines.insert(rng.below(n + 1), l);
            }
        }
        4 => {
            let i = rng.below(n);
            let t = TOKENS[rng.below(TOKENS.len())];
            let pos = floor_char(&lines[i], rng.below(lines[i].len() + 1));
            lines[i].insert_str(pos, t);
        }
        5 => {
            // Enlarge a number.
            let i = rng.below(n);
            let digits: Vec<usize> = lines[i]
                .char_indices()
                .filter(|(_, c)| c.is_ascii_digit())
                .map(|(k, _)| k)
                .collect();
            if !digits.is_empty() {
                let k = digits[rng.below(digits.len())];
                let big = ["9", "99", "65", "4096", "2147483648"][rng.below(5)];
                lines[i].insert_str(k, big);
            }
        }
        6 => {
            let i = rng.below(n);
            let s = &lines[i];
            if !s.is_empty() {
                let a = floor_char(s, rng.below(s.len()));
                let b = floor_char(s, a + rng.below(s.len() - a + 1));
                lines[i] = format!("{}{}", &s[..a], &s[b..]);
            }
        }
        7 => {
            // Truncate the file.
            let keep = rng.below(n + 1);
            lines.truncate(keep);
        }
        _ => {
            // A byte-level change: one character replaced.
            let i = rng.below(n);
            let s = &lines[i];
            if !s.is_empty() {
                let a = floor_char(s, rng.below(s.len()));
                let b =
                    floor_char(s, a + 1).max(a + s[a..].chars().next().map_or(0, char::len_utf8));
                let c = [
                    '|', ';', '(', ')', '[', ']', ',', '.', '@', '0', 'x', ' ', '"', '\\',
                ][rng.below(14)];
                lines[i] = format!("{}{c}{}", &s[..a], &s[b.min(s.len())..]);
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Small tests a mutated model is run on.
const MODEL_TESTS: &[&str] = &[
    "PTX mp\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | ld.acquire.gpu r0, y ;\n fence.sc.gpu | fence.sc.gpu ;\n st.release.gpu y, 1 | ld.weak r1, x ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n",
    "X86 sb\n{ x=0; y=0; }\n P0 | P1 ;\n MOV [x],$1 | MOV [y],$1 ;\n MOV EAX,[y] | MOV EAX,[x] ;\nexists (0:EAX=0 /\\ 1:EAX=0)\n",
];

/// Runs one input to its end, without a limit on the caller's side.
fn judge(input: &Input, opts: &CheckOptions) -> Verdict {
    let timed_out = |r: &Result<crate::verdict::CheckResult, CheckError>| {
        matches!(r, Err(CheckError::Timeout { .. }))
    };
    match input.target {
        Target::Litmus | Target::NvLitmus => {
            let tests = if input.target == Target::NvLitmus {
                crate::litmus::nvlitmus::parse_all(&input.name, &input.text)
                    .into_iter()
                    .map(|i| i.test)
                    .collect()
            } else {
                vec![crate::litmus::parse_str(&input.name, &input.text)]
            };
            // The limit is the input's: the tests of a template file share
            // it (each gets what the earlier ones left).
            let start = Instant::now();
            for t in tests.into_iter().flatten() {
                // What the printers write must parse back.
                if let Ok(text) = crate::litmus::print::print_test(&t)
                    && let Err(d) = crate::litmus::parse_str(&input.name, &text)
                {
                    return Verdict::Misprinted(format!("{}\n{text}", d.render()));
                }
                let spec = crate::models::default_for_arch(&t.arch);
                let Ok(judge) = crate::driver::ModelCache::default().judge(spec) else {
                    continue;
                };
                let mut opts = opts.clone();
                if let Some(limit) = opts.timeout {
                    let Some(left) = limit.checked_sub(start.elapsed()) else {
                        return Verdict::Timeout;
                    };
                    opts.timeout = Some(left);
                }
                let r = judge.check(&t, &opts);
                if timed_out(&r) {
                    return Verdict::Timeout;
                }
                if let Err(CheckError::Diagnostic(d)) = &r {
                    let _ = d.render();
                }
            }
            Verdict::Answered
        }
        Target::Mapping => {
            if let Err(d) = crate::mapping::format::parse(&input.name, &input.text) {
                let _ = d.render();
            }
            Verdict::Answered
        }
        Target::Cat => {
            let Ok(model) = crate::models::load_source(&input.name, &input.text) else {
                return Verdict::Answered;
            };
            let judge = crate::driver::Judge::Cat {
                model: std::sync::Arc::new(model),
                name: input.name.clone(),
            };
            for src in MODEL_TESTS {
                if let Ok(t) = crate::litmus::parse_str("fuzz.litmus", src) {
                    let r = judge.check(&t, opts);
                    if timed_out(&r) {
                        return Verdict::Timeout;
                    }
                }
            }
            Verdict::Answered
        }
    }
}

/// Runs `input` on this thread with deadline `limit`: answered, panicked,
/// or a timeout result (regression tests use this; a hang hangs).
pub fn run_blocking(input: &Input, limit: Duration) -> Verdict {
    let opts = CheckOptions {
        timeout: Some(limit),
        ..CheckOptions::default()
    };
    match catch_unwind(AssertUnwindSafe(|| judge(input, &opts))) {
        Ok(v) => v,
        Err(_) => Verdict::Panicked("panic".to_string()),
    }
}

/// Runs `input` on a worker thread with deadline `limit`: a panic, a
/// timeout result or no return within three times the limit is a finding.
pub fn run_one(input: &Input, limit: Duration) -> (Verdict, f64) {
    let opts = CheckOptions {
        timeout: Some(limit),
        ..CheckOptions::default()
    };
    let (tx, rx) = mpsc::channel();
    let owned = input.clone();
    let start = Instant::now();
    let spawned = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let v = match catch_unwind(AssertUnwindSafe(|| judge(&owned, &opts))) {
                Ok(v) => v,
                Err(p) => Verdict::Panicked(
                    p.downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "panic".to_string()),
                ),
            };
            let _ = tx.send(v);
        });
    if spawned.is_err() {
        return (Verdict::Answered, 0.0);
    }
    match rx.recv_timeout(limit * 3) {
        Ok(v) => (v, start.elapsed().as_secs_f64()),
        // The worker is left to finish on its own; the input is a finding.
        Err(_) => (Verdict::Hung, start.elapsed().as_secs_f64()),
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    pub seed: u64,
    /// Stop after this many inputs...
    pub max_inputs: Option<u64>,
    /// ...or after this long, whichever comes first.
    pub duration: Option<Duration>,
    /// Per-input deadline.
    pub limit: Duration,
    /// Mutations applied to a seed to make one input (1 up to this).
    pub max_mutations: usize,
}

/// Fuzzes: inputs drawn from `seeds`, mutated, run; `on_finding` sees each
/// finding as it happens (to write it out). Panics inside the checked code
/// are caught; the panic hook is silenced for the run.
pub fn run(config: &Config, seeds: &[Input], mut on_finding: impl FnMut(&Finding)) -> Report {
    let mut report = Report::default();
    if seeds.is_empty() {
        return report;
    }
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut rng = Rng::new(config.seed);
    let start = Instant::now();
    loop {
        if config.max_inputs.is_some_and(|m| report.inputs >= m)
            || config.duration.is_some_and(|d| start.elapsed() >= d)
        {
            break;
        }
        let base = &seeds[rng.below(seeds.len())];
        let same: Vec<&Input> = seeds.iter().filter(|s| s.target == base.target).collect();
        let mut text = base.text.clone();
        for _ in 0..1 + rng.below(config.max_mutations.max(1)) {
            let other = &same[rng.below(same.len())].text;
            text = mutate(&mut rng, &text, other);
        }
        let input = Input {
            target: base.target,
            name: format!("fuzz-{}.{}", report.inputs, base.target.extension()),
            text,
        };
        report.inputs += 1;
        match input.target {
            Target::Cat => report.cat += 1,
            Target::Mapping => report.mapping += 1,
            Target::Litmus | Target::NvLitmus => report.litmus += 1,
        }
        let (verdict, seconds) = run_one(&input, config.limit);
        if verdict == Verdict::Answered {
            if report.slowest.as_ref().is_none_or(|s| seconds > s.1) {
                report.slowest =
                    Some((input.text.lines().next().unwrap_or("").to_string(), seconds));
            }
            continue;
        }
        let f = Finding {
            input,
            verdict,
            seconds,
        };
        on_finding(&f);
        report.findings.push(f);
    }
    std::panic::set_hook(hook);
    report
}

/// The default seed directories, relative to the crate root: examples,
/// models, and the oracle suites when present.
pub fn default_seed_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![
        root.join("examples"),
        root.join("models"),
        root.join("mappings"),
        root.join("tests/models"),
    ];
    for up in ["..", "../.."] {
        let o = root.join(up).join("shared/oracles");
        if o.is_dir() {
            dirs.push(o.join("dat3m"));
            dirs.push(o.join("mixedproxy"));
            dirs.push(o.join("herd"));
            break;
        }
    }
    dirs
}
