//! `litmix synth` and `litmix compare --distinguish` end to end
//! (docs/synthesis.md): Lustig's ten x86-TSO tests, SB and R between SC
//! and x86-TSO, shards adding up, determinism across thread counts, the
//! cuts against `--no-prune`, and emitted tests passing `litmix conform`.

use std::process::{Command, Output};

fn litmix_env(args: &[&str], threads: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_litmix"));
    c.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    if let Some(t) = threads {
        c.env("RAYON_NUM_THREADS", t);
    }
    c.output().expect("run litmix")
}

fn litmix(args: &[&str]) -> Output {
    litmix_env(args, None)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The JSON summary of a run.
fn summary(args: &[&str]) -> serde_json::Value {
    let o = litmix(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(stdout(&o).trim()).expect("one JSON line")
}

/// `litmix conform` on the `expected.csv` a `synth --out DIR` run wrote,
/// with no known differences: it must pass; its report.
fn conform_agrees(dir: &std::path::Path) -> String {
    let none = dir.join("known.csv");
    std::fs::write(&none, "test,model,oracle,litmix,reason\n").unwrap();
    let c = litmix(&[
        "conform",
        "--expected",
        &dir.join("expected.csv").display().to_string(),
        "--known",
        &none.display().to_string(),
    ]);
    assert!(c.status.success(), "{}", stdout(&c));
    stdout(&c)
}

/// `compare --distinguish A B --arch ARCH --events N`.
fn distinguish<'a>(a: &'a str, b: &'a str, arch: &'a str, events: &'a str) -> Vec<&'a str> {
    vec![
        "compare",
        "--distinguish",
        a,
        b,
        "--arch",
        arch,
        "--events",
        events,
    ]
}

fn names(s: &serde_json::Value) -> Vec<String> {
    let mut v: Vec<String> = s["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

/// The tests without timings: name, program, condition, checks.
fn tests_of(s: &serde_json::Value) -> Vec<String> {
    s["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            format!(
                "{} {} {} {}",
                t["name"], t["program"], t["condition"], t["checks"]
            )
        })
        .collect()
}

#[test]
fn lustig_ten_tso_tests_at_four_events() {
    let s = summary(&[
        "synth", "--model", "x86tso", "--arch", "X86", "--events", "4", "--axiom", "ghb", "--json",
    ]);
    let mut want: Vec<String> = [
        "CoWW", "S", "2+2W", "W+W+RR", "CoMP", "CoRR", "W+WRR", "MP", "LB", "CoRW",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    want.sort();
    assert_eq!(names(&s), want);
    assert_eq!(s["verify_failures"], 0);
    // Every test really violates ghb, and the count per check says so.
    assert_eq!(s["by_check"]["ghb"], 10);
    // Without --axiom: the same ten plus the sc-per-location and
    // atomicity-only ones (CoRW1, CoWR, the atomicity test ...).
    let all = summary(&[
        "synth", "--model", "x86tso", "--arch", "X86", "--events", "4", "--json",
    ]);
    assert_eq!(all["by_check"]["ghb"], 10);
    assert!(names(&all).contains(&"CoWR".to_string()));
    assert!(names(&all).contains(&"CoRW1".to_string()));
}

#[test]
fn sc_and_tso_differ_by_sb_and_r_at_four_events() {
    let base = distinguish("sc", "x86tso", "X86", "4");
    let o = litmix(&[&base[..], &["--json"]].concat());
    assert!(o.status.success());
    let s: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(names(&s), vec!["R".to_string(), "SB".to_string()]);
    for t in s["tests"].as_array().unwrap() {
        assert_eq!(t["allowed_by"], "x86tso");
    }
    // --expect equal fails, --expect subset (sc's outcomes within tso's) holds.
    let eq = litmix(&[&base[..], &["--expect", "equal"]].concat());
    assert_eq!(eq.status.code(), Some(1));
    let sub = litmix(&[&base[..], &["--expect", "subset"]].concat());
    assert_eq!(sub.status.code(), Some(0), "{}", stdout(&sub));
    // A model against itself: the bounded claim.
    let same = litmix(
        &[
            &distinguish("x86tso", "x86tso", "X86", "3")[..],
            &["--expect", "equal"],
        ]
        .concat(),
    );
    assert!(same.status.success());
    assert!(
        stdout(&same).contains("x86tso and x86tso agree on all"),
        "{}",
        stdout(&same)
    );
}

#[test]
fn shards_add_up_to_the_whole() {
    let whole = summary(&[
        "synth", "--model", "x86tso", "--arch", "X86", "--events", "4", "--json",
    ]);
    let dir = std::env::temp_dir().join(format!("litmix-synth-shards-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for k in 1..=3 {
        let shard = format!("{k}/3");
        let o = litmix(&[
            "synth", "--model", "x86tso", "--arch", "X86", "--events", "4", "--json", "--shard",
            &shard,
        ]);
        assert!(o.status.success());
        let f = dir.join(format!("s{k}.json"));
        std::fs::write(&f, &o.stdout).unwrap();
        files.push(f.display().to_string());
    }
    let mut args = vec!["synth", "--json", "--merge"];
    args.extend(files.iter().map(String::as_str));
    let merged = summary(&args);
    for k in [
        "shapes",
        "programs",
        "outcomes",
        "found",
        "minimal",
        "unique",
        "inexpressible",
    ] {
        assert_eq!(merged[k], whole[k], "{k}");
    }
    assert_eq!(merged["by_check"], whole["by_check"]);
    // The same tests, named the same, in the same order: no two shards'
    // tests share a name.
    assert_eq!(merged["tests"], whole["tests"]);
    let names: std::collections::HashSet<&str> = merged["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), merged["tests"].as_array().unwrap().len());
    // A missing shard is an error.
    let o = litmix(&["synth", "--merge", &files[0], &files[1]]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn output_is_the_same_whatever_the_thread_count() {
    let args = [
        "synth", "--model", "x86tso", "--arch", "X86", "--events", "5", "--json",
    ];
    let one: serde_json::Value =
        serde_json::from_str(stdout(&litmix_env(&args, Some("1"))).trim()).unwrap();
    let four: serde_json::Value =
        serde_json::from_str(stdout(&litmix_env(&args, Some("4"))).trim()).unwrap();
    assert_eq!(tests_of(&one), tests_of(&four));
    for k in [
        "programs",
        "judged",
        "found",
        "minimal",
        "unique",
        "inexpressible",
    ] {
        assert_eq!(one[k], four[k], "{k}");
    }
}

#[test]
fn cuts_lose_nothing() {
    for (model, arch, events) in [
        ("x86tso", "X86", "4"),
        ("sc", "X86", "4"),
        ("ptx6", "PTX", "3"),
        ("ptx75", "PTX", "3"),
        ("cmm", "PTX", "3"),
        ("opencl", "OpenCL", "3"),
    ] {
        let args = [
            "synth", "--model", model, "--arch", arch, "--events", events, "--json",
        ];
        let cut = summary(&args);
        let plain = summary(&[&args[..], &["--no-prune"]].concat());
        assert!(!tests_of(&cut).is_empty(), "{model}");
        assert_eq!(tests_of(&cut), tests_of(&plain), "{model}");
        for k in ["minimal", "unique"] {
            assert_eq!(cut[k], plain[k], "{model} {k}");
        }
        assert_eq!(plain["scope_equivalent"], 0, "{model}");
        if arch == "PTX" || arch == "OpenCL" {
            // The scope cut leaves fillings out before the isomorphism
            // test (so fewer programs and non-minimal findings count).
            assert!(cut["scope_equivalent"].as_u64() > Some(0), "{model}");
            assert!(cut["programs"].as_u64() < plain["programs"].as_u64());
            assert!(cut["found"].as_u64() < plain["found"].as_u64(), "{model}");
        } else {
            for k in ["programs", "found", "scope_equivalent"] {
                assert_eq!(cut[k], plain[k], "{model} {k}");
            }
        }
    }
}

#[test]
fn distinguishing_cuts_lose_nothing() {
    // sc/ptx6 at 3: six minimal tests (weak CoRR, CoRW, CoWR; an exchange
    // beside a weak store, and an add beside one reading 0 or the store).
    // sc/x86tso at 5: SB, R and eight more. lostpop/ptx6 at 3 (an
    // operational model beside an axiomatic one): the same six. The same with every cut
    // and without; the cuts judge fewer programs (removals forbidden by
    // both models settle an outcome unjudged).
    for (a, b, arch, events, minimal) in [
        ("sc", "ptx6", "PTX", "3", 6),
        ("sc", "x86tso", "X86", "5", 10),
        ("lostpop", "ptx6", "PTX", "3", 6),
    ] {
        let args = [&distinguish(a, b, arch, events)[..], &["--json"]].concat();
        let cut = summary(&args);
        let plain = summary(&[&args[..], &["--no-prune"]].concat());
        assert_eq!(cut["minimal"], minimal, "{a} {b}");
        assert_eq!(tests_of(&cut), tests_of(&plain), "{a} {b}");
        for k in ["minimal", "unique"] {
            assert_eq!(cut[k], plain[k], "{a} {b} {k}");
        }
        if arch == "X86" {
            // No scope cut: every finding is the same.
            assert_eq!(cut["found"], plain["found"], "{a} {b}");
        }
        assert!(cut["judged"].as_u64() < plain["judged"].as_u64(), "{a} {b}");
    }
}

#[test]
fn emitted_tests_pass_conform_and_mutants_are_allowed() {
    let dir = std::env::temp_dir().join(format!("litmix-synth-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.display().to_string();
    let o = litmix(&[
        "synth",
        "--model",
        "x86tso",
        "--arch",
        "X86",
        "--events",
        "4",
        "--out",
        &d,
        "--allowed-set",
    ]);
    assert!(o.status.success());
    assert!(dir.join("MP.litmus").exists());
    assert!(dir.join("SB.litmus").exists() || !dir.join("SB.litmus").exists());
    let csv = std::fs::read_to_string(dir.join("expected.csv")).unwrap();
    assert!(csv.contains("MP.litmus,x86tso,No"), "{csv}");
    assert!(
        csv.lines()
            .any(|l| l.starts_with("MP+remove") && l.ends_with(",Ok"))
    );
    conform_agrees(&dir);
}

#[test]
fn bad_input_is_a_clear_error() {
    let o = litmix(&[
        "synth", "--model", "x86tso", "--arch", "X86", "--axiom", "nope",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no such check"));
    let o = litmix(&[
        "synth",
        "--model",
        "x86tso",
        "--vocab",
        "/nonexistent.vocab",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = litmix(&[
        "synth", "--model", "x86tso", "--arch", "X86", "--events", "40",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

/// LOST-POP against ptx6 on PTX programs of at most 3 events: six minimal
/// tests, each allowed by ptx6 and forbidden by LOST-POP (weak accesses
/// on two GPUs keep coherence in the machine, not in ptx6), none the other
/// way (seed 000 §5.1: the operational model is at least as strong). Three
/// put a CTA-scoped RMW on another GPU beside a weak store: an exchange or
/// an add reading 0 while written before the store in coherence
/// (atomicity), and an add (`+2`) reading the store's 1 and writing 3 while
/// the store is last (`x=1`: coherence).
#[test]
fn lostpop_is_never_weaker_than_ptx6_at_three_events() {
    let s = summary(&[&distinguish("lostpop", "ptx6", "PTX", "3")[..], &["--json"]].concat());
    let tests = s["tests"].as_array().unwrap();
    let names: Vec<&str> = tests.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["Wx+Ux", "Wx+Ux-2", "Wx+Ux-3", "CoRR", "CoRW", "CoWR"]
    );
    assert!(tests[2]["program"].as_str().unwrap().contains(".add"));
    assert_eq!(tests[2]["condition"], "exists (1:r0=1 /\\ x=1)");
    for t in tests {
        assert_eq!(t["allowed_by"], "ptx6", "{t}");
        assert!(t["program"].as_str().unwrap().contains("gpu1"), "{t}");
    }
}

/// `-I` and `--variant` reach the judges of `synth` and `compare
/// --distinguish` (they were once read only by test-list comparisons): a
/// model whose include is found only through `-I`, and whose check
/// exists only under a variant.
#[test]
fn include_dirs_and_variants_reach_the_search() {
    let dir = std::env::temp_dir().join(format!("litmix-synth-cat-{}", std::process::id()));
    let lib = dir.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(lib.join("sc-part.cat"), "acyclic po | rf | co | fr as sc\n").unwrap();
    let model = dir.join("m.cat");
    std::fs::write(
        &model,
        "\"m\"\nif \"strict\"\n  include \"sc-part.cat\"\nend\n",
    )
    .unwrap();
    let m = model.display().to_string();
    let l = lib.display().to_string();
    let base = [&distinguish("sc", &m, "X86", "4")[..], &["--json"]].concat();
    // Without the variant the model is empty: SB and friends distinguish.
    let loose = summary(&[&base[..], &["-I", &l]].concat());
    assert!(names(&loose).contains(&"SB".to_string()), "{loose}");
    // With it the model is SC but for RMW atomicity, which only the two
    // atomicity tests show.
    let strict = summary(&[&base[..], &["-I", &l, "--variant", "strict"]].concat());
    assert_eq!(names(&strict), ["Wx+Ux", "WxWx+Ux"], "{strict}");
    // The include is found only through -I.
    let o = litmix(&[&base[..], &["--variant", "strict"]].concat());
    assert!(!o.status.success());
    let synth = summary(&[
        "synth",
        "--model",
        &m,
        "--arch",
        "X86",
        "--events",
        "3",
        "-I",
        &l,
        "--variant",
        "strict",
        "--json",
    ]);
    assert!(synth["minimal"].as_u64().unwrap() > 0, "{synth}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// OpenCL with scopes: threads in work-groups of devices, each test in
/// one version per scope (work-group, device, all SVM devices) with its
/// threads as far apart as that scope reaches; a racy program promises
/// nothing (catch-fire), so no test is racy and racy weakenings count as
/// allowed and stay out of the allowed set, which `conform` then confirms.
#[test]
fn opencl_tests_come_per_scope_and_races_promise_nothing() {
    let dir = std::env::temp_dir().join(format!("litmix-synth-ocl-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.display().to_string();
    let s = summary(&[
        "synth",
        "--model",
        "opencl",
        "--arch",
        "OpenCL",
        "--events",
        "3",
        "--json",
        "--out",
        &d,
        "--allowed-set",
    ]);
    assert_eq!(s["vocab"], "opencl");
    assert_eq!(s["minimal"], 16, "{s}");
    assert_eq!(s["racy"], 0);
    assert!(s["racy_mutants"].as_u64() > Some(0), "{s}");
    let tests = tests_of(&s);
    for (name, place, scope) in [
        ("\"CoRR\"", "P1@wg0,dev0", "ld.rlx.work_group"),
        ("\"CoRR-2\"", "P1@wg1,dev0", "ld.rlx.device"),
        ("\"CoRR-3\"", "P1@wg1,dev1", "ld.rlx.all_svm_devices"),
    ] {
        assert!(
            tests
                .iter()
                .any(|t| t.starts_with(name) && t.contains(place) && t.contains(scope)),
            "{name}: {tests:#?}"
        );
    }
    let text = std::fs::read_to_string(dir.join("CoRR-2.litmus")).unwrap();
    assert!(text.contains("P1@wg 1, dev 0"), "{text}");
    assert!(text.contains("memory_scope_device"), "{text}");
    let c = conform_agrees(&dir);
    assert!(c.contains("agree   61"), "{c}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// PTX adds (`atom.add`): an add writes what it read plus its amount, so
/// values follow the reads. With loads, stores and relaxed adds at each
/// scope, the lost update of two adds on one CTA (both read 0) is a
/// minimal test, as is its GPU-scope version on two CTAs; every emitted
/// test and mutant is what `litmix run` says, and the cuts lose nothing.
#[test]
fn adds_give_the_lost_update_and_mean_what_they_say() {
    let dir = std::env::temp_dir().join(format!("litmix-synth-add-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let vocab = dir.join("adds.vocab");
    std::fs::write(
        &vocab,
        "vocab adds\narch PTX\nrmw-events 2\nscopes cta gpu sys\n\
         load ld.relaxed.{s} \"ld.relaxed.{s} {r}, {x}\"\n\
         store st.relaxed.{s} \"st.relaxed.{s} {x}, {v}\"\n\
         add atom.relaxed.{s}.add \"atom.relaxed.{s}.add {r}, {x}, {v}\"\n",
    )
    .unwrap();
    let v = vocab.display().to_string();
    let out = dir.join("out");
    let o = out.display().to_string();
    let args = [
        "synth", "--model", "ptx6", "--arch", "PTX", "--vocab", &v, "--events", "4",
    ];
    let s = summary(&[&args[..], &["--json", "--out", &o, "--allowed-set"]].concat());
    assert_eq!(s["verify_failures"], 0);
    let atom = std::fs::read_to_string(out.join("Atom.litmus")).unwrap();
    assert!(atom.contains("atom.relaxed.cta.add r0, x, 1"), "{atom}");
    assert!(atom.contains("atom.relaxed.cta.add r0, x, 2"), "{atom}");
    assert!(
        atom.contains("exists (0:r0=0 /\\ 1:r0=0 /\\ x=1)"),
        "{atom}"
    );
    let programs: Vec<String> = s["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| format!("{} {}", t["program"], t["condition"]))
        .collect();
    assert!(
        programs
            .iter()
            .any(|p| p.contains("cta1,gpu0: atom.relaxed.gpu.add")
                && p.contains("0:r0=0 /\\\\ 1:r0=0")),
        "{programs:?}"
    );
    // Two CTA-scoped adds on two CTAs are not atomic together: no test.
    assert!(
        !programs
            .iter()
            .any(|p| p.contains("cta0,gpu0: atom.relaxed.cta.add x | P1@cta1")),
        "{programs:?}"
    );
    conform_agrees(&out);
    let three = [&args[..8], &["3", "--json"]].concat();
    let cut = summary(&three);
    let plain = summary(&[&three[..], &["--no-prune"]].concat());
    assert!(!tests_of(&cut).is_empty());
    assert_eq!(tests_of(&cut), tests_of(&plain));
    let _ = std::fs::remove_dir_all(&dir);
}
