#!/usr/bin/env bash
# The GPU job, run from the repository root:  bash .gpu/run.sh [--tiny] [--parts abcd]
# Unpacks .gpu/ (wheels, data) into a scratch folder, checks that everything imports, then runs
# tools/gpu/job.py, which writes one JSON file into $OUT as each part ends. Made by
# `make gpu-pack` (tools/gpu/run.sh is the source); `make gpu-rehearse` runs it on the CPU.
set -euo pipefail
PACK="$(cd "$(dirname "$0")" && pwd)"
cd "${GPU_ROOT:-$PACK/..}"
export OUT="${OUT:-$PWD/_build/gpu-out}"
export GPU_WORK="${GPU_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/d2lmini-gpu.XXXXXX")}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT"
"$PY" -m tools.gpu.unpack --pack "$PACK" --work "$GPU_WORK" --out "$OUT"
export PYTHONPATH="$PWD:$GPU_WORK/site" D2LMINI_DATA_DIR="$GPU_WORK/data" D2LMINI_OFFLINE=1
export MPLBACKEND=Agg PYTHONUNBUFFERED=1
exec "$PY" -m tools.gpu.job --pack "$PACK" --out "$OUT" "$@"
