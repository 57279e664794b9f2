#!/usr/bin/env python3
"""Random small X86 litmus tests for differential campaigns between models
(docs/operational.md, "Round 5: a random differential campaign").

Each test has 3-4 threads and 5-7 instructions over 2-3 locations: plain
loads and stores, MFENCE between two instructions, and locked exchanges
(XCHG); every written value is distinct per location. The condition is a
conjunction over every register and location, so `litmix compare` compares
whole final states.

usage: scripts/x86-random-tests.py N SEED OUTDIR
then:  litmix compare --model lostpop --model x86tso --max-states 100000 --timeout 5 OUTDIR
"""
import os, random, sys

LOCS = ["x", "y", "z"]
REGS = ["EAX", "EBX", "ECX"]


def test(k, rnd):
    nt = rnd.choice([3, 4, 4])
    nl = rnd.choice([2, 3])
    sizes = [1] * nt
    while sum(sizes) < rnd.choice([5, 6, 7]):
        sizes[rnd.randrange(nt)] += 1
    threads, val, regs = [], {l: 0 for l in LOCS}, []
    for t in range(nt):
        ins, r = [], 0
        for i in range(sizes[t]):
            kind = rnd.choices(["ld", "st", "mf", "xchg"], [5, 5, 1, 1])[0]
            l = rnd.choice(LOCS[:nl])
            if kind == "ld" and r < 3:
                ins.append(f"MOV {REGS[r]},[{l}]")
                regs.append((t, REGS[r]))
                r += 1
            elif kind == "mf" and 0 < i < sizes[t] - 1:
                ins.append("MFENCE")
            elif kind == "xchg" and r < 3:
                val[l] += 1
                ins += [f"MOV {REGS[r]},${val[l]}", f"XCHG [{l}],{REGS[r]}"]
                regs.append((t, REGS[r]))
                r += 1
            else:
                val[l] += 1
                ins.append(f"MOV [{l}],${val[l]}")
        threads.append(ins)
    rows = [
        " " + " | ".join((t[i] if i < len(t) else "").ljust(14) for t in threads) + " ;"
        for i in range(max(len(t) for t in threads))
    ]
    terms = [f"P{t}:{r}=0" for t, r in regs] + [f"{l}=0" for l in LOCS[:nl]]
    return (
        f"X86 R{k}\n{{ " + " ".join(f"{l}=0;" for l in LOCS[:nl]) + " }\n"
        + " " + " | ".join(f"P{t}".ljust(14) for t in range(nt)) + " ;\n"
        + "\n".join(rows) + "\n"
        + "exists (" + " /\\ ".join(terms) + ")\n"
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
