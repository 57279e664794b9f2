#!/usr/bin/env python3
"""Picks the compound profile of a scripts/hw-check.sh sweep (issue #33).

Reads OUT/compound-sweep-NAME.jsonl for every swept profile NAME (the
three weak compound shapes at the same instance count each) and prints a
table: per shape the condition's sightings scaled to 13.1 M instances and
the raced share. A profile is eligible when each shape's sightings per
instance reach the hand harness's (8,623 / 15,194 / 20,797 per 13.1 M);
among those the one whose smaller MP raced share is largest wins (ties:
more sightings). Writes OUT/compound-best.txt (a copy of the winner's
profile file, from OUT/sweep/NAME.txt) and prints its name last."""
import glob, json, os, shutil, sys

out = sys.argv[1]
HAND = {"MP-cpu-w-gpu-rlx": 8623, "MP-gpu-rlx-cpu-r": 15194, "SB-cpu-gpu": 20797}
MP = ["MP-cpu-w-gpu-rlx", "MP-gpu-rlx-cpu-r"]
rows = []
for p in sorted(glob.glob(os.path.join(out, "compound-sweep-*.jsonl"))):
    name = os.path.basename(p)[len("compound-sweep-"):-len(".jsonl")]
    by = {}
    for line in open(p):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if "refused" in r or not r.get("instances"):
            continue
        n = r["instances"]
        by[r["test"]] = (r["condition_sightings"] * 13.1e6 / n, r.get("raced", 0) / n, r["forbidden_sightings"])
    if set(by) >= set(HAND):
        rows.append((name, by))
print(f"{'profile':22} " + " ".join(f"{t:>26}" for t in HAND) + "  eligible")
best = None
for name, by in rows:
    ok = all(by[t][0] >= HAND[t] for t in HAND) and all(by[t][2] == 0 for t in HAND)
    score = (min(by[t][1] for t in MP), sum(by[t][0] for t in HAND))
    cells = " ".join(f"{by[t][0]:>14,.0f} ({100 * by[t][1]:5.1f} %)" for t in HAND)
    print(f"{name:22} {cells}  {'yes' if ok else 'no'}")
    if ok and (best is None or score > best[1]):
        best = (name, score)
if best is None:
    print("no eligible profile")
    sys.exit(1)
shutil.copy(os.path.join(out, "sweep", best[0] + ".txt"), os.path.join(out, "compound-best.txt"))
print(f"best: {best[0]} (smaller MP raced share {100 * best[1][0]:.1f} %)")
