//! What the front ends accept and the IR they produce, feature by feature.

use litmix::ir::{
    Address, BarrierKind, BinOp, CmpOp, InstrKind, Operand, Pos, Prop, Quantifier, RmwOp,
    ScopeLevel, Term, Test, Value,
};
use litmix::litmus::parse_str;

#[track_caller]
fn parse(src: &str) -> Test {
    parse_str("t.litmus", src).unwrap_or_else(|d| panic!("{}", d.render()))
}

fn lvl(level: &str, id: u32) -> ScopeLevel {
    ScopeLevel {
        level: level.to_string(),
        id,
    }
}

fn imm(v: i64) -> Operand {
    Operand::Imm(Value::Int(v))
}

fn reg(r: &str) -> Operand {
    Operand::Reg(r.to_string())
}

fn kinds(t: &Test, th: usize) -> Vec<InstrKind> {
    t.threads[th].code.iter().map(|i| i.kind.clone()).collect()
}

fn tags(t: &Test, th: usize) -> Vec<Vec<&str>> {
    t.threads[th]
        .code
        .iter()
        .map(|i| i.tags.iter().map(String::as_str).collect())
        .collect()
}

#[test]
fn header_preamble_and_trailer_are_skipped() {
    let t = parse(
        "PTX MP+fence.sc-x_y (MPjunk) \"first-line doc that\n spans | lines { }\"\n\
         \"another doc\" (* a comment\n over lines *)\n\
         Cycle=Rfe PodRR Fre\nPrefetch=0:x=F,0:y=W\n\
         {\nx=1;\n};\n\
         P0@cta 0,gpu 0 ;\n st.weak x, 2 ;\n\
         exists (x == 2);\n<<\nshow 0 \" unterminated\n>>\n#junk",
    );
    assert_eq!(t.name, "MP+fence.sc-x_y");
    assert_eq!(t.locations.len(), 1);
    assert_eq!(t.locations[0].init, Value::Int(1));
    assert_eq!(t.condition.quantifier, Quantifier::Exists);
}

#[test]
fn init_block_forms() {
    let t = parse(
        "PTX t\n{ int x = 0; int* p = &x; uint64_t q = x; P0:r1=&x; 0:r2 = y; [z]=3; w=-1 }\n\
         P0@cta 0,gpu 0 ;\n st.weak v, 1 ;\nexists (x == 0)\n",
    );
    let names: Vec<&str> = t.locations.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["x", "p", "q", "y", "z", "w", "v"]);
    let x = t.location("x").unwrap();
    let y = t.location("y").unwrap();
    assert_eq!(t.locations[1].init, Value::Addr(x));
    assert_eq!(t.locations[2].init, Value::Addr(x));
    assert_eq!(t.locations[4].init, Value::Int(3));
    assert_eq!(t.locations[5].init, Value::Int(-1));
    assert_eq!(
        t.threads[0].reg_init,
        vec![("r1".into(), Value::Addr(x)), ("r2".into(), Value::Addr(y))]
    );
}

#[test]
fn scope_tree_clause_assigns_placements() {
    let t = parse(
        "PTX t\n{ }\n P0 | P1 | P2 ;\n st.weak x, 1 | ld.weak r0, x | ld.weak r1, x ;\n\
         scopes: (system (gpu (cta P0) (cta P1)) (gpu (cta P2)))\nexists (P1:r0 == 1)\n",
    );
    assert_eq!(t.threads[0].placement, vec![lvl("gpu", 0), lvl("cta", 0)]);
    assert_eq!(t.threads[1].placement, vec![lvl("gpu", 0), lvl("cta", 1)]);
    assert_eq!(t.threads[2].placement, vec![lvl("gpu", 1), lvl("cta", 2)]);

    let t = parse(
        "PTX t\n{ }\n P0 | P1@gpu 3,cta 7 | P2@cta 1,gpu 0 ;\n st.weak x, 1 | | ;\n\
         scopes: (sys (gpu (cta P0 P1)))\nexists (x == 1)\n",
    );
    assert_eq!(t.threads[0].placement, vec![lvl("gpu", 0), lvl("cta", 0)]);
    assert_eq!(t.threads[1].placement, vec![lvl("gpu", 0), lvl("cta", 0)]);
    // Not in the tree: the header placement stays (given inner level first).
    assert_eq!(t.threads[2].placement, vec![lvl("gpu", 0), lvl("cta", 1)]);

    // `sys N` in a header is the implicit root.
    let t = parse("PTX t\n{ }\n P0@sys 0,cta 2,gpu 1 ;\n st.weak x, 1 ;\nexists (x == 1)\n");
    assert_eq!(t.threads[0].placement, vec![lvl("gpu", 1), lvl("cta", 2)]);
}

