//! Bounded verification of a mapping: every canonical source program up to
//! the bound (see [`super::enumerate`]) is checked as by `check-mapping`.
//! Programs are processed by increasing size, so the counterexamples
//! reported are the smallest there are; `--shard K/M` keeps every M-th
//! program of the fixed order, starting at the K-th, and `merge` adds up
//! the shard summaries.

use super::build::Compiler;
use super::check::{self, Verdict};
use super::dominance;
use super::enumerate::{self, Program, Reduce, Space};
use super::format::Mapping;
use crate::driver::ModelCache;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Options of a campaign.
#[derive(Clone, Debug)]
pub struct Options {
    pub bound: usize,
    /// `(k, m)`: the k-th (1-based) of m slices.
    pub shard: (usize, usize),
    pub stop_at_first: bool,
    /// Where to write counterexamples (source and compiled litmus files).
    pub out: Option<PathBuf>,
    pub check: check::Options,
    /// Keep every scope annotation (no scope merging).
    pub all_scopes: bool,
    /// Maximum number of threads (default: the bound).
    pub max_threads: Option<usize>,
    /// Maximum number of locations (default: the bound).
    pub max_locations: Option<usize>,
    /// Maximum number of GPU work-groups (default: the bound).
    pub max_groups: Option<usize>,
    /// Maximum number of events in one thread (default: the bound).
    pub max_thread_size: Option<usize>,
    /// Only count the programs.
    pub count_only: bool,
    /// Memory orders enumerated (names); empty = all.
    pub orders: Vec<String>,
    /// Turn the reductions of docs/mappings.md ("Reductions") off: the
    /// plain canonical enumeration, for differential checks.
    pub no_reduce: bool,
    /// Turn the communication-cycle cut off (item 13), keeping the others.
    pub no_cycle_cut: bool,
    /// Check every program on its own, without the results of weaker
    /// programs of its shape ([`super::dominance`]).
    pub no_dominance: bool,
}

/// One counterexample.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Counterexample {
    /// Name of the program (also its file name under `--out`).
    pub name: String,
    pub events: usize,
    /// One-line program summary.
    pub program: String,
    /// The first extra state, in source names.
    pub extra_state: String,
}

/// The summary of a campaign (or of a shard).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Summary {
    pub mapping: String,
    pub bound: usize,
    pub programs: usize,
    pub counterexamples: usize,
    pub time_s: f64,
    /// `K/M`.
    pub shard: String,
    pub sound: usize,
    pub racy: usize,
    pub errors: usize,
    /// Programs by event count that were checked (index = events).
    pub by_events: Vec<usize>,
    /// The counterexamples found (all of them unless `--stop-at-first`).
    pub found: Vec<Counterexample>,
    /// Events of the largest size class fully checked (the bound, unless
    /// the campaign stopped early).
    pub complete_to: usize,
    /// Programs found sound without a model run: a weaker program of their
    /// shape has no target state outside the SC states ([`dominance`]).
    #[serde(default)]
    pub by_weaker: usize,
    /// Programs found sound without a model run: every state outside the
    /// SC states that weaker programs of their shape leave possible, a
    /// source-stronger program of the shape allows ([`dominance`]).
    #[serde(default)]
    pub by_stronger: usize,
    /// Programs checked only on the states outside the SC states that
    /// weaker programs of their shape leave possible (and that no
    /// source-stronger program is known to allow).
    #[serde(default)]
    pub bounded: usize,
    /// Source runs made on programs raised above a checked one to find
    /// how far its source behaviours persist ([`dominance::Shape::climb`]).
    #[serde(default)]
    pub climb_runs: usize,
}

/// What the campaign tells its caller while it runs.
pub enum Event<'a> {
    /// The number of items to check (0: not counted), and what they are.
    Total(usize, Items),
    /// What has been checked so far.
    Progress(Done),
    /// A counterexample.
    Found(&'a Counterexample),
    /// A program could not be checked.
    Error(&'a str),
}

/// What a campaign counts its progress in: programs, or shapes (when it
/// checks a shape's programs together, [`dominance`]; counting the
/// programs would cost as much as enumerating them again).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Items {
    Programs,
    Shapes,
}

impl Items {
    /// `programs`, `shapes`.
    pub fn name(self) -> &'static str {
        match self {
            Items::Programs => "programs",
            Items::Shapes => "shapes",
        }
    }
}

/// Progress of a campaign.
#[derive(Clone, Copy, Debug)]
pub struct Done {
    /// Items checked, and what they are.
    pub items: usize,
    pub of: Items,
    /// Programs checked.
    pub programs: usize,
    /// Counterexamples found.
    pub found: usize,
}

/// Whether `m` has a rule for an enumerated operation (kind, order index,
/// scope index, remote) with RMW operation `rmw_op`, on any placement class
/// the mapping has threads for.
fn compiles(m: &Mapping, op: (enumerate::OpKind, u8, u8, bool), rmw_op: &str) -> bool {
    use super::format::{Construct, Kind, ORDERS, SCOPES};
    let (kind, order, scope, remote) = op;
    let kind = match kind {
        enumerate::OpKind::Load => Kind::Load,
        enumerate::OpKind::Store => Kind::Store,
        enumerate::OpKind::Rmw => Kind::Rmw,
        enumerate::OpKind::Fence => Kind::Fence,
    };
    m.threads.iter().any(|(class, _)| {
        let c = Construct {
            order: ORDERS[order as usize],
            class,
            scope: (scope != 0).then(|| SCOPES[scope as usize]),
            op: (kind == Kind::Rmw).then_some(rmw_op),
            remote,
            region: Some("global"),
        };
        m.rule(kind, &c).is_some()
    })
}

