//! What a test needs on hardware: its roles and where they sit, the
//! registers and locations of a final state, or why it cannot run.

use super::host::{self, HostRole};
use crate::ir::outcome::observed_terms;
use crate::ir::{Address, Arch, InstrKind, LocId, Operand, Reg, RmwOp, Term, Test, Value};
use std::collections::BTreeSet;
use std::fmt;

/// Why a test cannot run on the harness (printed as is).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal(pub String);

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Most roles one CTA group may have (each takes a warp of its own; a
/// block holds at most 32 warps, and a few instance sets should fit).
pub const MAX_ROLES_PER_CTA: usize = 16;

/// Most threads of a compound (X86+PTX) test: the flag line of an
/// instance has 16 words for each kind of mark (`emit::FLAG_LINE_WORDS`).
pub const MAX_COMPOUND_THREADS: usize = 16;

/// One test thread as the harness runs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Role {
    /// Index of the thread in [`Test::threads`].
    pub thread: usize,
    /// The CTA group: threads with equal CTA ids share one, and each group
    /// runs in blocks of its own.
    pub group: usize,
    /// The warp the role takes within an instance's set of warps in its
    /// block (roles of one group take different warps).
    pub warp: usize,
    /// The registers the role copies back, in output order.
    pub outputs: Vec<Reg>,
    /// The first output's index in an instance's output record.
    pub first_output: usize,
    /// Registers holding a location's address for the whole run (set in
    /// the init block, never written): register and location.
    pub address_regs: Vec<(Reg, LocId)>,
    /// For an X86 thread of a compound (X86+PTX) test: its program, run
    /// by host threads on memory the GPU sees (`group` and `warp` are
    /// then unused); `None` for a GPU role.
    pub host: Option<HostRole>,
}

/// A test ready for the hardware harness.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The test, its `locations` extended so that the model's states are
    /// full final states (every register a thread writes or observes,
    /// every location): the verdict compares full states.
    pub test: Test,
    /// One role per test thread, in thread order.
    pub roles: Vec<Role>,
    /// The number of CTA groups.
    pub groups: usize,
    /// Warps an instance takes in a block: the largest group's size.
    pub warps_per_set: usize,
    /// The physical locations in layout order (location slot `j` of an
    /// instance holds `locations[j]`).
    pub locations: Vec<LocId>,
    /// Output registers of one instance in all (sum over roles).
    pub outputs: usize,
    /// The terms of a final state, in the order of the model's states.
    pub observed: Vec<Term>,
}

impl Plan {
    /// The role of the thread whose `PN` number is `id`.
    pub fn role_of_thread_id(&self, id: usize) -> Option<&Role> {
        self.roles
            .iter()
            .find(|r| self.test.threads[r.thread].id == id)
    }

    /// Initial value of location slot `j` (a 32-bit word).
    pub fn init_word(&self, j: usize) -> u32 {
        match self.test.locations[self.locations[j]].init {
            Value::Int(v) => v as i32 as u32,
            Value::Addr(_) => 0, // refused by `plan`
        }
    }

    /// The number of GPU test threads (device barrier arrivals per
    /// instance).
    pub fn threads(&self) -> usize {
        self.roles.iter().filter(|r| r.host.is_none()).count()
    }

    /// Whether some role runs on the host CPU (a compound X86+PTX test
    /// with GPU roles too: `hw run` takes the compound path).
    pub fn is_compound(&self) -> bool {
        self.roles.iter().any(|r| r.host.is_some()) && self.threads() > 0
    }
}

