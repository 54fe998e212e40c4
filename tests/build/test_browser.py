"""The built book in a real browser: Debian's Chromium, headless, driven by Playwright.

Serves ``_build/html`` on 127.0.0.1 (no internet needed: MathJax is served from the site),
opens both editions, follows the language switcher, checks math, figures, search and the
collapsed exercise solutions, and saves screenshots into ``_build/screenshots/``.
"""
from __future__ import annotations

import pytest
from built_book import BUILD, notebooks

pytestmark = [pytest.mark.browser, pytest.mark.book]

SHOTS = BUILD / "screenshots"
CHAPTER = "mha-numpy"  # has math, figures, plots and exercises in both editions


@pytest.fixture()
def page(browser, site):
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    # no request may leave the machine: the book must work offline
    outside = []

    def route(r):
        if r.request.url.startswith(site) or r.request.url.startswith("data:"):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    ctx.route("**/*", route)
    pg = ctx.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.outside, pg.js_errors = outside, errors
    yield pg
    ctx.close()


def _open(page, url):
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle", timeout=90_000)  # a loaded CI machine is slow


def _check_images(page, where):
    broken = page.evaluate(
        "() => Array.from(document.images)"
        ".filter(i => i.complete && i.naturalWidth === 0 && i.offsetParent !== null)"
        ".map(i => i.src)"
    )
    assert not broken, f"{where}: broken images {broken}"


def _check_math(page, where):
    page.wait_for_selector("mjx-container", state="attached", timeout=30_000)
    n = page.locator("mjx-container").count()
    assert n > 0, f"{where}: MathJax did not render"
    assert page.locator("mjx-merror").count() == 0, f"{where}: MathJax errors"


@pytest.mark.parametrize("lang,other", [("zh", "en"), ("en", "zh")])
def test_landing_chapter_and_switcher(page, site, lang, other):
    _open(page, f"{site}/{lang}/index.html")
    assert page.locator("html").get_attribute("lang") == ("zh-CN" if lang == "zh" else "en")
    _check_images(page, f"{lang}/index")
    page.screenshot(path=str(SHOTS / f"{lang}-index.png"))

    _open(page, f"{site}/{lang}/{CHAPTER}.html")
    _check_math(page, f"{lang}/{CHAPTER}")
    _check_images(page, f"{lang}/{CHAPTER}")
    page.screenshot(path=str(SHOTS / f"{lang}-{CHAPTER}.png"))

    switch = page.locator("a.book-lang-switch")
    assert switch.count() == 1 and switch.is_visible(), "language switcher not visible"
    switch.click()
    page.wait_for_load_state("load")
    assert page.url == f"{site}/{other}/{CHAPTER}.html"
    assert page.locator("html").get_attribute("lang") == ("zh-CN" if other == "zh" else "en")
    page.screenshot(path=str(SHOTS / f"{lang}-switched-to-{other}.png"))
    assert not page.outside, f"requests left the machine: {page.outside[:5]}"
    assert not page.js_errors, f"JavaScript errors: {page.js_errors}"


def test_solution_collapsed_then_expands(page, site):
    _open(page, f"{site}/zh/{CHAPTER}.html")
    sol = page.locator(".solution.dropdown").first
    sol.scroll_into_view_if_needed()
    body = sol.locator(".admonition-title ~ *").first
    assert not body.is_visible(), "solution is visible before clicking"
    page.screenshot(path=str(SHOTS / "zh-solution-collapsed.png"))
    sol.locator(".admonition-title").click()
    body.wait_for(state="visible", timeout=5_000)
    page.screenshot(path=str(SHOTS / "zh-solution-open.png"))


@pytest.mark.parametrize("lang,query,expect",
                         [("zh", "注意力", "多头注意力"), ("en", "attention", "attention")])
def test_search(page, site, lang, query, expect):
    _open(page, f"{site}/{lang}/search.html?q={query}")
    page.wait_for_selector("#search-results ul.search li", timeout=60_000)
    results = page.locator("#search-results ul.search li")
    assert results.count() >= 2, f"{lang}: search for {query!r} found {results.count()} pages"
    hrefs = [results.nth(i).locator("a").first.get_attribute("href")
             for i in range(results.count())]
    assert (any("mha-numpy" in h for h in hrefs)
            and any("attention-pytorch" in h for h in hrefs)), hrefs
    page.screenshot(path=str(SHOTS / f"{lang}-search.png"))


@pytest.mark.parametrize("locale,first", [("zh-CN", "zh"), ("en-US", "en")])
def test_root_chooser(browser, site, locale, first):
    ctx = browser.new_context(locale=locale)
    pg = ctx.new_page()
    pg.goto(f"{site}/index.html")
    links = pg.locator("#choices a")
    assert links.count() == 2 and links.nth(0).is_visible() and links.nth(1).is_visible()
    assert links.nth(0).get_attribute("data-lang") == first
    assert "preferred" in (links.nth(0).get_attribute("class") or "")
    SHOTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(SHOTS / f"root-{locale}.png"))
    links.nth(1).click()
    pg.wait_for_load_state("load")
    assert pg.url.endswith(f"/{'en' if first == 'zh' else 'zh'}/index.html")
    ctx.close()


WIDE = """() => {
  const wider = (el, box) => el.scrollWidth > box.clientWidth + 1;
  const code = [...document.querySelectorAll('div.cell_input pre')]
    .filter(p => wider(p, p)).map(p => p.textContent.split('\\n')
      .reduce((a, b) => (b.length > a.length ? b : a), '').slice(0, 60));
  const math = [...document.querySelectorAll('mjx-container[display="true"]')]
    .filter(m => wider(m, m.parentElement) || m.scrollWidth > m.clientWidth + 1)
    .map(m => (m.closest('[id]') || {}).id || '?');
  return {code, math};
}"""


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_code_and_equations_fit_the_column_at_1280px(page, site, lang):
    # the reviews saw @save cells and eqs. (2.1), (2.2), (6.1) behind a sideways scrollbar
    found = {}
    for name in notebooks(lang):
        _open(page, f"{site}/{lang}/{name}.html")
        if page.locator("mjx-container, .math").count():
            page.wait_for_selector("mjx-container", state="attached", timeout=60_000)
        wide = page.evaluate(WIDE)
        if wide["code"] or wide["math"]:
            found[name] = wide
    assert not found, f"{lang}: wider than the column at 1280 px: {found}"
