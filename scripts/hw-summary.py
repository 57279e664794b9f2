#!/usr/bin/env python3
"""Summarises a scripts/hw-check.sh output folder (argument): per run,
each test's instances, condition sightings, rate per 67.6 M (GPU) or
13.1 M (CPU+GPU) instances beside the hand harness's, forbidden
sightings, throughput, SASS check and verdict."""
import glob, json, os, sys

out = sys.argv[1]
HAND = {"MP-relaxed": 8439, "MP-rel-acq-cta": 5639, "MP-weak": 38494, "SB-relaxed": 1402726}
HAND_COMPOUND = {"MP-cpu-w-gpu-rlx": 8623, "MP-gpu-rlx-cpu-r": 15194, "SB-cpu-gpu": 20797}


def rows(name):
    p = os.path.join(out, name)
    if not os.path.exists(p):
        return []
    r = []
    for line in open(p):
        line = line.strip()
        if line:
            try:
                r.append(json.loads(line))
            except ValueError:
                pass
    return r


def rc(name):
    try:
        return open(os.path.join(out, name)).read().strip()
    except OSError:
        return "rc=?"


def table(run, per, hand):
    print(f"\n== {run} ({rc(run + '.rc')}) ==")
    print(f"{'test':34} {'instances':>12} {'cond seen':>10} {'per ' + per:>11} {'hand':>9} {'forbidden':>9} {'M inst/s':>8} {'dev M/s':>8} {'raced %':>7}  sass  verdict")
    for r in rows(run + ".jsonl"):
        if "refused" in r:
            print(f"{r['test']:34} refused: {r['refused'][:160]}")
            continue
        n = r["instances"]; c = r["condition_sightings"]
        scale = 67.6e6 if per == "67.6M" else 13.1e6
        sass = r.get("sass", {})
        s = "ok" if sass.get("ok") else ("unchk" if not sass.get("checked") else "FAIL")
        dev = n / r["device_seconds"] / 1e6 if r.get("device_seconds") else 0
        raced = f"{100 * r['raced'] / n:7.1f}" if "raced" in r and n else "      -"
        print(f"{r['test']:34} {n:12,} {c:10,} {c * scale / n if n else 0:11,.0f} {hand.get(r['test'], '')!s:>9} "
              f"{r['forbidden_sightings']:9,} {r.get('instances_per_second', 0) / 1e6:8.1f} {dev:8.1f} {raced}  {s:5} {r['verdict']}")


print(open(os.path.join(out, "device.txt")).read().strip() if os.path.exists(os.path.join(out, "device.txt")) else "no device.txt")
for p in sorted(glob.glob(os.path.join(out, "compound-*.jsonl"))):
    table(os.path.basename(p)[:-6], "13.1M", HAND_COMPOUND)
for p in sorted(glob.glob(os.path.join(out, "shapes-*.jsonl"))):
    table(os.path.basename(p)[:-6], "67.6M", HAND)
o = rows("oracles.jsonl")
if o:
    ran = [r for r in o if "refused" not in r]
    ref = [r for r in o if "refused" in r]
    bad = [r for r in ran if r["verdict"] != "observed-within-allowed"]
    print(f"\n== oracles ({rc('oracles.rc')}) ==\n{len(ran)} run, {len(ref)} refused, {len(bad)} with forbidden states seen")
    for r in bad:
        print("  FORBIDDEN SEEN:", r["test"], r["file"], r["forbidden_sightings"])
    print(f"{len([r for r in ran if r['condition_sightings'] > 0])} tests saw their condition's states at least once")
    sf = [r for r in ref if "SASS check failed" in r.get("refused", "")]
    print(f"refused by the SASS check (accesses merged or reordered): {len(sf)}")
    for r in sf:
        print("  ", r["test"], r["refused"][:200])
for name in ["wrong-model", "wrong-model-compound"]:
    p = os.path.join(out, name + ".txt")
    if os.path.exists(p):
        print(f"\n== {name} ({rc(name + '.rc')}; expected rc=1) ==")
        for l in open(p):
            if "Verdict" in l or l.startswith("Test "):
                print(" ", l.rstrip())
