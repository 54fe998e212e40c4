"""Cell times: every kernel of the build times its cells (``tools/build/kernel_startup.py``), and
the execution report lists each chapter's slowest cell against the per-cell limit
(``book_sphinx.timing``)."""
from __future__ import annotations

import os

import nbformat
import pytest
from built_book import HTML, LANGS, ROOT, build, notebooks
from bs4 import BeautifulSoup

from tools.build.book_sphinx.timing import (
    cell_digest, margin_problem, read_times, summarise,
)
from tools.bookmeta import budget_s

STARTUP = ROOT / "tools" / "build" / "kernel_startup.py"


def test_a_kernel_times_its_cells(tmp_path, monkeypatch):
    from nbclient import NotebookClient

    times = tmp_path / "cell-times.jsonl"
    monkeypatch.setenv("PYTHONSTARTUP", str(STARTUP))
    monkeypatch.setenv("D2LMINI_CELL_TIMES", str(times))
    sources = ["x = 1", "import time\ntime.sleep(0.3)", "print(sorted(dir()))"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    NotebookClient(nb, kernel_name="python3", timeout=120).execute()
    summary = summarise(sources, read_times(times))
    assert summary["cells"] == summary["timed"] == 3
    assert summary["slowest"]["index"] == 2 and summary["slowest"]["seconds"] >= 0.3
    assert summary["slowest"]["line"] == "import time"
    # the startup file leaves nothing in the notebook's namespace
    names = nb.cells[2].outputs[0]["text"]
    assert "_time_cells" not in names and "'hashlib'" not in names, names


def test_a_kernel_records_the_data_each_cell_read(tmp_path, monkeypatch):
    """The build shares a chapter between builds with other data only when it read none of what
    differs: what a cell read (also in a process it started) is on the cell's line."""
    import json

    from nbclient import NotebookClient

    times = tmp_path / "cell-times.jsonl"
    monkeypatch.setenv("PYTHONSTARTUP", str(STARTUP))
    monkeypatch.setenv("D2LMINI_CELL_TIMES", str(times))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    sources = ["x = 1", "import d2lmini as d2l\nd2l.locate('text8')",
               "import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'import d2lmini; "
               "d2lmini.resolve(\"fra-eng\")'], check=True)", "y = 2"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    NotebookClient(nb, kernel_name="python3", timeout=120).execute()
    lines = [json.loads(x) for x in times.read_text(encoding="utf-8").splitlines()]
    assert [ln["cell"] for ln in lines] == [cell_digest(s) for s in sources]
    assert [ln["reads"] for ln in lines] == [[], ["text8"], ["fra-eng"], []]


def test_read_times_keeps_the_latest_run_and_skips_broken_lines(tmp_path):
    path = tmp_path / "t.jsonl"
    d = cell_digest("a = 1")
    path.write_text(f'{{"cell": "{d}", "seconds": 2.0}}\n{{"cell": "{d}", "seconds": 1.5}}\n'
                    '{"cell": "cut sh', encoding="utf-8")
    assert read_times(path) == {d: 1.5}
    assert read_times(tmp_path / "missing.jsonl") == {}


def test_summarise_without_times_reports_untimed_cells():
    summary = summarise(["a = 1", "b = 2"], {})
    assert summary == {"cells": 2, "timed": 0, "total": 0, "slowest": None}


def test_margin_problem_names_the_slowest_cell():
    found = {"a": summarise(["x"], {cell_digest("x"): 10.0}),
             "b": summarise(["# why\ny = 2"], {cell_digest("# why\ny = 2"): 800.0})}
    problem = margin_problem(found, limit=3600, factor=5)
    assert problem and "(b, cell 1)" in problem and "800 s" in problem
    assert margin_problem(found, limit=4000, factor=5) is None
    assert margin_problem(found, limit=-1, factor=5) is None  # no limit
    assert margin_problem({}, limit=10, factor=5) is None


@pytest.mark.book
@pytest.mark.parametrize("lang", LANGS)
def test_report_gives_every_chapters_slowest_cell(lang):
    build()
    page = BeautifulSoup((HTML / lang / "execution-report.html").read_text(encoding="utf-8"),
                         "html.parser")
    table = page.select_one("table.cell-times-table")
    assert table is not None, f"{lang}: no cell-times table on the execution report"
    rows = {tr.find("a")["href"].split("#")[0][: -len(".html")]:
            [td.get_text(" ", strip=True) for td in tr.find_all("td")]
            for tr in table.select("tbody tr")}
    missing = sorted(set(notebooks(lang)) - set(rows))
    assert not missing, f"{lang}: chapters missing from the cell times: {missing}"
    # a page without code cells (the glossary) ran nothing and is not listed as "not timed"
    extra = sorted(set(rows) - set(notebooks(lang)))
    assert not extra, f"{lang}: pages without code in the cell times: {extra}"
    # the test build executes or reuses outputs made with the startup file: all of them timed
    untimed = [name for name, cells in rows.items() if not cells[4][:1].isdigit()]
    assert not untimed, f"{lang}: chapters without cell times: {untimed}"
    # each chapter's time against its budget; one over it is flagged and named
    over = []
    for name, cells in rows.items():
        assert cells[3] == str(budget_s(name)), (lang, name, cells)
        seconds = float(cells[2].split()[0].split("（")[0])
        flagged = ("over budget" in cells[2]) or ("超出预算" in cells[2])
        assert flagged == (seconds > budget_s(name)), (lang, name, cells)
        over += [name] * flagged
    budgets = table.find_previous("p").get_text(" ", strip=True)
    assert (str(len(over)) in budgets) if over else ("budget" in budgets or "预算" in budgets)
    limit = os.environ.get("D2LMINI_CELL_TIMEOUT", "3600")
    sentence = table.find_previous("p").find_previous("p").get_text(" ", strip=True)
    assert limit in sentence, f"{lang}: the limit {limit} s is not in {sentence!r}"


def test_the_report_page_of_both_editions_uses_the_directive():
    for lang in LANGS:
        text = (ROOT / "book" / lang / "execution-report.md").read_text(encoding="utf-8")
        assert "```{cell-times}" in text, f"{lang}: execution report without cell-times"
