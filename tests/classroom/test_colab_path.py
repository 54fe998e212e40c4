"""The Colab path really runs: an exported chapter notebook, executed in a fresh Python
environment that does not have d2lmini, installs it through its guarded first cell.

The environment is a new venv that sees the book's other requirements (through a .pth file
naming a view of this venv's site-packages without d2lmini), so nothing is downloaded; the first
cell installs a wheel built from this checkout, named by ``D2LMINI_INSTALL_SPEC`` (in Colab the
same cell installs from the repository URL).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import nbformat
import pytest

from tools.classroom import export_notebooks

ROOT = Path(__file__).resolve().parents[2]

CHAPTER = "mha-numpy"  # NumPy and a little PyTorch: short


@pytest.fixture(scope="module")
def fresh_env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("colab")
    wheel_dir = tmp / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(wheel_dir), str(ROOT)], check=True)
    (wheel,) = wheel_dir.glob("d2lmini-*.whl")
    env_dir = tmp / "fresh"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    # a view of this environment's packages without d2lmini (its files, metadata and the
    # editable-install hook), so that the fresh environment has everything else
    ours = Path(sysconfig.get_paths()["purelib"])
    view = tmp / "site-view"
    view.mkdir()
    for entry in ours.iterdir():
        if "d2lmini" not in entry.name.lower():
            (view / entry.name).symlink_to(entry)
    theirs = subprocess.run([str(python), "-c", "import sysconfig; "
                             "print(sysconfig.get_paths()['purelib'])"],
                            capture_output=True, text=True, check=True).stdout.strip()
    Path(theirs, "book_requirements.pth").write_text(str(view) + "\n", encoding="utf-8")
    check = subprocess.run([str(python), "-c", "import d2lmini"], capture_output=True, text=True,
                           cwd=tmp)
    assert check.returncode != 0, "the fresh environment must not have d2lmini yet"
    kernels = tmp / "jupyter" / "kernels" / "fresh"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "fresh", "language": "python"}), encoding="utf-8")
    return {"python": python, "wheel": wheel, "jupyter_path": tmp / "jupyter", "tmp": tmp}


def test_guarded_install_cell_installs_d2lmini_in_a_fresh_environment(fresh_env, monkeypatch):
    from nbclient import NotebookClient

    out = fresh_env["tmp"] / "notebooks"
    path, *_ = export_notebooks.export_chapter(ROOT / "book" / "en" / f"{CHAPTER}.md", out, "en",
                                               export_notebooks.repository_url())
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import d2lmini\nprint(d2lmini.__file__)"))
    monkeypatch.setenv("JUPYTER_PATH", str(fresh_env["jupyter_path"]))
    monkeypatch.setenv("D2LMINI_INSTALL_SPEC", fresh_env["wheel"].as_uri())
    monkeypatch.setenv("MPLBACKEND", "Agg")
    client = NotebookClient(nb, timeout=300, kernel_name="fresh",
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    install_output = "".join(o.get("text", "") for o in nb.cells[0].get("outputs", []))
    assert "ERROR" not in install_output, install_output
    where = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    fresh_site = subprocess.run([str(fresh_env["python"]), "-c", "import sysconfig; "
                                 "print(sysconfig.get_paths()['purelib'])"],
                                capture_output=True, text=True, check=True).stdout.strip()
    assert where.strip().startswith(fresh_site), f"d2lmini imported from {where!r}"