/// The enumeration space for `m`: its operations are those the mapping
/// compiles (remote variants when it has `remote=` rules; RMWs are
/// fetch-and-add when it compiles `add` but not `exch`).
pub fn space(m: &Mapping, o: &Options) -> Space {
    let mut s = base_space(m, o);
    s.remote = m.rules.iter().any(|r| r.guard.remote.is_some());
    let all = |rmw_op: &str, s: &Space| -> Vec<(enumerate::OpKind, u8, u8, bool)> {
        let mut out = Vec::new();
        for kind in [
            enumerate::OpKind::Load,
            enumerate::OpKind::Store,
            enumerate::OpKind::Rmw,
            enumerate::OpKind::Fence,
        ] {
            for order in 0..super::format::ORDERS.len() as u8 {
                for scope in 0..super::format::SCOPES.len() as u8 {
                    for remote in [false, true] {
                        if (!remote || s.remote)
                            && compiles(m, (kind, order, scope, remote), rmw_op)
                        {
                            out.push((kind, order, scope, remote));
                        }
                    }
                }
            }
        }
        out
    };
    let exch = all("exch", &s);
    let add = all("add", &s);
    let has_rmw =
        |v: &[(enumerate::OpKind, u8, u8, bool)]| v.iter().any(|o| o.0 == enumerate::OpKind::Rmw);
    s.rmw_add = !has_rmw(&exch) && has_rmw(&add);
    let frag = if s.rmw_add { add } else { exch };
    if s.reduce.stronger_orders {
        // The stronger twin must itself be enumerated (`--orders`).
        let twins: Vec<_> = frag
            .iter()
            .copied()
            .filter(|o| s.orders.is_empty() || s.orders.contains(&o.1))
            .collect();
        s.dominated = dominated(m, &twins, if s.rmw_add { "add" } else { "exch" });
    }
    s.fragment = Some(frag);
    s
}

/// Orders strictly stronger than `o` (indices into `ORDERS`: rlx < acq,
/// rel < acq_rel < sc); every tag set of sc11/rc11 (`E_rel`, `E_acq`,
/// `E_sc`, `F_sc`) only grows along it.
fn stronger(o: u8) -> &'static [u8] {
    match o {
        1 => &[2, 3, 4, 5],
        2 | 3 => &[4, 5],
        4 => &[5],
        _ => &[],
    }
}

/// The atomic operations of `frag` for which a strictly stronger order of
/// the same kind, scope and remoteness is in `frag` and compiles to the
/// same target instructions, per placement (CPU thread or not).
fn dominated(
    m: &Mapping,
    frag: &[(enumerate::OpKind, u8, u8, bool)],
    rmw_op: &str,
) -> Vec<(enumerate::OpKind, u8, u8, bool, bool)> {
    use super::format::{Construct, Kind, ORDERS, SCOPES};
    let kind_of = |k| match k {
        enumerate::OpKind::Load => Kind::Load,
        enumerate::OpKind::Store => Kind::Store,
        enumerate::OpKind::Rmw => Kind::Rmw,
        enumerate::OpKind::Fence => Kind::Fence,
    };
    let target = |class: &str, (kind, order, scope, remote): (enumerate::OpKind, u8, u8, bool)| {
        let c = Construct {
            order: ORDERS[order as usize],
            class,
            scope: (scope != 0).then(|| SCOPES[scope as usize]),
            op: (kind == enumerate::OpKind::Rmw).then_some(rmw_op),
            remote,
            region: Some("global"),
        };
        m.rule(kind_of(kind), &c).map(|r| r.target.clone())
    };
    let mut out = Vec::new();
    for &(kind, order, scope, remote) in frag {
        if order == 0 {
            continue;
        }
        for cpu in [false, true] {
            // Every class a thread of this placement may compile with.
            let classes: Vec<&str> = m
                .threads
                .iter()
                .map(|(c, _)| c.as_str())
                .filter(|c| (*c == "cpu") == cpu)
                .collect();
            if classes.is_empty() {
                continue;
            }
            let twin = stronger(order).iter().any(|&o2| {
                frag.contains(&(kind, o2, scope, remote))
                    && classes.iter().all(|cls| {
                        let a = target(cls, (kind, order, scope, remote));
                        a.is_some() && a == target(cls, (kind, o2, scope, remote))
                    })
            });
            if twin {
                out.push((kind, order, scope, remote, cpu));
            }
        }
    }
    out
}

