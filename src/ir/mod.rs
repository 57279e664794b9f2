//! Program IR: what every litmus front end produces and the executor consumes.
//!
//! A [`Test`] is architecture-neutral: instructions carry *tags* (upper-case
//! names such as `RLX`, `ACQ`, `GPU`, `MFENCE`) which the executor copies onto
//! the events they generate. Memory models refer to those tags as event sets,
//! so a new dialect or qualifier needs no change in the engine, only a front
//! end that emits the tag and a model that uses it.

pub mod outcome;
pub mod text;

use std::fmt;
use std::path::PathBuf;

/// Index of a location in [`Test::locations`].
pub type LocId = usize;

/// A position in a source file, 1-based, used to point errors at their origin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters).
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A run-time value: an integer or the address of a location (`x=&y`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    /// A plain integer.
    Int(i64),
    /// The address of a location.
    Addr(LocId),
}

impl Value {
    /// The integer, if this value is one.
    pub fn as_int(self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(v),
            Value::Addr(_) => None,
        }
    }
}

/// The dialect a thread's code is written in. Compound tests mix them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arch {
    /// NVIDIA PTX (Dat3M/herd dialect).
    Ptx,
    /// x86 in herd syntax.
    X86,
    /// C / OpenCL in herd's C litmus syntax (thread functions).
    C,
    /// The assembly of the GPU cache machine of seed 001 §5 (`rsp-cache`).
    Rsp,
}

impl Arch {
    /// The name used in litmus headers (`PTX`, `X86`).
    pub fn name(self) -> &'static str {
        match self {
            Arch::Ptx => "PTX",
            Arch::X86 => "X86",
            Arch::C => "C",
            Arch::Rsp => "RSP",
        }
    }
}

/// The path a memory access takes to memory (PTX 7.5 proxies, seed 002
/// §5.2). Every memory event has one; front ends tag proxy-specific
/// instructions with [`Proxy::tag`] and the executor gives `GENERIC` to
/// every other memory event. A new proxy is a new variant here, a front end
/// that emits its tag, and a model that uses it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Proxy {
    /// Ordinary loads, stores and atomics (`ld`, `st`, `atom`, `red`).
    #[default]
    Generic,
    /// Surface accesses (`sust`, `suld`, `suatom`, `sured`).
    Surface,
    /// Texture fetches (`tld`, `tex`).
    Texture,
    /// Constant-bank loads (`ld.const`, `ldc`, `cold`).
    Constant,
}

impl Proxy {
    /// Every proxy, in declaration order.
    pub const ALL: &'static [Proxy] = &[
        Proxy::Generic,
        Proxy::Surface,
        Proxy::Texture,
        Proxy::Constant,
    ];

    /// The event tag (`GENERIC`, `SURFACE`, ...).
    pub fn tag(self) -> &'static str {
        match self {
            Proxy::Generic => "GENERIC",
            Proxy::Surface => "SURFACE",
            Proxy::Texture => "TEXTURE",
            Proxy::Constant => "CONSTANT",
        }
    }

    /// The lower-case name used in sources (`generic`, `surface`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Proxy::Generic => "generic",
            Proxy::Surface => "surface",
            Proxy::Texture => "texture",
            Proxy::Constant => "constant",
        }
    }

    /// The proxy named `name` (lower case).
    pub fn from_name(name: &str) -> Option<Proxy> {
        Proxy::ALL.iter().copied().find(|p| p.name() == name)
    }
}

/// A shared memory location declared (or first used) by the test.
///
/// A location may be an *alias* of another one (`y @ generic aliases x`,
/// `s @ surface aliases x`): both name the same physical location. A
/// generic alias is a different virtual address mapped to the same physical
/// memory; a surface, texture or constant alias is a reference to the
/// target's virtual address through that proxy (a *virtual synonym*). See
/// [`Test::physical`] and [`Test::virtual_address`].
#[derive(Clone, Debug, PartialEq)]
pub struct Location {
    /// Source name, e.g. `x`.
    pub name: String,
    /// Initial value (0 unless the init block says otherwise). For an alias
    /// the physical location's value counts.
    pub init: Value,
    /// The location this one aliases, if any.
    pub alias_of: Option<LocId>,
    /// The proxy named by the alias declaration (`Generic` for plain
    /// locations and generic aliases).
    pub proxy: Proxy,
}

