//! Every oracle litmus file of the supported dialects parses; spot checks.

use std::path::{Path, PathBuf};

use litmix::ir::{
    Address, BarrierKind, CmpOp, InstrKind, Operand, Prop, Proxy, Quantifier, RmwOp, ScopeLevel,
    Term, Test, Value,
};
use litmix::litmus::parse_file;

/// `../shared/oracles/dat3m/<sub>` relative to the crate root (or one level
/// further up, for a git worktree under `wt/`).
fn oracle_dir(sub: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for up in ["..", "../.."] {
        let d = root.join(up).join("shared/oracles/dat3m").join(sub);
        if d.is_dir() {
            return Some(d);
        }
    }
    println!("skipping: oracle folder ../shared/oracles/dat3m/{sub} is absent");
    None
}

fn litmus_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "litmus"))
        .collect();
    v.sort();
    v
}

fn parse_all(sub: &str) -> Option<(usize, Vec<String>)> {
    let dir = oracle_dir(sub)?;
    let files = litmus_files(&dir);
    let mut failures = Vec::new();
    for f in &files {
        if let Err(d) = parse_file(f) {
            failures.push(d.render());
        }
    }
    Some((files.len(), failures))
}

/// Every oracle file of `sub` parses, and there are at least `min` of them
/// (skipped, with a message, when the oracles are absent). Returns the count.
fn assert_all_parse(sub: &str, min: usize) -> Option<usize> {
    let (n, fails) = parse_all(sub)?;
    assert!(n >= min, "only {n} files in {sub}");
    assert!(
        fails.is_empty(),
        "{} failures:\n{}",
        fails.len(),
        fails.join("\n")
    );
    Some(n)
}

#[test]
fn all_ptx_manual_parse() {
    assert_all_parse("PTX/Manual", 92);
}

#[test]
fn all_ptx_nvidia_parse() {
    assert_all_parse("PTX/Nvidia", 5);
}

#[test]
fn all_x86_parse() {
    if let Some(n) = assert_all_parse("X86", 244) {
        assert_eq!(n, 244);
    }
}

fn oracle(rel: &str) -> Option<Test> {
    let (sub, file) = rel.rsplit_once('/').unwrap();
    let dir = oracle_dir(sub)?;
    Some(parse_file(&dir.join(file)).unwrap_or_else(|d| panic!("{}", d.render())))
}

fn lvl(level: &str, id: u32) -> ScopeLevel {
    ScopeLevel {
        level: level.to_string(),
        id,
    }
}

fn reg(thread: usize, r: &str) -> Term {
    Term::Reg {
        thread,
        reg: r.to_string(),
    }
}

fn int(v: i64) -> Term {
    Term::Const(Value::Int(v))
}

fn eq(a: Term, b: Term) -> Prop {
    Prop::Cmp(CmpOp::Eq, a, b)
}

fn and(a: Prop, b: Prop) -> Prop {
    Prop::And(Box::new(a), Box::new(b))
}

fn or(a: Prop, b: Prop) -> Prop {
    Prop::Or(Box::new(a), Box::new(b))
}

#[test]
fn mp_cta_gpu_in_detail() {
    let Some(t) = oracle("PTX/Manual/MP-cta-gpu.litmus") else {
        return;
    };
    assert_eq!(t.arch, "PTX");
    assert_eq!(t.name, "MP-cta-gpu");
    assert_eq!(t.threads.len(), 2);
    for th in &t.threads {
        assert_eq!(th.placement, vec![lvl("gpu", 0), lvl("cta", 0)]);
    }
    let x = t.location("x").unwrap();
    let y = t.location("y").unwrap();
    let ld = &t.threads[1].code[0];
    assert_eq!(ld.text, "ld.acquire.gpu r1, y");
    assert_eq!(
        ld.kind,
        InstrKind::Load {
            dst: "r1".into(),
            addr: Address::Loc(y)
        }
    );
    for tag in ["PTX", "ACQ", "GPU"] {
        assert!(ld.tags.iter().any(|t| t == tag), "{:?}", ld.tags);
    }
    assert_eq!(t.threads[0].code[0].tags, vec!["PTX", "WEAK"]);
    assert_eq!(t.threads[0].code[1].tags, vec!["PTX", "REL", "CTA"]);
    assert_eq!(
        t.threads[0].code[0].kind,
        InstrKind::Store {
            addr: Address::Loc(x),
            src: Operand::Imm(Value::Int(1))
        }
    );
    assert_eq!(t.condition.quantifier, Quantifier::NotExists);
    assert_eq!(
        t.condition.prop,
        and(
            eq(reg(1, "r1"), int(1)),
            Prop::Cmp(CmpOp::Ne, reg(1, "r2"), int(1))
        )
    );
}

