//! How LOST-POP states and transitions read: transition labels for
//! traces, the state view for `litmix step` and the playground, request
//! and thread-set names.

use super::machine::{LostPop, bit};
use super::types::*;
use crate::ir::outcome::{term_name, value_text};
use crate::op::machine::Machine;
use crate::verdict::{ConstraintView, ItemView, StateView, ThreadView};

impl LostPop<'_> {
    pub(super) fn req_text(&self, q: &Req) -> String {
        let loc = |l: u32| self.test.locations[l as usize].name.clone();
        if q.thread() == INIT_THREAD {
            return format!(
                "init {}={}",
                loc(q.loc),
                q.value
                    .map(|v| value_text(self.test, v))
                    .unwrap_or_default()
            );
        }
        let ins = &self.test.threads[q.thread() as usize].code[q.instr as usize];
        let mut text = format!("P{}#{} {}", q.thread(), q.id & 0xFFFF, ins.text);
        if q.kind == Kind::Fence && q.arch == LpArch::Ptx {
            text.push_str(&format!(" [{}]", q.sem.name()));
        }
        if let (true, Some(v)) = (q.writes(), q.value) {
            text.push_str(&format!(" (writes {})", value_text(self.test, v)));
        }
        text
    }

    /// A short name of request `id` (`P0#1 st [x], 1`).
    pub fn describe(&self, s: &LpState, id: Rid) -> String {
        s.req(id)
            .map(|q| self.req_text(q))
            .unwrap_or_else(|| format!("#{id:x}"))
    }

    pub(super) fn threads_text(&self, m: u64) -> String {
        if m == self.all {
            return "sys".into();
        }
        (0..self.threads.len())
            .filter(|t| m & bit(*t as u32) != 0)
            .map(|t| format!("P{t}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    pub(super) fn label_text(&self, s: &LpState, tr: &LpTransition) -> String {
        match *tr {
            LpTransition::Accept { thread } => {
                let th = &self.test.threads[thread as usize];
                let pc = s.threads[thread as usize].pc as usize;
                let text = th.code.get(pc).map(|i| i.text.as_str()).unwrap_or("?");
                format!("accept P{thread}: {text}")
            }
            LpTransition::Propagate { req, to } => {
                let scope = s
                    .req(req)
                    .map(|q| self.threads_text(q.scope))
                    .unwrap_or_default();
                let g = s.req(req).map(|q| self.group_of(q, to)).unwrap_or(0) & !bit(to);
                let with = if g != 0 {
                    format!(
                        " and {} (none of them accesses its location)",
                        self.threads_text(g)
                    )
                } else {
                    String::new()
                };
                format!(
                    "propagate {} (scope {scope}) to P{to}{with}",
                    self.describe(s, req)
                )
            }
            LpTransition::Satisfy { read, write } => format!(
                "satisfy {} from {}",
                self.describe(s, read),
                self.describe(s, write)
            ),
            LpTransition::Guess { thread, taken } => {
                let th = &self.test.threads[thread as usize];
                let pc = s.threads[thread as usize].pc as usize;
                let text = th.code.get(pc).map(|i| i.text.as_str()).unwrap_or("?");
                let way = if taken { "taken" } else { "not taken" };
                format!("guess P{thread}: {text} {way} (its operands are not known yet)")
            }
            LpTransition::CatchUp { loc, to } => {
                let mut n = s.clone();
                let moved = self.catch_up_run(&mut n, loc, to).unwrap_or_default();
                format!(
                    "catch up {} at P{to} (which never accesses it): propagate {}",
                    self.test.locations[loc as usize].name,
                    moved
                        .iter()
                        .map(|q| self.describe(s, *q))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        }
    }

    pub(super) fn state_view(&self, s: &LpState) -> StateView {
        let mut v = StateView::default();
        for q in s.reqs.iter().filter(|q| q.thread() == INIT_THREAD) {
            v.summary.push(self.req_text(q));
        }
        for (t, th) in s.threads.iter().enumerate() {
            let info = &self.threads[t];
            let code = &self.test.threads[t].code;
            let next = code
                .get(th.pc as usize)
                .map(|i| format!("next: {}", i.text))
                .unwrap_or_else(|| "done".into());
            let regs = info
                .regs
                .iter()
                .zip(&th.regs)
                .map(|(r, v)| {
                    format!(
                        "{r}={}",
                        v.map(|v| value_text(self.test, v))
                            .unwrap_or_else(|| "?".into())
                    )
                })
                .collect::<Vec<_>>()
                .join(" ");
            let mut tv = ThreadView {
                name: format!("P{t}"),
                arch: match info.arch {
                    LpArch::X86 => "X86".into(),
                    LpArch::Ptx => "PTX".into(),
                },
                info: vec![next, regs],
                items: Vec::new(),
            };
            if th.cut {
                tv.info.push("cut by the unroll bound".into());
            }
            if let Some(g) = th.guess
                && let Some(ins) = code.get(g.branch as usize)
            {
                let way = if g.taken { "taken" } else { "not taken" };
                tv.info.push(format!(
                    "on a guess: {} {way} (loads and fences only)",
                    ins.text
                ));
            }
            for q in s.reqs.iter().filter(|q| q.thread() == t as u32) {
                let mut detail = if q.kind == Kind::Fence {
                    "fence (does not propagate)".to_string()
                } else {
                    format!("propagated to {}", self.threads_text(q.prop))
                };
                if q.pred != 0 {
                    detail.push_str(&format!("; predecessor at {}", self.threads_text(q.pred)));
                }
                if q.kind == Kind::Rmw && q.done {
                    detail.push_str("; read done");
                }
                tv.items.push(ItemView {
                    id: format!("P{t}#{}", q.id & 0xFFFF),
                    text: self.req_text(q),
                    detail,
                });
            }
            v.threads.push(tv);
        }
        for &(a, b, sc) in &s.edges {
            let name = |id: Rid| {
                if rid_thread(id) == INIT_THREAD {
                    format!("init {}", self.test.locations[(id & 0xFFFF) as usize].name)
                } else {
                    format!("P{}#{}", rid_thread(id), id & 0xFFFF)
                }
            };
            v.constraints.push(ConstraintView {
                from: name(a),
                to: name(b),
                scope: self.threads_text(sc),
            });
        }
        v.outcome = self.outcome(s).map(|vals| {
            self.observed
                .iter()
                .zip(vals)
                .map(|(t, x)| format!("{}={}", term_name(self.test, t), value_text(self.test, x)))
                .collect()
        });
        v
    }
}