#[test]
fn ptx_memory_instructions() {
    let t = parse(
        "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n\
         ld.relaxed.sys.global.u32 r0, x ;\n\
         ld.gpu.acquire r1, [x] ;\n\
         ld.volatile r2, x ;\n\
         ld r3, x ;\n\
         st.volatile x, r3 ;\n\
         st.release.cta.b32 [x], -4 ;\n\
         atom.add.gpu.acq_rel.u32 r4, x, 1 ;\n\
         atom.add r5, x, r4 ;\n\
         atom.cta.inc r6, x, 5 ;\n\
         atom.acquire.sys.dec r6, x, 5 ;\n\
         atom.relaxed.gpu.cas.b32 r7, x, 1, 2 ;\n\
         atom.exch r8, x, 9 ;\n\
         atom.min r9, x, 0 ;\n\
         red.release.gpu.or x, 3 ;\n\
         red.max x, r0 ;\n\
         exists (x == 1)\n",
    );
    let x = Address::Loc(0);
    assert_eq!(
        kinds(&t, 0),
        vec![
            InstrKind::Load {
                dst: "r0".into(),
                addr: x.clone()
            },
            InstrKind::Load {
                dst: "r1".into(),
                addr: x.clone()
            },
            InstrKind::Load {
                dst: "r2".into(),
                addr: x.clone()
            },
            InstrKind::Load {
                dst: "r3".into(),
                addr: x.clone()
            },
            InstrKind::Store {
                addr: x.clone(),
                src: reg("r3")
            },
            InstrKind::Store {
                addr: x.clone(),
                src: imm(-4)
            },
            InstrKind::Rmw {
                dst: Some("r4".into()),
                addr: x.clone(),
                op: RmwOp::Bin(BinOp::Add, imm(1))
            },
            InstrKind::Rmw {
                dst: Some("r5".into()),
                addr: x.clone(),
                op: RmwOp::Bin(BinOp::Add, reg("r4"))
            },
            InstrKind::Rmw {
                dst: Some("r6".into()),
                addr: x.clone(),
                op: RmwOp::Inc(imm(5))
            },
            InstrKind::Rmw {
                dst: Some("r6".into()),
                addr: x.clone(),
                op: RmwOp::Dec(imm(5))
            },
            InstrKind::Rmw {
                dst: Some("r7".into()),
                addr: x.clone(),
                op: RmwOp::Cas {
                    expected: imm(1),
                    new: imm(2)
                }
            },
            InstrKind::Rmw {
                dst: Some("r8".into()),
                addr: x.clone(),
                op: RmwOp::Exch(imm(9))
            },
            InstrKind::Rmw {
                dst: Some("r9".into()),
                addr: x.clone(),
                op: RmwOp::Bin(BinOp::Min, imm(0))
            },
            InstrKind::Rmw {
                dst: None,
                addr: x.clone(),
                op: RmwOp::Bin(BinOp::Or, imm(3))
            },
            InstrKind::Rmw {
                dst: None,
                addr: x.clone(),
                op: RmwOp::Bin(BinOp::Max, reg("r0"))
            },
        ]
    );
    assert_eq!(
        tags(&t, 0),
        vec![
            vec!["PTX", "RLX", "SYS"],
            vec!["PTX", "ACQ", "GPU"],
            vec!["PTX", "RLX", "SYS", "VOL"],
            vec!["PTX", "WEAK"],
            vec!["PTX", "RLX", "SYS", "VOL"],
            vec!["PTX", "REL", "CTA"],
            vec!["PTX", "ACQ_REL", "GPU"],
            vec!["PTX", "RLX", "GPU"],
            vec!["PTX", "RLX", "CTA"],
            vec!["PTX", "ACQ", "SYS"],
            vec!["PTX", "RLX", "GPU"],
            vec!["PTX", "RLX", "GPU"],
            vec!["PTX", "RLX", "GPU"],
            vec!["PTX", "REL", "GPU"],
            vec!["PTX", "RLX", "GPU"],
        ]
    );
}

