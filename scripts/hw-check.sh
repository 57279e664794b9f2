#!/usr/bin/env bash
# GPU validation of `litmix hw` (issues #31 and #33): run on a machine with
# an NVIDIA GPU (H100/H200) and its driver; everything else is tested in
# CI without one (tests/hw.rs). Writes $OUT (default hw-check-out/) with
# the raw JSON lines, SASS listings and summary.txt, the figures the
# issues' acceptance asks for. Every step has a time limit, so a hang
# costs no more than its step. Expected wall time: 4-7 minutes.
#
#   scripts/hw-check.sh                      # build if cargo is here, run every step
#   STEPS="compound shapes" scripts/hw-check.sh
#   OUT=dir ORACLES=dir INSTANCES=67600000 ORACLE_BUDGET=1s scripts/hw-check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-hw-check-out}
STEPS=${STEPS:-emit compound-sweep compound compound-profiles shapes profiles none oracles wrong sass tune}
INSTANCES=${INSTANCES:-67600000}          # the hand harness's 67.6 M per test (#31)
COMPOUND_INSTANCES=${COMPOUND_INSTANCES:-13100000}  # the hand harness's 13.1 M (#33)
NONE_INSTANCES=${NONE_INSTANCES:-20000000}
ORACLE_BUDGET=${ORACLE_BUDGET:-1s}
COMPOUND_STRESS=${COMPOUND_STRESS:-default}   # the sweep step replaces it by its pick
SWEEP_INSTANCES=${SWEEP_INSTANCES:-3000000}
# name:key=value,... (a profile per entry; the default's keys otherwise)
SWEEP=${SWEEP:-"default: pace2us:host_step_ns=2000,gpu_delay_cycles=0,gpu_delay_base_cycles=0 b6000-gd4000:gpu_delay_base_cycles=6000,gpu_delay_cycles=4000 b8000-gd1000:gpu_delay_base_cycles=8000,gpu_delay_cycles=1000 b8000-gd2000-s750:gpu_delay_base_cycles=8000,gpu_delay_cycles=2000,host_step_ns=750 b7500-gd3000-s2000:gpu_delay_base_cycles=7500,gpu_delay_cycles=3000,host_step_ns=2000 ranks128:host_ranks=128"}
SEED=${SEED:-1}
T_SHAPES=${T_SHAPES:-150}; T_PROFILE=${T_PROFILE:-60}; T_NONE=${T_NONE:-80}
T_COMPOUND=${T_COMPOUND:-110}; T_CMM=${T_CMM:-90}; T_ORACLES=${T_ORACLES:-120}
export PATH="$PATH:/usr/local/cuda/bin"
mkdir -p "$OUT"
ORACLES=${ORACLES:-}
for d in ../shared/oracles shared/oracles ../../shared/oracles hwdata/oracles; do
  [ -z "$ORACLES" ] && [ -d "$d/dat3m/PTX" ] && ORACLES=$d
