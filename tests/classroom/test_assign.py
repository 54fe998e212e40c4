"""Graded assignments (tools/classroom/assign.py, otter-grader): made from the chapters, graded
offline.

* every chapter has at least two exercises whose answers the autograder checks, and their tests
  are hidden code cells at the end of the worked solution (the book build runs them there, so the
  worked solutions pass them: tests/build/test_book_build.py builds the book);
* public checks (``exercise-test``) reach the student's notebook, hidden tests
  (``exercise-test-hidden``) only the autograder, and carry most of the points;
* the NumPy chapter is graded for real, in both editions, with the autograder's tests and no
  Docker (each notebook in its own sandbox, tests/classroom/test_hostile.py): its solution
  notebook gets full marks, the blank student notebook zero, a notebook that hard-codes values
  to pass the public checks loses the hidden tests' points;
* ``report`` summarises a grades CSV (and its JSON of failing tests) for the class;
* for the other chapters (minutes of training on a CPU) the assignment is made and each test
  file runs against a notebook state without the answers and gives no points.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import nbformat
import pytest

from tools.classroom import assign
from tools.classroom import grading
from tools.classroom import class_report
from tools.classroom import exercises
from tools.bookmeta import LANGS, chapters

ROOT = Path(__file__).resolve().parents[2]

CHAPTERS = chapters()  # _toc.yml's: a chapter added there is held to these rules at once
GRADED_FULLY = "mha-numpy"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_three_graded_exercises_per_chapter(lang, chapter):
    assert len(CHAPTERS) >= 8 and "mha-numpy" in CHAPTERS  # read from _toc.yml, not empty
    graded = exercises.graded_exercises(lang, chapter)
    assert len(graded) >= 3, f"{lang}/{chapter}: graded exercises {[e.label for e in graded]}"
    for ex in graded:
        assert ex.gated, f"{ex.label}: tests need a solution with code (solution-start/end)"
        assert ex.checked_names(), f"{ex.label}: the tests read no name the solution defines"
        # public checks help the student, hidden tests grade
        assert ex.tests and ex.hidden_tests, f"{ex.label}: public checks and hidden tests"


@pytest.mark.parametrize("lang", LANGS)
def test_test_cells_are_hidden_and_inside_solutions(lang):
    for chapter in CHAPTERS:
        nb, segments = exercises.read_chapter(ROOT / "book" / lang / f"{chapter}.md")
        tags = {exercises.TEST_TAG, exercises.HIDDEN_TEST_TAG}
        tests = [c for c in nb.cells if tags & set(c.metadata.get("tags", []))]
        for cell in tests:
            assert "remove-cell" in cell.metadata["tags"], f"{chapter}: a test cell is shown"
        in_solutions = sum(len(ex.all_tests) for ex in exercises.exercises(segments))
        assert in_solutions == len(tests), f"{chapter}: a test cell outside a gated solution"


def test_checked_names_and_skeleton():
    md = ("```{exercise}\n:label: ex-a\n\nCompute.\n```\n\n"
          "```{solution-start} ex-a\n:class: dropdown\n```\n")
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell(md),
        nbformat.v4.new_code_cell("n = 3\nrows, cols = n, 2 * n\n\n\ndef f(x, y=1):\n"
                                  "    return x + y\n\n\nprint(f(rows))"),
        nbformat.v4.new_code_cell("assert f(1) == 2 and cols == 6"),
        nbformat.v4.new_markdown_cell("```{solution-end}\n```"),
    ])
    nb.cells[2].metadata["tags"] = ["remove-cell", exercises.TEST_TAG]
    segments = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            segments += exercises._markdown_segments(cell.source)
        else:
            kind = "test" if exercises.TEST_TAG in cell.metadata.get("tags", []) else "code"
            segments.append(exercises.Segment(kind, cell.source, cell=cell))
    (ex,) = exercises.exercises(segments)
    assert ex.tests == ["assert f(1) == 2 and cols == 6"]
    assert [n for n, _ in ex.checked_names()] == ["cols", "f"]
    skeleton = exercises.answer_skeleton(ex, "en")
    assert "cols = ...\ndef f(x, y=1):\n    ..." in skeleton and "return x + y" not in skeleton
    student = "\n".join(c.source for c in exercises.student_cells(segments, "en"))
    assert "Compute." in student and "print(f(rows))" not in student and "assert" not in student


def _exercise_with_hidden_test() -> tuple[list, exercises.Exercise]:
    md = ("```{exercise}\n:label: ex-b\n\nCompute.\n```\n\n"
          "```{solution-start} ex-b\n:class: dropdown\n```\n")
    cells = [nbformat.v4.new_markdown_cell(md),
             nbformat.v4.new_code_cell("def double(x):\n    return 2 * x"),
             nbformat.v4.new_code_cell("assert double(1) == 2"),
             nbformat.v4.new_code_cell("# a hidden case\nassert double(-7) == -14"),
             nbformat.v4.new_code_cell("assert double(0.5) == 1"),
             nbformat.v4.new_markdown_cell("```{solution-end}\n```")]
    cells[2].metadata["tags"] = ["remove-cell", exercises.TEST_TAG]
    cells[3].metadata["tags"] = ["remove-cell", exercises.HIDDEN_TEST_TAG]
    cells[4].metadata["tags"] = ["remove-cell", exercises.HIDDEN_TEST_TAG]
    segments = []
    for cell in cells:
        if cell.cell_type == "markdown":
            segments += exercises._markdown_segments(cell.source)
        else:
            tags = cell.metadata.get("tags", [])
            kind = ("hidden-test" if exercises.HIDDEN_TEST_TAG in tags else
                    "test" if exercises.TEST_TAG in tags else "code")
            segments.append(exercises.Segment(kind, cell.source, cell=cell))
    (ex,) = exercises.exercises(segments)
    return segments, ex


def test_hidden_tests_reach_only_the_autograder():
    segments, ex = _exercise_with_hidden_test()
    assert ex.tests == ["assert double(1) == 2"]
    assert ex.hidden_tests == ["# a hidden case\nassert double(-7) == -14",
                               "assert double(0.5) == 1"]
    assert [n for n, _ in ex.checked_names()] == ["double"]
    # the public check shares PUBLIC_POINTS, the hidden tests HIDDEN_POINTS: most of the points
    assert exercises.test_points(ex) == [1.0, 1.5, 1.5]
    assert exercises.PUBLIC_POINTS < exercises.HIDDEN_POINTS
    student = "\n".join(c.source for c in exercises.student_cells(segments, "en"))
    assert "double(-7)" not in student and "double(1)" not in student
    master = exercises.otter_master_cells(segments, "en", {"name": "x"})
    tests = [c.source for c in master if "BEGIN TEST CONFIG" in c.source]
    assert len(tests) == 3
    assert "hidden: false" in tests[0] and "points: 1.0" in tests[0]
    # a hidden test whose first line is a comment stays one test, with its comment
    assert "hidden: true" in tests[1]
    assert tests[1].endswith("# a hidden case\nassert double(-7) == -14")
    assert any("points: 4.0" in c.source for c in master if c.cell_type == "raw")


def test_points_without_hidden_tests_are_one_per_check():
    _, ex = _exercise_with_hidden_test()
    ex.hidden_tests = []
    assert exercises.test_points(ex) == [1.0]


def test_mha_numpy_exercises_have_public_and_hidden_tests():
    for lang in LANGS:
        for ex in exercises.graded_exercises(lang, GRADED_FULLY):
            assert ex.tests and ex.hidden_tests, f"{lang}: {ex.label}"
            points = exercises.test_points(ex)
            assert sum(points[len(ex.tests):]) > sum(points[:len(ex.tests)]), ex.label


def test_error_summary_of_a_doctest_report():
    """What the JSON keeps of a failing test: the failing line and the exception's last line
    (otter's OK-format tests are doctests)."""
    output = ("Trying:\n    assert f(3) == 9\nExpecting nothing\n****************\n"
              "Line 1, in q 1\nFailed example:\n    assert f(3) == 9\nException raised:\n"
              "    Traceback (most recent call last):\n"
              "      File \"<doctest q 1[0]>\", line 1, in <module>\n    AssertionError\n")
    assert grading.error_summary(output.splitlines()) == "assert f(3) == 9\nAssertionError"


def _synthetic_grades(tmp_path: Path, with_json: bool = True) -> Path:
    """A grades.csv (and grades.json) as `grade` writes them, for three submissions."""
    rows = [{"submission": "alice/mha-numpy.ipynb", "total": 8, "possible": 8, "ex-a": 4,
             "ex-b": 4},
            {"submission": "bob/mha-numpy.ipynb", "total": 1, "possible": 8, "ex-a": 1,
             "ex-b": 0},
            {"submission": "<carol>/mha-numpy.ipynb", "total": 5, "possible": 8, "ex-a": 1,
             "ex-b": 4}]
    path = tmp_path / "grades.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    cases = {label: [{"name": f"{label} - 1", "hidden": False, "points": 1.0},
                     {"name": f"{label} - 2", "hidden": True, "points": 3.0}]
             for label in ("ex-a", "ex-b")}
    failures = {"alice/mha-numpy.ipynb": {},
                "bob/mha-numpy.ipynb": {"ex-a": {"ex-a - 2": "assert x < 1\nAssertionError"},
                                        "ex-b": {"ex-b - 1": "assert y\nNameError: y",
                                                 "ex-b - 2": "assert y\nNameError: y"}},
                "<carol>/mha-numpy.ipynb": {"ex-a": {"ex-a - 2": "assert <b>\nAssertionError"}}}
    if with_json:
        details = {"chapter": "mha-numpy", "lang": "en", "tests": cases, "failures": failures}
        path.with_suffix(".json").write_text(json.dumps(details), encoding="utf-8")
    return path


