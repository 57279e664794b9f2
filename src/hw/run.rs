//! Running a plan on a device: compile the module (driver JIT), check the
//! SASS, then launch after launch — reset, test, gather, copy back,
//! histogram — until the budget is spent.

use super::Plan;
use super::cuda::{CudaError, Device};
use super::emit::{self, GATHER_KERNEL, RESET_KERNEL, TEST_KERNEL};
use super::histogram::Histogram;
use super::launch::{Buffers, CompoundArgs};
use super::layout::{Geometry, Tables};
use super::rng::Rng;
use super::sass::{self, RoleCheck};
use super::stress::Profile;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

/// One launch's random choices: its tables and the stress hash seed.
pub(super) struct Launch {
    /// The pairing and location tables.
    pub tables: Tables,
    /// The stress hash seed.
    pub stress_seed: u32,
}

impl Launch {
    /// Launch `k`'s choices, from the run's seed and `k` alone.
    pub(super) fn draw(g: &Geometry, seed: u64, k: u64) -> Launch {
        let mut rng = Rng::new(seed ^ 0x6c69_746d_6978 ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let tables = Tables::draw(g, &mut rng);
        Launch {
            tables,
            stress_seed: rng.next_u64() as u32,
        }
    }
}

/// Host threads that draw tables, and as many that count states, beside
/// the launch loop (a third of the cores each, 1 to 6).
fn host_workers() -> usize {
    std::thread::available_parallelism()
        .map_or(2, |c| c.get() / 3)
        .clamp(1, 6)
}

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
    /// Time the loop waited on the device: table uploads, the three
    /// kernels and the copies back (drawing tables and counting states
    /// run beside it on other threads).
    pub device_time: Duration,
    /// The SASS check.
    pub sass: SassStatus,
    /// The geometry used.
    pub geometry: Geometry,
    /// Compound runs: how many instances raced (see [`Raced`]).
    pub raced: Option<Raced>,
}

/// How well the roles of a compound run's instances met.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Raced {
    /// Instances where no role saw another's done mark around the start
    /// of its body and no host role gave up waiting for the GPU roles.
    pub raced: u64,
    /// Instances where a host role gave up waiting for a GPU role's
    /// arrival (it then ran anyway).
    pub timeouts: u64,
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

/// Compiles the plan's module with the driver's JIT and checks its SASS
/// (an `Err` when the check failed and is required).
fn compile_checked(
    dev: &Device,
    plan: &Plan,
    o: &RunOptions,
) -> Result<(Vec<u8>, SassStatus), RunError> {
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
    Ok((cubin, sass))
}

/// Compiles, checks and runs `plan` on `dev` (compound plans take
/// [`super::compound::run`]).
pub fn run(dev: &Device, plan: &Plan, o: &RunOptions) -> Result<TestRun, RunError> {
    let (cubin, sass) = compile_checked(dev, plan, o)?;
    if plan.is_compound() {
        return super::compound::run(dev, plan, o, &cubin, sass);
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
    let locs = dev.alloc(g.location_words())?;
    let bufs = Buffers::new(dev, plan, &g, locs.ptr, p.scratch_words())?;
    let workers = host_workers();
    let start = Instant::now();
    let mut device_time = Duration::ZERO;
    let mut launches = 0u64;
    let next = AtomicU64::new(0);
    let (htx, hrx) = mpsc::sync_channel::<(Vec<u32>, Vec<u32>)>(2 * workers);
    let hrx = Mutex::new(hrx);
    let hist = std::thread::scope(|s| -> Result<Histogram, CudaError> {
        // Drawers: launch k's tables come from its own seed, so a run
        // repeats whatever thread drew them; the loop takes them in order.
        let (ltx, lrx) = mpsc::sync_channel::<(u64, Launch)>(2 * workers);
        for _ in 0..workers {
            let (ltx, next, g) = (ltx.clone(), &next, &g);
            s.spawn(move || {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if ltx.send((k, Launch::draw(g, o.seed, k))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(ltx);
        // Counters: each histograms the launches it takes; merged at the end.
        let counters: Vec<_> = (0..workers)
            .map(|_| {
                let hrx = &hrx;
                s.spawn(move || {
                    let mut h = Histogram::default();
                    loop {
                        let msg = match hrx.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => break,
                        };
                        match msg {
                            Ok((out, finals)) => h.add_launch(plan, &out, &finals, n),
                            Err(_) => break,
                        }
                    }
                    h
                })
            })
            .collect();
        let mut pending = std::collections::BTreeMap::new();
        let looped = (|| -> Result<(), CudaError> {
            loop {
                let launch = loop {
                    if let Some(l) = pending.remove(&launches) {
                        break l;
                    }
                    match lrx.recv() {
                        Ok((k, l)) => {
                            pending.insert(k, l);
                        }
                        Err(_) => return Err(CudaError::Call("the table drawers stopped".into())),
                    }
                };
                let t0 = Instant::now();
                bufs.reset(dev, &module, &launch.tables)?;
                bufs.test(
                    dev,
                    &module,
                    &g,
                    p,
                    launch.stress_seed,
                    CompoundArgs::default(),
                )?;
                let (out_host, finals_host) = bufs.gather(dev, &module)?;
                device_time += t0.elapsed();
                if htx.send((out_host, finals_host)).is_err() {
                    return Err(CudaError::Call("the state counters stopped".into()));
                }
                launches += 1;
                let done = match o.budget {
                    Budget::Time(d) => start.elapsed() >= d,
                    Budget::Instances(k) => launches * n as u64 >= k,
                };
                if done {
                    return Ok(());
                }
            }
        })();
        drop(lrx);
        drop(htx);
        let mut hist = Histogram::default();
        for c in counters {
            if let Ok(h) = c.join() {
                hist.merge(&h);
            }
        }
        looped.map(|()| hist)
    })?;
    Ok(TestRun {
        hist,
        launches,
        elapsed: start.elapsed(),
        device_time,
        raced: None,
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
