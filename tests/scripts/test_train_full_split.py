"""scripts/train_full.py holds out sentences, not lines: no held-out English sentence is among
its training pairs, and every translation of a held-out sentence is one of its references."""
from __future__ import annotations

import importlib.util
import sys
from collections import defaultdict
from pathlib import Path

import d2lmini as d2l

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("train_full", ROOT / "scripts" / "train_full.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["train_full"] = module
    spec.loader.exec_module(module)
    return module


def _tatoeba_like_corpus() -> tuple[list, list]:
    """300 English sentences, most with several French translations on separate lines (as in
    Tatoeba), lines in corpus order."""
    source, target = [], []
    for i in range(300):
        for j in range(1 + i % 3):
            source.append(["sentence", str(i), "."])
            target.append(["phrase", str(i), f"v{j}", "."])
    return source, target


def test_no_held_out_source_is_a_training_pair():
    train_full = _script()
    source, target = _tatoeba_like_corpus()
    translations = defaultdict(set)
    for s, t in zip(source, target):
        translations[tuple(s)].add(tuple(t))
    train_src, train_tgt, test_src, test_refs = train_full.held_out_split(source, target)
    assert len(test_src) == 6 and len(test_src) == len(test_refs)  # 2 % of 300 sentences
    assert not {tuple(s) for s in train_src} & {tuple(s) for s in test_src}
    for s, refs in zip(test_src, test_refs):
        assert {tuple(r) for r in refs} == translations[tuple(s)]  # every translation
    assert len(train_src) + sum(map(len, test_refs)) == len(source)


def test_the_offline_corpus_split_holds_out_sentences():
    train_full = _script()
    source, target, _ = train_full.load_pairs(3000)  # the tests run offline
    train_src, _, test_src, test_refs = train_full.held_out_split(source, target)
    assert test_src and not {tuple(s) for s in train_src} & {tuple(s) for s in test_src}
    assert all(refs for refs in test_refs)


def test_the_line_split_would_have_leaked():
    """Why: split_nmt (the script's former split) splits lines, so held-out sentences are also
    training pairs through their other translations."""
    source, target = _tatoeba_like_corpus()
    train_src, _, test_src, _ = d2l.split_nmt(source, target, 0.02, seed=0)
    assert {tuple(s) for s in train_src} & {tuple(s) for s in test_src}


def test_the_score_uses_the_chapter_convention():
    text = (ROOT / "scripts" / "train_full.py").read_text(encoding="utf-8")
    assert 'pair="fra-eng"' in text and "split_nmt" not in text