def test_report_on_synthetic_grades(tmp_path):
    path = _synthetic_grades(tmp_path)
    rep = class_report.build(path, "en")
    a, b = rep.exercises
    assert (a.label, a.possible, a.full, round(a.mean, 2)) == ("ex-a", 4.0, 1, 2.0)
    assert (b.possible, b.full) == (4.0, 2)
    assert rep.hardest() is a and a.failing_tests.most_common(1) == [("ex-a - 2", 2)]
    text = class_report.render_text(rep, "en")
    assert "Most often failed: ex-a: 2 of 3 submissions without full marks" in text
    assert "most frequent failing test: ex-a - 2 (hidden test), failed by 2" in text
    assert "bob/mha-numpy.ipynb: 1 / 8" in text and "ex-b - 1 [public check]" in text
    assert "alice/mha-numpy.ipynb: 8 / 8\n    nothing" in text
    zh = class_report.render_text(rep, "zh")
    assert "失败最多的练习：" in zh and "隐藏测试" in zh and "公开检查" in zh
    page = class_report.render_html(rep, "zh")
    assert page.startswith("<!DOCTYPE html>") and 'lang="zh"' in page
    assert "&lt;carol&gt;" in page and "<carol>" not in page and "&lt;b&gt;" in page


def test_report_command(tmp_path, capsys):
    path = _synthetic_grades(tmp_path)
    html_path = tmp_path / "report.html"
    assert assign.main(["report", str(path), "--lang", "zh", "--html", str(html_path)]) == 0
    out = capsys.readouterr().out
    assert "全班成绩报告" in out and "mha-numpy" in out
    assert "ex-a - 2" in html_path.read_text(encoding="utf-8")
    assert assign.main(["report", str(tmp_path / "missing.csv")]) == 1


