"""Every folder of tests/ is collected: pytest skips folders that match ``norecursedirs`` without
a word (its default list has ``build``, the name of the folder that tests tools/build)."""
from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_test_folder_matches_norecursedirs():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["pytest"]["ini_options"]["norecursedirs"]
    folders = [p for p in (ROOT / "tests").iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert {"build", "library", "chapters"} <= {p.name for p in folders}
    skipped = [p.name for p in folders if any(fnmatch.fnmatch(p.name, pat) for pat in patterns)]
    assert not skipped, f"pytest would not collect tests/{skipped}: change norecursedirs"
    assert all(list(p.glob("test_*.py")) for p in folders), "a tests/ folder without tests"
