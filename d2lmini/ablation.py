"""Training small language models and comparing design choices honestly: one recipe, several
seeds, paired differences against a baseline, a noise floor, and a verdict the numbers choose.

An *arm* is a model configuration (:class:`~d2lmini.LMConfig` fields) with optional changes to
the :class:`Recipe`; :func:`run_jobs` trains every (arm, seed) job, one thread each, several
processes at once, and :func:`compare` turns two arms' losses over the same seeds into a paired
difference with a confidence interval and a verdict.
"""

from __future__ import annotations

import math
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, replace
from typing import Any, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from scipy import stats

from .chartext import random_windows
from .lm import LMConfig, make_adamw, warmup_cosine
from .utils import check_positive_int

__all__ = ["ABLATIONS", "Recipe", "train_lm", "evaluate_lm", "loss_by_position",
           "non_embedding_parameters", "make_jobs", "run_job", "run_jobs", "Comparison",
           "compare", "fit_power_law", "compute_frontier"]


#: The arms of chapter 8's ablations (and of the benchmark ``bench/ablations.py``): each puts one
#: 2017 choice, or fewer key-value heads, or a change of the recipe, in place of the baseline's.
ABLATIONS: dict[str, dict[str, dict[str, Any]]] = {
    "baseline": {},
    "layernorm": {"config": {"norm": "layernorm"}},
    "relu": {"config": {"ffn": "relu"}},
    "gelu": {"config": {"ffn": "gelu"}},
    "sinusoidal": {"config": {"position": "sinusoidal"}},
    "learned": {"config": {"position": "learned"}},
    "nope": {"config": {"position": "none"}},
    "gqa": {"config": {"num_kv_heads": 2}},
    "mqa": {"config": {"num_kv_heads": 1}},
    "post_ln": {"config": {"norm_first": False}},
    "post_ln_no_warmup": {"config": {"norm_first": False}, "recipe": {"warmup_steps": 0}},
    "no_warmup": {"recipe": {"warmup_steps": 0}},
    "tied": {"config": {"tie_output": True}},
    "adam": {"recipe": {"weight_decay": 0.0}},
}


@dataclass(frozen=True)
class Recipe:
    """How an arm is trained: ``steps`` AdamW steps on random windows of ``seq_len`` characters,
    ``batch_size`` windows a step, peak learning rate ``lr`` reached after ``warmup_steps``
    (linear) then cosine decay to ``min_lr_ratio * lr``, decoupled ``weight_decay`` on the
    matrices (0: Adam), gradients clipped to norm ``grad_clip`` (0: not clipped). With
    ``eval_every > 0`` the held-out loss is also measured every ``eval_every`` steps on
    ``eval_windows`` windows (for learning curves)."""

    steps: int = 300
    batch_size: int = 16
    seq_len: int = 64
    lr: float = 3e-3
    warmup_steps: int = 30
    min_lr_ratio: float = 0.1
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    eval_every: int = 0
    eval_windows: int = 16


def non_embedding_parameters(model: torch.nn.Module) -> int:
    """Parameters outside the token and position embeddings (and a tied output layer), the
    ``N`` of Kaplan et al.'s scaling laws."""
    embeddings = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Embedding)}
    return sum(p.numel() for p in model.parameters() if id(p) not in embeddings)


def _windows(ids: torch.Tensor, seq_len: int, num_windows: int) -> torch.Tensor:
    """``num_windows`` windows of ``seq_len + 1`` ids at evenly spaced offsets: ``(n, T + 1)``."""
    if len(ids) <= seq_len + 1:
        raise ValueError(f"the held-out ids ({len(ids)}) must be longer than seq_len + 1 = "
                         f"{seq_len + 1}")
    starts = torch.linspace(0, len(ids) - seq_len - 1, num_windows).long()
    return ids[starts[:, None] + torch.arange(seq_len + 1)]


@torch.no_grad()
def loss_by_position(model: torch.nn.Module, ids: torch.Tensor, seq_len: int,
                     num_windows: int = 64, batch_size: int = 16) -> torch.Tensor:
    """The mean cross-entropy (nats) at each position of ``num_windows`` held-out windows of
    ``seq_len`` characters, evenly spaced over ``ids``: shape ``(seq_len,)``. Position ``t``
    predicts character ``t + 1`` from ``t + 1`` characters of context."""
    check_positive_int(num_windows, "num_windows")
    was_training = model.training
    model.eval()
    windows, total = _windows(ids, seq_len, num_windows), torch.zeros(seq_len)
    for chunk in windows.split(batch_size):
        logits = model(chunk[:, :-1])
        total += F.cross_entropy(logits.transpose(1, 2), chunk[:, 1:],
                                 reduction="none").sum(0)
    model.train(was_training)
    return total / len(windows)


