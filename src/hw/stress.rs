//! Stress profiles: how a launch is shaped and how hard memory is stressed
//! around the test (Alglave et al. ASPLOS'15 incantations, Kirkham et al.
//! OOPSLA'20 tuned stress). A profile is a text file of `key = value`
//! lines (`#` comments); `--stress default` is [`Profile::default`],
//! `--stress none` [`Profile::none`].

use std::fmt::Write as _;

/// Access patterns of a stressing thread on a scratchpad line (Kirkham's
/// four): store-store, store-load, load-store, load-load.
pub const PATTERNS: &[&str] = &["st-st", "st-ld", "ld-st", "ld-ld"];

/// Launch shape and stress parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// Threads per test block (rounded down to whole instance sets).
    pub threads_per_block: usize,
    /// Test blocks per CTA group and launch.
    pub blocks_per_group: usize,
    /// Words per location slot (32 = a 128-byte line).
    pub line_words: usize,
    /// Location slots per instance slot (≥ 1; more spreads them further).
    pub spread: usize,
    /// Stressing blocks per launch.
    pub stress_blocks: usize,
    /// Iterations of a stressing thread.
    pub stress_iterations: u32,
    /// Scratchpad lines the stress targets.
    pub stress_targets: u32,
    /// Words per scratchpad line.
    pub stress_line_words: u32,
    /// Index into [`PATTERNS`].
    pub stress_pattern: u32,
    /// Scratchpad accesses a test thread makes before the barrier.
    pub pre_stress_iterations: u32,
    /// Whether an instance's threads meet at a spin barrier before the body.
    pub barrier: bool,
    /// Spins before a barrier gives up (its partners may not be resident).
    pub barrier_timeout: u32,
    /// Compound runs: instances each host thread takes per round.
    pub host_ranks: usize,
    /// Compound runs: nanoseconds between the GPU's successive ranks.
    pub host_step_ns: u32,
    /// Compound runs: host delays after a GPU arrival are drawn in
    /// `0..host_delay_cycles` time-stamp cycles.
    pub host_delay_cycles: u32,
    /// Compound runs: a further fixed delay (time-stamp cycles) for host
    /// roles that read a location some GPU role writes: the GPU's stores
    /// reach host memory after its arrival mark, so such a reader may
    /// want to wait longer than a writer.
    pub host_reader_delay_cycles: u32,
    /// Compound runs: after their arrival mark, an instance's GPU roles
    /// wait `gpu_delay_base_cycles` plus a delay drawn per instance in
    /// `0..gpu_delay_cycles` SM clock cycles before their bodies, so that
    /// the bodies sweep the window in which the host (which starts when it
    /// sees the mark, microseconds later) runs its own.
    pub gpu_delay_cycles: u32,
    /// Compound runs: a fixed part added to every GPU delay (SM clock
    /// cycles), for hosts that act well after the GPU's arrival mark.
    pub gpu_delay_base_cycles: u32,
}

impl Default for Profile {
    /// The defaults: 256-thread blocks, 132 blocks per group (an H100 has
    /// 132 SMs), 128-byte location lines, the instance's spin barrier and
    /// no stress (stressing blocks and pre-test stress are off; the keys
    /// below only shape them when a profile turns them on). On an H200 this
    /// was the best of the profiles measured (docs/hw.md, "Figures"): every
    /// weak shape at least as often as with stress, at about 110 M
    /// instances/s. Compound runs pace ranks 1 µs apart, with no host delay
    /// and GPU delays of 7,500 to 10,500 SM cycles after the arrival mark
    /// (the host acts about 4 µs after it): the pick of 29 profiles swept
    /// on an H200 (docs/hw.md, "Compound profiles").
    fn default() -> Self {
        Profile {
            threads_per_block: 256,
            blocks_per_group: 132,
            line_words: 32,
            spread: 2,
            stress_blocks: 0,
            stress_iterations: 0,
            stress_targets: 64,
            stress_line_words: 32,
            stress_pattern: 0,
            pre_stress_iterations: 0,
            barrier: true,
            barrier_timeout: 100_000,
            host_ranks: 64,
            host_step_ns: 1_000,
            host_delay_cycles: 0,
            host_reader_delay_cycles: 0,
            gpu_delay_cycles: 3_000,
            gpu_delay_base_cycles: 7_500,
        }
    }
}

impl Profile {
    /// No stress at all: no stressing blocks, no pre-test stress, no barrier.
    pub fn none() -> Self {
        Profile {
            stress_blocks: 0,
            stress_iterations: 0,
            pre_stress_iterations: 0,
            barrier: false,
            ..Profile::default()
        }
    }

