//! Print → parse round trip over every X86, PTX and X86+PTX oracle test:
//! each test parsed from `../shared/oracles` (herd-style `.litmus` files
//! and NVLitmus `.test` files, every instance), and from litmix's own
//! `examples/` and `tests/`, is printed by
//! `litmix::litmus::print::print_test`, parsed back, and must give the same
//! IR up to source positions, instruction texts and the file name.

use std::path::{Path, PathBuf};

use litmix::ir::{Address, InstrKind, Operand, Prop, RmwOp, Term, Test, Value};
use litmix::litmus::print::print_test;
use litmix::litmus::{parse_file_all, parse_str};

fn oracles() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for up in ["..", "../.."] {
        let d = root.join(up).join("shared/oracles");
        if d.is_dir() {
            return Some(d);
        }
    }
    println!("skipping: ../shared/oracles is absent");
    None
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "litmus" || e == "test") {
            out.push(p);
        }
    }
}

/// The test with what printing does not keep blanked: positions,
/// instruction texts, the file; and register initialisations to 0 dropped
/// (a register starts at 0 either way; the herd-style parser writes one for
/// a register the condition names, the NVLitmus parser does not).
fn normalised(t: &Test) -> Test {
    let mut t = t.clone();
    t.file = None;
    for th in &mut t.threads {
        th.reg_init.retain(|(_, v)| *v != Value::Int(0));
        for i in &mut th.code {
            i.pos = Default::default();
            i.text.clear();
        }
    }
    t
}

/// Where two tests first differ, briefly.
fn first_difference(a: &Test, b: &Test) -> String {
    if a.locations != b.locations {
        return format!("locations {:?} / {:?}", a.locations, b.locations);
    }
    for (x, y) in a.threads.iter().zip(&b.threads) {
        if x.placement != y.placement || x.reg_init != y.reg_init || x.arch != y.arch {
            return format!(
                "P{} header {:?} {:?} / {:?} {:?}",
                x.id, x.placement, x.reg_init, y.placement, y.reg_init
            );
        }
        for (i, j) in x.code.iter().zip(&y.code) {
            if i != j {
                return format!(
                    "P{}: {:?} {:?} / {:?} {:?}",
                    x.id, i.kind, i.tags, j.kind, j.tags
                );
            }
        }
        if x.code.len() != y.code.len() {
            return format!(
                "P{}: {} / {} instructions",
                x.id,
                x.code.len(),
                y.code.len()
            );
        }
    }
    if a.threads.len() != b.threads.len() {
        return "thread count".into();
    }
    if a.condition != b.condition {
        return format!("condition {:?} / {:?}", a.condition, b.condition);
    }
    format!("observed {:?} / {:?}", a.observed, b.observed)
}

/// Prints `t` (parsed from `f`), parses the text back and compares the two
/// after `normalise`: the printed text, `None` for a fuzzer's hostile input
/// refused with a reason (a location named like a register, or not a C
/// name), or what went wrong.
fn round_trip(f: &Path, t: &Test, normalise: fn(&Test) -> Test) -> Result<Option<String>, String> {
    let text = match print_test(t) {
        Ok(s) => s,
        Err(e) if f.components().any(|c| c.as_os_str() == "fuzz-regressions") => {
            assert!(e.contains("would not read back"), "{}: {e}", f.display());
            return Ok(None);
        }
        Err(e) => return Err(format!("{}: not printed: {e}", f.display())),
    };
    let back = parse_str(&t.name, &text).map_err(|d| {
        format!(
            "{}: printed text does not parse:\n{}\n{text}",
            f.display(),
            d.render()
        )
    })?;
    let (a, b) = (normalise(t), normalise(&back));
    if a != b {
        return Err(format!(
            "{}: the reparsed IR differs: {}\n{text}",
            f.display(),
            first_difference(&a, &b)
        ));
    }
    Ok(Some(text))
}

