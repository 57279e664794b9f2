//! Every fixture in tests/inputs/bad fails with the diagnostic its doc string
//! announces: `"expect LINE:COL: message fragment"`.

use std::path::Path;

use litmix::litmus::parse_file;

#[test]
fn bad_fixtures_fail_where_announced() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inputs/bad");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "litmus"))
        .collect();
    files.sort();
    assert!(files.len() >= 5);
    for f in files {
        let src = std::fs::read_to_string(&f).unwrap();
        let spec = src
            .split("\"expect ")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap_or_else(|| panic!("{}: no \"expect L:C: msg\" doc string", f.display()));
        let (pos, msg) = spec.split_once(": ").unwrap();
        let d = parse_file(&f).expect_err(&f.display().to_string());
        assert_eq!(d.pos.to_string(), pos, "{}", d.render());
        assert!(d.message.contains(msg), "{}", d.render());
        assert!(d.file.ends_with(".litmus"));
    }
}
