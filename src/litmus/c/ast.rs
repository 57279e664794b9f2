//! The syntax tree of a C thread function: expressions, statements,
//! parameters.

use crate::ir::{BinOp, CmpOp, Pos, ScopeLevel};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BinKind {
    Arith(BinOp),
    Cmp(CmpOp),
    LAnd,
    LOr,
}

#[derive(Clone, Debug)]
pub(super) enum ExprKind {
    Int(i64),
    Var(String),
    Deref(Box<Expr>),
    AddrOf(String),
    Call(String, Vec<Expr>),
    Bin(BinKind, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
}

#[derive(Clone, Debug)]
pub(super) struct Expr {
    pub(super) kind: ExprKind,
    pub(super) pos: Pos,
    /// Byte span in the source.
    pub(super) span: (usize, usize),
}

#[derive(Clone, Debug)]
pub(super) enum StmtKind {
    Decl(String, Option<Expr>),
    Assign(String, Expr),
    Store(Expr, Expr),
    Expr(Expr),
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    While(Expr, Vec<Stmt>),
    DoWhile(Vec<Stmt>, Expr),
    For(Vec<Stmt>, Option<Expr>, Vec<Stmt>, Vec<Stmt>),
    Block(Vec<Stmt>),
    /// `goto L;`
    Goto(String),
    /// `L:` before a statement: a jump target.
    Label(String),
}

#[derive(Clone, Debug)]
pub(super) struct Stmt {
    pub(super) kind: StmtKind,
    pub(super) pos: Pos,
    pub(super) span: (usize, usize),
}

/// A pointer parameter `global volatile atomic_int* x`.
#[derive(Clone, Debug)]
pub(super) struct Param {
    pub(super) name: String,
    pub(super) pos: Pos,
    pub(super) atomic: bool,
    pub(super) volatile: bool,
    pub(super) local: bool,
}

pub(super) struct ThreadSrc {
    pub(super) id: usize,
    pub(super) pos: Pos,
    pub(super) placement: Vec<ScopeLevel>,
    pub(super) params: Vec<Param>,
    pub(super) body: Vec<Stmt>,
}
