//! Bounded verification of a mapping: every canonical source program up to
//! the bound (see [`super::enumerate`]) is checked as by `check-mapping`.
//! Programs are processed by increasing size, so the counterexamples
//! reported are the smallest there are; `--shard K/M` keeps every M-th
//! program of the fixed order, starting at the K-th, and `merge` adds up
//! the shard summaries.

use super::check::{self, Verdict};
use super::enumerate::{self, Program, Space};
use super::format::Mapping;
use crate::driver::ModelCache;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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
    /// Only count the programs.
    pub count_only: bool,
    /// Memory orders enumerated (names); empty = all.
    pub orders: Vec<String>,
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
}

/// What the campaign tells its caller while it runs.
pub enum Event<'a> {
    /// The number of programs to check.
    Total(usize),
    /// Programs checked so far, counterexamples so far.
    Progress(usize, usize),
    /// A counterexample.
    Found(&'a Counterexample),
    /// A program could not be checked.
    Error(&'a str),
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
    s.fragment = Some(if s.rmw_add { add } else { exch });
    s
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
        orders: o
            .orders
            .iter()
            .filter_map(|n| super::format::ORDERS.iter().position(|x| x == n))
            .map(|i| i as u8)
            .collect(),
        remote: false,
        rmw_add: false,
        fragment: None,
    }
}

/// This shard's programs, with their global index, in enumeration order.
pub fn programs(m: &Mapping, o: &Options) -> Vec<(usize, Program)> {
    let (k, n) = o.shard;
    let mut out = Vec::new();
    let mut i = 0usize;
    enumerate::for_each(&space(m, o), &mut |p| {
        if i % n == k - 1 {
            out.push((i, p.clone()));
        }
        i += 1;
    });
    out
}

/// Runs the campaign.
pub fn run(m: &Mapping, o: &Options, report: &(dyn Fn(Event<'_>) + Sync)) -> Summary {
    let start = Instant::now();
    let mut progs = programs(m, o);
    report(Event::Total(progs.len()));
    let mut counted = vec![0; o.bound + 1];
    if o.count_only {
        for (_, p) in &progs {
            counted[p.events()] += 1;
        }
        progs.clear();
    }
    let cache = ModelCache::default();
    let done = AtomicUsize::new(0);
    let nfound = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let mut summary = Summary {
        mapping: m.name.clone(),
        bound: o.bound,
        shard: format!("{}/{}", o.shard.0, o.shard.1),
        by_events: vec![0; o.bound + 1],
        ..Default::default()
    };
    let results = Mutex::new(Vec::new());
    // Size classes in order: a counterexample found at n events stops the
    // campaign (with --stop-at-first) only after every n-event program is
    // checked, so the one reported is minimal.
    let mut start_idx = 0;
    while start_idx < progs.len() {
        let n = progs[start_idx].1.events();
        let end = progs[start_idx..]
            .iter()
            .position(|(_, p)| p.events() != n)
            .map(|e| start_idx + e)
            .unwrap_or(progs.len());
        let class = &progs[start_idx..end];
        class.par_iter().with_max_len(4).for_each(|(i, p)| {
            let r = check_program(m, o, &cache, *i, p);
            let d = done.fetch_add(1, Ordering::Relaxed) + 1;
            match &r {
                Ok((Verdict::Unsound, Some(c))) => {
                    nfound.fetch_add(1, Ordering::Relaxed);
                    report(Event::Found(c));
                }
                Err(e) => report(Event::Error(e)),
                _ => {}
            }
            if let Ok(mut v) = results.lock() {
                v.push((*i, n, r));
            }
            report(Event::Progress(d, nfound.load(Ordering::Relaxed)));
        });
        summary.complete_to = n;
        start_idx = end;
        if o.stop_at_first && nfound.load(Ordering::Relaxed) > 0 {
            stop.store(true, Ordering::Relaxed);
            break;
        }
    }
    if o.count_only {
        summary.programs = counted.iter().sum();
        summary.by_events = counted;
        summary.complete_to = o.bound;
        summary.time_s = start.elapsed().as_secs_f64();
        return summary;
    }
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by_key(|r| r.0);
    for (_, n, r) in results {
        summary.programs += 1;
        summary.by_events[n] += 1;
        match r {
            Ok((Verdict::Sound, _)) => summary.sound += 1,
            Ok((Verdict::Racy, _)) => summary.racy += 1,
            Ok((Verdict::Unsound, c)) => {
                summary.counterexamples += 1;
                if let Some(c) = c {
                    summary.found.push(c);
                }
            }
            Err(_) => summary.errors += 1,
        }
    }
    if stop.load(Ordering::Relaxed) {
        summary.found.truncate(1);
    } else {
        summary.complete_to = o.bound;
    }
    summary.time_s = start.elapsed().as_secs_f64();
    summary
}

/// The name of program `i`.
pub fn program_name(m: &Mapping, bound: usize, i: usize) -> String {
    format!("{}-b{bound}-{i}", m.name)
}

fn check_program(
    m: &Mapping,
    o: &Options,
    cache: &ModelCache,
    i: usize,
    p: &Program,
) -> Result<(Verdict, Option<Counterexample>), String> {
    let name = program_name(m, o.bound, i);
    let text = p.to_c(&name, "x=0");
    let src = crate::litmus::parse_str(&format!("{name}.litmus"), &text)
        .map_err(|d| format!("{}\n{text}", d.render()))?;
    let r = check::check_test(m, &src, &name, cache, &o.check)?;
    if r.verdict != Verdict::Unsound {
        return Ok((r.verdict, None));
    }
    let st = &r.extra_states[0];
    let cond: Vec<String> = r
        .observed
        .iter()
        .zip(st)
        .map(|(n, v)| {
            let v = crate::exec::value_text(&r.source, *v);
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
    Ok((Verdict::Unsound, Some(c)))
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
