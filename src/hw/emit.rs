//! PTX kernel text for a [`Plan`]: the test kernel `litmix_test` (every
//! grid thread runs one role of one instance, or stresses memory), the
//! reset and gather kernels around it, and one `litmix_role_N` kernel per
//! role holding exactly that role's body, for the SASS check ([`super::sass`]).
//!
//! The test's instructions are emitted one for one from the IR: the
//! semantics and scope tags become the PTX qualifiers again (`RLX GPU` →
//! `.relaxed.gpu`, `WEAK` → `.weak`, `RLX SYS VOL` → `.volatile`), the
//! registers are renamed (`%vN`), a location becomes the register holding
//! this instance's address of it (`%locJ`), labels are prefixed by the
//! role. Two rewrites keep the meaning: an immediate operand is first moved
//! into a harness register (PTX wants registers there), and `atom.sub`,
//! which PTX lacks, is `atom.add` of the negated value. Every emitted
//! instruction carries the source line as a comment.

use super::Plan;
use crate::ir::{Address, BinOp, CmpOp, Instr, InstrKind, Operand, RmwOp, Value};
use std::fmt::Write as _;

/// The name of the test kernel.
pub const TEST_KERNEL: &str = "litmix_test";
/// The kernel that writes each instance's initial values and clears its
/// barrier counter.
pub const RESET_KERNEL: &str = "litmix_reset";
/// The kernel that copies each instance's final memory next to its outputs.
pub const GATHER_KERNEL: &str = "litmix_gather";

/// The name of role `r`'s check kernel.
pub fn role_kernel(r: usize) -> String {
    format!("litmix_role_{r}")
}

/// The test kernel's parameters, in order (all launches pass them so):
/// name and PTX type.
pub const TEST_PARAMS: &[(&str, &str)] = &[
    ("p_locs", "u64"),
    ("p_out", "u64"),
    ("p_pairing", "u64"),
    ("p_offsets", "u64"),
    ("p_bar", "u64"),
    ("p_scratch", "u64"),
    ("p_instances", "u32"),
    ("p_test_blocks", "u32"),
    ("p_seed", "u32"),
    ("p_stress_iters", "u32"),
    ("p_targets", "u32"),
    ("p_line", "u32"),
    ("p_pattern", "u32"),
    ("p_pre_iters", "u32"),
    ("p_timeout", "u32"),
    // Compound tests only (ignored otherwise): the flag lines in mapped
    // host memory, this round's tag, the host workers per host role and
    // the pace of instances (ns per rank) and the GPU roles' delay after
    // their arrival (SM clock cycles: random part's bound, fixed part).
    ("p_flags", "u64"),
    ("p_tag", "u32"),
    ("p_workers", "u32"),
    ("p_step_ns", "u32"),
    ("p_gpu_delay", "u32"),
    ("p_gpu_delay_base", "u32"),
];

/// 32-bit words of an instance's flag line in a compound run
/// ([`FLAG_LINE_WORDS`] × 4 bytes, in mapped host memory): host role `k`'s
/// nothing at `[0, 16)` (reserved), GPU role `g`'s arrival at
/// `ARRIVE + g`, role `r`'s done mark at `DONE + r` and GPU role `r`'s
/// status (bit 0: saw another role done before its body, bit 2: ran) at
/// `STATUS + r`. Each mark holds the round's tag, so no line is reset.
pub const FLAG_LINE_WORDS: usize = 64;
/// Offset of the GPU roles' arrival marks in a flag line (words).
pub const ARRIVE: usize = 16;
/// Offset of the roles' done marks in a flag line (words).
pub const DONE: usize = 32;
/// Offset of the GPU roles' status words in a flag line (words).
pub const STATUS: usize = 48;

