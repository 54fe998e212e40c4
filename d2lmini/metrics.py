"""Scoring translations: BLEU and chrF as the field computes them (sacreBLEU), and d2l's
sentence-level BLEU variant, kept as a teaching formula.

:func:`corpus_bleu` and :func:`corpus_chrf` wrap sacreBLEU (Post, 2018): corpus-level counts, a
0–100 score and a *signature* that says how the number was computed (tokenizer, case, smoothing,
number of references, version). Only scores with the same signature on the same test set are
comparable. :func:`bleu` is d2l's per-sentence formula, which weights the n-gram precisions by
``1/2**n`` and is *not* the BLEU of Papineni et al.; the book shows both.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Sequence
from dataclasses import dataclass
from .utils import check_positive_int

__all__ = ["bleu", "MetricResult", "BLEU_CONVENTIONS", "CHRF_CONVENTIONS", "corpus_bleu",
           "corpus_chrf"]

#: How the book scores each language pair with BLEU, declared once: the chapters, the
#: benchmarks and ``scripts/train_full.py`` pass ``pair=`` and so report the same signature.
#: French is already split into tokens and lower-cased by ``preprocess_nmt`` (``tok:none``: split
#: at spaces, as the model's tokens are); Chinese is scored per character (``tok:zh``).
BLEU_CONVENTIONS: dict[str, dict[str, object]] = {
    "fra-eng": {"tokenize": "none", "lowercase": False},
    "cmn-eng": {"tokenize": "zh", "lowercase": False},
}

#: chrF per language pair: sacreBLEU's default character 6-grams for French; for Chinese, where
#: one character is about one word, character n-grams up to 3 (a 6-gram of characters is
#: already a phrase, so the default would score Chinese like a word 6-gram F-score).
CHRF_CONVENTIONS: dict[str, dict[str, int]] = {
    "fra-eng": {"char_order": 6, "word_order": 0},
    "cmn-eng": {"char_order": 3, "word_order": 0},
}


def _convention(table: dict[str, dict], pair: str | None, given: dict[str, object],
                defaults: dict[str, object]) -> dict[str, object]:
    """The keyword arguments of a score: the pair's convention, or the caller's (not both)."""
    if pair is None:
        return {key: given[key] if given[key] is not None else defaults[key] for key in given}
    if not isinstance(pair, str) or pair not in table:
        raise ValueError(f"pair must be one of {sorted(table)}; got {pair!r}")
    clash = [key for key, value in given.items() if value is not None]
    if clash:
        raise ValueError(f"pass either pair={pair!r} or {', '.join(clash)}, not both: the "
                         "convention of a pair is declared once, in the table")
    return dict(table[pair])


def bleu(pred_seq: str, label_seq: str, k: int) -> float:
    """d2l's sentence BLEU of one prediction against one reference (made safe).

    ``exp(min(0, 1 - len_label / len_pred)) * prod_{n=1..k} p_n ** (1 / 2**n)``, where ``p_n``
    is the clipped n-gram precision. Orders ``n`` longer than the prediction have no n-grams and
    are skipped (d2l divides by zero there); an empty prediction scores 0. This is d2l's variant,
    in [0, 1]: the BLEU of the literature is :func:`corpus_bleu`.
    """
    check_positive_int(k, "k")
    pred_tokens, label_tokens = pred_seq.split(), label_seq.split()
    len_pred, len_label = len(pred_tokens), len(label_tokens)
    if len_pred == 0:
        return 0.0
    score = math.exp(min(0.0, 1 - len_label / len_pred))
    for n in range(1, min(k, len_pred) + 1):
        num_matches, label_subs = 0, collections.defaultdict(int)
        for i in range(len_label - n + 1):
            label_subs[" ".join(label_tokens[i: i + n])] += 1
        for i in range(len_pred - n + 1):
            if label_subs[" ".join(pred_tokens[i: i + n])] > 0:
                num_matches += 1
                label_subs[" ".join(pred_tokens[i: i + n])] -= 1
        score *= math.pow(num_matches / (len_pred - n + 1), math.pow(0.5, n))
    return score


@dataclass(frozen=True)
class MetricResult:
    """A corpus-level score from sacreBLEU.

    Attributes:
        name: ``'BLEU'`` or ``'chrF'``.
        score: the score in [0, 100].
        signature: sacreBLEU's signature, e.g. ``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|
            version:2.6.0``: two scores are comparable only when their signatures (and test
            sets) agree.
        summary: sacreBLEU's one-line summary (for BLEU: the four n-gram precisions, the
            brevity penalty and the lengths).
    """

    name: str
    score: float
    signature: str
    summary: str

    def __float__(self) -> float:
        return self.score

    def __str__(self) -> str:
        return f"{self.summary} [{self.signature}]"


def _streams(predictions: Sequence[str],
             references: Sequence[str | Sequence[str]]) -> list[list[str | None]]:
    """Check the inputs; return sacreBLEU's reference streams (stream j holds the j-th
    reference of every sentence, ``None`` where a sentence has fewer)."""
    if isinstance(predictions, str) or not isinstance(predictions, Sequence):
        raise TypeError(f"predictions must be a list of str; got {type(predictions).__name__}")
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise TypeError(f"references must be a list (of str, or of lists of str); got "
                        f"{type(references).__name__}")
    if len(predictions) != len(references):
        raise ValueError(f"predictions and references must have the same length; got "
                         f"{len(predictions)} and {len(references)}")
    if not predictions:
        raise ValueError("predictions must not be empty: a corpus score needs sentences")
    refs = []
    for i, (p, r) in enumerate(zip(predictions, references)):
        if not isinstance(p, str):
            raise TypeError(f"predictions[{i}] must be a str (tokens joined by spaces); got "
                            f"{type(p).__name__}")
        r = [r] if isinstance(r, str) else r
        if not isinstance(r, Sequence) or not r or not all(isinstance(x, str) for x in r):
            raise TypeError(f"references[{i}] must be a str or a non-empty list of str; got "
                            f"{references[i]!r}")
        refs.append(list(r))
    width = max(len(r) for r in refs)
    return [[r[j] if j < len(r) else None for r in refs] for j in range(width)]


def corpus_bleu(predictions: Sequence[str], references: Sequence[str | Sequence[str]], *,
                pair: str | None = None, tokenize: str | None = None,
                lowercase: bool | None = None) -> MetricResult:
    """Corpus-level BLEU (Papineni et al., 2002) computed by sacreBLEU, in [0, 100].

    Args:
        predictions: one translation per sentence, a str (the book joins tokens with spaces).
        references: for each sentence one reference (a str) or several (a list of str; the
            number may differ between sentences).
        pair: a language pair of :data:`BLEU_CONVENTIONS` (``'fra-eng'``, ``'cmn-eng'``): score
            with the book's convention for it. The book's results all pass ``pair``.
        tokenize: without ``pair``: sacreBLEU's tokenizer, ``'13a'`` (its default, for European
            languages), ``'zh'`` (Chinese: one token per character), ``'none'`` (split at
            spaces only).
        lowercase: without ``pair``: compare case-insensitively (default False).

    Uniform weights over 1- to 4-grams, n-gram matches and lengths summed over the corpus, one
    brevity penalty ``exp(1 - r/c)`` for the corpus when it is shorter than the references, and
    sacreBLEU's default ``exp`` smoothing. Returns a :class:`MetricResult` with the signature.

    The book's sentences are already split into tokens (``"va !"``, a space before punctuation,
    as d2l's ``preprocess_nmt`` writes them), which sacreBLEU would warn about on every call
    ("forgot to detokenize"); ``force=True`` silences that warning and changes no score (the
    13a tokenizer splits punctuation off either way).
    """
    from sacrebleu.metrics import BLEU

    options = _convention(BLEU_CONVENTIONS, pair, {"tokenize": tokenize, "lowercase": lowercase},
                          {"tokenize": "13a", "lowercase": False})
    streams = _streams(predictions, references)
    metric = BLEU(**options, force=True)
    result = metric.corpus_score(list(predictions), streams)
    return MetricResult("BLEU", float(result.score), str(metric.get_signature()), str(result))


def corpus_chrf(predictions: Sequence[str], references: Sequence[str | Sequence[str]], *,
                pair: str | None = None, char_order: int | None = None) -> MetricResult:
    """Corpus-level chrF (Popović, 2015), the character n-gram F-score, computed by sacreBLEU,
    in [0, 100]. It needs no word tokenization and, unlike BLEU, says something about short
    sentences.

    Args:
        predictions, references: as :func:`corpus_bleu`.
        pair: a language pair of :data:`CHRF_CONVENTIONS`: the book's convention for it (for
            Chinese, character n-grams up to 3 instead of sacreBLEU's 6).
        char_order: without ``pair``: the longest character n-gram (sacreBLEU's default 6).
    """
    from sacrebleu.metrics import CHRF

    options = _convention(CHRF_CONVENTIONS, pair, {"char_order": char_order},
                          {"char_order": 6})
    streams = _streams(predictions, references)
    metric = CHRF(**options)
    result = metric.corpus_score(list(predictions), streams)
    return MetricResult("chrF", float(result.score), str(metric.get_signature()), str(result))
