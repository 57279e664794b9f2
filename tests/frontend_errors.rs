//! One test per class of front-end error: position, message, expectation.

use litmix::diag::Diagnostic;
use litmix::litmus::parse_str;

#[track_caller]
fn err(src: &str) -> Diagnostic {
    match parse_str("t.litmus", src) {
        Ok(t) => panic!("expected an error, parsed {t:#?}"),
        Err(d) => d,
    }
}

/// Asserts position, a message fragment and an expectation fragment.
#[track_caller]
fn check(src: &str, line: u32, col: u32, msg: &str, expected: &str) {
    let d = err(src);
    assert_eq!(
        (d.pos.line, d.pos.col),
        (line, col),
        "wrong position for: {}",
        d.render()
    );
    assert!(d.message.contains(msg), "message: {}", d.render());
    let exp = d.expected.clone().unwrap_or_default();
    assert!(exp.contains(expected), "expected-part: {}", d.render());
    assert_eq!(d.file, "t.litmus");
    // The rendered form carries the source line.
    assert!(d.line_text.is_some() || d.pos.line > src.lines().count() as u32);
}

/// A PTX test around one cell of thread P0 (line 4, column 2).
fn ptx_with(instr: &str) -> String {
    format!("PTX t\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n {instr} ;\nexists (x == 1)\n")
}

fn x86_with(instr: &str) -> String {
    format!("X86 t\n{{ x=0; }}\n P0 ;\n {instr} ;\nexists (x = 1)\n")
}

#[test]
fn unknown_architecture() {
    check(
        "ARM t\n{}\n",
        1,
        1,
        "unsupported architecture 'ARM'",
        "PTX, X86",
    );
    check("  \n  riscv t\n", 2, 3, "'riscv'", "PTX, X86");
}

#[test]
fn empty_file_and_missing_name() {
    check("", 1, 1, "empty file", "header line");
    check("PTX\n{ }\n", 1, 4, "missing test name", "test name");
}

#[test]
fn bad_preamble_line() {
    check(
        "PTX t\n\"doc\"\nCycle=a b\nhello world\n{}\n",
        4,
        1,
        "'hello'",
        "Key=Value",
    );
    check("PTX t\n\"doc\n", 2, 1, "unterminated string", "'\"'");
    check(
        "PTX t\n\"doc\"\n",
        3,
        1,
        "unexpected end of file",
        "init block",
    );
    check(
        "PTX t\n(* never closed\n",
        2,
        1,
        "unterminated comment",
        "'*)'",
    );
}

#[test]
fn init_block_errors() {
    check("PTX t\n{ x 0; }\n", 2, 5, "unexpected '0'", "'='");
    check(
        "PTX t\n{ x=0; y= ; }\n",
        2,
        11,
        "unexpected ';'",
        "initial value",
    );
    check(
        "PTX t\n{ x=0; x=1; }\n P0@cta 0,gpu 0 ;\n",
        2,
        8,
        "initialised twice",
        "one init entry",
    );
    check("PTX t\n{ x=0 y=1 }\n", 2, 7, "unexpected 'y'", "';' or '}'");
    check(
        "PTX t\n{ x=0;\n",
        3,
        1,
        "end of file in the init block",
        "'}'",
    );
    check(
        "PTX t\n{ x=0; P3:r0=1; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n",
        2,
        8,
        "unknown thread P3",
        "P0 to P1",
    );
    check(
        "X86 t\n{ 0:FOO=1; }\n P0 ;\n",
        2,
        3,
        "'FOO' is not a register",
        "x86 register",
    );
    check(
        "PTX t\n{ P0:r1=0; P0:r1=2; }\n P0@cta 0,gpu 0 ;\n",
        2,
        12,
        "P0:r1 is initialised twice",
        "one init entry",
    );
    check(
        "PTX t\n{ Q0:r1=0; }\n",
        2,
        3,
        "'Q0' is not a thread name",
        "P0",
    );
}

