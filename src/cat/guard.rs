//! Bounds on one evaluation that hold whatever the model: the depth of
//! function calls (a `let rec f x = f x` stops with a located error, not a
//! stack overflow) and the deadline, looked at every few nodes evaluated
//! (a cut-off check stops inside a long evaluation, not after it).
//!
//! The counters are per thread: an evaluation runs on one thread, and a
//! guard gives its level back when dropped, on errors too.

use super::ast::{Error, Loc};
use crate::budget::MAX_CALL_DEPTH;
use std::cell::Cell;
use std::time::Instant;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static TICKS: Cell<u32> = const { Cell::new(0) };
}

/// Nodes evaluated between two looks at the clock.
const LOOK_EVERY: u32 = 64;

/// The error of an evaluation past its deadline (the engine reports it as
/// the timeout).
pub fn past_deadline(loc: Loc) -> Error {
    Error::new(loc, "time budget exceeded")
}

/// Counts one node evaluated; past `deadline` (looked at every
/// [`LOOK_EVERY`] nodes), the timeout error.
#[inline]
pub fn tick(deadline: Option<Instant>, loc: Loc) -> Result<(), Error> {
    let Some(d) = deadline else { return Ok(()) };
    let t = TICKS.with(|c| {
        let t = c.get().wrapping_add(1);
        c.set(t);
        t
    });
    if t.is_multiple_of(LOOK_EVERY) && Instant::now() > d {
        return Err(past_deadline(loc));
    }
    Ok(())
}

/// One function call in progress; dropping it ends the call.
pub struct Call(());

impl Drop for Call {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Enters a function call at `loc`: an error past [`MAX_CALL_DEPTH`] calls
/// in progress, or past `deadline`.
pub fn call(deadline: Option<Instant>, loc: Loc) -> Result<Call, Error> {
    if deadline.is_some_and(|d| Instant::now() > d) {
        return Err(past_deadline(loc));
    }
    let depth = DEPTH.with(|d| {
        let n = d.get() + 1;
        d.set(n);
        n
    });
    let call = Call(());
    if depth > MAX_CALL_DEPTH {
        return Err(Error::new(
            loc,
            format!(
                "limit exceeded: more than {MAX_CALL_DEPTH} function calls in progress \
                 (a recursion that does not end?)"
            ),
        ));
    }
    Ok(call)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_counted_and_given_back() {
        let loc = Loc::default();
        let mut held = Vec::new();
        for _ in 0..MAX_CALL_DEPTH {
            held.push(call(None, loc).unwrap());
        }
        let e = call(None, loc).err().unwrap();
        assert!(e.message.contains("function calls"), "{}", e.message);
        held.clear();
        assert!(call(None, loc).is_ok());
    }

    #[test]
    fn past_deadline_stops_ticks_and_calls() {
        let loc = Loc::default();
        let past = Some(Instant::now() - std::time::Duration::from_millis(1));
        assert!((0..LOOK_EVERY).any(|_| tick(past, loc).is_err()));
        assert!(call(past, loc).is_err());
        assert!((0..1000).all(|_| tick(None, loc).is_ok()));
    }
}
