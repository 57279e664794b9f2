//! Presents one candidate execution to the cat interpreter: the predefined
//! sets and relations of docs/cat-environment.md.

use super::candidate::Skeleton;
use crate::cat::Environment;
use crate::rel::{BitSet, Relation};

/// A candidate: its skeleton plus the chosen `rf`, `co` and barrier matching.
pub struct CandidateEnv<'s, 'a> {
    skel: &'s Skeleton<'a>,
    rf: &'s Relation,
    co: &'s Relation,
    bar: &'s Relation,
    /// `--lenient`: an unknown upper-case name is an empty set, not an error.
    lenient: bool,
}

impl<'s, 'a> CandidateEnv<'s, 'a> {
    /// Wraps the parts of one candidate.
    pub fn new(
        skel: &'s Skeleton<'a>,
        rf: &'s Relation,
        co: &'s Relation,
        bar: &'s Relation,
    ) -> Self {
        CandidateEnv {
            skel,
            rf,
            co,
            bar,
            lenient: false,
        }
    }

    /// With `lenient`, an upper-case name no front end defines is an empty
    /// set (herd's habit) instead of an error.
    pub fn lenient(mut self, lenient: bool) -> Self {
        self.lenient = lenient;
        self
    }

    fn rel(&self, name: &str) -> &Relation {
        &self.skel.rels[name]
    }

    /// herd's `pco` (computed by herd for `cos-ok-opt.cat`), as herd7 7.58
    /// computes it by default (`-optace iico`): each initial write before
    /// the other writes of its location. herd also puts the write it chose
    /// as final last; every coherence order has one last write, so that
    /// splits the orders without changing their union. (The `po-loc` and
    /// `rf` observations are herd's `-optace true`: docs/decisions.md.)
    fn pco(&self) -> Relation {
        let w = self.set_or_empty("W");
        let iw = self.set_or_empty("IW");
        self.rel("loc")
            .intersection(&Relation::cartesian(&iw, &w.diff(&iw)))
    }

    fn has_tag(&self, tag: &str) -> bool {
        self.skel.sets.get(tag).is_some_and(|s| !s.is_empty())
    }

    fn set_or_empty(&self, name: &str) -> BitSet {
        self.skel
            .sets
            .get(name)
            .cloned()
            .unwrap_or_else(|| BitSet::new(self.skel.len()))
    }

    /// Whether [`CandidateEnv::herd_set`] gives `name` a value.
    fn has_herd_set(&self, name: &str) -> bool {
        match name {
            "FW" | "Exp" | "NExp" | "EXEC" | "no-loc" => true,
            n if HERD_EMPTY_SETS.contains(&n) => true,
            "X" => self.has_tag("X86"),
            "A" => self.has_tag("C"),
            n if HERD_C_EMPTY_SETS.contains(&n) => self.has_tag("C"),
            _ => false,
        }
    }

    /// herd's names for sets litmix spells differently (`docs/cat-environment.md`).
    fn herd_set(&self, name: &str) -> Option<BitSet> {
        let n = self.skel.len();
        Some(match name {
            // The co-last writes; with `co` left to the model (empty here),
            // every write, so that stdlib's `co0` keeps only init-first.
            "FW" => {
                let w = self.set_or_empty("W");
                BitSet::from_indices(n, w.iter().filter(|&e| self.co.successors(e).is_empty()))
            }
            "Exp" => self.set_or_empty("M"),
            // Memory events not executed speculatively: all of them.
            "EXEC" => self.set_or_empty("M"),
            // Events without a location: fences and barriers.
            "no-loc" => self.set_or_empty("F").union(&self.set_or_empty("BAR")),
            "NExp" => BitSet::new(n),
            e if HERD_EMPTY_SETS.contains(&e) => BitSet::new(n),
            e if HERD_C_EMPTY_SETS.contains(&e) && self.has_tag("C") => BitSet::new(n),
            // x86 locked accesses.
            "X" if self.has_tag("X86") => self.set_or_empty("RMW").inter(&self.set_or_empty("X86")),
            // C/OpenCL atomic accesses.
            "A" if self.has_tag("C") => {
                let mut a = BitSet::new(n);
                for t in ["RLX", "ACQ", "REL", "ACQ_REL", "SC"] {
                    a.union_with(&self.set_or_empty(t));
                }
                // herd's volatile accesses are not atomic (litmix reads them
                // as relaxed, see docs/language-models.md).
                a.inter(&self.set_or_empty("M"))
                    .diff(&self.set_or_empty("VOL"))
            }
            _ => return None,
        })
    }
}

