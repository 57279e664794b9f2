//! The C / OpenCL front end: oracle files, IR shape and tags, semantics of
//! the compiled code, diagnostics.

use std::path::{Path, PathBuf};

use litmix::exec::{CheckOptions, check};
use litmix::ir::{InstrKind, ScopeLevel, Test, Value};
use litmix::litmus::{parse_file, parse_str};

fn oracle_dir(sub: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    ["..", "../.."]
        .iter()
        .map(|up| root.join(up).join("shared/oracles/dat3m").join(sub))
        .find(|d| d.is_dir())
}

fn litmus_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "litmus") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every C11 and OPENCL oracle file parses, except those using a feature
/// reported as unsupported (none today).
#[test]
fn oracle_c_and_opencl_files_parse() {
    for (sub, min, unsupported_max) in [("C11", 21, 0), ("OPENCL", 40, 0)] {
        let Some(dir) = oracle_dir(sub) else {
            println!("skipping: oracle folder {sub} is absent");
            continue;
        };
        let files = litmus_files(&dir);
        assert!(files.len() >= min, "only {} files in {sub}", files.len());
        let mut unsupported = Vec::new();
        for f in &files {
            if let Err(d) = parse_file(f) {
                let r = d.render();
                assert!(r.contains("unsupported"), "{r}");
                unsupported.push(r);
            }
        }
        assert!(
            unsupported.len() <= unsupported_max,
            "{sub}: {unsupported:?}"
        );
    }
}

fn parse(src: &str) -> Test {
    parse_str("t.litmus", src).unwrap_or_else(|d| panic!("{}", d.render()))
}

fn tags(t: &Test, th: usize, i: usize) -> Vec<&str> {
    t.threads[th].code[i]
        .tags
        .iter()
        .map(String::as_str)
        .collect()
}

#[test]
fn opencl_tags_placement_and_parameters() {
    let t = parse(
        "OpenCL t\n{ [x]=0; [y]=0; }\n\
         P0@wg 1, dev 0 (global int* x, local atomic_int* y) {\n\
           *x = 1;\n\
           atomic_store_explicit(y, 1, memory_order_release, memory_scope_work_group);\n\
         }\n\
         P1@cta 0,gpu 1 (global int* x, volatile int* z) {\n\
           int r0 = atomic_load(x);\n\
           atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE, memory_order_acq_rel, memory_scope_device);\n\
           int r1 = *z;\n\
           barrier(CLK_LOCAL_MEM_FENCE);\n\
         }\n\
         exists (0:x=0 /\\ 1:r0=1)\n",
    );
    assert_eq!(t.arch, "OpenCL");
    let lvl = |l: &str, id| ScopeLevel {
        level: l.into(),
        id,
    };
    assert_eq!(t.threads[0].placement, vec![lvl("dev", 0), lvl("wg", 1)]);
    assert_eq!(t.threads[1].placement, vec![lvl("dev", 1), lvl("wg", 0)]);
    let x = t.location("x").unwrap();
    // Parameters are registers holding the location's address.
    assert!(
        t.threads[0]
            .reg_init
            .contains(&("x".into(), Value::Addr(x)))
    );
    // x is atomic: P1 loads it atomically (so no NAL on P0's plain store).
    assert_eq!(tags(&t, 0, 0), vec!["C", "NA", "GLOBAL"]);
    assert_eq!(tags(&t, 0, 1), vec!["C", "REL", "WG", "LOCAL"]);
    assert_eq!(
        t.threads[0].code[1].text,
        "atomic_store_explicit(y, 1, memory_order_release, memory_scope_work_group)"
    );
    // Default order seq_cst, default OpenCL scope device.
    assert_eq!(tags(&t, 1, 0), vec!["C", "SC", "DEV", "GLOBAL"]);
    assert_eq!(
        tags(&t, 1, 1),
        vec!["C", "ACQ_REL", "DEV", "GLOBAL", "LOCAL"]
    );
    // Volatile: still a non-atomic access (no inter-thread guarantee), on
    // a non-atomic location.
    assert_eq!(tags(&t, 1, 2), vec!["C", "NA", "VOL", "GLOBAL", "NAL"]);
    assert!(matches!(
        t.threads[1].code[3].kind,
        InstrKind::Barrier { .. }
    ));
    assert_eq!(tags(&t, 1, 3), vec!["C", "WG", "LOCAL"]);
}

