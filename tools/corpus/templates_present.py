"""Sentence patterns of the simple present without an article: live, work (in Paris, at the
bank), speak and study (French, history), play (the piano, tennis; also in the progressive),
and know (Tom, my neighbor).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from .clauses import _en_be, _en_do, _fr_clause, _Subj, _zh_clause
from .lexicon import _LANGUAGES, _PLAYABLE, _SUBJECTS_OF_STUDY, _V, _places, _t_en, _t_fr
from .phrases import _vp
from .templates import _MOODS, _Builder, _combos


def _simple(b: _Builder, s: _Subj, verb: str, en_c: str, fr_c: Sequence[str], zh: tuple,
            mood: str) -> tuple[str, str]:
    """A simple-present clause whose complement is given in each language (``zh``: statement,
    negation, question)."""
    v = _V[verb]
    return b.out(_en_do(s, v, en_c, mood),
                 lambda: _fr_clause(s, v.pres, list(fr_c), list(fr_c), mood),
                 lambda: _zh_clause(s.zh, None, *zh, mood), mood)


def _play(b: _Builder, s: _Subj, c: tuple) -> tuple[str, str]:
    """She plays the piano. / Are you playing tennis now?"""
    (en_x, fr_x, zh_x), prog_, time, mood = c
    if not prog_:
        return _simple(b, s, "play", en_x, fr_x, (zh_x, "不" + zh_x, zh_x), mood)
    en = _en_be(s, "playing " + en_x + " " + _t_en(time), mood)
    after = list(fr_x) + [_t_fr(time)]
    return b.out(en, lambda: _fr_clause(s, _V["play"].pres, after, after, mood),
                 lambda: _zh_clause(s.zh, time, "在" + zh_x, "没在" + zh_x, "在" + zh_x, mood),
                 mood)


def _know(b: _Builder, s: _Subj, c: tuple) -> tuple[str, str]:
    """I know Tom. / Je connais Tom. / 我认识汤姆。"""
    vp, mood = c
    o = vp.zh_vp(s)[len(vp.v.zh):]
    return _simple(b, s, "know", vp.en_obj(s), vp.fr_obj(s), ("认识" + o, "不认识" + o, "认识" + o),
                   mood)


def _add_where_and_what(b: _Builder) -> None:
    """live, work, speak, study."""
    people = b.people
    b.add_people("live", 3, people, _combos(_places("live"), _MOODS), lambda s, c: _simple(
        b, s, "live", c[0].en_at, [c[0].fr], ("住在" + c[0].zh, "不住在" + c[0].zh,
                                              "住在" + c[0].zh), c[1]))
    b.add_people("work", 3, people, _combos(_places("work"), _MOODS),
                 lambda s, c: _simple(b, s, "work", c[0].en_at, [c[0].fr], (
                     "在" + c[0].zh + "工作", "不在" + c[0].zh + "工作", "在" + c[0].zh + "工作"),
                     c[1]))
    b.add_people("speak", 3, people, _combos(_LANGUAGES, _MOODS), lambda s, c: _simple(
        b, s, "speak", c[0][0], [c[0][1]], ("会说" + c[0][2], "不会说" + c[0][2],
                                            "会说" + c[0][2]), c[1]), ban="I we")
    b.add_people("study", 2, people, _combos(_SUBJECTS_OF_STUDY, _MOODS), lambda s, c: _simple(
        b, s, "study", c[0][0], c[0][1], ("学习" + c[0][2], "不学习" + c[0][2],
                                          "学习" + c[0][2]), c[1]), ban="I we")


def add_templates(b: _Builder, vps: dict[str, list]) -> None:
    """Add the simple-present family to ``b``, in the order of the corpus."""
    _add_where_and_what(b)
    b.add_people("play", 4, b.people, [(x, p, t, m) for x in _PLAYABLE for p, t in (
        (False, None), (True, None), (True, "now")) for m in _MOODS], partial(_play, b),
        ban="I we")
    b.add_people("know", 4, b.people, _combos(_vp("know", vps["persons_obj"]), _MOODS),
                 partial(_know, b))
