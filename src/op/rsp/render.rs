//! Pictures of the machine: cache snapshots in the notation of seed 001
//! Figs. 4 and 5 and whole traces as step-by-step snapshots.

use super::*;

impl RspCache {
    /// One line per cache with entries or a fifo, in the notation of
    /// Figs. 4 and 5: `{x ↦C,V 42} [FLUSH x]` (fifo newest first).
    pub fn snapshot(&self, s: &State) -> Vec<String> {
        let cache = |c: &Cache| {
            let mut out = String::from("{");
            let mut first = true;
            for (x, e) in c.entries.iter().enumerate() {
                if let Some(e) = e {
                    if !first {
                        out.push_str(", ");
                    }
                    first = false;
                    let _ = write!(
                        out,
                        "{}↦{},{} {}",
                        self.locs[x],
                        if e.dirty { 'D' } else { 'C' },
                        if e.valid { 'V' } else { 'I' },
                        value_text(e.val, &self.locs)
                    );
                }
            }
            out.push('}');
            if !c.fifo.is_empty() {
                let els: Vec<String> = c
                    .fifo
                    .iter()
                    .rev()
                    .map(|el| match el {
                        FifoEl::Loc(x) => self.locs[*x as usize].clone(),
                        FifoEl::Flush(t) => format!("FLUSH(P{})", self.threads[*t as usize].id),
                    })
                    .collect();
                let _ = write!(out, " [{}]", els.join(" "));
            }
            out
        };
        let mut lines = Vec::new();
        for (w, c) in s.l1.iter().enumerate() {
            let ts: Vec<String> = self
                .threads
                .iter()
                .filter(|t| t.wg == w)
                .map(|t| format!("P{}", t.id))
                .collect();
            let lock = s.rmw[w]
                .map(|t| format!(" rmw-lock P{}", self.threads[t as usize].id))
                .unwrap_or_default();
            lines.push(format!("L1 wg{w} ({}): {}{lock}", ts.join(","), cache(c)));
        }
        for (d, c) in s.l2.iter().enumerate() {
            let mut locks = String::new();
            for x in 0..self.n() {
                if let Some(t) = s.lockfile[d * self.n() + x] {
                    let _ = write!(
                        locks,
                        " lock {}:P{}",
                        self.locs[x], self.threads[t as usize].id
                    );
                }
            }
            lines.push(format!("L2 dev{d}: {}{locks}", cache(c)));
        }
        let gl: Vec<String> = (0..self.n())
            .map(|x| format!("{}={}", self.locs[x], value_text(s.gl[x], &self.locs)))
            .collect();
        lines.push(format!("memory: {}", gl.join(" ")));
        lines
    }

    /// A trace in the style of Figs. 4 and 5: the caches at the start, one
    /// line per step (thread, instruction or environment transition with
    /// its cache), followed by the caches the step changed, and the whole
    /// machine again at the end.
    pub fn render_trace(&self, trace: &[Step]) -> Result<String, MachineError> {
        let mut out = String::new();
        let mut s = self.initial();
        let mut before = self.snapshot(&s);
        out.push_str("     initially:\n");
        for line in &before {
            let _ = writeln!(out, "       {line}");
        }
        for (i, step) in trace.iter().enumerate() {
            let label = self.label(&s, step);
            s = self.apply(&s, step)?;
            let after = self.snapshot(&s);
            let _ = writeln!(out, "{:>3}. {label}", i + 1);
            for (a, b) in after.iter().zip(&before) {
                if a != b {
                    let _ = writeln!(out, "       {a}");
                }
            }
            before = after;
        }
        out.push_str("     finally:\n");
        for line in &before {
            let _ = writeln!(out, "       {line}");
        }
        Ok(out)
    }
}

pub(super) fn value_text(v: Value, locs: &[String]) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Addr(l) => format!("&{}", locs.get(l).map(String::as_str).unwrap_or("?")),
    }
}
