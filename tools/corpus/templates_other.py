"""Sentence patterns without a personal subject: there is (there's a cat under the bed =
il y a un chat sous le lit = 床底下有一只猫), the weather (it's cold today; it's raining),
imperatives (open the door, please wait for Tom, don't call John!) and exclamations (what a
beautiful house!).
"""

from __future__ import annotations

from .clauses import _en_be, _fr_clause, _Subj, _zh_clause
from .lexicon import _ATTR, _ATTR_ADJ, _LOCATIONS, _V, _Adj, _nouns, _t_en, _t_fr, _t_zh
from .morphology import _cap, _en_out, _fr_join, _zh_out
from .phrases import _F, _NP, _VP, _dem, _names, _np_en, _np_fr, _np_zh, _poss, _vp
from .templates import _MOODS, _Builder, _combos

#: The subject of the weather: il fait froid, il pleut.
_IT = _Subj("it", "it", "it's", "is", True, ["il"], "il", 2, "m", False, "", "it")


def _there(b: _Builder, c: tuple) -> tuple[str, str]:
    """There's a book on the table. / Il n'y a pas de livre sur la table. / 桌子上有书吗？"""
    (en_loc, fr_loc, zh_loc, _), np, mood = c
    o_en, pl = _np_en(np), np.det == "num"
    en = _en_out({"+": ["There are" if pl else "There's"], "-": ["There isn't"],
                  "?": ["Is there"]}[mood] + [o_en, en_loc], mood)
    fr_t = {"+": ["il", "y", "a"] + _np_fr(np), "-": ["il", "ne", "y", "a", "pas"] +
            _np_fr(np, True), "?": ["y", "a-t-il"] + _np_fr(np)}[mood] + fr_loc
    return b.out(en, lambda: fr_t,
                 lambda: _zh_clause(zh_loc, None, "有" + _np_zh(np), "没有" + _np_zh(np, True),
                                    "有" + _np_zh(np, True), mood), mood)


def _weather(b: _Builder, c: tuple) -> tuple[str, str]:
    """It's cold today. / It's going to be nice tomorrow = il va faire beau demain."""
    (en_w, fr_w, zh_pos, zh_neg, zh_q), time, mood = c
    if time == "tomorrow":
        en = _en_be(_IT, f"going to be {en_w} tomorrow", mood)
        fr_t = _fr_clause(_IT, _V["go"].pres, ["faire", fr_w, "demain"], [], mood)
        if en_w == "nice":
            zh = _zh_clause("明天", None, "天气会很好", "", "天气会好", mood)
        else:
            zh = _zh_clause("明天", None, "会" + zh_pos, "", "会" + zh_q, mood)
        return b.out(en, lambda: fr_t, lambda: zh, mood)
    en = _en_be(_IT, en_w + " " + _t_en(time), mood)
    after = [fr_w, _t_fr(time)]
    return b.out(en, lambda: _fr_clause(_IT, ["fait"] * 6, after, after, mood),
                 lambda: _zh_clause(_t_zh(time), None, zh_pos, zh_neg, zh_q, mood), mood)


def _rain(b: _Builder, c: tuple) -> tuple[str, str]:
    """It's raining now. / Il pleut maintenant. / 现在在下雨。"""
    time, mood = c
    en = _en_be(_IT, "raining " + _t_en(time), mood)
    after = [_t_fr(time)]
    zh = {"now": ("在下雨", "没下雨", "在下雨"), "today": ("下雨了", "没下雨", "下雨了")}[time]
    return b.out(en, lambda: _fr_clause(_IT, ["pleut"] * 6, after, after, mood),
                 lambda: _zh_clause(_t_zh(time), None, *zh, mood), mood)


def _imperative(b: _Builder, c: tuple) -> tuple[str, str]:
    """Open the door. / Please wait for Tom. / Don't call John!"""
    vp, form = c
    en_vp = vp.en_form(None)
    if vp.np is None:
        fr_vp = ["va" if vp.fr[0] == "aller" else vp.fr[0]] + list(vp.fr[1:])
    else:
        fr_vp = [vp.v.imp] + vp.fr_obj(None)
    if form == "!":
        return b.out(_en_out(["don't", en_vp], "!"), lambda: ["ne", fr_vp[0], "pas"] + fr_vp[1:],
                     lambda: _zh_out("别" + vp.zh_vp(None), "!"), "!")
    if form == "please":
        en = _en_out(["please", en_vp], "+")
        return (en, _cap(_fr_join(fr_vp)) + ", s'il te plaît.") if b.fra else \
            (en, _zh_out("请" + vp.zh_vp(None, "imp"), "+"))
    return b.out(_en_out([en_vp], "+"), lambda: fr_vp,
                 lambda: _zh_out(vp.zh_vp(None, "imp"), "+"), "+")


