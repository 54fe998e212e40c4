"""The wall clock of tools/build/build_book.py (both editions, every chapter executed): first from
clean (_build/ removed: no Sphinx environment, no jupyter cache), then again with nothing
changed. Only with --only build (it removes _build/ first)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time

from . import common


def run(args, device) -> dict:
    build_dir = common.ROOT / "_build"
    if build_dir.exists():  # "from clean": no Sphinx environment, no jupyter cache
        print(f"[build] removing {build_dir} to start from clean", flush=True)
        shutil.rmtree(build_dir)
    runs = []
    for label in ("clean", "warm_no_changes"):
        cmd = [sys.executable, "-m", "tools.build.build_book", "-q"]
        print(f"[build] {label}: {' '.join(cmd[1:])}", flush=True)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=common.ROOT, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        runs.append({"run": label, "command": " ".join(["python"] + cmd[1:]),
                     "seconds": seconds, "returncode": proc.returncode,
                     "output_tail": (proc.stdout + proc.stderr)[-2000:]})
        print(f"  {seconds:.1f} s, exit {proc.returncode}", flush=True)
    result = {"runs": runs,
              "ratios": {"clean_over_warm": runs[0]["seconds"] / runs[1]["seconds"]}}
    common.write(sys.modules[__name__], result, device)
    return result
