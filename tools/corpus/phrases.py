"""Noun phrases and verb phrases of the offline corpus in the three languages: a determiner and
a noun (a car, my mother, Tom's dog, two cups of tea, these keys) with French agreement and
Chinese measure words, the lists of noun phrases the templates draw from, and a verb with its
object (call my mother = appeler ma mère = 给我妈妈打电话).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .lexicon import (_ATTR_ADJ, _CONTAINERS, _N, _NAMES, _NUM_EN, _NUM_FR, _NUM_ZH, _OWNERS,
                      _PRONS, _V, _Adj, _Name, _Noun, _nouns, _table, _Verb)
from .morphology import _a_an, _fr_vowel

if TYPE_CHECKING:
    from .clauses import _Subj


class _NP:
    """A noun phrase: a determiner (``a``, ``num``, ``the``, ``this``, ``that``, ``poss``,
    ``nposs`` (Tom's), ``gen`` (generic: cats = les chats), ``part`` (partitive: fish = du
    poisson), ``cont`` (a cup of tea), ``name``, ``fixed``, ``what``) and its noun."""

    __slots__ = ("adj", "cont", "det", "fixed", "k", "name", "noun", "owner", "pl")

    def __init__(self, det: str, noun: _Noun | None = None, adj: _Adj | None = None,
                 k: int = 1, owner: str | None = None, name: _Name | None = None,
                 pl: bool = False, fixed: tuple | None = None, cont: str | None = None):
        self.det, self.noun, self.adj, self.k, self.owner = det, noun, adj, k, owner
        self.name, self.pl, self.fixed, self.cont = name, pl, fixed, cont

    def plural(self) -> bool:
        """Is the phrase plural (two cars, cats, my keys; not: fish, water)?"""
        return self.pl or self.det == "num" or (self.det in ("gen", "part")
                                                and not self.noun.mass)

    def with_owner(self, owner: str) -> _NP:
        """The same phrase with another possessor."""
        return _NP(self.det, self.noun, self.adj, self.k, owner, self.name, self.pl,
                   self.fixed, self.cont)

    @property
    def ident(self) -> str:
        """Who or what the phrase names (to avoid "Tom knows Tom")."""
        if self.det == "name":
            return self.name.en
        if self.det in ("poss", "nposs"):
            owner = self.owner if self.det == "poss" else self.name.en
            return f"{owner}:{self.noun.key}"
        return f"{self.det}:{self.noun.key if self.noun else self.fixed[0]}"


def _fixed(en: str, fr: str, zh: str) -> _NP:
    """A fixed noun phrase (the radio = la radio = 广播)."""
    return _NP("fixed", fixed=(en, fr.split(), zh))


#: Fixed noun phrases by key (English, French, Chinese).
_F = {key: _fixed(en, fr, zh) for key, en, fr, zh in _table("fixed")}


def _np_en(np: _NP) -> str:
    """The English of ``np``."""
    d = np.det
    if d == "name":
        return np.name.en
    if d == "fixed":
        return np.fixed[0]
    n = np.noun
    if d == "cont":
        c = _CONTAINERS[np.cont]
        return (f"a {c[0]}" if np.k == 1 else f"{_NUM_EN[np.k]} {c[1]}") + " of " + n.en
    pl = np.plural()
    head = n.en_pl if pl else n.en
    if np.adj:
        head = np.adj.en + " " + head
    if d == "a":
        return _a_an(head)
    if d == "num":
        return f"{_NUM_EN[np.k]} {head}"
    if d == "the":
        return "the " + head
    if d == "this":
        return ("these " if pl else "this ") + head
    if d == "that":
        return ("those " if pl else "that ") + head
    if d == "poss":
        return _PRONS[np.owner].own_en + " " + head
    if d == "nposs":
        return f"{np.name.en}'s {head}"
    if d == "what":
        return "what " + (head if pl else _a_an(head))
    return head  # gen, part


def _fr_body(n: _Noun, adj: _Adj | None, pl: bool) -> list[str]:
    """The French noun with its adjective before or after it, agreeing."""
    noun = n.fr_pl if pl else n.fr
    if adj is None:
        return [noun]
    if adj.pos == "pre":
        return [adj.agree(n.g, pl, _fr_vowel(noun)), noun]
    return [noun, adj.agree(n.g, pl)]


def _fr_determiner(np: _NP, body: list[str], pl: bool, neg: bool) -> list[str]:
    """The French determiner of ``np`` (before ``body``) for a common noun; ``neg``: the object
    of a negated verb."""
    d, g = np.det, np.noun.g
    definite = "les" if pl else ("le" if g == "m" else "la")
    if d == "a":
        return ["de"] if neg else ["un" if g == "m" else "une"]
    if d == "num":
        return [_NUM_FR[np.k]]
    if d in ("the", "gen", "nposs"):
        return [definite]
    if d == "part":
        if neg:
            return ["de"]
        return ["des"] if pl else ["de", definite]  # de le → du, de la, de l'
    if d in ("this", "that"):
        if pl:
            return ["ces"]
        if g == "f":
            return ["cette"]
        return ["cet" if _fr_vowel(body[0]) else "ce"]
    if d == "poss":
        m, f, p = _PRONS[np.owner].own_fr
        if pl:
            return [p]
        return [m if g == "m" or _fr_vowel(body[0]) else f]  # mon amie, mon école
    if d == "what":
        return [("quels" if g == "m" else "quelles") if pl else ("quel" if g == "m" else
                                                               "quelle")]
    raise ValueError(d)


def _np_fr(np: _NP, neg: bool = False) -> list[str]:
    """The French words of ``np``; ``neg``: the object of a negated verb (un, des, du → de)."""
    d = np.det
    if d == "name":
        return [np.name.fr]
    if d == "fixed":
        return list(np.fixed[1])
    n = np.noun
    if d == "cont":
        c = _CONTAINERS[np.cont]
        art = _NUM_FR[np.k] if np.k > 1 else ("un" if c[4] == "m" else "une")
        return [art, c[2] if np.k == 1 else c[3], "de", n.fr]
    pl = np.plural()
    body = _fr_body(n, np.adj, pl)
    words = _fr_determiner(np, body, pl, neg) + body
    return words + ["de", np.name.fr] if d == "nposs" else words


def _np_zh(np: _NP, bare: bool = False) -> str:
    """The Chinese of ``np``; ``bare`` drops 一 + measure word (negations, questions)."""
    d = np.det
    if d == "name":
        return np.name.zh
    if d == "fixed":
        return np.fixed[2]
    n = np.noun
    if d == "cont":
        return n.zh if bare else ("一" if np.k == 1 else _NUM_ZH[np.k]) + "杯" + n.zh
    head = (np.adj.zh_attr if np.adj else "") + n.zh
    if d == "a":
        return head if bare else "一" + n.cl + head
    if d == "num":
        return _NUM_ZH[np.k] + n.cl + head
    if d == "this":
        return ("这些" if np.pl else "这" + n.cl) + head
    if d == "that":
        return ("那些" if np.pl else "那" + n.cl) + head
    if d == "poss":
        own = _PRONS[np.owner]
        return own.zh + ("" if n.kin and not own.pl else "的") + head
    if d == "nposs":
        return np.name.zh + "的" + head
    return head  # the, gen, part


def _adapt(np: _NP, s: _Subj) -> _NP:
    """"your" is votre/vos, 你们的 when the subject is "you guys" (vous)."""
    if s.key == "youpl" and np.det == "poss" and np.owner == "you":
        return np.with_owner("youpl")
    return np


# ---------------------------------------------------------------------------------------------
# lists of noun phrases
# ---------------------------------------------------------------------------------------------

def _persons(fra: bool, tag: str = "") -> list[_Noun]:
    """The nouns of people (with ``tag``); brother and sister in French only."""
    return [n for n in _N.values() if "person" in n.tags and (fra or "fra" not in n.tags)
            and (not tag or tag in n.tags)]


def _owner_ok(owner: str | _Name, n: _Noun) -> bool:
    """No "our wife" or "our jacket": "my wife", "his wife", "her husband", "Tom's wife",
    "Mary's husband", "our car"."""
    if "personal" in n.tags and owner in ("we", "they"):
        return False
    if "spouse" not in n.tags:
        return True
    g = owner.g if isinstance(owner, _Name) else {"I": "", "you": ""}.get(owner, "x")
    if owner in ("he", "she"):
        g = "m" if owner == "he" else "f"
    if g == "x":
        return False
    return g == "" or g == ("m" if n.key == "wife" else "f")


def _possessed(fra: bool, nouns: Sequence[_Noun], plural: bool = True) -> list[_NP]:
    """my/your/his… and Tom's … for each noun; plurals where French agreement shows them."""
    out = []
    for n in nouns:
        for o in _OWNERS:
            if _owner_ok(o, n):
                out.append(_NP("poss", n, owner=o))
                if plural and fra and "pl" in n.tags:
                    out.append(_NP("poss", n, owner=o, pl=True))
        for name in _NAMES:
            if _owner_ok(name, n):
                out.append(_NP("nposs", n, name=name))
    return out


