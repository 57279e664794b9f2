//! cat language: parser and interpreter over bitset relations.
//!
//! A [`Model`] is parsed once ([`Model::parse`]), with its `include`s resolved
//! by a caller-supplied closure, and then evaluated on each candidate
//! execution ([`Model::evaluate`]) through an [`Environment`] that provides
//! the predefined sets and relations of `docs/cat-environment.md`.
//! The supported language is described in `docs/cat-language.md`.

pub mod ast;
mod canon;
mod compile;
mod eval;
mod func;
mod guard;
pub mod lexer;
mod loader;
pub mod monotone;
pub mod parser;

use crate::diag::Diagnostic;
use crate::rel::{BitSet, Relation};
use ast::{CheckMode, Error};
pub use eval::WithLimits;
use eval::{CStmt, Program};
pub use monotone::{CheckReport, Pol, PrunePlan};
use std::fmt;

/// What a model sees of one candidate execution.
pub trait Environment {
    /// Number of events; sets and relations range over `0..num_events()`.
    fn num_events(&self) -> usize;
    /// A predefined set (e.g. "R", "ACQ", "_"), or None if unknown.
    fn set(&self, name: &str) -> Option<BitSet>;
    /// A predefined relation (e.g. "po", "rf", "cta"), or None if unknown.
    fn relation(&self, name: &str) -> Option<Relation>;
    /// Whether the environment provides `name` (as a set or a relation).
    /// The default asks [`Environment::set`] and [`Environment::relation`];
    /// implementations may answer more cheaply.
    fn knows(&self, name: &str) -> bool {
        self.set(name).is_some() || self.relation(name).is_some()
    }
    /// Whether `name` has the same value in every environment that shares
    /// a [`StaticCache`] with this one (e.g. `po` for all candidates of one
    /// choice of thread paths, but not `rf`). Definitions built only from
    /// static names are then computed once per cache. Default: nothing is.
    fn is_static(&self, _name: &str) -> bool {
        false
    }
}

/// Values of a model's definitions that depend only on static names (see
/// [`Environment::is_static`]), kept across evaluations. Create one with
/// [`Model::new_cache`] for a group of environments that agree on every
/// static name, and drop it when moving to another group.
#[derive(Default)]
pub struct StaticCache {
    /// Per slot: is it static (decided on first use).
    statics: Option<Statics>,
    env_values: Vec<Option<eval::Value>>,
    slot_values: Vec<Option<eval::Value>>,
    /// Values of the static parts of non-static definitions kept by the
    /// memo plan of [`Statics`], by place.
    memo_values: Vec<Option<eval::Value>>,
    /// The emptied cells of the last evaluation, for the next one.
    cells: eval::Cells,
    /// The sets of `with ... from`s, kept per the values they read.
    with_sources: eval::WithSources,
    /// The static names, slots and kept places without a value above yet:
    /// the only cells an evaluation can add a value from.
    pending: Option<eval::Pending>,
    /// Cut prefixes of `with` linearisations that a monotone check rejects
    /// (never changes an outcome; see [`monotone`]).
    pub prune: bool,
    /// Evaluations give up (with an error) in a `with` search past this.
    pub deadline: Option<std::time::Instant>,
    /// Partial `with` linearisations visited, and cut, so far.
    pub with_nodes: u64,
    pub with_pruned: u64,
    /// The `with` searches' share of the work budget (partial orders over
    /// all evaluations through this cache) and the timeout they project
    /// against; one that stops for them leaves its message in `limit`.
    pub with_limits: WithLimits,
    pub limit: Option<String>,
}

/// Which test a check performs (a `~` negates it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckKind {
    Acyclic,
    Irreflexive,
    Empty,
    /// `~empty`.
    NotEmpty,
    /// `~acyclic`.
    NotAcyclic,
    /// `~irreflexive`.
    NotIrreflexive,
}

impl fmt::Display for CheckKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CheckKind::Acyclic => "acyclic",
            CheckKind::Irreflexive => "irreflexive",
            CheckKind::Empty => "empty",
            CheckKind::NotEmpty => "~empty",
            CheckKind::NotAcyclic => "~acyclic",
            CheckKind::NotIrreflexive => "~irreflexive",
        })
    }
}

