"""Shared pytest configuration and fixtures.

* No test inherits data from the environment: every ``D2LMINI_*`` variable is removed for the
  session, ``D2LMINI_OFFLINE=1`` is set and the download cache is an empty temporary directory
  (not the reader's ``~/.cache/d2lmini``), so a test passes or fails the same way on a reader's
  machine as in CI. Subprocesses (notebook kernels, the book build) inherit this.
* Tests that want the real data sets ask for them explicitly with the ``shared_data_dir``
  fixture: the read-only copies in ``../shared/data`` beside the checkout (or
  ``$D2LMINI_TEST_DATA_DIR``). Where they are missing the test is skipped, saying so.
* ``tmp_cache`` points ``D2LMINI_CACHE_DIR`` at an empty temporary directory.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from tools import ci_times

REPO_ROOT = Path(__file__).resolve().parent.parent

# the groups of tests in CI's table of where the time goes (tools/ci_times.py)
_TEST_TIMES: dict[str, list[tuple[float, float]]] = {}

# read before the D2LMINI_* variables are removed below
_TEST_DATA_DIR = os.environ.get("D2LMINI_TEST_DATA_DIR")


def _shared_data_dir() -> Path:
    return Path(_TEST_DATA_DIR) if _TEST_DATA_DIR else (REPO_ROOT.parent / "shared" / "data")


def pytest_configure(config: pytest.Config) -> None:
    import built_book

    if (_shared_data_dir() / "fra-eng" / "fra.txt").is_file():
        built_book.REAL_DATA = _shared_data_dir()  # for the published build, when it is tested
    for name in [k for k in os.environ if k.startswith("D2LMINI_")]:
        del os.environ[name]
    os.environ["D2LMINI_OFFLINE"] = "1"
    cache = tempfile.mkdtemp(prefix="d2lmini-test-cache-")
    atexit.register(shutil.rmtree, cache, ignore_errors=True)
    os.environ["D2LMINI_CACHE_DIR"] = cache


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs offline (a test may still delete the variable explicitly)."""
    monkeypatch.setenv("D2LMINI_OFFLINE", "1")


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The read-only directory with the real ``fra-eng/fra.txt`` and ``cmn-eng/cmn.txt`` (the
    bytes a reader's download gives; CI has them in ../shared/data)."""
    path = _shared_data_dir()
    if not (path / "fra-eng" / "fra.txt").is_file():
        pytest.skip("the real data sets are not on this machine (../shared/data beside the "
                    "checkout, or D2LMINI_TEST_DATA_DIR): this test checks them, CI has them")
    return path


@pytest.fixture
def tmp_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty download cache, installed as ``D2LMINI_CACHE_DIR``."""
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("D2LMINI_CACHE_DIR", str(cache))
    return cache


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """The published build starts beside the tests (tests/built_book.py) only in a session that
    tests it."""
    import built_book

    built_book.PUBLISHED_WANTED = any(
        Path(str(item.fspath)).name == "test_published_build.py" for item in items)


def _time_group(item: pytest.Item) -> str:
    """The group a test's time is counted in, in CI's table (tools/ci_times.py)."""
    for marker, group in (("browser", "tests: in Chromium"), ("pdf", "tests: PDFs"),
                          ("book", "tests: the built book")):
        if item.get_closest_marker(marker):
            return group
    folder = Path(str(item.fspath)).parent.name
    return {"library": "tests: library", "code": "tests: code shape",
            "corpus": "tests: offline corpus", "chapters": "tests: chapter sources",
            "classroom": "tests: classroom", "build": "tests: build tools",
            "setup": "tests: set-up", "scripts": "tests: scripts",
            "authoring": "tests: authoring",
            }.get(folder, f"tests: tests/{folder}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    start = time.time()
    yield
    _TEST_TIMES.setdefault(_time_group(item), []).append((start, time.time()))


def pytest_sessionfinish(session: pytest.Session) -> None:
    for group, spans in _TEST_TIMES.items():
        ci_times.record_intervals(group, spans, tests=len(spans))