/// herd's sets of kinds of events litmix's front ends never produce
/// (docs/cat-environment.md): speculation, branch commits, register
/// accesses, faults and exceptions, TLB and tag operations, cut-offs.
const HERD_EMPTY_SETS: &[&str] = &[
    "SPEC",
    "SPURIOUS",
    "AMO",
    "B",
    "BCC",
    "PRED",
    "Rreg",
    "Wreg",
    "ADDR",
    "DATA",
    "CutOff",
    "T",
    "TLBI",
    "FAULT",
    "FAULT-RD",
    "FAULT-WR",
    "EXC-ENTRY",
    "EXC-RET",
    "Instr",
];

/// herd's sets of C tests for events litmix's C front end has no syntax
/// for (locks, consume, bell annotations): empty in C/OpenCL tests.
const HERD_C_EMPTY_SETS: &[&str] = &[
    "LK", "LKR", "LKW", "LS", "LF", "UL", "RL", "RU", "CON", "annot",
];

/// The relations [`CandidateEnv`]'s `relation` builds itself (the others
/// are the skeleton's).
const RELATIONS: &[&str] = &[
    "rf",
    "co",
    "fr",
    "rfe",
    "rfi",
    "coe",
    "coi",
    "fre",
    "fri",
    "bar",
    "iico_data",
    "iico_ctrl",
    "rf-reg",
    "pco",
    "sm",
    "si",
    "same-instance",
    "same-instr",
    "same-static",
    "amo",
    "partial_po",
    "iico_order",
    "success",
    "control",
    "equiv-spec",
    "same-low-order-bits",
];

/// Predefined names whose value depends on the candidate's `rf`/`co`.
const DYNAMIC: &[&str] = &[
    "rf", "co", "fr", "rfe", "rfi", "coe", "coi", "fre", "fri", "bar", "FW",
];

/// Predefined names whose value depends on the candidate's `co`. A model
/// that reads none of them and does not build `co` itself judges every
/// coherence order alike (in herd7 such a model has no `co` at all).
pub const CO_DEPENDENT: &[&str] = &["co", "fr", "coe", "coi", "fre", "fri", "FW"];

/// [`CO_DEPENDENT`] but `FW`, which depends only on each location's last
/// write.
pub const CO_DEPENDENT_BUT_FW: &[&str] = &["co", "fr", "coe", "coi", "fre", "fri"];

/// Whether predefined `name` depends on the candidate's choices (`rf`,
/// `co`, barrier matching) rather than on the skeleton alone.
pub fn is_dynamic(name: &str) -> bool {
    DYNAMIC.contains(&name)
}

/// Tags some front end emits (docs/cat-environment.md): a model may name
/// them in any test, where no event carries them they are empty sets.
pub const KNOWN_TAGS: &[&str] = &[
    "R", "W", "M", "F", "IW", "RMW", "BAR", "WEAK", "RLX", "ACQ", "REL", "ACQ_REL", "SC", "CTA",
    "GPU", "SYS", "CPU", "VOL", "SYNC", "ARRIVE", "RED", "PTX", "X86", "MFENCE", "SURFACE",
    "TEXTURE", "CONSTANT", "PROXY", "ALIAS", "GENERIC", "C", "OPENCL", "NA", "WI", "WG", "DEV",
    "GLOBAL", "LOCAL", "NAL", "REMOTE", "LFENCE", "SFENCE",
];

/// True for names that denote tags (upper case, digits, `_`).
pub fn is_tag_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

impl Environment for CandidateEnv<'_, '_> {
    fn num_events(&self) -> usize {
        self.skel.len()
    }

    fn set(&self, name: &str) -> Option<BitSet> {
        match self.skel.sets.get(name) {
            Some(s) => Some(s.clone()),
            None if KNOWN_TAGS.contains(&name) => Some(BitSet::new(self.skel.len())),
            None => match self.herd_set(name) {
                Some(s) => Some(s),
                None if self.lenient && is_tag_name(name) => Some(BitSet::new(self.skel.len())),
                None => None,
            },
        }
    }

    /// [`Environment::set`] or [`Environment::relation`] gives a value,
    /// decided without building it.
    fn knows(&self, name: &str) -> bool {
        self.skel.sets.contains_key(name)
            || KNOWN_TAGS.contains(&name)
            || self.has_herd_set(name)
            || (self.lenient && is_tag_name(name))
            || RELATIONS.contains(&name)
            || self.skel.rels.contains_key(name)
    }