/// Why an execution is forbidden.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The `as` name, or the check's source text if unnamed (e.g. `acyclic (rf | po)`).
    pub check: String,
    pub kind: CheckKind,
    /// `Acyclic`: the events of a cycle `e0 -> e1 -> ... -> ek -> e0` (each
    /// step an edge of the checked relation). `Irreflexive`: one event `e`
    /// with `(e, e)` in the relation. `Empty`: the offending pairs flattened
    /// (`[a0, b0, a1, b1, ...]`), or the members of a set. Negated checks:
    /// empty.
    pub witness: Vec<usize>,
    /// With [`Model::evaluate_explain`]: the checked relation (named like the
    /// check) and the relations the check refers to by name. Empty otherwise.
    pub relations: Vec<(String, Relation)>,
    /// With [`Model::evaluate_explain`]: the witness spelled out as steps
    /// `(from, to, relation)` through the model's definitions down to
    /// predefined relations (`po`, `rf`, `co`, ...) or opaque names (a `let
    /// rec`, a `with` choice). Consecutive steps chain; for an irreflexive or
    /// acyclic failure the last step returns to the first event.
    pub path: Vec<(usize, usize, String)>,
}

/// The verdict of a model on one candidate execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// All non-flag checks hold for some `with` choice.
    pub allowed: bool,
    /// Flags raised (for the accepted choice; if not allowed, empty).
    pub flags: Vec<String>,
    /// When not allowed: the first failing check of the first choice tried.
    pub failure: Option<Failure>,
}

/// How a model is loaded (herd's `-variant` and its implicit `stdlib.cat`).
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Variants for `if "variant"` (herd's `-variant NAME`).
    pub variants: Vec<String>,
    /// `(file name, source)` of a file loaded before the model (its names
    /// visible to the model), as herd loads `stdlib.cat`.
    pub prelude: Option<(String, String)>,
    /// `(file name, source)` of a bell file (herd's `-bell FILE`), loaded
    /// after the prelude and before the model.
    pub bell: Option<(String, String)>,
}

/// One accepted choice of a model's `with`s (see [`Model::evaluate_all`]).
#[derive(Clone, Debug)]
pub struct Accepted {
    pub flags: Vec<String>,
    /// The `co` the model chose, when it binds `co` itself.
    pub co: Option<Relation>,
}

/// A rejected choice of a model's `with co from`: the `co` it bound and
/// the check it failed.
pub type Rejected = (Relation, Failure);

/// A parsed, name-resolved and type-checked cat model.
#[derive(Clone, Debug)]
pub struct Model {
    name: String,
    /// `(file name, source)`: the main file first, then includes in load order.
    files: Vec<(String, String)>,
    program: Program,
    /// [`Model::co_native`], made on first use.
    native: std::sync::OnceLock<Option<Box<Model>>>,
    /// [`Model::search_plans`], made on first use.
    search_plans: std::sync::OnceLock<(PrunePlan, PrunePlan)>,
    /// The static parts of the first environment evaluated (see
    /// [`Model::static_parts`]).
    statics: std::sync::OnceLock<Statics>,
    /// [`Model::co_choices_accepted`]'s answers, by the values of the names
    /// the `co` set reads.
    co_memo: CoMemo,
    /// [`Model::depends_on`]'s and [`Model::reads_any`]'s answers, asked
    /// once per check of a test (and so per program a synthesis judges).
    reads_memo: ReadsMemo,
    /// The sets of the model's `with ... from`s, shared by every skeleton
    /// it judges (see [`eval::SharedWithSets`]).
    with_sets: WithSetsMemo,
}

/// A model's [`eval::SharedWithSets`], handed to each evaluation.
#[derive(Default)]
struct WithSetsMemo(std::sync::Arc<eval::SharedWithSets>);

/// Answers of the two read analyses, by analysis and names.
#[derive(Default)]
struct ReadsMemo(std::sync::RwLock<Vec<(bool, Vec<String>, bool)>>);

impl ReadsMemo {
    fn get(&self, precise: bool, names: &[&str], compute: impl FnOnce() -> bool) -> bool {
        let same = |e: &(bool, Vec<String>, bool)| {
            e.0 == precise && e.1.len() == names.len() && e.1.iter().zip(names).all(|(a, b)| a == b)
        };
        if let Ok(known) = self.0.read()
            && let Some(e) = known.iter().find(|e| same(e))
        {
            return e.2;
        }
        let answer = compute();
        // Callers ask a few fixed lists; the bound only keeps a caller
        // that varies them from growing the list.
        if let Ok(mut known) = self.0.write()
            && known.len() < 64
        {
            known.push((
                precise,
                names.iter().map(|n| n.to_string()).collect(),
                answer,
            ));
        }
        answer
    }
}

