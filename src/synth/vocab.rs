//! Vocabularies: the instructions a synthesis run builds programs from,
//! with their weakening lattice (docs/synthesis.md, "Vocabularies").
//!
//! A vocabulary file is line based; `#` starts a comment:
//!
//! ```text
//! vocab NAME                 the name reported in summaries
//! arch X86|PTX|C|OpenCL      the printer and front end of the tests
//! rmw-events 1|2             events an RMW counts for
//! scopes cta gpu sys         scope names, narrowest first (scoped dialects)
//! KIND NAME "LINE"... [weaker NAME]... [split NAME NAME]
//! ```
//!
//! `KIND` is `load`, `store`, `rmw`, `add` or `fence`; `add` is an RMW
//! whose write is the value it read plus `{v}` (an `rmw` writes `{v}`
//! itself), and has no `split`. Each quoted `LINE` is one
//! line of the thread, with `{r}` (the register), `{x}` (the location),
//! `{v}` (the written value) and `{s}` (the scope) filled in. A `NAME`
//! containing `{s}` is one entry per scope. `weaker` names the entries one
//! step below in the lattice (with the same scope); an entry with `{s}` is
//! also one step above the same entry with the next narrower scope. `split`
//! (RMWs only) names the plain read and write an RMW weakens into.

use crate::mapping::enumerate::OpKind;
use std::fmt;

/// One instruction of a vocabulary at one scope.
#[derive(Clone, Debug)]
pub struct Entry {
    pub kind: OpKind,
    /// The name with its scope filled in (`ld.acquire.gpu`).
    pub name: String,
    /// Index into [`Vocab::scopes`] plus one; 0 when unscoped.
    pub scope: u8,
    /// Lines of litmus text, placeholders unfilled except `{s}`.
    pub lines: Vec<String>,
    /// Entries one step weaker (indices into [`Vocab::entries`]).
    pub weaker: Vec<usize>,
    /// For an RMW: the read and the write it splits into.
    pub split: Option<(usize, usize)>,
    /// An RMW that writes the value it read plus its `{v}` (an `add`
    /// entry) rather than `{v}` itself.
    pub adds: bool,
}

/// The dialect a vocabulary prints tests in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    X86,
    Ptx,
    C,
    OpenCl,
}

impl Dialect {
    /// The name on a litmus file's first line.
    pub fn arch(self) -> &'static str {
        match self {
            Dialect::X86 => "X86",
            Dialect::Ptx => "PTX",
            Dialect::C => "C",
            Dialect::OpenCl => "OpenCL",
        }
    }

    fn parse(s: &str) -> Option<Dialect> {
        match s.to_ascii_uppercase().as_str() {
            "X86" => Some(Dialect::X86),
            "PTX" => Some(Dialect::Ptx),
            "C" => Some(Dialect::C),
            "OPENCL" => Some(Dialect::OpenCl),
            _ => None,
        }
    }
}

/// A parsed vocabulary.
#[derive(Clone, Debug)]
pub struct Vocab {
    pub name: String,
    pub dialect: Dialect,
    /// Events an RMW counts for (1 or 2).
    pub rmw_events: usize,
    /// Scope names, narrowest first.
    pub scopes: Vec<String>,
    pub entries: Vec<Entry>,
    /// Per entry, the one strongest entry above it in the lattice (itself
    /// when nothing is above it), or `None` when several are.
    pub tops: Vec<Option<usize>>,
    /// Per entry, the one weakest entry below it in the lattice (itself
    /// when nothing is below it), or `None` when several are.
    pub bottoms: Vec<Option<usize>>,
    /// Per entry, the length of the longest chain of `weaker` steps below
    /// it (an entry one step stronger than another is higher).
    pub heights: Vec<usize>,
    /// A number no other vocabulary loaded by this process has (caches
    /// keyed by programs tell vocabularies apart by it).
    pub uid: u64,
}

/// A vocabulary error: `file:line:col: message`.
#[derive(Debug)]
pub struct VocabError {
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl fmt::Display for VocabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.col, self.message
        )
    }
}

/// Built-in vocabularies, by name (`vocab/*.vocab`).
pub const BUILTINS: &[(&str, &str)] = &[
    ("x86", include_str!("../../vocab/x86.vocab")),
    ("ptx", include_str!("../../vocab/ptx.vocab")),
    ("c11", include_str!("../../vocab/c11.vocab")),
    ("opencl", include_str!("../../vocab/opencl.vocab")),
];

