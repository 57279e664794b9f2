//! Structured control flow rebuilt from a lowered C thread: runs of
//! branches to a later label become `if` (and `if ... else` when the
//! skipped part ends with a jump over an `else` part), a label whose one
//! backward jump closes the loop becomes `while` or `do ... while`; a part
//! is structured only when no other jump enters or leaves it, and what is
//! left stays `if (c) goto L;`, `goto L;` and `L: ;`. The C front end
//! lowers each form back to the same branches and labels.

use std::collections::HashMap;
use std::fmt::Write as _;

/// A statement of the rebuilt thread body.
pub(super) enum Node {
    Line(String),
    If(String, Vec<Node>, Vec<Node>),
    While(String, Vec<Node>),
    DoWhile(Vec<Node>, String),
    Goto(String),
    IfGoto(String, String),
    Label(String),
}

/// An instruction after the statement rebuilding: a finished line, or
/// control flow still to be structured. A branch keeps the comparison
/// that jumps and its negation (the condition of an `if` that skips).
pub(super) enum Item {
    Line(String),
    Branch {
        jump: String,
        stay: String,
        target: String,
    },
    Goto(String),
    Label(String),
}

impl Item {
    fn target(&self) -> Option<&str> {
        match self {
            Item::Branch { target, .. } | Item::Goto(target) => Some(target),
            _ => None,
        }
    }
}

/// Rebuilds `if`, `while` and `do ... while` from branches and labels.
pub(super) struct Structurer<'i> {
    items: &'i [Item],
    /// Label → where it is defined.
    def: HashMap<&'i str, usize>,
    /// Label → the jumps to it, in order.
    refs: HashMap<&'i str, Vec<usize>>,
}

impl<'i> Structurer<'i> {
    pub(super) fn new(items: &'i [Item]) -> Self {
        let mut def = HashMap::new();
        let mut refs: HashMap<&str, Vec<usize>> = HashMap::new();
        for (k, it) in items.iter().enumerate() {
            if let Item::Label(l) = it {
                def.insert(l.as_str(), k);
            }
            if let Some(t) = it.target() {
                refs.entry(t).or_default().push(k);
            }
        }
        Structurer { items, def, refs }
    }

    fn refs(&self, l: &str) -> &[usize] {
        self.refs.get(l).map_or(&[], Vec::as_slice)
    }

    /// Whether no jump enters or leaves `items[lo..hi]`.
    fn closed(&self, lo: usize, hi: usize) -> bool {
        let inside = |k: usize| lo <= k && k < hi;
        self.items[lo..hi].iter().all(|it| match it {
            Item::Label(l) => self.refs(l).iter().all(|&k| inside(k)),
            _ => it
                .target()
                .is_none_or(|t| self.def.get(t).is_some_and(|&k| inside(k))),
        })
    }

    /// The run of branches to `target` that starts at `k`: its end, and
    /// whether it is every jump to `target`.
    fn run(&self, k: usize, target: &str) -> (usize, bool) {
        let mut end = k;
        while let Some(Item::Branch { target: t, .. }) = self.items.get(end) {
            if t != target {
                break;
            }
            end += 1;
        }
        let all = self.refs(target) == (k..end).collect::<Vec<_>>().as_slice();
        (end, all)
    }

    /// The conditions of the branches in `items[a..b]`, joined by `op`:
    /// the jumping ones, or their negations.
    fn joined(&self, a: usize, b: usize, jump: bool, op: &str) -> String {
        let parts: Vec<&str> = self.items[a..b]
            .iter()
            .filter_map(|it| match it {
                Item::Branch { jump: j, stay, .. } => Some(if jump { j } else { stay }.as_str()),
                _ => None,
            })
            .collect();
        parts.join(op)
    }

    pub(super) fn nodes(&self, lo: usize, hi: usize) -> Vec<Node> {
        let mut out = Vec::new();
        let mut i = lo;
        while i < hi {
            let (node, next) = self.node(i, hi);
            out.push(node);
            i = next;
        }
        out
    }

    /// The node starting at `items[i]` (within `hi`) and where the next
    /// one starts.
    fn node(&self, i: usize, hi: usize) -> (Node, usize) {
        match &self.items[i] {
            Item::Line(s) => (Node::Line(s.clone()), i + 1),
            Item::Goto(l) => (Node::Goto(l.clone()), i + 1),
            Item::Label(top) => self
                .looping(i, top, hi)
                .unwrap_or((Node::Label(top.clone()), i + 1)),
            Item::Branch { jump, target, .. } => self
                .branching(i, target, hi)
                .unwrap_or((Node::IfGoto(jump.clone(), target.clone()), i + 1)),
        }
    }