#[test]
fn x86_xchg_is_an_exchange() {
    let Some(t) = oracle("X86/iwp2.8.b.litmus") else {
        return;
    };
    assert_eq!(
        t.threads[0].reg_init,
        vec![("EAX".to_string(), Value::Int(1))]
    );
    let i = &t.threads[0].code[0];
    assert_eq!(i.text, "xchg [x], EAX");
    assert_eq!(
        i.kind,
        InstrKind::Rmw {
            dst: Some("EAX".into()),
            addr: Address::Loc(t.location("x").unwrap()),
            op: RmwOp::Exch(Operand::Reg("EAX".into()))
        }
    );
    assert_eq!(i.tags, vec!["X86"]);
    // `mov [y], 1` without `$`.
    assert!(matches!(
        t.threads[0].code[1].kind,
        InstrKind::Store {
            src: Operand::Imm(Value::Int(1)),
            ..
        }
    ));
    assert_eq!(t.condition.quantifier, Quantifier::NotExists);
}

#[test]
fn named_barriers_with_registers() {
    // Dat3M's `bar.cta.sync 1, r2`: instance tag 1, barrier id r2, no
    // quorum (the threads that execute a barrier with that id).
    let Some(t) = oracle("PTX/Manual/SB+named-bar-reg-diff.litmus") else {
        return;
    };
    let bar = |th: usize| t.threads[th].code[1].clone();
    assert_eq!(
        bar(0).kind,
        InstrKind::Barrier {
            kind: BarrierKind::Sync,
            id: Operand::Reg("r2".into()),
            count: None,
            executors: true,
        }
    );
    assert_eq!(
        bar(1).kind,
        InstrKind::Barrier {
            kind: BarrierKind::Sync,
            id: Operand::Reg("r3".into()),
            count: None,
            executors: true,
        }
    );
    assert_eq!(bar(0).tags, vec!["PTX", "SYNC", "CTA"]);
    assert!(
        t.threads[0]
            .reg_init
            .contains(&("r2".to_string(), Value::Int(1)))
    );
    assert_eq!(t.condition.quantifier, Quantifier::Forall);
}

#[test]
fn forall_with_nested_disjunctions() {
    let Some(t) = oracle("PTX/Manual/barrier-instance-id-forall.litmus") else {
        return;
    };
    assert_eq!(t.threads.len(), 4);
    assert_eq!(t.condition.quantifier, Quantifier::Forall);
    assert_eq!(
        t.condition.prop,
        and(
            or(eq(reg(0, "r0"), int(1)), eq(reg(1, "r0"), int(1))),
            or(eq(reg(2, "r1"), int(1)), eq(reg(3, "r1"), int(1)))
        )
    );
    // Unparenthesised: `/\` binds tighter than `\/`.
    let Some(t) = oracle("X86/ISA2.litmus") else {
        return;
    };
    let Prop::Or(l, r) = &t.condition.prop else {
        panic!("{:?}", t.condition.prop)
    };
    assert!(matches!(**l, Prop::And(..)) && matches!(**r, Prop::And(..)));
}

