"""Recorded benchmark results: the JSON files ``bench/run.py`` writes into ``bench/results/``,
read by the pages that show a recorded table beside what the build itself ran."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["results_dir", "recorded_benchmark"]


def results_dir(start: str | Path | None = None) -> Path | None:
    """The ``bench/results`` folder of the repository holding ``start`` (default: the current
    folder), else of the repository holding the d2lmini package (an editable install); ``None``
    when neither has one (an installed package, a downloaded notebook)."""
    starts = [Path.cwd() if start is None else Path(start),
              Path(__file__).resolve().parents[2]]
    for first in starts:
        first = first.resolve()
        for folder in (first, *first.parents):
            if (folder / "bench" / "results").is_dir():
                return folder / "bench" / "results"
    return None


def recorded_benchmark(name: str, start: str | Path | None = None) -> dict[str, Any] | None:
    """The recorded result ``bench/results/<name>.json`` as a dict, or ``None`` when nothing is
    recorded under that name (or no results folder is at hand; see :func:`results_dir`).

    Raises:
        ValueError: ``name`` is not a plain file stem (letters, digits, ``-`` and ``_``).
    """
    if not isinstance(name, str) or not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"name must be a benchmark's file stem; got {name!r}")
    folder = results_dir(start)
    if folder is None or not (folder / f"{name}.json").is_file():
        return None
    return json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
