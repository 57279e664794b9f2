//! The C / OpenCL printer: a parsed C or OpenCL test back as herd-style C
//! that litmix's C front end lowers to the same IR.
//!
//! A C thread's IR is lowered code: temporaries (`%t0`), branches to
//! generated labels (`%L0`), a compare-exchange spread over eight
//! instructions. The printer rebuilds statements from it:
//!
//! - each access, RMW, fence and barrier becomes the call (or `*x`) that
//!   lowers to it, written from its kind and tags; a compare-exchange's
//!   lowered sequence becomes the call again;
//! - branches and labels become `if`, `if ... else`, `while` and
//!   `do ... while` where the jumps nest (each label is the target of one
//!   run of branches or one jump, inside a region that no other jump enters
//!   or leaves), and `if (c) goto L;` / `L: ;` elsewhere;
//! - temporaries get names that no register, parameter or location of the
//!   test uses; labels are renamed `L0`, `L1`, ... in order.
//!
//! So a reparse gives the same IR up to positions, instruction texts and a
//! renaming of the registers the test does not name and of labels
//! (`tests/print_round_trip.rs`). Each printed instruction's tags are
//! recomputed from the printed form and compared with the instruction's
//! own: a tag set C cannot write is an error, never a silently different
//! test.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

mod idioms;
mod structure;

use super::print::{tail, value};
use crate::ir::text::cmp_text;
use crate::ir::{
    Address, BarrierKind, BinOp, CmpOp, Instr, InstrKind, LocId, Operand, RmwOp, Test, Thread,
    Value,
};
use structure::{Item, Structurer, write_nodes};

/// `test` (a C or OpenCL test) as litmus text, or why it cannot be printed.
pub(super) fn print_c(test: &Test) -> Result<String, String> {
    let opencl = !test.arch.eq_ignore_ascii_case("C");
    let facts = Facts::of(test)?;
    let mut s = String::new();
    let _ = writeln!(s, "{} {}", test.arch, test.name);
    s.push_str(&init_block(test, &facts));
    for (t, th) in test.threads.iter().enumerate() {
        if th.id != t {
            return Err(format!("thread {t} is numbered P{}", th.id));
        }
        let mut p = ThreadPrinter::new(test, th, &facts, opencl)?;
        s.push_str(&p.print().map_err(|e| format!("P{t}: {e}"))?);
    }
    s.push_str(&tail(test)?);
    Ok(s)
}

/// What the tags say about each location: atomic (an access without
/// `NAL`), local (an access tagged `LOCAL`), and the arrays the init block
/// declares (`a`, `a[1]`, ... `a[N-1]`).
struct Facts {
    atomic: HashSet<LocId>,
    local: HashSet<LocId>,
    /// Element → (the array's first element, index).
    element: HashMap<LocId, (LocId, usize)>,
    /// First element → length, for arrays of two elements or more.
    arrays: HashMap<LocId, usize>,
}

impl Facts {
    fn of(test: &Test) -> Result<Facts, String> {
        let mut f = Facts {
            atomic: HashSet::new(),
            local: HashSet::new(),
            element: HashMap::new(),
            arrays: HashMap::new(),
        };
        for (id, l) in test.locations.iter().enumerate() {
            let Some((base, k)) = l.name.strip_suffix(']').and_then(|n| n.split_once('[')) else {
                continue;
            };
            let Ok(k) = k.parse::<usize>() else { continue };
            match test.location(base) {
                Some(b) if k > 0 && id == b + k => {
                    f.element.insert(id, (b, k));
                    let n = f.arrays.entry(b).or_insert(1);
                    *n = (*n).max(k + 1);
                }
                _ => return Err(format!("location '{}' is not an array element", l.name)),
            }
        }
        for &b in f.arrays.keys() {
            f.element.insert(b, (b, 0));
        }
        // Every other location is declared by its name, which C must read
        // as one identifier.
        for (id, l) in test.locations.iter().enumerate() {
            let mut cs = l.name.chars();
            let ident = cs
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && cs.all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ident && !f.element.contains_key(&id) {
                return Err(format!(
                    "location '{}' is not a C identifier: the printed test would not read back",
                    l.name
                ));
            }
        }
        for th in &test.threads {
            for i in &th.code {
                let Some(addr) = i.kind.address() else {
                    continue;
                };
                // Through a register: an array element picked by a ladder
                // of `Mov r, &a[k]`.
                let l = match addr {
                    Address::Loc(l) => *l,
                    Address::Reg(r) => match th.code.iter().find_map(|j| match &j.kind {
                        InstrKind::Mov {
                            dst,
                            src: Operand::Imm(Value::Addr(e)),
                        } if dst == r => Some(*e),
                        _ => None,
                    }) {
                        Some(e) => e,
                        None => {
                            return Err(format!(
                                "P{}: '{}' accesses memory through a register that holds no address",
                                th.id, i.text
                            ));
                        }
                    },
                };
                let l = f.base(l);
                if !has(i, "NAL") {
                    f.atomic.insert(l);
                }
                if has(i, "LOCAL") {
                    f.local.insert(l);
                }
            }
        }
        Ok(f)
    }

