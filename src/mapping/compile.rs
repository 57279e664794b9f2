//! Compiling a source test with a mapping: each source instruction becomes
//! the target instructions of the first rule matching it, written as text in
//! the target's dialect and parsed back by the target's front end. The
//! result is an ordinary litmus test that `litmix run` accepts.

use super::format::{Construct, Kind, Mapping};
use crate::diag::Diagnostic;
use crate::ir::text::{PropStyle, prop_text, quantifier_text};
use crate::ir::{Address, CmpOp, InstrKind, Operand, RmwOp, Term, Test, Thread, Value};
use std::collections::HashMap;

/// A compiled test and how its names relate to the source's.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The target litmus test as text (what `litmix compile` prints).
    pub text: String,
    /// The target test, parsed back.
    pub test: Test,
    /// Per source thread: source register -> target register.
    pub registers: Vec<HashMap<String, String>>,
}

impl Compiled {
    /// The target name of a source observed term (`1:r0` -> `1:EAX`).
    pub fn term_name(&self, source_name: &str) -> String {
        if let Some((t, r)) = source_name.split_once(':')
            && let Ok(t) = t.parse::<usize>()
            && let Some(m) = self.registers.get(t)
            && let Some(tr) = m.get(r)
        {
            return format!("{t}:{tr}");
        }
        source_name.to_string()
    }
}

/// The placement class of a source thread: `cpu` when it is placed on a
/// `cpu` level, `gpu` otherwise.
pub fn class(t: &Thread) -> &'static str {
    if t.placement.iter().any(|s| s.level == "cpu") {
        "cpu"
    } else {
        "gpu"
    }
}

/// The memory order of an instruction's tags (lower case), `na` if none.
pub fn order(tags: &[String]) -> &'static str {
    for (tag, name) in [
        ("ACQ_REL", "acq_rel"),
        ("SC", "sc"),
        ("ACQ", "acq"),
        ("REL", "rel"),
        ("RLX", "rlx"),
        ("NA", "na"),
    ] {
        if tags.iter().any(|t| t == tag) {
            return name;
        }
    }
    "na"
}

/// The scope of an instruction's tags (lower case).
pub fn scope(tags: &[String]) -> Option<&'static str> {
    [("WI", "wi"), ("WG", "wg"), ("DEV", "dev"), ("SYS", "sys")]
        .into_iter()
        .find(|(t, _)| tags.iter().any(|x| x == t))
        .map(|(_, n)| n)
}

fn region(tags: &[String]) -> Option<&'static str> {
    if tags.iter().any(|t| t == "LOCAL") {
        Some("local")
    } else if tags.iter().any(|t| t == "GLOBAL") {
        Some("global")
    } else {
        None
    }
}

fn op_name(op: &RmwOp) -> &'static str {
    match op {
        RmwOp::Exch(_) => "exch",
        RmwOp::Cas { .. } => "cas",
        RmwOp::Inc(_) => "inc",
        RmwOp::Dec(_) => "dec",
        RmwOp::Bin(b, _) => b.name(),
    }
}

fn cmp_name(c: CmpOp) -> &'static str {
    match c {
        CmpOp::Eq => "eq",
        CmpOp::Ne => "ne",
        CmpOp::Lt => "lt",
        CmpOp::Le => "le",
        CmpOp::Gt => "gt",
        CmpOp::Ge => "ge",
    }
}

/// Register names of one target thread, handed out in order of first use.
struct Regs<'m> {
    names: &'m [String],
    map: HashMap<String, String>,
}

impl Regs<'_> {
    fn get(&mut self, src: &str) -> Option<String> {
        if let Some(r) = self.map.get(src) {
            return Some(r.clone());
        }
        let n = self.map.len();
        let name = match self.names {
            [t] if t.contains("{n}") => t.replace("{n}", &n.to_string()),
            list => list.get(n)?.clone(),
        };
        self.map.insert(src.to_string(), name.clone());
        Some(name)
    }
}

