//! The syntax tree of a C thread to IR instructions: expressions into
//! `Mov`/`Op`/loads into fresh registers, conditions into branches to fresh
//! labels, loops into backward jumps, atomics and fences with their order,
//! scope and region tags.

use std::collections::{HashMap, HashSet};

use super::ast::{BinKind, Expr, ExprKind, Stmt, StmtKind};
use crate::diag::Diagnostic;
use crate::ir::{
    Address, BarrierKind, BinOp, CmpOp, Instr, InstrKind, LocId, Operand, Pos, Reg, RmwOp, Value,
};

/// Location facts gathered over the whole test, for tags set afterwards.
#[derive(Default)]
pub(super) struct LocFacts {
    pub(super) atomic: HashSet<LocId>,
    pub(super) local: HashSet<LocId>,
    /// Arrays declared in the init block: first element → all elements.
    pub(super) arrays: HashMap<LocId, Vec<LocId>>,
}

impl LocFacts {
    /// Records that `l` is declared atomic and/or local.
    pub(super) fn record(&mut self, l: LocId, atomic: bool, local: bool) {
        if atomic {
            self.atomic.insert(l);
        }
        if local {
            self.local.insert(l);
        }
    }

    /// The array location `l` belongs to (its first element), or `l`.
    pub(super) fn base(&self, l: LocId) -> LocId {
        self.arrays
            .iter()
            .find(|(_, es)| es.contains(&l))
            .map_or(l, |(b, _)| *b)
    }

    /// Marks `l` (and its whole array) atomic.
    fn set_atomic(&mut self, l: LocId) {
        let b = self.base(l);
        match self.arrays.get(&b) {
            Some(es) => self.atomic.extend(es.iter().copied()),
            None => {
                self.atomic.insert(l);
            }
        }
    }
}

pub(super) struct Gen<'t> {
    pub(super) file: &'t str,
    pub(super) src: &'t str,
    pub(super) params: HashMap<String, (LocId, bool)>,
    pub(super) code: Vec<Instr>,
    pub(super) ntmp: usize,
    pub(super) nlabel: usize,
    /// Scope tag of atomics without an explicit scope (`SYS` for C, `DEV`
    /// for OpenCL).
    pub(super) default_scope: &'static str,
    pub(super) facts: &'t mut LocFacts,
    /// Registers holding a computed array element address → the array.
    pub(super) reg_base: HashMap<Reg, LocId>,
    /// Position and source span of the statement being compiled, and its
    /// text with blanks squashed, made when its first instruction is
    /// emitted (a compound statement's span holds its whole body, and
    /// most of its nested statements emit nothing themselves).
    pub(super) pos: Pos,
    pub(super) span: (usize, usize),
    pub(super) text: Option<String>,
    /// The thread's own labels (`L:`), where each is defined.
    pub(super) user_labels: HashMap<String, Pos>,
    /// Each `goto L` (and `if (c) goto L`) of the thread, for the check
    /// that its label exists.
    pub(super) jumps: Vec<(String, Pos)>,
}

/// A memory order constant → its tag.
fn memory_order(name: &str) -> Option<&'static str> {
    Some(match name {
        "memory_order_relaxed" => "RLX",
        "memory_order_consume" | "memory_order_acquire" => "ACQ",
        "memory_order_release" => "REL",
        "memory_order_acq_rel" => "ACQ_REL",
        "memory_order_seq_cst" => "SC",
        _ => return None,
    })
}

/// A memory scope constant → its tag (OpenCL and CUDA-style names).
fn memory_scope(name: &str) -> Option<&'static str> {
    Some(match name {
        "memory_scope_work_item" | "memory_scope_thread" | "memory_scope_wi" => "WI",
        "memory_scope_work_group"
        | "memory_scope_workgroup"
        | "memory_scope_block"
        | "memory_scope_cta"
        | "memory_scope_wg" => "WG",
        "memory_scope_device" | "memory_scope_gpu" | "memory_scope_dev" => "DEV",
        "memory_scope_all_svm_devices"
        | "memory_scope_all_devices"
        | "memory_scope_system"
        | "memory_scope_sys" => "SYS",
        _ => return None,
    })
}

const ORDER_EXPECTED: &str =
    "a memory order: memory_order_relaxed, _acquire, _release, _acq_rel or _seq_cst";
