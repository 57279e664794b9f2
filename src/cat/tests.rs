//! Tests of the cat interpreter against small hand-made executions.

use super::ast::Loc;
use super::eval::{CExpr, Node, Value};
use super::*;
use crate::diag::Pos;
use std::cell::RefCell;
use std::collections::HashMap;

/// A hand-made execution. Unknown upper-case names are empty sets, as the
/// real environment does; every query is counted.
#[derive(Default)]
struct Mock {
    n: usize,
    sets: HashMap<&'static str, BitSet>,
    rels: HashMap<&'static str, Relation>,
    queries: RefCell<HashMap<String, usize>>,
}

fn is_tag(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

impl Mock {
    fn new(n: usize) -> Self {
        Mock {
            n,
            ..Default::default()
        }
    }

    fn set(mut self, name: &'static str, members: &[usize]) -> Self {
        self.sets
            .insert(name, BitSet::from_indices(self.n, members.iter().copied()));
        self
    }

    fn rel(mut self, name: &'static str, pairs: &[(usize, usize)]) -> Self {
        self.rels
            .insert(name, Relation::from_pairs(self.n, pairs.iter().copied()));
        self
    }

    fn queries(&self, name: &str) -> usize {
        self.queries.borrow().get(name).copied().unwrap_or(0)
    }

    /// Message passing: init writes 0 (x) and 1 (y); P0: 2: W x=1, 3: W y=1;
    /// P1: 4: R y=1 (from 3), 5: R x=0 (from init 0).
    fn mp() -> Self {
        let x = [0, 2, 5];
        let y = [1, 3, 4];
        let mut loc = Vec::new();
        for l in [&x[..], &y[..]] {
            for &a in l {
                for &b in l {
                    loc.push((a, b));
                }
            }
        }
        Mock::new(6)
            .set("IW", &[0, 1])
            .set("W", &[0, 1, 2, 3])
            .set("R", &[4, 5])
            .set("M", &[0, 1, 2, 3, 4, 5])
            .set("Acq", &[4])
            .rel("Mixed", &[(0, 1)])
            .rel("po", &[(2, 3), (4, 5)])
            .rel("rf", &[(3, 4), (0, 5)])
            .rel("co", &[(0, 2), (1, 3)])
            .rel("fr", &[(5, 2)])
            .rel("loc", &loc)
            .rel("id", &(0..6).map(|i| (i, i)).collect::<Vec<_>>())
    }

    /// Four events for operator tests.
    fn ops() -> Self {
        Mock::new(4)
            .set("A", &[0, 1])
            .set("B", &[1, 3])
            .set("F", &[1])
            .rel("a", &[(0, 1), (1, 2)])
            .rel("b", &[(1, 2), (2, 3)])
            .rel("c", &[(2, 0)])
            .rel("ch", &[(0, 1), (1, 2), (2, 3)])
            .rel("po", &[(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)])
    }
}

impl Environment for Mock {
    fn num_events(&self) -> usize {
        self.n
    }

    fn set(&self, name: &str) -> Option<BitSet> {
        *self.queries.borrow_mut().entry(name.into()).or_default() += 1;
        match self.sets.get(name) {
            Some(s) => Some(s.clone()),
            None if is_tag(name) => Some(BitSet::new(self.n)),
            None => None,
        }
    }

    fn relation(&self, name: &str) -> Option<Relation> {
        *self.queries.borrow_mut().entry(name.into()).or_default() += 1;
        self.rels.get(name).cloned()
    }

    fn is_static(&self, name: &str) -> bool {
        !matches!(name, "rf" | "co" | "fr")
    }
}

fn no_include(_: &str) -> Option<(String, String)> {
    None
}

/// herd's per-location linearisations in cat (as `cross.cat` has them):
/// a recursive function over a set of sets.
const DO_LOCS: &str = "let rec do_locs wss = match wss with
  || {} -> {}
  || ws ++ rest -> linearisations(ws, 0) ++ do_locs rest
  end";

fn model(src: &str) -> Model {
    match Model::parse("test.cat", src, &no_include) {
        Ok(m) => m,
        Err(d) => panic!("{}", d.render()),
    }
}

fn parse_err(src: &str) -> Diagnostic {
    Model::parse("test.cat", src, &no_include).expect_err("expected a parse error")
}

fn run(src: &str, env: &Mock) -> Outcome {
    model(src)
        .evaluate(env)
        .unwrap_or_else(|d| panic!("{}", d.render()))
}

/// The value of the last binding of `name` in `src`.
fn value(src: &str, env: &Mock, name: &str) -> Value {
    let m = model(src);
    let st = m.program.state(env);
    let i = m
        .program
        .slots
        .iter()
        .rposition(|s| s.name == name)
        .expect("no such binding");
    let e = CExpr {
        memo: None,
        node: Node::Slot(i),
        loc: Loc::default(),
    };
    m.program
        .eval(&e, &st, &[])
        .unwrap_or_else(|e| panic!("{e:?}"))
        .into_owned()
}

fn rel_value(src: &str, env: &Mock, name: &str) -> Relation {
    match value(src, env, name) {
        Value::Rel(r) => r,
        v => panic!("{name} is not a relation: {v:?}"),
    }
}

fn set_value(src: &str, env: &Mock, name: &str) -> BitSet {
    match value(src, env, name) {
        Value::Set(s) => s,
        v => panic!("{name} is not a set: {v:?}"),
    }
}

fn pairs(n: usize, p: &[(usize, usize)]) -> Relation {
    Relation::from_pairs(n, p.iter().copied())
}

fn pos(line: u32, col: u32) -> Pos {
    Pos { line, col }
}

// ----- operators and precedence ----------------------------------------------------

#[test]
fn every_relation_operator() {
    let env = Mock::ops();
    let cases: &[(&str, &[(usize, usize)])] = &[
        ("a | b", &[(0, 1), (1, 2), (2, 3)]),
        ("a & b", &[(1, 2)]),
        ("a \\ b", &[(0, 1)]),
        ("a ; b", &[(0, 2), (1, 3)]),
        ("A * B", &[(0, 1), (0, 3), (1, 1), (1, 3)]),
        ("a+", &[(0, 1), (1, 2), (0, 2)]),
        ("a^+", &[(0, 1), (1, 2), (0, 2)]),
        (
            "a*",
            &[(0, 1), (1, 2), (0, 2), (0, 0), (1, 1), (2, 2), (3, 3)],
        ),
        ("a?", &[(0, 1), (1, 2), (0, 0), (1, 1), (2, 2), (3, 3)]),
        ("a^-1", &[(1, 0), (2, 1)]),
        ("[A]", &[(0, 0), (1, 1)]),
        ("0", &[]),
        ("fencerel(F)", &[(0, 2), (0, 3)]),
        ("po & (_ * F) ; po", &[(0, 2), (0, 3)]),
        ("f(a, b)", &[(0, 2), (1, 3)]),
        ("g(A)", &[(0, 0), (1, 1), (0, 1), (1, 2)]),
    ];
    for (expr, expected) in cases {
        let src = format!("let f(x, y) = x ; y | y ; x\nlet g(S) = [S] ; (id | a)\nlet v = {expr}");
        let mut env = Mock::ops();
        env.rels.insert("id", Relation::identity(4));
        assert_eq!(rel_value(&src, &env, "v"), pairs(4, expected), "{expr}");
    }
    let c = rel_value("let v = ~c", &env, "v");
    assert_eq!(c.count(), 15);
    assert!(!c.contains(2, 0));
}

#[test]
fn every_set_operator() {
    let env = Mock::ops();
    let cases: &[(&str, &[usize])] = &[
        ("A | B", &[0, 1, 3]),
        ("A & B", &[1]),
        ("A \\ B", &[0]),
        ("~A", &[2, 3]),
        ("_", &[0, 1, 2, 3]),
        ("domain(a)", &[0, 1]),
        ("range(a)", &[1, 2]),
        ("UNSEEN_TAG", &[]),
        ("domain(0)", &[]),
    ];
    for (expr, expected) in cases {
        let src = format!("let v = {expr}");
        assert_eq!(
            set_value(&src, &env, "v"),
            BitSet::from_indices(4, expected.iter().copied()),
            "{expr}"
        );
    }
}

#[test]
fn precedence_and_associativity() {
    let env = Mock::ops();
    let same = |a: &str, b: &str| {
        let src = format!("let x = {a}\nlet y = {b}");
        assert_eq!(
            rel_value(&src, &env, "x"),
            rel_value(&src, &env, "y"),
            "{a} vs {b}"
        );
    };
    let differ = |a: &str, b: &str| {
        let src = format!("let x = {a}\nlet y = {b}");
        assert_ne!(
            rel_value(&src, &env, "x"),
            rel_value(&src, &env, "y"),
            "{a} vs {b}"
        );
    };
    // `;` binds tighter than `|`.
    same("a | b ; c", "a | (b ; c)");
    differ("a | b ; c", "(a | b) ; c");
    // `&` binds tighter than `\`.
    same("a \\ b & c", "a \\ (b & c)");
    differ("a \\ b & c", "(a \\ b) & c");
    // `\` binds tighter than `;`.
    same("a ; b \\ a", "a ; (b \\ a)");
    differ("a ; b \\ a", "(a ; b) \\ a");
    // `\` is left-associative.
    same("a \\ b \\ a", "(a \\ b) \\ a");
    differ("a \\ b \\ a", "a \\ (b \\ a)");
    // Postfix binds tighter than `;` and than prefix `~`.
    same("a ; b+", "a ; (b+)");
    differ("a ; b+", "(a ; b)+");
    same("~a+", "~(a+)");
    differ("~a+", "(~a)+");
    // Prefix `~` binds tighter than the cartesian product.
    same("~A * B", "(~A) * B");
    differ("~A * B", "~(A * B)");
    // The cartesian product binds tighter than `&`.
    same("A * B & a", "(A * B) & a");
    same("[A] ; a | b", "([A] ; a) | b");
}

#[test]
fn let_and_shadowing() {
    let env = Mock::ops();
    // `and` bindings see only what was bound before the `let`.
    let src = "let x = a\nlet x = b and y = x\nlet z = x | y";
    assert_eq!(
        rel_value(src, &env, "z"),
        pairs(4, &[(0, 1), (1, 2), (2, 3)])
    );
    // A model may shadow a predefined name.
    let src = "let a = b\nlet v = a";
    assert_eq!(rel_value(src, &env, "v"), pairs(4, &[(1, 2), (2, 3)]));
}

#[test]
fn let_rec_transitive_closure() {
    let env = Mock::ops();
    let src = "let rec t = a | b | (t ; t)\nlet u = (a | b)+";
    assert_eq!(rel_value(src, &env, "t"), rel_value(src, &env, "u"));
    assert_eq!(rel_value(src, &env, "t").count(), 6);
}

#[test]
fn let_rec_mutual_recursion() {
    let env = Mock::ops();
    let src = "let rec odd = ch | (even ; ch) and even = odd ; ch\nlet all = odd | even";
    assert_eq!(
        rel_value(src, &env, "odd"),
        pairs(4, &[(0, 1), (1, 2), (2, 3), (0, 3)])
    );
    assert_eq!(rel_value(src, &env, "even"), pairs(4, &[(0, 2), (1, 3)]));
    assert_eq!(
        rel_value(src, &env, "all"),
        rel_value("let v = ch+", &env, "v")
    );
}

#[test]
fn let_rec_over_sets() {
    let env = Mock::ops();
    // Events reachable from A by `a`, A included.
    let src = "let rec S = A | range([S] ; a)";
    assert_eq!(
        set_value(src, &env, "S"),
        BitSet::from_indices(4, [0, 1, 2])
    );
}

// ----- checks, failures and flags ------------------------------------------------------

const SC: &str = "let com = rf | co | fr\nacyclic po | com as sc";

#[test]
fn checks_and_failure_details() {
    let env = Mock::mp();
    let out = run(SC, &env);
    assert!(!out.allowed);
    assert!(out.flags.is_empty());
    let f = out.failure.expect("failure");
    assert_eq!(f.check, "sc");
    assert_eq!(f.kind, CheckKind::Acyclic);
    let ghb = rel_value("let g = po | rf | co | fr", &env, "g");
    let mut sorted = f.witness.clone();
    sorted.sort();
    assert_eq!(sorted, vec![2, 3, 4, 5]);
    for k in 0..f.witness.len() {
        let (a, b) = (f.witness[k], f.witness[(k + 1) % f.witness.len()]);
        assert!(ghb.contains(a, b), "{a}->{b} is not an edge");
    }
    assert!(f.relations.is_empty());

    // Without fr the execution is allowed.
    let out = run("acyclic po | rf | co", &env);
    assert_eq!(
        out,
        Outcome {
            allowed: true,
            flags: vec![],
            failure: None
        }
    );

    // Unnamed checks are labelled by their text; irreflexive gives one event.
    let f = run("irreflexive po ; po^-1", &env).failure.unwrap();
    assert_eq!(f.check, "irreflexive po ; po^-1");
    assert_eq!(f.kind, CheckKind::Irreflexive);
    assert_eq!(f.witness, vec![2]);

    // empty: the offending pairs, flattened.
    let f = run("empty rf as no-rf", &env).failure.unwrap();
    assert_eq!((f.check.as_str(), f.kind), ("no-rf", CheckKind::Empty));
    assert_eq!(f.witness, vec![0, 5, 3, 4]);
    let f = run("empty R", &env).failure.unwrap();
    assert_eq!(f.witness, vec![4, 5]);

    // Negated checks.
    assert!(run("~empty rf", &env).allowed);
    assert!(run("~acyclic po | rf | co | fr", &env).allowed);
    assert!(run("~irreflexive po ; po^-1", &env).allowed);
    let f = run("~empty rf & co", &env).failure.unwrap();
    assert_eq!(f.kind, CheckKind::NotEmpty);
    assert!(f.witness.is_empty());
}

#[test]
fn first_failing_check_stops_evaluation() {
    let env = Mock::mp();
    let src = "empty rf as first\nlet later = co\nempty later as second";
    let out = run(src, &env);
    assert_eq!(out.failure.unwrap().check, "first");
    // Bindings are evaluated lazily: `co` was never needed.
    assert_eq!(env.queries("co"), 0);
}

#[test]
fn each_environment_name_is_queried_once() {
    let env = Mock::mp();
    let src = "let a = po ; po\nlet b = po | rf\nlet f = fencerel(W)\n\
               acyclic a | b | f | po\nempty po & po^-1\nempty (W * R) & rf & ~rf";
    assert!(run(src, &env).allowed);
    for name in ["po", "rf", "W", "R"] {
        assert_eq!(env.queries(name), 1, "{name}");
    }
}

#[test]
fn explain_carries_relations_and_shortest_cycle() {
    let env = Mock::mp();
    let m = model(SC);
    let out = m.evaluate_explain(&env).unwrap();
    let f = out.failure.unwrap();
    assert_eq!(f.witness.len(), 4);
    let names: Vec<&str> = f.relations.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, vec!["sc", "po", "com"]);
    assert_eq!(f.relations[2].1, rel_value(SC, &env, "com"));
}

