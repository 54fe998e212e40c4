"""The appendix's GPU section in both states: with no GPU run recorded it says so and shows no
GPU number; with ``bench/results/gpu_*.json`` it writes its paragraph from them (device, date,
commit, BLEU, chrF, MFU, the chapters), and a rehearsal's files (``"tiny": true``) never count.
The cell is executed as the book executes it, with the job's own output (a rehearsal's files in
tests/gpu/fixtures) standing in for a GPU run."""
from __future__ import annotations

import copy
import io
import json
import math
import types
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from chapter_source import BOOK, LANGS, read_notebook
from d2lmini import book as d2l_book

FIXTURES = Path(__file__).resolve().parents[1] / "gpu" / "fixtures"


def gpu_cell(lang: str) -> str:
    cells = [c.source for c in read_notebook(BOOK / lang / "scaling.md").cells
             if c.cell_type == "code" and '"app_gpu_state"' in c.source]
    assert len(cells) == 1
    return cells[0]


def run_cell(lang: str, bench: dict, monkeypatch) -> tuple[str, str]:
    """``(the phrase glued as app_gpu_state, what the cell printed)``."""
    monkeypatch.setenv("D2LMINI_LANG", lang)
    chosen = {}

    def choose(name, condition, if_true, if_false, **values):
        chosen[name] = if_true if condition else if_false
        return chosen[name]

    proxy = types.SimpleNamespace(label=d2l_book.label, choose=choose)
    printed = io.StringIO()
    with redirect_stdout(printed):
        exec(gpu_cell(lang), {"bench": bench, "book": proxy, "nan": math.nan})
    return chosen["app_gpu_state"], printed.getvalue()


def recorded(**changes) -> dict:
    """The rehearsal's files as if a GPU run had written them."""
    bench = {}
    for path in sorted(FIXTURES.glob("gpu_*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        record["tiny"] = False
        record["machine"].update(gpu="NVIDIA H200", date="2026-12-01T10:00:00+00:00",
                                 git_commit="0123456789abcdef")
        bench[path.stem] = record
    bench["gpu_train_full"].update(changes)
    return bench


@pytest.mark.parametrize("lang", LANGS)
def test_nothing_recorded_says_so(lang, monkeypatch):
    phrase, printed = run_cell(lang, {"train": {"machine": {}}}, monkeypatch)
    words = {"en": "has not been recorded", "zh": "尚未记录"}[lang]
    assert words in phrase and words in printed
    assert not any(ch.isdigit() for ch in phrase.replace("gpu_", ""))  # no number at all


@pytest.mark.parametrize("lang", LANGS)
def test_a_rehearsal_never_counts(lang, monkeypatch):
    bench = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in FIXTURES.glob("*.json")}
    assert all(r["tiny"] for r in bench.values())
    phrase, _ = run_cell(lang, bench, monkeypatch)
    assert {"en": "has not been recorded", "zh": "尚未记录"}[lang] in phrase


@pytest.mark.parametrize("lang", LANGS)
def test_a_recorded_run_is_described_from_its_numbers(lang, monkeypatch):
    bench = recorded(bleu=41.26, chrf=60.04, mfu=0.3512, tokens_per_sec=123456.0)
    phrase, printed = run_cell(lang, bench, monkeypatch)
    for text in ("NVIDIA H200", "2026-12-01", "0123456", "41.3", "60.0", "35%", "123,456"):
        assert text in phrase, (text, phrase)
    assert {"en": "meeting", "zh": "达到了"}[lang] in phrase
    chapters = bench["gpu_chapters"]["chapters"]
    assert f"{len(chapters)}" in phrase
    assert "BLEU 41.3" in printed and all(name in printed for name in chapters)
    assert "tokens/s" in printed and "attention L =" in printed


@pytest.mark.parametrize("lang", LANGS)
def test_goals_missed_and_an_unknown_peak_are_said(lang, monkeypatch):
    phrase, _ = run_cell(lang, recorded(bleu=12.0, mfu=None), monkeypatch)
    assert {"en": "short of", "zh": "没有达到"}[lang] in phrase
    assert {"en": "unknown", "zh": "未知"}[lang] in phrase


@pytest.mark.parametrize("lang", LANGS)
def test_chapters_alone_are_printed_but_not_described(lang, monkeypatch):
    bench = copy.deepcopy(recorded())
    del bench["gpu_train_full"]
    phrase, printed = run_cell(lang, bench, monkeypatch)
    assert {"en": "has not been recorded", "zh": "尚未记录"}[lang] in phrase
    assert all(name in printed for name in bench["gpu_chapters"]["chapters"])
