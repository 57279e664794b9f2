#!/usr/bin/env bash
# GPU validation of `litmix hw` (issue #31): run ONCE on a machine with an
# NVIDIA GPU (H100/H200) and its driver; everything else is tested in CI
# without one (tests/hw.rs). Writes $OUT (default hw-check-out/) with the
# raw JSON lines, SASS listings and summary.txt, the figures the issue's
# acceptance asks for. Expected wall time: 4-8 minutes.
#
#   scripts/hw-check.sh                # build, run everything
#   OUT=dir INSTANCES=67600000 ORACLE_BUDGET=1s scripts/hw-check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-hw-check-out}
INSTANCES=${INSTANCES:-67600000}   # the hand harness's 67.6 M per test
ORACLE_BUDGET=${ORACLE_BUDGET:-1s}
SEED=${SEED:-1}
mkdir -p "$OUT"
ORACLES=${ORACLES:-}
for d in ../shared/oracles shared/oracles ../../shared/oracles; do
  [ -z "$ORACLES" ] && [ -d "$d/dat3m/PTX" ] && ORACLES=$d
done
log() { echo "[hw-check $(date +%T)] $*" | tee -a "$OUT/log.txt"; }

B=target/release/litmix
if command -v cargo >/dev/null 2>&1; then
  log "building"
  cargo build --release 2>&1 | tail -2 | tee -a "$OUT/log.txt"
fi
[ -x "$B" ] || { log "no $B: build litmix first"; exit 2; }

log "device"
(nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv) > "$OUT/device.txt" 2>&1
cat "$OUT/device.txt" | tee -a "$OUT/log.txt"
for t in cuobjdump nvdisasm ptxas; do
  if command -v $t >/dev/null 2>&1; then log "$t: $(command -v $t)"; else log "$t: absent"; fi
done
if ! command -v cuobjdump >/dev/null 2>&1 && ! command -v nvdisasm >/dev/null 2>&1; then
  log "WARNING: no cuobjdump/nvdisasm: the SASS check will report 'unchecked'"
fi

# 1. Kernels without the GPU (the same text the run JIT-compiles).
"$B" hw emit --out "$OUT/kernels" tests/hw/shapes "$ORACLES/dat3m/PTX" "$ORACLES/mixedproxy/tests" \
  2>&1 | tee -a "$OUT/log.txt"

# 2. The twelve shapes, default stress, then no stress.
log "shapes, default stress, $INSTANCES instances each"
"$B" hw run --json --seed "$SEED" --instances "$INSTANCES" tests/hw/shapes > "$OUT/shapes-default.jsonl" 2> "$OUT/shapes-default.err"
echo "rc=$?" > "$OUT/shapes-default.rc"
log "shapes, no stress"
"$B" hw run --json --seed "$SEED" --stress none --instances "$INSTANCES" tests/hw/shapes > "$OUT/shapes-none.jsonl" 2> "$OUT/shapes-none.err"
echo "rc=$?" > "$OUT/shapes-none.rc"
# The text report of the default run, for people.
"$B" hw run --seed "$SEED" --instances 10000000 tests/hw/shapes/MP-relaxed.litmus tests/hw/shapes/SB-fence-sc.litmus > "$OUT/shapes-sample.txt" 2>&1

# 3. Every oracle PTX test the harness supports.
[ -n "$ORACLES" ] || log "WARNING: no shared/oracles found (set ORACLES=DIR)"
log "oracle PTX tests, $ORACLE_BUDGET each"
"$B" hw run --json --seed "$SEED" --budget "$ORACLE_BUDGET" "$ORACLES/dat3m/PTX" "$ORACLES/mixedproxy/tests" \
  > "$OUT/oracles.jsonl" 2> "$OUT/oracles.err"
echo "rc=$?" > "$OUT/oracles.rc"

