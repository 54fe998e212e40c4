#!/usr/bin/env python
"""A classroom dry run: a made-up class graded by a chapter's own tests, in seconds.

    python -m tools.classroom.dry_run mha-numpy --lang en              # prints the class report
    python -m tools.classroom.dry_run mha-numpy --lang zh --out DIR    # also DIR/grades.csv, .json
    python -m tools.classroom.assign dryrun mha-numpy --lang en          # the same

Before an instructor hands out a chapter, the dry run shows what grading will do with it. The
made-up class has, for a chapter with graded exercises ``E1 … En``:

* ``solution``: the worked solutions of the book (must get full marks);
* ``blank``: the student notebook's answer cells as handed out, every name ``...`` (zero);
* ``mistake-<E>``: the worked solutions, except exercise ``E``, answered with a typical
  mistake (the diagonal masked too, the output projection forgotten, ...): it must lose points
  in ``E`` and nowhere else, and fail a hidden test;
* ``hard-coded-<E>``: the worked solutions, except ``E``, answered with values typed in to pass
  the public checks: it must pass every public check of ``E`` and fail a hidden test.

The mistakes and the typed-in answers are data, one file per chapter in ``tools/classroom/cases/``
(``<chapter>.yml``: per exercise label, ``mistake: {what, code}`` and ``hard_coded: {code}``);
the code is the same in both editions, as the chapters' code cells are.

How it stays fast: grading a submission with otter executes the whole chapter (minutes for the
training chapters). The dry run executes only the chapter cells the answers need: it follows the
names that the answers and the tests read back through the chapter's code cells (the cells a
student notebook has, solutions left out), with Python's own scoping (:mod:`symtable`: a
function's local variables are not names of the notebook). Each submission then runs its answer
cells and every test in a copy of that namespace, in the student notebook's order, and gets the
autograder's points (``exercises.test_points``). It runs in a child process (``run``), with
``D2LMINI_LANG`` set to the edition and plots drawn off screen, so that nothing leaks into the
caller. ``grades.csv`` and ``grades.json`` have the format of ``assign.py grade --csv``, so
``assign.py report`` and :mod:`class_report` read them.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import os
import subprocess
import symtable
import sys
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tools.bookmeta import LANGS, ROOT
from tools.classroom import class_report, exercises

CASES = Path(__file__).resolve().parent / "cases"


class DryRunError(Exception):
    """The dry run could not run (a missing case file, a chapter context that fails)."""


# ---------------------------------------------------------------------------- names
@dataclass
class CellNames:
    """The names a code cell binds in the notebook's namespace and the names it reads from it."""

    defined: set[str] = field(default_factory=set)
    used: set[str] = field(default_factory=set)


def cell_names(source: str) -> CellNames:
    """:class:`CellNames` of ``source`` (IPython magics ignored). A name counts as read when the
    cell reads it before binding it, in the order Python evaluates the statements (a loop's
    iterable before its target, a statement's right-hand side before its targets); names read
    inside functions, classes and comprehensions count when they are the notebook's (global)
    names, their own local variables do not."""
    try:
        tree = ast.parse(exercises._python_only(source))
    except SyntaxError as e:
        raise DryRunError(f"a code cell does not parse: {e}\n{source[:300]}") from None
    out = CellNames()
    _statements(tree.body, set(), out)
    return out


def _statements(stmts: list[ast.stmt], bound: set[str], out: CellNames) -> None:
    for stmt in stmts:
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            _simple(ast.Expr(stmt.iter), bound, out)
            _bind(stmt.target, bound, out)
            _statements(stmt.body + stmt.orelse, bound, out)
        elif isinstance(stmt, (ast.While, ast.If)):
            _simple(ast.Expr(stmt.test), bound, out)
            _statements(stmt.body + stmt.orelse, bound, out)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                _simple(ast.Expr(item.context_expr), bound, out)
                if item.optional_vars is not None:
                    _bind(item.optional_vars, bound, out)
            _statements(stmt.body, bound, out)
        elif isinstance(stmt, ast.Try):
            _statements(stmt.body, bound, out)
            for handler in stmt.handlers:
                if handler.type is not None:
                    _simple(ast.Expr(handler.type), bound, out)
                if handler.name:
                    bound.add(handler.name)
                _statements(handler.body, bound, out)
            _statements(stmt.orelse + stmt.finalbody, bound, out)
        else:
            _simple(stmt, bound, out)


def _bind(target: ast.expr, bound: set[str], out: CellNames) -> None:
    """A loop's or a ``with``'s target: its names are bound; a subscript or attribute in it
    reads its base."""
    for node in ast.walk(target):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                bound.add(node.id)
                out.defined.add(node.id)
            elif node.id not in bound:
                out.used.add(node.id)