/// Checks that `test` can run on the harness and builds its plan.
pub fn plan(test: &Test) -> Result<Plan, Refusal> {
    let refuse = |s: String| Err(Refusal(s));
    if test.threads.is_empty() {
        return refuse("the test has no threads".into());
    }
    if let Some(t) = test
        .threads
        .iter()
        .find(|t| !matches!(t.arch, Arch::Ptx | Arch::X86))
    {
        return refuse(format!(
            "P{} is {} code: the harness runs PTX threads on the GPU and X86 threads on the host",
            t.id,
            t.arch.name()
        ));
    }
    if test.threads.iter().all(|t| t.arch == Arch::X86) {
        return refuse(
            "no PTX thread: an X86 test runs on host threads alone (hw run does that)".into(),
        );
    }
    if cfg!(not(target_arch = "x86_64")) && test.threads.iter().any(|t| t.arch == Arch::X86) {
        return refuse("X86 threads run on x86-64 hosts only".into());
    }
    let used = used_locations(test);
    for (i, l) in test.locations.iter().enumerate() {
        if l.alias_of.is_some() {
            if !used.contains(&i) {
                // Declared for other rows of a template: nothing to lay out.
                continue;
            }
            return refuse(if l.proxy == crate::ir::Proxy::Generic {
                format!(
                    "location '{}' is a physical alias: it needs a second virtual mapping of the same memory, which the harness does not build",
                    l.name
                )
            } else {
                format!(
                    "location '{}' is accessed through the {} proxy: the harness runs generic-proxy accesses only",
                    l.name,
                    l.proxy.name()
                )
            });
        }
        match l.init {
            Value::Addr(_) => {
                return refuse(format!(
                    "location '{}' holds an address: the harness stores 32-bit values only",
                    l.name
                ));
            }
            Value::Int(v) => check_i32(v, &format!("initial value of '{}'", l.name))?,
        }
    }
    // Placement: CTA groups by (gpu, cta) ids.
    let mut gpus = BTreeSet::new();
    let mut ctas: Vec<(u32, u32)> = Vec::new();
    let mut key_of = Vec::new();
    for t in &test.threads {
        if t.arch == Arch::X86 {
            key_of.push((u32::MAX, u32::MAX)); // a host role: no CTA group
            continue;
        }
        let mut gpu = 0;
        let mut cta = None;
        for lvl in &t.placement {
            match lvl.level.as_str() {
                "gpu" => gpu = lvl.id,
                "cta" => cta = Some(lvl.id),
                other => {
                    return refuse(format!(
                        "P{} is placed at scope level '{other}': the harness places threads by CTA and GPU only",
                        t.id
                    ));
                }
            }
        }
        // A thread without a CTA id is alone in its CTA (ids past any given).
        let cta = cta.unwrap_or(1_000_000 + t.id as u32);
        gpus.insert(gpu);
        if !ctas.contains(&(gpu, cta)) {
            ctas.push((gpu, cta));
        }
        key_of.push((gpu, cta));
    }
    if gpus.len() > 1 {
        return refuse(format!(
            "the test places threads on {} GPUs: the harness runs on one",
            gpus.len()
        ));
    }
    let mut roles = Vec::new();
    let mut per_group = vec![0usize; ctas.len()];
    for (i, key) in key_of.iter().enumerate() {
        if test.threads[i].arch == Arch::X86 {
            let (outputs, program) = host::host_role(test, i)?;
            roles.push(Role {
                thread: i,
                group: 0,
                warp: 0,
                outputs,
                first_output: 0,
                address_regs: Vec::new(),
                host: Some(program),
            });
            continue;
        }
        let group = ctas.iter().position(|k| k == key).unwrap_or(0);
        let warp = per_group[group];
        per_group[group] += 1;
        let (outputs, address_regs) = thread_registers(test, i)?;
        roles.push(Role {
            thread: i,
            group,
            warp,
            outputs,
            first_output: 0,
            address_regs,
            host: None,
        });
    }
    if roles.iter().any(|r| r.host.is_some()) && roles.len() > MAX_COMPOUND_THREADS {
        return refuse(format!(
            "{} threads: a compound test has at most {MAX_COMPOUND_THREADS} (each takes one word of each mark in its instance's flag line)",
            roles.len()
        ));
    }
    let warps_per_set = per_group.iter().copied().max().unwrap_or(1);
    if warps_per_set > MAX_ROLES_PER_CTA {
        return refuse(format!(
            "{warps_per_set} threads share one CTA: the harness gives each a warp and allows at most {MAX_ROLES_PER_CTA}"
        ));
    }
    // Full final states: every output register and every location.
    let mut full = test.clone();
    let mut first = 0;
    for r in &mut roles {
        r.first_output = first;
        first += r.outputs.len();
        let id = test.threads[r.thread].id;
        for reg in &r.outputs {
            let t = Term::Reg {
                thread: id,
                reg: reg.clone(),
            };
            if !full.observed.contains(&t) {
                full.observed.push(t);
            }
        }
    }
    let locations: Vec<LocId> = (0..test.locations.len())
        .filter(|&l| test.locations[l].alias_of.is_none())
        .collect();
    // Host programs index location slots, as the kernel does.
    for r in &mut roles {
        if let Some(h) = &mut r.host {
            h.remap_locations(|l| locations.iter().position(|x| *x == l).unwrap_or(0));
        }
    }
    for &l in &locations {
        if !full.observed.contains(&Term::Loc(l)) {
            full.observed.push(Term::Loc(l));
        }
    }
    let observed = observed_terms(&full);
    // A condition may name a register the thread never writes: it reads 0
    // or its initial value; such a register is an output too (set, never
    // changed), so every observed register is an output of its role.
    for t in &observed {
        if let Term::Reg { thread, reg } = t {
            let Some(role) = roles.iter().find(|r| test.threads[r.thread].id == *thread) else {
                return refuse(format!(
                    "the condition names {thread}:{reg} but there is no thread P{thread}"
                ));
            };
            if !role.outputs.contains(reg) && !role.address_regs.iter().any(|(r, _)| r == reg) {
                return refuse(format!("internal: {thread}:{reg} is not an output"));
            }
        }
    }
    Ok(Plan {
        test: full,
        roles,
        groups: ctas.len(),
        warps_per_set,
        locations,
        outputs: first,
        observed,
    })
}

