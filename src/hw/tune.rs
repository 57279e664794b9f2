//! `litmix hw tune`: a random search over stress profiles, scored on
//! tests whose condition the model allows (Kirkham et al. OOPSLA'20 tune
//! stress per chip the same way). The candidates and the score are here;
//! the CLI runs each candidate on the device.

use super::rng::Rng;
use super::stress::{PATTERNS, Profile};

/// `n` candidate profiles: the default, no stress, then `n - 2` drawn
/// from the ranges below with `rng` (deterministic for a seed).
pub fn candidates(rng: &mut Rng, n: usize) -> Vec<Profile> {
    let mut out = vec![Profile::default(), Profile::none()];
    let pick = |rng: &mut Rng, xs: &[u64]| xs[rng.below(xs.len() as u64) as usize];
    while out.len() < n.max(2) {
        let p = Profile {
            threads_per_block: pick(rng, &[128, 256, 512]) as usize,
            spread: pick(rng, &[1, 2, 4]) as usize,
            line_words: pick(rng, &[1, 8, 32]) as usize,
            stress_blocks: pick(rng, &[0, 8, 16, 32, 66, 132]) as usize,
            stress_iterations: pick(rng, &[0, 32, 128, 512, 2048]) as u32,
            stress_targets: pick(rng, &[1, 4, 16, 64, 256]) as u32,
            stress_line_words: pick(rng, &[1, 8, 32]) as u32,
            stress_pattern: rng.below(PATTERNS.len() as u64) as u32,
            pre_stress_iterations: pick(rng, &[0, 4, 16, 64]) as u32,
            barrier: rng.below(4) != 0,
            ..Profile::default()
        };
        out.push(p);
    }
    out.truncate(n.max(2));
    out
}

/// A profile's score from each test's sightings of its condition's
/// states and the seconds spent: Σ ln(1 + sightings per second), so every
/// test counts and no single easy test dominates.
pub fn score(per_test: &[(u64, f64)]) -> f64 {
    per_test
        .iter()
        .map(|&(seen, secs)| (1.0 + seen as f64 / secs.max(1e-9)).ln())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_valid_and_repeatable() {
        let a = candidates(&mut Rng::new(5), 12);
        let b = candidates(&mut Rng::new(5), 12);
        assert_eq!(a, b);
        assert_eq!(a.len(), 12);
        assert_eq!(a[0], Profile::default());
        assert_eq!(a[1], Profile::none());
        for p in &a {
            assert_eq!(&Profile::parse(&p.to_text()).unwrap(), p);
        }
        assert!(score(&[(0, 1.0)]) == 0.0);
        assert!(score(&[(100, 1.0), (0, 1.0)]) > score(&[(10, 1.0), (0, 1.0)]));
    }
}