const SCOPE_EXPECTED: &str = "a memory scope: memory_scope_work_item, _work_group, _device or _all_svm_devices (or CUDA-style _thread, _block, _device, _system)";

impl Gen<'_> {
    pub(super) fn err(&self, pos: Pos, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.file, pos, msg)
    }

    fn tmp(&mut self) -> Reg {
        self.ntmp += 1;
        format!("%t{}", self.ntmp - 1)
    }

    pub(super) fn label(&mut self) -> String {
        self.nlabel += 1;
        format!("%L{}", self.nlabel - 1)
    }

    fn emit(&mut self, kind: InstrKind, tags: Vec<&str>) {
        let (src, (from, to)) = (self.src, self.span);
        let text = self
            .text
            .get_or_insert_with(|| squash(&src[from..to.min(src.len())]))
            .clone();
        let mut all = vec!["C".to_string()];
        all.extend(tags.into_iter().map(str::to_string));
        self.code.push(Instr {
            kind,
            tags: all,
            pos: self.pos,
            text,
        });
    }

    fn emit_label(&mut self, l: &str) {
        self.emit(InstrKind::Label(l.to_string()), vec![]);
    }

    fn set_stmt(&mut self, pos: Pos, span: (usize, usize)) {
        self.pos = pos;
        self.span = span;
        self.text = None;
    }

    pub(super) fn block(&mut self, stmts: &[Stmt]) -> Result<(), Diagnostic> {
        for s in stmts {
            self.stmt(s)?;
        }
        Ok(())
    }

    /// Compiles a thread's body: its statements, then the check that every
    /// `goto` names a label of the thread.
    pub(super) fn body(&mut self, stmts: &[Stmt]) -> Result<(), Diagnostic> {
        self.block(stmts)?;
        for (label, pos) in &self.jumps {
            if !self.user_labels.contains_key(label) {
                return Err(self
                    .err(
                        *pos,
                        format!("'goto {label}': no label '{label}' in this thread"),
                    )
                    .expected("a label defined in the same thread, like 'L: ...'"));
            }
        }
        Ok(())
    }

    /// A jump to the user label `label` (checked once the thread is done).
    fn jump_target(&mut self, label: &str, pos: Pos) -> String {
        self.jumps.push((label.to_string(), pos));
        label.to_string()
    }

    fn check_assignable(&self, name: &str, pos: Pos) -> Result<(), Diagnostic> {
        if self.params.contains_key(name) {
            return Err(self
                .err(
                    pos,
                    format!("unsupported: assignment to the pointer parameter '{name}'"),
                )
                .expected("a local variable"));
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), Diagnostic> {
        self.set_stmt(s.pos, s.span);
        match &s.kind {
            StmtKind::Decl(name, init) => {
                self.check_assignable(name, s.pos)?;
                match init {
                    Some(e) => self.assign(name, e),
                    None => Ok(()),
                }
            }
            StmtKind::Assign(name, e) => {
                self.check_assignable(name, s.pos)?;
                self.assign(name, e)
            }
            StmtKind::Store(lhs, rhs) => {
                let ExprKind::Deref(p) = &lhs.kind else {
                    return Err(self
                        .err(lhs.pos, "unsupported assignment target")
                        .expected("'*p = e' or 'r = e'"));
                };
                let (addr, volatile) = self.pointer(p)?;
                let v = self.value(rhs)?;
                self.set_stmt(s.pos, s.span);
                let tags = self.plain_tags(volatile);
                self.emit(InstrKind::Store { addr, src: v }, tags);
                Ok(())
            }
            StmtKind::Expr(e) => {
                self.expr(e, None)?;
                Ok(())
            }
            StmtKind::Block(b) => self.block(b),
            StmtKind::Goto(label) => {
                let target = self.jump_target(label, s.pos);
                self.emit(InstrKind::Goto { target }, vec![]);
                Ok(())
            }
            StmtKind::Label(label) => {
                if let Some(first) = self.user_labels.get(label) {
                    return Err(self
                        .err(
                            s.pos,
                            format!("label '{label}' is defined twice (first at {first})"),
                        )
                        .expected("distinct labels in a thread"));
                }
                self.user_labels.insert(label.clone(), s.pos);
                self.emit_label(label);
                Ok(())
            }
            StmtKind::If(c, then, els) => {
                // `if (c) goto L;` is one conditional branch.
                if let ([goto], true) = (then.as_slice(), els.is_empty())
                    && let StmtKind::Goto(label) = &goto.kind
                {
                    let target = self.jump_target(label, goto.pos);
                    return self.cond(c, true, &target);
                }
                let l_else = self.label();
                self.cond(c, false, &l_else)?;
                self.block(then)?;
                if els.is_empty() {
                    self.set_stmt(s.pos, s.span);
                    self.emit_label(&l_else);
                } else {
                    let l_end = self.label();
                    self.set_stmt(s.pos, s.span);
                    self.emit(
                        InstrKind::Goto {
                            target: l_end.clone(),
                        },
                        vec![],
                    );
                    self.emit_label(&l_else);
                    self.block(els)?;
                    self.set_stmt(s.pos, s.span);
                    self.emit_label(&l_end);
                }
                Ok(())
            }
            StmtKind::While(c, body) => {
                let (top, end) = (self.label(), self.label());
                self.emit_label(&top);
                self.cond(c, false, &end)?;
                self.block(body)?;
                self.set_stmt(s.pos, s.span);
                self.emit(InstrKind::Goto { target: top }, vec![]);
                self.emit_label(&end);
                Ok(())
            }
            StmtKind::DoWhile(body, c) => {
                let top = self.label();
                self.emit_label(&top);
                self.block(body)?;
                self.set_stmt(s.pos, s.span);
                self.cond(c, true, &top)
            }
            StmtKind::For(init, c, step, body) => {
                self.block(init)?;
                let (top, end) = (self.label(), self.label());
                self.set_stmt(s.pos, s.span);
                self.emit_label(&top);
                if let Some(c) = c {
                    self.cond(c, false, &end)?;
                }
                self.block(body)?;
                self.block(step)?;
                self.set_stmt(s.pos, s.span);
                self.emit(InstrKind::Goto { target: top }, vec![]);
                self.emit_label(&end);
                Ok(())
            }
        }
    }

    fn assign(&mut self, name: &str, e: &Expr) -> Result<(), Diagnostic> {
        match self.expr(e, Some(name))? {
            Some(Operand::Reg(r)) if r == name => Ok(()),
            Some(v) => {
                self.emit(
                    InstrKind::Mov {
                        dst: name.to_string(),
                        src: v,
                    },
                    vec![],
                );
                Ok(())
            }
            None => Err(self
                .err(e.pos, "this call returns no value")
                .expected("an expression with a value")),
        }
    }

    /// The value of `e` as an operand; a void call is an error.
    pub(super) fn value(&mut self, e: &Expr) -> Result<Operand, Diagnostic> {
        match self.expr(e, None)? {
            Some(v) => Ok(v),
            None => Err(self
                .err(e.pos, "this call returns no value")
                .expected("an expression with a value")),
        }
    }

    /// Compiles `e`; its value is returned (`None` for a void call). `dst`
    /// is a register the value may be put into directly.
    fn expr(&mut self, e: &Expr, dst: Option<&str>) -> Result<Option<Operand>, Diagnostic> {
        let dest = |g: &mut Self| dst.map(str::to_string).unwrap_or_else(|| g.tmp());
        Ok(Some(match &e.kind {
            ExprKind::Int(v) => Operand::Imm(Value::Int(*v)),
            ExprKind::Var(name) => match self.params.get(name) {
                Some(&(loc, _)) => Operand::Imm(Value::Addr(loc)),
                None => Operand::Reg(name.clone()),
            },
            ExprKind::AddrOf(name) => {
                return Err(self
                    .err(
                        e.pos,
                        format!("unsupported: the address of '{name}' outside a compare-exchange"),
                    )
                    .expected("a pointer parameter, used as 'x' or '*x'"));
            }
            ExprKind::Deref(p) => {
                let (addr, volatile) = self.pointer(p)?;
                let d = dest(self);
                let tags = self.plain_tags(volatile);
                self.emit(
                    InstrKind::Load {
                        dst: d.clone(),
                        addr,
                    },
                    tags,
                );
                Operand::Reg(d)
            }
            ExprKind::Neg(a) => {
                let a = self.value(a)?;
                if let Operand::Imm(Value::Int(v)) = a {
                    Operand::Imm(Value::Int(v.wrapping_neg()))
                } else {
                    let d = dest(self);
                    self.emit(
                        InstrKind::Op {
                            dst: d.clone(),
                            op: BinOp::Sub,
                            a: Operand::Imm(Value::Int(0)),
                            b: a,
                        },
                        vec![],
                    );
                    Operand::Reg(d)
                }
            }
            ExprKind::Bin(BinKind::Arith(op), a, b) => {
                let a = self.value(a)?;
                let b = self.value(b)?;
                if let (Operand::Imm(x), Operand::Imm(y)) = (&a, &b)
                    && let Ok(v) = op.apply(*x, *y)
                {
                    return Ok(Some(Operand::Imm(v)));
                }
                if matches!(a, Operand::Imm(Value::Addr(_)))
                    || matches!(b, Operand::Imm(Value::Addr(_)))
                {
                    return Err(self
                        .err(e.pos, "unsupported pointer arithmetic")
                        .expected("integer arithmetic"));
                }
                let d = dest(self);
                self.emit(
                    InstrKind::Op {
                        dst: d.clone(),
                        op: *op,
                        a,
                        b,
                    },
                    vec![],
                );
                Operand::Reg(d)
            }
            ExprKind::Bin(..) | ExprKind::Not(_) => {
                // A truth value: d = 0; if (e) d = 1.
                let d = dest(self);
                let l = self.label();
                let tmp = self.tmp();
                self.emit(
                    InstrKind::Mov {
                        dst: tmp.clone(),
                        src: Operand::Imm(Value::Int(0)),
                    },
                    vec![],
                );
                self.cond(e, false, &l)?;
                self.emit(
                    InstrKind::Mov {
                        dst: tmp.clone(),
                        src: Operand::Imm(Value::Int(1)),
                    },
                    vec![],
                );
                self.emit_label(&l);
                self.emit(
                    InstrKind::Mov {
                        dst: d.clone(),
                        src: Operand::Reg(tmp),
                    },
                    vec![],
                );
                Operand::Reg(d)
            }
            ExprKind::Call(name, args) => return self.call(e, name, args, dst),
        }))
    }

    /// Jumps to `target` when the truth of `e` equals `when`.
    pub(super) fn cond(&mut self, e: &Expr, when: bool, target: &str) -> Result<(), Diagnostic> {
        match &e.kind {
            ExprKind::Not(a) => self.cond(a, !when, target),
            ExprKind::Bin(BinKind::LAnd, a, b) | ExprKind::Bin(BinKind::LOr, a, b) => {
                let is_and = matches!(e.kind, ExprKind::Bin(BinKind::LAnd, ..));
                if is_and == when {
                    // and/true or or/false: both must agree.
                    let skip = self.label();
                    self.cond(a, !when, &skip)?;
                    self.cond(b, when, target)?;
                    self.emit_label(&skip);
                } else {
                    self.cond(a, when, target)?;
                    self.cond(b, when, target)?;
                }
                Ok(())
            }
            ExprKind::Bin(BinKind::Cmp(c), a, b) => {
                let a = self.value(a)?;
                let b = self.value(b)?;
                let cmp = if when { *c } else { c.negate() };
                self.emit(
                    InstrKind::Branch {
                        cmp,
                        a,
                        b,
                        target: target.to_string(),
                    },
                    vec![],
                );
                Ok(())
            }
            _ => {
                let v = self.value(e)?;
                self.emit(
                    InstrKind::Branch {
                        cmp: if when { CmpOp::Ne } else { CmpOp::Eq },
                        a: v,
                        b: Operand::Imm(Value::Int(0)),
                        target: target.to_string(),
                    },
                    vec![],
                );
                Ok(())
            }
        }
    }

    /// The location a pointer expression designates, and whether it was
    /// declared volatile.
    pub(super) fn pointer(&mut self, p: &Expr) -> Result<(Address, bool), Diagnostic> {
        match &p.kind {
            ExprKind::Var(name) => match self.params.get(name) {
                Some(&(loc, vol)) => Ok((Address::Loc(loc), vol)),
                None => Err(self
                    .err(p.pos, format!("'{name}' is not a pointer parameter"))
                    .expected("a pointer parameter of the thread")),
            },
            ExprKind::Bin(BinKind::Arith(BinOp::Add), a, b) => {
                let is_param =
                    |e: &Expr| matches!(&e.kind, ExprKind::Var(n) if self.params.contains_key(n));
                let (base, idx) = if is_param(a) {
                    (a, b)
                } else if is_param(b) {
                    (b, a)
                } else {
                    return Err(self
                        .err(p.pos, "unsupported pointer expression")
                        .expected("a pointer parameter, or an array parameter plus an index"));
                };
                let ExprKind::Var(name) = &base.kind else {
                    unreachable!("checked above")
                };
                let (loc, vol) = self.params[name];
                let Some(elems) = self.facts.arrays.get(&loc).cloned() else {
                    return Err(self
                        .err(
                            p.pos,
                            format!("unsupported pointer arithmetic: '{name}' is not an array"),
                        )
                        .expected(
                            "an array declared in the init block, like 'int a[2] = {0, 0}'",
                        ));
                };
                let i = self.value(idx)?;
                match i {
                    Operand::Imm(Value::Int(k)) => {
                        match usize::try_from(k).ok().and_then(|k| elems.get(k)) {
                            Some(&e) => Ok((Address::Loc(e), vol)),
                            None => Err(self
                                .err(idx.pos, format!("array index {k} is out of bounds"))
                                .expected(format!("an index below {}", elems.len()))),
                        }
                    }
                    Operand::Imm(Value::Addr(_)) => Err(self
                        .err(idx.pos, "an address used as an array index")
                        .expected("an integer index")),
                    Operand::Reg(_) => {
                        // A ladder of comparisons picks the element; an
                        // index out of bounds leaves an integer in the
                        // address register, which no location matches, so
                        // that path has no execution.
                        let pr = self.tmp();
                        self.emit(
                            InstrKind::Mov {
                                dst: pr.clone(),
                                src: i.clone(),
                            },
                            vec![],
                        );
                        let done = self.label();
                        for (k, e) in elems.iter().enumerate() {
                            let next = self.label();
                            self.emit(
                                InstrKind::Branch {
                                    cmp: CmpOp::Ne,
                                    a: i.clone(),
                                    b: Operand::Imm(Value::Int(k as i64)),
                                    target: next.clone(),
                                },
                                vec![],
                            );
                            self.emit(
                                InstrKind::Mov {
                                    dst: pr.clone(),
                                    src: Operand::Imm(Value::Addr(*e)),
                                },
                                vec![],
                            );
                            self.emit(
                                InstrKind::Goto {
                                    target: done.clone(),
                                },
                                vec![],
                            );
                            self.emit_label(&next);
                        }
                        self.emit_label(&done);
                        self.reg_base.insert(pr.clone(), loc);
                        Ok((Address::Reg(pr), vol))
                    }
                }
            }
            _ => Err(self
                .err(p.pos, "unsupported pointer expression")
                .expected("a pointer parameter of the thread")),
        }
    }

    /// Tags of a plain access: non-atomic, `VOL` added when the pointer
    /// is volatile (volatile gives no inter-thread guarantee in C11 or
    /// OpenCL C: the access stays non-atomic, docs/decisions.md issue 8).
    fn plain_tags(&self, volatile: bool) -> Vec<&'static str> {
        if volatile {
            vec!["NA", "VOL"]
        } else {
            vec!["NA"]
        }
    }

    fn atomic_loc(&mut self, p: &Expr) -> Result<Address, Diagnostic> {
        let (addr, _) = self.pointer(p)?;
        match &addr {
            Address::Loc(l) => self.facts.set_atomic(*l),
            Address::Reg(r) => {
                let b = self.reg_base[r];
                self.facts.set_atomic(b);
            }
        }
        Ok(addr)
    }

    fn ident_arg<'e>(&self, e: &'e Expr, expected: &str) -> Result<&'e str, Diagnostic> {
        match &e.kind {
            ExprKind::Var(n) => Ok(n),
            _ => Err(self.err(e.pos, "unexpected expression").expected(expected)),
        }
    }

    fn order_arg(&self, e: &Expr) -> Result<&'static str, Diagnostic> {
        let n = self.ident_arg(e, ORDER_EXPECTED)?;
        memory_order(n).ok_or_else(|| {
            self.err(e.pos, format!("unknown memory order '{n}'"))
                .expected(ORDER_EXPECTED)
        })
    }

    fn scope_arg(&self, e: &Expr) -> Result<&'static str, Diagnostic> {
        let n = self.ident_arg(e, SCOPE_EXPECTED)?;
        memory_scope(n).ok_or_else(|| {
            self.err(e.pos, format!("unknown memory scope '{n}'"))
                .expected(SCOPE_EXPECTED)
        })
    }

    /// Fence flags `CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE` → region tags.
    fn flags_arg(&self, e: &Expr, out: &mut Vec<&'static str>) -> Result<(), Diagnostic> {
        const EXPECTED: &str =
            "fence flags: CLK_GLOBAL_MEM_FENCE, CLK_LOCAL_MEM_FENCE or both joined by '|'";
        match &e.kind {
            ExprKind::Bin(BinKind::Arith(BinOp::Or), a, b) => {
                self.flags_arg(a, out)?;
                self.flags_arg(b, out)
            }
            ExprKind::Var(n) => {
                let tag = match n.as_str() {
                    "CLK_GLOBAL_MEM_FENCE" => "GLOBAL",
                    "CLK_LOCAL_MEM_FENCE" => "LOCAL",
                    "CLK_IMAGE_MEM_FENCE" => {
                        return Err(self
                            .err(e.pos, "unsupported fence flag CLK_IMAGE_MEM_FENCE")
                            .expected(EXPECTED));
                    }
                    _ => {
                        return Err(self
                            .err(e.pos, format!("unknown fence flag '{n}'"))
                            .expected(EXPECTED));
                    }
                };
                if !out.contains(&tag) {
                    out.push(tag);
                }
                Ok(())
            }
            _ => Err(self.err(e.pos, "unexpected expression").expected(EXPECTED)),
        }
    }

    /// Memory order, scope and remote flag from the trailing arguments of an
    /// `_explicit` call: `args` are those after the operands.
    fn order_scope(
        &self,
        call: &Expr,
        name: &str,
        explicit: bool,
        args: &[Expr],
        orders: usize,
    ) -> Result<(Vec<&'static str>, &'static str, bool), Diagnostic> {
        if !explicit {
            if let Some(a) = args.first() {
                return Err(self
                    .err(a.pos, format!("too many arguments to '{name}'"))
                    .expected(format!("'{name}_explicit' to give a memory order")));
            }
            return Ok((vec!["SC"; orders], self.default_scope, false));
        }
        if args.len() < orders {
            return Err(self
                .err(
                    call.pos,
                    format!("'{name}' takes {orders} memory order argument(s)"),
                )
                .expected(ORDER_EXPECTED));
        }
        let mut os = Vec::new();
        for a in &args[..orders] {
            os.push(self.order_arg(a)?);
        }
        let rest = &args[orders..];
        let mut scope = self.default_scope;
        let mut remote = false;
        if let Some(s) = rest.first() {
            scope = self.scope_arg(s)?;
        }
        if let Some(r) = rest.get(1) {
            match self.ident_arg(r, "'remote' or 'non_remote'")? {
                "remote" => remote = true,
                "non_remote" => {}
                other => {
                    return Err(self
                        .err(r.pos, format!("unexpected argument '{other}'"))
                        .expected("'remote' or 'non_remote' after the memory scope"));
                }
            }
        }
        if let Some(x) = rest.get(2) {
            return Err(self
                .err(x.pos, format!("too many arguments to '{name}'"))
                .expected("at most a memory scope and a remote flag after the memory order"));
        }
        Ok((os, scope, remote))
    }

    fn arity(&self, call: &Expr, name: &str, args: &[Expr], n: usize) -> Result<(), Diagnostic> {
        if args.len() < n {
            return Err(self
                .err(call.pos, format!("'{name}' needs at least {n} argument(s)"))
                .expected(format!("{n} operand(s)")));
        }
        Ok(())
    }

    pub(super) fn call(
        &mut self,
        e: &Expr,
        name: &str,
        args: &[Expr],
        dst: Option<&str>,
    ) -> Result<Option<Operand>, Diagnostic> {
        // The text of the call itself for its instructions.
        let saved = (self.pos, self.span, self.text.clone());
        let (base, explicit) = match name.strip_suffix("_explicit") {
            Some(b) => (b, true),
            None => (name, false),
        };
        let mut result = None;
        let tagset = |ord: &'static str, scope: &'static str, remote: bool| {
            let mut t = vec![ord, scope];
            if remote {
                t.push("REMOTE");
            }
            t
        };
        match base {
            "atomic_load" => {
                self.arity(e, name, args, 1)?;
                let addr = self.atomic_loc(&args[0])?;
                let (os, scope, remote) = self.order_scope(e, name, explicit, &args[1..], 1)?;
                let d = dst.map(str::to_string).unwrap_or_else(|| self.tmp());
                self.set_stmt(e.pos, e.span);
                self.emit(
                    InstrKind::Load {
                        dst: d.clone(),
                        addr,
                    },
                    tagset(os[0], scope, remote),
                );
                result = Some(Operand::Reg(d));
            }
            "atomic_store" => {
                self.arity(e, name, args, 2)?;
                let addr = self.atomic_loc(&args[0])?;
                let v = self.value(&args[1])?;
                let (os, scope, remote) = self.order_scope(e, name, explicit, &args[2..], 1)?;
                self.set_stmt(e.pos, e.span);
                self.emit(
                    InstrKind::Store { addr, src: v },
                    tagset(os[0], scope, remote),
                );
            }
            "atomic_exchange" | "atomic_fetch_add" | "atomic_fetch_sub" | "atomic_fetch_and"
            | "atomic_fetch_or" | "atomic_fetch_xor" | "atomic_fetch_min" | "atomic_fetch_max" => {
                self.arity(e, name, args, 2)?;
                let addr = self.atomic_loc(&args[0])?;
                let v = self.value(&args[1])?;
                let (os, scope, remote) = self.order_scope(e, name, explicit, &args[2..], 1)?;
                let op = match base {
                    "atomic_exchange" => RmwOp::Exch(v),
                    "atomic_fetch_add" => RmwOp::Bin(BinOp::Add, v),
                    "atomic_fetch_sub" => RmwOp::Bin(BinOp::Sub, v),
                    "atomic_fetch_and" => RmwOp::Bin(BinOp::And, v),
                    "atomic_fetch_or" => RmwOp::Bin(BinOp::Or, v),
                    "atomic_fetch_xor" => RmwOp::Bin(BinOp::Xor, v),
                    "atomic_fetch_min" => RmwOp::Bin(BinOp::Min, v),
                    _ => RmwOp::Bin(BinOp::Max, v),
                };
                let d = dst.map(str::to_string).unwrap_or_else(|| self.tmp());
                self.set_stmt(e.pos, e.span);
                self.emit(
                    InstrKind::Rmw {
                        dst: Some(d.clone()),
                        addr,
                        op,
                    },
                    tagset(os[0], scope, remote),
                );
                result = Some(Operand::Reg(d));
            }
            "atomic_compare_exchange_strong" | "atomic_compare_exchange_weak" => {
                self.arity(e, name, args, 3)?;
                let addr = self.atomic_loc(&args[0])?;
                // The expected value lives in a local (`&r`) or a location.
                enum Exp {
                    Reg(String),
                    Loc(Address, bool),
                }
                let exp = match &args[1].kind {
                    ExprKind::AddrOf(r) if !self.params.contains_key(r) => Exp::Reg(r.clone()),
                    _ => {
                        let (a, vol) = self.pointer(&args[1])?;
                        Exp::Loc(a, vol)
                    }
                };
                let desired = self.value(&args[2])?;
                let (os, scope, remote) = self.order_scope(e, name, explicit, &args[3..], 2)?;
                self.set_stmt(e.pos, e.span);
                let exp_val = match &exp {
                    Exp::Reg(r) => Operand::Reg(r.clone()),
                    Exp::Loc(a, vol) => {
                        let t = self.tmp();
                        let tags = self.plain_tags(*vol);
                        self.emit(
                            InstrKind::Load {
                                dst: t.clone(),
                                addr: a.clone(),
                            },
                            tags,
                        );
                        Operand::Reg(t)
                    }
                };
                let old = self.tmp();
                // The failure order only differs on the lone read of a
                // failed CAS; the IR has one tag set per instruction, so the
                // success order is used for both (docs/decisions.md).
                let _ = os[1];
                self.emit(
                    InstrKind::Rmw {
                        dst: Some(old.clone()),
                        addr,
                        op: RmwOp::Cas {
                            expected: exp_val.clone(),
                            new: desired,
                        },
                    },
                    tagset(os[0], scope, remote),
                );
                let d = dst.map(str::to_string).unwrap_or_else(|| self.tmp());
                let (l_ok, l_end) = (self.label(), self.label());
                self.emit(
                    InstrKind::Branch {
                        cmp: CmpOp::Eq,
                        a: Operand::Reg(old.clone()),
                        b: exp_val,
                        target: l_ok.clone(),
                    },
                    vec![],
                );
                match &exp {
                    Exp::Reg(r) => self.emit(
                        InstrKind::Mov {
                            dst: r.clone(),
                            src: Operand::Reg(old),
                        },
                        vec![],
                    ),
                    Exp::Loc(a, vol) => {
                        let tags = self.plain_tags(*vol);
                        self.emit(
                            InstrKind::Store {
                                addr: a.clone(),
                                src: Operand::Reg(old),
                            },
                            tags,
                        )
                    }
                }
                self.emit(
                    InstrKind::Mov {
                        dst: d.clone(),
                        src: Operand::Imm(Value::Int(0)),
                    },
                    vec![],
                );
                self.emit(
                    InstrKind::Goto {
                        target: l_end.clone(),
                    },
                    vec![],
                );
                self.emit_label(&l_ok);
                self.emit(
                    InstrKind::Mov {
                        dst: d.clone(),
                        src: Operand::Imm(Value::Int(1)),
                    },
                    vec![],
                );
                self.emit_label(&l_end);
                result = Some(Operand::Reg(d));
            }
            "atomic_thread_fence" => {
                self.arity(e, name, args, 1)?;
                let o = self.order_arg(&args[0])?;
                let scope = match args.get(1) {
                    Some(s) => self.scope_arg(s)?,
                    None => self.default_scope,
                };
                if let Some(x) = args.get(2) {
                    return Err(self
                        .err(x.pos, format!("too many arguments to '{name}'"))
                        .expected("a memory order and an optional memory scope"));
                }
                self.set_stmt(e.pos, e.span);
                self.emit(InstrKind::Fence, vec![o, scope, "GLOBAL", "LOCAL"]);
            }
            "atomic_work_item_fence" => {
                if args.len() != 3 {
                    return Err(self
                        .err(e.pos, "'atomic_work_item_fence' takes 3 arguments")
                        .expected("flags, a memory order and a memory scope"));
                }
                let mut tags = Vec::new();
                self.flags_arg(&args[0], &mut tags)?;
                let o = self.order_arg(&args[1])?;
                let scope = self.scope_arg(&args[2])?;
                self.set_stmt(e.pos, e.span);
                let mut all = vec![o, scope];
                all.extend(tags);
                self.emit(InstrKind::Fence, all);
            }
            "barrier" | "work_group_barrier" => {
                if args.is_empty() || args.len() > 2 || (base == "barrier" && args.len() != 1) {
                    return Err(self
                        .err(e.pos, format!("wrong number of arguments to '{name}'"))
                        .expected("fence flags, and for work_group_barrier an optional scope"));
                }
                let mut tags = Vec::new();
                self.flags_arg(&args[0], &mut tags)?;
                if let Some(s) = args.get(1) {
                    let sc = self.scope_arg(s)?;
                    if sc != "WG" && sc != "DEV" {
                        return Err(self
                            .err(s.pos, "unsupported barrier scope")
                            .expected("memory_scope_work_group or memory_scope_device"));
                    }
                }
                self.set_stmt(e.pos, e.span);
                let mut all = vec!["WG"];
                all.extend(tags);
                self.emit(
                    InstrKind::Barrier {
                        kind: BarrierKind::Sync,
                        id: Operand::Imm(Value::Int(0)),
                        count: None,
                        executors: false,
                    },
                    all,
                );
            }
            _ => {
                return Err(self
                    .err(e.pos, format!("unsupported function '{name}'"))
                    .expected(
                        "atomic_load/store/exchange/fetch_<op>/compare_exchange_<strong|weak>[_explicit], atomic_thread_fence, atomic_work_item_fence or barrier",
                    ));
            }
        }
        (self.pos, self.span, self.text) = saved;
        Ok(result)
    }
}

/// Source text on one line, whitespace collapsed.
fn squash(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    // Test files are ASCII nearly always: split on ASCII blanks then,
    // without decoding characters.
    let words: Box<dyn Iterator<Item = &str>> = if s.is_ascii() {
        Box::new(s.split_ascii_whitespace())
    } else {
        Box::new(s.split_whitespace())
    };
    for word in words {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}
