"""Content checks on the chapters of both editions (no execution needed)."""
from __future__ import annotations

import re
import unicodedata

import pytest

from chapter_source import (
    BOOK, LANGS, ROOT, chapter_files, cite_keys, exercise_labels, glue_defs, glue_uses,
    is_chapter, read_notebook, glue_defined, ref_targets, solution_targets, LABEL_RE,
    directive_labels,
)

PLACEHOLDERS = re.compile(r"\b(TODO|FIXME|TBD|XXX)\b|lorem", re.I)
SUMMARY_HEADINGS = re.compile(r"^#{2,3}\s+(Summary|小结|总结)\s*$", re.M)

ALL_MD = [p for lang in LANGS for p in chapter_files(lang)]
CHAPTERS = [p for p in ALL_MD if is_chapter(p.name)]


def _id(p):
    return f"{p.parent.name}/{p.name}"


@pytest.mark.parametrize("path", ALL_MD, ids=_id)
def test_no_placeholders(path):
    hits = [
        f"{_id(path)}:{n}: {ln.strip()}"
        for n, ln in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if PLACEHOLDERS.search(ln)
    ]
    assert not hits, "placeholder text:\n" + "\n".join(hits)


def exercise_problems(text: str) -> list[str]:
    probs = []
    ex = exercise_labels(text)
    sols = solution_targets(text)
    if len(ex) < 4:
        probs.append(f"only {len(ex)} {{exercise}} blocks (need >= 4)")
    solved = {t for _, t in sols}
    for label in ex:
        if label not in solved:
            probs.append(f"exercise {label} has no solution")
    for _, t in sols:
        if t not in ex:
            probs.append(f"solution for unknown exercise {t}")
    gated = re.findall(
        r"^[`:]{3,}\{solution-start\}.*?^[`:]{3,}\{solution-end\}", text, re.M | re.S
    )
    if not any("{code-cell}" in block for block in gated):
        probs.append("no solution with code (gated solution-start/solution-end with a code-cell)")
    if not SUMMARY_HEADINGS.search(text):
        probs.append("no summary section (## Summary / ## 小结)")
    return probs


@pytest.mark.parametrize("path", CHAPTERS, ids=_id)
def test_exercises_solutions_summary(path):
    probs = exercise_problems(path.read_text(encoding="utf-8"))
    assert not probs, f"{_id(path)}:\n" + "\n".join(probs)


def test_exercise_check_can_fail():
    assert exercise_problems("```{exercise}\n:label: ex-a\n\nText.\n```\n")


@pytest.mark.parametrize("path", ALL_MD, ids=_id)
def test_glue_names_defined(path):
    text = path.read_text(encoding="utf-8")
    defs = glue_defs(read_notebook(path))
    missing = sorted(n for n in glue_uses(text) if not glue_defined(n, defs))
    assert not missing, f"{_id(path)}: glue names used in prose but never glue()d: {missing}"


def test_no_committed_notebooks():
    ipynb = sorted(str(p.relative_to(ROOT)) for p in BOOK.rglob("*.ipynb"))
    assert not ipynb, f".ipynb files under book/ (chapters are .md only): {ipynb}"


@pytest.mark.parametrize("path", ALL_MD, ids=_id)
def test_no_output_blocks(path):
    nb = read_notebook(path)
    with_out = [
        i for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and (c.get("outputs") or c.get("execution_count"))
    ]
    assert not with_out, f"{_id(path)}: code cells with stored outputs: {with_out}"


def bib_keys() -> set[str]:
    bib = ROOT / "references.bib"
    if not bib.exists():
        return set()
    return set(re.findall(r"^\s*@\w+\s*\{\s*([^,\s]+)\s*,", bib.read_text(encoding="utf-8"), re.M))


@pytest.mark.parametrize("path", ALL_MD, ids=_id)
def test_cite_keys_exist(path):
    keys = cite_keys(path.read_text(encoding="utf-8"))
    if keys and not (ROOT / "references.bib").exists():
        pytest.fail("references.bib is missing at the repository root")
    missing = sorted(keys - bib_keys())
    assert not missing, f"{_id(path)}: {{cite}} keys not in references.bib: {missing}"