/// The built-in vocabulary named `spec`, or the file at path `spec`.
pub fn load(spec: &str) -> Result<Vocab, String> {
    if let Some((name, text)) = BUILTINS.iter().find(|(n, _)| *n == spec) {
        return parse(&format!("vocab/{name}.vocab"), text).map_err(|e| e.to_string());
    }
    let text = std::fs::read_to_string(spec).map_err(|e| {
        let names: Vec<&str> = BUILTINS.iter().map(|b| b.0).collect();
        format!(
            "no vocabulary '{spec}' (built-in: {}; or a file): {e}",
            names.join(", ")
        )
    })?;
    parse(spec, &text).map_err(|e| e.to_string())
}

/// The default vocabulary of a dialect.
pub fn default_for(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::X86 => "x86",
        Dialect::Ptx => "ptx",
        Dialect::C => "c11",
        Dialect::OpenCl => "opencl",
    }
}

/// Splits a line into words and quoted strings, with their columns.
/// A template's operand slots and its optional RMW pairing, once resolved.
type Resolved = (Vec<usize>, Option<(usize, usize)>);

/// A line's words with their columns and whether each was quoted.
type Words = Vec<(usize, String, bool)>;

fn words(line: &str) -> Result<Words, (usize, String)> {
    let mut out = Vec::new();
    let b: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_whitespace() {
            i += 1;
            continue;
        }
        if b[i] == '#' {
            break;
        }
        let start = i;
        if b[i] == '"' {
            i += 1;
            let mut s = String::new();
            while i < b.len() && b[i] != '"' {
                s.push(b[i]);
                i += 1;
            }
            if i == b.len() {
                return Err((start + 1, "unterminated string".into()));
            }
            i += 1;
            out.push((start + 1, s, true));
        } else {
            let mut s = String::new();
            while i < b.len() && !b[i].is_whitespace() && b[i] != '#' {
                s.push(b[i]);
                i += 1;
            }
            out.push((start + 1, s, false));
        }
    }
    Ok(out)
}

/// An entry line before names are resolved.
struct RawEntry {
    kind: OpKind,
    adds: bool,
    name: String,
    lines: Vec<String>,
    weaker: Vec<(String, usize, usize)>,
    split: Option<(String, String, usize, usize)>,
    line: usize,
}

