"""Runs the README's build command once per test session (shared by the site tests) and offers
small helpers to read the result."""
from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

from bookmeta import LANGS, ROOT, notebooks, toc_files  # noqa: F401  (re-exported for the tests)

BUILD = ROOT / "_build"
HTML = BUILD / "html"


@functools.cache
def build(*extra: str) -> subprocess.CompletedProcess:
    """``python tools/build_book.py [extra]``; executed chapters come from the jupyter cache, so a
    build without code changes is quick. Offline unless the caller's environment says otherwise."""
    env = dict(os.environ)
    env.setdefault("D2LMINI_OFFLINE", "1")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_book.py"), "-q", *extra],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        tail = (proc.stdout[-4000:] + "\n" + proc.stderr[-8000:]).strip()
        raise AssertionError(f"build_book.py {' '.join(extra)} failed (exit {proc.returncode}):\n{tail}")
    return proc


def search_index(lang: str) -> dict:
    text = (HTML / lang / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1 : text.rindex(")")])