def _what(b: _Builder, np: _NP) -> tuple[str, str]:
    """What a beautiful house! / Quelle belle maison ! / 好漂亮的房子啊！"""
    stem = {"beautiful": "漂亮", "big": "大", "small": "小", "oldthing": "旧", "cute": "可爱",
            "expensive": "贵"}[np.adj.key]
    return b.out(_en_out([_np_en(np)], "!"), lambda: _np_fr(np),
                 lambda: _zh_out("好" + stem + "的" + np.noun.zh + "啊", "!"), "!")


def _your(keys: str) -> list[_NP]:
    """your + noun (the singular you)."""
    return [_NP("poss", n, owner="you") for n in _nouns(keys)]


def _imperatives(go_vps: list[_VP]) -> list[tuple[_VP, str]]:
    """The verb phrases of the imperative, each with its forms (+, please, !)."""
    imp_c = []
    for vps, forms in [
        (_vp("open", [_F["door"], _F["window"]]), "+ please !"),
        (_vp("close", [_F["door"], _F["window"]]), "+ please"),
        (_vp("read", _dem("book letter", "this")), "+ please"),
        (_vp("read", _poss("letter")), "!"),
        (_vp("buy", _dem("car book hat", "this")), "+"),
        (_vp("buy", _dem("car hat house", "that")), "!"),
        (_vp("eat", _dem("apple cake sandwich", "this")), "+"),
        (_vp("eat", _poss("cake apple orange sandwich")), "!"),
        (_vp("drink", _dem("tea coffee milk", "this")), "+"),
        (_vp("drink", _poss("coffee tea milk beer")), "!"),
        (_vp("call", _names() + _your("mother father friend")), "+ please !"),
        (_vp("help", _names() + _your("mother father friend")), "+ please"),
        (_vp("wait", _names() + _your("friend mother")), "+ please !"),
        (_vp("clean", _your("room") + [_F["kitchen"]]), "+ please"),
        (_vp("wash", [_F["dishes"], _F["thecar"]] + _your("car")), "+ please"),
        (_vp("make", [_F["dinner"], _F["breakfast"]]), "+ please"),
        (_vp("sell", _your("car house bike")), "!"),
        ([vp for vp in go_vps if vp.en in ("go to school", "go to the park", "go to the library",
                                           "go home")], "+ !"),
    ]:
        imp_c += [(vp, f) for vp in vps for f in forms.split()]
    return imp_c


def _add_there_and_weather(b: _Builder) -> None:
    """there is, the weather, rain."""
    there_c = []
    for loc in _LOCATIONS:
        for n in _nouns(" ".join(sorted(loc[3]))):
            there_c += [(loc, _NP("a", n), m) for m in _MOODS]
            there_c += [(loc, _NP("a", n, adj=a), "+") for a in _ATTR_ADJ if n.key in a.nouns]
            there_c += [(loc, _NP("num", n, k=k), "+") for k in (2, 3)]
    b.add("there_is", 6, [there_c], lambda c: _there(b, c))
    weathers = [("cold", "froid", "很冷", "不冷", "冷"), ("hot", "chaud", "很热", "不热", "热"),
                ("nice", "beau", "天气很好", "天气不好", "天气好")]
    weather_c = [(w, t, m) for w in weathers for t in ("today", "now") for m in _MOODS
                 if not (w[0] == "nice" and t == "now")]
    weather_c += [(w, "tomorrow", m) for w in weathers for m in ("+", "?")]
    b.add("weather", 1, [weather_c], lambda c: _weather(b, c))
    b.add("rain", 0.3, [_combos(("now", "today"), _MOODS)], lambda c: _rain(b, c))


def add_templates(b: _Builder, vps: dict[str, list]) -> None:
    """Add the family without a personal subject to ``b``, in the order of the corpus."""
    _add_there_and_weather(b)
    b.add("imperative", 3, [_imperatives(vps["go_vps"])], lambda c: _imperative(b, c))
    expensive = _Adj("expensive", "expensive", "cher chère chers chères", pos="post",
                     zh_attr="", nouns="car bike house phone computer watch bag hat jacket")
    what_c = [_NP("what", n, adj=a, pl=pl) for a in [_ATTR[k] for k in (
        "beautiful", "big", "small", "oldthing", "cute")] + [expensive]
        for n in _nouns(" ".join(sorted(a.nouns))) for pl in (False, True)]
    b.add("what", 1, [what_c], lambda np: _what(b, np))