/// Parses a vocabulary file.
pub fn parse(file: &str, text: &str) -> Result<Vocab, VocabError> {
    let err = |line: usize, col: usize, message: String| VocabError {
        file: file.to_string(),
        line,
        col,
        message,
    };
    let mut name = None;
    let mut dialect = None;
    let mut rmw_events = 1;
    let mut scopes: Vec<String> = Vec::new();
    let mut raws: Vec<RawEntry> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let ln = n + 1;
        let ws = words(line).map_err(|(c, m)| err(ln, c, m))?;
        let Some((col, head, _)) = ws.first() else {
            continue;
        };
        let arg = |k: usize| -> Result<&(usize, String, bool), VocabError> {
            ws.get(k)
                .ok_or_else(|| err(ln, line.len() + 1, format!("'{head}' needs an argument")))
        };
        match head.as_str() {
            "vocab" => name = Some(arg(1)?.1.clone()),
            "arch" => {
                let (c, a, _) = arg(1)?;
                dialect = Some(Dialect::parse(a).ok_or_else(|| {
                    err(
                        ln,
                        *c,
                        format!("unknown arch '{a}': expected X86, PTX, C or OpenCL"),
                    )
                })?);
            }
            "rmw-events" => {
                let (c, a, _) = arg(1)?;
                rmw_events = match a.as_str() {
                    "1" => 1,
                    "2" => 2,
                    _ => return Err(err(ln, *c, format!("rmw-events is 1 or 2, not '{a}'"))),
                };
            }
            "scopes" => scopes = ws[1..].iter().map(|w| w.1.clone()).collect(),
            "load" | "store" | "rmw" | "add" | "fence" => {
                let kind = match head.as_str() {
                    "load" => OpKind::Load,
                    "store" => OpKind::Store,
                    "rmw" | "add" => OpKind::Rmw,
                    _ => OpKind::Fence,
                };
                let adds = head == "add";
                let (_, ename, _) = arg(1)?;
                let mut lines = Vec::new();
                let mut weaker = Vec::new();
                let mut split = None;
                let mut k = 2;
                while k < ws.len() {
                    let (c, w, quoted) = &ws[k];
                    if *quoted {
                        lines.push(w.clone());
                        k += 1;
                    } else if w == "weaker" {
                        let (c2, t, _) = arg(k + 1)?;
                        weaker.push((t.clone(), ln, *c2));
                        k += 2;
                    } else if w == "split" {
                        if kind != OpKind::Rmw || adds {
                            return Err(err(
                                ln,
                                *c,
                                "only an rmw entry splits (an add's write depends on its read)"
                                    .into(),
                            ));
                        }
                        let (c2, r, _) = arg(k + 1)?;
                        let (_, w2, _) = arg(k + 2)?;
                        split = Some((r.clone(), w2.clone(), ln, *c2));
                        k += 3;
                    } else {
                        return Err(err(
                            ln,
                            *c,
                            format!(
                                "unexpected '{w}': expected a quoted line, 'weaker NAME' or 'split READ WRITE'"
                            ),
                        ));
                    }
                }
                if lines.is_empty() {
                    return Err(err(ln, *col, format!("entry '{ename}' has no quoted line")));
                }
                raws.push(RawEntry {
                    kind,
                    adds,
                    name: ename.clone(),
                    lines,
                    weaker,
                    split,
                    line: ln,
                });
            }
            _ => {
                return Err(err(
                    ln,
                    *col,
                    format!(
                        "unknown directive '{head}': expected vocab, arch, rmw-events, scopes, load, store, rmw, add or fence"
                    ),
                ));
            }
        }
    }
    let dialect = dialect.ok_or_else(|| err(1, 1, "no 'arch' line".into()))?;
    // Expand `{s}` entries per scope.
    let mut entries: Vec<Entry> = Vec::new();
    let mut origin: Vec<(usize, u8)> = Vec::new();
    for (ri, r) in raws.iter().enumerate() {
        if r.name.contains("{s}") {
            if scopes.is_empty() {
                return Err(err(
                    r.line,
                    1,
                    format!("'{}' has a scope but no 'scopes' line precedes", r.name),
                ));
            }
            for (si, s) in scopes.iter().enumerate() {
                entries.push(Entry {
                    kind: r.kind,
                    name: r.name.replace("{s}", s),
                    scope: si as u8 + 1,
                    lines: r.lines.iter().map(|l| l.replace("{s}", s)).collect(),
                    weaker: Vec::new(),
                    split: None,
                    adds: r.adds,
                });
                origin.push((ri, si as u8 + 1));
            }
        } else {
            entries.push(Entry {
                kind: r.kind,
                name: r.name.clone(),
                scope: 0,
                lines: r.lines.clone(),
                weaker: Vec::new(),
                split: None,
                adds: r.adds,
            });
            origin.push((ri, 0));
        }
    }
    let find = |name: &str, scope: u8, line: usize, col: usize| -> Result<usize, VocabError> {
        let full = if scope > 0 {
            name.replace("{s}", &scopes[scope as usize - 1])
        } else {
            name.to_string()
        };
        entries
            .iter()
            .position(|e| e.name == full)
            .ok_or_else(|| err(line, col, format!("no entry '{full}'")))
    };
    let mut resolved: Vec<Resolved> = Vec::new();
    for &(ri, scope) in &origin {
        let r = &raws[ri];
        let mut weaker = Vec::new();
        for (t, l, c) in &r.weaker {
            let j = find(t, scope, *l, *c)?;
            if entries[j].kind != r.kind || entries[j].adds != r.adds {
                let what = if r.adds {
                    "an add".to_string()
                } else {
                    format!("a {:?}", r.kind)
                };
                return Err(err(*l, *c, format!("'{t}' is not {what} entry")));
            }
            weaker.push(j);
        }
        if scope > 1 {
            weaker.push(find(&r.name, scope - 1, r.line, 1)?);
        }
        let split = match &r.split {
            Some((rd, wr, l, c)) => {
                let a = find(rd, scope, *l, *c)?;
                let b = find(wr, scope, *l, *c)?;
                if entries[a].kind != OpKind::Load || entries[b].kind != OpKind::Store {
                    return Err(err(*l, *c, "split names a load and a store".into()));
                }
                Some((a, b))
            }
            None => None,
        };
        resolved.push((weaker, split));
    }
    for (e, (weaker, split)) in entries.iter_mut().zip(resolved) {
        e.weaker = weaker;
        e.split = split;
    }
    if let Some(e) = on_a_cycle(&entries) {
        let r = &raws[origin[e].0];
        return Err(err(
            r.line,
            1,
            format!(
                "'{}' is weaker than itself through 'weaker' steps (the lattice must have no cycle)",
                entries[e].name
            ),
        ));
    }
    if entries.len() > 200 {
        return Err(err(1, 1, "more than 200 entries".into()));
    }
    let tops = tops(&entries);
    let bottoms = bottoms(&entries);
    let heights = heights(&entries);
    Ok(Vocab {
        name: name.unwrap_or_else(|| file.to_string()),
        dialect,
        rmw_events,
        scopes,
        entries,
        tops,
        bottoms,
        heights,
        uid: {
            static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        },
    })
}

