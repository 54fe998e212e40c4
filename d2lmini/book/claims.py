"""Claims: the sentences of the text that interpret a computed result, checked by the build.

A glued number is always the number the code printed; the sentence *around* it ("averaging
helped", "the model copied every sequence", "PE lowered the similarity") can still be false for
the value a run prints. Every such sentence of the book is one of three kinds:

* true for any value the code may print (it needs nothing here);
* **guarded**: the cell states the condition the sentence relies on with :func:`claim`, which
  fails the build (``ClaimError``, naming the claim) when a run makes the sentence false;
* **chosen**: the sentence branches on the outcome, and :func:`choose` glues the phrase that is
  true for this run (each edition passes the phrases in its own language).

Both record what they checked in the executed notebook (a hidden glue output named
``claim__<name>``, MIME type ``CLAIM_MIME``), from which the execution report lists every claim
of the book with its values and status. Outside a notebook nothing is recorded and the checks
still run::

    book.claim("ch3_pe_lowers", sim_pe < sim_plain,
              "one run gives the impression that PE lowered the similarity",
              plain=sim_plain, with_pe=sim_pe)
    book.choose("ch6_calm_phrase", translation == reference,
               "this run translated it correctly:", "this run translated it as",
               translation=translation)
"""

from __future__ import annotations

import math
import numbers
import re
from typing import Any

__all__ = ["ClaimError", "claim", "choose", "glue_ratio", "CLAIM_PREFIX", "CLAIM_MIME"]

#: Glue names under which claims are recorded in the executed notebooks.
CLAIM_PREFIX = "claim__"
#: The MIME type of a recorded claim: a JSON object. (A hidden glue output must be valid nbformat,
#: which accepts an object only under a ``…+json`` type once myst-nb prefixes it.)
CLAIM_MIME = "application/vnd.d2lmini.claim+json"

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class ClaimError(AssertionError):
    """A sentence of the text is false for the values this run computed."""


