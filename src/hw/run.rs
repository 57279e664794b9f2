//! Running a plan on a device: compile the module (driver JIT), check the
//! SASS, then launch after launch — reset, test, gather, copy back,
//! histogram — until the budget is spent.

use super::Plan;
use super::cuda::{Arg, CudaError, Device};
use super::emit::{self, GATHER_KERNEL, RESET_KERNEL, TEST_KERNEL};
use super::histogram::Histogram;
use super::layout::{Geometry, Tables};
use super::rng::Rng;
use super::sass::{self, RoleCheck};
use super::stress::Profile;
use std::time::{Duration, Instant};

/// How much to run per test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Budget {
    /// Launch until this much wall time is spent (at least one launch).
    Time(Duration),
    /// Run at least this many instances.
    Instances(u64),
}

impl Budget {
    /// Parses `10s`, `500ms`, `2m` (time) — instances come from
    /// `--instances`.
    pub fn parse_time(s: &str) -> Result<Budget, String> {
        let s = s.trim();
        let (num, unit) = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .map_or((s, "s"), |i| (&s[..i], &s[i..]));
        let x: f64 = num
            .parse()
            .map_err(|_| format!("budget '{s}': expected a duration such as 10s, 500ms or 2m"))?;
        let secs = match unit {
            "s" => x,
            "ms" => x / 1000.0,
            "m" => x * 60.0,
            _ => return Err(format!("budget '{s}': unit must be ms, s or m")),
        };
        if !(secs > 0.0 && secs < 86_400.0) {
            return Err(format!("budget '{s}' must be positive and under a day"));
        }
        Ok(Budget::Time(Duration::from_secs_f64(secs)))
    }
}

/// Options of a run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Launch shape and stress.
    pub profile: Profile,
    /// The seed of pairings, layouts and stress hashes.
    pub seed: u64,
    /// Budget per test.
    pub budget: Budget,
    /// Refuse a test whose SASS lost or reordered accesses (default on);
    /// off runs it anyway, with the check's result in the report.
    pub sass_required: bool,
}

/// The SASS check's outcome for a test.
#[derive(Clone, Debug)]
pub enum SassStatus {
    /// Every role checked (see each one's `ok`).
    Checked(Vec<RoleCheck>),
    /// Could not disassemble (no tool): why.
    Unchecked(String),
}

impl SassStatus {
    /// Whether the check ran and some role failed.
    pub fn failed(&self) -> bool {
        matches!(self, SassStatus::Checked(c) if c.iter().any(|r| !r.ok))
    }
}

/// What a run gives back.
pub struct TestRun {
    /// The final states.
    pub hist: Histogram,
    /// Launches made.
    pub launches: u64,
    /// Wall time of the launch loop (device work and copies).
    pub elapsed: Duration,
    /// The SASS check.
    pub sass: SassStatus,
    /// The geometry used.
    pub geometry: Geometry,
}

/// Why a run stopped without results.
#[derive(Debug)]
pub enum RunError {
    /// A driver call failed.
    Cuda(CudaError),
    /// The SASS check failed (and was required).
    Sass(Vec<RoleCheck>),
}

impl From<CudaError> for RunError {
    fn from(e: CudaError) -> Self {
        RunError::Cuda(e)
    }
}