#[test]
fn flags() {
    let env = Mock::mp();
    let src = "flag ~empty rf as has-rf\nflag ~empty rf & co as impossible\n\
               flag empty fr\nacyclic po | rf";
    let out = run(src, &env);
    assert!(out.allowed);
    assert_eq!(out.flags, vec!["has-rf"]);
    // A flag never forbids; flags of a forbidden execution are dropped.
    let src = "flag ~empty rf as has-rf\nacyclic po | rf | co | fr";
    let out = run(src, &env);
    assert!(!out.allowed);
    assert!(out.flags.is_empty());
    // Unnamed flag: labelled by its text.
    assert_eq!(run("flag ~empty po", &env).flags, vec!["~empty po"]);
    // undefined_unless raises "undefined" when its check fails.
    let out = run(
        "undefined_unless empty rf\nundefined_unless empty co & rf",
        &env,
    );
    assert!(out.allowed);
    assert_eq!(out.flags, vec!["undefined"]);
    let m = model("flag ~empty rf as f1\nacyclic po as a1\nundefined_unless empty 0\nempty 0");
    assert_eq!(m.checks(), vec!["a1", "empty 0"]);
    assert_eq!(m.flags(), vec!["f1"]);
}

// ----- with ... from linearisations ---------------------------------------------------------

