//! Execution barriers: which barrier events form one completed barrier
//! instance, and whether a thread can block forever.
//!
//! Semantics (PTX ISA, `bar{.cta}.sync a{, b}` / `bar{.cta}.arrive a{, b}`;
//! OpenCL `barrier`): each scope instance the barrier is tagged with (a
//! CTA, a work-group) has one arrival counter per barrier id `a`. A barrier
//! *instance* completes when `b` threads have arrived at it; without a
//! count, `b` is the number of threads of that scope instance in the test
//! (every one of them takes part), or, for Dat3M's `bar.cta.sync i{, a}`
//! (`executors` in the IR), the number of its threads that execute a
//! barrier with id `a` in the execution. Arrivals after completion start the next
//! instance, so the arrivals at one counter are cut, in arrival order, into
//! consecutive instances of `b`. An arrive counts without waiting; a sync
//! (or red) waits until its instance completes. Arrivals that disagree on
//! `b`, or a `b` that is not a positive number, make an instance that
//! never completes (the PTX ISA leaves mixed counts undefined and asks for
//! a positive count; litmix blocks the threads waiting on it and reports
//! the deadlock rather than failing the whole test, since a count read from
//! memory may be bad in only some executions).
//!
//! Which arrivals share an instance depends on the order in which threads
//! reach their barriers, so [`instances`] explores every order (barrier
//! events only, program order kept, a waiting thread stopped) and returns
//! each distinct matching, plus whether some order ends with a thread
//! waiting on an instance that can never complete (a *barrier deadlock*:
//! that execution never finishes and yields no final state).

use super::CheckError;
use super::candidate::{Eval, Skeleton, Values, same_thread_instance};
use super::thread::EventKind;
use crate::diag::Diagnostic;
use crate::fast_hash::FastHash;
use crate::ir::{BarrierKind, Value};
use crate::rel::Relation;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

/// Barrier orders explored per candidate before giving up.
const MAX_STATES: usize = 200_000;

/// The possible barrier matchings of one candidate.
#[derive(Debug)]
pub struct BarrierOutcomes {
    /// One `bar` relation per distinct way the arrivals can form completed
    /// instances in an execution where no thread blocks forever: events of
    /// one completed instance are related (both ways, not reflexively).
    pub matchings: Vec<Relation>,
    /// Some order of arrivals leaves a thread waiting forever.
    pub deadlock: bool,
}

/// One barrier event of a thread.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Arrival {
    /// Global event id.
    event: usize,
    waits: bool,
    /// Arrival counter: (scope group number, barrier id).
    counter: usize,
    /// Threads that must arrive to complete an instance.
    count: i64,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct State {
    /// Next arrival of each thread.
    pos: Vec<usize>,
    /// Threads waiting at a sync whose instance has not completed.
    waiting: Vec<bool>,
    /// Arrivals (thread, index) at each counter's open instance.
    open: Vec<Vec<(usize, usize)>>,
    /// Completed instances, as sorted event lists, sorted.
    done: Vec<Vec<usize>>,
}

/// Computes the barrier matchings of a candidate whose barrier operands
/// have values (an operand without one is an error pointing at the code).
pub fn instances(
    skel: &Skeleton,
    values: &Values,
    memo: &mut Memo,
    deadline: Option<std::time::Instant>,
    project: Option<(std::time::Instant, std::time::Duration)>,
) -> Result<Rc<BarrierOutcomes>, CheckError> {
    let threads = prepare(skel, values, &mut memo.groups)?;
    if let Some(known) = memo.outcomes.get(&threads) {
        return Ok(known.clone());
    }
    let out = Rc::new(explore(skel.len(), &threads, deadline, project)?);
    memo.outcomes.insert(threads, out.clone());
    Ok(out)
}

/// The matchings already computed for one skeleton, by the barrier
/// arrivals (their instance counters, counts and events) they came from:
/// the reads-from choices of a skeleton mostly give the same arrivals
/// (barrier operands are usually constants), and each exploration of the
/// arrival orders is costly.
///
/// It also keeps, per barrier event, the threads sharing every scope
/// instance the barrier is tagged with: a function of the skeleton alone.
#[derive(Default)]
pub struct Memo {
    outcomes: HashMap<Vec<Vec<Arrival>>, Rc<BarrierOutcomes>>,
    groups: HashMap<usize, Vec<usize>>,
}

