//! Compound CPU+GPU runs (issue #33): the PTX roles of an X86+PTX test run
//! in the test kernel, its X86 roles on host threads, on locations in
//! pinned host memory mapped into the GPU (`cuMemHostAlloc`), so both
//! sides access the same memory, as in seed 000's compound machines.
//!
//! **Meeting.** An instance's roles must run at the same time. The host
//! follows the GPU, so that nothing polls host memory from the GPU: host
//! role `k` has `workers` threads, and thread `w` walks the round's
//! instances `w, w + workers, …` in order; instance `i`'s *rank* is
//! `i / workers`. In the kernel, an instance's GPU roles first meet at
//! the device spin barrier, then wait until `%globaltimer` reaches the
//! kernel's start plus `rank × host_step_ns`, mark their arrival in the
//! instance's flag line (host memory) and run their bodies. A host thread
//! spins on that line until every GPU role of its instance has arrived
//! (or gives up after [`WAIT`]), waits a further per-instance delay drawn
//! in `0..host_delay_cycles` (so the host bodies sweep the window in which the
//! GPU's accesses reach memory), and runs its body. Waiting only adds
//! synchronisation, which can remove behaviours but never add one.
//!
//! **Raced.** Every role marks *done* after its body (the round's tag in
//! the flag line) and reads the others' done marks around the start of
//! its body; an instance *raced* when no role saw another's mark and no
//! host thread gave up waiting. A mark seen means that role finished
//! before the other began: their bodies did not overlap.

use super::Plan;
use super::cuda::{CudaError, Device};
use super::emit::{
    ARRIVE, DONE, FLAG_LINE_WORDS, GATHER_KERNEL, RESET_KERNEL, STATUS, TEST_KERNEL,
};
use super::histogram::Histogram;
use super::host::{self, HostRole};
use super::launch::{Buffers, CompoundArgs};
use super::layout::Geometry;
use super::run::{Budget, Launch, Raced, RunError, RunOptions, SassStatus, TestRun};
use super::stress::Profile;
use std::sync::{Barrier, Mutex, mpsc};
use std::time::{Duration, Instant};

/// How long a host thread waits for an instance's GPU roles before it
/// runs anyway (counted as a timeout).
pub const WAIT: Duration = Duration::from_millis(20);

/// Host threads per host role: the cores left after the launching
/// thread, shared by the host roles (at least 1, at most 12 each).
fn workers_per_role(host_roles: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(2, |c| c.get());
    (cores.saturating_sub(2) / host_roles.max(1)).clamp(1, 12)
}

/// What host threads need to know about a round.
#[derive(Clone, Default)]
struct Round {
    tag: u32,
    offsets: Vec<u32>,
}

/// One host thread's results for a round: per instance it ran, the
/// instance, its registers, whether it saw a done mark, whether it timed
/// out.
type HostResults = (usize, Vec<(usize, Vec<u32>, bool, bool)>);

/// Runs a compound plan: the compiled module `cubin` (SASS already
/// checked) for the GPU roles, host threads for the X86 roles.
pub fn run(
    dev: &Device,
    plan: &Plan,
    o: &RunOptions,
    cubin: &[u8],
    sass: SassStatus,
) -> Result<TestRun, RunError> {
    #[cfg(target_arch = "x86_64")]
    {
        run_x86(dev, plan, o, cubin, sass)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (dev, plan, o, cubin, sass);
        Err(RunError::Cuda(CudaError::Call(
            "X86 roles run on x86-64 hosts only".into(),
        )))
    }
}