/// The whole module: header, test, reset, gather and role kernels.
pub fn module(plan: &Plan) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// litmix hw: {} ({} roles, {} CTA groups, {} locations, {} outputs per instance)",
        plan.test.name,
        plan.roles.len(),
        plan.groups,
        plan.locations.len(),
        plan.outputs
    );
    s.push_str(".version 7.0\n.target sm_70\n.address_size 64\n\n");
    test_kernel(plan, &mut s);
    reset_kernel(plan, &mut s);
    gather_kernel(plan, &mut s);
    for r in 0..plan.roles.len() {
        if plan.roles[r].host.is_none() {
            role_check_kernel(plan, r, &mut s);
        }
    }
    s
}

fn regs_decl(plan: &Plan, s: &mut String) {
    let vregs: usize = plan
        .roles
        .iter()
        .map(|r| r.outputs.len())
        .sum::<usize>()
        .max(1);
    let _ = writeln!(s, "  .reg .pred %p<4>;");
    let _ = writeln!(s, "  .reg .b32 %h<32>;");
    let _ = writeln!(s, "  .reg .b32 %dn<{}>;", plan.roles.len().max(1));
    let _ = writeln!(s, "  .reg .b64 %a<16>;");
    let _ = writeln!(s, "  .reg .b32 %v<{vregs}>;");
    let _ = writeln!(s, "  .reg .b64 %loc<{}>;", plan.locations.len().max(1));
}

fn test_kernel(plan: &Plan, s: &mut String) {
    let groups = plan.groups;
    let wps = plan.warps_per_set;
    let nloc = plan.locations.len();
    let _ = writeln!(s, ".visible .entry {TEST_KERNEL}(");
    let n = TEST_PARAMS.len();
    for (i, (p, ty)) in TEST_PARAMS.iter().enumerate() {
        let _ = writeln!(s, "  .param .{ty} {p}{}", if i + 1 < n { "," } else { "" });
    }
    s.push_str(")\n{\n");
    regs_decl(plan, s);
    let _ = write!(
        s,
        "  mov.u32 %h0, %ctaid.x;
  mov.u32 %h1, %tid.x;
  ld.param.u32 %h2, [p_test_blocks];
  setp.ge.u32 %p0, %h0, %h2;
  @%p0 bra STRESS;
  // group = block % {groups}, k = block / {groups}
  rem.u32 %h3, %h0, {groups};
  div.u32 %h4, %h0, {groups};
  shr.u32 %h5, %h1, 5;
  and.b32 %h6, %h1, 31;
  // set = warp / {wps}, role warp = warp % {wps}
  div.u32 %h7, %h5, {wps};
  rem.u32 %h8, %h5, {wps};
  mov.u32 %h9, %ntid.x;
  div.u32 %h9, %h9, {per_set};
  setp.ge.u32 %p0, %h7, %h9;
  @%p0 bra DONE;
  shl.b32 %h9, %h9, 5;
  // position = k * positions + set * 32 + lane
  mad.lo.u32 %h10, %h4, %h9, %h6;
  shl.b32 %h11, %h7, 5;
  add.u32 %h10, %h10, %h11;
  ld.param.u32 %h11, [p_instances];
  mad.lo.u32 %h12, %h3, %h11, %h10;
  ld.param.u64 %a0, [p_pairing];
  cvta.to.global.u64 %a0, %a0;
  mul.wide.u32 %a1, %h12, 4;
  add.u64 %a1, %a0, %a1;
  ld.global.u32 %h13, [%a1];
  // this instance's location addresses
  ld.param.u64 %a2, [p_offsets];
  cvta.to.global.u64 %a2, %a2;
  ld.param.u64 %a3, [p_locs];
  cvta.to.global.u64 %a3, %a3;
  mul.lo.u32 %h14, %h13, {nloc};
",
        per_set = 32 * wps
    );
    for j in 0..nloc {
        let _ = write!(
            s,
            "  add.u32 %h15, %h14, {j};
  mul.wide.u32 %a4, %h15, 4;
  add.u64 %a4, %a2, %a4;
  ld.global.u32 %h16, [%a4];
  mul.wide.u32 %a5, %h16, 4;
  add.u64 %loc{j}, %a3, %a5;
"
        );
    }
    let _ = write!(
        s,
        "  // this instance's output record and barrier counter
  ld.param.u64 %a6, [p_out];
  cvta.to.global.u64 %a6, %a6;
  mul.wide.u32 %a7, %h13, {rec};
  add.u64 %a6, %a6, %a7;
  ld.param.u64 %a8, [p_bar];
  cvta.to.global.u64 %a8, %a8;
  mul.wide.u32 %a9, %h13, 4;
  add.u64 %a8, %a8, %a9;
  ld.param.u64 %a10, [p_scratch];
  cvta.to.global.u64 %a10, %a10;
  ld.param.u32 %h20, [p_targets];
  ld.param.u32 %h24, [p_line];
  // role code = group * {wps} + role warp
  mad.lo.u32 %h17, %h3, {wps}, %h8;
",
        rec = 4 * plan.outputs.max(1),
    );
    let gpu_roles = || {
        plan.roles
            .iter()
            .enumerate()
            .filter(|(_, r)| r.host.is_none())
    };
    for (r, role) in gpu_roles() {
        let code = role.group * wps + role.warp;
        let _ = writeln!(s, "  setp.eq.u32 %p0, %h17, {code};\n  @%p0 bra ROLE{r};");
    }
    s.push_str("  bra DONE;\n");
    for (r, _) in gpu_roles() {
        let _ = writeln!(s, "ROLE{r}:");
        pre_stress_and_barrier(plan, r, s);
        if plan.is_compound() {
            compound_arrival(plan, r, s);
        }
        role_body(plan, r, s);
        if plan.is_compound() {
            compound_done(plan, r, s);
        }
        s.push_str("  bra DONE;\n");
    }
    stress_loop(s);
    s.push_str("DONE:\n  ret;\n}\n\n");
}

