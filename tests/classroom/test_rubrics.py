"""Rubrics for manual grading: the explanation exercises keep their worked solutions and
end them with a short rubric worth 4 points.

Every exercise without autograder tests (no ``exercise-test`` / ``exercise-test-hidden`` cell in its
solution) ends its worked solution with exactly one rubric, in this form (2 to 4 items, whole
points that sum to 4)::

    **Rubric (4 points)**                    **给分标准（共 4 分）**

    - 2 points: <criterion>                  - 2 分：<criterion>
    - 1 point: <criterion>                   - 1 分：<criterion>
    - 1 point: <criterion>                   - 1 分：<criterion>

(an item may continue on lines indented by two spaces). The tests, for every chapter of the table
of contents that has exercises in both editions:

* each exercise without tests has exactly one well-formed rubric, at the end of its solution, and
  its items' points sum to 4; no rubric stands outside a solution;
* graded exercises (the autograder gives their points) have no rubric;
* the two editions split the points of an exercise alike (same items, same points, same order);
* no criterion quotes a measured value (a number with a decimal point): values printed by a run
  vary, so a criterion says "the value the run prints" instead.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import pytest

from tools.classroom import exercises
from tools.bookmeta import BOOK, LANGS, toc_files

ROOT = Path(__file__).resolve().parents[2]

TOTAL = 4
MIN_ITEMS, MAX_ITEMS = 2, 4
HEADING = {"en": re.compile(r"^\*\*Rubric \((\d+) points?\)\*\*$"),
           "zh": re.compile(r"^\*\*给分标准（共 (\d+) 分）\*\*$")}
# "1 point" and "2 points" (en), "1 分" (zh): whole points only
ITEM = {"en": re.compile(r"^- (?:(1) point|([02-9]|\d{2,}) points): (\S.*)$"),
        "zh": re.compile(r"^- (\d+) 分：(\S.*)$")}
# a measured value: a digit, a decimal point, digits ("0.874", "3.2 ms")
MEASURED = re.compile(r"\d\.\d")


@dataclass
class Rubric:
    total: int  # the points the heading announces
    items: list[tuple[int | None, str]] = field(default_factory=list)  # (points, criterion)
    problems: list[str] = field(default_factory=list)  # deviations from the format
    at_end: bool = True  # nothing but blank lines follows the rubric in the text

    @property
    def points(self) -> list[int | None]:
        return [p for p, _ in self.items]


def parse_rubrics(text: str, lang: str) -> list[Rubric]:
    """The rubrics of a piece of Markdown in the format of ``lang``: a bold heading line, a blank
    line, then a bullet list of ``points: criterion`` items (continued on lines indented by two
    spaces); the list ends at the first blank line."""
    lines = text.split("\n")
    found: list[Rubric] = []
    i = 0
    while i < len(lines):
        m = HEADING[lang].match(lines[i].strip())
        if not m:
            i += 1
            continue
        rubric = Rubric(int(m.group(1)))
        found.append(rubric)
        i += 1
        if i < len(lines) and lines[i].strip():
            rubric.problems.append("no blank line after the heading")
        while i < len(lines) and not lines[i].strip():
            i += 1
        while i < len(lines) and lines[i].strip():
            line = lines[i]
            if line.startswith(("- ", "* ", "+ ")):
                im = ITEM[lang].match(line)
                if im:
                    points = next(g for g in im.groups()[:-1] if g is not None)
                    rubric.items.append((int(points), im.group(im.lastindex)))
                else:
                    rubric.items.append((None, line))
                    rubric.problems.append(f"item not in the form of the rubric: {line!r}")
            elif line.startswith("  ") and rubric.items:
                points, criterion = rubric.items[-1]
                rubric.items[-1] = (points, f"{criterion} {line.strip()}")
            else:
                rubric.problems.append(f"not an item of the list: {line!r}")
            i += 1
        rubric.at_end = not any(ln.strip() for ln in lines[i:])
    return found


def _has_exercises(name: str) -> bool:
    paths = [BOOK / lang / f"{name}.md" for lang in LANGS]
    return all(p.exists() for p in paths) and all(
        "{exercise}" in p.read_text(encoding="utf-8") for p in paths)


CHAPTERS = [name for name in dict.fromkeys(toc_files()) if _has_exercises(name)]


@lru_cache(maxsize=None)
def _chapter(lang: str, chapter: str) -> tuple[str, list[exercises.Exercise]]:
    """The chapter's source text and its exercises."""
    path = BOOK / lang / f"{chapter}.md"
    _, segments = exercises.read_chapter(path)
    return path.read_text(encoding="utf-8"), exercises.exercises(segments)


