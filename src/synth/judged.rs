//! A program's allowed final states ([`Judged`]): what a model run or the
//! SC cut leaves of a program, kept per program by the synthesis memos
//! and asked about one outcome at a time.

use super::program::{Cond, STerm};

/// A program's allowed final states over all its terms.
#[derive(Debug)]
pub struct Judged {
    /// The observed terms, in the result's order (`None` for an observed
    /// name that is no term of the program).
    pub terms: Vec<Option<STerm>>,
    /// Allowed states (values in `terms` order), sorted, one after the
    /// other ([`States`]).
    states: States,
    /// A flag (`undefined`, a race) raised by some allowed execution.
    pub flagged: bool,
}

/// Sorted states of `width` values each, laid end to end: a byte a value
/// when every value fits one (nearly every synthesised program: its
/// values are small distinct integers), else eight. The memo of judged
/// programs holds millions of them at 8 events; a vector per state took
/// several times the room and a pointer chase per comparison.
#[derive(Debug)]
enum States {
    Bytes { count: usize, values: Box<[u8]> },
    Wide { count: usize, values: Box<[i64]> },
}

impl States {
    /// `states` (each of `width` values), sorted and without repeats.
    fn new(width: usize, mut states: Vec<Vec<i64>>) -> States {
        states.sort_unstable();
        states.dedup();
        let count = states.len();
        if states.iter().flatten().all(|&v| (0..=255).contains(&v)) {
            let values = states.iter().flatten().map(|&v| v as u8).collect();
            States::Bytes { count, values }
        } else {
            debug_assert!(states.iter().all(|s| s.len() == width));
            let values = states.into_iter().flatten().collect();
            States::Wide { count, values }
        }
    }

    fn count(&self) -> usize {
        match self {
            States::Bytes { count, .. } | States::Wide { count, .. } => *count,
        }
    }

    /// State `i` (of `width` values).
    fn get(&self, width: usize, i: usize) -> Vec<i64> {
        match self {
            States::Bytes { values, .. } => values[i * width..(i + 1) * width]
                .iter()
                .map(|&v| v as i64)
                .collect(),
            States::Wide { values, .. } => values[i * width..(i + 1) * width].to_vec(),
        }
    }

    /// Whether `state` (every value, in order) is one of the states.
    fn contains(&self, state: &[i64]) -> bool {
        let width = state.len();
        match self {
            States::Bytes { count, values } => {
                let (mut stack, mut heap) = ([0u8; 32], Vec::new());
                let key = scratch(&mut stack, &mut heap, width);
                for (k, &v) in key.iter_mut().zip(state) {
                    let Ok(b) = u8::try_from(v) else {
                        return false;
                    };
                    *k = b;
                }
                search_rows(*count, |i| values[i * width..(i + 1) * width].cmp(key))
            }
            States::Wide { count, values } => {
                search_rows(*count, |i| values[i * width..(i + 1) * width].cmp(state))
            }
        }
    }

    /// Whether some state has value `v` at position `i` for every `(i, v)`.
    fn any_matching(&self, width: usize, idx: &[(usize, i64)]) -> bool {
        if width == 0 {
            // No terms observed: every state matches the empty condition.
            return self.count() > 0;
        }
        match self {
            States::Bytes { values, .. } => {
                let (mut stack, mut heap) = ([(0usize, 0u8); 32], Vec::new());
                let want = scratch(&mut stack, &mut heap, idx.len());
                for (w, &(i, v)) in want.iter_mut().zip(idx) {
                    let Ok(b) = u8::try_from(v) else {
                        return false;
                    };
                    *w = (i, b);
                }
                values
                    .chunks_exact(width)
                    .any(|s| want.iter().all(|&(i, v)| s[i] == v))
            }
            States::Wide { values, .. } => values
                .chunks_exact(width)
                .any(|s| idx.iter().all(|&(i, v)| s[i] == v)),
        }
    }
}

/// `n` slots of scratch: on the stack (`stack`) when they fit, which they
/// do for every synthesised program (a term per event at most), else in
/// `heap`.
fn scratch<'a, T: Copy + Default>(
    stack: &'a mut [T; 32],
    heap: &'a mut Vec<T>,
    n: usize,
) -> &'a mut [T] {
    if n <= stack.len() {
        &mut stack[..n]
    } else {
        heap.resize(n, T::default());
        heap
    }
}

