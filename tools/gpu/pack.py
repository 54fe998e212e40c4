"""``make gpu-pack``: write ``.gpu/``, everything the GPU job needs that the machine's image lacks.

    python -m tools.gpu.pack [--out .gpu] [--data-dir ../shared/data] [--limit-mib 60]

* ``wheels.tar.xz``: the wheels (CPython 3.12, manylinux, x86-64) of what the chapters and the
  job import beyond the image (:data:`IMAGE`), re-zipped uncompressed and packed with xz, which
  packs them about a fifth smaller than the wheels' own deflate;
* ``notebooks/<lang>/<chapter>.ipynb``: both editions exported (``make export``);
* ``data/<set>/<file>.xz``: the English–French (and English–Chinese) pairs and Tiny Shakespeare
  (chapter 8) from the data directory (``D2LMINI_DATA_DIR``, else ``../shared/data``);
* ``run.sh``: the one command (``bash .gpu/run.sh``), and ``manifest.json``: every file with
  its size, the wheels, the commit the pack was made from.

It stops with a message naming what is wrong when a wheel cannot be found or when the pack
exceeds the limit (60 MiB: 64 MiB travel with the working tree, the rest is headroom).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import io
import json
import lzma
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from tools.bookmeta import LANGS, ROOT
from tools.gpu.unpack import IMPORTS

# The GPU machine's image: its packages and (as far as they matter here) their dependencies.
# These wheels never travel; the rehearsal installs them from the package index instead.
IMAGE = frozenset("""
torch numpy scipy matplotlib scikit-learn sacrebleu onnx onnxruntime
contourpy cycler fonttools kiwisolver pillow pyparsing python-dateutil six packaging
joblib threadpoolctl portalocker regex tabulate colorama lxml protobuf ml-dtypes
typing-extensions coloredlogs humanfriendly flatbuffers sympy mpmath filelock jinja2
markupsafe networkx fsspec setuptools triton
""".split())
# what the job needs beyond the image, downloaded with their dependencies ...
NEEDS = ["tqdm", "noto-cjk-sans-otc", "gensim", "nltk", "altair", "onnxscript",
         "opencc-python-reimplemented", "nbclient", "ipykernel", "nbformat", "pyyaml",
         "requests"]  # requests: d2l 0.17.6 imports it
# ... and without: myst-nb's glue needs IPython and docutils (not Sphinx), tokenizers is used
# without the Hugging Face hub, d2l 0.17.6 (the benchmark's reference) is installed that way anyway
NO_DEPS = ["myst-nb", "docutils", "tokenizers", "d2l==0.17.6"]
# dependencies left behind, with the reason (the job installs with --no-deps and then imports
# every module of IMPORTS, so leaving out something needed fails the rehearsal)
LEFT_OUT = {"debugpy": "ipykernel's debugger (5 MiB); the kernel runs without it",
            "jedi": "IPython's tab completion (5 MiB); IPython runs without it",
            "parso": "jedi's parser"}
DATA = {"fra-eng": ["fra.txt", "_about.txt"], "cmn-eng": ["cmn.txt", "_about.txt"],
        "tinyshakespeare": ["input.txt"]}  # chapter 8 and its ablation benchmark (part d)
PYTHON = "3.12"  # the image's Python
PLATFORM = ["--only-binary=:all:", "--implementation", "cp",
            "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64",
            "--platform", "manylinux_2_28_x86_64", "--platform", "any"]
LIMIT_MIB = 60


class PackError(RuntimeError):
    """Why the pack cannot be made (shown to the user as is)."""


def project(wheel: str | Path) -> str:
    """A wheel file's normalised project name: ``Jinja2-3.1-py3-none-any.whl`` -> ``jinja2``."""
    return re.sub(r"[-_.]+", "-", Path(wheel).name.split("-")[0]).lower()