fn base_space(m: &Mapping, o: &Options) -> Space {
    Space {
        bound: o.bound,
        cpu: m.threads.iter().any(|(c, _)| c == "cpu"),
        gpu: m.threads.iter().any(|(c, _)| c != "cpu"),
        scoped: !m.scopes.is_empty(),
        merge_scopes: !o.all_scopes && !m.scope_selective(),
        max_threads: o.max_threads.unwrap_or(o.bound).max(1),
        max_locations: o.max_locations.unwrap_or(o.bound).max(1),
        max_groups: o.max_groups.unwrap_or(o.bound).max(1),
        max_thread_size: o.max_thread_size.unwrap_or(o.bound).max(1),
        orders: o
            .orders
            .iter()
            .filter_map(|n| super::format::ORDERS.iter().position(|x| x == n))
            .map(|i| i as u8)
            .collect(),
        remote: false,
        rmw_add: false,
        fragment: None,
        dominated: Vec::new(),
        slice: None,
        reduce: if o.no_reduce {
            Reduce::default()
        } else {
            let mut r = reductions(m, o.check.target_model.as_deref().unwrap_or(&m.target));
            r.placements &= !o.all_scopes;
            r.cycles &= !o.no_cycle_cut;
            r
        },
    }
}

/// The reductions that are sound for `m`'s source model, undefined flags
/// and target model `target` (docs/mappings.md, "Reductions"): the race
/// cuts rest on the model's race flags and on every SC interleaving being
/// one of its executions, argued for the built-in `sc11` and `rc11` only;
/// the edge-fence cut also on the target model only gaining behaviours when
/// fences are removed (argued for `ptx6`, `cmm`, `x86tso`) and on the
/// mapping compiling fences to fences only (checked here).
pub fn reductions(m: &Mapping, target: &str) -> Reduce {
    let data = m.is_undefined_flag("data-race");
    let hetero = m.is_undefined_flag("heterogeneous-race");
    let mut r = match m.source.as_str() {
        "sc11" => Reduce {
            data_races: data,
            heterogeneous_races: hetero,
            edge_fences: true,
            stronger_orders: true,
            placements: true,
            // Needs every enumerated program statically race-free.
            cycles: data && hetero,
            remote_promotion: false,
        },
        "rc11" => Reduce {
            data_races: data,
            heterogeneous_races: false,
            edge_fences: true,
            stronger_orders: true,
            placements: false,
            cycles: data,
            remote_promotion: false,
        },
        // docs/mappings.md, "OpenCL": the race cuts and the twin cut hold
        // by the repair lemma (hb does not depend on what non-atomic reads
        // read); no edge-fence cut (not argued for these models).
        "opencl" | "opencl-rsp" => Reduce {
            data_races: data,
            heterogeneous_races: hetero,
            edge_fences: false,
            stronger_orders: true,
            placements: false,
            cycles: false,
            remote_promotion: m.source == "opencl-rsp",
        },
        _ => Reduce::default(),
    };
    // (Each compile check runs only when its cut is still on.)
    r.edge_fences =
        r.edge_fences && matches!(target, "ptx6" | "cmm" | "x86tso") && fences_compile_to_fences(m);
    // The communication-cycle cut rests on the target's SC-per-location
    // and atomicity axioms for morally strong accesses (argued for `ptx6`,
    // `cmm`, `x86tso`) and on each access compiling to one access.
    r.cycles =
        r.cycles && matches!(target, "ptx6" | "cmm" | "x86tso") && accesses_compile_to_accesses(m);
    // The placement cut rests on the argument of the scope merge (item 5)
    // for the models it was made for; it needs the merge itself (no rule
    // selects by scope).
    r.placements &= matches!(target, "ptx6" | "cmm") && !m.scope_selective();
    r
}

/// The placements of a one-thread program on each placement class `m` has
/// threads for, with the class name.
pub(super) fn class_places(m: &Mapping) -> Vec<(enumerate::Place, &'static str)> {
    use enumerate::Place;
    m.threads
        .iter()
        .map(|(c, _)| {
            if c == "cpu" {
                (Place::Cpu, "cpu")
            } else if m.scopes.is_empty() {
                (Place::Plain, "gpu")
            } else {
                (Place::Gpu { dev: 0, wg: 0 }, "gpu")
            }
        })
        .collect()
}

/// The target code of the one-thread program `ops` placed at `place`
/// (locations `x`, `y`, ...), compiled through the text path; `None` when
/// it does not compile.
pub(super) fn compiled_thread(
    m: &Mapping,
    place: enumerate::Place,
    ops: Vec<enumerate::Op>,
    rmw_add: bool,
) -> Option<Vec<crate::ir::Instr>> {
    let p = Program {
        threads: vec![enumerate::Thread { place, ops }],
        rmw_add,
    };
    let text = p.to_c("one", "x=0");
    let src = crate::litmus::parse_str("one.litmus", &text).ok()?;
    let mut c = super::compile::compile(m, &src).ok()?;
    Some(std::mem::take(&mut c.test.threads[0].code))
}

/// Every (kind, order, scope) the enumeration generates on a thread of
/// placement class `cls` and `m` has a rule for, with the RMW operation it
/// compiles for.
pub(super) fn constructs(
    m: &Mapping,
    cls: &str,
    kinds: &[enumerate::OpKind],
) -> Vec<(enumerate::OpKind, u8, u8, &'static str)> {
    use super::format::SCOPES;
    let mut out = Vec::new();
    for &kind in kinds {
        for &order in enumerate::orders(kind) {
            for scope in 0..SCOPES.len() as u8 {
                if (scope == 0) != (m.scopes.is_empty() || order == 0) {
                    continue;
                }
                // The RMW operation only matters to RMWs.
                let rmw_ops: &[&'static str] = if kind == enumerate::OpKind::Rmw {
                    &["exch", "add"]
                } else {
                    &["exch"]
                };
                for &rmw_op in rmw_ops {
                    let known = m.threads.iter().any(|(c, _)| {
                        (c == "cpu") == (cls == "cpu")
                            && compiles(m, (kind, order, scope, false), rmw_op)
                    });
                    if known {
                        out.push((kind, order, scope, rmw_op));
                    }
                }
            }
        }
    }
    out
}

