//! Building a LOST-POP machine for one test: the constructs it models
//! (refusing the others with a located message), each thread's static
//! facts, the reductions' tables and the readings chosen.

use super::machine::{LostPop, TInfo, bit};
use super::order::Meet;
use super::reduce::Future;
use super::speculate::Plan;
use super::types::*;
use crate::diag::Diagnostic;
use crate::ir::outcome::observed_terms;
use crate::ir::{Arch, InstrKind, Reg, Term, Test};
use std::collections::HashMap;

/// Thread count limit (scopes are 64-bit thread sets).
const MAX_THREADS: usize = 63;

impl<'t> LostPop<'t> {
    /// Builds the machine for `test`; constructs outside the model (C
    /// threads, barriers, proxies, aliases, too many threads) are errors
    /// naming the construct and where it is. `unroll` bounds backward jumps.
    pub fn new(test: &'t Test, unroll: usize) -> Result<Self, Diagnostic> {
        let file = test.source_name();
        let err = |pos: crate::ir::Pos, msg: String| Diagnostic::new(&file, pos, msg);
        if test.threads.len() > MAX_THREADS {
            return Err(err(
                Default::default(),
                format!(
                    "lostpop supports at most {MAX_THREADS} threads (this test has {})",
                    test.threads.len()
                ),
            ));
        }
        for l in &test.locations {
            if l.alias_of.is_some() {
                return Err(err(
                    Default::default(),
                    format!(
                        "lostpop does not model proxies or aliases (location '{}' is an alias)",
                        l.name
                    ),
                ));
            }
        }
        let n = test.threads.len();
        let mut threads = Vec::new();
        for (ti, th) in test.threads.iter().enumerate() {
            let arch = match th.arch {
                Arch::X86 => LpArch::X86,
                Arch::Ptx => LpArch::Ptx,
                Arch::C | Arch::Rsp => {
                    return Err(err(
                        th.code.first().map(|i| i.pos).unwrap_or_default(),
                        format!(
                            "lostpop models x86 and PTX threads; P{} is {} code",
                            th.id,
                            if th.arch == Arch::C {
                                "C/OpenCL"
                            } else {
                                "RSP machine"
                            }
                        ),
                    ));
                }
            };
            let mut regs: Vec<Reg> = Vec::new();
            let mut add = |r: &Reg| {
                if !regs.contains(r) {
                    regs.push(r.clone());
                }
            };
            for (r, _) in &th.reg_init {
                add(r);
            }
            let mut labels = HashMap::new();
            for (k, ins) in th.code.iter().enumerate() {
                let bad = ins
                    .tags
                    .iter()
                    .find(|t| matches!(t.as_str(), "PROXY" | "SURFACE" | "TEXTURE" | "CONSTANT"));
                if let Some(tag) = bad {
                    return Err(err(
                        ins.pos,
                        format!(
                            "lostpop does not model proxies ('{}' is a {} instruction)",
                            ins.text,
                            tag.to_lowercase()
                        ),
                    ));
                }
                match &ins.kind {
                    InstrKind::Barrier { .. } => {
                        return Err(err(
                            ins.pos,
                            format!("lostpop does not model execution barriers ('{}')", ins.text),
                        ));
                    }
                    InstrKind::Label(l) => {
                        labels.insert(l.clone(), k);
                    }
                    kind => {
                        for r in kind.registers() {
                            add(r);
                        }
                    }
                }
            }
            let level_mask = |level: &str| -> u64 {
                let mut m = bit(ti as u32);
                let pa = &th.placement;
                let Some(ia) = pa.iter().position(|s| s.level == level) else {
                    return m;
                };
                for (u, other) in test.threads.iter().enumerate() {
                    let pb = &other.placement;
                    if let Some(ib) = pb.iter().position(|s| s.level == level)
                        && pa[..=ia] == pb[..=ib]
                    {
                        m |= bit(u as u32);
                    }
                }
                m
            };
            threads.push(TInfo {
                arch,
                regs,
                labels,
                me: bit(ti as u32),
                cta: level_mask("cta"),
                gpu: level_mask("gpu"),
            });
        }
        let observed = observed_terms(test);
        for t in &observed {
            if let Term::Reg { thread, reg } = t
                && let Some(info) = threads.get_mut(*thread)
                && !info.regs.contains(reg)
            {
                info.regs.push(reg.clone());
            }
        }
        let all_x86 = threads.iter().all(|i| i.arch == LpArch::X86);
        let plans = threads
            .iter()
            .zip(&test.threads)
            .map(|(info, th)| Plan::new(info, &th.code))
            .collect();
        let future = Future::new(test);
        Ok(LostPop {
            test,
            threads,
            observed,
            all: if n >= 64 { u64::MAX } else { (1u64 << n) - 1 },
            unroll: unroll.min(u16::MAX as usize) as u16,
            silent: silent_groups(&future, test.threads.len(), test.locations.len()),
            future,
            catch_up: true,
            all_x86,
            plans,
            meet: Meet::ReleaseFirst,
        })
    }

    /// Turns the catch-up and sole-writer reductions off (`--model
    /// lostpop-unreduced`), so the reduced exploration can be compared with
    /// the plain one.
    pub fn without_catch_up(mut self) -> Self {
        self.catch_up = false;
        self
    }

    /// The machine with reading `meet` of A.5.2's scope meet (the seed's
    /// printed order, `acquire-meet` or `scope-join`).
    pub fn with_meet(mut self, meet: Meet) -> Self {
        self.meet = meet;
        self
    }
}

/// Per location, the threads whose code never accesses it (rule 7's
/// silent groups, from [`Future::ever_accesses`]): empty unless at least
/// two threads qualify.
fn silent_groups(future: &Future, threads: usize, locations: usize) -> Vec<u64> {
    (0..locations as u32)
        .map(|l| {
            let g = (0..threads)
                .filter(|&t| !future.ever_accesses(t, l))
                .fold(0u64, |m, t| m | bit(t as u32));
            if g.count_ones() >= 2 { g } else { 0 }
        })
        .collect()
}
