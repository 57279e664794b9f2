//! What the executor hands a model for tests with aliases and proxies: one
//! init write per physical location, `loc` physical, `vloc` virtual, proxy
//! tags, final values through aliases.

use litmix::cat::Model;
use litmix::exec::{CheckOptions, check};
use litmix::litmus::parse_str;

const MODEL: &str = r#""probe"
flag empty ((IW * IW) \ id) as one-init-write
flag ~empty (((W \ IW) * R) & loc & ~vloc) as same-location-other-address
flag ~empty (((W \ IW) * R) & vloc) as same-address
flag ~empty (R & GENERIC) as generic-read
flag ~empty (W & SURFACE) as surface-write
flag ~empty (F & PROXY & ALIAS) as alias-fence
flag ~empty (IW & GENERIC) as init-has-proxy
"#;

fn flags(src: &str) -> (Vec<String>, bool) {
    let test = parse_str("t.litmus", src).unwrap_or_else(|d| panic!("{}", d.render()));
    let model = Model::parse("probe.cat", MODEL, &|_| None).unwrap();
    let r = check(&test, &model, &CheckOptions::default()).unwrap();
    (r.flags.into_iter().collect(), r.validated)
}

#[test]
fn generic_alias_is_same_location_other_address() {
    let (f, ok) = flags(
        "PTX t\n{ x = 0; y @ generic aliases x; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\n \
         fence.proxy.alias ;\n ld.weak r0, y ;\nexists (y == 1 /\\ P0:r0 == 1)\n",
    );
    assert!(ok, "the final value of y is x's and r0 may read 1");
    for want in [
        "one-init-write",
        "same-location-other-address",
        "generic-read",
        "alias-fence",
    ] {
        assert!(f.contains(&want.to_string()), "{want} missing from {f:?}");
    }
    assert!(!f.contains(&"same-address".to_string()), "{f:?}");
    assert!(!f.contains(&"init-has-proxy".to_string()), "{f:?}");
}

#[test]
fn surface_alias_is_same_address() {
    let (f, _) = flags(
        "PTX t\n{ x = 0; s @ surface aliases x; }\n P0@cta 0,gpu 0 ;\n sust.weak s, 1 ;\n \
         ld.weak r0, x ;\nexists (P0:r0 == 1)\n",
    );
    for want in [
        "one-init-write",
        "same-address",
        "surface-write",
        "generic-read",
    ] {
        assert!(f.contains(&want.to_string()), "{want} missing from {f:?}");
    }
    assert!(
        !f.contains(&"same-location-other-address".to_string()),
        "{f:?}"
    );
}
