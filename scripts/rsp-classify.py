#!/usr/bin/env python3
"""Classify counterexamples of the original OpenCL+RSP scheme by the seed 001
Table 3 entry that causes each (docs/rsp-cache.md, "Bound 4").

For every row N where the two schemes differ, a hybrid mapping is built:
mappings/opencl-rsp-original.map with row N's rules replaced by those of
mappings/opencl-rsp-proposed.map (rows are the `# (N)` comment blocks). A
counterexample is caused by row N when that one fix makes it sound; when no
single fix does, it is listed under the smallest set of fixed rows that does.

usage: scripts/rsp-classify.py LITMIX CEX_DIR   (CEX_DIR from verify-mapping --out)
"""
import itertools, json, os, re, subprocess, sys, tempfile
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rows(path):
    """Header lines, the rules of each `# (N)` block, and the tail."""
    head, blocks, tail, cur = [], {}, [], None
    for line in open(path):
        m = re.match(r"# \((\d)\)", line)
        if m:
            cur = int(m.group(1))
            blocks[cur] = [line]
        elif cur is not None and line.strip() == "" and cur == 9:
            cur = "tail"
            tail.append(line)
        elif cur == "tail":
            tail.append(line)
        elif cur is not None:
            blocks[cur].append(line)
        else:
            head.append(line)
    return head, blocks, tail


def main():
    litmix, cex = sys.argv[1], sys.argv[2]
    ohead, orows, otail = rows(os.path.join(ROOT, "mappings/opencl-rsp-original.map"))
    _, prows, _ = rows(os.path.join(ROOT, "mappings/opencl-rsp-proposed.map"))
    differ = [n for n in sorted(orows) if orows[n][1:] != prows[n][1:]]
    tmp = tempfile.mkdtemp()
    maps = {}
    for k in range(1, 3):
        for fix in itertools.combinations(differ, k):
            name = "hybrid-" + "-".join(map(str, fix))
            text = "".join(ohead).replace("mapping opencl-rsp-original", "mapping " + name)
            for n in sorted(orows):
                text += "".join(prows[n] if n in fix else orows[n])
            text += "".join(otail)
            path = os.path.join(tmp, name + ".map")
            open(path, "w").write(text)
            maps[fix] = path
    files = sorted(f for f in os.listdir(cex) if f.endswith(".litmus") and ".rsp-cache." not in f)
    causes, examples = defaultdict(int), {}
    for f in files:
        sound = lambda fix: json.loads(subprocess.run(
            [litmix, "check-mapping", "--mapping", maps[fix], "--json", os.path.join(cex, f)],
            capture_output=True, text=True).stdout)["verdict"] == "sound"
        found = [fix for fix in maps if len(fix) == 1 and sound(fix)]
        if not found:
            found = [fix for fix in maps if len(fix) == 2 and sound(fix)]
        key = " or ".join("+".join(map(str, fx)) for fx in found) or "none of the pairs"
        causes[key] += 1
        examples.setdefault(key, f)
    print(f"{len(files)} counterexamples; rows that differ: {differ}")
    print("| fixed row(s) that make it sound | counterexamples | example |")
    print("|---|---|---|")
    for key, n in sorted(causes.items(), key=lambda kv: -kv[1]):
        print(f"| {key} | {n} | `{examples[key]}` |")


if __name__ == "__main__":
    main()
