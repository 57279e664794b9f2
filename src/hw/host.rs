//! Host threads running x86 roles (the host side of issue #33): each x86
//! instruction of a role is executed as that instruction, in inline
//! assembly (`MOV`, `MFENCE`, `XCHG`, `LOCK XADD`, `LOCK CMPXCHG`, `LOCK
//! ADD/SUB/AND/OR/XOR`), so neither the compiler nor the harness reorders
//! or merges the test's accesses (an `asm!` block without `nomem` is a
//! compiler barrier for every memory access). Registers and branches are
//! interpreted between them.
//!
//! [`run`] runs many instances of a pure X86 test on the host CPU, PTE
//! style: one OS thread per role walks the round's instances in the same
//! order after a common start, so instance `i` of every role runs at about
//! the same time; locations are spread over cache lines and permuted per
//! round; each role's start and end are timestamped (`rdtsc`) per
//! instance, and an instance *raced* when its roles' intervals all
//! overlap (the measure #33 asks for). X86+PTX tests need the GPU side
//! (mapped host memory shared with the test kernel), which is not built.

use super::histogram::Histogram;
use super::rng::Rng;
use super::{Plan, Refusal, Role};
use crate::ir::outcome::observed_terms;
use crate::ir::{Address, Arch, BinOp, CmpOp, InstrKind, Operand, RmwOp, Term, Test, Value};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// An operand: a register of the role or a 32-bit constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    /// Register index (in the role's `outputs`).
    Reg(usize),
    /// A constant.
    Imm(u32),
}

/// One x86 instruction as the host executes it (locations are indices
/// into the plan's `locations`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `MOV r, [x]`.
    Load { dst: usize, loc: usize },
    /// `MOV [x], v`.
    Store { loc: usize, src: Src },
    /// `XCHG [x], r`: `dst` gets the old value.
    Xchg { dst: usize, loc: usize, src: Src },
    /// `LOCK XADD [x], r`: `dst` gets the old value.
    Xadd { dst: usize, loc: usize, src: Src },
    /// `LOCK CMPXCHG [x], r` (comparing with `expected`, `dst` gets the old value).
    Cmpxchg {
        dst: usize,
        loc: usize,
        expected: Src,
        new: Src,
    },
    /// `LOCK ADD/SUB/AND/OR/XOR [x], v` (also `LOCK INC/DEC`).
    Locked { op: BinOp, loc: usize, src: Src },
    /// `MFENCE`.
    Mfence,
    /// `MOV r, v`.
    Mov { dst: usize, src: Src },
    /// `ADD/SUB/AND/OR/XOR r, v` and friends.
    Alu {
        dst: usize,
        op: BinOp,
        a: Src,
        b: Src,
    },
    /// `CMP a, b` + conditional jump to op index `target`.
    Branch {
        cmp: CmpOp,
        a: Src,
        b: Src,
        target: usize,
    },
    /// `JMP` to op index `target`.
    Goto { target: usize },
}

/// A role's host program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostRole {
    /// The instructions.
    pub ops: Vec<Op>,
    /// Initial register values (in the role's `outputs` order).
    pub init: Vec<u32>,
}

impl HostRole {
    /// Rewrites every location index with `slot` (location id → the
    /// plan's location slot, where the two differ).
    pub fn remap_locations(&mut self, slot: impl Fn(usize) -> usize) {
        for o in &mut self.ops {
            match o {
                Op::Load { loc, .. }
                | Op::Store { loc, .. }
                | Op::Xchg { loc, .. }
                | Op::Xadd { loc, .. }
                | Op::Cmpxchg { loc, .. }
                | Op::Locked { loc, .. } => *loc = slot(*loc),
                _ => {}
            }
        }
    }
}