/// Pre-test stress on the scratchpad, then the instance's spin barrier.
fn pre_stress_and_barrier(plan: &Plan, r: usize, s: &mut String) {
    let threads = plan.threads();
    let _ = write!(
        s,
        "  // pre-test stress: p_pre_iters store/load pairs on scratch lines
  ld.param.u32 %h18, [p_pre_iters];
  mov.u32 %h19, 0;
PRE{r}:
  setp.ge.u32 %p1, %h19, %h18;
  @%p1 bra PRE_DONE{r};
  mad.lo.u32 %h21, %h13, 31, %h19;
  rem.u32 %h21, %h21, %h20;
  mul.lo.u32 %h21, %h21, %h24;
  mul.wide.u32 %a11, %h21, 4;
  add.u64 %a11, %a10, %a11;
  st.volatile.global.u32 [%a11], %h19;
  ld.volatile.global.u32 %h22, [%a11];
  add.u32 %h19, %h19, 1;
  bra PRE{r};
PRE_DONE{r}:
  // spin barrier of the instance's {threads} threads, given up after p_timeout spins
  ld.param.u32 %h18, [p_timeout];
  setp.eq.u32 %p1, %h18, 0;
  @%p1 bra BAR_DONE{r};
  atom.relaxed.gpu.global.add.u32 %h19, [%a8], 1;
BAR{r}:
  ld.relaxed.gpu.global.u32 %h19, [%a8];
  setp.ge.u32 %p1, %h19, {threads};
  @%p1 bra BAR_DONE{r};
  sub.u32 %h18, %h18, 1;
  setp.ne.u32 %p1, %h18, 0;
  @%p1 bra BAR{r};
BAR_DONE{r}:
"
    );
}

