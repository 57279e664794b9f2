//! Speculation past unresolved branches (issue 27, docs/operational.md
//! "Speculative loads").
//!
//! Appendix A of seed 000 leaves dependencies out of LOST-POP ("these
//! would result in additional conditions to accepting a request"); litmix
//! accepts a request once the registers it needs are known and a branch
//! waits for its operands (docs/decisions.md, issue 9). For PTX that made a
//! control dependency order a later *read* after the read it depends on,
//! which ptx6 does not do (it has no dependency order) and which forbids
//! `WRC+fence.sc+dep`, a shape the seed's authors mark allowed.
//!
//! So a PTX thread stopped at a branch whose operands are unknown may pass
//! it on a *guess* (a [`LpTransition::Guess`], taken or not). Until the
//! operands are known the thread accepts only fences and plain loads that
//! leave the operands' registers alone (no store or RMW is accepted on a
//! guess, so no write another thread can read depends on it, and no value
//! comes from thin air), local instructions that would overwrite an
//! operand wait, and a second unresolved branch waits. The reads that
//! give the operands may only be satisfied by writes whose values send the
//! branch the guessed way; once the operands are known the guess is
//! confirmed and dropped. A wrong guess therefore never completes: every
//! run that ends is a run in which the branch went the way it was
//! guessed, with the loads behind it accepted earlier than the register
//! condition would allow and nothing else changed. Waiting at the branch
//! stays possible, so every run of the machine without guesses remains.
//! x86 threads never guess (TSO keeps reads in order anyway).

use super::machine::{LostPop, TInfo};
use super::types::*;
use crate::ir::{Instr, InstrKind, Operand, Reg, Value};
use crate::op::machine::MachineError;

/// Which branches of one thread are worth a guess, found once per test.
pub struct Plan {
    /// Per instruction: a branch of a PTX thread with a load or a fence
    /// within reach on at least one side (past labels, local instructions
    /// and forward gotos, before any store, RMW or other branch). A guess
    /// at another branch could only wait, as waiting at the branch does.
    worth: Vec<bool>,
    /// Per program counter: the registers read by the branches worth a
    /// guess that the thread may still reach (all of them when it jumps
    /// backwards). A read into one of them is not a sole-writer singleton:
    /// satisfying it early would take a guess away.
    ahead: Vec<Vec<u16>>,
}

impl Plan {
    /// The plan of thread `info` running `code`.
    pub(super) fn new(info: &TInfo, code: &[Instr]) -> Plan {
        let n = code.len();
        if info.arch != LpArch::Ptx {
            return Plan {
                worth: vec![false; n],
                ahead: vec![Vec::new(); n + 1],
            };
        }
        let label = |l: &str| info.labels.get(l).copied();
        // Whether a load or a fence is within reach from instruction `k`.
        let reaches = |mut k: usize| {
            for _ in 0..=n {
                match code.get(k).map(|i| &i.kind) {
                    Some(InstrKind::Load { .. } | InstrKind::Fence) => return true,
                    Some(InstrKind::Label(_) | InstrKind::Mov { .. } | InstrKind::Op { .. }) => {
                        k += 1
                    }
                    Some(InstrKind::Goto { target }) => match label(target) {
                        Some(to) if to > k => k = to,
                        _ => return false,
                    },
                    _ => return false,
                }
            }
            false
        };
        let worth: Vec<bool> = code
            .iter()
            .enumerate()
            .map(|(k, i)| match &i.kind {
                InstrKind::Branch { target, .. } => {
                    reaches(k + 1) || label(target).is_some_and(&reaches)
                }
                _ => false,
            })
            .collect();
        let mut ahead = vec![Vec::new(); n + 1];
        let mut backward = false;
        for (k, ins) in code.iter().enumerate().rev() {
            let mut regs: Vec<u16> = ahead[k + 1].clone();
            match &ins.kind {
                InstrKind::Branch { a, b, target, .. } => {
                    backward |= label(target).is_some_and(|to| to <= k);
                    if worth[k] {
                        for o in [a, b] {
                            if let Operand::Reg(r) = o
                                && let Some(i) = info.regs.iter().position(|x| x == r)
                                && !regs.contains(&(i as u16))
                            {
                                regs.push(i as u16);
                            }
                        }
                    }
                }
                InstrKind::Goto { target } => {
                    backward |= label(target).is_some_and(|to| to <= k);
                }
                _ => {}
            }
            ahead[k] = regs;
        }
        if backward {
            let whole = ahead[0].clone();
            ahead.iter_mut().for_each(|a| *a = whole.clone());
        }
        Plan { worth, ahead }
    }
}