fn order_env() -> Mock {
    Mock::new(3)
        .rel("t", &[(0, 1), (1, 2), (0, 2)])
        .rel("tinv", &[(1, 0), (2, 1), (2, 0)])
}

#[test]
fn with_is_existential() {
    let env = order_env();
    // Only the order 2 < 1 < 0 passes; it is enumerated last.
    let src = "with S from linearisations(_, 0)\n\
               let u = S & tinv\n\
               flag ~empty S & t as saw-forward\n\
               flag ~empty S as nonempty\n\
               empty S \\ u as backwards";
    let out = run(src, &env);
    assert!(out.allowed);
    // Flags of the rejected choices do not leak into the accepted one.
    assert_eq!(out.flags, vec!["nonempty"]);

    // No order is contained in t & tinv: forbidden, failure of the first choice.
    let src = "with S from linearisations(_)\nempty S \\ (t & tinv) as never";
    let out = run(src, &env);
    assert!(!out.allowed);
    let f = out.failure.unwrap();
    assert_eq!(f.check, "never");
    // First choice tried is 0 < 1 < 2: its three pairs, flattened.
    assert_eq!(f.witness, vec![0, 1, 0, 2, 1, 2]);
}

#[test]
fn with_respects_the_constraint() {
    let env = order_env();
    // Constrained by t, the only order is t itself.
    assert!(run("with S from linearisations(_, t)\nempty S \\ t", &env).allowed);
    assert!(!run("with S from linearisations(_, t)\nempty S \\ tinv", &env).allowed);
    // Through a let-bound set of linearisations, as in herd's lamport.cat.
    assert!(
        run(
            "let all = linearisations(_, t)\nwith S from all\nempty S \\ t",
            &env
        )
        .allowed
    );
    // A cyclic constraint leaves no choice.
    let out = run("with S from linearisations(_, t | tinv)\nempty 0", &env);
    assert!(!out.allowed);
    let f = out.failure.unwrap();
    assert_eq!(f.check, "with S from linearisations(_, t | tinv)");
    assert_eq!(f.kind, CheckKind::Acyclic);
    assert!(!f.witness.is_empty());
    // An empty set has exactly one linearisation, the empty order.
    assert!(run("with S from linearisations(domain(0), t)\nempty S", &env).allowed);
    // Restricted to a subset: pairs of the constraint outside it are ignored.
    let src = "with S from linearisations(domain(t), tinv)\nempty S \\ pairs\n~empty S";
    let mut env = order_env();
    env.rels.insert("pairs", Relation::from_pairs(3, [(1, 0)]));
    assert!(run(src, &env).allowed);
}

