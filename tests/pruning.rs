//! The pruning search from the outside: `models --pruning`, `--stats`,
//! `--timeout`, the fail-fast estimate, and the search figures showing that
//! pruning cuts the blow-ups of issue 14 (counts, not times).

use litmix::driver::{FileOutcome, ModelCache, check_file};
use litmix::exec::CheckOptions;
use std::path::Path;
use std::process::{Command, Output};

fn litmix(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_litmix"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run litmix")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn check(path: &str, prune: bool) -> Result<litmix::exec::CheckResult, String> {
    // A small budget keeps the unpruned runs short.
    let opts = CheckOptions {
        prune,
        max_candidates: 100_000,
        ..CheckOptions::default()
    };
    match check_file(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join(path),
        None,
        &ModelCache::default(),
        &opts,
    ) {
        FileOutcome::Checked { result, .. } => Ok(*result),
        FileOutcome::Failed { message, .. } => Err(message),
    }
}

#[test]
fn models_pruning_names_each_check() {
    let o = litmix(&["models", "--pruning", "ptx6"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("prunes  sc-per-location"), "{out}");
    // `empty (causeWW \ co)` subtracts co: it cannot prune the co search.
    assert!(out.contains("cannot  coherence"), "{out}");
    assert!(
        out.contains("subtracting a choice-dependent relation"),
        "{out}"
    );
    assert!(
        out.contains("'with sc_total from linearisations(F & SC, 0)'"),
        "{out}"
    );
    let o = litmix(&["models", "--pruning", "rc11"]);
    let out = text(&o.stdout);
    assert!(
        out.contains("cannot  data-race: a flag never forbids"),
        "{out}"
    );
    let o = litmix(&["models", "--pruning", "no-such-model"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn stats_line_and_json_figures() {
    let o = litmix(&["run", "--stats", "examples/MP-gpu.litmus"]);
    assert!(o.status.success());
    let out = text(&o.stdout);
    assert!(out.contains("\nStats MP-gpu candidates "), "{out}");
    let o = litmix(&["run", "--json", "examples/MP-gpu.litmus"]);
    let v: serde_json::Value = serde_json::from_str(text(&o.stdout).trim()).unwrap();
    for k in [
        "candidates",
        "consistent",
        "partial_candidates",
        "pruned",
        "time_ms",
    ] {
        assert!(v.get(k).is_some_and(|x| x.is_number()), "{k} in {v}");
    }
    assert_eq!(v["consistent"], 3);
}

#[test]
fn timeout_gives_a_timeout_result_per_test() {
    // A zero budget expires before the first node: deterministic.
    let o = litmix(&[
        "run",
        "--timeout",
        "0",
        "examples/MP-gpu.litmus",
        "examples/SB-x86.litmus",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert_eq!(err.matches("timeout: no answer after").count(), 2, "{err}");
    // Without the limit both are answered.
    let o = litmix(&["run", "examples/MP-gpu.litmus", "examples/SB-x86.litmus"]);
    assert!(o.status.success());
}

#[test]
fn nine_release_stores_get_a_verdict_by_pruning() {
    // 9! coherence orders of the flag, times 20 rf choices: over the budget
    // unpruned; pruned, only the consistent orders survive.
    let r = check("benches/prune/MP-gpu-9flag.litmus", true).expect("a verdict");
    assert!(r.validated);
    assert_eq!(r.positive + r.negative, 11);
    // 20 × 9! = 7.3e6 unpruned; pruned, a few per consistent one (nodes
    // with fewer than 8 candidates below are judged whole: 264).
    assert!(r.candidates <= 300, "{} candidates", r.candidates);
    let e = check("benches/prune/MP-gpu-9flag.litmus", false).unwrap_err();
    assert!(e.contains("limit exceeded"), "{e}");
}

#[test]
fn fence_sc_orders_are_searched_not_enumerated() {
    // SB ring of 6 threads with fence.sc: 6! = 720 orders per candidate
    // unpruned; the prefix search visits a few dozen.
    let on = check("benches/prune/small/SB-ring-6.litmus", true).unwrap();
    let off = check("benches/prune/small/SB-ring-6.litmus", false).unwrap();
    assert_eq!(on.states, off.states);
    assert!(!on.validated);
    assert!(on.with_pruned > 0);
    assert!(
        on.with_nodes * 4 < off.with_nodes,
        "{} vs {} orders",
        on.with_nodes,
        off.with_nodes
    );
}

#[test]
fn hopeless_search_is_refused_at_once() {
    let e = check("benches/prune/MP-gpu-120loads.litmus", true).unwrap_err();
    assert!(e.contains("even with pruning"), "{e}");
}

#[test]
fn opencl_prunes_through_a_lower_bound_of_hb() {
    // OpenCL's release sequences subtract `mo`, so `hb` neither grows nor
    // shrinks with the choices; with them taken as empty, `hb` keeps `sb`
    // and Coh cuts every order of x against P1's program order.
    let o = litmix(&["models", "--pruning", "opencl"]);
    let out = text(&o.stdout);
    assert!(
        out.contains("prunes  Coh: its relation neither grows nor shrinks"),
        "{out}"
    );
    assert!(out.contains("a lower bound of it grows"), "{out}");
    // `(rf; [nal]) \ vis` subtracts a relation that grows: no lower bound.
    assert!(out.contains("cannot  Narf"), "{out}");
    let r = check("benches/prune/2+2W-opencl-9stores.litmus", true).expect("a verdict");
    assert!(!r.validated);
    assert_eq!(r.positive + r.negative, 11);
    // 10! = 3.6e6 orders unpruned; pruned, 192 (nodes with fewer than 8
    // candidates below are judged whole).
    assert!(r.candidates <= 300, "{} candidates", r.candidates);
    // 10! orders of x: over the budget unpruned.
    let e = check("benches/prune/2+2W-opencl-9stores.litmus", false).unwrap_err();
    assert!(e.contains("limit exceeded"), "{e}");
}

/// A model choosing `co` from a set (herd's cos.cat habit): the one order
/// of locations written at most once, init first.
const ONE_ORDER: &str = "\"one order\"\nlet co0 = loc & (IW * (W \\ IW))\nlet orders = {co0}\n\
    with co from orders\nacyclic po | rf | co as sc\n";

/// A fresh folder for one test (named by `tag` and the process) holding
/// the model `text` as `name`: the folder and the model's path.
fn model_file(tag: &str, name: &str, text: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("litmix-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join(name);
    std::fs::write(&model, text).unwrap();
    (dir, model)
}

/// The result of `test` under `model`, through the driver.
fn check_parsed(
    test: &litmix::ir::Test,
    model: &str,
    cache: &ModelCache,
    opts: &CheckOptions,
) -> litmix::exec::CheckResult {
    let file = format!("{}.litmus", test.name);
    match litmix::driver::check_test(file, test.clone(), Some(model), cache, opts) {
        FileOutcome::Checked { result, .. } => *result,
        FileOutcome::Failed { message, .. } => panic!("{model}: {message}"),
    }
}

#[test]
fn a_branch_the_read_values_rule_out_costs_no_partial_judgement() {
    // The taken path reads y and z after r0 == 5, but nothing writes 5 to
    // x: both sources of r0 end that path. Each leaves 3 × 3 sources for
    // r1, r2 times 2 × 2 coherence orders (36 candidates below, over the
    // threshold of 8), which used to be judged partially before the branch
    // constraint was looked at. The other path (r0 != 5) has 1 × 4
    // candidates below each choice of r0: never judged partially.
    let src = "C branch_dead\n{ [x]=0; [y]=0; [z]=0; }\n\
        P0 (atomic_int* x, atomic_int* y, atomic_int* z) {\n\
          int r0 = atomic_load_explicit(x, memory_order_relaxed);\n\
          if (r0 == 5) {\n\
            int r1 = atomic_load_explicit(y, memory_order_relaxed);\n\
            int r2 = atomic_load_explicit(z, memory_order_relaxed);\n\
          }\n\
        }\n\
        P1 (atomic_int* x, atomic_int* y, atomic_int* z) {\n\
          atomic_store_explicit(x, 1, memory_order_relaxed);\n\
          atomic_store_explicit(y, 1, memory_order_relaxed);\n\
          atomic_store_explicit(y, 2, memory_order_relaxed);\n\
          atomic_store_explicit(z, 1, memory_order_relaxed);\n\
          atomic_store_explicit(z, 2, memory_order_relaxed);\n\
        }\n\
        exists (0:r0=1)\n";
    let test = litmix::litmus::parse_str("branch_dead.litmus", src).expect("parses");
    for (model, prune) in [("rc11", true), ("rc11", false), ("c11", true)] {
        let opts = CheckOptions {
            prune,
            ..CheckOptions::default()
        };
        let r = check_parsed(&test, model, &ModelCache::default(), &opts);
        assert_eq!(r.partial, 0, "{model} prune={prune}: partial judgements");
        // r0 reads 0 or 1 (the untaken path), each with the 4 coherence
        // orders of y and z: 8 candidates, all consistent.
        assert_eq!(r.candidates, 8, "{model} prune={prune}");
        assert_eq!(r.states.len(), 2, "{model} prune={prune}: {:?}", r.states);
    }
}

#[test]
fn a_choice_of_paths_that_judges_nothing_does_not_check_the_co_set() {
    // A model choosing `co` from a set (herd's cos.cat habit), here the one
    // order of locations written at most once: init first. It runs over
    // the engine's `co` once that set is checked on a choice of thread
    // paths; the check waits for the first judgement. The taken path
    // (r0 == 5, which no write gives) writes y: a skeleton with a write to
    // y that judges nothing, so only the other path's set is checked.
    let (dir, model) = model_file("co-set", "one-order.cat", ONE_ORDER);
    let src = "C dead_write\n{ [x]=0; [y]=0; }\n\
        P0 (atomic_int* x, atomic_int* y) {\n\
          int r0 = atomic_load_explicit(x, memory_order_relaxed);\n\
          if (r0 == 5) {\n\
            atomic_store_explicit(y, 1, memory_order_relaxed);\n\
          }\n\
        }\n\
        P1 (atomic_int* x, atomic_int* y) {\n\
          atomic_store_explicit(x, 1, memory_order_relaxed);\n\
        }\n\
        exists (0:r0=1)\n";
    let test = litmix::litmus::parse_str("dead_write.litmus", src).expect("parses");
    let spec = model.to_str().unwrap();
    let cache = ModelCache::default();
    let r = check_parsed(&test, spec, &cache, &CheckOptions::default());
    // r0 reads 0 or 1 on the path not taken: two candidates, both allowed.
    assert_eq!(r.candidates, 2);
    assert_eq!(r.states.len(), 2, "{:?}", r.states);
    let native = cache.get(spec).unwrap();
    let native = native.co_native().expect("a model choosing co from a set");
    assert_eq!(native.co_sets_checked(), 1);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_co_set_is_checked_once_per_shape_of_the_writes() {
    // The same one-order model: its set reads the initial writes, the
    // writes and their locations only (`co0`), so two tests whose writes
    // have the same shape share one check, whatever their reads; a third
    // test, with two writes to x, needs a check of its own.
    let (dir, model) = model_file("co-shape", "one-order.cat", ONE_ORDER);
    let test = |name: &str, p0: &str, p1: &str| {
        let src = format!(
            "C {name}\n{{ [x]=0; }}\n\
             P0 (atomic_int* x) {{\n{p0}\n}}\n\
             P1 (atomic_int* x) {{\n{p1}\n}}\n\
             exists (1:r0=1)\n"
        );
        litmix::litmus::parse_str(&format!("{name}.litmus"), &src).expect("parses")
    };
    let store = |v: u32| format!("atomic_store_explicit(x, {v}, memory_order_relaxed);");
    let load = |r: &str| format!("int {r} = atomic_load_explicit(x, memory_order_relaxed);");
    let one_read = test("one_read", &store(1), &load("r0"));
    let two_reads = test(
        "two_reads",
        &store(1),
        &format!("{}\n{}", load("r0"), load("r1")),
    );
    let two_writes = test(
        "two_writes",
        &format!("{}\n{}", store(1), store(2)),
        &load("r0"),
    );
    let spec = model.to_str().unwrap();
    let cache = ModelCache::default();
    let opts = CheckOptions::default();
    let r = check_parsed(&one_read, spec, &cache, &opts);
    assert_eq!((r.candidates, r.states.len()), (2, 2), "{:?}", r.states);
    // r1 is not observed: each value of r0 stands for two candidates.
    let r = check_parsed(&two_reads, spec, &cache, &opts);
    assert_eq!((r.candidates, r.states.len()), (4, 2), "{:?}", r.states);
    let native = cache.get(spec).unwrap();
    let native = native.co_native().expect("a model choosing co from a set");
    assert_eq!(native.co_sets_checked(), 1);
    // Two writes to x: {co0} is not the engine's set of orders, so the
    // model runs on its own set, where co0 orders neither write before
    // the other: no `co` of the engine's, and r0 reads 0, 1 or 2.
    let r = check_parsed(&two_writes, spec, &cache, &opts);
    assert_eq!(native.co_sets_checked(), 2);
    assert_eq!(r.states.len(), 3, "{:?}", r.states);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_with_set_is_evaluated_once_per_shape_of_what_it_reads() {
    // herd's c11 models choose `mo` with a `with ... from` of their own
    // over the writes; the set reads the initial writes, the writes and
    // their locations only, so tests whose writes have the same shape
    // share one evaluation of it, whatever their reads (`b` reads x once
    // more than `a`).
    let (dir, model) = model_file(
        "with-shape",
        "mo.cat",
        "\"own mo\"\nlet co0 = loc & (IW * (W \\ IW))\n\
         let orders(s, r) = linearisations(s, r)\n\
         with mo from orders(W, co0)\nlet fr = (rf^-1 ; mo) \\ id\n\
         acyclic po | rf | mo | fr as sc\n",
    );
    let test = |name: &str, p1: &str| {
        let src = format!(
            "C {name}\n{{ [x]=0; [y]=0; }}\n\
             P0 (atomic_int* x, atomic_int* y) {{\n\
               atomic_store_explicit(x, 1, memory_order_relaxed);\n\
               atomic_store_explicit(x, 2, memory_order_relaxed);\n\
             }}\n\
             P1 (atomic_int* x, atomic_int* y) {{\n{p1}\n}}\n\
             exists (1:r0=2 /\\ 1:r1=1)\n"
        );
        litmix::litmus::parse_str(&format!("{name}.litmus"), &src).expect("parses")
    };
    let load =
        |r: &str, l: &str| format!("int {r} = atomic_load_explicit({l}, memory_order_relaxed);");
    let a = test("a", &format!("{}\n{}", load("r0", "x"), load("r1", "x")));
    let b = test(
        "b",
        &format!(
            "{}\n{}\n{}",
            load("r0", "x"),
            load("r2", "x"),
            load("r1", "x")
        ),
    );
    let spec = model.to_str().unwrap();
    let cache = ModelCache::default();
    let opts = CheckOptions::default();
    // CoRR: reading 2 then 1 from the same thread's writes is forbidden.
    for t in [&a, &b] {
        let r = check_parsed(t, spec, &cache, &opts);
        assert_eq!(r.positive, 0, "{}: {:?}", t.name, r.states);
        assert_eq!(r.states.len(), 6, "{}: {:?}", t.name, r.states);
    }
    let m = cache.get(spec).unwrap();
    assert_eq!(m.with_sets_kept(), 1);
    std::fs::remove_dir_all(&dir).ok();
}