impl LostPop<'_> {
    /// Whether a branch worth a guess that thread `t` may still reach
    /// reads register `d`.
    pub(super) fn branch_ahead(&self, s: &LpState, t: usize, d: u16) -> bool {
        let pc = s.threads[t].pc as usize;
        self.plans[t]
            .ahead
            .get(pc)
            .is_some_and(|regs| regs.contains(&d))
    }

    /// The operands of the branch thread `t` guessed past, if any.
    fn guessed_operands(&self, s: &LpState, t: usize) -> Option<(&Operand, &Operand, bool)> {
        let g = s.threads[t].guess?;
        match &self.test.threads[t].code.get(g.branch as usize)?.kind {
            InstrKind::Branch { a, b, .. } => Some((a, b, g.taken)),
            _ => None,
        }
    }

    /// Whether writing register `r` of thread `t` would change an operand
    /// of its guessed branch.
    pub(super) fn guess_reads(&self, s: &LpState, t: usize, r: &Reg) -> bool {
        self.guessed_operands(s, t).is_some_and(|(a, b, _)| {
            [a, b]
                .iter()
                .any(|o| matches!(o, Operand::Reg(x) if x == r))
        })
    }

    /// Whether thread `t`, on a guess, may accept its next instruction:
    /// only a fence or a plain load into a register the guess does not
    /// read (nothing that writes memory).
    pub(super) fn guess_allows(&self, s: &LpState, t: usize, kind: &InstrKind) -> bool {
        if s.threads[t].guess.is_none() {
            return true;
        }
        match kind {
            InstrKind::Load { dst, .. } => !self.guess_reads(s, t, dst),
            InstrKind::Fence => true,
            _ => false,
        }
    }

    /// Whether read `r` may read value `v` under its thread's guess: when
    /// that makes the branch's operands known, they must send it the
    /// guessed way.
    pub(super) fn guess_admits(&self, s: &LpState, r: &Req, v: Value) -> bool {
        let t = r.thread() as usize;
        let Some((a, b, taken)) = self.guessed_operands(s, t) else {
            return true;
        };
        let Some(InstrKind::Branch { cmp, .. }) = self.test.threads[t]
            .code
            .get(s.threads[t].guess.map_or(0, |g| g.branch as usize))
            .map(|i| &i.kind)
        else {
            return true;
        };
        let seq = (r.id & 0xFFFF) as u16;
        let th = &s.threads[t];
        let value = |o: &Operand| match o {
            Operand::Imm(v) => Some(*v),
            Operand::Reg(x) => {
                let d = self.reg_index(t, x);
                if r.dst == Some(d as u16) && th.owner[d] == Some(seq) {
                    Some(v)
                } else {
                    th.regs[d]
                }
            }
        };
        match (value(a), value(b)) {
            (Some(x), Some(y)) => cmp.eval(x, y) == taken,
            _ => true,
        }
    }

    /// Drops thread `t`'s guess once its branch's operands are known
    /// (reads satisfy only as [`LostPop::guess_admits`] allows, so the
    /// branch goes the guessed way).
    pub(super) fn confirm_guess(&self, s: &mut LpState, t: usize) {
        if let Some((a, b, _)) = self.guessed_operands(s, t)
            && self.operand(s, t, a).is_some()
            && self.operand(s, t, b).is_some()
        {
            s.threads[t].guess = None;
        }
    }

    /// Passes thread `t`'s branch on a guess, then runs what follows.
    pub(super) fn guess(&self, s: &mut LpState, t: usize, taken: bool) -> Result<(), MachineError> {
        let pc = s.threads[t].pc;
        let Some(InstrKind::Branch { target, .. }) =
            self.test.threads[t].code.get(pc as usize).map(|i| &i.kind)
        else {
            return Err(MachineError(format!("P{t}: no branch to guess at")));
        };
        s.threads[t].guess = Some(Guess { branch: pc, taken });
        if taken {
            self.jump(s, t, target)?;
        } else {
            s.threads[t].pc += 1;
        }
        self.settle(s, t)
    }

    /// The guesses enabled in `s`: a PTX thread, not on a guess already,
    /// stopped at a branch worth a guess (its operands unknown), both ways.
    pub(super) fn guesses(&self, s: &LpState, out: &mut Vec<LpTransition>) {
        for t in 0..s.threads.len() {
            let th = &s.threads[t];
            let worth = self.plans[t].worth.get(th.pc as usize).copied();
            if th.cut || th.guess.is_some() || worth != Some(true) {
                continue;
            }
            for taken in [false, true] {
                out.push(LpTransition::Guess {
                    thread: t as u32,
                    taken,
                });
            }
        }
    }

    /// The reduction's choice at a branch (docs/operational.md,
    /// "Speculative loads"): when a thread may guess, its two guesses
    /// alone. Waiting at the branch adds nothing: a run that waits, reads
    /// the operands with `w` and then accepts the loads behind the branch
    /// is matched by guessing `w`'s way at once and accepting those loads
    /// before the other transitions of the run, since an accept commutes
    /// with every transition enabled beside it (rule 1).
    pub(super) fn guess_choice(&self, enabled: &[LpTransition]) -> Option<Vec<usize>> {
        let first = enabled.iter().find_map(|t| match *t {
            LpTransition::Guess { thread, .. } => Some(thread),
            _ => None,
        })?;
        Some(
            enabled
                .iter()
                .enumerate()
                .filter(
                    |(_, t)| matches!(t, LpTransition::Guess { thread, .. } if *thread == first),
                )
                .map(|(i, _)| i)
                .collect(),
        )
    }
}