def edition_labels(lang: str) -> set[str]:
    labels: set[str] = set()
    for p in chapter_files(lang):
        t = p.read_text(encoding="utf-8")
        labels |= set(LABEL_RE.findall(t)) | set(directive_labels(t))
        # $$ ... $$ (eq-x)
        labels |= set(re.findall(r"\$\$\s*\(([A-Za-z0-9_:.\-]+)\)\s*$", t, re.M))
        labels.add(p.stem)  # {ref}`index` style document references
    return labels


@pytest.mark.parametrize("path", ALL_MD, ids=_id)
def test_ref_targets_exist(path):
    known = edition_labels(path.parent.name)
    missing = sorted(ref_targets(path.read_text(encoding="utf-8")) - known)
    assert not missing, f"{_id(path)}: {{ref}} targets without a label in this edition: {missing}"


# Readers never saw the notes the book was commissioned from: no page may mention them (prose,
# captions or code comments).
SOURCE_NOTES = re.compile(
    r"\b(?:seed|source|original)\s+notes?\b|\bnotes\s+(?:this|the)\s+book\b|\bthe\s+notes\b"
    r"|种子笔记|原始笔记|笔记(?!本)", re.I)


def source_note_mentions(text: str) -> list[tuple[int, str]]:
    joined = text.replace("\n", " ")  # phrases broken over two lines count
    starts = [m.start() for m in re.finditer("\n", text)]
    return [(1 + sum(s < m.start() for s in starts), m.group(0))
            for m in SOURCE_NOTES.finditer(joined)]


@pytest.mark.parametrize("path", ALL_MD, ids=_id)
def test_no_mention_of_source_notes(path):
    hits = source_note_mentions(path.read_text(encoding="utf-8"))
    assert not hits, "\n".join(f"{_id(path)}:{n}: '{s}' (readers never saw these notes; say "
                               "\"a common tutorial mistake\" or similar)" for n, s in hits)


def test_source_notes_check_can_fail():
    text = "The paper notes that x.\nA laptop (笔记本电脑).\nThe seed\nnotes say.\n种子笔记。\n"
    assert source_note_mentions(text) == [(3, "seed notes"), (5, "种子笔记")]


CODE_COLUMNS = 100  # what _static/book.css fits in the content column of a 1280 px window


def display_width(line: str) -> int:
    """Columns a line takes in a monospace font: a Chinese character counts two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


@pytest.mark.parametrize("path", ALL_MD, ids=_id)
def test_code_lines_fit_the_column(path):
    # a reader at a 1280 px window sees every line of a code cell without scrolling sideways;
    # tests/build/test_browser.py checks the same on the rendered pages
    wide = [
        f"{_id(path)} cell {i}: {display_width(line)} columns: {line.strip()[:60]}"
        for i, cell in enumerate(c for c in read_notebook(path).cells if c.cell_type == "code")
        for line in cell.source.splitlines()
        if display_width(line) > CODE_COLUMNS
    ]
    assert not wide, f"code lines wider than {CODE_COLUMNS} columns:\n" + "\n".join(wide)


def test_figure_2_1_is_what_its_generator_draws():
    # book/<lang>/img/ch2-eight-steps.svg are written by tools/build/figures/eight_steps.py
    import importlib.util

    path = ROOT / "tools" / "build" / "figures" / "eight_steps.py"
    spec = importlib.util.spec_from_file_location("eight_steps", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--check"]) == 0, "run: python -m tools.build.figures.eight_steps"


@pytest.mark.parametrize("lang", LANGS)
def test_preface_mirror_recipe_names_the_files_a_mirror_must_host(lang):
    """The preface tells readers in mainland China which files to put on their own data mirror
    (D2LMINI_MIRROR serves each data set by the file name of its URL): exactly the registry's."""
    from d2lmini.datahub import DATA_HUB

    text = (BOOK / lang / "index.md").read_text(encoding="utf-8")
    section = text.split("(sec-preface-mirrors)=", 1)[1].split("(sec-preface-data)=", 1)[0]
    named = set(re.findall(r"`([\w-]+\.(?:zip|txt))`", section))
    assert named == {url.rsplit("/", 1)[-1] for url, _ in DATA_HUB.values()}
    assert "D2LMINI_MIRROR" in section and "PIP_INDEX_URL" in section