/// Binary search over `count` sorted rows, `cmp(i)` comparing row `i` with
/// the key: whether the key is a row.
fn search_rows(count: usize, cmp: impl Fn(usize) -> std::cmp::Ordering) -> bool {
    let (mut lo, mut hi) = (0, count);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match cmp(mid) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

impl Judged {
    /// A judgement of `terms` with allowed `states` (in any order).
    pub fn new(terms: Vec<Option<STerm>>, states: Vec<Vec<i64>>, flagged: bool) -> Judged {
        let states = States::new(terms.len(), states);
        Judged {
            terms,
            states,
            flagged,
        }
    }

    /// The allowed states, sorted (values in `terms` order).
    pub fn states(&self) -> Vec<Vec<i64>> {
        let w = self.terms.len();
        (0..self.states.count())
            .map(|i| self.states.get(w, i))
            .collect()
    }

    /// Whether some allowed state satisfies every `term = value` of `cond`
    /// (terms the program does not observe never match).
    pub fn allows(&self, cond: &Cond) -> bool {
        let n = self.terms.len();
        // A condition on every term in the result's own order (every
        // outcome against its program's SC states): its values are the
        // state, found by binary search, the states being sorted.
        if cond.len() == n && cond.iter().zip(&self.terms).all(|(c, t)| *t == Some(c.0)) && n <= 32
        {
            let mut state = [0i64; 32];
            for (s, c) in state.iter_mut().zip(cond) {
                *s = c.1 as i64;
            }
            return self.states.contains(&state[..n]);
        }
        // Positions of the condition's terms.
        let (mut stack, mut heap) = ([(0usize, 0i64); 32], Vec::new());
        let idx = scratch(&mut stack, &mut heap, cond.len());
        for (slot, &(t, v)) in idx.iter_mut().zip(cond) {
            let Some(i) = self.terms.iter().position(|m| *m == Some(t)) else {
                return false;
            };
            *slot = (i, v as i64);
        }
        // A condition on every term (most outcomes of a program against
        // its own judgement) is one state: a binary search, the states
        // being sorted.
        if idx.len() == n && n <= 32 {
            let mut state = [i64::MIN; 32];
            let mut set = 0u32;
            for &(i, v) in idx.iter() {
                state[i] = v;
                set |= 1 << i;
            }
            if set.count_ones() as usize == n {
                return self.states.contains(&state[..n]);
            }
        }
        self.states.any_matching(n, idx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// States kept a byte a value (all values small) and eight a value (a
    /// value past 255, or an address) answer alike: full conditions in the
    /// terms' order and in another, partial ones, values no state has, and
    /// a program without terms.
    #[test]
    fn states_answer_alike_a_byte_or_eight_a_value() {
        let (r0, r1, x) = (
            STerm::Reg { thread: 0, reg: 0 },
            STerm::Reg { thread: 1, reg: 0 },
            STerm::Loc(0),
        );
        let terms = vec![Some(r0), Some(r1), Some(x)];
        for big in [2, 300, i64::MIN] {
            let states = vec![vec![2, 1, 1], vec![0, 0, big], vec![2, 1, 1], vec![0, 1, 2]];
            let j = Judged::new(terms.clone(), states, false);
            let wide = matches!(j.states, States::Wide { .. });
            assert_eq!(wide, big != 2, "{big}");
            // Sorted, the repeat gone.
            let mut want = vec![vec![0, 0, big], vec![0, 1, 2], vec![2, 1, 1]];
            want.sort();
            assert_eq!(j.states(), want);
            let v = |n: i64| if n == i64::MIN { u32::MAX } else { n as u32 };
            assert!(j.allows(&vec![(r0, 0), (r1, 1), (x, 2)]));
            assert!(j.allows(&vec![(x, 1), (r1, 1), (r0, 2)]));
            assert!(!j.allows(&vec![(r0, 2), (r1, 0), (x, 1)]));
            assert!(!j.allows(&vec![(r0, 256), (r1, 1), (x, 2)]));
            assert!(j.allows(&vec![(r1, 0)]));
            assert!(!j.allows(&vec![(r1, 0), (r0, 2)]));
            assert!(!j.allows(&vec![(r1, 256)]));
            assert_eq!(
                j.allows(&vec![(r0, 0), (r1, 0), (x, v(big))]),
                big != i64::MIN
            );
            // A term the program does not observe never matches.
            assert!(!j.allows(&vec![(STerm::Loc(1), 0)]));
        }
        let none = Judged::new(Vec::new(), vec![Vec::new()], false);
        assert!(none.allows(&Vec::new()));
        assert_eq!(none.states(), vec![Vec::<i64>::new()]);
        let nothing = Judged::new(Vec::new(), Vec::new(), false);
        assert!(!nothing.allows(&Vec::new()));
    }
}
