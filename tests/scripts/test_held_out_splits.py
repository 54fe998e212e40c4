"""Every script that reports a held-out score splits as chapter 6 does, checked by what the split
does, not by how the call is spelled: no held-out English sentence is trained on in any form
(*i'm fine .* / *i am fine !*), and no held-out sentence has a reference that is a training target.
The scripts: ``scripts/train_full.py`` (the full-data run) and ``bench/time_to_bleu.py``."""
from __future__ import annotations


import pytest

import d2lmini as d2l



def _train_full():
    from test_train_full_split import _script  # the script loaded as the other test loads it
    return _script()


def _time_to_bleu():
    from bench import time_to_bleu
    return time_to_bleu


def _splits():
    """name -> function(source, target) -> (train_src, train_tgt, test_src, test_refs)."""
    def train_full(source, target):
        return _train_full().held_out_split(source, target, 0.2, seed=0)

    def time_to_bleu(source, target):
        split = _time_to_bleu().held_out_split(source, target, 0.2, 0)
        return (split.train_source, split.train_target, split.test_source,
                split.test_references)
    return {"scripts/train_full.py": train_full, "bench/time_to_bleu.py": time_to_bleu}


def _leaky_corpus() -> tuple[list, list]:
    """Sentences in two forms (a contraction, another final mark) and paraphrases that share a
    translation: a split of exact sentences would leak both ways."""
    source, target = [], []
    for i in range(100):
        for form in (["i'm", f"w{i}", "."], ["i", "am", f"w{i}", "!"]):
            source.append(form)
            target.append(["je", "suis", f"m{i}", "."])
        source.append(["we", "are", f"p{i}", "."])  # a paraphrase, same translation as another
        target.append(["nous", "sommes", f"m{i // 2}", "."])
        source.append(["you", "are", f"q{i}", "."])
        target.append(["nous", "sommes", f"m{i // 2}", "."])
    return source, target


def _assert_held_out(train_src, train_tgt, test_src, test_refs):
    assert test_src and len(test_src) == len(test_refs)
    trained = {d2l.normalise_source(s) for s in train_src}
    leaked = [s for s in test_src if d2l.normalise_source(s) in trained]
    assert not leaked, f"held-out sentences trained on in another form: {leaked[:3]}"
    targets = {tuple(t) for t in train_tgt}
    seen = [s for s, refs in zip(test_src, test_refs) if any(tuple(r) in targets for r in refs)]
    assert not seen, f"held-out sentences whose reference is a training target: {seen[:3]}"


@pytest.mark.parametrize("name", list(_splits()))
def test_the_split_holds_out_by_chapter_6s_standard(name):
    source, target = _leaky_corpus()
    _assert_held_out(*_splits()[name](source, target))


def test_the_exact_split_would_leak_on_that_corpus():
    """Why the standard matters (and that the corpus above can catch a script that drops it)."""
    source, target = _leaky_corpus()
    train_src, train_tgt, test_src, test_refs = d2l.split_held_out(source, target, 0.2, 0)
    with pytest.raises(AssertionError):
        _assert_held_out(train_src, train_tgt, test_src, test_refs)


def test_time_to_bleu_scores_held_out_sentences_of_the_offline_corpus():
    """The benchmark's own data path, on the corpus a machine without data has."""
    ttb = _time_to_bleu()
    data = ttb.load(dict(ttb.CONFIG, num_examples=3000))
    refs = [[r.split() for r in rs] for rs in data["test_refs"]]
    _assert_held_out(data["train_src"], data["train_tgt"], data["test_src"], refs)
