"""The two editions: hreflang links, a language switcher, launch buttons per edition.

Adds to every page
* ``<link rel="alternate" hreflang="zh-CN|en|x-default">`` to the same page in both editions,
* a visible language switcher in the article header (template ``lang-switcher.html``),
* launch buttons (Colab, Binder) that open the page's exported notebook in the notebooks branch,
  ``<lang>/<page>.ipynb``, instead of its Markdown source ``book/<lang>/<page>.md`` on the
  source branch (where the theme's "edit" and "repository" buttons rightly point).

Configuration values (set by ``tools/build/build_book.py``): ``book_lang`` ('zh' or 'en'),
``book_site_root`` (absolute URL of the site root, may be empty: links are then relative),
``book_notebooks_branch``.
"""
from __future__ import annotations

from pathlib import Path

from tools.bookmeta import HREFLANG, LANGS, SWITCH_LABEL, SWITCH_TITLE


def _fix_launch_urls(obj, *, branch: str, docs: str, nb_branch: str, lang: str) -> None:
    """Rewrite launch URLs of ``<docs>/<page>.md`` on ``branch`` (the page's source) to
    ``<lang>/<page>.ipynb`` on ``nb_branch`` (its exported notebook)."""
    if isinstance(obj, dict):
        for key, val in obj.items():
            if key == "url" and isinstance(val, str) and val.endswith(".md"):
                new = (val.replace(f"/blob/{branch}/{docs}/", f"/blob/{nb_branch}/{lang}/")
                       .replace(f"/{branch}?urlpath=tree/{docs}/",
                                f"/{nb_branch}?urlpath=tree/{lang}/")
                       .replace(f"/{branch}?urlpath=lab/tree/{docs}/",
                                f"/{nb_branch}?urlpath=lab/tree/{lang}/"))
                if new != val:
                    obj[key] = new[: -len(".md")] + ".ipynb"
            else:
                _fix_launch_urls(val, branch=branch, docs=docs, nb_branch=nb_branch, lang=lang)
    elif isinstance(obj, list):
        for item in obj:
            _fix_launch_urls(item, branch=branch, docs=docs, nb_branch=nb_branch, lang=lang)


def html_page_context(app, pagename, templatename, context, doctree):
    lang = app.config.book_lang
    up = "../" * (pagename.count("/") + 1)  # from this page to the site root
    root = app.config.book_site_root.rstrip("/")

    def url(other: str) -> str:
        return f"{root}/{other}/{pagename}.html" if root else f"{up}{other}/{pagename}.html"

    links = [f'<link rel="alternate" hreflang="{HREFLANG[other]}" href="{url(other)}" />'
             for other in LANGS]
    links.append(f'<link rel="alternate" hreflang="x-default" href="{url("en")}" />')
    context["metatags"] = context.get("metatags", "") + "\n" + "\n".join(links) + "\n"
    context["book_lang"] = lang
    context["book_switch"] = [
        {"lang": other, "hreflang": HREFLANG[other], "label": SWITCH_LABEL[other],
         "title": SWITCH_TITLE[other], "url": f"{up}{other}/{pagename}.html"}
        for other in LANGS if other != lang
    ]


def fix_launch_buttons(app, pagename, templatename, context, doctree):
    nb_branch = app.config.book_notebooks_branch
    theme = app.config.html_theme_options or {}
    if nb_branch and "header_buttons" in context:
        launch = [b for b in context["header_buttons"]
                  if isinstance(b, dict) and b.get("label") == "launch-buttons"]
        _fix_launch_urls(launch, branch=theme.get("repository_branch") or "main",
                         docs=(theme.get("path_to_docs") or "").strip("/"),
                         nb_branch=nb_branch, lang=app.config.book_lang)


def setup(app):
    app.add_config_value("book_lang", "en", "html")
    app.add_config_value("book_site_root", "", "html")
    app.add_config_value("book_notebooks_branch", "notebooks", "html")
    templates = str(Path(__file__).parent / "templates")
    # first: before the themes' own component folders (pydata-sphinx-theme appends its own), so
    # that the overrides of theme components in this folder win
    app.connect("config-inited", lambda app, config: config.templates_path.insert(0, templates))
    # before pydata-sphinx-theme drops header templates that render empty (priority 500)
    app.connect("html-page-context", html_page_context, priority=100)
    # after sphinx-book-theme has added its launch buttons (priority 500)
    app.connect("html-page-context", fix_launch_buttons, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