/// Compound runs: the GPU role waits for its instance's turn (rank
/// `instance / p_workers`, paced `p_step_ns` apart on `%globaltimer`, so
/// the host threads, which walk the instances in that order, meet it),
/// marks its arrival in the instance's flag line (host memory), waits the
/// instance's GPU delay (`p_gpu_delay_base` plus a draw below
/// `p_gpu_delay`, SM cycles), and reads the other roles' done marks; those
/// loads' values are used only after the body, so the body's accesses do
/// not wait for them. No polling of
/// host memory: the host follows the GPU.
fn compound_arrival(plan: &Plan, r: usize, s: &mut String) {
    let g = plan.roles[..r].iter().filter(|x| x.host.is_none()).count();
    let _ = write!(
        s,
        "  // compound: this instance's flag line, its turn, the arrival mark
  ld.param.u64 %a12, [p_flags];
  cvta.to.global.u64 %a12, %a12;
  mul.wide.u32 %a13, %h13, {line};
  add.u64 %a12, %a12, %a13;
  ld.param.u32 %h23, [p_tag];
  ld.param.u32 %h25, [p_workers];
  div.u32 %h25, %h13, %h25;
  ld.param.u32 %h26, [p_step_ns];
  mul.wide.u32 %a14, %h25, %h26;
  mov.u64 %a15, %globaltimer;
  add.u64 %a14, %a14, %a15;
PACE{r}:
  mov.u64 %a15, %globaltimer;
  setp.lt.u64 %p2, %a15, %a14;
  @%p2 bra PACE{r};
  st.relaxed.sys.global.u32 [%a12+{arrive}], %h23;
  // the instance's GPU delay: p_gpu_delay_base plus a hash of (instance,
  // tag) below p_gpu_delay, the same for every GPU role of the instance
  ld.param.u32 %h26, [p_gpu_delay];
  mov.u32 %h27, 0;
  setp.eq.u32 %p2, %h26, 0;
  @%p2 bra GBASE{r};
  mul.lo.u32 %h27, %h13, 747796405;
  xor.b32 %h27, %h27, %h23;
  mul.lo.u32 %h27, %h27, 277803737;
  shr.u32 %h25, %h27, 15;
  xor.b32 %h27, %h27, %h25;
  mul.lo.u32 %h27, %h27, 1103515245;
  shr.u32 %h25, %h27, 13;
  xor.b32 %h27, %h27, %h25;
  rem.u32 %h27, %h27, %h26;
GBASE{r}:
  ld.param.u32 %h26, [p_gpu_delay_base];
  add.u32 %h27, %h27, %h26;
  setp.eq.u32 %p2, %h27, 0;
  @%p2 bra GO{r};
  cvt.u64.u32 %a14, %h27;
  mov.u64 %a13, %clock64;
  add.u64 %a14, %a14, %a13;
GDELAY{r}:
  mov.u64 %a13, %clock64;
  setp.lt.u64 %p2, %a13, %a14;
  @%p2 bra GDELAY{r};
GO{r}:
",
        line = 4 * FLAG_LINE_WORDS,
        arrive = 4 * (ARRIVE + g),
    );
    for q in 0..plan.roles.len() {
        if q != r {
            let _ = writeln!(
                s,
                "  ld.relaxed.sys.global.u32 %dn{q}, [%a12+{}];",
                4 * (DONE + q)
            );
        }
    }
}

/// Compound runs, after the body: the done mark, then the status word
/// (bit 0: a done mark of another role was seen around the body's start;
/// bit 2: ran).
fn compound_done(plan: &Plan, r: usize, s: &mut String) {
    let _ = writeln!(
        s,
        "  st.relaxed.sys.global.u32 [%a12+{}], %h23;",
        4 * (DONE + r)
    );
    s.push_str("  mov.u32 %h30, 4;\n");
    for q in 0..plan.roles.len() {
        if q != r {
            let _ = writeln!(
                s,
                "  setp.eq.u32 %p2, %dn{q}, %h23;\n  selp.u32 %h27, 1, 0, %p2;\n  or.b32 %h30, %h30, %h27;"
            );
        }
    }
    let _ = writeln!(
        s,
        "  st.relaxed.sys.global.u32 [%a12+{}], %h30;",
        4 * (STATUS + r)
    );
}

