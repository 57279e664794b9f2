//! The mapping file format (docs/mappings.md): a line-oriented list of
//! settings and rules, parsed into a [`Mapping`] with errors that point at
//! `file:line:col`.
//!
//! ```text
//! mapping sc11-ptx                       # name
//! description "..."                      # one line for `litmix mappings`
//! source sc11                            # model of the source language
//! target ptx6                            # model (or machine) of the target
//! arch PTX                               # first word of compiled tests
//! thread gpu = P{t}@cta {wg},gpu {dev}   # header of a GPU-placed thread
//! register gpu = r{n}                    # target register names
//! scope wg = cta                         # {sco} for a source scope
//! op exch = exch                         # {op} for an RMW operation
//! undefined data-race heterogeneous-race # source flags meaning "racy"
//! load sc => fence.sc.{sco}; ld.acquire.{sco} {r}, [{x}]
//! ```

use crate::diag::Diagnostic;
use crate::ir::Pos;

/// What kind of source construct a rule matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Load,
    Store,
    Rmw,
    Fence,
    /// Register move of a value (`int r = 1;`).
    Mov,
    /// Conditional branch (`if`), with `{a}`, `{b}`, `{cmp}` (the mapping's
    /// `cmp` table entry), `{cond}` (the comparison's own name: `eq`, `ne`,
    /// `lt`, `le`, `gt`, `ge`) and `{label}`.
    Branch,
    /// Unconditional jump, with `{label}`.
    Goto,
    /// A jump target, with `{label}`.
    Label,
}

impl Kind {
    /// Every kind with its keyword.
    pub const ALL: &'static [(Kind, &'static str)] = &[
        (Kind::Load, "load"),
        (Kind::Store, "store"),
        (Kind::Rmw, "rmw"),
        (Kind::Fence, "fence"),
        (Kind::Mov, "mov"),
        (Kind::Branch, "branch"),
        (Kind::Goto, "goto"),
        (Kind::Label, "label"),
    ];

    /// The keyword of this kind.
    pub fn name(self) -> &'static str {
        Kind::ALL
            .iter()
            .find(|(k, _)| *k == self)
            .map(|(_, n)| *n)
            .unwrap_or("?")
    }

    /// Whether rules of this kind take memory orders.
    pub fn has_order(self) -> bool {
        matches!(self, Kind::Load | Kind::Store | Kind::Rmw | Kind::Fence)
    }
}

/// Source memory orders, in the order used for enumeration.
pub const ORDERS: &[&str] = &["na", "rlx", "acq", "rel", "acq_rel", "sc"];

/// Placement classes of source threads: a thread placed on a `cpu` level is
/// `cpu`, every other thread `gpu`. `thread`/`register` lines may also name
/// `default`, used for a class without a line of its own.
pub const CLASSES: &[&str] = &["cpu", "gpu", "default"];

/// RMW operations a rule or an `op` line may name.
pub const OPS: &[&str] = &[
    "add", "sub", "and", "or", "xor", "min", "max", "exch", "cas", "inc", "dec",
];

/// Source scope names.
pub const SCOPES: &[&str] = &["wi", "wg", "dev", "sys"];

/// A rule's matching conditions beyond its kind and orders.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Guard {
    /// Placement classes (`on=cpu`); empty = any.
    pub on: Vec<String>,
    /// Source scopes (`scope=wg,dev`); empty = any.
    pub scope: Vec<String>,
    /// RMW operations (`op=add,exch`); empty = any.
    pub op: Vec<String>,
    /// `remote=yes` / `remote=no`; None = any.
    pub remote: Option<bool>,
    /// Memory regions (`region=global`); empty = any.
    pub region: Vec<String>,
}

/// One rule: a source construct and its target instruction sequence.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub kind: Kind,
    /// Orders matched (lower case); empty = any (`*`).
    pub orders: Vec<String>,
    pub guard: Guard,
    /// Target instructions, each a template with `{placeholders}`; empty
    /// means the construct compiles to nothing (e.g. `fence acq on=cpu =>`).
    pub target: Vec<String>,
    /// Where the rule is written, for errors and `litmix mappings --show`.
    pub pos: Pos,
}

