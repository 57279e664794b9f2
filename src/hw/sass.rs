//! The SASS check: did the assembler keep each role's memory accesses, in
//! program order? The driver JIT-compiles the module to a cubin (the image
//! that runs); `cuobjdump -sass` or `nvdisasm` prints it; this module reads
//! each `litmix_role_N` kernel's instructions (see [`super::emit`]) and
//! compares its global loads, stores and atomics with the role's accesses.
//! ptxas at -O3 merges two `ld.weak` of one address, for example: such a
//! role is reported and the test is not run (unless `--no-sass-check`).
//! Fences are compared loosely (a `fence` may legitimately become no
//! `MEMBAR`, e.g. at CTA scope): a missing one is a note, not a failure.

use super::Plan;
use crate::ir::InstrKind;
use std::collections::BTreeMap;

/// What a SASS instruction does to memory, for the check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    /// A global (or generic) load: `LDG`, `LD`.
    Load,
    /// A global (or generic) store: `STG`, `ST`.
    Store,
    /// An atomic or reduction: `ATOMG`, `ATOM`, `RED`, `REDG`.
    Atomic,
    /// A memory barrier: `MEMBAR`.
    Fence,
}

impl Access {
    fn letter(self) -> char {
        match self {
            Access::Load => 'L',
            Access::Store => 'S',
            Access::Atomic => 'A',
            Access::Fence => 'F',
        }
    }
}

/// One memory instruction of a SASS listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SassOp {
    /// The kind.
    pub access: Access,
    /// The opcode with its modifiers (`LDG.E.STRONG.GPU`).
    pub opcode: String,
}

/// The classification of an opcode (with modifiers), `None` for
/// instructions that are not global memory accesses or barriers (`LDC`,
/// `LDS`, `LDL`, `CCTL`, ALU, branches...).
pub fn classify(opcode: &str) -> Option<Access> {
    let base = opcode.split('.').next().unwrap_or("");
    match base {
        "LDG" | "LD" => Some(Access::Load),
        "STG" | "ST" => Some(Access::Store),
        "ATOMG" | "ATOM" | "RED" | "REDG" => Some(Access::Atomic),
        "MEMBAR" => Some(Access::Fence),
        _ => None,
    }
}

/// Reads a `cuobjdump -sass` or `nvdisasm` listing: function name → its
/// memory instructions in address order. Functions are introduced by
/// `Function : NAME` (cuobjdump) or `.text.NAME:` (nvdisasm);
/// instructions are lines `/*ADDR*/ [@P] OPCODE operands ;`.
pub fn parse_listing(text: &str) -> BTreeMap<String, Vec<SassOp>> {
    let mut out: BTreeMap<String, Vec<SassOp>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Function :") {
            current = Some(rest.trim().to_string());
            out.entry(rest.trim().to_string()).or_default();
            continue;
        }
        if let Some(rest) = t.strip_prefix(".text.")
            && let Some(name) = rest.strip_suffix(':')
        {
            current = Some(name.to_string());
            out.entry(name.to_string()).or_default();
            continue;
        }
        let Some(func) = &current else { continue };
        // `/*0050*/  @!P0 LDG.E R5, desc[UR4][R2.64] ;  /* 0x... */`
        let Some(rest) = t.strip_prefix("/*") else {
            continue;
        };
        let Some(end) = rest.find("*/") else { continue };
        let addr = &rest[..end];
        if addr.is_empty() || !addr.chars().all(|c| c.is_ascii_hexdigit()) {
            continue;
        }
        let body = rest[end + 2..].trim();
        let mut words = body.split_whitespace();
        let mut op = words.next().unwrap_or("");
        if op.starts_with('@') {
            op = words.next().unwrap_or("");
        }
        let op = op.trim_end_matches(';');
        if let Some(access) = classify(op) {
            out.entry(func.clone()).or_default().push(SassOp {
                access,
                opcode: op.to_string(),
            });
        }
    }
    out
}

/// The memory instructions role `r` should compile to: its accesses in
/// program order, then one store per output register; and whether its
/// code branches (then only the counts are compared).
pub fn expected(plan: &Plan, r: usize) -> (Vec<Access>, bool) {
    let role = &plan.roles[r];
    let mut v = Vec::new();
    let mut branches = false;
    for ins in &plan.test.threads[role.thread].code {
        match &ins.kind {
            InstrKind::Load { .. } => v.push(Access::Load),
            InstrKind::Store { .. } => v.push(Access::Store),
            InstrKind::Rmw { .. } => v.push(Access::Atomic),
            InstrKind::Fence => v.push(Access::Fence),
            InstrKind::Branch { .. } | InstrKind::Goto { .. } => branches = true,
            _ => {}
        }
    }
    v.extend(std::iter::repeat_n(Access::Store, role.outputs.len()));
    (v, branches)
}

