"""Chapter 8's recorded ablation table in both states: with no ``bench/results/ablations.json`` it
says that nothing is recorded; with one (written by ``bench/ablations.py``) it prints every arm of
the record, the deep ones named with their depth, as recorded and not as this build's run. The
cell is executed as the book executes it, with a record made by the benchmark's own summary."""
from __future__ import annotations

import ast
import io
import types
from contextlib import redirect_stdout

import pytest

import d2lmini as d2l
from bench import ablations
from chapter_source import BOOK, LANGS, read_notebook
from d2lmini import book as d2l_book


def cells(lang: str) -> tuple[str, str]:
    """(the assignments of NAMES and VERDICTS, the recorded-table cell) of the chapter."""
    sources = [c.source for c in read_notebook(BOOK / lang / "modern-transformer.md").cells
               if c.cell_type == "code"]
    table = next(s for s in sources if "\nNAMES = {" in "\n" + s)
    names = [node for node in ast.parse(table).body if isinstance(node, ast.Assign)
             and node.targets[0].id in ("NAMES", "VERDICTS")]
    recorded = [s for s in sources if 'book.recorded_benchmark("ablations")' in s]
    assert len(names) == 2 and len(recorded) == 1
    return "\n".join(ast.unparse(n) for n in names), recorded[0]


def record() -> dict:
    s = ablations.settings(quick=True)
    runs = [{"arm": job["arm"], "loss": 2.0 + 0.01 * job["seed"] + 0.1 * (job["arm"] == "relu")}
            for job in ablations.jobs_for(s, vocab_size=65)]
    return {"machine": {"date": "2026-11-29T02:00:00+00:00", "git_commit": "0123456789abc"},
            "settings": s, **ablations.summarise(runs)}


def run(lang: str, recorded: dict | None, monkeypatch) -> str:
    monkeypatch.setenv("D2LMINI_LANG", lang)
    names, cell = cells(lang)
    proxy = types.SimpleNamespace(label=d2l_book.label,
                                  recorded_benchmark=lambda name: recorded)
    printed = io.StringIO()
    with redirect_stdout(printed):
        exec(names + "\n" + cell, {"book": proxy})
    return printed.getvalue()


@pytest.mark.parametrize("lang", LANGS)
def test_nothing_recorded_is_said(lang, monkeypatch):
    out = run(lang, None, monkeypatch)
    assert out.strip() == ("No recorded run of the ablation benchmark is committed with this "
                           "version of the book." if lang == "en" else
                           "本书的这个版本没有附带消融基准测试的运行记录。")


@pytest.mark.parametrize("lang", LANGS)
def test_a_record_prints_every_arm_as_recorded(lang, monkeypatch):
    rec = record()
    out = run(lang, rec, monkeypatch)
    lines = out.strip().splitlines()
    assert "0123456" in lines[0] and "2026-11-29" in lines[0]
    assert ("not this build's run" if lang == "en" else "不是本次构建的运行") in lines[0]
    assert len(lines) == 1 + len(rec["comparisons"]) + 1  # header, arms, noise floor
    deep = [ln for ln in lines[1:] if ("8 layers" if lang == "en" else "8 层") in ln]
    assert len(deep) == len(ablations.DEEP_ARMS)
    relu = next(ln for ln in lines[1:] if "ReLU" in ln)
    assert "+0.100" in relu
    assert set(rec["comparisons"]) == set(d2l.ABLATIONS) - {"baseline"} | {
        f"{a}_deep" for a in ablations.DEEP_ARMS}
