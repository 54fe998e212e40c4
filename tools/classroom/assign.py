#!/usr/bin/env python
"""Graded assignments from the chapters' exercises, with otter-grader's tests (no Docker).

    python -m tools.classroom.assign                           # all graded chapters, both editions
    python -m tools.classroom.assign make mha-numpy --lang en  # one chapter, one edition
    python -m tools.classroom.assign list                      # each chapter's graded exercises
    python -m tools.classroom.assign grade mha-numpy --lang en subs/*.ipynb [--csv grades.csv]
    python -m tools.classroom.assign report grades.csv [--lang zh|en] [--html report.html]
    python -m tools.classroom.assign dryrun mha-numpy --lang zh  # a made-up class, in seconds
    python -m tools.classroom.assign dryrun mha-numpy --hostile  # a class that attacks the grader

``make`` writes, per edition and chapter, into ``_build/assign/<lang>/<chapter>/``:

* ``student/<chapter>.ipynb``: the notebook to hand out. The chapter without any solution; each
  graded exercise has an answer cell (the names its tests check, set to ``...``) and a
  ``grader.check("<exercise label>")`` cell that runs its public checks (not its hidden tests);
* ``autograder/autograder.zip``: the tests (otter's format), and ``autograder/<chapter>.ipynb``,
  the same notebook with the worked solutions; the folder is readable by its owner only.

The exercises' tests are code cells of the chapter's source (hidden on the pages, identical in
both editions), which the book build runs against the worked solutions: ``exercise-test`` cells
are public checks, ``exercise-test-hidden`` cells hidden tests that only ``grade`` runs (points:
``exercises.test_points``). ``grade`` treats each submission as untrusted
(:mod:`tools.classroom.grading`, :mod:`tools.classroom.sandbox`): the notebook runs in a process
of its own, with time, memory and process limits, a throwaway folder, no network and, when the
grader is root, as the user ``nobody``; the autograder's tests run in the grader's process on the
values of the answers, passed as data. It prints, or writes as CSV, the points of every graded
exercise; with ``--csv`` it also writes, next to the CSV, a JSON file with each submission's
failing tests and notes (a limit reached, a broken file, tampering). ``report`` summarises both
for the class (``class_report.py``). Grading executes the whole notebook: seconds for the NumPy
chapter, minutes on a CPU for the training chapter.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from tools.bookmeta import LANGS, ROOT
from tools.classroom import class_report, dry_run, exercises, export_notebooks, grading, sandbox

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
    (dest / "autograder").chmod(0o700)  # the hidden tests: not for other users (the graded)
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
def grade_one(autograder_zip: Path, submission: Path, lang: str, chapter: str,
              limits: sandbox.Limits | None = None) -> dict:
    """Grade one submission (:func:`grade`, without files): ``{exercise label: {"score": s,
    "possible": p}}`` plus ``"total"``, ``"possible"``, ``"failures"`` (``{exercise label:
    {test case name: first lines of its error}}``) and ``"notes"`` (why something was not
    graded)."""
    result = grading.run_class(chapter, lang, [submission], limits or sandbox.Limits(),
                               autograder_zip)
    row, details = result["rows"][0], result["details"]
    scores: dict = {g: {"score": row[g], "possible": sum(c["points"] for c in cases)}
                    for g, cases in details["tests"].items()}
    scores.update(total=row["total"], possible=row["possible"],
                  failures=details["failures"][row["submission"]],
                  notes=details["notes"][row["submission"]])
    return scores


def grade(lang: str, chapter: str, submissions: list[Path], out: Path = OUT,
          csv_path: Path | None = None, limits: sandbox.Limits | None = None) -> list[dict]:
    """Grade ``submissions``, each apart (:mod:`tools.classroom.grading`); with ``csv_path``,
    write the points (CSV) and, next to it (:func:`details_path`), the failing tests and the
    notes of each submission (JSON)."""
    autograder = out / lang / chapter / "autograder" / "autograder.zip"
    if not autograder.exists():
        raise AssignError(f"{autograder}: run `python -m tools.classroom.assign make {chapter} "
                          f"--lang {lang}` first")
    try:
        result = grading.run_class(chapter, lang, submissions, limits or sandbox.Limits(),
                                   autograder)
    except grading.GradingError as e:
        raise AssignError(str(e)) from None
    if csv_path is not None and result["rows"]:
        class_report.write_grades(result["rows"], result["details"], csv_path)
        log(f"grades written to {csv_path}, failing tests and notes to "
            f"{class_report.details_path(csv_path)}")
    return result["rows"]


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
    pg.add_argument("--time-limit", type=int, default=sandbox.Limits.cpu_s,
                    help="seconds of wall-clock and of CPU time per submission (default: "
                    "%(default)s)")
    pg.add_argument("--memory-limit", type=int, default=sandbox.Limits.memory_mb,
                    help="MB of memory per submission (default: %(default)s)")
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
    pd.add_argument("--hostile", action="store_true", help="grade a hostile class instead "
                    "(tools/classroom/cases/hostile.yml), as `grade` grades: each notebook in "
                    "its own sandbox")
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
        limits = sandbox.Limits(wall_s=args.time_limit, cpu_s=args.time_limit,
                                memory_mb=args.memory_limit)
        grade(args.lang, args.chapter, args.submissions, args.out, args.csv, limits)
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
                            + (["--out", str(args.out)] if args.out else [])
                            + (["--hostile"] if args.hostile else []))
    try:
        _run(args)
    except AssignError as e:
        print(f"[assign] {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
