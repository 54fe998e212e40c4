"""Small utilities: timing, accumulation, device choice, seeding, argument checks,
notebook detection and glued ratios."""

from __future__ import annotations

import math
import os
import random
import time
from typing import Any

import numpy as np
import torch

__all__ = ["Timer", "Accumulator", "try_gpu", "set_seed", "check_positive_int",
           "check_non_negative_int", "in_notebook", "glue_ratio"]


def check_positive_int(value: Any, name: str) -> int:
    """Return ``value`` if it is an int >= 1 (``bool`` is not an int here).

    Raises ``TypeError`` for anything that is not an int and ``ValueError`` for an int < 1;
    both messages name the argument ``name``.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a positive int; got {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be a positive int; got {value!r}")
    return value


def check_non_negative_int(value: Any, name: str) -> int:
    """Return ``value`` if it is an int >= 0 (not ``bool``); ``TypeError`` / ``ValueError``
    otherwise, naming the argument ``name`` (seeds, indices)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a non-negative int; got {type(value).__name__} "
                        f"{value!r}")
    if value < 0:
        raise ValueError(f"{name} must be a non-negative int; got {value!r}")
    return value


def in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython's ``ZMQInteractiveShell``), False in a terminal,
    a script or plain IPython."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of the book
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class Timer:
    """Record several running times (d2l's ``Timer``).

    ``start()`` begins a measurement, ``stop()`` ends it, records the elapsed seconds and
    returns them; ``avg()``, ``sum()`` and ``cumsum()`` summarise the recorded times.
    """

    def __init__(self) -> None:
        self.times: list[float] = []
        self.start()

    def start(self) -> None:
        """Start (or restart) the timer."""
        self.tik = time.perf_counter()

    def stop(self) -> float:
        """Stop the timer, record the elapsed time and return it (seconds)."""
        self.times.append(time.perf_counter() - self.tik)
        return self.times[-1]

    def avg(self) -> float:
        """Average of the recorded times (0.0 when nothing was recorded)."""
        return sum(self.times) / len(self.times) if self.times else 0.0

    def sum(self) -> float:
        """Sum of the recorded times."""
        return sum(self.times)

    def cumsum(self) -> list[float]:
        """Cumulative sums of the recorded times."""
        return np.cumsum(self.times).tolist()


class Accumulator:
    """Accumulate sums over ``n`` variables (d2l's ``Accumulator``)."""

    def __init__(self, n: int) -> None:
        self.data = [0.0] * check_positive_int(n, "n")

    def add(self, *args: float) -> None:
        """Add ``len(args) == n`` values, one per variable."""
        if len(args) != len(self.data):
            raise ValueError(
                f"add() expects {len(self.data)} values (one per variable); got {len(args)}"
            )
        self.data = [a + float(b) for a, b in zip(self.data, args)]

    def reset(self) -> None:
        """Set every sum back to zero."""
        self.data = [0.0] * len(self.data)

    def __getitem__(self, idx: int) -> float:
        return self.data[idx]

    def __len__(self) -> int:
        return len(self.data)


def try_gpu(i: int = 0) -> torch.device:
    """Return ``cuda:i`` if that GPU exists, else Apple's ``mps`` if available, else ``cpu``."""
    check_non_negative_int(i, "i")
    if torch.cuda.is_available() and torch.cuda.device_count() > i:
        return torch.device(f"cuda:{i}")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def set_seed(seed: int, deterministic: bool = True) -> None:
    """Seed Python, NumPy and PyTorch (CPU and every GPU).

    With ``deterministic=True`` PyTorch is asked for deterministic algorithms (warning, not
    failing, where none exists), so two CPU runs with the same seed are bit-for-bit equal.
    """
    check_non_negative_int(seed, "seed")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.cudnn.benchmark = False


def glue_ratio(name: str, value: float, low: float | None = None,
               high: float | None = None) -> None:
    """Glue a ratio the text quotes (myst-nb ``glue``), after checking the bounds the text states.

    A sentence such as "doubling n multiplied the time by {name}, more than the factor 2 of a
    linear cost" is true only while ``value`` stays within the bounds it relies on. The chapter
    passes those bounds here (``low <= value <= high``; None: no bound on that side), so that a
    measurement that would make the sentence false stops the build instead of being published.
    The book's tests check that every ratio quoted in prose is glued through this function and
    that the sentences quoting it write its bounds. Returns None (nothing to display).

    Raises ``AssertionError`` when ``value`` is outside the bounds (or NaN while bounded),
    ``ValueError`` for a name that is not a glue name or bounds with ``low > high``.
    """
    if not isinstance(name, str) or not name.replace("_", "").isalnum():
        raise ValueError(f"name must be a glue name such as 'ch8_attn_growth'; got {name!r}")
    if low is not None and high is not None and low > high:
        raise ValueError(f"low must not exceed high; got low={low}, high={high}")
    value = float(value)
    bounded = low is not None or high is not None
    if bounded and (math.isnan(value) or (low is not None and value < low)
                    or (high is not None and value > high)):
        raise AssertionError(
            f"{name} = {value:.4g} is outside [{low}, {high}], the bounds the text states about "
            "it; the measurement contradicts the sentence (rerun on a quieter machine, or fix "
            "the experiment)")
    from myst_nb import glue  # the book's notebooks run under myst-nb

    glue(name, value, display=False)