#[cfg(target_arch = "x86_64")]
fn run_x86(
    dev: &Device,
    plan: &Plan,
    o: &RunOptions,
    cubin: &[u8],
    sass: SassStatus,
) -> Result<TestRun, RunError> {
    let module = dev.load(cubin, &[TEST_KERNEL, RESET_KERNEL, GATHER_KERNEL])?;
    let host_roles: Vec<(usize, &HostRole)> = plan
        .roles
        .iter()
        .enumerate()
        .filter_map(|(r, role)| role.host.as_ref().map(|h| (r, h)))
        .collect();
    let workers = workers_per_role(host_roles.len());
    let p = &o.profile;
    let gpu_written = gpu_written_locations(plan);
    // Geometry: no stressing blocks; enough test blocks for
    // workers × host_ranks instances.
    let probe = Geometry::new(plan, 128, 1, 0, p.line_words.min(16), p.spread);
    let blocks = (workers * p.host_ranks).div_ceil(probe.positions_per_block());
    let g = Geometry::new(plan, 128, blocks, 0, p.line_words.min(16), p.spread);
    let n = g.instances();
    let nloc = plan.locations.len();
    let locs = dev.alloc_mapped(g.location_words())?;
    let flags = dev.alloc_mapped(n * FLAG_LINE_WORDS)?;
    let bufs = Buffers::new(dev, plan, &g, locs.dev, 16)?;
    // No stress in compound runs; the profile's barrier meets the GPU roles.
    let gpu_profile = Profile {
        stress_blocks: 0,
        stress_iterations: 0,
        pre_stress_iterations: 0,
        ..p.clone()
    };
    let threads = host_roles.len() * workers;
    let start_bar = Barrier::new(threads + 1);
    let round = Mutex::new(Round::default());
    let mut hist = Histogram::default();
    let mut raced = Raced::default();
    let start = Instant::now();
    let mut device_time = Duration::ZERO;
    let mut launches = 0u64;
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<HostResults>();
    let result = std::thread::scope(|s| -> Result<(), CudaError> {
        for (k, &(r, role)) in host_roles.iter().enumerate() {
            for w in 0..workers {
                let tx = tx.clone();
                let (start_bar, round, stop, locs, flags) =
                    (&start_bar, &round, &stop, &locs, &flags);
                let nroles = plan.roles.len();
                let gpu_roles = plan.threads();
                let extra = if reads_any(role, &gpu_written) {
                    u64::from(p.host_reader_delay_cycles)
                } else {
                    0
                };
                s.spawn(move || {
                    pin_to_core(1 + k * workers + w);
                    let mut regs = vec![0u32; role.init.len()];
                    let mut ptrs = vec![std::ptr::null_mut::<u32>(); nloc];
                    loop {
                        start_bar.wait();
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            break;
                        }
                        let Round { tag, offsets } =
                            round.lock().map(|g| g.clone()).unwrap_or_default();
                        let mut results = Vec::with_capacity(n / workers + 1);
                        for i in (w..n).step_by(workers) {
                            for (j, ptr) in ptrs.iter_mut().enumerate() {
                                // SAFETY: offsets index the location buffer.
                                *ptr = unsafe { locs.host.add(offsets[i * nloc + j] as usize) };
                            }
                            // SAFETY: the flag line of instance i is inside `flags`.
                            let line = unsafe { flags.host.add(i * FLAG_LINE_WORDS) };
                            let seen = |q: usize| unsafe { line.add(q).read_volatile() } == tag;
                            let waited = Instant::now();
                            let mut spins = 0u32;
                            let mut timed_out = false;
                            while !(0..gpu_roles).all(|g| seen(ARRIVE + g)) {
                                std::hint::spin_loop();
                                spins += 1;
                                if spins.is_multiple_of(256) && waited.elapsed() > WAIT {
                                    timed_out = true;
                                    break;
                                }
                            }
                            let delay = extra
                                + mix(i as u64, u64::from(tag), r as u64)
                                    % u64::from(p.host_delay_cycles).max(1);
                            let t0 = host::rdtsc();
                            while host::rdtsc().wrapping_sub(t0) < delay {
                                std::hint::spin_loop();
                            }
                            let saw = (0..nroles).any(|q| q != r && seen(DONE + q));
                            // SAFETY: every pointer is inside the mapped buffer.
                            unsafe { host::execute(role, &ptrs, &mut regs) };
                            // SAFETY: as above.
                            unsafe { line.add(DONE + r).write_volatile(tag) };
                            results.push((i, regs.clone(), saw, timed_out));
                        }
                        if tx.send((r, results)).is_err() {
                            break;
                        }
                    }
                });
            }
        }
        drop(tx);
        let looped = (|| -> Result<(), CudaError> {
            loop {
                let tag = launches as u32 + 1;
                let launch = Launch::draw(&g, o.seed, launches);
                let t0 = Instant::now();
                bufs.reset(dev, &module, &launch.tables)?;
                dev.synchronize()?;
                if let Ok(mut g) = round.lock() {
                    *g = Round {
                        tag,
                        offsets: launch.tables.offsets.clone(),
                    };
                }
                bufs.test(
                    dev,
                    &module,
                    &g,
                    &gpu_profile,
                    launch.stress_seed,
                    CompoundArgs {
                        flags: flags.dev,
                        tag,
                        workers: workers as u32,
                        step_ns: p.host_step_ns,
                        gpu_delay: p.gpu_delay_cycles,
                        gpu_delay_base: p.gpu_delay_base_cycles,
                    },
                )?;
                start_bar.wait();
                let mut record = vec![0u32; n * plan.outputs];
                let mut host_seen = vec![(false, false); n];
                for _ in 0..threads {
                    let Ok((r, results)) = rx.recv() else {
                        return Err(CudaError::Call("a host thread stopped".into()));
                    };
                    let role = &plan.roles[r];
                    for (i, regs, saw, timed_out) in results {
                        record[i * plan.outputs + role.first_output..][..regs.len()]
                            .copy_from_slice(&regs);
                        host_seen[i].0 |= saw;
                        host_seen[i].1 |= timed_out;
                    }
                }
                let (gpu_out, finals_host) = bufs.gather(dev, &module)?;
                device_time += t0.elapsed();
                // GPU roles' outputs into the record; the raced measure.
                for (i, &(host_saw, host_timeout)) in host_seen.iter().enumerate() {
                    let mut met = !host_saw && !host_timeout;
                    for (r, role) in plan.roles.iter().enumerate() {
                        if role.host.is_some() {
                            continue;
                        }
                        let at = i * plan.outputs + role.first_output;
                        record[at..at + role.outputs.len()]
                            .copy_from_slice(&gpu_out[at..at + role.outputs.len()]);
                        // SAFETY: the kernel is done; the line is inside `flags`.
                        let status = unsafe {
                            flags
                                .host
                                .add(i * FLAG_LINE_WORDS + STATUS + r)
                                .read_volatile()
                        };
                        met &= status & 4 != 0 && status & 1 == 0;
                    }
                    raced.raced += u64::from(met);
                    raced.timeouts += u64::from(host_timeout);
                }
                hist.add_launch(plan, &record, &finals_host, n);
                launches += 1;
                let done = match o.budget {
                    Budget::Time(d) => start.elapsed() >= d,
                    Budget::Instances(k) => hist.instances >= k,
                };
                if done {
                    return Ok(());
                }
            }
        })();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        start_bar.wait();
        looped
    });
    result?;
    Ok(TestRun {
        hist,
        launches,
        elapsed: start.elapsed(),
        device_time,
        sass,
        geometry: g,
        raced: Some(raced),
    })
}