/// The stressing blocks: p_stress_iters pairs of accesses (pattern
/// p_pattern) on scratch lines picked by a hash of block, warp, iteration
/// and the launch seed.
fn stress_loop(s: &mut String) {
    s.push_str(
        "STRESS:
  ld.param.u64 %a10, [p_scratch];
  cvta.to.global.u64 %a10, %a10;
  ld.param.u32 %h18, [p_stress_iters];
  ld.param.u32 %h20, [p_targets];
  ld.param.u32 %h24, [p_line];
  ld.param.u32 %h25, [p_pattern];
  ld.param.u32 %h26, [p_seed];
  shr.u32 %h5, %h1, 5;
  and.b32 %h6, %h1, 31;
  rem.u32 %h27, %h6, %h24;
  mov.u32 %h19, 0;
STRESS_LOOP:
  setp.ge.u32 %p1, %h19, %h18;
  @%p1 bra DONE;
  // target = hash(seed, block, warp, iteration) % targets
  mad.lo.u32 %h21, %h0, 1000003, %h26;
  mad.lo.u32 %h21, %h5, 97, %h21;
  mad.lo.u32 %h21, %h19, 40503, %h21;
  shr.u32 %h22, %h21, 13;
  xor.b32 %h21, %h21, %h22;
  mul.lo.u32 %h21, %h21, 0x9E3779B1;
  shr.u32 %h22, %h21, 16;
  xor.b32 %h21, %h21, %h22;
  rem.u32 %h21, %h21, %h20;
  mad.lo.u32 %h21, %h21, %h24, %h27;
  mul.wide.u32 %a11, %h21, 4;
  add.u64 %a11, %a10, %a11;
  setp.eq.u32 %p1, %h25, 0;
  @%p1 bra ST_ST;
  setp.eq.u32 %p1, %h25, 1;
  @%p1 bra ST_LD;
  setp.eq.u32 %p1, %h25, 2;
  @%p1 bra LD_ST;
  ld.volatile.global.u32 %h22, [%a11];
  ld.volatile.global.u32 %h22, [%a11];
  bra STRESS_NEXT;
ST_ST:
  st.volatile.global.u32 [%a11], %h19;
  st.volatile.global.u32 [%a11], %h1;
  bra STRESS_NEXT;
ST_LD:
  st.volatile.global.u32 [%a11], %h19;
  ld.volatile.global.u32 %h22, [%a11];
  bra STRESS_NEXT;
LD_ST:
  ld.volatile.global.u32 %h22, [%a11];
  st.volatile.global.u32 [%a11], %h19;
STRESS_NEXT:
  add.u32 %h19, %h19, 1;
  bra STRESS_LOOP;
",
    );
}

