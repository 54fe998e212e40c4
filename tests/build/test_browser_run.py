""""Run in your browser" (book_sphinx.browser, _static/d2l-browser.js) in Chromium: chapters 2
and 3's NumPy cells run in the page with Pyodide.

Offline (every test but the last): the launch menu offers the mode in both editions; Python
starts from the files the build packs (no request leaves the site) and runs a pure-Python cell;
a NumPy cell, whose packages come from Pyodide's CDN, says that it needs a network instead of
freezing; a page read from disk says why it cannot start Python. With a network (the last
test, skipped where Pyodide's CDN cannot be reached): every chosen cell of both chapters runs in
the page and prints what it printed when the book was built. Screenshots go to
``_build/screenshots/``."""
from __future__ import annotations

import json
import math
import re
import urllib.request

import pytest
from tools.build.book_sphinx.browser import BROWSER_PAGES
from built_book import HTML, LANGS

from test_a11y import _axe
from test_browser import SHOTS, _open, page  # noqa: F401  (page: the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.book]

PAGES = BROWSER_PAGES  # the build's list (tools/build/book_sphinx/browser.py)
READY = ("document.documentElement.classList.contains('d2l-browser-ready') || "
         "['failed', 'unavailable'].includes("
         "(document.querySelector('.d2l-browser-status') || {dataset: {}}).dataset.state)")
RAN = "i => document.querySelectorAll('div.d2l-run')[i].dataset.ran !== undefined"


def _spec(lang: str, name: str) -> dict:
    return json.loads((HTML / lang / "_static" / "browser" / f"{name}.json").read_text("utf-8"))


def _reference(lang: str, name: str) -> list[dict]:
    path = HTML / lang / "_static" / "browser" / f"{name}-reference.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _start(pg, url: str, timeout: float = 120_000) -> str:
    """Open ``url``, choose "Run in your browser" in the launch menu, wait until Python has
    started (or failed to); return the status line."""
    _open(pg, url)
    pg.locator(".dropdown-launch-buttons button.dropdown-toggle").click()
    item = pg.locator(".dropdown-launch-buttons .btn-browser-run")
    assert item.count() == 1
    item.click()
    pg.wait_for_function(READY, timeout=timeout)
    return pg.locator(".d2l-browser-status").text_content()


def _run(pg, position: int, code: str | None = None, timeout: float = 120_000) -> dict:
    """Run the chosen cell at ``position`` (after typing ``code`` into it, if given)."""
    box = pg.locator("div.d2l-run").nth(position)
    if code is not None:
        box.locator("textarea").fill(code)
    pg.evaluate("i => { delete document.querySelectorAll('div.d2l-run')[i].dataset.ran; }",
                position)
    box.locator("button.d2l-run-button").click()
    pg.wait_for_function(RAN, arg=position, timeout=timeout)
    return {"ran": box.get_attribute("data-ran"),
            "output": box.locator("pre.d2l-run-output").text_content(),
            "figures": box.locator(".d2l-run-figures img").count()}


@pytest.mark.parametrize("lang", LANGS)
def test_python_starts_offline_from_the_site(page, site, lang):  # noqa: F811
    status = _start(page, f"{site}/{lang}/mha-numpy.html")
    assert page.evaluate("document.documentElement.classList.contains('d2l-browser-ready')"), status
    assert "3.14" in status
    spec = _spec(lang, "mha-numpy")
    boxes = page.locator("div.d2l-run")
    assert boxes.count() == len(spec["cells"]) >= 10
    # each box sits under the cell it runs and holds that cell's code as it runs here: the page's
    # code cell right above it shows the box's first line
    inputs = page.evaluate("() => Array.from(document.querySelectorAll('div.cell div.cell_input'))"
                           ".map(i => [i.textContent, i.nextElementSibling.className])")
    assert len(inputs) == spec["code_cells"]
    for position, cell in enumerate(spec["cells"]):
        assert boxes.nth(position).locator("textarea").input_value() == cell["code"]
        text, below = inputs[cell["index"]]
        first = next(line for line in cell["code"].splitlines() if line.strip())
        assert below == "d2l-run" and first.strip() in text, (cell["index"], first)
    intro = page.locator(".d2l-browser-intro").text_content()
    assert str(len(spec["cells"])) in intro and str(spec["code_cells"]) in intro
    result = _run(page, 0, "print(6 * 7)\nsum(range(10))")
    assert (result["ran"], result["output"]) == ("ok", "42\n45\n")
    result = _run(page, 0, "1 / 0")
    assert result["ran"] == "error" and "ZeroDivisionError" in result["output"]
    result = _run(page, 0, "print('<img src=x onerror=alert(1)>')")
    assert result["output"] == "<img src=x onerror=alert(1)>\n"
    assert page.locator("div.d2l-run img").count() == 0
    # the page in this mode (banner, editors, outputs) is as accessible as every page
    found = [v for v in _axe(page) if v["impact"] in ("serious", "critical")]
    assert not found, found
    page.locator("div.d2l-run").first.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / f"browser-run-{lang}-python.png"))
    assert page.outside == [], f"requests that left the site: {page.outside[:3]}"
    assert page.js_errors == []


