"""The GPU job: every GPU check of the book in one command of at most 9 minutes, in parts that
each write their JSON into ``--out`` as they end (a timeout still returns what finished).

    bash .gpu/run.sh [--tiny] [--parts abcd] [--budget-s 540]     (run.sh calls this module)

* a. ``gpu_train_full.json``: ``scripts/train_full.py`` on all English–French pairs, the base
  model, chapter 6's held-out split, bf16 autocast, token-budget batches, a 5-minute training
  budget, the last epochs' weights averaged, beam 4: sacreBLEU, chrF, signature, tokens/s, MFU.
* b. ``gpu_chapters.json``: every chapter of both editions through nbclient, each in its own
  process with its own timeout: status, seconds, first error, the device ``d2l.try_gpu()`` gave.
* c. ``gpu_bench.json``: ``bench/gpu.py``, interleaved benchmarks (training tokens/s of d2lmini,
  ``torch.nn.Transformer`` and d2l 0.17.6; explicit vs fused attention up to L = 16k; batched
  greedy decoding with and without the KV cache).
* d. ``gpu_ablation.json``: chapter 8's ablation benchmark (``bench/ablations.py``) with what
  time is left. It trains on the CPU, one thread per training, so here it runs on all but two
  of the machine's cores; ``--tiny``: 2 seeds of 10 steps.

``--tiny`` runs every part small on a CPU in seconds (the rehearsal, ``make gpu-rehearse``).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILES = {"a": "gpu_train_full", "b": "gpu_chapters", "c": "gpu_bench", "d": "gpu_ablation"}
GOALS = {"bleu": 40.0, "mfu": 0.30}  # the goals for the full-data run
# the last 3 of the ~14 epochs that 5 minutes allow (the recorded train_full.json): about the
# last fifth of training, the epoch-sized span nearest chapter 6's 5 snapshots over the last tenth
FULL_A = ["--max-minutes", "5", "--epochs", "100", "--max-tokens", "8192", "--average-last",
          "3", "--beam-size", "4", "--mfu"]
TINY_A = ["--tiny", "--max-minutes", "0.1", "--max-tokens", "256", "--average-last", "2",
          "--beam-size", "4", "--mfu"]
TINY_CHAPTERS = ["mha-numpy"]  # one chapter in each edition


def run_process(cmd: list[str], timeout: float, cwd: Path = ROOT,
                env: dict | None = None) -> tuple[int | None, str, float]:
    """``(return code or None after a timeout, output tail, seconds)``; a process over its time
    is killed with its children (a notebook's kernel)."""
    tic = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True, env=env)
    try:
        output, _ = proc.communicate(timeout=max(timeout, 1))
        code = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        code = None
    return code, output[-4000:], time.perf_counter() - tic


def machine(pack: Path) -> dict:
    """``bench.common.machine_info`` with the commit the pack was made from (the working tree
    travels without ``.git``)."""
    import torch

    from bench import common

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    info = common.machine_info(device)
    manifest = json.loads((pack / "manifest.json").read_text(encoding="utf-8"))
    info["pack_commit"], info["pack_dirty"] = manifest.get("git_commit"), manifest.get(
        "git_dirty")
    if not info.get("git_commit"):
        info["git_commit"], info["git_dirty"] = info["pack_commit"], info["pack_dirty"]
    return info


def write(ctx: dict, part: str, record: dict) -> Path:
    path = ctx["out"] / f"{FILES[part]}.json"
    record = {"part": part, "tiny": ctx["tiny"], "machine": ctx["machine"], **record}
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"[gpu-job] wrote {path.name} ({record.get('status')})", flush=True)
    return path


def part_a(ctx: dict, limit: float) -> dict:
    """The full-data run (``--tiny``: the smoke configuration) through scripts/train_full.py."""
    result = ctx["out"] / "train_full.partial.json"
    cmd = [sys.executable, str(ROOT / "scripts" / "train_full.py"),
           *(TINY_A if ctx["tiny"] else FULL_A), "--out", str(result)]
    code, tail, seconds = run_process(cmd, limit)
    record = {"status": "ok" if code == 0 else "timeout" if code is None else "failed",
              "returncode": code, "wall_seconds": seconds, "command": cmd[1:], "goals": GOALS,
              "log_tail": tail}
    if code == 0:
        summary = json.loads(result.read_text(encoding="utf-8"))
        summary["machine_line"] = summary.pop("machine", None)  # the script's one-line form
        record.update(summary)
        result.unlink()
    return record


def chapter_list(tiny: bool) -> list[tuple[str, str]]:
    """``(lang, chapter)`` in the table of contents' order, both editions of each chapter in
    turn, so that a part cut short by time has run the first chapters of both."""
    from tools.bookmeta import LANGS, chapters

    names = TINY_CHAPTERS if tiny else chapters("en")
    return [(lang, name) for name in names for lang in LANGS]


