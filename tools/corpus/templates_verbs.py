"""Sentence patterns of lexical verbs in time: the progressive (he's reading a book, she's
sleeping in the garden), the past (he bought a car yesterday; she went to the park: allée),
going and coming, want to, going to and can.
"""

from __future__ import annotations

from functools import partial

from .clauses import _AVOIR, _ETRE, _en_be, _en_do, _fr_clause, _pp, _Subj, _zh_clause
from .lexicon import _ACTIVITIES, _ANIMALS, _SKILLS, _V, _places, _t_en, _t_fr
from .morphology import _en_out
from .phrases import _VP
from .templates import _MOODS, _Builder, _combos

#: Where one goes: home (None) or a place.
_DESTS = (None,) + tuple(_places("go"))


def _prog(b: _Builder, s: _Subj, c: tuple) -> tuple[str, str]:
    """He's reading a book. / Il lit un livre. / 他在看一本书。"""
    vp, time, mood = c
    en = _en_be(s, vp.en_form(s, "ing") + " " + _t_en(time), mood)
    t = [_t_fr(time)]
    return b.out(en, lambda: _fr_clause(s, vp.v.pres, vp.fr_obj(s) + t,
                                        vp.fr_obj(s, True) + t, mood),
                 lambda: _zh_clause(s.zh, time, "在" + vp.zh_vp(s),
                                    "没在" + vp.zh_vp(s, bare=True),
                                    "在" + vp.zh_vp(s, bare=True), mood), mood)


def _act(b: _Builder, s: _Subj, c: tuple) -> tuple[str, str]:
    """She's sleeping in the garden."""
    a, place, time, mood = c
    en = _en_be(s, " ".join([a.en, place.en_at if place else "", _t_en(time)]), mood)
    after = [place.fr if place else "", _t_fr(time)]
    zh = ("在" + place.zh if place else "在") + a.zh
    return b.out(en, lambda: _fr_clause(s, a.fr, after, after, mood),
                 lambda: _zh_clause(s.zh, time, zh, "没" + zh, zh, mood), mood)


def _past(b: _Builder, s: _Subj, c: tuple) -> tuple[str, str]:
    """He bought a car yesterday. / Il a acheté une voiture hier. / 他昨天买了一辆车。"""
    vp, time, mood = c
    v = vp.v
    en = _en_do(s, v, vp.en_obj(s) + " " + _t_en(time), mood, "past")
    t = [_t_fr(time)]
    return b.out(en, lambda: _fr_clause(s, _AVOIR, [v.pp] + vp.fr_obj(s) + t,
                                        [v.pp] + vp.fr_obj(s, True) + t, mood),
                 lambda: _zh_clause(s.zh, time, vp.zh_vp(s, "past"),
                                    "没" + vp.zh_vp(s, bare=True),
                                    vp.zh_vp(s, bare=True) + "了", mood), mood)


def _past_moods(vp: _VP) -> str:
    """The moods a past clause with ``vp`` takes (no "I didn't eat two apples")."""
    if vp.np.det == "num":
        return "+"
    moods = "+"
    if vp.np.det not in ("a", "cont") or vp.verb in ("buy", "write", "see", "take"):
        moods += "-"
    if vp.verb not in ("sell", "lose"):
        moods += "?"
    return moods


def _went(b: _Builder, s: _Subj, c: tuple) -> tuple[str, str]:
    """She went to the park. / Elle est allée au parc. / 她去了公园。"""
    place, time, mood = c
    if place is None:  # home
        v, en_to, fr_to = _V["gohome"], "home", "à la maison"
        zh = ("回家了", "没回家", "回家了")
    else:
        v, en_to, fr_to = _V["go"], place.en_to, place.fr
        zh = ("去了" + place.zh, "没去" + place.zh, "去" + place.zh + "了")
    en = _en_do(s, _V["go"], en_to + " " + _t_en(time), mood, "past")
    after = [_pp(v, s), fr_to, _t_fr(time)]
    return b.out(en, lambda: _fr_clause(s, _ETRE, after, after, mood),
                 lambda: _zh_clause(s.zh, time, *zh, mood), mood)


def _came(b: _Builder, s: _Subj, c: tuple) -> tuple[str, str]:
    """They came yesterday. / Ils sont venus hier."""
    time, mood = c
    en = _en_do(s, _V["come"], _t_en(time), mood, "past")
    after = [_pp(_V["come"], s), _t_fr(time)]
    return b.out(en, lambda: _fr_clause(s, _ETRE, after, after, mood),
                 lambda: _zh_clause(s.zh, time, "来了", "没来", "来了", mood), mood)


def _going(b: _Builder, s: _Subj, c: tuple) -> tuple[str, str]:
    """I'm going to the park tomorrow. / Are you coming today?"""
    place, time, mood = c
    t = [_t_fr(time)]
    if place == "come":
        en_c, fr_v, fr_a, zh = "coming", _V["come"].pres, t, ("来", "不来", "来")
    elif place is None:
        en_c, fr_v, fr_a = "going home", _V["gohome"].pres, ["à la maison"] + t
        zh = ("回家", "不回家", "回家")
    else:
        en_c, fr_v, fr_a = "going " + place.en_to, _V["go"].pres, [place.fr] + t
        zh = ("去" + place.zh, "不去" + place.zh, "去" + place.zh)
    en = _en_be(s, en_c + " " + _t_en(time), mood)
    return b.out(en, lambda: _fr_clause(s, fr_v, fr_a, fr_a, mood),
                 lambda: _zh_clause(s.zh, time, *zh, mood), mood)


