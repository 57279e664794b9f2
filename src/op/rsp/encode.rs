//! Canonical state keys: which clean cache entries and fifos a state's key
//! keeps (live locations per cache), and the byte encoding.

use super::*;

/// What of a state its key keeps: per L1 (L2) cache the locations whose
/// clean entries count (the others are keyed as absent), and whether the
/// fifos count.
pub(super) struct Keep {
    pub(super) l1_live: Vec<u64>,
    pub(super) l2_live: Vec<u64>,
    pub(super) l1_fifo: bool,
    pub(super) l2_fifo: bool,
}

impl Keep {
    /// Everything counts (no reduction).
    pub(super) fn all(s: &State) -> Keep {
        Keep {
            l1_live: vec![u64::MAX; s.l1.len()],
            l2_live: vec![u64::MAX; s.l2.len()],
            l1_fifo: true,
            l2_fifo: true,
        }
    }
}

/// A state as bytes, for the visited set: one allocation and one hash
/// per state instead of one per component. Injective (every component is
/// written with its length or at a fixed width), so equal keys mean equal
/// states.
pub(super) fn encode(s: &State, keep: &Keep) -> Vec<u8> {
    fn val(out: &mut Vec<u8>, v: Value) {
        match v {
            Value::Int(i) => {
                out.push(0);
                out.extend_from_slice(&i.to_le_bytes());
            }
            Value::Addr(a) => {
                out.push(1);
                out.extend_from_slice(&(a as u64).to_le_bytes());
            }
        }
    }
    fn cache(out: &mut Vec<u8>, c: &Cache, live: u64, fifo: bool) {
        for (x, e) in c.entries.iter().enumerate() {
            match e {
                None => out.push(0),
                Some(e) if !e.dirty && live & (1 << x) == 0 => out.push(0),
                Some(e) => {
                    out.push(1 | (e.dirty as u8) << 1 | (e.valid as u8) << 2);
                    val(out, e.val);
                }
            }
        }
        if !fifo {
            return;
        }
        out.extend_from_slice(&(c.fifo.len() as u32).to_le_bytes());
        for el in &c.fifo {
            let (tag, i) = match el {
                FifoEl::Loc(x) => (0u8, *x),
                FifoEl::Flush(t) => (1u8, *t),
            };
            out.push(tag);
            out.extend_from_slice(&i.to_le_bytes());
        }
    }
    let lock = |l: &Option<u8>| l.map_or(u8::MAX, |t| t);
    let mut out = Vec::with_capacity(64);
    for v in &s.gl {
        val(&mut out, *v);
    }
    for (d, c) in s.l2.iter().enumerate() {
        cache(&mut out, c, keep.l2_live[d], keep.l2_fifo);
    }
    for (w, c) in s.l1.iter().enumerate() {
        cache(&mut out, c, keep.l1_live[w], keep.l1_fifo);
    }
    out.extend(s.lockfile.iter().map(lock));
    out.extend(s.rmw.iter().map(lock));
    for (t, pc) in s.pc.iter().enumerate() {
        out.extend_from_slice(&pc.to_le_bytes());
        out.extend_from_slice(&s.jumps[t].to_le_bytes());
        for v in &s.regs[t] {
            val(&mut out, *v);
        }
    }
    out.push(s.cut as u8);
    out
}

/// Registers an instruction names.
pub(super) fn op_regs(op: &Op) -> Vec<&Reg> {
    fn opnd(o: &Operand) -> Option<&Reg> {
        match o {
            Operand::Reg(r) => Some(r),
            Operand::Imm(_) => None,
        }
    }
    match op {
        Op::Ld { reg, .. } => vec![reg],
        Op::St { val, .. } => opnd(val).into_iter().collect(),
        Op::Inc { reg, by, .. } => std::iter::once(reg).chain(opnd(by)).collect(),
        Op::Mov { reg, val } => std::iter::once(reg).chain(opnd(val)).collect(),
        Op::Arith { reg, a, b, .. } => std::iter::once(reg).chain(opnd(a)).chain(opnd(b)).collect(),
        Op::Branch { a, b, .. } => opnd(a).into_iter().chain(opnd(b)).collect(),
        _ => vec![],
    }
}

/// For each pc (and the end), the locations the code may access (load,
/// store, increment) from there on: a backward fixpoint over the control
/// flow graph.
///
/// With `l1`, only reads of the L1 (`LD`, `INC_L1`) count, and an
/// `INV_L1` (which invalidates the thread's own L1 at every scope) kills
/// everything after it.
pub(super) fn live_sets(code: &[Op], l1: bool) -> Vec<u64> {
    let mut live = vec![0u64; code.len() + 1];
    let own = |op: &Op| -> u64 {
        match op {
            Op::Ld { loc, .. }
            | Op::Inc {
                level: Level::L1,
                loc,
                ..
            } => 1u64 << loc,
            Op::St { loc, .. } | Op::Inc { loc, .. } if !l1 => 1u64 << loc,
            _ => 0,
        }
    };
    loop {
        let mut changed = false;
        for pc in (0..code.len()).rev() {
            let succ = match &code[pc] {
                Op::InvL1(_) if l1 => 0,
                Op::Goto(t) => live[*t],
                Op::Branch { target, .. } => live[pc + 1] | live[*target],
                _ => live[pc + 1],
            };
            let v = own(&code[pc]) | succ;
            if v != live[pc] {
                live[pc] = v;
                changed = true;
            }
        }
        if !changed {
            return live;
        }
    }
}