impl Location {
    /// A plain (non-alias) location.
    pub fn new(name: impl Into<String>, init: Value) -> Self {
        Location {
            name: name.into(),
            init,
            alias_of: None,
            proxy: Proxy::Generic,
        }
    }
}

/// One level of the scope tree a thread sits in, e.g. `("gpu", 0)`.
///
/// A thread's placement lists levels from the outermost (below the implicit
/// system root) to the innermost: `P0@cta 1,gpu 0` is `[("gpu",0), ("cta",1)]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScopeLevel {
    /// Level name in lower case (`gpu`, `cta`, `wg`, `dev`, `cpu`, ...).
    pub level: String,
    /// Instance number at that level.
    pub id: u32,
}

/// A register name as written in the source (`r0`, `EAX`).
pub type Reg = String;

/// An instruction operand.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// Current value of a register.
    Reg(Reg),
    /// A constant.
    Imm(Value),
}

/// A memory address operand.
#[derive(Clone, Debug, PartialEq)]
pub enum Address {
    /// A location named directly (`[x]`, `x`).
    Loc(LocId),
    /// A register holding an address (`[r1]`), resolved at execution.
    Reg(Reg),
}

/// Binary operations of the local (register-only) instructions and RMWs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    And,
    Or,
    Xor,
    Min,
    Max,
}

impl BinOp {
    /// The operation's name in lower case, as PTX and the mapping files
    /// spell it (`add`, `min`, ...).
    pub fn name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Xor => "xor",
            BinOp::Min => "min",
            BinOp::Max => "max",
        }
    }

    /// Applies the operation; addresses only support equality-free use.
    pub fn apply(self, a: Value, b: Value) -> Result<Value, String> {
        let (Value::Int(x), Value::Int(y)) = (a, b) else {
            return Err(format!("arithmetic on an address ({self:?})"));
        };
        Ok(Value::Int(match self {
            BinOp::Add => x.wrapping_add(y),
            BinOp::Sub => x.wrapping_sub(y),
            BinOp::Mul => x.wrapping_mul(y),
            BinOp::And => x & y,
            BinOp::Or => x | y,
            BinOp::Xor => x ^ y,
            BinOp::Min => x.min(y),
            BinOp::Max => x.max(y),
        }))
    }
}

/// Comparisons used by conditional branches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    /// Compares two values; addresses are equal only to themselves and order
    /// after every integer.
    pub fn eval(self, a: Value, b: Value) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }

    /// The comparison that holds exactly when this one does not.
    pub fn negate(self) -> CmpOp {
        match self {
            CmpOp::Eq => CmpOp::Ne,
            CmpOp::Ne => CmpOp::Eq,
            CmpOp::Lt => CmpOp::Ge,
            CmpOp::Ge => CmpOp::Lt,
            CmpOp::Gt => CmpOp::Le,
            CmpOp::Le => CmpOp::Gt,
        }
    }
}

/// What a read-modify-write computes from the old value `old`.
#[derive(Clone, Debug, PartialEq)]
pub enum RmwOp {
    /// `new = old op operand`.
    Bin(BinOp, Operand),
    /// `new = operand` (exchange).
    Exch(Operand),
    /// Compare-and-swap: writes `new` only when `old == expected`;
    /// otherwise it is a lone read (no write event).
    Cas { expected: Operand, new: Operand },
    /// CUDA `inc`: `new = (old >= bound) ? 0 : old + 1`.
    Inc(Operand),
    /// CUDA `dec`: `new = (old == 0 || old > bound) ? bound : old - 1`.
    Dec(Operand),
}

/// Kinds of execution barriers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierKind {
    /// Waits for all participants (`bar.sync`, `barrier.sync`).
    Sync,
    /// Signals without waiting (`bar.arrive`).
    Arrive,
    /// Reduction barrier (`bar.red`), synchronises like `Sync`.
    Red,
}