#[test]
fn ptx_fences_and_barriers() {
    let t = parse(
        "PTX t\n{ P0:r2=4; }\n P0@cta 0,gpu 0 ;\n\
         fence.sc.cta ;\n fence.acq_rel.gpu ;\n fence.acquire.sys ;\n fence.release.gpu ;\n\
         fence.gpu ;\n membar.cta ;\n membar.gl ;\n membar.sys ;\n\
         bar.sync 0 ;\n barrier.sync 1, 2 ;\n barrier.cta.sync.aligned 0 ;\n\
         bar.cta.arrive 1, r2 ;\n bar.arrive r2 ;\n\
         exists (x == 1)\n",
    );
    let code = &t.threads[0].code;
    assert!(code[..8].iter().all(|i| i.kind == InstrKind::Fence));
    assert_eq!(
        tags(&t, 0)[..8],
        [
            vec!["PTX", "SC", "CTA"],
            vec!["PTX", "ACQ_REL", "GPU"],
            vec!["PTX", "ACQ", "SYS"],
            vec!["PTX", "REL", "GPU"],
            vec!["PTX", "ACQ_REL", "GPU"],
            vec!["PTX", "SC", "CTA"],
            vec!["PTX", "SC", "GPU"],
            vec!["PTX", "SC", "SYS"],
        ]
    );
    let bar = |kind, id, count, executors| InstrKind::Barrier {
        kind,
        id,
        count,
        executors,
    };
    // Without `.cta` the PTX ISA's `a, b`; with it Dat3M's `i, a, b`
    // (`barrier.cta.sync.aligned 0`: id 0, the threads that execute it;
    // `bar.cta.arrive 1, r2`: tag 1, id r2).
    assert_eq!(
        kinds(&t, 0)[8..],
        [
            bar(BarrierKind::Sync, imm(0), None, false),
            bar(BarrierKind::Sync, imm(1), Some(imm(2)), false),
            bar(BarrierKind::Sync, imm(0), None, true),
            bar(BarrierKind::Arrive, reg("r2"), None, true),
            bar(BarrierKind::Arrive, reg("r2"), None, false),
        ]
    );
    assert_eq!(tags(&t, 0)[8], vec!["PTX", "SYNC", "CTA"]);
    assert_eq!(tags(&t, 0)[11], vec!["PTX", "ARRIVE", "CTA"]);
}