def _simple(stmt: ast.stmt, bound: set[str], out: CellNames) -> None:
    """One statement, through :mod:`symtable`: what it reads that is not bound yet, then what it
    binds."""
    top = symtable.symtable(ast.unparse(stmt), "<statement>", "exec")
    read = {s.get_name() for s in top.get_symbols() if s.is_referenced()}

    def nested(table: symtable.SymbolTable) -> None:
        for child in table.get_children():
            read.update(s.get_name() for s in child.get_symbols()
                        if s.is_global() and (s.is_referenced() or s.is_assigned()))
            nested(child)
    nested(top)
    out.used |= read - bound
    for s in top.get_symbols():
        if s.is_assigned() or s.is_imported() or s.is_namespace():
            bound.add(s.get_name())
            out.defined.add(s.get_name())


def needed_cells(context: list[str], sources: list[str], names: set[str] = frozenset()
                 ) -> list[int]:
    """Indices of the cells of ``context`` (in order) that ``sources`` and the further
    ``names`` need: walking back from the end, a cell is kept when it binds a name still
    needed, and its own reads become needed."""
    need: set[str] = set(names)
    for src in sources:
        need |= cell_names(src).used
    keep = []
    for i in range(len(context) - 1, -1, -1):
        names = cell_names(context[i])
        if names.defined & need:
            keep.append(i)
            need = (need - names.defined) | names.used
    return sorted(keep)


# ---------------------------------------------------------------------------- the class
@dataclass
class Chapter:
    """What the dry run needs of one edition of a chapter."""

    name: str
    lang: str
    context: list[str]  # the code cells a student notebook has, in order
    graded: list[exercises.Exercise]


def read(chapter: str, lang: str) -> Chapter:
    _, segments = exercises.read_chapter(ROOT / "book" / lang / f"{chapter}.md")
    context, i = [], 0
    while i < len(segments):
        seg = segments[i]
        if seg.kind == "code":
            context.append(seg.text)
        elif seg.kind == "exercise":
            i = exercises._skip_solution(segments, i)
        i += 1
    graded = [ex for ex in exercises.exercises(segments) if ex.all_tests]
    return Chapter(chapter, lang, context, graded)


def solution_code(ex: exercises.Exercise) -> str:
    """The worked solution's code cells, as one answer."""
    return "\n\n".join(s.text for s in ex.solution if s.kind == "code")


def load_cases(chapter: str) -> dict[str, dict]:
    """``tools/classroom/cases/<chapter>.yml``: per exercise label, ``mistake`` and
    ``hard_coded``."""
    path = CASES / f"{chapter}.yml"
    if not path.is_file():
        raise DryRunError(f"{path.relative_to(ROOT)} is missing: every chapter with graded "
                          "exercises has one (a typical mistake and a typed-in answer per "
                          "exercise)")
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def submissions(ch: Chapter, cases: dict[str, dict]) -> dict[str, dict[str, str]]:
    """The made-up class: ``{submission: {exercise label: answer code}}``."""
    solution = {ex.label: solution_code(ex) for ex in ch.graded}
    out = {"solution": solution,
           "blank": {ex.label: exercises.answer_skeleton(ex, ch.lang) for ex in ch.graded}}
    for ex in ch.graded:
        case = cases.get(ex.label)
        if not case or "mistake" not in case or "hard_coded" not in case:
            raise DryRunError(f"tools/classroom/cases/{ch.name}.yml: {ex.label} needs a `mistake` "
                              "(what, code) and a `hard_coded` (code)")
        out[f"mistake-{ex.label}"] = {**solution, ex.label: case["mistake"]["code"]}
        out[f"hard-coded-{ex.label}"] = {**solution, ex.label: case["hard_coded"]["code"]}
    return out


def test_cases(ex: exercises.Exercise) -> list[dict]:
    """The exercise's test cases as the autograder names them (``<label> - <k>``)."""
    points = exercises.test_points(ex)
    return [{"name": f"{ex.label} - {k + 1}", "hidden": k >= len(ex.tests), "points": p}
            for k, p in enumerate(points)]


def context_for(ch: Chapter, subs: dict[str, dict[str, str]]) -> list[int]:
    """The chapter cells the made-up class needs: what its answers read, and what the tests
    read that the worked solutions do not define (an answer runs before its tests)."""
    answers = [code for sub in subs.values() for code in sub.values()]
    answered: set[str] = set()
    for ex in ch.graded:
        answered |= cell_names(solution_code(ex)).defined
    need_tests = set()
    for ex in ch.graded:
        for t in ex.all_tests:
            need_tests |= cell_names(t).used - answered
    return needed_cells(ch.context, answers, need_tests)