// ----- includes ------------------------------------------------------------------------

fn library(name: &str) -> Option<(String, String)> {
    let src = match name {
        "com.cat" => "\"communication\"\nlet com = rf | co | fr",
        "loop-a.cat" => "include \"loop-b.cat\"",
        "loop-b.cat" => "let q = po\ninclude \"loop-a.cat\"",
        "bad.cat" => "let x = po\nlet y = x |",
        _ => return None,
    };
    Some((name.to_string(), src.to_string()))
}

#[test]
fn includes() {
    let env = Mock::mp();
    let src = "SC\ninclude \"com.cat\"\ninclude \"com.cat\"\nacyclic po | com as sc";
    let m = Model::parse("sc.cat", src, &library).unwrap();
    assert_eq!(m.name(), "SC");
    let out = m.evaluate(&env).unwrap();
    assert_eq!(out.failure.unwrap().check, "sc");

    let d = Model::parse("main.cat", "let x = po\ninclude \"nope.cat\"", &library).unwrap_err();
    assert_eq!((d.file.as_str(), d.pos), ("main.cat", pos(2, 1)));
    assert!(d.message.contains("nope.cat"), "{}", d.message);

    let d = Model::parse("main.cat", "include \"loop-a.cat\"", &library).unwrap_err();
    assert_eq!((d.file.as_str(), d.pos), ("loop-b.cat", pos(2, 1)));
    assert!(d.message.contains("cycle"), "{}", d.message);

    // Errors inside an included file point into that file.
    let d = Model::parse("main.cat", "let a = 0\ninclude \"bad.cat\"", &library).unwrap_err();
    assert_eq!((d.file.as_str(), d.pos), ("bad.cat", pos(2, 12)));
    assert_eq!(d.line_text.as_deref(), Some("let y = x |"));
    let d = Model::parse("main.cat", "include \"bad.cat\"\n", &library).unwrap_err();
    assert_eq!(d.file, "bad.cat");
}

#[test]
fn model_name_defaults_to_file_name() {
    let m = Model::parse("models/ptx-v6.cat", "let x = 0", &no_include).unwrap();
    assert_eq!(m.name(), "ptx-v6");
    let m = Model::parse("x.cat", "\"PTX 6.0 model\"\nlet x = 0", &no_include).unwrap();
    assert_eq!(m.name(), "PTX 6.0 model");
}

// ----- errors ---------------------------------------------------------------------------

#[test]
fn unknown_identifier_is_located() {
    let env = Mock::mp();
    let m = model("let x = po\nlet y = x | pox\nacyclic y");
    assert_eq!(m.required_names(), vec!["po", "pox"]);
    let d = m.evaluate(&env).unwrap_err();
    assert_eq!(d.file, "test.cat");
    assert_eq!(d.pos, pos(2, 13));
    assert_eq!(d.message, "unknown identifier 'pox'");
    assert_eq!(d.line_text.as_deref(), Some("let y = x | pox"));
    // Names read through a `let` are looked up lazily, as in herd; names
    // a check reads directly are checked before evaluation.
    assert!(m.check_environment(&env).is_ok());
    let d = model("acyclic po | pox")
        .check_environment(&env)
        .unwrap_err();
    assert_eq!(d.pos, pos(1, 14));
    assert!(model("acyclic po | rf").check_environment(&env).is_ok());
    assert!(
        model(
            "let z = pox
acyclic po"
        )
        .evaluate(&env)
        .unwrap()
        .allowed
    );
    // Unknown upper-case names are tags: empty sets, no error.
    assert!(run("empty UNKNOWN_TAG", &env).allowed);
}

#[test]
fn unknown_function_and_misuse() {
    let env = Mock::mp();
    // herd reports these when evaluated (so that `try` can catch them).
    let d = eval_err("let x = po\nlet y = foo(po)\nempty y", &env);
    assert_eq!(d.pos, pos(2, 9));
    assert!(d.message.contains("unknown function 'foo'"));
    assert!(run("let y = try foo(po) with 0\nempty y", &env).allowed);
    let d = parse_err("let f(x) = x\nlet y = f(po, rf, po)");
    assert!(d.message.contains("takes 1 argument"), "{}", d.message);
    let d = eval_err("let x = po\nlet y = x(rf)\nempty y", &env);
    assert!(
        d.message.contains("closure or primitive expected"),
        "{}",
        d.message
    );
    let d = eval_err("with S from po\nempty S", &env);
    assert_eq!(d.pos, pos(1, 13));
    // Functions and built-ins are values.
    assert!(
        run(
            "let f(x) = x\nlet g = f\nlet d = domain\nempty g(d(0))",
            &env
        )
        .allowed
    );
}