/// One instruction of a thread, with the tags its events will carry.
#[derive(Clone, Debug, PartialEq)]
pub enum InstrKind {
    /// Memory read into `dst`.
    Load { dst: Reg, addr: Address },
    /// Memory write of `src`.
    Store { addr: Address, src: Operand },
    /// Atomic read-modify-write; `dst` receives the old value (None for `red`).
    Rmw {
        dst: Option<Reg>,
        addr: Address,
        op: RmwOp,
    },
    /// A fence; its flavour is in the tags.
    Fence,
    /// An execution barrier. Two barriers match when they are in the same
    /// scope instance, have equal `id` and `count` values and the same
    /// per-thread instance number (see docs/decisions.md).
    Barrier {
        kind: BarrierKind,
        id: Operand,
        count: Option<Operand>,
        /// Without `count`: whether an instance waits for the threads of
        /// the scope instance that execute a barrier with this `id` in the
        /// execution (Dat3M's `bar.cta.sync i{, id}`) rather than for every
        /// thread of it (the PTX ISA's `bar.sync a`).
        executors: bool,
    },
    /// `dst = src`.
    Mov { dst: Reg, src: Operand },
    /// `dst = a op b`.
    Op {
        dst: Reg,
        op: BinOp,
        a: Operand,
        b: Operand,
    },
    /// Conditional jump to `target` when `a cmp b`.
    Branch {
        cmp: CmpOp,
        a: Operand,
        b: Operand,
        target: String,
    },
    /// Unconditional jump.
    Goto { target: String },
    /// A jump target.
    Label(String),
}

impl InstrKind {
    /// The memory address of an access (load, store or RMW); `None` for
    /// other instructions.
    pub fn address(&self) -> Option<&Address> {
        match self {
            InstrKind::Load { addr, .. }
            | InstrKind::Store { addr, .. }
            | InstrKind::Rmw { addr, .. } => Some(addr),
            _ => None,
        }
    }

    /// Every register the instruction names, in operand order (the
    /// destination first, then the address, then value operands), once per
    /// mention.
    pub fn registers(&self) -> Vec<&Reg> {
        fn op<'a>(o: &'a Operand, out: &mut Vec<&'a Reg>) {
            if let Operand::Reg(r) = o {
                out.push(r);
            }
        }
        fn addr<'a>(a: &'a Address, out: &mut Vec<&'a Reg>) {
            if let Address::Reg(r) = a {
                out.push(r);
            }
        }
        let mut out = Vec::new();
        match self {
            InstrKind::Load { dst, addr: a } => {
                out.push(dst);
                addr(a, &mut out);
            }
            InstrKind::Store { addr: a, src } => {
                addr(a, &mut out);
                op(src, &mut out);
            }
            InstrKind::Rmw {
                dst,
                addr: a,
                op: o,
            } => {
                out.extend(dst);
                addr(a, &mut out);
                match o {
                    RmwOp::Bin(_, v) | RmwOp::Exch(v) | RmwOp::Inc(v) | RmwOp::Dec(v) => {
                        op(v, &mut out)
                    }
                    RmwOp::Cas { expected, new } => {
                        op(expected, &mut out);
                        op(new, &mut out);
                    }
                }
            }
            InstrKind::Barrier { id, count, .. } => {
                op(id, &mut out);
                if let Some(c) = count {
                    op(c, &mut out);
                }
            }
            InstrKind::Mov { dst, src } => {
                out.push(dst);
                op(src, &mut out);
            }
            InstrKind::Op { dst, a, b, .. } => {
                out.push(dst);
                op(a, &mut out);
                op(b, &mut out);
            }
            InstrKind::Branch { a, b, .. } => {
                op(a, &mut out);
                op(b, &mut out);
            }
            InstrKind::Fence | InstrKind::Goto { .. } | InstrKind::Label(_) => {}
        }
        out
    }
}

