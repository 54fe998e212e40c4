"""scripts/train_full.py holds out sentences, not lines: no held-out English sentence is among
its training pairs, not even in another form (*i'm fine .* / *i am fine !*), every translation of
a held-out sentence is one of its references, and no reference is a training target (chapter 6's
split)."""
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


def test_the_tiny_run_reports_chrf_mfu_fields_and_the_split(tmp_path):
    train_full = _script()
    out = tmp_path / "r.json"
    summary = train_full.main(["--tiny", "--max-tokens", "256", "--average-last", "2", "--mfu",
                               "--beam-size", "2", "--out", str(out)])
    assert summary["split"] == train_full.SPLIT and "normalise=True" in summary["split"]
    assert 0 <= summary["chrf"] <= 100 and summary["chrf_signature"].startswith("nrefs:")
    assert summary["averaged_epochs"] == 2 and summary["flops_per_target_token"] > 0
    assert summary["mfu"] is None and summary["peak_tflops"] is None  # a CPU: no known peak


def _variant_corpus() -> tuple[list, list]:
    """200 sentences, each written two ways that chapter 6's normalisation puts together (a
    contraction and its expansion, different final punctuation), with their own translations;
    every tenth sentence shares one translation with the next sentence."""
    source, target = [], []
    for i in range(200):
        shared = ["commun", str(i - i % 2), "."] if i % 10 < 2 else None
        source += [["i'm", "word", str(i), "."], ["i", "am", "word", str(i), "!"]]
        target += [shared or ["je", "suis", str(i), "."], ["je", "suis", "le", str(i), "!"]]
    return source, target


def test_no_held_out_sentence_is_trained_on_in_another_form():
    train_full = _script()
    source, target = _variant_corpus()
    train_src, train_tgt, test_src, test_refs = train_full.held_out_split(source, target)
    assert test_src and len(test_src) == len(test_refs)
    trained = {d2l.normalise_source(s) for s in train_src}
    assert not trained & {d2l.normalise_source(s) for s in test_src}
    seen = {tuple(t) for t in train_tgt}
    assert not any(tuple(r) in seen for refs in test_refs for r in refs)
    assert all(len(refs) == 2 for refs in test_refs)  # both forms' translations are references


def test_the_variant_corpus_would_leak_without_normalisation():
    """Why the check above means something: grouping by exact tokens puts the two forms of a
    sentence on different sides, and a shared translation makes a reference a training
    target."""
    source, target = _variant_corpus()
    train_src, train_tgt, test_src, test_refs = d2l.split_held_out(source, target, 0.02, seed=0)
    trained = {d2l.normalise_source(s) for s in train_src}
    assert trained & {d2l.normalise_source(s) for s in test_src}


def test_the_mfu_uses_the_dense_bf16_peak_of_the_device(monkeypatch):
    import torch

    train_full = _script()
    monkeypatch.setattr(train_full, "device_name", lambda device: "NVIDIA H200")
    peak, source = train_full.peak_tflops(torch.device("cuda"))
    assert peak == 1979 / 2 and "H200" in source  # the datasheet's 1,979 is with sparsity

    class Result:
        tokens_per_sec = 1e6

    extras = {"step_flops": 2e12, "step_target_tokens": 10_000}
    summary = train_full.mfu_summary(extras, Result(), torch.device("cuda"))
    assert summary["achieved_tflops"] == 2e12 / 10_000 * 1e6 / 1e12
    assert summary["mfu"] == summary["achieved_tflops"] / peak
    assert train_full.peak_tflops(torch.device("cpu"))[0] is None
