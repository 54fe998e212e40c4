"""How long the chapters' cells ran, on the execution report; a warning when the slowest cell
leaves too little room under the per-cell limit.

The kernels of the build time every cell (``tools/build/kernel_startup.py``, ``PYTHONSTARTUP``) into
the file named by the configuration value ``book_cell_times`` (one JSON line per executed cell:
the cell's source digest and its seconds; ``tools/build/build_book.py`` puts it in the edition's
jupyter cache folder, so a chapter taken from the cache keeps the times of the run that made its
outputs). This extension

* matches, when an executed page is read, its code cells (myst-nb's executed notebook in
  ``<outdir>/../jupyter_execute/<page>.ipynb``, written just before) with those times and keeps
  the cell count, the timed total and the slowest cell in the environment;
* renders where a page writes the directive ``cell-times`` (the execution report) a table per
  chapter: cells, seconds of all its cells against the chapter's budget (``bookmeta.budget_s``;
  a chapter over it is flagged in the table and named in a sentence, never a failed build: a
  slow machine is no error), the slowest cell, and a sentence comparing the slowest with the
  per-cell limit ``book_cell_timeout``;
* warns (a ``-W`` build fails) when a machine ``book_slow_factor`` times slower than this one
  would reach the limit with the slowest cell.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from tools.bookmeta import BUDGET_S, budget_s
from tools.build.book_sphinx.claims import (chapter_link, chapter_order, chapter_title,
                                             connect_page_records, getattr_or_set, make_table)

LOGGER = logging.getLogger(__name__)
ENV_KEY = "book_cell_times"  # env attribute: {docname: summary of its cell times}
REPORT_KEY = "book_cell_times_reports"  # docnames holding a cell-times directive

TEXT = {
    "en": {
        "chapter": "Chapter", "cells": "Code cells", "timed": "Seconds (all cells)",
        "slowest": "Slowest cell", "seconds": "{s:.1f} s, cell {i}: {line}",
        "budget": "Budget (s)", "over": "{t:.1f} (over budget)",
        "budgets_kept": "Every chapter ran within its budget (CONTRIBUTING.md: at most {b} s "
                        "of cell time per chapter on a 2-core machine; chapter 6 more, for its "
                        "training) in the run that made its outputs.",
        "budgets_over": "{n} of {m} chapters ran over their budget (CONTRIBUTING.md: at most "
                        "{b} s of cell time per chapter on a 2-core machine; chapter 6 more, for "
                        "its training) in the run that made their outputs: {pages}.",
        "untimed": "not timed (outputs from a cache made before cells were timed)",
        "limit": "The slowest cell took {s:.1f} s when it last ran ({page}). A cell may run "
                 "for {limit} s before the build stops it, so a machine up to {margin:.0f} "
                 "times slower than the one that ran it would still finish every cell.",
        "no_limit": "The slowest cell took {s:.1f} s when it last ran ({page}); this build set "
                    "no limit on a cell's time.",
        "none": "No cell of this build was timed.",
    },
    "zh": {
        "chapter": "章", "cells": "代码单元格数", "timed": "秒数（全部单元格）",
        "slowest": "最慢的单元格", "seconds": "{s:.1f} 秒，第 {i} 个单元格：{line}",
        "budget": "预算（秒）", "over": "{t:.1f}（超出预算）",
        "budgets_kept": "在生成其输出的那次运行中，每一章都没有超出预算（见 CONTRIBUTING.md："
                        "每章的单元格在双核机器上合计不超过 {b} 秒；第 6 章含训练，预算更多）。",
        "budgets_over": "在生成其输出的那次运行中，{m} 章里有 {n} 章超出了预算（见 "
                        "CONTRIBUTING.md：每章的单元格在双核机器上合计不超过 {b} 秒；第 6 章含"
                        "训练，预算更多）：{pages}。",
        "untimed": "未计时（输出来自开始计时之前生成的缓存）",
        "limit": "最慢的单元格上次运行用了 {s:.1f} 秒（{page}）。"
                 "构建允许一个单元格运行 {limit} 秒，"
                 "所以比运行它的机器慢 {margin:.0f} 倍以内的机器也能跑完每一个单元格。",
        "no_limit": "最慢的单元格上次运行用了 {s:.1f} 秒（{page}）；"
                    "本次构建没有限制单元格的运行时间。",
        "none": "本次构建没有为任何单元格计时。",
    },
}


def cell_digest(source: str) -> str:
    """The key of a cell's times: what ``tools/build/kernel_startup.py`` writes for it."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def time_records(path: Path) -> list[dict[str, Any]]:
    """The lines of a times file, one record per executed cell, in order (a missing file gives
    none, and so does a line cut short by a stopped kernel)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and "cell" in record:
            records.append(record)
    return records


def read_times(path: Path) -> dict[str, float]:
    """{cell digest: seconds of its latest run} from a times file (missing file: empty)."""
    times: dict[str, float] = {}
    for record in time_records(path):
        try:
            times[str(record["cell"])] = float(record["seconds"])
        except (KeyError, TypeError, ValueError):
            continue
    return times


def summarise(sources: list[str], times: dict[str, float]) -> dict[str, Any]:
    """A page's code cells against the times: count, timed cells, their total, the slowest."""
    timed = [(times[d], i, src) for i, src in enumerate(sources, start=1)
             if (d := cell_digest(src)) in times]
    summary: dict[str, Any] = {"cells": len(sources), "timed": len(timed),
                               "total": sum(t for t, _, _ in timed), "slowest": None}
    if timed:
        seconds, index, source = max(timed, key=lambda x: x[0])
        first = next((ln.strip() for ln in source.splitlines()
                      if ln.strip() and not ln.lstrip().startswith("#")), "")
        summary["slowest"] = {"seconds": seconds, "index": index, "line": first[:70]}
    return summary