    fn relation(&self, name: &str) -> Option<Relation> {
        Some(match name {
            "rf" => self.rf.clone(),
            "co" => self.co.clone(),
            "fr" => fr(self.rf, self.co),
            "rfe" => self.rf.intersection(self.rel("ext")),
            "rfi" => self.rf.intersection(self.rel("int")),
            "coe" => self.co.intersection(self.rel("ext")),
            "coi" => self.co.intersection(self.rel("int")),
            "fre" => fr(self.rf, self.co).intersection(self.rel("ext")),
            "fri" => fr(self.rf, self.co).intersection(self.rel("int")),
            "bar" => self.bar.clone(),
            "iico_data" | "iico_ctrl" | "rf-reg" => Relation::new(self.skel.len()),
            "pco" => self.pco(),
            // litmix's events are herd's events of one instruction instance
            // each (an RMW's read and write play herd's single C RMW event),
            // so these relate each event to itself.
            "sm" | "si" | "same-instance" | "same-instr" | "same-static" => {
                Relation::identity(self.skel.len())
            }
            // Accesses whose addresses agree on their low-order bits (herd's
            // page-table models): litmix's locations are distinct
            // addresses, so those of one location.
            "same-low-order-bits" => self.rel("loc").clone(),
            // Every litmix RMW is one instruction (herd's `amo`: `rmw`
            // within one instruction).
            "amo" => self.rel("rmw").clone(),
            // No instruction has events unordered among themselves.
            "partial_po" => self.rel("po").clone(),
            // No intra-instruction order, store-exclusive success,
            // control events or speculation.
            "iico_order" | "success" | "control" | "equiv-spec" => Relation::new(self.skel.len()),
            _ => return self.skel.rels.get(name).cloned(),
        })
    }

    /// Everything but `rf`, `co` and what is derived from them (including
    /// `bar`, whose operands may be read values) is fixed by the skeleton.
    fn is_static(&self, name: &str) -> bool {
        // `FW` follows `co`; when the model builds `co` (empty here), it
        // is every write, whatever `rf`.
        (name == "FW" && self.co.is_empty()) || !is_dynamic(name)
    }
}

fn fr(rf: &Relation, co: &Relation) -> Relation {
    rf.inverse().compose(co)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::thread::{PathLimits, explore};
    use crate::litmus::parse_str;

    /// `knows` answers exactly as asking `set` and `relation` would, for
    /// every name the environment defines and for some it does not, on an
    /// x86 test (herd's `X`), a C test (herd's `A`) and a PTX test, strict
    /// and lenient.
    #[test]
    fn knows_agrees_with_set_and_relation() {
        let sources = [
            "X86 t\n{ x=0; y=0; }\n P0 | P1 ;\n MOV [x],$1 | MOV EAX,[y] ;\n MFENCE | XCHG [x],EBX ;\nexists (1:EAX=0)\n",
            "C t\n{ [x]=0; }\nP0 (atomic_int* x) {\n  atomic_store_explicit(x, 1, memory_order_release);\n  int r0 = atomic_load(x);\n}\nexists (0:r0=0)\n",
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.release.gpu x, 1 | ld.acquire.gpu r0, x ;\nexists (1:r0=0)\n",
        ];
        for src in sources {
            let test = parse_str("t.litmus", src).expect("parses");
            let limits = PathLimits {
                unroll: 2,
                max_paths: 100,
                max_events: 100,
                deadline: None,
                project: None,
            };
            let paths: Vec<_> = test
                .threads
                .iter()
                .map(|t| explore("t", t, test.locations.len(), limits).expect("paths"))
                .collect();
            let skel = Skeleton::new(&test, paths.iter().map(|p| &p.paths[0]).collect());
            let empty = Relation::new(skel.len());
            let mut names: Vec<&str> = KNOWN_TAGS.to_vec();
            names.extend(RELATIONS);
            names.extend(DYNAMIC);
            names.extend(skel.sets.keys().copied());
            names.extend(skel.rels.keys().copied());
            names.extend([
                "X",
                "A",
                "Exp",
                "NExp",
                "FW",
                "UNDEFINED",
                "nope",
                "X86",
                "C",
            ]);
            let mut known = 0;
            for lenient in [false, true] {
                let env = CandidateEnv::new(&skel, &empty, &empty, &empty).lenient(lenient);
                for &name in &names {
                    let asked = env.set(name).is_some() || env.relation(name).is_some();
                    assert_eq!(
                        env.knows(name),
                        asked,
                        "{name} (lenient {lenient}) in {src}"
                    );
                    known += usize::from(asked);
                }
                assert!(!env.knows("nope"));
            }
            assert!(known > names.len(), "most names are known");
        }
    }
}