    /// Reads `default`, `none` or a profile file's path.
    pub fn load(spec: &str) -> Result<Profile, String> {
        match spec {
            "default" => Ok(Profile::default()),
            "none" => Ok(Profile::none()),
            path => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read stress profile {path}: {e}"))?;
                Profile::parse(&text).map_err(|e| format!("{path}:{e}"))
            }
        }
    }

    /// Parses profile text: `key = value` lines over the defaults; errors
    /// are `line: message`.
    pub fn parse(text: &str) -> Result<Profile, String> {
        let mut p = Profile::default();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let n = i + 1;
            let Some((k, v)) = line.split_once('=') else {
                return Err(format!("{n}: expected 'key = value', found '{line}'"));
            };
            let (k, v) = (k.trim(), v.trim());
            let num = || -> Result<u64, String> {
                v.replace('_', "")
                    .parse::<u64>()
                    .map_err(|_| format!("{n}: '{k}' needs a non-negative integer, found '{v}'"))
            };
            let small = |x: u64, lo: u64, hi: u64| -> Result<u64, String> {
                if x < lo || x > hi {
                    Err(format!("{n}: '{k}' must be in {lo}..={hi}, found {x}"))
                } else {
                    Ok(x)
                }
            };
            match k {
                "threads_per_block" => p.threads_per_block = small(num()?, 32, 1024)? as usize,
                "blocks_per_group" => p.blocks_per_group = small(num()?, 1, 65_536)? as usize,
                "line_words" => p.line_words = small(num()?, 1, 1024)? as usize,
                "spread" => p.spread = small(num()?, 1, 64)? as usize,
                "stress_blocks" => p.stress_blocks = small(num()?, 0, 65_536)? as usize,
                "stress_iterations" => p.stress_iterations = small(num()?, 0, 1 << 24)? as u32,
                "stress_targets" => p.stress_targets = small(num()?, 1, 1 << 16)? as u32,
                "stress_line_words" => p.stress_line_words = small(num()?, 1, 1024)? as u32,
                "stress_pattern" => {
                    p.stress_pattern = match PATTERNS.iter().position(|x| *x == v) {
                        Some(i) => i as u32,
                        None => {
                            return Err(format!(
                                "{n}: 'stress_pattern' is one of {}, found '{v}'",
                                PATTERNS.join(", ")
                            ));
                        }
                    }
                }
                "pre_stress_iterations" => {
                    p.pre_stress_iterations = small(num()?, 0, 1 << 20)? as u32
                }
                "barrier" => {
                    p.barrier = match v {
                        "on" | "true" | "1" => true,
                        "off" | "false" | "0" => false,
                        _ => return Err(format!("{n}: 'barrier' is on or off, found '{v}'")),
                    }
                }
                "barrier_timeout" => p.barrier_timeout = small(num()?, 1, 1 << 30)? as u32,
                "host_ranks" => p.host_ranks = small(num()?, 1, 4096)? as usize,
                "host_step_ns" => p.host_step_ns = small(num()?, 0, 1_000_000)? as u32,
                "host_delay_cycles" => p.host_delay_cycles = small(num()?, 0, 10_000_000)? as u32,
                "host_reader_delay_cycles" => {
                    p.host_reader_delay_cycles = small(num()?, 0, 10_000_000)? as u32
                }
                "gpu_delay_cycles" => p.gpu_delay_cycles = small(num()?, 0, 10_000_000)? as u32,
                "gpu_delay_base_cycles" => {
                    p.gpu_delay_base_cycles = small(num()?, 0, 10_000_000)? as u32
                }
                _ => return Err(format!("{n}: unknown key '{k}'")),
            }
        }
        Ok(p)
    }

    /// The profile as file text ([`Profile::parse`] reads it back).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "threads_per_block = {}", self.threads_per_block);
        let _ = writeln!(s, "blocks_per_group = {}", self.blocks_per_group);
        let _ = writeln!(s, "line_words = {}", self.line_words);
        let _ = writeln!(s, "spread = {}", self.spread);
        let _ = writeln!(s, "stress_blocks = {}", self.stress_blocks);
        let _ = writeln!(s, "stress_iterations = {}", self.stress_iterations);
        let _ = writeln!(s, "stress_targets = {}", self.stress_targets);
        let _ = writeln!(s, "stress_line_words = {}", self.stress_line_words);
        let _ = writeln!(
            s,
            "stress_pattern = {}",
            PATTERNS[self.stress_pattern as usize % PATTERNS.len()]
        );
        let _ = writeln!(s, "pre_stress_iterations = {}", self.pre_stress_iterations);
        let _ = writeln!(s, "barrier = {}", if self.barrier { "on" } else { "off" });
        let _ = writeln!(s, "barrier_timeout = {}", self.barrier_timeout);
        let _ = writeln!(s, "host_ranks = {}", self.host_ranks);
        let _ = writeln!(s, "host_step_ns = {}", self.host_step_ns);
        let _ = writeln!(s, "host_delay_cycles = {}", self.host_delay_cycles);
        let _ = writeln!(
            s,
            "host_reader_delay_cycles = {}",
            self.host_reader_delay_cycles
        );
        let _ = writeln!(s, "gpu_delay_cycles = {}", self.gpu_delay_cycles);
        let _ = writeln!(s, "gpu_delay_base_cycles = {}", self.gpu_delay_base_cycles);
        s
    }

    /// Scratchpad words the stress needs (at least one line).
    pub fn scratch_words(&self) -> usize {
        (self.stress_targets as usize * self.stress_line_words as usize).max(32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let mut p = Profile::none();
        p.stress_pattern = 2;
        p.line_words = 16;
        assert_eq!(Profile::parse(&p.to_text()).unwrap(), p);
        assert!(
            Profile::parse("spread = 0")
                .unwrap_err()
                .starts_with("1: 'spread' must be")
        );
        assert!(
            Profile::parse("\n# c\nbogus = 1")
                .unwrap_err()
                .starts_with("3: unknown key")
        );
        assert!(Profile::parse("stress_pattern = xx").is_err());
        assert!(
            Profile::parse("barrier")
                .unwrap_err()
                .contains("key = value")
        );
    }
}