/// Compiles `src` with `m`. Errors point at the source instruction that no
/// rule matches (or that the format cannot express), or report the target
/// front end's complaint about the generated text (a mapping bug).
pub fn compile(m: &Mapping, src: &Test) -> Result<Compiled, Diagnostic> {
    let file = src
        .file
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| src.name.clone());
    let err = |pos, msg: String| Diagnostic::new(file.clone(), pos, msg);
    // Dense instance numbers per level, keyed by the placement prefix.
    let mut instances: HashMap<(String, Vec<(String, u32)>), usize> = HashMap::new();
    let mut level_count: HashMap<String, usize> = HashMap::new();
    let mut headers = Vec::new();
    let mut columns: Vec<Vec<String>> = Vec::new();
    let mut registers = Vec::new();
    for t in &src.threads {
        let cls = class(t);
        let Some(tmpl) = m.thread_header(cls) else {
            let pos = t.code.first().map(|i| i.pos).unwrap_or_default();
            return Err(err(
                pos,
                format!(
                    "mapping '{}' has no thread header for {cls} threads (P{})",
                    m.name, t.id
                ),
            )
            .expected(format!("a line 'thread {cls} = ...' in the mapping")));
        };
        let mut header = tmpl.replace("{t}", &t.id.to_string());
        for level in ["wg", "dev", "cpu"] {
            let key = format!("{{{level}}}");
            if !header.contains(&key) {
                continue;
            }
            let Some(i) = t.placement.iter().position(|s| s.level == level) else {
                return Err(err(
                    t.code.first().map(|i| i.pos).unwrap_or_default(),
                    format!(
                        "thread P{} has no '{level}' level for the target header",
                        t.id
                    ),
                )
                .expected(format!("a placement naming {level}")));
            };
            let prefix: Vec<(String, u32)> = t.placement[..=i]
                .iter()
                .map(|s| (s.level.clone(), s.id))
                .collect();
            let next = level_count.entry(level.to_string()).or_insert(0);
            let n = *instances
                .entry((level.to_string(), prefix))
                .or_insert_with(|| {
                    *next += 1;
                    *next - 1
                });
            header = header.replace(&key, &n.to_string());
        }
        headers.push(header);
        let names = m.register_names(cls);
        let mut regs = Regs {
            names,
            map: HashMap::new(),
        };
        let mut col = Vec::new();
        for ins in &t.code {
            let mut vals: Vec<(&str, String)> = Vec::new();
            let reg = |r: &str, regs: &mut Regs| {
                regs.get(r).ok_or_else(|| {
                    err(
                        ins.pos,
                        format!(
                            "thread P{} needs more registers than the mapping names",
                            t.id
                        ),
                    )
                    .expected(format!("more names in 'register {cls} = ...'"))
                })
            };
            let operand = |o: &Operand, regs: &mut Regs| -> Result<String, Diagnostic> {
                match o {
                    Operand::Imm(Value::Int(v)) => Ok(v.to_string()),
                    Operand::Imm(Value::Addr(_)) => Err(err(
                        ins.pos,
                        format!(
                            "unsupported in mappings: an address as a value ('{}')",
                            ins.text
                        ),
                    )
                    .expected("integer values")),
                    Operand::Reg(r) => reg(r, regs),
                }
            };
            let loc = |a: &Address| -> Result<String, Diagnostic> {
                match a {
                    Address::Loc(l) => Ok(src.locations[*l].name.clone()),
                    Address::Reg(_) => Err(err(
                        ins.pos,
                        format!(
                            "unsupported in mappings: an address in a register ('{}')",
                            ins.text
                        ),
                    )
                    .expected("accesses to named locations")),
                }
            };
            let (kind, op) = match &ins.kind {
                InstrKind::Load { dst, addr } => {
                    vals.push(("x", loc(addr)?));
                    vals.push(("r", reg(dst, &mut regs)?));
                    (Kind::Load, None)
                }
                InstrKind::Store { addr, src: v } => {
                    vals.push(("x", loc(addr)?));
                    vals.push(("v", operand(v, &mut regs)?));
                    (Kind::Store, None)
                }
                InstrKind::Rmw { dst, addr, op } => {
                    vals.push(("x", loc(addr)?));
                    if let Some(d) = dst {
                        vals.push(("r", reg(d, &mut regs)?));
                    }
                    match op {
                        RmwOp::Bin(_, v) | RmwOp::Exch(v) | RmwOp::Inc(v) | RmwOp::Dec(v) => {
                            vals.push(("v", operand(v, &mut regs)?));
                        }
                        RmwOp::Cas { expected, new } => {
                            vals.push(("exp", operand(expected, &mut regs)?));
                            vals.push(("new", operand(new, &mut regs)?));
                            vals.push(("v", operand(new, &mut regs)?));
                        }
                    }
                    let name = op_name(op);
                    if let Some(t) = m.op(name) {
                        vals.push(("op", t.to_string()));
                    }
                    (Kind::Rmw, Some(name))
                }
                InstrKind::Fence => (Kind::Fence, None),
                InstrKind::Mov { dst, src: v } => {
                    vals.push(("v", operand(v, &mut regs)?));
                    vals.push(("r", reg(dst, &mut regs)?));
                    (Kind::Mov, None)
                }
                InstrKind::Branch { cmp, a, b, target } => {
                    vals.push(("a", operand(a, &mut regs)?));
                    vals.push(("b", operand(b, &mut regs)?));
                    vals.push(("label", label(target)));
                    let Some(c) = m.comparison(cmp_name(*cmp)) else {
                        return Err(err(
                            ins.pos,
                            format!("mapping '{}' has no 'cmp {}' entry", m.name, cmp_name(*cmp)),
                        )
                        .expected(format!("a line 'cmp {} = ...'", cmp_name(*cmp))));
                    };
                    vals.push(("cmp", c.to_string()));
                    vals.push(("cond", cmp_name(*cmp).to_string()));
                    (Kind::Branch, None)
                }
                InstrKind::Goto { target } => {
                    vals.push(("label", label(target)));
                    (Kind::Goto, None)
                }
                InstrKind::Label(l) => {
                    vals.push(("label", label(l)));
                    (Kind::Label, None)
                }
                InstrKind::Op { .. } | InstrKind::Barrier { .. } => {
                    return Err(
                        err(ins.pos, format!("unsupported in mappings: '{}'", ins.text)).expected(
                            "loads, stores, RMWs, fences, register moves and conditionals",
                        ),
                    );
                }
            };
            let ord = order(&ins.tags);
            let sco = scope(&ins.tags);
            let construct = Construct {
                order: ord,
                class: cls,
                scope: sco,
                op,
                remote: ins.tags.iter().any(|t| t == "REMOTE"),
                region: region(&ins.tags),
            };
            let Some(rule) = m.rule(kind, &construct) else {
                let what = if kind.has_order() {
                    format!(
                        "{} {ord}{}{} on a {cls} thread",
                        kind.name(),
                        sco.map(|s| format!(" scope={s}")).unwrap_or_default(),
                        op.map(|o| format!(" op={o}")).unwrap_or_default()
                    )
                } else {
                    kind.name().to_string()
                };
                return Err(err(
                    ins.pos,
                    format!(
                        "mapping '{}' has no rule for {what} ('{}')",
                        m.name, ins.text
                    ),
                )
                .expected(format!("a rule '{} ...' in {}", kind.name(), m.file)));
            };
            if let Some(s) = sco {
                match m.scope(s) {
                    Some(t) => vals.push(("sco", t.to_string())),
                    None => {
                        if rule.target.iter().any(|t| t.contains("{sco}")) {
                            return Err(err(
                                ins.pos,
                                format!(
                                    "mapping '{}' has no 'scope {s}' entry ('{}')",
                                    m.name, ins.text
                                ),
                            )
                            .expected(format!("a line 'scope {s} = ...'")));
                        }
                    }
                }
            }
            for tmpl in &rule.target {
                let mut out = String::new();
                let mut rest = tmpl.as_str();
                while let Some(i) = rest.find('{') {
                    out.push_str(&rest[..i]);
                    let j = rest[i..].find('}').map(|j| i + j).unwrap_or(rest.len() - 1);
                    let name = &rest[i + 1..j];
                    let Some((_, v)) = vals.iter().find(|(k, _)| *k == name) else {
                        return Err(err(
                            ins.pos,
                            format!(
                                "rule at {}:{} uses {{{name}}}, which '{}' does not provide",
                                m.file, rule.pos, ins.text
                            ),
                        )
                        .expected("a rule whose placeholders fit the instruction"));
                    };
                    out.push_str(v);
                    rest = &rest[j + 1..];
                }
                out.push_str(rest);
                col.push(out);
            }
        }
        columns.push(col);
        registers.push(regs);
    }
    // Initial values (addresses are refused: mappings keep locations as they are).
    let mut text = format!("{} {}\n", m.arch, src.name);
    text.push_str(&format!(
        "\"Compiled from {} with mapping {}\"\n{{ ",
        file, m.name
    ));
    for l in &src.locations {
        if l.alias_of.is_some() {
            return Err(err(
                Default::default(),
                format!("unsupported in mappings: alias '{}'", l.name),
            ));
        }
        match l.init {
            Value::Int(v) => text.push_str(&format!("{}={v}; ", l.name)),
            Value::Addr(_) => {
                return Err(err(
                    Default::default(),
                    format!(
                        "unsupported in mappings: location '{}' holds an address",
                        l.name
                    ),
                ));
            }
        }
    }
    for (t, th) in src.threads.iter().enumerate() {
        for (r, v) in &th.reg_init {
            let Some(tr) = registers[t].map.get(r) else {
                continue; // parameters naming locations, unused as registers
            };
            let Value::Int(v) = v else {
                return Err(err(
                    Default::default(),
                    format!("unsupported in mappings: register {t}:{r} holds an address"),
                ));
            };
            text.push_str(&format!("{t}:{tr}={v}; "));
        }
    }
    text.push_str("}\n");
    let rows = columns.iter().map(Vec::len).max().unwrap_or(0);
    let mut table: Vec<Vec<String>> = vec![headers];
    for r in 0..rows {
        table.push(
            columns
                .iter()
                .map(|c| c.get(r).cloned().unwrap_or_default())
                .collect(),
        );
    }
    let widths: Vec<usize> = (0..columns.len())
        .map(|c| table.iter().map(|row| row[c].len()).max().unwrap_or(0))
        .collect();
    for row in &table {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, s)| format!(" {:w$} ", s, w = widths[c]))
            .collect();
        text.push_str(&cells.join("|"));
        text.push_str(";\n");
    }
    let regmaps: Vec<HashMap<String, String>> = registers.into_iter().map(|r| r.map).collect();
    let term = |t: &Term| -> Result<String, Diagnostic> {
        Ok(match t {
            Term::Reg { thread, reg } => {
                let Some(tr) = regmaps.get(*thread).and_then(|m| m.get(reg)) else {
                    return Err(err(
                        Default::default(),
                        format!(
                            "the condition names register {thread}:{reg}, which the code never uses"
                        ),
                    ));
                };
                format!("{thread}:{tr}")
            }
            Term::Loc(l) => format!("[{}]", src.locations[*l].name),
            Term::Const(Value::Int(v)) => v.to_string(),
            Term::Const(Value::Addr(l)) => format!("&{}", src.locations[*l].name),
        })
    };
    if !src.observed.is_empty() {
        let mut obs = Vec::new();
        for t in &src.observed {
            obs.push(term(t)?);
        }
        text.push_str(&format!("locations [{};]\n", obs.join("; ")));
    }
    text.push_str(&format!(
        "{} ({})\n",
        quantifier_text(src.condition.quantifier),
        prop_text(&src.condition.prop, PropStyle::BRACKETED, &term)?
    ));
    let name = format!("{file} (compiled with {})", m.name);
    let test = crate::litmus::parse_str(&name, &text).map_err(|d| {
        Diagnostic::new(
            m.file.clone(),
            Default::default(),
            format!(
                "the compiled test does not parse; the mapping writes text the target front end refuses:\n{}\n--- compiled text ---\n{text}",
                d.render()
            ),
        )
    })?;
    Ok(Compiled {
        text,
        test,
        registers: regmaps,
    })
}

/// A C front-end label as a target label: a generated one (`%L0`) as
/// `L0`, a label of the source (`L0:`, `out:`) as `UL0`, `Uout`, so that
/// the two never meet.
fn label(l: &str) -> String {
    match l.strip_prefix('%') {
        Some(generated) => generated.to_string(),
        None => format!("U{l}"),
    }
}
