//! End-to-end tests of the `litmix` binary: output formats, explanations,
//! exit codes and error messages.

use std::path::PathBuf;
use std::process::{Command, Output};

fn litmix(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_litmix"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run litmix")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("litmix-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn herd_block_for_bundled_example() {
    let o = litmix(&["run", "examples/MP-gpu.litmus"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("Test MP-gpu Forbidden\nStates 3\n"),
        "{out}"
    );
    assert!(
        out.contains("\nOk\nWitnesses\nPositive: 3 Negative: 0\n"),
        "{out}"
    );
    assert!(
        out.contains("Condition ~exists (1:r0=1 /\\ 1:r1=0)\n"),
        "{out}"
    );
    assert!(out.contains("Observation MP-gpu Always 3 0\n"), "{out}");
    assert!(out.contains("\nTime MP-gpu "), "{out}");
}

#[test]
fn scope_mismatch_allows_the_stale_read() {
    let o = litmix(&["run", "examples/MP-cta-mismatch.litmus"]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(out.contains("1:r0=1; 1:r1=0;"), "{out}");
    assert!(out.contains("\nOk\n"), "{out}");
    assert!(
        out.contains("Observation MP-cta-mismatch Sometimes 1 3"),
        "{out}"
    );
}

#[test]
fn json_lines_have_the_documented_fields() {
    let o = litmix(&["run", "--json", "examples"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert!(lines.len() >= 3);
    for v in &lines {
        for key in [
            "file", "test", "model", "verdict", "states", "positive", "negative", "flags",
            "time_ms",
        ] {
            assert!(v.get(key).is_some(), "missing {key} in {v}");
        }
    }
    let sb = lines.iter().find(|v| v["test"] == "SB").expect("SB result");
    assert_eq!(sb["model"], "x86tso");
    assert_eq!(sb["verdict"], "Ok");
    assert_eq!(sb["states"].as_array().unwrap().len(), 4);
    let mp = lines
        .iter()
        .find(|v| v["test"] == "MP-gpu")
        .expect("MP result");
    assert_eq!(mp["model"], "ptx75", "ptx is the newest PTX model");
}

#[test]
fn model_override_changes_the_verdict() {
    let o = litmix(&["run", "--json", "--model", "sc", "examples/SB-x86.litmus"]);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["model"], "sc");
    assert_eq!(v["verdict"], "No");
    assert_eq!(v["states"].as_array().unwrap().len(), 3);
}

#[test]
fn why_names_the_axiom_and_the_cycle() {
    let o = litmix(&["run", "--why", "examples/MP-gpu.litmus"]);
    let out = stdout(&o);
    assert!(out.contains("Forbidden outcome: 1:r0=1; 1:r1=0;"), "{out}");
    assert!(out.contains("violates causality"), "{out}");
    // The cycle goes through the release/acquire communication and program order.
    assert!(out.contains("--rf--> e"), "{out}");
    assert!(out.contains("--po--> f"), "{out}");
    let j = litmix(&[
        "run",
        "--why",
        "--json",
        "--model",
        "x86tso",
        "examples/SB-x86.litmus",
    ]);
    let v: serde_json::Value = serde_json::from_str(stdout(&j).trim()).unwrap();
    assert_eq!(
        v["forbidden"].as_array().unwrap().len(),
        0,
        "SB is allowed on TSO"
    );
    let s = litmix(&[
        "run",
        "--why",
        "--json",
        "--model",
        "sc",
        "examples/SB-x86.litmus",
    ]);
    let v: serde_json::Value = serde_json::from_str(stdout(&s).trim()).unwrap();
    assert_eq!(v["forbidden"][0]["axiom"], "sc");
    assert_eq!(v["forbidden"][0]["cycle"].as_array().unwrap().len(), 4);
}

#[test]
fn dot_writes_witness_graphs() {
    let dir = tmp("dot");
    let o = litmix(&[
        "run",
        "--dot",
        dir.to_str().unwrap(),
        "--why",
        "examples/MP-cta-mismatch.litmus",
        "examples/MP-gpu.litmus",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let witness =
        std::fs::read_to_string(dir.join("MP-cta-mismatch-1.dot")).expect("witness graph");
    assert!(witness.starts_with("digraph"));
    assert!(witness.contains("[label=\"rf\""));
    assert!(witness.contains("cluster_P1"));
    let forbidden =
        std::fs::read_to_string(dir.join("MP-gpu-forbidden-1.dot")).expect("forbidden graph");
    assert!(forbidden.contains("forbidden by causality"));
    // The violated axiom's cycle is drawn, step by step.
    assert!(
        forbidden.contains("[label=\"rf\", color=crimson"),
        "{forbidden}"
    );
    assert!(
        forbidden.contains("[label=\"po\", color=crimson"),
        "{forbidden}"
    );
}

#[test]
fn parse_error_points_at_line_and_column_and_fails() {
    let dir = tmp("bad");
    let f = dir.join("bad.litmus");
    std::fs::write(
        &f,
        "PTX bad\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.bogus r0, x ;\nexists (P0:r0=1)\n",
    )
    .unwrap();
    let o = litmix(&["run", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("bad.litmus:4:5: error: unknown qualifier '.bogus'"),
        "{err}"
    );
    assert!(err.contains("bogus"), "{err}");
    // JSON mode reports the error as an object and still fails.
    let o = litmix(&[
        "run",
        "--json",
        f.to_str().unwrap(),
        "examples/SB-x86.litmus",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.iter().any(|v| v.get("error").is_some()));
    assert!(lines.iter().any(|v| v["verdict"] == "Ok"));
}

#[test]
fn cat_error_in_a_user_model_has_a_location() {
    let dir = tmp("cat");
    let m = dir.join("broken.cat");
    std::fs::write(&m, "\"broken\"\nlet a = po |\nacyclic a\n").unwrap();
    let o = litmix(&[
        "run",
        "--model",
        m.to_str().unwrap(),
        "examples/SB-x86.litmus",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("broken.cat:3:1: error:"), "{err}");
}

#[test]
fn user_model_runs() {
    let dir = tmp("user");
    let m = dir.join("tso.cat");
    std::fs::write(
        &m,
        "\"my tso\"\nlet ppo = po \\ (W * R)\nacyclic ppo | rfe | co | fr as ghb\nacyclic po-loc | rf | co | fr as uniproc\n",
    )
    .unwrap();
    let o = litmix(&[
        "run",
        "--json",
        "--model",
        m.to_str().unwrap(),
        "examples/SB-x86.litmus",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["verdict"], "Ok");
}

#[test]
fn unknown_model_is_a_clear_error() {
    let o = litmix(&["run", "--model", "armv9", "examples/SB-x86.litmus"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("no model named 'armv9'"), "{err}");
    assert!(err.contains("ptx6"), "{err}");
}

#[test]
fn candidate_limit_is_reported() {
    let o = litmix(&["run", "--max-candidates", "2", "examples/SB-x86.litmus"]);
    assert_eq!(o.status.code(), Some(1));
    // With pruning the budget counts partial candidates too (weighted work).
    let err = stderr(&o);
    assert!(
        err.contains("limit exceeded: the search did more than 2 units of work")
            && err.contains("raise --max-candidates"),
        "{err}"
    );
    let o = litmix(&[
        "run",
        "--no-prune",
        "--max-candidates",
        "2",
        "examples/SB-x86.litmus",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("limit exceeded: more than 2 candidate executions"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn coherence_blowup_is_refused_before_enumerating() {
    let dir = tmp("huge");
    let f = dir.join("huge.litmus");
    let mut src = String::from("PTX huge\n{ x=0; }\n");
    let n = 6;
    src.push_str(
        &(0..n)
            .map(|i| format!("P{i}@cta {i},gpu 0"))
            .collect::<Vec<_>>()
            .join(" | "),
    );
    src.push_str(" ;\n");
    for k in 0..3 {
        src.push_str(
            &(0..n)
                .map(|i| format!("st.relaxed.gpu x, {}", i * 10 + k + 1))
                .collect::<Vec<_>>()
                .join(" | "),
        );
        src.push_str(" ;\n");
    }
    src.push_str("exists (x=1)\n");
    std::fs::write(&f, src).unwrap();
    // Without pruning: 18 writes to x, 18! coherence orders, refused by count.
    let o = litmix(&["run", "--no-prune", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("limit exceeded: 6402373705728000 coherence orders"),
        "{err}"
    );
    // With pruning: the interleavings of six chains of three writes (18!/6^6
    // = 1.4e11) survive; the estimate of the pruned tree says so at once
    // (every random walk stops once past ten times the budget: "at least").
    let o = litmix(&["run", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("limit exceeded: the search would judge at least")
            && err.contains("even with pruning"),
        "{err}"
    );
}

#[test]
fn unroll_cut_is_reported() {
    let dir = tmp("loop");
    let f = dir.join("spin.litmus");
    std::fs::write(
        &f,
        "PTX spin\n{ f=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.relaxed.gpu f, 1 | L: ;\n | ld.relaxed.gpu r0, f ;\n | beq r0, 0, L ;\nexists (P1:r0=1)\n",
    )
    .unwrap();
    let o = litmix(&["run", "--json", "--unroll", "1", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["verdict"], "Ok");
    assert_eq!(v["cut_paths"], 1, "{v}");
    let t = litmix(&["run", "--unroll", "1", f.to_str().unwrap()]);
    assert!(stdout(&t).contains("Warning: 1 thread path(s) exceeded the unroll bound"));
}

#[test]
fn models_are_listed() {
    let o = litmix(&["models"]);
    let out = stdout(&o);
    for m in ["sc", "x86tso", "ptx6", "ptx"] {
        assert!(out.lines().any(|l| l.starts_with(m)), "{out}");
    }
}

#[test]
fn closed_pipe_ends_quietly() {
    use std::io::Read;
    // Enough output (about 300 KB) to overflow any pipe buffer.
    let mut args = vec!["run"];
    args.extend(std::iter::repeat_n("examples", 300));
    let mut child = Command::new(env!("CARGO_BIN_EXE_litmix"))
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn litmix");
    let mut first = [0u8; 4];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // stdout is closed here, like `litmix run ... | head -c 4`.
    let out = child.wait_with_output().unwrap();
    assert_eq!(&first, b"Test");
    assert_ne!(
        out.status.code(),
        Some(101),
        "panicked: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

#[test]
fn unknown_upper_case_name_is_an_error() {
    let dir = tmp("unknown-upper");
    let cat = dir.join("m.cat");
    std::fs::write(
        &cat,
        "let com = rf | co | fr\nacyclic po | com\nempty FOO & W as no-foo\n",
    )
    .unwrap();
    let o = litmix(&[
        "run",
        "--model",
        cat.to_str().unwrap(),
        "examples/MP-gpu.litmus",
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("m.cat:3:7") && err.contains("unknown identifier 'FOO'"),
        "{err}"
    );
    // Under `try` it is not an error, and --lenient makes it an empty set.
    std::fs::write(&cat, "let foo = try FOO with {}\nacyclic po | rf\n").unwrap();
    let o = litmix(&[
        "run",
        "--model",
        cat.to_str().unwrap(),
        "examples/MP-gpu.litmus",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(&cat, "empty FOO & W\n").unwrap();
    let o = litmix(&[
        "run",
        "--lenient",
        "--model",
        cat.to_str().unwrap(),
        "examples/MP-gpu.litmus",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("warning"), "{}", stderr(&o));
}

#[test]
fn herd_x86tso_as_written_matches_the_builtin() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = root.join("../shared/oracles/herd/libdir");
    let x86 = root.join("../shared/oracles/dat3m/X86");
    if !lib.is_dir() || !x86.is_dir() {
        eprintln!("skipping: ../shared/oracles not found");
        return;
    }
    let strip = |o: &std::process::Output| -> String {
        stdout(o)
            .lines()
            .filter(|l| !l.starts_with("Time "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let builtin = litmix(&["run", "--model", "x86tso", x86.to_str().unwrap()]);
    let herd = litmix(&[
        "run",
        "-I",
        lib.to_str().unwrap(),
        "--model",
        lib.join("x86tso.cat").to_str().unwrap(),
        x86.to_str().unwrap(),
    ]);
    assert!(herd.status.success(), "{}", stderr(&herd));
    let (a, b) = (strip(&builtin), strip(&herd));
    assert_eq!(a.matches("\nTest ").count() + 1, 244);
    assert!(a == b, "herd's x86tso.cat and the built-in differ");
}

/// `litmix step` reads commands from a pipe: a pick shows the taken
/// transition and the new state, undo returns to the initial state, a
/// replay rebuilds a trace, a bad number is refused, and always taking
/// transition 0 of LOST-POP on the compound MP test ends in a final state
/// (its outcome is shown) with nothing left enabled.
#[test]
fn step_picks_undoes_replays_and_reaches_a_final_state() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_litmix"))
        .args(["step", "examples/MP-x86-ptx-sys.litmus"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start litmix step");
    let mut script = String::from("0\nu\nu\nr 0,0\nt\n99\n");
    script.push_str(&"0\n".repeat(40));
    script.push_str("q\n");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(out.contains("took [0] accept P0: st.weak x, 1"), "{out}");
    assert!(
        out.contains("undone") && out.contains("at the initial state"),
        "{out}"
    );
    assert!(
        out.contains("replayed 2 steps") && out.contains("replay: 0,0"),
        "{out}"
    );
    assert!(out.contains("no transition 99"), "{out}");
    assert!(out.contains("final: "), "{out}");
    assert!(out.contains("no transition enabled"), "{out}");
}

/// `litmix step` refuses a model that is not operational.
#[test]
fn step_refuses_an_axiomatic_model() {
    let o = litmix(&["step", "--model", "ptx6", "examples/MP-gpu.litmus"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not an operational model"),
        "{}",
        stderr(&o)
    );
}

/// herd's `-bell`: a bell file's enums give one event set per tag (the
/// x86 front end's MFENCE events under `'mfence`), its `instructions`
/// declarations are accepted, and the model sees its definitions; the
/// same file through `include`; a missing bell file is a clear error.
#[test]
fn bell_file_sets_are_visible_to_the_model() {
    let dir = tmp("bell");
    std::fs::write(
        dir.join("fences.bell"),
        "\"x86 fences\"\nenum Fences = 'mfence || 'sfence\ninstructions F[Fences]\nlet Fenced = Mfence | Sfence\n",
    )
    .unwrap();
    let model =
        "let fence = po ; [Fenced] ; po\nacyclic (po \\ (W * R)) | fence | rfe | co | fr as tso\n";
    std::fs::write(dir.join("m.cat"), format!("\"bell tso\"\n{model}")).unwrap();
    std::fs::write(
        dir.join("inc.cat"),
        format!("\"inc\"\ninclude \"fences.bell\"\n{model}"),
    )
    .unwrap();
    let sbf = "X86 SBF\n{ x=0; y=0; }\n P0 | P1 ;\n MOV [x],$1 | MOV [y],$1 ;\n MFENCE | MFENCE ;\n MOV EAX,[y] | MOV EAX,[x] ;\nexists (0:EAX=0 /\\ 1:EAX=0)\n";
    std::fs::write(dir.join("SBF.litmus"), sbf).unwrap();
    let (bell, m, inc, sbf) = (
        dir.join("fences.bell"),
        dir.join("m.cat"),
        dir.join("inc.cat"),
        dir.join("SBF.litmus"),
    );
    let run = |args: &[&str]| {
        let o = litmix(args);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let s = |p: &PathBuf| p.to_str().unwrap().to_string();
    let with_bell = ["run", "--bell", &s(&bell), "--model", &s(&m)];
    // Without fences SB's outcome is allowed; with MFENCEs it is not.
    let out = run(&[&with_bell[..], &["examples/SB-x86.litmus"]].concat());
    assert!(out.contains("Observation SB Sometimes"), "{out}");
    let out = run(&[&with_bell[..], &[s(&sbf).as_str()]].concat());
    assert!(out.contains("Observation SBF Never"), "{out}");
    let out = run(&["run", "--model", &s(&inc), &s(&sbf)]);
    assert!(out.contains("Observation SBF Never"), "{out}");
    // A bell also goes in front of a built-in model (which ignores it).
    let out = run(&["run", "--bell", &s(&bell), "--model", "x86tso", &s(&sbf)]);
    assert!(out.contains("Observation SBF Never"), "{out}");
    // Without the bell, Fenced is unknown.
    let o = litmix(&["run", "--model", &s(&m), &s(&sbf)]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("unknown identifier 'Fenced'"),
        "{}",
        stderr(&o)
    );
    let o = litmix(&["run", "--bell", "no-such.bell", "--model", &s(&m), &s(&sbf)]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("cannot find bell file"),
        "{}",
        stderr(&o)
    );
}

/// Issue 27's first slow input: one PTX thread, a surface store and 23
/// texture loads (2^23 reads-from choices that pruning cannot cut). Every
/// probe of the search tree sees the same 1.7e7 nodes, over four times the
/// budget, so the estimate refuses it before the search starts (it used to
/// run until the work budget ran out, 21 s later).
#[test]
fn a_tree_every_probe_finds_too_big_is_refused_at_once() {
    let dir = tmp("tex23");
    let f = dir.join("tex23.test");
    let mut src = String::from(
        ".global x;\n.texref t virtually aliases x;\n.surfref s virtually aliases x;\n\nd0.b0.t0 {\n  $0, 1;\n",
    );
    for _ in 0..23 {
        src.push_str("  $1 r0, $2;\n");
    }
    src.push_str("}\n\n$3(r0 $4 1) as r0; \n\n$$\n\nsust [s] | tld | [t] | permit | !=\n");
    std::fs::write(&f, src).unwrap();
    let o = litmix(&["run", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("limit exceeded: the search would judge about")
            && err.contains("the smallest 1.7e7"),
        "{err}"
    );
}

/// A PTX thread of twenty loads, each followed by a branch on its value
/// over nothing: 2^20 paths, and every random walk of the path tree sees
/// that many, so the path limit is given before any path is built.
#[test]
fn a_path_tree_every_walk_finds_too_big_is_refused_at_once() {
    let dir = tmp("paths20");
    let f = dir.join("paths20.litmus");
    let mut src = String::from("PTX paths20\n{ x=0; }\n P0@cta 0,gpu 0 ;\n");
    for i in 0..20 {
        src.push_str(&format!(
            " ld.relaxed.gpu r{i}, x ;\n bne r{i}, 0, L{i} ;\n L{i}: ;\n"
        ));
    }
    src.push_str("exists (0:r0=1)\n");
    std::fs::write(&f, src).unwrap();
    let o = litmix(&["run", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("has more than 100000 control-flow paths (limit): about 1.0e6")
            && err.contains("random walks of its path tree"),
        "{err}"
    );
}
