"""The book built as a reader with nothing at all builds it (no data directory, no network, an
empty download cache), once per test session, and small helpers to read the result.

The build goes to ``_build/test-offline`` so that it never replaces a reader's own ``make book``
output; the executed-notebook cache is shared (``_build/.jupyter_cache``, one folder per set of
data), so a ``make book`` on a machine without data makes this build quick.

Where the real data sets are at hand and the session runs the published build's tests, that
build (``D2LMINI_DATA_DIR``, into ``_build``, what ``make book`` writes) starts as soon as the
nothing-at-all build is done, in the background at low priority (``nice``), so that it uses the
cores the browser and PDF tests leave idle; it then takes from the nothing-at-all build the
chapters that read no real data (``build_book.share_executions``). ``published_build`` waits for
it.
"""
from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools import ci_times
from tools.bookmeta import LANGS, ROOT, notebooks, toc_files  # noqa: F401  (re-exported for the tests)

BUILD = ROOT / "_build" / "test-offline"
HTML = BUILD / "html"
PUBLISHED = ROOT / "_build"  # the published build: what `make book` writes
#: The real data sets (``tests/conftest.py`` sets it: ``../shared/data`` beside the checkout or
#: ``$D2LMINI_TEST_DATA_DIR``, where they are), and whether the session tests the published
#: build (then it starts right after the nothing-at-all build).
REAL_DATA: Path | None = None
PUBLISHED_WANTED = False
_published: dict = {}


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
    """``python -m tools.build.build_book -q --build-dir build_dir [extra]`` in ``env``; an
    AssertionError with the end of the output when it fails."""
    proc = subprocess.run(
        [sys.executable, "-m", "tools.build.build_book", "-q", "--build-dir",
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
    """The book built the nothing-at-all way into ``_build/test-offline`` (once per session);
    the published build starts beside the tests after it (:func:`start_published_build`)."""
    proc = run_build(*extra, env=nothing_at_all_env(), build_dir=BUILD)
    if not extra and PUBLISHED_WANTED:
        start_published_build()
    return proc


def start_published_build() -> None:
    """Start the published build (the real data of :data:`REAL_DATA`, into ``_build``) in the
    background, at low priority, its output in ``_build/published-build.log``; once."""
    if REAL_DATA is None or _published:
        return
    env = nothing_at_all_env()
    env.update(D2LMINI_DATA_DIR=str(REAL_DATA), BOOK_TIMES_BESIDE="1")
    log = ROOT / "_build" / "published-build.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    out = open(log, "w", encoding="utf-8")
    lower = (lambda: os.nice(10)) if hasattr(os, "nice") else None
    proc = subprocess.Popen(
        [sys.executable, "-m", "tools.build.build_book", "-q", "--build-dir",
         str(PUBLISHED)], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        preexec_fn=lower, start_new_session=True)
    _published.update(proc=proc, log=log, out=out)
    atexit.register(stop_published_build)


def published_build() -> Path:
    """The published site (``_build/html``): the background build waited for, or (when none
    was started) built now. An AssertionError with the end of its output when it fails."""
    build()
    start_published_build()
    proc, out = _published["proc"], _published["out"]
    t0 = time.time()
    rc = proc.wait()
    ci_times.record("waiting for the published build", t0, time.time())
    out.close()
    if rc != 0:
        tail = _published["log"].read_text(encoding="utf-8", errors="replace")[-8000:]
        raise AssertionError(f"the published build failed (exit {rc}):\n{tail}")
    return PUBLISHED / "html"


def stop_published_build() -> None:
    """At the end of a session whose published build still runs (its tests were not reached):
    stop it and what it started."""
    proc = _published.get("proc")
    if proc is not None and proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except OSError:
            proc.terminate()
        proc.wait()


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
