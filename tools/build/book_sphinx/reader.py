"""Reader features of every page: the PDF of the edition, "edit this page", "open an issue".

* a "PDF" button in the article header (template ``pdf-link.html``) that downloads the PDF of
  the page's edition, ``<site>/pdf/transformer-book-<lang>[-student].pdf``
  (``tools/build/build_pdf.py``
  copies it there); the button is rendered ``hidden`` while that PDF does not exist (``make
  book`` alone builds none: en review m4, a button that 404s), and ``make pdf`` shows it in
  the pages already written (:func:`show_pdf_buttons`);
* the theme's "open an issue" button names the edition of the page (``/zh/mha-numpy.html``),
  so that a report says which text it is about;
* the bibliography's entries are ``listitem``s of their ``role="list"`` (docutils writes the
  deprecated ``doc-biblioentry``, which a list may not contain: axe, aria-required-children);
* the page's executed notebook (the ".ipynb" download) keeps each output as the kernel printed
  it: myst-nb 1.4 merges a cell's stream outputs for the page (``nb_merge_streams``) by
  appending the later ones to the first *in place*, so the notebook it then writes had every
  later stream twice (zh review M9); :func:`merge_copies` makes it merge copies.

The "edit this page" button is the theme's (``html.use_edit_page_button``); ``build_book.py``
points the theme at ``book/<lang>/`` on the main branch, so it edits the page's MyST source.
"""
from __future__ import annotations

import copy
import re
from pathlib import Path
from urllib.parse import quote

from tools.bookmeta import pdf_name

PDF_TITLE = {"zh": "下载本书的 PDF 版", "en": "Download this edition as a PDF"}


def pdf_built(outdir: Path, name: str) -> bool:
    """Whether the PDF ``name`` exists for the site of ``outdir`` (``<build>/<site>/<lang>``):
    in the site (``<site>/pdf/``) or where ``build_pdf.py`` writes it (``<build>/pdf/``), from
    where ``build_book.py`` copies it into the site after the pages."""
    site = Path(outdir).resolve().parent
    return (site / "pdf" / name).is_file() or (site.parent / "pdf" / name).is_file()


def html_page_context(app, pagename, templatename, context, doctree):
    lang = app.config.book_lang
    up = "../" * (pagename.count("/") + 1)  # from this page to the site root
    name = pdf_name(lang, student=app.config.hide_solutions)
    context["book_pdf_url"] = f"{up}pdf/{name}"
    context["book_pdf_title"] = PDF_TITLE[lang]
    context["book_pdf_hidden"] = not pdf_built(app.outdir, name)
    if "body" in context and 'role="doc-biblioentry"' in context["body"]:
        context["body"] = context["body"].replace('role="doc-biblioentry"', 'role="listitem"')


#: the button as ``pdf-link.html`` writes it while the PDF is missing
HIDDEN_BUTTON = re.compile(r'(<a class="btn btn-sm book-pdf-link"[^>]*?) hidden>')


def show_pdf_buttons(edition: Path) -> int:
    """Show the PDF button of every page of ``edition`` (``<site>/<lang>``), once its PDF is in
    the site (``build_pdf.publish``); the number of pages changed."""
    changed = 0
    for page in Path(edition).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        new = HIDDEN_BUTTON.sub(r"\1>", text)
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed += 1
    return changed


def _issue_names_edition(buttons, lang: str, pagename: str) -> None:
    for b in buttons or []:
        if isinstance(b, dict):
            if b.get("label") == "source-issues-button" and isinstance(b.get("url"), str):
                # the theme writes "Issue on page /<page>.html", "/" encoded as %2F
                b["url"] = b["url"].replace(f"%2F{pagename}.html",
                                            f"%2F{lang}%2F{quote(pagename, safe='')}.html")
            _issue_names_edition(b.get("buttons"), lang, pagename)


def fix_issue_button(app, pagename, templatename, context, doctree):
    _issue_names_edition(context.get("header_buttons"), app.config.book_lang, pagename)


def merge_copies(coalesce):
    """``coalesce_streams`` of myst-nb, given copies of the outputs: the page shows the merged
    streams, the notebook written afterwards keeps the outputs it had."""
    if getattr(coalesce, "merges_copies", False):
        return coalesce

    def coalesce_copies(outputs):
        return coalesce([copy.deepcopy(o) for o in outputs or []])
    coalesce_copies.merges_copies = True
    return coalesce_copies


def setup(app):
    from myst_nb.core import render

    render.coalesce_streams = merge_copies(render.coalesce_streams)
    app.setup_extension("tools.build.book_sphinx.i18n")  # book_lang, the templates folder
    app.setup_extension("tools.build.book_sphinx.student")  # hide_solutions (sphinx-exercise)
    app.connect("html-page-context", html_page_context, priority=100)
    # after sphinx-book-theme has added its header buttons (priority 500)
    app.connect("html-page-context", fix_issue_button, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
