//! Compiler mappings: compile, check-mapping verdicts on hand-written
//! race-free tests, bounded verification catching deliberately wrong
//! mappings with minimal counterexamples, shards and merge.

use litmix::driver::ModelCache;
use litmix::mapping::check::{self, Verdict};
use litmix::mapping::verify;
use std::path::Path;

fn check_file(mapping: &str, file: &str) -> check::Report {
    let m = litmix::mapping::load(mapping).unwrap_or_else(|d| panic!("{}", d.render()));
    let src =
        litmix::litmus::parse_file(Path::new(file)).unwrap_or_else(|d| panic!("{}", d.render()));
    check::check_test(
        &m,
        &src,
        file,
        &ModelCache::default(),
        &check::Options::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// The report's extra states, as text.
fn extra_texts(r: &check::Report) -> Vec<String> {
    r.extra_states.iter().map(|s| r.state_text(s)).collect()
}

const FIG12: &str = "tests/mappings/Fig12-ISA2-rmwsc-relseq.litmus";

#[test]
fn fig12_unsound_without_release_sound_with_it() {
    let bad = check_file("sc11-ptx-rmwsc-norel", FIG12);
    assert_eq!(bad.verdict, Verdict::Unsound);
    let extra = extra_texts(&bad);
    assert_eq!(extra, ["1:r0=1; 2:r1=3; 2:r2=0; x=1; y=3;"]);
    let good = check_file("sc11-ptx", FIG12);
    assert_eq!(good.verdict, Verdict::Sound);
    assert_eq!(good.source_states, good.target_states);
    // Also against ptx75 (PTX 6.0 plus proxies).
    let m = litmix::mapping::load("sc11-ptx").unwrap();
    let src = litmix::litmus::parse_file(Path::new(FIG12)).unwrap();
    let opts = check::Options {
        target_model: Some("ptx75".into()),
        ..Default::default()
    };
    let r = check::check_test(&m, &src, FIG12, &ModelCache::default(), &opts).unwrap();
    assert_eq!(
        (r.verdict, r.target_model.as_str()),
        (Verdict::Sound, "ptx75")
    );
}

#[test]
fn fig12_explanation_names_the_source_axiom() {
    let m = litmix::mapping::load("sc11-ptx-rmwsc-norel").unwrap();
    let src = litmix::litmus::parse_file(Path::new(FIG12)).unwrap();
    let opts = check::Options {
        why: true,
        ..Default::default()
    };
    let r = check::check_test(&m, &src, FIG12, &ModelCache::default(), &opts).unwrap();
    assert!(r.why.contains("violates coherence"), "{}", r.why);
    assert!(r.why.contains("atom.acquire.gpu.add"), "{}", r.why);
}

#[test]
fn builtins_are_sound_on_classic_tests() {
    for (mapping, file) in [
        ("rc11-x86", "tests/mappings/SB+sc.litmus"),
        ("sc11-ptx", "tests/mappings/MP+rel+acq-diffwg.litmus"),
        ("sc11-x86ptx", "tests/mappings/MP+cpu-sc+gpu-sc.litmus"),
        ("sc11-x86ptx", "tests/mappings/SB+cpu-sc+gpu-sc.litmus"),
    ] {
        let r = check_file(mapping, file);
        assert_eq!(r.verdict, Verdict::Sound, "{mapping} {file}");
        assert!(r.source_states.len() >= 2, "{mapping} {file}: vacuous");
    }
}

#[test]
fn wrong_acquire_mapping_breaks_mp() {
    let r = check_file(
        "tests/mappings/wrong/sc11-ptx-acq-relaxed.map",
        "tests/mappings/MP+rel+acq-diffwg.litmus",
    );
    assert_eq!(r.verdict, Verdict::Unsound);
    let extra = extra_texts(&r);
    assert_eq!(extra, ["1:r1=0; 1:r0=1; x=1; y=1;"]);
}

#[test]
fn racy_programs_prove_nothing() {
    let dir = std::env::temp_dir().join(format!("litmix-map-racy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("MP-racy.litmus");
    std::fs::write(
        &f,
        "C MP-racy\n{ [x]=0; [y]=0; }\nP0 (int* x, atomic_int* y) {\n  *x = 1;\n  atomic_store_explicit(y, 1, memory_order_release);\n}\nP1 (int* x, atomic_int* y) {\n  int r0 = atomic_load_explicit(y, memory_order_relaxed);\n  int r1 = *x;\n}\nexists (1:r0=1 /\\ 1:r1=0)\n",
    )
    .unwrap();
    let r = check_file("rc11-x86", f.to_str().unwrap());
    assert_eq!(r.verdict, Verdict::Racy);
    assert_eq!(r.undefined_flags, ["data-race"]);
    let _ = std::fs::remove_dir_all(&dir);
}

fn options(bound: usize, orders: &[&str]) -> verify::Options {
    verify::Options {
        bound,
        shard: (1, 1),
        stop_at_first: false,
        out: None,
        check: check::Options::default(),
        all_scopes: false,
        max_threads: Some(2),
        max_locations: Some(2),
        max_groups: None,
        max_thread_size: None,
        count_only: false,
        orders: orders.iter().map(|s| s.to_string()).collect(),
        no_reduce: false,
        // Below 4 events no program has a communication cycle: these tests
        // check the whole pipeline on small programs, so they keep them.
        no_cycle_cut: true,
        no_dominance: false,
    }
}

#[test]
fn missing_mfence_is_caught_with_a_minimal_sb() {
    let m = litmix::mapping::load("tests/mappings/wrong/rc11-x86-no-mfence.map").unwrap();
    let dir = std::env::temp_dir().join(format!("litmix-map-sb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut o = options(4, &["sc"]);
    o.stop_at_first = true;
    o.no_cycle_cut = false;
    o.out = Some(dir.clone());
    let s = verify::run(&m, &o, &|_| {});
    assert!(s.counterexamples > 0);
    assert_eq!(s.complete_to, 4);
    // Nothing below 4 events: the counterexamples are minimal.
    let smaller = verify::run(&m, &options(3, &["sc"]), &|_| {});
    assert_eq!((smaller.counterexamples, smaller.errors), (0, 0));
    assert!(smaller.programs > 100);
    let all: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(all.len() >= 2);
    // SB itself is among them, and each file pair shows the extra state.
    let sb = all.iter().any(|p| {
        std::fs::read_to_string(p)
            .unwrap()
            .contains("exists (0:r0=0 /\\ 1:r0=0 /\\ [x]=1 /\\ [y]=1)")
    });
    assert!(sb, "no SB among {all:?}");
    for p in all
        .iter()
        .filter(|p| !p.to_string_lossy().ends_with(".x86tso.litmus"))
    {
        let target = p.with_extension("x86tso.litmus");
        let cache = ModelCache::default();
        let opts = litmix::exec::CheckOptions::default();
        let src = litmix::driver::check_file(p, Some("rc11"), &cache, &opts);
        let tgt = litmix::driver::check_file(&target, None, &cache, &opts);
        let validated = |o: &litmix::driver::FileOutcome| match o {
            litmix::driver::FileOutcome::Checked { result, .. } => result.validated,
            litmix::driver::FileOutcome::Failed { message, .. } => panic!("{message}"),
        };
        assert!(
            !validated(&src),
            "{}: source allows the extra state",
            p.display()
        );
        assert!(
            validated(&tgt),
            "{}: target misses the extra state",
            target.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn builtin_x86_mapping_is_sound_to_bound_3() {
    let m = litmix::mapping::load("rc11-x86").unwrap();
    let s = verify::run(&m, &options(3, &[]), &|_| {});
    assert_eq!((s.counterexamples, s.errors), (0, 0));
    // The data-race cut leaves no racy program to check (every rc11 race
    // of straight-line code is two threads touching a non-atomic location).
    assert!(s.sound > 100 && s.racy == 0, "{s:?}");
    let mut o = options(3, &[]);
    o.no_reduce = true;
    let plain = verify::run(&m, &o, &|_| {});
    assert_eq!((plain.counterexamples, plain.errors), (0, 0));
    assert!(plain.racy > 0 && plain.programs > s.programs, "{plain:?}");
}

#[test]
fn shards_partition_the_programs_and_merge_adds_up() {
    let m = litmix::mapping::load("rc11-x86").unwrap();
    let whole = verify::programs(&m, &options(3, &["rlx", "sc"]));
    let again = verify::programs(&m, &options(3, &["rlx", "sc"]));
    assert_eq!(whole, again, "the order must be deterministic");
    let mut parts = Vec::new();
    let mut summaries = Vec::new();
    for k in 1..=3 {
        let mut o = options(3, &["rlx", "sc"]);
        o.shard = (k, 3);
        parts.extend(verify::programs(&m, &o));
        summaries.push(verify::run(&m, &o, &|_| {}));
    }
    parts.sort_by_key(|p| p.0);
    assert_eq!(parts, whole);
    let merged = verify::merge(&summaries).unwrap();
    assert_eq!(merged.programs, whole.len());
    assert_eq!(merged.shard, "1-3/3");
    assert!(
        verify::merge(&summaries[..2])
            .unwrap_err()
            .contains("missing shard(s) 3/3")
    );
    assert!(verify::parse_shard("0/3").is_err());
    assert!(verify::parse_shard("4/3").is_err());
}

#[test]
fn compile_errors_point_at_the_source() {
    // rc11-x86 has no rule for compare-and-swap.
    let m = litmix::mapping::load("rc11-x86").unwrap();
    let src = litmix::litmus::parse_str(
        "cas.litmus",
        "C cas\n{ [x]=0; }\nP0 (atomic_int* x) {\n  int r0 = 0;\n  int r1 = atomic_compare_exchange_strong(x, &r0, 1);\n}\nexists (x=1)\n",
    )
    .unwrap();
    let d = litmix::mapping::compile::compile(&m, &src).unwrap_err();
    assert_eq!(d.file, "cas");
    assert_eq!(d.pos.line, 5);
    assert!(
        d.message.contains("has no rule for rmw sc"),
        "{}",
        d.message
    );
}

fn litmix(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_litmix"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn cli_compile_check_verify_merge() {
    let (code, out, _) = litmix(&["mappings"]);
    assert_eq!(code, 0);
    for name in [
        "sc11-ptx",
        "sc11-ptx-rmwsc-norel",
        "sc11-x86ptx",
        "rc11-x86",
    ] {
        assert!(out.contains(name), "{out}");
    }
    let (code, out, err) = litmix(&["compile", "--mapping", "sc11-ptx", FIG12]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("fence.sc.gpu") && out.contains("atom.acq_rel.gpu.add r0, y, 1"),
        "{out}"
    );
    let (code, out, _) = litmix(&[
        "check-mapping",
        "--json",
        "--mapping",
        "sc11-ptx-rmwsc-norel",
        FIG12,
    ]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    for key in [
        "file",
        "test",
        "mapping",
        "source_model",
        "target_model",
        "verdict",
        "extra_states",
    ] {
        assert!(v.get(key).is_some(), "{key} missing in {out}");
    }
    assert_eq!(v["verdict"], "unsound");
    assert_eq!(v["extra_states"][0]["2:r2"], "0");
    let dir = std::env::temp_dir().join(format!("litmix-map-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for k in 1..=2 {
        let shard = format!("{k}/2");
        let (code, out, err) = litmix(&[
            "verify-mapping",
            "--mapping",
            "rc11-x86",
            "--bound",
            "2",
            "--no-cycle-cut",
            "--json",
            "--shard",
            &shard,
        ]);
        assert_eq!(code, 0, "{err}");
        let last: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
        for key in ["mapping", "bound", "programs", "counterexamples", "time_s"] {
            assert!(last.get(key).is_some(), "{key} missing in {out}");
        }
        let f = dir.join(format!("s{k}.jsonl"));
        std::fs::write(&f, out).unwrap();
        files.push(f.display().to_string());
    }
    let (code, out, err) = litmix(&[
        "verify-mapping",
        "--mapping",
        "rc11-x86",
        "--bound",
        "2",
        "--no-cycle-cut",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let whole: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    let mut args = vec!["merge", "--json"];
    args.extend(files.iter().map(String::as_str));
    let (code, out, err) = litmix(&args);
    assert_eq!(code, 0, "{err}");
    let merged: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(merged["programs"], whole["programs"]);
    assert!(whole["programs"].as_u64().unwrap() > 10);
    let (code, _, err) = litmix(&["merge", &files[0]]);
    assert_eq!(code, 2);
    assert!(err.contains("missing shard(s) 2/2"), "{err}");
    let (code, _, err) = litmix(&[
        "verify-mapping",
        "--mapping",
        "rc11-x86",
        "--bound",
        "2",
        "--shard",
        "3/2",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("bad shard"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_mapping_file_errors_point_at_line_and_column() {
    let dir = std::env::temp_dir().join(format!("litmix-map-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.map");
    std::fs::write(
        &f,
        "mapping bad\nsource sc11\ntarget ptx6\narch PTX\nthread gpu = P{t}\nregister gpu = r{n}\nload acquire => ld {r}, {x}\n",
    )
    .unwrap();
    let (code, _, err) = litmix(&["compile", "--mapping", f.to_str().unwrap(), FIG12]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad.map:7:6: error: unknown memory order 'acquire'"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_builtin_is_sound_to_bound_2() {
    // Includes programs whose threads all run on CPUs (sc11-x86ptx), where
    // sc11's wg/dev relations relate each thread to itself only.
    for name in ["sc11-ptx", "sc11-x86ptx", "rc11-x86"] {
        let m = litmix::mapping::load(name).unwrap();
        let mut o = options(2, &[]);
        o.max_threads = None;
        o.max_locations = None;
        let s = verify::run(&m, &o, &|_| {});
        assert_eq!(
            (s.counterexamples, s.errors),
            (0, 0),
            "{name}: {:?}",
            s.found
        );
        assert!(s.sound > 10, "{name}: {s:?}");
    }
    let m = litmix::mapping::load("sc11-ptx-rmwsc-norel").unwrap();
    let s = verify::run(&m, &options(2, &[]), &|_| {});
    assert_eq!(s.errors, 0);
}

/// Seed 000's Fig. 13 maps a seq_cst RMW on the CPU to a bare locked RMW.
/// In CMM only its read is a gsc event, so the R shape with the CPU's
/// first access an exchange is observable after compilation though
/// scoped C/C++ forbids it (a psc cycle) and the program is race-free:
/// a gap in Theorem 6.1, derived by hand in docs/mappings.md ("A gap in
/// Fig. 13"). A seq_cst store in its place is sound, and so is the
/// exchange with a trailing MFENCE.
#[test]
fn fig13_cpu_rmw_sc_without_mfence_breaks_the_r_shape() {
    const R_RMW: &str = "tests/mappings/R+cpu-rmwsc+gpu-sc.litmus";
    let bad = check_file("sc11-x86ptx", R_RMW);
    assert_eq!(bad.verdict, Verdict::Unsound);
    assert!(bad.undefined_flags.is_empty(), "{:?}", bad.undefined_flags);
    let extra = extra_texts(&bad);
    assert_eq!(extra, ["0:r0=0; 1:r0=0; x=1; y=2;"]);
    assert_eq!((bad.source_states.len(), bad.target_states.len()), (3, 4));

    let m = litmix::mapping::load("sc11-x86ptx").unwrap();
    let src = litmix::litmus::parse_file(Path::new(R_RMW)).unwrap();
    let opts = check::Options {
        why: true,
        ..Default::default()
    };
    let r = check::check_test(&m, &src, R_RMW, &ModelCache::default(), &opts).unwrap();
    assert!(r.why.contains("violates sc"), "{}", r.why);
    assert!(r.why.contains("XCHG [x],EAX"), "{}", r.why);

    let store = check_file("sc11-x86ptx", "tests/mappings/R+cpu-sc+gpu-sc.litmus");
    assert_eq!(store.verdict, Verdict::Sound);
    assert_eq!(store.source_states.len(), 3);
    assert_eq!(store.source_states, store.target_states);

    let fixed = check_file("tests/mappings/sc11-x86ptx-rmwsc-mfence.map", R_RMW);
    assert_eq!(fixed.verdict, Verdict::Sound);
    assert_eq!(fixed.source_states.len(), 3);
    assert_eq!(fixed.source_states, fixed.target_states);
}

/// A GPU thread with a branch compiles under `sc11-x86ptx` to PTX's own
/// branch (`bne`, through `{cond}`), not to the CPU column's `JNE`: the
/// compiled MP with a guarded weak read runs and the mapping is sound.
#[test]
fn sc11_x86ptx_gpu_branches_compile_to_ptx() {
    const MP: &str = "tests/mappings/MP+rel+acq-diffwg.litmus";
    let m = litmix::mapping::load("sc11-x86ptx").unwrap();
    let src = litmix::litmus::parse_file(Path::new(MP)).unwrap();
    let text = litmix::mapping::compile::compile(&m, &src).unwrap().text;
    assert!(text.contains("bne r1, 1, L0"), "{text}");
    assert!(!text.contains("JNE"), "{text}");
    let r = check_file("sc11-x86ptx", MP);
    assert_eq!(r.verdict, Verdict::Sound);
    assert_eq!(r.source_states.len(), 2);
    assert_eq!(r.source_states, r.target_states);
}

/// Seed 004's Fig. 11 compiles each seq_cst access with a leading
/// `fence.sc` of the access's own scope. With P1's read of x at
/// work-group scope, RWC's forbidden state (a psc cycle whose every edge
/// is scope-inclusive) becomes observable: P1's `fence.sc.cta` is not
/// morally strong with P0's `fence.sc.gpu`, so PTX's Fence-SC order never
/// relates them. Found by `verify-mapping --mapping sc11-ptx --bound 5`;
/// derived by hand in docs/mappings.md ("A gap in Fig. 11").
#[test]
fn fig11_mixed_scope_seq_cst_breaks_rwc() {
    const RWC: &str = "tests/mappings/RWC+sc+wg-read.litmus";
    let bad = check_file("sc11-ptx", RWC);
    assert_eq!(bad.verdict, Verdict::Unsound);
    assert!(bad.undefined_flags.is_empty(), "{:?}", bad.undefined_flags);
    let extra = extra_texts(&bad);
    assert_eq!(extra, ["0:r0=1; 0:r1=0; 1:r0=0; x=1; y=1;"]);
    assert_eq!((bad.source_states.len(), bad.target_states.len()), (7, 8));

    // The same under PTX 7.5.
    let m = litmix::mapping::load("sc11-ptx").unwrap();
    let src = litmix::litmus::parse_file(Path::new(RWC)).unwrap();
    let opts = check::Options {
        target_model: Some("ptx75".into()),
        why: true,
        ..Default::default()
    };
    let r = check::check_test(&m, &src, RWC, &ModelCache::default(), &opts).unwrap();
    assert_eq!(r.verdict, Verdict::Unsound);
    assert!(r.why.contains("violates sc"), "{}", r.why);

    // With the read at device scope, or every seq_cst fence at system
    // scope, the state is gone.
    let text = std::fs::read_to_string(RWC).unwrap().replace(
        "memory_order_seq_cst, memory_scope_work_group",
        "memory_order_seq_cst, memory_scope_device",
    );
    let dev = litmix::litmus::parse_str("RWC-dev.litmus", &text).unwrap();
    let r = check::check_test(
        &m,
        &dev,
        "RWC-dev",
        &ModelCache::default(),
        &check::Options::default(),
    )
    .unwrap();
    assert_eq!(r.verdict, Verdict::Sound);
    let fixed = check_file("tests/mappings/sc11-ptx-scfence-sys.map", RWC);
    assert_eq!(fixed.verdict, Verdict::Sound);
    assert_eq!(fixed.source_states, fixed.target_states);
}

/// Bound 6 of `sc11-x86ptx`: two of the 59 counterexamples with neither a
/// CPU `RMW_sc` nor a work-group scope. They follow from how litmix's CMM
/// reads seed 000 (`gsc` over morally strong pairs only, `obs` as a prefix
/// of `wcord`; docs/mappings.md, "Bound 6 of sc11-x86ptx"), so the mapping
/// repairing both known gaps has them too.
#[test]
fn fig13_bound6_counterexamples_follow_the_cmm_readings() {
    for (t, extra) in [
        (
            "tests/mappings/2+2W+cpu-sc-reads+gpu-sc-writes.litmus",
            "0:r0=2; 1:r0=2; x=2; y=2;",
        ),
        (
            "tests/mappings/RelSeq+cpu-rel+gpu-rlx-rmw.litmus",
            "0:r0=2; 1:r0=2; 2:r0=1; x=2; y=2;",
        ),
    ] {
        for m in ["sc11-x86ptx", "tests/mappings/sc11-x86ptx-fixed.map"] {
            let r = check_file(m, t);
            assert_eq!(r.verdict, Verdict::Unsound, "{m} {t}");
            assert_eq!(extra_texts(&r), [extra], "{m} {t}");
        }
    }
}

/// The scope gap of Fig. 11 has a twin in Fig. 13 (trailing fences): the
/// GPU's work-group seq_cst read is followed by `fence.sc.cta`, which is
/// not morally strong with the other threads' system fences. Found by
/// `verify-mapping --mapping tests/mappings/sc11-x86ptx-rmwsc-mfence.map
/// --bound 5`; repaired, with the CPU RMW gap, by sc11-x86ptx-fixed.map.
#[test]
fn fig13_mixed_scope_seq_cst_breaks_w_rw_wr() {
    const T: &str = "tests/mappings/W+RW+WR+cpu-sc+gpu-wg-read.litmus";
    for m in ["sc11-x86ptx", "tests/mappings/sc11-x86ptx-rmwsc-mfence.map"] {
        let bad = check_file(m, T);
        assert_eq!(bad.verdict, Verdict::Unsound, "{m}");
        let extra = extra_texts(&bad);
        assert_eq!(extra, ["0:r0=0; 1:r0=1; x=1; y=1;"], "{m}");
    }
    let fixed = check_file("tests/mappings/sc11-x86ptx-fixed.map", T);
    assert_eq!(fixed.verdict, Verdict::Sound);
    assert_eq!(fixed.source_states.len(), 7);
    assert_eq!(fixed.source_states, fixed.target_states);
    // The fixed mapping keeps the CPU RMW repair.
    let r = check_file(
        "tests/mappings/sc11-x86ptx-fixed.map",
        "tests/mappings/R+cpu-rmwsc+gpu-sc.litmus",
    );
    assert_eq!(r.verdict, Verdict::Sound);
}
