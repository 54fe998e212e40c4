"""Sentence patterns with "be": be + adjective (he's tired, I'm hungry = j'ai faim, my car is
red), profession, place, location of a thing (the keys are on the table), age, and "this is"
(this is my car, are these your keys?).
"""

from __future__ import annotations

from functools import partial

from .clauses import (_AVOIR, _ETRE, _age_subjects, _en_be, _fr_clause, _np_subj,
                      _np_subjects, _person_subjects, _Subj, _zh_clause)
from .lexicon import (_AGES, _ANIMALS, _HAVEABLE, _LOCATIONS, _N, _NP_ADJ, _OWNERS,
                      _PERSON_ADJ, _PROFESSIONS, _nouns, _places, _t_en, _t_fr)
from .morphology import _a_an, _en_out
from .phrases import _NP, _a, _np_en, _np_fr, _np_zh, _owner_ok, _persons, _possessed
from .templates import _MOODS, _Builder, _combos


def _be_adj(b: _Builder, s: _Subj, c: tuple) -> tuple[str, str]:
    """He's tired. / Je n'ai pas faim. / 你累吗？"""
    adj, time, very, mood = c
    en = _en_be(s, ("very " if very else "") + adj.en + " " + _t_en(time), mood)
    word = adj.fr[0] if adj.avoir else adj.agree(s.g, s.pl)
    after = (["très"] if very else []) + [word, _t_fr(time)]
    pos = adj.zh_very() if very else adj.zh_pos
    return b.out(en, lambda: _fr_clause(s, _AVOIR if adj.avoir else _ETRE, after, after, mood),
                 lambda: _zh_clause(s.zh, time, pos, adj.zh_neg, adj.zh_q, mood), mood)


def _be_prof(b: _Builder, s: _Subj, c: tuple) -> tuple[str, str]:
    """She's a doctor. / Ils sont médecins."""
    (en_sg, en_pl, fr_forms, zh), mood = c
    en = _en_be(s, en_pl if s.pl else _a_an(en_sg), mood)
    word = fr_forms[(2 if s.pl else 0) + (1 if s.g == "f" else 0)]
    return b.out(en, lambda: _fr_clause(s, _ETRE, [word], [word], mood),
                 lambda: _zh_clause(s.zh, None, "是" + zh, "不是" + zh, "是" + zh, mood), mood)


def _be_place(b: _Builder, s: _Subj, c: tuple) -> tuple[str, str]:
    """Tom is at the park now."""
    place, time, mood = c
    en = _en_be(s, place.en_at + " " + _t_en(time), mood)
    after = [place.fr, _t_fr(time)]
    return b.out(en, lambda: _fr_clause(s, _ETRE, after, after, mood),
                 lambda: _zh_clause(s.zh, time, "在" + place.zh, "不在" + place.zh,
                                    "在" + place.zh, mood), mood)


def _be_loc(b: _Builder, s: _Subj, c: tuple) -> tuple[str, str]:
    """My keys are on the table."""
    (en_loc, fr_loc, zh_loc, _), mood = c
    return b.out(_en_be(s, en_loc, mood), lambda: _fr_clause(s, _ETRE, fr_loc, fr_loc, mood),
                 lambda: _zh_clause(s.zh, None, "在" + zh_loc, "不在" + zh_loc,
                                    "在" + zh_loc, mood), mood)


def _be_age(b: _Builder, s: _Subj, c: tuple) -> tuple[str, str]:
    """I'm ten. / J'ai dix ans. / 我十岁。"""
    age, mood = c
    after = [age[1], "ans"]
    return b.out(_en_be(s, age[0], mood), lambda: _fr_clause(s, _AVOIR, after, after, mood),
                 lambda: _zh_clause(s.zh, None, age[2] + "岁", "", age[2] + "岁", mood), mood)


