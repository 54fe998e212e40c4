"""Chapter 8's ablations at a larger budget: every arm of d2l.ABLATIONS against the modern
baseline (pre-LN RMSNorm, RoPE, SwiGLU, multi-head attention, untied output, AdamW with warm-up)
on Tiny Shakespeare, with more seeds and more steps than the book's build runs, plus the
normalisation-placement and warm-up arms again at twice the depth. Each arm is compared with the
baseline seed by seed (d2l.compare: mean paired difference of held-out loss, its 95% t-interval,
and the noise floor of the baseline against itself with other seeds), the verdict chosen by those
numbers. One thread per training, --processes trainings at a time (default 2). Only when named
(--only ablations; --quick: 2 seeds, 100 steps; --tiny: 2 seeds, 10 steps)."""

from __future__ import annotations

import sys
import time

import d2lmini as d2l

from . import common

WIDTH, HEADS, LAYERS, DEEP_LAYERS = 64, 4, 4, 8
DEEP_ARMS = ("post_ln", "post_ln_no_warmup", "no_warmup")


def settings(quick: bool, tiny: bool = False) -> dict:
    seeds, steps = (2, 10) if tiny else (2, 100) if quick else (5, 600)
    return {"seeds": seeds, "steps": steps, "width": WIDTH, "heads": HEADS, "layers": LAYERS,
            "deep_layers": DEEP_LAYERS, "batch_size": 16, "seq_len": 64, "lr": 3e-3,
            "warmup_steps": steps // 10, "eval_windows": 8 if tiny else 64,
            "description": f"{seeds} seeds (and {seeds} more for the noise floor), {steps} "
                           f"steps, width {WIDTH}, {LAYERS} layers ({DEEP_LAYERS} for the deep "
                           "arms)"}


def jobs_for(s: dict, vocab_size: int) -> list[dict]:
    base = d2l.LMConfig(vocab_size, num_hiddens=s["width"], num_heads=s["heads"],
                        num_layers=s["layers"], max_len=256)
    recipe = d2l.Recipe(steps=s["steps"], batch_size=s["batch_size"], seq_len=s["seq_len"],
                        lr=s["lr"], warmup_steps=s["warmup_steps"])
    seeds = list(range(s["seeds"]))
    others = list(range(s["seeds"], 2 * s["seeds"]))
    lens, windows = [64, 128, 256], s["eval_windows"]
    jobs = d2l.make_jobs(base, recipe, d2l.ABLATIONS, seeds, eval_lens=lens,
                         eval_windows=windows)
    jobs += d2l.make_jobs(base, recipe, {"noise": {}}, others, eval_lens=lens,
                          eval_windows=windows)
    deep = base.replace(num_layers=s["deep_layers"])
    deep_arms = {f"{arm}_deep": d2l.ABLATIONS[arm] for arm in ("baseline", *DEEP_ARMS)}
    jobs += d2l.make_jobs(deep, recipe, deep_arms, seeds, eval_lens=[64], eval_windows=windows)
    jobs += d2l.make_jobs(deep, recipe, {"noise_deep": {}}, others, eval_lens=[64],
                          eval_windows=windows)
    return jobs


def summarise(results: list[dict]) -> dict:
    losses: dict[str, list[float]] = {}
    for r in results:
        losses.setdefault(r["arm"], []).append(r["loss"])
    comparisons = {}
    for arm in losses:
        if arm.startswith(("baseline", "noise")):
            continue
        suffix = "_deep" if arm.endswith("_deep") else ""
        base = losses["baseline" + suffix]
        c = d2l.compare(base, losses[arm], noise=(losses["noise" + suffix], base))
        comparisons[arm] = c.as_dict()
    return {"losses": losses, "comparisons": comparisons}


def run(args, device) -> None:
    s = settings(args.quick, getattr(args, "tiny", False))
    s["processes"] = getattr(args, "processes", None) or 2
    text, source = d2l.read_tinyshakespeare(return_source=True)
    corpus = d2l.CharCorpus(text)
    jobs = jobs_for(s, corpus.vocab_size)
    start = time.perf_counter()
    results = d2l.run_jobs(jobs, corpus.train, corpus.val, processes=s["processes"])
    minutes = (time.perf_counter() - start) / 60
    kept = [{k: r[k] for k in ("arm", "seed", "loss", "loss_at", "train_loss", "ms_per_step",
                               "parameters", "diverged")} for r in results]
    common.write(sys.modules[__name__], {
        "settings": s, "data_source": source.kind, "wall_minutes": minutes,
        "runs": kept, **summarise(results)}, device)
