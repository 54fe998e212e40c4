"""tools/classroom/export_notebooks.py: valid notebooks, the guarded install cell, student notebooks
without solutions, zh line breaks joined, and they run.

Only the short chapters are executed here (index, glossary, mha-numpy, attention-pytorch, in
the English edition; the zh code cells are identical, which tests/chapters/test_parity.py enforces).
The book build (tools/build/build_book.py, run by the test suite and CI) already executes every
chapter of both editions; executing all of them again here would double the CI time on a
2-core runner for no extra coverage. The rest are validated with nbformat only.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest

from tools.classroom import export_notebooks
from tools import myst
from tools.bookmeta import load_yaml

ROOT = Path(__file__).resolve().parents[2]

# the short chapters with code cells (the glossary has none: test_notebooks_valid covers it)
EXECUTE = ["index", "mha-numpy", "attention-pytorch", "student/mha-numpy"]
CJK = myst.CJK


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("notebooks")
    paths = export_notebooks.export_all(out, repo_url="https://example.org/repo")
    return out, paths


def test_every_chapter_exported(exported):
    out, paths = exported
    for lang in ("zh", "en"):
        md = {p.stem for p in (ROOT / "book" / lang).glob("*.md")}
        nbs = {p.stem for p in (out / lang).glob("*.ipynb")}
        assert md and md == nbs, f"{lang}: chapters {sorted(md)} vs notebooks {sorted(nbs)}"
        with_exercises = {p.stem for p in (ROOT / "book" / lang).glob("*.md")
                          if "{exercise}" in p.read_text(encoding="utf-8")}
        students = {p.stem for p in (out / lang / "student").glob("*.ipynb")}
        assert with_exercises and students == with_exercises, (lang, sorted(students))


def test_notebooks_valid_with_install_cell(exported):
    out, paths = exported
    for p in paths:
        nb = nbformat.read(p, as_version=4)
        nbformat.validate(nb)
        first = nb.cells[0]
        lang = p.relative_to(out).parts[0]
        assert first.cell_type == "code", p
        assert "import d2lmini" in first.source and "except ImportError" in first.source, p
        assert f'os.environ.setdefault("D2LMINI_LANG", "{lang}")' in first.source, p
        assert 'os.environ.get("D2LMINI_INSTALL_SPEC", "git+https://example.org/repo")' in \
            first.source, p
        assert '%pip install -q "d2lmini @ {d2lmini_spec}"' in first.source, p
        assert nb.metadata["kernelspec"]["name"] == "python3", p
        assert nb.metadata["colab"]["name"].endswith(".ipynb"), p
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), p
        assert "jupytext" not in nb.metadata, p


def test_repository_url_from_config(tmp_path):
    cfg = tmp_path / "_config.yml"
    cfg.write_text("repository:\n  url: https://github.com/me/book/\n", encoding="utf-8")
    assert export_notebooks.repository_url(cfg) == "https://github.com/me/book"
    (tmp_path / "empty.yml").write_text("title: x\n", encoding="utf-8")
    for missing in (tmp_path / "none.yml", tmp_path / "empty.yml"):
        with pytest.raises(ValueError, match="set repository.url"):
            export_notebooks.repository_url(missing)


def test_the_repository_is_one_setting():
    """repository.url and notebooks_branch of _config.yml name the repository and the branch of
    exported notebooks; what cannot read them (CITATION.cff, the workflow's push) agrees."""
    config = load_yaml(ROOT / "_config.yml")["repository"]
    citation = load_yaml(ROOT / "CITATION.cff")
    assert citation["repository-code"].rstrip("/") == export_notebooks.repository_url()
    workflow = (ROOT / ".github" / "workflows" / "book.yml").read_text(encoding="utf-8")
    pushed = re.findall(r"git init -q -b (\S+)|\.git\" (\S+)$", workflow, re.M)
    assert pushed and {b for pair in pushed for b in pair if b} == {config["notebooks_branch"]}
    assert "transformer-book/transformer-book" not in workflow  # the workflow pushes to its own


def _solutions(lang: str, name: str):
    from tools.classroom import exercises

    _, segments = exercises.read_chapter(ROOT / "book" / lang / f"{name}.md")
    return exercises.exercises(segments)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_reader_notebooks_keep_solutions_students_do_not(exported, lang):
    out, _ = exported
    for path in sorted((out / lang / "student").glob("*.ipynb")):
        full = nbformat.read(out / lang / path.name, as_version=4)
        student = nbformat.read(path, as_version=4)
        full_code = {c.source for c in full.cells if c.cell_type == "code"}
        student_code = {c.source for c in student.cells if c.cell_type == "code"}
        student_text = "\n".join(c.source for c in student.cells)
        exs = _solutions(lang, path.stem)
        assert exs, path
        for ex in exs:
            assert ex.text.split("\n")[0] in student_text, f"{path.stem}: {ex.label} missing"
            for seg in ex.solution:
                if seg.kind == "code":
                    assert seg.text in full_code, f"{path.stem}: {ex.label}'s code not kept"
                    assert seg.text not in student_code, f"{path.stem}: {ex.label}'s code"
                elif seg.text.strip():
                    para = max(seg.text.split("\n\n"), key=len)[:60]
                    assert para not in student_text, f"{path.stem}: {ex.label}'s solution"
            if ex.tests:  # graded: an answer cell with the names its tests check
                names = [n for n, _ in ex.checked_names()]
                assert any(all(f"{n} = ..." in c or f"def {n}(" in c for n in names)
                           for c in student_code), f"{path.stem}: no answer cell for {ex.label}"
        for cell in full.cells + student.cells:  # the tests are the autograder's
            assert "exercise-test" not in cell.metadata.get("tags", []), path


def test_zh_markdown_has_no_breaks_between_chinese_characters(exported):
    import re

    out, _ = exported
    gap = re.compile(f"[{CJK}]\\n[{CJK}]")
    for path in sorted((out / "zh").rglob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "markdown":
                continue
            prose = re.sub(r"^(`{3,}|\$\$).*?^\1", "", cell.source, flags=re.M | re.S)
            m = gap.search(prose)
            assert not m, f"{path.name}: a break in {prose[m.start() - 30:m.end() + 30]!r}"


@pytest.mark.parametrize("name", EXECUTE)
def test_short_chapters_execute(exported, name, tmp_path):
    from nbclient import NotebookClient

    out, _ = exported
    path = out / "en" / f"{name}.ipynb"
    nb = nbformat.read(path, as_version=4)
    assert any(c.cell_type == "code" for c in nb.cells[1:]), f"{name} has no code cells"
    os.environ.setdefault("D2LMINI_OFFLINE", "1")
    os.environ.setdefault("MPLBACKEND", "Agg")
    client = NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    install_out = nb.cells[0].get("outputs", [])
    assert not install_out, (
        f"install cell did something although d2lmini is importable: {install_out}")
