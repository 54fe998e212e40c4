"""The whole of CI, as .ci/run runs it, from a fresh clone of the committed tree: once on a quiet
machine and once beside a CPU-bound process (one Python thread spinning for the whole run), one
after the other. Each run's table of where its time went (tools/ci_times.py, the clone's
_build/ci-times.json) is kept part by part. Only with --only ci (about an hour on 2 cores);
--ci-from QUIET_CLONE BUSY_CLONE records two runs already made that way instead."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import common

BURNER = "while True:\n    pass\n"  # one core's worth of CPU-bound work, the whole run long


def one_run(clone: Path, busy: bool) -> dict:
    """``bash .ci/run`` in ``clone`` (beside a burner when ``busy``): exit status, wall time
    and the run's own table."""
    burner = subprocess.Popen([sys.executable, "-c", BURNER]) if busy else None
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(["bash", ".ci/run"], cwd=clone, capture_output=True, text=True,
                              env={**os.environ, "CI": "true"})
    finally:
        if burner is not None:
            burner.kill()
            burner.wait()
    seconds = time.perf_counter() - t0
    (clone / "_build" / "ci-run.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    return recorded(clone, busy, returncode=proc.returncode, seconds=seconds)


def recorded(clone: Path, busy: bool, returncode: int | None = None,
             seconds: float | None = None) -> dict:
    """What a finished run in ``clone`` left: its commit, its ci-times.json and the end of its
    log (``_build/ci-run.log`` where this module ran it)."""
    commit = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    times = json.loads((clone / "_build" / "ci-times.json").read_text(encoding="utf-8"))
    log = clone / "_build" / "ci-run.log"
    return {"busy": busy, "neighbour": "one Python thread spinning (python -c 'while True: "
            "pass') for the whole run" if busy else None, "commit": commit,
            "returncode": returncode, "seconds": seconds if seconds is not None
            else times["total"], "times": times,
            "log_tail": log.read_text(encoding="utf-8")[-1500:] if log.is_file() else None}


def run(args, device) -> dict:
    if getattr(args, "ci_from", None):
        quiet_dir, busy_dir = (Path(p).resolve() for p in args.ci_from)
        runs = [recorded(quiet_dir, busy=False), recorded(busy_dir, busy=True)]
    else:
        runs = []
        for busy in (False, True):
            clone = Path(tempfile.mkdtemp(prefix="ci-run-")) / "repo"
            subprocess.run(["git", "clone", "-q", str(common.ROOT), str(clone)], check=True)
            print(f"[ci] {'busy' if busy else 'quiet'} run in {clone}", flush=True)
            runs.append(one_run(clone, busy))
            print(f"  {runs[-1]['seconds']:.0f} s, exit {runs[-1]['returncode']}", flush=True)
            shutil.rmtree(clone.parent, ignore_errors=True)
    result = {"runs": runs,
              "ratios": {"busy_over_quiet": runs[1]["seconds"] / runs[0]["seconds"]}}
    common.write(sys.modules[__name__], result, device)
    return result
