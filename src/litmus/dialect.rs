//! What an instruction parser sees: the [`Dialect`] trait a front end
//! implements for its instruction syntax, chosen per thread by a
//! [`DialectSelector`] from the thread header (so a compound `X86+PTX` test
//! maps `P0@cpu` to x86 and `P1@cta 0,gpu 0` to PTX); the [`Cursor`] over
//! one instruction cell's tokens; the [`ThreadCtx`] of its thread; and the
//! test's [`LocTable`] of location names and aliases.

use std::collections::HashSet;

use super::lexer::{Tok, Token};
use crate::diag::Diagnostic;
use crate::ir::{Arch, InstrKind, LocId, Location, Operand, Pos, Proxy, Reg, Value};

/// The instruction syntax of one dialect, plugged into the table parser
/// ([`super::table`]) and the compound and NVLitmus front ends.
pub trait Dialect: Sync {
    /// The dialect; its name is added as a tag to every instruction.
    fn arch(&self) -> Arch;

    /// Scope levels a thread of this dialect may be placed in, outermost
    /// first. The first one is the implicit root (it is accepted in headers
    /// and scope trees but left out of placements). Empty: no placement.
    fn scope_levels(&self) -> &'static [&'static str];

    /// The canonical form of a register name written in the init block or a
    /// condition (`eax` → `EAX`), or `None` if it cannot be a register.
    fn normalize_reg(&self, name: &str) -> Option<Reg>;

    /// What a register looks like, for error messages.
    fn register_hint(&self) -> &'static str;

    /// The instance number of `level` when a header names it without one
    /// (`P0@cpu` is `cpu 0` in a compound test). `None`: a number is required.
    fn default_instance(&self, _level: &str) -> Option<u32> {
        None
    }

    /// Parses one instruction (labels are handled by the caller) from `cur`,
    /// which holds the tokens of one table cell. Returns the instruction kind
    /// and its tags (without the arch tag), or `None` for an instruction that
    /// produces no IR on its own (x86 `CMP`). Tokens left unconsumed are an
    /// error reported by the caller.
    fn parse_instr(
        &self,
        cur: &mut Cursor<'_>,
        ctx: &mut ThreadCtx<'_>,
    ) -> Result<Option<(InstrKind, Vec<String>)>, Diagnostic>;
}

/// Picks the dialect of a thread from its header.
pub type DialectSelector<'s> =
    dyn Fn(&ThreadHeader) -> Result<&'static dyn Dialect, Diagnostic> + 's;

/// `P1@cta 0,gpu 0`: a column header of the thread table.
#[derive(Clone, Debug)]
pub struct ThreadHeader {
    /// `N` of `PN`.
    pub id: usize,
    /// Position of `PN`.
    pub pos: Pos,
    /// Placement items after `@`: level name (lower case), optional number.
    pub items: Vec<PlacementItem>,
}

/// One `level N` item of a thread header.
#[derive(Clone, Debug)]
pub struct PlacementItem {
    pub level: String,
    pub id: Option<u32>,
    pub pos: Pos,
}

/// The locations of a test, in order of first mention.
#[derive(Debug, Default)]
pub struct LocTable {
    locs: Vec<Location>,
    declared: HashSet<String>,
}

impl LocTable {
    /// The id of location `name`, created (initial value 0) if new.
    pub fn id(&mut self, name: &str) -> LocId {
        if let Some(i) = self.locs.iter().position(|l| l.name == name) {
            return i;
        }
        self.locs.push(Location::new(name, Value::Int(0)));
        self.locs.len() - 1
    }

    /// True when the init block gives `name` a value as a location.
    pub fn is_declared(&self, name: &str) -> bool {
        self.declared.contains(name)
    }

    /// Declares a plain location `name` with initial value `init`. Fails on
    /// a second declaration.
    pub fn declare(&mut self, name: &str, init: Value) -> Result<LocId, String> {
        self.try_declare(name, init)
            .ok_or_else(|| format!("location '{name}' is declared twice"))
    }

    /// Declares a plain location `name` with initial value `init`, or
    /// `None` when it is declared already.
    pub fn try_declare(&mut self, name: &str, init: Value) -> Option<LocId> {
        if !self.declared.insert(name.to_string()) {
            return None;
        }
        let id = self.id(name);
        self.locs[id].init = init;
        Some(id)
    }

    /// Declares `name` an alias of `of` through `proxy` (creating `of` if
    /// new). Fails on a second declaration of `name` or an alias cycle.
    pub fn declare_alias(&mut self, name: &str, proxy: Proxy, of: &str) -> Result<(), String> {
        if name == of {
            return Err(format!("location '{name}' cannot alias itself"));
        }
        if !self.declared.insert(name.to_string()) {
            return Err(format!("location '{name}' is initialised twice"));
        }
        let id = self.id(name);
        let target = self.id(of);
        // Follow the target's chain: reaching `id` would close a cycle.
        let mut cur = Some(target);
        let mut steps = 0;
        while let Some(c) = cur {
            if c == id || steps > self.locs.len() {
                return Err(format!("alias declarations form a cycle through '{name}'"));
            }
            cur = self.locs[c].alias_of;
            steps += 1;
        }
        self.locs[id].alias_of = Some(target);
        self.locs[id].proxy = proxy;
        Ok(())
    }

    /// The locations, in order of first mention.
    pub fn into_locations(self) -> Vec<Location> {
        self.locs
    }