/// A parsed mapping file.
#[derive(Clone, Debug, PartialEq)]
pub struct Mapping {
    pub name: String,
    pub description: String,
    /// The file it came from (`<builtin NAME.map>` for built-ins).
    pub file: String,
    /// Source model (built-in name or `.cat` path).
    pub source: String,
    /// Target model or machine.
    pub target: String,
    /// First word of compiled tests (`PTX`, `X86`, `X86+PTX`, ...).
    pub arch: String,
    /// Thread header template per placement class.
    pub threads: Vec<(String, String)>,
    /// Register names per placement class: a template with `{n}` or a list.
    pub registers: Vec<(String, Vec<String>)>,
    /// Source scope -> target scope text.
    pub scopes: Vec<(String, String)>,
    /// RMW operation -> target text.
    pub ops: Vec<(String, String)>,
    /// Comparison -> target text (for `branch` rules).
    pub cmps: Vec<(String, String)>,
    /// Source flags meaning the program is undefined; empty = every flag.
    pub undefined: Vec<String>,
    pub rules: Vec<Rule>,
}

/// Placeholders a target template may use.
pub const PLACEHOLDERS: &[&str] = &[
    "x", "r", "v", "sco", "op", "exp", "new", "a", "b", "cmp", "cond", "label",
];

/// Thread-header placeholders.
pub const HEADER_PLACEHOLDERS: &[&str] = &["t", "wg", "dev", "cpu"];

impl Mapping {
    /// The first rule matching, or None.
    pub fn rule(&self, kind: Kind, m: &Construct<'_>) -> Option<&Rule> {
        self.rules.iter().find(|r| {
            r.kind == kind
                && (r.orders.is_empty() || r.orders.iter().any(|o| o == m.order))
                && (r.guard.on.is_empty() || r.guard.on.iter().any(|o| o == m.class))
                && (r.guard.scope.is_empty()
                    || m.scope
                        .is_some_and(|s| r.guard.scope.iter().any(|g| g == s)))
                && (r.guard.op.is_empty()
                    || m.op.is_some_and(|s| r.guard.op.iter().any(|g| g == s)))
                && r.guard.remote.is_none_or(|want| want == m.remote)
                && (r.guard.region.is_empty()
                    || m.region
                        .is_some_and(|s| r.guard.region.iter().any(|g| g == s)))
        })
    }

    /// The header template for a placement class.
    pub fn thread_header(&self, class: &str) -> Option<&str> {
        lookup(&self.threads, class).or_else(|| lookup(&self.threads, "default"))
    }

    /// Register names for a placement class (or `default`).
    pub fn register_names(&self, class: &str) -> &[String] {
        let find = |c: &str| self.registers.iter().find(|(k, _)| k == c);
        find(class)
            .or_else(|| find("default"))
            .map(|(_, v)| v.as_slice())
            .unwrap_or(&[])
    }

    /// `{sco}` for a source scope.
    pub fn scope(&self, s: &str) -> Option<&str> {
        lookup(&self.scopes, s)
    }

    /// `{op}` for an RMW operation.
    pub fn op(&self, s: &str) -> Option<&str> {
        lookup(&self.ops, s)
    }

    /// `{cmp}` for a comparison.
    pub fn comparison(&self, s: &str) -> Option<&str> {
        lookup(&self.cmps, s)
    }

    /// Whether the source flag `flag` makes a program undefined.
    pub fn is_undefined_flag(&self, flag: &str) -> bool {
        self.undefined.is_empty() || self.undefined.iter().any(|f| f == flag)
    }

    /// Whether some rule selects by scope (then scope annotations are not
    /// interchangeable and the enumeration keeps them all).
    pub fn scope_selective(&self) -> bool {
        self.rules.iter().any(|r| !r.guard.scope.is_empty())
    }
}

fn lookup<'a>(table: &'a [(String, String)], key: &str) -> Option<&'a str> {
    table
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// What a rule is matched against: a source construct's attributes.
#[derive(Clone, Copy, Debug)]
pub struct Construct<'a> {
    pub order: &'a str,
    pub class: &'a str,
    pub scope: Option<&'a str>,
    pub op: Option<&'a str>,
    pub remote: bool,
    pub region: Option<&'a str>,
}

