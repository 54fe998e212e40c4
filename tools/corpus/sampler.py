"""Sampling the offline corpus: the grammar of a language pair (every template of every family,
in a fixed order), the English sentences of the hand-written corpus it must not repeat, and
:func:`generate_pairs`, which draws distinct pairs from it by the templates' weights.
"""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path

from d2lmini.utils import check_int
from . import templates_be, templates_objects, templates_other, templates_present, \
    templates_verbs
from .templates import _Builder, _Template
from .verb_phrases import _verb_phrases

#: The language pairs the grammar speaks (English first, as in Tatoeba's files).
PAIRS = ("fra-eng", "cmn-eng")

#: The hand-written corpus of each pair, in ``d2lmini/corpora/`` (written pairs come first
#: offline: :func:`d2lmini.read_data_nmt` merges them with the generated ones).
WRITTEN_FILES = {"fra-eng": "fra-eng-mini.txt", "cmn-eng": "cmn-eng-mini.txt"}

#: Where d2lmini keeps its corpora (the hand-written ones, and the offline corpora it ships).
CORPORA = Path(__file__).resolve().parents[2] / "d2lmini" / "corpora"


def written_lines(pair: str) -> list[str]:
    """The lines of the hand-written corpus of ``pair`` that hold a pair (a tab)."""
    text = (CORPORA / WRITTEN_FILES[pair]).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if "\t" in line]


def _handwritten_english(pair: str) -> frozenset[str]:
    """The English sentences of the hand-written corpus of ``pair`` (never generated)."""
    if not (CORPORA / WRITTEN_FILES[pair]).is_file():
        return frozenset()
    return frozenset(line.split("\t", 1)[0] for line in written_lines(pair))


def _build(pair: str) -> list[_Template]:
    """The grammar of ``pair``: its weighted templates, family after family."""
    b = _Builder(pair == PAIRS[0])
    vps = _verb_phrases(b.fra)
    templates_be.add_templates(b)
    templates_objects.add_templates(b)
    templates_verbs.add_templates(b, vps)
    templates_present.add_templates(b, vps)
    templates_other.add_templates(b, vps)
    return b.templates


class _Grammar:
    """The templates of one pair, the sentences left out, and how many it can give."""

    def __init__(self, pair: str):
        self.pair = pair
        self.templates = _build(pair)
        self.excluded = _handwritten_english(pair)
        self.total = sum(t.valid for t in self.templates)
        #: how many pairs can always be returned: every distinct sentence of the grammar,
        #: less (at most) those of the hand-written corpus
        self.capacity = self.total - len(self.excluded)

    def sample(self, num: int, rng: random.Random) -> list[tuple[str, str]]:
        """``num`` distinct pairs: a quota per template drawn by weight, then indices drawn
        within each template; clashes, repeats and hand-written sentences made up for."""
        templates = self.templates
        weights = [t.weight for t in templates]
        # how many pairs each template gives: drawn by weight, capped at its size
        quota = [0] * len(templates)
        for i in rng.choices(range(len(templates)), weights=weights, k=num):
            quota[i] += 1
        overflow = 0
        for i, t in enumerate(templates):
            if quota[i] > t.valid:
                overflow += quota[i] - t.valid
                quota[i] = t.valid
        tried: list[set[int]] = [set() for _ in templates]
        seen = set(self.excluded)
        pairs: list[tuple[str, str]] = []
        missing = overflow
        for i, t in enumerate(templates):
            if not quota[i]:
                continue
            idx = rng.sample(range(t.size), min(t.size, quota[i]))
            tried[i].update(idx)
            for j in idx:
                p = t[j]
                if p is None or p[0] in seen:
                    missing += 1
                    continue
                seen.add(p[0])
                pairs.append(p)
        self._make_up(missing, rng, tried, seen, pairs)
        rng.shuffle(pairs)
        return pairs

    def _make_up(self, missing: int, rng: random.Random, tried: list[set[int]], seen: set[str],
                 pairs: list[tuple[str, str]]) -> None:
        """Make up for overflow, clashes and hand-written sentences from templates with room:
        append ``missing`` more new pairs to ``pairs``."""
        templates = self.templates
        weights = [t.weight for t in templates]
        while missing:
            room = [i for i, t in enumerate(templates) if len(tried[i]) < t.size]
            if not room:
                raise RuntimeError("the grammar ran out of sentences")  # capacity forbids it
            for i in rng.choices(room, weights=[weights[r] for r in room], k=missing):
                t, done = templates[i], tried[i]
                if len(done) == t.size:
                    continue
                if len(done) * 2 < t.size:
                    j = rng.randrange(t.size)
                    while j in done:
                        j = rng.randrange(t.size)
                else:
                    j = rng.choice([k for k in range(t.size) if k not in done])
                done.add(j)
                p = t[j]
                if p is not None and p[0] not in seen:
                    seen.add(p[0])
                    pairs.append(p)
                    missing -= 1


@cache
def _grammar(pair: str) -> _Grammar:
    """The grammar of ``pair``, built once."""
    return _Grammar(pair)


def generate_pairs(pair: str, num_pairs: int, seed: int = 0) -> list[tuple[str, str]]:
    """``num_pairs`` distinct sentence pairs of the project's bilingual grammar.

    Args:
        pair: ``"fra-eng"`` (English, French) or ``"cmn-eng"`` (English, Simplified Chinese).
        num_pairs: how many pairs, at least 1 and at most the number of distinct English
            sentences the grammar makes (the error message says how many).
        seed: the seed of the ``random.Random`` that picks them; the same arguments always
            give the same list.

    Returns:
        A list of ``(english, translation)`` tuples of raw sentences in the style of
        Tatoeba's files (``("He's calm.", "Il est calme.")``, ``("I like cats.",
        "我喜欢猫。")``): no two share their English sentence, none is an English sentence
        of the hand-written corpus in ``d2lmini/corpora/``, and each English sentence always
        has the same translation. The order is random; the patterns are mixed by fixed
        weights (statements, negations and questions of some thirty kinds).

    Raises:
        TypeError: ``pair`` is not a str, or ``num_pairs`` or ``seed`` is not an int.
        ValueError: an unknown ``pair``, or ``num_pairs`` out of range.
    """
    if not isinstance(pair, str):
        raise TypeError(f"pair must be a str, one of {PAIRS}; got {type(pair).__name__}")
    if pair not in PAIRS:
        raise ValueError(f"pair must be one of {PAIRS}; got {pair!r}")
    check_int(num_pairs, "num_pairs", minimum=1)
    check_int(seed, "seed")
    grammar = _grammar(pair)
    if num_pairs > grammar.capacity:
        raise ValueError(
            f"num_pairs must be at most {grammar.capacity:,}: the {pair} grammar makes "
            f"{grammar.total:,} distinct English sentences and leaves out the "
            f"{len(grammar.excluded)} of the hand-written corpus; got {num_pairs:,}")
    return grammar.sample(num_pairs, random.Random(seed))
