//! The OpenCL+RSP compilation schemes on the GPU cache machine (seed 001
//! §5): the seed's two bugs found by check-mapping, the proposed scheme
//! sound on them, the cacheline-locking detail both ways, the RSP front
//! end's errors, and `litmix run --model rsp-cache` end to end.

use litmix::driver::ModelCache;
use litmix::mapping::check::{self, Verdict};
use std::path::Path;
use std::process::Command;

fn check_with(mapping: &str, file: &str, target: Option<&str>, why: bool) -> check::Report {
    let m = litmix::mapping::load(mapping).unwrap_or_else(|d| panic!("{}", d.render()));
    let src =
        litmix::litmus::parse_file(Path::new(file)).unwrap_or_else(|d| panic!("{}", d.render()));
    let opts = check::Options {
        target_model: target.map(str::to_string),
        why,
        ..Default::default()
    };
    check::check_test(&m, &src, file, &ModelCache::default(), &opts)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn extra(r: &check::Report) -> Vec<String> {
    r.extra_states.iter().map(|s| r.state_text(s)).collect()
}

const FIG4: &str = "tests/mappings/RSP-Fig4-MP-dv.litmus";
const FIG5: &str = "tests/mappings/RSP-Fig5-inc-wg-remote-store.litmus";
const REMOTE_LOAD: &str = "tests/mappings/RSP-MP-dv-remote-load.litmus";

#[test]
fn fig4_original_is_unsound_with_the_seeds_state_and_a_trace() {
    let r = check_with("opencl-rsp-original", FIG4, None, true);
    assert_eq!(r.verdict, Verdict::Unsound);
    // The seed's forbidden final state {r0 = 1, r1 = 0}.
    assert_eq!(extra(&r), ["1:r1=0; 1:r0=1; x=42; y=1;"]);
    // The machine trace: P1 invalidates before its load and refetches
    // the stale x (Fig. 4).
    assert!(r.why.contains("machine trace"), "{}", r.why);
    assert!(r.why.contains("INV_L1 WG"), "{}", r.why);
    assert!(r.why.contains("FETCH_L1(x, 0) [wg1]"), "{}", r.why);
}

#[test]
fn fig4_proposed_is_sound() {
    let r = check_with("opencl-rsp-proposed", FIG4, None, false);
    assert_eq!(r.verdict, Verdict::Sound);
    assert_eq!(r.source_states, r.target_states);
}

#[test]
fn fig5_original_loses_rmw_atomicity() {
    let r = check_with("opencl-rsp-original", FIG5, None, true);
    assert_eq!(r.verdict, Verdict::Unsound);
    assert_eq!(extra(&r), ["0:r0=0; x=1;"]);
    assert!(r.why.contains("INC_L1"), "{}", r.why);
    assert!(r.why.contains("FLUSH_L1(x, 1)"), "{}", r.why);
}

#[test]
fn fig5_proposed_is_sound() {
    let r = check_with("opencl-rsp-proposed", FIG5, None, false);
    assert_eq!(r.verdict, Verdict::Sound);
    assert_eq!(r.target_states.len(), 2);
}

#[test]
fn remote_load_needs_the_cacheline_lock_in_the_original_scheme() {
    // Seed 001 §5.5.1: the undocumented LK_L2/UL_L2 around the remote
    // load prevents the Fig. 4 bug; hardware without it shows it.
    let with = check_with("opencl-rsp-original", REMOTE_LOAD, None, false);
    assert_eq!(with.verdict, Verdict::Sound);
    let without = check_with(
        "opencl-rsp-original",
        REMOTE_LOAD,
        Some("rsp-cache-nolock"),
        false,
    );
    assert_eq!(without.verdict, Verdict::Unsound);
    assert_eq!(extra(&without), ["1:r1=0; 1:r0=1; x=42; y=1;"]);
    // The proposed scheme uses no cacheline lock: sound both ways.
    for target in [None, Some("rsp-cache-nolock")] {
        let r = check_with("opencl-rsp-proposed", REMOTE_LOAD, target, false);
        assert_eq!(r.verdict, Verdict::Sound, "{target:?}");
    }
}

#[test]
fn sources_are_race_free() {
    // A racy source proves nothing: the verdicts above must not be `racy`.
    for f in [FIG4, FIG5, REMOTE_LOAD] {
        let r = check_with("opencl-rsp-proposed", f, None, false);
        assert!(r.undefined_flags.is_empty(), "{f}: {:?}", r.undefined_flags);
    }
}

#[test]
fn outside_the_fragment_is_refused_by_compile() {
    // seq_cst atomics are not in the seed's fragment: no rule.
    let m = litmix::mapping::load("opencl-rsp-proposed").unwrap();
    let src = litmix::litmus::parse_str(
        "sc.litmus",
        "OpenCL sc\n{ [x]=0; }\nP0@wg 0, dev 0 (global atomic_int* x) {\n  atomic_store(x, 1);\n}\nexists ([x]=1)\n",
    )
    .unwrap();
    let e = litmix::mapping::compile::compile(&m, &src).unwrap_err();
    assert!(
        e.render().contains("has no rule for store sc"),
        "{}",
        e.render()
    );
}

fn parse_err(src: &str) -> String {
    litmix::litmus::parse_str("m.litmus", src)
        .map(|_| String::new())
        .unwrap_or_else(|d| d.render())
}

#[test]
fn front_end_errors_point_at_line_and_column() {
    let e = parse_err("RSP t\n{ x=0; }\n P0@wg 0,dev 0 ;\n FOO r0 x ;\nexists (0:r0=0)\n");
    assert!(e.contains("m.litmus:4:2"), "{e}");
    assert!(e.contains("unknown RSP instruction 'FOO'"), "{e}");
    let e = parse_err("RSP t\n{ x=0; }\n P0@wg 0,dev 0 ;\n FLU_L2 WG ;\nexists ([x]=0)\n");
    assert!(e.contains("m.litmus:4:9"), "{e}");
    assert!(e.contains("DV or SY"), "{e}");
    let e = parse_err("RSP t\n{ x=0; }\n P0@wg 0,dev 0 ;\n LD r0 ;\nexists ([x]=0)\n");
    assert!(e.contains("m.litmus:4"), "{e}");
    assert!(e.contains("location"), "{e}");
    let e = parse_err("RSP t\n{ x=0; }\n P0@cta 0 ;\n LD r0 x ;\nexists ([x]=0)\n");
    assert!(e.contains("unknown scope level 'cta'"), "{e}");
}

#[test]
fn run_model_rsp_cache_end_to_end() {
    let dir = std::env::temp_dir().join(format!("litmix-rsp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("fig4.litmus");
    std::fs::write(
        &f,
        "RSP Fig4\n{ x=0; y=0; }\n P0@wg 0,dev 0 | P1@wg 1,dev 0 ;\n ST 42 x | INV_L1 WG ;\n FLU_L1 WG | LD r0 y ;\n ST 1 y | LD r1 x ;\nexists (1:r0=1 /\\ 1:r1=0)\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_litmix"))
        .args(["run", "--model", "rsp-cache"])
        .arg(&f)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Test Fig4 Allowed"), "{text}");
    assert!(text.contains("1:r0=1; 1:r1=0;"), "{text}");
    // RSP tests default to the machine.
    let out = Command::new(env!("CARGO_BIN_EXE_litmix"))
        .arg("run")
        .arg(&f)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("Test Fig4 Allowed"));
    let _ = std::fs::remove_dir_all(&dir);
}
