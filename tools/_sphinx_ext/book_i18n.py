"""Sphinx extension for the two-edition book.

Adds to every page
* ``<link rel="alternate" hreflang="zh-CN|en|x-default">`` to the same page in both editions,
* a visible language switcher in the article header (template ``lang-switcher.html``),
* launch buttons (Colab, Binder) that point at the chapter's exported notebook in the
  ``notebooks`` branch: ``<lang>/<page>.ipynb``.

Configuration values (set by tools/build_book.py):
``book_lang`` ('zh' or 'en'), ``book_langs`` (all editions), ``book_lang_labels``,
``book_site_root`` (absolute URL of the site root, may be empty), ``book_notebooks_branch``.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

HREFLANG = {"zh": "zh-CN", "en": "en"}
SWITCH_LABEL = {"zh": "中文", "en": "English"}
SWITCH_TITLE = {"zh": "切换到中文版", "en": "Read this page in English"}


def _page_url(app, pagename: str, lang: str) -> str:
    """URL of ``pagename`` in edition ``lang``, relative to the current page's edition root."""
    return f"{lang}/{pagename}.html"


def _fix_launch_urls(obj, lang: str, branch: str):
    """Rewrite launch URLs ``…/<lang>/<page>.md`` to the exported ``.ipynb`` notebook."""
    if isinstance(obj, dict):
        for key, val in obj.items():
            if (key == "url" and isinstance(val, str) and f"/{branch}" in val
                    and val.endswith(".md")):
                obj[key] = val[: -len(".md")] + ".ipynb"
            else:
                _fix_launch_urls(val, lang, branch)
    elif isinstance(obj, list):
        for item in obj:
            _fix_launch_urls(item, lang, branch)


def html_page_context(app, pagename, templatename, context, doctree):
    cfg = app.config
    lang = cfg.book_lang
    langs = list(cfg.book_langs)
    depth = pagename.count("/")
    up = "../" * (depth + 1)  # from this page to the site root (above the edition folder)
    root = cfg.book_site_root.rstrip("/")
    links = []
    for other in langs:
        rel = up + _page_url(app, pagename, other)
        href = f"{root}/{other}/{pagename}.html" if root else rel
        links.append(f'<link rel="alternate" hreflang="{HREFLANG[other]}" href="{href}" />')
    default = "en" if "en" in langs else langs[0]
    xdef = f"{root}/{default}/{pagename}.html" if root else up + _page_url(app, pagename, default)
    links.append(f'<link rel="alternate" hreflang="x-default" href="{xdef}" />')
    context["metatags"] = context.get("metatags", "") + "\n" + "\n".join(links) + "\n"
    context["book_lang"] = lang
    context["book_switch"] = [
        {
            "lang": other,
            "hreflang": HREFLANG[other],
            "label": SWITCH_LABEL[other],
            "title": SWITCH_TITLE[other],
            "url": up + _page_url(app, pagename, other),
        }
        for other in langs
        if other != lang
    ]


def fix_launch_buttons(app, pagename, templatename, context, doctree):
    branch = app.config.book_notebooks_branch
    if branch and "header_buttons" in context:
        _fix_launch_urls(context["header_buttons"], app.config.book_lang, branch)


# --- student edition: gated solutions removed ------------------------------------------------
# sphinx-exercise's ``hide_solutions`` drops ``solution`` blocks and the ``solution-start``
# marker, but leaves the content between ``solution-start`` and ``solution-end`` (prose and code
# cells) in the page and then fails on the orphaned end marker. In the student edition the two
# gated directives are replaced by markers, and everything between them is removed.
class hidden_solution_start(nodes.Element):
    pass


class hidden_solution_end(nodes.Element):
    pass


class HiddenSolutionStart(SphinxDirective):
    required_arguments = 1
    optional_arguments = 0
    final_argument_whitespace = False
    has_content = False
    option_spec: ClassVar[dict] = {"label": directives.unchanged, "class": directives.class_option,
                   "hidden": directives.flag}

    def run(self):
        node = hidden_solution_start()
        self.set_source_info(node)
        return [node]


