"""The machinery of the sentence patterns: a :class:`_Template` is the product of its slot lists
(every subject with every object and mood), decoded by index, and the :class:`_Builder` of one
language pair collects the templates of every family (``templates_*.py``) in a fixed order,
weighted so that pronouns and names are more frequent than noun phrases, as in Tatoeba.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import product
from typing import Any

from .clauses import _np_subjects, _person_subjects, _Subj
from .lexicon import _ANIMALS, _NP_ADJ, _nouns
from .morphology import _fr_out
from .phrases import _VP


class _Template:
    """Sentences of one pattern: the product of its slot lists, decoded by index."""

    __slots__ = ("clash", "fn", "name", "size", "slots", "valid", "weight")

    def __init__(self, name: str, weight: float, slots: Sequence[Sequence[Any]],
                 fn: Callable[..., tuple[str, str]],
                 clash: tuple[Callable[[Any], frozenset], Callable[[Any], frozenset]] | None
                 = None):
        """``clash``: keys of a first-slot item and keys of a second-slot item; an index whose
        two items share a key is not a sentence (Tom is waiting for Tom; Do I like cats?)."""
        self.name, self.weight, self.fn, self.clash = name, weight, fn, clash
        self.slots = [list(s) for s in slots]
        self.size = 1
        for s in self.slots:
            self.size *= len(s)
        self.valid = self.size
        if clash:
            self.valid -= self._clashes() * (
                self.size // (len(self.slots[0]) * len(self.slots[1])))

    def _clashes(self) -> int:
        """How many (first, second) item pairs clash, counted exactly through the distinct key
        sets of the second slot."""
        groups: dict[frozenset, int] = {}
        for item in self.slots[1]:
            ks = self.clash[1](item)
            if ks:
                groups[ks] = groups.get(ks, 0) + 1
        sets = list(groups.items())
        index: dict[str, list[int]] = {}
        for g, (ks, _) in enumerate(sets):
            for k in ks:
                index.setdefault(k, []).append(g)
        bad = 0
        for item in self.slots[0]:
            hit: set[int] = set()
            for k in self.clash[0](item):
                hit.update(index.get(k, ()))
            bad += sum(sets[g][1] for g in hit)
        return bad

    def items(self, i: int) -> list[Any]:
        """The slot items of index ``i`` (the last slot varies fastest)."""
        items = []
        for s in reversed(self.slots):
            i, r = divmod(i, len(s))
            items.append(s[r])
        items.reverse()
        return items

    def __getitem__(self, i: int) -> tuple[str, str] | None:
        """The pair of index ``i``, or None where its first two items clash."""
        items = self.items(i)
        if self.clash and self.clash[0](items[0]) & self.clash[1](items[1]):
            return None
        return self.fn(*items)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for i in range(self.size):
            pair = self[i]
            if pair is not None:
                yield pair


#: statement, negation, question
_MOODS = ("+", "-", "?")


def _combos(*lists: Sequence[Any]) -> list[tuple]:
    """Every combination of one item of each list."""
    return list(product(*lists))


class _Builder:
    """The templates of one language pair, in the order they are added, and the subjects that
    most families share (people, animals, things)."""

    def __init__(self, fra: bool):
        self.fra = fra
        self.templates: list[_Template] = []
        self.people = _person_subjects(fra)
        self.animal_nouns = _nouns(_ANIMALS)
        thing_keys = sorted({k for a in _NP_ADJ for k in a.nouns} - set(_ANIMALS.split()))
        self.animals = _np_subjects(fra, self.animal_nouns)
        self.things = _np_subjects(fra, _nouns(" ".join(thing_keys)))

    def out(self, en: str, fr: Callable[[], list[str]], zh: Callable[[], str], mood: str
            ) -> tuple[str, str]:
        """The pair for this grammar: ``fr`` gives the French words, ``zh`` the Chinese
        sentence (only the one needed is made)."""
        return (en, _fr_out(fr(), mood)) if self.fra else (en, zh())

    def add(self, name: str, weight: float, slots: Sequence[Sequence[Any]], fn: Callable
            ) -> None:
        """A template without clashes."""
        self.templates.append(_Template(name, weight, slots, fn))

    def add_people(self, name: str, weight: float, subjects: Sequence[_Subj],
                   items: Sequence[tuple], fn: Callable, ban: str = "I") -> None:
        """A template ``fn(subject, item)`` whose items end with their mood. It is split in
        two, so that pronouns and names (I, he, Tom) are more frequent than noun phrases
        (Tom's mother), as in Tatoeba. No object repeats its subject (Tom knows Tom), and
        the pronouns in ``ban`` ask no questions (Do I like cats? Can we swim?)."""
        qkeys = frozenset("Q:" + b for b in ban.split())

        def item_keys(item: tuple) -> frozenset:
            keys = item[0].keys(owner_too=name == "know") if isinstance(item[0], _VP) \
                else frozenset()
            return keys | qkeys if item[-1] == "?" else keys

        clash = (lambda s: s.keys, item_keys)
        short = [s for s in subjects if s.key != "np"]
        long_ = [s for s in subjects if s.key == "np"]
        share = 0.65 if short and long_ else 1.0
        if short:
            self.templates.append(_Template(name, weight * share, [short, items], fn, clash))
        if long_:
            self.templates.append(_Template(name + "/np", weight * (1 - share if short else 1),
                                            [long_, items], fn, clash))

    def add_vps(self, name: str, weight: float, subjects: Sequence[_Subj],
                items: Sequence[tuple], fn: Callable, ban: str = "I") -> None:
        """``add_people`` once per verb, weighted by the square root of its number of
        items, so that verbs with many objects (call Tom's mother) do not crowd out the
        others (listen to the radio)."""
        groups: dict[str, list[tuple]] = {}
        for item in items:
            vp = item[0]
            groups.setdefault(vp.verb or vp.en.split()[0], []).append(item)
        norm = sum(len(g) ** 0.5 for g in groups.values())
        for key, group in groups.items():
            self.add_people(f"{name}:{key}", weight * len(group) ** 0.5 / norm,
                            subjects, group, fn, ban)