    /// The array `l` belongs to (its first element), or `l`.
    fn base(&self, l: LocId) -> LocId {
        self.element.get(&l).map_or(l, |&(b, _)| b)
    }
}

fn has(i: &Instr, tag: &str) -> bool {
    i.tags.iter().any(|t| t == tag)
}

/// The init block: locations in [`Test::locations`] order (so that a
/// reparse numbers them alike), arrays as one declaration, then the
/// registers that are not parameters.
fn init_block(test: &Test, facts: &Facts) -> String {
    let mut s = String::from("{ ");
    for (id, l) in test.locations.iter().enumerate() {
        if let Some(&n) = facts.arrays.get(&id) {
            let ty = if facts.atomic.contains(&id) {
                "atomic_int"
            } else {
                "int"
            };
            let vals: Vec<String> = (0..n)
                .map(|k| value(test, test.locations[id + k].init))
                .collect();
            let _ = write!(s, "{ty} {}[{n}] = {{{}}}; ", l.name, vals.join(", "));
        } else if !facts.element.contains_key(&id) {
            let _ = write!(s, "{}={}; ", l.name, value(test, l.init));
        }
    }
    for th in &test.threads {
        for (r, v) in &th.reg_init {
            // A register starts at 0 without one.
            if !is_param(test, r, *v) && *v != Value::Int(0) {
                let _ = write!(s, "P{}:{r}={}; ", th.id, value(test, *v));
            }
        }
    }
    s.push_str("}\n");
    s
}

/// Whether a register initialisation is a thread parameter: the register
/// named like a location and holding its address.
fn is_param(test: &Test, r: &str, v: Value) -> bool {
    matches!(v, Value::Addr(l) if test.locations[l].name == r)
}

struct ThreadPrinter<'t> {
    test: &'t Test,
    th: &'t Thread,
    facts: &'t Facts,
    opencl: bool,
    /// The thread's parameters: location → name.
    params: HashMap<LocId, String>,
    /// Printed names of registers, temporaries renamed.
    names: HashMap<String, String>,
    /// Names a renamed temporary must not take: locations and registers.
    taken: HashSet<String>,
    /// Registers to declare, in first-use order.
    declared: Vec<String>,
    /// How many jumps (branches and gotos) target each label.
    refs: HashMap<String, usize>,
    /// Address registers computed by an array-index ladder: the array
    /// (its first element) and the printed index.
    ladders: HashMap<String, (LocId, String)>,
    /// Temporaries printed as their expression inside the one
    /// instruction that reads them.
    inlined: HashMap<String, String>,
    /// How often each register is mentioned in the thread's code.
    mentions: HashMap<String, usize>,
}

impl<'t> ThreadPrinter<'t> {
    fn new(test: &'t Test, th: &'t Thread, facts: &'t Facts, opencl: bool) -> Result<Self, String> {
        let mut params = HashMap::new();
        let mut taken: HashSet<String> = test.locations.iter().map(|l| l.name.clone()).collect();
        for (r, v) in &th.reg_init {
            if let (true, Value::Addr(l)) = (is_param(test, r, *v), v) {
                params.insert(*l, r.clone());
            }
            taken.insert(r.clone());
        }
        let mut refs = HashMap::new();
        let mut mentions = HashMap::new();
        for i in &th.code {
            for r in i.kind.registers() {
                *mentions.entry(r.clone()).or_insert(0) += 1;
                if !r.starts_with('%') {
                    taken.insert(r.clone());
                }
            }
            if let InstrKind::Branch { target, .. } | InstrKind::Goto { target } = &i.kind {
                *refs.entry(target.clone()).or_insert(0) += 1;
            }
        }
        Ok(ThreadPrinter {
            test,
            th,
            facts,
            opencl,
            params,
            names: HashMap::new(),
            taken,
            declared: Vec::new(),
            refs,
            ladders: HashMap::new(),
            inlined: HashMap::new(),
            mentions,
        })
    }