class HiddenSolutionEnd(SphinxDirective):
    has_content = False

    def run(self):
        node = hidden_solution_end()
        self.set_source_info(node)
        return [node]


def remove_gated_solutions(app, doctree):
    for start in list(doctree.findall(hidden_solution_start)):
        parent = start.parent
        i = parent.index(start)
        j = i + 1
        while j < len(parent) and not isinstance(parent[j], hidden_solution_end):
            j += 1
        if j == len(parent):
            raise ExtensionError(
                f"{start.source}:{start.line}: solution-start without a solution-end at the same level"
            )
        del parent[i : j + 1]
    for end in list(doctree.findall(hidden_solution_end)):
        raise ExtensionError(f"{end.source}:{end.line}: solution-end without a solution-start")


# Han characters, CJK symbols and punctuation, full-width forms
_CJK = re.compile("[\u2e80-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
_VERBATIM = (nodes.FixedTextElement, nodes.literal, nodes.math, nodes.raw, nodes.comment)


def join_cjk_lines(app, doctree, docname=None):
    """Drop the line breaks of the Chinese source between two Chinese characters.

    Browsers render a soft line break as a space, which in Chinese text shows as a stray gap
    in the middle of a sentence (English needs the space; Chinese has none between words).
    A break next to a Latin letter, a digit or inline code stays a space. Code, literals and
    math are left alone. Explicit spaces (around a cross-reference, say) are the author's.
    """
    if app.config.book_lang != "zh":
        return
    for text in list(doctree.findall(nodes.Text)):
        if "\n" not in text:
            continue
        parent = text.parent
        if parent is None or any(isinstance(a, _VERBATIM) for a in _ancestors(text)):
            continue
        # by identity: Element.index compares by value, and every soft break is an equal "\n"
        i = next(k for k, child in enumerate(parent.children) if child is text)
        before = next((t[-1] for t in (c.astext() for c in reversed(parent.children[:i])) if t), "")
        after = next((t[0] for t in (c.astext() for c in parent.children[i + 1:]) if t), "")
        s = str(text)
        out = []
        for j, ch in enumerate(s):
            if ch == "\n":
                left = s[j - 1] if j > 0 else before
                right = s[j + 1] if j + 1 < len(s) else after
                if _CJK.match(left or " ") and _CJK.match(right or " "):
                    continue
            out.append(ch)
        joined = "".join(out)
        if joined != s:
            new = nodes.Text(joined)
            new.parent = parent
            parent.children[i] = new


def _ancestors(node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def _student_mode(app, config):
    if config.hide_solutions:
        app.add_directive("solution-start", HiddenSolutionStart, override=True)
        app.add_directive("solution-end", HiddenSolutionEnd, override=True)


def setup(app):
    app.setup_extension("sphinx_exercise")
    app.add_node(hidden_solution_start)
    app.add_node(hidden_solution_end)
    app.connect("config-inited", _student_mode)
    app.connect("doctree-read", remove_gated_solutions, priority=100)
    # once references and glue are resolved: their final text decides what a break sits between
    app.connect("doctree-resolved", join_cjk_lines)
    app.add_config_value("book_lang", "en", "html")
    app.add_config_value("book_langs", ["zh", "en"], "html")
    app.add_config_value("book_site_root", "", "html")
    app.add_config_value("book_notebooks_branch", "notebooks", "html")
    templates = str(Path(__file__).parent / "templates")
    app.connect("config-inited", lambda app, config: config.templates_path.append(templates))
    # before pydata-sphinx-theme drops header templates that render empty (priority 500)
    app.connect("html-page-context", html_page_context, priority=100)
    # after sphinx-book-theme has added its launch buttons (priority 500)
    app.connect("html-page-context", fix_launch_buttons, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
