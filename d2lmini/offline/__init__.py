"""The offline corpus: a small bilingual grammar of English–French and English–Chinese that
generates sentence pairs for readers without the Tatoeba data.

The translation chapters train on Tatoeba pairs. A reader without the data gets corpora written
by this project instead; the hand-written files in ``d2lmini/corpora/`` hold a few hundred pairs,
too few to train a model on thousands of pairs and to test it on held-out sentences it has never
seen. :func:`generate_pairs` makes as many pairs as needed from a grammar written here: a lexicon
of a few hundred words per language and some thirty sentence patterns (be + adjective, place,
profession or age; have, like, want, eat and drink; progressive, past and near-future verbs;
go, come, live, work, speak, study, play, can; know, wait for, there is, this is, weather,
imperatives, exclamations), each in the affirmative, the negative and as a yes/no question.
:mod:`d2lmini.data` (``read_data_nmt``, ``read_data_cmn``) merges them with the hand-written
pairs; this package is not part of the ``d2l`` namespace (``import d2lmini.offline``).

Every English sentence has exactly one translation, built by the grammar of the target
language rather than word by word: French agreement of adjectives and past participles in
gender and number, elision (``j'aime``, ``l'homme``, ``n'est``), contraction (``au``, ``du``),
``de`` after negation, inversion with ``-t-``, ``mon`` before a vowel, ``cet``, ``bel``;
Chinese measure words (一本书, 两只猫), 很 + adjective, 不/没 negation, 了, 吗, 在 + place and
time words after the subject. The language is closed and regular, so a model can learn it from
a few thousand pairs, and a held-out sentence is a new combination of known words.

Sentences look like Tatoeba's: capitalised, punctuation attached, French with a narrow
no-break space (U+202F) before ``?`` and ``!``, Chinese with full-width ``。？！``.

The package, from the letters up: ``morphology`` (spelling: elision, capitals, end
punctuation), ``lexicon`` (the words, read from the TSV tables in ``tables/``), ``phrases``
(noun and verb phrases), ``clauses`` (subjects and the word order of each mood),
``verb_phrases`` (the objects each verb takes), ``templates`` (a pattern as the product of
its slots) and one module per family of patterns (``templates_be``, ``templates_objects``,
``templates_verbs``, ``templates_present``, ``templates_other``), and ``sampler`` (the grammar
of a pair and :func:`generate_pairs`).
"""

from .morphology import FRENCH_SPACE  # noqa: F401
from .sampler import PAIRS, WRITTEN_FILES, generate_pairs, written_lines  # noqa: F401

__all__ = ["generate_pairs"]