    fn print(&mut self) -> Result<String, String> {
        let items = self.items()?;
        let nodes = Structurer::new(&items).nodes(0, items.len());
        let mut body = String::new();
        let mut labels = HashMap::new();
        write_nodes(&nodes, 1, &mut labels, &mut body);
        let mut s = format!(
            "{}{} ({}) {{\n",
            self.header_name(),
            self.placement()?,
            self.param_list()
        );
        // One declaration a line: herd's C parser takes no lists.
        for r in &self.declared {
            let _ = writeln!(s, "  int {r};");
        }
        s.push_str(&body);
        s.push_str("}\n");
        Ok(s)
    }

    fn header_name(&self) -> String {
        format!("P{}", self.th.id)
    }

    /// `@wg W, dev D` where the placement is not the front end's default
    /// (`dev 0`, a work-group per thread), `@dev D` for a thread alone in
    /// its work-group, `@cpu N`.
    fn placement(&self) -> Result<String, String> {
        let id = self.th.id;
        let levels: Vec<(&str, u32)> = self
            .th
            .placement
            .iter()
            .map(|l| (l.level.as_str(), l.id))
            .collect();
        Ok(match levels.as_slice() {
            [("dev", 0), ("wg", w)] if *w as usize == id => String::new(),
            [("dev", d), ("wg", w)] if u32::MAX.checked_sub(id as u32) == Some(*w) => {
                format!("@dev {d}")
            }
            [("dev", d), ("wg", w)] => format!("@wg {w}, dev {d}"),
            [("cpu", n)] => format!("@cpu {n}"),
            _ => return Err(format!("placement {:?} has no C header", self.th.placement)),
        })
    }

    fn param_list(&self) -> String {
        let mut out = Vec::new();
        for (r, v) in &self.th.reg_init {
            let Value::Addr(l) = *v else { continue };
            if !is_param(self.test, r, *v) {
                continue;
            }
            let mut words = Vec::new();
            if self.facts.local.contains(&l) {
                words.push("local");
            } else if self.opencl {
                words.push("global");
            }
            if self.volatile(l) {
                words.push("volatile");
            }
            words.push(if self.facts.atomic.contains(&l) {
                "atomic_int*"
            } else {
                "int*"
            });
            out.push(format!("{} {r}", words.join(" ")));
        }
        out.join(", ")
    }

    /// Whether the thread's plain accesses through parameter `l` are
    /// volatile (`VOL`); the array-index ladders are known once the code
    /// is read.
    fn volatile(&self, l: LocId) -> bool {
        self.th
            .code
            .iter()
            .any(|i| has(i, "VOL") && i.kind.address().and_then(|a| self.base_of(a)) == Some(l))
    }

    // ---- registers and operands -------------------------------------------

    /// The printed name of register `r` (declared on first use).
    fn reg(&mut self, r: &str) -> String {
        if let Some(n) = self.names.get(r) {
            return n.clone();
        }
        let n = if let Some(t) = r.strip_prefix('%') {
            let mut n = t.to_string();
            while self.taken.contains(&n) {
                n.push('_');
            }
            self.taken.insert(n.clone());
            n
        } else {
            r.to_string()
        };
        self.names.insert(r.to_string(), n.clone());
        if !self.params.values().any(|p| p == r) {
            self.declared.push(n.clone());
        }
        n
    }

    fn operand(&mut self, o: &Operand) -> Result<String, String> {
        Ok(match o {
            Operand::Reg(r) => match self.inlined.remove(r) {
                Some(e) => e,
                None => self.reg(r),
            },
            Operand::Imm(Value::Int(v)) if *v >= 0 => v.to_string(),
            Operand::Imm(Value::Int(v)) => match v.checked_neg() {
                Some(p) => format!("-{p}"),
                None => return Err(format!("the constant {v} has no C literal")),
            },
            Operand::Imm(Value::Addr(l)) => match self.params.get(l) {
                Some(p) => p.clone(),
                None => {
                    return Err(format!(
                        "the address of '{}' is not a parameter of the thread",
                        self.test.locations[*l].name
                    ));
                }
            },
        })
    }