/// The environment names the `co` set reads (made on first use) and the
/// answers given per their values.
#[derive(Default)]
struct CoMemo {
    inputs: std::sync::OnceLock<Option<eval::Inputs>>,
    answers:
        std::sync::Mutex<std::collections::HashMap<Vec<u64>, bool, crate::fast_hash::FastHash>>,
}

/// Clone and Debug for a model's memos: a copy starts empty (a copied
/// model may be changed, restricted or made native, before it is used),
/// and a memo prints as its name.
macro_rules! memo_starts_empty_when_copied {
    ($($memo:ident),*) => {$(
        impl Clone for $memo {
            fn clone(&self) -> Self {
                $memo::default()
            }
        }

        impl fmt::Debug for $memo {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(stringify!($memo))
            }
        }
    )*};
}

memo_starts_empty_when_copied!(CoMemo, ReadsMemo, WithSetsMemo);

/// Answers [`CoMemo`] keeps before it starts again.
const CO_MEMO_LIMIT: usize = 4096;

/// Which environment names and slots are static, and which static parts
/// of the other definitions keep their values per skeleton (with how many
/// there are): see [`eval::Program::static_parts`] and
/// [`eval::Program::memo_plan`].
type Statics = (Vec<bool>, Vec<bool>, std::sync::Arc<eval::MemoPlan>, usize);

impl Model {
    /// Parses `source` (named `file` in diagnostics);
    /// `resolve(include_name) -> Option<(file_name, source)>`.
    ///
    /// A file is included once (later `include`s of it are skipped, as in
    /// herd); including a file that is being included is a cycle and an error.
    pub fn parse(
        file: &str,
        source: &str,
        resolve: &dyn Fn(&str) -> Option<(String, String)>,
    ) -> Result<Model, Diagnostic> {
        Model::parse_with(file, source, resolve, &LoadOptions::default())
    }

    /// Like [`Model::parse`], with herd's loading options: variants, and
    /// a prelude (herd's `stdlib.cat`) loaded in front of the model.
    pub fn parse_with(
        file: &str,
        source: &str,
        resolve: &dyn Fn(&str) -> Option<(String, String)>,
        opts: &LoadOptions,
    ) -> Result<Model, Diagnostic> {
        let mut loader = loader::Loader {
            files: vec![(file.to_string(), source.to_string())],
            stack: vec![file.to_string()],
            done: Vec::new(),
            resolve,
            variants: &opts.variants,
        };
        let result = (|| {
            let mut stmts = Vec::new();
            if let Some((pname, psrc)) = &opts.prelude {
                loader.files.push((pname.clone(), psrc.clone()));
                let idx = loader.files.len() - 1;
                loader.done.push(pname.clone());
                let (_, pre) = loader.load(idx)?;
                stmts.extend(pre);
            }
            if let Some((bname, bsrc)) = &opts.bell {
                loader.files.push((bname.clone(), bsrc.clone()));
                let idx = loader.files.len() - 1;
                loader.done.push(bname.clone());
                let (_, bell) = loader.load(idx)?;
                stmts.extend(bell);
            }
            let (title, main) = loader.load(0)?;
            stmts.extend(main);
            let mut program = compile::compile(&stmts, &opts.variants)?;
            program.with_checks = monotone::with_plans(&program);
            Ok((title, program))
        })();
        let files = loader.files;
        match result {
            Ok((title, program)) => {
                let name = title.unwrap_or_else(|| {
                    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
                    base.strip_suffix(".cat").unwrap_or(base).to_string()
                });
                Ok(Model {
                    name,
                    files,
                    program,
                    native: std::sync::OnceLock::new(),
                    search_plans: std::sync::OnceLock::new(),
                    statics: std::sync::OnceLock::new(),
                    co_memo: CoMemo::default(),
                    reads_memo: ReadsMemo::default(),
                    with_sets: WithSetsMemo::default(),
                })
            }
            Err(e) => Err(to_diagnostic(&files, e)),
        }
    }

    /// The model's title (first line name or string), or its file name
    /// without `.cat` when it has none.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Labels of the non-flag checks, in order: the `as` name, or the check's
    /// source text.
    pub fn checks(&self) -> Vec<String> {
        self.labels(|m| m == CheckMode::Require)
    }

    /// Labels of the `flag` checks, in order.
    pub fn flags(&self) -> Vec<String> {
        self.labels(|m| m == CheckMode::Flag)
    }

