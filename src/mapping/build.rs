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

use super::compile::Compiled;
use super::enumerate::{Op, OpKind, Place, Program};
use super::format::Mapping;
use crate::diag::Diagnostic;
use crate::ir::{
    Address, Arch, BinOp, CmpOp, Condition, Instr, InstrKind, Location, Operand, Prop, Quantifier,
    RmwOp, ScopeLevel, Term, Test, Thread, Value,
};
use std::collections::HashMap;
use std::sync::Mutex;

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

/// Key of an operation's target template: (kind, order, scope, remote,
/// fetch-and-add RMWs, on a CPU thread).
type OpKey = (OpKind, u8, u8, bool, bool, bool);

/// One operation's target instructions for location 0, source register
/// `r0` and written value [`VALUE_A`], and the register names other than
/// `r0`'s target that they mention (literals of the rule).
#[derive(Clone)]
struct OpTemplate {
    code: Vec<Instr>,
    reg0: String,
    literals: Vec<String>,
}

/// A placement pattern's target threads (without code) and test header.
#[derive(Clone)]
struct PlaceTemplate {
    arch: String,
    threads: Vec<Thread>,
}

/// Written values of the two template programs (distinct from every value
/// an enumerated program writes and from the constants rules use).
const VALUE_A: i64 = 7777;
const VALUE_B: i64 = 7778;

/// Compiles enumerated programs with a mapping straight to target IR: each
/// distinct operation is compiled once through the text path (as the only
/// operation of a program, and again after another operation on another
/// location and register, to check that location, register and value are
/// all the template depends on), then its instructions are reused with the
/// program's location, register and value. Anything the check does not
/// confirm falls back to [`super::compile::compile`].
pub struct Compiler<'m> {
    m: &'m Mapping,
    /// Whether templates may be used: not for a machine target (the RSP
    /// cache machine decodes each instruction's text, which templates
    /// leave stale), whose programs always take the text path.
    direct: bool,
    ops: Mutex<HashMap<OpKey, Option<OpTemplate>>>,
    places: Mutex<HashMap<Vec<Place>, Option<PlaceTemplate>>>,
}

/// The target register name of the `k`-th register of a thread of class
/// `cls` (as `compile` hands them out), if the mapping names one.
fn reg_name(m: &Mapping, cls: &str, k: usize) -> Option<String> {
    match m.register_names(cls) {
        [t] if t.contains("{n}") => Some(t.replace("{n}", &k.to_string())),
        list => list.get(k).cloned(),
    }
}

fn class_of(place: Place) -> &'static str {
    if place == Place::Cpu { "cpu" } else { "gpu" }
}

/// Registers an instruction mentions.
fn registers(i: &Instr) -> Vec<&str> {
    let mut out = Vec::new();
    match &i.kind {
        InstrKind::Load { dst, addr } => {
            out.push(dst.as_str());
            if let Address::Reg(r) = addr {
                out.push(r.as_str());
            }
        }
        InstrKind::Store { addr, src } => {
            if let Address::Reg(r) = addr {
                out.push(r.as_str());
            }
            if let Operand::Reg(r) = src {
                out.push(r.as_str());
            }
        }
        InstrKind::Rmw { dst, addr, op: rop } => {
            if let Some(d) = dst {
                out.push(d.as_str());
            }
            if let Address::Reg(r) = addr {
                out.push(r.as_str());
            }
            let ops: Vec<&Operand> = match rop {
                RmwOp::Bin(_, v) | RmwOp::Exch(v) | RmwOp::Inc(v) | RmwOp::Dec(v) => vec![v],
                RmwOp::Cas { expected, new } => vec![expected, new],
            };
            for o in ops {
                if let Operand::Reg(r) = o {
                    out.push(r.as_str());
                }
            }
        }
        InstrKind::Mov { dst, src } => {
            out.push(dst.as_str());
            if let Operand::Reg(r) = src {
                out.push(r.as_str());
            }
        }
        InstrKind::Op { dst, a, b, .. } => {
            out.push(dst.as_str());
            for o in [a, b] {
                if let Operand::Reg(r) = o {
                    out.push(r.as_str());
                }
            }
        }
        InstrKind::Branch { a, b, .. } => {
            for o in [a, b] {
                if let Operand::Reg(r) = o {
                    out.push(r.as_str());
                }
            }
        }
        InstrKind::Fence
        | InstrKind::Barrier { .. }
        | InstrKind::Goto { .. }
        | InstrKind::Label(_) => {}
    }
    out
}