/// States between two looks at the deadline.
const DEADLINE_EVERY: usize = 1024;

/// Under a timeout (`project`: the test's start and timeout), whether the
/// exploration of arrival orders, begun at `began` with `covered` of its
/// tree covered and `states` states, would end (at its last state or at
/// [`MAX_STATES`]) past the timeout by the engine's margin: its message.
fn projected_over(
    project: Option<(std::time::Instant, std::time::Duration)>,
    began: std::time::Instant,
    covered: f64,
    states: usize,
) -> Option<String> {
    let (start, timeout) = project?;
    let budget = crate::budget::TimeBudget { start, timeout };
    let limit = timeout.as_secs_f64();
    let own = began.elapsed().as_secs_f64();
    let to_limit = MAX_STATES as f64 / states.max(1) as f64;
    budget.over(began, covered, to_limit).map(|projected| {
        format!(
            "exploring the orders of barrier arrivals would take about {projected:.0} s \
             ({states} states after {own:.1} s, {:.2}% of their tree; projected from the share \
             covered and the limit of {MAX_STATES} states), over --timeout {limit} s",
            covered * 100.0
        )
    })
}

/// Explores every order of the arrivals of `threads` over `n` events.
fn explore(
    n: usize,
    threads: &[Vec<Arrival>],
    deadline: Option<std::time::Instant>,
    project: Option<(std::time::Instant, std::time::Duration)>,
) -> Result<BarrierOutcomes, CheckError> {
    if threads.iter().all(Vec::is_empty) {
        return Ok(BarrierOutcomes {
            matchings: vec![Relation::new(n)],
            deadlock: false,
        });
    }
    let counters = threads
        .iter()
        .flatten()
        .map(|a| a.counter + 1)
        .max()
        .unwrap_or(0);
    let start = State {
        pos: vec![0; threads.len()],
        waiting: vec![false; threads.len()],
        open: vec![Vec::new(); counters],
        done: Vec::new(),
    };
    // Only membership and counts are read from these sets (the final
    // matchings are sorted), so a fast hasher gives the same results.
    let mut seen: HashSet<State, FastHash> = HashSet::default();
    let mut finals: HashSet<Vec<Vec<usize>>, FastHash> = HashSet::default();
    let mut deadlock = false;
    // Each state carries its share of the tree of arrival orders (a state
    // met again counts its share as covered): the time projection under a
    // timeout, like the thread-path enumeration's.
    let mut stack = vec![(start, 1f64)];
    let (mut covered, began) = (0f64, std::time::Instant::now());
    while let Some((st, share)) = stack.pop() {
        if seen.contains(&st) {
            covered += share;
            continue;
        }
        // `st` joins `seen` once its successors are pushed; the checks
        // below count it already.
        let size = seen.len() + 1;
        if size.is_multiple_of(DEADLINE_EVERY) {
            if deadline.is_some_and(|d| std::time::Instant::now() > d) {
                return Err(CheckError::Limit(format!(
                    "the orders of barrier arrivals were still being explored at the deadline \
                     ({size} states)"
                )));
            }
            if let Some(msg) = projected_over(project, began, covered, size) {
                return Err(CheckError::Limit(msg));
            }
        }
        if size > MAX_STATES {
            return Err(CheckError::Limit(format!(
                "more than {MAX_STATES} orders of barrier arrivals in one execution"
            )));
        }
        let movable: Vec<usize> = (0..threads.len())
            .filter(|&t| !st.waiting[t] && st.pos[t] < threads[t].len())
            .collect();
        let moved = !movable.is_empty();
        for &t in &movable {
            stack.push((step(&st, threads, t), share / movable.len() as f64));
        }
        if !moved {
            covered += share;
            if st.waiting.iter().any(|&w| w) {
                deadlock = true;
            } else {
                finals.insert(st.done.clone());
            }
        }
        seen.insert(st);
    }
    let mut finals: Vec<Vec<Vec<usize>>> = finals.into_iter().collect();
    finals.sort();
    let matchings = finals
        .into_iter()
        .map(|done| {
            let mut bar = Relation::new(n);
            for inst in &done {
                for &a in inst {
                    for &b in inst {
                        if a != b {
                            bar.add(a, b);
                        }
                    }
                }
            }
            bar
        })
        .collect();
    Ok(BarrierOutcomes {
        matchings,
        deadlock,
    })
}

