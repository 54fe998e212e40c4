#!/usr/bin/env python
"""Graded assignments from the chapters' exercises, with otter-grader (no Docker, no network).

    python -m tools.classroom.assign                           # all graded chapters, both editions
    python -m tools.classroom.assign make mha-numpy --lang en  # one chapter, one edition
    python -m tools.classroom.assign list                      # each chapter's graded exercises
    python -m tools.classroom.assign grade mha-numpy --lang en subs/*.ipynb [--csv grades.csv]
    python -m tools.classroom.assign report grades.csv [--lang zh|en] [--html report.html]
    python -m tools.classroom.assign dryrun mha-numpy --lang zh  # a made-up class, in seconds

``make`` writes, per edition and chapter, into ``_build/assign/<lang>/<chapter>/``:

* ``student/<chapter>.ipynb``: the notebook to hand out. The chapter without any solution; each
  graded exercise has an answer cell (the names its tests check, set to ``...``) and a
  ``grader.check("<exercise label>")`` cell that runs its public checks (not its hidden tests);
* ``autograder/autograder.zip``: what grades a submission (``otter run``), and
  ``autograder/<chapter>.ipynb``, the same notebook with the worked solutions.

The exercises' tests are code cells of the chapter's source (hidden on the pages, identical in
both editions), which the book build runs against the worked solutions: ``exercise-test`` cells
are public checks, ``exercise-test-hidden`` cells hidden tests that only ``grade`` runs (points:
``exercises.test_points``). ``grade`` executes each submission in this Python environment (the
book's requirements plus otter-grader; nothing is downloaded) and prints, or writes as CSV, the
points of every graded exercise; with ``--csv`` it also writes, next to the CSV, a JSON file with
each submission's failing tests and their errors. ``report`` summarises both for the class
(``class_report.py``). Grading executes the whole notebook: seconds for the NumPy chapter,
minutes on a CPU for the training chapter.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import nbformat

from tools.bookmeta import LANGS, ROOT
from tools.classroom import class_report, dry_run, exercises, export_notebooks

OUT = ROOT / "_build" / "assign"
OTTER_REQUIREMENT = ("otter", "otter-grader>=6")


class AssignError(Exception):
    """A step failed; ``main`` prints the message and exits with status 1."""


def log(msg: str) -> None:
    print(f"[assign] {msg}", flush=True)


def otter_command() -> list[str]:
    exe = Path(sys.executable).with_name("otter")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("otter")
    if found is None:
        raise AssignError("otter-grader is not installed (pip install otter-grader)")
    return [found]


def master_notebook(lang: str, chapter: str, repo_url: str) -> nbformat.NotebookNode:
    """The chapter in otter's assignment format, with the book's install cell first."""
    src = ROOT / "book" / lang / f"{chapter}.md"
    _, segments = exercises.read_chapter(src)
    config = {
        "name": chapter,
        "init_cell": True,
        "check_all_cell": False,
        "export_cell": False,
        "run_tests": False,
        "solutions_pdf": False,
        "template_pdf": False,
        "generate": True,
        "tests": {"files": False, "ok_format": True},
    }
    prefix, first = exercises.numbering(src)
    cells = exercises.otter_master_cells(segments, lang, config, first, prefix)
    nb = export_notebooks.notebook(cells, src, lang, repo_url, extra=(OTTER_REQUIREMENT,),
                                   name=f"{chapter}.ipynb")
    # otter reads the configuration from the first cells: it must come before the install cell
    nb.cells = [nb.cells[1], nb.cells[0], *nb.cells[2:]]
    return nb


def make(lang: str, chapter: str, out: Path = OUT, *, repo_url: str | None = None,
         run_tests: bool = False) -> Path:
    """Write the student notebook and the autograder of one chapter; return its folder."""
    if not exercises.graded_exercises(lang, chapter):
        raise AssignError(f"{lang}/{chapter}: no exercise with tests (see `assign.py list`)")
    repo_url = repo_url or export_notebooks.repository_url()
    dest = out / lang / chapter
    with tempfile.TemporaryDirectory() as tmp:
        master = Path(tmp) / f"{chapter}.ipynb"
        nbformat.write(master_notebook(lang, chapter, repo_url), master)
        dist = Path(tmp) / "dist"
        cmd = [*otter_command(), "assign", "--no-pdfs", str(master), str(dist)]
        if not run_tests:
            cmd.insert(-2, "--no-run-tests")
        proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise AssignError(f"{lang}/{chapter}: otter assign failed:\n"
                              f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        zips = sorted((dist / "autograder").glob("*.zip"))
        if len(zips) != 1:
            raise AssignError(f"{lang}/{chapter}: expected one autograder zip, got {zips}")
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        (dest / "autograder").mkdir()
        shutil.copyfile(zips[0], dest / "autograder" / "autograder.zip")
        shutil.copyfile(dist / "autograder" / f"{chapter}.ipynb",
                        dest / "autograder" / f"{chapter}.ipynb")
        shutil.copytree(dist / "student", dest / "student")
    for which in ("student", "autograder"):
        tidy(dest / which / f"{chapter}.ipynb")
    return dest


def tidy(path: Path) -> None:
    """The install cell first (otter puts its ``import otter`` cell on top), and without the
    code cells that otter emptied (the solutions' code, in the student's notebook)."""
    nb = nbformat.read(path, as_version=4)
    install = [c for c in nb.cells if "d2lmini-install" in c.metadata.get("tags", [])]
    rest = [c for c in nb.cells if c not in install
            and not (c.cell_type == "code" and not c.source.strip())]
    nb.cells = install + rest
    nbformat.write(nb, path)


# ---------------------------------------------------------------------------- grading
CASE_RE = re.compile(r"^\s*(?P<name>\S+ - \d+) result:\s*$")
ERROR_LINES = 3  # lines of a failing test's error kept in the JSON


def autograder_cases(autograder_zip: Path) -> dict[str, list[dict]]:
    """The test cases in an autograder zip: ``{exercise label: [{"name", "hidden", "points"}]}``,
    named as otter names them in its output (``"<label> - 1"``, ``"<label> - 2"``, ...)."""
    cases: dict[str, list[dict]] = {}
    with zipfile.ZipFile(autograder_zip) as zf:
        for name in sorted(n for n in zf.namelist() if n.startswith("tests/")
                           and n.endswith(".py")):
            ns: dict = {}
            exec(zf.read(name).decode("utf-8"), ns)  # otter's OK-format file: test = {...}
            test = ns["test"]
            found = [c for suite in test["suites"] for c in suite["cases"]]
            cases[test["name"]] = [{"name": f"{test['name']} - {k + 1}",
                                    "hidden": bool(c.get("hidden")),
                                    "points": float(c.get("points") or 0)}
                                   for k, c in enumerate(found)]
    return cases


def failed_cases(output: str) -> dict[str, str]:
    """``{test case name: first lines of its error}`` for each failing case in otter's output of
    one question (cases that passed, and questions that passed whole, are left out)."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in output.splitlines():
        m = CASE_RE.match(line)
        if m:
            current = blocks.setdefault(m.group("name"), [])
        elif current is not None:
            current.append(line)
    return {name: _error_summary(lines) for name, lines in blocks.items()
            if any("failed" in ln.lower() or "\u274c" in ln for ln in lines[:2])}


