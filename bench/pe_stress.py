"""Chapter 3's check of d2l.PositionalEncoding against its float64 NumPy table, run again and
again in the state the chapter leaves a kernel in, on a quiet machine and beside CPU-bound
processes (one spinning Python process per core). Each repetition starts a fresh process that
runs the English chapter's code cells, in an IPython shell as the book build does, up to and
including that check, then runs the check cell again; every run of the cell is recorded (passed
or its error), with the largest difference and the entries beyond the chapter's tolerance of
1e-4. Only with --only pe_stress; --stress-processes and --stress-repeats set the sizes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from . import common

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "book" / "en" / "embeddings-positional-encoding.md"
CHECK_MARK = "max_errors = {}"  # the first line of the check cell
BURNER = "while True:\n    pass\n"

DRIVER = r'''
import json, sys
import jupytext, numpy as np
from IPython.core.interactiveshell import InteractiveShell
chapter, mark, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
cells = [c.source for c in jupytext.read(chapter).cells if c.cell_type == "code"]
last = next(i for i, source in enumerate(cells) if source.startswith(mark))
shell = InteractiveShell.instance()
for source in cells[:last]:
    if not shell.run_cell(source, silent=True).success:
        raise SystemExit(f"an earlier cell failed: {source[:60]!r}")
runs = []
for _ in range(repeats):
    result = shell.run_cell(cells[last], silent=True)
    ns = shell.user_ns
    P_torch = ns["d2l"].PositionalEncoding(100, 0).P[0].numpy()
    diff = np.abs(P_torch - ns["positional_encoding"](P_torch.shape[0], 100))
    bad = np.argwhere(diff > 1e-4)
    runs.append({"passed": result.success,
                 "error": None if result.success else repr(result.error_in_exec)[:600],
                 "max_error_d100": float(diff.max()), "entries_over_1e-4": int(len(bad)),
                 "first_entries": bad[:5].tolist()})
print("RESULT " + json.dumps(runs))
'''


def one_process(repeats: int) -> list[dict]:
    """A fresh process: chapter 3's cells up to the check, then the check ``repeats`` times."""
    env = {**os.environ, "D2LMINI_OFFLINE": "1", "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(CHAPTER), CHECK_MARK,
                           str(repeats)], capture_output=True, text=True, env=env, cwd=ROOT)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if proc.returncode or line is None:
        raise RuntimeError(f"the chapter's cells failed (exit {proc.returncode}):\n"
                           f"{proc.stderr[-3000:]}")
    return json.loads(line[len("RESULT "):])


def condition(busy: bool, processes: int, repeats: int) -> dict:
    """``processes`` fresh processes of ``repeats`` checks each, beside one burner per core when
    ``busy``."""
    burners = [subprocess.Popen([sys.executable, "-c", BURNER])
               for _ in range(os.cpu_count() or 1)] if busy else []
    runs, t0 = [], time.perf_counter()
    try:
        for i in range(processes):
            runs.extend(one_process(repeats))
            print(f"  {'busy' if busy else 'quiet'}: process {i + 1}/{processes}, "
                  f"{sum(not r['passed'] for r in runs)} failed of {len(runs)}", flush=True)
    finally:
        for b in burners:
            b.kill()
            b.wait()
    failed = [r for r in runs if not r["passed"]]
    return {"busy": busy, "burners": len(burners), "processes": processes,
            "checks": len(runs), "failed": len(failed),
            "max_error_d100": max(r["max_error_d100"] for r in runs),
            "failures": failed[:20], "seconds": round(time.perf_counter() - t0, 1)}


def run(args, device) -> None:
    processes = getattr(args, "stress_processes", None) or 10
    repeats = getattr(args, "stress_repeats", None) or 25
    results = {}
    for busy in (True, False):
        results["busy" if busy else "quiet"] = condition(busy, processes, repeats)
        common.write(sys.modules[__name__], {"settings": {"processes": processes,
                     "repeats_per_process": repeats}, "conditions": results}, device)
