"""What every benchmark shares: where results go, the machine description, timing with
interleaved repetitions and medians, and writing the JSON."""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

import torch

ROOT = Path(__file__).resolve().parent.parent
#: Where results are written: bench/results, or $D2LMINI_BENCH_RESULTS (the GPU job writes into
#: its $OUT, and its rehearsal must not overwrite the recorded files).
RESULTS = Path(os.environ.get("D2LMINI_BENCH_RESULTS") or ROOT / "bench" / "results")


def _git_state() -> dict:
    """The repository's commit and whether tracked files differ from it."""
    try:
        git = ["git", "-C", str(ROOT)]
        commit = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip() or None
        dirty = bool(subprocess.run(
            git + ["status", "--porcelain", "--untracked-files=no"], capture_output=True,
            text=True, timeout=10).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return {"git_commit": None}
    return {"git_commit": commit, "git_dirty": dirty}


#: When the benchmarks started and the code they ran: read once, at the start, so that a record
#: written an hour later names the commit that was measured, not the one checked out by then.
STARTED = {"started": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
           **_git_state()}


def machine_info(device: torch.device) -> dict:
    """CPU model and cores, torch threads, GPU, versions, the UTC date of writing, and when the
    run started with the git commit it ran (:data:`STARTED`)."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info = {"cpu": cpu, "cpu_cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
            "device": str(device), "torch": torch.__version__,
            "python": platform.python_version(), "platform": platform.platform(),
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            **STARTED}
    return info


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn: Callable[[], Any], device: torch.device) -> float:
    """Wall-clock seconds of one call (synchronised on a GPU)."""
    sync(device)
    t0 = time.perf_counter()
    fn()
    sync(device)
    return time.perf_counter() - t0


def summary(values: list[float]) -> dict:
    """Median, min, max and every repetition."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "reps": values}


def interleave(competitors: dict[str, Callable[[], float]], reps: int, label: str = "",
               alternate: bool = False) -> dict[str, list[float]]:
    """Run every competitor once per repetition, A, B, A, B, ... (with ``alternate`` the
    order is reversed every other repetition); each call returns a number."""
    out: dict[str, list[float]] = {name: [] for name in competitors}
    for r in range(reps):
        order = list(competitors)
        if alternate and r % 2:
            order.reverse()
        for name in order:
            out[name].append(competitors[name]())
        print(f"  {label} rep {r + 1}/{reps}: "
              + ", ".join(f"{n}={v[-1]:.4g}" for n, v in out.items()), flush=True)
    return out


def medians(runs: dict[str, list[float]]) -> dict[str, float]:
    return {name: statistics.median(values) for name, values in runs.items()}


def quiet() -> contextlib.AbstractContextManager:
    """Discard stdout (d2l's training loop prints, the data loaders name their source)."""
    return contextlib.redirect_stdout(open(os.devnull, "w"))


def write(module: Any, payload: dict, device: torch.device) -> Path:
    """Write ``bench/results/<name>.json``: the machine, the benchmark module's docstring as
    ``what``, and ``payload`` (rewritten as a benchmark progresses)."""
    name = module.__name__.rsplit(".", 1)[-1]
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    record = {"machine": machine_info(device), "benchmark": name,
              "what": " ".join(module.__doc__.split()), **payload}
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path  # $D2LMINI_BENCH_RESULTS
    print(f"wrote {shown}", flush=True)
    return path
