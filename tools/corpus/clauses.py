"""Subjects and clauses of the offline corpus: who a sentence is about (I, Tom, my mother, these
keys) and the word order of a clause in each mood: English with be or do-support, French
negation ne … pas and inversion (A-t-il…, Est-ce que…), Chinese with 不/没 and 吗.
"""

from __future__ import annotations

from collections.abc import Sequence

from .lexicon import _N, _NAMES, _OWNERS, _PRONS, _V, _Name, _Noun, _Verb, _t_zh
from .morphology import _en_out, _zh_out
from .phrases import _NP, _np_en, _np_fr, _np_zh, _owner_ok, _persons, _possessed


class _Subj:
    """A clause subject with what each language needs: English (form, contraction with "be",
    "am/is/are", third person singular), French (words, the pronoun when it is one, person
    0–5 for conjugation, gender, plural) and Chinese; ``ident`` names who it is (I, Tom,
    I:mother) and ``noun`` is its noun, if any."""

    __slots__ = ("be", "contr", "en", "fr", "g", "ident", "key", "keys", "noun", "p", "pl",
                 "pron", "s3", "zh")

    def __init__(self, key: str, en: str, contr: str, be: str, s3: bool, fr: list[str],
                 pron: str | None, p: int, g: str, pl: bool, zh: str, ident: str,
                 noun: _Noun | None = None):
        self.key, self.en, self.contr, self.be, self.s3 = key, en, contr, be, s3
        self.fr, self.pron, self.p, self.g, self.pl = fr, pron, p, g, pl
        self.zh, self.ident, self.noun = zh, ident, noun
        #: what an object or a question must not share with it (see _Builder.add_people)
        self.keys = frozenset({ident, "Q:" + key})


def _pron_subj(key: str) -> _Subj:
    """A pronoun subject (I, you, he, she, we, you guys, they)."""
    p = _PRONS[key]
    return _Subj(key, p.en, p.contr, p.be, p.p == 2, [p.fr], p.fr, p.p, p.g, p.pl, p.zh, key)


def _name_subj(name: _Name) -> _Subj:
    """A first name as subject."""
    return _Subj("name", name.en, "", "is", True, [name.fr], None, 2, name.g, False, name.zh,
                 name.en)


def _np_subj(np: _NP) -> _Subj:
    """A noun phrase as subject (my mother, these keys)."""
    pl = np.plural()
    return _Subj("np", _np_en(np), "", "are" if pl else "is", not pl, _np_fr(np), None,
                 5 if pl else 2, np.noun.g, pl, _np_zh(np), np.ident, np.noun)


def _generic_subj(n: _Noun) -> _Subj:
    """A generic plural subject: cats = les chats = 猫."""
    return _np_subj(_NP("gen", n))


# ---------------------------------------------------------------------------------------------
# clauses
# ---------------------------------------------------------------------------------------------

def _en_be(s: _Subj, comp: str, mood: str) -> str:
    """An English clause with "be": I'm tired. / He isn't tired. / Is Tom tired?"""
    if mood == "?":
        return _en_out([{"am": "Am", "is": "Is", "are": "Are"}[s.be], s.en, comp], mood)
    if mood == "+":
        return _en_out([s.contr or f"{s.en} {s.be}", comp], mood)
    head = "I'm not" if s.be == "am" else f"{s.en} {s.be}n't"
    return _en_out([head, comp], mood)


def _en_do(s: _Subj, v: _Verb, comp: str, mood: str, tense: str = "pres") -> str:
    """An English clause with a lexical verb in the present or the past (``tense="past"``),
    do-support in negations and questions: He likes cats. / I don't have a car. / Did you
    see Tom? ``comp`` is what follows the verb."""
    base = v.en
    if tense == "pres":
        if mood == "+":
            head = [s.en, v.s3 if s.s3 else v.en]
        elif mood == "-":
            head = [s.en, "doesn't" if s.s3 else "don't", base]
        else:
            head = ["Does" if s.s3 else "Do", s.en, base]
    elif mood == "+":
        head = [s.en, v.past]
    elif mood == "-":
        head = [s.en, "didn't", base]
    else:
        head = ["Did", s.en, base]
    return _en_out(head + [comp], mood)


