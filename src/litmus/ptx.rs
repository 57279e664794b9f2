//! The PTX dialect (Dat3M/herd syntax).
//!
//! Memory instructions, with qualifiers in any order after the base name:
//!
//! | syntax | IR | tags |
//! |---|---|---|
//! | `ld{.weak} r, a` | `Load` | `WEAK` |
//! | `ld.relaxed.S r, a` / `ld.acquire.S r, a` | `Load` | `RLX`/`ACQ` + scope |
//! | `ld.volatile r, a` | `Load` | `RLX SYS VOL` |
//! | `ld r, 1` (immediate source) | `Mov` | — |
//! | `st{.weak\|.relaxed.S\|.release.S\|.volatile} a, v` | `Store` | as for `ld` |
//! | `atom{.sem}{.S}.op r, a, v` / `atom...cas r, a, exp, new` | `Rmw` | sem (default `RLX`) + scope (default `GPU`) |
//! | `red{.sem}{.S}.op a, v` | `Rmw` without destination | as `atom` |
//! | `fence{.sc\|.acq_rel\|.acquire\|.release}.S` | `Fence` | `SC`/`ACQ_REL`/`ACQ`/`REL` + scope |
//! | `membar.{cta\|gl\|sys}` | `Fence` | `SC` + `CTA`/`GPU`/`SYS` |
//! | `bar{.cta}.sync {i,} a{, b}`, `barrier{.cta}.sync a{, b}`, `bar{.cta}.arrive {i,} a{, b}` (id `a`, thread count `b`, Dat3M's instance tag `i`) | `Barrier` | `SYNC`/`ARRIVE` + `CTA` |
//! | `sust{.sem}{.S} a, v` / `suld{.sem}{.S} r, a` | `Store` / `Load` | as `st`/`ld`, + `SURFACE` |
//! | `suatom...` / `sured...` | `Rmw` | as `atom`/`red`, + `SURFACE` |
//! | `tld{.weak} r, a`, `tex... r, a` | `Load` | `WEAK TEXTURE` |
//! | `ld.const r, a`, `ldc r, a`, `cold{.weak} r, a` | `Load` | `WEAK CONSTANT` |
//! | `fence.proxy.{surface\|texture\|constant}` | `Fence` | `PROXY` + `SURFACE`/`TEXTURE`/`CONSTANT` |
//! | `fence.proxy.alias`, `fence.alias` | `Fence` | `PROXY ALIAS` |
//!
//! Proxies (seed 002): an access without a proxy tag is in the generic proxy
//! (the executor tags it `GENERIC`). Surface and texture instructions accept
//! and ignore geometry qualifiers (`.b`, `.1d`, `.v4`, `.clamp`, ...) and
//! coordinates (`[surf, r1]`, `[tex, {r1, r2}]`): a reference is one
//! location. Texture and constant loads are weak only. Aliases are declared
//! in the init block (`y @ generic aliases x;`, see [`super::table`]).
//!
//! `S` is `.cta`, `.gpu` or `.sys`. State spaces (`.global`, `.shared`, ...)
//! and types (`.u32`, `.b64`, ...) are accepted and ignored. Atomic ops:
//! `add sub exch cas inc dec and or xor min max` (`red` has no `exch`/`cas`).
//! Local instructions: `mov r, v`, `add|sub|mul|and|or|xor|min|max r, v, v`,
//! branches `beq|bne|blt|bgt|ble|bge v, v, L`, `goto L` (`bra L`), labels `L:`.
//!
//! # Registers and locations
//!
//! An identifier operand is a **register** when, in this order:
//! 1. the init block names it as a register of this thread (`P0:ptr=&x`);
//! 2. otherwise, it is a **location** when the init block gives it a value
//!    as a location (`r1=0` makes `r1` a location);
//! 3. otherwise, it is a register when it starts with `%` or is `r`
//!    followed by digits (`r0`, `r12`, `%r1`, `%rd3`);
//! 4. anything else is a location (created with value 0 on first use).
//!
//! In an address position (`[a]` or a bare `a`), a register holds the
//! address and a location is accessed directly. In a value position a
//! location stands for its address (as `&x` does). Destinations must be
//! registers.

use super::dialect::{Cursor, Dialect, ThreadCtx};
use crate::diag::Diagnostic;
use crate::ir::{
    Address, Arch, BarrierKind, BinOp, CmpOp, InstrKind, Operand, Pos, Proxy, Reg, RmwOp, Value,
};
use crate::litmus::lexer::Tok;

/// The PTX dialect.
pub struct Ptx;

/// The PTX dialect instance.
pub static PTX: Ptx = Ptx;

const MNEMONICS: &str = "ld, st, atom, red, sust, suld, suatom, sured, tld, tex, ldc, cold, \
fence, membar, bar, barrier, mov, add, sub, mul, and, or, xor, min, max, beq, bne, blt, bgt, \
ble, bge, goto, bra or a label 'L:'";