# 4. A deliberately wrong model (SC) must be caught on the saved shapes.
log "wrong model"
"$B" hw judge --model tests/hw/wrong-sc.cat --results "$OUT/shapes-default.jsonl" tests/hw/shapes > "$OUT/wrong-model.txt" 2>&1
echo "rc=$?" > "$OUT/wrong-model.rc"

# 5. SASS listings of the shapes for the record (ptxas -O3 as the JIT does).
if command -v ptxas >/dev/null 2>&1 && command -v cuobjdump >/dev/null 2>&1; then
  mkdir -p "$OUT/sass"
  ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')
  for f in "$OUT"/kernels/*.ptx; do
    n=$(basename "$f" .ptx)
    case "$n" in MP-*|SB-*|LB-*|CoRR-*|IRIW-*) ;; *) continue ;; esac
    ptxas -O3 -arch="sm_${ARCH:-90}" "$f" -o "$OUT/sass/$n.cubin" 2>>"$OUT/log.txt" &&
      cuobjdump -sass "$OUT/sass/$n.cubin" > "$OUT/sass/$n.sass" 2>>"$OUT/log.txt"
  done
fi

# 6. Summary.
log "summary"
python3 - "$OUT" > "$OUT/summary.txt" <<'PY'
import json, sys, os
out = sys.argv[1]
hand = {"MP-relaxed": 8439, "MP-rel-acq-cta": 5639, "MP-weak": 38494, "SB-relaxed": 1402726}
def rows(name):
    p = os.path.join(out, name)
    if not os.path.exists(p):
        return []
    return [json.loads(l) for l in open(p) if l.strip()]
def rc(name):
    try:
        return open(os.path.join(out, name)).read().strip()
    except OSError:
        return "rc=?"
print(open(os.path.join(out, "device.txt")).read().strip())
for run in ["shapes-default", "shapes-none"]:
    print(f"\n== {run} ({rc(run + '.rc')}) ==")
    print(f"{'test':22} {'instances':>12} {'cond seen':>10} {'per 67.6M':>10} {'hand':>9} {'forbidden':>9} {'M inst/s':>9}  sass  verdict")
    for r in rows(run + ".jsonl"):
        if "refused" in r:
            print(f"{r['test']:22} refused: {r['refused']}")
            continue
        n = r["instances"]; c = r["condition_sightings"]
        per = c * 67.6e6 / n if n else 0
        h = hand.get(r["test"], "")
        sass = r.get("sass", {})
        s = "ok" if sass.get("ok") else ("unchecked" if not sass.get("checked") else "FAIL")
        print(f"{r['test']:22} {n:12,} {c:10,} {per:10,.0f} {h!s:>9} {r['forbidden_sightings']:9,} {r['instances_per_second']/1e6:9.1f}  {s:5} {r['verdict']}")
o = rows("oracles.jsonl")
ran = [r for r in o if "refused" not in r]
ref = [r for r in o if "refused" in r]
bad = [r for r in ran if r["verdict"] != "observed-within-allowed"]
print(f"\n== oracles ({rc('oracles.rc')}) ==\n{len(ran)} run, {len(ref)} refused, {len(bad)} with forbidden states seen")
for r in bad:
    print("  FORBIDDEN SEEN:", r["test"], r["file"], r["forbidden_sightings"])
weak = [r for r in ran if r["condition_sightings"] > 0]
print(f"{len(weak)} tests saw their condition's states at least once")
sf = [r for r in ref + rows('shapes-default.jsonl') if "SASS check failed" in r.get("refused", "")]
print(f"refused by the SASS check (accesses merged or reordered): {len(sf)}")
for r in sf:
    print("  ", r["test"], r["refused"][:200])
unc = [r for r in ran if not r.get("sass", {}).get("checked")]
print(f"runs whose SASS could not be checked: {len(unc)}")
print(f"\n== wrong model ({rc('wrong-model.rc')}; expected rc=1) ==")
for l in open(os.path.join(out, "wrong-model.txt")):
    if "Verdict" in l or l.startswith("Test "):
        print(" ", l.rstrip())
PY
cat "$OUT/summary.txt"