class _Record:
    """A claim as a display object: JSON for the execution report, one line as plain text."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.record = record

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, Any]:
        line = f"{self.record['kind']} claim {self.record['name']}: {self.record['statement']}"
        return {CLAIM_MIME: self.record, "text/plain": line}


def _plain(value: Any) -> Any:
    """A value as JSON can hold it (numbers rounded to 6 significant digits, the rest as str)."""
    if isinstance(value, bool) or value is None:
        return value
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 1) == 0:
        value = value.item()  # a numpy or torch scalar
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        return value if math.isfinite(value) else str(value)
    return str(value)


def _check(name: Any, statement: Any) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"name must be a glue-style name such as 'ch6_avg_helps'; got {name!r}")
    if not isinstance(statement, str) or not statement.strip():
        raise ValueError(f"statement must be the sentence the claim guards (a non-empty str); "
                         f"got {statement!r}")


def _truth(condition: Any, name: str) -> bool:
    if hasattr(condition, "item") and getattr(condition, "ndim", 1) == 0:
        condition = condition.item()  # numpy.bool_ or a 0-d tensor
    if not isinstance(condition, bool):
        raise TypeError(f"condition of claim {name!r} must be a bool (the comparison the "
                        f"sentence relies on); got {type(condition).__name__}")
    return condition


def _record(record: dict[str, Any]) -> None:
    try:
        from myst_nb import glue
    except ImportError:  # a reader's plain Python: the check ran, there is no page to record on
        return
    glue(CLAIM_PREFIX + record["name"], _Record(record), display=False)


def claim(name: str, condition: bool, statement: str, **values: Any) -> None:
    """Guard a sentence of the text: fail the build when this run makes it false.

    Args:
        name: a glue-style name for the claim, unique in its chapter (``'ch6_avg_helps'``).
        condition: the comparison the sentence relies on, evaluated on this run's values
            (a bool, ``numpy.bool_`` or 0-d tensor).
        statement: the sentence, or the part of it that interprets the result, as the
            execution report should list it (any language).
        **values: the numbers the condition compared, listed beside the claim in the report.

    Raises:
        ClaimError: ``condition`` is false; the message names the claim, the sentence and the
            values, so a build that would publish a false sentence stops instead.
        ValueError: ``name`` is not a glue-style name or ``statement`` is empty.
        TypeError: ``condition`` is not a bool.
    """
    _check(name, statement)
    holds = _truth(condition, name)
    shown = {key: _plain(value) for key, value in values.items()}
    if not holds:
        raise ClaimError(f"claim {name!r} is false for this run: the text says \"{statement}\", "
                         f"but the values are {shown}; change the experiment or the sentence")
    _record({"name": name, "kind": "guarded", "statement": statement, "holds": True,
             "values": shown})


def choose(name: str, condition: bool, if_true: str, if_false: str, **values: Any) -> str:
    """Glue the phrase of a sentence that branches on a result, and return it.

    The text places the phrase with myst-nb's ``glue:md`` role under ``name``; this function
    glues ``if_true`` when ``condition`` holds and ``if_false`` otherwise (both Markdown, in the
    page's language), so the sentence is true for whichever outcome the run produced.

    Args:
        name: the glue name the text uses for the phrase.
        condition: the outcome the phrase depends on (a bool).
        if_true, if_false: the two phrases.
        **values: the numbers the condition looked at, listed in the execution report.

    Raises:
        ValueError: ``name`` is not a glue-style name or a phrase is empty.
        TypeError: ``condition`` is not a bool.
    """
    _check(name, if_true)
    _check(name, if_false)
    holds = _truth(condition, name)
    phrase = if_true if holds else if_false
    shown = {key: _plain(value) for key, value in values.items()}
    _record({"name": name, "kind": "chosen", "statement": phrase, "holds": holds,
             "values": shown})
    try:
        from IPython.display import Markdown
        from myst_nb import glue
    except ImportError:
        return phrase
    glue(name, Markdown(phrase), display=False)
    return phrase


def glue_ratio(name: str, value: float, low: float | None = None,
               high: float | None = None) -> None:
    """Glue a ratio the text quotes (myst-nb ``glue``), after checking the bounds the text states.

    A sentence such as "doubling n multiplied the time by {name}, more than the factor 2 of a
    linear cost" is true only while ``value`` stays within the bounds it relies on. The chapter
    passes those bounds here (``low <= value <= high``; None: no bound on that side), so that a
    measurement that would make the sentence false stops the build instead of being published.
    The book's tests check that every ratio quoted in prose is glued through this function and
    that the sentences quoting it write its bounds. Returns None (nothing to display).

    Raises ``ClaimError`` (an ``AssertionError``) when ``value`` is outside the bounds (or NaN
    while bounded), ``ValueError`` for a name that is not a glue name or bounds with
    ``low > high``.
    """
    if not isinstance(name, str) or not name.replace("_", "").isalnum():
        raise ValueError(f"name must be a glue name such as 'app_attn_growth'; got {name!r}")
    if low is not None and high is not None and low > high:
        raise ValueError(f"low must not exceed high; got low={low}, high={high}")
    value = float(value)
    bounded = low is not None or high is not None
    if bounded and (math.isnan(value) or (low is not None and value < low)
                    or (high is not None and value > high)):
        raise ClaimError(
            f"{name} = {value:.4g} is outside [{low}, {high}], the bounds the text states about "
            "it; the measurement contradicts the sentence (rerun on a quieter machine, or fix "
            "the experiment)")
    from myst_nb import glue  # the book's notebooks run under myst-nb

    glue(name, value, display=False)
    if bounded:  # the bounds are what the sentence claims: listed in the execution report
        bounds = " ≤ ".join([*([f"{low:g}"] if low is not None else []), name,
                             *([f"{high:g}"] if high is not None else [])])
        _record({"name": name, "kind": "guarded", "statement": bounds, "holds": True,
                        "values": {name: _plain(value)}})
