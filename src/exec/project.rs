//! How much of a test's search is done, across its choices of thread
//! paths, for the time projection under `--timeout`.
//!
//! The path combinations of a test differ wildly in cost: a thread with
//! nine CAS instructions has a path where all fail (few writes, a handful
//! of candidates) and one where all succeed (nine writes, 9! coherence
//! orders before pruning). Counting each combination as an equal share
//! of the work makes the projection optimistic when the cheap ones come
//! first. Here each combination gets the *plain size* of its search
//! (`log` of reads-from × coherence choices, computed from per-path
//! counts of reads and writes per location, without building it), and the
//! cost of the combinations not yet searched is predicted from those
//! already searched by a least-squares fit of `log(cost)` on that size:
//! pruning makes the real cost grow slower than the plain bound, and the
//! fit learns by how much on this very test.

use super::thread::{EventKind, ThreadPaths};

/// Above this many path combinations the projection stays uniform (the
/// per-combination sizes would cost too much to keep).
const MAX_COMBOS: usize = 1 << 16;

/// Per-combination plain sizes and the costs observed so far.
pub struct ComboCost {
    /// `log` of the plain search size of each combination, in the order
    /// the search visits them (the first thread's path varies fastest).
    sizes: Vec<f64>,
    /// Sums for the least-squares fit over finished combinations:
    /// count, Σx, Σy, Σxx, Σxy (x the log size, y the log cost).
    fit: [f64; 5],
}

