"""The claims of the text, listed on the execution report; unique ids for sphinx-exercise.

A chapter states every sentence that interprets a computed result through ``d2lmini.book.claims``
(``book.claim``, ``book.choose``, ``book.glue_ratio`` with bounds), which records it in the executed
notebook as a hidden myst-nb glue output named ``claim__<name>`` holding the JSON object
``{name, kind, statement, holds, values}`` (MIME type ``application/vnd.d2lmini.claim+json``).
This extension

* gives each edition a folder of its own for what myst-nb writes beside the pages
  (``<outdir>/../jupyter_execute/<lang>``; myst-nb's own choice, ``<outdir>/../jupyter_execute``,
  would be shared by the two editions, which ``tools/build/build_book.py`` builds at the same time);
* collects those records from every executed page of the edition as it is read. myst-nb keeps
  a page's glue outputs only while it parses the page and writes them to
  ``<output folder>/<page>.glue.json`` (the same whether the notebook ran now or came from the
  jupyter cache), so it is read at once, on ``doctree-read``, and kept in the environment;
* renders them where a page writes the directive ``claims-report`` (the execution report of
  each edition): a count per chapter, then per chapter a table of its claims (name, kind,
  statement, values, status), in the page's language (``book_lang``). The report is written
  again whenever a page was read, so it never lists stale claims;
* warns (a ``-W`` build fails) when a record says a guarded claim does not hold or is malformed;
* gives the ``exercise-content`` / ``solution-content`` sections that sphinx-exercise emits for
  every exercise and solution ids unique in their page (an HTML id must not repeat);
* loads :mod:`book_sphinx.apipage`, which lists every module of ``d2lmini.MODULES`` on the API
  page.
"""
from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.addnodes import pending_xref
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from tools.bookmeta import is_notebook, toc_files

LOGGER = logging.getLogger(__name__)
# d2lmini.book.claims.CLAIM_PREFIX and CLAIM_MIME (Sphinx does not import d2lmini, nor torch)
CLAIM_PREFIX = "claim__"
CLAIM_MIME = "application/vnd.d2lmini.claim+json"
ENV_KEY = "book_claims"  # env attribute: {docname: [record, ...]} for every executed page
REPORT_KEY = "book_claims_reports"  # env attribute: docnames holding a claims-report directive
SPHINX_EXERCISE_IDS = ("exercise-content", "solution-content")

TEXT = {
    "en": {
        "chapter": "Chapter", "guarded": "Guarded", "chosen": "Chosen", "total": "Claims",
        "claim": "Claim", "kind": "Kind", "statement": "Statement", "values": "Values",
        "status": "Status", "kind_guarded": "guarded", "kind_chosen": "chosen",
        "holds": "✅ holds", "fails": "❌ false", "chose_true": "condition true: first phrase",
        "chose_false": "condition false: second phrase",
        "none": "This chapter states no claim about its results.",
        "no_chapters": "No executed chapter is part of this build.",
        "count": "{total} claim{s}: {guarded} guarded ({ok} hold), {chosen} chosen by the run.",
        "book": "{total} claims in {chapters} chapters: {guarded} guarded, {chosen} chosen.",
    },
    "zh": {
        "chapter": "章", "guarded": "断言检查", "chosen": "按结果选择", "total": "合计",
        "claim": "论断", "kind": "方式", "statement": "文中的说法", "values": "数值",
        "status": "状态", "kind_guarded": "断言检查", "kind_chosen": "按结果选择",
        "holds": "✅ 成立", "fails": "❌ 不成立", "chose_true": "条件成立：取第一种说法",
        "chose_false": "条件不成立：取第二种说法",
        "none": "本章没有对运行结果作出需要检查的论断。",
        "no_chapters": "本次构建不含执行过的章节。",
        "count": "共 {total} 条：{guarded} 条由断言检查（成立 {ok} 条），"
                 "{chosen} 条由运行结果选择。",
        "book": "全书 {chapters} 章共 {total} 条论断：{guarded} 条由断言检查，"
                "{chosen} 条由运行结果选择。",
    },
}