/// `code` with location 0 as `loc`, register `reg0` as `reg` and the value
/// `from` as `to`.
fn substitute(code: &[Instr], loc: usize, reg0: &str, reg: &str, from: i64, to: i64) -> Vec<Instr> {
    let r = |x: &mut String| {
        if x == reg0 {
            *x = reg.to_string();
        }
    };
    let o = |x: &mut Operand| match x {
        Operand::Reg(n) => r(n),
        Operand::Imm(Value::Int(v)) if *v == from => *v = to,
        Operand::Imm(_) => {}
    };
    let a = |x: &mut Address| match x {
        Address::Loc(l) if *l == 0 => *l = loc,
        Address::Loc(_) => {}
        Address::Reg(n) => r(n),
    };
    code.iter()
        .map(|i| {
            let mut i = i.clone();
            i.pos = Default::default();
            i.text.clear();
            match &mut i.kind {
                InstrKind::Load { dst, addr } => {
                    r(dst);
                    a(addr);
                }
                InstrKind::Store { addr, src } => {
                    a(addr);
                    o(src);
                }
                InstrKind::Rmw { dst, addr, op } => {
                    if let Some(d) = dst {
                        r(d);
                    }
                    a(addr);
                    match op {
                        RmwOp::Bin(_, v) | RmwOp::Exch(v) | RmwOp::Inc(v) | RmwOp::Dec(v) => o(v),
                        RmwOp::Cas { expected, new } => {
                            o(expected);
                            o(new);
                        }
                    }
                }
                InstrKind::Mov { dst, src } => {
                    r(dst);
                    o(src);
                }
                InstrKind::Op {
                    dst, a: x, b: y, ..
                } => {
                    r(dst);
                    o(x);
                    o(y);
                }
                InstrKind::Branch { a: x, b: y, .. } => {
                    o(x);
                    o(y);
                }
                InstrKind::Barrier { id, count, .. } => {
                    o(id);
                    if let Some(c) = count {
                        o(c);
                    }
                }
                InstrKind::Fence | InstrKind::Goto { .. } | InstrKind::Label(_) => {}
            }
            i
        })
        .collect()
}

/// The terms of a proposition, in order.
fn prop_terms(p: &Prop, out: &mut Vec<Term>) {
    match p {
        Prop::True | Prop::False => {}
        Prop::Cmp(_, a, b) => out.extend([a.clone(), b.clone()]),
        Prop::Not(q) => prop_terms(q, out),
        Prop::And(a, b) | Prop::Or(a, b) => {
            prop_terms(a, out);
            prop_terms(b, out);
        }
    }
}

/// A source test of one thread placed at `place` with `ops` (each given
/// with its destination register and written value), for the templates.
fn template_source(place: Place, nlocs: usize, ops: &[(Op, i64)], rmw_add: bool) -> Test {
    let p = Program {
        threads: vec![super::enumerate::Thread {
            place,
            ops: ops.iter().map(|(o, _)| *o).collect(),
        }],
        rmw_add,
    };
    let mut t = source_test(&p, "template");
    for l in t.locations.len()..nlocs {
        t.locations
            .push(Location::new(super::enumerate::loc_name(l), Value::Int(0)));
    }
    // The written values of the template.
    for (ins, (_, v)) in t.threads[0].code.iter_mut().zip(ops) {
        match &mut ins.kind {
            InstrKind::Store { src, .. } => *src = Operand::Imm(Value::Int(*v)),
            InstrKind::Rmw {
                op: RmwOp::Exch(src),
                ..
            } => *src = Operand::Imm(Value::Int(*v)),
            _ => {}
        }
    }
    t
}

impl<'m> Compiler<'m> {
    /// A compiler for `m`.
    pub fn new(m: &'m Mapping) -> Self {
        Compiler {
            m,
            direct: !crate::driver::is_operational(&m.target),
            ops: Mutex::new(HashMap::new()),
            places: Mutex::new(HashMap::new()),
        }
    }

    /// The compiled target code of one thread's instruction, from the text
    /// path.
    fn text_code(&self, src: &Test) -> Option<Vec<Instr>> {
        let c = super::compile::compile(self.m, src).ok()?;
        c.test.threads.into_iter().next().map(|t| t.code)
    }