def _a(keys: str, adjs: bool = False) -> list[_NP]:
    """a/an + noun, and with each fitting attributive adjective when ``adjs``."""
    out = []
    for n in _nouns(keys):
        out.append(_NP("a", n))
        if adjs:
            out += [_NP("a", n, adj=a) for a in _ATTR_ADJ if n.key in a.nouns]
    return out


def _num(keys: str, ks: Sequence[int] = (2, 3), adjs: bool = False) -> list[_NP]:
    """two/three + noun (and with an adjective when ``adjs``)."""
    out = []
    for n in _nouns(keys):
        for k in ks:
            out.append(_NP("num", n, k=k))
            if adjs:
                out += [_NP("num", n, adj=a, k=k) for a in _ATTR_ADJ if n.key in a.nouns]
    return out


def _poss(keys: str, pl: bool = False) -> list[_NP]:
    """my/your/his/her/our/their + noun, where the owner fits."""
    return [_NP("poss", n, owner=o, pl=pl) for n in _nouns(keys) for o in _OWNERS
            if _owner_ok(o, n)]


def _dem(keys: str, which: str = "this that") -> list[_NP]:
    """this/that + noun."""
    return [_NP(d, n) for n in _nouns(keys) for d in which.split()]


def _names() -> list[_NP]:
    """The first names as noun phrases."""
    return [_NP("name", name=n) for n in _NAMES]


