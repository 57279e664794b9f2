//! The lowered sequences the C printer folds back into one statement or
//! expression: temporaries read once (into the expression that reads them),
//! the ladder of an array index held in a register (into `a + i`) and the
//! eight instructions of a compare-exchange (into its call).

use super::{ThreadPrinter, has};
use crate::ir::{CmpOp, Instr, InstrKind, Operand, RmwOp, Value};

impl ThreadPrinter<'_> {
    /// Whether `r` is a temporary that only its defining instruction
    /// mentions.
    pub(super) fn temp_unused(&self, r: &str) -> bool {
        r.starts_with('%') && self.mentions.get(r) == Some(&1)
    }

    /// Folds the temporaries computed by the instructions from `k` on into
    /// the instruction right after them that reads each once, in operand
    /// order (`t0 = *x; if (t0 == 1)` prints as `if (*x == 1)`): the front
    /// end evaluates an expression's operands in that order, just before
    /// the instruction, so the reparse makes the same code. Returns how
    /// many instructions were folded (0 when none).
    pub(super) fn inline_temporaries(&mut self, k: usize) -> Result<usize, String> {
        let code = &self.th.code;
        let defines = |i: &Instr| match &i.kind {
            InstrKind::Load { dst, .. }
            | InstrKind::Rmw {
                dst: Some(dst),
                op: RmwOp::Exch(_) | RmwOp::Bin(..),
                ..
            }
            | InstrKind::Op { dst, .. } => Some(dst.clone()),
            _ => None,
        };
        let mut temps = Vec::new();
        let mut j = k;
        while let Some(d) = code.get(j).and_then(defines) {
            if !d.starts_with('%') || self.mentions.get(&d) != Some(&2) {
                break;
            }
            temps.push(d);
            j += 1;
        }
        let Some(user) = code.get(j) else {
            return Ok(0);
        };
        let reads: Vec<&Operand> = match &user.kind {
            InstrKind::Branch { a, b, .. } | InstrKind::Op { a, b, .. } => vec![a, b],
            InstrKind::Store { src, .. } => vec![src],
            InstrKind::Rmw {
                op: RmwOp::Exch(v) | RmwOp::Bin(_, v),
                ..
            } => vec![v],
            _ => return Ok(0),
        };
        let read_temps: Vec<&String> = reads
            .into_iter()
            .filter_map(|o| match o {
                Operand::Reg(r) if r.starts_with('%') => Some(r),
                _ => None,
            })
            .collect();
        // Every temporary of the run, and only those, in order.
        if temps.is_empty() || read_temps.len() != temps.len() {
            return Ok(0);
        }
        if read_temps.iter().zip(&temps).any(|(a, b)| *a != b) {
            return Ok(0);
        }
        for i in &code[k..j] {
            if let Some((dst, text)) = self.value_expr(i)? {
                // An operation goes in parentheses inside another expression.
                let text = match i.kind {
                    InstrKind::Op { .. } => format!("({text})"),
                    _ => text,
                };
                self.inlined.insert(dst, text);
            }
        }
        Ok(j - k)
    }

    /// The ladder the front end makes for `a + i` with a register index
    /// `i` (docs: `lower.rs`, `pointer`), starting at `k`: `p = i`, then
    /// per element `if (i != k) goto next; p = &a[k]; goto done; next:`,
    /// then `done:`. It is printed as the pointer `a + i` of the access
    /// that uses `p`, which must come right after it (the front end emits
    /// the ladder just before the access, and the reparse must too).
    /// Returns the ladder's length.
    pub(super) fn index_ladder(&mut self, k: usize) -> Result<Option<usize>, String> {
        let code = &self.th.code;
        let Some(InstrKind::Mov { dst: p, src: idx }) = code.get(k).map(|i| &i.kind) else {
            return Ok(None);
        };
        if !p.starts_with('%') || !matches!(idx, Operand::Reg(_)) {
            return Ok(None);
        }
        let mut j = k + 1;
        let mut elems = Vec::new();
        let mut done: Option<&String> = None;
        while let (
            Some(InstrKind::Branch {
                cmp: CmpOp::Ne,
                a,
                b: Operand::Imm(Value::Int(n)),
                target: next,
            }),
            Some(InstrKind::Mov {
                dst: p2,
                src: Operand::Imm(Value::Addr(e)),
            }),
            Some(InstrKind::Goto { target: d }),
            Some(InstrKind::Label(next2)),
        ) = (
            code.get(j).map(|i| &i.kind),
            code.get(j + 1).map(|i| &i.kind),
            code.get(j + 2).map(|i| &i.kind),
            code.get(j + 3).map(|i| &i.kind),
        ) {
            if a != idx
                || *n != elems.len() as i64
                || p2 != p
                || next != next2
                || done.is_some_and(|x| x != d)
            {
                return Ok(None);
            }
            done = Some(d);
            elems.push(*e);
            j += 4;
        }
        let (Some(done), Some(&b)) = (done, elems.first()) else {
            return Ok(None);
        };
        if code.get(j).map(|i| &i.kind) != Some(&InstrKind::Label(done.clone())) {
            return Ok(None);
        }
        let is_array = self.facts.arrays.get(&b) == Some(&elems.len())
            && elems.iter().enumerate().all(|(n, e)| *e == b + n);
        // The one use of `p`: the access right after the ladder (or after
        // the load of a compare-exchange's expected value).
        let uses: Vec<usize> = code
            .iter()
            .enumerate()
            .filter(|(n, i)| (*n < k || *n > j) && i.kind.registers().contains(&p))
            .map(|(n, _)| n)
            .collect();
        let next_ok = match uses.as_slice() {
            [u] if *u == j + 1 => true,
            [u] if *u == j + 2 => {
                matches!(&code[j + 1].kind, InstrKind::Load { dst, .. } if dst.starts_with('%'))
            }
            _ => false,
        };
        if !is_array || !next_ok {
            return Err(format!(
                "the array index ending at '{}' is not followed by its access",
                code[j].text
            ));
        }
        for i in &code[k..=j] {
            self.check_control(i)?;
        }
        let index = self.operand(idx)?;
        self.ladders.insert(p.clone(), (b, index));
        Ok(Some(j + 1 - k))
    }

    /// The lowered compare-exchange starting at `k` (its `Rmw`, or the
    /// load of an expected value kept in a location), as its call: the
    /// number of instructions it spans and the line.
    pub(super) fn compare_exchange(&mut self, k: usize) -> Result<Option<(usize, String)>, String> {
        let code = &self.th.code;
        // Exp::Loc: `Load t, A` first.
        let (start, load) = match code.get(k).map(|i| &i.kind) {
            Some(InstrKind::Load { dst, addr }) if dst.starts_with('%') => {
                (k + 1, Some((dst, addr, &code[k])))
            }
            _ => (k, None),
        };
        let at = |j: usize| code.get(start + j).map(|i| &i.kind);
        let Some(InstrKind::Rmw {
            dst: Some(old),
            addr,
            op: RmwOp::Cas { expected, new },
        }) = at(0)
        else {
            return Ok(None);
        };
        let Some(InstrKind::Branch {
            cmp: CmpOp::Eq,
            a: Operand::Reg(o2),
            b,
            target: l_ok,
        }) = at(1)
        else {
            return Ok(None);
        };
        if o2 != old || b != expected {
            return Ok(None);
        }
        let Operand::Reg(e) = expected else {
            return Ok(None);
        };
        let exp_text = match (at(2), load) {
            (
                Some(InstrKind::Mov {
                    dst,
                    src: Operand::Reg(o3),
                }),
                None,
            ) if dst == e && o3 == old => {
                format!("&{}", self.reg(e))
            }
            (
                Some(InstrKind::Store {
                    addr: a2,
                    src: Operand::Reg(o3),
                }),
                Some((t, a1, li)),
            ) if t == e && a1 == a2 && o3 == old && code[start + 2].tags == li.tags => {
                if !has(li, "NA") {
                    return Ok(None);
                }
                self.pointer(a1)?
            }
            _ => return Ok(None),
        };
        let (
            Some(InstrKind::Mov {
                dst: d,
                src: Operand::Imm(Value::Int(0)),
            }),
            Some(InstrKind::Goto { target: l_end }),
            Some(InstrKind::Label(l3)),
            Some(InstrKind::Mov {
                dst: d2,
                src: Operand::Imm(Value::Int(1)),
            }),
            Some(InstrKind::Label(l4)),
        ) = (at(3), at(4), at(5), at(6), at(7))
        else {
            return Ok(None);
        };
        if l3 != l_ok
            || l4 != l_end
            || d2 != d
            || self.refs.get(l_ok) != Some(&1)
            || self.refs.get(l_end) != Some(&1)
        {
            return Ok(None);
        }
        let len = start + 8 - k;
        let span = &code[k..k + len];
        // The temporaries the call makes must be used nowhere else.
        let used_outside = |r: &str| {
            code.iter()
                .enumerate()
                .filter(|(j, _)| *j < k || *j >= k + len)
                .any(|(_, i)| i.kind.registers().iter().any(|x| *x == r))
        };
        if !old.starts_with('%') || used_outside(old) || load.is_some_and(|(t, ..)| used_outside(t))
        {
            return Ok(None);
        }
        for i in span {
            if !matches!(
                i.kind,
                InstrKind::Load { .. } | InstrKind::Rmw { .. } | InstrKind::Store { .. }
            ) {
                self.check_control(i)?;
            }
        }
        if let Some((_, a, li)) = load {
            self.check_plain(li, a)?;
        }
        let rmw = &code[start];
        let new = self.operand(new)?;
        let args = self.atomic_args(rmw, addr, true)?;
        let p = self.pointer(addr)?;
        // seq_cst at the default scope is the call without `_explicit`.
        let call = if args == ", memory_order_seq_cst, memory_order_seq_cst" {
            format!("atomic_compare_exchange_strong({p}, {exp_text}, {new})")
        } else {
            format!("atomic_compare_exchange_strong_explicit({p}, {exp_text}, {new}{args})")
        };
        let line = if d.starts_with('%') && !used_outside(d) {
            format!("{call};")
        } else {
            format!("{} = {call};", self.reg(d))
        };
        Ok(Some((len, line)))
    }
}