def evaluate_lm(model: torch.nn.Module, ids: torch.Tensor, seq_len: int,
                num_windows: int = 64, batch_size: int = 16) -> float:
    """The mean held-out cross-entropy in nats per character (:func:`loss_by_position`
    averaged over positions)."""
    return float(loss_by_position(model, ids, seq_len, num_windows, batch_size).mean())


def train_lm(model: torch.nn.Module, train_ids: torch.Tensor, recipe: Recipe, *, seed: int = 0,
             val_ids: torch.Tensor | None = None) -> dict[str, Any]:
    """Train ``model`` in place with ``recipe`` on random windows of ``train_ids`` drawn from a
    generator seeded with ``seed``. Returns ``losses`` (training loss of every step),
    ``curve`` (``[step, held-out loss]`` pairs when ``recipe.eval_every``), ``seconds`` and
    ``diverged`` (a non-finite loss stops the run)."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = make_adamw(model, recipe.lr, weight_decay=recipe.weight_decay)
    schedule = warmup_cosine(optimizer, recipe.warmup_steps, recipe.steps, recipe.min_lr_ratio)
    losses, curve, start = [], [], time.perf_counter()
    model.train()
    for step in range(recipe.steps):
        X, Y = random_windows(train_ids, recipe.batch_size, recipe.seq_len, generator)
        loss = F.cross_entropy(model(X).flatten(0, 1), Y.flatten())
        if not torch.isfinite(loss):
            return {"losses": losses, "curve": curve, "diverged": True,
                    "seconds": time.perf_counter() - start}
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if recipe.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), recipe.grad_clip)
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        if recipe.eval_every and val_ids is not None and (step + 1) % recipe.eval_every == 0:
            curve.append([step + 1, evaluate_lm(model, val_ids, recipe.seq_len,
                                                recipe.eval_windows)])
    return {"losses": losses, "curve": curve, "diverged": False,
            "seconds": time.perf_counter() - start}


def make_jobs(base: LMConfig, recipe: Recipe, arms: dict[str, dict[str, dict[str, Any]]],
              seeds: Sequence[int], *, eval_lens: Sequence[int] | None = None,
              eval_windows: int = 64) -> list[dict[str, Any]]:
    """One job per arm and seed: arm ``name -> {"config": {...}, "recipe": {...}}`` changes the
    base configuration and recipe (either part may be missing; ``{}`` is the baseline)."""
    jobs = []
    for name, changes in arms.items():
        unknown = set(changes) - {"config", "recipe"}
        if unknown:
            raise ValueError(f"arm {name!r}: only 'config' and 'recipe' can change; got "
                             f"{sorted(unknown)}")
        config = base.replace(**changes.get("config", {})).to_dict()
        rec = asdict(replace(recipe, **changes.get("recipe", {})))
        jobs += [{"arm": name, "config": config, "recipe": rec, "seed": seed,
                  "eval_lens": list(eval_lens or [recipe.seq_len]),
                  "eval_windows": eval_windows} for seed in seeds]
    return jobs


_DATA: dict[str, torch.Tensor] = {}


def _init_worker(train_ids: torch.Tensor, val_ids: torch.Tensor) -> None:
    torch.set_num_threads(1)
    _DATA["train"], _DATA["val"] = train_ids, val_ids


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Train one (arm, seed) job in this process on the data :func:`run_jobs` gave it.

    ``job`` has ``arm`` (a name), ``config`` (``LMConfig`` fields), ``recipe`` (``Recipe``
    fields), ``seed``, and optionally ``eval_lens`` (held-out lengths to evaluate, default the
    training length) and ``eval_windows``. The result repeats the job and adds
    ``loss`` (held-out nats per character at the training length), ``loss_at`` (length ->
    loss), ``loss_by_position`` at the longest length, ``train_loss`` (mean of the last 10%
    of steps), ``ms_per_step``, ``parameters``, ``non_embedding_parameters``, ``curve`` and
    ``diverged``.
    """
    recipe = Recipe(**job["recipe"])
    torch.manual_seed(job["seed"])
    model = LMConfig(**job["config"]).build()
    run = train_lm(model, _DATA["train"], recipe, seed=job["seed"], val_ids=_DATA["val"])
    result = dict(job, diverged=run["diverged"], curve=run["curve"],
                  parameters=sum(p.numel() for p in model.parameters()),
                  non_embedding_parameters=non_embedding_parameters(model),
                  ms_per_step=1000 * run["seconds"] / max(len(run["losses"]), 1))
    tail = run["losses"][-max(len(run["losses"]) // 10, 1):]
    result["train_loss"] = float(np.mean(tail)) if tail and not run["diverged"] else math.inf
    lens = job.get("eval_lens") or [recipe.seq_len]
    if run["diverged"]:
        result.update(loss=math.inf, loss_at={str(n): math.inf for n in lens})
        return result
    windows = job.get("eval_windows", 64)
    by_pos = loss_by_position(model, _DATA["val"], max(lens), windows)
    result["loss_at"] = {str(n): (float(by_pos[:n].mean()) if n == max(lens) else
                                  evaluate_lm(model, _DATA["val"], n, windows)) for n in lens}
    result["loss"] = result["loss_at"][str(recipe.seq_len)] if recipe.seq_len in lens else \
        evaluate_lm(model, _DATA["val"], recipe.seq_len, windows)
    result["loss_by_position"] = by_pos.tolist()
    return result


def run_jobs(jobs: Sequence[dict[str, Any]], train_ids: torch.Tensor, val_ids: torch.Tensor, *,
             processes: int = 2) -> list[dict[str, Any]]:
    """Run :func:`run_job` for every job, ``processes`` at a time, each process on one thread
    (fresh ``spawn`` processes: no state is inherited from the caller); results in job order.
    ``processes=1`` runs them here, one after the other, on one thread."""
    check_positive_int(processes, "processes")
    if processes == 1:
        threads = torch.get_num_threads()
        try:
            _init_worker(train_ids, val_ids)
            return [run_job(job) for job in jobs]
        finally:
            torch.set_num_threads(threads)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(processes, mp_context=context, initializer=_init_worker,
                             initargs=(train_ids, val_ids)) as pool:
        return list(pool.map(run_job, jobs))


@dataclass(frozen=True)
class Comparison:
    """An arm against the baseline over the same seeds.

    Attributes:
        diff: mean paired difference, arm minus baseline (nats; negative: the arm is better).
        sd: standard deviation of the paired differences.
        half_width: half-width of the 95% t-interval of the mean difference.
        floor: the noise floor, the largest difference seeds alone produced: ``|mean| +
            half-width`` of the baseline against itself with other seeds (0 without one).
        verdict: ``'better'`` or ``'worse'`` when the interval excludes 0 and ``|diff|``
            exceeds the floor, else ``'within noise'``.
        n: the number of seeds.
    """

    diff: float
    sd: float
    half_width: float
    floor: float
    verdict: str
    n: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _paired(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if len(d) < 2:
        raise ValueError(f"a paired comparison needs at least 2 seeds; got {len(d)}")
    sd = float(d.std(ddof=1)) if np.all(np.isfinite(d)) else math.inf
    half = float(stats.t.ppf(0.975, len(d) - 1)) * sd / math.sqrt(len(d))
    return float(d.mean()), sd, half


def compare(baseline: Sequence[float], arm: Sequence[float],
            noise: tuple[Sequence[float], Sequence[float]] | None = None) -> Comparison:
    """Compare ``arm``'s losses with ``baseline``'s over the same seeds (element ``i`` of each
    from seed ``i``). ``noise`` is the baseline's losses with other seeds and with these,
    ``(other, baseline)``; without it the floor is 0. A diverged run (an infinite loss) makes
    its arm ``'worse'`` when the baseline never diverged."""
    if len(baseline) != len(arm):
        raise ValueError(f"baseline and arm need one loss per seed each; got {len(baseline)} "
                         f"and {len(arm)}")
    floor = 0.0
    if noise is not None:
        f_mean, _, f_half = _paired(*noise)
        floor = abs(f_mean) + f_half
    diff, sd, half = _paired(arm, baseline)
    if not math.isfinite(diff):
        verdict = "worse" if all(map(math.isfinite, baseline)) else "within noise"
    elif diff + half < 0 and -diff > floor:
        verdict = "better"
    elif diff - half > 0 and diff > floor:
        verdict = "worse"
    else:
        verdict = "within noise"
    return Comparison(diff, sd, half, floor, verdict, len(baseline))


def fit_power_law(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Least-squares fit of ``y = a * x^(-alpha)`` on log-log axes; returns ``(a, alpha)``."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or len(x) != len(y) or np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("fit_power_law needs at least 2 pairs of positive numbers")
    slope, intercept = np.polyfit(np.log(x), np.log(y), 1)
    return float(np.exp(intercept)), float(-slope)


def compute_frontier(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The ``(compute, loss)`` points that no point of smaller compute beats: sorted by compute,
    each with a lower loss than every point before it (the compute-efficient frontier)."""
    frontier: list[tuple[float, float]] = []
    for c, loss in sorted(points):
        if not frontier or loss < frontier[-1][1]:
            frontier.append((c, loss))
    return frontier