#[test]
fn unterminated_comment_is_located() {
    let d = parse_err("let x = po\n  (* never (* closed *)\nacyclic x");
    assert_eq!((d.file.as_str(), d.pos), ("test.cat", pos(2, 3)));
    assert_eq!(d.message, "unterminated comment");
    assert!(d.render().contains("2 |   (* never"));
}

#[test]
fn static_type_errors_are_located() {
    let d = parse_err("let x = po\nlet y = x | R");
    assert_eq!(d.pos, pos(2, 11));
    assert!(
        d.message.contains("two sets or two relations"),
        "{}",
        d.message
    );
    let d = parse_err("let x = [po]");
    assert_eq!(d.pos, pos(1, 10));
    let d = parse_err("let x = R ; po");
    assert_eq!(d.pos, pos(1, 11));
    let d = parse_err("let x = po * R");
    assert_eq!(d.pos, pos(1, 12));
    let d = parse_err("let x = R+");
    assert_eq!(d.pos, pos(1, 9));
    let d = parse_err("acyclic R | W");
    assert_eq!(d.pos, pos(1, 9));
    let d = parse_err("let x = domain(R)");
    assert_eq!(d.pos, pos(1, 16));
    let d = parse_err("let x = fencerel(po)");
    assert_eq!(d.pos, pos(1, 18));
    // Through a function: the call site is reported.
    let d = parse_err("let f(x) = x ; po\nlet y = f(R)");
    assert_eq!(d.pos, pos(2, 9));
    assert!(d.message.contains("call to 'f'"), "{}", d.message);
}

#[test]
fn runtime_type_errors_are_located() {
    // A mixed-case name has no static type; the environment gives a set.
    let env = Mock::mp();
    let d = model("let x = po\nlet y = Acq ; x\nacyclic y")
        .evaluate(&env)
        .unwrap_err();
    assert_eq!(d.pos, pos(2, 13));
    assert!(
        d.message.contains("';' needs two relations"),
        "{}",
        d.message
    );
    let d = model("let f(s) = [s]\nacyclic f(Mixed)")
        .evaluate(&env)
        .unwrap_err();
    assert_eq!(d.pos, pos(1, 13));
}

#[test]
fn environment_size_mismatch_is_an_error() {
    let mut env = Mock::mp();
    env.rels.insert("po", Relation::empty(3));
    let d = model("acyclic po").evaluate(&env).unwrap_err();
    assert!(d.message.contains("ranges over 3 events"), "{}", d.message);
}