/// Compiles, checks and runs `plan` on `dev`.
pub fn run(dev: &Device, plan: &Plan, o: &RunOptions) -> Result<TestRun, RunError> {
    let ptx = emit::module(plan);
    let cubin = dev.compile(&ptx)?;
    let sass = match sass::disassemble(&cubin) {
        Ok(text) => SassStatus::Checked(sass::check(plan, &sass::parse_listing(&text))),
        Err(why) => SassStatus::Unchecked(why),
    };
    if o.sass_required
        && let SassStatus::Checked(c) = &sass
        && c.iter().any(|r| !r.ok)
    {
        return Err(RunError::Sass(c.clone()));
    }
    let module = dev.load(&cubin, &[TEST_KERNEL, RESET_KERNEL, GATHER_KERNEL])?;
    let p = &o.profile;
    let g = Geometry::new(
        plan,
        p.threads_per_block,
        p.blocks_per_group,
        p.stress_blocks,
        p.line_words,
        p.spread,
    );
    let n = g.instances();
    let nloc = plan.locations.len();
    let locs = dev.alloc(g.location_words())?;
    let out = dev.alloc(n * plan.outputs)?;
    let pairing = dev.alloc(g.groups * n)?;
    let offsets = dev.alloc(n * nloc)?;
    let bar = dev.alloc(n)?;
    let scratch = dev.alloc(p.scratch_words())?;
    let finals = dev.alloc(n * nloc)?;
    let mut out_host = vec![0u32; n * plan.outputs];
    let mut finals_host = vec![0u32; n * nloc];
    let mut rng = Rng::new(o.seed ^ 0x6c69_746d_6978);
    let mut hist = Histogram::default();
    let helper_blocks = n.div_ceil(256) as u32;
    let start = Instant::now();
    let mut launches = 0u64;
    loop {
        let t = Tables::draw(&g, &mut rng);
        dev.upload(&pairing, &t.pairing)?;
        dev.upload(&offsets, &t.offsets)?;
        dev.launch(
            &module,
            1,
            helper_blocks,
            256,
            &[
                Arg::Ptr(locs.ptr),
                Arg::Ptr(offsets.ptr),
                Arg::Ptr(bar.ptr),
                Arg::U32(n as u32),
            ],
        )?;
        let timeout = if p.barrier { p.barrier_timeout } else { 0 };
        dev.launch(
            &module,
            0,
            g.grid_blocks() as u32,
            g.block_threads() as u32,
            &[
                Arg::Ptr(locs.ptr),
                Arg::Ptr(out.ptr),
                Arg::Ptr(pairing.ptr),
                Arg::Ptr(offsets.ptr),
                Arg::Ptr(bar.ptr),
                Arg::Ptr(scratch.ptr),
                Arg::U32(n as u32),
                Arg::U32(g.test_blocks() as u32),
                Arg::U32(rng.next_u64() as u32),
                Arg::U32(p.stress_iterations),
                Arg::U32(p.stress_targets),
                Arg::U32(p.stress_line_words),
                Arg::U32(p.stress_pattern),
                Arg::U32(p.pre_stress_iterations),
                Arg::U32(timeout),
            ],
        )?;
        dev.launch(
            &module,
            2,
            helper_blocks,
            256,
            &[
                Arg::Ptr(locs.ptr),
                Arg::Ptr(offsets.ptr),
                Arg::Ptr(finals.ptr),
                Arg::U32(n as u32),
            ],
        )?;
        dev.download(&out, &mut out_host)?;
        dev.download(&finals, &mut finals_host)?;
        hist.add_launch(plan, &out_host, &finals_host, n);
        launches += 1;
        let done = match o.budget {
            Budget::Time(d) => start.elapsed() >= d,
            Budget::Instances(k) => hist.instances >= k,
        };
        if done {
            break;
        }
    }
    Ok(TestRun {
        hist,
        launches,
        elapsed: start.elapsed(),
        sass,
        geometry: g,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets() {
        assert_eq!(
            Budget::parse_time("10s").unwrap(),
            Budget::Time(Duration::from_secs(10))
        );
        assert_eq!(
            Budget::parse_time("500ms").unwrap(),
            Budget::Time(Duration::from_millis(500))
        );
        assert_eq!(
            Budget::parse_time("2m").unwrap(),
            Budget::Time(Duration::from_secs(120))
        );
        assert_eq!(
            Budget::parse_time("3").unwrap(),
            Budget::Time(Duration::from_secs(3))
        );
        assert!(Budget::parse_time("0s").is_err());
        assert!(Budget::parse_time("5h").is_err());
        assert!(Budget::parse_time("x").is_err());
    }
}