@pytest.mark.parametrize("lang", LANGS)
def test_numpy_without_a_network_says_so(page, site, lang):  # noqa: F811
    _start(page, f"{site}/{lang}/mha-numpy.html")
    result = _run(page, 1)  # runs the import cell first: NumPy cannot be fetched
    first = page.locator("div.d2l-run").first
    assert first.get_attribute("data-ran") == "error"
    message = first.locator("pre.d2l-run-output").text_content()
    assert ("CDN" in message) and ("需要联网" in message if lang == "zh" else "network" in message)
    assert result["ran"] == "waiting"
    assert all(u.startswith("https://cdn.jsdelivr.net/pyodide/") for u in page.outside)
    first.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / f"browser-run-{lang}-offline.png"))
    # the page still answers: a pure-Python cell runs after the failure
    assert _run(page, 0, "print('still here')")["output"] == "still here\n"


def test_only_the_numpy_chapters_offer_it(site):
    for lang in LANGS:
        for path in sorted((HTML / lang).glob("*.html")):
            html = path.read_text(encoding="utf-8")
            offers = "btn-browser-run" in html and "d2l-browser.js" in html
            assert offers == (path.stem in PAGES), path
    for page_name in PAGES:
        assert ([c["index"] for c in _spec("zh", page_name)["cells"]]
                == [c["index"] for c in _spec("en", page_name)["cells"]])
    # the packages a chosen cell may import are Pyodide's
    lock = json.loads((HTML / "en" / "_static" / "pyodide" / "pyodide-lock.json").read_text())
    imports = {i for p in lock["packages"].values() for i in p.get("imports", [])}
    assert set(_spec("en", "mha-numpy")["packages"]) <= imports
    # the zh labels come with their glyphs; the en pages need none
    for page_name in PAGES:
        font = _spec("zh", page_name).get("font")
        assert font is None or (HTML / "zh" / "_static" / font["file"]).is_file()
        assert "font" not in _spec("en", page_name)
    assert "font" in _spec("zh", "embeddings-positional-encoding")


def test_a_page_on_disk_says_why_it_cannot(browser, site):
    """Pyodide cannot start from file:// (nor fetch its packages offline; the offline zip does
    not carry it, tests/build/test_offline.py): a page read from disk says why and where to run
    the cells instead."""
    ctx = browser.new_context()
    ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:")
              else r.abort())
    pg = ctx.new_page()
    try:
        pg.goto((HTML / "zh" / "mha-numpy.html").as_uri(), wait_until="load")
        pg.locator(".dropdown-launch-buttons button.dropdown-toggle").click()
        pg.locator(".dropdown-launch-buttons .btn-browser-run").click()
        pg.wait_for_function(READY, timeout=30_000)
        status = pg.locator(".d2l-browser-status")
        assert status.get_attribute("data-state") == "unavailable"
        assert "file://" in status.text_content() and "Colab" in status.text_content()
    finally:
        ctx.close()


def _cdn_reachable(version: str) -> bool:
    url = f"https://cdn.jsdelivr.net/pyodide/v{version}/full/pyodide-lock.json"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=10):
            return True
    except OSError:
        return False


NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|-?inf|nan", re.I)


def _same_output(got: str, expected: str) -> bool:
    """Equal text, numbers equal to 1e-9 (absolute) or 1e-6 (relative): WebAssembly's libm may
    round the last digit of a printed float differently."""
    if NUMBER.sub("#", got) != NUMBER.sub("#", expected):
        return False
    return all(a == b or math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-9)
               for a, b in zip(NUMBER.findall(got), NUMBER.findall(expected)))


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page_name", PAGES)
def test_chapters_run_in_the_page_with_a_network(browser, site, lang, page_name):
    spec = _spec(lang, page_name)
    if not _cdn_reachable(spec["pyodide"]):
        pytest.skip("Pyodide's CDN (cdn.jsdelivr.net) cannot be reached from here: NumPy, SciPy "
                    "and Matplotlib come from there, so the chapters' cells can run in the page "
                    "only where a network is present (the offline tests above still ran)")
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    try:
        _start(pg, f"{site}/{lang}/{page_name}.html")
        _run(pg, len(spec["cells"]) - 1, timeout=600_000)
        results = pg.evaluate("() => Array.from(document.querySelectorAll('div.d2l-run'))"
                              ".map(b => [b.dataset.ran, b.d2lResult])")
        for (ran, result), reference in zip(results, _reference(lang, page_name)):
            assert ran == "ok", (reference["index"], result)
            assert _same_output(result["stdout"], reference["stdout"]), reference["index"]
        assert sum(len(r["figures"]) for _, r in results) >= 1
        pg.locator("div.d2l-run-figures img").first.scroll_into_view_if_needed()
        pg.screenshot(path=str(SHOTS / f"browser-run-{lang}-{page_name}-network.png"))
    finally:
        ctx.close()