def collect_times(app, doctree) -> None:
    """``doctree-read``: the cell times of the executed page just read."""
    env = app.env
    if "exec_data" not in getattr(env, "nb_metadata", {}).get(env.docname, {}):
        return
    *parents, page = env.docname.split("/")
    notebook = Path(env.mystnb_config.output_folder).joinpath(*parents, page + ".ipynb")
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError) as err:
        LOGGER.warning(f"cell times of {env.docname} could not be read: {err}",
                       location=env.docname)
        return
    sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
               for c in cells if c.get("cell_type") == "code"]
    if not sources:  # a page with a kernelspec but no code (the glossary): nothing ran
        getattr_or_set(env, ENV_KEY, dict).pop(env.docname, None)
        return
    times = read_times(Path(app.config.book_cell_times)) if app.config.book_cell_times else {}
    getattr_or_set(env, ENV_KEY, dict)[env.docname] = summarise(sources, times)


def slowest_overall(found: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    """(docname, slowest cell) of the whole edition, or None when nothing was timed."""
    best = [(s["slowest"]["seconds"], d, s["slowest"]) for d, s in found.items() if s["slowest"]]
    if not best:
        return None
    _, docname, cell = max(best, key=lambda x: x[0])
    return docname, cell


def margin_problem(found: dict[str, dict[str, Any]], limit: int, factor: float) -> str | None:
    """Why a machine ``factor`` times slower would reach the per-cell ``limit`` (None: it would
    not, or there is no limit, or nothing was timed)."""
    worst = slowest_overall(found)
    if worst is None or limit <= 0 or worst[1]["seconds"] * factor <= limit:
        return None
    docname, cell = worst
    return (f"the slowest cell ({docname}, cell {cell['index']}) took {cell['seconds']:.0f} s: a "
            f"machine {factor:g} times slower would reach the per-cell limit of {limit} s "
            f"(D2LMINI_CELL_TIMEOUT)")


def check_margin(app, env) -> None:
    """``env-check-consistency``: warn (``-W``: fail) on :func:`margin_problem`."""
    problem = margin_problem(getattr_or_set(env, ENV_KEY, dict), app.config.book_cell_timeout,
                             app.config.book_slow_factor)
    if problem:
        LOGGER.warning(problem)


class cell_times_node(nodes.General, nodes.Element):
    """Placeholder for the cell-times table, replaced once every page has been read."""


class CellTimes(SphinxDirective):
    """``cell-times``: per chapter of the edition, its cells and the slowest one."""

    def run(self):
        getattr_or_set(self.env, REPORT_KEY, set).add(self.env.docname)
        return [cell_times_node()]


class CellTimesTransform(SphinxPostTransform):
    """Replace the placeholder with the table and the sentence on the limit."""

    default_priority = 8  # before references are resolved (the chapter links)

    def run(self, **kwargs) -> None:
        for node in list(self.document.findall(cell_times_node)):
            node.replace_self(self.report())

    def report(self) -> list[nodes.Node]:
        env, app = self.env, self.app
        text = TEXT.get(app.config.book_lang, TEXT["en"])
        found = getattr_or_set(env, ENV_KEY, dict)
        worst = slowest_overall(found)
        if worst is None:
            return [nodes.paragraph(text=text["none"])]
        rows, over = [], []
        for d in chapter_order(app, list(found)):
            s = found[d]
            slow = s["slowest"]
            partly = 0 < s["timed"] < s["cells"]
            cells = f"{s['timed']}/{s['cells']}" if partly else str(s["cells"])
            budget = budget_s(d.rsplit("/", 1)[-1])
            if s["timed"] and s["total"] > budget:
                over.append(d)
            total = (text["over"].format(t=s["total"]) if d in over else f"{s['total']:.1f}") \
                if s["timed"] else "–"
            rows.append([chapter_link(env.docname, d, self.title(d)), cells, total, str(budget),
                         _slowest(text["seconds"], slow) if slow else text["untimed"]])
        limit = app.config.book_cell_timeout
        docname, cell = worst
        sentence = (text["limit"].format(s=cell["seconds"], page=self.title(docname), limit=limit,
                                         margin=limit / max(cell["seconds"], 1e-9))
                    if limit > 0 else text["no_limit"].format(s=cell["seconds"],
                                                              page=self.title(docname)))
        budgets = (text["budgets_over"].format(n=len(over), m=len(rows), b=BUDGET_S,
                                               pages=", ".join(self.title(d) for d in over))
                   if over else text["budgets_kept"].format(b=BUDGET_S))
        return [nodes.paragraph(text=sentence), nodes.paragraph(text=budgets),
                make_table([text["chapter"], text["cells"], text["timed"], text["budget"],
                            text["slowest"]], rows, ["cell-times-table"])]

    def title(self, docname: str) -> str:
        return chapter_title(self.env, docname)


def setup(app):
    # ``book_lang``, the report's shared helpers
    app.setup_extension("tools.build.book_sphinx.claims")
    app.add_config_value("book_cell_times", "", "env")
    app.add_config_value("book_cell_timeout", -1, "env")
    app.add_config_value("book_slow_factor", 5, "env")
    app.add_node(cell_times_node)
    app.add_directive("cell-times", CellTimes)
    app.add_post_transform(CellTimesTransform)
    app.connect("doctree-read", collect_times)
    connect_page_records(app, ENV_KEY, REPORT_KEY)
    app.connect("env-check-consistency", check_margin)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": 1}


def _slowest(template: str, slow: dict) -> nodes.paragraph:
    """The slowest cell in words, its first line of code set as code."""
    before, after = template.format(s=slow["seconds"], i=slow["index"], line="\0").split("\0")
    return nodes.paragraph("", "", nodes.Text(before), nodes.literal(text=slow["line"]),
                           nodes.Text(after))