#[test]
fn spin_loops_and_rmws() {
    let Some(t) = oracle("PTX/Manual/Ticketlock-same-gpu.litmus") else {
        return;
    };
    let code = &t.threads[0].code;
    assert_eq!(code[1].kind, InstrKind::Label("LC00".into()));
    assert_eq!(
        code[3].kind,
        InstrKind::Branch {
            cmp: CmpOp::Eq,
            a: Operand::Reg("r1".into()),
            b: Operand::Reg("r2".into()),
            target: "LC01".into()
        }
    );
    assert_eq!(
        code[4].kind,
        InstrKind::Goto {
            target: "LC00".into()
        }
    );
    assert_eq!(code[0].tags, vec!["PTX", "ACQ", "GPU"]);
    assert!(matches!(
        &code[0].kind,
        InstrKind::Rmw { dst: Some(d), op: RmwOp::Bin(litmix::ir::BinOp::Add, _), .. } if d == "r1"
    ));
    // Condition comparing two registers; `/\` is left-associative.
    let mut leftmost = &t.condition.prop;
    while let Prop::And(l, _) = leftmost {
        leftmost = l;
    }
    assert_eq!(*leftmost, eq(reg(0, "r1"), reg(0, "r2")));
}

#[test]
fn locations_clause_and_final() {
    if let Some(t) = oracle("X86/CoRWRR.litmus") {
        let x = t.location("x").unwrap();
        assert_eq!(
            t.observed,
            vec![Term::Loc(x), reg(0, "EAX"), reg(0, "EBX"), reg(0, "ECX")]
        );
    }
    if let Some(t) = oracle("X86/amd5.litmus") {
        // herd's `final P with ...` is `exists P`.
        assert_eq!(t.condition.quantifier, Quantifier::Exists);
        assert_eq!(t.threads[1].code[1].tags, vec!["X86", "MFENCE"]);
    }
}

#[test]
fn placements_differ_per_thread() {
    let Some(t) = oracle("PTX/Manual/MP-3-transitive.litmus") else {
        return;
    };
    assert_eq!(t.threads[1].placement, vec![lvl("gpu", 0), lvl("cta", 0)]);
    assert_eq!(t.threads[2].placement, vec![lvl("gpu", 0), lvl("cta", 1)]);
}

#[test]
fn all_proxy_tests_parse() {
    for (sub, min) in [("PTX/Manual/proxy", 7), ("PTX/Nvidia/proxy", 120)] {
        assert_all_parse(sub, min);
    }
}

#[test]
fn proxy_aliases_and_instructions() {
    let Some(t) = oracle(
        "PTX/Nvidia/proxy/Proxy-MP-Alias+diffProxy-aliasFence+proxyFence-correctOrder.litmus",
    ) else {
        return;
    };
    let id = |n: &str| t.location(n).unwrap();
    let (x, y, s, s1, t_) = (id("x"), id("y"), id("s"), id("s1"), id("t"));
    assert_eq!(t.locations[y].alias_of, Some(x));
    assert_eq!(t.locations[s].proxy, Proxy::Surface);
    // Every alias maps to x's physical location ...
    for l in [y, s, s1, t_] {
        assert_eq!(t.physical(l), x);
    }
    // ... a generic alias is a new virtual address, a surface or texture
    // alias a synonym of its target's.
    assert_eq!(t.virtual_address(y), y);
    assert_eq!(t.virtual_address(s), x);
    assert_eq!(t.virtual_address(s1), y);
    assert_eq!(t.virtual_address(t_), y);
    let code = &t.threads[0].code;
    assert!(matches!(code[0].kind, InstrKind::Store { .. }));
    assert_eq!(code[0].tags, vec!["PTX", "WEAK", "SURFACE"]);
    assert_eq!(code[1].tags, vec!["PTX", "PROXY", "SURFACE"]);
    assert_eq!(code[2].tags, vec!["PTX", "PROXY", "ALIAS"]);
    let Some(c) = oracle("PTX/Manual/proxy/Proxy-Const-ConstFence.litmus") else {
        return;
    };
    let code = &c.threads[0].code;
    assert_eq!(code[1].tags, vec!["PTX", "PROXY", "CONSTANT"]);
    assert!(matches!(code[2].kind, InstrKind::Load { .. }));
    assert_eq!(code[2].tags, vec!["PTX", "WEAK", "CONSTANT"]);
}