    /// The pointer expression for `a`: the parameter `x`, or `a + k` for
    /// an array element.
    fn pointer(&self, a: &Address) -> Result<String, String> {
        let (base, k) = match a {
            Address::Loc(l) => self.facts.element.get(l).copied().unwrap_or((*l, 0)),
            Address::Reg(r) => match self.ladders.get(r) {
                Some((b, _)) => (*b, 0),
                None => {
                    return Err(format!(
                        "an access through '{r}', which no array index computes"
                    ));
                }
            },
        };
        let Some(p) = self.params.get(&base) else {
            return Err(format!(
                "'{}' is accessed but is not a parameter of the thread",
                self.test.locations[base].name
            ));
        };
        Ok(match (a, k) {
            (Address::Reg(r), _) => format!("{p} + {}", self.ladders[r].1),
            (_, 0) => p.clone(),
            _ => format!("{p} + {k}"),
        })
    }

    fn deref(&self, a: &Address) -> Result<String, String> {
        let p = self.pointer(a)?;
        Ok(if p.contains(' ') {
            format!("*({p})")
        } else {
            format!("*{p}")
        })
    }

    // ---- instructions -------------------------------------------------------

    /// The location (an array's first element for its elements) that
    /// access address `a` names; `None` for a register no array index
    /// computes.
    fn base_of(&self, a: &Address) -> Option<LocId> {
        match a {
            Address::Loc(l) => Some(self.facts.base(*l)),
            Address::Reg(r) => self.ladders.get(r).map(|(b, _)| *b),
        }
    }

    /// The tags the front end gives an access of `a` whose own tags are
    /// `own`: `C`, `own`, the region, `NAL` on a non-atomic location.
    fn access_tags(&self, a: &Address, own: &[String]) -> Vec<String> {
        let mut t = vec!["C".to_string()];
        t.extend(own.iter().cloned());
        if let Some(b) = self.base_of(a) {
            let region = if self.facts.local.contains(&b) {
                "LOCAL"
            } else {
                "GLOBAL"
            };
            t.push(region.into());
            if !self.facts.atomic.contains(&b) {
                t.push("NAL".into());
            }
        }
        t
    }

    /// Checks `i`'s tags as a plain access of `a` (`*x`): `NA`, and `VOL`
    /// when it is volatile.
    fn check_plain(&self, i: &Instr, a: &Address) -> Result<(), String> {
        let mut own = vec!["NA".to_string()];
        if has(i, "VOL") {
            own.push("VOL".into());
        }
        self.check_tags(i, self.access_tags(a, &own))
    }

    /// Checks `i`'s tags as an instruction without memory access or order
    /// (a register move, an operation, a jump, a label): `C` alone.
    fn check_control(&self, i: &Instr) -> Result<(), String> {
        self.check_tags(i, vec!["C".to_string()])
    }

