"""Small utilities: timing, accumulation, device choice, seeding, argument checks and
notebook detection."""

from __future__ import annotations

import os
import random
import time
from typing import Any

import numpy as np
import torch

__all__ = ["Timer", "Accumulator", "try_gpu", "set_seed", "check_positive_int",
           "check_non_negative_int", "in_notebook"]


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