def _error_summary(lines: list[str]) -> str:
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


def grade_one(autograder_zip: Path, submission: Path, workdir: Path) -> dict:
    """Run otter's autograder on one submission, here (no Docker); return otter's results:
    ``{exercise label: {"score": s, "possible": p}}`` plus ``"total"``, ``"possible"`` and
    ``"failures"``: ``{exercise label: {test case name: first lines of its error}}``."""
    workdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.setdefault("D2LMINI_OFFLINE", "1")
    env.pop("MPLBACKEND", None)
    cmd = [*otter_command(), "run", "--no-logo", "-a", str(autograder_zip.resolve()),
           "-o", str(workdir.resolve()), str(submission.resolve())]
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, check=False)
    results = workdir / "results.json"
    if proc.returncode != 0 or not results.exists():
        raise AssignError(f"{submission}: otter run failed:\n{proc.stdout[-3000:]}\n"
                          f"{proc.stderr[-3000:]}")
    data = json.loads(results.read_text(encoding="utf-8"))
    scores: dict = {}
    failures: dict[str, dict[str, str]] = {}
    for t in data.get("tests", []):
        if not t.get("max_score"):  # otter's summary of the public tests, worth nothing
            continue
        scores[t["name"]] = {"score": float(t.get("score", 0)),
                             "possible": float(t.get("max_score", 0))}
        failed = failed_cases(t.get("output", ""))
        if failed or scores[t["name"]]["score"] < scores[t["name"]]["possible"]:
            failures[t["name"]] = failed
    scores["total"] = sum(v["score"] for v in scores.values())
    scores["possible"] = sum(v["possible"] for k, v in scores.items() if isinstance(v, dict))
    scores["failures"] = failures
    return scores