#[test]
fn proxy_alias_errors() {
    let with_init = |init: &str| {
        format!("PTX t\n{{\n{init}\n}}\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\nexists (x == 1)\n")
    };
    check(
        &with_init("x = 0;\ny @ global aliases x;"),
        4,
        5,
        "unknown proxy kind 'global'",
        "generic, surface, texture or constant",
    );
    check(
        &with_init("x = 0;\ny @ generic copies x;"),
        4,
        13,
        "unexpected 'copies'",
        "'aliases'",
    );
    check(
        &with_init("x = 0;\nx @ generic aliases x;"),
        4,
        21,
        "cannot alias itself",
        "aliasing another location",
    );
    check(
        &with_init("y @ generic aliases x;\nx @ surface aliases y;"),
        4,
        21,
        "cycle",
        "aliasing another location",
    );
    check(
        &with_init("x = 0;\ny = 1;\ny @ generic aliases x;"),
        5,
        1,
        "initialised twice",
        "one declaration per location",
    );
    check(
        &with_init("x = 0;\nP0:r0 @ generic aliases x;"),
        4,
        7,
        "only a location can be declared an alias",
        "'='",
    );
}

#[test]
fn bad_numbers() {
    check("PTX t\n{ x=12ab; }\n", 2, 5, "bad number '12ab'", "integer");
    check(
        &ptx_with("st.weak x, 0x"),
        4,
        13,
        "bad number '0x'",
        "integer",
    );
    check(
        "PTX t\n{ x=123456789012345678901234; }\n",
        2,
        5,
        "out of range",
        "64 bits",
    );
}

#[test]
fn thread_header_errors() {
    check(
        "PTX t\n{}\n Q0 | P1 ;\n",
        3,
        2,
        "'Q0' is not a thread name",
        "P0@cta 0,gpu 0",
    );
    check(
        "PTX t\n{}\n | P1 ;\n",
        3,
        2,
        "unexpected end of instruction",
        "thread header",
    );
    check(
        "PTX t\n{}\n P1 | P0 ;\n",
        3,
        2,
        "thread P1 in column 1",
        "P0",
    );
    check(
        "PTX t\n{}\n P0@cta 0,foo 1 ;\n",
        3,
        11,
        "unknown scope level 'foo'",
        "sys, gpu or cta",
    );
    check(
        "PTX t\n{}\n P0@cta ;\n",
        3,
        5,
        "missing instance number",
        "cta 0",
    );
    check(
        "PTX t\n{}\n P0@cta 0,cta 1 ;\n",
        3,
        11,
        "given twice",
        "once",
    );
    check(
        "X86 t\n{}\n P0@cta 0 ;\n",
        3,
        5,
        "take no scope placement",
        "'|' or ';'",
    );
    check(
        "PTX t\n{}\n P0@cta 0 gpu 0 ;\n",
        3,
        11,
        "unexpected 'gpu'",
        "','",
    );
}

#[test]
fn missing_thread_table() {
    check(
        "PTX t\n{ x=0; }\nexists (x == 0)\n",
        3,
        1,
        "missing thread table, found 'exists'",
        "P0@cta 0,gpu 0",
    );
    check(
        "PTX t\n{ x=0; }\n",
        3,
        1,
        "missing thread table, found end of file",
        "thread header",
    );
}

#[test]
fn column_count_mismatch() {
    let src = "PTX t\n{}\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n st.weak x, 1 ;\nexists (x == 1)\n";
    check(
        src,
        4,
        2,
        "row has 1 column but the table header has 2",
        "2 cells",
    );
    let src = "X86 t\n{}\n P0 ;\n MOV [x],$1 | MFENCE | ;\nexists (x = 1)\n";
    check(src, 4, 2, "row has 3 columns", "1 cells");
}

#[test]
fn missing_row_terminator() {
    // Before the condition.
    let src = "PTX t\n{}\n P0@cta 0,gpu 0 ;\n st.weak x, 1\nexists (x == 1)\n";
    check(src, 4, 14, "missing ';'", "'|' or ';'");
    // Before another row.
    let src = "PTX t\n{}\n P0@cta 0,gpu 0 ;\n st.weak x, 1\n st.weak x, 2 ;\nexists (x == 1)\n";
    check(src, 4, 14, "missing ';'", "'|' or ';'");
}

