//! Compound X86+PTX tests: the front end (dialect per thread, placements,
//! the scopes clause, mixed conditions), the default model, and `--why`
//! naming the CMM axiom that forbids a compound outcome.

use litmix::driver::{FileOutcome, ModelCache, check_file};
use litmix::exec::CheckOptions;
use litmix::ir::{Arch, Prop, ScopeLevel, Term, Test};
use litmix::litmus::parse_str;
use std::path::PathBuf;
use std::process::Command;

#[track_caller]
fn parse(src: &str) -> Test {
    parse_str("t.litmus", src).unwrap_or_else(|d| panic!("{}", d.render()))
}

#[track_caller]
fn parse_err(src: &str) -> String {
    match parse_str("t.litmus", src) {
        Ok(_) => panic!("expected an error"),
        Err(d) => d.render(),
    }
}

fn lvl(level: &str, id: u32) -> ScopeLevel {
    ScopeLevel {
        level: level.to_string(),
        id,
    }
}

fn cmm_test(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/models/cmm/{name}.litmus"))
}

const MP: &str = "X86+PTX MP
{ x=0; y=0; }
 P0@cta 0,gpu 0      | P1@cpu      | P2@cpu 1    ;
 st.weak x, 1        | MOV EAX,[y] | MOV EAX,[x] ;
 st.release.sys y, 1 | MOV EBX,[x] |             ;
exists (P1:EAX == 1 /\\ 1:EBX == 0 /\\ P0:r0 == 0)
";

#[test]
fn dialect_and_placement_per_thread() {
    let t = parse(MP);
    assert_eq!(t.arch, "X86+PTX");
    let archs: Vec<Arch> = t.threads.iter().map(|th| th.arch).collect();
    assert_eq!(archs, [Arch::Ptx, Arch::X86, Arch::X86]);
    assert_eq!(t.threads[0].placement, [lvl("gpu", 0), lvl("cta", 0)]);
    // `@cpu` alone is CPU 0; `@cpu 1` a second CPU device.
    assert_eq!(t.threads[1].placement, [lvl("cpu", 0)]);
    assert_eq!(t.threads[2].placement, [lvl("cpu", 1)]);
    // Every instruction carries its thread's arch tag.
    assert!(t.threads[0].code.iter().all(|i| i.tags[0] == "PTX"));
    assert!(t.threads[1].code.iter().all(|i| i.tags[0] == "X86"));
    // One location table shared by both dialects.
    let names: Vec<&str> = t.locations.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["x", "y"]);
}

#[test]
fn conditions_mix_register_kinds() {
    let t = parse(MP);
    let mut regs = Vec::new();
    fn walk(p: &Prop, out: &mut Vec<(usize, String)>) {
        match p {
            Prop::And(a, b) | Prop::Or(a, b) => {
                walk(a, out);
                walk(b, out);
            }
            Prop::Not(a) => walk(a, out),
            Prop::Cmp(_, Term::Reg { thread, reg }, _) => out.push((*thread, reg.clone())),
            _ => {}
        }
    }
    walk(&t.condition.prop, &mut regs);
    assert_eq!(
        regs,
        [
            (1, "EAX".to_string()),
            (1, "EBX".to_string()),
            (0, "r0".to_string())
        ]
    );
}

#[test]
fn scopes_clause_places_bare_threads() {
    let t = parse(
        "X86+PTX s
{ x=0; }
 P0          | P1           | P2           ;
 MOV [x],1   | ld.weak r0,x | ld.weak r1,x ;
scopes: (system (cpu P0) (gpu (cta P1) (cta P2)))
exists (P1:r0 == 1)
",
    );
    let archs: Vec<Arch> = t.threads.iter().map(|th| th.arch).collect();
    assert_eq!(archs, [Arch::X86, Arch::Ptx, Arch::Ptx]);
    assert_eq!(t.threads[0].placement, [lvl("cpu", 0)]);
    assert_eq!(t.threads[1].placement, [lvl("gpu", 0), lvl("cta", 0)]);
    assert_eq!(t.threads[2].placement, [lvl("gpu", 0), lvl("cta", 1)]);
    // PTX+X86 is accepted as a spelling of the same architecture.
    let t = parse(
        "PTX+X86 s\n{}\n P0@cpu | P1@cta 0,gpu 0 ;\n MFENCE | fence.sc.sys ;\nexists (true)\n",
    );
    assert_eq!(t.arch, "X86+PTX");
}

#[test]
fn compound_errors() {
    let e = parse_err("X86+PTX t\n{}\n P0 | P1@cpu ;\n MOV [x],1 | MOV [x],2 ;\nexists (x == 1)\n");
    assert!(e.contains("t.litmus:3:2"), "{e}");
    assert!(e.contains("must say its device"), "{e}");
    // x86 syntax is not accepted in a GPU thread, nor PTX in a CPU thread.
    let e = parse_err("X86+PTX t\n{}\n P0@cpu ;\n st.weak x, 1 ;\nexists (x == 1)\n");
    assert!(e.contains("t.litmus:4:2"), "{e}");
    // A CPU thread cannot sit in a GPU level of the scope tree.
    let e = parse_err(
        "X86+PTX t\n{}\n P0 | P1 ;\n MOV [x],1 | st.weak x, 2 ;\nscopes: (system (gpu (cpu P0) (cta P1)))\nexists (x == 1)\n",
    );
    assert!(e.contains("scope level 'gpu'"), "{e}");
}

#[test]
fn default_model_is_cmm() {
    assert_eq!(litmix::models::default_for_arch("X86+PTX"), "cmm");
    let cache = ModelCache::default();
    let path = cmm_test("Fig2b-MP-ptx-rel.gpu+x86");
    match check_file(&path, None, &cache, &CheckOptions::default()) {
        FileOutcome::Checked { result, .. } => {
            assert_eq!(result.model, "cmm");
            assert!(result.validated, "Fig. 2b is allowed");
        }
        FileOutcome::Failed { message, .. } => panic!("{message}"),
    }
}

/// Fig. 2a: a .sys release is ordered for the CPU consumer; the explanation
/// names the CMM axiom.
#[test]
fn why_names_the_cmm_axiom() {
    let cache = ModelCache::default();
    let opts = CheckOptions {
        why: true,
        ..CheckOptions::default()
    };
    let path = cmm_test("Fig2a-MP-ptx-rel.sys+x86");
    let FileOutcome::Checked { result, .. } = check_file(&path, Some("cmm"), &cache, &opts) else {
        panic!("Fig2a does not check");
    };
    assert!(!result.validated);
    assert_eq!(result.forbidden.len(), 1);
    assert_eq!(result.forbidden[0].failure.check, "CMM-Causality");

    let bin = env!("CARGO_BIN_EXE_litmix");
    let out = Command::new(bin)
        .args(["run", "--why"])
        .arg(&path)
        .output()
        .expect("run litmix");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Forbidden outcome: 1:EAX=1; 1:EBX=0;"),
        "{text}"
    );
    assert!(text.contains("violates CMM-Causality"), "{text}");

    let out = Command::new(bin)
        .args(["run", "--json", "--why"])
        .arg(&path)
        .arg(cmm_test("SB+x86-mfence+ptx-fence.sc.sys"))
        .output()
        .expect("run litmix");
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let j: serde_json::Value = serde_json::from_str(line).expect("JSON line");
        assert_eq!(j["verdict"], "No", "{line}");
        let axiom = j["forbidden"][0]["axiom"].as_str().unwrap_or_default();
        assert!(axiom.starts_with("CMM-"), "{line}");
    }
}