const SCOPE_EXPECTED: &str = ".cta, .gpu or .sys";

const REG_HINT: &str = "a register: r<N>, %name, or a name given to the thread in the init \
block (P0:name=...)";

impl Dialect for Ptx {
    fn arch(&self) -> Arch {
        Arch::Ptx
    }

    fn scope_levels(&self) -> &'static [&'static str] {
        &["sys", "gpu", "cta"]
    }

    fn normalize_reg(&self, name: &str) -> Option<Reg> {
        Some(name.to_string())
    }

    fn register_hint(&self) -> &'static str {
        REG_HINT
    }

    fn parse_instr(
        &self,
        cur: &mut Cursor<'_>,
        ctx: &mut ThreadCtx<'_>,
    ) -> Result<Option<(InstrKind, Vec<String>)>, Diagnostic> {
        parse_instr(cur, ctx).map(Some)
    }
}

/// A memory-model semantics qualifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sem {
    Weak,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    Sc,
    Volatile,
}

impl Sem {
    fn from_name(s: &str) -> Option<Sem> {
        Some(match s {
            "weak" => Sem::Weak,
            "relaxed" => Sem::Relaxed,
            "acquire" => Sem::Acquire,
            "release" => Sem::Release,
            "acq_rel" => Sem::AcqRel,
            "sc" => Sem::Sc,
            "volatile" => Sem::Volatile,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Sem::Weak => "weak",
            Sem::Relaxed => "relaxed",
            Sem::Acquire => "acquire",
            Sem::Release => "release",
            Sem::AcqRel => "acq_rel",
            Sem::Sc => "sc",
            Sem::Volatile => "volatile",
        }
    }

    fn tag(self) -> &'static str {
        match self {
            Sem::Weak => "WEAK",
            Sem::Relaxed | Sem::Volatile => "RLX",
            Sem::Acquire => "ACQ",
            Sem::Release => "REL",
            Sem::AcqRel => "ACQ_REL",
            Sem::Sc => "SC",
        }
    }

    /// Semantics that need a scope.
    fn scoped(self) -> bool {
        !matches!(self, Sem::Weak | Sem::Volatile)
    }
}

fn scope_tag(s: &str) -> Option<&'static str> {
    match s {
        "cta" => Some("CTA"),
        "gpu" => Some("GPU"),
        "sys" => Some("SYS"),
        _ => None,
    }
}

const SPACES: &[&str] = &["global", "shared", "local", "const", "param", "generic"];
const TYPES: &[&str] = &[
    "b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f16",
    "f16x2", "bf16", "f32", "f64", "pred",
];
const ATOM_OPS: &[&str] = &[
    "add", "sub", "exch", "cas", "inc", "dec", "and", "or", "xor", "min", "max",
];
const RED_OPS: &[&str] = &["add", "sub", "inc", "dec", "and", "or", "xor", "min", "max"];

/// Which qualifiers a mnemonic accepts.
struct Spec {
    sems: &'static [Sem],
    scopes: bool,
    ops: &'static [&'static str],
    spaces: bool,
    types: bool,
    /// Mnemonic-specific words returned to the caller in `Quals::extra`.
    extra: &'static [&'static str],
}

/// A mnemonic that takes no qualifier; other specs are built from it.
const NO_QUALS: Spec = Spec {
    sems: &[],
    scopes: false,
    ops: &[],
    spaces: false,
    types: false,
    extra: &[],
};