/// The head every per-instance kernel shares: its parameters (locations,
/// offsets, one more buffer `third`, the instance count), registers, the
/// instance number in `%h0`, and the jump to `done` past the last instance.
fn instance_kernel_head(s: &mut String, name: &str, third: &str, done: &str) {
    let _ = write!(
        s,
        ".visible .entry {name}(
  .param .u64 p_locs,
  .param .u64 p_offsets,
  .param .u64 {third},
  .param .u32 p_instances
)
{{
  .reg .pred %p<2>;
  .reg .b32 %h<8>;
  .reg .b64 %a<8>;
  mov.u32 %h0, %ctaid.x;
  mov.u32 %h1, %ntid.x;
  mov.u32 %h2, %tid.x;
  mad.lo.u32 %h0, %h0, %h1, %h2;
  ld.param.u32 %h3, [p_instances];
  setp.ge.u32 %p0, %h0, %h3;
  @%p0 bra {done};
"
    );
}

fn reset_kernel(plan: &Plan, s: &mut String) {
    let nloc = plan.locations.len();
    instance_kernel_head(s, RESET_KERNEL, "p_bar", "RESET_DONE");
    let _ = write!(
        s,
        "  ld.param.u64 %a0, [p_bar];
  cvta.to.global.u64 %a0, %a0;
  mul.wide.u32 %a1, %h0, 4;
  add.u64 %a1, %a0, %a1;
  mov.b32 %h7, 0;
  st.global.u32 [%a1], %h7;
  ld.param.u64 %a2, [p_offsets];
  cvta.to.global.u64 %a2, %a2;
  ld.param.u64 %a3, [p_locs];
  cvta.to.global.u64 %a3, %a3;
  mul.lo.u32 %h4, %h0, {nloc};
"
    );
    for j in 0..nloc {
        let _ = write!(
            s,
            "  add.u32 %h5, %h4, {j};
  mul.wide.u32 %a4, %h5, 4;
  add.u64 %a4, %a2, %a4;
  ld.global.u32 %h6, [%a4];
  mul.wide.u32 %a5, %h6, 4;
  add.u64 %a5, %a3, %a5;
  mov.b32 %h7, {};
  st.global.u32 [%a5], %h7;
",
            plan.init_word(j)
        );
    }
    s.push_str("RESET_DONE:\n  ret;\n}\n\n");
}

fn gather_kernel(plan: &Plan, s: &mut String) {
    let nloc = plan.locations.len();
    instance_kernel_head(s, GATHER_KERNEL, "p_final", "GATHER_DONE");
    let _ = write!(
        s,
        "  ld.param.u64 %a2, [p_offsets];
  cvta.to.global.u64 %a2, %a2;
  ld.param.u64 %a3, [p_locs];
  cvta.to.global.u64 %a3, %a3;
  ld.param.u64 %a6, [p_final];
  cvta.to.global.u64 %a6, %a6;
  mul.lo.u32 %h4, %h0, {nloc};
"
    );
    for j in 0..nloc {
        let _ = write!(
            s,
            "  add.u32 %h5, %h4, {j};
  mul.wide.u32 %a4, %h5, 4;
  add.u64 %a7, %a6, %a4;
  add.u64 %a4, %a2, %a4;
  ld.global.u32 %h6, [%a4];
  mul.wide.u32 %a5, %h6, 4;
  add.u64 %a5, %a3, %a5;
  ld.global.u32 %h7, [%a5];
  st.global.u32 [%a7], %h7;
"
        );
    }
    s.push_str("GATHER_DONE:\n  ret;\n}\n\n");
}

/// Role `r`'s body alone, with its locations and output record as
/// parameters: the code the SASS check reads.
fn role_check_kernel(plan: &Plan, r: usize, s: &mut String) {
    let _ = write!(
        s,
        ".visible .entry {}(\n  .param .u64 p_out",
        role_kernel(r)
    );
    for j in 0..plan.locations.len() {
        let _ = write!(s, ",\n  .param .u64 p_loc{j}");
    }
    s.push_str("\n)\n{\n");
    regs_decl(plan, s);
    s.push_str("  ld.param.u64 %a6, [p_out];\n  cvta.to.global.u64 %a6, %a6;\n");
    for j in 0..plan.locations.len() {
        let _ = writeln!(
            s,
            "  ld.param.u64 %loc{j}, [p_loc{j}];\n  cvta.to.global.u64 %loc{j}, %loc{j};"
        );
    }
    role_body(plan, r, s);
    s.push_str("  ret;\n}\n\n");
}

/// A role's register set-up, its instructions and its output stores.
/// Expects `%locJ` (location addresses) and `%a6` (output record).
fn role_body(plan: &Plan, r: usize, s: &mut String) {
    let role = &plan.roles[r];
    let thread = &plan.test.threads[role.thread];
    let base: usize = plan.roles[..r].iter().map(|x| x.outputs.len()).sum();
    let e = Emitter { plan, r, base };
    let _ = writeln!(s, "  // P{} (role {r})", thread.id);
    for (k, reg) in role.outputs.iter().enumerate() {
        let init = thread
            .reg_init
            .iter()
            .find(|(x, _)| x == reg)
            .and_then(|(_, v)| v.as_int())
            .unwrap_or(0);
        let _ = writeln!(s, "  mov.b32 %v{}, {init}; // {reg}", base + k);
    }
    for ins in &thread.code {
        e.instr(ins, s);
    }
    let _ = writeln!(s, "R{r}_END:");
    for k in 0..role.outputs.len() {
        let _ = writeln!(
            s,
            "  st.global.u32 [%a6+{}], %v{};",
            4 * (role.first_output + k),
            base + k
        );
    }
}

struct Emitter<'a> {
    plan: &'a Plan,
    r: usize,
    base: usize,
}

