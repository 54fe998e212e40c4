"""Accessibility of the built book, in a real browser (Debian's Chromium through Playwright).

* axe-core (vendored through npm, injected into each page: no network) on every page of both
  editions and on the landing page: no serious or critical violation (``EXCLUDED`` lists the
  rules we do not enforce, and why);
* every image of the pages (figures and plots drawn by code) has alt text, in the edition's
  language;
* plots stay legible in the theme's dark mode: in both modes every plot is dark ink on a light
  card (screenshots of one page in each mode go to ``_build/screenshots/``).
"""
from __future__ import annotations


import pytest
from bs4 import BeautifulSoup
from tools.myst import HAN_RE
from built_book import BUILD, HTML, LANGS, ROOT, build, toc_files

pytestmark = [pytest.mark.browser, pytest.mark.book]

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SHOTS = BUILD / "screenshots"
CJK = HAN_RE
# Rules not enforced, with the reason. Empty: every axe rule applies.
EXCLUDED: dict[str, str] = {}
PLOT_PAGE = "attention-pytorch"  # heat maps and line plots drawn by code
LOAD_TIMEOUT_MS = 180_000  # Playwright's limit for loading a page and running axe


def _page(browser, site, **ctx_args):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, **ctx_args)
    # a page of this book loads in a second or two; a busy machine (the build beside another
    # CPU-bound process) can take far longer, and that is not an accessibility finding
    ctx.set_default_timeout(LOAD_TIMEOUT_MS)
    ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith((site, "data:"))
              else r.abort())
    return ctx, ctx.new_page()


def _axe(page) -> list[dict]:
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `npm ci` (axe-core is a dev dependency)")
    page.add_script_tag(path=str(AXE))
    rules = {r: {"enabled": False} for r in EXCLUDED}
    return page.evaluate(
        """async (rules) => {
            const r = await axe.run(document, {rules, resultTypes: ["violations"]});
            return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ") + " :: " +
                    (n.failureSummary || "").split("\\n").slice(0, 2).join(" "))}));
        }""", rules)


def _pages():
    return [(lang, name) for lang in LANGS for name in [*toc_files(), "search"]]


@pytest.mark.parametrize("lang,name", _pages(), ids=[f"{lang}/{n}" for lang, n in _pages()])
def test_axe_no_serious_violations(browser, site, lang, name):
    ctx, page = _page(browser, site)
    try:
        page.goto(f"{site}/{lang}/{name}.html", wait_until="load")
        page.wait_for_load_state("networkidle")
        if page.locator("mjx-container").count() == 0 and "$" in page.content():
            page.wait_for_timeout(500)
        found = [v for v in _axe(page) if v["impact"] in ("serious", "critical")]
    finally:
        ctx.close()
    assert not found, f"{lang}/{name}:\n" + "\n".join(
        f"  {v['impact']} {v['id']}: {v['help']}\n    " + "\n    ".join(v["nodes"])
        for v in found)


@pytest.mark.parametrize("lang", LANGS)
def test_axe_dark_mode(browser, site, lang):
    """The theme's dark mode on two pages with code, math, plots and exercises."""
    found = []
    for name in ("mha-numpy", PLOT_PAGE):
        ctx, page = _page(browser, site, color_scheme="dark")
        try:
            page.add_init_script("localStorage.setItem('theme', 'dark');")
            page.goto(f"{site}/{lang}/{name}.html", wait_until="load")
            page.wait_for_load_state("networkidle")
            assert page.locator("html").get_attribute("data-theme") == "dark"
            found += [(name, v) for v in _axe(page) if v["impact"] in ("serious", "critical")]
        finally:
            ctx.close()
    assert not found, "\n".join(f"{lang}/{n}: {v['id']}: {v['nodes']}" for n, v in found)


def test_axe_landing_page(browser, site):
    ctx, page = _page(browser, site)
    try:
        page.goto(f"{site}/index.html", wait_until="load")
        found = [v for v in _axe(page) if v["impact"] in ("serious", "critical")]
    finally:
        ctx.close()
    assert not found, found


@pytest.mark.parametrize("lang", LANGS)
def test_every_image_has_alt_text_in_its_language(lang):
    build()
    missing, wrong = [], []
    for name in toc_files():
        soup = BeautifulSoup((HTML / lang / f"{name}.html").read_text(encoding="utf-8"),
                             "html.parser")
        for img in soup.select("article img"):
            alt = (img.get("alt") or "").strip()
            src = img.get("src", "")
            if not alt or alt == src or alt.endswith((".svg", ".png")):
                missing.append(f"{name}: {src}")
            elif (lang == "zh") != bool(CJK.search(alt)):
                wrong.append(f"{name}: {alt[:60]!r}")
    assert not missing, f"{lang}: images without alt text: {missing}"
    assert not wrong, f"{lang}: alt text not in the edition's language: {wrong}"


def _corner_luminance(png: bytes) -> float:
    """Mean luminance (0..1) of the four 6x6 corners of an image: the card the plot sits on
    (matplotlib's figures are transparent: without a card the page shows through)."""
    import io

    from PIL import Image

    im = Image.open(io.BytesIO(png)).convert("L")
    w, h = im.size
    boxes = [(0, 0), (w - 6, 0), (0, h - 6), (w - 6, h - 6)]
    values = [v for x, y in boxes for v in im.crop((x, y, x + 6, y + 6)).tobytes()]
    return sum(values) / len(values) / 255


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_plots_legible_in_both_modes(browser, site, lang, scheme):
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctx, page = _page(browser, site, color_scheme=scheme)
    try:
        page.add_init_script(f"localStorage.setItem('theme', '{scheme}');")
        page.goto(f"{site}/{lang}/{PLOT_PAGE}.html", wait_until="load")
        page.wait_for_load_state("networkidle")
        assert page.locator("html").get_attribute("data-theme") == scheme
        plots = page.locator("div.cell_output img")
        assert plots.count() >= 3, f"{lang}/{PLOT_PAGE}: {plots.count()} plots"
        first = plots.first
        first.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"{lang}-{PLOT_PAGE}-{scheme}.png"))
        problems = []
        for i in range(plots.count()):
            img = plots.nth(i)
            img.scroll_into_view_if_needed()
            card = _corner_luminance(img.screenshot())
            if card < 0.6:  # matplotlib draws dark ink: it needs a light card
                problems.append(f"plot {i}: background luminance {card:.2f}")
    finally:
        ctx.close()
    assert not problems, f"{lang} {scheme}: plots not dark ink on a light card: {problems}"