#[test]
fn ptx_local_instructions_and_branches() {
    let t = parse(
        "PTX t\n{ }\n P0@cta 0,gpu 0 ;\n\
         ld r0, 5 ;\n mov r1, r0 ;\n mov.u32 r2, &x ;\n add r3, r1, 2 ;\n sub.s32 r3, r3, r1 ;\n\
         mul.lo.s32 r3, r3, 3 ;\n and r4, r3, 1 ;\n or r4, r4, 8 ;\n xor r4, r4, r4 ;\n\
         min r5, r4, -1 ;\n max r5, r5, 7 ;\n\
         L0: ;\n blt r5, 3, L0 ;\n bgt r5, 3, L1 ;\n ble r5, 3, L1 ;\n bge r5, 3, L1 ;\n\
         bra.uni L1 ;\n L1: goto L0 ;\n\
         exists (P0:r5 == 7)\n",
    );
    let k = kinds(&t, 0);
    let x = t.location("x").unwrap();
    assert_eq!(
        k[0],
        InstrKind::Mov {
            dst: "r0".into(),
            src: imm(5)
        }
    );
    assert_eq!(
        k[1],
        InstrKind::Mov {
            dst: "r1".into(),
            src: reg("r0")
        }
    );
    assert_eq!(
        k[2],
        InstrKind::Mov {
            dst: "r2".into(),
            src: Operand::Imm(Value::Addr(x))
        }
    );
    let op = |dst: &str, op, a, b| InstrKind::Op {
        dst: dst.into(),
        op,
        a,
        b,
    };
    assert_eq!(k[3], op("r3", BinOp::Add, reg("r1"), imm(2)));
    assert_eq!(k[4], op("r3", BinOp::Sub, reg("r3"), reg("r1")));
    assert_eq!(k[5], op("r3", BinOp::Mul, reg("r3"), imm(3)));
    assert_eq!(k[6], op("r4", BinOp::And, reg("r3"), imm(1)));
    assert_eq!(k[7], op("r4", BinOp::Or, reg("r4"), imm(8)));
    assert_eq!(k[8], op("r4", BinOp::Xor, reg("r4"), reg("r4")));
    assert_eq!(k[9], op("r5", BinOp::Min, reg("r4"), imm(-1)));
    assert_eq!(k[10], op("r5", BinOp::Max, reg("r5"), imm(7)));
    assert_eq!(k[11], InstrKind::Label("L0".into()));
    let br = |cmp, t: &str| InstrKind::Branch {
        cmp,
        a: reg("r5"),
        b: imm(3),
        target: t.into(),
    };
    assert_eq!(k[12], br(CmpOp::Lt, "L0"));
    assert_eq!(k[13], br(CmpOp::Gt, "L1"));
    assert_eq!(k[14], br(CmpOp::Le, "L1"));
    assert_eq!(k[15], br(CmpOp::Ge, "L1"));
    assert_eq!(
        k[16],
        InstrKind::Goto {
            target: "L1".into()
        }
    );
    // A label and an instruction in one cell.
    assert_eq!(k[17], InstrKind::Label("L1".into()));
    assert_eq!(
        k[18],
        InstrKind::Goto {
            target: "L0".into()
        }
    );
    assert_eq!(t.threads[0].code[18].text, "goto L0");
    // Local instructions carry only the arch tag.
    assert!(t.threads[0].code.iter().all(|i| i.tags == ["PTX"]));
    // No memory location besides x was created.
    assert_eq!(t.locations.len(), 1);
}

#[test]
fn ptx_register_versus_location_rule() {
    let t = parse(
        "PTX t\n{ x=0; r9=0; P0:ptr=&x; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n\
         ld.weak r0, ptr   | ld.weak r0, ptr ;\n\
         ld.weak r1, [r0]  | ld.weak %r1, [%rd2] ;\n\
         ld.weak r2, r1    | st.weak x, y ;\n\
         ld.weak r3, r9    | ;\n\
         st.weak [ptr], r3 | ;\n\
         exists (x == 0)\n",
    );
    let x = t.location("x").unwrap();
    let r9 = t.location("r9").unwrap();
    let p1ptr = t.location("ptr").expect("ptr is a location in P1");
    let y = t.location("y").unwrap();
    assert_eq!(
        kinds(&t, 0),
        vec![
            InstrKind::Load {
                dst: "r0".into(),
                addr: Address::Reg("ptr".into())
            },
            InstrKind::Load {
                dst: "r1".into(),
                addr: Address::Reg("r0".into())
            },
            InstrKind::Load {
                dst: "r2".into(),
                addr: Address::Reg("r1".into())
            },
            InstrKind::Load {
                dst: "r3".into(),
                addr: Address::Loc(r9)
            },
            InstrKind::Store {
                addr: Address::Reg("ptr".into()),
                src: reg("r3")
            },
        ]
    );
    assert_eq!(
        kinds(&t, 1),
        vec![
            InstrKind::Load {
                dst: "r0".into(),
                addr: Address::Loc(p1ptr)
            },
            InstrKind::Load {
                dst: "%r1".into(),
                addr: Address::Reg("%rd2".into())
            },
            InstrKind::Store {
                addr: Address::Loc(x),
                src: Operand::Imm(Value::Addr(y))
            },
        ]
    );
}