impl Emitter<'_> {
    fn reg(&self, name: &str) -> String {
        let role = &self.plan.roles[self.r];
        match role.outputs.iter().position(|x| x == name) {
            Some(k) => format!("%v{}", self.base + k),
            None => "%h31".to_string(), // unreachable: plan lists every register
        }
    }

    /// An operand in a register: immediates go to harness register `%h{tmp}`.
    fn operand(&self, o: &Operand, tmp: usize, pre: &mut String) -> String {
        match o {
            Operand::Reg(r) => self.reg(r),
            Operand::Imm(v) => {
                let x = v.as_int().unwrap_or(0) as i32;
                let _ = writeln!(pre, "  mov.b32 %h{tmp}, {x};");
                format!("%h{tmp}")
            }
        }
    }

    fn address(&self, a: &Address) -> String {
        let l = match a {
            Address::Loc(l) => *l,
            Address::Reg(r) => self.plan.roles[self.r]
                .address_regs
                .iter()
                .find(|(x, _)| x == r)
                .map(|(_, l)| *l)
                .unwrap_or(0),
        };
        let j = self
            .plan
            .locations
            .iter()
            .position(|x| *x == l)
            .unwrap_or(0);
        format!("[%loc{j}]")
    }

    fn label(&self, name: &str) -> String {
        let clean: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        format!("R{}_L_{clean}", self.r)
    }

    fn instr(&self, ins: &Instr, s: &mut String) {
        let tags = &ins.tags;
        let has = |t: &str| tags.iter().any(|x| x == t);
        let scope = if has("CTA") {
            "cta"
        } else if has("SYS") {
            "sys"
        } else {
            "gpu"
        };
        let sem = if has("ACQ_REL") {
            "acq_rel"
        } else if has("ACQ") {
            "acquire"
        } else if has("REL") {
            "release"
        } else if has("SC") {
            "sc"
        } else {
            "relaxed"
        };
        // ld/st qualifiers: .weak, .volatile, or .sem.scope
        let access = if has("WEAK") {
            "weak".to_string()
        } else if has("VOL") {
            "volatile".to_string()
        } else {
            format!("{sem}.{scope}")
        };
        let _ = writeln!(s, "  // {}", ins.text.replace('\n', " "));
        let mut pre = String::new();
        let line = match &ins.kind {
            InstrKind::Load { dst, addr } => {
                format!(
                    "ld.{access}.global.u32 {}, {};",
                    self.reg(dst),
                    self.address(addr)
                )
            }
            InstrKind::Store { addr, src } => {
                let v = self.operand(src, 28, &mut pre);
                format!("st.{access}.global.u32 {}, {v};", self.address(addr))
            }
            InstrKind::Rmw { dst, addr, op } => {
                let a = self.address(addr);
                let (name, ty, args) = match op {
                    RmwOp::Bin(b, v) => {
                        let (name, ty) = match b {
                            BinOp::Add | BinOp::Sub => ("add", "u32"),
                            BinOp::And => ("and", "b32"),
                            BinOp::Or => ("or", "b32"),
                            BinOp::Xor => ("xor", "b32"),
                            BinOp::Min => ("min", "s32"),
                            BinOp::Max => ("max", "s32"),
                            BinOp::Mul => ("mul", "u32"), // refused by plan? kept for text
                        };
                        let v = if *b == BinOp::Sub {
                            match v {
                                Operand::Imm(Value::Int(x)) => {
                                    let _ = writeln!(
                                        pre,
                                        "  mov.b32 %h28, {};",
                                        (*x as i32).wrapping_neg()
                                    );
                                    "%h28".to_string()
                                }
                                _ => {
                                    let r = self.operand(v, 28, &mut pre);
                                    let _ =
                                        writeln!(pre, "  neg.s32 %h29, {r}; // atom.sub as add");
                                    "%h29".to_string()
                                }
                            }
                        } else {
                            self.operand(v, 28, &mut pre)
                        };
                        (name, ty, v)
                    }
                    RmwOp::Exch(v) => ("exch", "b32", self.operand(v, 28, &mut pre)),
                    RmwOp::Inc(v) => ("inc", "u32", self.operand(v, 28, &mut pre)),
                    RmwOp::Dec(v) => ("dec", "u32", self.operand(v, 28, &mut pre)),
                    RmwOp::Cas { expected, new } => {
                        let e = self.operand(expected, 28, &mut pre);
                        let n = self.operand(new, 29, &mut pre);
                        ("cas", "b32", format!("{e}, {n}"))
                    }
                };
                match dst {
                    Some(d) => format!(
                        "atom.{sem}.{scope}.global.{name}.{ty} {}, {a}, {args};",
                        self.reg(d)
                    ),
                    None => format!("red.{sem}.{scope}.global.{name}.{ty} {a}, {args};"),
                }
            }
            InstrKind::Fence => format!("fence.{sem}.{scope};"),
            InstrKind::Barrier { .. } => "// barrier refused by the plan".to_string(),
            InstrKind::Mov { dst, src } => {
                let v = match src {
                    Operand::Imm(v) => v.as_int().unwrap_or(0).to_string(),
                    o => self.operand(o, 28, &mut pre),
                };
                format!("mov.b32 {}, {v};", self.reg(dst))
            }
            InstrKind::Op { dst, op, a, b } => {
                let x = self.operand(a, 28, &mut pre);
                let y = self.operand(b, 29, &mut pre);
                let name = match op {
                    BinOp::Add => "add.s32",
                    BinOp::Sub => "sub.s32",
                    BinOp::Mul => "mul.lo.s32",
                    BinOp::And => "and.b32",
                    BinOp::Or => "or.b32",
                    BinOp::Xor => "xor.b32",
                    BinOp::Min => "min.s32",
                    BinOp::Max => "max.s32",
                };
                format!("{name} {}, {x}, {y};", self.reg(dst))
            }
            InstrKind::Branch { cmp, a, b, target } => {
                let x = self.operand(a, 28, &mut pre);
                let y = self.operand(b, 29, &mut pre);
                let c = match cmp {
                    CmpOp::Eq => "eq",
                    CmpOp::Ne => "ne",
                    CmpOp::Lt => "lt",
                    CmpOp::Le => "le",
                    CmpOp::Gt => "gt",
                    CmpOp::Ge => "ge",
                };
                format!(
                    "setp.{c}.s32 %p3, {x}, {y};\n  @%p3 bra {};",
                    self.label(target)
                )
            }
            InstrKind::Goto { target } => format!("bra {};", self.label(target)),
            InstrKind::Label(l) => {
                let _ = writeln!(s, "{}:", self.label(l));
                return;
            }
        };
        s.push_str(&pre);
        let _ = writeln!(s, "  {line}");
    }
}
