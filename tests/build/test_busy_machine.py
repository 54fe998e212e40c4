"""A busy machine: a PyTorch chapter (chapter 4, the shortest) builds, executed from an empty cache,
on one core while a CPU-bound PyTorch process (bounded in time) runs on that same core.

OpenMP threads that spin while they wait make two CPU-bound processes on two cores run five
times slower each instead of two, enough for a chapter to hit a 300-s cell limit. So the build
gives its kernels ``OMP_WAIT_POLICY=PASSIVE`` and a per-cell limit far above what a slow machine
needs (``tools/build/build_book.py``: ``kernel_env``, ``CELL_TIMEOUT``)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tools.build import build_book

ROOT = Path(__file__).resolve().parents[2]

CHAPTER = "attention-pytorch"  # PyTorch throughout, and short: the smallest that shows it
BURNER = """
import time, torch
torch.set_num_threads({threads})
a = torch.randn(512, 512)
end = time.time() + {seconds}
while time.time() < end:
    a = torch.tanh(a @ a)
"""


def test_kernels_sleep_while_waiting_and_use_the_usable_cores(monkeypatch):
    env = build_book.kernel_env({})
    assert env["OMP_WAIT_POLICY"] == "PASSIVE"
    assert int(env["OMP_NUM_THREADS"]) >= 1 and env["MKL_NUM_THREADS"] == env["OMP_NUM_THREADS"]
    assert build_book.kernel_env({"OMP_NUM_THREADS": "1"})["OMP_NUM_THREADS"] == "1"  # kept


def test_the_build_gives_its_kernels_these_settings(tmp_path, monkeypatch):
    """build_edition runs sphinx-build (which starts the kernels) with kernel_env's settings
    and the configured cell limit."""
    seen, real_run = {}, subprocess.run

    def fake_run(cmd, *args, **kwargs):
        if "sphinx" not in cmd:
            return real_run(cmd, *args, **kwargs)
        seen.update(env=kwargs["env"], conf=Path(cmd[cmd.index("-c") + 1]) / "config.json")
        return subprocess.CompletedProcess(cmd, 0)

    for name in ("OMP_WAIT_POLICY", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "D2LMINI_CELL_TIMEOUT",
                 "BOOK_TIMES_LOG"):  # no build ran: nothing for CI's table of times
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(build_book.subprocess, "run", fake_run)
    monkeypatch.setattr(build_book, "jupyter_cache_dir",
                        lambda lang, package=None: tmp_path / "cache" / lang)
    monkeypatch.setattr(build_book, "share_executions", lambda lang: [])
    build_book.build_edition("en", variant="only", toc_path=ROOT / "_toc.yml", strict=False,
                             assets=tmp_path, build=tmp_path, quiet=True)
    assert seen["env"]["OMP_WAIT_POLICY"] == "PASSIVE" and seen["env"]["D2LMINI_LANG"] == "en"
    assert int(seen["env"]["OMP_NUM_THREADS"]) >= 1
    import json

    config = json.loads(seen["conf"].read_text(encoding="utf-8"))
    assert config["nb_execution_timeout"] == build_book.CELL_TIMEOUT


def test_no_cell_limit_a_slow_machine_reaches(monkeypatch):
    monkeypatch.delenv("D2LMINI_CELL_TIMEOUT", raising=False)
    assert build_book.cell_timeout() >= 3600
    monkeypatch.setenv("D2LMINI_CELL_TIMEOUT", "0")
    assert build_book.cell_timeout() == -1  # none
    monkeypatch.setenv("D2LMINI_CELL_TIMEOUT", "soon")
    with pytest.raises(build_book.BuildError, match="D2LMINI_CELL_TIMEOUT"):
        build_book.cell_timeout()


@pytest.mark.book
def test_a_chapter_builds_on_one_busy_core(tmp_path):
    """One core, shared with a CPU-bound neighbour: the build (its kernels then get one thread)
    and the neighbour are both pinned to the same core where the system allows it."""
    pin = None
    if hasattr(os, "sched_setaffinity"):
        core = min(os.sched_getaffinity(0))
        pin = lambda: os.sched_setaffinity(0, {core})  # noqa: E731
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("D2LMINI_", "OMP_", "MKL_"))}
    burner_env = dict(env)  # the neighbour keeps OpenMP's default (spinning) policy
    env.update(D2LMINI_OFFLINE="1", D2LMINI_CACHE_DIR=str(tmp_path / "downloads"),
               D2LMINI_JUPYTER_CACHE=str(tmp_path / "jupyter_cache"))
    burner = subprocess.Popen([sys.executable, "-c", BURNER.format(threads=1, seconds=1200)],
                              env=burner_env, stdout=subprocess.DEVNULL, preexec_fn=pin)
    try:
        t0 = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "tools.build.build_book", "-q", "--only", CHAPTER,
             "--lang", "en", "--build-dir", str(tmp_path / "build")],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500, check=False,
            preexec_fn=pin)
        seconds = time.monotonic() - t0
        assert burner.poll() is None, "the neighbour stopped before the build ended"
    finally:
        burner.kill()
        burner.wait()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    executed = list((tmp_path / "jupyter_cache").rglob("*.ipynb")) or list(
        (tmp_path / "jupyter_cache").rglob("*.sqlite"))
    assert executed, "nothing was executed: the test must build from an empty cache"
    print(f"{CHAPTER} built on one core beside a CPU-bound process in {seconds:.0f} s")


def test_no_chapter_lowers_the_cell_limit():
    """A chapter's own ``mystnb: execution_timeout`` replaces the build's limit for its cells:
    none may set one below CELL_TIMEOUT (a slow machine would reach it)."""
    import re

    low = []
    for path in sorted((ROOT / "book").glob("*/*.md")):
        head = path.read_text(encoding="utf-8").split("\n---", 1)[0]
        for m in re.finditer(r"execution_timeout:\s*(-?\d+)", head):
            if 0 < int(m.group(1)) < build_book.CELL_TIMEOUT:
                low.append(f"{path.relative_to(ROOT)}: {m.group(0)}")
    assert not low, ("chapters that lower the per-cell limit (remove the setting; the build "
                     f"allows {build_book.CELL_TIMEOUT} s): {low}")