pub(super) fn op(kind: enumerate::OpKind, order: u8, scope: u8, loc: u8) -> enumerate::Op {
    enumerate::Op {
        kind,
        order,
        scope,
        loc,
        remote: false,
    }
}

/// Whether every fence the mapping compiles becomes target fences only (no
/// access, no register move): each fence construct is compiled in a
/// one-thread program `fence; r = *x` on every placement class, and the
/// compiled thread must hold one load and otherwise fences.
fn fences_compile_to_fences(m: &Mapping) -> bool {
    use crate::ir::InstrKind;
    use enumerate::OpKind;
    class_places(m).into_iter().all(|(place, cls)| {
        constructs(m, cls, &[OpKind::Fence])
            .into_iter()
            .all(|(kind, order, scope, _)| {
                let ops = vec![op(kind, order, scope, 0), op(OpKind::Load, 0, 0, 0)];
                compiled_thread(m, place, ops, false).is_some_and(|code| {
                    let loads = code
                        .iter()
                        .filter(|i| matches!(i.kind, InstrKind::Load { .. }))
                        .count();
                    let fences = code
                        .iter()
                        .filter(|i| matches!(i.kind, InstrKind::Fence))
                        .count();
                    loads == 1 && loads + fences == code.len()
                })
            })
    })
}

/// Whether every access the mapping compiles becomes exactly one target
/// access of the same kind of effect, plus fences and register moves (the
/// communication-cycle
/// cut, docs/mappings.md item 13): a load one load, a store one store or
/// RMW, an RMW one RMW. Each access construct is compiled alone on every
/// placement class.
fn accesses_compile_to_accesses(m: &Mapping) -> bool {
    use crate::ir::InstrKind;
    use enumerate::OpKind;
    class_places(m).into_iter().all(|(place, cls)| {
        constructs(m, cls, &[OpKind::Load, OpKind::Store, OpKind::Rmw])
            .into_iter()
            .all(|(kind, order, scope, rmw_op)| {
                let ops = vec![op(kind, order, scope, 0)];
                compiled_thread(m, place, ops, rmw_op == "add").is_some_and(|code| {
                    if !code.iter().all(|i| {
                        matches!(
                            i.kind,
                            InstrKind::Fence
                                | InstrKind::Mov { .. }
                                | InstrKind::Load { .. }
                                | InstrKind::Store { .. }
                                | InstrKind::Rmw { .. }
                        )
                    }) {
                        return false;
                    }
                    let mut accesses = code
                        .iter()
                        .filter(|i| !matches!(i.kind, InstrKind::Fence | InstrKind::Mov { .. }));
                    let (Some(a), None) = (accesses.next(), accesses.next()) else {
                        return false;
                    };
                    matches!(
                        (kind, &a.kind),
                        (OpKind::Load, InstrKind::Load { .. })
                            | (
                                OpKind::Store,
                                InstrKind::Store { .. } | InstrKind::Rmw { .. }
                            )
                            | (OpKind::Rmw, InstrKind::Rmw { .. })
                    )
                })
            })
    })
}

/// This shard's programs, with their place in the enumeration (see
/// [`ProgramId`]), in the order a campaign checks them.
pub fn programs(m: &Mapping, o: &Options) -> Vec<(ProgramId, Program)> {
    let (space, table) = plan(m, o);
    let mut out = Vec::new();
    if table.is_some() {
        let mut u = 0usize;
        for n in 1..=o.bound {
            shard_units(&space, n, &mut u, &mut |u, unit| {
                let mut j = 0;
                enumerate::for_each_program_of_unit_while(&space, unit, &mut |p| {
                    out.push((ProgramId::InShape(u, j), p.clone()));
                    j += 1;
                    true
                })
            });
        }
        return out;
    }
    let mut i = 0usize;
    enumerate::for_each(&space, &mut |p| {
        if mine(o, i) {
            out.push((ProgramId::Index(i), p.clone()));
        }
        i += 1;
    });
    out
}

/// This shard's programs, counted by size: with [`plan`]'s space and
/// `by_shape`, as [`programs`] lists them.
fn count_programs(space: &Space, o: &Options, by_shape: bool) -> Vec<usize> {
    let mut counted = vec![0usize; o.bound + 1];
    let mut i = 0usize;
    enumerate::for_each(space, &mut |p| {
        // A sliced space generates only this shard's units.
        if by_shape || mine(o, i) {
            counted[p.events()] += 1;
        }
        i += 1;
    });
    counted
}

