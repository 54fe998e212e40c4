"""Grading untrusted notebooks: the tests run in the grader's process, the student's code in
its own (:mod:`tools.classroom.sandbox`), and only the values the tests check cross over.

For each class (one chapter, one edition), in a process of its own (:func:`run_class`):

1. the grader runs the chapter's own cells that the tests read beyond the answers (``X``,
   ``multi_head_attention``, ...), from the book's source, once (:func:`context`);
2. for each submission, the student's process executes the notebook's code cells; the grader
   then asks it for each exercise's answer names (``ex.checked_names()``), decodes them as data
   and runs the exercise's tests on them with its own NumPy, PyTorch and builtins; a function of
   the notebook is called through the pipe;
3. the points are the autograder's (``tests/*.py`` in ``autograder.zip``, otter's OK format, run
   with otter's :class:`~otter.test_files.OKTestFile`; the dry run uses the chapter's test cells
   with ``exercises.test_points``): the possible points of every exercise count, whatever the
   submission's run reports;
4. a submission that could not be graded (not a notebook, a limit reached, ...) gets 0 for what
   was not graded and a note naming why; a notebook that replaced what the tests use in its own
   process (``numpy.allclose``, ``sys.modules['otter']``, builtins, ...) gets 0 for every
   exercise, with a note naming what it replaced.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from tools.bookmeta import LANGS, ROOT
from tools.classroom import dry_run, exercises, sandbox

ERROR_LINES = 3  # lines of a failing test's error kept in the JSON
# the chapters' names of the modules the tests use, and what tests compare with
ALIASES = {"np": "numpy", "numpy": "numpy", "torch": "torch", "nn": "torch.nn",
           "F": "torch.nn.functional", "math": "math", "d2l": "d2lmini"}
COMPARISONS = ("numpy.allclose", "numpy.isclose", "numpy.array_equal",
               "numpy.testing.assert_allclose", "numpy.testing.assert_array_equal",
               "torch.allclose", "torch.isclose", "torch.equal", "torch.testing.assert_close")


class GradingError(Exception):
    """The class cannot be graded (a missing autograder, a chapter cell that fails)."""


@dataclass
class Graded:
    """One exercise as the grader grades it."""

    label: str
    names: list[str]  # the answer names, asked of the student's process
    cases: list[dict]  # {"name", "hidden", "points"}: the autograder's
    run: Callable[[dict], list[str | None]]  # the tests on an environment: an error or None each

    @property
    def possible(self) -> float:
        return sum(c["points"] for c in self.cases)


@dataclass
class Result:
    """One submission's points per exercise, failing tests and notes."""

    scores: dict[str, float] = field(default_factory=dict)
    failures: dict[str, dict[str, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def error_summary(lines: list[str]) -> str:
    """The first failing example of a doctest report and the last line of its exception."""
    text = [ln.strip() for ln in lines]
    example, error = "", ""
    for k, ln in enumerate(text):
        if ln == "Failed example:" and k + 1 < len(text) and not example:
            example = text[k + 1]
        if ln == "Exception raised:" and not error:
            rest = [t for t in text[k + 1:] if t]
            stop = next((j for j, t in enumerate(rest) if t.startswith(("Trying:", "*****"))),
                        len(rest))
            error = rest[stop - 1] if stop else ""
    found = [t for t in (example, error) if t] or [t for t in text if t][1:1 + ERROR_LINES]
    return "\n".join(found[:ERROR_LINES])


# ---------------------------------------------------------------------------- the tests
def from_autograder(autograder_zip: Path, lang: str, chapter: str, tmp: Path) -> list[Graded]:
    """The exercises of an autograder zip (otter's OK-format tests, trusted: the instructor's),
    with the answer names of the book's exercises of the same label."""
    from otter.test_files import OKTestFile

    names = {ex.label: [n for n, _ in ex.checked_names()]
             for ex in exercises.graded_exercises(lang, chapter)}
    out = []
    with zipfile.ZipFile(autograder_zip) as zf:
        for member in sorted(n for n in zf.namelist()
                             if n.startswith("tests/") and n.endswith(".py")):
            path = tmp / Path(member).name
            path.write_bytes(zf.read(member))
            test = OKTestFile.from_file(str(path))
            cases = [{"name": f"{test.name} - {k + 1}", "hidden": bool(c.hidden),
                      "points": float(c.points or 0)} for k, c in enumerate(test.test_cases)]
            out.append(Graded(test.name, names.get(test.name, []), cases, _ok_runner(test)))
    return out


def _ok_runner(test) -> Callable[[dict], list[str | None]]:
    def run(env: dict) -> list[str | None]:
        test.run(env)
        return [None if r.passed else error_summary(str(r.message or "").splitlines()) or
                "failed" for r in test.test_case_results]
    return run


def from_book(ch: dry_run.Chapter) -> list[Graded]:
    """The exercises of the chapter's source: its test cells, with ``exercises.test_points``."""
    out = []
    for ex in ch.graded:
        out.append(Graded(ex.label, [n for n, _ in ex.checked_names()], dry_run.test_cases(ex),
                          _source_runner(ex.all_tests)))
    return out


def _source_runner(sources: list[str]) -> Callable[[dict], list[str | None]]:
    def run(env: dict) -> list[str | None]:
        errors: list[str | None] = []
        for src in sources:
            try:
                dry_run._exec(src, dict(env), "<test>")
            except Exception as e:
                errors.append(dry_run._error(e, src, "<test>"))
            else:
                errors.append(None)
        return errors
    return run


def watch_list(ch: dry_run.Chapter) -> list[str]:
    """What the tests use from NumPy, PyTorch, ``math`` and ``d2lmini`` (``numpy.allclose``,
    ``torch.nn.functional.softmax``, ...), and the usual comparisons: what a notebook must not
    replace in its own process (:mod:`tools.classroom.student_side` reports it)."""
    import ast

    found = set(COMPARISONS)
    for ex in ch.graded:
        for src in ex.all_tests:
            for node in ast.walk(ast.parse(src)):
                chain = []
                while isinstance(node, ast.Attribute):
                    chain.insert(0, node.attr)
                    node = node.value
                if chain and isinstance(node, ast.Name) and node.id in ALIASES:
                    found.add(".".join([ALIASES[node.id], *chain]))
    return sorted(found)


def context(ch: dry_run.Chapter, graded: list[Graded]) -> dict:
    """The chapter's own cells the tests need beyond the answers, run here, once."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    answers = {n for g in graded for n in g.names}
    need: set[str] = set()
    for ex in ch.graded:
        for t in ex.all_tests:
            need |= dry_run.cell_names(t).used
    ns: dict = {"__name__": "__main__"}
    for i in dry_run.needed_cells(ch.context, [], need - answers):
        try:
            dry_run._exec(ch.context[i], ns, f"<cell {i}>")
        except Exception as e:
            raise GradingError(f"{ch.lang}/{ch.name}: chapter cell {i} failed: "
                               f"{dry_run._error(e, ch.context[i], f'<cell {i}>')}") from e
        plt.close("all")
    return ns


# ---------------------------------------------------------------------------- a submission
def _limit_note(errors: list[dict], limits: sandbox.Limits) -> list[str]:
    """The notebook's cell errors, a limit reached named as such."""
    notes = []
    for e in errors[:3]:
        text = str(e.get("error", ""))[:300]
        if text.startswith("MemoryError"):
            text = f"memory limit ({limits.memory_mb} MB) reached: {text}"
        elif text.startswith("BlockingIOError") and "fork" in text.lower() or "[Errno 11]" in text:
            text = f"process limit ({limits.processes} processes) reached: {text}"
        notes.append(f"cell {e.get('cell', '?')}: {text}")
    return notes


def _answers(student: sandbox.Student, names: list[str]) -> tuple[dict, list[str]]:
    """The values of ``names`` in the student's process, decoded; what could not be read."""
    values, problems = {}, []
    for name in names:
        reply = student.request({"op": "get", "name": name})
        if reply.get("missing"):
            continue  # the test's NameError says so
        try:
            if "value" not in reply:
                raise ValueError("a reply of the wrong shape")
            values[name] = sandbox.decode(reply["value"], student)
        except Exception as e:
            problems.append(f"{name}: the value cannot be passed to the tests "
                            f"({type(e).__name__}: {e})"[:300])
            continue
        if isinstance(values[name], sandbox.Opaque):
            problems.append(f"{name}: a {values[name].type_name}, which the tests cannot use "
                            "(numbers, strings, containers, arrays, tensors and functions can)")
    return values, problems


def _not_graded(result: Result, graded: list[Graded], why: str) -> Result:
    for g in graded:
        result.scores[g.label] = 0.0
        result.failures[g.label] = {c["name"]: f"not graded: {why}" for c in g.cases}
    return result


def _run_tests(student: sandbox.Student, graded: list[Graded], ctx: dict,
               result: Result) -> None:
    answers = {n for g in graded for n in g.names}
    for g in graded:
        values, problems = _answers(student, g.names)
        result.notes += problems
        env = {k: v for k, v in ctx.items() if k not in answers}
        env.update({k: v for k, v in values.items()})
        errors = g.run(env)
        result.scores[g.label] = sum(c["points"] for c, err in zip(g.cases, errors)
                                     if err is None)
        failed = {c["name"]: err for c, err in zip(g.cases, errors) if err is not None}
        if failed:
            result.failures[g.label] = failed


@dataclass
class Setup:
    """What grading a class needs besides the submissions."""

    graded: list[Graded]
    ctx: dict  # the chapter's cells the tests need, run in the grader
    watch: list[str]  # what the notebook must not replace (:func:`watch_list`)
    limits: sandbox.Limits
    env: dict[str, str]  # variables for the student's process


def grade_submission(cells: list[str], setup: Setup,
                     files: dict[str, bytes] | None = None) -> Result:
    """Run ``cells`` in a student process (``files`` in its folder) and grade them with the
    setup's tests."""
    result, graded, limits = Result(), setup.graded, setup.limits
    with sandbox.Student(limits, setup.env, files) as student:
        try:
            reply = student.request({"op": "run", "cells": cells, "watch": setup.watch})
            changed = [str(c)[:80] for c in reply.get("changed", [])][:10]
            result.notes += _limit_note(list(reply.get("errors", [])), limits)
            if changed:
                why = ("the notebook replaced what the tests use: " + ", ".join(changed))
                result.notes.insert(0, why)
                return _not_graded(result, graded, why)
            _run_tests(student, graded, setup.ctx, result)
            if student.ended:  # a limit reached while a test called the notebook's function
                result.notes.insert(0, student.ended)
        except sandbox.SubmissionError as e:
            result.notes.insert(0, str(e))
            for g in graded:  # what was graded before the limit keeps its points
                if g.label not in result.scores:
                    _not_graded_one(result, g, str(e))
        except (TypeError, AttributeError, KeyError, ValueError):  # a reply of the wrong shape
            result.notes.insert(0, "the notebook's process sent a reply of the wrong shape")
            for g in graded:
                _not_graded_one(result, g, "malformed reply")
    return result


def _not_graded_one(result: Result, g: Graded, why: str) -> None:
    result.scores[g.label] = 0.0
    result.failures[g.label] = {c["name"]: f"not graded: {why}" for c in g.cases}


# ---------------------------------------------------------------------------- a class
def grade_class(setup: Setup, submissions: list[Path], chapter: str, lang: str,
                log: Callable[[str], None] = lambda _: None) -> dict:
    """Every submission, one after the other; the rows and details of ``assign.py grade
    --csv`` (``{"rows": [...], "details": {...}}``), with, per submission,
    ``details["notes"]`` (why something was not graded: a limit, a broken file, tampering;
    the notebook's first cell errors) and ``details["seconds"]`` (from reading the file to the
    last test), and the limits and isolation applied."""
    sandbox.become_subreaper()
    graded, limits = setup.graded, setup.limits
    possible = sum(g.possible for g in graded)
    rows, failures, notes, seconds = [], {}, {}, {}
    for sub in submissions:
        start = time.monotonic()
        try:
            cells = sandbox.read_cells(sub, limits)
        except sandbox.SubmissionError as e:
            result = _not_graded(Result(notes=[str(e)]), graded, str(e))
        else:
            result = grade_submission(cells, setup, {f"{chapter}.ipynb": sub.read_bytes()})
        row = {"submission": str(sub), "total": float(sum(result.scores.values())),
               "possible": possible}
        row.update({g.label: result.scores.get(g.label, 0.0) for g in graded})
        rows.append(row)
        failures[str(sub)] = result.failures
        notes[str(sub)] = result.notes
        seconds[str(sub)] = round(time.monotonic() - start, 1)
        log(f"{sub}: {row['total']:g} / {possible:g}"
            + (f" ({result.notes[0]})" if result.notes else ""))
    details = {"chapter": chapter, "lang": lang,
               "tests": {g.label: g.cases for g in graded}, "failures": failures,
               "notes": notes, "seconds": seconds, "limits": limits.__dict__,
               "isolation": sandbox.isolation()}
    return {"rows": rows, "details": details}


def student_env(lang: str) -> dict[str, str]:
    return {"D2LMINI_LANG": lang}


def run_class(chapter: str, lang: str, submissions: list[Path], limits: sandbox.Limits,
              autograder: Path | None = None, names: list[str] | None = None) -> dict:
    """:func:`grade_class` in a process of its own (the grader's: the chapter's cells and
    the tests run there, not in the caller); ``autograder``: the tests of this zip, else the
    chapter's own test cells; ``names``: the submissions' names in the result (default: the
    paths as given)."""
    result = _run_class(chapter, lang, submissions, limits, autograder)
    rename = dict(zip([str(s.resolve()) for s in submissions],
                      names or [str(s) for s in submissions]))
    for row in result["rows"]:
        row["submission"] = rename[row["submission"]]
    for key in ("failures", "notes", "seconds"):
        result["details"][key] = {rename[k]: v for k, v in result["details"][key].items()}
    return result


def _run_class(chapter: str, lang: str, submissions: list[Path], limits: sandbox.Limits,
               autograder: Path | None) -> dict:
    env = dict(os.environ, D2LMINI_LANG=lang, MPLBACKEND="Agg")
    env.setdefault("D2LMINI_OFFLINE", "1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    with tempfile.TemporaryDirectory() as tmp:
        result_file = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", "tools.classroom.grading", chapter,
               *[str(s.resolve()) for s in submissions], "--lang", lang,
               "--result", str(result_file), "--limits", json.dumps(limits.__dict__),
               *(["--autograder", str(autograder.resolve())] if autograder else [])]
        proc = subprocess.run(cmd, cwd=ROOT / "book" / lang, env=env, stdout=sys.stderr,
                              check=False)
        if proc.returncode != 0 or not result_file.exists():
            raise GradingError(f"{lang}/{chapter}: grading failed (exit {proc.returncode})")
        return json.loads(result_file.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    """The grader's process of :func:`run_class`."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("chapter")
    p.add_argument("submissions", nargs="*", type=Path)
    p.add_argument("--lang", choices=LANGS, required=True)
    p.add_argument("--autograder", type=Path)
    p.add_argument("--limits", type=json.loads, default={})
    p.add_argument("--result", type=Path, required=True)
    args = p.parse_args(argv)
    ch = dry_run.read(args.chapter, args.lang)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            graded = (from_autograder(args.autograder, args.lang, args.chapter, Path(tmp))
                      if args.autograder else from_book(ch))
            setup = Setup(graded, context(ch, graded), watch_list(ch),
                          sandbox.Limits(**args.limits), student_env(args.lang))
            result = grade_class(setup, args.submissions, args.chapter, args.lang,
                                 log=lambda m: print(f"[grade] {m}", flush=True))
    except (GradingError, dry_run.DryRunError) as e:
        print(f"[grade] {e}", file=sys.stderr)
        return 1
    args.result.write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
