"""Spelling of the offline corpus: French elision and contraction (j'ai, l'école, au, du), the
capital letter and the end punctuation of each language, and English a/an.

Nothing here knows a word of the lexicon: these are the rules that turn the words a template
chose into a sentence as Tatoeba writes it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: The space French typography puts before ``?`` and ``!`` (as many lines of ``fra.txt`` do;
#: :func:`d2lmini.preprocess_nmt` turns it into an ordinary space).
FRENCH_SPACE = "\u202f"

_FR_VOWELS = frozenset("aeiouyàâäéèêëîïôöûüœæ")
# words with a mute h: they elide like vowels (l'homme, l'hôpital, j'habite)
_H_MUET = ("homme", "hôpital", "hôtel", "histoire", "habit")
_CONTRACT = {("à", "le"): "au", ("à", "les"): "aux", ("de", "le"): "du", ("de", "les"): "des"}


def _fr_vowel(word: str) -> bool:
    """Does ``word`` begin with a vowel sound for elision (a vowel or a mute h)?"""
    c = word[:1].lower()
    return c in _FR_VOWELS or (c == "h" and word.lower().startswith(_H_MUET))


_VOWEL = "[aeiouyàâäéèêëîïôöûüœæAEIOUYÀÂÉÈÊÎÔŒ]|[hH](?:" + "|".join(h[1:] for h in _H_MUET) + ")"
_CONTRACT_RE = re.compile(rf"(?<![\w'-])(à|de) (les|le(?! (?:{_VOWEL})))(?= )")
_ELIDE_RE = re.compile(rf"(?<![\w'-])(je|ne|le|la|de|que|ce) (?={_VOWEL})")


def _fr_join(tokens: Sequence[str]) -> str:
    """Join French words: ``à le``/``de le`` contract before a consonant (au, du; aux, des), and
    je, ne, le, la, de, que, ce elide before a vowel (j'ai, l'école, n'est, c'est)."""
    text = " ".join(t for t in tokens if t)
    text = _CONTRACT_RE.sub(lambda m: _CONTRACT[m.group(1), m.group(2)], text)
    return _ELIDE_RE.sub(lambda m: m.group(1)[:-1] + "'", text)


def _cap(s: str) -> str:
    """``s`` with its first letter upper-cased."""
    return s[:1].upper() + s[1:]


#: The end of a sentence of each mood (+ statement, - negation, ? question, ! exclamation).
_EN_END = {"+": ".", "-": ".", "?": "?", "!": "!"}
_FR_END = {"+": ".", "-": ".", "?": FRENCH_SPACE + "?", "!": FRENCH_SPACE + "!"}
_ZH_END = {"+": "。", "-": "。", "?": "？", "!": "！"}


def _en_out(words: Sequence[str], mood: str) -> str:
    """An English sentence: the words, single-spaced, capitalised, with the mood's end."""
    return _cap(" ".join(" ".join(words).split())) + _EN_END[mood]


def _fr_out(tokens: Sequence[str], mood: str) -> str:
    """A French sentence: the words joined (elided, contracted), capitalised, with its end."""
    return _cap(_fr_join(tokens)) + _FR_END[mood]


def _zh_out(text: str, mood: str) -> str:
    """A Chinese sentence: the text and the full-width end of the mood."""
    return text + _ZH_END[mood]


def _a_an(phrase: str) -> str:
    """``a`` or ``an`` before ``phrase`` (an apple, a car)."""
    return ("an " if phrase[:1] in "aeiou" else "a ") + phrase