#[test]
fn x86_instructions() {
    let t = parse(
        "x86 t\n{ x=0; 0:eax=1; }\n P0 | P1 ;\n\
         mov eax, [x]      | MOV [x],$1 ;\n\
         MOV EAX,$-1       | MOV [EBX], 2 ;\n\
         LOCK XADD [x],EAX | MOV EBX, ECX ;\n\
         lock cmpxchg [x],ebx | XCHG EAX,[y] ;\n\
         LOCK INC [x]      | ADD EAX, 2 ;\n\
         LOCK SUB [x],$3   | INC EAX ;\n\
         L0:               | CMP EAX,1 ;\n\
         JMP L0            | JNE L1 ;\n\
         MFENCE            | JE L1 ;\n\
                           | L1: DEC EBX ;\n\
         exists (0:EAX = 1)\n",
    );
    assert_eq!(t.arch, "X86");
    assert_eq!(t.threads[0].reg_init, vec![("EAX".into(), Value::Int(1))]);
    let x = Address::Loc(t.location("x").unwrap());
    let y = Address::Loc(t.location("y").unwrap());
    assert_eq!(
        kinds(&t, 0),
        vec![
            InstrKind::Load {
                dst: "EAX".into(),
                addr: x.clone()
            },
            InstrKind::Mov {
                dst: "EAX".into(),
                src: imm(-1)
            },
            InstrKind::Rmw {
                dst: Some("EAX".into()),
                addr: x.clone(),
                op: RmwOp::Bin(BinOp::Add, reg("EAX"))
            },
            InstrKind::Rmw {
                dst: Some("EAX".into()),
                addr: x.clone(),
                op: RmwOp::Cas {
                    expected: reg("EAX"),
                    new: reg("EBX")
                }
            },
            InstrKind::Rmw {
                dst: None,
                addr: x.clone(),
                op: RmwOp::Bin(BinOp::Add, imm(1))
            },
            InstrKind::Rmw {
                dst: None,
                addr: x.clone(),
                op: RmwOp::Bin(BinOp::Sub, imm(3))
            },
            InstrKind::Label("L0".into()),
            InstrKind::Goto {
                target: "L0".into()
            },
            InstrKind::Fence,
        ]
    );
    let op = |dst: &str, op, a, b| InstrKind::Op {
        dst: dst.into(),
        op,
        a,
        b,
    };
    assert_eq!(
        kinds(&t, 1),
        vec![
            InstrKind::Store {
                addr: x.clone(),
                src: imm(1)
            },
            InstrKind::Store {
                addr: Address::Reg("EBX".into()),
                src: imm(2)
            },
            InstrKind::Mov {
                dst: "EBX".into(),
                src: reg("ECX")
            },
            InstrKind::Rmw {
                dst: Some("EAX".into()),
                addr: y,
                op: RmwOp::Exch(reg("EAX"))
            },
            op("EAX", BinOp::Add, reg("EAX"), imm(2)),
            op("EAX", BinOp::Add, reg("EAX"), imm(1)),
            // CMP gives no instruction; both jumps use its operands.
            InstrKind::Branch {
                cmp: CmpOp::Ne,
                a: reg("EAX"),
                b: imm(1),
                target: "L1".into()
            },
            InstrKind::Branch {
                cmp: CmpOp::Eq,
                a: reg("EAX"),
                b: imm(1),
                target: "L1".into()
            },
            InstrKind::Label("L1".into()),
            op("EBX", BinOp::Sub, reg("EBX"), imm(1)),
        ]
    );
    assert_eq!(tags(&t, 0)[8], vec!["X86", "MFENCE"]);
    assert!(tags(&t, 1).iter().all(|t| *t == ["X86"]));
    assert_eq!(t.threads[0].code[3].text, "lock cmpxchg [x],ebx");
}