def test_report_without_json(tmp_path):
    """Without the JSON the points come from the book (labels of a real chapter)."""
    path = tmp_path / "grades.csv"
    path.write_text("submission,total,possible,ex-mha-numpy-triu\ns.ipynb,1,4,1\n",
                    encoding="utf-8")
    rep = class_report.build(path, "en")
    assert rep.exercises[0].possible == 4.0 and rep.exercises[0].full == 0
    assert "no test details" in class_report.render_text(rep, "en")


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    from concurrent.futures import ThreadPoolExecutor

    out = tmp_path_factory.mktemp("assign")
    jobs = [(lang, chapter) for lang in LANGS for chapter in CHAPTERS]
    with ThreadPoolExecutor(max_workers=4) as pool:  # otter assign runs in subprocesses
        list(pool.map(lambda job: assign.make(*job, out, repo_url="https://example.org/repo"),
                      jobs))
    return out


@pytest.mark.parametrize("lang", LANGS)
def test_assignment_files(made, lang):
    for chapter in CHAPTERS:
        dest = made / lang / chapter
        student = nbformat.read(dest / "student" / f"{chapter}.ipynb", as_version=4)
        solution = nbformat.read(dest / "autograder" / f"{chapter}.ipynb", as_version=4)
        assert (dest / "autograder" / "autograder.zip").is_file()
        assert "d2lmini-install" in student.cells[0].metadata.get("tags", [])
        assert f'"D2LMINI_LANG", "{lang}"' in student.cells[0].source
        src = "\n".join(c.source for c in student.cells)
        for ex in exercises.graded_exercises(lang, chapter):
            assert f'grader.check("{ex.label}")' in src, f"{lang}/{chapter}: {ex.label}"
        # every code cell is the chapter's own (as in the exported student notebook), the
        # install cell or otter's: no line of a worked solution is left
        _, segments = exercises.read_chapter(ROOT / "book" / lang / f"{chapter}.md")
        allowed = {c.source for c in exercises.student_cells(segments, lang)
                   if c.cell_type == "code"}
        extra = [c.source for c in student.cells[1:] if c.cell_type == "code"
                 and c.source not in allowed and "grader" not in c.source]
        assert not extra, f"{lang}/{chapter}: code that is not the chapter's: {extra[:2]}"
        full = "\n".join(c.source for c in solution.cells)
        for ex in exercises.graded_exercises(lang, chapter):
            for seg in ex.solution:
                if seg.kind == "code":
                    assert seg.text in full, f"{lang}/{chapter}: solution of {ex.label} missing"
        assert "exercise-test" not in src


