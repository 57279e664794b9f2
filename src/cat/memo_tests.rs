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

/// The names slot `slot` reads, sorted, whether it is local to them, and
/// the ones it reads only restricted to the others' events.
fn reads(m: &Model, slot: &str) -> Option<(Vec<String>, bool, Vec<String>)> {
    let p = &m.program;
    let i = p.slots.iter().position(|s| s.name == slot).expect("a slot");
    let names = |ix: &[usize]| {
        let mut names: Vec<String> = ix.iter().map(|&k| p.env_names[k].name.clone()).collect();
        names.sort();
        names.dedup();
        names
    };
    p.slot_inputs(i)
        .map(|ix| (names(&ix.names), ix.local, names(&ix.restricted)))
}

fn inputs(m: &Model, slot: &str) -> Option<Vec<String>> {
    reads(m, slot).map(|r| r.0)
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
fn a_definition_is_local_when_it_builds_no_event_its_inputs_lack() {
    let m = model(
        "let co0 = loc & (IW * (W \\ IW))
let ws = partition(W)
let l = loc
let d = ((R * W) & loc) ; po
let c = ~W
let u = W * _
let s = po*
let q = po?
let r = (loc & po) | rf
acyclic co0 | l | d | r as k
empty c as k2
empty u as k4
acyclic s | q as k3
",
    );
    let names = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    // herd's co0: `loc` only between the writes.
    assert_eq!(
        reads(&m, "co0").unwrap(),
        (names(&["IW", "W", "loc"]), true, names(&["loc"]))
    );
    assert_eq!(
        reads(&m, "ws").unwrap(),
        (names(&["W", "loc"]), true, names(&["loc"]))
    );
    // Read as a value, `loc` brings every event it relates.
    assert_eq!(reads(&m, "l").unwrap(), (names(&["loc"]), true, vec![]));
    assert_eq!(
        reads(&m, "d").unwrap(),
        (names(&["R", "W", "loc", "po"]), true, names(&["loc"]))
    );
    // `rf` and `po` are read in full, `loc` only where `po` relates.
    assert_eq!(
        reads(&m, "r").unwrap(),
        (names(&["loc", "po", "rf"]), true, names(&["loc"]))
    );
    // Complements, the universe and reflexive closures reach every event.
    for slot in ["c", "u", "s", "q"] {
        assert!(!reads(&m, slot).unwrap().1, "{slot} is not local");
    }
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
    let key = |e: &Env| {
        canon::canonical_numbering(e, &names, canon::Support::All)
            .expect("sets and relations")
            .key
    };
    assert_eq!(key(&a), key(&b));
    assert_ne!(key(&a), key(&c));
    // The exact key tells the renumbering apart.
    assert_ne!(canon::env_key(&a, &names), canon::env_key(&b, &names));
}

#[test]
fn relations_besides_the_equivalence_are_keyed_renumbered() {
    // herd's `cos.cat` reads `co0` beside `W` and `loc`: initial write first.
    let names = ["W", "co0", "loc"];
    let env = |w: &[usize], co0: &[(usize, usize)], loc: &[&[usize]]| {
        let mut e = Env::new(5).set("W", w).classes("loc", loc);
        let mut r = Relation::new(5);
        for &(a, b) in co0 {
            r.add(a, b);
        }
        e.rels.insert("co0", r);
        e
    };
    let key = |e: &Env| {
        canon::canonical_numbering(e, &names, canon::Support::All).expect("sets and relations")
    };
    // Two writes after an initial one at one location, numbered two ways.
    let a = env(&[0, 1, 2], &[(0, 1), (0, 2)], &[&[0, 1, 2], &[3, 4]]);
    let b = env(&[4, 2, 3], &[(4, 2), (4, 3)], &[&[2, 3, 4], &[0, 1]]);
    let (ka, kb) = (key(&a), key(&b));
    assert_eq!(ka.key, kb.key);
    // Each renumbering maps its environment's co0 onto the same relation.
    let renumbered = |e: &Env, k: &canon::Canonical| {
        let Some(eval::Value::Rel(r)) =
            canon::renumber(&eval::Value::Rel(e.rels["co0"].clone()), &k.order, k.len)
        else {
            panic!("a relation renumbers to a relation")
        };
        r.pairs().collect::<Vec<_>>()
    };
    assert_eq!(renumbered(&a, &ka), renumbered(&b, &kb));
    // Another write first is the same shape, one renumbering apart...
    let c = env(&[0, 1, 2], &[(1, 0), (1, 2)], &[&[0, 1, 2], &[3, 4]]);
    assert_eq!(key(&a).key, key(&c).key);
    // ...but with one edge fewer, another key.
    let c = env(&[0, 1, 2], &[(0, 1)], &[&[0, 1, 2], &[3, 4]]);
    assert_ne!(key(&a).key, key(&c).key);
    // A relation that is no equivalence is keyed by its pairs too.
    let mut po = Relation::new(5);
    po.add(0, 1);
    let mut d = Env::new(5).set("W", &[0]);
    d.rels.insert("co0", po);
    let mut q = Relation::new(5);
    q.add(1, 0);
    let mut e = Env::new(5).set("W", &[0]);
    e.rels.insert("co0", q);
    assert_ne!(key(&d).key, key(&e).key);
    assert_eq!(canon::inverse(&[2, 0, 1], 3), [1, 2, 0]);
}

#[test]
fn a_local_key_covers_the_events_its_inputs_hold() {
    // herd's co0 and the writes: two locations, each with its initial
    // write and one write; `a` has two reads more than `b`.
    let names = ["IW", "W", "loc"];
    let restricted = ["loc"];
    let local = canon::Support::Inputs {
        restricted: &restricted,
    };
    let a = Env::new(7)
        .set("W", &[0, 1, 2, 3])
        .set("IW", &[0, 1])
        .classes("loc", &[&[0, 2, 4], &[1, 3, 5, 6]]);
    let b = Env::new(5)
        .set("W", &[0, 1, 3, 4])
        .set("IW", &[0, 1])
        .classes("loc", &[&[0, 2, 3], &[1, 4]]);
    let key = |e: &Env, s| canon::canonical_numbering(e, &names, s).expect("a key");
    let (ka, kb) = (key(&a, local), key(&b, local));
    assert_eq!(ka.key, kb.key);
    assert_eq!((ka.len, kb.len), (4, 4));
    // The reads are not numbered.
    assert_eq!(ka.order.iter().filter(|&&p| p == usize::MAX).count(), 3);
    assert_eq!(kb.order[2], usize::MAX);
    // Over every event, the reads tell the two apart.
    assert_ne!(
        key(&a, canon::Support::All).key,
        key(&b, canon::Support::All).key
    );
    // A value on the writes goes to the other environment's writes: the
    // order of `a`'s location {0, 2} to `b`'s location {0, 3}.
    let mut co = Relation::new(7);
    co.add(0, 2);
    let there = canon::renumber(&eval::Value::Rel(co), &ka.order, ka.len).expect("on the writes");
    let back = canon::inverse(&kb.order, kb.len);
    let Some(eval::Value::Rel(r)) = canon::renumber(&there, &back, 5) else {
        panic!("a relation")
    };
    assert_eq!(r.pairs().collect::<Vec<_>>(), [(0, 3)]);
    // A value holding a read has no canonical form.
    let mut fr = Relation::new(7);
    fr.add(4, 2);
    assert!(canon::renumber(&eval::Value::Rel(fr), &ka.order, ka.len).is_none());
    // A restricted relation must be an equivalence.
    let mut po = Relation::new(5);
    po.add(0, 1);
    let mut c = Env::new(5).set("W", &[0, 1]).set("IW", &[0]);
    c.rels.insert("loc", po);
    assert!(canon::canonical_numbering(&c, &names, local).is_none());
}

#[test]
fn a_name_read_directly_anywhere_is_not_restricted() {
    // `W` read directly, `loc` only intersected with a value of `W`.
    let m = model("let a = W\nlet b = loc & (W * W)\nacyclic b as k\nempty a as k2\n");
    let mut p = m.program.clone();
    let index = |p: &eval::Program, n: &str| p.env_names.iter().position(|e| e.name == n).unwrap();
    let (w, loc) = (index(&p, "W"), index(&p, "loc"));
    let inputs = eval::Inputs {
        names: vec![w, loc],
        local: true,
        restricted: vec![loc],
    };
    assert_eq!(p.input_names(&inputs), (vec!["W", "loc"], vec!["loc"]));
    // The native form of a `co`-building model reads `FW` as `W`: a second
    // `W`, here read only restricted. `W` is still read directly.
    let mut second = p.env_names[w].clone();
    second.name = "W".into();
    p.env_names.push(second);
    let w2 = p.env_names.len() - 1;
    let inputs = eval::Inputs {
        names: vec![w, loc, w2],
        local: true,
        restricted: vec![loc, w2],
    };
    assert_eq!(p.input_names(&inputs), (vec!["W", "loc"], vec!["loc"]));
    // Both readings restricted: so is the name.
    let inputs = eval::Inputs {
        names: vec![w, loc, w2],
        local: true,
        restricted: vec![w, loc, w2],
    };
    assert_eq!(p.input_names(&inputs), (vec!["W", "loc"], vec!["W", "loc"]));
}
