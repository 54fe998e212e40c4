"""d2lmini.metrics: BLEU and chrF as sacreBLEU computes them, and d2l's sentence variant."""
from __future__ import annotations

import subprocess
import sys

import pytest

from d2lmini import metrics

# short sentences, as in chapter 6: most have fewer than four tokens, a few have more
SHORT = ["go .", "i lost .", "he's calm .", "i'm home .", "we won the game .",
         "i like green tea .", "she is not here today ."]


def test_a_perfect_translation_of_short_sentences_scores_100():
    # nltk's corpus_bleu adds a denominator of 1 for each sentence too short to have n-grams of
    # an order (nltk issue #1785) and would score this corpus below 1
    result = metrics.corpus_bleu(SHORT, SHORT)
    assert result.score == pytest.approx(100.0)
    assert metrics.corpus_chrf(SHORT, SHORT).score == pytest.approx(100.0)
    assert "tok:13a" in result.signature and result.signature.startswith("nrefs:1|")


def test_scores_equal_the_sacrebleu_command_line(tmp_path):
    hyp = ["il est calme .", "je suis chez moi .", "va !", "j'ai gagné .", "il fait beau ."]
    ref = ["il est calme .", "je suis à la maison .", "va !", "j'ai perdu .", "il fait chaud ."]
    (tmp_path / "hyp.txt").write_text("\n".join(hyp) + "\n", encoding="utf-8")
    (tmp_path / "ref.txt").write_text("\n".join(ref) + "\n", encoding="utf-8")
    for metric, fn in (("bleu", metrics.corpus_bleu), ("chrf", metrics.corpus_chrf)):
        out = subprocess.run([sys.executable, "-m", "sacrebleu", str(tmp_path / "ref.txt"),
                              "-i", str(tmp_path / "hyp.txt"), "-m", metric, "-b", "-w", "6"],
                             capture_output=True, text=True, check=True).stdout
        assert fn(hyp, ref).score == pytest.approx(float(out.strip()), abs=1e-5), metric


def test_chinese_is_scored_per_character():
    hyp, ref = ["我喜欢茶。", "他很冷静。"], ["我喜欢茶。", "他非常冷静。"]
    as_one_word = metrics.corpus_bleu(hyp, ref, tokenize="13a")  # no spaces: one token each
    per_char = metrics.corpus_bleu(hyp, ref, tokenize="zh")
    assert "tok:zh" in per_char.signature and 0 < per_char.score < 100
    assert as_one_word.score < per_char.score


def test_several_references_per_sentence():
    hyp = ["je suis chez moi .", "il est calme ."]
    one = metrics.corpus_bleu(hyp, ["je suis à la maison .", "il est calme ."])
    two = metrics.corpus_bleu(hyp, [["je suis à la maison .", "je suis chez moi ."],
                                    "il est calme ."])
    assert two.score == pytest.approx(100.0) and one.score < 100
    assert "nrefs:var" in two.signature


@pytest.mark.parametrize("preds, refs, error, match", [
    ([], [], ValueError, "must not be empty"),
    (["a ."], ["a .", "b ."], ValueError, "same length"),
    ("a .", ["a ."], TypeError, "predictions must be a list"),
    ([["a", "."]], ["a ."], TypeError, r"predictions\[0\] must be a str"),
    (["a ."], [3], TypeError, r"references\[0\]"),
    (["a ."], [[]], TypeError, r"references\[0\]"),
])
def test_bad_input_gets_a_clear_error(preds, refs, error, match):
    for fn in (metrics.corpus_bleu, metrics.corpus_chrf):
        with pytest.raises(error, match=match):
            fn(preds, refs)


