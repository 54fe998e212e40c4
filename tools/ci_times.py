#!/usr/bin/env python
"""Where the time of a CI run goes: each part's seconds, in a table and in JSON.

``.ci/run`` names a file in ``BOOK_TIMES_LOG`` (``_build/ci-times.jsonl``, emptied first); while
it is set, the parts of the run append one JSON line each (:func:`record`):

* ``tools/setup/dev.py``: the set-up (virtual environment, packages, npm assets, system packages);
* ``tools/build/build_book.py``: each build of each edition, with the chapters it executed and their
  seconds (myst-nb's own execution time); the editions of one build, built side by side, are
  one part of the table, its seconds the wall time of both;
* ``tools/build/build_pdf.py``: the PDFs;
* the tests (``tests/conftest.py``): the intervals of the tests of each group (browser, PDF,
  book, library, source checks, set-up), which contain the builds the tests start; the
  published build, which the tests start in the background (``tests/built_book.py``), runs
  beside them and is marked so (``BOOK_TIMES_BESIDE``).

At the end ``.ci/run`` calls ``python -m tools.ci_times START END``, which prints the table and
writes it beside the log as JSON (``_build/ci-times.json``). A part's seconds are its own: a
group of tests is counted without the builds and PDFs that ran inside it, so the parts add up to
the run's total, and what no part claims is ``the rest`` (pytest's collection, Python start-ups,
the shell). Only the standard library: ``tools/setup/dev.py`` records the set-up before any package
is installed.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ENV = "BOOK_TIMES_LOG"
ROOT = Path(__file__).resolve().parents[1]


def record(part: str, start: float, end: float, **extra) -> None:
    """Append ``part``'s wall-clock interval (``time.time()`` seconds) and ``extra`` to the
    file named by ``$BOOK_TIMES_LOG``; nothing when it is not set."""
    path = os.environ.get(ENV)
    if not path:
        return
    if os.environ.get("BOOK_TIMES_BESIDE"):  # a build the tests started in the background
        extra["beside"] = True
    line = json.dumps({"part": part, "start": start, "end": end, **extra}, ensure_ascii=False)
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def record_intervals(part: str, intervals: list[tuple[float, float]], **extra) -> None:
    """Like :func:`record` for a part made of many intervals (a group of tests): they are
    joined where they touch, and the lines of other parts recorded inside them are not counted
    in this part's seconds (:func:`summarise`)."""
    if os.environ.get(ENV) and intervals:
        record(part, min(s for s, _ in intervals), max(e for _, e in intervals),
               intervals=[list(iv) for iv in _union(intervals)], **extra)


