//! Enumerated programs as IR without printing and parsing text: the source
//! test ([`source_test`]) and its compilation ([`Compiler`]).
//!
//! `verify-mapping` checks millions of small programs; printing each as C,
//! parsing it, compiling it to target text and parsing that back cost about
//! a fifth of the time per program. Here the source IR is built directly
//! (what the C front end makes of [`Program::to_c`]), and the target IR of
//! each distinct operation is compiled through the ordinary text path
//! ([`super::compile::compile`]) once, then reused with its location,
//! register and value substituted. Tests in this module and in
//! `tests/mapping_reduce.rs` compare both paths on every program up to a
//! bound: the tests are equal field by field (positions and source text
//! aside).

use super::enumerate::{Op, OpKind, Place, Program};
use crate::ir::{
    Address, Arch, BinOp, CmpOp, Condition, Instr, InstrKind, Location, Operand, Prop, Quantifier,
    RmwOp, ScopeLevel, Term, Test, Thread, Value,
};

const ORDER_TAGS: &[&str] = &["NA", "RLX", "ACQ", "REL", "ACQ_REL", "SC"];
const SCOPE_TAGS: &[&str] = &["SYS", "WG", "DEV", "SYS"];

/// The value written by a store or exchange (the k-th write to a location
/// writes k; ×10 with fetch-and-add RMWs, see [`Program::to_c`]).
fn written(p: &Program, k: u32) -> i64 {
    k as i64 * if p.rmw_add { 10 } else { 1 }
}

/// The source test of `p` named `name`, with condition `[x]=0`: the IR the
/// C front end makes of `p.to_c(name, "x=0")`.
pub fn source_test(p: &Program, name: &str) -> Test {
    let nl = p.locations();
    let atomic: Vec<bool> = (0..nl)
        .map(|l| {
            p.threads
                .iter()
                .flat_map(|t| &t.ops)
                .any(|o| o.kind != OpKind::Fence && o.loc as usize == l && o.order != 0)
        })
        .collect();
    let mut writes = vec![0u32; nl];
    let mut threads = Vec::with_capacity(p.threads.len());
    for (t, th) in p.threads.iter().enumerate() {
        let mut code = Vec::with_capacity(th.ops.len());
        let mut reg = 0usize;
        for op in &th.ops {
            let l = op.loc as usize;
            let mut tags = vec!["C".to_string()];
            let atomic_tags = |tags: &mut Vec<String>, op: &Op| {
                tags.push(ORDER_TAGS[op.order as usize].to_string());
                // No scope (index 0): the C front end's default, system.
                tags.push(SCOPE_TAGS[op.scope as usize].to_string());
                if op.remote {
                    tags.push("REMOTE".to_string());
                }
            };
            let kind = match op.kind {
                OpKind::Load => {
                    let dst = format!("r{reg}");
                    reg += 1;
                    if op.order == 0 {
                        tags.push("NA".into());
                    } else {
                        atomic_tags(&mut tags, op);
                    }
                    InstrKind::Load {
                        dst,
                        addr: Address::Loc(l),
                    }
                }
                OpKind::Store => {
                    writes[l] += 1;
                    let v = Operand::Imm(Value::Int(written(p, writes[l])));
                    if op.order == 0 {
                        tags.push("NA".into());
                    } else {
                        atomic_tags(&mut tags, op);
                    }
                    InstrKind::Store {
                        addr: Address::Loc(l),
                        src: v,
                    }
                }
                OpKind::Rmw => {
                    writes[l] += 1;
                    let dst = format!("r{reg}");
                    reg += 1;
                    atomic_tags(&mut tags, op);
                    let rop = if p.rmw_add {
                        RmwOp::Bin(BinOp::Add, Operand::Imm(Value::Int(1)))
                    } else {
                        RmwOp::Exch(Operand::Imm(Value::Int(written(p, writes[l]))))
                    };
                    InstrKind::Rmw {
                        dst: Some(dst),
                        addr: Address::Loc(l),
                        op: rop,
                    }
                }
                OpKind::Fence => {
                    atomic_tags(&mut tags, op);
                    tags.push("GLOBAL".into());
                    tags.push("LOCAL".into());
                    InstrKind::Fence
                }
            };
            if op.kind != OpKind::Fence {
                tags.push("GLOBAL".into());
                if !atomic[l] {
                    tags.push("NAL".into());
                }
            }
            code.push(Instr {
                kind,
                tags,
                pos: Default::default(),
                text: String::new(),
            });
        }
        let placement = match th.place {
            Place::Cpu => vec![ScopeLevel {
                level: "cpu".into(),
                id: 0,
            }],
            Place::Gpu { dev, wg } => vec![
                ScopeLevel {
                    level: "dev".into(),
                    id: dev as u32,
                },
                ScopeLevel {
                    level: "wg".into(),
                    id: wg as u32,
                },
            ],
            Place::Plain => vec![
                ScopeLevel {
                    level: "dev".into(),
                    id: 0,
                },
                ScopeLevel {
                    level: "wg".into(),
                    id: t as u32,
                },
            ],
        };
        threads.push(Thread {
            id: t,
            arch: Arch::C,
            placement,
            // Every location is a pointer parameter of every thread.
            reg_init: (0..nl)
                .map(|l| (super::enumerate::loc_name(l), Value::Addr(l)))
                .collect(),
            code,
        });
    }
    Test {
        arch: "C".into(),
        name: name.to_string(),
        file: None,
        locations: (0..nl)
            .map(|l| Location::new(super::enumerate::loc_name(l), Value::Int(0)))
            .collect(),
        threads,
        condition: Condition {
            quantifier: Quantifier::Exists,
            prop: Prop::Cmp(CmpOp::Eq, Term::Loc(0), Term::Const(Value::Int(0))),
        },
        observed: Vec::new(),
    }
}

/// Normalises positions and source text away (for comparing the direct and
/// the parsed IR).
pub fn without_positions(t: &Test) -> Test {
    let mut t = t.clone();
    for th in &mut t.threads {
        for i in &mut th.code {
            i.pos = Default::default();
            i.text.clear();
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::enumerate::{self, Reduce, Space};

    fn space(bound: usize, scoped: bool, rmw_add: bool, remote: bool) -> Space {
        Space {
            bound,
            cpu: scoped,
            gpu: true,
            scoped,
            merge_scopes: false,
            max_threads: bound,
            max_locations: bound,
            max_groups: bound,
            orders: Vec::new(),
            remote,
            rmw_add,
            fragment: None,
            reduce: Reduce::default(),
            dominated: Vec::new(),
        }
    }

    /// The direct IR equals the parsed C text on every program up to 2
    /// events and every 53rd of 3 events, in every flavour of the space.
    #[test]
    fn direct_source_equals_parsed_text() {
        let mut n = 0;
        for (bound, scoped, rmw_add, remote) in [
            (3, true, false, false),
            (2, true, true, false),
            (2, true, false, true),
            (3, false, false, false),
        ] {
            let mut i = 0usize;
            enumerate::for_each(&space(bound, scoped, rmw_add, remote), &mut |p| {
                i += 1;
                if p.events() == 3 && i % 53 != 0 {
                    return;
                }
                let text = p.to_c("t", "x=0");
                let parsed = crate::litmus::parse_str("t.litmus", &text).unwrap();
                let direct = source_test(p, "t");
                assert_eq!(
                    without_positions(&parsed),
                    without_positions(&direct),
                    "{text}"
                );
                n += 1;
            });
        }
        assert!(n > 1000, "{n}");
    }
}