/// Thread `t` performs its next arrival.
fn step(st: &State, threads: &[Vec<Arrival>], t: usize) -> State {
    let mut next = st.clone();
    let i = next.pos[t];
    next.pos[t] += 1;
    let a = &threads[t][i];
    let open = &mut next.open[a.counter];
    open.push((t, i));
    let complete = a.count > 0
        && open.len() as i64 == a.count
        && open.iter().all(|&(u, j)| threads[u][j].count == a.count);
    if complete {
        let members = std::mem::take(open);
        let mut inst: Vec<usize> = members.iter().map(|&(u, j)| threads[u][j].event).collect();
        inst.sort_unstable();
        for &(u, _) in &members {
            next.waiting[u] = false;
        }
        next.done.push(inst);
        next.done.sort();
    } else if a.waits {
        next.waiting[t] = true;
    }
    next
}

/// The barrier events of each thread with their counters and counts.
fn prepare(
    skel: &Skeleton,
    values: &Values,
    groups: &mut HashMap<usize, Vec<usize>>,
) -> Result<Vec<Vec<Arrival>>, CheckError> {
    let test = skel.test;
    // (scope group, barrier id) -> counter number
    let mut counters: BTreeMap<(Vec<usize>, Value), usize> = BTreeMap::new();
    let mut out = Vec::with_capacity(skel.paths.len());
    for (t, p) in skel.paths.iter().enumerate() {
        let mut arrivals = Vec::new();
        for (i, e) in p.events.iter().enumerate() {
            let (EventKind::Barrier(kind), Some((id, count))) = (e.kind, &e.barrier) else {
                continue;
            };
            let g = skel.global(t, i);
            let ins = &test.threads[t].code[e.instr];
            let error = |msg: &str| {
                CheckError::Diagnostic(Diagnostic::new(test.name.clone(), ins.pos, msg))
            };
            let eval = |s: &super::thread::Sym| -> Result<Value, CheckError> {
                match values.sym(t, s, &mut Vec::new()) {
                    Eval::Known(v) => Ok(v),
                    _ => Err(error("barrier operand has no value in this execution")),
                }
            };
            // The threads sharing every scope instance the barrier is tagged with.
            let group = groups
                .entry(g)
                .or_insert_with(|| {
                    let tagged: Vec<&str> = super::candidate::scope_levels(test)
                        .into_iter()
                        .filter(|l| {
                            skel.sets
                                .get(l.to_ascii_uppercase().as_str())
                                .is_some_and(|s| s.contains(g))
                        })
                        .collect();
                    (0..test.threads.len())
                        .filter(|&u| tagged.iter().all(|l| same_thread_instance(test, t, u, l)))
                        .collect()
                })
                .clone();
            let id = eval(id)?;
            let executors = matches!(
                ins.kind,
                crate::ir::InstrKind::Barrier {
                    executors: true,
                    ..
                }
            );
            let count = match count {
                // Dat3M's reading: the threads that execute a barrier with
                // this id, counted once the counters are known (below).
                None if executors => -1,
                None => group.len() as i64,
                // A count that is not a positive number is never reached:
                // the instance never completes.
                Some(c) => match eval(c)? {
                    Value::Int(k) if k > 0 => k,
                    _ => 0,
                },
            };
            let next = counters.len();
            let counter = *counters.entry((group, id)).or_insert(next);
            arrivals.push(Arrival {
                event: g,
                waits: kind != BarrierKind::Arrive,
                counter,
                count,
            });
        }
        out.push(arrivals);
    }
    // Counts of Dat3M's barriers without a quorum: the number of threads
    // with an arrival at the same counter in this execution.
    if out.iter().flatten().any(|a| a.count < 0) {
        let mut executors: HashMap<usize, HashSet<usize>> = HashMap::new();
        for (t, arrivals) in out.iter().enumerate() {
            for a in arrivals {
                executors.entry(a.counter).or_default().insert(t);
            }
        }
        for a in out.iter_mut().flatten() {
            if a.count < 0 {
                a.count = executors.get(&a.counter).map_or(0, |s| s.len() as i64);
            }
        }
    }
    Ok(out)
}
