"""The offline copy: ``_build/transformer-book-html.zip`` (written by every full build) holds both
editions with MathJax, its pages work from the disk in a browser with the network cut off, and
chapter 6's translator translates there; it carries what a page on disk uses and no more."""
from __future__ import annotations

import zipfile

import pytest
from built_book import BUILD, HTML, LANGS, build, toc_files

pytestmark = [pytest.mark.browser, pytest.mark.book]

ZIP = BUILD / "transformer-book-html.zip"
FOLDER = "transformer-book-html"


@pytest.fixture(scope="module")
def unzipped(tmp_path_factory):
    build()
    assert ZIP.is_file(), f"{ZIP} missing: the full build writes it"
    out = tmp_path_factory.mktemp("offline")
    with zipfile.ZipFile(ZIP) as zf:
        bad = zf.testzip()
        assert bad is None, f"corrupt member {bad}"
        zf.extractall(out)
    return out / FOLDER


def test_zip_holds_both_editions_and_mathjax(unzipped):
    assert (unzipped / "index.html").is_file()
    for lang in LANGS:
        for name in toc_files():
            assert (unzipped / lang / f"{name}.html").is_file(), f"{lang}/{name}.html"
        mathjax = list((unzipped / lang / "_static").rglob("tex-mml-chtml.js"))
        assert mathjax, f"{lang}: MathJax is not in the offline copy"
    # the same pages as the site (without the zip itself and Sphinx's bookkeeping)
    site = {p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html")}
    copy = {p.relative_to(unzipped).as_posix() for p in unzipped.rglob("*.html")}
    assert site <= copy, f"pages of the site missing from the zip: {sorted(site - copy)[:5]}"
    landing = (HTML / "index.html").read_text(encoding="utf-8")
    assert 'href="transformer-book-html.zip"' in landing, "the landing page does not link the zip"
    assert (HTML / "transformer-book-html.zip").is_file(), "the zip is not in the site"


@pytest.mark.parametrize("lang", LANGS)
def test_pages_open_from_disk_without_network(browser, unzipped, lang):
    ctx = browser.new_context(offline=True)
    outside: list[str] = []

    def route(r):
        if r.request.url.startswith(("file://", "data:")):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    ctx.route("**/*", route)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto((unzipped / "index.html").as_uri(), wait_until="load")
        assert page.locator("#offline-copy").is_hidden(), "the offline copy links to itself"
        page.goto((unzipped / lang / "mha-numpy.html").as_uri(), wait_until="load")
        page.wait_for_selector("mjx-container", state="attached", timeout=30_000)
        assert page.locator("mjx-container").count() > 10, "MathJax did not render"
        assert page.locator("mjx-merror").count() == 0, "MathJax errors"
        broken = page.evaluate(
            "() => Array.from(document.images).filter(i => i.complete && i.naturalWidth === 0)"
            ".map(i => i.src)")
        assert not broken, f"broken images: {broken}"
        # a link to another page of the copy works from the disk
        page.locator("a.book-lang-switch").click()
        page.wait_for_load_state("load")
        assert page.url.endswith("/mha-numpy.html") and "/" + lang + "/" not in page.url
    finally:
        ctx.close()
    assert not outside, f"requests to the network: {outside[:5]}"
    assert not errors, f"JavaScript errors: {errors}"


def test_zip_carries_what_a_page_on_disk_uses(unzipped):
    """A page read from file:// loads ONNX Runtime Web as classic scripts and cannot start Pyodide:
    the zip carries those scripts, not the WebAssembly files an HTTP page loads, nor Pyodide."""
    for lang in LANGS:
        static = unzipped / lang / "_static"
        assert (static / "ort" / "ort-wasm.js").is_file()
        assert (static / "ort" / "ort-glue.js").is_file()
        assert not (static / "ort" / "ort-wasm-simd-threaded.wasm").exists()
        assert not (static / "pyodide").exists()
        assert (HTML / lang / "_static" / "pyodide" / "pyodide.asm.wasm").is_file()
        assert (static / "browser" / "mha-numpy.json").is_file()


@pytest.mark.parametrize("lang", LANGS)
def test_zip_translates_without_network(browser, unzipped, lang):
    """Chapter 6's translator in the offline copy, in a Chromium without
    --allow-file-access-from-files (a reader's) and with the network off."""
    plain = browser.browser_type.launch(executable_path="/usr/bin/chromium", headless=True,
                                        args=["--no-sandbox", "--disable-gpu",
                                              "--disable-background-networking"])
    ctx = plain.new_context(offline=True)
    errors: list[str] = []
    pg = ctx.new_page()
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        pg.goto((unzipped / lang / "training-translation.html").as_uri(), wait_until="load")
        pg.locator("div.d2l-translator").scroll_into_view_if_needed()
        pg.wait_for_function("document.querySelector('div.d2l-translator.d2l-translator-ready')"
                             " !== null", timeout=60_000)
        pg.locator("input.d2l-translator-input").fill("I'm home.")
        pg.wait_for_function("document.querySelector('div.d2l-translator')"
                             ".hasAttribute('data-ms')", timeout=30_000)
        assert pg.locator(".d2l-translator-beam").count() == 2
        assert "…" not in pg.locator(".d2l-translator-results").text_content()
    finally:
        ctx.close()
        plain.close()
    assert not errors, f"JavaScript errors: {errors}"