def part_b(ctx: dict, limit: float) -> dict:
    """Every chapter of both editions (``--tiny``: one chapter of each) through nbclient."""
    import torch

    deadline = time.monotonic() + limit
    record = {"status": "running", "cuda": torch.cuda.is_available(), "chapters": {},
              "per_chapter_timeout_s": ctx["chapter_timeout"], "not_run": []}
    for lang, name in chapter_list(ctx["tiny"]):
        left = deadline - time.monotonic()
        if left < 20:
            record["not_run"].append(f"{lang}/{name}")
            continue
        timeout = min(ctx["chapter_timeout"], left)
        notebook = ctx["pack"].resolve() / "notebooks" / lang / f"{name}.ipynb"
        code, tail, seconds = run_process(
            [sys.executable, "-m", "tools.gpu.chapter", str(notebook), "--cwd",
             str(ROOT / "book" / lang), "--timeout", str(timeout)], timeout + 15)
        entry = {"status": "timeout", "seconds": seconds, "timeout_s": timeout}
        if code == 0:
            entry = {**json.loads(tail.strip().splitlines()[-1]), "timeout_s": timeout}
        elif code is not None:
            entry = {"status": "failed", "seconds": seconds, "log_tail": tail[-1500:]}
        record["chapters"][f"{lang}/{name}"] = entry
        write(ctx, "b", record)  # after every chapter: a kill keeps what finished
        print(f"[gpu-job] {lang}/{name}: {entry['status']} in {entry['seconds']:.0f} s",
              flush=True)
    ok = all(e["status"] == "ok" for e in record["chapters"].values())
    record["status"] = "ok" if ok and not record["not_run"] else "incomplete"
    return record


def part_c(ctx: dict, limit: float) -> dict:
    """bench/gpu.py in its own process; it rewrites its file after every benchmark."""
    path = ctx["out"] / f"{FILES['c']}.json"
    cmd = [sys.executable, "-m", "bench.gpu", "--out", str(path), "--seconds", str(limit - 10)]
    code, tail, seconds = run_process(cmd + (["--tiny"] if ctx["tiny"] else []), limit)
    record = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    record.pop("machine", None)
    record.update(status="ok" if code == 0 else "timeout" if code is None else "failed",
                  returncode=code, wall_seconds=seconds, log_tail=tail[-2000:])
    return record


def part_d(ctx: dict, limit: float) -> dict:
    """Chapter 8's ablation benchmark on the machine's CPU cores (it trains on the CPU)."""
    processes = max(1, (os.cpu_count() or 2) - 2)
    cmd = [sys.executable, str(ROOT / "bench" / "run.py"), "--only", "ablations", "--device",
           "cpu", "--processes", str(processes), *(["--tiny"] if ctx["tiny"] else [])]
    env = {**os.environ, "D2LMINI_BENCH_RESULTS": str(ctx["out"] / "ablations.partial")}
    code, tail, seconds = run_process(cmd, limit, env=env)
    path = ctx["out"] / "ablations.partial" / "ablations.json"
    record = {"status": "ok" if code == 0 else "timeout" if code is None else "failed",
              "returncode": code, "wall_seconds": seconds, "processes": processes,
              "log_tail": tail[-2000:]}
    if code == 0 and path.is_file():
        result = json.loads(path.read_text(encoding="utf-8"))
        result.pop("machine", None)
        record["ablations"] = result
        shutil.rmtree(path.parent, ignore_errors=True)
    return record


PARTS = {"a": part_a, "b": part_b, "c": part_c, "d": part_d}
# seconds kept back for the parts after it, so that each part gets its turn (full run)
RESERVE = {"a": 100, "b": 80, "c": 0, "d": 0}
LIMIT = {"a": 420, "b": 10_000, "c": 120, "d": 10_000}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "_build/gpu-out")))
    ap.add_argument("--pack", type=Path, default=ROOT / ".gpu")
    ap.add_argument("--parts", default="abcd", help="which parts, in this order (default abcd)")
    ap.add_argument("--tiny", action="store_true", help="every part small, on a CPU, seconds")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="wall-clock budget of the whole job (default 540; --tiny 300)")
    ap.add_argument("--chapter-timeout", type=float, default=None,
                    help="seconds per chapter (default 150; --tiny 120)")
    args = ap.parse_args(argv)
    budget = args.budget_s or (300 if args.tiny else 540)
    deadline = time.monotonic() + budget
    args.out.mkdir(parents=True, exist_ok=True)
    ctx = {"out": args.out, "pack": args.pack, "tiny": args.tiny, "machine": machine(args.pack),
           "chapter_timeout": args.chapter_timeout or (120 if args.tiny else 150)}
    failed = False
    for part in args.parts:
        left = deadline - time.monotonic()
        limit = min(LIMIT[part], left - (0 if args.tiny else RESERVE[part]))
        if limit < 10:
            record = {"status": "skipped", "why": f"{left:.0f} s left of the {budget:.0f} s"}
        else:
            print(f"[gpu-job] part {part}: up to {limit:.0f} s", flush=True)
            tic = time.perf_counter()
            record = PARTS[part](ctx, limit)
            record["part_seconds"] = time.perf_counter() - tic
        write(ctx, part, record)
        failed |= record["status"] not in ("ok", "skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
