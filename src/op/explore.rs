//! The generic exhaustive explorer.
//!
//! Breadth-first search over canonical states. Each level's frontier is
//! expanded in parallel (rayon) when it is wide enough to pay for the
//! threads; new states are then merged sequentially into the visited map,
//! which keeps the result deterministic (same counts, same witnesses) no
//! matter how many threads run. Every state remembers its parent and the
//! transition that reached it first, so a witness trace is a walk up the
//! parents; breadth-first order makes it a shortest one.
//!
//! Reduction: the visited set merges interleavings that reach the same
//! canonical state; on top of that a machine may name a persistent subset
//! of the enabled transitions ([`Machine::reduce`]), which the explorer
//! then expands alone. Soundness of that subset is the machine's argument.

use super::machine::{Machine, MachineError};
use crate::budget::{PROJECT_AFTER, margin};
use crate::ir::Value;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Limits and knobs of one exploration.
#[derive(Clone, Debug)]
pub struct ExploreOptions {
    /// Give up with [`ExploreError::Limit`] after this many distinct states.
    pub max_states: usize,
    /// Show a spinner with the state count on a terminal (stderr).
    pub progress: bool,
    /// Expand wide frontiers on the rayon pool.
    pub parallel: bool,
    /// Give up with [`ExploreError::Timeout`] once past this instant
    /// (`--timeout`, the playground's time limit).
    pub deadline: Option<Instant>,
}

impl Default for ExploreOptions {
    fn default() -> Self {
        ExploreOptions {
            max_states: 5_000_000,
            progress: false,
            parallel: true,
            deadline: None,
        }
    }
}

/// Why an exploration produced no result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExploreError {
    /// `--max-states` was reached.
    Limit(String),
    /// A transition could not be applied.
    Machine(MachineError),
    /// The deadline passed; how long it ran and the states seen so far.
    Timeout { after: Duration, states: u64 },
}

impl std::fmt::Display for ExploreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExploreError::Limit(m) => write!(f, "limit exceeded: {m}"),
            ExploreError::Machine(e) => write!(f, "machine error: {e}"),
            ExploreError::Timeout { after, states } => write!(
                f,
                "timeout after {:.2} s ({states} states)",
                after.as_secs_f64()
            ),
        }
    }
}

impl std::error::Error for ExploreError {}

/// The result of exploring a machine exhaustively.
#[derive(Clone, Debug)]
pub struct Exploration<T> {
    /// Every reachable outcome with one shortest transition sequence
    /// from the initial state reaching a final state with it.
    pub outcomes: BTreeMap<Vec<Value>, Vec<T>>,
    /// Final states reached per outcome (distinct canonical states).
    pub final_states: BTreeMap<Vec<Value>, u64>,
    /// Distinct canonical states visited.
    pub states: u64,
    /// Transitions applied (edges of the explored graph).
    pub transitions: u64,
    /// Terminal states that are not final (the machine got stuck).
    pub stuck: u64,
    /// States where the machine's reduction cut the enabled set.
    pub reduced: u64,
    pub elapsed: Duration,
}

/// One node of the search graph: how it was first reached.
struct Node<T> {
    parent: u32,
    via: Option<T>,
}

/// What expanding one state produced.
struct Expanded<S, K, T> {
    outcome: Option<Vec<Value>>,
    reduced: bool,
    succ: Vec<(T, S, K)>,
}

/// [`Expanded`] for machine `M`.
type ExpandedOf<M> =
    Expanded<<M as Machine>::State, <M as Machine>::Key, <M as Machine>::Transition>;

fn expand<M: Machine>(m: &M, s: &M::State) -> Result<ExpandedOf<M>, MachineError> {
    let outcome = m.outcome(s);
    let mut enabled = m.enabled(s);
    let mut reduced = false;
    if let Some(keep) = m.reduce(s, &enabled)
        && !keep.is_empty()
        && keep.len() < enabled.len()
    {
        enabled = keep
            .into_iter()
            .filter_map(|i| enabled.get(i).cloned())
            .collect();
        reduced = true;
    }
    let mut succ = Vec::with_capacity(enabled.len());
    for t in enabled {
        let n = m.apply(s, &t)?;
        let k = m.canonical(&n);
        succ.push((t, n, k));
    }
    Ok(Expanded {
        outcome,
        reduced,
        succ,
    })
}

/// Frontiers narrower than this are expanded on the calling thread.
const PARALLEL_FRONTIER: usize = 64;