#[test]
fn conditions() {
    let src =
        |cond: &str| format!("X86 t\n{{ }}\n P0 | P1 ;\n MOV EAX,[x] | MOV [y],$1 ;\n{cond}\n");
    let r = |th: usize, name: &str| Term::Reg {
        thread: th,
        reg: name.into(),
    };
    let c = |v: i64| Term::Const(Value::Int(v));
    let cmp = |op, a, b| Prop::Cmp(op, a, b);

    // `~` binds tighter than `/\`, which binds tighter than `\/`.
    let t = parse(&src("forall ~ 0:EAX = 1 /\\ x = 0 \\/ [y] != 1 /\\ true"));
    let x = t.location("x").unwrap();
    let y = t.location("y").unwrap();
    assert_eq!(t.condition.quantifier, Quantifier::Forall);
    assert_eq!(
        t.condition.prop,
        Prop::Or(
            Box::new(Prop::And(
                Box::new(Prop::Not(Box::new(cmp(CmpOp::Eq, r(0, "EAX"), c(1))))),
                Box::new(cmp(CmpOp::Eq, Term::Loc(x), c(0)))
            )),
            Box::new(Prop::And(
                Box::new(cmp(CmpOp::Ne, Term::Loc(y), c(1))),
                Box::new(Prop::True)
            ))
        )
    );

    // Registers are normalised and created on their thread.
    let t = parse(&src("~exists (P1:ecx == P0:eax \\/ false)"));
    assert_eq!(t.condition.quantifier, Quantifier::NotExists);
    assert_eq!(t.threads[1].reg_init, vec![("ECX".into(), Value::Int(0))]);
    assert_eq!(t.threads[0].reg_init, vec![("EAX".into(), Value::Int(0))]);

    // Addresses on the right: `&x` and a bare name.
    let t = parse(&src("exists (0:EAX = &x /\\ 0:EAX = y /\\ x = 2)"));
    let x = t.location("x").unwrap();
    let y = t.location("y").unwrap();
    let Prop::And(l, last) = &t.condition.prop else {
        panic!()
    };
    let Prop::And(a, b) = &**l else { panic!() };
    assert_eq!(
        **a,
        cmp(CmpOp::Eq, r(0, "EAX"), Term::Const(Value::Addr(x)))
    );
    assert_eq!(
        **b,
        cmp(CmpOp::Eq, r(0, "EAX"), Term::Const(Value::Addr(y)))
    );
    assert_eq!(**last, cmp(CmpOp::Eq, Term::Loc(x), c(2)));

    // A quantifier alone means `true`; locations clause first.
    let t = parse(&src("locations [x; 1:EBX; [y];]\nexists\n<< junk >>"));
    assert_eq!(t.condition.prop, Prop::True);
    assert_eq!(t.observed.len(), 3);
    assert_eq!(t.observed[1], r(1, "EBX"));

    // Other comparisons and a multi-line proposition.
    let t = parse(&src(
        "exists\n(0:EAX >= 1 /\\\n 0:EAX < 3 /\\ 0:EAX <= 2 /\\ 0:EAX > -1)",
    ));
    let mut ops = Vec::new();
    let mut p = &t.condition.prop;
    while let Prop::And(l, rr) = p {
        if let Prop::Cmp(op, _, _) = &**rr {
            ops.push(*op);
        }
        p = l;
    }
    if let Prop::Cmp(op, _, _) = p {
        ops.push(*op);
    }
    assert_eq!(ops, [CmpOp::Gt, CmpOp::Le, CmpOp::Lt, CmpOp::Ge]);
}

#[test]
fn instruction_text_and_positions() {
    let t = parse(
        "PTX t\n{ }\n P0@cta 0,gpu 0 |   P1@cta 0,gpu 0 ;\n\tst.weak  x, 1 |   ld.weak r0,x ;\n  | ;\nexists (x == 1)\n",
    );
    let i = &t.threads[0].code[0];
    assert_eq!(i.text, "st.weak  x, 1");
    assert_eq!(i.pos, Pos { line: 4, col: 2 });
    let i = &t.threads[1].code[0];
    assert_eq!(i.text, "ld.weak r0,x");
    assert_eq!(i.pos, Pos { line: 4, col: 20 });
    assert_eq!(t.threads[0].code.len(), 1);
}

