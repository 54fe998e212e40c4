"""Benchmarks of d2lmini: training against the d2l package, KV-cache decoding, the attention
paths, the book build, a profile of training, chapter 6's translator in the page. Not part of the
test suite.

    python bench/run.py [--quick] [--device cpu]
        [--only train|decode|attention|build|profiling|time_to_bleu|translator|ci|pe_stress
               |ablations]

Each benchmark is a module of this package whose docstring says what it measures; it writes
``bench/results/<name>.json`` with the machine, that description, the settings, every
repetition, the medians and the ratios. See bench/README.md.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")  # d2l draws with matplotlib: stay headless
# run as a script: import this folder as the package ``bench`` of the repository
sys.path[0] = str(Path(__file__).resolve().parent.parent)

import torch  # noqa: E402

BENCHMARKS = ("train", "decode", "attention", "build", "profiling", "time_to_bleu",
              "translator", "ci", "pe_stress", "ablations", "recipe")
DEFAULT = ("train", "decode", "attention")  # the others only when named


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="fewer repetitions and sizes; skips the 200-epoch convergence runs")
    p.add_argument("--only", choices=BENCHMARKS, action="append",
                   help="run only this benchmark (repeatable); default: " + ", ".join(DEFAULT))
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    p.add_argument("--ci-from", nargs=2, metavar=("QUIET_CLONE", "BUSY_CLONE"),
                   help="with --only ci: record two .ci/run runs already made in these clones")
    p.add_argument("--stress-processes", type=int,
                   help="with --only pe_stress: fresh processes per condition (default 10)")
    p.add_argument("--stress-repeats", type=int,
                   help="with --only pe_stress: checks per process (default 25)")
    p.add_argument("--processes", type=int, default=2,
                   help="with --only ablations or recipe: trainings at a time, one thread each "
                        "(default 2)")
    p.add_argument("--tiny", action="store_true",
                   help="with --only ablations: 2 seeds of 10 steps, seconds (the GPU rehearsal)")
    p.add_argument("--note", default=None,
                   help="with --only recipe: what else ran on the machine, kept in the record")
    args = p.parse_args(argv)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    for name in args.only or DEFAULT:
        tic = time.perf_counter()
        importlib.import_module(f"bench.{name}").run(args, device)
        print(f"[{name}] done in {time.perf_counter() - tic:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
