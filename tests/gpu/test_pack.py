"""The GPU job's pack and set-up, without downloading anything: which wheels travel, the clear
failures (a missing wheel, a pack over the limit, data that changed), the wheels re-zipped
without compression, and the job's time budget."""
from __future__ import annotations

import hashlib
import io
import json
import lzma
import zipfile
from pathlib import Path

import pytest

from tools.gpu import job, pack, unpack

ROOT = Path(__file__).resolve().parents[2]


def _wheel(folder: Path, name: str, files: dict[str, bytes] | None = None) -> Path:
    path = folder / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for member, data in (files or {f"{name}/__init__.py": b"x = 1\n" * 50}).items():
            z.writestr(member, data)
    return path


def _all_needed(folder: Path) -> None:
    for req in [*pack.NEEDS, *pack.NO_DEPS]:
        _wheel(folder, pack.requirement_name(req).replace("-", "_"))


def test_select_keeps_what_the_image_lacks(tmp_path):
    _all_needed(tmp_path)
    for name in ("numpy", "torch", "Jinja2", "debugpy", "jedi"):  # the image's, and left out
        _wheel(tmp_path, name)
    names = {pack.project(w) for w in pack.select(tmp_path)}
    assert {"gensim", "myst-nb", "tqdm", "noto-cjk-sans-otc", "d2l", "docutils"} <= names
    assert not names & {"numpy", "torch", "jinja2", "debugpy", "jedi"}


def test_a_missing_wheel_is_named(tmp_path):
    _all_needed(tmp_path)
    next(tmp_path.glob("gensim-*.whl")).unlink()
    with pytest.raises(pack.PackError, match="missing wheel.*gensim"):
        pack.select(tmp_path)


def test_a_pack_over_the_limit_fails_naming_its_largest_files():
    manifest = {"total_bytes": 61 * 2**20, "files": {"wheels.tar.xz": 50 * 2**20,
                                                     "data/fra-eng/fra.txt.xz": 11 * 2**20}}
    with pytest.raises(pack.PackError, match=r"61\.0 MiB, above the limit of 60 MiB.*wheels"):
        pack.check_size(manifest, 60)
    pack.check_size(manifest, 62)


def test_no_data_directory_is_a_clear_failure(tmp_path):
    with pytest.raises(pack.PackError, match="fra-eng/fra.txt"):
        pack.data_dir(str(tmp_path))


def test_a_stored_copy_is_the_same_wheel_uncompressed(tmp_path):
    wheel = _wheel(tmp_path, "demo", {"demo/a.py": b"print(1)\n" * 100, "demo/b.bin": b"\0" * 999})
    copy = zipfile.ZipFile(io.BytesIO(pack.stored_copy(wheel)))
    assert copy.testzip() is None
    assert {i.compress_type for i in copy.infolist()} == {zipfile.ZIP_STORED}
    with zipfile.ZipFile(wheel) as original:
        assert {n: original.read(n) for n in original.namelist()} == {
            n: copy.read(n) for n in copy.namelist()}


def test_the_bundle_unpacks_to_the_wheels(tmp_path):
    wheels = [_wheel(tmp_path, "one"), _wheel(tmp_path, "two")]
    pack.bundle(wheels, tmp_path / "wheels.tar.xz", preset=0)
    import tarfile

    with tarfile.open(tmp_path / "wheels.tar.xz", "r:xz") as tar:
        assert sorted(tar.getnames()) == sorted(w.name for w in wheels)


def test_data_that_changed_is_refused(tmp_path):
    folder = tmp_path / "pack" / "data" / "fra-eng"
    folder.mkdir(parents=True)
    (folder / "fra.txt.xz").write_bytes(lzma.compress(b"go .\tva !\n"))
    good = {"fra-eng/fra.txt": hashlib.sha256(b"go .\tva !\n").hexdigest()}
    assert unpack.unpack_data(tmp_path / "pack", tmp_path / "work", good) == ["fra-eng/fra.txt"]
    assert (tmp_path / "work" / "data" / "fra-eng" / "fra.txt").read_bytes() == b"go .\tva !\n"
    with pytest.raises(SystemExit, match="checksum"):
        unpack.unpack_data(tmp_path / "pack", tmp_path / "work", {"fra-eng/fra.txt": "0" * 64})