fn check_i32(v: i64, what: &str) -> Result<(), Refusal> {
    if i32::try_from(v).is_err() {
        return Err(Refusal(format!(
            "{what} is {v}: the harness computes in 32 bits"
        )));
    }
    Ok(())
}

/// A thread's output registers and its address registers (register, location).
type Registers = (Vec<Reg>, Vec<(Reg, LocId)>);

/// A thread's output registers (written, initialised or observed; sorted)
/// and its address registers; refuses what the harness cannot emit.
fn thread_registers(test: &Test, i: usize) -> Result<Registers, Refusal> {
    let t = &test.threads[i];
    let refuse = |s: String| Err(Refusal(format!("P{}: {s}", t.id)));
    let mut data: BTreeSet<Reg> = BTreeSet::new();
    let mut addrs: Vec<(Reg, LocId)> = Vec::new();
    for (r, v) in &t.reg_init {
        match v {
            Value::Addr(l) => {
                if test.locations[*l].alias_of.is_some() {
                    return refuse(format!("register {r} holds the address of an alias"));
                }
                addrs.push((r.clone(), *l));
            }
            Value::Int(x) => {
                check_i32(*x, &format!("P{}:{r}", t.id))?;
                data.insert(r.clone());
            }
        }
    }
    let is_addr = |r: &Reg| addrs.iter().any(|(a, _)| a == r);
    let mut labels: Vec<&str> = Vec::new();
    let mut written: BTreeSet<Reg> = BTreeSet::new();
    let operand = |o: &Operand, data: &mut BTreeSet<Reg>| -> Result<(), Refusal> {
        match o {
            Operand::Reg(r) if is_addr(r) => Err(Refusal(format!(
                "P{}: register {r} holds an address and is used as a value: the harness does not compute with addresses",
                t.id
            ))),
            Operand::Reg(r) => {
                data.insert(r.clone());
                Ok(())
            }
            Operand::Imm(Value::Int(v)) => check_i32(*v, "a constant"),
            Operand::Imm(Value::Addr(l)) => Err(Refusal(format!(
                "P{}: the address of '{}' is used as a value: the harness stores 32-bit values only",
                t.id, test.locations[*l].name
            ))),
        }
    };
    let address = |a: &Address| -> Result<(), Refusal> {
        match a {
            Address::Loc(_) => Ok(()),
            Address::Reg(r) if is_addr(r) => Ok(()),
            Address::Reg(r) => Err(Refusal(format!(
                "P{}: the address in register {r} is computed at run time: the harness supports addresses set in the init block only",
                t.id
            ))),
        }
    };
    for ins in &t.code {
        let tags = &ins.tags;
        let has = |s: &str| tags.iter().any(|x| x == s);
        if ["SURFACE", "TEXTURE", "CONSTANT"].iter().any(|p| has(p)) {
            return refuse(format!(
                "'{}' goes through a non-generic proxy: the harness runs generic-proxy accesses only",
                ins.text
            ));
        }
        let mut dst: Option<&Reg> = None;
        match &ins.kind {
            InstrKind::Load { dst: d, addr } => {
                address(addr)?;
                dst = Some(d);
            }
            InstrKind::Store { addr, src } => {
                address(addr)?;
                operand(src, &mut data)?;
            }
            InstrKind::Rmw { dst: d, addr, op } => {
                address(addr)?;
                match op {
                    RmwOp::Bin(_, v) | RmwOp::Exch(v) | RmwOp::Inc(v) | RmwOp::Dec(v) => {
                        operand(v, &mut data)?
                    }
                    RmwOp::Cas { expected, new } => {
                        operand(expected, &mut data)?;
                        operand(new, &mut data)?;
                    }
                }
                if matches!(op, RmwOp::Bin(crate::ir::BinOp::Mul, _)) {
                    return refuse(format!("'{}': PTX has no atomic multiply", ins.text));
                }
                if d.is_none() && (has("ACQ") || has("ACQ_REL")) {
                    return refuse(format!(
                        "'{}': PTX's red has no acquire semantics",
                        ins.text
                    ));
                }
                if d.is_none() && matches!(op, RmwOp::Exch(_) | RmwOp::Cas { .. }) {
                    return refuse(format!("'{}': PTX's red has no exch or cas", ins.text));
                }
                dst = d.as_ref();
            }
            InstrKind::Fence => {
                if has("PROXY") {
                    return refuse(format!(
                        "'{}' is a proxy fence: the harness runs generic-proxy tests only",
                        ins.text
                    ));
                }
                if !(has("SC") || has("ACQ_REL")) {
                    return refuse(format!(
                        "'{}': only fence.sc and fence.acq_rel are emitted (fence.acquire/.release need PTX 8.6 and sm_90 restrictions)",
                        ins.text
                    ));
                }
            }
            InstrKind::Barrier { .. } => {
                return refuse(format!(
                    "'{}' is an execution barrier: instances share a block, so a barrier would count other instances' threads",
                    ins.text
                ));
            }
            InstrKind::Mov { dst: d, src } => {
                operand(src, &mut data)?;
                dst = Some(d);
            }
            InstrKind::Op { dst: d, a, b, .. } => {
                operand(a, &mut data)?;
                operand(b, &mut data)?;
                dst = Some(d);
            }
            InstrKind::Branch { a, b, target, .. } => {
                operand(a, &mut data)?;
                operand(b, &mut data)?;
                if labels.contains(&target.as_str()) {
                    return refuse(format!(
                        "'{}' jumps backwards: the model bounds loops by --unroll, hardware does not",
                        ins.text
                    ));
                }
            }
            InstrKind::Goto { target } => {
                if labels.contains(&target.as_str()) {
                    return refuse(format!(
                        "'{}' jumps backwards: the model bounds loops by --unroll, hardware does not",
                        ins.text
                    ));
                }
            }
            InstrKind::Label(l) => labels.push(l),
        }
        if let Some(d) = dst {
            if is_addr(d) {
                return refuse(format!(
                    "'{}' overwrites register {d}, which holds an address",
                    ins.text
                ));
            }
            written.insert(d.clone());
            data.insert(d.clone());
        }
    }
    // Jumps must land on a label of the thread.
    for ins in &t.code {
        if let InstrKind::Branch { target, .. } | InstrKind::Goto { target } = &ins.kind
            && !labels.contains(&target.as_str())
        {
            return refuse(format!("'{}' jumps to a missing label", ins.text));
        }
    }
    // Registers named by the condition are outputs even when unused.
    let observed = observed_terms(test);
    for term in observed.iter().chain(test.observed.iter()) {
        if let Term::Reg { thread, reg } = term
            && *thread == t.id
            && !is_addr(reg)
        {
            data.insert(reg.clone());
        }
    }
    Ok((data.into_iter().collect(), addrs))
}

/// Locations an instruction, an address register or a final-state term
/// names.
fn used_locations(test: &Test) -> BTreeSet<LocId> {
    let mut used = BTreeSet::new();
    for t in &test.threads {
        for (_, v) in &t.reg_init {
            if let Value::Addr(l) = v {
                used.insert(*l);
            }
        }
        for ins in &t.code {
            let (addr, ops): (Option<&Address>, Vec<&Operand>) = match &ins.kind {
                InstrKind::Load { addr, .. } => (Some(addr), vec![]),
                InstrKind::Store { addr, src } => (Some(addr), vec![src]),
                InstrKind::Rmw { addr, .. } => (Some(addr), vec![]),
                InstrKind::Mov { src, .. } => (None, vec![src]),
                _ => (None, vec![]),
            };
            if let Some(Address::Loc(l)) = addr {
                used.insert(*l);
            }
            for o in ops {
                if let Operand::Imm(Value::Addr(l)) = o {
                    used.insert(*l);
                }
            }
        }
    }
    for t in observed_terms(test) {
        if let Term::Loc(l) = t {
            used.insert(l);
        }
    }
    used
}
