#!/usr/bin/env python3
"""Random small litmus tests for differential campaigns between models
(docs/operational.md, "Reads in program order, RMWs").

x86: 3-4 threads, 5-7 instructions over 2-3 locations: plain loads and
stores, MFENCE between two instructions, locked exchanges (XCHG); every
written value is distinct per location.
x86wide: 5-6 threads, 6-8 instructions over 2-3 locations, each thread
using one or two of them, so that several threads never touch a location
(LOST-POP's silent groups, docs/operational.md rule 7); same instructions.
ptx: 2-4 threads in two CTAs of one GPU, 4-6 instructions over 2-3
locations: ld/st weak, relaxed, acquire/release, fence.sc/acq_rel,
atom.add, scopes cta/gpu/sys.
ptxctrl: as ptx, and after a load or RMW, at random, a branch on its
register: to the next instruction (a control dependency only) or over the
next instruction (taken when the value read is not 0); LOST-POP passes
such branches on a guess (docs/operational.md, "Speculative loads").
The condition is a conjunction over every register and location, so
`litmix compare` compares whole final states.

usage: scripts/random-tests.py x86|x86wide|ptx|ptxctrl N SEED OUTDIR
then:  litmix compare --model lostpop --model x86tso (or ptx6) \\
           --max-states 100000 --timeout 5 OUTDIR
"""
import os, random, sys

LOCS = ["x", "y", "z"]


def sizes_of(rnd, nt, total):
    """Instructions per thread: at least one each, `total` in all."""
    sizes = [1] * nt
    while sum(sizes) < total():
        sizes[rnd.randrange(nt)] += 1
    return sizes


def x86_threads(rnd, wide=False):
    regs_names = ["EAX", "EBX", "ECX"]
    if wide:
        nt, nl = rnd.choice([5, 6]), rnd.choice([2, 3])
        sizes = sizes_of(rnd, nt, lambda: rnd.choice([6, 7, 8]))
    else:
        nt, nl = rnd.choice([3, 4, 4]), rnd.choice([2, 3])
        sizes = sizes_of(rnd, nt, lambda: rnd.choice([5, 6, 7]))
    threads, val, regs = [], {l: 0 for l in LOCS}, []
    for t in range(nt):
        ins, r = [], 0
        mine = rnd.sample(LOCS[:nl], rnd.choice([1, 2])) if wide else LOCS[:nl]
        for i in range(sizes[t]):
            kind = rnd.choices(["ld", "st", "mf", "xchg"], [5, 5, 1, 1])[0]
            l = rnd.choice(mine)
            if kind == "ld" and r < 3:
                ins.append(f"MOV {regs_names[r]},[{l}]")
                regs.append(f"P{t}:{regs_names[r]}=0")
                r += 1
            elif kind == "mf" and 0 < i < sizes[t] - 1:
                ins.append("MFENCE")
            elif kind == "xchg" and r < 3:
                val[l] += 1
                ins += [f"MOV {regs_names[r]},${val[l]}", f"XCHG [{l}],{regs_names[r]}"]
                regs.append(f"P{t}:{regs_names[r]}=0")
                r += 1
            else:
                val[l] += 1
                ins.append(f"MOV [{l}],${val[l]}")
        threads.append(ins)
    return threads, [f"P{t}" for t in range(nt)], regs + [f"{l}=0" for l in LOCS[:nl]], nl


def with_branches(rnd, t, ins):
    """Branches on loaded registers: a bare control dependency or a skip
    over the next instruction."""
    out, pending = [], None
    for k, i in enumerate(ins):
        out.append(i)
        if pending is not None:
            out.append(f"L{t}x{pending}:")
            pending = None
            continue
        if (i.startswith("ld") or i.startswith("atom")) and rnd.random() < 0.5:
            reg = i.split()[1].rstrip(",")
            if k + 1 < len(ins) and rnd.random() < 0.4:
                out.append(f"bne {reg}, 0, L{t}x{k}")
                pending = k
            else:
                out += [f"bne {reg}, 99, L{t}d{k}", f"L{t}d{k}:"]
    if pending is not None:
        out.append(f"L{t}x{pending}:")
    return out


def ptx_threads(rnd, ctrl=False):
    scopes = ["cta", "gpu", "sys"]
    nt, nl = rnd.choice([2, 3, 3, 4]), rnd.choice([2, 3])
    total = rnd.choice([4, 5, 6])
    sizes = sizes_of(rnd, nt, lambda: total)
    val, threads, regs = {l: 0 for l in LOCS}, [], []
    for t in range(nt):
        ins, r = [], 0
        for i in range(sizes[t]):
            kind = rnd.choices(["ld", "st", "f", "atom"], [5, 5, 1, 1])[0]
            l, sc = rnd.choice(LOCS[:nl]), rnd.choice(scopes)
            if kind == "ld":
                sem = rnd.choice(["weak", "relaxed", "acquire"])
                ins.append(f"ld.weak r{r}, {l}" if sem == "weak" else f"ld.{sem}.{sc} r{r}, {l}")
                regs.append(f"P{t}:r{r} == 0")
                r += 1
            elif kind == "f" and 0 < i < sizes[t] - 1:
                ins.append(f"fence.{rnd.choice(['sc', 'acq_rel'])}.{sc}")
            elif kind == "atom":
                sem = rnd.choice(["relaxed", "acquire", "release", "acq_rel"])
                ins.append(f"atom.{sem}.{sc}.add r{r}, {l}, 1")
                regs.append(f"P{t}:r{r} == 0")
                r += 1
            else:
                sem = rnd.choice(["weak", "relaxed", "release"])
                val[l] += 10
                ins.append(f"st.weak {l}, {val[l]}" if sem == "weak" else f"st.{sem}.{sc} {l}, {val[l]}")
        if ctrl:
            ins = with_branches(rnd, t, ins)
        threads.append(ins)
    headers = [f"P{t}@cta {rnd.choice([0, 1])},gpu 0" for t in range(nt)]
    return threads, headers, regs + [f"{l} == 0" for l in LOCS[:nl]], nl


def test(arch, k, rnd):
    if arch in ("x86", "x86wide"):
        threads, headers, terms, nl = x86_threads(rnd, arch == "x86wide")
        width, init = 14, "{ " + " ".join(f"{l}=0;" for l in LOCS[:nl]) + " }"
        cond = "exists ("
    else:
        threads, headers, terms, nl = ptx_threads(rnd, arch == "ptxctrl")
        width, init = 32, "{\n" + " ".join(f"{l}=0;" for l in LOCS[:nl]) + "\n}"
        cond = "exists\n("
    rows = [
        " " + " | ".join((th[i] if i < len(th) else "").ljust(width) for th in threads) + " ;"
        for i in range(max(map(len, threads)))
    ]
    return (
        f"{arch[:3].upper()} R{k}\n{init}\n "
        + " | ".join(h.ljust(width) for h in headers) + " ;\n"
        + "\n".join(rows) + "\n"
        + cond + " /\\ ".join(terms) + ")\n"
    )


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("x86", "x86wide", "ptx", "ptxctrl"):
        sys.exit(__doc__)
    arch, n, seed, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    os.makedirs(out, exist_ok=True)
    rnd = random.Random(seed)
    for k in range(n):
        with open(os.path.join(out, f"R{k:05d}.litmus"), "w") as f:
            f.write(test(arch, k, rnd))


if __name__ == "__main__":
    main()