    /// Whether some check can raise a flag (`flag` or `undefined_unless`):
    /// only then does a candidate matter beyond the state it reaches.
    pub fn may_flag(&self) -> bool {
        !self
            .labels(|m| matches!(m, CheckMode::Flag | CheckMode::UndefinedUnless))
            .is_empty()
    }

    fn labels(&self, keep: impl Fn(CheckMode) -> bool) -> Vec<String> {
        self.program
            .stmts
            .iter()
            .filter_map(|s| match s {
                CStmt::Check(c) if keep(c.mode) => Some(c.label.clone()),
                _ => None,
            })
            .collect()
    }

    /// Names the model asks the environment for (predefined sets and
    /// relations it uses), in order of first use.
    pub fn required_names(&self) -> Vec<&str> {
        self.program
            .env_names
            .iter()
            .map(|e| e.name.as_str())
            .collect()
    }

    /// Checks that `env` provides every name the model needs from it; the
    /// error points at the first use of the first unknown name.
    pub fn check_environment(&self, env: &dyn Environment) -> Result<(), Diagnostic> {
        for e in &self.program.env_names {
            if e.eager && !env.knows(&e.name) && e.name != "id" {
                return Err(self.diagnostic(Error::new(
                    e.loc,
                    format!("unknown identifier '{}'", e.name),
                )));
            }
        }
        Ok(())
    }

    /// The model with only the non-flag checks labelled `keep` (as
    /// [`Model::checks`] names them): every other forbidding check is
    /// dropped, flags and definitions stay. Test synthesis judges one
    /// axiom at a time with it (`litmix synth --axiom`, docs/synthesis.md).
    /// An unknown label is an error naming the model's checks.
    pub fn restricted_to(&self, keep: &[String]) -> Result<Model, String> {
        let known = self.checks();
        if let Some(bad) = keep.iter().find(|k| !known.contains(k)) {
            return Err(format!(
                "model {} has no check '{bad}' (its checks: {})",
                self.name,
                known.join(", ")
            ));
        }
        fn filter(stmts: &mut Vec<CStmt>, keep: &[String]) {
            stmts.retain(|s| match s {
                CStmt::Check(c) => c.mode != CheckMode::Require || keep.contains(&c.label),
                _ => true,
            });
            for s in stmts.iter_mut() {
                if let CStmt::Forall(f) = s {
                    filter(&mut f.body, keep);
                }
            }
        }
        let mut program = self.program.clone();
        filter(&mut program.stmts, keep);
        program.with_checks = monotone::with_plans(&program);
        Ok(Model {
            name: format!("{}[{}]", self.name, keep.join(",")),
            files: self.files.clone(),
            program,
            native: std::sync::OnceLock::new(),
            search_plans: std::sync::OnceLock::new(),
            statics: std::sync::OnceLock::new(),
            co_memo: CoMemo::default(),
            reads_memo: ReadsMemo::default(),
            with_sets: WithSetsMemo::default(),
        })
    }

    /// Whether the model builds `co` itself (`with co from ...`, as herd's
    /// `cos.cat` does): the engine then leaves `co` to it.
    pub fn binds_co(&self) -> bool {
        self.program.co_slot.is_some()
    }

    /// Whether some statement of the model (check, `with`, `forall`) may
    /// depend on one of the environment's `names` (a name the model
    /// defines itself, or one only unused definitions read, does not
    /// count).
    pub fn depends_on(&self, names: &[&str]) -> bool {
        self.reads_memo.get(false, names, || {
            monotone::statements_depend_on(&self.program, &|n| names.contains(&n))
        })
    }

    /// Whether some statement of the model can read one of the
    /// environment's `names`: like [`Model::depends_on`], but it sees
    /// through functions and value sets (where that one gives up), so it
    /// says no more often. Both over-approximate.
    pub fn reads_any(&self, names: &[&str]) -> bool {
        self.depends_on(names)
            && self.reads_memo.get(true, names, || {
                self.program.statements_read(&|n: &str| names.contains(&n))
            })
    }

    /// Evaluates the model on one candidate and returns every accepted
    /// choice of its `with`s (each is one execution, as herd counts them),
    /// with the `co` chosen when the model binds it.
    pub fn evaluate_all(
        &self,
        env: &dyn Environment,
        cache: &mut StaticCache,
    ) -> Result<Vec<Accepted>, Diagnostic> {
        let res = self.with_static_cache(env, cache, |program, st| program.run_all(st));
        let all = res.map_err(|e| self.diagnostic(*e))?;
        Ok(all
            .into_iter()
            .map(|(flags, co)| Accepted {
                flags,
                co: match co {
                    Some(eval::Value::Rel(r)) => Some(r),
                    Some(eval::Value::Empty) => Some(Relation::empty(env.num_events())),
                    _ => None,
                },
            })
            .collect())
    }

