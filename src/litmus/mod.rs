//! Litmus front ends: `.litmus` text → [`ir::Test`].
//!
//! The first word of the file names the architecture and picks the front
//! end. Supported: `PTX`, `X86` and compound `X86+PTX` (case-insensitive),
//! which use herd's table format, parsed by [`table`] (the clauses after
//! the threads by [`tail`]); the instructions of
//! each thread column are parsed by a [`dialect::Dialect`] chosen per thread
//! (see [`ptx`], [`x86`], [`compound`]); `RSP`, the assembly of the GPU
//! cache machine (seed 001 §5, [`rsp`]), uses the same table format. Also `C` / `OpenCL`, herd's C format
//! with thread functions, parsed by [`c`] (which hands its condition to the
//! shared [`tail`] parser).
//!
//! Adding a dialect means writing a `Dialect` for its instructions and a
//! match arm in [`parse_str`]. A compound test (`X86+PTX`, see [`compound`])
//! picks the dialect of each thread from its header (`P0@cpu` is x86).
//!
//! Registers versus locations: x86 registers are the fixed x86 register
//! names; for PTX see the rule in [`ptx`] (init-declared register, else
//! init-declared location, else `%name`/`r<N>` is a register, else a
//! location). In conditions `P0:r` / `0:r` is always a register, a bare `x`
//! or `[x]` a location (a bare name on the right of a comparison is its
//! address, as in herd).
//!
//! Proxies (PTX 7.5): alias declarations in the init block
//! (`y @ generic aliases x;`, `s @ surface aliases x;`) and the proxy
//! instructions of [`ptx`] (`sust`, `suld`, `tld`, `ld.const`,
//! `fence.proxy.*`, ...).
//!
//! Not supported (clear diagnostics): `bar.red`, predicated PTX (`@p`),
//! address offsets (`[x+4]`), the `filter` clause, non-locked x86 memory
//! arithmetic, proxy fences other than alias/surface/texture/constant.

pub mod c;
pub mod compound;
pub mod dialect;
pub mod lexer;
pub mod nvlitmus;
pub mod print;
mod print_c;
pub mod ptx;
pub mod rsp;
pub mod table;
pub mod tail;
pub mod token_parser;
pub mod x86;

use std::path::Path;

use crate::diag::Diagnostic;
use crate::ir::{self, Pos};
use dialect::Dialect;
use lexer::Lexer;

/// Architectures accepted on the first line.
pub const SUPPORTED_ARCHS: &[&str] = &["PTX", "X86", "X86+PTX", "C", "OpenCL", "RSP"];

/// herd variants that change how tests are read (`S128`: 128-bit values
/// in C tests), set by the driver from `--variant` ([`set_variants`]).
static VARIANTS: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// Sets the variants that change how tests are read (herd's `-variant`).
pub fn set_variants(variants: &[String]) {
    *VARIANTS.write().unwrap_or_else(|e| e.into_inner()) = variants.to_vec();
}

/// Whether the variant `name` is set (see [`set_variants`]).
pub fn variant_is_set(name: &str) -> bool {
    VARIANTS
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .any(|v| v == name)
}

/// Reads and parses a litmus file; [`ir::Test::file`] is set to `path`.
/// An NVLitmus file (`*.test`) must hold exactly one test; see
/// [`parse_file_all`] for templates.
pub fn parse_file(path: &Path) -> Result<ir::Test, Diagnostic> {
    let mut all = parse_file_all(path);
    if all.len() == 1 {
        return all.remove(0);
    }
    let name = path.display().to_string();
    Err(Diagnostic::new(
        name,
        Pos { line: 1, col: 1 },
        format!("the file holds {} tests (an NVLitmus template)", all.len()),
    )
    .expected("a file with one test; read templates with parse_file_all"))
}

/// Reads and parses every test of a file: one for a `.litmus` file, one per
/// template row and command for an NVLitmus `.test` file
/// ([`nvlitmus`]). [`ir::Test::file`] is set to `path`.
pub fn parse_file_all(path: &Path) -> Vec<Result<ir::Test, Diagnostic>> {
    let name = path.display().to_string();
    let source = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) => {
            return vec![Err(Diagnostic::new(
                name,
                Pos { line: 1, col: 1 },
                format!("cannot read file: {e}"),
            ))];
        }
    };
    let tests = if nvlitmus::is_nvlitmus_path(path) {
        nvlitmus::parse_all(&name, &source)
            .into_iter()
            .map(|i| i.test)
            .collect()
    } else {
        vec![parse_str(&name, &source)]
    };
    tests
        .into_iter()
        .map(|r| {
            r.map(|mut t| {
                t.file = Some(path.to_path_buf());
                t
            })
        })
        .collect()
}

/// Parses litmus source text; `file_name` is used in diagnostics.
pub fn parse_str(file_name: &str, source: &str) -> Result<ir::Test, Diagnostic> {
    parse_inner(file_name, source).map_err(|d| d.with_source(source))
}

fn parse_inner(file_name: &str, source: &str) -> Result<ir::Test, Diagnostic> {
    let lx = Lexer::new(file_name, source);
    let mut probe = lx;
    probe.skip_ws()?;
    let Some((arch, pos)) = probe.read_word() else {
        return Err(Diagnostic::new(file_name, probe.pos(), "empty file")
            .expected("a header line like 'PTX name' or 'X86 name'"));
    };
    let dialect: &'static dyn Dialect = match arch.to_ascii_uppercase().as_str() {
        "C" => return c::parse(lx, "C"),
        "OPENCL" => return c::parse(lx, "OpenCL"),
        "PTX" => &ptx::PTX,
        "X86" => &x86::X86_DIALECT,
        "RSP" => &rsp::RSP_DIALECT,
        "X86+PTX" | "PTX+X86" => return compound::parse(lx),
        _ => {
            return Err(Diagnostic::new(
                file_name,
                pos,
                format!("unsupported architecture '{arch}'"),
            )
            .expected(format!("one of {}", SUPPORTED_ARCHS.join(", "))));
        }
    };
    table::parse_table_test(lx, dialect.arch().name(), &|_| Ok(dialect))
}