# ---------------------------------------------------------------------------- collecting
def claims_from_glue(glue: dict[str, Any]) -> list[dict[str, Any]]:
    """The claim records among a page's glue outputs (``<page>.glue.json``), in notebook order.

    Each glue output is a notebook output whose ``data`` holds the MIME bundle; a claim's
    bundle carries its record as ``CLAIM_MIME``. Raises ``ValueError`` for a record that
    lacks one of the fields the report shows.
    """
    records = []
    for key, output in glue.items():
        if not key.startswith(CLAIM_PREFIX):
            continue
        data = output.get("data") or {}
        record = data.get(CLAIM_MIME, data.get("application/json"))
        if isinstance(record, str):  # some writers keep JSON as text
            record = json.loads(record)
        missing = [f for f in ("name", "kind", "statement", "holds", "values")
                   if not isinstance(record, dict) or f not in record]
        if missing or record["kind"] not in ("guarded", "chosen"):
            raise ValueError(f"glue output {key!r} is not a claim record (missing {missing} or "
                             f"an unknown kind); record it with d2lmini.book.claims")
        records.append(record)
    return records


def edition_output_folder(app) -> None:
    """``builder-inited``, after myst-nb's: its output folder one per edition (``book_lang``),
    and the theme's notebook download taken from there (:func:`_download_from`)."""
    config = getattr(app.env, "mystnb_config", None)
    if config is None:
        return
    folder = (Path(app.outdir).parent / "jupyter_execute" / app.config.book_lang).resolve()
    app.env.mystnb_config = config.copy(output_folder=str(folder))
    for listener in list(app.events.listeners.get("html-page-context", [])):
        handler = listener.handler
        if (getattr(handler, "__module__", ""), getattr(handler, "__name__", "")) == \
                ("sphinx_book_theme.header_buttons.launch", "add_launch_buttons"):
            app.disconnect(listener.id)
            # before the theme's header buttons, which read ipynb_source: they have the launch
            # buttons' priority and were connected after them
            app.connect("html-page-context", _download_from(folder, handler),
                        priority=listener.priority - 1)


def _download_from(folder: Path, launch_buttons):
    """sphinx-book-theme's launch buttons, with the page's executed notebook (its download
    button) copied from ``folder``: the theme copies it from ``<outdir>/../jupyter_execute``,
    which the editions would share."""
    def handler(app, pagename, templatename, context, doctree):
        source = context.get("sourcename") or ""
        notebook = folder.joinpath(*pagename.split("/")).with_suffix(".ipynb")
        if not (source.endswith((".md", ".md.txt")) and notebook.is_file()):
            return launch_buttons(app, pagename, templatename, context, doctree)
        target = Path(app.outdir, "_sources", *pagename.split("/")).with_suffix(".ipynb")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(notebook, target)
        context["sourcename"] = source + ".notebook"  # the theme's own copy skipped ...
        try:
            launch_buttons(app, pagename, templatename, context, doctree)
        finally:
            context["sourcename"] = source
        context["ipynb_source"] = pagename + ".ipynb"  # ... and its result given
    return handler