    /// [`Model::evaluate_all`] for `--why` on a model that binds `co`:
    /// also every rejected choice of its `with co from`, as the `co` it
    /// bound and the check it failed (explained as by
    /// [`Model::evaluate_explain`]).
    pub fn evaluate_all_explained(
        &self,
        env: &dyn Environment,
        cache: &mut StaticCache,
    ) -> Result<(Vec<Accepted>, Vec<Rejected>), Diagnostic> {
        let res = self.with_static_cache(env, cache, |program, st| program.run_all_explained(st));
        let (all, rejected) = res.map_err(|e| self.diagnostic(*e))?;
        let as_rel = |v: Option<eval::Value>| match v {
            Some(eval::Value::Rel(r)) => Some(r),
            Some(eval::Value::Empty) => Some(Relation::empty(env.num_events())),
            _ => None,
        };
        let accepted = all
            .into_iter()
            .map(|(flags, co)| Accepted {
                flags,
                co: as_rel(co),
            })
            .collect();
        let rejected = rejected
            .into_iter()
            .filter_map(|(co, f)| Some((as_rel(Some(co))?, f)))
            .collect();
        Ok((accepted, rejected))
    }

    /// The same model with its `with co from E` replaced by the engine's
    /// `co` (`let co = co`), for the engine to enumerate and prune coherence
    /// orders itself. `None` unless that can give identical answers: the
    /// `with` is the model's only `with`, and nothing reads the
    /// environment's `co` or what derives from it (`fr`, `coe`, `pco`...),
    /// whose values differ between the two readings. `FW` is read as `W`,
    /// its value when the model builds `co`. The engine must still check,
    /// per choice of thread paths, that `E` is exactly the set of orders it
    /// enumerates ([`Model::co_choices`]); herd's `cos.cat` gives that set.
    pub fn co_native(&self) -> Option<&Model> {
        self.native
            .get_or_init(|| self.make_co_native().map(Box::new))
            .as_deref()
    }

