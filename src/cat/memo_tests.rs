//! Tests of what the evaluator remembers across environments: the names a
//! definition reads ([`eval::Program::slot_inputs`]) and the keys of
//! environments up to a renumbering of their events.

use super::*;
use std::collections::HashMap;

/// Sets and relations by name over `n` events.
struct Env {
    n: usize,
    sets: HashMap<&'static str, BitSet>,
    rels: HashMap<&'static str, Relation>,
}

impl Env {
    fn new(n: usize) -> Self {
        Env {
            n,
            sets: HashMap::new(),
            rels: HashMap::new(),
        }
    }

    fn set(mut self, name: &'static str, members: &[usize]) -> Self {
        self.sets
            .insert(name, BitSet::from_indices(self.n, members.iter().copied()));
        self
    }

    /// The equivalence whose classes are `classes`.
    fn classes(mut self, name: &'static str, classes: &[&[usize]]) -> Self {
        let mut r = Relation::new(self.n);
        for c in classes {
            for &a in *c {
                for &b in *c {
                    r.add(a, b);
                }
            }
        }
        self.rels.insert(name, r);
        self
    }
}

impl Environment for Env {
    fn num_events(&self) -> usize {
        self.n
    }
    fn set(&self, name: &str) -> Option<BitSet> {
        self.sets.get(name).cloned()
    }
    fn relation(&self, name: &str) -> Option<Relation> {
        self.rels.get(name).cloned()
    }
}

fn model(src: &str) -> Model {
    Model::parse("test.cat", src, &|_| None).expect("parses")
}

fn inputs(m: &Model, slot: &str) -> Option<Vec<String>> {
    let p = &m.program;
    let i = p.slots.iter().position(|s| s.name == slot).expect("a slot");
    p.slot_inputs(i).map(|ix| {
        let mut names: Vec<String> = ix.iter().map(|&k| p.env_names[k].name.clone()).collect();
        names.sort();
        names
    })
}

#[test]
fn a_definition_reads_the_names_of_what_it_uses() {
    let m = model(
        "let a = R & W\nlet f(x) = x | IW\nlet b = [f(a)] ; loc\nlet c = po\nacyclic b | c as k\n",
    );
    assert_eq!(inputs(&m, "b").unwrap(), ["IW", "R", "W", "loc"]);
    assert_eq!(inputs(&m, "c").unwrap(), ["po"]);
    // Scope tags are read by name at run time: not kept.
    let m = model("let t = tag2events('acquire)\nempty t as k\n");
    assert_eq!(inputs(&m, "t"), None);
}

#[test]
fn keys_agree_up_to_a_renumbering_of_the_events() {
    let names = ["IW", "W", "loc"];
    // Two locations: {0, 1, 2} with its initial write 0, and {3}.
    let a = Env::new(5)
        .set("W", &[0, 1, 2])
        .set("IW", &[0])
        .classes("loc", &[&[0, 1, 2], &[3]]);
    // The same, numbered otherwise (event 4 is outside every name).
    let b = Env::new(5)
        .set("W", &[2, 3, 4])
        .set("IW", &[4])
        .classes("loc", &[&[2, 3, 4], &[0]]);
    // Another structure: two writes at each of two locations.
    let c = Env::new(5)
        .set("W", &[0, 1, 2, 3])
        .set("IW", &[0, 2])
        .classes("loc", &[&[0, 1], &[2, 3]]);
    let key = |e: &Env| canonical_env_key(e, &names).expect("sets and an equivalence");
    assert_eq!(key(&a), key(&b));
    assert_ne!(key(&a), key(&c));
    // The exact key tells the renumbering apart.
    assert_ne!(env_key(&a, &names), env_key(&b, &names));
    // A relation that is no equivalence is not renumbered.
    let mut po = Relation::new(5);
    po.add(0, 1);
    let mut d = Env::new(5).set("W", &[0]).set("IW", &[0]);
    d.rels.insert("loc", po);
    assert_eq!(canonical_env_key(&d, &names), None);
}