#[test]
fn truncated_files() {
    check(
        "PTX t\n{}\n P0@cta 0,gpu 0 | P1",
        3,
        21,
        "end of file in the thread table header",
        "'|' or ';'",
    );
    check(
        "PTX t\n{}\n P0@cta 0,gpu 0 ;\n st.weak x,",
        4,
        12,
        "end of file in a thread table row",
        "'|' or ';'",
    );
    check(
        "PTX t\n{}\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\n",
        5,
        1,
        "missing final condition",
        "exists",
    );
    check(
        "PTX t\n{}\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\nexists (x == ",
        5,
        14,
        "unexpected end of file",
        "register",
    );
    check(
        "PTX t\n{}\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\nexists (x == 1",
        5,
        15,
        "end of file",
        "')'",
    );
}

#[test]
fn condition_errors() {
    let table = "PTX t\n{}\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n ld.weak r0, x | st.weak x, 1 ;\n";
    check(
        &format!("{table}exists (P7:r0 == 1)\n"),
        5,
        9,
        "unknown thread P7",
        "P0 to P1",
    );
    check(
        &format!("{table}exists (7:r0 = 1)\n"),
        5,
        9,
        "unknown thread P7",
        "P0 to P1",
    );
    check(
        &format!("{table}exists (P0:r0 1)\n"),
        5,
        15,
        "unexpected '1'",
        "comparison",
    );
    check(
        &format!("{table}~forall (x = 1)\n"),
        5,
        2,
        "unexpected 'forall'",
        "'exists' after '~'",
    );
    check(
        &format!("{table}maybe (x = 1)\n"),
        6,
        1,
        "row starts at 5:1",
        "'exists'",
    );
    check(
        &format!("{table}exists (x = 1) junk\n"),
        5,
        16,
        "unexpected 'junk' after the condition",
        "end of the condition",
    );
    check(
        &format!("{table}exists (x = 1 /\\ )\n"),
        5,
        18,
        "unexpected ')'",
        "register",
    );
    check(
        &format!("{table}exists (Q1:r0 = 1)\n"),
        5,
        9,
        "'Q1' is not a thread name",
        "P0",
    );
    check(
        &format!("{table}filter (x = 1)\nexists (x = 1)\n"),
        5,
        1,
        "unsupported 'filter' clause",
        "exists",
    );
    check(
        &format!("{table}locations [x; 3;]\nexists (x = 1)\n"),
        5,
        15,
        "constant cannot be observed",
        "location",
    );
    let x86 = "X86 t\n{}\n P0 ;\n MOV EAX,[x] ;\n";
    check(
        &format!("{x86}exists (0:FOO = 1)\n"),
        5,
        11,
        "'FOO' is not a register",
        "x86 register",
    );
}

#[test]
fn scope_tree_errors() {
    let table = "PTX t\n{}\n P0 | P1 ;\n ld.weak r0, x | st.weak x, 1 ;\n";
    check(
        &format!("{table}scopes: (sys (gpu (cta P0) (cta P0)))\nexists (x = 1)\n"),
        5,
        33,
        "P0 appears twice",
        "each thread once",
    );
    check(
        &format!("{table}scopes: (sys (gpu (cta P0 P5)))\nexists (x = 1)\n"),
        5,
        27,
        "unknown thread P5",
        "P0 to P1",
    );
    check(
        &format!("{table}scopes: (sys (cta (gpu P0 P1)))\nexists (x = 1)\n"),
        5,
        20,
        "'gpu' is misplaced",
        "sys > gpu > cta",
    );
    check(
        &format!("{table}scopes: (sys (warp P0 P1))\nexists (x = 1)\n"),
        5,
        15,
        "unknown scope level 'warp'",
        "sys, gpu or cta",
    );
    check(
        &format!("{table}scopes: P0\nexists (x = 1)\n"),
        5,
        9,
        "unexpected 'P0'",
        "scope tree",
    );
}

