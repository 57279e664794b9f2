#!/usr/bin/env python3
"""Random small PTX litmus tests for differential campaigns (lostpop against
ptx6: every state lostpop allows must be allowed by ptx6; docs/operational.md,
"Reads in program order, RMWs").

2-4 threads in two CTAs of one GPU, 4-6 instructions over 2-3 locations:
ld/st weak, relaxed, acquire/release, fence.sc/acq_rel, atom.add, scopes
cta/gpu/sys. The condition names every register and location.

usage: scripts/ptx-random-tests.py N SEED OUTDIR
then:  litmix compare --model lostpop --model ptx6 --max-states 100000 --timeout 5 OUTDIR
"""
import os, random, sys

LOCS = ["x", "y", "z"]
SCOPES = ["cta", "gpu", "sys"]


def test(k, rnd):
    nt, nl = rnd.choice([2, 3, 3, 4]), rnd.choice([2, 3])
    sizes, total = [1] * nt, rnd.choice([4, 5, 6])
    while sum(sizes) < total:
        sizes[rnd.randrange(nt)] += 1
    val, threads, regs = {l: 0 for l in LOCS}, [], []
    for t in range(nt):
        ins, r = [], 0
        for i in range(sizes[t]):
            kind = rnd.choices(["ld", "st", "f", "atom"], [5, 5, 1, 1])[0]
            l, sc = rnd.choice(LOCS[:nl]), rnd.choice(SCOPES)
            if kind == "ld":
                sem = rnd.choice(["weak", "relaxed", "acquire"])
                ins.append(f"ld.weak r{r}, {l}" if sem == "weak" else f"ld.{sem}.{sc} r{r}, {l}")
                regs.append((t, r))
                r += 1
            elif kind == "f" and 0 < i < sizes[t] - 1:
                ins.append(f"fence.{rnd.choice(['sc', 'acq_rel'])}.{sc}")
            elif kind == "atom":
                sem = rnd.choice(["relaxed", "acquire", "release", "acq_rel"])
                ins.append(f"atom.{sem}.{sc}.add r{r}, {l}, 1")
                regs.append((t, r))
                r += 1
            else:
                sem = rnd.choice(["weak", "relaxed", "release"])
                val[l] += 10
                ins.append(f"st.weak {l}, {val[l]}" if sem == "weak" else f"st.{sem}.{sc} {l}, {val[l]}")
        threads.append(ins)
    hdr = [f"P{t}@cta {rnd.choice([0, 1])},gpu 0" for t in range(nt)]
    w = 32
    rows = [
        " " + " | ".join((th[i] if i < len(th) else "").ljust(w) for th in threads) + " ;"
        for i in range(max(map(len, threads)))
    ]
    terms = [f"P{t}:r{r} == 0" for t, r in regs] + [f"{l} == 0" for l in LOCS[:nl]]
    return (
        f"PTX R{k}\n{{\n" + " ".join(f"{l}=0;" for l in LOCS[:nl]) + "\n}\n "
        + " | ".join(h.ljust(w) for h in hdr) + " ;\n" + "\n".join(rows)
        + "\nexists\n(" + " /\\ ".join(terms) + ")\n"
    )


def main():
    n, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    os.makedirs(out, exist_ok=True)
    rnd = random.Random(seed)
    for k in range(n):
        with open(os.path.join(out, f"R{k:05d}.litmus"), "w") as f:
            f.write(test(k, rnd))


if __name__ == "__main__":
    main()