/// Plans a pure X86 test for the host: roles, full final states (every
/// register, every location) and each role's program, or why not.
pub fn plan_host(test: &Test) -> Result<(Plan, Vec<HostRole>), Refusal> {
    let refuse = |s: String| Err(Refusal(s));
    if test.threads.is_empty() {
        return refuse("the test has no threads".into());
    }
    if let Some(t) = test.threads.iter().find(|t| t.arch != Arch::X86) {
        return refuse(format!(
            "P{} is {} code: host runs take X86 tests only (X86+PTX needs the GPU side of issue #33)",
            t.id,
            t.arch.name()
        ));
    }
    for l in &test.locations {
        if l.alias_of.is_some() {
            return refuse(format!("location '{}' is an alias", l.name));
        }
        match l.init {
            Value::Int(v) if i32::try_from(v).is_ok() => {}
            _ => {
                return refuse(format!(
                    "location '{}' starts with an address or a value beyond 32 bits",
                    l.name
                ));
            }
        }
    }
    let locations: Vec<usize> = (0..test.locations.len()).collect();
    let mut roles = Vec::new();
    let mut programs = Vec::new();
    let mut first = 0;
    let mut full = test.clone();
    for (i, t) in test.threads.iter().enumerate() {
        let (outputs, program) = host_role(test, i)?;

        for r in &outputs {
            let term = Term::Reg {
                thread: t.id,
                reg: r.clone(),
            };
            if !full.observed.contains(&term) {
                full.observed.push(term);
            }
        }
        roles.push(Role {
            thread: i,
            group: 0,
            warp: i,
            outputs: outputs.clone(),
            first_output: first,
            address_regs: Vec::new(),
            host: Some(program.clone()),
        });
        first += outputs.len();
        programs.push(program);
    }
    for &l in &locations {
        if !full.observed.contains(&Term::Loc(l)) {
            full.observed.push(Term::Loc(l));
        }
    }
    let observed = observed_terms(&full);
    let plan = Plan {
        test: full,
        warps_per_set: roles.len(),
        roles,
        groups: 1,
        locations,
        outputs: first,
        observed,
    };
    Ok((plan, programs))
}

/// Thread `i` of `test` as a host role: its output registers (written,
/// read, initialised or observed; sorted) and its program, or why it has
/// no host form.
pub fn host_role(test: &Test, i: usize) -> Result<(Vec<String>, HostRole), Refusal> {
    let t = &test.threads[i];
    let observed_before = observed_terms(test);
    let mut regs: BTreeSet<String> = BTreeSet::new();
    for (r, _) in &t.reg_init {
        regs.insert(r.clone());
    }
    for term in &observed_before {
        if let Term::Reg { thread, reg } = term
            && *thread == t.id
        {
            regs.insert(reg.clone());
        }
    }
    for ins in &t.code {
        regs.extend(ins.kind.registers().into_iter().cloned());
    }
    let outputs: Vec<String> = regs.into_iter().collect();
    let program = compile(test, i, &outputs)?;
    Ok((outputs, program))
}

/// Compiles thread `i` of `test` to host ops over its registers `regs`.
fn compile(test: &Test, i: usize, regs: &[String]) -> Result<HostRole, Refusal> {
    let t = &test.threads[i];
    let refuse = |s: String| Err(Refusal(format!("P{}: {s}", t.id)));
    let reg = |r: &str| regs.iter().position(|x| x == r).unwrap_or(0);
    let src = |o: &Operand| -> Result<Src, Refusal> {
        match o {
            Operand::Reg(r) => Ok(Src::Reg(reg(r))),
            Operand::Imm(Value::Int(v)) if i32::try_from(*v).is_ok() => {
                Ok(Src::Imm(*v as i32 as u32))
            }
            Operand::Imm(_) => Err(Refusal(format!(
                "P{}: a constant that is an address or beyond 32 bits",
                t.id
            ))),
        }
    };
    let loc = |a: &Address| -> Result<usize, Refusal> {
        match a {
            Address::Loc(l) => Ok(*l),
            Address::Reg(r) => Err(Refusal(format!(
                "P{}: the address in register {r}: host roles access named locations only",
                t.id
            ))),
        }
    };
    // Labels → op index (labels produce no op).
    let mut labels = std::collections::HashMap::new();
    let mut n = 0;
    for ins in &t.code {
        match &ins.kind {
            InstrKind::Label(l) => {
                labels.insert(l.clone(), n);
            }
            _ => n += 1,
        }
    }
    let mut ops = Vec::new();
    for (k, ins) in t.code.iter().enumerate() {
        let target = |l: &String| -> Result<usize, Refusal> {
            let at = *labels
                .get(l)
                .ok_or_else(|| Refusal(format!("P{}: jump to a missing label", t.id)))?;
            if at <= ops_before(&t.code, k) {
                return Err(Refusal(format!(
                    "P{}: '{}' jumps backwards: the model bounds loops by --unroll, hardware does not",
                    t.id, ins.text
                )));
            }
            Ok(at)
        };
        let op = match &ins.kind {
            InstrKind::Label(_) => continue,
            InstrKind::Load { dst, addr } => Op::Load {
                dst: reg(dst),
                loc: loc(addr)?,
            },
            InstrKind::Store { addr, src: s } => Op::Store {
                loc: loc(addr)?,
                src: src(s)?,
            },
            InstrKind::Rmw { dst, addr, op } => {
                let l = loc(addr)?;
                match (dst, op) {
                    (Some(d), RmwOp::Exch(v)) => Op::Xchg {
                        dst: reg(d),
                        loc: l,
                        src: src(v)?,
                    },
                    (Some(d), RmwOp::Bin(BinOp::Add, v)) => Op::Xadd {
                        dst: reg(d),
                        loc: l,
                        src: src(v)?,
                    },
                    (Some(d), RmwOp::Cas { expected, new }) => Op::Cmpxchg {
                        dst: reg(d),
                        loc: l,
                        expected: src(expected)?,
                        new: src(new)?,
                    },
                    (None, RmwOp::Bin(b, v))
                        if matches!(
                            b,
                            BinOp::Add | BinOp::Sub | BinOp::And | BinOp::Or | BinOp::Xor
                        ) =>
                    {
                        Op::Locked {
                            op: *b,
                            loc: l,
                            src: src(v)?,
                        }
                    }
                    _ => return refuse(format!("'{}' has no host form", ins.text)),
                }
            }
            InstrKind::Fence if ins.tags.iter().any(|x| x == "MFENCE") => Op::Mfence,
            InstrKind::Fence => return refuse(format!("'{}' is not MFENCE", ins.text)),
            InstrKind::Mov { dst, src: s } => Op::Mov {
                dst: reg(dst),
                src: src(s)?,
            },
            InstrKind::Op { dst, op, a, b } => Op::Alu {
                dst: reg(dst),
                op: *op,
                a: src(a)?,
                b: src(b)?,
            },
            InstrKind::Branch {
                cmp,
                a,
                b,
                target: l,
            } => Op::Branch {
                cmp: *cmp,
                a: src(a)?,
                b: src(b)?,
                target: target(l)?,
            },
            InstrKind::Goto { target: l } => Op::Goto { target: target(l)? },
            InstrKind::Barrier { .. } => return refuse(format!("'{}' is a barrier", ins.text)),
        };
        ops.push(op);
    }
    let init = regs
        .iter()
        .map(|r| {
            t.reg_init
                .iter()
                .find(|(x, _)| x == r)
                .and_then(|(_, v)| v.as_int())
                .unwrap_or(0) as i32 as u32
        })
        .collect();
    Ok(HostRole { ops, init })
}

