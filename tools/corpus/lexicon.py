"""The lexicon of the offline corpus: nouns, names, pronouns, verbs, adjectives, places,
activities, professions and the other word lists, read from the TSV files in ``tables/``
(shipped as package data), and the classes that hold one word of each kind.

A table has one row per word, ``#`` lines are comments (the first names the columns), cells are
separated by tabs and ``-`` is an empty cell. The order of the rows matters: the templates
enumerate their sentences in it, so reordering a table changes the generated corpus.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_TABLES = Path(__file__).with_name("tables")


@cache
def _table(name: str) -> tuple[tuple[str, ...], ...]:
    """The rows of ``tables/<name>.tsv``: comment lines skipped, ``-`` cells empty."""
    rows = []
    for line in (_TABLES / f"{name}.tsv").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            rows.append(tuple("" if c == "-" else c for c in line.split("\t")))
    return tuple(rows)


class _Noun:
    """A noun: English singular/plural, French singular/plural and gender, Chinese word and
    measure word, and tags: its kind (person, animal, thing, food, drink); ``mass`` (du/de la,
    no plural); for people ``kin`` (我妈妈 without 的) or ``role`` (my teacher) or ``plain``
    (this man), ``pl`` (used in the plural), ``child`` (I have a son), ``spouse`` (my wife, not
    our wife), ``fra`` (French only: brother and sister have no neutral Chinese word);
    ``personal`` things are not owned by "we" or "they" (our car, not our jacket)."""

    __slots__ = ("cl", "en", "en_pl", "fr", "fr_pl", "g", "key", "kin", "mass", "tags", "zh")

    def __init__(self, key: str, en: str, en_pl: str, fr: str, fr_pl: str, g: str, zh: str,
                 cl: str, tags: str):
        self.key, self.en, self.en_pl, self.fr, self.fr_pl = key, en, en_pl, fr, fr_pl
        self.g, self.zh, self.cl = g, zh, cl
        self.tags = frozenset(tags.split())
        self.mass = "mass" in self.tags
        self.kin = "kin" in self.tags


#: The nouns by key: the last English word (orange juice: ``juice``).
_N = {r[0].split()[-1]: _Noun(r[0].split()[-1], *r) for r in _table("nouns")}


def _nouns(keys: str) -> list[_Noun]:
    """The nouns of the space-separated ``keys``, in that order."""
    return [_N[k] for k in keys.split()]


class _Name:
    """A first name: the same in English and French, its Chinese transcription, its gender."""

    __slots__ = ("en", "fr", "g", "zh")

    def __init__(self, en: str, zh: str, g: str):
        self.en = self.fr = en
        self.zh, self.g = zh, g


_NAMES = [_Name(*r) for r in _table("names")]


class _Pron:
    """A personal pronoun subject and the possessives that go with it."""

    __slots__ = ("be", "contr", "en", "fr", "g", "key", "own_en", "own_fr", "p", "pl", "zh")

    def __init__(self, key: str, en: str, contr: str, be: str, fr: str, p: int, g: str,
                 pl: bool, zh: str, own_en: str, own_fr: str):
        self.key, self.en, self.contr, self.be, self.fr, self.p = key, en, contr, be, fr, p
        self.g, self.pl, self.zh, self.own_en = g, pl, zh, own_en
        self.own_fr = tuple(own_fr.split())  # masculine, feminine, plural


_PRONS = {r[0]: _Pron(*r[:5], int(r[5]), r[6], r[7] == "yes", *r[8:])
          for r in _table("pronouns")}
_OWNERS = ("I", "you", "he", "she", "we", "they")  # possessors of noun phrases ("your" = ton)

_NUM_EN = {2: "two", 3: "three", 4: "four", 5: "five"}
_NUM_FR = {2: "deux", 3: "trois", 4: "quatre", 5: "cinq"}
_NUM_ZH = {2: "两", 3: "三", 4: "四", 5: "五"}

_TIMES = {  # English, French, Chinese (after the subject)
    "today": ("today", "aujourd'hui", "今天"),
    "now": ("now", "maintenant", "现在"),
    "tomorrow": ("tomorrow", "demain", "明天"),
    "yesterday": ("yesterday", "hier", "昨天"),
}


def _t_en(time: str | None) -> str:
    """The English time word (or nothing)."""
    return _TIMES[time][0] if time else ""


def _t_fr(time: str | None) -> str:
    """The French time word (or nothing)."""
    return _TIMES[time][1] if time else ""


def _t_zh(time: str | None) -> str:
    """The Chinese time word (or nothing)."""
    return _TIMES[time][2] if time else ""


class _Verb:
    """English forms (base, 3rd person singular, -ing, past, and a particle such as "for"),
    French present (je … ils), past participle and auxiliary, and the Chinese verb."""

    __slots__ = ("en", "etre", "imp", "inf", "ing", "past", "pp", "prep", "pres", "s3", "zh")

    def __init__(self, en: str, fr: str, zh: str):
        parts = en.split()
        self.en, self.s3, self.ing, self.past = parts[:4]
        self.prep = " ".join(parts[4:])
        inf, *rest = fr.split()
        self.inf = inf
        if len(rest) >= 7:
            self.pres, self.pp = rest[:6], rest[6]
        else:  # a regular -er verb: the participle follows, then optional "être"
            stem = inf[:-2]
            nous = stem + ("eons" if stem.endswith("g") else "ons")
            self.pres = [stem + "e", stem + "es", stem + "e", nous, stem + "ez", stem + "ent"]
            self.pp = stem + "é"
        self.etre = fr.endswith(" être")
        self.zh = zh
        tu = self.pres[1]
        self.imp = tu[:-1] if tu.endswith(("es", "as")) else tu  # mange, va, bois, ouvre


_V = {r[0]: _Verb(*r[1:]) for r in _table("verbs")}


class _Adj:
    """An adjective: French forms (masculine, feminine, masculine plural, feminine plural and
    the masculine singular before a vowel: bel, vieil, nouvel) and position (``pre``/``post``);
    Chinese attributive form and predicative forms for a statement, a negation and a
    question (before 吗); ``very`` when it takes "very"/très/非常 (Chinese 很 → 非常)."""

    __slots__ = ("avoir", "en", "fr", "key", "nouns", "pos", "times", "very", "zh_attr",
                 "zh_neg", "zh_pos", "zh_q")

    def __init__(self, key: str, en: str, fr: str, pos: str = "post", zh_attr: str = "",
                 zh_pos: str = "", zh_neg: str = "", zh_q: str = "", avoir: bool = False,
                 very: bool = False, times: str = "", nouns: str = ""):
        self.key, self.en = key, en
        forms = [f.replace("_", " ") for f in fr.split()]
        if len(forms) == 1:
            forms = forms * 4
        elif len(forms) == 2:  # calme calmes
            forms = [forms[0], forms[0], forms[1], forms[1]]
        if len(forms) == 4:
            forms.append(forms[0])
        self.fr = forms
        self.pos, self.zh_attr, self.zh_pos, self.zh_neg, self.zh_q = pos, zh_attr, zh_pos, \
            zh_neg, zh_q
        self.avoir, self.very = avoir, very
        self.times = tuple(times.split())
        self.nouns = frozenset(nouns.split())

    def agree(self, g: str, pl: bool, before_vowel: bool = False) -> str:
        """The French form for a noun of gender ``g`` and number ``pl``."""
        if pl:
            return self.fr[2 if g == "m" else 3]
        if g == "m":
            return self.fr[4] if before_vowel else self.fr[0]
        return self.fr[1]

    def zh_very(self) -> str:
        """The Chinese statement with 非常 instead of 很."""
        return "非常" + self.zh_pos[1:]


def _adjectives(use: str) -> list[_Adj]:
    """The adjectives of one use in ``tables/adjectives.tsv`` (person, np or attr)."""
    return [_Adj(*r[1:9], r[9] == "yes", r[10] == "yes", *r[11:])
            for r in _table("adjectives") if r[0] == use]


#: Adjectives said of people (he's tired; I'm hungry = j'ai faim, 我饿了).
_PERSON_ADJ = _adjectives("person")
#: Adjectives said of animals and things (my car is red; this dog is small).
_NP_ADJ = _adjectives("np")
#: Adjectives inside a noun phrase (a new car = une nouvelle voiture = 一辆新车).
_ATTR_ADJ = _adjectives("attr")
_ATTR = {a.key: a for a in _ATTR_ADJ}


class _Place:
    """A place: English with its preposition (at the park; to the park), French, Chinese, and
    tags naming the patterns that use it."""

    __slots__ = ("en_at", "en_to", "fr", "key", "tags", "zh")

    def __init__(self, key: str, en_at: str, fr: str, zh: str, tags: str):
        self.key, self.en_at, self.fr, self.zh = key, en_at, fr, zh
        self.tags = frozenset(tags.split())
        self.en_to = "to " + en_at.split(" ", 1)[1]  # at the park: to the park


_PLACES = {r[0]: _Place(*r) for r in _table("places")}


def _places(tag: str) -> list[_Place]:
    """The places tagged ``tag``."""
    return [p for p in _PLACES.values() if tag in p.tags]


#: Where things are (my keys are on the table; there's a cat under the bed): English, French
#: words, Chinese (the place first with 上/里/底下: 桌子上有一本书) and what can be found there.
_LOCATIONS = [(r[1], r[2].split(), r[3], frozenset(r[4].split())) for r in _table("locations")]

#: English, French (a noun: le français), Chinese.
_LANGUAGES = [tuple(r) for r in _table("languages")]
_SUBJECTS_OF_STUDY = [(en, ["le", fr], zh) for en, fr, zh in _LANGUAGES] + [
    (en, fr.split(), zh) for en, fr, zh in _table("school_subjects")]

#: Games and instruments: English object, French (jouer + à/de), Chinese verb + object.
_PLAYABLE = [(en, fr.split(), zh) for en, fr, zh in _table("playable")]

#: Skills for "can" (savoir + infinitive, 会): English, French infinitive phrase, Chinese.
_SKILLS = [(en, fr.split(), zh) for en, fr, zh in _table("skills")] + [
    ("play " + en, ["jouer"] + fr, zh) for en, fr, zh in _PLAYABLE]


class _Act:
    """An activity without an object (he's sleeping = il dort = 他在睡觉) and where it is
    done."""

    __slots__ = ("en", "fr", "places", "who", "zh")

    def __init__(self, en: str, fr: str, zh: str, places: str, who: str = "person"):
        self.en, self.zh, self.who = en, zh, who
        inf, *forms = fr.split()
        self.fr = forms if forms else _Verb("x x x x", inf, "").pres
        self.places = [_PLACES[k] for k in places.split()]


_ACTIVITIES = [_Act(*r) for r in _table("activities")]

#: English singular and plural, French forms (m f mp fp), Chinese.
_PROFESSIONS = [(r[0], r[1], r[2].split(), r[3]) for r in _table("professions")]

_AGES = [tuple(r) for r in _table("ages")]

_ANIMALS = "dog cat bird horse rabbit mouse duck"
_HAVEABLE = "car bike house computer phone watch umbrella bag hat pen wallet jacket"
_COUNT_FOOD = "apple orange egg banana sandwich pear tomato carrot"
_MASS_FOOD = "bread rice meat fish cheese chicken chocolate"
_DRINKS = "tea coffee milk water juice beer wine"
#: What animals eat and drink (generic: cats like fish).
_DIET = {r[0]: (r[1], r[2]) for r in _table("diet")}
_ACTIVITY_GERUNDS = [(en, fr.split(), zh) for en, fr, zh in _table("gerunds")]

_CONTAINERS = {  # a cup of tea, a glass of water: English, English plural, French, gender
    "cup": ("cup", "cups", "tasse", "tasses", "f"),
    "glass": ("glass", "glasses", "verre", "verres", "m"),
}