done
log() { echo "[hw-check $(date +%T)] $*" | tee -a "$OUT/log.txt"; }
want() { case " $STEPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

B=target/release/litmix
if command -v cargo >/dev/null 2>&1; then
  log "building"
  cargo build --release 2>&1 | tail -2 | tee -a "$OUT/log.txt"
fi
[ -x "$B" ] || { log "no $B: build litmix first"; exit 2; }

log "device"
(nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv) > "$OUT/device.txt" 2>&1
cat "$OUT/device.txt" | tee -a "$OUT/log.txt"
(nproc; lscpu | grep -E "Model name|Socket|NUMA node\(s\)"; nvidia-smi topo -m) > "$OUT/host.txt" 2>&1
for t in cuobjdump nvdisasm ptxas; do
  if command -v $t >/dev/null 2>&1; then log "$t: $(command -v $t)"; else log "$t: absent"; fi
done

run_json() { # name timeout args...
  local name=$1 t=$2; shift 2
  log "$name"
  timeout "$t" "$B" hw run --json --seed "$SEED" "$@" > "$OUT/$name.jsonl" 2> "$OUT/$name.err"
  echo "rc=$?" > "$OUT/$name.rc"
}

if want emit; then
  # Kernels without the GPU (the same text the run JIT-compiles), and
  # every one of them through ptxas: syntax errors of all kernels at once.
  "$B" hw emit --out "$OUT/kernels" tests/hw/shapes tests/hw/compound tests/models/cmm \
    "$ORACLES/dat3m/PTX" "$ORACLES/mixedproxy/tests" 2>&1 | tee -a "$OUT/log.txt"
  if command -v ptxas >/dev/null 2>&1; then
    # One ptxas per kernel, as many at once as there are cores.
    ls "$OUT"/kernels/*.ptx | xargs -P "$(nproc)" -I{} sh -c \
      'ptxas -O3 -arch=sm_90 "$1" -o "$1.cubin" > "$1.log" 2>&1 || { echo "== $(basename "$1")"; head -5 "$1.log"; }' _ {} > "$OUT/ptxas.txt"
    rm -f "$OUT"/kernels/*.cubin "$OUT"/kernels/*.log
    log "ptxas: $(grep -c '^==' "$OUT/ptxas.txt") kernel(s) rejected"
  fi
fi
if want compound-sweep; then
  # #33 alignment: each SWEEP profile on the three weak compound shapes;
  # scripts/hw-sweep-pick.py picks the one that races most while every
  # shape is seen at least as often as by the hand harness.
  mkdir -p "$OUT/sweep"
  for spec in $SWEEP; do
    name=${spec%%:*}
    echo "${spec#*:}" | tr ',' '\n' | sed 's/=/ = /' > "$OUT/sweep/$name.txt"
    run_json "compound-sweep-$name" "$T_PROFILE" --stress "$OUT/sweep/$name.txt" --instances "$SWEEP_INSTANCES" \
      tests/hw/compound/MP-cpu-w-gpu-rlx.litmus tests/hw/compound/MP-gpu-rlx-cpu-r.litmus tests/hw/compound/SB-cpu-gpu.litmus
  done
  python3 scripts/hw-sweep-pick.py "$OUT" | tee "$OUT/sweep.txt" | tee -a "$OUT/log.txt"
  [ -s "$OUT/compound-best.txt" ] && COMPOUND_STRESS="$OUT/compound-best.txt"
fi
if want compound; then
  # #33: the six shapes at the hand harness's count, then every X86+PTX
  # test of the project (cmm), a short budget each.
  log "compound profile: $COMPOUND_STRESS"
  run_json compound-shapes "$T_COMPOUND" --stress "$COMPOUND_STRESS" --instances "$COMPOUND_INSTANCES" tests/hw/compound
  run_json compound-cmm "$T_CMM" --stress "$COMPOUND_STRESS" --budget 1s tests/models/cmm examples
  "$B" hw judge --model tests/hw/wrong-sc.cat --results "$OUT/compound-shapes.jsonl" tests/hw/compound > "$OUT/wrong-model-compound.txt" 2>&1
  echo "rc=$?" > "$OUT/wrong-model-compound.rc"
fi
if want compound-profiles; then
  # #33 alignment: the three weak compound shapes under each compound profile.
  for p in tests/hw/profiles/compound/*.txt; do
    run_json "compound-$(basename "$p" .txt)" "$T_PROFILE" --stress "$p" --instances "${CP_INSTANCES:-3000000}" \
      tests/hw/compound/MP-cpu-w-gpu-rlx.litmus tests/hw/compound/MP-gpu-rlx-cpu-r.litmus tests/hw/compound/SB-cpu-gpu.litmus
  done
fi
if want shapes; then
  run_json shapes-default "$T_SHAPES" --instances "$INSTANCES" tests/hw/shapes
fi
if want profiles; then
  for p in ${PROFILES:-tests/hw/profiles/*.txt}; do
    run_json "shapes-$(basename "$p" .txt)" "$T_PROFILE" --stress "$p" --instances "$INSTANCES" tests/hw/shapes
  done
fi
if want none; then
  run_json shapes-none "$T_NONE" --stress none --instances "$NONE_INSTANCES" tests/hw/shapes
fi
if want oracles; then
  [ -n "$ORACLES" ] || log "WARNING: no shared/oracles found (set ORACLES=DIR)"
  run_json oracles "$T_ORACLES" --budget "$ORACLE_BUDGET" "$ORACLES/dat3m/PTX" "$ORACLES/mixedproxy/tests"
fi
if want wrong; then
  # A deliberately wrong model (SC) must be caught on the saved shapes.
  log "wrong model"
  "$B" hw judge --model tests/hw/wrong-sc.cat --results "$OUT/shapes-default.jsonl" tests/hw/shapes > "$OUT/wrong-model.txt" 2>&1
  echo "rc=$?" > "$OUT/wrong-model.rc"
fi
if want sass && command -v ptxas >/dev/null 2>&1 && command -v cuobjdump >/dev/null 2>&1; then
  # SASS listings of the shapes for the record (ptxas -O3 as the JIT does).
  mkdir -p "$OUT/sass"
  ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')
  for f in "$OUT"/kernels/*.ptx; do
    n=$(basename "$f" .ptx)
    case "$n" in MP-*|SB-*|LB-*|CoRR-*|IRIW-*) ;; *) continue ;; esac
    ptxas -O3 -arch="sm_${ARCH:-90}" "$f" -o "$OUT/sass/$n.cubin" 2>>"$OUT/log.txt" &&
      cuobjdump -sass "$OUT/sass/$n.cubin" > "$OUT/sass/$n.sass" 2>>"$OUT/log.txt"
  done
fi

if want tune; then
  # hw tune on silicon: a short random search over stress profiles on the
  # weak GPU shapes (the profile it writes is for the record).
  log "tune"
  timeout "${T_TUNE:-120}" "$B" hw tune --trials "${TUNE_TRIALS:-6}" --budget "${TUNE_BUDGET:-0.5s}" --out "$OUT/tune-profile.txt" \
    tests/hw/shapes/MP-relaxed.litmus tests/hw/shapes/MP-rel-acq-cta.litmus tests/hw/shapes/SB-relaxed.litmus \
    tests/hw/shapes/LB-relaxed.litmus > "$OUT/tune.txt" 2>&1
  echo "rc=$?" > "$OUT/tune.rc"
fi

log "summary"
python3 scripts/hw-summary.py "$OUT" > "$OUT/summary.txt"
cat "$OUT/summary.txt"
