#!/usr/bin/env python3
"""herd7 as an oracle for litmix on herd's own library (issue #28).

herd7 is run by hand, never in CI: this script writes herd7's outputs as
expected files (tests/herd-expected/), which tests/herd_expected_library.rs
compares litmix with; and it measures agreement and speed against herd7.

Inputs (from ../shared/oracles/herd, herdtools7 commit 003cd66b):
  library/  herd/libdir of that commit (the models, stdlib.cat, bells)
  suite/    the X86 and C tests of catalogue/, doc/ and herd/tests/
Build herd7 with ../shared/tools/build-herd7.sh; it prints the command line.

  herd-oracle.py loadable --herd 'HERD'          models herd7 runs on an X86 / C test
  herd-oracle.py expected --herd 'HERD'          rewrite tests/herd-expected/*.txt
  herd-oracle.py compare [--herd 'HERD']         litmix against herd7 (or the expected
                                                 files), pair by pair, with a summary
  herd-oracle.py speed --herd 'HERD' MODEL DIR   herd7 and litmix side by side on DIR
  herd-oracle.py printed --herd 'HERD' MODEL DIR herd7 on each test of DIR and on litmix's
                                                 print of it (`litmix convert`): same lines

HERD is the command without -I (e.g. /tmp/herd/src/_build/default/herd/herd.exe).
"""
import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# LITMIX_HERD_ORACLES names a folder holding library/ and suite/ where the
# shared oracles lack them.
SHARED = next(
    (p for p in (os.environ.get("LITMIX_HERD_ORACLES", ""),
                 os.path.join(ROOT, "../shared/oracles/herd"),
                 os.path.join(ROOT, "../../shared/oracles/herd"))
     if os.path.isdir(os.path.join(p, "library")) and os.path.isdir(os.path.join(p, "suite"))),
    None)
EXPECTED = os.path.join(ROOT, "tests/herd-expected")
LITMIX = os.path.join(ROOT, "target/release/litmix")
# One X86 and one C test that every model runs on if it runs at all.
PROBES = {"X86": "suite/catalogue/x86/tests/SB.litmus",
          "C": "suite/catalogue/c11popl15/tests/illustrative/a1.litmus"}
TIMEOUT = 60


def arch_of(path):
    with open(path, errors="replace") as f:
        return f.readline().split()[0] if f else ""


def suite_tests():
    """(arch, path relative to SHARED) of every X86 and C test of the suite."""
    out = []
    base = os.path.join(SHARED, "suite")
    for d, _, files in sorted(os.walk(base)):
        for f in sorted(files):
            if f.endswith(".litmus"):
                p = os.path.join(d, f)
                a = arch_of(p)
                if a in ("X86", "C"):
                    out.append((a, os.path.relpath(p, SHARED)))
    return out


def models():
    lib = os.path.join(SHARED, "library")
    return sorted(f[:-4] for f in os.listdir(lib) if f.endswith(".cat"))


