"""Interactive figures (``book.interactive``): the live Vega-Lite chart in the HTML pages, offline.

A cell that shows a ``book.interactive(chart, figure)`` has, in its ``text/html`` output, a
``<div class="d2l-vega">`` with the chart's specification and the static figure as an image; the
PDF prints the static figure (``image/svg+xml``). This extension, under the HTML builders:

* writes the cell's alt text (``mystnb.image.alt``, the text the PDF's image and the
  accessibility checks use) into that image, and warns when the cell has none;
* adds Vega, Vega-Lite and vega-embed (npm packages, copied into ``_static/vega/`` by
  ``tools/build/build_book.py``) and ``_static/d2l-vega.js`` to the pages that have such a figure,
  and only to those. The script replaces each image by the live chart; no request leaves the site.
"""
from __future__ import annotations

import html

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)

MARKER = '<div class="d2l-vega"'
STATIC = '<img class="d2l-vega-static" alt=""'
SCRIPTS = ("vega/vega.min.js", "vega/vega-lite.min.js", "vega/vega-embed.min.js", "d2l-vega.js")


def _alt(container: nodes.Element) -> str:
    meta = container.get("cell_metadata") or {}
    return str(((meta.get("mystnb") or {}).get("image") or {}).get("alt", "")).strip()


class InteractiveFigureAlt(SphinxPostTransform):
    """The cell's alt text into the static image of each interactive figure (after myst-nb has
    chosen the ``text/html`` output for this builder)."""

    default_priority = 5  # after myst_nb's SelectMimeType (4)
    formats = ("html",)

    def run(self, **kwargs) -> None:
        for container in self.document.findall(nodes.container):
            if container.get("nb_element") != "cell_code":
                continue
            for raw in list(container.findall(nodes.raw)):
                text = raw.astext()
                if MARKER not in text:
                    continue
                alt = _alt(container)
                if not alt:
                    logger.warning("an interactive figure without alt text: give its cell "
                                   "mystnb.image.alt", location=raw)
                text = text.replace(STATIC, STATIC.replace('alt=""', f'alt="{html.escape(alt)}"'))
                raw.replace_self(nodes.raw(text, text, format="html", classes=raw["classes"]))


def add_scripts(app, pagename, templatename, context, doctree) -> None:
    if doctree is not None and any(MARKER in r.astext() for r in doctree.findall(nodes.raw)):
        for name in SCRIPTS:
            app.add_js_file(name)


def setup(app):
    app.add_post_transform(InteractiveFigureAlt)
    app.connect("html-page-context", add_scripts)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