/// Parses a mapping file.
pub fn parse(file: &str, source: &str) -> Result<Mapping, Diagnostic> {
    let mut m = Mapping {
        name: String::new(),
        description: String::new(),
        file: file.to_string(),
        source: String::new(),
        target: String::new(),
        arch: String::new(),
        threads: Vec::new(),
        registers: Vec::new(),
        scopes: Vec::new(),
        ops: Vec::new(),
        cmps: Vec::new(),
        undefined: Vec::new(),
        rules: Vec::new(),
    };
    let mut seen: Vec<&str> = Vec::new();
    for (i, raw) in source.lines().enumerate() {
        let line = Line {
            file,
            source,
            no: i as u32 + 1,
            text: raw,
        };
        let body = strip_comment(raw);
        let Some((kw, kw_col)) = first_word(body) else {
            continue;
        };
        let rest_col = kw_col + kw.chars().count() as u32;
        let rest = &body[(rest_col - 1) as usize..];
        let single = |seen: &mut Vec<&str>, kw: &'static str| -> Result<(), Diagnostic> {
            if seen.contains(&kw) {
                return Err(line
                    .err(kw_col, format!("'{kw}' given twice"))
                    .expected("each of mapping, description, source, target, arch once"));
            }
            seen.push(kw);
            Ok(())
        };
        match kw {
            "mapping" => {
                single(&mut seen, "mapping")?;
                m.name = line.one_word(rest, rest_col, "a mapping name like sc11-ptx")?;
            }
            "description" => {
                single(&mut seen, "description")?;
                m.description = line.quoted(rest, rest_col)?;
            }
            "source" => {
                single(&mut seen, "source")?;
                m.source = line.one_word(rest, rest_col, "a source model like sc11")?;
            }
            "target" => {
                single(&mut seen, "target")?;
                m.target = line.one_word(rest, rest_col, "a target model like ptx6")?;
            }
            "arch" => {
                single(&mut seen, "arch")?;
                m.arch = line.one_word(rest, rest_col, "a litmus arch like PTX or X86+PTX")?;
            }
            "undefined" => {
                for (w, c) in words(rest, rest_col) {
                    if !w
                        .chars()
                        .all(|ch| ch.is_ascii_alphanumeric() || "-_".contains(ch))
                    {
                        return Err(line
                            .err(c, format!("'{w}' is not a flag name"))
                            .expected("flag names like data-race"));
                    }
                    m.undefined.push(w.to_string());
                }
            }
            "thread" | "register" | "scope" | "op" | "cmp" => {
                let (key, value, kc, vc) = line.assignment(rest, rest_col)?;
                let allowed: &[&str] = match kw {
                    "thread" | "register" => CLASSES,
                    "scope" => SCOPES,
                    "op" => OPS,
                    _ => &["eq", "ne", "lt", "le", "gt", "ge"],
                };
                if !allowed.contains(&key.as_str()) {
                    return Err(line
                        .err(kc, format!("unknown {kw} key '{key}'"))
                        .expected(allowed.join(", ")));
                }
                let table = match kw {
                    "thread" => &mut m.threads,
                    "scope" => &mut m.scopes,
                    "op" => &mut m.ops,
                    "cmp" => &mut m.cmps,
                    _ => {
                        let names: Vec<String> = if value.contains("{n}") {
                            line.check_placeholders(&value, vc, &["n"])?;
                            vec![value]
                        } else {
                            value
                                .split(',')
                                .map(|s| s.trim().to_string())
                                .filter(|s| !s.is_empty())
                                .collect()
                        };
                        if names.is_empty() {
                            return Err(line
                                .err(vc, "no register names")
                                .expected("a template like r{n} or a list like EAX,EBX"));
                        }
                        if m.registers.iter().any(|(k, _)| *k == key) {
                            return Err(line.err(kc, format!("register {key} given twice")));
                        }
                        m.registers.push((key, names));
                        continue;
                    }
                };
                if kw == "thread" {
                    line.check_placeholders(&value, vc, HEADER_PLACEHOLDERS)?;
                }
                if table.iter().any(|(k, _)| *k == key) {
                    return Err(line
                        .err(kc, format!("{kw} {key} given twice"))
                        .expected("each key once"));
                }
                table.push((key, value));
            }
            _ => {
                let Some(&(kind, _)) = Kind::ALL.iter().find(|(_, n)| *n == kw) else {
                    return Err(line.err(kw_col, format!("unknown keyword '{kw}'")).expected(
                        "mapping, description, source, target, arch, thread, register, scope, op, \
                         cmp, undefined, or a rule (load, store, rmw, fence, mov, branch, goto, label)",
                    ));
                };
                m.rules.push(line.rule(kind, rest, rest_col, kw_col)?);
            }
        }
    }
    let end = Pos {
        line: source.lines().count().max(1) as u32,
        col: 1,
    };
    for (what, val) in [
        ("mapping", &m.name),
        ("source", &m.source),
        ("target", &m.target),
        ("arch", &m.arch),
    ] {
        if val.is_empty() {
            return Err(Diagnostic::new(file, end, format!("missing '{what}' line"))
                .expected(format!("a line '{what} ...'")));
        }
    }
    if m.threads.is_empty() {
        return Err(Diagnostic::new(file, end, "missing 'thread' line")
            .expected("at least one thread header, like 'thread gpu = P{t}@cta {wg},gpu {dev}'"));
    }
    for (class, _) in &m.threads {
        if !m.registers.iter().any(|(k, _)| k == class) {
            return Err(
                Diagnostic::new(file, end, format!("missing 'register {class}' line")).expected(
                    format!("register names for {class} threads, like 'register {class} = r{{n}}'"),
                ),
            );
        }
    }
    Ok(m)
}