    fn make_co_native(&self) -> Option<Model> {
        let p = &self.program;
        let co = p.co_slot?;
        let mut withs = p
            .stmts
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s, CStmt::With(_) | CStmt::WithFrom(_)));
        let (i, CStmt::WithFrom(w)) = withs.next()? else {
            return None;
        };
        if withs.next().is_some() || w.slot != co {
            return None;
        }
        let eval::Node::Slot(choices) = w.expr.node else {
            return None;
        };
        const FROM_CO: &[&str] = &["co", "fr", "fre", "fri", "coe", "coi", "pco"];
        if p.env_names
            .iter()
            .any(|e| FROM_CO.contains(&e.name.as_str()))
        {
            return None;
        }
        let mut q = p.clone();
        let loc = w.expr.loc;
        q.stmts.remove(i);
        q.env_names.push(eval::EnvName {
            name: "co".into(),
            hint: eval::Ty::Rel,
            loc,
            eager: false,
        });
        q.slots[co].def = eval::SlotDef::Expr(eval::CExpr {
            memo: None,
            node: eval::Node::Env(q.env_names.len() - 1),
            loc,
        });
        q.slots[co].ty = eval::Ty::Rel;
        for e in &mut q.env_names {
            if e.name == "FW" {
                e.name = "W".into();
                e.hint = eval::Ty::Set;
            }
        }
        q.co_slot = None;
        q.co_choices = Some(choices);
        q.with_checks = monotone::with_plans(&q);
        Some(Model {
            name: self.name.clone(),
            files: self.files.clone(),
            program: q,
            native: std::sync::OnceLock::from(None),
            search_plans: std::sync::OnceLock::new(),
            statics: std::sync::OnceLock::new(),
            co_memo: CoMemo::default(),
            reads_memo: ReadsMemo::default(),
            with_sets: WithSetsMemo::default(),
        })
    }

    /// For a model made by [`Model::co_native`]: the set the original model
    /// chose `co` from, on `env`, when it is static (the same for every
    /// candidate sharing `env`'s static names) and a set of relations;
    /// `None` otherwise (also when evaluating it fails). The static
    /// definitions it evaluates on the way stay in `cache`, for the
    /// candidates of the same skeleton that are judged through it next.
    pub fn co_choices(
        &self,
        env: &dyn Environment,
        cache: &mut StaticCache,
    ) -> Option<Vec<Relation>> {
        let slot = self.program.co_choices?;
        self.with_static_cache(env, cache, |program, st| {
            // `keep` marks the static slots.
            if !st.keep.get(slot).copied().unwrap_or(false) {
                return None;
            }
            match program.slot_value(slot, st).ok()? {
                eval::Value::Empty => Some(Vec::new()),
                eval::Value::ValSet(vs) => vs
                    .iter()
                    .map(|v| match v {
                        eval::Value::Rel(r) => Some(r.clone()),
                        _ => None,
                    })
                    .collect(),
                _ => None,
            }
        })
    }

    /// Whether `accept` holds of the set the original model chose `co` from
    /// ([`Model::co_choices`]) on `env`; false when that set is not static
    /// or not a set of relations. The answer is remembered for every
    /// environment that agrees with `env`, up to a renumbering of the
    /// events, on the names the set reads and on `also` (the names
    /// `accept` itself depends on). When the set is local to its inputs
    /// ([`eval::Inputs::local`]), only the events those names hold count,
    /// so `accept` must read `also` on those events only (a name the set
    /// reads only through `partition`, such as `loc`, between them).
    pub fn co_choices_accepted(
        &self,
        env: &dyn Environment,
        cache: &mut StaticCache,
        also: &[&str],
        accept: impl FnOnce(&[Relation]) -> bool,
    ) -> bool {
        let canonical = self
            .co_memo
            .inputs
            .get_or_init(|| {
                let slot = self.program.co_choices?;
                self.program.slot_inputs(slot)
            })
            .as_ref()
            .map(|inputs| {
                let (mut names, restricted) = self.program.input_names(inputs);
                names.extend_from_slice(also);
                names.sort_unstable();
                names.dedup();
                let support = canon::Support::of(inputs.local, &restricted);
                canon::canonical_numbering(env, &names, support).map_or_else(
                    || (canon::env_key(env, &names), None),
                    |c| (c.key, Some(c.order)),
                )
            });
        if let Some((k, _)) = &canonical
            && let Some(&known) = self
                .co_memo
                .answers
                .lock()
                .ok()
                .and_then(|m| m.get(k).copied())
                .as_ref()
        {
            return known;
        }
        // Kept only when every choice relates numbered events: a set local
        // to its inputs never does otherwise.
        let mut keep = true;
        let answer = self.co_choices(env, cache).is_some_and(|c| {
            if let Some((_, Some(order))) = &canonical {
                keep = c.iter().all(|r| {
                    r.pairs()
                        .all(|(a, b)| order[a] != usize::MAX && order[b] != usize::MAX)
                });
            }
            accept(&c)
        });
        if let (true, Some((k, _)), Ok(mut m)) = (keep, canonical, self.co_memo.answers.lock()) {
            if m.len() >= CO_MEMO_LIMIT {
                m.clear();
            }
            m.insert(k, answer);
        }
        answer
    }

    /// How many environments (up to renumbering) [`Model::co_choices_accepted`]
    /// has answered for and remembers: each was one evaluation of the
    /// set `co` is chosen from.
    pub fn co_sets_checked(&self) -> usize {
        self.co_memo.answers.lock().map_or(0, |m| m.len())
    }

    /// How many sets of its `with ... from`s the model keeps for every
    /// skeleton (up to renumbering; see [`eval::SharedWithSets`]): each was
    /// one evaluation of such a set.
    pub fn with_sets_kept(&self) -> usize {
        self.with_sets.0.len()
    }

    /// Evaluates the model on one candidate execution.
    pub fn evaluate(&self, env: &dyn Environment) -> Result<Outcome, Diagnostic> {
        self.run(env, false)
    }

    /// Like [`Model::evaluate`], but a failure also carries the relations
    /// involved and, for `acyclic`, a shortest cycle. Slower; meant for
    /// explaining one execution.
    pub fn evaluate_explain(&self, env: &dyn Environment) -> Result<Outcome, Diagnostic> {
        self.run(env, true)
    }

    /// A cache for [`Model::evaluate_cached`].
    pub fn new_cache(&self) -> StaticCache {
        StaticCache::default()
    }

    /// Like [`Model::evaluate`], reusing (and filling) `cache` for the
    /// definitions that depend only on static names.
    pub fn evaluate_cached(
        &self,
        env: &dyn Environment,
        cache: &mut StaticCache,
    ) -> Result<Outcome, Diagnostic> {
        let (prune, deadline) = (cache.prune, cache.deadline);
        let mut limits = cache.with_limits;
        limits.max_nodes = limits.max_nodes.saturating_sub(cache.with_nodes);
        let (res, nodes, pruned, limit) = self.with_static_cache(env, cache, |program, st| {
            st.prune = prune;
            st.deadline = deadline;
            st.with_limits = limits;
            let res = program.run(st, false);
            (res, st.with_nodes, st.with_pruned, st.limit.take())
        });
        cache.with_nodes += nodes;
        cache.with_pruned += pruned;
        if limit.is_some() {
            cache.limit = limit;
        }
        let (allowed, flags, failure) = res.map_err(|e| self.diagnostic(*e))?;
        Ok(Outcome {
            allowed,
            flags,
            failure,
        })
    }

    /// Like [`Model::evaluate`]; when the execution is allowed, also the
    /// relations bound by the `let`s whose names satisfy `want`, under the
    /// accepted `with` choice (used by `--why` for allowed outcomes: see
    /// docs/cat-language.md, "Explanation bindings").
    pub fn evaluate_named(
        &self,
        env: &dyn Environment,
        want: &dyn Fn(&str) -> bool,
    ) -> Result<(Outcome, Vec<(String, Relation)>), Diagnostic> {
        let mut st = self.program.state(env);
        let (allowed, flags, failure) = self
            .program
            .run(&mut st, false)
            .map_err(|e| self.diagnostic(*e))?;
        let named = if allowed {
            self.program.named_relations(&st, want)
        } else {
            Vec::new()
        };
        Ok((
            Outcome {
                allowed,
                flags,
                failure,
            },
            named,
        ))
    }

    /// The engine's two pruning plans ([`Model::prune_plan`] for the
    /// names `first` and `second` call dynamic), computed once per model:
    /// a loaded model checks many tests. Every caller must pass the same
    /// two functions (the engine's search does, `exec::prune::Pruner`).
    pub fn search_plans(
        &self,
        first: &dyn Fn(&str) -> bool,
        second: &dyn Fn(&str) -> bool,
    ) -> &(PrunePlan, PrunePlan) {
        self.search_plans
            .get_or_init(|| (self.prune_plan(first), self.prune_plan(second)))
    }

    /// Which checks may cut partial candidates of the engine's search, when
    /// the environment names `dynamic` accepts are its choices (see
    /// [`monotone::candidate_plan`]).
    pub fn prune_plan(&self, dynamic: &dyn Fn(&str) -> bool) -> PrunePlan {
        monotone::candidate_plan(&self.program, dynamic)
    }

    /// For each `with` of the model: its source text and which later checks
    /// may cut a prefix of its linearisations.
    pub fn with_prune_plans(&self) -> Vec<(String, PrunePlan)> {
        self.program
            .stmts
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                CStmt::With(w) => Some((w.label.clone(), monotone::with_plan(&self.program, i))),
                CStmt::Check(_) | CStmt::WithFrom(_) | CStmt::Forall(_) => None,
            })
            .collect()
    }

    /// Whether some check of `plan` fails on `env`, a partial candidate
    /// whose choice relations are under-approximations of every completion
    /// (every `with` variable at its least value, the empty relation). Then
    /// every completion is forbidden. Evaluation errors count as "does not
    /// fail" (the complete candidate reports them).
    pub fn partial_fails(
        &self,
        env: &dyn Environment,
        plan: &PrunePlan,
        cache: &mut StaticCache,
    ) -> bool {
        let program = plan.program.as_deref().unwrap_or(&self.program);
        let deadline = cache.deadline;
        if deadline.is_some_and(|d| std::time::Instant::now() > d) {
            return false;
        }
        self.with_static_cache_of(program, env, cache, |program, st| {
            // Past the deadline every check fails to evaluate (so none
            // prunes) at once, and the search's next look at the clock
            // stops it.
            st.deadline = deadline;
            program.least_with_values(0, st);
            plan.checks.iter().any(|&i| {
                matches!(&program.stmts[i], CStmt::Check(c)
                    if matches!(program.check_holds(c, st), Ok(false)))
            })
        })
    }

    /// Runs `f` on an evaluation state seeded from `cache` with the values
    /// of the definitions that depend only on static names (computed on
    /// the first call for this skeleton), and stores back what `f`
    /// computed of them. Static slots keep their values across `with`
    /// choices. Every cached evaluation goes through here.
    fn with_static_cache<R>(
        &self,
        env: &dyn Environment,
        cache: &mut StaticCache,
        f: impl FnOnce(&eval::Program, &mut eval::State<'_>) -> R,
    ) -> R {
        self.with_static_cache_of(&self.program, env, cache, f)
    }

    /// [`Model::with_static_cache`] for `program`: the model's own, or a
    /// copy with definitions appended (a pruning plan's lower bounds), whose
    /// first slots are the model's.
    fn with_static_cache_of<R>(
        &self,
        program: &eval::Program,
        env: &dyn Environment,
        cache: &mut StaticCache,
        f: impl FnOnce(&eval::Program, &mut eval::State<'_>) -> R,
    ) -> R {
        let statics = cache
            .statics
            .take()
            .unwrap_or_else(|| self.static_parts(env));
        let (env_static, slot_static, memo_plan, kept) = &statics;
        let mut env_values = std::mem::take(&mut cache.env_values);
        let mut slot_values = std::mem::take(&mut cache.slot_values);
        let mut memo_values = std::mem::take(&mut cache.memo_values);
        env_values.resize(env_static.len(), None);
        slot_values.resize(slot_static.len(), None);
        memo_values.resize(*kept, None);
        let (r, new_env, new_slots, new_memo) = {
            let mut st = program.state_in(env, std::mem::take(&mut cache.cells));
            st.seed(&env_values, &slot_values);
            st.seed_memo(memo_plan, *kept, &memo_values);
            st.keep = slot_static;
            let mut with_sources = std::mem::take(&mut cache.with_sources);
            with_sources
                .shared
                .get_or_insert_with(|| self.with_sets.0.clone());
            st.with_sources = Some(with_sources);
            let r = f(program, &mut st);
            cache.with_sources = st.with_sources.take().unwrap_or_default();
            let pending = cache.pending.get_or_insert_with(|| {
                let on = |is: &[bool]| (0..is.len()).filter(|&i| is[i]).collect();
                [on(env_static), on(slot_static), (0..*kept).collect()]
            });
            let [e, s, m] = st.harvest_pending(pending);
            cache.cells = st.into_cells();
            (r, e, s, m)
        };
        for (i, v) in new_env {
            env_values[i] = Some(v);
        }
        for (i, v) in new_slots {
            slot_values[i] = Some(v);
        }
        for (i, v) in new_memo {
            memo_values[i] = Some(v);
        }
        if let Some([e, s, m]) = &mut cache.pending {
            e.retain(|&i| env_values[i].is_none());
            s.retain(|&i| slot_values[i].is_none());
            m.retain(|&i| memo_values[i].is_none());
        }
        cache.env_values = env_values;
        cache.slot_values = slot_values;
        cache.memo_values = memo_values;
        cache.statics = Some(statics);
        r
    }

    /// Which environment names and slots are static for `env`. They depend
    /// only on which names the environment calls static (the slots follow
    /// from the model's definitions), so they are computed once per model
    /// and reused for every environment that calls the same names static.
    fn static_parts(&self, env: &dyn Environment) -> Statics {
        if let Some(known) = self.statics.get()
            && known.0 == self.program.env_static(env)
        {
            return known.clone();
        }
        let (es, ss) = self.program.static_parts(env);
        let (plan, kept) = self.program.memo_plan(&es, &ss);
        let parts = (es, ss, std::sync::Arc::new(plan), kept);
        let _ = self.statics.set(parts.clone());
        parts
    }

    fn run(&self, env: &dyn Environment, explain: bool) -> Result<Outcome, Diagnostic> {
        let mut st = self.program.state(env);
        let (allowed, flags, failure) = self
            .program
            .run(&mut st, explain)
            .map_err(|e| self.diagnostic(*e))?;
        Ok(Outcome {
            allowed,
            flags,
            failure,
        })
    }

    fn diagnostic(&self, e: Error) -> Diagnostic {
        to_diagnostic(&self.files, e)
    }
}

fn to_diagnostic(files: &[(String, String)], e: Error) -> Diagnostic {
    let (name, src) = &files[e.loc.file];
    let mut d = Diagnostic::new(name.clone(), e.loc.pos, e.message).with_source(src);
    if let Some(x) = e.expected {
        d = d.expected(x);
    }
    d
}

#[cfg(test)]
mod memo_tests;
#[cfg(test)]
mod tests;
