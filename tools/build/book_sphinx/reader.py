"""Reader features of every page: the PDF of the edition, "edit this page", "open an issue".

* a "PDF" button in the article header (template ``pdf-link.html``) that downloads the PDF of
  the page's edition, ``<site>/pdf/transformer-book-<lang>[-student].pdf``
  (``tools/build/build_pdf.py``
  copies it there);
* the theme's "open an issue" button names the edition of the page (``/zh/mha-numpy.html``),
  so that a report says which text it is about;
* the bibliography's entries are ``listitem``s of their ``role="list"`` (docutils writes the
  deprecated ``doc-biblioentry``, which a list may not contain: axe, aria-required-children).

The "edit this page" button is the theme's (``html.use_edit_page_button``); ``build_book.py``
points the theme at ``book/<lang>/`` on the main branch, so it edits the page's MyST source.
"""
from __future__ import annotations

from urllib.parse import quote

from tools.bookmeta import pdf_name

PDF_TITLE = {"zh": "下载本书的 PDF 版", "en": "Download this edition as a PDF"}


def html_page_context(app, pagename, templatename, context, doctree):
    lang = app.config.book_lang
    up = "../" * (pagename.count("/") + 1)  # from this page to the site root
    context["book_pdf_url"] = f"{up}pdf/{pdf_name(lang, student=app.config.hide_solutions)}"
    context["book_pdf_title"] = PDF_TITLE[lang]
    if "body" in context and 'role="doc-biblioentry"' in context["body"]:
        context["body"] = context["body"].replace('role="doc-biblioentry"', 'role="listitem"')


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


def setup(app):
    app.setup_extension("tools.build.book_sphinx.i18n")  # book_lang, the templates folder
    app.setup_extension("tools.build.book_sphinx.student")  # hide_solutions (sphinx-exercise)
    app.connect("html-page-context", html_page_context, priority=100)
    # after sphinx-book-theme has added its header buttons (priority 500)
    app.connect("html-page-context", fix_issue_button, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
