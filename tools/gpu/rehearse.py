"""``make gpu-rehearse``: the GPU job on this CPU, in ``--tiny`` mode, from the pack, in a fresh
virtual environment that holds only what the GPU machine's image holds, so that a wheel missing
from the pack fails here and not on the GPU machine.

    python -m tools.gpu.rehearse [--pack .gpu] [--out DIR] [--keep-venv DIR]

1. A new venv (no system site-packages) gets the image's packages from the package index:
   ``TORCH_SPEC`` (default ``torch``; the image has PyTorch 2.11 with CUDA, the CPU build of the
   locked version stands in for it here), numpy, scipy, matplotlib, scikit-learn, sacreBLEU,
   onnx, onnxruntime, at the versions of requirements-lock.txt.
2. The pack's wheels are for the image's CPython 3.12. When this venv's Python is another
   version (no PyTorch wheel for 3.12 may be at hand), the wheels are fetched again for it by
   the same selection (``tools.gpu.pack.download`` and ``select``: the same names, the same
   image list, the same wheels left out) into ``.gpu-rehearse/pack``, beside the pack's own
   notebooks, data, run.sh and manifest.
3. ``bash <pack>/run.sh --tiny`` runs with that venv's Python and ``OUT`` a scratch folder; the
   rehearsal passes when it exits 0 and every part's JSON file is there with its keys.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools.bookmeta import ROOT
from tools.gpu import pack as packing

IMAGE_PACKAGES = ["numpy", "scipy", "matplotlib", "scikit-learn", "sacrebleu", "onnx",
                  "onnxruntime"]
# every file the job writes, and the keys the appendix and the runbook rely on
EXPECTED = {
    "gpu_setup": ["status", "wheels", "data", "missing", "pack_commit"],
    "gpu_train_full": ["status", "machine", "bleu", "chrf", "bleu_signature", "chrf_signature",
                       "tokens_per_sec", "mfu", "flops_per_target_token", "peak_tflops",
                       "samples", "num_train", "num_test", "split", "config", "goals",
                       "averaged_epochs", "seconds", "epochs"],
    "gpu_chapters": ["status", "machine", "chapters", "not_run", "cuda"],
    "gpu_bench": ["status", "machine", "training", "attention", "decoding", "against_d2l"],
    "gpu_ablation": ["status", "machine"],
}
REHEARSAL = ROOT / ".gpu-rehearse"


def make_venv(where: Path, python: str) -> Path:
    """A fresh venv at ``where`` with the image's packages; returns its Python."""
    subprocess.run([python, "-m", "venv", str(where)], check=True)
    py = where / "bin" / "python"
    torch_spec = os.environ.get("TORCH_SPEC", "torch").split()
    lock = ROOT / "requirements-lock.txt"
    print(f"[gpu-rehearse] the image's packages into {where}: {' '.join(torch_spec)} "
          f"{' '.join(IMAGE_PACKAGES)}", flush=True)
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    *torch_spec, *IMAGE_PACKAGES, "-c", str(lock)], check=True)
    return py


def python_version(py: Path) -> str:
    return subprocess.run([str(py), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                          capture_output=True, text=True, check=True).stdout.strip()


def pack_for(pack: Path, version: str) -> Path:
    """``pack`` itself when it was made for ``version``, else a copy with wheels for it."""
    if version == packing.PYTHON:
        return pack
    target = REHEARSAL / f"pack-py{version}"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(pack, target, ignore=shutil.ignore_patterns("wheels.tar.xz"))
    with tempfile.TemporaryDirectory(prefix="gpu-rehearse-wheels-") as tmp:
        print(f"[gpu-rehearse] this Python is {version}, the pack's {packing.PYTHON}: the same "
              f"selection of wheels for {version} into {target}", flush=True)
        packing.download(Path(tmp), python=version)
        packing.bundle(packing.select(Path(tmp)), target / "wheels.tar.xz", preset=0)
    return target


def check_outputs(out: Path) -> list[str]:
    """What is missing from ``out``: files, or keys of :data:`EXPECTED`."""
    problems = []
    for name, keys in EXPECTED.items():
        path = out / f"{name}.json"
        if not path.is_file():
            problems.append(f"{path.name} was not written")
            continue
        record = json.loads(path.read_text(encoding="utf-8"))
        missing = [k for k in keys if k not in record]
        if missing:
            problems.append(f"{path.name} lacks {', '.join(missing)}")
        elif record["status"] not in ("ok", "skipped"):
            problems.append(f"{path.name}: status {record['status']}")
    return problems


def run_job(py: Path, pack: Path, out: Path, extra: list[str] = ()) -> int:
    """``bash <pack>/run.sh --tiny`` with ``py`` as the image's Python, in a clean
    environment (no PYTHONPATH, no D2LMINI_* variables)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("D2LMINI_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(PATH=f"{py.parent}{os.pathsep}{env.get('PATH', '')}", PYTHON=str(py),
               OUT=str(out), GPU_ROOT=str(ROOT), OMP_NUM_THREADS="1",
               GPU_WORK=tempfile.mkdtemp(prefix="gpu-work-", dir=REHEARSAL))
    try:
        return subprocess.run(["bash", str(pack / "run.sh"), "--tiny", *extra], cwd=ROOT,
                              env=env).returncode
    finally:
        shutil.rmtree(env["GPU_WORK"], ignore_errors=True)


def rehearse(pack: Path, out: Path, venv: Path | None, python: str) -> list[str]:
    """The whole rehearsal; returns the problems (none: it passed)."""
    if not (pack / "manifest.json").is_file():
        return [f"no pack in {pack}: run `make gpu-pack` first"]
    REHEARSAL.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="venv-", dir=REHEARSAL) as tmp:
        where = venv or Path(tmp) / "venv"
        py = where / "bin" / "python"
        if not py.is_file():
            py = make_venv(where, python)
        job_pack = pack_for(pack, python_version(py))
        code = run_job(py, job_pack, out)
    problems = check_outputs(out)
    if code:
        problems.insert(0, f"run.sh --tiny exited with {code}")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pack", type=Path, default=ROOT / ".gpu")
    ap.add_argument("--out", type=Path, default=None,
                    help="where the JSON files go (default: a new folder in .gpu-rehearse)")
    ap.add_argument("--keep-venv", type=Path, default=None,
                    help="use (or make and keep) this venv instead of a throwaway one")
    ap.add_argument("--python", default=sys.executable,
                    help="the Python of the venv (default: this one)")
    args = ap.parse_args(argv)
    tic = time.perf_counter()
    REHEARSAL.mkdir(exist_ok=True)
    out = args.out or Path(tempfile.mkdtemp(prefix="out-", dir=REHEARSAL))
    problems = rehearse(args.pack, out, args.keep_venv, args.python)
    minutes = (time.perf_counter() - tic) / 60
    if problems:
        print("[gpu-rehearse] FAILED:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    print(f"[gpu-rehearse] passed in {minutes:.1f} min: {', '.join(EXPECTED)} written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
