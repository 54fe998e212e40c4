"""Sentence patterns of a present-tense verb and its object: have (I have two cats, il n'a pas
de voiture), want, like and hate (cats, my car, swimming), eat and drink (du poisson), and what
animals like, eat and drink.
"""

from __future__ import annotations

from .clauses import _en_do, _fr_clause, _generic_subj, _Subj, _zh_clause
from .lexicon import (_ACTIVITY_GERUNDS, _ANIMALS, _COUNT_FOOD, _DIET, _DRINKS, _HAVEABLE,
                      _MASS_FOOD, _V, _nouns)
from .phrases import _NP, _a, _adapt, _cont, _dem, _np_en, _np_fr, _np_zh, _num, _persons, _poss
from .templates import _MOODS, _Builder, _combos


def _do_obj(b: _Builder, s: _Subj, verb: str, np: _NP, mood: str, zh_neg: str = "不",
            q_bare: bool = True, fr_neg: bool = True) -> tuple[str, str]:
    """A present-tense transitive clause: He likes cats. / Il n'a pas de voiture. /
    你有车吗？"""
    np = _adapt(np, s)
    v = _V[verb]
    return b.out(_en_do(s, v, _np_en(np), mood),
                 lambda: _fr_clause(s, v.pres, _np_fr(np), _np_fr(np, fr_neg), mood),
                 lambda: _zh_clause(s.zh, None, v.zh + _np_zh(np),
                                    zh_neg + v.zh + _np_zh(np, True),
                                    v.zh + _np_zh(np, q_bare), mood), mood)


def _like(b: _Builder, s: _Subj, c: tuple) -> tuple[str, str]:
    """I like cats. / J'aime nager. (an activity: I like swimming = j'aime nager)"""
    verb, obj, mood = c
    if isinstance(obj, tuple):
        v = _V[verb]
        return b.out(_en_do(s, v, obj[0], mood),
                     lambda: _fr_clause(s, v.pres, obj[1], obj[1], mood),
                     lambda: _zh_clause(s.zh, None, v.zh + obj[2], "不" + v.zh + obj[2],
                                        v.zh + obj[2], mood), mood)
    return _do_obj(b, s, verb, obj, mood, fr_neg=False)


def _add_have_want(b: _Builder) -> None:
    """have and want."""
    child = " ".join(n.key for n in _persons(b.fra, "child"))
    have_obj = _combos(_a(_HAVEABLE + " " + _ANIMALS + " " + child, adjs=True), _MOODS) + \
        _combos(_num(_HAVEABLE + " " + _ANIMALS + " " + child, (2, 3)), ("+", "?"))
    b.add_people("have", 8, b.people, have_obj,
                 lambda s, c: _do_obj(b, s, "have", c[0], c[1], zh_neg="没"))
    want_obj = _combos(_a(_HAVEABLE + " " + _ANIMALS, adjs=True), _MOODS) + \
        _combos(_cont("tea coffee water milk juice beer wine", (1, 2)), ("+", "?")) + \
        _combos(_dem(_HAVEABLE + " book apple cake"), _MOODS)
    b.add_people("want", 5, b.people, want_obj,
                 lambda s, c: _do_obj(b, s, "want", c[0], c[1], q_bare=False), ban="I we")


def _add_like(b: _Builder) -> None:
    """like and hate: things in general, a particular thing, an activity."""
    gen = [_NP("gen", n) for n in _nouns(_ANIMALS + " " + _COUNT_FOOD + " " + _MASS_FOOD +
                                         " " + _DRINKS + " flower book movie music")]
    specific = _dem("car house hat jacket bag watch bike room photo lamp") + \
        _poss("car house hat jacket bag watch bike room photo")
    like_obj = _combos(["like"], gen + specific + _ACTIVITY_GERUNDS, _MOODS) + \
        _combos(["hate"], [_NP("gen", n) for n in _nouns("cat dog mouse tea coffee beer wine "
                                                         "fish meat cheese")]
                + _ACTIVITY_GERUNDS, _MOODS)
    b.add_people("like", 8, b.people, like_obj, lambda s, c: _like(b, s, c), ban="I we")


def _add_eat_drink(b: _Builder) -> None:
    """What animals like, eat and drink; what people eat and drink."""
    diet = []
    for n in b.animal_nouns:
        food, drink = _DIET[n.key]
        subs = [s for s in b.animals if s.noun is n] + [_generic_subj(n)]
        objs = [("eat", f) for f in _nouns(food)] + [("drink", d) for d in _nouns(drink)]
        diet += [(s, vo, m) for s in subs for vo in objs for m in _MOODS]
    b.add("like_animal", 2, [diet],
          lambda c: _do_obj(b, c[0], "like", _NP("gen", c[1][1]), c[2], fr_neg=False))
    b.add("eat_drink_animal", 2, [diet],
          lambda c: _do_obj(b, c[0], c[1][0], _NP("part", c[1][1]), c[2]))
    eat_obj = _combos(["eat"], _nouns(_MASS_FOOD + " " + _COUNT_FOOD), _MOODS) + \
        _combos(["drink"], _nouns(_DRINKS), _MOODS)
    b.add_people("eat_drink", 6, b.people, eat_obj,
                 lambda s, c: _do_obj(b, s, c[0], _NP("part", c[1]), c[2]), ban="I we")


def add_templates(b: _Builder) -> None:
    """Add the verb + object family to ``b``, in the order of the corpus."""
    _add_have_want(b)
    _add_like(b)
    _add_eat_drink(b)