def _union(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for s, e in sorted(intervals):
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def _length(intervals: list[tuple[float, float]]) -> float:
    return sum(e - s for s, e in _union(intervals))


def _minus(intervals: list[tuple[float, float]], holes: list[tuple[float, float]]) -> float:
    """Seconds of ``intervals`` not inside ``holes``."""
    own, holes = _union(intervals), _union(holes)
    return _length(own) - _length([(max(s, hs), min(e, he)) for s, e in own
                                   for hs, he in holes if min(e, he) > max(s, hs)])


def _editions_joined(leaves: list[dict]) -> list[dict]:
    """The editions of one build (lines with ``edition``, the same ``part``, overlapping or
    touching in time: built side by side) as one part whose ``editions`` list each edition's
    seconds and executed chapters."""
    out: list[dict] = []
    for ln in sorted(leaves, key=lambda x: x["start"]):
        last = out[-1] if out else None
        if ("edition" in ln and last is not None and "editions" in last
                and last["part"] == ln["part"] and ln["start"] <= last["end"]):
            last["end"] = max(last["end"], ln["end"])
        elif "edition" in ln:
            last = {"part": ln["part"], "start": ln["start"], "end": ln["end"], "spans": [],
                    "editions": [], **({"beside": True} if ln.get("beside") else {})}
            out.append(last)
        else:
            out.append(ln)
            continue
        last["spans"].append((ln["start"], ln["end"]))
        last["editions"].append({"edition": ln["edition"],
                                 "seconds": round(ln["end"] - ln["start"], 1),
                                 "executed": ln.get("executed") or {},
                                 "shared": ln.get("shared") or []})
    return out


def summarise(lines: list[dict], start: float, end: float) -> dict:
    """The parts of a run from its recorded lines: ``{"total": s, "parts": [{"part", "seconds",
    ...}], "rest": s}`` in the order the parts began. Lines with ``intervals`` (groups of tests)
    contain others; their seconds leave out every line with ``start``/``end`` inside them, except
    a part that ran beside them (``beside``: a build started in the background, whose seconds
    overlap theirs)."""
    leaves = [ln for ln in lines if "intervals" not in ln]
    # a part that ran beside others (a background build) is not taken out of them
    holes = [(ln["start"], ln["end"]) for ln in leaves if not ln.get("beside")]
    parts = []
    for ln in _editions_joined(leaves):
        extra = {k: v for k, v in ln.items() if k not in ("part", "start", "end", "spans")}
        spans = ln.get("spans") or [(ln["start"], ln["end"])]
        parts.append({"part": ln["part"], "seconds": round(_length(spans), 1),
                      "began": ln["start"], **extra})
    for ln in lines:
        if "intervals" in ln:
            spans = [tuple(iv) for iv in ln["intervals"]]
            parts.append({"part": ln["part"], "seconds": round(_minus(spans, holes), 1),
                          "began": min(s for s, _ in spans), "tests": ln.get("tests", 0)})
    parts.sort(key=lambda p: p["began"])
    total = end - start
    claimed = _length([(ln["start"], ln["end"]) for ln in leaves]
                      + [tuple(iv) for ln in lines for iv in ln.get("intervals", [])])
    return {"total": round(total, 1), "parts": parts, "rest": round(total - claimed, 1)}


def table(summary: dict) -> str:
    """The summary as a plain-text table: part, seconds, share of the total; a build's executed
    chapters beneath it."""
    total = summary["total"] or 1.0
    rows = [("part", "seconds", "share")]
    for p in summary["parts"]:
        name = p["part"] + (" [beside the tests]" if p.get("beside") else "")
        rows.append((name, f"{p['seconds']:.0f}", f"{100 * p['seconds'] / total:.0f}%"))
        for e in p.get("editions", []):
            ran = sorted(e["executed"].items(), key=lambda kv: -kv[1])
            rows.append((f"    {e['edition']}: " + (
                         f"executed {len(ran)} chapters in {sum(v for _, v in ran):.0f} s, "
                         f"slowest {ran[0][0]} {ran[0][1]:.0f} s" if ran else
                         "executed nothing (every chapter from the cache)")
                         + (f"; {len(e['shared'])} from a build with other data"
                            if e["shared"] else ""), f"{e['seconds']:.0f}", ""))
        for name, seconds in (p.get("executed") or {}).items():
            rows.append((f"    executed {name}", f"{seconds:.0f}", ""))
    rows.append(("the rest (collection, start-ups, shell)", f"{summary['rest']:.0f}",
                 f"{100 * summary['rest'] / total:.0f}%"))
    rows.append(("total (parts marked 'beside the tests' overlap others)"
                 if any(p.get("beside") for p in summary["parts"]) else "total",
                 f"{summary['total']:.0f}", "100%"))
    width = max(len(r[0]) for r in rows)
    return "\n".join(f"{a:<{width}}  {b:>7}  {c:>5}" for a, b, c in rows)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: ci_times.py START END  (seconds since the epoch; reads $BOOK_TIMES_LOG)",
              file=sys.stderr)
        return 2
    path = Path(os.environ.get(ENV) or ROOT / "_build" / "ci-times.jsonl")
    lines = []
    if path.is_file():
        for text in path.read_text(encoding="utf-8").splitlines():
            try:
                lines.append(json.loads(text))
            except ValueError:
                continue  # a line cut short by a stopped process
    summary = summarise(lines, float(argv[0]), float(argv[1]))
    summary["written"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    out = path.with_suffix(".json")  # _build/ci-times.json beside the log
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"[ci] where the time went (also in {out.name}):")
    print(table(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
