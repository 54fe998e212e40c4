"""The book built as a reader with nothing at all builds it (no data directory, no network, an
empty download cache), once per test session, and small helpers to read the result.

The build goes to ``_build/test-offline`` so that it never replaces a reader's own ``make book``
output; the executed-notebook cache is shared (``_build/.jupyter_cache``, one folder per set of
data), so a ``make book`` on a machine without data makes this build quick.
"""
from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bookmeta import LANGS, ROOT, notebooks, toc_files  # noqa: F401  (re-exported for the tests)

BUILD = ROOT / "_build" / "test-offline"
HTML = BUILD / "html"


def nothing_at_all_env(cache_dir: Path | None = None) -> dict[str, str]:
    """The environment of a reader with nothing: every D2LMINI_ variable removed, the network
    forbidden, an empty download cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("D2LMINI_")}
    if cache_dir is None:
        cache_dir = Path(tempfile.mkdtemp(prefix="d2lmini-empty-cache-"))
        atexit.register(shutil.rmtree, cache_dir, ignore_errors=True)
    env.update(D2LMINI_OFFLINE="1", D2LMINI_CACHE_DIR=str(cache_dir))
    return env


def run_build(*extra: str, env: dict[str, str], build_dir: Path) -> subprocess.CompletedProcess:
    """``python tools/build_book.py -q --build-dir build_dir [extra]`` in ``env``; an
    AssertionError with the end of the output when it fails."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_book.py"), "-q", "--build-dir",
         str(build_dir), *extra],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        tail = (proc.stdout[-4000:] + "\n" + proc.stderr[-8000:]).strip()
        raise AssertionError(f"build_book.py {' '.join(extra)} failed (exit {proc.returncode}):\n"
                             f"{tail}")
    return proc


@functools.cache
def build(*extra: str) -> subprocess.CompletedProcess:
    """The book built the nothing-at-all way into ``_build/test-offline`` (once per session)."""
    return run_build(*extra, env=nothing_at_all_env(), build_dir=BUILD)


def search_index(lang: str) -> dict:
    text = (HTML / lang / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1 : text.rindex(")")])


def machine_paths() -> list[str]:
    """Paths of the machine that builds the book, which no page may show."""
    paths = {str(ROOT), str(Path.home()), tempfile.gettempdir().rstrip("/") + "/", "/tmp/"}
    return sorted(p for p in paths if len(p) > 1)


def pages_showing_machine_paths(html_root: Path) -> list[str]:
    found = []
    for page in sorted(html_root.glob("*/*.html")):
        text = page.read_text(encoding="utf-8")
        for path in machine_paths():
            if path in text:
                i = text.index(path)
                found.append(f"{page.relative_to(html_root)}: {path!r} in "
                             f"{text[max(0, i - 80):i + 80]!r}")
    return found