# ---------------------------------------------------------------------------- running
def _error(exc: BaseException, source: str, filename: str) -> str:
    """The exception's first line and the line of ``source`` it came from."""
    line = ""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == filename and frame.lineno:
            line = source.splitlines()[frame.lineno - 1].strip()
            break
    text = f"{type(exc).__name__}: {exc}".strip().rstrip(":").splitlines()[0]
    return f"{text} ({line})" if line else text


def _exec(source: str, ns: dict, filename: str) -> None:
    code = compile(exercises._python_only(source), filename, "exec")
    with contextlib.redirect_stdout(io.StringIO()):
        exec(code, ns)


def grade_class(ch: Chapter, cases: dict[str, dict]) -> dict:
    """Execute the needed chapter cells, then every submission; return the rows and details
    in the format of ``assign.py grade --csv`` (``{"rows": [...], "details": {...}}``).
    Run it in a process of its own (:func:`run`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    subs = submissions(ch, cases)
    keep = context_for(ch, subs)
    ns: dict = {"__name__": "__main__"}
    for i in keep:
        try:
            _exec(ch.context[i], ns, f"<cell {i}>")
        except Exception as e:
            raise DryRunError(f"{ch.lang}/{ch.name}: chapter cell {i} failed: "
                              f"{_error(e, ch.context[i], f'<cell {i}>')}") from e
        plt.close("all")
    rows, failures = [], {}
    for name, answer in subs.items():
        sub_ns = dict(ns)
        row: dict = {"submission": name, "total": 0.0, "possible": 0.0}  # the CSV's order
        failed: dict[str, dict[str, str]] = {}
        for ex in ch.graded:
            cases_ex = test_cases(ex)
            score, errors = 0.0, {}
            answer_error = None
            try:
                _exec(answer[ex.label], sub_ns, "<answer>")
            except Exception as e:
                answer_error = "answer cell: " + _error(e, answer[ex.label], "<answer>")
            for case, src in zip(cases_ex, ex.all_tests):
                try:
                    _exec(src, dict(sub_ns), "<test>")
                except Exception as e:
                    errors[case["name"]] = answer_error or _error(e, src, "<test>")
                else:
                    score += case["points"]
            plt.close("all")
            row[ex.label] = score
            if errors:
                failed[ex.label] = errors
        row["total"] = sum(row[ex.label] for ex in ch.graded)
        row["possible"] = sum(sum(exercises.test_points(ex)) for ex in ch.graded)
        rows.append(row)
        failures[name] = failed
    details = {"chapter": ch.name, "lang": ch.lang,
               "tests": {ex.label: test_cases(ex) for ex in ch.graded},
               "failures": failures, "context_cells": keep,
               "mistakes": {label: c["mistake"].get("what", "") for label, c in cases.items()}}
    return {"rows": rows, "details": details}


def write(result: dict, csv_path: Path) -> None:
    """``csv_path`` and the JSON next to it, as ``assign.py grade --csv`` writes them."""
    class_report.write_grades(result["rows"], result["details"], csv_path)


def run(chapter: str, lang: str, out: Path | None = None) -> dict:
    """The dry run of one edition of ``chapter`` in a child process; with ``out``, also
    ``out/grades.csv`` and ``out/grades.json``. Returns what :func:`grade_class` returns."""
    if chapter not in exercises.graded_chapters(lang):
        raise DryRunError(f"chapter must be a chapter with graded exercises, one of "
                          f"{', '.join(exercises.graded_chapters(lang))}; got {chapter!r}")
    env = dict(os.environ, D2LMINI_LANG=lang, MPLBACKEND="Agg")
    env.setdefault("D2LMINI_OFFLINE", "1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    with tempfile.TemporaryDirectory() as tmp:
        result_file = Path(tmp) / "result.json"
        proc = subprocess.run(
            [sys.executable, "-m", "tools.classroom.dry_run", "_child", chapter, "--lang", lang,
             "--result", str(result_file)],
            cwd=ROOT / "book" / lang, env=env, capture_output=True, text=True, check=False)
        if proc.returncode != 0 or not result_file.exists():
            raise DryRunError(f"{lang}/{chapter}: the dry run failed (exit {proc.returncode}):"
                              f"\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
        result = json.loads(result_file.read_text(encoding="utf-8"))
    if out is not None:
        write(result, out / "grades.csv")
    return result


# ---------------------------------------------------------------------------- a hostile class
HOSTILE = CASES / "hostile.yml"
# the dry run's limits per submission: an honest made-up notebook takes a few seconds
DRY_LIMITS = {"wall_s": 15.0, "cpu_s": 6, "memory_mb": 2048, "processes": 64, "file_mb": 16,
              "notebook_mb": 2}


def load_hostile() -> dict[str, dict]:
    """``tools/classroom/cases/hostile.yml``: per attempt, ``what``, ``expect`` and ``code``
    (or ``file``: a broken notebook file)."""
    return yaml.safe_load(HOSTILE.read_text(encoding="utf-8"))


def notebook_json(cells: list[str], language: str = "python") -> dict:
    """A notebook (nbformat 4) of code cells."""
    kernel = {"name": "python3" if language == "python" else language, "language": language,
              "display_name": language}
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": kernel},
            "cells": [{"cell_type": "code", "source": c, "metadata": {}, "execution_count": None,
                       "outputs": []} for c in cells]}


def broken_file(kind: str, cells: list[str], notebook_mb: int) -> bytes:
    """A broken submission: ``corrupt`` (cut off), ``huge`` (an output larger than the
    grader accepts), ``wrong-kernel`` (R), ``no-code`` (markdown only)."""
    if kind == "corrupt":
        return json.dumps(notebook_json(cells)).encode()[:200]
    if kind == "huge":
        nb = notebook_json(cells)
        nb["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout",
                                      "text": "x" * (notebook_mb + 1) * 2 ** 20}]
        return json.dumps(nb).encode()
    if kind == "wrong-kernel":
        return json.dumps(notebook_json(["x <- 1", "print(x)"], language="R")).encode()
    if kind == "no-code":
        nb = notebook_json([])
        nb["cells"] = [{"cell_type": "markdown", "source": "My answers.", "metadata": {}}]
        return json.dumps(nb).encode()
    raise DryRunError(f"hostile.yml: unknown file {kind!r}")


def hostile_class(ch: Chapter, cases: dict[str, dict], attempts: dict[str, dict],
                  honest: list[str] | None = None) -> dict[str, bytes]:
    """The notebooks of a class: ``honest`` (names of the made-up class of :func:`submissions`,
    default: the solution and the blank notebook), then each of ``attempts`` (the blank
    notebook with the attempt's code as its last cell, or a broken file)."""
    subs = submissions(ch, cases)
    context = [ch.context[i] for i in context_for(ch, subs)]
    blank = [subs["blank"][ex.label] for ex in ch.graded]
    out = {}
    for k, name in enumerate(honest or ["solution", "blank"]):
        key = name if honest is None else f"student-{k + 1:02d}-{name}"
        cells = context + [subs[name][ex.label] for ex in ch.graded]
        out[key] = json.dumps(notebook_json(cells)).encode()
    for name, attempt in attempts.items():
        if "file" in attempt:
            out[name] = broken_file(attempt["file"], context + blank, DRY_LIMITS["notebook_mb"])
        else:
            out[name] = json.dumps(notebook_json(context + blank + [attempt["code"]])).encode()
    return out


def run_hostile(chapter: str, lang: str, attempts: list[str] | None = None,
                honest: list[str] | None = None) -> dict:
    """Grade :func:`hostile_class` as ``assign.py grade`` grades (:mod:`tools.classroom.
    grading`: each notebook in its own sandboxed process, with :data:`DRY_LIMITS`), with the
    chapter's own tests; ``attempts``: names in ``hostile.yml`` (default: all)."""
    from tools.classroom import grading, sandbox

    hostile = load_hostile()
    chosen = {name: hostile[name] for name in (attempts if attempts is not None else hostile)}
    ch = read(chapter, lang)
    notebooks = hostile_class(ch, load_cases(chapter), chosen, honest)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k, data in enumerate(notebooks.values()):
            paths.append(Path(tmp) / f"{k:02d}.ipynb")
            paths[-1].write_bytes(data)
        return grading.run_class(chapter, lang, paths, sandbox.Limits(**DRY_LIMITS),
                                 names=list(notebooks))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Grade a made-up class with a chapter's own tests "
                                "(tools/classroom/cases/<chapter>.yml) and print the class report.")
    p.add_argument("chapter")
    p.add_argument("--lang", choices=LANGS, default="en")
    p.add_argument("--out", type=Path, help="also write OUT/grades.csv and OUT/grades.json")
    p.add_argument("--hostile", action="store_true", help="grade the hostile class instead "
                   "(tools/classroom/cases/hostile.yml), each notebook in its own sandbox")
    p.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "_child":  # the child process of run()
        args = p.parse_args(argv[1:])
        ch = read(args.chapter, args.lang)
        result = grade_class(ch, load_cases(args.chapter))
        args.result.write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")
        return 0
    args = p.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = args.out or Path(tmp)
            if args.hostile:
                write(run_hostile(args.chapter, args.lang), out / "grades.csv")
            else:
                run(args.chapter, args.lang, out)
            print(class_report.report(out / "grades.csv", args.lang))
    except Exception as e:
        if type(e).__name__ not in ("DryRunError", "GradingError"):
            raise
        print(f"[classroom] {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