    fn default_scope(&self) -> &'static str {
        if self.opencl { "DEV" } else { "SYS" }
    }

    /// The memory order, scope and remote flag of an atomic instruction
    /// from its tags `[C, ORDER, SCOPE, REMOTE?, ...]`, by their C names.
    fn order_scope(&self, i: &Instr) -> Result<(&'static str, &'static str, bool), String> {
        let order = i.tags.get(1).and_then(|t| order_name(t));
        let scope = i.tags.get(2).and_then(|t| scope_name(t));
        let (Some(order), Some(scope)) = (order, scope) else {
            return Err(format!("tags {:?} name no memory order and scope", i.tags));
        };
        Ok((order, scope, i.tags.get(3).is_some_and(|t| t == "REMOTE")))
    }

    /// Checks `i`'s tags as an atomic access of `a` and returns the
    /// arguments after its operands: `, memory_order_X[, memory_order_F]
    /// [, memory_scope_Y[, remote]]`, the scope left out when it is the
    /// default. With `failure`, a compare-exchange's failure order F
    /// follows: the IR keeps only the success order (docs/decisions.md), so
    /// F is the strongest C allows below it.
    fn atomic_args(&self, i: &Instr, a: &Address, failure: bool) -> Result<String, String> {
        let (order, scope, remote) = self.order_scope(i)?;
        let scope_tag = &i.tags[2];
        let mut own = vec![i.tags[1].clone(), scope_tag.clone()];
        if remote {
            own.push("REMOTE".into());
        }
        self.check_tags(i, self.access_tags(a, &own))?;
        let mut s = format!(", memory_order_{order}");
        if failure {
            let f = match order {
                "release" => "relaxed",
                "acq_rel" => "acquire",
                o => o,
            };
            let _ = write!(s, ", memory_order_{f}");
        }
        if remote || scope_tag != self.default_scope() {
            let _ = write!(s, ", memory_scope_{scope}");
        }
        if remote {
            s.push_str(", remote");
        }
        Ok(s)
    }

    fn check_tags(&self, i: &Instr, want: Vec<String>) -> Result<(), String> {
        if i.tags != want {
            return Err(format!(
                "'{}': tags {:?} cannot be written in C (the printed form gives {:?})",
                i.text, i.tags, want
            ));
        }
        Ok(())
    }

    /// The expression a value-producing instruction (load, RMW, operation)
    /// computes, with the register it writes: `*x`,
    /// `atomic_fetch_add_explicit(x, 1, ...)`, `(a + b)`. `None` for other
    /// instructions.
    fn value_expr(&mut self, i: &Instr) -> Result<Option<(String, String)>, String> {
        Ok(Some(match &i.kind {
            InstrKind::Load { dst, addr } => {
                let text = if has(i, "NA") {
                    self.check_plain(i, addr)?;
                    self.deref(addr)?
                } else {
                    let args = self.atomic_args(i, addr, false)?;
                    format!("atomic_load_explicit({}{args})", self.pointer(addr)?)
                };
                (dst.clone(), text)
            }
            InstrKind::Rmw {
                dst: Some(dst),
                addr,
                op,
            } => {
                let (name, v) = match op {
                    RmwOp::Exch(v) => ("atomic_exchange", v),
                    RmwOp::Bin(b, v) => match b {
                        BinOp::Add => ("atomic_fetch_add", v),
                        BinOp::Sub => ("atomic_fetch_sub", v),
                        BinOp::And => ("atomic_fetch_and", v),
                        BinOp::Or => ("atomic_fetch_or", v),
                        BinOp::Xor => ("atomic_fetch_xor", v),
                        BinOp::Min => ("atomic_fetch_min", v),
                        BinOp::Max => ("atomic_fetch_max", v),
                        BinOp::Mul => return Err("a multiplying RMW has no C call".into()),
                    },
                    _ => return Err(format!("the RMW '{}' has no C call of its own", i.text)),
                };
                let v = self.operand(v)?;
                let args = self.atomic_args(i, addr, false)?;
                let call = format!("{name}_explicit({}, {v}{args})", self.pointer(addr)?);
                (dst.clone(), call)
            }
            InstrKind::Op { dst, op, a, b } => {
                let sym = match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    BinOp::Mul => "*",
                    BinOp::And => "&",
                    BinOp::Or => "|",
                    BinOp::Xor => "^",
                    BinOp::Min | BinOp::Max => {
                        return Err(format!("'{}' has no C operator", op.name()));
                    }
                };
                if matches!((a, b), (Operand::Imm(_), Operand::Imm(_))) {
                    return Err("an operation on two constants folds away in C".into());
                }
                self.check_control(i)?;
                let (a, b) = (self.operand(a)?, self.operand(b)?);
                (dst.clone(), format!("{a} {sym} {b}"))
            }
            _ => return Ok(None),
        }))
    }

    /// One instruction as a C statement (without control flow).
    fn line(&mut self, i: &Instr) -> Result<String, String> {
        if let Some((dst, text)) = self.value_expr(i)? {
            // A call whose result nothing reads is a statement of its own.
            if matches!(i.kind, InstrKind::Rmw { .. }) && self.temp_unused(&dst) {
                return Ok(format!("{text};"));
            }
            return Ok(format!("{} = {text};", self.reg(&dst)));
        }
        Ok(match &i.kind {
            InstrKind::Store { addr, src } => {
                let v = self.operand(src)?;
                if has(i, "NA") {
                    self.check_plain(i, addr)?;
                    format!("{} = {v};", self.deref(addr)?)
                } else {
                    let args = self.atomic_args(i, addr, false)?;
                    format!("atomic_store_explicit({}, {v}{args});", self.pointer(addr)?)
                }
            }
            InstrKind::Rmw { dst: None, .. } => {
                return Err(format!(
                    "the RMW '{}' returns nothing, as no C call does",
                    i.text
                ));
            }
            InstrKind::Fence => {
                let (order, scope, _) = self.order_scope(i)?;
                let regions = &i.tags[3..];
                let flags = fence_flags(regions)?;
                if flags.is_empty() {
                    return Err("a fence with no memory region".into());
                }
                if regions == ["GLOBAL", "LOCAL"] {
                    if i.tags[2] == self.default_scope() {
                        format!("atomic_thread_fence(memory_order_{order});")
                    } else {
                        format!("atomic_thread_fence(memory_order_{order}, memory_scope_{scope});")
                    }
                } else {
                    format!(
                        "atomic_work_item_fence({}, memory_order_{order}, memory_scope_{scope});",
                        flags.join(" | ")
                    )
                }
            }
            InstrKind::Barrier {
                kind: BarrierKind::Sync,
                id: Operand::Imm(Value::Int(0)),
                count: None,
                executors: false,
            } if i.tags.get(1).is_some_and(|t| t == "WG") && i.tags.len() > 2 => {
                format!("barrier({});", fence_flags(&i.tags[2..])?.join(" | "))
            }
            InstrKind::Barrier { .. } => {
                return Err(format!("the barrier '{}' has no C call", i.text));
            }
            InstrKind::Mov { dst, src } => {
                if *src == Operand::Reg(dst.clone()) {
                    return Err(format!("'{dst} = {dst}' lowers to nothing in C"));
                }
                self.check_control(i)?;
                let v = self.operand(src)?;
                format!("{} = {v};", self.reg(dst))
            }
            InstrKind::Load { .. }
            | InstrKind::Rmw { .. }
            | InstrKind::Op { .. }
            | InstrKind::Branch { .. }
            | InstrKind::Goto { .. }
            | InstrKind::Label(_) => {
                unreachable!("values above, control flow structured apart")
            }
        })
    }

    /// A comparison `a op b` (herd's condition syntax, but `==`).
    fn comparison(cmp: CmpOp, a: &str, b: &str) -> String {
        let sym = match cmp {
            CmpOp::Eq => "==",
            c => cmp_text(c),
        };
        format!("{a} {sym} {b}")
    }

    /// The thread's code as lines and control flow, compare-exchanges
    /// folded back into their call.
    fn items(&mut self) -> Result<Vec<Item>, String> {
        let code = &self.th.code;
        let mut out = Vec::new();
        let mut k = 0;
        while k < code.len() {
            let folded = self.inline_temporaries(k)?;
            if folded > 0 {
                k += folded;
                continue;
            }
            if let Some(len) = self.index_ladder(k)? {
                k += len;
                continue;
            }
            if let Some((len, line)) = self.compare_exchange(k)? {
                out.push(Item::Line(line));
                k += len;
                continue;
            }
            let i = &code[k];
            let item = match &i.kind {
                InstrKind::Branch { cmp, a, b, target } => {
                    let (a, b) = (self.operand(a)?, self.operand(b)?);
                    Item::Branch {
                        jump: Self::comparison(*cmp, &a, &b),
                        stay: Self::comparison(cmp.negate(), &a, &b),
                        target: target.clone(),
                    }
                }
                InstrKind::Goto { target } => Item::Goto(target.clone()),
                InstrKind::Label(l) => Item::Label(l.clone()),
                _ => Item::Line(self.line(i)?),
            };
            if let Item::Branch { .. } | Item::Goto(_) | Item::Label(_) = item {
                self.check_control(i)?;
            }
            out.push(item);
            k += 1;
        }
        Ok(out)
    }
}

/// The C name of an order tag.
fn order_name(tag: &str) -> Option<&'static str> {
    Some(match tag {
        "RLX" => "relaxed",
        "ACQ" => "acquire",
        "REL" => "release",
        "ACQ_REL" => "acq_rel",
        "SC" => "seq_cst",
        _ => return None,
    })
}

/// The OpenCL name of a scope tag.
fn scope_name(tag: &str) -> Option<&'static str> {
    Some(match tag {
        "WI" => "work_item",
        "WG" => "work_group",
        "DEV" => "device",
        "SYS" => "all_svm_devices",
        _ => return None,
    })
}

/// OpenCL fence flags for region tags: `GLOBAL` → `CLK_GLOBAL_MEM_FENCE`,
/// `LOCAL` → `CLK_LOCAL_MEM_FENCE`.
fn fence_flags(regions: &[String]) -> Result<Vec<&'static str>, String> {
    regions
        .iter()
        .map(|r| match r.as_str() {
            "GLOBAL" => Ok("CLK_GLOBAL_MEM_FENCE"),
            "LOCAL" => Ok("CLK_LOCAL_MEM_FENCE"),
            other => Err(format!("region tag {other} has no C spelling")),
        })
        .collect()
}