/// States of a level expanded before their successors are merged: small,
/// so that the successors waiting to be merged (every enabled transition's
/// whole state) stay a small multiple of the visited map, whatever the
/// machine's branching.
const EXPAND_CHUNK: usize = 1_024;

/// New states between two looks at the memory budget (the clock is looked
/// at before every expansion: one costs far more than reading it).
const MEMORY_EVERY: u32 = 4_096;

/// What a search holds: the visited map, the graph's nodes, the current
/// level and the next one.
struct Heap<S, K, T> {
    visited: HashMap<K, u32>,
    nodes: Vec<Node<T>>,
    frontier: Vec<(u32, S)>,
    next: Vec<(u32, S)>,
}

/// [`Heap`] for machine `M`.
type HeapOf<M> = Heap<<M as Machine>::State, <M as Machine>::Key, <M as Machine>::Transition>;

/// Explores every state of `m` reachable from its initial state. A search
/// cut off by its deadline or a limit answers at once and leaves freeing
/// what it built (up to the memory budget of machine states) to another
/// thread: freeing a few hundred thousand states takes a tenth of a
/// second, which a `--timeout` answer should not wait for. That thread
/// then hands the freed memory back to the system (a server's own release
/// after the check comes before this free).
pub fn explore<M: Machine>(
    m: &M,
    opts: &ExploreOptions,
) -> Result<Exploration<M::Transition>, ExploreError> {
    let mut heap: HeapOf<M> = Heap {
        visited: HashMap::new(),
        nodes: Vec::new(),
        frontier: Vec::new(),
        next: Vec::new(),
    };
    let r = explore_in(m, opts, &mut heap);
    if r.is_err() && heap.nodes.len() > FREE_ELSEWHERE {
        let spawned = std::thread::Builder::new().spawn(move || {
            drop(heap);
            crate::budget::release_memory();
        });
        // Without a thread the heap is freed here (the spawn returned it
        // dropped already when it failed).
        drop(spawned);
    }
    r
}

/// Searches with more states than this are freed on another thread when
/// cut off.
const FREE_ELSEWHERE: usize = 10_000;

fn explore_in<M: Machine>(
    m: &M,
    opts: &ExploreOptions,
    heap: &mut HeapOf<M>,
) -> Result<Exploration<M::Transition>, ExploreError> {
    let start = Instant::now();
    let bar = (opts.progress && std::io::stderr().is_terminal()).then(|| {
        let pb = indicatif::ProgressBar::new_spinner();
        pb.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        pb
    });
    let init = m.initial();
    let Heap {
        visited,
        nodes,
        frontier,
        next,
    } = heap;
    nodes.push(Node {
        parent: u32::MAX,
        via: None,
    });
    visited.insert(m.canonical(&init), 0);
    frontier.push((0, init));
    let mut out = Exploration {
        outcomes: BTreeMap::new(),
        final_states: BTreeMap::new(),
        states: 1,
        transitions: 0,
        stuck: 0,
        reduced: 0,
        elapsed: Duration::ZERO,
    };
    let mut witness_node: BTreeMap<Vec<Value>, u32> = BTreeMap::new();
    let past_deadline = |states: usize| -> Result<(), ExploreError> {
        match opts.deadline {
            Some(d) if Instant::now() > d => Err(ExploreError::Timeout {
                after: start.elapsed(),
                states: states as u64,
            }),
            _ => Ok(()),
        }
    };
    // Set by any expansion that sees the deadline pass: the others of the
    // chunk then return at once, so a cut-off run stops within a few
    // expansions of its deadline instead of finishing the chunk.
    let stop = AtomicBool::new(false);
    let expand_one = |s: &M::State| -> Option<Result<ExpandedOf<M>, MachineError>> {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        if opts.deadline.is_some_and(|d| Instant::now() > d) {
            stop.store(true, Ordering::Relaxed);
            return None;
        }
        Some(expand(m, s))
    };
    let mut expanded_so_far = 0u64;
    while !frontier.is_empty() {
        next.clear();
        // A level is expanded in chunks; the deadline is looked at during
        // the expansion and the state and memory budgets as states are
        // created.
        for (k, chunk) in frontier.chunks(EXPAND_CHUNK).enumerate() {
            past_deadline(nodes.len())?;
            let left = frontier.len() - k * EXPAND_CHUNK;
            if let Some(m) = level_outlasts(start, opts.deadline, expanded_so_far, left) {
                return Err(ExploreError::Limit(m));
            }
            expanded_so_far += chunk.len() as u64;
            let expanded: Vec<Option<Result<_, MachineError>>> =
                if opts.parallel && chunk.len() >= PARALLEL_FRONTIER {
                    chunk.par_iter().map(|(_, s)| expand_one(s)).collect()
                } else {
                    chunk.iter().map(|(_, s)| expand_one(s)).collect()
                };
            if stop.load(Ordering::Relaxed) {
                return Err(ExploreError::Timeout {
                    after: start.elapsed(),
                    states: nodes.len() as u64,
                });
            }
            for ((id, _), e) in chunk.iter().zip(expanded) {
                let Some(e) = e else { continue };
                let e = e.map_err(ExploreError::Machine)?;
                if e.reduced {
                    out.reduced += 1;
                }
                if e.succ.is_empty() && e.outcome.is_none() {
                    out.stuck += 1;
                }
                if let Some(o) = e.outcome {
                    *out.final_states.entry(o.clone()).or_default() += 1;
                    witness_node.entry(o).or_insert(*id);
                }
                for (t, s, k) in e.succ {
                    out.transitions += 1;
                    if visited.contains_key(&k) {
                        continue;
                    }
                    let nid = nodes.len() as u32;
                    if nodes.len() >= opts.max_states || nid == u32::MAX {
                        return Err(ExploreError::Limit(format!(
                            "{} explored more than {} states (raise --max-states)",
                            m.name(),
                            opts.max_states
                        )));
                    }
                    if nid.is_multiple_of(MEMORY_EVERY) {
                        past_deadline(nodes.len())?;
                        if let Some(m) = crate::budget::memory_exceeded() {
                            return Err(ExploreError::Limit(format!(
                                "{m} after {nid} machine states"
                            )));
                        }
                    }
                    visited.insert(k, nid);
                    nodes.push(Node {
                        parent: *id,
                        via: Some(t),
                    });
                    next.push((nid, s));
                }
            }
        }
        out.states = nodes.len() as u64;
        if let Some(pb) = &bar {
            pb.set_message(format!("{}: {} states", m.name(), out.states));
            pb.tick();
        }
        std::mem::swap(frontier, next);
    }
    if let Some(pb) = bar {
        pb.finish_and_clear();
    }
    for (o, id) in witness_node {
        out.outcomes.insert(o, trace_to(nodes, id));
    }
    out.elapsed = start.elapsed();
    Ok(out)
}