/// Location slots some GPU role stores to (plain stores or RMWs).
fn gpu_written_locations(plan: &Plan) -> Vec<usize> {
    use crate::ir::{Address, InstrKind};
    let mut out = Vec::new();
    for role in plan.roles.iter().filter(|r| r.host.is_none()) {
        for ins in &plan.test.threads[role.thread].code {
            let addr = match &ins.kind {
                InstrKind::Store { addr, .. } | InstrKind::Rmw { addr, .. } => addr,
                _ => continue,
            };
            let loc = match addr {
                Address::Loc(l) => Some(*l),
                Address::Reg(r) => role
                    .address_regs
                    .iter()
                    .find(|(x, _)| x == r)
                    .map(|(_, l)| *l),
            };
            if let Some(j) = loc.and_then(|l| plan.locations.iter().position(|x| *x == l))
                && !out.contains(&j)
            {
                out.push(j);
            }
        }
    }
    out
}

/// Whether a host role loads (or RMWs) one of the location slots `locs`.
fn reads_any(role: &HostRole, locs: &[usize]) -> bool {
    use super::host::Op;
    role.ops.iter().any(|o| match o {
        Op::Load { loc, .. }
        | Op::Xchg { loc, .. }
        | Op::Xadd { loc, .. }
        | Op::Cmpxchg { loc, .. } => locs.contains(loc),
        _ => false,
    })
}

/// A per-instance hash (SplitMix64's finaliser over three words).
fn mix(a: u64, b: u64, c: u64) -> u64 {
    let mut z = a
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(b.rotate_left(21))
        .wrapping_add(c.rotate_left(42));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Pins the calling thread to core `core` (modulo the cores there are);
/// a failure only costs alignment, so it is ignored.
#[cfg(target_os = "linux")]
fn pin_to_core(core: usize) {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    // SAFETY: a zeroed cpu_set_t is an empty set; the calls take valid
    // pointers to it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core % cores, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

#[cfg(not(target_os = "linux"))]
fn pin_to_core(_core: usize) {}