def requirement_name(req: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[=<>!~\[ ;]", req, maxsplit=1)[0]).lower()


def download(dest: Path, needs=NEEDS, no_deps=NO_DEPS, python: str = PYTHON) -> None:
    """``pip download`` of ``needs`` (with dependencies) and ``no_deps`` into ``dest`` for
    CPython ``python`` on manylinux x86-64, at the versions of requirements-lock.txt where it
    names them."""
    lock = ROOT / "requirements-lock.txt"
    base = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
            "--python-version", python, *PLATFORM, "-d", str(dest)]
    base += ["-c", str(lock)] if lock.is_file() else []
    for extra, names in (([], needs), (["--no-deps"], no_deps)):
        if not names:
            continue
        proc = subprocess.run(base + extra + list(names), capture_output=True, text=True)
        if proc.returncode:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-6:])
            raise PackError(f"a wheel is missing: pip could not download {' '.join(names)} "
                            f"for CPython {python} manylinux x86-64 (is the index reachable, "
                            f"PIP_INDEX_URL?):\n{tail}")


def select(folder: Path, needs=NEEDS, no_deps=NO_DEPS) -> list[Path]:
    """The wheels of ``folder`` that travel (not the image's, not :data:`LEFT_OUT`); raises
    :class:`PackError` naming every requirement without a wheel."""
    wheels = sorted(folder.glob("*.whl"))
    have = {project(w) for w in wheels}
    missing = [r for r in [*needs, *no_deps] if requirement_name(r) not in have]
    if missing:
        raise PackError(f"missing wheel(s) for CPython manylinux x86-64: "
                        f"{', '.join(missing)} (not in {folder})")
    return [w for w in wheels if project(w) not in IMAGE and project(w) not in LEFT_OUT]