def _solution_text(ex: exercises.Exercise) -> str:
    """The Markdown of the worked solution (its prose, not its code cells)."""
    return "\n\n".join(seg.text for seg in ex.solution if seg.kind == "md")


def _rubrics(ex: exercises.Exercise, lang: str) -> list[Rubric]:
    return parse_rubrics(_solution_text(ex), lang)


def test_parse_rubrics():
    en = ("Worked solution.\n\n**Rubric (4 points)**\n\n- 2 points: says why, with a\n"
          "  continuation line.\n- 1 point: shows that.\n- 1 point: names it.\n")
    (r,) = parse_rubrics(en, "en")
    assert (r.total, r.points, r.problems, r.at_end) == (4, [2, 1, 1], [], True)
    assert r.items[0][1] == "says why, with a continuation line."
    zh = "解答。\n\n**给分标准（共 4 分）**\n\n- 3 分：说明原因。\n- 1 分：给出结论。\n\n后记。"
    (r,) = parse_rubrics(zh, "zh")
    assert (r.total, r.points, r.problems, r.at_end) == (4, [3, 1], [], False)
    bad = "**Rubric (4 points)**\n- 1.5 points: half.\n- 1 points: plural.\nstray line\n"
    (r,) = parse_rubrics(bad, "en")
    assert r.points == [None, None] and len(r.problems) == 4
    assert parse_rubrics(en, "zh") == []
    assert parse_rubrics("**Rubric**\n\n- 4 points: x", "en") == []


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_ungraded_exercises_have_one_rubric(lang, chapter):
    text, exs = _chapter(lang, chapter)
    problems = []
    for ex in exs:
        if ex.all_tests:
            continue
        rubrics = _rubrics(ex, lang)
        if len(rubrics) != 1:
            problems.append(f"{ex.label}: {len(rubrics)} rubrics in the solution, want 1")
            continue
        (r,) = rubrics
        problems += [f"{ex.label}: {p}" for p in r.problems]
        if not r.at_end:
            problems.append(f"{ex.label}: the rubric is not at the end of the solution")
        if r.total != TOTAL:
            problems.append(f"{ex.label}: the heading announces {r.total} points, want {TOTAL}")
        if not MIN_ITEMS <= len(r.items) <= MAX_ITEMS:
            problems.append(f"{ex.label}: {len(r.items)} items, want {MIN_ITEMS} to {MAX_ITEMS}")
        if None not in r.points and sum(r.points) != TOTAL:
            problems.append(f"{ex.label}: the items' points {r.points} sum to {sum(r.points)}, "
                            f"want {TOTAL}")
    # a rubric outside every solution (in an exercise's text, in the chapter's prose)
    in_solutions = sum(len(_rubrics(ex, lang)) for ex in exs)
    in_file = sum(bool(HEADING[lang].match(ln.strip())) for ln in text.split("\n"))
    if in_file != in_solutions:
        problems.append(f"{in_file - in_solutions} rubric(s) outside the worked solutions")
    assert not problems, f"{lang}/{chapter}:\n" + "\n".join(problems)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_graded_exercises_have_no_rubric(lang, chapter):
    _, exs = _chapter(lang, chapter)
    found = [ex.label for ex in exs if ex.all_tests and _rubrics(ex, lang)]
    assert not found, (f"{lang}/{chapter}: graded exercises (the autograder gives their points) "
                       f"with a rubric: {found}")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_rubric_points_match_across_editions(chapter):
    points = {lang: {ex.label: [r.points for r in _rubrics(ex, lang)]
                     for ex in _chapter(lang, chapter)[1]} for lang in LANGS}
    zh, en = (points[lang] for lang in ("zh", "en"))
    differ = [f"{label}: zh {zh.get(label)}, en {en.get(label)}"
              for label in dict.fromkeys([*zh, *en]) if zh.get(label) != en.get(label)]
    assert not differ, f"{chapter}: the editions split the points differently:\n" + "\n".join(
        differ)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_measured_values_in_rubrics(lang, chapter):
    _, exs = _chapter(lang, chapter)
    found = [f"{ex.label}: {criterion!r}" for ex in exs for r in _rubrics(ex, lang)
             for _, criterion in r.items if MEASURED.search(criterion)]
    assert not found, (f"{lang}/{chapter}: criteria quoting a measured value (say \"the value "
                       "the run prints\" instead):\n" + "\n".join(found))
