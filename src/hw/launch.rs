//! One launch of a plan's module: its device buffers, and the three
//! kernels queued in order (reset, test, gather) with the results copied
//! back. The GPU-only loop ([`super::run`]) and the compound one
//! ([`super::compound`]) both launch through here; they differ in where
//! the locations live and in what runs beside the test kernel.

use super::Plan;
use super::cuda::{Arg, Buffer, CudaError, Device, DevicePtr, Module};
use super::layout::{Geometry, Tables};
use super::stress::Profile;

/// Kernel indices in the loaded module (the order `Device::load` is given).
const TEST: usize = 0;
const RESET: usize = 1;
const GATHER: usize = 2;

/// The compound parameters of the test kernel (zero for GPU-only runs):
/// the flag lines' device address, the round's tag, host threads per host
/// role, nanoseconds between ranks.
#[derive(Clone, Copy, Debug, Default)]
pub struct CompoundArgs {
    /// Device address of the flag lines (mapped host memory).
    pub flags: DevicePtr,
    /// The round's tag.
    pub tag: u32,
    /// Host threads per host role.
    pub workers: u32,
    /// Nanoseconds between ranks.
    pub step_ns: u32,
    /// The random part of the GPU delay after the arrival mark, drawn per
    /// instance in `0..gpu_delay` SM clock cycles (0: none).
    pub gpu_delay: u32,
    /// A fixed part added to every GPU delay (SM clock cycles).
    pub gpu_delay_base: u32,
}

/// The buffers of a run: locations at `locs` (device or mapped host
/// memory, owned by the caller), the rest in device memory.
pub struct Buffers {
    locs: DevicePtr,
    out: Buffer,
    pairing: Buffer,
    offsets: Buffer,
    bar: Buffer,
    scratch: Buffer,
    finals: Buffer,
    instances: usize,
    outputs: usize,
    locations: usize,
}

impl Buffers {
    /// Allocates the buffers of a geometry; the locations are at `locs`.
    pub fn new(
        dev: &Device,
        plan: &Plan,
        g: &Geometry,
        locs: DevicePtr,
        scratch_words: usize,
    ) -> Result<Buffers, CudaError> {
        let n = g.instances();
        let nloc = plan.locations.len();
        Ok(Buffers {
            locs,
            out: dev.alloc(n * plan.outputs)?,
            pairing: dev.alloc(g.groups * n)?,
            offsets: dev.alloc(n * nloc)?,
            bar: dev.alloc(n)?,
            scratch: dev.alloc(scratch_words)?,
            finals: dev.alloc(n * nloc)?,
            instances: n,
            outputs: plan.outputs,
            locations: nloc,
        })
    }

    fn helper_blocks(&self) -> u32 {
        self.instances.div_ceil(256) as u32
    }

    /// Uploads a launch's tables and queues the reset kernel (initial
    /// values at each instance's slots, barrier counters cleared).
    pub fn reset(&self, dev: &Device, m: &Module, t: &Tables) -> Result<(), CudaError> {
        dev.upload(&self.pairing, &t.pairing)?;
        dev.upload(&self.offsets, &t.offsets)?;
        dev.launch_async(
            m,
            RESET,
            self.helper_blocks(),
            256,
            &[
                Arg::Ptr(self.locs),
                Arg::Ptr(self.offsets.ptr),
                Arg::Ptr(self.bar.ptr),
                Arg::U32(self.instances as u32),
            ],
        )
    }

    /// Queues the test kernel on geometry `g` with profile `p`'s stress
    /// and barrier, the launch's stress seed and the compound parameters.
    pub fn test(
        &self,
        dev: &Device,
        m: &Module,
        g: &Geometry,
        p: &Profile,
        stress_seed: u32,
        c: CompoundArgs,
    ) -> Result<(), CudaError> {
        let timeout = if p.barrier { p.barrier_timeout } else { 0 };
        dev.launch_async(
            m,
            TEST,
            g.grid_blocks() as u32,
            g.block_threads() as u32,
            &[
                Arg::Ptr(self.locs),
                Arg::Ptr(self.out.ptr),
                Arg::Ptr(self.pairing.ptr),
                Arg::Ptr(self.offsets.ptr),
                Arg::Ptr(self.bar.ptr),
                Arg::Ptr(self.scratch.ptr),
                Arg::U32(self.instances as u32),
                Arg::U32(g.test_blocks() as u32),
                Arg::U32(stress_seed),
                Arg::U32(p.stress_iterations),
                Arg::U32(p.stress_targets.max(1)),
                Arg::U32(p.stress_line_words.max(1)),
                Arg::U32(p.stress_pattern),
                Arg::U32(p.pre_stress_iterations),
                Arg::U32(timeout),
                Arg::Ptr(c.flags),
                Arg::U32(c.tag),
                Arg::U32(c.workers.max(1)),
                Arg::U32(c.step_ns),
                Arg::U32(c.gpu_delay),
                Arg::U32(c.gpu_delay_base),
            ],
        )
    }

    /// Queues the gather kernel, copies the outputs and final memory back
    /// (`outputs[i · plan.outputs + k]`, `finals[i · locations + j]`) and
    /// waits for the device.
    pub fn gather(&self, dev: &Device, m: &Module) -> Result<(Vec<u32>, Vec<u32>), CudaError> {
        dev.launch_async(
            m,
            GATHER,
            self.helper_blocks(),
            256,
            &[
                Arg::Ptr(self.locs),
                Arg::Ptr(self.offsets.ptr),
                Arg::Ptr(self.finals.ptr),
                Arg::U32(self.instances as u32),
            ],
        )?;
        let mut out = vec![0u32; self.instances * self.outputs];
        let mut finals = vec![0u32; self.instances * self.locations];
        dev.download(&self.out, &mut out)?;
        dev.download(&self.finals, &mut finals)?;
        dev.synchronize()?;
        Ok((out, finals))
    }
}