def stored_copy(wheel: Path) -> bytes:
    """The wheel re-zipped without compression (same files, so the same RECORD hashes): xz
    then compresses the whole set far better than each file's deflate."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info)
            copy = zipfile.ZipInfo(info.filename, info.date_time)
            copy.external_attr, copy.compress_type = info.external_attr, zipfile.ZIP_STORED
            dst.writestr(copy, data)
    return buffer.getvalue()


def bundle(wheels: list[Path], target: Path, preset: int = 6) -> None:
    """``target``: a tar.xz of the stored copies of ``wheels``."""
    with lzma.open(target, "wb", preset=preset) as xz, tarfile.open(fileobj=xz, mode="w") as tar:
        for wheel in wheels:
            data = stored_copy(wheel)
            info = tarfile.TarInfo(wheel.name)
            info.size, info.mtime = len(data), 0
            tar.addfile(info, io.BytesIO(data))


def wheels_key(wheels: list[Path]) -> str:
    digest = hashlib.sha256()
    for wheel in wheels:
        digest.update(wheel.name.encode() + hashlib.sha256(wheel.read_bytes()).digest())
    return digest.hexdigest()


def data_dir(given: str | None) -> Path:
    """The real data: ``given``, ``D2LMINI_DATA_DIR``, else ``../shared/data``."""
    folder = Path(given or os.environ.get("D2LMINI_DATA_DIR") or ROOT.parent / "shared" / "data")
    if not (folder / "fra-eng" / "fra.txt").is_file():
        raise PackError(f"no fra-eng/fra.txt in {folder}: the full-data run needs the real "
                        "English–French pairs (--data-dir or D2LMINI_DATA_DIR)")
    return folder


def pack_data(source: Path, target: Path) -> dict:
    """Each file of :data:`DATA` that exists, xz-compressed: ``{relative path: sha256}`` of
    the uncompressed bytes (the job checks them after unpacking)."""
    sums = {}
    for name, files in DATA.items():
        for file in files:
            path = source / name / file
            if not path.is_file():
                continue
            data = path.read_bytes()
            (target / name).mkdir(parents=True, exist_ok=True)
            (target / name / (file + ".xz")).write_bytes(lzma.compress(data, preset=9))
            sums[f"{name}/{file}"] = hashlib.sha256(data).hexdigest()
    return sums


def export_notebooks(target: Path) -> int:
    """The chapters of both editions as notebooks (``make export``), without the students'
    copies and the back matter."""
    from tools.bookmeta import chapters
    from tools.classroom import export_notebooks as export

    if export.main(["--out", str(target)]) != 0:
        raise PackError("exporting the chapters as notebooks failed (make export)")
    for lang in LANGS:
        shutil.rmtree(target / lang / "student", ignore_errors=True)
        keep = set(chapters(lang))
        for notebook in (target / lang).glob("*.ipynb"):
            if notebook.stem not in keep:
                notebook.unlink()
    return len(list(target.glob("*/*.ipynb")))


def git_commit() -> tuple[str | None, bool]:
    try:
        git = ["git", "-C", str(ROOT)]
        commit = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10).stdout.strip() or None
        dirty = bool(subprocess.run(git + ["status", "--porcelain", "--untracked-files=no"],
                                    capture_output=True, text=True, timeout=10).stdout.strip())
        return commit, dirty
    except (OSError, subprocess.SubprocessError):
        return None, False


def sizes(folder: Path) -> dict[str, int]:
    return {p.relative_to(folder).as_posix(): p.stat().st_size
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "manifest.json"}


def wheels_tar(wheels: list[Path], out: Path, old: dict) -> None:
    """``out/wheels.tar.xz``, kept from the previous pack when its wheels are the same."""
    key = wheels_key(wheels)
    previous = out / "wheels.tar.xz"
    if old.get("wheels_key") == key and previous.is_file():
        print("[gpu-pack] wheels unchanged: wheels.tar.xz kept", flush=True)
        return
    print(f"[gpu-pack] packing {len(wheels)} wheels with xz ...", flush=True)
    bundle(wheels, previous.with_suffix(".tmp"))
    previous.with_suffix(".tmp").replace(previous)


def build(out: Path, data: Path, limit_mib: float = LIMIT_MIB, wheel_dir: Path | None = None,
          notebooks: bool = True) -> dict:
    """Write the pack into ``out`` and return its manifest (also ``out/manifest.json``)."""
    old = {}
    if (out / "manifest.json").is_file():
        old = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="gpu-pack-") as tmp:
        downloads = wheel_dir or Path(tmp)
        if wheel_dir is None:
            print("[gpu-pack] downloading the wheels ...", flush=True)
            download(downloads)
        wheels = select(downloads)
        out.mkdir(parents=True, exist_ok=True)
        for stale in ("data", "notebooks"):
            shutil.rmtree(out / stale, ignore_errors=True)
        wheels_tar(wheels, out, old)
        manifest = {"wheels": {w.name: w.stat().st_size for w in wheels},
                    "wheels_key": wheels_key(wheels)}
    manifest["data_sha256"] = pack_data(data, out / "data")
    manifest["notebooks"] = export_notebooks(out / "notebooks") if notebooks else 0
    shutil.copy2(Path(__file__).with_name("run.sh"), out / "run.sh")
    commit, dirty = git_commit()
    manifest.update(git_commit=commit, git_dirty=dirty, imports=IMPORTS, left_out=LEFT_OUT,
                    image=sorted(IMAGE), limit_mib=limit_mib,
                    created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    manifest["files"] = sizes(out)
    manifest["total_bytes"] = sum(manifest["files"].values())
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    check_size(manifest, limit_mib)
    return manifest


def check_size(manifest: dict, limit_mib: float) -> None:
    total = manifest["total_bytes"] / 2**20
    if total > limit_mib:
        largest = sorted(manifest["files"].items(), key=lambda kv: -kv[1])[:5]
        raise PackError(f"the pack is {total:.1f} MiB, above the limit of {limit_mib:g} MiB "
                        "(64 MiB travel with the working tree); largest files: "
                        + ", ".join(f"{name} {size / 2**20:.1f} MiB" for name, size in largest))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / ".gpu")
    ap.add_argument("--data-dir", default=None,
                    help="the real data sets (default: D2LMINI_DATA_DIR, else ../shared/data)")
    ap.add_argument("--limit-mib", type=float, default=LIMIT_MIB)
    ap.add_argument("--wheels-from", type=Path, default=None,
                    help="take the wheels from this folder instead of downloading them")
    args = ap.parse_args(argv)
    try:
        manifest = build(args.out, data_dir(args.data_dir), args.limit_mib, args.wheels_from)
    except PackError as e:
        print(f"[gpu-pack] FAILED: {e}", file=sys.stderr)
        return 1
    print(f"[gpu-pack] {args.out}: {manifest['total_bytes'] / 2**20:.1f} MiB "
          f"({len(manifest['wheels'])} wheels, {manifest['notebooks']} notebooks, data "
          f"{', '.join(manifest['data_sha256'])}); limit {args.limit_mib:g} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