/// Under a deadline, once [`PROJECT_AFTER`] of the time is spent: the
/// limit message when expanding only the `left` states of the current
/// level, at the mean time per state expanded so far (`done` of them,
/// cheaper on average than the deeper states still to come), already
/// ends past the deadline by the projection [`margin`]. A lower bound of
/// the time left, so a search that could finish is not refused.
fn level_outlasts(
    start: Instant,
    deadline: Option<Instant>,
    done: u64,
    left: usize,
) -> Option<String> {
    let limit = deadline?.saturating_duration_since(start).as_secs_f64();
    let elapsed = start.elapsed().as_secs_f64();
    if done == 0 || elapsed <= limit * PROJECT_AFTER {
        return None;
    }
    let each = elapsed / done as f64;
    let projected = elapsed + left as f64 * each;
    (projected > limit * margin(elapsed, limit)).then(|| {
        format!(
            "the search would take at least {projected:.2} s: {left} states of its current \
             level are still to be expanded at {:.0} µs each ({done} expanded in {elapsed:.1} s), \
             over --timeout {limit:.1} s",
            each * 1e6
        )
    })
}

/// The transitions from the initial state to node `id`.
fn trace_to<T: Clone>(nodes: &[Node<T>], mut id: u32) -> Vec<T> {
    let mut rev = Vec::new();
    while let Some(t) = &nodes[id as usize].via {
        rev.push(t.clone());
        id = nodes[id as usize].parent;
    }
    rev.reverse();
    rev
}

/// Replays `trace` from the initial state, returning every state passed
/// (the initial one first). Fails if a step is not enabled where it is
/// taken (compared by label).
pub fn replay<M: Machine>(m: &M, trace: &[M::Transition]) -> Result<Vec<M::State>, MachineError> {
    let mut states = vec![m.initial()];
    for t in trace {
        let s = states.last().cloned().unwrap_or_else(|| m.initial());
        let label = m.label(&s, t);
        if !m.enabled(&s).iter().any(|e| m.label(&s, e) == label) {
            return Err(MachineError(format!("step not enabled: {label}")));
        }
        states.push(m.apply(&s, t)?);
    }
    Ok(states)
}
