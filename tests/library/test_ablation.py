"""d2lmini.ablation: training small language models, paired comparisons with a noise floor,
power-law fits; and d2lmini.book.load_or_compute, which keeps their results."""

import math

import pytest
import torch

import d2lmini as d2l
from d2lmini import book


def test_compare_resolves_a_clear_effect_and_not_noise():
    base = [2.00, 2.10, 2.05]
    better = d2l.compare(base, [1.70, 1.81, 1.74], noise=([2.01, 2.09, 2.06], base))
    assert better.verdict == "better" and better.diff == pytest.approx(-0.3, abs=0.01)
    worse = d2l.compare(base, [2.30, 2.41, 2.34])
    assert worse.verdict == "worse" and worse.floor == 0
    noisy = d2l.compare(base, [1.90, 2.25, 2.00])
    assert noisy.verdict == "within noise"


def test_compare_needs_the_difference_to_exceed_the_noise_floor():
    base = [2.00, 2.10, 2.05]
    arm = [1.98, 2.08, 2.03]  # consistently 0.02 lower: the interval excludes 0
    assert d2l.compare(base, arm).verdict == "better"
    other_seeds = [2.05, 2.16, 2.10]  # seeds alone move the loss by about 0.05
    result = d2l.compare(base, arm, noise=(other_seeds, base))
    assert result.floor > 0.02 and result.verdict == "within noise"


def test_compare_diverged_arm_is_worse_and_bad_inputs_are_errors():
    assert d2l.compare([2.0, 2.1, 2.0], [math.inf, 2.0, 2.1]).verdict == "worse"
    with pytest.raises(ValueError, match="one loss per seed"):
        d2l.compare([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="at least 2 seeds"):
        d2l.compare([1.0], [1.0])


def test_fit_power_law_recovers_the_exponent():
    N = [1e3, 1e4, 1e5, 1e6]
    a, alpha = d2l.fit_power_law(N, [5 * n ** -0.076 for n in N])
    assert alpha == pytest.approx(0.076) and a == pytest.approx(5)
    with pytest.raises(ValueError):
        d2l.fit_power_law([1.0], [1.0])


def test_compute_frontier_keeps_the_points_nothing_cheaper_beats():
    points = [(3, 2.0), (1, 3.0), (2, 3.5), (4, 2.5), (5, 1.5)]
    assert d2l.compute_frontier(points) == [(1, 3.0), (3, 2.0), (5, 1.5)]


def test_make_jobs_applies_each_arms_changes():
    base = d2l.LMConfig(10, num_hiddens=16, num_heads=2, num_layers=1)
    jobs = d2l.make_jobs(base, d2l.Recipe(steps=5), {
        "baseline": {}, "relu": {"config": {"ffn": "relu"}},
        "no warm-up": {"recipe": {"warmup_steps": 0}}}, seeds=[0, 1])
    assert [(j["arm"], j["seed"]) for j in jobs] == [
        ("baseline", 0), ("baseline", 1), ("relu", 0), ("relu", 1), ("no warm-up", 0),
        ("no warm-up", 1)]
    assert jobs[2]["config"]["ffn"] == "relu" and jobs[2]["config"]["ffn_num_hiddens"] == 64
    assert jobs[0]["config"]["ffn_num_hiddens"] == round(8 * 16 / 3)
    assert jobs[4]["recipe"]["warmup_steps"] == 0 and jobs[0]["recipe"]["warmup_steps"] == 30
    with pytest.raises(ValueError, match="only 'config' and 'recipe'"):
        d2l.make_jobs(base, d2l.Recipe(), {"x": {"optimizer": {}}}, seeds=[0])


def tiny_data():
    corpus = d2l.CharCorpus("the cat sat on the mat. " * 200)
    return corpus, d2l.LMConfig(corpus.vocab_size, num_hiddens=16, num_heads=2, num_layers=1,
                                max_len=64)


def test_training_learns_a_repetitive_text():
    corpus, config = tiny_data()
    torch.manual_seed(0)
    model = config.build()
    before = d2l.evaluate_lm(model, corpus.val, 16, num_windows=8)
    run = d2l.train_lm(model, corpus.train, d2l.Recipe(steps=60, seq_len=16, warmup_steps=5,
                                                       eval_every=20, eval_windows=4),
                       val_ids=corpus.val)
    after = d2l.evaluate_lm(model, corpus.val, 16, num_windows=8)
    assert not run["diverged"] and len(run["losses"]) == 60
    assert [step for step, _ in run["curve"]] == [20, 40, 60]
    assert after < before - 1.0


def test_run_jobs_gives_the_same_results_in_worker_processes_and_here():
    corpus, config = tiny_data()
    jobs = d2l.make_jobs(config, d2l.Recipe(steps=8, seq_len=16, warmup_steps=2),
                         {"baseline": {}, "layernorm": {"config": {"norm": "layernorm"}}},
                         seeds=[0, 1], eval_lens=[16, 32], eval_windows=4)
    here = d2l.run_jobs(jobs, corpus.train, corpus.val, processes=1)
    there = d2l.run_jobs(jobs, corpus.train, corpus.val, processes=2)
    assert [r["arm"] for r in there] == ["baseline", "baseline", "layernorm", "layernorm"]
    for a, b in zip(here, there):
        assert a["loss_at"] == pytest.approx(b["loss_at"], abs=1e-6)
        assert set(a["loss_at"]) == {"16", "32"} and len(a["loss_by_position"]) == 32
        assert a["loss"] == a["loss_at"]["16"]
    assert here[0]["loss"] != here[1]["loss"]  # another seed, another run


def test_load_or_compute_computes_once(tmp_path):
    calls = []
    def compute():
        calls.append(1)
        return {"loss": [1.5, math.inf]}
    first = book.load_or_compute("abc-1", compute, cache_dir=tmp_path)
    second = book.load_or_compute("abc-1", compute, cache_dir=tmp_path)
    assert first == ({"loss": [1.5, math.inf]}, False)
    assert second == ({"loss": [1.5, math.inf]}, True) and len(calls) == 1
    with pytest.raises(ValueError, match="key must be"):
        book.load_or_compute("../x", compute, cache_dir=tmp_path)
