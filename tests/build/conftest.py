"""Fixtures of the browser tests: the built site served on 127.0.0.1 and Debian's Chromium,
headless, driven by Playwright (no internet: MathJax and every asset come from the site)."""
from __future__ import annotations

import functools
import http.server
import shutil
import threading
from pathlib import Path

import pytest
from built_book import HTML, build

CHROMIUM = "/usr/bin/chromium"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site():
    """The book built the nothing-at-all way, served over HTTP; yields its base URL."""
    build()
    handler = functools.partial(_Quiet, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium; pages opened from file:// may load their neighbours (the offline zip)."""
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.fail("Debian's chromium is needed for the browser tests (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                              args=["--no-sandbox", "--disable-gpu",
                                    "--disable-background-networking",
                                    "--allow-file-access-from-files"])
        yield b
        b.close()