def _want_to(b: _Builder, s: _Subj, c: tuple) -> tuple[str, str]:
    """I want to go home. / Je veux rentrer à la maison. / 我想回家。"""
    vp, time, mood = c
    en = _en_do(s, _V["want"], "to " + vp.en_form(s) + " " + _t_en(time), mood)
    t = [_t_fr(time)]
    return b.out(en, lambda: _fr_clause(s, _V["want"].pres, vp.fr_inf(s) + t,
                                        vp.fr_inf(s, True) + t, mood),
                 lambda: _zh_clause(s.zh, time, "想" + vp.zh_vp(s),
                                    "不想" + vp.zh_vp(s, bare=True), "想" + vp.zh_vp(s),
                                    mood), mood)


def _going_to(b: _Builder, s: _Subj, c: tuple) -> tuple[str, str]:
    """He's going to buy a car. / Il va acheter une voiture. / 他要买一辆车。"""
    vp, time, mood = c
    en = _en_be(s, "going to " + vp.en_form(s) + " " + _t_en(time), mood)
    t = [_t_fr(time)]
    return b.out(en, lambda: _fr_clause(s, _V["go"].pres, vp.fr_inf(s) + t, [], mood),
                 lambda: _zh_clause(s.zh, time, "要" + vp.zh_vp(s), "",
                                    "要" + vp.zh_vp(s, bare=True), mood), mood)


def _can(b: _Builder, s: _Subj, c: tuple) -> tuple[str, str]:
    """She can swim. / Elle sait nager. / 她会游泳。"""
    (en_sk, fr_sk, zh_sk), mood = c
    en = _en_out({"+": [s.en, "can"], "-": [s.en, "can't"], "?": ["Can", s.en]}[mood] +
                 [en_sk], mood)
    return b.out(en, lambda: _fr_clause(s, _V["can"].pres, fr_sk, fr_sk, mood),
                 lambda: _zh_clause(s.zh, None, "会" + zh_sk, "不会" + zh_sk, "会" + zh_sk, mood),
                 mood)


def _joined(vps: dict[str, list], names: str) -> list[_VP]:
    """The lists of ``vps`` named in ``names``, one after the other."""
    return [vp for name in names.split() for vp in vps[name]]


def _add_progressive(b: _Builder, vps: dict[str, list]) -> None:
    """The progressive with an object, and activities of people and animals."""
    prog_vps = _joined(vps, "eat_a eat_poss eat_part drink_part drink_poss drink_cont read "
                            "write watch listen look wait make clean wash call help_")
    prog_c = [(vp, t, m) for vp in prog_vps for t in (None, "now") for m in _MOODS
              if m != "-" or (vp.negatable and vp.np.det != "a")]
    b.add_vps("progressive", 10, b.people, prog_c, partial(_prog, b))
    act_c = [(a, p, t, m) for a in _ACTIVITIES if a.who == "person" for p in (None,) + tuple(
        a.places) for t in (None, "now") for m in _MOODS]
    b.add_people("activity", 6, b.people, act_c, partial(_act, b))
    animal_act = {"sleeping": _ANIMALS, "eating": _ANIMALS, "running": "dog cat horse rabbit"}
    animal_c = [(s, (a, p, t, m)) for a in _ACTIVITIES if a.who == "animal" for s in b.animals
                if s.noun.key in animal_act[a.en] for p in (None,) + tuple(a.places)
                for t in (None, "now") for m in _MOODS]
    b.add("activity_animal", 2, [animal_c], lambda sc: _act(b, *sc))


def _add_past(b: _Builder, vps: dict[str, list]) -> None:
    """The past with an object, went and came."""
    past_vps = _joined(vps, "eat_a eat_poss eat_dem drink_poss drink_cont buy_a buy_num "
                            "buy_dem sell read write see find lose wash open_ close clean make "
                            "call help_ take")
    past_c = [(vp, t, m) for vp in past_vps for t in (None, "yesterday")
              for m in _past_moods(vp)]
    b.add_vps("past", 12, b.people, past_c, partial(_past, b))
    b.add_people("past_go", 5, b.people, _combos(_DESTS, (None, "yesterday"), _MOODS),
                 partial(_went, b))
    b.add_people("past_come", 1, b.people, _combos((None, "yesterday"), _MOODS),
                 partial(_came, b), ban="I we")


def _add_future(b: _Builder, vps: dict[str, list]) -> None:
    """Going and coming, want to, going to, can."""
    going_c = _combos(_DESTS, (None, "now", "today", "tomorrow"), _MOODS) + \
        _combos(["come"], ("today", "tomorrow"), _MOODS)
    b.add_people("going", 6, b.people, going_c, partial(_going, b))
    want_vps = _joined(vps, "intrans go_vps play_vps learn_vps live_vps eat_a eat_part "
                            "drink_part buy_a buy_dem read_some meet call watch take")
    want_c = [(vp, t, m) for vp in want_vps for t in (None, "now") for m in _MOODS
              if m != "-" or vp.negatable]
    b.add_vps("want_to", 8, b.people, want_c, partial(_want_to, b), ban="I we")
    going_vps = _joined(vps, "buy_a buy_dem sell eat_a eat_dem read_some write call meet "
                             "watch make clean wash learn_vps take")
    b.add_vps("going_to", 5, b.people,
              _combos(going_vps, (None, "today", "tomorrow"), ("+", "?")), partial(_going_to, b))
    b.add_people("can", 4, b.people, _combos(_SKILLS, _MOODS), partial(_can, b), ban="I we")


def add_templates(b: _Builder, vps: dict[str, list]) -> None:
    """Add the verbs-in-time family to ``b``, in the order of the corpus."""
    _add_progressive(b, vps)
    _add_past(b, vps)
    _add_future(b, vps)