#[test]
fn tags_enums_tuple_patterns_and_assert() {
    let env = Mock::mp().rel("cta", &[(2, 3), (3, 2), (4, 5), (5, 4)]);
    // enum binds the set of its tags; match on tags picks a clause.
    let src = r#"
enum Scopes = 'cta || 'gpu || 'sys
let narrower s = match s with 'sys -> 'gpu || 'gpu -> 'cta || _ -> 'cta end
let n = narrower('sys)
let all = Scopes
let acq = tag2events('acq)
let acq2 = tag2events 'Acq
let same-cta = tag2scope('cta)
let pick t = match t with 'cta -> po || 'gpu -> rf end
let p = pick(narrower 'sys)
"#;
    match value(src, &env, "all") {
        Value::ValSet(vs) => assert_eq!(vs.len(), 3),
        v => panic!("{v:?}"),
    }
    assert_eq!(value(src, &env, "n"), Value::Tag("gpu".into()));
    let acq = value("let x = Acq", &env, "x");
    assert_eq!(value(src, &env, "acq"), acq, "'acq finds the set Acq");
    assert_eq!(value(src, &env, "acq2"), acq);
    let cta = rel_value("let x = cta", &env, "x");
    assert_eq!(rel_value(src, &env, "same-cta"), cta);
    let rf = rel_value("let x = rf", &env, "x");
    assert_eq!(rel_value(src, &env, "p"), rf, "narrower 'sys is 'gpu");
    // A tag with no clause and no '_' is an evaluation error, as is a tag
    // the test has no set for (try catches it).
    let d = eval_err(
        "let f t = match t with 'a -> po end
empty f('b)",
        &env,
    );
    assert!(
        d.message.contains("no clause") && d.message.contains("'b"),
        "{}",
        d.message
    );
    let d = eval_err("empty tag2events('no-such-tag)", &env);
    assert!(
        d.message.contains("tag2events") && d.message.contains("no-such-tag"),
        "{}",
        d.message
    );
    assert!(
        run(
            "let x = try tag2events('no-such-tag) with R\nempty x \\ R",
            &env
        )
        .allowed
    );
    // Tuple patterns, at top level and in let-in, with '_'.
    let src = r#"
let (a, b) = (po, rf)
let (_, c) = (rf, po)
let d = let (x, y) = (po, rf) and z = W in (x | y) ; [z]
let swap p = let (u, v) = p in (v, u)
let pr = (po, rf)
let (e, f) = swap pr
"#;
    let po = rel_value("let x = po", &env, "x");
    assert_eq!(rel_value(src, &env, "a"), po);
    assert_eq!(rel_value(src, &env, "b"), rf);
    assert_eq!(rel_value(src, &env, "c"), po);
    assert_eq!(
        rel_value(src, &env, "d"),
        rel_value("let x = (po | rf) ; [W]", &env, "x")
    );
    assert_eq!(rel_value(src, &env, "e"), rf);
    assert_eq!(rel_value(src, &env, "f"), po);
    let d = eval_err("let (a, b) = (po, rf, co)\nempty a", &env);
    assert!(d.message.contains("tuple pattern of 2"), "{}", d.message);
    // assert: holds silently; a failure is a model error, not a verdict.
    assert!(run("assert acyclic po\nassert ~empty rf as has-rf", &env).allowed);
    let d = eval_err("assert empty po as no-po\nacyclic po", &env);
    assert!(
        d.message.contains("assertion failed: no-po"),
        "{}",
        d.message
    );
    // `assert` stays an ordinary name elsewhere.
    assert_eq!(rel_value("let assert = po\nlet x = assert", &env, "x"), po);
}

fn eval_err(src: &str, env: &Mock) -> Diagnostic {
    model(src)
        .evaluate(env)
        .expect_err("expected an evaluation error")
}

#[test]
fn functional_tier_evaluates() {
    let env = Mock::mp();
    // map over a set of relations, value sets with ++ and match.
    let src = r#"
let map f =
  let rec go s = match s with
  || {} -> {}
  || x ++ r -> f x ++ go r
  end in go
let inv r = r^-1
let rels = map inv {po, rf, po}
let n = match rels with || {} -> 0 || a ++ b -> a end
let both = try UNDEFINED_NAME_x with po
let twice = let g = fun (a, b) -> a | b in g (po, rf)
let c = classes-loc(W)
"#;
    let po = rel_value("let x = po", &env, "x");
    assert_eq!(rel_value(src, &env, "both"), po);
    let rf = rel_value("let x = rf", &env, "x");
    assert_eq!(rel_value(src, &env, "twice"), po.union(&rf));
    match value(src, &env, "rels") {
        Value::ValSet(vs) => assert_eq!(vs.len(), 2, "{{po, rf, po}} has two members"),
        v => panic!("{v:?}"),
    }
    match value(src, &env, "c") {
        Value::ValSet(vs) => assert_eq!(vs.len(), 2, "writes to x and to y"),
        v => panic!("{v:?}"),
    }
    // Every linearisation of the writes per location is a choice of `with`.
    let m = model(&format!(
        "{DO_LOCS}
let orders = do_locs (classes-loc(W))
let per_loc = match orders with || {{}} -> {{}} || s ++ others -> s end
with o from per_loc
acyclic o
"
    ));
    assert!(m.evaluate(&env).unwrap().allowed);
    // `with co from` makes the model bind co: each choice is reported.
    let m = model("with co from {po, rf}\nacyclic co");
    assert!(m.binds_co());
    let all = m.evaluate_all(&env, &mut m.new_cache()).unwrap();
    assert_eq!(all.len(), 2);
    assert!(all.iter().all(|a| a.co.is_some()));
    // Errors of the functional tier are located.
    let d = eval_err("let x = po ++ rf\nempty x", &env);
    assert!(d.message.contains("should be a set"), "{}", d.message);
    assert_eq!(d.pos, pos(1, 12));
    let d = eval_err("let y = po(rf)\nempty y", &env);
    assert!(d.message.contains("unknown function 'po'"), "{}", d.message);
    // forall: the body's checks hold for every member.
    assert!(run("forall s in classes-loc(W) do empty s & R end", &env).allowed);
    assert!(run("forall r in {po, rf} do let q = r^-1 acyclic q end", &env).allowed);
    let o = run("forall r in {po, po | po^-1} do acyclic r as ac end", &env);
    assert!(!o.allowed);
    assert_eq!(o.failure.unwrap().check, "ac");
    // Variants choose branches when the model is loaded.
    let opts = super::LoadOptions {
        variants: vec!["v".into()],
        ..Default::default()
    };
    let m = Model::parse_with(
        "t.cat",
        "if \"v\" let a = po else let a = rf end\nlet b = if \"w\" then po else rf\nempty a & b",
        &no_include,
        &opts,
    )
    .unwrap();
    assert!(m.evaluate(&env).unwrap().allowed, "po & rf is empty");
}

#[test]
fn a_realistic_model() {
    // A TSO-like model exercising most features together.
    let src = r#""x86 TSO" (* title *)
let com = rf | co | fr
let po-loc = po & loc
acyclic po-loc | com as sc-per-location
empty rmw & (fre ; coe) as atomic
let ppo = po & ~(W * R)
let mfence = fencerel(MFENCE)
let rfe = rf & ext
let ghb = ppo | mfence | rfe | co | fr
acyclic ghb as tso
flag ~empty ghb & ~ghb as never
"#;
    let mut env = Mock::mp();
    env.rels.insert("rmw", Relation::empty(6));
    env.rels.insert("fre", Relation::empty(6));
    env.rels.insert("coe", Relation::empty(6));
    let ext: Vec<(usize, usize)> = (0..6)
        .flat_map(|a| (0..6).map(move |b| (a, b)))
        .filter(|&(a, b)| !((2..4).contains(&a) && (2..4).contains(&b)))
        .filter(|&(a, b)| !((4..6).contains(&a) && (4..6).contains(&b)))
        .collect();
    env.rels.insert("ext", Relation::from_pairs(6, ext));
    let m = model(src);
    assert_eq!(m.name(), "x86 TSO");
    assert_eq!(m.checks(), vec!["sc-per-location", "atomic", "tso"]);
    let out = m.evaluate(&env).unwrap();
    // MP is forbidden by TSO: W->W and R->R are preserved.
    assert!(!out.allowed);
    assert_eq!(out.failure.unwrap().check, "tso");
}

#[test]
fn model_is_shareable_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Model>();
    assert_send_sync::<Outcome>();
}

#[test]
fn scoped_gpu_style_model() {
    // The shape of a PTX-like model: tags as sets, scope relations, `//`
    // comments, recursion, fences.
    let src = r#"PTX
// strong accesses and morally strong pairs
let strong = (W | R) & (RLX | ACQ | REL) | F
let same-scope = [strong] ; gpu ; [strong]
let ms = ((po | po^-1) | same-scope) & (M * M & loc | (_ * _) \ (M * M)) \ id
let rec obs = (ms & rf) | (obs ; rmw ; obs)
let rel = [W & REL] ; po-loc? ; [W]
let acq = [R] ; po-loc? ; [R & ACQ]
let sync = ms & (rel ; obs ; acq)
let cause = po? ; (sync ; po?)+
irreflexive (rf | fr) ; cause as causality
acyclic (ms & (rf | co | fr)) | po-loc as sc-per-location
flag ~empty (W * M & loc) \ ms \ id as racy
"#;
    let mut env = Mock::mp();
    // P0's accesses are RLX, except the y write which is REL; P1's y read is ACQ.
    env.sets.insert("RLX", BitSet::from_indices(6, [2, 5]));
    env.sets.insert("REL", BitSet::from_indices(6, [3]));
    env.sets.insert("ACQ", BitSet::from_indices(6, [4]));
    env.rels.insert("gpu", Relation::full(6));
    env.rels.insert("rmw", Relation::empty(6));
    env.rels.insert("po-loc", Relation::empty(6));
    let m = model(src);
    assert_eq!(m.name(), "PTX");
    let out = m.evaluate(&env).unwrap();
    // Release/acquire message passing: the stale read of x is forbidden.
    assert!(!out.allowed);
    assert_eq!(out.failure.unwrap().check, "causality");
    // Without the acquire, it is allowed, and the race flag is raised.
    env.sets.insert("ACQ", BitSet::new(6));
    env.sets.insert("RLX", BitSet::from_indices(6, [2, 4, 5]));
    let out = m.evaluate(&env).unwrap();
    assert!(out.allowed);
    assert_eq!(out.flags, vec!["racy"]);
}

#[test]
fn static_cache_reuses_static_definitions_and_keeps_verdicts() {
    let m = model(
        "let ppo = po & (W * W | R * R)\nlet hb = (ppo | rf | co | fr)+\nacyclic hb as ghb\n",
    );
    let mut cache = m.new_cache();
    // P1 reads y=1 then x=1: allowed.
    let allowed = Mock::mp().rel("rf", &[(3, 4), (2, 5)]).rel("fr", &[]);
    assert!(m.evaluate_cached(&allowed, &mut cache).unwrap().allowed);
    assert_eq!(allowed.queries("po"), 1);
    // A second candidate with the same static part but a forbidden rf:
    // P1 reads y=1 and then x=0 while P0 wrote x before y (MP cycle).
    let forbidden = Mock::mp().rel("fr", &[(5, 2)]).rel("rf", &[(3, 4), (0, 5)]);
    let plain = m.evaluate(&Mock::mp()).unwrap().allowed;
    let cached = m.evaluate_cached(&forbidden, &mut cache).unwrap().allowed;
    assert_eq!(plain, cached);
    assert!(!cached, "MP with ppo W*W and R*R is forbidden");
    // `po` and the static `ppo` came from the cache: not asked again.
    assert_eq!(forbidden.queries("po"), 0);
    assert_eq!(forbidden.queries("rf"), 1);
}

#[test]
fn non_growing_check_prunes_on_a_lower_bound() {
    // `imm` subtracts a growing relation: it neither grows nor shrinks, so
    // `a` prunes on its lower bound (`imm` taken as empty, `po` kept);
    // `b` subtracts a growing relation at the top: no lower bound but the
    // empty relation, so it cannot prune.
    let m = model("let imm = co \\ (co; co)\nacyclic (po | imm) as a\nempty (rf \\ co) as b\n");
    let plan = m.prune_plan(&|n| matches!(n, "rf" | "co"));
    assert_eq!(plan.report.len(), 2);
    assert!(plan.report[0].prunes, "{:?}", plan.report[0]);
    assert!(plan.report[0].reason.contains("a lower bound of it grows"));
    assert!(!plan.report[1].prunes, "{:?}", plan.report[1]);
    let program = plan.program.as_ref().expect("lower-bound program");
    // The lowered check is appended after the model's two statements.
    assert_eq!(plan.checks, vec![2]);
    assert_eq!(program.stmts.len(), 3);
    // With `co` fixed, `imm` is fixed and `a` prunes as written.
    let plan = m.prune_plan(&|n| n == "rf");
    assert!(plan.program.is_none());
    assert_eq!(plan.checks, vec![0, 1]);
}

#[test]
fn cat_language_doc_example_of_tags_runs() {
    // The example of docs/cat-language.md, "Tags, enumerations, tuple
    // patterns, assert", as written there.
    let doc = include_str!("../../docs/cat-language.md");
    let at = doc
        .find("### Tags, enumerations, tuple patterns")
        .expect("the section exists");
    let block = &doc[at..];
    let start = block.find("```\n").expect("an example") + 4;
    let example = &block[start..start + block[start..].find("```").unwrap()];
    assert!(example.contains("enum Scopes") && example.contains("assert"));
    let env = Mock::mp().rel("gpu", &[(2, 3), (3, 2), (4, 5), (5, 4)]);
    let src = format!("{example}\nacyclic d as x");
    assert!(run(&src, &env).allowed);
    assert_eq!(value(&src, &env, "acq"), value("let x = Acq", &env, "x"));
    assert_eq!(
        rel_value(&src, &env, "same-gpu"),
        rel_value("let x = gpu", &env, "x")
    );
}

#[test]
fn bell_files_declare_tags_annotations_and_sets() {
    let env = Mock::mp();
    let bell = "\"a bell\"
enum Accesses = 'acq || 'once
instructions R[{'acq, 'once}]
instructions W[Accesses]
let Both = Acq | Once";
    // As herd's `-bell`: loaded before the model, its names visible to it.
    let opts = super::LoadOptions {
        bell: Some(("my.bell".into(), bell.into())),
        ..Default::default()
    };
    let m = Model::parse_with("m.cat", "let x = Both\nlet y = Once", &no_include, &opts)
        .unwrap_or_else(|d| panic!("{}", d.render()));
    let value_of = |m: &Model, name: &str| {
        let st = m.program.state(&env);
        let i = m
            .program
            .slots
            .iter()
            .rposition(|s| s.name == name)
            .unwrap();
        m.program.slot_value(i, &st).unwrap().clone()
    };
    // 'acq: the events the test tags Acq; 'once: none (no event carries it).
    assert_eq!(value_of(&m, "x"), Value::Set(BitSet::from_indices(6, [4])));
    assert_eq!(value_of(&m, "y"), Value::Set(BitSet::new(6)));
    // `include "x.bell"` does the same.
    let inc = |name: &str| (name == "my.bell").then(|| ("my.bell".to_string(), bell.to_string()));
    let m = Model::parse("m.cat", "include \"my.bell\"\nlet x = Both", &inc)
        .unwrap_or_else(|d| panic!("{}", d.render()));
    assert_eq!(value_of(&m, "x"), Value::Set(BitSet::from_indices(6, [4])));
    // An enum of a .cat file declares tags only: no set per tag.
    let d = eval_err("enum E = 'zz\nempty Zz", &env);
    assert!(
        d.message.contains("unknown identifier 'Zz'"),
        "{}",
        d.message
    );
    // `instructions K[e]` wants a set of tags, and is a keyword only there.
    let d = Model::parse("m.cat", "instructions R[po]", &no_include).unwrap_err();
    assert!(
        d.message
            .contains("'po' is neither an enum nor a set of tags"),
        "{}",
        d.message
    );
    assert_eq!(d.pos.line, 1);
    let d = Model::parse("m.cat", "let r = po\ninstructions R[r]", &no_include).unwrap_err();
    assert!(d.message.contains("expects a set of tags"), "{}", d.message);
    let d = Model::parse(
        "m.cat",
        "\"m\"\ninstructions R[Accesses | {'a}]",
        &no_include,
    )
    .unwrap_err();
    assert!(d.message.contains("'Accesses' is neither"), "{}", d.message);
    assert_eq!((d.pos.line, d.pos.col), (2, 16));
    let po = rel_value("let x = po", &env, "x");
    assert_eq!(
        rel_value("let instructions = po\nlet x = instructions", &env, "x"),
        po
    );
    let d = Model::parse("m.cat", "\"m\"\ninstructions R{'a}", &no_include).unwrap_err();
    assert!(d.expected.as_deref() == Some("'['"), "{d:?}");
}

#[test]
fn let_rec_of_values_and_tuple_patterns() {
    let env = Mock::mp();
    // Local `let rec` of values: least fixpoint from {}.
    let src = "let t = let rec c = po | rf | (c ; c) in c
let u = let rec a = po | b and b = a ; rf in b
let v = let rec s = W | range(s * s & po) in s";
    assert_eq!(
        rel_value(src, &env, "t"),
        rel_value("let x = (po | rf)+", &env, "x")
    );
    assert_eq!(
        rel_value(src, &env, "u"),
        rel_value("let x = po ; rf", &env, "x")
    );
    assert_eq!(value(src, &env, "v"), value("let x = W", &env, "x"));
    // Tuple patterns in `let rec`, top level and local.
    let src = "let rec (p, q) = (po | (q ; rf), p) and r = p ; p
let z = let rec (a, b) = (po | b, a ; rf) in b";
    let pp = rel_value("let x = po | (po ; rf)", &env, "x");
    assert_eq!(rel_value(src, &env, "p"), pp);
    assert_eq!(rel_value(src, &env, "q"), pp);
    assert_eq!(
        rel_value(src, &env, "r"),
        rel_value("let y = po | (po ; rf)\nlet x = y ; y", &env, "x")
    );
    assert!(!rel_value(src, &env, "r").is_empty());
    assert_eq!(
        rel_value(src, &env, "z"),
        rel_value("let x = po ; rf", &env, "x")
    );
    // A member that is not a tuple of the pattern's size is an error.
    let d = eval_err("let rec (a, b) = (po, rf, co)\nempty a", &env);
    assert!(d.message.contains("tuple pattern of 2"), "{}", d.message);
}

#[test]
fn with_inside_forall_is_a_choice_per_member() {
    let env = Mock::mp();
    // For s = po the choice po works, for s = rf the choice rf: no single
    // choice works for both, one per member does.
    assert!(
        run(
            "forall s in {po, rf} do with o from {po, rf} empty o \\ s end",
            &env
        )
        .allowed
    );
    let o = run(
        "forall s in {po} do with o from {rf, co} empty o as no-o end",
        &env,
    );
    assert!(!o.allowed);
    assert_eq!(o.failure.unwrap().check, "no-o");
    // An empty set of choices fails the body.
    assert!(!run("forall s in {po} do with o from {} empty o end", &env).allowed);
    // Linearisations inside forall.
    assert!(
        run(
            "forall s in {po, rf} do with o from linearisations(M, s) acyclic o | s end",
            &env
        )
        .allowed
    );
    assert!(
        !run(
            "forall s in {po} do with o from linearisations(W, 0) empty o end",
            &env
        )
        .allowed
    );
}

#[test]
fn reads_any_sees_through_functions_where_depends_on_gives_up() {
    // herd's c11 models build their orders with functions over value sets
    // (cross.cat): the polarity analysis gives up there, the read analysis
    // does not.
    let m = model(&format!(
        "{DO_LOCS}
let orders(s) = do_locs (partition s)
with mo from orders(W)
let coi_unused = coi
acyclic po | rf | mo as causality
empty [FW] & [R] as last
"
    ));
    assert!(m.depends_on(&["co"]), "the polarity analysis gives up");
    assert!(!m.reads_any(&["co", "fr", "coi"]));
    assert!(m.reads_any(&["FW"]), "a check reads it");
    assert!(m.reads_any(&["W"]), "the `with` set reads it");
    assert!(m.reads_any(&["rf"]));
    // A name read only through a function's argument still counts.
    let m = model("let f(x) = x ; po\nacyclic f(co) as t");
    assert!(m.reads_any(&["co"]));
    // A `forall` body reads everything (conservatively).
    let m = model("forall s in {po} do empty s end");
    assert!(m.reads_any(&["co"]));
}
