"""d2lmini.book.glue_ratio: a ratio is glued only within the bounds the text states about it."""

import math

import pytest

from d2lmini import book


@pytest.fixture
def glued(monkeypatch):
    """Record what myst_nb.glue receives instead of displaying it."""
    import myst_nb

    calls = []
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=True: calls.append(
        (name, value, display)))
    return calls


def test_within_bounds_is_glued(glued):
    book.glue_ratio("ch0_growth", 3.2, low=2, high=8)
    book.glue_ratio("ch0_any", math.nan)  # unbounded: any value, NaN included
    values = [call for call in glued if not call[0].startswith(book.CLAIM_PREFIX)]
    assert values[0] == ("ch0_growth", 3.2, False) and values[1][0] == "ch0_any"


def test_bounds_are_recorded_as_a_claim(glued):
    book.glue_ratio("ch0_growth", 3.2, low=2, high=8)
    book.glue_ratio("ch0_any", 1.0)  # no bounds: nothing is claimed
    records = [value.record for name, value, _ in glued if name.startswith(book.CLAIM_PREFIX)]
    assert records == [{"name": "ch0_growth", "kind": "guarded", "statement": "2 ≤ ch0_growth ≤ 8",
                        "holds": True, "values": {"ch0_growth": 3.2}}]


@pytest.mark.parametrize("value, low, high", [(1.3, 2, 8), (9.0, 2, 8), (0.5, 1, None),
                                              (2.0, None, 1), (math.nan, 1, None)])
def test_outside_bounds_fails_and_glues_nothing(glued, value, low, high):
    with pytest.raises(AssertionError, match="outside"):
        book.glue_ratio("ch0_growth", value, low=low, high=high)
    assert glued == []


def test_bad_arguments(glued):
    with pytest.raises(ValueError, match="glue name"):
        book.glue_ratio("not a name", 1.0)
    with pytest.raises(ValueError, match="low must not exceed high"):
        book.glue_ratio("ch0_x", 1.0, low=3, high=2)
