"""Small utilities: timing, device choice, seeding, argument checks and notebook detection."""

from __future__ import annotations

import os
import random
import time
from typing import Any

import numpy as np
import torch

__all__ = ["Timer", "try_gpu", "set_seed", "check_int", "check_number", "check_positive_int",
           "check_non_negative_int", "check_bool", "in_notebook"]


def _expected(kind: str, minimum: float | None, maximum: float | None, above: float | None,
              below: float | None) -> str:
    """What an argument must be, in words: ``'a positive int'``, ``'a number in [0, 1)'``."""
    article = "an" if kind == "int" else "a"
    if kind == "int" and maximum is None and minimum in (0, 1):
        return f"a {'positive' if minimum == 1 else 'non-negative'} int"
    if minimum is None and maximum is None and above is not None and below is None:
        return f"{article} {kind} > {above:g}"
    low = (f"[{minimum:g}" if minimum is not None else
           f"({above:g}" if above is not None else None)
    high = (f"{maximum:g}]" if maximum is not None else
            f"{below:g})" if below is not None else None)
    if low is None and high is None:
        return f"{article} {kind}"
    if high is None:
        return f"{article} {kind} >= {minimum:g}"
    return f"{article} {kind} in {low or '(-inf'}, {high}"


def _check_value(value: Any, name: str, types: tuple[type, ...], kind: str,
                 minimum: float | None, maximum: float | None, above: float | None,
                 below: float | None) -> Any:
    """The check behind :func:`check_int` and :func:`check_number`."""
    expected = _expected(kind, minimum, maximum, above, below)
    if isinstance(value, bool) or not isinstance(value, types):
        raise TypeError(f"{name} must be {expected}; got {type(value).__name__} {value!r}")
    # written as "not (ok)" so that NaN, which compares False with everything, is refused
    if not ((minimum is None or value >= minimum) and (maximum is None or value <= maximum)
            and (above is None or value > above) and (below is None or value < below)
            and value == value):
        raise ValueError(f"{name} must be {expected}; got {value!r}")
    return value


def check_int(value: Any, name: str, *, minimum: int | None = None,
              maximum: int | None = None) -> int:
    """Return ``value`` if it is an int (``bool`` is not an int here) with
    ``minimum <= value <= maximum`` (None: no bound on that side).

    Raises ``TypeError`` for anything that is not an int and ``ValueError`` for an int out of
    range; both messages name the argument ``name`` and what it must be
    (``"num_pairs must be a positive int; got 0"``).
    """
    return _check_value(value, name, (int,), "int", minimum, maximum, None, None)


def check_number(value: Any, name: str, *, minimum: float | None = None,
                 maximum: float | None = None, above: float | None = None,
                 below: float | None = None) -> float:
    """Return ``value`` if it is a real number (an int or a float, not ``bool``, not NaN)
    within the given bounds: ``minimum <= value <= maximum``, ``above < value < below``
    (None: no such bound).

    Raises ``TypeError`` for anything that is not a number and ``ValueError`` for a number
    out of range or NaN, naming the argument and the range
    (``"timeout must be a number > 0; got 0"``,
    ``"test_fraction must be a number in [0, 1); got 1.5"``).
    """
    return _check_value(value, name, (int, float), "number", minimum, maximum, above, below)


def check_positive_int(value: Any, name: str) -> int:
    """Return ``value`` if it is an int >= 1 (``bool`` is not an int here).

    Raises ``TypeError`` for anything that is not an int and ``ValueError`` for an int < 1;
    both messages name the argument ``name``.
    """
    return check_int(value, name, minimum=1)


def check_non_negative_int(value: Any, name: str) -> int:
    """Return ``value`` if it is an int >= 0 (not ``bool``); ``TypeError`` / ``ValueError``
    otherwise, naming the argument ``name`` (seeds, indices)."""
    return check_int(value, name, minimum=0)


def check_bool(value: Any, name: str) -> bool:
    """Return ``value`` if it is ``True`` or ``False`` (not 0, 1 or a NumPy bool); ``TypeError``
    otherwise, naming the argument ``name`` (``"amp must be a bool; got int 1"``)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool; got {type(value).__name__} {value!r}")
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
