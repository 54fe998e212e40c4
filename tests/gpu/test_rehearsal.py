"""``make gpu-rehearse``: the GPU job runs on this CPU, --tiny, from the pack, in a fresh venv that
holds only the GPU image's packages, and writes every part's JSON with its keys; the same
rehearsal fails when a wheel is missing from the pack.

Slow (a venv with PyTorch, the pack, a tiny run of every part: a few minutes), hence the
``gpu_rehearsal`` marker that ``make check`` leaves out; ``make test`` runs it. It needs the
package index that ``make`` installs from (the rehearsal installs the image's packages from it)
and, when ``.gpu/`` has not been packed yet, the real data beside the checkout."""
from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from tools.gpu import pack, rehearse

pytestmark = pytest.mark.gpu_rehearsal
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def the_pack(shared_data_dir) -> Path:
    """``.gpu/`` as ``make gpu-pack`` writes it (made now when it is not there)."""
    where = ROOT / ".gpu"
    if not (where / "manifest.json").is_file():
        pack.build(where, pack.data_dir(str(shared_data_dir)))
    return where


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """The image stand-in, made once for the module (the rehearsal makes it when missing) and
    removed afterwards (a PyTorch install: pytest would keep it with its last runs)."""
    where = tmp_path_factory.mktemp("gpu-venv") / "venv"
    yield where
    shutil.rmtree(where, ignore_errors=True)


def test_the_rehearsal_passes_and_writes_every_part(the_pack, venv, tmp_path):
    manifest = json.loads((the_pack / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["total_bytes"] < pack.LIMIT_MIB * 2**20
    out = tmp_path / "out"
    assert rehearse.main(["--pack", str(the_pack), "--keep-venv", str(venv), "--out",
                          str(out)]) == 0
    assert not rehearse.check_outputs(out)
    full = json.loads((out / "gpu_train_full.json").read_text(encoding="utf-8"))
    assert full["tiny"] and full["status"] == "ok" and 0 <= full["bleu"] <= 100
    assert "normalise=True" in full["split"] and full["config"]["beam_size"] == 4
    chapters = json.loads((out / "gpu_chapters.json").read_text(encoding="utf-8"))["chapters"]
    assert len(chapters) == 2 and all(e["status"] == "ok" for e in chapters.values()), chapters
    bench = json.loads((out / "gpu_bench.json").read_text(encoding="utf-8"))
    assert bench["training"]["ratio_d2lmini_over_torch"] > 0
    assert "error" not in bench["against_d2l"], bench["against_d2l"]  # d2l 0.17.6 travelled


def _without(pack_dir: Path, target: Path, project: str) -> Path:
    """A copy of ``pack_dir`` whose wheels lack ``project``'s."""
    shutil.copytree(pack_dir, target, ignore=shutil.ignore_patterns("wheels.tar.xz"))
    with tarfile.open(pack_dir / "wheels.tar.xz", "r:xz") as src, \
            tarfile.open(target / "wheels.tar.xz", "w:xz", preset=0) as dst:
        for member in src.getmembers():
            if pack.project(member.name) != project:
                dst.addfile(member, io.BytesIO(src.extractfile(member).read()))
    return target


def test_the_rehearsal_fails_when_a_wheel_is_missing(the_pack, venv, tmp_path):
    py = venv / "bin" / "python"
    if not py.is_file():  # the test above makes it; alone, this one makes it too
        rehearse.make_venv(venv, rehearse.sys.executable)
    job_pack = rehearse.pack_for(the_pack, rehearse.python_version(py))
    crippled = _without(job_pack, tmp_path / "pack", "tqdm")
    out = tmp_path / "out"
    assert rehearse.run_job(py, crippled, out) != 0
    setup = json.loads((out / "gpu_setup.json").read_text(encoding="utf-8"))
    assert setup["status"] == "failed" and "tqdm" in setup["missing"]
    assert "gpu_setup.json: status failed" in rehearse.check_outputs(out)