/// An instruction with its source position and event tags.
#[derive(Clone, Debug, PartialEq)]
pub struct Instr {
    pub kind: InstrKind,
    /// Upper-case tags copied onto every event the instruction produces,
    /// e.g. `["ACQ", "GPU"]` for `ld.acquire.gpu`, `["MFENCE"]` for `MFENCE`.
    pub tags: Vec<String>,
    /// Where the instruction is in the source.
    pub pos: Pos,
    /// The instruction as written, for reports (`ld.acquire.gpu r1, y`).
    pub text: String,
}

/// A thread of the test.
#[derive(Clone, Debug, PartialEq)]
pub struct Thread {
    /// Thread number `N` of `PN`.
    pub id: usize,
    /// Dialect of the code.
    pub arch: Arch,
    /// Place in the scope tree (outermost first, the system root implicit).
    pub placement: Vec<ScopeLevel>,
    /// Registers given an initial value in the init block.
    pub reg_init: Vec<(Reg, Value)>,
    /// The code, in program order, labels included.
    pub code: Vec<Instr>,
}

/// A term of a final condition.
#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    /// Final value of register `reg` of thread `thread`.
    Reg { thread: usize, reg: Reg },
    /// Final value of a memory location.
    Loc(LocId),
    /// A constant.
    Const(Value),
}

/// A proposition over final states.
#[derive(Clone, Debug, PartialEq)]
pub enum Prop {
    True,
    False,
    /// `a == b` (`Eq`) or `a != b` (`Ne`), etc.
    Cmp(CmpOp, Term, Term),
    Not(Box<Prop>),
    And(Box<Prop>, Box<Prop>),
    Or(Box<Prop>, Box<Prop>),
}

/// The quantifier of a final condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantifier {
    /// `exists p`: validated when some allowed execution satisfies `p`.
    Exists,
    /// `~exists p`: validated when no allowed execution satisfies `p`.
    NotExists,
    /// `forall p`: validated when every allowed execution satisfies `p`.
    Forall,
}

/// The final condition of a test.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    pub quantifier: Quantifier,
    pub prop: Prop,
}

/// A parsed litmus test.
#[derive(Clone, Debug, PartialEq)]
pub struct Test {
    /// Architecture named on the first line (`PTX`, `X86`, ...).
    pub arch: String,
    /// Test name from the first line.
    pub name: String,
    /// The file it came from, if any.
    pub file: Option<PathBuf>,
    /// Memory locations; `LocId` indexes this vector.
    pub locations: Vec<Location>,
    /// Threads, in header order.
    pub threads: Vec<Thread>,
    /// The final condition.
    pub condition: Condition,
    /// Extra observed terms from a `locations [...]` clause.
    pub observed: Vec<Term>,
}

impl Test {
    /// The name diagnostics give the test: its file, or its name when it
    /// was not read from a file.
    pub fn source_name(&self) -> String {
        self.file
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| self.name.clone())
    }

    /// Looks a location up by name.
    pub fn location(&self, name: &str) -> Option<LocId> {
        self.locations.iter().position(|l| l.name == name)
    }

    /// The physical location `l` maps to: the end of its alias chain.
    pub fn physical(&self, l: LocId) -> LocId {
        let mut cur = l;
        // Front ends reject alias cycles; the bound only guards bad IR.
        for _ in 0..=self.locations.len() {
            match self.locations.get(cur).and_then(|x| x.alias_of) {
                Some(next) => cur = next,
                None => return cur,
            }
        }
        cur
    }

    /// The virtual address `l` names: a surface, texture or constant alias
    /// is a synonym of its target's address; a plain location and a generic
    /// alias are addresses of their own.
    pub fn virtual_address(&self, l: LocId) -> LocId {
        let mut cur = l;
        for _ in 0..=self.locations.len() {
            match self.locations.get(cur) {
                Some(Location {
                    alias_of: Some(next),
                    proxy,
                    ..
                }) if *proxy != Proxy::Generic => cur = *next,
                _ => return cur,
            }
        }
        cur
    }

    /// True when some location is an alias of another.
    pub fn has_aliases(&self) -> bool {
        self.locations.iter().any(|l| l.alias_of.is_some())
    }
}