/// An entry on a cycle of `weaker` steps, if there is one.
fn on_a_cycle(entries: &[Entry]) -> Option<usize> {
    // 0: not met; 1: on the current path; 2: done, on no cycle.
    let mut state = vec![0u8; entries.len()];
    for start in 0..entries.len() {
        if state[start] != 0 {
            continue;
        }
        // Depth first, each frame an entry and its next `weaker` step.
        let mut stack = vec![(start, 0usize)];
        state[start] = 1;
        while let Some(&mut (e, ref mut next)) = stack.last_mut() {
            if let Some(&w) = entries[e].weaker.get(*next) {
                *next += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        stack.push((w, 0));
                    }
                    1 => return Some(w),
                    _ => {}
                }
            } else {
                state[e] = 2;
                stack.pop();
            }
        }
    }
    None
}

/// Per entry, the longest chain of `weaker` steps below it (the entries
/// have no cycle of them: [`on_a_cycle`]).
fn heights(entries: &[Entry]) -> Vec<usize> {
    fn height(entries: &[Entry], e: usize, memo: &mut [Option<usize>]) -> usize {
        if let Some(h) = memo[e] {
            return h;
        }
        let h = entries[e]
            .weaker
            .iter()
            .map(|&w| height(entries, w, memo) + 1)
            .max()
            .unwrap_or(0);
        memo[e] = Some(h);
        h
    }
    let mut memo = vec![None; entries.len()];
    (0..entries.len())
        .map(|e| height(entries, e, &mut memo))
        .collect()
}

/// Per entry, the one maximal entry from which it is reached by `weaker`
/// steps (itself when none is above it), or `None` when several are.
fn tops(entries: &[Entry]) -> Vec<Option<usize>> {
    // Entries directly above each entry.
    let mut above: Vec<Vec<usize>> = vec![Vec::new(); entries.len()];
    for (i, e) in entries.iter().enumerate() {
        for &w in &e.weaker {
            above[w].push(i);
        }
    }
    extremes(&above)
}

/// Per entry, the one minimal entry it reaches by `weaker` steps (itself
/// when none is below it), or `None` when several are.
fn bottoms(entries: &[Entry]) -> Vec<Option<usize>> {
    let below: Vec<Vec<usize>> = entries.iter().map(|e| e.weaker.clone()).collect();
    extremes(&below)
}

/// Per node of the graph `next` (its successors per node), the one node
/// without successors that it reaches (itself when it has none), or
/// `None` when it reaches several.
fn extremes(next: &[Vec<usize>]) -> Vec<Option<usize>> {
    (0..next.len())
        .map(|e| {
            let mut seen = vec![false; next.len()];
            let mut stack = vec![e];
            let mut last = Vec::new();
            while let Some(x) = stack.pop() {
                if std::mem::replace(&mut seen[x], true) {
                    continue;
                }
                if next[x].is_empty() {
                    last.push(x);
                }
                stack.extend(next[x].iter().copied());
            }
            (last.len() == 1).then(|| last[0])
        })
        .collect()
}

