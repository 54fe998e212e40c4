"""bench/ablations.py: its jobs cover every arm of chapter 8 (and the deep ones) and its summary
compares each arm with the baseline of its own depth."""

import d2lmini as d2l
from bench import ablations


def test_jobs_cover_every_arm_with_paired_seeds():
    s = ablations.settings(quick=True)
    jobs = ablations.jobs_for(s, vocab_size=65)
    arms = {j["arm"] for j in jobs}
    assert set(d2l.ABLATIONS) | {"noise", "noise_deep", "baseline_deep"} <= arms
    assert {f"{a}_deep" for a in ablations.DEEP_ARMS} <= arms
    for arm in arms:
        seeds = [j["seed"] for j in jobs if j["arm"] == arm]
        expected = range(s["seeds"], 2 * s["seeds"]) if arm.startswith("noise") \
            else range(s["seeds"])
        assert seeds == list(expected), arm
    deep = [j for j in jobs if j["arm"].endswith("_deep")]
    assert all(j["config"]["num_layers"] == s["deep_layers"] for j in deep)
    assert all(j["config"]["num_layers"] == s["layers"] for j in jobs if j not in deep)


def test_summary_compares_with_the_baseline_of_the_same_depth():
    runs = [{"arm": arm, "loss": loss} for arm, values in {
        "baseline": [2.0, 2.1], "noise": [2.0, 2.1], "relu": [2.3, 2.4],
        "baseline_deep": [1.9, 2.0], "noise_deep": [1.9, 2.0],
        "post_ln_deep": [1.9, 2.0]}.items() for loss in values]
    summary = ablations.summarise(runs)
    assert set(summary["comparisons"]) == {"relu", "post_ln_deep"}
    assert abs(summary["comparisons"]["relu"]["diff"] - 0.3) < 1e-12
    assert summary["comparisons"]["post_ln_deep"]["diff"] == 0
