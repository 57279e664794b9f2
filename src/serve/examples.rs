//! The playground's bundled examples: the project's own litmus tests, whose
//! verdicts `tests/models/expected.csv` pins by hand (so an example never
//! shows an unchecked answer). Grouped by dialect for the page's picker.

/// One bundled example.
pub struct Example {
    /// The picker's group (dialect, or the paper the figures come from).
    pub group: &'static str,
    /// The test's name.
    pub name: &'static str,
    /// The model the page selects with it.
    pub model: &'static str,
    /// The litmus text.
    pub source: &'static str,
}

macro_rules! example {
    ($group:expr, $name:expr, $model:expr, $path:literal) => {
        Example {
            group: $group,
            name: $name,
            model: $model,
            source: include_str!(concat!("../../", $path)),
        }
    };
}

/// Every bundled example, in picker order (MP, SB, IRIW, WRC per dialect,
/// the seeds' figures, the proxy tests, operational machines).
pub const EXAMPLES: &[Example] = &[
    example!("PTX", "MP+weak", "ptx6", "tests/models/ptx6/MP+weak.litmus"),
    example!(
        "PTX",
        "MP+rel.gpu+acq.gpu",
        "ptx6",
        "tests/models/ptx6/MP+rel.gpu+acq.gpu.litmus"
    ),
    example!(
        "PTX",
        "MP+rel.cta+acq.cta-diffcta",
        "ptx6",
        "tests/models/ptx6/MP+rel.cta+acq.cta-diffcta.litmus"
    ),
    example!("PTX", "SB+weak", "ptx6", "tests/models/ptx6/SB+weak.litmus"),
    example!(
        "PTX",
        "SB+fence.sc.gpu",
        "ptx6",
        "tests/models/ptx6/SB+fence.sc.gpu.litmus"
    ),
    example!(
        "PTX",
        "IRIW+rlx",
        "ptx6",
        "tests/models/ptx6/IRIW+rlx.litmus"
    ),
    example!(
        "PTX",
        "IRIW+rlx+fence.sc",
        "ptx6",
        "tests/models/ptx6/IRIW+rlx+fence.sc.litmus"
    ),
    example!(
        "PTX",
        "WRC+rlx+rel-acq",
        "ptx6",
        "tests/models/ptx6/WRC+rlx+rel-acq.litmus"
    ),
    example!(
        "PTX",
        "ISA2+rel-acq.gpu",
        "ptx6",
        "tests/models/ptx6/ISA2+rel-acq.gpu.litmus"
    ),
    example!("X86", "MP", "x86tso", "tests/models/x86tso/MP.litmus"),
    example!("X86", "SB", "x86tso", "tests/models/x86tso/SB.litmus"),
    example!(
        "X86",
        "SB+mfences",
        "x86tso",
        "tests/models/x86tso/SB+mfences.litmus"
    ),
    example!("X86", "IRIW", "x86tso", "tests/models/x86tso/IRIW.litmus"),
    example!("X86", "WRC", "x86tso", "tests/models/x86tso/WRC.litmus"),
    example!(
        "X86+PTX (seed 000 figures)",
        "Fig2a-MP-ptx-rel.sys+x86",
        "cmm",
        "tests/models/cmm/Fig2a-MP-ptx-rel.sys+x86.litmus"
    ),
    example!(
        "X86+PTX (seed 000 figures)",
        "Fig2b-MP-ptx-rel.gpu+x86",
        "cmm",
        "tests/models/cmm/Fig2b-MP-ptx-rel.gpu+x86.litmus"
    ),
    example!(
        "X86+PTX (seed 000 figures)",
        "Fig3a-IRIW-x86-writers+ptx-fence.sc",
        "cmm",
        "tests/models/cmm/Fig3a-IRIW-x86-writers+ptx-fence.sc.litmus"
    ),
    example!(
        "X86+PTX (seed 000 figures)",
        "Fig3b-IRIW-ptx-writers+x86-readers",
        "cmm",
        "tests/models/cmm/Fig3b-IRIW-ptx-writers+x86-readers.litmus"
    ),
    example!(
        "X86+PTX (seed 000 figures)",
        "Fig9-IRIW-x86-ptx",
        "cmm",
        "tests/models/cmm/Fig9-IRIW-x86-ptx.litmus"
    ),
    example!(
        "X86+PTX (seed 000 figures)",
        "Fig10-WRC-x86+ptx-rlx.gpu-rel.sys+ptx",
        "cmm",
        "tests/models/cmm/Fig10-WRC-x86+ptx-rlx.gpu-rel.sys+ptx.litmus"
    ),
    example!(
        "X86+PTX (seed 000 figures)",
        "SB+x86+ptx-fence.sc.sys",
        "cmm",
        "tests/models/cmm/SB+x86+ptx-fence.sc.sys.litmus"
    ),
    example!("C", "MP+rlx", "rc11", "tests/models/rc11/MP+rlx.litmus"),
    example!(
        "C",
        "MP+rel+acq",
        "rc11",
        "tests/models/rc11/MP+rel+acq.litmus"
    ),
    example!("C", "SB+sc", "rc11", "tests/models/rc11/SB+sc.litmus"),
    example!(
        "C",
        "SB+rel+acq",
        "rc11",
        "tests/models/rc11/SB+rel+acq.litmus"
    ),
    example!("C", "IRIW+sc", "rc11", "tests/models/rc11/IRIW+sc.litmus"),
    example!("C", "IRIW+acq", "rc11", "tests/models/rc11/IRIW+acq.litmus"),
    example!(
        "C",
        "WRC+rel+acq",
        "rc11",
        "tests/models/rc11/WRC+rel+acq.litmus"
    ),
    example!(
        "OpenCL",
        "MP+fences.dv",
        "opencl",
        "tests/models/opencl/MP+fences.dv.litmus"
    ),
    example!(
        "OpenCL",
        "MP.wg-diffwg",
        "opencl",
        "tests/models/opencl/MP.wg-diffwg.litmus"
    ),
    example!(
        "OpenCL",
        "SB.sc.dv",
        "opencl",
        "tests/models/opencl/SB.sc.dv.litmus"
    ),
    example!(
        "OpenCL",
        "IRIW.sc.dv",
        "opencl",
        "tests/models/opencl/IRIW.sc.dv.litmus"
    ),
    example!(
        "OpenCL",
        "Barrier-MP.samewg",
        "opencl",
        "tests/models/opencl/Barrier-MP.samewg.litmus"
    ),
    example!(
        "PTX proxies (seed 002 Fig. 8)",
        "Fig8a-no-fence",
        "ptx75",
        "tests/models/ptx75/Fig8a-no-fence.litmus"
    ),
    example!(
        "PTX proxies (seed 002 Fig. 8)",
        "Fig8a-alias-fence",
        "ptx75",
        "tests/models/ptx75/Fig8a-alias-fence.litmus"
    ),
    example!(
        "PTX proxies (seed 002 Fig. 8)",
        "Fig8b-constant-fence",
        "ptx75",
        "tests/models/ptx75/Fig8b-constant-fence.litmus"
    ),
    example!(
        "PTX proxies (seed 002 Fig. 8)",
        "Fig8c-fence-in-reader",
        "ptx75",
        "tests/models/ptx75/Fig8c-fence-in-reader.litmus"
    ),
    example!(
        "PTX proxies (seed 002 Fig. 8)",
        "Fig8d-fence-in-writer",
        "ptx75",
        "tests/models/ptx75/Fig8d-fence-in-writer.litmus"
    ),
    example!(
        "PTX proxies (seed 002 Fig. 8)",
        "Fig8e-fence-other-cta",
        "ptx75",
        "tests/models/ptx75/Fig8e-fence-other-cta.litmus"
    ),
    example!(
        "PTX proxies (seed 002 Fig. 8)",
        "Fig8f-surface-then-constant",
        "ptx75",
        "tests/models/ptx75/Fig8f-surface-then-constant.litmus"
    ),
    example!(
        "PTX proxies (seed 002 Fig. 8)",
        "Fig8f-wrong-order",
        "ptx75",
        "tests/models/ptx75/Fig8f-wrong-order.litmus"
    ),
    example!(
        "Denotational: pomsets (seed 003)",
        "V05-MP+Frel+Facq",
        "pwt",
        "tests/models/pwt/V05-MP+Frel+Facq.litmus"
    ),
    example!(
        "Denotational: pomsets (seed 003)",
        "V14-TC16_WK",
        "pwt",
        "tests/models/pwt/V14-TC16_WK.litmus"
    ),
    example!(
        "Operational: LOST-POP (seed 000)",
        "R",
        "lostpop",
        "tests/models/x86tso/R.litmus"
    ),
    example!(
        "Operational: GPU cache machine (seed 001)",
        "MP.flu+inv-before.diffwg",
        "rsp-cache",
        "tests/models/rsp-cache/MP.flu+inv-before.diffwg.litmus"
    ),
    example!(
        "Operational: GPU cache machine (seed 001)",
        "MP.flu+inv-after.diffwg",
        "rsp-cache",
        "tests/models/rsp-cache/MP.flu+inv-after.diffwg.litmus"
    ),
    example!(
        "Operational: GPU cache machine (seed 001)",
        "Fig5.original",
        "rsp-cache",
        "tests/models/rsp-cache/Fig5.original.litmus"
    ),
];

/// The example named `name`.
pub fn find(name: &str) -> Option<&'static Example> {
    EXAMPLES.iter().find(|e| e.name == name)
}
