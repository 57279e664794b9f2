//! Reading a model's file and its includes into one list of statements,
//! with herd's bell sets.

use super::ast::{self, Error, Stmt};
use super::parser;

/// Reads a file and its includes into one list of statements.
pub(super) struct Loader<'r> {
    pub(super) files: Vec<(String, String)>,
    /// Files being included (for cycle detection), by name.
    pub(super) stack: Vec<String>,
    /// Files already included.
    pub(super) done: Vec<String>,
    pub(super) resolve: &'r dyn Fn(&str) -> Option<(String, String)>,
    /// Variants set for `if "variant"`.
    pub(super) variants: &'r [String],
}

impl Loader<'_> {
    pub(super) fn load(&mut self, index: usize) -> Result<(Option<String>, Vec<Stmt>), Error> {
        let src = self.files[index].1.clone();
        let mut parsed = parser::parse_file(&src, index)?;
        if self.files[index].0.ends_with(".bell") {
            parsed.stmts = bell_sets(parsed.stmts);
        }
        let mut out = Vec::with_capacity(parsed.stmts.len());
        self.splice(parsed.stmts, &mut out)?;
        Ok((parsed.title, out))
    }

    /// Appends `stmts` to `out`, replacing each `include` by the included
    /// file's instructions and each `if "variant"` by its chosen branch.
    fn splice(&mut self, stmts: Vec<Stmt>, out: &mut Vec<Stmt>) -> Result<(), Error> {
        for s in stmts {
            if let Stmt::IfVariant {
                variant, then, els, ..
            } = s
            {
                let branch = if variant.holds(self.variants) {
                    then
                } else {
                    els
                };
                self.splice(branch, out)?;
                continue;
            }
            let Stmt::Include { file, loc } = &s else {
                out.push(s);
                continue;
            };
            if self.stack.iter().any(|f| f == file) {
                return Err(Error::new(
                    *loc,
                    format!("include cycle: '{file}' is already being included"),
                ));
            }
            if self.done.iter().any(|f| f == file) {
                continue;
            }
            let Some((name, text)) = (self.resolve)(file) else {
                return Err(Error::new(
                    *loc,
                    format!("cannot find included file '{file}'"),
                ));
            };
            if self.stack.contains(&name) {
                return Err(Error::new(
                    *loc,
                    format!("include cycle: '{name}' is already being included"),
                ));
            }
            if self.done.contains(&name) {
                continue;
            }
            self.files.push((name.clone(), text));
            let child = self.files.len() - 1;
            self.stack.push(file.clone());
            self.stack.push(name.clone());
            let (_, stmts) = self.load(child)?;
            self.stack.truncate(self.stack.len() - 2);
            self.done.push(file.clone());
            self.done.push(name);
            out.extend(stmts);
        }
        Ok(())
    }
}

/// herd's bell files: after each `enum`, one event set per tag, named
/// after the tag with its first letter upper-cased (`'acquire` gives
/// `Acquire`, `'rcu-lock` gives `Rcu-lock`): the events annotated with it.
/// Inside `if "variant"` branches too.
fn bell_sets(stmts: Vec<Stmt>) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        match s {
            Stmt::Enum { ref tags, loc, .. } => {
                let bindings = tags
                    .iter()
                    .filter_map(|t| {
                        let mut cs = t.chars();
                        let first = cs.next()?;
                        let name: String = first.to_uppercase().chain(cs).collect();
                        Some(ast::Binding {
                            name,
                            loc,
                            params: None,
                            tuple: None,
                            body: ast::Expr {
                                kind: ast::ExprKind::BellSet(t.clone()),
                                loc,
                            },
                        })
                    })
                    .collect();
                out.push(s);
                out.push(Stmt::Let {
                    rec: false,
                    bindings,
                    loc,
                });
            }
            Stmt::IfVariant {
                variant,
                then,
                els,
                loc,
            } => out.push(Stmt::IfVariant {
                variant,
                then: bell_sets(then),
                els: bell_sets(els),
                loc,
            }),
            s => out.push(s),
        }
    }
    out
}