#[cfg(test)]
impl Vocab {
    /// The index of the entry named `name` (tests build programs by name).
    pub(crate) fn entry_named(&self, name: &str) -> usize {
        self.entries
            .iter()
            .position(|x| x.name == name)
            .unwrap_or_else(|| panic!("no entry {name} in {}", self.name))
    }
}

impl Vocab {
    /// Entries of a kind, in file order.
    pub fn of_kind(&self, kind: OpKind) -> Vec<usize> {
        (0..self.entries.len())
            .filter(|&i| self.entries[i].kind == kind)
            .collect()
    }

    /// Whether the vocabulary has entries of `kind`.
    pub fn has(&self, kind: OpKind) -> bool {
        self.entries.iter().any(|e| e.kind == kind)
    }

    /// Events an operation of `kind` counts for.
    pub fn events(&self, kind: OpKind) -> usize {
        if kind == OpKind::Rmw {
            self.rmw_events
        } else {
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse() {
        for (name, _) in BUILTINS {
            let v = load(name).unwrap_or_else(|e| panic!("{e}"));
            assert!(!v.entries.is_empty());
        }
    }

    /// The weakest entry below each: one per chain of orders and scopes,
    /// none when two minimal entries lie below.
    #[test]
    fn weakest_entries_below() {
        let v = load("ptx").unwrap();
        let e = |n: &str| v.entry_named(n);
        for (entry, bottom) in [
            ("ld.acquire.sys", "ld.weak"),
            ("st.weak", "st.weak"),
            ("fence.sc.sys", "fence.acq_rel.cta"),
            ("atom.acq_rel.gpu.exch", "atom.relaxed.cta.exch"),
            ("atom.acq_rel.sys.add", "atom.relaxed.cta.add"),
        ] {
            assert_eq!(v.bottoms[e(entry)], Some(e(bottom)), "{entry}");
        }
        assert_eq!(v.tops[e("ld.weak")], Some(e("ld.acquire.sys")));
        let x86 = load("x86").unwrap();
        let xchg = x86.entry_named("XCHG");
        assert_eq!(x86.bottoms[xchg], Some(xchg));
        let two = parse(
            "t.vocab",
            "arch X86\nload A \"a\"\nload B \"b\"\nload C \"c\" weaker A weaker B\n",
        )
        .unwrap();
        assert_eq!(two.bottoms[two.entry_named("C")], None);
        assert_eq!(two.tops[two.entry_named("A")], Some(two.entry_named("C")));
    }

    #[test]
    fn errors_point_at_line_and_column() {
        let e = parse("t.vocab", "arch X86\nload R \"MOV {r},[{x}]\" weaker Q\n").unwrap_err();
        // `Q` is the 31st character of line 2.
        assert_eq!((e.line, e.col), (2, 31), "{e}");
        let e = parse("t.vocab", "arch Z80\n").unwrap_err();
        assert_eq!((e.line, e.col), (1, 6), "{e}");
        let e = parse("t.vocab", "arch X86\nlod R \"x\"\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 1), "{e}");
        // An add has no split, and its lattice stays among adds.
        let e = parse(
            "t.vocab",
            "arch PTX\nload L \"l\"\nstore S \"s\"\nadd A \"a\" split L S\n",
        )
        .unwrap_err();
        assert_eq!((e.line, e.col), (4, 11), "{e}");
        assert!(e.message.contains("only an rmw entry splits"), "{e}");
        let e = parse("t.vocab", "arch PTX\nrmw X \"x\"\nadd A \"a\" weaker X\n").unwrap_err();
        assert!(e.message.contains("is not an add entry"), "{e}");
    }

    /// `weaker` steps in a cycle make no lattice (the lattice cut needs one):
    /// refused at an entry on the cycle; the same steps without the cycle
    /// are accepted.
    #[test]
    fn a_cycle_of_weaker_steps_is_refused() {
        let e = parse(
            "t.vocab",
            "arch X86\nload A \"a\" weaker B\nload B \"b\" weaker C\nload C \"c\" weaker A\n",
        )
        .unwrap_err();
        assert!(e.message.contains("weaker than itself"), "{e}");
        assert!((2..=4).contains(&e.line), "{e}");
        let v = parse(
            "t.vocab",
            "arch X86\nload A \"a\" weaker B\nload B \"b\" weaker C\nload C \"c\"\n",
        )
        .unwrap();
        assert_eq!(v.entries[0].weaker, vec![1]);
    }
}