    /// The locations, `LocId` order.
    pub fn locations(&self) -> &[Location] {
        &self.locs
    }
}

/// What an instruction parser may consult and update about its thread.
pub struct ThreadCtx<'a> {
    /// Thread number.
    pub thread: usize,
    /// Locations of the test.
    pub locs: &'a mut LocTable,
    /// Registers of this thread named in the init block (normalised).
    pub init_regs: &'a HashSet<Reg>,
    /// Operands of the last x86 `CMP`, consumed by a following conditional
    /// jump; reset by anything else.
    pub flags: &'a mut Option<(Operand, Operand)>,
}

/// A cursor over the tokens of one table cell.
pub struct Cursor<'c> {
    toks: &'c [Token],
    i: usize,
    end_pos: Pos,
    file: &'c str,
    src: &'c str,
}

impl<'c> Cursor<'c> {
    /// A cursor over `toks`; `end_pos` is where the cell ends (its `|` or `;`).
    pub fn new(file: &'c str, src: &'c str, toks: &'c [Token], end_pos: Pos) -> Self {
        Cursor {
            toks,
            i: 0,
            end_pos,
            file,
            src,
        }
    }

    /// The current token.
    pub fn peek(&self) -> Option<&'c Token> {
        self.toks.get(self.i)
    }

    /// The token `k` places ahead of the current one.
    pub fn peek_at(&self, k: usize) -> Option<&'c Token> {
        self.toks.get(self.i + k)
    }

    /// Consumes and returns the current token.
    pub fn next_tok(&mut self) -> Option<&'c Token> {
        let t = self.toks.get(self.i)?;
        self.i += 1;
        Some(t)
    }

    /// The last consumed token.
    pub fn prev(&self) -> Option<&'c Token> {
        self.i.checked_sub(1).and_then(|j| self.toks.get(j))
    }

    /// True when every token has been consumed.
    pub fn at_end(&self) -> bool {
        self.i >= self.toks.len()
    }

    /// Position of the current token, or the end of the cell.
    pub fn pos(&self) -> Pos {
        self.peek().map_or(self.end_pos, |t| t.pos)
    }

    /// Index of the current token, to be given to [`Cursor::text_since`].
    pub fn mark(&self) -> usize {
        self.i
    }

    /// The source text from token `mark` to the last consumed token.
    pub fn text_since(&self, mark: usize) -> String {
        match (
            self.toks.get(mark),
            self.i.checked_sub(1).and_then(|j| self.toks.get(j)),
        ) {
            (Some(a), Some(b)) if b.end >= a.start => self.src[a.start..b.end].trim().to_string(),
            _ => String::new(),
        }
    }

    /// A diagnostic at `pos`.
    pub fn error(&self, pos: Pos, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.file, pos, msg)
    }

    /// Describes the current token (`'x'` or `end of instruction`).
    pub fn found(&self) -> String {
        self.peek()
            .map_or_else(|| "end of instruction".to_string(), Token::describe)
    }

    /// A diagnostic at the current token: "expected X, found Y".
    pub fn unexpected(&self, expected: &str) -> Diagnostic {
        self.error(self.pos(), format!("unexpected {}", self.found()))
            .expected(expected)
    }

    /// Consumes punctuation `p` if it is next.
    pub fn eat_punct(&mut self, p: &str) -> bool {
        if self.peek().is_some_and(|t| t.is_punct(p)) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// Consumes punctuation `p` or fails with `expected`.
    pub fn expect_punct(&mut self, p: &str, expected: &str) -> Result<Pos, Diagnostic> {
        let pos = self.pos();
        if self.eat_punct(p) {
            Ok(pos)
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// Consumes an identifier or fails with `expected`.
    pub fn expect_ident(&mut self, expected: &str) -> Result<(&'c str, Pos), Diagnostic> {
        match self.peek() {
            Some(Token {
                tok: Tok::Ident(s),
                pos,
                ..
            }) => {
                self.i += 1;
                Ok((s.as_str(), *pos))
            }
            _ => Err(self.unexpected(expected)),
        }
    }

    /// The name of a memory operand `[name]` whose `[` was just consumed,
    /// through the closing `]`. Offsets (`[x+4]`) are refused.
    pub fn expect_bracketed_name(&mut self) -> Result<&'c str, Diagnostic> {
        let (name, _) = self.expect_ident("a location or a register inside '[ ]'")?;
        if self
            .peek()
            .is_some_and(|t| t.is_punct("+") || t.is_punct("-"))
        {
            return Err(self
                .error(self.pos(), "address offsets are not supported")
                .expected("']'"));
        }
        self.expect_punct("]", "']'")?;
        Ok(name)
    }

    /// Consumes an integer with an optional leading `-` if one is next.
    pub fn eat_int(&mut self) -> Result<Option<i64>, Diagnostic> {
        let neg = self.peek().is_some_and(|t| t.is_punct("-"));
        let k = usize::from(neg);
        match self.peek_at(k).map(|t| &t.tok) {
            Some(Tok::Int(v)) => {
                let v = *v;
                let pos = self.pos();
                self.i += k + 1;
                if neg {
                    v.checked_neg().map(Some).ok_or_else(|| {
                        self.error(pos, "number is out of range")
                            .expected("an integer that fits in 64 bits")
                    })
                } else {
                    Ok(Some(v))
                }
            }
            _ => Ok(None),
        }
    }
}