/// This shard's shapes (units), as a campaign going shape by shape checks
/// them: cheap to count, as no order or scope is chosen.
fn count_units(space: &Space, o: &Options) -> usize {
    let (mut n, mut u) = (0, 0);
    for size in 1..=o.bound {
        shard_units(space, size, &mut u, &mut |_, _| {
            n += 1;
            true
        });
    }
    n
}

/// Calls `f` on this shard's units of `n` events ([`Space::slice`]) with
/// their number among all units of the space, counted on from `u` (which
/// moves past every unit of the size class), until `f` returns `false`.
/// The one numbering of shapes behind program names ([`ProgramId`]).
fn shard_units(
    space: &Space,
    n: usize,
    u: &mut usize,
    f: &mut dyn FnMut(usize, &enumerate::Unit) -> bool,
) {
    enumerate::for_each_unit_of_size_while(space, n, &mut |unit| {
        let number = *u;
        *u += 1;
        !unit.in_slice(space) || f(number, unit)
    });
}

/// The table deciding programs from weaker ones of their shape, when that
/// is on: shapes must come one after the other (the cycle cut's skeleton-
/// first order) and the argument must hold for the mapping and target.
fn dominance_table(m: &Mapping, o: &Options, space: &Space) -> Option<dominance::Table> {
    if o.no_dominance || !space.reduce.cycles || o.check.why {
        return None;
    }
    dominance::Table::new(m, o.check.target_model.as_deref().unwrap_or(&m.target))
}

/// The campaign's space and, when programs are decided from weaker ones
/// of their shape, the table: the space then generates only this shard's
/// shapes (`Space::slice`), skipping the others before any order or scope
/// is chosen, so that a shard's enumeration costs about its share.
fn plan(m: &Mapping, o: &Options) -> (Space, Option<dominance::Table>) {
    let mut space = space(m, o);
    let table = dominance_table(m, o, &space);
    if table.is_some() {
        space.slice = Some(o.shard);
    }
    (space, table)
}

/// Whether program `i` of the fixed order is this shard's when a campaign
/// goes program by program: every M-th. (A campaign going shape by shape
/// slices units instead: [`enumerate::Unit::in_slice`].)
fn mine(o: &Options, i: usize) -> bool {
    let (k, m) = o.shard;
    i % m == k - 1
}

/// Programs checked together when going program by program (rayon over a
/// batch; enumeration between).
const BATCH: usize = 16_384;

/// Shapes checked together when going shape by shape (each worker
/// enumerates and checks a shape's programs).
const UNIT_BATCH: usize = 256;

/// Running totals of a campaign, shared by the workers.
#[derive(Default)]
struct Tally {
    /// Items (programs or shapes) checked.
    done: AtomicUsize,
    programs: AtomicUsize,
    found: AtomicUsize,
    sound: AtomicUsize,
    racy: AtomicUsize,
    errors: AtomicUsize,
    by_weaker: AtomicUsize,
    by_stronger: AtomicUsize,
    climb_runs: AtomicUsize,
    bounded: AtomicUsize,
    /// Counterexamples with their program's place in the enumeration.
    cex: Mutex<Vec<(ProgramId, Counterexample)>>,
}

/// What a batch holds: programs, or shapes whose programs the workers
/// enumerate themselves.
enum Work {
    Programs(Vec<(usize, Program)>),
    Shapes(Vec<(usize, enumerate::Unit)>),
}

/// Work of one size class to check together, and whether the class ends
/// with it.
struct Batch {
    events: usize,
    work: Work,
    last: bool,
}

/// Enumerates this shard's programs (or, shape by shape, its units), size
/// class by size class, into batches of [`BATCH`] programs (or
/// [`UNIT_BATCH`] units), until the checker hangs up or sets `stopped`.
/// Units are numbered over the whole space, so that a program's name does
/// not depend on the shard.
fn produce(
    space: &Space,
    o: &Options,
    by_shape: bool,
    stopped: &std::sync::atomic::AtomicBool,
    tx: &std::sync::mpsc::SyncSender<Batch>,
) {
    let (mut i, mut u) = (0usize, 0usize);
    for n in 1..=o.bound {
        let mut programs: Vec<(usize, Program)> = Vec::new();
        let mut units: Vec<(usize, enumerate::Unit)> = Vec::new();
        let mut go = true;
        let send = |work: Work, last: bool| {
            !stopped.load(Ordering::Relaxed)
                && tx
                    .send(Batch {
                        events: n,
                        work,
                        last,
                    })
                    .is_ok()
        };
        if by_shape {
            shard_units(space, n, &mut u, &mut |number, unit| {
                units.push((number, unit.clone()));
                if units.len() >= UNIT_BATCH {
                    go = send(Work::Shapes(std::mem::take(&mut units)), false);
                }
                go
            });
        } else {
            enumerate::for_each_of_size_while(space, n, &mut |p| {
                if mine(o, i) {
                    programs.push((i, p.clone()));
                }
                i += 1;
                if programs.len() >= BATCH {
                    go = send(Work::Programs(std::mem::take(&mut programs)), false);
                }
                go
            });
        }
        let rest = if by_shape {
            Work::Shapes(units)
        } else {
            Work::Programs(programs)
        };
        if !go || !send(rest, true) {
            return;
        }
    }
}

/// A program's verdict, its counterexample if unsound, and (when the SC
/// shortcut applied) its target states outside the SC states.
type Checked = (Verdict, Option<Counterexample>, Option<check::StateSet>);

