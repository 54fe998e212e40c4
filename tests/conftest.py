"""Shared pytest configuration and fixtures.

* Every test runs with ``D2LMINI_OFFLINE=1``: no test may touch the network.
* ``D2LMINI_DATA_DIR`` defaults to the shared, read-only data directory (``$D2LMINI_TEST_DATA_DIR``
  or ``../shared/data`` next to the repository) when it exists and the variable is not set.
* ``shared_data_dir`` gives that directory (the test is skipped when it is missing);
  ``tmp_cache`` points ``D2LMINI_CACHE_DIR`` at an empty temporary directory.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tools"))  # bookmeta: the editions and the toc, for every test


def _shared_data_dir() -> Path:
    env = os.environ.get("D2LMINI_TEST_DATA_DIR")
    return Path(env) if env else (REPO_ROOT.parent / "shared" / "data").resolve()


def pytest_configure(config: pytest.Config) -> None:
    # set for the whole session (subprocesses such as notebook kernels inherit it)
    os.environ["D2LMINI_OFFLINE"] = "1"
    shared = _shared_data_dir()
    if "D2LMINI_DATA_DIR" not in os.environ and shared.is_dir():
        os.environ["D2LMINI_DATA_DIR"] = str(shared)


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs offline (a test may still delete the variable explicitly)."""
    monkeypatch.setenv("D2LMINI_OFFLINE", "1")


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The read-only directory with ``fra-eng/fra.txt`` and ``cmn-eng/cmn.txt``."""
    path = _shared_data_dir()
    if not (path / "fra-eng" / "fra.txt").is_file():
        pytest.skip(f"shared data not found at {path} (set D2LMINI_TEST_DATA_DIR)")
    return path


@pytest.fixture
def tmp_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty download cache, installed as ``D2LMINI_CACHE_DIR``."""
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("D2LMINI_CACHE_DIR", str(cache))
    return cache