#[test]
fn unsupported_ptx_instructions() {
    check(
        &ptx_with("sust.foo x, 1"),
        4,
        7,
        "unknown qualifier '.foo' for 'sust'",
        ".weak",
    );
    check(
        &ptx_with("fence.proxy.async"),
        4,
        14,
        "unsupported proxy kind '.async'",
        ".alias, .surface, .texture or .constant",
    );
    check(
        &ptx_with("fence.proxy"),
        4,
        13,
        "'fence.proxy' needs a proxy kind",
        ".alias",
    );
    check(
        &ptx_with("fence.proxy.alias.cta"),
        4,
        20,
        "unexpected qualifier '.cta'",
        "one proxy kind",
    );
    check(
        &ptx_with("tld.relaxed.gpu r0, x"),
        4,
        6,
        "'.relaxed' is not a valid semantics for 'tld'",
        ".weak",
    );
    check(
        &ptx_with("st.const x, 1"),
        4,
        5,
        "the constant state space is read-only",
        "st.global",
    );
    check(
        &ptx_with("suld.weak r0, 1"),
        4,
        16,
        "'suld' needs a memory operand",
        "a location",
    );
    check(
        &ptx_with("bar.cta.red.popc.u32 r0, 0, 1"),
        4,
        10,
        "unsupported instruction 'bar.red'",
        "bar.sync",
    );
    check(&ptx_with("@p ld.weak r0, x"), 4, 2, "predicated", "ld");
    check(
        &ptx_with("ld.weak r0, [x+4]"),
        4,
        16,
        "address offsets",
        "']'",
    );
}

#[test]
fn ptx_qualifier_errors() {
    check(
        &ptx_with("ld.acquire.xyz r0, x"),
        4,
        13,
        "unknown scope '.xyz'",
        ".cta, .gpu or .sys",
    );
    check(
        &ptx_with("ld.relaxed r0, x"),
        4,
        5,
        "'.relaxed' needs a scope",
        ".cta, .gpu or .sys",
    );
    check(
        &ptx_with("st.release x, 1"),
        4,
        5,
        "'.release' needs a scope",
        ".cta, .gpu or .sys",
    );
    check(
        &ptx_with("ld.weak.gpu r0, x"),
        4,
        10,
        "'.weak' takes no scope",
        "without a scope",
    );
    check(
        &ptx_with("ld.volatile.sys r0, x"),
        4,
        14,
        "'.volatile' takes no scope",
        "without a scope",
    );
    check(
        &ptx_with("ld.gpu r0, x"),
        4,
        5,
        "needs a semantics qualifier",
        ".relaxed or .acquire",
    );
    check(
        &ptx_with("ld.release.gpu r0, x"),
        4,
        5,
        "'.release' is not a valid semantics for 'ld'",
        ".weak, .relaxed, .acquire or .volatile",
    );
    check(
        &ptx_with("st.acquire.gpu x, 1"),
        4,
        5,
        "'.acquire' is not a valid semantics for 'st'",
        ".release",
    );
    check(
        &ptx_with("ld.weak.foo r0, x"),
        4,
        10,
        "unknown qualifier '.foo' for 'ld'",
        ".weak",
    );
    check(
        &ptx_with("ld.relaxed.acquire.gpu r0, x"),
        4,
        13,
        "second semantics qualifier",
        "one semantics",
    );
    check(
        &ptx_with("ld.relaxed.cluster r0, x"),
        4,
        13,
        "unsupported scope '.cluster'",
        ".cta, .gpu or .sys",
    );
    check(
        &ptx_with("atom.relaxed.gpu r0, x, 1"),
        4,
        18,
        "'atom' needs an operation",
        ".add, .sub, .exch, .cas",
    );
    check(
        &ptx_with("red.gpu.cas x, 1, 2"),
        4,
        10,
        "unknown qualifier '.cas' for 'red'",
        ".add",
    );
    check(
        &ptx_with("atom.weak.gpu.add r0, x, 1"),
        4,
        7,
        "'.weak' is not a valid semantics for 'atom'",
        ".relaxed",
    );
    check(
        &ptx_with("fence.sc"),
        4,
        8,
        "'fence' needs a scope",
        ".cta, .gpu or .sys",
    );
    check(
        &ptx_with("fence.weak.gpu"),
        4,
        8,
        "'.weak' is not a valid semantics for 'fence'",
        ".sc",
    );
    check(
        &ptx_with("membar.gpu"),
        4,
        9,
        "unknown membar level '.gpu'",
        ".cta, .gl or .sys",
    );
    check(&ptx_with("membar"), 4, 2, "'membar' needs a level", ".gl");
    check(
        &ptx_with("bar.cta 1"),
        4,
        2,
        "'bar' needs an operation",
        "bar.sync",
    );
    check(
        &ptx_with("ld..weak r0, x"),
        4,
        5,
        "empty qualifier",
        "qualifier name",
    );
    check(
        &ptx_with("ld.acquire.gpu 1, x"),
        4,
        17,
        "the destination must be a register",
        "register",
    );
    check(
        &ptx_with("ld.weak foo, x"),
        4,
        10,
        "'foo' is not a register",
        "r<N>",
    );
    check(
        &ptx_with("ld.acquire.gpu r0, 1"),
        4,
        5,
        "register move and takes no '.acquire'",
        "memory operand",
    );
    check(
        &ptx_with("st.weak 1, r0"),
        4,
        10,
        "expected an address",
        "location",
    );
    check(&ptx_with("ld.weak r0 x"), 4, 13, "unexpected 'x'", "','");
    check(
        &ptx_with("ld.weak r0, x, y"),
        4,
        15,
        "unexpected ','",
        "after the instruction",
    );
    check(
        &ptx_with("bar.cta.sync x"),
        4,
        15,
        "a barrier operand must be a number or a register",
        "number",
    );
    check(
        &ptx_with("add r0, [x], 1"),
        4,
        10,
        "cannot be used as a value",
        "register or a number",
    );
}

