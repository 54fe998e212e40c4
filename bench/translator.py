"""Chapter 6's translator in the page (book.TranslatorPanel): how long after the reader types a
sentence its first translation appears (the first model's greedy search) and all the results
(both models, greedy and beam search, the heat maps), in headless Chromium on the built site
(``_build/html``, else the tests' ``_build/test-offline/html``), English edition, the sentence
"I'm home.". ``cold``: a fresh page, the panel scrolled into view and the sentence typed at once,
so the time includes loading ONNX Runtime Web and the models; ``warm``: the same after the
models have loaded (a reader who scrolled down to the panel). Cold and warm runs alternate.
Only with --only translator; it needs a built book."""

from __future__ import annotations

import functools
import http.server
import sys
import threading

from . import common

SENTENCE = "I'm home."
DONE = "document.querySelector('div.d2l-translator').hasAttribute('data-ms')"
READY = "document.querySelector('div.d2l-translator.d2l-translator-ready') !== null"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _site():
    for path in (common.ROOT / "_build" / "html", common.ROOT / "_build" / "test-offline" / "html"):
        if (path / "en" / "_static" / "translator").is_dir():
            return path
    raise SystemExit("[translator] no built book with the translator: run `make book` first")


def _once(browser, base: str, cold: bool) -> dict:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith((base, "data:"))
              else r.abort())
    page = ctx.new_page()
    try:
        page.goto(f"{base}/en/training-translation.html", wait_until="load")
        panel = page.locator("div.d2l-translator")
        panel.scroll_into_view_if_needed()
        if not cold:
            page.wait_for_function(READY, timeout=60_000)
        page.locator("input.d2l-translator-input").type(SENTENCE)
        page.wait_for_function(DONE, timeout=60_000)
        return {k: int(panel.get_attribute(a)) for k, a in
                (("first_ms", "data-first-ms"), ("all_ms", "data-ms"),
                 ("loading_ms", "data-load-ms"))}
    finally:
        ctx.close()


def run(args, device) -> dict:
    from playwright.sync_api import sync_playwright

    site = _site()
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    reps = 3 if args.quick else 7
    runs: dict[str, list[dict]] = {"cold": [], "warm": []}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                        args=["--no-sandbox", "--disable-gpu",
                                              "--disable-background-networking"])
            _once(browser, base, cold=True)  # warm-up: the disk cache of the files
            for i in range(reps):
                for mode in (("cold", "warm") if i % 2 == 0 else ("warm", "cold")):
                    runs[mode].append(_once(browser, base, cold=mode == "cold"))
                    print(f"[translator] {mode}: {runs[mode][-1]}", flush=True)
            browser.close()
    finally:
        server.shutdown()
    result = {"site": str(site.relative_to(common.ROOT)), "sentence": SENTENCE, "reps": reps,
              **{mode: {key: common.summary([r[key] for r in rows])
                        for key in ("first_ms", "all_ms", "loading_ms")}
                 for mode, rows in runs.items()}}
    common.write(sys.modules[__name__], result, device)
    return result
