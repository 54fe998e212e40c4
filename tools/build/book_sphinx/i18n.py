"""The two editions: hreflang links, a language switcher, launch buttons per edition.

Adds to every page
* ``<link rel="alternate" hreflang="zh-CN|en|x-default">`` to the same page in both editions,
* a visible language switcher in the article header (template ``lang-switcher.html``),
* launch buttons (Colab, Binder) that open the page's exported notebook in the notebooks branch,
  ``<lang>/<page>.ipynb``, instead of its Markdown source ``book/<lang>/<page>.md`` on the
  source branch (where the theme's "edit" and "repository" buttons rightly point),
* in the zh edition, the theme's chrome in Chinese (:data:`CHROME_ZH`): the themes' zh_CN
  catalogues leave the launch and source buttons, the sidebar toggles, the colour-mode button,
  the heading links and the footer in English (some of these strings are not even marked for
  translation in their templates), and say 列印成 PDF, Taiwan's usage, for "Print to PDF".

Configuration values (set by ``tools/build/build_book.py``): ``book_lang`` ('zh' or 'en'),
``book_site_root`` (absolute URL of the site root, may be empty: links are then relative),
``book_notebooks_branch``.
"""
from __future__ import annotations

import html
import re
from pathlib import Path

from tools.bookmeta import HREFLANG, LANGS, SWITCH_LABEL, SWITCH_TITLE

#: The themes' English chrome and its Chinese in the zh edition: tooltips, accessible names,
#: alt texts and button labels of sphinx-book-theme, pydata-sphinx-theme and Sphinx itself.
CHROME_ZH = {
    "Link to this heading": "链接到此标题",
    "Link to this definition": "链接到此定义",
    "Link to this equation": "链接到此公式",
    "Link to this image": "链接到此图片",
    "Link to this table": "链接到此表格",
    "Link to this code": "链接到此代码",
    "Main": "主导航",
    "Page": "本页",
    "Toggle primary sidebar": "显示或隐藏左侧目录",
    "Toggle secondary sidebar": "显示或隐藏本页目录",
    "Color mode": "颜色模式",
    "Search this book...": "搜索本书……",
    "Launch interactive content": "在线运行本页",
    "Launch on Binder": "在 Binder 上运行",
    "Launch on Colab": "在 Colab 上运行",
    "Binder logo": "Binder 标志",
    "Colab logo": "Colab 标志",
    "Source repositories": "源代码仓库",
    "Repository": "代码仓库",
    "Suggest edit": "建议修改",
    "Open issue": "报告问题",
    "Print to PDF": "打印为 PDF",
    "列印成 PDF": "打印为 PDF",
    "Download this page": "下载本页",
    "Download source file": "下载源文件",
    "Fullscreen mode": "全屏模式",
    "Table of contents": "本页目录",
    "Contents": "目录",
    "Back to top": "回到顶部",
}
_ATTRS = ("title", "aria-label", "data-bs-title", "alt", "placeholder")
_CHROME_ATTR = re.compile(r'\b(%s)="(%s)"' % (
    "|".join(_ATTRS), "|".join(re.escape(html.escape(k)) for k in CHROME_ZH)))
_CHROME_TEXT = re.compile(r'(<span class="btn__text-container">|<span class="caption-text">)'
                          r'(%s)(</span>)' % "|".join(re.escape(k) for k in CHROME_ZH))
_COPYRIGHT = re.compile(r"© Copyright (\d{4}(?:[–-]\d{4})?)\.")
#: The execution statistics table of myst-nb (``{nb-exec-table}``, on the execution report): its
#: column headers and the execution method, which myst-nb writes in English whatever the language.
EXEC_TABLE_ZH = {"Document": "文档", "Modified": "修改时间", "Method": "执行方式",
                 "Run Time (s)": "运行时间（秒）", "Status": "状态"}
_EXEC_HEAD = re.compile(r'(<th class="head"><p>)(%s)(</p></th>)'
                        % "|".join(re.escape(k) for k in EXEC_TABLE_ZH))
_EXEC_CACHE = re.compile(r"(<td><p>)cache(</p></td>)")


def localise_chrome(page: str) -> str:
    """The zh edition's page with the themes' English chrome (:data:`CHROME_ZH`) in Chinese:
    only attribute values and button labels that are exactly such a string, the footer's
    copyright line and the headers of myst-nb's execution table (:data:`EXEC_TABLE_ZH`), so the
    text of the book is never touched."""
    page = _CHROME_ATTR.sub(
        lambda m: f'{m[1]}="{html.escape(CHROME_ZH[html.unescape(m[2])])}"', page)
    page = _CHROME_TEXT.sub(lambda m: m[1] + CHROME_ZH[m[2]] + m[3], page)
    if "<p>Run Time (s)</p>" in page:  # the execution report's statistics table
        page = _EXEC_HEAD.sub(lambda m: m[1] + EXEC_TABLE_ZH[m[2]] + m[3], page)
        page = _EXEC_CACHE.sub(r"\1缓存\2", page)
    return _COPYRIGHT.sub(r"© \1 版权所有。", page)


def chrome_in_chinese(app) -> None:
    """Pass every page of the zh edition through :func:`localise_chrome` as it is rendered."""
    templates = getattr(app.builder, "templates", None)
    if app.config.book_lang != "zh" or templates is None:
        return
    render = templates.render

    def render_zh(template: str, context: dict) -> str:
        return localise_chrome(render(template, context))

    templates.render = render_zh


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
    app.connect("builder-inited", chrome_in_chinese)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