def test_a_module_that_does_not_import_is_reported(tmp_path):
    missing = unpack.missing_modules(tmp_path, ["json", "no_such_module_for_the_gpu_job"])
    assert list(missing) == ["no_such_module_for_the_gpu_job"]
    assert "ModuleNotFoundError" in missing["no_such_module_for_the_gpu_job"]


def test_the_pack_provides_every_module_the_chapters_import():
    """What the chapters import beyond the image comes from the pack's list (a new import in a
    chapter must be added to NEEDS and IMPORTS)."""
    import re
    import sys

    from chapter_source import LANGS, chapter_files, read_notebook

    imported = set()
    for lang in LANGS:
        for md in chapter_files(lang):
            for cell in read_notebook(md).cells:
                if cell.cell_type == "code":
                    imported |= set(re.findall(r"^\s*(?:from|import) ([A-Za-z_0-9]+)",
                                               cell.source, re.M))
    stdlib = set(sys.stdlib_module_names)
    image = {"torch", "numpy", "scipy", "matplotlib", "sklearn", "sacrebleu", "onnx",
             "onnxruntime", "threadpoolctl", "joblib", "d2lmini", "bench"}
    provided = {m.split(".")[0] for m in unpack.IMPORTS}
    assert imported - stdlib - image <= provided, imported - stdlib - image - provided


def test_the_full_job_gives_part_a_its_five_minutes_within_nine():
    budget = 540  # the job's default: 9 minutes
    limit_a = min(job.LIMIT["a"], budget - job.RESERVE["a"])
    assert limit_a >= 5 * 60 + 60  # training, data and the evaluation
    assert job.FULL_A[job.FULL_A.index("--max-minutes") + 1] == "5"
    assert "--beam-size" in job.FULL_A and "--mfu" in job.FULL_A
    assert "--average-last" in job.FULL_A and "--max-tokens" in job.FULL_A


def test_the_one_command_fits_the_device_tool():
    script = (ROOT / "tools" / "gpu" / "run.sh").read_text(encoding="utf-8")
    assert script.startswith("#!/usr/bin/env bash") and "set -euo pipefail" in script
    runbook = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    assert "bash .gpu/run.sh" in runbook and len("bash .gpu/run.sh") < 2000


def test_part_d_runs_the_ablation_benchmark_into_out(tmp_path, monkeypatch):
    calls = []

    def fake_run(cmd, limit, env=None):
        calls.append((cmd, env))
        out = Path(env["D2LMINI_BENCH_RESULTS"])
        out.mkdir(parents=True)
        (out / "ablations.json").write_text(json.dumps({"machine": {}, "comparisons": {}}))
        return 0, "done", 1.0

    monkeypatch.setattr(job, "run_process", fake_run)
    record = job.part_d({"out": tmp_path, "tiny": True}, 60)
    cmd, env = calls[0]
    assert cmd[-5:] == ["--device", "cpu", "--processes", str(record["processes"]), "--tiny"]
    assert env["D2LMINI_BENCH_RESULTS"].startswith(str(tmp_path))  # never bench/results
    assert record["status"] == "ok" and record["ablations"] == {"comparisons": {}}
    assert not (tmp_path / "ablations.partial").exists()


def test_the_gitignore_keeps_the_pack_out_of_git():
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert ".gpu/" in ignored and ".gpu-rehearse/" in ignored
    assert json.dumps(pack.LIMIT_MIB) == "60"


def test_a_wheel_unzips_as_pip_would_place_it(tmp_path):
    wheel = _wheel(tmp_path, "demo", {"demo/__init__.py": b"x = 1\n",
                                      "demo-1.0.data/purelib/extra.py": b"y = 2\n",
                                      "demo-1.0.data/scripts/tool": b"#!/bin/sh\n",
                                      "demo-1.0.dist-info/METADATA": b"Name: demo\n"})
    unpack.unzip_wheel(wheel, tmp_path / "site")
    found = {p.relative_to(tmp_path / "site").as_posix()
             for p in (tmp_path / "site").rglob("*") if p.is_file()}
    assert found == {"demo/__init__.py", "extra.py", "demo-1.0.dist-info/METADATA"}
