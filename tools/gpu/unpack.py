"""The GPU job's set-up (standard library only: it runs before anything is installed).

    python -m tools.gpu.unpack --pack .gpu --work SCRATCH --out OUT

Extracts the pack's wheels and installs them into ``SCRATCH/site`` (``pip install --no-index
--no-deps --target``, or unzipped where the image has no pip; the image's own packages stay as
they are), decompresses the data into
``SCRATCH/data`` and checks their checksums, then imports every module the chapters and the job
need in a fresh interpreter that sees the image and ``SCRATCH/site``. It writes
``OUT/gpu_setup.json`` and fails, naming them, when modules are missing: a wheel that did not
travel shows up here, in the rehearsal on the CPU, not on the GPU machine.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import lzma
import os
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

# the modules the chapters and the job import beyond the image (tools/gpu/pack.py packs them)
IMPORTS = ["tqdm", "noto_cjk_sans_otc", "gensim", "nltk", "altair", "onnxscript", "opencc",
           "nbclient", "ipykernel", "nbformat", "yaml", "myst_nb.ext.glue", "tokenizers",
           "IPython", "requests", "d2l", "d2lmini", "d2lmini.book"]
IMAGE_IMPORTS = ["torch", "numpy", "scipy", "matplotlib", "sklearn", "sacrebleu", "onnx",
                 "onnxruntime"]


def install(pack: Path, work: Path) -> int:
    """The wheels of ``pack/wheels.tar.xz`` installed into ``work/site``; returns how many."""
    wheels = work / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    with tarfile.open(pack / "wheels.tar.xz", "r:xz") as tar:
        tar.extractall(wheels, filter="data")
    files = sorted(str(p) for p in wheels.glob("*.whl"))
    if importlib.util.find_spec("pip") is None:  # an image without pip: unzip them
        for file in files:
            unzip_wheel(Path(file), work / "site")
        return len(files)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                    "--disable-pip-version-check", "--no-compile", "--target",
                    str(work / "site"), *files], check=True)
    return len(files)


def unzip_wheel(wheel: Path, site: Path) -> None:
    """What ``pip install --target`` does with a wheel, for the import path only: its files
    into ``site``, and those of its ``.data/purelib`` and ``.data/platlib`` folders too."""
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            parts = name.split("/")
            if parts[0].endswith(".data"):
                if len(parts) < 3 or parts[1] not in ("purelib", "platlib"):
                    continue  # scripts, headers, data files: not needed to import
                parts = parts[2:]
            target = site.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(name))


def unpack_data(pack: Path, work: Path, sums: dict) -> list[str]:
    """Each ``pack/data/<set>/<file>.xz`` into ``work/data/<set>/<file>``, checksum checked."""
    done = []
    for path in sorted((pack / "data").glob("*/*.xz")):
        name = f"{path.parent.name}/{path.name[:-3]}"
        data = lzma.decompress(path.read_bytes())
        if name in sums and hashlib.sha256(data).hexdigest() != sums[name]:
            raise SystemExit(f"[gpu] {name}: checksum differs from the pack's manifest")
        (work / "data" / path.parent.name).mkdir(parents=True, exist_ok=True)
        (work / "data" / name).write_bytes(data)
        done.append(name)
    return done


def missing_modules(work: Path, modules: list[str]) -> dict[str, str]:
    """``{module: error}`` for each module a fresh interpreter seeing ``work/site`` cannot
    import."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(work / "site"), os.getcwd()]))
    code = ("import importlib, json, sys\nbad = {}\nfor m in sys.argv[1:]:\n"
            "    try:\n        importlib.import_module(m)\n"
            "    except Exception as e:\n        bad[m] = f'{type(e).__name__}: {e}'\n"
            "print(json.dumps(bad))")
    proc = subprocess.run([sys.executable, "-c", code, *modules], env=env, capture_output=True,
                          text=True)
    if proc.returncode:
        return {"(interpreter)": proc.stderr.strip()[-2000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pack", type=Path, default=Path(".gpu"))
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    tic = time.perf_counter()
    manifest = json.loads((args.pack / "manifest.json").read_text(encoding="utf-8"))
    record = {"part": "setup", "pack_commit": manifest.get("git_commit"),
              "wheels": install(args.pack, args.work),
              "data": unpack_data(args.pack, args.work, manifest.get("data_sha256", {}))}
    record["missing"] = missing_modules(args.work, IMAGE_IMPORTS + IMPORTS)
    record["status"] = "failed" if record["missing"] else "ok"
    record["seconds"] = time.perf_counter() - tic
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gpu_setup.json").write_text(json.dumps(record, indent=1) + "\n",
                                             encoding="utf-8")
    if record["missing"]:
        print("[gpu] missing after installing the pack (a wheel that did not travel, or the "
              "image lacks it):\n  " + "\n  ".join(f"{m}: {e}" for m, e in
                                                    record["missing"].items()), file=sys.stderr)
        return 1
    print(f"[gpu] set-up: {record['wheels']} wheels, data {', '.join(record['data'])}, "
          f"{record['seconds']:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