/// Ops emitted before instruction `k` (labels emit none).
fn ops_before(code: &[crate::ir::Instr], k: usize) -> usize {
    code[..k]
        .iter()
        .filter(|i| !matches!(i.kind, InstrKind::Label(_)))
        .count()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The instructions themselves.
    use std::arch::asm;

    /// `MOV r32, [p]`.
    #[inline(always)]
    pub unsafe fn load(p: *mut u32) -> u32 {
        let v: u32;
        // SAFETY: p points into the run's location buffer.
        unsafe {
            asm!("mov {v:e}, dword ptr [{p}]", p = in(reg) p, v = out(reg) v, options(nostack, preserves_flags))
        };
        v
    }
    /// `MOV [p], r32`.
    #[inline(always)]
    pub unsafe fn store(p: *mut u32, v: u32) {
        unsafe {
            asm!("mov dword ptr [{p}], {v:e}", p = in(reg) p, v = in(reg) v, options(nostack, preserves_flags))
        };
    }
    /// `MFENCE`.
    #[inline(always)]
    pub unsafe fn mfence() {
        unsafe { asm!("mfence", options(nostack, preserves_flags)) };
    }
    /// `XCHG [p], r32`.
    #[inline(always)]
    pub unsafe fn xchg(p: *mut u32, v: u32) -> u32 {
        let mut v = v;
        unsafe {
            asm!("xchg dword ptr [{p}], {v:e}", p = in(reg) p, v = inout(reg) v, options(nostack, preserves_flags))
        };
        v
    }
    /// `LOCK XADD [p], r32`.
    #[inline(always)]
    pub unsafe fn xadd(p: *mut u32, v: u32) -> u32 {
        let mut v = v;
        unsafe {
            asm!("lock xadd dword ptr [{p}], {v:e}", p = in(reg) p, v = inout(reg) v, options(nostack))
        };
        v
    }
    /// `LOCK CMPXCHG [p], r32` with EAX = `expected`; the old value.
    #[inline(always)]
    pub unsafe fn cmpxchg(p: *mut u32, expected: u32, new: u32) -> u32 {
        let mut old = expected;
        unsafe {
            asm!("lock cmpxchg dword ptr [{p}], {n:e}", p = in(reg) p, n = in(reg) new, inout("eax") old, options(nostack))
        };
        old
    }
    /// `LOCK ADD/SUB/AND/OR/XOR [p], r32` (index 0..5 in that order).
    #[inline(always)]
    pub unsafe fn locked(which: u8, p: *mut u32, v: u32) {
        unsafe {
            match which {
                0 => {
                    asm!("lock add dword ptr [{p}], {v:e}", p = in(reg) p, v = in(reg) v, options(nostack))
                }
                1 => {
                    asm!("lock sub dword ptr [{p}], {v:e}", p = in(reg) p, v = in(reg) v, options(nostack))
                }
                2 => {
                    asm!("lock and dword ptr [{p}], {v:e}", p = in(reg) p, v = in(reg) v, options(nostack))
                }
                3 => {
                    asm!("lock or dword ptr [{p}], {v:e}", p = in(reg) p, v = in(reg) v, options(nostack))
                }
                _ => {
                    asm!("lock xor dword ptr [{p}], {v:e}", p = in(reg) p, v = in(reg) v, options(nostack))
                }
            }
        }
    }
    /// The time-stamp counter.
    #[inline(always)]
    pub fn rdtsc() -> u64 {
        // SAFETY: RDTSC has no memory effects.
        unsafe { std::arch::x86_64::_rdtsc() }
    }
}

