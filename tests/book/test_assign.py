"""Graded assignments (tools/assign.py, otter-grader): made from the chapters, graded offline.

* every chapter has at least two exercises whose answers the autograder checks, and their tests
  are hidden code cells at the end of the worked solution (the book build runs them there, so the
  worked solutions pass them: tests/site/test_book_build.py builds the book);
* the NumPy chapter is graded for real, in both editions, with ``otter run`` and no Docker: its
  solution notebook gets full marks, the blank student notebook zero;
* for the other chapters (minutes of training on a CPU) the assignment is made and each test
  file runs against a notebook state without the answers and gives no points.
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import assign  # noqa: E402
import exercises  # noqa: E402
from bookmeta import LANGS  # noqa: E402

CHAPTERS = ["why-transformers", "mha-numpy", "embeddings-positional-encoding",
            "attention-pytorch", "transformer-blocks", "training-translation",
            "paper-to-practice", "scaling"]
GRADED_FULLY = "mha-numpy"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_two_graded_exercises_per_chapter(lang, chapter):
    graded = assign.graded_exercises(lang, chapter)
    assert len(graded) >= 2, f"{lang}/{chapter}: graded exercises {[e.label for e in graded]}"
    for ex in graded:
        assert ex.gated, f"{ex.label}: tests need a solution with code (solution-start/end)"
        assert ex.checked_names(), f"{ex.label}: the tests read no name the solution defines"


@pytest.mark.parametrize("lang", LANGS)
def test_test_cells_are_hidden_and_inside_solutions(lang):
    for chapter in CHAPTERS:
        nb, segments = exercises.read_chapter(ROOT / "book" / lang / f"{chapter}.md")
        tests = [c for c in nb.cells if exercises.TEST_TAG in c.metadata.get("tags", [])]
        for cell in tests:
            assert "remove-cell" in cell.metadata["tags"], f"{chapter}: a test cell is shown"
        in_solutions = sum(len(ex.tests) for ex in exercises.exercises(segments))
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
        for ex in assign.graded_exercises(lang, chapter):
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
        for ex in assign.graded_exercises(lang, chapter):
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
            labels = {ex.label for ex in assign.graded_exercises(lang, chapter)}
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
def test_numpy_chapter_graded_offline(made, lang, tmp_path):
    dest = made / lang / GRADED_FULLY
    zip_path = dest / "autograder" / "autograder.zip"
    solved = assign.grade_one(zip_path, dest / "autograder" / f"{GRADED_FULLY}.ipynb",
                              tmp_path / "solution")
    blank = assign.grade_one(zip_path, dest / "student" / f"{GRADED_FULLY}.ipynb",
                             tmp_path / "blank")
    labels = [ex.label for ex in assign.graded_exercises(lang, GRADED_FULLY)]
    assert solved["possible"] > 0 and solved["total"] == solved["possible"], solved
    assert set(labels) <= set(solved), solved
    assert blank["total"] == 0, f"the blank student notebook scored: {blank}"