#[test]
fn c_defaults_nal_and_remote() {
    let t = parse(
        "C t\n{}\n\
         P0 (int* x, atomic_int* y) {\n\
           *x = 1;\n\
           atomic_store_explicit(y, 1, memory_order_release, memory_scope_device, remote);\n\
           atomic_thread_fence(memory_order_seq_cst);\n\
         }\n\
         exists (x=1)\n",
    );
    assert_eq!(t.arch, "C");
    assert_eq!(tags(&t, 0, 0), vec!["C", "NA", "GLOBAL", "NAL"]);
    assert_eq!(tags(&t, 0, 1), vec!["C", "REL", "DEV", "REMOTE", "GLOBAL"]);
    assert_eq!(tags(&t, 0, 2), vec!["C", "SC", "SYS", "GLOBAL", "LOCAL"]);
    // No placement: device 0, a work-group of its own.
    assert_eq!(t.threads[0].placement[0].level, "dev");
    assert_eq!(t.threads[0].placement[1].level, "wg");
}

/// Final values of `0:r` in every allowed execution of a one-thread
/// program under SC.
fn final_values(body: &str, reg: &str) -> Vec<String> {
    let src = format!(
        "C t\n{{ [x]=0; [y]=5; }}\nP0 (atomic_int* x, int* y) {{\n{body}\n}}\nexists (0:{reg}=0)\n"
    );
    let t = parse(&src);
    let model = litmix::models::load("sc").unwrap();
    let r = check(&t, &model, &CheckOptions::default()).unwrap();
    r.states
        .keys()
        .map(|s| format!("{:?}", s))
        .collect::<Vec<_>>()
}

fn single(body: &str, reg: &str) -> i64 {
    let v = final_values(body, reg);
    assert_eq!(v.len(), 1, "{body}: {v:?}");
    let s = &v[0];
    s.trim_start_matches("[Int(")
        .trim_end_matches(")]")
        .parse()
        .unwrap_or_else(|_| panic!("{s}"))
}

#[test]
fn expressions_and_control_flow() {
    assert_eq!(single("int r = 2 * 3 + 4 - 1;", "r"), 9);
    assert_eq!(
        single("int a = 7; int r = a & 3 | 8 ^ 1;", "r"),
        3 | (8 ^ 1)
    );
    assert_eq!(
        single("int a = 1; int r = (a == 1) + (a != 1) * 10;", "r"),
        1
    );
    assert_eq!(
        single(
            "int a = 2; int r = 0; if (a > 1 && !(a >= 3) || a == 0) { r = 5; } else { r = 6; }",
            "r"
        ),
        5
    );
    assert_eq!(
        single(
            "int a = 0; int r = 0; if (a) r = 1; else if (!a) r = 2;",
            "r"
        ),
        2
    );
    assert_eq!(single("int r = -3; r += 5; r--; r++; r -= 2;", "r"), 0);
    // Loops unroll; these need no more than the default bound of 2.
    assert_eq!(single("int r = 0; while (r < 2) { r = r + 1; }", "r"), 2);
    assert_eq!(single("int r = 0; do { r++; } while (r < 2);", "r"), 2);
    assert_eq!(
        single(
            "int r = 0; int i; for (i = 0; i < 2; i++) { r += 10; }",
            "r"
        ),
        20
    );
    // Memory: plain and atomic accesses, RMWs return the old value.
    assert_eq!(single("int r = *y;", "r"), 5);
    assert_eq!(single("*y = 7; int r = *y + 1;", "r"), 8);
    assert_eq!(
        single(
            "atomic_store(x, 3); int r = atomic_fetch_add(x, 2); r = r * 10 + atomic_load(x);",
            "r"
        ),
        35
    );
    assert_eq!(
        single(
            "int r = atomic_exchange_explicit(x, 4, memory_order_relaxed); r = atomic_load(x);",
            "r"
        ),
        4
    );
    assert_eq!(
        single(
            "int r = atomic_fetch_sub_explicit(x, 1, memory_order_acq_rel, memory_scope_work_group); r = atomic_load(x);",
            "r"
        ),
        -1
    );
    // if (atomic_load(...) == v) as in the OpenCL tests.
    assert_eq!(
        single(
            "int r = -1; if (atomic_load_explicit(x, memory_order_acquire) == 0) r = 1;",
            "r"
        ),
        1
    );
}