/// The time-stamp counter (x86-64 `RDTSC`).
#[cfg(target_arch = "x86_64")]
pub fn rdtsc() -> u64 {
    x86::rdtsc()
}

/// Executes one instance of a role: `locs[j]` is location `j`'s word,
/// `regs` the role's registers (set to their initial values first).
///
/// # Safety
/// Every pointer in `locs` must be valid for 4-byte reads and writes.
#[cfg(target_arch = "x86_64")]
pub unsafe fn execute(role: &HostRole, locs: &[*mut u32], regs: &mut [u32]) {
    regs.copy_from_slice(&role.init);
    let val = |regs: &[u32], s: Src| match s {
        Src::Reg(r) => regs[r],
        Src::Imm(v) => v,
    };
    let mut pc = 0;
    // Every jump goes forward (checked by `compile`), so this ends.
    while pc < role.ops.len() {
        let mut next = pc + 1;
        // SAFETY: location pointers are valid per this function's contract.
        unsafe {
            match &role.ops[pc] {
                Op::Load { dst, loc } => regs[*dst] = x86::load(locs[*loc]),
                Op::Store { loc, src } => x86::store(locs[*loc], val(regs, *src)),
                Op::Xchg { dst, loc, src } => regs[*dst] = x86::xchg(locs[*loc], val(regs, *src)),
                Op::Xadd { dst, loc, src } => regs[*dst] = x86::xadd(locs[*loc], val(regs, *src)),
                Op::Cmpxchg {
                    dst,
                    loc,
                    expected,
                    new,
                } => regs[*dst] = x86::cmpxchg(locs[*loc], val(regs, *expected), val(regs, *new)),
                Op::Locked { op, loc, src } => {
                    let which = match op {
                        BinOp::Add => 0,
                        BinOp::Sub => 1,
                        BinOp::And => 2,
                        BinOp::Or => 3,
                        _ => 4,
                    };
                    x86::locked(which, locs[*loc], val(regs, *src))
                }
                Op::Mfence => x86::mfence(),
                Op::Mov { dst, src } => regs[*dst] = val(regs, *src),
                Op::Alu { dst, op, a, b } => {
                    let (x, y) = (val(regs, *a) as i32 as i64, val(regs, *b) as i32 as i64);
                    regs[*dst] = match op.apply(Value::Int(x), Value::Int(y)) {
                        Ok(Value::Int(v)) => v as i32 as u32,
                        _ => 0,
                    };
                }
                Op::Branch { cmp, a, b, target } => {
                    let (x, y) = (val(regs, *a) as i32 as i64, val(regs, *b) as i32 as i64);
                    if cmp.eval(Value::Int(x), Value::Int(y)) {
                        next = *target;
                    }
                }
                Op::Goto { target } => next = *target,
            }
        }
        pc = next;
    }
}

/// What a host run gives back.
pub struct HostRun {
    /// The final states.
    pub hist: Histogram,
    /// Rounds run.
    pub rounds: u64,
    /// Instances whose roles' execution intervals all overlapped.
    pub raced: u64,
    /// Wall time.
    pub elapsed: Duration,
}

/// The location buffer of a run, shared by the role threads (accessed
/// only through the inline assembly and, between rounds, by the main
/// thread with volatile reads and writes).
struct Shared(*mut u32);
// SAFETY: the buffer outlives the scoped threads; concurrent access is the
// point of the test and goes through `asm!` only.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

/// Words per location slot on the host: one 64-byte cache line.
const HOST_LINE_WORDS: usize = 16;