_ETRE = _V["be"].pres
_AVOIR = _V["have"].pres


def _fr_clause(s: _Subj, finite: Sequence[str], after: list[str], after_neg: list[str],
               mood: str) -> list[str]:
    """French word order: ``finite`` is the present of the conjugated verb (je … ils);
    negation ne … pas around it; questions by inversion (A-t-il…, Es-tu…) for a pronoun
    subject other than je, else Est-ce que."""
    f = finite[s.p]
    if mood == "+":
        return s.fr + [f] + after
    if mood == "-":
        return s.fr + ["ne", f, "pas"] + after_neg
    if s.pron and s.pron != "je":
        link = "-t-" if f[-1] in "ae" and s.pron in ("il", "elle") else "-"
        return [f + link + s.pron] + after
    return ["est-ce", "que"] + s.fr + [f] + after


def _pp(v: _Verb, s: _Subj) -> str:
    """A past participle, agreeing with the subject after être (allée, venus)."""
    if not v.etre:
        return v.pp
    return v.pp + ("e" if s.g == "f" else "") + ("s" if s.pl else "")


def _zh_clause(subj: str, time: str | None, pos: str, neg: str, q: str, mood: str) -> str:
    """Chinese: subject, time word, then the predicate of the mood (q gets 吗)."""
    pred = {"+": pos, "-": neg, "?": q + "吗"}[mood]
    return _zh_out(subj + _t_zh(time) + pred, mood)


# ---------------------------------------------------------------------------------------------
# subject inventories
# ---------------------------------------------------------------------------------------------

def _person_subjects(fra: bool, exclude: str = "", pronouns: str = "I you he she we youpl "
                     "they") -> list[_Subj]:
    """Pronouns, names, "my mother", "Tom's father", "this man"; in French also plurals and
    "the boy", so that agreement in number and gender has something to agree with."""
    skip = set(exclude.split())
    subj = [_pron_subj(k) for k in pronouns.split()]
    subj += [_name_subj(n) for n in _NAMES]
    kin = [n for n in _persons(fra) if ("kin" in n.tags or "role" in n.tags)
           and n.key not in skip]
    subj += [_np_subj(np) for np in _possessed(fra, kin)]
    plain = [n for n in _persons(fra) if ("plain" in n.tags or n.key == "teacher")
             and n.key not in skip]
    for n in plain:
        for d in ("this", "that"):
            subj.append(_np_subj(_NP(d, n)))
            if fra:
                subj.append(_np_subj(_NP(d, n, pl=True)))
        if fra:
            subj.append(_np_subj(_NP("the", n)))
            subj.append(_np_subj(_NP("the", n, pl=True)))
    return subj


def _np_subjects(fra: bool, nouns: Sequence[_Noun]) -> list[_Subj]:
    """Animals and things as subjects: my dog, Tom's car, this house, these keys (the car in
    French)."""
    out = [_np_subj(np) for np in _possessed(fra, nouns, plural=False)]
    for n in nouns:
        # my keys = mes clés = 我的钥匙 (Chinese has no plural here)
        out += [_np_subj(_NP("poss", n, owner=o, pl=True)) for o in _OWNERS if _owner_ok(o, n)]
        for d in ("this", "that"):
            out.append(_np_subj(_NP(d, n)))
            out.append(_np_subj(_NP(d, n, pl=True)))
        if fra:
            out.append(_np_subj(_NP("the", n)))
            out.append(_np_subj(_NP("the", n, pl=True)))
    return out


def _age_subjects(fra: bool) -> list[_Subj]:
    """Who is asked their age: I, you, he, she, the names, my son, Tom's friend …"""
    return [_pron_subj(k) for k in ("I", "you", "he", "she")] + \
        [_name_subj(n) for n in _NAMES] + \
        [_np_subj(np) for np in _possessed(fra, [n for n in _persons(fra, "child")] +
                                          [_N["friend"]], plural=False)]