/// `goto` and labels: jumps forward and backward, `if (c) goto L;` as one
/// conditional branch, and herd's barrier labels still accepted.
#[test]
fn goto_and_labels() {
    assert_eq!(
        single("int r = 0; goto skip; r = 1; skip: r = r + 10;", "r"),
        10
    );
    assert_eq!(single("int r = 0; top: r++; if (r < 2) goto top;", "r"), 2);
    assert_eq!(
        single("int r = *y; if (r == 5) goto five; r = 0; five: ;", "r"),
        5
    );
    let t = parse(
        "C t\n{}\nP0 (int* x) {\n  int r = *x;\n  if (r == 1) goto L;\n  *x = 2;\n  L: ;\n}\nexists (0:r=0)\n",
    );
    let kinds: Vec<&InstrKind> = t.threads[0].code.iter().map(|i| &i.kind).collect();
    assert_eq!(kinds.len(), 4, "{kinds:?}");
    assert!(
        matches!(kinds[1], InstrKind::Branch { target, .. } if target == "L"),
        "{kinds:?}"
    );
    assert!(
        matches!(kinds[3], InstrKind::Label(l) if l == "L"),
        "{kinds:?}"
    );
}

#[test]
fn arrays() {
    let run = |body: &str| -> Vec<String> {
        let src = format!(
            "C t\n{{ atomic_int a[3] = {{4, 5}}; int b[2]; }}\nP0 (atomic_int* a, int* b) {{\n{body}\n}}\nexists (0:r=0)\n"
        );
        let t = parse(&src);
        assert_eq!(
            t.location("a[2]").map(|l| t.locations[l].init),
            Some(Value::Int(0))
        );
        let model = litmix::models::load("sc").unwrap();
        let r = check(&t, &model, &CheckOptions::default()).unwrap();
        r.states.keys().map(|s| format!("{s:?}")).collect()
    };
    assert_eq!(run("int r = a[1] * 10 + *(a + 0);"), vec!["[Int(54)]"]);
    assert_eq!(
        run(
            "b[1] = 2; int i = b[1] - 1; atomic_store(a + i, 7); int r = atomic_load(&a[0]) * 0 + a[1];"
        ),
        vec!["[Int(7)]"]
    );
    // An index read from memory selects the element at run time.
    assert_eq!(
        run(
            "atomic_store(a + 2, 1); int i = atomic_load(a + 2); int r = atomic_load_explicit(a + i, memory_order_relaxed);"
        ),
        vec!["[Int(5)]"]
    );
    let e = err("C t\n{ int a[2]; }\nP0 (int* a) {\n  int r = a[2];\n}\nexists (0:r=0)\n");
    assert!(e.contains("4:13") && e.contains("out of bounds"), "{e}");
    let e = err("C t\n{ int a; }\nP0 (int* a) {\n  int r = a[1];\n}\nexists (0:r=0)\n");
    assert!(e.contains("unsupported pointer arithmetic"), "{e}");
}

#[test]
fn compare_exchange_updates_expected() {
    // Success: x becomes 1, e unchanged, result 1.
    assert_eq!(
        single(
            "int e = 0; int s = atomic_compare_exchange_strong(x, &e, 1); int r = s * 100 + e * 10 + atomic_load(x);",
            "r"
        ),
        101
    );
    // Failure: x stays 3, e gets 3, result 0.
    assert_eq!(
        single(
            "atomic_store(x, 3); int e = 0; int s = atomic_compare_exchange_weak(x, &e, 1); int r = s * 100 + e * 10 + atomic_load(x);",
            "r"
        ),
        33
    );
    // Expected in memory (y = 5): failure writes the old value into y.
    assert_eq!(
        single(
            "int s = atomic_compare_exchange_strong_explicit(x, y, 1, memory_order_seq_cst, memory_order_relaxed); int r = s * 100 + *y;",
            "r"
        ),
        0
    );
}

fn err(src: &str) -> String {
    parse_str("t.litmus", src)
        .map(|_| String::new())
        .unwrap_or_else(|d| d.render())
}