#[test]
fn labels_must_resolve() {
    check(
        &ptx_with("goto L9"),
        4,
        2,
        "undefined label 'L9' in P0",
        "same thread",
    );
    let src = "PTX t\n{}\n P0@cta 0,gpu 0 ;\n L0: ;\n L0: ;\nexists (x == 1)\n";
    check(src, 5, 2, "label 'L0' defined twice", "distinct");
}

#[test]
fn x86_errors() {
    check(
        &x86_with("LFENCE"),
        4,
        2,
        "unsupported instruction 'LFENCE'",
        "MOV, MFENCE",
    );
    check(
        &x86_with("MOV FOO,[x]"),
        4,
        6,
        "'FOO' is not an x86 register",
        "[FOO]",
    );
    check(
        &x86_with("MOV $1,[x]"),
        4,
        6,
        "destination of MOV cannot be an immediate",
        "register",
    );
    check(
        &x86_with("XCHG EAX,EBX"),
        4,
        7,
        "one memory operand and one register",
        "XCHG [x], EAX",
    );
    check(
        &x86_with("JE L0"),
        4,
        2,
        "'JE' must directly follow a CMP",
        "CMP",
    );
    check(
        &x86_with("ADD [x],1"),
        4,
        6,
        "on memory without LOCK",
        "LOCK ADD",
    );
    check(
        &x86_with("XADD [x],EAX"),
        4,
        2,
        "without LOCK is not supported",
        "LOCK XADD",
    );
    check(
        &x86_with("LOCK MOV [x],EAX"),
        4,
        7,
        "unsupported instruction 'LOCK MOV'",
        "XADD",
    );
    check(
        &x86_with("LOCK XADD EAX,[x]"),
        4,
        12,
        "expected a memory operand",
        "[x]",
    );
    check(
        &x86_with("MOV EAX,[x"),
        4,
        13,
        "unexpected end of instruction",
        "']'",
    );
    check(
        &x86_with("MOV [x],$y"),
        4,
        11,
        "unexpected 'y'",
        "number after '$'",
    );
}

#[test]
fn render_shows_the_line() {
    let d = err(&ptx_with("ld.acquire.xyz r0, x"));
    let r = d.render();
    assert!(
        r.starts_with("t.litmus:4:13: error: unknown scope '.xyz'"),
        "{r}"
    );
    assert!(r.contains("4 |  ld.acquire.xyz r0, x ;"), "{r}");
    assert!(r.ends_with("|             ^"), "{r}");
}