/// What every check of a campaign shares.
struct Campaign<'a> {
    m: &'a Mapping,
    o: &'a Options,
    space: &'a Space,
    /// What progress counts: shapes when going shape by shape (with the
    /// table), programs otherwise.
    items: Items,
    cache: ModelCache,
    compiler: Compiler<'a>,
    /// Deciding programs from weaker ones of their shape, when on.
    table: Option<dominance::Table>,
    tally: Tally,
    report: &'a (dyn Fn(Event<'_>) + Sync),
}

impl Campaign<'_> {
    /// Checks one batch in parallel: programs one by one, or shapes, each
    /// on one worker that enumerates its programs and checks them in order
    /// (deciding each from the programs of the shape checked before it).
    /// Returns the number of programs checked.
    fn check_batch(&self, work: &Work) -> usize {
        let before = self.tally.programs.load(Ordering::Relaxed);
        match work {
            Work::Programs(programs) => {
                programs.par_iter().with_max_len(4).for_each(|(i, p)| {
                    let mut shape = dominance::Shape::default();
                    self.tally_one(ProgramId::Index(*i), |id| {
                        self.check_in_shape(&mut shape, id, p)
                    });
                    self.progress();
                });
            }
            Work::Shapes(units) => {
                units.par_iter().with_max_len(1).for_each(|(u, unit)| {
                    let mut shape = dominance::Shape::default();
                    let mut j = 0;
                    enumerate::for_each_program_of_unit_while(self.space, unit, &mut |p| {
                        self.tally_one(ProgramId::InShape(*u, j), |id| {
                            self.check_in_shape(&mut shape, id, p)
                        });
                        j += 1;
                        true
                    });
                    self.progress();
                });
            }
        }
        self.tally.programs.load(Ordering::Relaxed) - before
    }

    /// Counts the outcome of checking one program (`check`) and reports a
    /// counterexample or an error.
    fn tally_one(
        &self,
        id: ProgramId,
        check: impl FnOnce(ProgramId) -> Result<(Verdict, Option<Counterexample>), String>,
    ) {
        let (tally, report) = (&self.tally, self.report);
        tally.programs.fetch_add(1, Ordering::Relaxed);
        match check(id) {
            Ok((Verdict::Sound, _)) => {
                tally.sound.fetch_add(1, Ordering::Relaxed);
            }
            Ok((Verdict::Racy, _)) => {
                tally.racy.fetch_add(1, Ordering::Relaxed);
            }
            Ok((Verdict::Unsound, c)) => {
                tally.found.fetch_add(1, Ordering::Relaxed);
                if let Some(c) = c {
                    report(Event::Found(&c));
                    if let Ok(mut v) = tally.cex.lock() {
                        v.push((id, c));
                    }
                }
            }
            Err(e) => {
                tally.errors.fetch_add(1, Ordering::Relaxed);
                report(Event::Error(&e));
            }
        }
    }

    /// One more item done: reports the progress.
    fn progress(&self) {
        let t = &self.tally;
        (self.report)(Event::Progress(Done {
            items: t.done.fetch_add(1, Ordering::Relaxed) + 1,
            of: self.items,
            programs: t.programs.load(Ordering::Relaxed),
            found: t.found.load(Ordering::Relaxed),
        }));
    }

    /// Checks program `p` of a shape whose earlier programs `shape`
    /// records: sound at once when a weaker program of the shape has no
    /// target state outside the SC states, else checked with the bound the
    /// weaker ones give.
    fn check_in_shape(
        &self,
        shape: &mut dominance::Shape,
        i: ProgramId,
        p: &Program,
    ) -> Result<(Verdict, Option<Counterexample>), String> {
        let race_free = p.race_free(self.m.source == "sc11");
        let table = self.table.as_ref().filter(|_| race_free);
        let Some(mask) = table.and_then(|t| t.bound_mask(shape, p)) else {
            let (verdict, cex, non_sc) = self.check_program(shape, i, p, race_free, None)?;
            if let (Some(states), Some(_)) = (non_sc, table) {
                shape.record(p, &states);
                if verdict == Verdict::Sound {
                    self.climb(shape, p, &states)?;
                }
            }
            return Ok((verdict, cex));
        };
        let known = shape.known_allowed(p, mask);
        if known == mask {
            let decided = if mask == 0 {
                &self.tally.by_weaker
            } else {
                &self.tally.by_stronger
            };
            decided.fetch_add(1, Ordering::Relaxed);
            shape.record_mask(p, mask);
            return Ok((Verdict::Sound, None));
        }
        self.tally.bounded.fetch_add(1, Ordering::Relaxed);
        let rest = shape.states_of(mask & !known);
        let (verdict, cex, non_sc) = self.check_program(shape, i, p, race_free, Some(&rest))?;
        if let Some(states) = non_sc {
            let mut all = states.clone();
            all.extend(shape.states_of(mask & known));
            shape.record(p, &all);
            if verdict == Verdict::Sound {
                self.climb(shape, p, &states)?;
            }
        }
        Ok((verdict, cex))
    }

    /// `p`'s source allows `states`: finds a source-stronger program of
    /// the shape that still allows them ([`dominance::Shape::climb`]), so
    /// that the programs below it need no source run for them.
    fn climb(
        &self,
        shape: &mut dominance::Shape,
        p: &Program,
        states: &check::StateSet,
    ) -> Result<(), String> {
        if states.is_empty() {
            return Ok(());
        }
        let mut allows = |q: &Program| {
            let t = super::build::source_test(q, "climb");
            check::source_allows_all(self.m, &t, &self.cache, &self.o.check, states)
        };
        let runs = shape.climb(p, states, &mut allows)?;
        self.tally.climb_runs.fetch_add(runs, Ordering::Relaxed);
        Ok(())
    }

    /// Checks program `p` (`race_free` as [`Program::race_free`] says) with
    /// `bound` from the weaker programs of its shape, whose SC states
    /// `shape` keeps.
    fn check_program(
        &self,
        shape: &mut dominance::Shape,
        i: ProgramId,
        p: &Program,
        race_free: bool,
        bound: Option<&check::StateSet>,
    ) -> Result<Checked, String> {
        let (m, o, cache, compiler) = (self.m, self.o, &self.cache, &self.compiler);
        let name = program_name(m, o, i);
        let src = super::build::source_test(p, &name);
        let compile = |t: &crate::ir::Test| compiler.compile(p, t);
        // The SC states depend only on the shape: computed once for it.
        let sc = if check::sc_shortcut_applies(m, &o.check, race_free) {
            shape
                .sc
                .get_or_insert_with(|| super::sc::sc_states(&src, &check::full_observation(&src)))
                .as_ref()
        } else {
            None
        };
        let (r, non_sc) = check::check_test_bounded(
            m,
            &src,
            &name,
            cache,
            &o.check,
            race_free,
            Some(&compile),
            check::Hints { bound, sc },
        )?;
        if r.verdict != Verdict::Unsound {
            return Ok((r.verdict, None, non_sc));
        }
        let st = &r.extra_states[0];
        let cond: Vec<String> = r
            .observed
            .iter()
            .zip(st)
            .map(|(n, v)| {
                let v = crate::ir::outcome::value_text(&r.source, *v);
                if n.contains(':') {
                    format!("{n}={v}")
                } else {
                    format!("[{n}]={v}")
                }
            })
            .collect();
        let c = Counterexample {
            name: name.clone(),
            events: p.events(),
            program: p.summary(),
            extra_state: r.state_text(st),
        };
        if let Some(dir) = &o.out {
            let source_text = p.to_c(&name, &cond.join(" /\\ ")).replacen(
                '\n',
                &format!(
                    "\n\"Counterexample to mapping {}: run with litmix run --model {}\"\n",
                    m.name, m.source
                ),
                1,
            );
            let src2 = crate::litmus::parse_str(&format!("{name}.litmus"), &source_text)
                .map_err(|d| d.render())?;
            let compiled = super::compile::compile(m, &src2).map_err(|d| d.render())?;
            let write = |file: String, text: &str| {
                std::fs::write(dir.join(&file), text)
                    .map_err(|e| format!("cannot write {}: {e}", dir.join(&file).display()))
            };
            write(format!("{name}.litmus"), &source_text)?;
            write(format!("{name}.{}.litmus", m.target), &compiled.text)?;
        }
        Ok((Verdict::Unsound, Some(c), non_sc))
    }
}

