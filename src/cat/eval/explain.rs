//! `--why`: a failing check's witness spelled out through the model's
//! definitions, step by step.

use super::*;

const EXPLAIN_DEPTH: usize = 64;

/// Names that relate events by where they are rather than by what happened;
/// an explanation through them says less than one through `po`, `rf`, ...
fn is_structural(label: &str) -> bool {
    let label = label.trim_end_matches("^-1");
    matches!(label, "loc" | "ext" | "int" | "id" | "_" | "derived")
        || label.chars().all(|c| c.is_ascii_lowercase())
            && !matches!(
                label,
                "po" | "rf"
                    | "co"
                    | "fr"
                    | "rmw"
                    | "addr"
                    | "data"
                    | "ctrl"
                    | "bar"
                    | "rfe"
                    | "rfi"
                    | "coe"
                    | "coi"
                    | "fre"
                    | "fri"
            )
            && label.len() <= 4
            && !label.contains('-')
}

impl Program {
    /// Spells a failing check's witness out as steps through the definitions.
    pub(super) fn witness_path(
        &self,
        c: &CCheck,
        witness: &[usize],
        st: &State<'_>,
    ) -> Vec<(usize, usize, String)> {
        let pairs: Vec<(usize, usize)> = match c.test {
            Test::Acyclic => (0..witness.len())
                .map(|k| (witness[k], witness[(k + 1) % witness.len()]))
                .collect(),
            Test::Irreflexive => witness.iter().map(|&e| (e, e)).collect(),
            Test::Empty => witness
                .chunks(2)
                .filter(|p| p.len() == 2)
                .map(|p| (p[0], p[1]))
                .take(1)
                .collect(),
        };
        let mut out = Vec::new();
        for (a, b) in pairs {
            if !self.decompose(&c.expr, a, b, st, EXPLAIN_DEPTH, &mut out) {
                out.push((a, b, c.label.clone()));
            }
        }
        out
    }

    fn rel_value(&self, e: &CExpr, st: &State<'_>) -> Option<Relation> {
        match self.eval(e, st, &[]).ok()?.as_ref() {
            Value::Rel(r) => Some(r.clone()),
            _ => None,
        }
    }

    fn opaque_label(&self, e: &CExpr) -> String {
        match &e.node {
            Node::Env(i) => self.env_names[*i].name.clone(),
            Node::Slot(i) => self.slots[*i].name.clone(),
            Node::Call(f, _) => self.funcs[*f].name.clone(),
            _ => "derived".to_string(),
        }
    }

    /// Pushes steps from `a` to `b` through `e` (which must relate them);
    /// false when `e` does not relate them.
    fn decompose(
        &self,
        e: &CExpr,
        a: usize,
        b: usize,
        st: &State<'_>,
        depth: usize,
        out: &mut Vec<(usize, usize, String)>,
    ) -> bool {
        let Some(r) = self.rel_value(e, st) else {
            return false;
        };
        if !r.contains(a, b) {
            return false;
        }
        if depth == 0 {
            out.push((a, b, self.opaque_label(e)));
            return true;
        }
        let d = depth - 1;
        match &e.node {
            Node::Env(_)
            | Node::Call(..)
            | Node::Local(_)
            | Node::EmptyRel
            | Node::Universe
            | Node::Apply(..)
            | Node::FuncRef(_)
            | Node::PrimRef(_)
            | Node::PrimCall(..)
            | Node::Lambda(_)
            | Node::Tuple(_)
            | Node::ExplicitSet(_)
            | Node::LetIn(..)
            | Node::LetRec(..)
            | Node::LetRecVals(..)
            | Node::MatchSet(..)
            | Node::MatchTag(..)
            | Node::Proj(..)
            | Node::Tag(_)
            | Node::BellSet(_)
            | Node::Try(..)
            | Node::Fail(_) => {
                out.push((a, b, self.opaque_label(e)));
            }
            Node::Slot(i) => match &self.slots[*i].def {
                SlotDef::Expr(inner) => {
                    if !self.decompose(inner, a, b, st, d, out) {
                        out.push((a, b, self.opaque_label(e)));
                    }
                }
                SlotDef::Rec(_) | SlotDef::WithVar => out.push((a, b, self.opaque_label(e))),
            },
            Node::Unary(op, x) => match op {
                UnOp::ToId => {}
                UnOp::Opt if a == b => {}
                UnOp::Star if a == b => {}
                UnOp::Opt => {
                    self.decompose(x, a, b, st, d, out);
                }
                UnOp::Inverse => {
                    let mut tmp = Vec::new();
                    self.decompose(x, b, a, st, d, &mut tmp);
                    for (p, q, l) in tmp.into_iter().rev() {
                        out.push((q, p, format!("{l}^-1")));
                    }
                }
                UnOp::Plus | UnOp::Star => match self.rel_value(x, st).and_then(|s| s.path(a, b)) {
                    Some(hops) => {
                        for w in hops.windows(2) {
                            if !self.decompose(x, w[0], w[1], st, d, out) {
                                out.push((w[0], w[1], self.opaque_label(x)));
                            }
                        }
                    }
                    None => out.push((a, b, self.opaque_label(e))),
                },
                UnOp::Complement => out.push((a, b, "derived".to_string())),
            },
            Node::Binary(op, _, l, rr) => match op {
                BinOp::Union => {
                    if !self.decompose(l, a, b, st, d, out) && !self.decompose(rr, a, b, st, d, out)
                    {
                        out.push((a, b, "derived".to_string()));
                    }
                }
                BinOp::Inter => {
                    // Prefer the operand that explains by what happened (po,
                    // rf, ...) over one that only says where events are.
                    let mut left = Vec::new();
                    let mut right = Vec::new();
                    self.decompose(l, a, b, st, d, &mut left);
                    self.decompose(rr, a, b, st, d, &mut right);
                    let score = |v: &Vec<(usize, usize, String)>| {
                        v.iter().filter(|s| is_structural(&s.2)).count()
                    };
                    out.extend(if score(&right) < score(&left) {
                        right
                    } else {
                        left
                    });
                }
                BinOp::Diff => {
                    if !self.decompose(l, a, b, st, d, out) {
                        out.push((a, b, "derived".to_string()));
                    }
                }
                BinOp::Seq => {
                    let (Some(lv), Some(rv)) = (self.rel_value(l, st), self.rel_value(rr, st))
                    else {
                        out.push((a, b, "derived".to_string()));
                        return true;
                    };
                    match (0..st.n).find(|&c| lv.contains(a, c) && rv.contains(c, b)) {
                        Some(c) => {
                            self.decompose(l, a, c, st, d, out);
                            self.decompose(rr, c, b, st, d, out);
                        }
                        None => out.push((a, b, "derived".to_string())),
                    }
                }
                BinOp::Cartesian | BinOp::Add => out.push((a, b, "derived".to_string())),
            },
            Node::FenceRel(s, po_name) => {
                let set = match self.eval(s, st, &[]).ok().as_deref() {
                    Some(Value::Set(s)) => s.clone(),
                    _ => BitSet::new(st.n),
                };
                let po = match self.env_value(*po_name, e.loc, st) {
                    Ok(Value::Rel(po)) => po.clone(),
                    _ => Relation::empty(st.n),
                };
                match set.iter().find(|&c| po.contains(a, c) && po.contains(c, b)) {
                    Some(c) => {
                        out.push((a, c, "po".to_string()));
                        out.push((c, b, "po".to_string()));
                    }
                    None => out.push((a, b, "fencerel".to_string())),
                }
            }
            Node::Domain(_) | Node::Range(_) => return false,
        }
        true
    }
}
