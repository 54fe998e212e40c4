"""Interactive figures (``book.interactive``, ``tools/build/book_sphinx/vega.py``) in Chromium, with
no request leaving the site: every one goes live, keeps its static image as the hidden fallback with
the cell's alt text, and each of its controls (a slider, radio buttons, a menu) changes what it
draws. Screenshots go to ``_build/screenshots/``."""
from __future__ import annotations

import pytest
from built_book import LANGS
from tools.bookmeta import BOOK, chapters
from tools.myst import HAN_RE
from test_browser import SHOTS, _open, page  # noqa: F401  (page: the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.book]

#: The pages with interactive figures, and how many each has: a ``book.interactive(`` call in a
#: code cell of the English source makes one (parity holds the Chinese edition to the same).
INTERACTIVE = {name: n for name in chapters()
               if (n := (BOOK / "en" / f"{name}.md").read_text(encoding="utf-8")
                   .count("book.interactive("))}

DRAWING = "(fig) => fig.querySelector('svg.marks').innerHTML"


def _change(bind) -> None:
    """Move a control to another value: the far end of a slider, another radio button, another
    entry of a menu."""
    slider = bind.locator("input[type=range]")
    if slider.count():
        slider.evaluate("(el) => { el.value = +el.value === +el.max ? el.min : el.max;"
                        " el.dispatchEvent(new Event('input', {bubbles: true})); }")
        return
    radios = bind.locator("input[type=radio]")
    if radios.count():
        next(r for r in radios.all() if not r.is_checked()).check()
        return
    menu = bind.locator("select")
    values = menu.evaluate("(el) => Array.from(el.options).map(o => o.value)")
    current = menu.input_value()
    menu.select_option(next(v for v in values if v != current))


@pytest.mark.parametrize("lang", LANGS)
def test_interactive_figures_render_offline_and_respond(page, site, lang):  # noqa: F811
    SHOTS.mkdir(parents=True, exist_ok=True)
    for name, count in INTERACTIVE.items():
        _open(page, f"{site}/{lang}/{name}.html")
        figures = page.locator("div.d2l-vega")
        assert figures.count() == count, f"{lang}/{name}: {figures.count()} interactive figures"
        page.wait_for_function(
            f"document.querySelectorAll('div.d2l-vega.d2l-vega-live').length === {count}",
            timeout=30_000)
        for i in range(count):
            figure = figures.nth(i)
            static = figure.locator("img.d2l-vega-static")
            alt = static.get_attribute("alt") or ""
            assert alt and (lang == "zh") == bool(HAN_RE.search(alt)), (name, i, alt)
            assert static.is_hidden(), f"{lang}/{name}: the static image is still shown"
            binds = figure.locator(".vega-bind").all()
            assert binds, f"{lang}/{name}: figure {i} has no control"
            figure.scroll_into_view_if_needed()
            figure.screenshot(path=str(SHOTS / f"interactive-{lang}-{name}-{i}.png"))
            for bind in binds:
                before = figure.evaluate(DRAWING)
                _change(bind)
                page.wait_for_function(f"(before) => ({DRAWING})("
                                       "document.querySelectorAll('div.d2l-vega')"
                                       f"[{i}]) !== before", arg=before, timeout=5_000)
            figure.screenshot(path=str(SHOTS / f"interactive-{lang}-{name}-{i}-changed.png"))
    assert not page.outside, f"requests to the network: {page.outside[:5]}"
    assert not page.js_errors, f"JavaScript errors: {page.js_errors}"
