"""The verb phrases the verb families share: each verb with the objects it takes (eat an
apple, read the newspaper, call my mother, take the bus) and the infinitive phrases of want to
and going to (go to the park, play the piano, learn French, live in Paris).
"""

from __future__ import annotations

from .lexicon import (_ANIMALS, _DRINKS, _HAVEABLE, _LANGUAGES, _MASS_FOOD, _N, _PLAYABLE,
                      _nouns, _places)
from .phrases import _NP, _VP, _F, _a, _cont, _dem, _kin, _names, _num, _poss, _vp

_THINGS_LOST = "phone wallet umbrella watch bag hat book pen"


def _food_vps() -> dict[str, list[_VP]]:
    """Eating and drinking: eat an apple, eat my cake, eat soup (喝汤), drink a cup of tea."""
    return {
        "eat_a": _vp("eat", _a("apple banana sandwich orange pear egg")),
        "eat_poss": _vp("eat", _poss("apple orange sandwich cake")) +
        _vp("eat", _poss("soup"), "喝"),
        "eat_dem": _vp("eat", _dem("apple cake sandwich")),
        "eat_part": _vp("eat", [_NP("part", n) for n in _nouns(_MASS_FOOD)]) +
        [_VP("eat", _NP("part", _N["soup"]), "喝")],
        "drink_part": _vp("drink", [_NP("part", n) for n in _nouns(_DRINKS)]),
        "drink_poss": _vp("drink", _poss("tea coffee milk juice beer wine")),
        "drink_cont": _vp("drink", _cont("tea coffee water milk juice beer wine")),
    }


def _object_vps(fra: bool) -> dict[str, list[_VP]]:
    """The other verbs with an object, by verb (``help_``, ``open_``: Python's names)."""
    persons_obj = _names() + _kin(fra)
    return {
        "persons_obj": persons_obj,
        "read": _vp("read", _a("book letter") + [_F["newspaper"]] + _poss("book letter") +
                    _dem("book letter")),
        "write": _vp("write", _a("letter book")),
        "watch": _vp("watch", [_F["tv"]] + _a("movie")),
        "listen": _vp("listen", [_NP("part", _N["music"]), _F["radio"]]),
        "look": _vp("look", _poss(_THINGS_LOST + " cat dog") + _poss("key", pl=True) +
                    persons_obj),
        "wait": _vp("wait", persons_obj + [_F["bus"]]),
        "make": _vp("make", [_F["dinner"], _F["lunch"], _F["breakfast"]]),
        "clean": _vp("clean", _poss("room") + [_F["kitchen"], _F["house"]]),
        "wash": _vp("wash", _poss("car") + [_F["thecar"], _F["dishes"]]),
        "call": _vp("call", persons_obj),
        "help_": _vp("help", persons_obj),
        "buy_a": _vp("buy", _a(_HAVEABLE + " " + _ANIMALS, adjs=True)),
        "buy_num": _vp("buy", _num(_HAVEABLE + " book")),
        "buy_dem": _vp("buy", _dem(_HAVEABLE + " book")),
        "sell": _vp("sell", _poss("car house bike computer phone watch")),
        "see": _vp("see", _a(_ANIMALS) + persons_obj) + _vp("see", _a("movie"), "看"),
        "find": _vp("find", _poss(_THINGS_LOST + " cat dog") + _poss("key", pl=True)),
        "lose": _vp("lose", _poss(_THINGS_LOST) + _poss("key", pl=True)),
        "open_": _vp("open", [_F["door"], _F["window"]] + _poss("bag")),
        "close": _vp("close", [_F["door"], _F["window"]]),
        "meet": _vp("meet", persons_obj),
        "take": _vp("take", [_F["bus"], _F["train"]] + _a("taxi")),
    }


def _infinitive_vps() -> dict[str, list[_VP]]:
    """Fixed infinitive phrases (sleep, go home, play the piano, learn French, live in Paris)
    and "read this book / the newspaper"."""
    return {
        "intrans": [_VP("", en=en, fr=[fr], zh=zh) for en, fr, zh in [
            ("sleep", "dormir", "睡觉"), ("swim", "nager", "游泳"), ("dance", "danser", "跳舞"),
            ("sing", "chanter", "唱歌")]],
        "go_vps": [_VP("", en="go home", fr=["rentrer", "à la maison"], zh="回家")] +
        [_VP("", en="go " + p.en_to, fr=["aller", p.fr], zh="去" + p.zh) for p in _places("go")],
        "play_vps": [_VP("", en="play " + en, fr=["jouer"] + fr, zh=zh)
                     for en, fr, zh in _PLAYABLE],
        "learn_vps": [_VP("", en="learn " + en, fr=["apprendre", "le", fr], zh="学" + zh)
                      for en, fr, zh in _LANGUAGES],
        "live_vps": [_VP("", en="live " + p.en_at, fr=["habiter", p.fr], zh="住在" + p.zh)
                     for p in _places("live")],
        "read_some": _vp("read", _dem("book")) + [_VP("read", _F["newspaper"])],
    }


def _verb_phrases(fra: bool) -> dict[str, list[_VP]]:
    """Every shared list of verb phrases by name (``eat_a``, ``go_vps``, ``persons_obj`` …)."""
    return {**_food_vps(), **_object_vps(fra), **_infinitive_vps()}