    fn make_op(&self, key: OpKey) -> Option<OpTemplate> {
        let (kind, order, scope, remote, rmw_add, cpu) = key;
        let place = if cpu {
            Place::Cpu
        } else {
            Place::Gpu { dev: 0, wg: 0 }
        };
        let cls = class_of(place);
        let op = |loc| Op {
            kind,
            order,
            scope,
            loc,
            remote,
        };
        let a = self.text_code(&template_source(place, 1, &[(op(0), VALUE_A)], rmw_add))?;
        // B: a non-atomic load of x first (register r0), then the operation
        // on y with register r1 and another value.
        let filler = Op {
            kind: OpKind::Load,
            order: 0,
            scope: 0,
            loc: 0,
            remote: false,
        };
        let f = self.text_code(&template_source(place, 2, &[(filler, 0)], rmw_add))?;
        let b = self.text_code(&template_source(
            place,
            2,
            &[(filler, 0), (op(1), VALUE_B)],
            rmw_add,
        ))?;
        let reg0 = reg_name(self.m, cls, 0)?;
        let reg1 = reg_name(self.m, cls, 1)?;
        let b_op = substitute(b.get(f.len()..)?, 0, "", "", 0, 0);
        if substitute(&a, 1, &reg0, &reg1, VALUE_A, VALUE_B) != b_op {
            return None;
        }
        let mut literals: Vec<String> = a
            .iter()
            .flat_map(registers)
            .filter(|r| *r != reg0)
            .map(str::to_string)
            .collect();
        literals.sort();
        literals.dedup();
        Some(OpTemplate {
            code: a,
            reg0,
            literals,
        })
    }

    fn make_places(&self, places: &[Place], rmw_add: bool) -> Option<PlaceTemplate> {
        // One non-atomic load per thread: the headers, arch and thread
        // fields of the target test.
        let p = Program {
            threads: places
                .iter()
                .map(|&place| super::enumerate::Thread {
                    place,
                    ops: vec![Op {
                        kind: OpKind::Load,
                        order: 0,
                        scope: 0,
                        loc: 0,
                        remote: false,
                    }],
                })
                .collect(),
            rmw_add,
        };
        let c = super::compile::compile(self.m, &source_test(&p, "template")).ok()?;
        Some(PlaceTemplate {
            arch: c.test.arch,
            threads: c
                .test
                .threads
                .into_iter()
                .map(|mut t| {
                    t.code.clear();
                    t
                })
                .collect(),
        })
    }

    /// The compilation of `p`, whose source test is `src` (as
    /// [`source_test`] builds it, with any condition and observed terms):
    /// the same test as [`super::compile::compile`] gives (positions and
    /// instruction text aside; `text` is empty), or that function's answer
    /// when a template does not apply.
    pub fn compile(&self, p: &Program, src: &Test) -> Result<Compiled, Diagnostic> {
        match self.direct(p, src) {
            Some(c) => Ok(c),
            None => super::compile::compile(self.m, src),
        }
    }