fn no_failures(failures: &[String], tests: usize) {
    assert!(
        failures.is_empty(),
        "{} of {tests} tests fail the round trip:\n{}",
        failures.len(),
        failures
            .iter()
            .take(12)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}

#[test]
fn every_x86_and_ptx_oracle_test_prints_and_parses_back_the_same() {
    let Some(dir) = oracles() else {
        return;
    };
    let mut files = Vec::new();
    walk(&dir, &mut files);
    // litmix's own tests and examples too: they hold the compound X86+PTX
    // tests (the oracles have none) and the fuzzers' regressions.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    walk(&root.join("examples"), &mut files);
    walk(&root.join("tests"), &mut files);
    let (mut tests, mut x86, mut ptx, mut compound) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for f in &files {
        for parsed in parse_file_all(f) {
            // Files the front ends refuse are the front-end tests' business.
            let Ok(t) = parsed else { continue };
            match t.arch.as_str() {
                "X86" => x86 += 1,
                "PTX" => ptx += 1,
                "X86+PTX" => compound += 1,
                _ => continue,
            }
            tests += 1;
            if let Err(e) = round_trip(f, &t, normalised) {
                failures.push(e);
            }
        }
    }
    println!("{tests} tests: {x86} X86, {ptx} PTX, {compound} X86+PTX");
    assert!(
        x86 >= 250 && ptx >= 300 && compound >= 20,
        "{x86} X86, {ptx} PTX, {compound} X86+PTX tests only"
    );
    no_failures(&failures, tests);
}

/// Registers the test does not name (temporaries, locals the condition
/// leaves out) and labels renamed in order of first mention, per thread:
/// the C printer names temporaries and labels afresh.
fn alpha_normalised(t: &Test) -> Test {
    use std::collections::{HashMap, HashSet};
    let mut t = normalised(t);
    let mut named: HashSet<(usize, String)> = HashSet::new();
    let mut terms = t.observed.clone();
    collect_terms(&t.condition.prop, &mut terms);
    for term in terms {
        if let Term::Reg { thread, reg } = term {
            named.insert((thread, reg));
        }
    }
    for th in &mut t.threads {
        let keep: HashSet<String> = th
            .reg_init
            .iter()
            .map(|(r, _)| r.clone())
            .chain(
                named
                    .iter()
                    .filter(|(n, _)| *n == th.id)
                    .map(|(_, r)| r.clone()),
            )
            .collect();
        let mut regs: HashMap<String, String> = HashMap::new();
        let mut labels: HashMap<String, String> = HashMap::new();
        let mut reg = |r: &mut String| {
            if !keep.contains(r) {
                let n = regs.len();
                *r = regs.entry(r.clone()).or_insert(format!("%r{n}")).clone();
            }
        };
        let mut label = |l: &mut String| {
            let n = labels.len();
            *l = labels.entry(l.clone()).or_insert(format!("%l{n}")).clone();
        };
        for i in &mut th.code {
            rename(&mut i.kind, &mut reg, &mut label);
        }
    }
    t
}

fn collect_terms(p: &Prop, out: &mut Vec<Term>) {
    match p {
        Prop::Cmp(_, a, b) => out.extend([a.clone(), b.clone()]),
        Prop::Not(a) => collect_terms(a, out),
        Prop::And(a, b) | Prop::Or(a, b) => {
            collect_terms(a, out);
            collect_terms(b, out);
        }
        Prop::True | Prop::False => {}
    }
}

/// Applies `reg` to every register of `k` (in operand order) and `label`
/// to its label.
fn rename(k: &mut InstrKind, reg: &mut dyn FnMut(&mut String), label: &mut dyn FnMut(&mut String)) {
    let op = |o: &mut Operand, reg: &mut dyn FnMut(&mut String)| {
        if let Operand::Reg(r) = o {
            reg(r);
        }
    };
    let addr = |a: &mut Address, reg: &mut dyn FnMut(&mut String)| {
        if let Address::Reg(r) = a {
            reg(r);
        }
    };
    match k {
        InstrKind::Load { dst, addr: a } => {
            reg(dst);
            addr(a, reg);
        }
        InstrKind::Store { addr: a, src } => {
            addr(a, reg);
            op(src, reg);
        }
        InstrKind::Rmw {
            dst,
            addr: a,
            op: o,
        } => {
            if let Some(d) = dst {
                reg(d);
            }
            addr(a, reg);
            match o {
                RmwOp::Bin(_, v) | RmwOp::Exch(v) | RmwOp::Inc(v) | RmwOp::Dec(v) => op(v, reg),
                RmwOp::Cas { expected, new } => {
                    op(expected, reg);
                    op(new, reg);
                }
            }
        }
        InstrKind::Barrier { id, count, .. } => {
            op(id, reg);
            if let Some(c) = count {
                op(c, reg);
            }
        }
        InstrKind::Mov { dst, src } => {
            reg(dst);
            op(src, reg);
        }
        InstrKind::Op { dst, a, b, .. } => {
            reg(dst);
            op(a, reg);
            op(b, reg);
        }
        InstrKind::Branch { a, b, target, .. } => {
            op(a, reg);
            op(b, reg);
            label(target);
        }
        InstrKind::Goto { target } | InstrKind::Label(target) => label(target),
        InstrKind::Fence => {}
    }
}

#[test]
fn every_c_and_opencl_test_prints_and_parses_back_the_same() {
    let mut files = Vec::new();
    let with_oracles = oracles().inspect(|dir| walk(dir, &mut files)).is_some();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    walk(&root.join("examples"), &mut files);
    walk(&root.join("tests"), &mut files);
    if let Ok(extra) = std::env::var("LITMIX_PRINT_C_DIR") {
        walk(Path::new(&extra), &mut files);
    }
    let (mut c, mut opencl, mut structured) = (0, 0, 0);
    let mut failures = Vec::new();
    for f in &files {
        for parsed in parse_file_all(f) {
            let Ok(t) = parsed else { continue };
            if t.arch == "C" {
                c += 1;
            } else if t.arch == "OpenCL" {
                opencl += 1;
            } else {
                continue;
            }
            match round_trip(f, &t, alpha_normalised) {
                Ok(Some(text)) if !text.contains("goto") => structured += 1,
                Ok(_) => {}
                Err(e) => failures.push(e),
            }
        }
    }
    println!(
        "{} tests: {c} C, {opencl} OpenCL, {structured} without goto",
        c + opencl
    );
    no_failures(&failures, c + opencl);
    // litmix's own tests alone hold 57 C and 45 OpenCL tests.
    let (min_c, min_opencl) = if with_oracles { (80, 80) } else { (50, 40) };
    assert!(
        c >= min_c && opencl >= min_opencl,
        "{c} C, {opencl} OpenCL tests only"
    );
}

/// The C printer on one test with every construct it rebuilds: nested
/// conditions, `if ... else`, a spin loop with its load folded into the
/// condition, `do ... while` with `||`, a compare-exchange with scope and
/// remote flag, an array indexed by a register, an RMW whose result is
/// unused, OpenCL fences and barriers, placements, and jumps that do not
/// nest (left as `goto`). The text is compared whole, then parsed back.
#[test]
fn c_printer_rebuilds_statements() {
    let src = SHAPES_SRC;
    let t = parse_str("shapes", src).unwrap();
    let text = print_test(&t).unwrap();
    assert_eq!(text, SHAPES_PRINTED, "printed:\n{text}");
    let back = parse_str("shapes", &text).unwrap();
    assert_eq!(alpha_normalised(&t), alpha_normalised(&back));
    // A C test that uses what C cannot print is refused, not misprinted.
    let mut bad = t.clone();
    bad.threads[0].code[0].tags.push("ODD".into());
    let e = print_test(&bad).unwrap_err();
    assert!(e.contains("cannot be written in C"), "{e}");
}

const SHAPES_SRC: &str = r#"OpenCL shapes
{ int a[2] = {0, 0}; [x]=0; [y]=0; 0:k=1; }
P0@wg 0, dev 0 (global atomic_int* x, local volatile int* y, global int* a) {
  int r = atomic_load_explicit(x, memory_order_acquire, memory_scope_work_group);
  if (r == 1 && *y != 2) { *y = 3; } else { atomic_store(x, 4); }
  while (atomic_load_explicit(x, memory_order_relaxed) == 0) { }
  do { r = r + 1; } while (r < 3 || r == 7);
  int e = 0;
  int ok = atomic_compare_exchange_weak_explicit(x, &e, 5, memory_order_acq_rel, memory_order_acquire, memory_scope_device, remote);
  int v = *(a + k);
  atomic_fetch_add(x, 1);
  atomic_work_item_fence(CLK_LOCAL_MEM_FENCE, memory_order_release, memory_scope_work_group);
  barrier(CLK_GLOBAL_MEM_FENCE);
  top: r++;
  if (r == 5) goto done;
  if (r < 3) goto top;
  done: v = -r;
}
P1@dev 1 (global atomic_int* x) {
  atomic_thread_fence(memory_order_seq_cst, memory_scope_all_svm_devices);
}
exists (0:r=1 /\ x=5)
"#;

const SHAPES_PRINTED: &str = r#"OpenCL shapes
{ int a[2] = {0, 0}; x=0; y=0; P0:k=1; }
P0 (global atomic_int* x, local volatile int* y, global int* a) {
  int r;
  int e;
  int ok;
  int k;
  int v;
  r = atomic_load_explicit(x, memory_order_acquire, memory_scope_work_group);
  if (r == 1 && *y != 2) {
    *y = 3;
  } else {
    atomic_store_explicit(x, 4, memory_order_seq_cst);
  }
  while (atomic_load_explicit(x, memory_order_relaxed) == 0) {}
  do {
    r = r + 1;
  } while (r < 3 || r == 7);
  e = 0;
  ok = atomic_compare_exchange_strong_explicit(x, &e, 5, memory_order_acq_rel, memory_order_acquire, memory_scope_device, remote);
  v = *(a + k);
  atomic_fetch_add_explicit(x, 1, memory_order_seq_cst);
  atomic_work_item_fence(CLK_LOCAL_MEM_FENCE, memory_order_release, memory_scope_work_group);
  barrier(CLK_GLOBAL_MEM_FENCE);
  L0: ;
  r = r + 1;
  if (r == 5) goto L1;
  if (r < 3) goto L0;
  L1: ;
  v = 0 - r;
}
P1@dev 1 (global atomic_int* x) {
  atomic_thread_fence(memory_order_seq_cst, memory_scope_all_svm_devices);
}
exists (0:r=1 /\ x=5)
"#;

/// `litmix convert` prints litmus files back as litmix reads them: the C
/// spin loop comes back as a `while` with its load in the condition; a
/// test no printer can write is an error naming the reason, exit 1.
#[test]
fn convert_prints_litmus_files_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_litmix"))
            .args(args)
            .current_dir(root)
            .output()
            .expect("run litmix")
    };
    let o = run(&["convert", "tests/models/rc11/MP+spin.litmus"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        text.contains("while (atomic_load_explicit(y, memory_order_acquire) != 1) {}"),
        "{text}"
    );
    assert!(parse_str("MP+spin", &text).is_ok());
    let o = run(&["convert", "tests/fuzz-regressions/fuzz-46867.litmus"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err.contains("cannot print") && err.contains("not a C identifier"),
        "{err}"
    );
}