def _blank_env(lang: str, chapter: str) -> dict:
    """A notebook state with the chapter's imports and none of the exercises' answers."""
    import math

    import numpy as np
    import torch
    from torch.nn import functional as F

    return {"np": np, "torch": torch, "F": F, "math": math}


@pytest.mark.parametrize("lang", LANGS)
def test_heavy_chapters_blank_scores_zero(made, lang):
    import zipfile

    from otter.test_files import OKTestFile

    for chapter in CHAPTERS:
        if chapter == GRADED_FULLY:
            continue
        zip_path = made / lang / chapter / "autograder" / "autograder.zip"
        with zipfile.ZipFile(zip_path) as zf:
            names = sorted(n for n in zf.namelist() if n.startswith("tests/"))
            labels = {ex.label for ex in exercises.graded_exercises(lang, chapter)}
            assert {Path(n).stem for n in names} == labels, (chapter, names)
            for n in names:
                path = made / "tests" / lang / chapter / Path(n).name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(zf.read(n))
                test_file = OKTestFile.from_file(str(path))
                test_file.run(_blank_env(lang, chapter))
                assert test_file.score == 0, f"{lang}/{chapter}/{n}: blank scores {test_file.score}"
                assert test_file.possible >= 1


@pytest.mark.parametrize("lang", LANGS)
def test_numpy_chapter_graded_offline(made_numpy, lang, tmp_path):
    dest = made_numpy / lang / GRADED_FULLY
    zip_path = dest / "autograder" / "autograder.zip"
    solved = assign.grade_one(zip_path, dest / "autograder" / f"{GRADED_FULLY}.ipynb",
                              lang, GRADED_FULLY)
    blank = assign.grade_one(zip_path, dest / "student" / f"{GRADED_FULLY}.ipynb",
                             lang, GRADED_FULLY)
    labels = [ex.label for ex in exercises.graded_exercises(lang, GRADED_FULLY)]
    assert solved["possible"] > 0 and solved["total"] == solved["possible"], solved
    assert set(labels) <= set(solved), solved
    assert blank["total"] == 0, f"the blank student notebook scored: {blank}"


# answers that pass the public checks of mha-numpy without computing anything
HARD_CODED = {
    "ex-mha-numpy-triu": "mask_triu = np.zeros((5, 5))\nmask_triu[0, 1] = -np.inf\n"
                         "mask_cmp = np.zeros((5, 5))\nA5 = np.eye(5)",
    "ex-mha-numpy-params": "def mha_num_params(d_model, num_heads):\n    return 1048576",
    "ex-mha-numpy-permutation": "perm = np.array([1, 0, 2])\nH_perm = np.zeros_like(H)\n"
                                "H_perm_causal = np.zeros_like(H)",
}


@pytest.fixture(scope="module")
def made_numpy(made):
    """The assignment of the chapter graded fully, as ``made`` made it (not made again)."""
    return made


@pytest.mark.parametrize("lang", LANGS)
def test_numpy_hard_coded_answers_lose_the_hidden_points(made_numpy, lang, tmp_path):
    dest = made_numpy / lang / GRADED_FULLY
    nb = nbformat.read(dest / "student" / f"{GRADED_FULLY}.ipynb", as_version=4)
    graded = exercises.graded_exercises(lang, GRADED_FULLY)
    assert {ex.label for ex in graded} == set(HARD_CODED)
    for ex in graded:
        (cell,) = [c for c in nb.cells if c.source == exercises.answer_skeleton(ex, lang)]
        cell.source = HARD_CODED[ex.label]
    sub = tmp_path / "submission" / f"{GRADED_FULLY}.ipynb"
    sub.parent.mkdir()
    nbformat.write(nb, sub)
    scores = assign.grade_one(dest / "autograder" / "autograder.zip", sub, lang, GRADED_FULLY)
    for ex in graded:
        assert scores[ex.label]["score"] == exercises.PUBLIC_POINTS, (ex.label, scores)
        failed = scores["failures"][ex.label]
        assert failed and all(int(name.rsplit(" - ", 1)[1]) > len(ex.tests) for name in failed)
    assert scores["total"] < scores["possible"] / 2, scores