/// Runs `plan`'s roles on host threads, `per_round` instances a round,
/// until `instances` have run; randomness from `seed`.
#[cfg(target_arch = "x86_64")]
pub fn run(
    plan: &Plan,
    roles: &[HostRole],
    per_round: usize,
    instances: u64,
    seed: u64,
) -> HostRun {
    use std::sync::{Barrier, mpsc};
    let n = per_round.max(1);
    let nloc = plan.locations.len().max(1);
    let slots = n * nloc * 2;
    let mut buffer = vec![0u32; slots * HOST_LINE_WORDS];
    let base = Shared(buffer.as_mut_ptr());
    let rounds = instances.div_ceil(n as u64).max(1);
    let nroles = roles.len();
    let start_bar = Barrier::new(nroles + 1);
    let end_bar = Barrier::new(nroles + 1);
    let mut rng = Rng::new(seed ^ 0x686f_7374);
    let mut hist = Histogram::default();
    let mut raced = 0u64;
    let started = Instant::now();
    // Per round: the word offset of each instance's locations.
    let offsets = std::sync::Mutex::new(vec![0usize; n * nloc]);
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<(usize, Vec<u32>, Vec<(u64, u64)>)>();
        for (r, role) in roles.iter().enumerate() {
            let tx = tx.clone();
            let (start_bar, end_bar, offsets, base) = (&start_bar, &end_bar, &offsets, &base);
            let nregs = role.init.len();
            s.spawn(move || {
                let mut regs = vec![0u32; nregs];
                let mut locs = vec![std::ptr::null_mut::<u32>(); nloc];
                for _ in 0..rounds {
                    start_bar.wait();
                    let offs = offsets.lock().map(|o| o.clone()).unwrap_or_default();
                    let mut outs = Vec::with_capacity(n * nregs);
                    let mut times = Vec::with_capacity(n);
                    for i in 0..n {
                        for (j, l) in locs.iter_mut().enumerate() {
                            // SAFETY: offsets index the buffer (drawn below).
                            *l = unsafe { base.0.add(offs[i * nloc + j]) };
                        }
                        let t0 = x86::rdtsc();
                        // SAFETY: every pointer is inside the buffer.
                        unsafe { execute(role, &locs, &mut regs) };
                        let t1 = x86::rdtsc();
                        outs.extend_from_slice(&regs);
                        times.push((t0, t1));
                    }
                    let _ = tx.send((r, outs, times));
                    end_bar.wait();
                }
            });
        }
        drop(tx);
        for _ in 0..rounds {
            // Lay out and reset this round's locations.
            let mut perm: Vec<usize> = (0..slots).collect();
            rng.shuffle(&mut perm);
            let offs: Vec<usize> = perm[..n * nloc]
                .iter()
                .map(|s| s * HOST_LINE_WORDS)
                .collect();
            for (k, &o) in offs.iter().enumerate() {
                // SAFETY: o < slots * HOST_LINE_WORDS; no role runs now.
                unsafe { base.0.add(o).write_volatile(plan.init_word(k % nloc)) };
            }
            if let Ok(mut g) = offsets.lock() {
                *g = offs.clone();
            }
            start_bar.wait();
            let mut outs: Vec<Vec<u32>> = vec![Vec::new(); nroles];
            let mut times: Vec<Vec<(u64, u64)>> = vec![Vec::new(); nroles];
            for _ in 0..nroles {
                if let Ok((r, o, t)) = rx.recv() {
                    outs[r] = o;
                    times[r] = t;
                }
            }
            end_bar.wait();
            // Outputs in the plan's record order; final memory.
            let mut record = vec![0u32; n * plan.outputs];
            for (r, role) in plan.roles.iter().enumerate() {
                let k = role.outputs.len();
                for i in 0..n {
                    record[i * plan.outputs + role.first_output..][..k]
                        .copy_from_slice(&outs[r][i * k..(i + 1) * k]);
                }
            }
            let finals: Vec<u32> = offs
                .iter()
                // SAFETY: as above; the roles are done for this round.
                .map(|&o| unsafe { base.0.add(o).read_volatile() })
                .collect();
            hist.add_launch(plan, &record, &finals, n);
            for i in 0..n {
                let start = times.iter().map(|t| t[i].0).max().unwrap_or(0);
                let end = times.iter().map(|t| t[i].1).min().unwrap_or(0);
                if start < end {
                    raced += 1;
                }
            }
        }
    });
    drop(buffer);
    HostRun {
        hist,
        rounds,
        raced,
        elapsed: started.elapsed(),
    }
}