def collect_claims(app, doctree) -> None:
    """``doctree-read``: keep the claims of the page just read (its glue file is fresh now)."""
    env = app.env
    docname = env.docname
    nb_data = getattr(env, "nb_metadata", {}).get(docname, {})
    if "exec_data" not in nb_data:  # not an executed notebook
        return
    records: list[dict[str, Any]] = []
    if any(k.startswith(CLAIM_PREFIX) for k in nb_data.get("glue", [])):
        folder = Path(env.mystnb_config.output_folder)
        *parents, page = docname.split("/")
        path = folder.joinpath(*parents, page + ".glue.json")  # where myst-nb writes it
        try:
            records = claims_from_glue(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as err:
            LOGGER.warning(f"claims of {docname} could not be read: {err}", location=docname)
    for r in records:
        if r["kind"] == "guarded" and r["holds"] is not True:
            LOGGER.warning(f"guarded claim {r['name']!r} does not hold: {r['statement']}",
                           location=docname)
    getattr_or_set(env, ENV_KEY, dict)[docname] = records


def getattr_or_set(env, name: str, factory):
    """``env.<name>``, created with ``factory()`` the first time."""
    if not hasattr(env, name):
        setattr(env, name, factory())
    return getattr(env, name)


def connect_page_records(app, env_key: str, report_key: str) -> None:
    """Keep ``env.<env_key>`` ({docname: what the page recorded}) and ``env.<report_key>`` (the
    pages holding a report of them) in step with the pages read: forget a page about to be read
    again (``env-purge-doc``), take over what parallel readers collected (``env-merge-info``), and
    write the report pages again whenever any page was read (``env-updated``)."""

    def purge(app, env, docname) -> None:
        getattr_or_set(env, env_key, dict).pop(docname, None)
        getattr_or_set(env, report_key, set).discard(docname)

    def merge(app, env, docnames, other) -> None:
        theirs = getattr(other, env_key, {})
        getattr_or_set(env, env_key, dict).update({d: theirs[d] for d in docnames if d in theirs})
        getattr_or_set(env, report_key, set).update(
            d for d in getattr(other, report_key, set()) if d in docnames)

    def rewrite(app, env):
        if getattr(app, "book_claims_pages_read", False):
            return sorted(getattr_or_set(env, report_key, set))
        return []

    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    app.connect("env-updated", rewrite)


def note_read(app, env, docnames) -> None:
    """``env-before-read-docs``: remember whether any page is read in this build."""
    app.book_claims_pages_read = bool(docnames)


# ---------------------------------------------------------------------------- rendering
class claims_report_node(nodes.General, nodes.Element):
    """Placeholder for the claims report, replaced once every page has been read."""


class ClaimsReport(SphinxDirective):
    """``claims-report``: every claim of the edition's executed chapters, chapter by chapter."""

    def run(self):
        getattr_or_set(self.env, REPORT_KEY, set).add(self.env.docname)
        return [claims_report_node()]


def format_value(value: Any) -> str:
    """A recorded value as the report shows it: floats to 4 significant digits."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}" if math.isfinite(value) else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def plain_text(statement: str) -> str:
    """A statement as plain text: the MyST markup a phrase may carry (``$n$``, ``**bold**``,
    ```code```) dropped, since the report is assembled after the page was parsed."""
    text = re.sub(r"\$([^$]+)\$", r"\1", statement)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![*\w])\*([^*\s][^*]*)\*(?![*\w])", r"\1", text)
    return re.sub(r"`([^`]+)`", r"\1", text)


def statement_node(statement: str) -> nodes.paragraph:
    """A statement as a paragraph: its code spans set as code (an example sentence, a name), the
    rest of its MyST markup dropped (:func:`plain_text`)."""
    paragraph = nodes.paragraph()
    for i, part in enumerate(re.split(r"`([^`]+)`", statement)):
        if i % 2:
            paragraph += nodes.literal(text=part)
        elif part:
            paragraph += nodes.Text(plain_text(part))
    return paragraph


def status(record: dict[str, Any], text: dict[str, str]) -> str:
    if record["kind"] == "chosen":
        return text["chose_true"] if record["holds"] else text["chose_false"]
    return text["holds"] if record["holds"] is True else text["fails"]


def make_table(header: list[str], rows: list[list[nodes.Node | str]],
               classes: list[str]) -> nodes.table:
    """A docutils table (HTML and LaTeX) with one header row."""
    table = nodes.table(classes=["colwidths-auto", *classes])
    group = nodes.tgroup(cols=len(header))
    table += group
    for _ in header:
        group += nodes.colspec(colwidth=1)
    head, body = nodes.thead(), nodes.tbody()
    group += head
    group += body
    for target, cells in ((head, [header]), (body, rows)):
        for cells_of_row in cells:
            row = nodes.row()
            for cell in cells_of_row:
                content = cell if isinstance(cell, nodes.Node) else nodes.paragraph(text=cell)
                if isinstance(content, nodes.Inline) or isinstance(content, nodes.Text):
                    content = nodes.paragraph("", "", content)
                row += nodes.entry("", content)
            target += row
    return table


def chapter_link(report: str, docname: str, title: str) -> pending_xref:
    """A reference to a chapter, resolved by Sphinx (HTML and LaTeX) to its title."""
    xref = pending_xref("", refdoc=report, reftarget="/" + docname, reftype="doc",
                        refdomain="std", refexplicit=True, refwarn=True)
    xref += nodes.inline(text=title)
    return xref


def counts(records: list[dict[str, Any]]) -> dict[str, int]:
    guarded = [r for r in records if r["kind"] == "guarded"]
    return {"total": len(records), "guarded": len(guarded),
            "chosen": len(records) - len(guarded),
            "ok": sum(r["holds"] is True for r in guarded)}


def chapter_section(report: str, docname: str, title: str, records: list[dict[str, Any]],
                    text: dict[str, str]) -> nodes.section:
    """One chapter: its count, then a table of its claims."""
    section = nodes.section(ids=[f"claims-{docname.replace('/', '-')}"],
                            classes=["claims-chapter"])
    section += nodes.title("", "", chapter_link(report, docname, title))
    n = counts(records)
    if not records:
        section += nodes.paragraph(text=text["none"])
        return section
    section += nodes.paragraph(text=text["count"].format(s="" if n["total"] == 1 else "s", **n))
    rows = []
    for r in records:
        values = ", ".join(f"{k} = {format_value(v)}" for k, v in r["values"].items())
        kind = text["kind_guarded"] if r["kind"] == "guarded" else text["kind_chosen"]
        # the values are Python's (names, numbers, the strings a run produced): set as code
        rows.append([nodes.literal(text=r["name"]), kind, statement_node(r["statement"]),
                     nodes.literal(text=values) if values else "–", status(r, text)])
    section += make_table([text["claim"], text["kind"], text["statement"], text["values"],
                           text["status"]], rows, ["claims-table"])
    return section


def chapter_title(env, docname: str) -> str:
    """The chapter's title with its number (``2. Multi-head attention …``)."""
    node = env.titles.get(docname)
    title = node.astext() if node is not None else docname
    number = env.toc_secnumbers.get(docname, {}).get("")
    return f"{'.'.join(map(str, number))}. {title}" if number else title


def chapter_order(app, docnames: list[str]) -> list[str]:
    """``docnames`` in table-of-contents order (pages the toc does not list last)."""
    try:
        order = {name: i for i, name in enumerate(toc_files(Path(app.config.external_toc_path)))}
    except (OSError, KeyError, TypeError):
        order = {}
    return sorted(docnames, key=lambda d: (order.get(d, len(order)), d))


class ClaimsReportTransform(SphinxPostTransform):
    """Replace the placeholder with the report, from the claims of every page read."""

    default_priority = 8  # before the references are resolved (10): the chapter links

    def run(self, **kwargs) -> None:
        for node in list(self.document.findall(claims_report_node)):
            node.replace_self(self.report())

    def report(self) -> list[nodes.Node]:
        env, app = self.env, self.app
        text = TEXT.get(app.config.book_lang, TEXT["en"])
        found = getattr_or_set(env, ENV_KEY, dict)
        chapters = chapter_order(app, [d for d in found if found[d] or
                                       is_notebook(Path(env.doc2path(d)))])
        if not chapters:
            return [nodes.paragraph(text=text["no_chapters"])]
        titles = {d: self.title(d) for d in chapters}
        total = counts([r for d in chapters for r in found[d]])
        out: list[nodes.Node] = [nodes.paragraph(text=text["book"].format(
            chapters=len(chapters), **total))]
        rows = [[chapter_link(env.docname, d, titles[d]),
                 *(str(counts(found[d])[k]) for k in ("guarded", "chosen", "total"))]
                for d in chapters]
        out.append(make_table([text["chapter"], text["guarded"], text["chosen"], text["total"]],
                              rows, ["claims-count"]))
        out += [chapter_section(env.docname, d, titles[d], found[d], text) for d in chapters]
        return out

    def title(self, docname: str) -> str:
        return chapter_title(self.env, docname)


# ---------------------------------------------------------------------------- unique ids
def unique_exercise_ids(app, doctree, docname) -> None:
    """``doctree-resolved``: number the sections sphinx-exercise gives one fixed id each."""
    seen: dict[str, int] = {}
    for section in doctree.findall(nodes.section):
        for i, ident in enumerate(section["ids"]):
            if ident in SPHINX_EXERCISE_IDS:
                seen[ident] = seen.get(ident, 0) + 1
                section["ids"][i] = f"{ident}-{seen[ident]}"


def setup(app):
    app.setup_extension("tools.build.book_sphinx.i18n")  # registers ``book_lang``
    # the API page: every module of d2lmini.MODULES
    app.setup_extension("tools.build.book_sphinx.apipage")
    app.add_node(claims_report_node)
    app.add_directive("claims-report", ClaimsReport)
    app.add_post_transform(ClaimsReportTransform)
    app.connect("builder-inited", edition_output_folder, priority=600)  # myst-nb's: 500
    app.connect("doctree-read", collect_claims)
    connect_page_records(app, ENV_KEY, REPORT_KEY)
    app.connect("env-before-read-docs", note_read)
    app.connect("doctree-resolved", unique_exercise_ids)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": 1}