#[test]
fn parse_file_sets_the_path_and_reports_io_errors() {
    let dir = std::env::temp_dir().join(format!("litmix-frontend-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("SB.litmus");
    std::fs::write(&path, "X86 SB\n{ }\n P0 | P1 ;\n MOV [x],$1 | MOV [y],$1 ;\n MOV EAX,[y] | MOV EAX,[x] ;\nexists (0:EAX=0 /\\ 1:EAX=0)\n").unwrap();
    let t = litmix::litmus::parse_file(&path).unwrap();
    assert_eq!(t.file.as_deref(), Some(path.as_path()));
    assert_eq!(t.name, "SB");
    let d = litmix::litmus::parse_file(&dir.join("missing.litmus")).unwrap_err();
    assert!(d.message.contains("cannot read file"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn crlf_line_endings_and_byte_order_mark() {
    let src = "\u{feff}X86 SB\r\n\"doc\"\r\nCycle=x\r\n{ x=0; }\r\n P0 | P1 ;\r\n MOV [x],$1 | MOV EAX,[x] ;\r\nexists (1:EAX=0)\r\n<<\r\n>>\r\n";
    let t = parse(src);
    assert_eq!(t.name, "SB");
    assert_eq!(t.threads[1].code[0].text, "MOV EAX,[x]");
    assert_eq!(t.threads[1].code[0].pos, Pos { line: 6, col: 15 });
}

#[test]
fn ptx_proxy_instructions() {
    // The seed 002 (Fig. 8) spellings and the Dat3M / NVLitmus ones.
    let t = parse(
        "PTX t\n{ x=0; rd2 @ constant aliases x; s @ surface aliases x; tx @ texture aliases x; }\n\
         P0@cta 0,gpu 0 ;\n\
         sust.b.1d.vec.b32.clamp [s, r1], 42 ;\n\
         fence.proxy.surface ;\n\
         fence.proxy.constant ;\n\
         ld.const.u32 r3, [rd2] ;\n\
         ldc r4, [rd2] ;\n\
         cold.weak r5, rd2 ;\n\
         suld.b.1d.b32.trap r6, [s, {r1}] ;\n\
         tld r7, [tx] ;\n\
         tex.1d.v4.s32.f32 r8, [tx, {r1}] ;\n\
         suatom.add.relaxed.gpu r9, [s], 1 ;\n\
         sured.add.relaxed.gpu [s], 1 ;\n\
         fence.proxy.alias ;\n\
         fence.alias ;\n\
         fence.proxy.texture ;\n\
         exists (x == 1)\n",
    );
    let s = t.location("s").unwrap();
    let rd2 = t.location("rd2").unwrap();
    let tx = t.location("tx").unwrap();
    assert_eq!(
        kinds(&t, 0)[0],
        InstrKind::Store {
            addr: Address::Loc(s),
            src: imm(42)
        }
    );
    assert_eq!(
        kinds(&t, 0)[3],
        InstrKind::Load {
            dst: "r3".into(),
            addr: Address::Loc(rd2)
        }
    );
    assert_eq!(
        kinds(&t, 0)[8],
        InstrKind::Load {
            dst: "r8".into(),
            addr: Address::Loc(tx)
        }
    );
    assert!(matches!(kinds(&t, 0)[10], InstrKind::Rmw { dst: None, .. }));
    assert_eq!(
        tags(&t, 0),
        vec![
            vec!["PTX", "WEAK", "SURFACE"],
            vec!["PTX", "PROXY", "SURFACE"],
            vec!["PTX", "PROXY", "CONSTANT"],
            vec!["PTX", "WEAK", "CONSTANT"],
            vec!["PTX", "WEAK", "CONSTANT"],
            vec!["PTX", "WEAK", "CONSTANT"],
            vec!["PTX", "WEAK", "SURFACE"],
            vec!["PTX", "WEAK", "TEXTURE"],
            vec!["PTX", "WEAK", "TEXTURE"],
            vec!["PTX", "RLX", "GPU", "SURFACE"],
            vec!["PTX", "RLX", "GPU", "SURFACE"],
            vec!["PTX", "PROXY", "ALIAS"],
            vec!["PTX", "PROXY", "ALIAS"],
            vec!["PTX", "PROXY", "TEXTURE"],
        ]
    );
    // Plain generic accesses carry no proxy tag (the executor adds GENERIC).
    let g =
        parse("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.global.u32 r0, [x] ;\nexists (x == 1)\n");
    assert_eq!(tags(&g, 0), vec![vec!["PTX", "WEAK"]]);
}