def herd_run(herd, model, tests, timeout=TIMEOUT):
    """herd7's output for one model on one test: stdout, or the stderr
    lines when it gives no result. Run in SHARED, tests named relatively."""
    cmd = herd.split() + ["-I", "library", "-model", f"library/{model}.cat"] + tests
    try:
        p = subprocess.run(cmd, cwd=SHARED, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    return p.stdout, p.stderr


def herd_block(herd, model, test):
    out, err = herd_run(herd, model, [test])
    if out is None:
        return "Timeout\n"
    if out.strip():
        return out
    lines = [l for l in err.splitlines() if l.strip()]
    return "\n".join(lines[-1:]) + "\n"


def split_blocks(out):
    """herd7's stdout over several tests: {test name: block}."""
    blocks = {}
    cur = None
    for line in out.splitlines(keepends=True):
        if line.startswith("Test "):
            cur = line.split()[1]
            blocks[cur] = ""
        if cur is not None:
            blocks[cur] += line
            if line.startswith("Time "):
                cur = None
    return blocks


def test_name(path):
    with open(os.path.join(SHARED, path), errors="replace") as f:
        return f.readline().split()[1]


def herd_blocks(herd, model, tests):
    """herd7's block per test, one herd7 run for all of them; a test
    without a block (rejected, or run past the time limit) is run alone."""
    batches = []
    for t in tests:
        b = next((b for b in batches if all(test_name(u) != test_name(t) for u in b)), None)
        if b is None:
            batches.append([t])
        else:
            b.append(t)
    res = {}
    for batch in batches:
        out, _ = herd_run(herd, model, batch, timeout=TIMEOUT * 4)
        blocks = split_blocks(out or "")
        for t in batch:
            b = blocks.get(test_name(t))
            res[t] = b if b is not None else herd_block(herd, model, t)
    return res


def loadable(herd):
    """{arch: [models herd7 runs on that arch's probe test]}."""
    res = {}
    for arch, probe in PROBES.items():
        res[arch] = [m for m in models() if herd_block(herd, m, probe).startswith("Test ")]
    return res


def write_expected(herd):
    os.makedirs(EXPECTED, exist_ok=True)
    ok = loadable(herd)
    tests = suite_tests()
    for m in models():
        archs = [a for a in ("X86", "C") if m in ok[a]]
        if not archs:
            continue
        mine = [t for arch, t in tests if arch in archs]
        blocks = herd_blocks(herd, m, mine)
        sections = [f"== {t}\n{blocks[t]}" for t in mine]
        with open(os.path.join(EXPECTED, f"{m}.txt"), "w") as f:
            f.write(f"# herd7 7.58+1 -I library -model library/{m}.cat TEST (in ../shared/oracles/herd);"
                    f" regenerate with scripts/herd-oracle.py expected\n")
            f.write("".join(sections))
        print(f"{m}: {len(sections)} tests", file=sys.stderr)
    with open(os.path.join(EXPECTED, "loadable.txt"), "w") as f:
        for arch in ("X86", "C"):
            f.write(f"{arch}: {' '.join(ok[arch])}\n")


def read_expected():
    """{model: [(test, herd7 block)]} from tests/herd-expected."""
    res = {}
    for f in sorted(os.listdir(EXPECTED)):
        if not f.endswith(".txt") or f == "loadable.txt":
            continue
        pairs = []
        for line in open(os.path.join(EXPECTED, f)):
            if line.startswith("== "):
                pairs.append([line[3:].strip(), ""])
            elif pairs:
                pairs[-1][1] += line
        res[f[:-4]] = [tuple(p) for p in pairs]
    return res


def relevant(block):
    return [l for l in block.splitlines()
            if l.strip() and not l.startswith("Time ") and not l.startswith("Hash=")]


def essential(block):
    """States, Observation and Witnesses lines (not the test's verdict
    words or condition, which follow from them)."""
    keep = []
    lines = block.splitlines()
    i = 0
    while i < len(lines):
        l = lines[i]
        if l.startswith("States "):
            n = int(l.split()[1])
            keep.append(l)
            keep.extend(sorted(lines[i + 1:i + 1 + n]))
            i += 1 + n
            continue
        if l.startswith("Observation ") or l.startswith("Positive:"):
            keep.append(l)
        i += 1
    return keep


def litmix_block(model, test, identical=True):
    cmd = [LITMIX, "run", "-I", "library", "--model", f"library/{model}.cat", "--timeout", str(TIMEOUT)]
    if identical:
        cmd.append("--herd-identical")
    cmd.append(test)
    try:
        p = subprocess.run(cmd, cwd=SHARED, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return "Timeout\n"
    return p.stdout if p.stdout.strip() else p.stderr


def litmix_blocks(model, tests):
    cmd = [LITMIX, "run", "-I", "library", "--model", f"library/{model}.cat", "--herd-identical",
           "--timeout", str(TIMEOUT)]
    res = {}
    names = {}
    for t in tests:
        names.setdefault(test_name(t), []).append(t)
    unique = [t for t in tests if len(names[test_name(t)]) == 1]
    p = subprocess.run(cmd + unique, cwd=SHARED, capture_output=True, text=True)
    blocks = split_blocks(p.stdout)
    for t in tests:
        b = blocks.get(test_name(t)) if t in unique else None
        res[t] = b if b is not None else litmix_block(model, t)
    return res


def compare(herd):
    exp = read_expected()
    total = agree = same = herd_fail = 0
    diffs = []
    for m, pairs in exp.items():
        lbs = litmix_blocks(m, [t for t, _ in pairs])
        for t, hb in pairs:
            if herd:
                hb = herd_block(herd, m, t)
            lb = lbs[t]
            if not hb.startswith("Test "):
                herd_fail += 1
                ok = not lb.startswith("Test ")
                diffs.append((m, t, "herd7 rejects" + ("" if ok else ", litmix answers"), hb.strip()[:160], lb.strip()[:160]))
                continue
            total += 1
            e_ok = essential(hb) == essential(lb)
            agree += e_ok
            same += relevant(hb) == relevant(lb)
            if not e_ok:
                diffs.append((m, t, "differs", hb, lb))
    for m, t, why, hb, lb in diffs:
        print(f"--- {m} {t}: {why}\n[herd7]\n{hb}\n[litmix]\n{lb}")
    print(f"pairs where herd7 answers: {total}; states/Observation/Witnesses agree: {agree}"
          f" ({100.0 * agree / max(total, 1):.1f} %); all lines but Time/Hash: {same};"
          f" herd7 rejects: {herd_fail}")


def speed(herd, model, d, runs=7):
    """herd7 and litmix alternating, `runs` times each: min and median wall time."""
    import statistics
    tests = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(d) for f in fs if f.endswith(".litmus"))
    lib = os.path.join(SHARED, "library")
    th, tl = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(herd.split() + ["-I", lib, "-model", model] + tests,
                       capture_output=True, text=True)
        th.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        # The library's file by its path: a bare name could be a built-in.
        out = subprocess.run([LITMIX, "run", "-I", lib, "--model", os.path.join(lib, model)] + tests,
                             capture_output=True, text=True)
        tl.append(time.perf_counter() - t0)
    answered = sum(1 for line in out.stdout.splitlines() if line.startswith("Test "))
    if answered == 0:
        sys.exit(f"litmix answered no test:\n{out.stderr[:2000]}")
    hm, lm = statistics.median(th), statistics.median(tl)
    print(f"{model} on {len(tests)} tests of {d} (litmix answers {answered}): "
          f"herd7 min {min(th):.3f} s median {hm:.3f} s, "
          f"litmix min {min(tl) * 1000:.1f} ms median {lm * 1000:.1f} ms, "
          f"ratio {min(th) / min(tl):.1f}x (min), {hm / lm:.1f}x (median)")


def printed(herd, model, d):
    """herd7's answer on each test of DIR against its answer on the test as
    litmix prints it back (`litmix convert`): the same lines but Time and
    Hash, or the same refusal."""
    import tempfile
    lib = os.path.join(SHARED, "library")
    tests = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(d) for f in fs if f.endswith(".litmus"))

    def herd_lines(path):
        p = subprocess.run(herd.split() + ["-I", lib, "-model", model, path],
                           capture_output=True, text=True, timeout=TIMEOUT)
        if not p.stdout.strip():
            # A refusal: its message, without the file name.
            return [l.replace(path, "FILE") for l in p.stderr.splitlines() if l.strip()][-1:]
        return relevant(p.stdout)

    same, differ, unprinted = 0, [], []
    with tempfile.TemporaryDirectory() as out:
        for t in tests:
            c = subprocess.run([LITMIX, "convert", t], capture_output=True, text=True)
            if c.returncode != 0:
                unprinted.append(t)
                continue
            back = os.path.join(out, "printed.litmus")
            with open(back, "w") as f:
                f.write(c.stdout)
            if herd_lines(t) == herd_lines(back):
                same += 1
            else:
                differ.append(t)
    for t in differ:
        print(f"differs: {t}")
    for t in unprinted:
        # litmix refuses the test itself (or cannot print it): the reason.
        print(f"not printed by litmix: {t}")
    print(f"{model} on {len(tests)} tests of {d}: herd7 answers the same on {same}, "
          f"differently on {len(differ)}; litmix printed {len(tests) - len(unprinted)}")
    if differ:
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", choices=["loadable", "expected", "compare", "speed", "printed"])
    ap.add_argument("--herd", help="herd7 command (without -I)")
    ap.add_argument("rest", nargs="*")
    a = ap.parse_args()
    if SHARED is None:
        sys.exit("../shared/oracles/herd not found")
    if a.cmd == "loadable":
        for arch, ms in loadable(a.herd).items():
            print(f"{arch} ({len(ms)}): {' '.join(ms)}")
    elif a.cmd == "expected":
        write_expected(a.herd)
    elif a.cmd == "compare":
        compare(a.herd)
    elif a.cmd == "speed":
        speed(a.herd, a.rest[0], a.rest[1])
    elif a.cmd == "printed":
        printed(a.herd, a.rest[0], a.rest[1])


if __name__ == "__main__":
    main()
