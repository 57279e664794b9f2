//! Names of known test families (MP, SB, LB, S, R, 2+2W, WRC, IRIW,
//! ISA2, the Co* tests): a test's family is its skeleton with fences
//! dropped (each thread's reads and writes and their locations), compared
//! up to thread permutation and location renaming.

use super::program::SProgram;
use super::vocab::Vocab;
use crate::mapping::enumerate::OpKind;

/// Known families: name and skeleton (`W`/`R`/`U` (RMW) then the location
/// letter, threads separated by `|`).
const FAMILIES: &[(&str, &str)] = &[
    ("CoWW", "Wx Wx"),
    ("CoRW1", "Rx Wx"),
    ("CoRW", "Rx Wx | Wx"),
    ("CoWR", "Wx Rx | Wx"),
    ("CoRR", "Wx | Rx Rx"),
    ("CoMP", "Wx Wx | Rx Rx"),
    ("W+W+RR", "Wx | Wx | Rx Rx"),
    ("W+WRR", "Wx | Wx Rx Rx"),
    ("MP", "Wx Wy | Ry Rx"),
    ("SB", "Wx Ry | Wy Rx"),
    ("LB", "Rx Wy | Ry Wx"),
    ("S", "Wx Wy | Ry Wx"),
    ("R", "Wx Wy | Wy Rx"),
    ("2+2W", "Wx Wy | Wy Wx"),
    ("WRC", "Wx | Rx Wy | Ry Rx"),
    ("IRIW", "Wx | Wy | Rx Ry | Ry Rx"),
    ("ISA2", "Wx Wy | Ry Wz | Rz Rx"),
    ("RWC", "Wx | Rx Ry | Wy Rx"),
    ("WRW+2W", "Wx | Rx Wy | Wy Wx"),
    ("Atom", "Ux | Ux"),
];

/// A skeleton key: per thread the (kind, location) list, canonical under
/// thread permutation and location renaming.
fn key(threads: &[Vec<(char, u8)>]) -> String {
    let n = threads.len();
    let mut best: Option<String> = None;
    let mut perm: Vec<usize> = (0..n).collect();
    permutations(&mut perm, 0, &mut |perm| {
        let mut locs: Vec<u8> = Vec::new();
        let mut s = String::new();
        for &t in perm {
            s.push('|');
            for &(k, l) in &threads[t] {
                let i = match locs.iter().position(|&m| m == l) {
                    Some(i) => i,
                    None => {
                        locs.push(l);
                        locs.len() - 1
                    }
                };
                s.push(k);
                s.push((b'a' + i as u8) as char);
            }
        }
        if best.as_ref().is_none_or(|b| s < *b) {
            best = Some(s);
        }
    });
    best.unwrap_or_default()
}

fn permutations(v: &mut Vec<usize>, k: usize, f: &mut dyn FnMut(&[usize])) {
    if k == v.len() {
        f(v);
        return;
    }
    for i in k..v.len() {
        v.swap(k, i);
        permutations(v, k + 1, f);
        v.swap(k, i);
    }
}

fn parse_shape(text: &str) -> Vec<Vec<(char, u8)>> {
    text.split('|')
        .map(|t| {
            t.split_whitespace()
                .map(|o| {
                    let b = o.as_bytes();
                    (b[0] as char, b[1] - b'x')
                })
                .collect()
        })
        .collect()
}

/// The skeleton of a program with fences dropped (threads of fences only
/// dropped too).
pub fn skeleton(vocab: &Vocab, p: &SProgram) -> Vec<Vec<(char, u8)>> {
    p.threads
        .iter()
        .map(|t| {
            t.ops
                .iter()
                .filter_map(|o| match vocab.entries[o.entry].kind {
                    OpKind::Load => Some(('R', o.loc)),
                    OpKind::Store => Some(('W', o.loc)),
                    OpKind::Rmw => Some(('U', o.loc)),
                    OpKind::Fence => None,
                })
                .collect::<Vec<_>>()
        })
        .filter(|t| !t.is_empty())
        .collect()
}

/// The family name of a program, if its skeleton is a known one.
pub fn family(vocab: &Vocab, p: &SProgram) -> Option<&'static str> {
    let sk = skeleton(vocab, p);
    if sk.len() > 6 {
        return None;
    }
    let k = key(&sk);
    FAMILIES
        .iter()
        .find(|(_, s)| key(&parse_shape(s)) == k)
        .map(|f| f.0)
}

/// A name for a program without a known family: its skeleton, threads
/// joined by `+` (`WxRy+Wy`).
pub fn shape_name(vocab: &Vocab, p: &SProgram) -> String {
    skeleton(vocab, p)
        .iter()
        .map(|t| {
            t.iter()
                .map(|(k, l)| format!("{k}{}", crate::mapping::enumerate::loc_name(*l as usize)))
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("+")
}
