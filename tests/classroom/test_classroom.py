"""The classroom dry run (``tools/classroom/dry_run.py``, ``assign.py dryrun``), every graded
chapter in both editions: a made-up class graded by the chapter's own public checks and hidden
tests.

* the worked solution gets full marks, the blank student notebook zero;
* each typical mistake (``tools/classroom/cases/<chapter>.yml``) costs points in its own
  exercise and in no other, and fails a hidden test;
* each answer typed in to pass the public checks passes them all, and fails a hidden test;
* the class report reads what the dry run writes.
"""
from __future__ import annotations

import functools

import pytest

from tools.bookmeta import LANGS

from tools.classroom import class_report
from tools.classroom import dry_run as classroom
from tools.classroom import exercises

pytestmark = pytest.mark.book

CHAPTERS = [(lang, ch) for lang in LANGS for ch in exercises.graded_chapters(lang)]
IDS = [f"{lang}-{ch}" for lang, ch in CHAPTERS]


@functools.cache
def _dry_run(lang: str, chapter: str) -> dict:
    return classroom.run(chapter, lang)


@pytest.fixture(params=CHAPTERS, ids=IDS)
def dry(request):
    lang, chapter = request.param
    result = _dry_run(lang, chapter)
    rows = {r["submission"]: r for r in result["rows"]}
    return lang, chapter, rows, result["details"]


def _cases_of(details: dict, label: str) -> list[dict]:
    return details["tests"][label]


def test_every_graded_exercise_has_a_mistake_and_a_typed_in_answer():
    for chapter in sorted({ch for _, ch in CHAPTERS}):
        cases = classroom.load_cases(chapter)
        labels = {ex.label for ex in exercises.graded_exercises("en", chapter)}
        assert set(cases) == labels, f"{chapter}: cases for {sorted(set(cases) ^ labels)}"
        for label, case in cases.items():
            assert case["mistake"]["what"].strip() and case["mistake"]["code"].strip(), label
            assert case["hard_coded"]["code"].strip(), label


def test_the_solution_gets_full_marks(dry):
    lang, chapter, rows, details = dry
    row = rows["solution"]
    assert row["total"] == row["possible"] > 0, (
        f"{lang}/{chapter}: {details['failures']['solution']}")


def test_the_blank_notebook_gets_zero(dry):
    _, _, rows, details = dry
    assert rows["blank"]["total"] == 0, details["failures"]["blank"]


def test_each_mistake_costs_points_in_its_exercise_only(dry):
    lang, chapter, rows, details = dry
    full = rows["solution"]
    for label in details["tests"]:
        name = f"mistake-{label}"
        row, failed = rows[name], details["failures"][name]
        others = [k for k in details["tests"] if k != label and row[k] != full[k]]
        assert not others, f"{lang}/{chapter}: {name} also loses points in {others}: {failed}"
        assert row[label] < full[label], f"{lang}/{chapter}: {name} loses nothing"
        hidden = {c["name"] for c in _cases_of(details, label) if c["hidden"]}
        assert hidden & set(failed.get(label, {})), f"{name} fails no hidden test: {failed}"


def test_a_typed_in_answer_passes_the_checks_and_fails_the_hidden_tests(dry):
    lang, chapter, rows, details = dry
    for label in details["tests"]:
        name = f"hard-coded-{label}"
        failed = set(details["failures"][name].get(label, {}))
        public = {c["name"] for c in _cases_of(details, label) if not c["hidden"]}
        hidden = {c["name"] for c in _cases_of(details, label) if c["hidden"]}
        assert not failed & public, (
            f"{lang}/{chapter}: {name} fails public checks: {details['failures'][name]}")
        assert failed & hidden, f"{lang}/{chapter}: {name} passes every hidden test"
        others = [k for k in details["tests"] if k != label
                  and rows[name][k] != rows["solution"][k]]
        assert not others, f"{name} also loses points in {others}"


def test_the_class_report_reads_the_dry_run(tmp_path):
    classroom.write(_dry_run("zh", "mha-numpy"), tmp_path / "grades.csv")
    report = class_report.build(tmp_path / "grades.csv", "zh")
    assert report.chapter == "mha-numpy" and report.has_details
    assert len(report.students) == 2 + 2 * len(report.exercises)
    text = class_report.render_text(report, "zh")
    assert "全班成绩报告" in text and "隐藏测试" in text


def test_the_dry_run_executes_only_what_the_answers_need():
    # the training chapter: none of its training cells
    ch = classroom.read("training-translation", "en")
    keep = classroom.context_for(ch, classroom.submissions(
        ch, classroom.load_cases("training-translation")))
    assert len(keep) < len(ch.context) // 4, f"{len(keep)} of {len(ch.context)} cells"
    assert not any("train" in ch.context[i] and "book.load_or_train" in ch.context[i]
                   for i in keep)
    # a function's own variables are not the notebook's names
    names = classroom.cell_names("def f(x):\n    y = x + z\n    return y\nw = f(1)")
    assert names.defined == {"f", "w"} and "z" in names.used and "y" not in names.used
    keep = classroom.needed_cells(["z = 1", "y = 2", "def f(x):\n    return x + z"], ["f(3)"])
    assert keep == [0, 2]


def test_an_unknown_chapter_gets_a_clear_error():
    with pytest.raises(classroom.DryRunError, match="chapter must be .*got 'glossary'"):
        classroom.run("glossary", "en")
