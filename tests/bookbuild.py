"""Runs the README's build command once per test session (shared by test_book_build.py and
test_browser.py) and offers small helpers to read the result."""
from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
HTML = BUILD / "html"
LANGS = ("zh", "en")


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


def toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    names = [toc["root"]]

    def walk(entries):
        for e in entries or []:
            if "file" in e:
                names.append(e["file"])
            for key in ("sections", "chapters", "parts"):
                walk(e.get(key))

    for key in ("parts", "chapters"):
        walk(toc.get(key))
    return names


def notebooks(lang: str) -> list[str]:
    """Pages of the toc that are executed notebooks (they carry a kernelspec and code cells)."""
    out = []
    for name in toc_files():
        src = ROOT / "book" / lang / f"{name}.md"
        text = src.read_text(encoding="utf-8") if src.exists() else ""
        if "kernelspec:" in text and "{code-cell}" in text:
            out.append(name)
    return out


def search_index(lang: str) -> dict:
    text = (HTML / lang / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1 : text.rindex(")")])
