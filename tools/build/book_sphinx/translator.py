"""The "translate it yourself" panel (``d2lmini.book.TranslatorPanel``) in the HTML pages.

The cell's ``text/html`` output is a ``<div class="d2l-translator">`` holding, for each model,
its payload (the ONNX graphs in base64, the vocabularies, the decoding settings, the example
sources) and d2lmini's own translations of the examples, as JSON scripts. Under the HTML
builders this extension

* moves each payload into ``_static/translator/<name>.js`` (a script that registers it in
  ``window.D2L_TRANSLATOR_MODELS``; a script, not a JSON file, so that a page read from
  ``file://`` can load it) and leaves an empty ``<span>`` naming the file in its place, so that
  the page itself stays small and the models load only when the panel comes into view;
* writes d2lmini's translations to ``_static/translator/<name>-reference.json``, which the
  page never loads and the browser tests compare it with;
* adds ``_static/d2l-translator.js`` to the pages that have a panel, and only to those. It
  loads ONNX Runtime Web from ``_static/ort/`` (packed by ``tools/build/build_book.py``) and the
  models from ``_static/translator/``; no request leaves the site.
"""
from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

MARKER = '<div class="d2l-translator"'
SCRIPT = re.compile(r'<script type="application/json" class="d2l-translator-(model|reference)" '
                    r'data-name="([A-Za-z0-9-]+)">(.*?)</script>', re.S)


def move_payloads(text: str, folder: Path) -> str:
    """``text`` (the panel's HTML) with its JSON scripts written into ``folder`` and each model's
    replaced by a ``<span class="d2l-translator-model" data-name=… data-file=…>``."""
    folder.mkdir(parents=True, exist_ok=True)

    def move(match: re.Match) -> str:
        kind, name, data = match.groups()
        if kind == "reference":
            (folder / f"{name}-reference.json").write_text(data, encoding="utf-8")
            return ""
        file = f"{name}.js"
        (folder / file).write_text(
            "(window.D2L_TRANSLATOR_MODELS = window.D2L_TRANSLATOR_MODELS || {})"
            f"[{name!r}] = {data};\n", encoding="utf-8")
        return (f'<span class="d2l-translator-model" data-name="{name}" '
                f'data-file="translator/{file}" hidden></span>')

    return SCRIPT.sub(move, text)


class TranslatorPayloads(SphinxPostTransform):
    """The panel's payloads out of the page and into ``_static/translator/``."""

    default_priority = 5  # after myst_nb's SelectMimeType (4)
    formats = ("html",)

    def run(self, **kwargs) -> None:
        folder = Path(self.app.outdir) / "_static" / "translator"
        for raw in list(self.document.findall(nodes.raw)):
            text = raw.astext()
            if MARKER in text:
                text = move_payloads(text, folder)
                raw.replace_self(nodes.raw(text, text, format="html", classes=raw["classes"]))


def add_scripts(app, pagename, templatename, context, doctree) -> None:
    if doctree is not None and any(MARKER in r.astext() for r in doctree.findall(nodes.raw)):
        app.add_js_file("d2l-translator.js")


def setup(app):
    app.add_post_transform(TranslatorPayloads)
    app.connect("html-page-context", add_scripts)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
