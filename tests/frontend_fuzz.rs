//! Robustness: mangled inputs give `Ok` or `Err`, never a panic.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use litmix::litmus::parse_str;

const PTX_SAMPLE: &str = r#"PTX fuzz-ptx (junk) "doc
 over | lines"
Cycle=Rfe Fre
{
x=0; y = 0; int z = 1; p=&x;
P0:r1=0; P1:r2=&y; 1:r3 = 2;
}
 P0@cta 0,gpu 0              | P1@cta 1,gpu 0          ;
 st.weak x, 1                | LC00:                   ;
 fence.sc.gpu                | ld.acquire.gpu r0, y    ;
 atom.acq_rel.gpu.cas r1, y, 0, 1 | beq r0, 0, LC00    ;
 red.relaxed.sys.add [p], r1 | bar.cta.sync 1, r3      ;
 membar.gl                   | ld r4, [r2]             ;
scopes: (sys (gpu (cta P0) (cta P1)))
locations [x; P1:r4;]
forall
(P1:r0 == 1 /\ ~(P1:r4 != 1) \/ [x] = 2 /\ P0:r1 == P1:r2)
<< show 0 >>
"#;

const X86_SAMPLE: &str = r#"X86 fuzz-x86 (xx) "Stores are not reordered with locks"
{x = 0; y = 0; P0:EAX = 1};

        P0         |       P1        ;
  xchg [x], EAX    |  mov EBX, [y]   ;
  MOV [y],$1       |  CMP EBX,1      ;
  LOCK XADD [x],EAX|  JE L0          ;
  MFENCE           |  L0: mov ECX, [x] ;

~exists (P1:EBX = 1 /\ 1:ECX = 0 \/ x=1);

(* comment *)
<<
show 0
>>
"#;

/// Parses `src`, turning a panic into a test failure that shows the input.
fn no_panic(src: &str) {
    let r = catch_unwind(AssertUnwindSafe(|| {
        let _ = parse_str("fuzz.litmus", src).map_err(|d| d.render());
    }));
    assert!(r.is_ok(), "parse_str panicked on input:\n{src}");
}

const FLIPS: &[char] = &[
    '|', ';', '(', ')', '[', ']', '{', '}', '"', '@', '.', ':', ',', '~', '0', '9', 'x', 'P', '-',
    '&', '$', '*', '\n', ' ', '#', 'é',
];

fn mangle(src: &str) {
    mangle_with(src, FLIPS);
}

fn mangle_with(src: &str, flips: &[char]) {
    // Truncate at every character boundary.
    for (i, _) in src.char_indices() {
        no_panic(&src[..i]);
    }
    no_panic(src);
    // Replace every character by each of a few troublesome ones.
    let chars: Vec<char> = src.chars().collect();
    for i in 0..chars.len() {
        for &f in flips {
            if chars[i] == f {
                continue;
            }
            let mut v = chars.clone();
            v[i] = f;
            no_panic(&v.iter().collect::<String>());
        }
        // And delete it.
        let mut v = chars.clone();
        v.remove(i);
        no_panic(&v.iter().collect::<String>());
    }
}

#[test]
fn samples_parse() {
    for s in [PTX_SAMPLE, X86_SAMPLE] {
        parse_str("fuzz.litmus", s).unwrap_or_else(|d| panic!("{}", d.render()));
    }
}

#[test]
fn mangled_ptx_never_panics() {
    mangle(PTX_SAMPLE);
}

#[test]
fn mangled_x86_never_panics() {
    mangle(X86_SAMPLE);
}

#[test]
fn mangled_oracles_never_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let picks = [
        "PTX/Manual/Ticketlock-same-gpu.litmus",
        "PTX/Manual/SB+named-bar-reg-diff.litmus",
        "PTX/Manual/proxy/Proxy-Alias-AliasFence.litmus",
        "X86/iwp2.3.b.litmus",
        "X86/ISA2.litmus",
    ];
    let mut done = 0;
    for up in ["..", "../.."] {
        let base = root.join(up).join("shared/oracles/dat3m");
        if !base.is_dir() {
            continue;
        }
        for p in picks {
            if let Ok(src) = std::fs::read_to_string(base.join(p)) {
                mangle_with(&src, &['|', ';', '(', '"', '.', '\n']);
                done += 1;
            }
        }
        break;
    }
    if done == 0 {
        println!("skipping: oracle folder ../shared/oracles/dat3m is absent");
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let open = "(".repeat(100_000);
    let src = format!("X86 t\n{{}}\n P0 ;\n MFENCE ;\nexists {open}x=1\n");
    let d = parse_str("deep.litmus", &src).unwrap_err();
    assert!(d.message.contains("too deep"), "{}", d.render());
    let tildes = "~".repeat(100_000);
    let src = format!("X86 t\n{{}}\n P0 ;\n MFENCE ;\nexists {tildes}x=1\n");
    assert!(parse_str("deep.litmus", &src).is_err());
    let src = format!("X86 t\n{{}}\n P0 ;\n MFENCE ;\nscopes: {open}\nexists x=1\n");
    assert!(parse_str("deep.litmus", &src).is_err());
}

#[test]
fn nesting_up_to_the_limit_parses() {
    let n = 60; // `(` and `~` both count: 120 levels
    let src = format!(
        "X86 t\n{{}}\n P0 ;\n MFENCE ;\nexists {}x=1{}\n",
        "(~".repeat(n),
        ")".repeat(n)
    );
    parse_str("deep.litmus", &src).unwrap_or_else(|d| panic!("{}", d.render()));
}

const NVLITMUS_SAMPLE: &str = r#"// template
.global x;
.global y physically aliases x;
.surfref s virtually aliases y;
.global flag;

d0.b0.t0 {
  $0, 2;
  $1
  st.release.gpu [flag], 1;
}

d0.b1.t0 {
  ld.acquire.gpu r0, [flag] == 1;
  $2
  $3 r1, $4;
}

$5(r1 $6 2 && not r0 != 1) as r1;

$$
sust [s] | fence.proxy.surface; fence.proxy.alias; | | ld | [x] | assert | ==
"#;

#[test]
fn mangled_nvlitmus_never_panics() {
    let parse = |src: &str| {
        let r = catch_unwind(AssertUnwindSafe(|| {
            for i in litmix::litmus::nvlitmus::parse_all("fuzz.test", src) {
                let _ = i.test.map_err(|d| d.render());
            }
        }));
        assert!(r.is_ok(), "nvlitmus panicked on input:\n{src}");
    };
    let all = litmix::litmus::nvlitmus::parse_all("fuzz.test", NVLITMUS_SAMPLE);
    assert_eq!(all.len(), 1);
    if let Err(d) = &all[0].test {
        panic!("{}", d.render());
    }
    let chars: Vec<char> = NVLITMUS_SAMPLE.chars().collect();
    for (i, _) in NVLITMUS_SAMPLE.char_indices() {
        parse(&NVLITMUS_SAMPLE[..i]);
    }
    for i in 0..chars.len() {
        for f in ['$', '|', ';', '{', '}', '[', '=', '9', '.', '\n', 'é', '/'] {
            let mut v = chars.clone();
            v[i] = f;
            parse(&v.iter().collect::<String>());
        }
        let mut v = chars.clone();
        v.remove(i);
        parse(&v.iter().collect::<String>());
    }
}