#[derive(Default)]
struct Quals {
    sem: Option<(Sem, Pos)>,
    scope: Option<(&'static str, Pos)>,
    op: Option<(String, Pos)>,
    extra: Vec<(String, Pos)>,
}

fn dotted_list(items: &[&str]) -> String {
    let v: Vec<String> = items.iter().map(|s| format!(".{s}")).collect();
    match v.as_slice() {
        [] => "no qualifier".to_string(),
        [a] => a.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// A mnemonic as written: `atom.acq_rel.gpu.add` is base `atom` with its
/// qualifiers.
struct Mnemonic<'m> {
    base: &'m str,
    /// The qualifiers after the base, without their dots, with positions.
    quals: &'m [(String, Pos)],
    /// Position of the mnemonic.
    pos: Pos,
}

impl Mnemonic<'_> {
    /// Just after the last qualifier (the current position when there is
    /// none), where a missing qualifier is reported.
    fn end(&self, cur: &Cursor<'_>) -> Pos {
        self.quals.last().map_or(cur.pos(), |(n, p)| Pos {
            line: p.line,
            col: p.col + n.chars().count() as u32,
        })
    }
}

/// An instruction and its tags (without the arch tag), or why not.
type Parsed = Result<(InstrKind, Vec<String>), Diagnostic>;

fn sem_list(sems: &[Sem]) -> String {
    let names: Vec<&str> = sems.iter().map(|s| s.name()).collect();
    dotted_list(&names)
}

/// Splits `ld.acquire.gpu` at its dots: base name and qualifiers with positions.
fn split_mnemonic(
    cur: &Cursor<'_>,
    text: &str,
    pos: Pos,
) -> Result<Vec<(String, Pos)>, Diagnostic> {
    let mut out = Vec::new();
    let mut col = pos.col;
    for (i, part) in text.split('.').enumerate() {
        let ppos = Pos {
            line: pos.line,
            col: if i == 0 { col } else { col + 1 },
        };
        if part.is_empty() {
            return Err(cur
                .error(ppos, format!("empty qualifier in '{text}'"))
                .expected("a qualifier name after '.'"));
        }
        out.push((part.to_string(), ppos));
        col = ppos.col + part.chars().count() as u32;
    }
    Ok(out)
}

fn parse_quals(cur: &Cursor<'_>, m: &Mnemonic<'_>, spec: &Spec) -> Result<Quals, Diagnostic> {
    let (base, quals) = (m.base, m.quals);
    let mut q = Quals::default();
    let mut prev_sem_needs_scope = false;
    for (name, pos) in quals {
        let pos = *pos;
        let n = name.as_str();
        let after_sem = std::mem::take(&mut prev_sem_needs_scope);
        if spec.extra.contains(&n) {
            q.extra.push((name.clone(), pos));
        } else if let Some(sem) = Sem::from_name(n) {
            if !spec.sems.contains(&sem) {
                return Err(cur
                    .error(pos, format!("'.{n}' is not a valid semantics for '{base}'"))
                    .expected(if spec.sems.is_empty() {
                        format!("no semantics qualifier on '{base}'")
                    } else {
                        sem_list(spec.sems)
                    }));
            }
            if q.sem.is_some() {
                return Err(cur
                    .error(pos, format!("second semantics qualifier '.{n}'"))
                    .expected("one semantics qualifier"));
            }
            q.sem = Some((sem, pos));
            prev_sem_needs_scope = sem.scoped() && q.scope.is_none();
        } else if let Some(tag) = scope_tag(n) {
            if !spec.scopes {
                return Err(cur
                    .error(pos, format!("'{base}' takes no scope, found '.{n}'"))
                    .expected(format!("qualifiers of '{base}'")));
            }
            if q.scope.is_some() {
                return Err(cur
                    .error(pos, format!("second scope qualifier '.{n}'"))
                    .expected("one scope qualifier"));
            }
            q.scope = Some((tag, pos));
        } else if spec.ops.contains(&n) {
            if q.op.is_some() {
                return Err(cur
                    .error(pos, format!("second operation qualifier '.{n}'"))
                    .expected("one operation"));
            }
            q.op = Some((name.clone(), pos));
        } else if (spec.spaces && SPACES.contains(&n)) || (spec.types && TYPES.contains(&n)) {
            // Accepted and ignored.
        } else if n == "cluster" && spec.scopes {
            return Err(cur
                .error(pos, "unsupported scope '.cluster'")
                .expected(SCOPE_EXPECTED));
        } else if after_sem && spec.scopes {
            return Err(cur
                .error(pos, format!("unknown scope '.{n}'"))
                .expected(SCOPE_EXPECTED));
        } else if base == "fence" && n == "proxy" {
            return Err(cur
                .error(pos, "'.proxy' must come right after 'fence'")
                .expected(format!("fence.proxy.<kind> with kind {PROXY_FENCE_KINDS}")));
        } else {
            let mut allowed: Vec<&str> = Vec::new();
            allowed.extend(spec.extra);
            allowed.extend(spec.sems.iter().map(|s| s.name()));
            if spec.scopes {
                allowed.extend(["cta", "gpu", "sys"]);
            }
            allowed.extend(spec.ops);
            if spec.spaces {
                allowed.push("global");
                allowed.push("shared");
            }
            if spec.types {
                allowed.push("u32");
                allowed.push("...");
            }
            return Err(cur
                .error(pos, format!("unknown qualifier '.{n}' for '{base}'"))
                .expected(dotted_list(&allowed)));
        }
    }
    Ok(q)
}

/// An operand as written, before it is used as an address or a value.
enum Opnd {
    Reg(String, Pos),
    Loc(String, Pos),
    Imm(i64, Pos),
    AddrOf(String, Pos),
    Mem(Address, Pos),
}

impl Opnd {
    fn pos(&self) -> Pos {
        match self {
            Opnd::Reg(_, p)
            | Opnd::Loc(_, p)
            | Opnd::Imm(_, p)
            | Opnd::AddrOf(_, p)
            | Opnd::Mem(_, p) => *p,
        }
    }
}

/// The register-vs-location rule (see the module documentation).
fn is_register(name: &str, ctx: &ThreadCtx<'_>) -> bool {
    if ctx.init_regs.contains(name) {
        return true;
    }
    if ctx.locs.is_declared(name) {
        return false;
    }
    looks_like_register(name)
}

/// The address `[name]` denotes: the register `name` or the location `name`.
fn mem_address(name: &str, ctx: &mut ThreadCtx<'_>) -> Address {
    if is_register(name, ctx) {
        Address::Reg(name.to_string())
    } else {
        Address::Loc(ctx.locs.id(name))
    }
}

/// `%name` or `r<digits>`.
pub fn looks_like_register(name: &str) -> bool {
    if let Some(rest) = name.strip_prefix('%') {
        return !rest.is_empty();
    }
    name.strip_prefix('r')
        .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
}

const OPERAND_EXPECTED: &str = "an operand: a register, a location, [address] or a number";

fn parse_operand(cur: &mut Cursor<'_>, ctx: &mut ThreadCtx<'_>) -> Result<Opnd, Diagnostic> {
    let pos = cur.pos();
    if let Some(v) = cur.eat_int()? {
        return Ok(Opnd::Imm(v, pos));
    }
    if cur.eat_punct("&") {
        let (name, _) = cur.expect_ident("a location name after '&'")?;
        return Ok(Opnd::AddrOf(name.to_string(), pos));
    }
    if cur.eat_punct("[") {
        let name = cur.expect_bracketed_name()?;
        return Ok(Opnd::Mem(mem_address(name, ctx), pos));
    }
    match cur.peek().map(|t| &t.tok) {
        Some(Tok::Ident(name)) => {
            cur.next_tok();
            Ok(if is_register(name, ctx) {
                Opnd::Reg(name.clone(), pos)
            } else {
                Opnd::Loc(name.clone(), pos)
            })
        }
        _ => Err(cur.unexpected(OPERAND_EXPECTED)),
    }
}

fn comma(cur: &mut Cursor<'_>) -> Result<(), Diagnostic> {
    cur.expect_punct(",", "',' between operands").map(|_| ())
}

/// A destination operand: a register.
fn dst_operand(cur: &mut Cursor<'_>, ctx: &mut ThreadCtx<'_>) -> Result<Reg, Diagnostic> {
    match parse_operand(cur, ctx)? {
        Opnd::Reg(r, _) => Ok(r),
        Opnd::Loc(n, p) => Err(cur
            .error(p, format!("'{n}' is not a register"))
            .expected(format!("a destination register: {REG_HINT}"))),
        o => Err(cur
            .error(o.pos(), "the destination must be a register")
            .expected(REG_HINT)),
    }
}

fn value(cur: &Cursor<'_>, ctx: &mut ThreadCtx<'_>, o: Opnd) -> Result<Operand, Diagnostic> {
    match o {
        Opnd::Reg(r, _) => Ok(Operand::Reg(r)),
        Opnd::Imm(v, _) => Ok(Operand::Imm(Value::Int(v))),
        Opnd::Loc(n, _) | Opnd::AddrOf(n, _) => Ok(Operand::Imm(Value::Addr(ctx.locs.id(&n)))),
        Opnd::Mem(_, p) => Err(cur
            .error(p, "a memory operand '[...]' cannot be used as a value")
            .expected("a register or a number")),
    }
}

/// A value operand: a register, a number or a location's address.
fn value_operand(cur: &mut Cursor<'_>, ctx: &mut ThreadCtx<'_>) -> Result<Operand, Diagnostic> {
    let o = parse_operand(cur, ctx)?;
    value(cur, ctx, o)
}

/// The address operand of a store or an atomic ([`parse_proxy_address`]).
fn address_operand(cur: &mut Cursor<'_>, ctx: &mut ThreadCtx<'_>) -> Result<Address, Diagnostic> {
    let o = parse_proxy_address(cur, ctx)?;
    address(cur, ctx, o)
}

fn address(cur: &Cursor<'_>, ctx: &mut ThreadCtx<'_>, o: Opnd) -> Result<Address, Diagnostic> {
    match o {
        Opnd::Mem(a, _) => Ok(a),
        Opnd::Loc(n, _) => Ok(Address::Loc(ctx.locs.id(&n))),
        Opnd::Reg(r, _) => Ok(Address::Reg(r)),
        Opnd::Imm(_, p) | Opnd::AddrOf(_, p) => Err(cur
            .error(p, "expected an address")
            .expected("a location, [location] or a register holding an address")),
    }
}

fn parse_instr(cur: &mut Cursor<'_>, ctx: &mut ThreadCtx<'_>) -> Parsed {
    let Some(first) = cur.peek() else {
        return Err(cur.unexpected("an instruction"));
    };
    if first.is_punct("@") {
        return Err(cur
            .error(
                first.pos,
                "predicated instructions ('@p') are not supported",
            )
            .expected(format!("an instruction: {MNEMONICS}")));
    }
    let Some(text) = first.ident() else {
        return Err(cur.unexpected(&format!("an instruction: {MNEMONICS}")));
    };
    let parts = split_mnemonic(cur, text, first.pos)?;
    cur.next_tok();
    let m = Mnemonic {
        base: parts[0].0.as_str(),
        quals: &parts[1..],
        pos: first.pos,
    };
    let (base, quals) = (m.base, m.quals);
    let typed = Spec {
        types: true,
        ..NO_QUALS
    };
    match base {
        "ld" => {
            // `ld.const` reads the constant bank through the constant proxy.
            let proxy = if quals.iter().any(|(n, _)| n == "const") {
                Proxy::Constant
            } else {
                Proxy::Generic
            };
            parse_ld(cur, ctx, &m, proxy)
        }
        "st" => {
            if let Some((_, p)) = quals.iter().find(|(n, _)| n == "const") {
                return Err(cur
                    .error(*p, "the constant state space is read-only")
                    .expected("st.global, st.shared or st without a state space"));
            }
            parse_st(cur, ctx, &m, Proxy::Generic)
        }
        "sust" => parse_st(cur, ctx, &m, Proxy::Surface),
        "suld" => parse_ld(cur, ctx, &m, Proxy::Surface),
        "tld" | "tex" => parse_ld(cur, ctx, &m, Proxy::Texture),
        "ldc" | "cold" => parse_ld(cur, ctx, &m, Proxy::Constant),
        "atom" | "red" => parse_atom(cur, ctx, &m, Proxy::Generic),
        "suatom" | "sured" => parse_atom(cur, ctx, &m, Proxy::Surface),
        "fence" => parse_fence(cur, &m),
        "membar" => parse_membar(cur, &m),
        "bar" | "barrier" => parse_barrier(cur, ctx, &m),
        "mov" => {
            parse_quals(cur, &m, &typed)?;
            let dst = dst_operand(cur, ctx)?;
            comma(cur)?;
            let src = value_operand(cur, ctx)?;
            Ok((InstrKind::Mov { dst, src }, vec![]))
        }
        "add" | "sub" | "mul" | "and" | "or" | "xor" | "min" | "max" => {
            let spec = Spec {
                extra: if base == "mul" { &["lo"] } else { &[] },
                ..typed
            };
            parse_quals(cur, &m, &spec)?;
            let op = match base {
                "add" => BinOp::Add,
                "sub" => BinOp::Sub,
                "mul" => BinOp::Mul,
                "and" => BinOp::And,
                "or" => BinOp::Or,
                "xor" => BinOp::Xor,
                "min" => BinOp::Min,
                _ => BinOp::Max,
            };
            let dst = dst_operand(cur, ctx)?;
            comma(cur)?;
            let a = value_operand(cur, ctx)?;
            comma(cur)?;
            let b = value_operand(cur, ctx)?;
            Ok((InstrKind::Op { dst, op, a, b }, vec![]))
        }
        "beq" | "bne" | "blt" | "bgt" | "ble" | "bge" => {
            parse_quals(cur, &m, &NO_QUALS)?;
            let cmp = match base {
                "beq" => CmpOp::Eq,
                "bne" => CmpOp::Ne,
                "blt" => CmpOp::Lt,
                "bgt" => CmpOp::Gt,
                "ble" => CmpOp::Le,
                _ => CmpOp::Ge,
            };
            let a = value_operand(cur, ctx)?;
            comma(cur)?;
            let b = value_operand(cur, ctx)?;
            comma(cur)?;
            let (target, _) = cur.expect_ident("a label")?;
            Ok((
                InstrKind::Branch {
                    cmp,
                    a,
                    b,
                    target: target.to_string(),
                },
                vec![],
            ))
        }
        "goto" | "bra" => {
            let spec = Spec {
                extra: if base == "bra" { &["uni"] } else { &[] },
                ..NO_QUALS
            };
            parse_quals(cur, &m, &spec)?;
            let (target, _) = cur.expect_ident("a label")?;
            Ok((
                InstrKind::Goto {
                    target: target.to_string(),
                },
                vec![],
            ))
        }
        _ => Err(cur
            .error(m.pos, format!("unsupported instruction '{text}'"))
            .expected(MNEMONICS)),
    }
}

/// Tags of a load/store from its semantics and scope, after validation.
fn access_tags(cur: &Cursor<'_>, base: &str, q: &Quals) -> Result<Vec<String>, Diagnostic> {
    let sem = q.sem.map(|(s, _)| s).unwrap_or(Sem::Weak);
    match (q.sem, q.scope) {
        (None, Some((_, spos))) => Err(cur
            .error(
                spos,
                format!("a scope on '{base}' needs a semantics qualifier"),
            )
            .expected(format!(
                "{} before the scope",
                if base == "ld" {
                    ".relaxed or .acquire"
                } else {
                    ".relaxed or .release"
                }
            ))),
        (Some((s, _)), Some((_, spos))) if !s.scoped() => Err(cur
            .error(spos, format!("'.{}' takes no scope", s.name()))
            .expected(format!("'{base}.{}' without a scope", s.name()))),
        (Some((s, spos)), None) if s.scoped() => Err(cur
            .error(spos, format!("'.{}' needs a scope", s.name()))
            .expected(SCOPE_EXPECTED)),
        _ => {
            let mut tags = vec![sem.tag().to_string()];
            if sem == Sem::Volatile {
                tags.push("SYS".into());
                tags.push("VOL".into());
            } else if let Some((s, _)) = q.scope {
                tags.push(s.to_string());
            }
            Ok(tags)
        }
    }
}

/// Surface and texture geometry qualifiers, accepted and ignored: a
/// surface or texture reference is modelled as one location.
const GEOMETRY: &[&str] = &[
    "b", "p", "1d", "2d", "3d", "a1d", "a2d", "cube", "acube", "2dms", "a2dms", "v2", "v4", "v8",
    "vec", "clamp", "trap", "zero", "level", "grad", "base",
];

/// Which semantics a proxy-specific access accepts: texture and constant
/// fetches are weak only (there is no strong texture or constant access);
/// surface accesses take the same semantics as their generic forms.
fn proxy_sems(proxy: Proxy, generic: &'static [Sem]) -> &'static [Sem] {
    match proxy {
        Proxy::Generic | Proxy::Surface => generic,
        Proxy::Texture | Proxy::Constant => &[Sem::Weak],
    }
}

/// The qualifiers of a memory access through `proxy`: state spaces and
/// types; semantics and scopes as [`proxy_sems`] allows (texture and constant
/// fetches are weak and unscoped); the geometry of surface and texture
/// accesses. Stores and atomics only come in generic and surface forms.
fn access_quals(
    cur: &Cursor<'_>,
    m: &Mnemonic<'_>,
    proxy: Proxy,
    sems: &'static [Sem],
    ops: &'static [&'static str],
) -> Result<Quals, Diagnostic> {
    let spec = Spec {
        sems: proxy_sems(proxy, sems),
        scopes: matches!(proxy, Proxy::Generic | Proxy::Surface),
        ops,
        spaces: true,
        types: true,
        extra: if matches!(proxy, Proxy::Surface | Proxy::Texture) {
            GEOMETRY
        } else {
            &[]
        },
    };
    parse_quals(cur, m, &spec)
}

/// Tags of a memory instruction: its semantics and scope tags, plus the
/// proxy tag when it is not the generic proxy (the executor tags every
/// other memory event `GENERIC`).
fn with_proxy(mut tags: Vec<String>, proxy: Proxy) -> Vec<String> {
    if proxy != Proxy::Generic {
        tags.push(proxy.tag().to_string());
    }
    tags
}

/// An address operand of a surface or texture instruction: like any
/// address, and also `[ref, coordinates...]` (the coordinates are ignored).
fn parse_proxy_address(cur: &mut Cursor<'_>, ctx: &mut ThreadCtx<'_>) -> Result<Opnd, Diagnostic> {
    let is_coords = cur.peek().is_some_and(|t| t.is_punct("["))
        && cur.peek_at(1).is_some_and(|t| t.ident().is_some())
        && cur.peek_at(2).is_some_and(|t| t.is_punct(","));
    if !is_coords {
        return parse_operand(cur, ctx);
    }
    let pos = cur.pos();
    cur.next_tok();
    let (name, _) = cur.expect_ident("a surface or texture reference")?;
    let mut depth = 0;
    loop {
        match cur.next_tok() {
            None => return Err(cur.unexpected("']' after the coordinates")),
            Some(t) if t.is_punct("{") => depth += 1,
            Some(t) if t.is_punct("}") => depth -= 1,
            Some(t) if t.is_punct("]") && depth <= 0 => break,
            Some(_) => {}
        }
    }
    Ok(Opnd::Mem(mem_address(name, ctx), pos))
}

fn parse_ld(
    cur: &mut Cursor<'_>,
    ctx: &mut ThreadCtx<'_>,
    m: &Mnemonic<'_>,
    proxy: Proxy,
) -> Parsed {
    let sems = &[Sem::Weak, Sem::Relaxed, Sem::Acquire, Sem::Volatile];
    let q = access_quals(cur, m, proxy, sems, &[])?;
    let dst = dst_operand(cur, ctx)?;
    comma(cur)?;
    let src = parse_proxy_address(cur, ctx)?;
    if let (Opnd::Imm(_, p), false) = (&src, proxy == Proxy::Generic) {
        return Err(cur
            .error(*p, format!("'{}' needs a memory operand", m.base))
            .expected("a location, [location] or a register holding an address"));
    }
    if let Opnd::Imm(v, _) = src {
        // `ld r0, 1` is a register move in this dialect.
        if let Some((s, spos)) = q.sem.filter(|(s, _)| *s != Sem::Weak) {
            return Err(cur
                .error(
                    spos,
                    format!(
                        "'ld' of an immediate is a register move and takes no '.{}'",
                        s.name()
                    ),
                )
                .expected("'ld r, <number>' or a memory operand"));
        }
        if let Some((_, spos)) = q.scope {
            return Err(cur
                .error(
                    spos,
                    "'ld' of an immediate is a register move and takes no scope",
                )
                .expected("'ld r, <number>' or a memory operand"));
        }
        return Ok((
            InstrKind::Mov {
                dst,
                src: Operand::Imm(Value::Int(v)),
            },
            vec![],
        ));
    }
    let tags = with_proxy(access_tags(cur, "ld", &q)?, proxy);
    let addr = address(cur, ctx, src)?;
    Ok((InstrKind::Load { dst, addr }, tags))
}

fn parse_st(
    cur: &mut Cursor<'_>,
    ctx: &mut ThreadCtx<'_>,
    m: &Mnemonic<'_>,
    proxy: Proxy,
) -> Parsed {
    let sems = &[Sem::Weak, Sem::Relaxed, Sem::Release, Sem::Volatile];
    let q = access_quals(cur, m, proxy, sems, &[])?;
    let tags = with_proxy(access_tags(cur, "st", &q)?, proxy);
    let addr = address_operand(cur, ctx)?;
    comma(cur)?;
    let src = value_operand(cur, ctx)?;
    Ok((InstrKind::Store { addr, src }, tags))
}

fn parse_atom(
    cur: &mut Cursor<'_>,
    ctx: &mut ThreadCtx<'_>,
    m: &Mnemonic<'_>,
    proxy: Proxy,
) -> Parsed {
    let base = m.base;
    let is_red = base == "red" || base == "sured";
    let ops = if is_red { RED_OPS } else { ATOM_OPS };
    let sems = &[Sem::Relaxed, Sem::Acquire, Sem::Release, Sem::AcqRel];
    let q = access_quals(cur, m, proxy, sems, ops)?;
    let Some((op, _)) = q.op.clone() else {
        return Err(cur
            .error(m.end(cur), format!("'{base}' needs an operation"))
            .expected(dotted_list(ops)));
    };
    let sem = q.sem.map_or(Sem::Relaxed, |(s, _)| s);
    let scope = q.scope.map_or("GPU", |(s, _)| s);
    let tags = with_proxy(vec![sem.tag().to_string(), scope.to_string()], proxy);

    let dst = if is_red {
        None
    } else {
        let d = dst_operand(cur, ctx)?;
        comma(cur)?;
        Some(d)
    };
    let addr = address_operand(cur, ctx)?;
    comma(cur)?;
    let v = value_operand(cur, ctx)?;
    let rmw = match op.as_str() {
        "add" => RmwOp::Bin(BinOp::Add, v),
        "sub" => RmwOp::Bin(BinOp::Sub, v),
        "and" => RmwOp::Bin(BinOp::And, v),
        "or" => RmwOp::Bin(BinOp::Or, v),
        "xor" => RmwOp::Bin(BinOp::Xor, v),
        "min" => RmwOp::Bin(BinOp::Min, v),
        "max" => RmwOp::Bin(BinOp::Max, v),
        "inc" => RmwOp::Inc(v),
        "dec" => RmwOp::Dec(v),
        "exch" => RmwOp::Exch(v),
        _ => {
            // cas: expected, new
            comma(cur)?;
            let new = value_operand(cur, ctx)?;
            RmwOp::Cas { expected: v, new }
        }
    };
    Ok((InstrKind::Rmw { dst, addr, op: rmw }, tags))
}

const PROXY_FENCE_KINDS: &str = ".alias, .surface, .texture or .constant";

/// `fence.proxy.<kind>` (and NVLitmus's `fence.alias`): a proxy fence tagged
/// `PROXY` plus `ALIAS` or the proxy's tag. It has no semantics or scope.
fn parse_proxy_fence(cur: &Cursor<'_>, m: &Mnemonic<'_>) -> Parsed {
    let quals = m.quals;
    let kinds: &[(String, Pos)] = match quals.first() {
        Some((n, _)) if n == "proxy" => &quals[1..],
        _ => quals, // fence.alias
    };
    let Some((kind, kpos)) = kinds.first() else {
        return Err(cur
            .error(m.end(cur), "'fence.proxy' needs a proxy kind")
            .expected(PROXY_FENCE_KINDS));
    };
    if let Some((n, p)) = kinds.get(1) {
        return Err(cur
            .error(
                *p,
                format!("unexpected qualifier '.{n}' after the proxy kind"),
            )
            .expected("one proxy kind"));
    }
    let tag = match kind.as_str() {
        "alias" => "ALIAS",
        k => match Proxy::from_name(k) {
            Some(p) if p != Proxy::Generic => p.tag(),
            _ => {
                return Err(cur
                    .error(*kpos, format!("unsupported proxy kind '.{kind}'"))
                    .expected(PROXY_FENCE_KINDS));
            }
        },
    };
    Ok((InstrKind::Fence, vec!["PROXY".to_string(), tag.to_string()]))
}

fn parse_fence(cur: &mut Cursor<'_>, m: &Mnemonic<'_>) -> Parsed {
    if m.quals
        .first()
        .is_some_and(|(n, _)| n == "proxy" || n == "alias")
    {
        return parse_proxy_fence(cur, m);
    }
    let spec = Spec {
        sems: &[Sem::Sc, Sem::AcqRel, Sem::Acquire, Sem::Release],
        scopes: true,
        ..NO_QUALS
    };
    let q = parse_quals(cur, m, &spec)?;
    let sem = q.sem.map_or(Sem::AcqRel, |(s, _)| s);
    let Some((scope, _)) = q.scope else {
        let at = q.sem.map_or(cur.pos(), |(_, p)| p);
        return Err(cur
            .error(at, "'fence' needs a scope")
            .expected(SCOPE_EXPECTED));
    };
    Ok((
        InstrKind::Fence,
        vec![sem.tag().to_string(), scope.to_string()],
    ))
}

fn parse_membar(cur: &mut Cursor<'_>, m: &Mnemonic<'_>) -> Parsed {
    let expected = ".cta, .gl or .sys";
    let scope = match m.quals {
        [(n, p)] => match n.as_str() {
            "cta" => "CTA",
            "gl" => "GPU",
            "sys" => "SYS",
            _ => {
                return Err(cur
                    .error(*p, format!("unknown membar level '.{n}'"))
                    .expected(expected));
            }
        },
        [] => {
            return Err(cur
                .error(m.pos, "'membar' needs a level")
                .expected(expected));
        }
        [_, (n, p), ..] => {
            return Err(cur
                .error(*p, format!("unexpected qualifier '.{n}' on membar"))
                .expected("a single level: .cta, .gl or .sys"));
        }
    };
    Ok((InstrKind::Fence, vec!["SC".to_string(), scope.to_string()]))
}

fn parse_barrier(cur: &mut Cursor<'_>, ctx: &mut ThreadCtx<'_>, m: &Mnemonic<'_>) -> Parsed {
    let base = m.base;
    let spec = Spec {
        extra: &["cta", "sync", "arrive", "aligned"],
        ..NO_QUALS
    };
    if let Some((_, p)) = m.quals.iter().find(|(n, _)| n == "red") {
        return Err(cur
            .error(*p, format!("unsupported instruction '{base}.red'"))
            .expected(format!("{base}.sync or {base}.arrive")));
    }
    let q = parse_quals(cur, m, &spec)?;
    let mut kind: Option<(BarrierKind, Pos)> = None;
    for (n, p) in &q.extra {
        let k = match n.as_str() {
            "sync" => BarrierKind::Sync,
            "arrive" => BarrierKind::Arrive,
            _ => continue,
        };
        if kind.is_some() {
            return Err(cur
                .error(*p, format!("second barrier operation '.{n}'"))
                .expected("one of .sync or .arrive"));
        }
        kind = Some((k, *p));
    }
    let Some((kind, _)) = kind else {
        return Err(cur
            .error(m.pos, format!("'{base}' needs an operation"))
            .expected(format!("{base}.sync or {base}.arrive")));
    };
    // Two dialects (docs/known-differences.md, "PTX barrier dialects"): with `.cta`,
    // Dat3M's `bar.cta.<mode> i{, id{, quorum}}` (an instance tag that
    // names the instruction and, alone, is also its id; then the barrier
    // id; then the thread count; without a count an instance waits for
    // the CTA's threads that execute a barrier with that id); without
    // `.cta`, the PTX ISA's `bar.<mode> a{, b}` (id, thread count; without
    // a count every thread of the CTA).
    let dat3m = q.extra.iter().any(|(n, _)| n == "cta");
    let max = if dat3m { 3 } else { 2 };
    let mut ops = Vec::new();
    loop {
        let o = parse_operand(cur, ctx)?;
        ops.push(barrier_operand(cur, ctx, o)?);
        if ops.len() == max || !cur.eat_punct(",") {
            break;
        }
    }
    let (id, count, executors) = match (dat3m, ops.as_slice()) {
        (true, [i]) => (i.clone(), None, true),
        (true, [_, id]) => (id.clone(), None, true),
        (true, [_, id, quorum, ..]) => (id.clone(), Some(quorum.clone()), false),
        (false, [a]) => (a.clone(), None, false),
        (false, [a, b, ..]) => (a.clone(), Some(b.clone()), false),
        (_, []) => return Err(cur.unexpected("a barrier operand")),
    };
    let tag = match kind {
        BarrierKind::Sync => "SYNC",
        BarrierKind::Arrive => "ARRIVE",
        BarrierKind::Red => "RED",
    };
    Ok((
        InstrKind::Barrier {
            kind,
            id,
            count,
            executors,
        },
        vec![tag.to_string(), "CTA".to_string()],
    ))
}

fn barrier_operand(
    cur: &Cursor<'_>,
    ctx: &mut ThreadCtx<'_>,
    o: Opnd,
) -> Result<Operand, Diagnostic> {
    match o {
        Opnd::Reg(..) | Opnd::Imm(..) => value(cur, ctx, o),
        o => Err(cur
            .error(o.pos(), "a barrier operand must be a number or a register")
            .expected("a number or a register")),
    }
}