/// Removes a `#` comment (outside double quotes).
fn strip_comment(line: &str) -> &str {
    let mut in_quote = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => in_quote = !in_quote,
            '#' if !in_quote => return &line[..i],
            _ => {}
        }
    }
    line
}

/// The first whitespace-separated word and its 1-based column.
fn first_word(s: &str) -> Option<(&str, u32)> {
    words(s, 1).next()
}

/// Whitespace-separated words with their 1-based columns (`base` is the
/// column of `s`'s first character).
fn words(s: &str, base: u32) -> impl Iterator<Item = (&str, u32)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in s.char_indices().chain(std::iter::once((s.len(), ' '))) {
        if c.is_whitespace() {
            if let Some(st) = start.take() {
                out.push((&s[st..i], base + s[..st].chars().count() as u32));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    out.into_iter()
}

struct Line<'a> {
    file: &'a str,
    source: &'a str,
    no: u32,
    text: &'a str,
}

impl Line<'_> {
    fn err(&self, col: u32, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.file, Pos { line: self.no, col }, msg).with_source(self.source)
    }

    fn end_col(&self) -> u32 {
        strip_comment(self.text).trim_end().chars().count() as u32 + 1
    }

    fn one_word(&self, rest: &str, col: u32, what: &str) -> Result<String, Diagnostic> {
        let ws: Vec<_> = words(rest, col).collect();
        match ws.as_slice() {
            [(w, _)] => Ok(w.to_string()),
            [] => Err(self
                .err(self.end_col(), "missing value")
                .expected(what.to_string())),
            [_, (w, c), ..] => Err(self
                .err(*c, format!("unexpected '{w}'"))
                .expected(format!("one word: {what}"))),
        }
    }

    fn quoted(&self, rest: &str, col: u32) -> Result<String, Diagnostic> {
        let t = rest.trim();
        let lead = rest.len() - rest.trim_start().len();
        let c = col + rest[..lead].chars().count() as u32;
        if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') {
            Ok(t[1..t.len() - 1].to_string())
        } else {
            Err(self
                .err(c, "description must be quoted")
                .expected("a description in double quotes"))
        }
    }

    /// `key = value`.
    fn assignment(&self, rest: &str, col: u32) -> Result<(String, String, u32, u32), Diagnostic> {
        let Some(eq) = rest.find('=') else {
            return Err(self
                .err(self.end_col(), "missing '='")
                .expected("'KEY = VALUE'"));
        };
        let key_part = &rest[..eq];
        let ws: Vec<_> = words(key_part, col).collect();
        let (key, kc) = match ws.as_slice() {
            [(k, c)] => (k.to_string(), *c),
            [] => {
                return Err(self
                    .err(
                        col + key_part.chars().count() as u32,
                        "missing key before '='",
                    )
                    .expected("a key like gpu, wg or add"));
            }
            [_, (w, c), ..] => {
                return Err(self
                    .err(*c, format!("unexpected '{w}'"))
                    .expected("one key before '='"));
            }
        };
        let val_part = &rest[eq + 1..];
        let lead = val_part.len() - val_part.trim_start().len();
        let vc = col + rest[..eq + 1 + lead].chars().count() as u32;
        let value = val_part.trim().to_string();
        if value.is_empty() {
            return Err(self
                .err(self.end_col(), "missing value after '='")
                .expected("a value"));
        }
        Ok((key, value, kc, vc))
    }

    /// Checks that every `{name}` in `t` (at column `col`) is allowed.
    fn check_placeholders(&self, t: &str, col: u32, allowed: &[&str]) -> Result<(), Diagnostic> {
        let mut rest = t;
        let mut off = 0usize;
        while let Some(i) = rest.find('{') {
            let c = col + t[..off + i].chars().count() as u32;
            let Some(j) = rest[i..].find('}') else {
                return Err(self
                    .err(c, "unclosed '{'")
                    .expected("'}' closing the placeholder"));
            };
            let name = &rest[i + 1..i + j];
            if !allowed.contains(&name) {
                return Err(self
                    .err(c, format!("unknown placeholder '{{{name}}}'"))
                    .expected(
                        allowed
                            .iter()
                            .map(|a| format!("{{{a}}}"))
                            .collect::<Vec<_>>()
                            .join(", "),
                    ));
            }
            off += i + j + 1;
            rest = &rest[i + j + 1..];
        }
        if let Some(i) = rest.find('}') {
            let c = col + t[..off + i].chars().count() as u32;
            return Err(self
                .err(c, "'}' without '{'")
                .expected("a placeholder like {x}"));
        }
        Ok(())
    }

    /// `ORDERS [attr=value ...] => instr; instr`.
    fn rule(&self, kind: Kind, rest: &str, col: u32, kw_col: u32) -> Result<Rule, Diagnostic> {
        let Some(arrow) = rest.find("=>") else {
            return Err(self
                .err(self.end_col(), "missing '=>'")
                .expected("'=> target instructions' (nothing after '=>' compiles to nothing)"));
        };
        let lhs: Vec<_> = words(&rest[..arrow], col).collect();
        let mut it = lhs.into_iter();
        let mut orders = Vec::new();
        if kind.has_order() {
            let Some((o, oc)) = it.next() else {
                return Err(self
                    .err(
                        col + arrow as u32,
                        format!("missing memory orders after '{}'", kind.name()),
                    )
                    .expected("orders like 'rlx', 'acq,sc' or '*'"));
            };
            if o != "*" {
                for part in o.split(',') {
                    if !ORDERS.contains(&part) {
                        return Err(self
                            .err(oc, format!("unknown memory order '{part}'"))
                            .expected(format!("{} or *", ORDERS.join(", "))));
                    }
                    orders.push(part.to_string());
                }
            }
        }
        let mut guard = Guard::default();
        for (w, c) in it {
            let Some((k, v)) = w.split_once('=') else {
                return Err(self
                    .err(c, format!("unexpected '{w}'"))
                    .expected("an attribute on=, scope=, op=, remote= or region=, then '=>'"));
            };
            let vals: Vec<String> = v.split(',').map(str::to_string).collect();
            let check = |allowed: &[&str]| -> Result<(), Diagnostic> {
                match vals.iter().find(|x| !allowed.contains(&x.as_str())) {
                    Some(bad) => Err(self
                        .err(c, format!("unknown {k} value '{bad}'"))
                        .expected(allowed.join(", "))),
                    None => Ok(()),
                }
            };
            match k {
                "on" => {
                    check(CLASSES)?;
                    guard.on = vals;
                }
                "scope" => {
                    check(SCOPES)?;
                    guard.scope = vals;
                }
                "op" => {
                    check(OPS)?;
                    guard.op = vals;
                }
                "region" => {
                    check(&["global", "local"])?;
                    guard.region = vals;
                }
                "remote" => {
                    guard.remote = match v {
                        "yes" => Some(true),
                        "no" => Some(false),
                        _ => {
                            return Err(self
                                .err(c, format!("unknown remote value '{v}'"))
                                .expected("remote=yes or remote=no"));
                        }
                    }
                }
                _ => {
                    return Err(self
                        .err(c, format!("unknown attribute '{k}'"))
                        .expected("on=, scope=, op=, remote= or region="));
                }
            }
        }
        let rhs = &rest[arrow + 2..];
        let rhs_col = col + rest[..arrow + 2].chars().count() as u32;
        let mut target = Vec::new();
        let mut off = 0usize;
        for part in rhs.split(';') {
            let lead = part.len() - part.trim_start().len();
            let c = rhs_col + rhs[..off + lead].chars().count() as u32;
            off += part.len() + 1;
            let t = part.trim();
            if t.is_empty() {
                if rhs.trim().is_empty() {
                    continue;
                }
                return Err(self
                    .err(c, "empty instruction")
                    .expected("an instruction between ';'"));
            }
            self.check_placeholders(t, c, PLACEHOLDERS)?;
            target.push(t.to_string());
        }
        Ok(Rule {
            kind,
            orders,
            guard,
            target,
            pos: Pos {
                line: self.no,
                col: kw_col,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "mapping m\nsource sc11\ntarget ptx6\narch PTX\nthread gpu = P{t}@cta {wg},gpu {dev}\nregister gpu = r{n}\n";

    fn err(body: &str) -> Diagnostic {
        parse("m.map", &format!("{HEAD}{body}")).unwrap_err()
    }

    #[test]
    fn builtins_parse() {
        for b in crate::mapping::BUILTINS {
            let m = parse(b.name, b.source).unwrap_or_else(|d| panic!("{}", d.render()));
            assert_eq!(m.name, b.name);
            assert!(!m.rules.is_empty());
        }
    }

    #[test]
    fn rule_fields() {
        let m = parse(
            "m.map",
            &format!("{HEAD}rmw acq,sc on=gpu op=add remote=no => fence.sc.{{sco}}; atom.{{op}} {{r}}, {{x}}, {{v}}\nfence rlx =>\n"),
        )
        .unwrap();
        let r = &m.rules[0];
        assert_eq!(r.kind, Kind::Rmw);
        assert_eq!(r.orders, ["acq", "sc"]);
        assert_eq!(r.guard.on, ["gpu"]);
        assert_eq!(r.guard.op, ["add"]);
        assert_eq!(r.guard.remote, Some(false));
        assert_eq!(r.target, ["fence.sc.{sco}", "atom.{op} {r}, {x}, {v}"]);
        assert_eq!(r.pos, Pos { line: 7, col: 1 });
        assert!(m.rules[1].target.is_empty());
    }

    #[test]
    fn errors_point_at_the_problem() {
        let d = err("lod rlx => ld {r}, {x}\n");
        assert_eq!((d.pos.line, d.pos.col), (7, 1));
        assert!(d.message.contains("unknown keyword 'lod'"), "{}", d.message);
        let d = err("load relaxed => ld {r}, {x}\n");
        assert_eq!((d.pos.line, d.pos.col), (7, 6));
        assert!(d.message.contains("unknown memory order 'relaxed'"));
        let d = err("load rlx => ld.relaxed.{scope} {r}, {x}\n");
        assert_eq!((d.pos.line, d.pos.col), (7, 24));
        assert!(d.message.contains("unknown placeholder '{scope}'"));
        let d = err("load rlx on=dsp => ld {r}, {x}\n");
        assert_eq!((d.pos.line, d.pos.col), (7, 10));
        let d = err("load rlx ld {r}, {x}\n");
        assert!(d.message.contains("missing '=>'"));
        let d = err("store rlx => st {x}, {v};; fence\n");
        assert!(d.message.contains("empty instruction"));
        let d = err("scope block = cta\n");
        assert_eq!((d.pos.line, d.pos.col), (7, 7));
        let d = parse("m.map", "mapping m\nsource sc11\narch PTX\n").unwrap_err();
        assert!(d.message.contains("missing 'target'"), "{}", d.message);
        let d = err("target x86tso\n");
        assert!(d.message.contains("'target' given twice"));
        let d = parse(
            "m.map",
            "mapping m\nsource sc11\ntarget ptx6\narch PTX\nthread cpu = P{t}@cpu\n",
        )
        .unwrap_err();
        assert!(d.message.contains("missing 'register cpu'"));
    }
}