/// The verdict of the check for one role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoleCheck {
    /// The role.
    pub role: usize,
    /// Accesses kept in order (with branches: in number).
    pub ok: bool,
    /// Expected and found sequences (`L S A F` letters).
    pub expected: String,
    /// What the SASS has.
    pub found: String,
    /// Problems (failures) and notes (missing fences).
    pub messages: Vec<String>,
}

/// Checks every role of `plan` against a parsed listing.
pub fn check(plan: &Plan, listing: &BTreeMap<String, Vec<SassOp>>) -> Vec<RoleCheck> {
    (0..plan.roles.len())
        .filter(|&r| plan.roles[r].host.is_none())
        .map(|r| {
            let name = super::emit::role_kernel(r);
            let (want, branches) = expected(plan, r);
            let Some(ops) = listing.get(&name) else {
                return RoleCheck {
                    role: r,
                    ok: false,
                    expected: letters(&want),
                    found: String::new(),
                    messages: vec![format!("no function {name} in the SASS listing")],
                };
            };
            let got: Vec<Access> = ops.iter().map(|o| o.access).collect();
            compare(r, &want, &got, branches, ops)
        })
        .collect()
}

fn letters(v: &[Access]) -> String {
    v.iter().map(|a| a.letter()).collect()
}

fn compare(r: usize, want: &[Access], got: &[Access], branches: bool, ops: &[SassOp]) -> RoleCheck {
    let strip = |v: &[Access]| -> Vec<Access> {
        v.iter().copied().filter(|a| *a != Access::Fence).collect()
    };
    let (w, g) = (strip(want), strip(got));
    let mut messages = Vec::new();
    let ok = if branches {
        let count = |v: &[Access], a: Access| v.iter().filter(|x| **x == a).count();
        let same = [Access::Load, Access::Store, Access::Atomic]
            .iter()
            .all(|a| count(&w, *a) == count(&g, *a));
        if !same {
            messages.push(format!(
                "role {r}: memory accesses differ in number (expected {}, SASS has {})",
                letters(&w),
                letters(&g)
            ));
        }
        same
    } else if w != g {
        messages.push(format!(
            "role {r}: memory accesses not kept in program order (expected {}, SASS has {}: {})",
            letters(&w),
            letters(&g),
            ops.iter()
                .map(|o| o.opcode.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        ));
        false
    } else {
        true
    };
    // Fences: each expected fence should leave a MEMBAR between the same
    // neighbouring accesses (a note when it does not).
    if ok && !branches {
        let mut gi = 0; // index into got
        for (wi, a) in want.iter().enumerate() {
            if *a == Access::Fence {
                let mut found = false;
                let mut j = gi;
                while j < got.len() && got[j] == Access::Fence {
                    found = true;
                    j += 1;
                }
                if !found {
                    messages.push(format!(
                        "role {r}: the fence before access {} left no MEMBAR (noted, not an error)",
                        wi + 1
                    ));
                }
                gi = j;
            } else {
                while gi < got.len() && got[gi] == Access::Fence {
                    gi += 1;
                }
                gi += 1;
            }
        }
    }
    RoleCheck {
        role: r,
        ok,
        expected: letters(want),
        found: letters(got),
        messages,
    }
}

/// Disassembles a cubin with `cuobjdump -sass` or, failing that,
/// `nvdisasm`; `Err` says neither is on the PATH or what went wrong.
pub fn disassemble(cubin: &[u8]) -> Result<String, String> {
    let dir = std::env::temp_dir().join(format!("litmix-hw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join("module.cubin");
    std::fs::write(&file, cubin).map_err(|e| e.to_string())?;
    let mut last = String::from("neither cuobjdump nor nvdisasm is on the PATH");
    for (tool, args) in [("cuobjdump", vec!["-sass"]), ("nvdisasm", vec![])] {
        match std::process::Command::new(tool)
            .args(&args)
            .arg(&file)
            .output()
        {
            Ok(o) if o.status.success() => {
                let _ = std::fs::remove_dir_all(&dir);
                return Ok(String::from_utf8_lossy(&o.stdout).into_owned());
            }
            Ok(o) => {
                last = format!(
                    "{tool} failed: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                )
            }
            Err(_) => {}
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Err(last)
}