impl ComboCost {
    /// The sizes of every combination of `paths` (`locs` locations), or
    /// `None` for a single combination or too many of them.
    pub fn new(paths: &[ThreadPaths], locs: usize) -> Option<ComboCost> {
        let combos = paths
            .iter()
            .try_fold(1usize, |acc, t| acc.checked_mul(t.paths.len()))?;
        if combos <= 1 || combos > MAX_COMBOS {
            return None;
        }
        // Per thread, per path: reads and writes per location.
        let counts: Vec<Vec<Vec<(u32, u32)>>> = paths
            .iter()
            .map(|t| {
                t.paths
                    .iter()
                    .map(|p| {
                        let mut c = vec![(0u32, 0u32); locs];
                        for e in &p.events {
                            let Some(l) = e.loc.filter(|&l| l < locs) else {
                                continue;
                            };
                            match e.kind {
                                EventKind::Read => c[l].0 += 1,
                                EventKind::Write => c[l].1 += 1,
                                _ => {}
                            }
                        }
                        c
                    })
                    .collect()
            })
            .collect();
        let mut sizes = Vec::with_capacity(combos);
        let mut choice = vec![0usize; paths.len()];
        let mut sum = vec![(0u32, 0u32); locs];
        'all: loop {
            sum.iter_mut().for_each(|s| *s = (0, 0));
            for (t, &c) in choice.iter().enumerate() {
                for (l, &(r, w)) in counts[t][c].iter().enumerate() {
                    sum[l].0 += r;
                    sum[l].1 += w;
                }
            }
            let size: f64 = sum
                .iter()
                .map(|&(r, w)| {
                    f64::from(r) * f64::from(1 + w).ln()
                        + (2..=w).map(|k| f64::from(k).ln()).sum::<f64>()
                })
                .sum();
            sizes.push(size);
            for (t, c) in choice.iter_mut().enumerate() {
                *c += 1;
                if *c < paths[t].paths.len() {
                    continue 'all;
                }
                *c = 0;
            }
            break;
        }
        Some(ComboCost {
            sizes,
            fit: [0.0; 5],
        })
    }

    /// Combination `index` cost `ticks` search nodes.
    pub fn finished(&mut self, index: usize, ticks: u64) {
        let (x, y) = (self.sizes[index], (1.0 + ticks as f64).ln());
        let f = &mut self.fit;
        f[0] += 1.0;
        f[1] += x;
        f[2] += y;
        f[3] += x * x;
        f[4] += x * y;
    }

    /// The predicted cost (search nodes) of a combination of log size `x`:
    /// `exp(a + b x) - 1`, the slope `b` kept within `[0, 1]` (a search
    /// never costs more than its plain size, nor less for being larger).
    fn predict(&self, x: f64) -> f64 {
        let [n, sx, sy, sxx, sxy] = self.fit;
        let var = n * sxx - sx * sx;
        let b = if n >= 2.0 && var > 1e-9 {
            ((n * sxy - sx * sy) / var).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let a = (sy - b * sx) / n;
        ((a + b * x).exp() - 1.0).max(0.0)
    }

    /// The share of the whole search done, `ticks` nodes into it in all,
    /// `current` nodes into combination `index` (`within` of its own tree
    /// covered, each subtree taken as the same size); `None` before any
    /// combination has finished.
    pub fn done(&self, index: usize, ticks: u64, current: u64, within: f64) -> Option<f64> {
        if self.fit[0] < 1.0 {
            return None;
        }
        let mut left = self.sizes[index + 1..]
            .iter()
            .map(|&x| self.predict(x))
            .sum::<f64>();
        let mut this = self.predict(self.sizes[index]);
        if within > 0.0 {
            this = this.max(current as f64 / within);
        }
        left += (this - current as f64).max(0.0);
        Some(ticks as f64 / (ticks as f64 + left).max(1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::thread::{PathLimits, explore};

    /// Thread P0: `n` CAS on `h` (each succeeds or fails: 2^n paths, the
    /// i-th with a different number of writes); P1 one read.
    fn cas_paths(n: usize) -> (Vec<ThreadPaths>, usize) {
        let mut src = String::from("PTX cas\n{ h=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n");
        for _ in 0..n {
            src.push_str(" atom.relaxed.gpu.cas r0, h, 0, 1 | ;\n");
        }
        src.push_str(" | ld.weak r1, h ;\nexists (P1:r1 == 1)\n");
        let t = crate::litmus::parse_str("cas.litmus", &src).expect("parses");
        let limits = PathLimits {
            unroll: 2,
            max_paths: 1000,
            max_events: 100,
            deadline: None,
            project: None,
        };
        let paths = t
            .threads
            .iter()
            .map(|th| explore("cas.litmus", th, t.locations.len(), limits).expect("explores"))
            .collect();
        (paths, t.locations.len())
    }

    #[test]
    fn sizes_follow_the_writes_of_each_combination() {
        let (paths, locs) = cas_paths(3);
        let c = ComboCost::new(&paths, locs).expect("8 combinations");
        assert_eq!(c.sizes.len(), 8);
        // Every combination has 3 reads of h plus P1's; the one with three
        // successful CAS has 3 writes: 4 reads × ln 4 + ln 3!.
        let max = c.sizes.iter().cloned().fold(f64::MIN, f64::max);
        let min = c.sizes.iter().cloned().fold(f64::MAX, f64::min);
        assert!((max - (4.0 * 4f64.ln() + 6f64.ln())).abs() < 1e-9, "{max}");
        assert!((min - 0.0).abs() < 1e-9, "{min}");
        // A single combination needs no weighting.
        let (one, locs) = cas_paths(0);
        assert!(ComboCost::new(&one, locs).is_none());
    }

    #[test]
    fn the_cost_of_larger_combinations_is_predicted_larger() {
        let (paths, locs) = cas_paths(3);
        let mut c = ComboCost::new(&paths, locs).expect("combinations");
        assert_eq!(c.done(0, 0, 0, 0.0), None, "nothing finished yet");
        // Cost grows like the plain size: the fit learns a slope near 1,
        // and the share done after the smallest ones is small.
        let mut order: Vec<usize> = (0..c.sizes.len()).collect();
        order.sort_by(|&a, &b| c.sizes[a].total_cmp(&c.sizes[b]));
        let (mut ticks, mut finished) = (0u64, 0);
        for &i in order.iter().take(4) {
            let cost = c.sizes[i].exp().round() as u64;
            c.finished(i, cost);
            ticks += cost;
            finished += 1;
        }
        assert_eq!(finished, 4);
        let big = *order.last().expect("some");
        let small = order[0];
        assert!(c.predict(c.sizes[big]) > 10.0 * c.predict(c.sizes[small]));
        // Index 0 has every later combination ahead of it: less than half
        // done, although half of the combinations have been searched.
        let done = c.done(0, ticks, 0, 0.0).expect("a fit");
        assert!(done < 0.5, "{done}");
    }
}