def _this_is(b: _Builder, dem: str, np: _NP, mood: str) -> tuple[str, str]:
    """That's my car. / Ce ne sont pas mes clés. / 这是你的书吗？"""
    pl = dem in ("these", "those")
    o_en = _np_en(np)
    if mood == "?":
        en = _en_out(["Are" if pl else "Is", dem, o_en], mood)
    elif mood == "+":
        en = _en_out(["That's" if dem == "that" else f"{dem} {'are' if pl else 'is'}",
                      o_en], mood)
    else:
        en = _en_out([dem, "aren't" if pl else "isn't", o_en], mood)
    o_fr = _np_fr(np)
    if mood == "+":
        fr_t = ["ce", "sont" if pl else "est"] + o_fr
    elif mood == "-":
        fr_t = ["ce", "ne", "sont" if pl else "est", "pas"] + o_fr
    else:
        fr_t = (["est-ce", "que", "ce", "sont"] if pl else ["est-ce"]) + o_fr
    zdem = {"this": "这", "that": "那", "these": "这些", "those": "那些"}[dem]
    zh = _zh_clause(zdem, None, "是" + _np_zh(np), "不是" + _np_zh(np, True),
                    "是" + _np_zh(np, True), mood)
    return b.out(en, lambda: fr_t, lambda: zh, mood)


def _add_be_adj(b: _Builder) -> None:
    """be + adjective: of people, and of animals and things."""
    person_adj = [(a, t, False, m) for a in _PERSON_ADJ for t in (None,) + a.times
                  for m in _MOODS]
    person_adj += [(a, t, True, "+") for a in _PERSON_ADJ if a.very for t in (None,) + a.times]
    b.add_people("be_adj", 16, b.people, person_adj, partial(_be_adj, b), ban="")
    np_adj = [(s, (a, None, False, m)) for s in b.animals + b.things for a in _NP_ADJ
              if s.noun.key in a.nouns for m in _MOODS]
    np_adj += [(s, (a, None, True, "+")) for s in b.animals + b.things for a in _NP_ADJ
               if s.noun.key in a.nouns and a.very]
    b.add("be_adj_np", 12, [np_adj], lambda sc: _be_adj(b, *sc))


def _add_be_other(b: _Builder) -> None:
    """be + profession, place, location, age."""
    fra = b.fra
    b.add_people("be_profession", 5, _person_subjects(fra, exclude="teacher student child boss"),
                 _combos(_PROFESSIONS, _MOODS), partial(_be_prof, b))
    place_c = [(p, t, m) for p in _places("be") for t in (
        (None, "now") if "animal" in p.tags else (None, "now", "today")) for m in _MOODS]
    b.add_people("be_place", 8, b.people, place_c, partial(_be_place, b))
    located = _np_subjects(fra, _nouns("book pen key phone watch letter apple cup newspaper "
                                       "photo hat bag umbrella wallet box " + _ANIMALS))
    b.add("be_location", 4, [[(s, (loc, m)) for s in located for loc in _LOCATIONS
                              if s.noun.key in loc[3] for m in _MOODS]],
          lambda sc: _be_loc(b, *sc))
    b.add_people("age", 2, _age_subjects(fra), _combos(_AGES, ("+", "?")), partial(_be_age, b))
    kids = [_np_subj(_NP(d, _N[k])) for k in ("boy", "girl", "child") for d in ("this", "that")]
    b.add_people("age_child", 0.5, kids, _combos(_AGES[:6], ("+", "?")), partial(_be_age, b))


def _add_this_is(b: _Builder) -> None:
    """this/that/these/those is/are + noun phrase."""
    fra = b.fra
    kin_nouns = [n for n in _persons(fra) if "kin" in n.tags or "role" in n.tags]
    sg_nps = (_possessed(fra, _nouns(_HAVEABLE + " book key " + _ANIMALS) + kin_nouns,
                         plural=False)
              + _a(_HAVEABLE + " book " + _ANIMALS, adjs=True))
    pl_nps = [_NP("poss", n, owner=o, pl=True) for n in _nouns(_HAVEABLE + " book key") +
              [n for n in kin_nouns if "pl" in n.tags] for o in _OWNERS if _owner_ok(o, n)]
    dem_np = [(d, np, m) for d, nps in (("this", sg_nps), ("that", sg_nps), ("these", pl_nps),
                                        ("those", pl_nps))
              for np in nps for m in _MOODS if m != "?" or np.owner not in ("I", "we")]
    b.add("this_is", 6, [dem_np], lambda c: _this_is(b, *c))


def add_templates(b: _Builder) -> None:
    """Add the "be" family to ``b``, in the order of the corpus."""
    _add_be_adj(b)
    _add_be_other(b)
    _add_this_is(b)