    /// `while (c) { body }`: `top: if (!c) goto end; body; goto top; end:`,
    /// or `do { body } while (c)`: `top: body; if (c) goto top;`.
    fn looping(&self, i: usize, top: &str, hi: usize) -> Option<(Node, usize)> {
        let back = self.refs(top);
        let &last = back.last()?;
        if last <= i || last >= hi {
            return None;
        }
        if back.len() == 1
            && let Item::Goto(_) = self.items[last]
            && let Some(Item::Branch { target: end, .. }) = self.items.get(i + 1)
        {
            let (body, all) = self.run(i + 1, end);
            if all
                && self.def.get(end.as_str()) == Some(&(last + 1))
                && last + 1 < hi
                && self.closed(body, last)
            {
                let c = self.joined(i + 1, body, false, " && ");
                return Some((Node::While(c, self.nodes(body, last)), last + 2));
            }
        }
        // The back branches: one run ending the loop.
        let first = back[0];
        if first > i && self.run(first, top) == (last + 1, true) && self.closed(i + 1, first) {
            let c = self.joined(first, last + 1, true, " || ");
            return Some((Node::DoWhile(self.nodes(i + 1, first), c), last + 1));
        }
        None
    }

    /// `if (c) { then } [else { else }]` from a run of branches to a later
    /// label.
    fn branching(&self, i: usize, target: &str, hi: usize) -> Option<(Node, usize)> {
        let (then, all) = self.run(i, target);
        let &j = self.def.get(target)?;
        if !all || j < then || j >= hi {
            return None;
        }
        let c = self.joined(i, then, false, " && ");
        if j > then
            && let Item::Goto(end) = &self.items[j - 1]
            && let Some(&e) = self.def.get(end.as_str())
            && e > j
            && e < hi
            && self.refs(end) == [j - 1]
            && self.closed(then, j - 1)
            && self.closed(j + 1, e)
        {
            let node = Node::If(c, self.nodes(then, j - 1), self.nodes(j + 1, e));
            return Some((node, e + 1));
        }
        if self.closed(then, j) {
            return Some((Node::If(c, self.nodes(then, j), Vec::new()), j + 1));
        }
        None
    }
}

/// Writes `nodes` indented by `depth` levels, labels renamed `L0`, ... in
/// order of first mention.
pub(super) fn write_nodes(
    nodes: &[Node],
    depth: usize,
    labels: &mut HashMap<String, String>,
    out: &mut String,
) {
    let pad = "  ".repeat(depth);
    fn name(labels: &mut HashMap<String, String>, l: &str) -> String {
        let n = labels.len();
        labels
            .entry(l.to_string())
            .or_insert_with(|| format!("L{n}"))
            .clone()
    }
    for node in nodes {
        match node {
            Node::Line(s) => {
                let _ = writeln!(out, "{pad}{s}");
            }
            Node::Goto(l) => {
                let _ = writeln!(out, "{pad}goto {};", name(labels, l));
            }
            Node::IfGoto(c, l) => {
                let _ = writeln!(out, "{pad}if ({c}) goto {};", name(labels, l));
            }
            Node::Label(l) => {
                let _ = writeln!(out, "{pad}{}: ;", name(labels, l));
            }
            Node::If(c, then, els) => {
                let _ = write!(out, "{pad}if ({c}) ");
                block(then, depth, labels, out);
                if !els.is_empty() {
                    out.push_str(" else ");
                    block(els, depth, labels, out);
                }
                out.push('\n');
            }
            Node::While(c, body) => {
                let _ = write!(out, "{pad}while ({c}) ");
                block(body, depth, labels, out);
                out.push('\n');
            }
            Node::DoWhile(body, c) => {
                let _ = write!(out, "{pad}do ");
                block(body, depth, labels, out);
                let _ = writeln!(out, " while ({c});");
            }
        }
    }
}

/// `{ ... }` around `nodes` (`{}` when empty), the closing brace at
/// `depth`, no newline after it.
fn block(nodes: &[Node], depth: usize, labels: &mut HashMap<String, String>, out: &mut String) {
    if nodes.is_empty() {
        out.push_str("{}");
        return;
    }
    out.push_str("{\n");
    write_nodes(nodes, depth + 1, labels, out);
    let _ = write!(out, "{}}}", "  ".repeat(depth));
}