def _kin(fra: bool) -> list[_NP]:
    """People one calls, helps, waits for: my mother, Tom's father …"""
    ns = [n for n in _persons(fra) if "kin" in n.tags or "role" in n.tags]
    return [np for np in _possessed(fra, ns, plural=False)]


def _cont(drinks: str = "tea coffee water milk juice", ks: Sequence[int] = (1,)) -> list[_NP]:
    """a cup of tea, two glasses of water …"""
    out = []
    for n in _nouns(drinks):
        c = "cup" if n.key in ("tea", "coffee") else "glass"
        out += [_NP("cont", n, k=k, cont=c) for k in ks]
    return out


# ---------------------------------------------------------------------------------------------
# verb phrases
# ---------------------------------------------------------------------------------------------

class _VP:
    """A verb and its object (``np``), or a fixed phrase (``en``, ``fr``, ``zh`` given: go
    home = rentrer à la maison = 回家) used in the infinitive only."""

    __slots__ = ("en", "fr", "np", "verb", "zh", "zhv")

    def __init__(self, verb: str, np: _NP | None = None, zhv: str = "", en: str = "",
                 fr: Sequence[str] = (), zh: str = ""):
        self.verb, self.np, self.zhv, self.en, self.fr, self.zh = verb, np, zhv, en, fr, zh

    @property
    def v(self) -> _Verb:
        """The verb."""
        return _V[self.verb]

    def keys(self, owner_too: bool = False) -> frozenset:
        """Who the object names, to keep it apart from the subject."""
        if self.np is None:
            return frozenset()
        keys = {self.np.ident}
        if self.np.det == "nposs":  # Tom is calling his mother, not Tom's mother
            keys.add(self.np.name.en)
        if owner_too and self.np.det == "poss":  # not: I know my father
            keys.add(self.np.owner)
        return frozenset(keys)

    def en_obj(self, s: _Subj | None) -> str:
        """What follows the verb in English, with its particle (for, to)."""
        o = _np_en(_adapt(self.np, s) if s else self.np)
        return (self.v.prep + " " + o) if self.v.prep else o

    def en_form(self, s: _Subj | None, form: str = "en") -> str:
        """The English verb phrase; ``form``: en (base), s3, ing or past."""
        if self.np is None:
            return self.en
        return getattr(self.v, form) + " " + self.en_obj(s)

    def fr_obj(self, s: _Subj | None, neg: bool = False) -> list[str]:
        """The French object (after a negated verb when ``neg``)."""
        if self.np is None:
            return list(self.fr[1:])
        return _np_fr(_adapt(self.np, s) if s else self.np, neg)

    def fr_inf(self, s: _Subj | None, neg: bool = False) -> list[str]:
        """The French infinitive phrase (acheter une voiture; negated: acheter de voiture)."""
        if self.np is None:
            return list(self.fr)
        return [self.v.inf] + self.fr_obj(s, neg)

    def zh_vp(self, s: _Subj | None, form: str = "pres", bare: bool = False) -> str:
        """Chinese verb + object; ``form``: pres, past (V了O, 给O打了电话), imp (帮帮O)."""
        if self.np is None:
            return self.zh
        # one takes 出租车, not 一辆出租车
        o = _np_zh(_adapt(self.np, s) if s else self.np, bare or self.verb == "take")
        if self.verb == "call":
            return "给" + o + ("打了电话" if form == "past" else "打电话")
        v = self.zhv or self.v.zh
        if form == "past":
            return v + "了" + o
        if form == "imp" and self.verb in ("help", "wait"):
            v = v + v
        return v + o

    @property
    def negatable(self) -> bool:
        """Can the clause be negated? Not with a number or a cup of (I didn't eat two …)."""
        return self.np is None or self.np.det not in ("num", "cont")


def _vp(verb: str, nps: Sequence[_NP], zhv: str = "") -> list[_VP]:
    """``verb`` with each of ``nps`` (``zhv``: another Chinese verb, 喝汤)."""
    return [_VP(verb, np, zhv) for np in nps]