    fn direct(&self, p: &Program, src: &Test) -> Option<Compiled> {
        if !self.direct {
            return None;
        }
        let places: Vec<Place> = p.threads.iter().map(|t| t.place).collect();
        let pt = {
            let mut cache = self.places.lock().ok()?;
            cache
                .entry(places.clone())
                .or_insert_with(|| self.make_places(&places, p.rmw_add))
                .clone()?
        };
        let mut threads = pt.threads;
        let mut registers = Vec::with_capacity(threads.len());
        let mut writes = vec![0u32; src.locations.len()];
        for (th, (t, target)) in p.threads.iter().zip(threads.iter_mut().enumerate()) {
            let cls = class_of(th.place);
            let mut regs: HashMap<String, String> = HashMap::new();
            let mut literals: Vec<String> = Vec::new();
            for op in &th.ops {
                let key = (
                    op.kind,
                    op.order,
                    op.scope,
                    op.remote,
                    p.rmw_add,
                    th.place == Place::Cpu,
                );
                let tmpl = {
                    let mut cache = self.ops.lock().ok()?;
                    cache
                        .entry(key)
                        .or_insert_with(|| self.make_op(key))
                        .clone()?
                };
                let value = match op.kind {
                    OpKind::Store | OpKind::Rmw => {
                        writes[op.loc as usize] += 1;
                        written(p, writes[op.loc as usize])
                    }
                    _ => VALUE_A,
                };
                let reg = if matches!(op.kind, OpKind::Load | OpKind::Rmw) {
                    let k = regs.len();
                    let name = reg_name(self.m, cls, k)?;
                    regs.insert(format!("r{k}"), name.clone());
                    name
                } else {
                    tmpl.reg0.clone()
                };
                literals.extend(tmpl.literals.iter().cloned());
                target.code.extend(substitute(
                    &tmpl.code,
                    op.loc as usize,
                    &tmpl.reg0,
                    &reg,
                    VALUE_A,
                    value,
                ));
            }
            let _ = t;
            // A rule naming a register literally that the thread also gets
            // handed out: the text path decides.
            if regs.values().any(|r| literals.contains(r)) {
                return None;
            }
            registers.push(regs);
        }
        let term = |t: &Term| -> Option<Term> {
            Some(match t {
                Term::Reg { thread, reg } => Term::Reg {
                    thread: *thread,
                    reg: registers.get(*thread)?.get(reg)?.clone(),
                },
                other => other.clone(),
            })
        };
        fn prop(p: &Prop, term: &dyn Fn(&Term) -> Option<Term>) -> Option<Prop> {
            Some(match p {
                Prop::True => Prop::True,
                Prop::False => Prop::False,
                Prop::Cmp(c, a, b) => Prop::Cmp(*c, term(a)?, term(b)?),
                Prop::Not(q) => Prop::Not(Box::new(prop(q, term)?)),
                Prop::And(a, b) => Prop::And(Box::new(prop(a, term)?), Box::new(prop(b, term)?)),
                Prop::Or(a, b) => Prop::Or(Box::new(prop(a, term)?), Box::new(prop(b, term)?)),
            })
        }
        // The target front end gives each register the `locations` clause
        // or the condition names an initial value (0) when the init block
        // does not.
        let observed: Vec<Term> = src.observed.iter().map(term).collect::<Option<_>>()?;
        let cond = prop(&src.condition.prop, &term)?;
        let mut named: Vec<Term> = observed.clone();
        prop_terms(&cond, &mut named);
        for t in named {
            if let Term::Reg { thread, reg } = t {
                let th = threads.get_mut(thread)?;
                if !th.reg_init.iter().any(|(r, _)| *r == reg) {
                    th.reg_init.push((reg, Value::Int(0)));
                }
            }
        }
        let test = Test {
            arch: pt.arch,
            name: src.name.clone(),
            file: None,
            locations: src.locations.clone(),
            threads,
            condition: Condition {
                quantifier: src.condition.quantifier,
                prop: cond,
            },
            observed,
        };
        Some(Compiled {
            text: String::new(),
            test,
            registers,
        })
    }
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
            max_thread_size: bound,
            orders: Vec::new(),
            remote,
            rmw_add,
            fragment: None,
            reduce: Reduce::default(),
            dominated: Vec::new(),
            slice: None,
        }
    }

    /// The direct compilation equals the text path on every program up to
    /// 2 events and every 29th of 3 events, for every built-in mapping.
    #[test]
    fn direct_compilation_equals_text_path() {
        let mut n = 0;
        for name in crate::mapping::BUILTINS.iter().map(|b| b.name) {
            let m = crate::mapping::load(name).unwrap();
            let mut o = crate::mapping::verify::Options {
                bound: 3,
                shard: (1, 1),
                stop_at_first: false,
                out: None,
                check: Default::default(),
                all_scopes: false,
                max_threads: None,
                max_locations: None,
                max_groups: None,
                max_thread_size: None,
                count_only: false,
                orders: Vec::new(),
                no_reduce: true,
                no_cycle_cut: false,
                no_dominance: false,
            };
            if name.starts_with("opencl") {
                o.bound = 2;
            }
            let c = Compiler::new(&m);
            let mut i = 0usize;
            let mut direct = 0;
            enumerate::for_each(&crate::mapping::verify::space(&m, &o), &mut |p| {
                i += 1;
                if p.events() == 3 && !i.is_multiple_of(29) {
                    return;
                }
                let mut src = source_test(p, "t");
                src.observed = crate::mapping::check::full_observation(&src);
                let text = crate::mapping::compile::compile(&m, &src).unwrap();
                let fast = c.compile(p, &src).unwrap();
                if fast.text.is_empty() {
                    direct += 1;
                }
                assert_eq!(
                    without_positions(&text.test),
                    without_positions(&fast.test),
                    "{name}: {}",
                    p.summary()
                );
                assert_eq!(text.registers, fast.registers, "{name}: {}", p.summary());
                n += 1;
            });
            // The built-in mappings to axiomatic models all take the direct
            // path; those to a machine (RSP) never do.
            if crate::driver::is_operational(&m.target) {
                assert_eq!(direct, 0, "{name}: a machine target compiled directly");
            } else {
                assert!(direct > 0, "{name}: no program compiled directly");
            }
        }
        assert!(n > 1000, "{n}");
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
                if p.events() == 3 && !i.is_multiple_of(53) {
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