/// Runs the campaign, streaming: one thread counts the progress total
/// (shapes when going shape by shape, else programs; `--count` counts
/// programs and stops), one enumerates batches a batch ahead, and the
/// rayon pool checks them, so memory stays flat whatever the bound.
pub fn run(m: &Mapping, o: &Options, report: &(dyn Fn(Event<'_>) + Sync)) -> Summary {
    let start = Instant::now();
    let (space, table) = plan(m, o);
    let (k, nshards) = o.shard;
    let mut summary = Summary {
        mapping: m.name.clone(),
        bound: o.bound,
        shard: format!("{k}/{nshards}"),
        by_events: vec![0; o.bound + 1],
        ..Default::default()
    };
    let by_shape = table.is_some();
    let items = if by_shape {
        Items::Shapes
    } else {
        Items::Programs
    };
    if o.count_only {
        let counted = count_programs(&space, o, by_shape);
        report(Event::Total(counted.iter().sum(), Items::Programs));
        summary.programs = counted.iter().sum();
        summary.by_events = counted;
        summary.complete_to = o.bound;
        summary.time_s = start.elapsed().as_secs_f64();
        return summary;
    }
    let c = Campaign {
        m,
        o,
        space: &space,
        items,
        cache: ModelCache::default(),
        compiler: Compiler::new(m),
        table,
        tally: Tally::default(),
        report,
    };
    // With --stop-at-first the campaign stops after the batch that found
    // the first counterexample: every smaller size class is complete, so
    // the one reported is minimal in events.
    let stop = |t: &Tally| o.stop_at_first && t.found.load(Ordering::Relaxed) > 0;
    let stopped = std::sync::atomic::AtomicBool::new(false);
    // Three threads overlap: one counts the space (the progress total:
    // programs, or shapes when going shape by shape), one enumerates it
    // into batches (a batch ahead), and this one checks each batch on the
    // rayon pool.
    let space = &space;
    std::thread::scope(|scope| {
        // With --stop-at-first the space is not counted: counting a bound-5
        // space costs as much as the search usually needs to find its first
        // counterexample. The progress total is then unknown (0).
        if o.stop_at_first {
            report(Event::Total(0, items));
        } else if by_shape {
            scope.spawn(move || report(Event::Total(count_units(space, o), items)));
        } else {
            scope.spawn(move || {
                let n = count_programs(space, o, false).iter().sum();
                report(Event::Total(n, items))
            });
        }
        let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(1);
        let stopped = &stopped;
        scope.spawn(move || produce(space, o, by_shape, stopped, &tx));
        for b in rx {
            summary.by_events[b.events] += c.check_batch(&b.work);
            if b.last {
                summary.complete_to = b.events;
            }
            if stop(&c.tally) {
                stopped.store(true, Ordering::Relaxed);
                break;
            }
        }
    });
    let tally = c.tally;
    summary.sound = tally.sound.load(Ordering::Relaxed);
    summary.racy = tally.racy.load(Ordering::Relaxed);
    summary.errors = tally.errors.load(Ordering::Relaxed);
    summary.by_weaker = tally.by_weaker.load(Ordering::Relaxed);
    summary.by_stronger = tally.by_stronger.load(Ordering::Relaxed);
    summary.climb_runs = tally.climb_runs.load(Ordering::Relaxed);
    summary.bounded = tally.bounded.load(Ordering::Relaxed);
    summary.counterexamples = tally.found.load(Ordering::Relaxed);
    summary.programs = summary.by_events.iter().sum();
    let mut cex = tally.cex.into_inner().unwrap_or_default();
    cex.sort_by_key(|c| c.0);
    summary.found = cex.into_iter().map(|c| c.1).collect();
    if o.stop_at_first {
        summary.found.truncate(1);
    }
    summary.time_s = start.elapsed().as_secs_f64();
    summary
}

/// Where a program lies in the enumeration: its index among all programs
/// (a campaign going program by program), or its shape's index among all
/// shapes of the space and its own within the shape (shape by shape).
/// Neither depends on `--shard`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProgramId {
    Index(usize),
    InShape(usize, usize),
}

/// The name of program `id` of a campaign: `MAPPING-bN-I`, or
/// `MAPPING-bN-uU-J` for program J of shape U.
pub fn program_name(m: &Mapping, o: &Options, id: ProgramId) -> String {
    match id {
        ProgramId::Index(i) => format!("{}-b{}-{i}", m.name, o.bound),
        ProgramId::InShape(u, j) => format!("{}-b{}-u{u}-{j}", m.name, o.bound),
    }
}

/// Adds up shard summaries of one campaign. Errors when they are of
/// different mappings or bounds, or when a shard is missing or repeated.
pub fn merge(parts: &[Summary]) -> Result<Summary, String> {
    let Some(first) = parts.first() else {
        return Err("no summaries to merge".into());
    };
    let mut total = 0usize;
    let mut seen = Vec::new();
    let mut out = Summary {
        mapping: first.mapping.clone(),
        bound: first.bound,
        by_events: vec![0; first.bound + 1],
        complete_to: first.bound,
        ..Default::default()
    };
    for s in parts {
        if s.mapping != first.mapping || s.bound != first.bound {
            return Err(format!(
                "cannot merge {} bound {} with {} bound {}",
                s.mapping, s.bound, first.mapping, first.bound
            ));
        }
        let (k, m) = parse_shard(&s.shard)?;
        if total == 0 {
            total = m;
        } else if m != total {
            return Err(format!("shard {} is not one of {total} shards", s.shard));
        }
        if seen.contains(&k) {
            return Err(format!("shard {} given twice", s.shard));
        }
        seen.push(k);
        out.programs += s.programs;
        out.counterexamples += s.counterexamples;
        out.sound += s.sound;
        out.racy += s.racy;
        out.errors += s.errors;
        out.by_weaker += s.by_weaker;
        out.by_stronger += s.by_stronger;
        out.climb_runs += s.climb_runs;
        out.bounded += s.bounded;
        out.time_s = out.time_s.max(s.time_s);
        out.complete_to = out.complete_to.min(s.complete_to);
        for (i, c) in s.by_events.iter().enumerate() {
            if let Some(x) = out.by_events.get_mut(i) {
                *x += c;
            }
        }
        out.found.extend(s.found.iter().cloned());
    }
    let missing: Vec<String> = (1..=total)
        .filter(|k| !seen.contains(k))
        .map(|k| format!("{k}/{total}"))
        .collect();
    if !missing.is_empty() {
        return Err(format!("missing shard(s) {}", missing.join(", ")));
    }
    out.shard = format!("1-{total}/{total}");
    out.found
        .sort_by(|a, b| (a.events, &a.name).cmp(&(b.events, &b.name)));
    Ok(out)
}

/// `K/M` with 1 <= K <= M.
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("bad shard '{s}' (expected K/M with 1 <= K <= M, like 3/8)");
    let (k, m) = s.split_once('/').ok_or_else(bad)?;
    let k: usize = k.trim().parse().map_err(|_| bad())?;
    let m: usize = m.trim().parse().map_err(|_| bad())?;
    if k == 0 || m == 0 || k > m {
        return Err(bad());
    }
    Ok((k, m))
}
