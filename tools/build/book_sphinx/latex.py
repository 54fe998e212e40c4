"""The PDF edition (Sphinx's LaTeX builder, xelatex): figures, front and back matter.

Active only under the ``latex`` builder (``tools/build/build_pdf.py`` lists it in ``extensions``):

* SVG images (the hand-drawn figures and the plots code drew) become PDF, vector, through the
  same browser engine that renders the HTML edition (Debian's Chromium, driven by Playwright):
  LaTeX cannot include SVG, and the text of the figures (Chinese, sub/superscripts) must look as
  it does on the web. Converted files are cached by content in ``book_pdf_image_cache``.
* The book's structure: the root page (preface) becomes an unnumbered chapter before chapter 1,
  the pages in ``book_pdf_appendices`` are lettered appendices, and the page that only holds the
  ``{bibliography}`` directive is dropped (LaTeX prints the bibliography at the end by itself).
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

from tools.bookmeta import HREFLANG
from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.transforms.post_transforms.images import ImageConverter
from sphinx.util import logging

logger = logging.getLogger(__name__)

CHROMIUM = "/usr/bin/chromium"


# ---------------------------------------------------------------------------- SVG -> PDF
class _Browser:
    """One headless Chromium for the whole build, started on the first SVG."""

    def __init__(self) -> None:
        self._pw = None
        self._browser = None

    def page(self, locale: str):
        if self._browser is None:
            from playwright.sync_api import sync_playwright

            exe = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
            self._pw = sync_playwright().start()
            self._browser = self._pw.chromium.launch(
                executable_path=exe, headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        # the locale decides the fallback font of text without one (Chinese in "sans-serif")
        return self._browser.new_page(locale=locale)

    def close(self) -> None:
        if self._browser is not None:
            self._browser.close()
            self._pw.stop()
        self._browser = self._pw = None


_BROWSER = _Browser()

_SIZE_JS = """() => {
  const s = document.documentElement;
  const r = s.getBoundingClientRect();
  let w = r.width, h = r.height;
  if ((!s.getAttribute('width') || !s.getAttribute('height')) && s.viewBox && s.viewBox.baseVal
      && s.viewBox.baseVal.width) {
    w = s.viewBox.baseVal.width; h = s.viewBox.baseVal.height;
  }
  return [w, h];
}"""


def svg_to_pdf(src: Path, dest: Path, locale: str = "en") -> None:
    """Print the SVG file ``src`` to a one-page PDF ``dest`` of the SVG's own size (CSS px)."""
    page = _BROWSER.page(locale)
    try:
        page.goto(src.resolve().as_uri(), wait_until="load")
        w, h = page.evaluate(_SIZE_JS)
        w, h = max(1, int(-(-w // 1))), max(1, int(-(-h // 1)))
        page.set_viewport_size({"width": w, "height": h})
        page.pdf(path=str(dest), width=f"{w}px", height=f"{h}px", print_background=True,
                 margin={"top": "0", "right": "0", "bottom": "0", "left": "0"},
                 page_ranges="1")
    finally:
        page.close()


class SvgToPdfConverter(ImageConverter):
    """SVG -> PDF for the LaTeX builder (see the module docstring)."""

    default_priority = 200
    conversion_rules = [("image/svg+xml", "application/pdf")]

    def is_available(self) -> bool:
        try:
            import playwright  # noqa: F401
        except ImportError:
            logger.warning("book_sphinx.latex: playwright is missing; SVG figures cannot be "
                           "converted to PDF (pip install playwright)")
            return False
        if not (Path(CHROMIUM).exists() or shutil.which("chromium")):
            logger.warning("book_sphinx.latex: chromium is missing; SVG figures cannot be "
                           "converted to PDF (apt-get install chromium)")
            return False
        return True

    def convert(self, _from: str, _to: str) -> bool:
        src, dest = Path(_from), Path(_to)
        cache = Path(self.config.book_pdf_image_cache)
        locale = HREFLANG.get(self.config.book_lang, "en")
        digest = hashlib.sha1(locale.encode() + src.read_bytes()).hexdigest()
        cached = cache / f"{digest}.pdf"
        if not cached.exists():
            cache.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_suffix(f".{os.getpid()}.tmp.pdf")
            svg_to_pdf(src, tmp, locale)
            tmp.replace(cached)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cached, dest)
        return True


# ---------------------------------------------------------------------------- book structure
def _raw(latex: str) -> nodes.raw:
    return nodes.raw("", latex + "\n", format="latex")


class ArrangeBook(SphinxPostTransform):
    """Preface unnumbered, appendices lettered, the empty bibliography page dropped.

    Runs on the single document the LaTeX builder assembles from the root page and every page of
    its toctree (``start_of_file`` nodes mark where each page begins), after Sphinx has moved the
    bibliography to the end (its ``BibliographyTransform``, priority 750).
    """

    default_priority = 800
    formats = ("latex",)

    def run(self, **kwargs: Any) -> None:
        root = self.config.root_doc
        if self.document.get("docname") != root:
            return
        starts = {n["docname"]: n for n in self.document.findall(addnodes.start_of_file)}
        if not starts:
            return
        self._drop_bibliography_page(starts)
        self._appendices(starts)
        self._preface()

    def _drop_bibliography_page(self, starts: dict) -> None:
        for docname, start in starts.items():
            has_text = any(
                not isinstance(n, (nodes.title, nodes.target, nodes.section, nodes.system_message))
                and n.astext().strip()
                for sect in start.findall(nodes.section) for n in sect.children
                if not isinstance(n, nodes.title))
            bib = any(isinstance(n, nodes.Element) and "bibliography" in n.get("classes", [])
                      for n in start.findall(nodes.Element))
            if not has_text and (bib or docname == self.config.book_pdf_bibliography_page):
                start.parent.remove(start)

    def _appendices(self, starts: dict) -> None:
        first = next((starts[d] for d in self.config.book_pdf_appendices if d in starts), None)
        if first is None:
            return
        parent = first.parent
        parent.insert(parent.index(first), _raw(r"\appendix\bookappendix"))

    def _preface(self) -> None:
        # The root page is one section (its title is the preface's); the LaTeX writer takes the
        # document's first title as the book's and skips it, so the preface's text would run on
        # before chapter 1 without a heading. Give it a heading of its own, unnumbered.
        top = next(iter(self.document.findall(nodes.section)), None)
        if top is None or not top.children or not isinstance(top[0], nodes.title):
            return
        wrappers = [c for c in top.children
                    if isinstance(c, nodes.compound) and "toctree-wrapper" in c.get("classes", [])]
        body = [c for c in top.children[1:] if c not in wrappers]
        if not body:
            return
        preface = nodes.section("", ids=list(top["ids"]), names=list(top["names"]))
        title = top[0].deepcopy()
        preface += title
        for child in body:
            top.remove(child)
            preface += child
        top["ids"], top["names"] = [], []
        top.insert(1, _raw(r"\bookfrontmatter"))
        top.insert(2, preface)
        top.insert(3, _raw(r"\bookmainmatter"))


def _builder_inited(app) -> None:
    if app.builder.name != "latex":
        return
    app.add_post_transform(SvgToPdfConverter)
    app.add_post_transform(ArrangeBook)


def _build_finished(app, exc) -> None:
    _BROWSER.close()


def setup(app):
    app.add_config_value("book_pdf_image_cache", "", "env")
    app.add_config_value("book_pdf_appendices", [], "env")
    app.add_config_value("book_pdf_bibliography_page", "bibliography", "env")
    app.connect("builder-inited", _builder_inited)
    app.connect("build-finished", _build_finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
