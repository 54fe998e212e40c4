"""No public check gives the answer away (tools/classroom/answer_leaks.py).

A graded exercise's public checks (``exercise-test`` cells) reach the student's notebook, so none
may contain the code of the worked solution that computes the answer. The pairs in
``KNOWN_ANSWER_LEAKS`` (empty today) are leaks that could not be fixed at once; the test skips
them and fails once one of them no longer leaks, so that the list only shrinks.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tools.classroom import answer_leaks
from tools.classroom import exercises
from tools.bookmeta import LANGS

ROOT = Path(__file__).resolve().parents[2]

# (chapter, exercise label): a public check contains the solution's expression (both editions)
KNOWN_ANSWER_LEAKS: set[tuple[str, str]] = set()

CHAPTERS = sorted(p.stem for p in (ROOT / "book" / "en").glob("*.md"))

OLD_TRIU_CHECK = """assert np.array_equal(mask_triu, np.triu(np.full((5, 5), -np.inf), k=1))
assert np.array_equal(mask_cmp, mask_triu)"""


def _graded(lang: str, chapter: str) -> list[exercises.Exercise]:
    path = ROOT / "book" / lang / f"{chapter}.md"
    _, segments = exercises.read_chapter(path)
    return [ex for ex in exercises.exercises(segments) if ex.all_tests]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_public_check_contains_the_answer(lang, chapter):
    found = []
    for ex in _graded(lang, chapter):
        hits = answer_leaks.leaks(ex)
        known = (chapter, ex.label) in KNOWN_ANSWER_LEAKS
        if known:
            assert hits, (f"{lang}/{chapter}: {ex.label} no longer leaks its answer: remove it "
                          "from KNOWN_ANSWER_LEAKS")
            continue
        found += [f"{ex.label}, public check {k + 1}: {frag!r}" for k, frag in hits]
    assert not found, f"{lang}/{chapter}: public checks contain the answer: {found}"
    if any((chapter, label) in KNOWN_ANSWER_LEAKS for label in _labels(lang, chapter)):
        pytest.skip(f"{chapter}: known answer leaks "
                    f"{sorted(lbl for c, lbl in KNOWN_ANSWER_LEAKS if c == chapter)}")


def _labels(lang: str, chapter: str) -> set[str]:
    return {ex.label for ex in _graded(lang, chapter)}


def test_known_leaks_exist():
    """Every listed pair names a graded exercise of that chapter (a typo would hide nothing)."""
    for chapter, label in KNOWN_ANSWER_LEAKS:
        assert label in _labels("en", chapter), (chapter, label)


def test_mha_numpy_has_no_known_leak():
    assert not {c for c, _ in KNOWN_ANSWER_LEAKS} & {"mha-numpy"}


def _triu_exercise() -> exercises.Exercise:
    (ex,) = [ex for ex in exercises.graded_exercises("en", "mha-numpy")
             if ex.label == "ex-mha-numpy-triu"]
    return ex


def test_catches_the_old_triu_check():
    ex = _triu_exercise()
    hits = answer_leaks.leaks(ex, [OLD_TRIU_CHECK])
    assert hits and hits[0][0] == 0, hits
    assert "np.triu(np.full((5, 5), -np.inf), k=1)" in hits[0][1]
    # whitespace and the solution's own constant (n5 = 5) do not matter
    spaced = "assert np.array_equal( mask_triu ,np.triu(np.full( (5,5), -np.inf ), k = 1))"
    assert answer_leaks.leaks(ex, [spaced])
    # the public checks of the chapter as it is now, and a check by hand, do not leak
    assert not answer_leaks.leaks(ex)
    assert not answer_leaks.leaks(ex, ["assert mask_triu[0, 1] == -np.inf"])
    # the solution's own asserts and prints are not answers
    assert not answer_leaks.leaks(ex, ["assert np.array_equal(mask_triu, mask_cmp)"])


def test_catches_a_renamed_call():
    (ex,) = [ex for ex in exercises.graded_exercises("en", "mha-numpy")
             if ex.label == "ex-mha-numpy-permutation"]
    renamed = "_h, _ = multi_head_attention(Y[p], Y[p], a, b, c, d, h)\nassert (_h == H_perm).all()"
    assert answer_leaks.leaks(ex, [renamed])
    assert not answer_leaks.leaks(ex, ["assert H_perm.shape == H.shape"])
    assert answer_leaks.call_shape(
        answer_leaks.ast.parse("f(g(a, b), c=d)").body[0].value) == "f(g(_, _), c=_)"