#[test]
fn diagnostics_point_at_the_problem() {
    let e = err("C t\n{}\nP0 (int* x) {\n  int r = *x / 2;\n}\nexists (0:r=0)\n");
    assert!(e.contains("t.litmus:4:14"), "{e}");
    assert!(e.contains("unsupported operator '/'"), "{e}");
    let e = err("C t\n{}\nP0 (int* x) {\n  return;\n}\nexists (0:r=0)\n");
    assert!(
        e.contains("4:3") && e.contains("unsupported statement 'return'"),
        "{e}"
    );
    let e = err("C t\n{}\nP0 (int* x) {\n  int r = 0;\n  goto out;\n}\nexists (0:r=0)\n");
    assert!(
        e.contains("5:3") && e.contains("no label 'out' in this thread"),
        "{e}"
    );
    let e = err("C t\n{}\nP0 (int* x) {\n  L: *x = 1;\n  L: *x = 2;\n}\nexists (0:r=0)\n");
    assert!(
        e.contains("5:3") && e.contains("label 'L' is defined twice (first at 4:3)"),
        "{e}"
    );
    let e = err("C t\n{}\nP0 (int* x) {\n  foo(x);\n}\nexists (0:r=0)\n");
    assert!(e.contains("unsupported function 'foo'"), "{e}");
    let e = err("C t\n{}\nP0 (int x) {\n}\nexists (0:r=0)\n");
    assert!(e.contains("unsupported parameter"), "{e}");
    let e = err(
        "C t\n{}\nP0 (atomic_int* x) {\n  atomic_store_explicit(x, 1, memory_order_bogus);\n}\nexists (x=0)\n",
    );
    assert!(
        e.contains("4:31") && e.contains("unknown memory order"),
        "{e}"
    );
    assert!(e.contains("expected"), "{e}");
    let e = err(
        "C t\n{}\nP0 (atomic_int* x) {\n  atomic_store_explicit(x, 1, memory_order_relaxed, memory_scope_device, far);\n}\nexists (x=0)\n",
    );
    assert!(e.contains("'remote' or 'non_remote'"), "{e}");
    let e = err("C t\n{}\nP0 (atomic_int* x) {\n  x = 1;\n}\nexists (x=0)\n");
    assert!(
        e.contains("unsupported: assignment to the pointer parameter"),
        "{e}"
    );
    let e = err("C t\n{}\nP1 (atomic_int* x) {\n}\nexists (x=0)\n");
    assert!(e.contains("P0"), "{e}");
    let e = err("C t\n{}\nP0@wg 0, blk 1 (atomic_int* x) {\n}\nexists (x=0)\n");
    assert!(e.contains("unknown scope level 'blk'"), "{e}");
    let e = err("C t\n{}\nP0 (atomic_int* x) {\n  int r = 1\n}\nexists (x=0)\n");
    assert!(e.contains("';'"), "{e}");
    let e = err("C t\n{}\nP0 (atomic_int* x) {\n  int r = 1;\n");
    assert!(e.contains("end of file"), "{e}");
}

/// Cutting a valid test anywhere gives a diagnostic or a test, never a panic.
#[test]
fn truncated_inputs_do_not_panic() {
    let src = "OpenCL t\n(* c *)\n{ [x]=0; [y]=0; 0:r9=2; }\n\
        P0@wg 0, dev 0 (global int* x, global atomic_int* y) {\n\
          *x = 42; // payload\n\
          /* flag */ atomic_store_explicit(y, 1, memory_order_release, memory_scope_device, remote);\n\
          B1: barrier(CLK_GLOBAL_MEM_FENCE);\n\
        }\n\
        P1@wg 1, dev 0 (global int* x, global atomic_int* y) {\n\
          int r1 = -1; int e = 0;\n\
          int r0 = atomic_compare_exchange_strong(y, &e, 2);\n\
          while (r0 != 1 && e < 3) { r0 = atomic_load(y); e++; }\n\
          if (r0 == 1) { r1 = *x; } else { r1 = (r0 > 1) || !e; }\n\
        }\n\
        exists (1:r0=1 /\\ 1:r1=0)\n";
    assert!(parse_str("t", src).is_ok());
    for (i, _) in src.char_indices() {
        let _ = parse_str("t", &src[..i]);
    }
}

/// Deep nesting is refused with a diagnostic, not a stack overflow.
#[test]
fn deep_nesting_is_refused() {
    for (open, close) in [("L: ", ""), ("{ ", "}"), ("if (1) ", ""), ("!", "")] {
        let body = if open == "!" {
            format!("int r = {}1;", open.repeat(5000))
        } else {
            format!("{}int r = 1;{}", open.repeat(5000), close.repeat(5000))
        };
        let e = err(&format!(
            "C t\n{{}}\nP0 (int* x) {{\n{body}\n}}\nexists (0:r=0)\n"
        ));
        assert!(e.contains("nesting is too deep"), "{open}: {e}");
    }
    let e = err(&format!(
        "C t\n{{}}\nP0 (int* x) {{\nint r = {}1{};\n}}\nexists (0:r=0)\n",
        "(".repeat(5000),
        ")".repeat(5000)
    ));
    assert!(e.contains("nesting is too deep"), "{e}");
}
