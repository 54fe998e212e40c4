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


def run(lang: str, recorded: dict | None, monkeypatch, *, shakespeare: bool = True,
        verdicts: dict | None = None) -> tuple[str, str]:
    """(what the cell printed, the phrase it chose for ch8_recorded_phrase)."""
    monkeypatch.setenv("D2LMINI_LANG", lang)
    names, cell = cells(lang)
    chosen = {}

    def choose(name, condition, if_true, if_false, **values):
        chosen[name] = if_true if condition else if_false
        return chosen[name]

    proxy = types.SimpleNamespace(label=d2l_book.label, choose=choose,
                                  recorded_benchmark=lambda name: recorded)
    comparisons = {arm: types.SimpleNamespace(verdict=v) for arm, v in (verdicts or {
        arm: "within noise" for arm in d2l.ABLATIONS if arm != "baseline"}).items()}
    printed = io.StringIO()
    with redirect_stdout(printed):
        exec(names + "\n" + cell, {"book": proxy, "glue": lambda *a, **k: None,
                                   "shakespeare": shakespeare, "comparisons": comparisons})
    return printed.getvalue(), chosen["ch8_recorded_phrase"]


@pytest.mark.parametrize("lang", LANGS)
def test_nothing_recorded_is_said(lang, monkeypatch):
    out, phrase = run(lang, None, monkeypatch)
    assert phrase.startswith(("No recorded run", "本书的这个版本没有附带运行记录"))
    assert out.strip() == ("No recorded run of the ablation benchmark is committed with this "
                           "version of the book." if lang == "en" else
                           "本书的这个版本没有附带消融基准测试的运行记录。")


@pytest.mark.parametrize("lang", LANGS)
def test_a_record_prints_every_arm_as_recorded(lang, monkeypatch):
    rec = record()
    out, phrase = run(lang, rec, monkeypatch)
    # the record's verdicts: relu "worse", the others within noise; this build's: all within noise
    assert ("on 12 of the 13 arms" if lang == "en" else "13 个实验组中有 12 个") in phrase
    assert "2 seeds, 100 steps" in phrase or "2 个种子，100 步" in phrase
    _, other_data = run(lang, rec, monkeypatch, shakespeare=False)
    assert other_data.startswith(("The recorded run trained on Tiny Shakespeare",
                                  "记录下来的运行是在 Tiny Shakespeare 上训练的"))
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