def grade(lang: str, chapter: str, submissions: list[Path], out: Path = OUT,
          csv_path: Path | None = None) -> list[dict]:
    """Grade ``submissions``; with ``csv_path``, write the points (CSV) and, next to it
    (:func:`details_path`), the failing tests of each submission (JSON)."""
    autograder = out / lang / chapter / "autograder" / "autograder.zip"
    if not autograder.exists():
        raise AssignError(f"{autograder}: run `python -m tools.classroom.assign make {chapter} "
                          f"--lang {lang}` first")
    rows, failures = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for k, sub in enumerate(submissions):
            scores = grade_one(autograder, sub, Path(tmp) / str(k))
            failures[str(sub)] = scores.pop("failures")
            row = {"submission": str(sub), "total": scores.pop("total"),
                   "possible": scores.pop("possible")}
            row.update({label: v["score"] for label, v in scores.items()})
            rows.append(row)
            log(f"{sub}: {row['total']:g} / {row['possible']:g}")
    if csv_path is not None and rows:
        details = {"chapter": chapter, "lang": lang, "tests": autograder_cases(autograder),
                   "failures": failures}
        class_report.write_grades(rows, details, csv_path)
        log(f"grades written to {csv_path}, failing tests to {class_report.details_path(csv_path)}")
    return rows


# ---------------------------------------------------------------------------- command line
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Graded assignments (otter-grader) from the chapters' exercises.")
    sub = p.add_subparsers(dest="cmd", required=True)
    pm = sub.add_parser("make", help="student notebook + autograder per chapter (default)")
    pm.add_argument("chapters", nargs="*", help="chapter file names (default: every chapter "
                    "with graded exercises)")
    pm.add_argument("--lang", choices=LANGS, action="append",
                    help="an edition (repeatable; default: both)")
    pm.add_argument("--out", type=Path, default=OUT, help="default: _build/assign")
    pm.add_argument("--run-tests", action="store_true",
                    help="let otter execute the solution notebook and check that its tests "
                    "pass (the book build already does this)")
    pl = sub.add_parser("list", help="the graded exercises of each chapter")
    pl.add_argument("--lang", choices=LANGS, default="en")
    pg = sub.add_parser("grade", help="grade submissions of one chapter")
    pg.add_argument("chapter")
    pg.add_argument("submissions", nargs="+", type=Path)
    pg.add_argument("--lang", choices=LANGS, required=True)
    pg.add_argument("--out", type=Path, default=OUT, help="where `make` wrote the autograder")
    pg.add_argument("--csv", type=Path, help="write the points as CSV (and the failing tests "
                    "as JSON next to it)")
    pr = sub.add_parser("report", help="the class's results, from the CSV of `grade`")
    pr.add_argument("csv", type=Path)
    pr.add_argument("--lang", choices=LANGS, default="en", help="language of the report")
    pr.add_argument("--html", type=Path, help="also write the report as an HTML page")
    pd = sub.add_parser("dryrun", help="grade a made-up class (the worked solution, a blank "
                        "notebook, a typical mistake and a typed-in answer per exercise) with "
                        "the chapter's own tests, in seconds (tools/classroom/dry_run.py)")
    pd.add_argument("chapter")
    pd.add_argument("--lang", choices=LANGS, default="en", help="edition and report language")
    pd.add_argument("--out", type=Path, help="also write OUT/grades.csv and OUT/grades.json")
    return p


def _run(args: argparse.Namespace) -> None:
    """One command other than ``dryrun``; raises :class:`AssignError` for the user's mistakes."""
    if args.cmd == "list":
        for chapter in exercises.graded_chapters(args.lang):
            print(f"{chapter}: " + ", ".join(
                f"{ex.label} ({len(ex.tests)} public, {len(ex.hidden_tests)} hidden tests)"
                for ex in exercises.graded_exercises(args.lang, chapter)))
    elif args.cmd == "make":
        for lang in args.lang or LANGS:
            for chapter in args.chapters or exercises.graded_chapters(lang):
                dest = make(lang, chapter, args.out, run_tests=args.run_tests)
                shown = dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest
                log(f"{lang}/{chapter}: {shown}/{{student,autograder}}")
    elif args.cmd == "grade":
        grade(args.lang, args.chapter, args.submissions, args.out, args.csv)
    else:
        if not args.csv.exists():
            raise AssignError(f"{args.csv}: no such file (see `assign.py grade --csv`)")
        print(class_report.report(args.csv, args.lang, args.html), end="")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in {"make", "list", "grade", "report", "dryrun", "-h",
                                   "--help"}:
        argv.insert(0, "make")
    args = _parser().parse_args(argv)
    if args.cmd == "dryrun":
        return dry_run.main([args.chapter, "--lang", args.lang]
                            + (["--out", str(args.out)] if args.out else []))
    try:
        _run(args)
    except AssignError as e:
        print(f"[assign] {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