def test_d2l_sentence_bleu_variant():
    assert metrics.bleu("il est calme .", "il est calme .", 2) == pytest.approx(1.0)
    assert metrics.bleu("", "il est calme .", 2) == 0.0
    # a one-token prediction has no bigrams: d2l divides by zero there, the safe version skips
    assert metrics.bleu("va", "va !", 2) == pytest.approx(0.36787944117144233)
    # d2l's weights 1/2**n: p_1 = 2/3 enters as its square root, p_2 = 1/2 as its fourth root
    assert metrics.bleu("a b c", "a b d", 2) == pytest.approx((2 / 3) ** 0.5 * 0.5 ** 0.25)
    with pytest.raises(ValueError, match="k must be a positive int"):
        metrics.bleu("a", "a", 0)


# -------------------------------------------------------------------- one convention per pair
@pytest.mark.parametrize("pair, tok", [("fra-eng", "tok:none"), ("cmn-eng", "tok:zh")])
def test_bleu_of_a_pair_uses_its_declared_convention(pair, tok):
    hyp = ["il est calme .", "je suis chez moi ."]
    ref = ["il est calme .", "je suis à la maison ."]
    result = metrics.corpus_bleu(hyp, ref, pair=pair)
    assert tok in result.signature and "case:mixed" in result.signature
    given = metrics.BLEU_CONVENTIONS[pair]
    same = metrics.corpus_bleu(hyp, ref, tokenize=given["tokenize"],
                               lowercase=given["lowercase"])
    assert (result.score, result.signature) == (same.score, same.signature)


def test_french_convention_splits_at_spaces_only():
    # tok:none: "calme." is one token, as the model's tokens are; 13a splits the full stop off
    hyp, ref = ["il est très calme."], ["il est très calme ."]
    assert metrics.corpus_bleu(hyp, ref, pair="fra-eng").score < \
        metrics.corpus_bleu(hyp, ref, tokenize="13a").score


@pytest.mark.parametrize("pair, order", [("fra-eng", "nc:6"), ("cmn-eng", "nc:3")])
def test_chrf_of_a_pair_uses_its_character_order(pair, order):
    hyp, ref = ["我喜欢茶。", "他很冷静。"], ["我喜欢茶。", "他非常冷静。"]
    result = metrics.corpus_chrf(hyp, ref, pair=pair)
    assert f"|{order}|" in result.signature and "nw:0" in result.signature
    same = metrics.corpus_chrf(hyp, ref, char_order=int(order[3:]))
    assert (result.score, result.signature) == (same.score, same.signature)


def test_without_a_pair_the_defaults_are_sacrebleus():
    assert "tok:13a" in metrics.corpus_bleu(["a ."], ["a ."]).signature
    assert "nc:6" in metrics.corpus_chrf(["a ."], ["a ."]).signature


@pytest.mark.parametrize("kwargs", [{"tokenize": "zh"}, {"lowercase": True},
                                    {"tokenize": "none", "lowercase": False}])
def test_a_pair_and_its_own_options_are_not_both_accepted(kwargs):
    with pytest.raises(ValueError, match="pass either pair='cmn-eng' or"):
        metrics.corpus_bleu(["a"], ["a"], pair="cmn-eng", **kwargs)


def test_chrf_pair_and_char_order_are_not_both_accepted():
    with pytest.raises(ValueError, match="pass either pair='fra-eng' or char_order"):
        metrics.corpus_chrf(["a"], ["a"], pair="fra-eng", char_order=6)


@pytest.mark.parametrize("pair", ["deu-eng", "eng-fra", "", 3])
def test_an_unknown_pair_is_refused(pair):
    for fn in (metrics.corpus_bleu, metrics.corpus_chrf):
        with pytest.raises(ValueError, match=r"pair must be one of \['cmn-eng', 'fra-eng'\]"):
            fn(["a"], ["a"], pair=pair)


def test_typographic_apostrophe_is_the_plain_one():
    # else "j’ai" and "j'ai" are two tokens and a correct translation loses n-grams
    from d2lmini.data import preprocess_nmt

    assert preprocess_nmt("I sighed.\tJ\u2019ai soupiré.") == "i sighed .\tj'ai soupiré ."
    assert preprocess_nmt("C\u2019est l\u2019été\u202f!") == "c'est l'été !"
    assert "\u2019" not in preprocess_nmt("\u2019\u2019")
